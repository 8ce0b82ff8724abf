//! Skill-sharing index and descriptor parsing never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(index_url) = url::Url::parse("https://fuzz.test/.well-known/skill-sharing") else {
        return;
    };
    let index = formats::sharing::parse_index(data, &index_url);
    let descriptor = formats::sharing::parse_descriptor(data);
    for entry in &index.entries {
        let _ = formats::sharing::check_descriptor(entry, &descriptor);
    }
});
