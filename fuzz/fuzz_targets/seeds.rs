//! Seed file parsing never panics, and every target it accepts has probe URLs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (targets, _errors) = formats::seeds::parse_seeds(&text);
    for target in &targets {
        assert!(!target.probe_bases().is_empty());
    }
});
