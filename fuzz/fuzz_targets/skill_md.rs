//! SKILL.md parsing never panics, whatever the bytes (alias bombs and deep nesting included).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = formats::skill_md::parse(data, Some("fuzz-skill"));
});
