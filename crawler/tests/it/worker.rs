//! A crawl worker over a shared frontier outlives a short outage of its store: leasing,
//! storing and releasing are tried again, and every domain ends stored and released.
//!
//! The frontier here is an in-memory one and the store the embedded one, each failing its
//! first calls with `StoreError::Unavailable`, as a PostgreSQL store does while its server
//! restarts; the multi-process tests over a real PostgreSQL server are the binary's
//! (`tests/integration/workers.rs`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crawler::crawl::{FrontierWork, Quiet, Work};
use formats::Domain;
use store::blobs::Blobs;
use store::{
    ApplyStats, CacheEntry, DomainStatus, DomainUpdate, EmbeddedStore, Frontier, FrontierCounts,
    FrontierStore, FrontierTarget, HttpCacheStore, Outcome, RecordStore, Store, StoreError,
    StoredRecord,
};
use time::OffsetDateTime;
use url::Url;

use crate::server::{TestServer, serve_file};
use crate::{TempDir, fixture_web, test_config};

/// Takes one from `failures` if any are left: the call it guards fails.
fn fails(failures: &AtomicUsize) -> bool {
    failures
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
            left.checked_sub(1)
        })
        .is_ok()
}

fn unavailable() -> StoreError {
    StoreError::Unavailable {
        location: "test".to_owned(),
        message: "the server is restarting".to_owned(),
    }
}

/// One domain of [`MemoryFrontier`].
#[derive(Debug, Clone)]
struct Row {
    target: String,
    leased_by: Option<String>,
    crawls: u32,
}

/// A frontier in memory whose first `lease_failures` leases and `finish_failures` releases
/// fail as an unavailable store's do. Leases never expire (one worker here).
#[derive(Debug, Default)]
struct MemoryFrontier {
    rows: Mutex<BTreeMap<String, Row>>,
    lease_failures: AtomicUsize,
    finish_failures: AtomicUsize,
}

impl FrontierStore for MemoryFrontier {
    fn add(&self, targets: &[FrontierTarget]) -> Result<(), StoreError> {
        let mut rows = self.rows.lock().unwrap();
        for target in targets {
            rows.entry(target.domain.clone()).or_insert(Row {
                target: target.target.clone(),
                leased_by: None,
                crawls: 0,
            });
        }
        Ok(())
    }

    fn lease(
        &self,
        owner: &str,
        max: usize,
        _lease_for: Duration,
    ) -> Result<Vec<FrontierTarget>, StoreError> {
        if fails(&self.lease_failures) {
            return Err(unavailable());
        }
        let mut rows = self.rows.lock().unwrap();
        let mut leased = Vec::new();
        for (domain, row) in rows.iter_mut() {
            if leased.len() < max && row.crawls == 0 && row.leased_by.is_none() {
                row.leased_by = Some(owner.to_owned());
                leased.push(FrontierTarget {
                    domain: domain.clone(),
                    target: row.target.clone(),
                });
            }
        }
        Ok(leased)
    }

    fn renew(
        &self,
        owner: &str,
        domains: &[String],
        _lease_for: Duration,
    ) -> Result<Vec<String>, StoreError> {
        let rows = self.rows.lock().unwrap();
        Ok(domains
            .iter()
            .filter(|domain| {
                rows.get(*domain).and_then(|row| row.leased_by.as_deref()) == Some(owner)
            })
            .cloned()
            .collect())
    }

    fn finish(
        &self,
        owner: &str,
        domains: &[String],
        _next_after: Duration,
    ) -> Result<Vec<String>, StoreError> {
        if fails(&self.finish_failures) {
            return Err(unavailable());
        }
        let mut rows = self.rows.lock().unwrap();
        let mut released = Vec::new();
        for domain in domains {
            if let Some(row) = rows.get_mut(domain)
                && row.leased_by.as_deref() == Some(owner)
            {
                row.leased_by = None;
                row.crawls += 1;
                released.push(domain.clone());
            }
        }
        Ok(released)
    }

    fn counts(&self) -> Result<FrontierCounts, StoreError> {
        let rows = self.rows.lock().unwrap();
        let leased = rows.values().filter(|row| row.leased_by.is_some()).count() as u64;
        let due = rows
            .values()
            .filter(|row| row.crawls == 0 && row.leased_by.is_none())
            .count() as u64;
        Ok(FrontierCounts {
            due,
            leased,
            total: rows.len() as u64,
        })
    }
}

/// The embedded store, whose first `apply_failures` batches fail as an unavailable store's do
/// (nothing of them stored).
#[derive(Debug)]
struct Flaky {
    inner: EmbeddedStore,
    apply_failures: AtomicUsize,
}

impl RecordStore for Flaky {
    fn record(&self, id: &str) -> Result<Option<StoredRecord>, StoreError> {
        self.inner.record(id)
    }

    fn records_of(&self, domain: &Domain) -> Result<Vec<StoredRecord>, StoreError> {
        self.inner.records_of(domain)
    }

    fn visit_records_of(
        &self,
        domain: &Domain,
        visit: &mut dyn FnMut(StoredRecord),
    ) -> Result<(), StoreError> {
        self.inner.visit_records_of(domain, visit)
    }

    fn changes_after(&self, after: u64, limit: usize) -> Result<Vec<StoredRecord>, StoreError> {
        self.inner.changes_after(after, limit)
    }

    fn last_seq(&self) -> Result<u64, StoreError> {
        self.inner.last_seq()
    }

    fn apply(
        &self,
        updates: Vec<DomainUpdate>,
        now: OffsetDateTime,
    ) -> Result<Vec<ApplyStats>, StoreError> {
        if fails(&self.apply_failures) {
            return Err(unavailable());
        }
        self.inner.apply(updates, now)
    }

    fn upsert(
        &self,
        fresh: Vec<formats::Skill>,
        now: OffsetDateTime,
    ) -> Result<ApplyStats, StoreError> {
        self.inner.upsert(fresh, now)
    }

    fn domain(&self, domain: &Domain) -> Result<Option<DomainStatus>, StoreError> {
        self.inner.domain(domain)
    }

    fn domains_after(
        &self,
        after: Option<&Domain>,
        limit: usize,
    ) -> Result<Vec<DomainStatus>, StoreError> {
        self.inner.domains_after(after, limit)
    }
}

impl HttpCacheStore for Flaky {
    fn cached(&self, url: &Url) -> Result<Option<CacheEntry>, StoreError> {
        self.inner.cached(url)
    }

    fn set_cached(&self, url: &Url, entry: Option<&CacheEntry>) -> Result<(), StoreError> {
        self.inner.set_cached(url, entry)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_outlives_a_short_outage_of_its_store() {
    let web = fixture_web();
    let server = TestServer::start(move |request| serve_file(&web, request)).await;
    let dir = TempDir::new("worker");
    let flaky = Arc::new(Flaky {
        inner: EmbeddedStore::open(dir.path()).unwrap(),
        apply_failures: AtomicUsize::new(2),
    });
    let store = Arc::new(Store::from_backend(flaky.clone()));
    let blobs = Blobs::open(dir.path()).unwrap();
    let frontier = Arc::new(MemoryFrontier {
        lease_failures: AtomicUsize::new(1),
        finish_failures: AtomicUsize::new(1),
        ..MemoryFrontier::default()
    });
    let hosts = [
        "pdfworks.test",
        "legacy-tools.test",
        "services.test",
        "sloppy.test",
    ];
    let work = FrontierWork {
        frontier: Frontier::from_backend(frontier.clone()),
        owner: "worker-1".to_owned(),
        add: hosts
            .iter()
            .map(|host| format!("http://{host}").parse().unwrap())
            .collect(),
        lease_for: Duration::from_secs(90),
        recrawl_after: Duration::from_secs(3600),
        keep_running: false,
    };

    let report = crawler::crawl::crawl_work(
        test_config(&server),
        Work::Frontier(work),
        Arc::clone(&store),
        blobs,
        Arc::new(Quiet),
        std::future::pending(),
    )
    .await
    .expect("the worker waits out the outage instead of failing");

    assert_eq!(flaky.apply_failures.load(Ordering::SeqCst), 0);
    assert_eq!(frontier.lease_failures.load(Ordering::SeqCst), 0);
    assert_eq!(frontier.finish_failures.load(Ordering::SeqCst), 0);
    assert_eq!(report.totals.domains, hosts.len(), "{report:#?}");
    for host in hosts {
        let status = store
            .blocking()
            .domain(&host.parse().unwrap())
            .unwrap()
            .unwrap_or_else(|| panic!("{host} was not stored"));
        assert_eq!(status.outcome, Outcome::Ok, "{host}");
        let row = frontier.rows.lock().unwrap()[host].clone();
        assert_eq!(row.crawls, 1, "{host} is released once");
        assert!(row.leased_by.is_none(), "{host}");
    }
    assert!(
        !store
            .blocking()
            .records_of(&"pdfworks.test".parse().unwrap())
            .unwrap()
            .is_empty()
    );
}
