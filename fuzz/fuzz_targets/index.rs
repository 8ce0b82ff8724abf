//! Agent-skills index parsing never panics, and what it returns is safe to fetch.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(index_url) = url::Url::parse("https://fuzz.test/.well-known/agent-skills/index.json")
    else {
        return;
    };
    let index = formats::index::parse(data, &index_url);
    for entry in &index.entries {
        assert!(matches!(entry.url.scheme(), "http" | "https"));
        for path in &entry.files {
            assert!(formats::index::check_relative_path(path).is_ok());
        }
    }
});
