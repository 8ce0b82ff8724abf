//! robots.txt parsing never panics, matching any path terminates, and robots.txt itself is
//! always allowed.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|byte| *byte == 0).unwrap_or(data.len());
    let (file, path) = data.split_at(split);
    let robots = formats::robots::Robots::parse(file, formats::robots::PRODUCT_TOKEN);
    let path = format!("/{}", String::from_utf8_lossy(path));
    let _ = robots.allows(&path);
    assert!(robots.allows("/robots.txt"));
    if let Some(delay) = robots.crawl_delay() {
        assert!(delay <= formats::robots::MAX_CRAWL_DELAY);
    }
});
