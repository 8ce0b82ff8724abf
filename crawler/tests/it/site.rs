//! One pipeline for every site: a well-known tree read from disk and the same tree served on
//! loopback and crawled over HTTP give the same records, field for field.

use crawler::crawl::{Reading, crawl_domain};
use crawler::fetch::Fetcher;
use crawler::local::DiskSite;
use formats::seeds::SeedTarget;
use formats::site::SiteOptions;
use formats::{Artifact, DigestStatus, Format, Skill};
use time::OffsetDateTime;

use crate::server::TestServer;
use crate::{fixture_web, test_config};

/// Returns the record with the fields that legitimately differ between two crawls set to
/// fixed values: `first_seen`, `last_seen` and `last_changed` are the time each crawl ran
/// (the network driver stamps its own start; the disk one was given the epoch). Nothing else
/// is left out: ids, URLs, descriptions, digests and their status, frontmatter, bodies, files
/// and diagnostics must be equal.
fn without_times(mut record: Skill) -> Skill {
    record.first_seen = OffsetDateTime::UNIX_EPOCH;
    record.last_seen = OffsetDateTime::UNIX_EPOCH;
    record.last_changed = OffsetDateTime::UNIX_EPOCH;
    record
}

#[tokio::test]
async fn a_tree_read_from_disk_and_crawled_from_loopback_gives_identical_records() {
    let web = fixture_web();
    let server = TestServer::static_tree(web.clone()).await;
    let fetcher = Fetcher::new(test_config(&server).fetch, None).unwrap();
    // v0.2 (a SKILL.md, a .tar.gz and a .zip), v0.1 with `files[]`, skill-sharing with
    // descriptors, and a sloppy index full of warnings.
    let hosts = [
        "pdfworks.test",
        "legacy-tools.test",
        "services.test",
        "sloppy.test",
    ];
    let mut all = Vec::new();
    for host in hosts {
        let target: SeedTarget = format!("http://{host}").parse().unwrap();
        // `validate URL` crawls this way: every file a v0.1 index lists is fetched too.
        let crawled = crawl_domain(&fetcher, &target, Reading::EVERY_FILE, None, None).await;
        // The disk site stands at the origin the server was crawled at, so that URLs (and the
        // ids, sources and index URLs built from them) are comparable.
        let site = DiskSite::with_base(web.join(host), target.origin().clone()).unwrap();
        let read = site.crawl(SiteOptions {
            seen_at: OffsetDateTime::UNIX_EPOCH,
            prefetch_files: true,
            audit: true,
        });

        assert_eq!(crawled.found.failures, read.failures, "{host}");
        assert_eq!(crawled.found.notes, read.notes, "{host}");
        assert_eq!(crawled.found.indexes, read.indexes, "{host}");
        let over_http: Vec<Skill> = crawled
            .found
            .records
            .into_iter()
            .map(without_times)
            .collect();
        let from_disk: Vec<Skill> = read.records.into_iter().map(without_times).collect();
        assert!(!from_disk.is_empty(), "{host}: no records");
        assert_eq!(over_http.len(), from_disk.len(), "{host}");
        for (http, disk) in over_http.iter().zip(&from_disk) {
            assert_eq!(http, disk, "{host}: {} differs", disk.id);
        }
        all.extend(from_disk);
    }

    // The comparison covered what it claims to.
    assert!(all.iter().any(|record| record.artifact == Artifact::Archive
        && record.digest_status == DigestStatus::Verified
        && record.files.len() > 1));
    assert!(all.iter().any(|record| record.artifact == Artifact::SkillMd
        && record.digest_status == DigestStatus::Verified));
    assert!(all.iter().any(|record| {
        record
            .file("scripts/clean.py")
            .is_some_and(|file| file.sha256.is_some())
    }));
    assert!(
        all.iter()
            .any(|record| record.format == Format::SkillSharing)
    );
}
