//! One conformance suite for the `store` traits, run against every backend: each backend gets
//! a module below that opens it and runs every check of the suite (the `conformance!` macro).
//!
//! The PostgreSQL backend runs against the server that `SKILLSCOUT_TEST_POSTGRES` names (a
//! URL; `scripts/pg-throwaway.sh` starts a throwaway one), each test in a schema of its own.
//! Without the variable these tests say they skip, unless `CI` is set, where they fail.

use std::path::{Path, PathBuf};

use formats::index;
use formats::normalize::{self, Fetched, Source};
use formats::{Digest, Domain, Format, Skill};
use store::{ApplyStats, Blobs, CacheEntry, DomainStatus, DomainUpdate, Store, Streamed};
use time::OffsetDateTime;
use time::macros::datetime;
use url::Url;

const T1: OffsetDateTime = datetime!(2026-11-01 10:00 UTC);
const T2: OffsetDateTime = datetime!(2026-11-02 10:00 UTC);
const T3: OffsetDateTime = datetime!(2026-11-03 10:00 UTC);

fn index_url() -> Url {
    Url::parse("https://example.test/.well-known/skills/index.json").unwrap()
}

/// Builds records the way the crawler does, from a v0.1 index and SKILL.md texts.
fn skills(entries: &[(&str, &str)], seen_at: OffsetDateTime) -> Vec<Skill> {
    let list: Vec<serde_json::Value> = entries
        .iter()
        .map(|(name, _)| serde_json::json!({"name": name, "description": "d", "files": ["SKILL.md"]}))
        .collect();
    let document = serde_json::json!({"skills": list}).to_string();
    let parsed = index::parse(document.as_bytes(), &index_url());
    let source = Source::new(index_url()).unwrap();
    let mut out = Vec::new();
    for (entry, (name, description)) in parsed.entries.iter().zip(entries) {
        let text = format!("---\nname: {name}\ndescription: {description}\n---\nbody\n");
        out.push(normalize::agent_skill(
            &source,
            entry,
            Fetched::Bytes {
                bytes: text.as_bytes(),
                content_type: None,
            },
            seen_at,
        ));
    }
    out
}

fn status(now: OffsetDateTime, indexes: Vec<Url>) -> DomainStatus {
    DomainStatus {
        requests: 3,
        ..DomainStatus::read_ok(
            "example.test".parse().unwrap(),
            "https://example.test".to_owned(),
            vec![Format::AgentSkills],
            indexes,
            0,
            now,
        )
    }
}

/// Crawl after crawl, a store keeps history: unchanged records log no change but advance
/// `last_seen`, changes and removals are logged once each, tombstones come back to life keeping `first_seen`.
pub(crate) async fn incremental_crawls_keep_history_and_tombstones(store: Store) {
    let domain: Domain = "example.test".parse().unwrap();

    let first = skills(&[("alpha", "First."), ("beta", "Second.")], T1);
    let stats = store
        .apply_domain(&status(T1, vec![index_url()]), first, T1)
        .await
        .unwrap();
    assert_eq!(
        (stats.added, stats.updated, stats.removed, stats.unchanged),
        (2, 0, 0, 0)
    );
    assert_eq!(store.last_seq().await.unwrap(), 2);

    // Same content again: no change is logged...
    let again = skills(&[("alpha", "First."), ("beta", "Second.")], T2);
    let stats = store
        .apply_domain(&status(T2, vec![index_url()]), again, T2)
        .await
        .unwrap();
    assert_eq!(
        (stats.added, stats.updated, stats.removed, stats.unchanged),
        (0, 0, 0, 2)
    );
    assert_eq!(store.last_seq().await.unwrap(), 2);
    let alpha = store.record("example.test/alpha").await.unwrap().unwrap();
    assert_eq!(alpha.skill.last_changed, T1);
    // ...but the crawl saw it: `last_seen` advances (docs/record.md), `first_seen` stays.
    // See: the hardening issue, defect 2.
    assert_eq!(alpha.skill.last_seen, T2);
    assert_eq!(alpha.skill.first_seen, T1);
    assert_eq!(alpha.seq, 1);

    // beta changes, alpha vanishes, gamma appears.
    let third = skills(&[("beta", "Changed."), ("gamma", "Third.")], T3);
    let stats = store
        .apply_domain(&status(T3, vec![index_url()]), third, T3)
        .await
        .unwrap();
    assert_eq!(
        (stats.added, stats.updated, stats.removed, stats.unchanged),
        (1, 1, 1, 0)
    );
    let alpha = store.record("example.test/alpha").await.unwrap().unwrap();
    assert_eq!(alpha.removed_at, Some(T3));
    let beta = store.record("example.test/beta").await.unwrap().unwrap();
    assert_eq!(beta.skill.first_seen, T1);
    assert_eq!(beta.skill.last_changed, T3);
    assert_eq!(beta.skill.description, "Changed.");

    // The change log lists each record once, at its latest change, oldest first.
    let changes = store.changes_after(0, 100).await.unwrap();
    let ids: Vec<(String, bool)> = changes
        .iter()
        .map(|record| (record.skill.name.to_string(), record.is_tombstone()))
        .collect();
    assert_eq!(
        ids,
        [
            ("beta".to_owned(), false),
            ("gamma".to_owned(), false),
            ("alpha".to_owned(), true)
        ]
    );
    assert_eq!(store.changes_after(4, 100).await.unwrap().len(), 1);
    assert_eq!(store.changes_after(0, 1).await.unwrap().len(), 1);
    assert_eq!(store.records_of(&domain).await.unwrap().len(), 3);
    // Visiting gives the same records, in the same order, one at a time.
    let mut visited = Vec::new();
    store
        .blocking()
        .visit_records_of(&domain, &mut |record| visited.push(record))
        .unwrap();
    assert_eq!(visited, store.records_of(&domain).await.unwrap());

    // An index that could not be read this time removes nothing.
    let stats = store
        .apply_domain(&status(T3, vec![]), Vec::new(), T3)
        .await
        .unwrap();
    assert_eq!(stats, ApplyStats::default());
    assert_eq!(
        store.domain(&domain).await.unwrap().unwrap().indexes,
        Vec::<Url>::new()
    );

    // A tombstone that comes back is added again and keeps its first_seen.
    let back = skills(&[("alpha", "First.")], T3);
    let stats = store
        .apply_domain(&status(T3, vec![index_url()]), back, T3)
        .await
        .unwrap();
    assert_eq!(stats.added, 1);
    let alpha = store.record("example.test/alpha").await.unwrap().unwrap();
    assert!(!alpha.is_tombstone());
    assert_eq!(alpha.skill.first_seen, T1);
}

/// What one handle stored, another handle on the same backend reads; a domain never sees
/// another's records.
pub(crate) async fn state_survives_reopening_and_domains_do_not_mix(open: impl Fn() -> Store) {
    {
        let store = open();
        store
            .apply_domain(
                &status(T1, vec![index_url()]),
                skills(&[("alpha", "A.")], T1),
                T1,
            )
            .await
            .unwrap();
        let entry = CacheEntry {
            policy: serde_json::json!({"any": "policy"}),
            status: 200,
            body: Some(Digest::of(b"{}")),
            stored_at: T1,
            revalidate: false,
        };
        store.set_cached(&index_url(), Some(entry)).await.unwrap();
    }
    let store = open();
    assert!(store.record("example.test/alpha").await.unwrap().is_some());
    assert_eq!(store.domains().await.unwrap().len(), 1);
    assert_eq!(
        store.cached(&index_url()).await.unwrap().unwrap().body,
        Some(Digest::of(b"{}"))
    );
    store.set_cached(&index_url(), None).await.unwrap();
    assert!(store.cached(&index_url()).await.unwrap().is_none());
    // A domain that is a prefix of another does not see its records.
    let other: Domain = "example.test.evil".parse().unwrap();
    assert!(store.records_of(&other).await.unwrap().is_empty());
    let longer: Domain = "example.tes".parse().unwrap();
    assert!(store.records_of(&longer).await.unwrap().is_empty());
}

/// Statuses come back in domain order, page by page, with nothing lost between pages.
pub(crate) async fn domains_come_in_pages(store: Store) {
    for name in ["c.test", "a.test", "b.test"] {
        let mut domain_status = status(T1, vec![]);
        domain_status.domain = name.parse().unwrap();
        store
            .apply_domain(&domain_status, Vec::new(), T1)
            .await
            .unwrap();
    }
    let first = store.domains_after(None, 2).await.unwrap();
    let names: Vec<&str> = first.iter().map(|s| s.domain.as_str()).collect();
    assert_eq!(names, ["a.test", "b.test"]);
    let rest = store
        .domains_after(Some(&first[1].domain), 2)
        .await
        .unwrap();
    let names: Vec<&str> = rest.iter().map(|s| s.domain.as_str()).collect();
    assert_eq!(names, ["c.test"]);
    assert_eq!(store.domains().await.unwrap().len(), 3);
}

/// A crawl that streams part of a domain's records (`upsert` while it runs) ends like one
/// that handed them all over at the end: the streamed records are not removed, their counts
/// join the domain's, and what vanished from the index still becomes a tombstone.
pub(crate) async fn streamed_records_count_as_seen(store: Store) {
    let first = skills(&[("alpha", "A."), ("beta", "B."), ("gamma", "C.")], T1);
    store
        .apply_domain(&status(T1, vec![index_url()]), first, T1)
        .await
        .unwrap();

    // The second crawl streams alpha (unchanged) and beta (changed), then ends with delta
    // (new); gamma is gone from the index.
    let mut second = skills(
        &[("alpha", "A."), ("beta", "B, changed."), ("delta", "D.")],
        T2,
    );
    let delta = second.pop().unwrap();
    let streamed_stats = store.upsert(second.clone(), T2).await.unwrap();
    assert_eq!(
        (
            streamed_stats.added,
            streamed_stats.updated,
            streamed_stats.unchanged
        ),
        (0, 1, 1)
    );
    // Nothing is removed while the crawl runs.
    let gamma = store.record("example.test/gamma").await.unwrap().unwrap();
    assert!(!gamma.is_tombstone());

    let update = DomainUpdate {
        status: status(T2, vec![index_url()]),
        fresh: vec![delta],
        streamed: Streamed {
            ids: second.iter().map(|skill| skill.id.clone()).collect(),
            stats: streamed_stats,
        },
        cache: Vec::new(),
        withdrawn: Vec::new(),
    };
    let stats = store.apply(vec![update], T2).await.unwrap();
    assert_eq!(
        (
            stats[0].added,
            stats[0].updated,
            stats[0].removed,
            stats[0].unchanged
        ),
        (1, 1, 1, 1)
    );
    let alpha = store.record("example.test/alpha").await.unwrap().unwrap();
    assert!(!alpha.is_tombstone());
    assert_eq!(alpha.skill.last_seen, T2);
    assert_eq!(alpha.seq, 1, "an unchanged record logs no change");
    let beta = store.record("example.test/beta").await.unwrap().unwrap();
    assert!(!beta.is_tombstone());
    assert_eq!(beta.skill.description, "B, changed.");
    let gamma = store.record("example.test/gamma").await.unwrap().unwrap();
    assert_eq!(gamma.removed_at, Some(T2));
    assert!(store.record("example.test/delta").await.unwrap().is_some());
    // Three upserts at T1, then beta, delta and gamma's tombstone.
    assert_eq!(store.last_seq().await.unwrap(), 6);
}

/// A domain of many records (more than a backend reads in one page) is visited whole and in
/// id order, and a crawl that lost most of them removes exactly those; a status that heard
/// nothing about caching keeps what the previous crawl heard.
pub(crate) async fn large_domains_are_visited_whole(store: Store) {
    const RECORDS: usize = 150;
    const KEPT: usize = 40;
    let domain: Domain = "example.test".parse().unwrap();
    let names: Vec<String> = (0..RECORDS)
        .map(|index| format!("skill-{index:03}"))
        .collect();
    let entries: Vec<(&str, &str)> = names.iter().map(|name| (name.as_str(), "S.")).collect();
    let mut first_status = status(T1, vec![index_url()]);
    first_status.caching = Some(store::CachingHeaders {
        validator: true,
        freshness: false,
    });
    let stats = store
        .apply_domain(&first_status, skills(&entries, T1), T1)
        .await
        .unwrap();
    assert_eq!(stats.added, RECORDS);

    let mut visited = Vec::new();
    store
        .blocking()
        .visit_records_of(&domain, &mut |record| {
            visited.push(record.skill.name.to_string())
        })
        .unwrap();
    assert_eq!(visited, names);

    let stats = store
        .apply_domain(
            &status(T2, vec![index_url()]),
            skills(&entries[..KEPT], T2),
            T2,
        )
        .await
        .unwrap();
    assert_eq!((stats.unchanged, stats.removed), (KEPT, RECORDS - KEPT));
    let records = store.records_of(&domain).await.unwrap();
    let live = records
        .iter()
        .filter(|record| !record.is_tombstone())
        .count();
    assert_eq!((records.len(), live), (RECORDS, KEPT));
    assert_eq!(store.last_seq().await.unwrap(), (2 * RECORDS - KEPT) as u64);
    let kept = store.domain(&domain).await.unwrap().unwrap();
    assert_eq!(kept.caching, first_status.caching);
}

/// The blob store keeps bytes by digest, once, and refuses what is over the size cap.
pub(crate) async fn blobs_are_content_addressed(blobs: Blobs) {
    let digest = blobs.put(b"hello".to_vec()).await.unwrap();
    assert_eq!(digest, Digest::of(b"hello"));
    assert!(blobs.contains(&digest).await);
    assert_eq!(
        blobs.get(&digest).await.unwrap().as_deref(),
        Some(&b"hello"[..])
    );
    assert_eq!(blobs.put(b"hello".to_vec()).await.unwrap(), digest);
    assert!(!blobs.contains(&Digest::of(b"other")).await);
    assert_eq!(blobs.get(&Digest::of(b"other")).await.unwrap(), None);
    let empty = blobs.put(Vec::new()).await.unwrap();
    assert_eq!(blobs.get(&empty).await.unwrap(), Some(Vec::new()));
    let error = blobs
        .put(vec![0; store::MAX_BLOB_BYTES + 1])
        .await
        .unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput, "{error}");
}

/// A publisher's "this changed" marks every cache entry of its origin (and no other origin's)
/// for revalidation; a fresh fetch writes the entry again without the mark.
pub(crate) async fn stale_marks_cover_one_origin(store: Store) {
    let entry = CacheEntry {
        policy: serde_json::json!({"any": "policy"}),
        status: 200,
        body: Some(Digest::of(b"{}")),
        stored_at: T1,
        revalidate: false,
    };
    let other = Url::parse("https://example.test.evil/.well-known/skills/index.json").unwrap();
    let skill = Url::parse("https://example.test/.well-known/skills/alpha/SKILL.md").unwrap();
    for url in [&index_url(), &skill, &other] {
        store.set_cached(url, Some(entry.clone())).await.unwrap();
    }
    let origin = Url::parse("https://example.test/").unwrap();
    assert_eq!(store.mark_stale(&origin).await.unwrap(), 2);
    assert!(
        store
            .cached(&index_url())
            .await
            .unwrap()
            .unwrap()
            .revalidate
    );
    assert!(store.cached(&skill).await.unwrap().unwrap().revalidate);
    assert!(!store.cached(&other).await.unwrap().unwrap().revalidate);
    // Marked already: nothing more to write.
    assert_eq!(store.mark_stale(&origin).await.unwrap(), 0);
    store.set_cached(&skill, Some(entry)).await.unwrap();
    assert!(!store.cached(&skill).await.unwrap().unwrap().revalidate);
}

/// A backend the suite runs against: each call opens a new handle on the same state.
pub(crate) trait Backend {
    /// Opens a handle on the store.
    fn store(&self) -> Store;
    /// Opens a handle on the blobs.
    fn blobs(&self) -> Blobs;
    /// Returns a frontier handle for one more worker, beside `store`: its own connection where
    /// the backend has connections, the same store where one process holds it.
    fn frontier_handle(&self, store: &Store) -> store::Frontier {
        store.frontier().clone()
    }
}

/// One test per check of the suite, for the backend that `$open` returns (`None`: skip).
macro_rules! conformance {
    ($open:expr) => {
        #[tokio::test]
        async fn streamed_records_count_as_seen() {
            let Some(backend) = $open else { return };
            super::streamed_records_count_as_seen(backend.store()).await;
        }

        #[tokio::test]
        async fn incremental_crawls_keep_history_and_tombstones() {
            let Some(backend) = $open else { return };
            super::incremental_crawls_keep_history_and_tombstones(backend.store()).await;
        }

        #[tokio::test]
        async fn state_survives_reopening_and_domains_do_not_mix() {
            let Some(backend) = $open else { return };
            super::state_survives_reopening_and_domains_do_not_mix(|| backend.store()).await;
        }

        #[tokio::test]
        async fn domains_come_in_pages() {
            let Some(backend) = $open else { return };
            super::domains_come_in_pages(backend.store()).await;
        }

        #[tokio::test]
        async fn large_domains_are_visited_whole() {
            let Some(backend) = $open else { return };
            super::large_domains_are_visited_whole(backend.store()).await;
        }

        #[tokio::test]
        async fn stale_marks_cover_one_origin() {
            let Some(backend) = $open else { return };
            super::stale_marks_cover_one_origin(backend.store()).await;
        }

        #[tokio::test]
        async fn blobs_are_content_addressed() {
            let Some(backend) = $open else { return };
            super::blobs_are_content_addressed(backend.blobs()).await;
        }
    };
}

mod embedded {
    use super::*;

    impl Backend for TempDir {
        fn store(&self) -> Store {
            Store::open(self).unwrap()
        }

        fn blobs(&self) -> Blobs {
            Blobs::open(self).unwrap()
        }
    }

    conformance!(Some(tempdir()));
    super::frontier::frontier_conformance!(Some(tempdir()));
}

#[path = "conformance/frontier.rs"]
mod frontier;

// The PostgreSQL backend exists in builds with the `postgres` feature (the binary's; a
// workspace build of the tests has it).
#[cfg(feature = "postgres")]
#[path = "conformance/postgres.rs"]
mod postgres;

/// A fresh directory, removed when the guard is dropped.
struct TempDir(PathBuf);

impl std::ops::Deref for TempDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tempdir() -> TempDir {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "skillscout-store-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    TempDir(dir)
}
