//! MCP answers and listings never panic the reader, whatever the server sends.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for content_type in [None, Some("text/event-stream")] {
        if let Ok(result) = formats::mcp::parse_response(data, content_type, 1) {
            if let Ok(page) = formats::mcp::parse_list_page(&result) {
                let _ = formats::mcp::read_listing(&page.skills);
            }
            let _ = formats::mcp::read_contents(&result, "skill://a/SKILL.md");
        }
    }
});
