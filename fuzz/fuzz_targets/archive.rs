//! Archive unpacking never panics and never returns more than its limits allow. The first
//! byte picks the format.
#![no_main]

use formats::archive::{ArchiveFormat, ArchiveLimits, unpack};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((selector, bytes)) = data.split_first() else {
        return;
    };
    let format = if selector % 2 == 0 {
        ArchiveFormat::TarGz
    } else {
        ArchiveFormat::Zip
    };
    let limits = ArchiveLimits {
        max_entries: 64,
        max_unpacked_bytes: 1 << 20,
    };
    if let Ok(unpacked) = unpack(bytes, format, &limits) {
        let total: usize = unpacked.files.iter().map(|file| file.bytes.len()).sum();
        assert!(total as u64 <= limits.max_unpacked_bytes);
        assert!(unpacked.files.len() <= limits.max_entries);
        for file in &unpacked.files {
            assert!(!file.path.starts_with('/'));
            assert!(!file.path.split('/').any(|segment| segment == ".."));
        }
    }
});
