//! The crawl: many domains at once, each politely, results stored as they come.
//!
//! [`crawl`] runs up to `concurrency` domain crawls at a time ([`domain::crawl_domain`]), and
//! one writer that applies finished domains to the store in batches (one transaction, one disk
//! sync, for the domains that finished within a quarter of a second). Ctrl-C (the
//! `shutdown` future) stops new work and abandons domains in flight; every domain that
//! finished is stored and reported, and the report says the crawl was interrupted.

pub mod domain;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use time::OffsetDateTime;
use tokio::task::JoinSet;

use crate::credentials::Credentials;
use crate::fetch::{FetchSettings, Fetcher, HttpCache};
pub use domain::{DomainCrawl, IndexRead, crawl_domain};
use formats::seeds::SeedTarget;
use store::blobs::Blobs;
pub use store::report::{CrawlReport, DomainReport, Totals};
use store::{ApplyStats, DomainUpdate, Store, StoreError};

/// The default pause between two requests to one host (DESIGN.md §3).
pub const DEFAULT_HOST_DELAY: Duration = Duration::from_millis(1000);
/// The default number of hosts crawled at once.
pub const DEFAULT_CONCURRENCY: usize = 64;
/// The default time allowed to connect.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The default time allowed for a whole request.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// The most redirects followed for one request.
pub const DEFAULT_MAX_REDIRECTS: usize = 5;
/// The most retries of one request.
pub const DEFAULT_MAX_RETRIES: u32 = 2;
/// The first backoff before a retry.
pub const DEFAULT_RETRY_BASE_DELAY: Duration = Duration::from_secs(1);
/// The most domains applied to the store in one transaction.
const MAX_BATCH: usize = 256;
/// How long the store writer gathers finished domains before it commits them.
const BATCH_WINDOW: Duration = Duration::from_millis(250);

/// Returns the default `User-Agent`: `skillscout/<version> (+<project URL>)`.
pub fn default_user_agent() -> String {
    format!(
        "skillscout/{} (+{})",
        env!("CARGO_PKG_VERSION"),
        env!("CARGO_PKG_REPOSITORY")
    )
}

impl Default for FetchSettings {
    fn default() -> FetchSettings {
        FetchSettings {
            user_agent: default_user_agent(),
            host_delay: DEFAULT_HOST_DELAY,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_redirects: DEFAULT_MAX_REDIRECTS,
            max_retries: DEFAULT_MAX_RETRIES,
            retry_base_delay: DEFAULT_RETRY_BASE_DELAY,
            max_retry_after: crate::politeness::MAX_RETRY_AFTER,
            resolve: Vec::new(),
            allow_private: false,
            ca_certs: Vec::new(),
            credentials: Credentials::default(),
        }
    }
}

/// How to crawl.
#[derive(Debug, Clone)]
pub struct CrawlConfig {
    /// Fetching and politeness.
    pub fetch: FetchSettings,
    /// How many domains are crawled at once.
    pub concurrency: usize,
    /// Also fetch every file a v0.1 `files[]` lists (exports need them).
    pub prefetch_files: bool,
}

impl Default for CrawlConfig {
    fn default() -> CrawlConfig {
        CrawlConfig {
            fetch: FetchSettings::default(),
            concurrency: DEFAULT_CONCURRENCY,
            prefetch_files: false,
        }
    }
}

/// Hears about a crawl's progress (the command line's progress bar, the server's status page).
pub trait CrawlObserver: Send + Sync {
    /// A domain's crawl finished and was handed to the writer.
    fn domain_finished(&self, report: &DomainReport) {
        let _ = report;
    }

    /// A batch of domains was committed to the store; its change log now ends at `last_seq`.
    fn stored(&self, last_seq: u64) {
        let _ = last_seq;
    }
}

/// An observer that ignores everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct Quiet;

impl CrawlObserver for Quiet {}

/// Why a crawl could not run to the end.
#[derive(Debug, thiserror::Error)]
pub enum CrawlError {
    /// The crawl's configuration cannot be used (e.g. a bad CA certificate).
    #[error("{0}")]
    Config(String),
    /// The store cannot be written; what was stored before the failure is kept.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Crawls `targets` and stores what it finds; returns the report.
///
/// Targets that name the same domain are crawled once (the one with a base path wins, since it
/// probes the root as well). The crawl stops early when `shutdown` completes.
pub async fn crawl(
    config: CrawlConfig,
    targets: Vec<SeedTarget>,
    store: Arc<Store>,
    blobs: Blobs,
    observer: Arc<dyn CrawlObserver>,
    shutdown: impl Future<Output = ()>,
) -> Result<CrawlReport, CrawlError> {
    let targets = one_per_domain(targets);
    let fetcher = Arc::new(
        Fetcher::new(
            config.fetch.clone(),
            Some(HttpCache {
                store: Arc::clone(&store),
                blobs,
            }),
        )
        .map_err(CrawlError::Config)?,
    );

    let concurrency = config.concurrency.max(1);
    let (sender, receiver) = tokio::sync::mpsc::channel::<(usize, DomainUpdate)>(concurrency * 2);
    let writer = {
        let store = Arc::clone(&store);
        let observer = Arc::clone(&observer);
        let runtime = tokio::runtime::Handle::current();
        tokio::task::spawn_blocking(move || {
            write_batches(&store, receiver, observer.as_ref(), &runtime)
        })
    };

    let mut reports: Vec<Option<DomainReport>> = vec![None; targets.len()];
    let mut tasks = JoinSet::new();
    let mut next = 0;
    let mut interrupted = false;
    tokio::pin!(shutdown);
    loop {
        while tasks.len() < concurrency && next < targets.len() {
            let fetcher = Arc::clone(&fetcher);
            let target = targets[next].clone();
            let prefetch = config.prefetch_files;
            let position = next;
            tasks.spawn(async move {
                let crawled = crawl_domain(&fetcher, &target, prefetch).await;
                (position, crawled)
            });
            next += 1;
        }
        if tasks.is_empty() {
            break;
        }
        tokio::select! {
            biased;
            () = &mut shutdown => {
                interrupted = true;
                tracing::warn!(pending = targets.len() - next + tasks.len(), "crawl interrupted; keeping the domains already done");
                tasks.abort_all();
                break;
            }
            joined = tasks.join_next() => {
                let Some(joined) = joined else { continue };
                let (position, crawled) = match joined {
                    Ok(result) => result,
                    Err(error) => {
                        // A panic in a domain's crawl is a bug; the other domains go on.
                        tracing::error!(%error, "a domain crawl failed");
                        continue;
                    }
                };
                let report = DomainReport::new(&crawled.status, ApplyStats::default());
                tracing::info!(
                    domain = %report.domain,
                    outcome = ?report.outcome,
                    skills = report.skills,
                    requests = report.requests,
                    errors = report.errors.len() + report.errors_omitted,
                    "domain crawled"
                );
                observer.domain_finished(&report);
                reports[position] = Some(report);
                let update = DomainUpdate {
                    status: crawled.status,
                    fresh: crawled.found.records,
                    cache: crawled.cache,
                };
                if sender.send((position, update)).await.is_err() {
                    // The writer stopped on a store error; it is returned below.
                    tasks.abort_all();
                    break;
                }
            }
        }
    }
    while tasks.join_next().await.is_some() {}
    drop(sender);

    let written = writer
        .await
        .map_err(|error| CrawlError::Config(format!("the store writer failed: {error}")))??;
    for (position, stats) in written {
        if let Some(report) = reports.get_mut(position).and_then(Option::as_mut) {
            report.changes = stats;
        }
    }
    Ok(CrawlReport::new(
        reports.into_iter().flatten().collect(),
        interrupted,
    ))
}

/// Applies finished domains to the store in batches: a batch is what arrives within
/// [`BATCH_WINDOW`] of its first domain (or [`MAX_BATCH`] domains), so that thousands of small
/// domains cost a few disk syncs rather than one each. Returns each domain's statistics by
/// position.
fn write_batches(
    store: &Store,
    mut receiver: tokio::sync::mpsc::Receiver<(usize, DomainUpdate)>,
    observer: &dyn CrawlObserver,
    runtime: &tokio::runtime::Handle,
) -> Result<Vec<(usize, ApplyStats)>, StoreError> {
    let mut written = Vec::new();
    while let Some(first) = receiver.blocking_recv() {
        let deadline = tokio::time::Instant::now() + BATCH_WINDOW;
        let mut positions = vec![first.0];
        let mut updates = vec![first.1];
        while updates.len() < MAX_BATCH {
            match runtime.block_on(tokio::time::timeout_at(deadline, receiver.recv())) {
                Ok(Some((position, update))) => {
                    positions.push(position);
                    updates.push(update);
                }
                // The crawl is over, or the window has passed.
                Ok(None) | Err(_) => break,
            }
        }
        let stats = store.apply(updates, OffsetDateTime::now_utc())?;
        written.extend(positions.into_iter().zip(stats));
        observer.stored(store.last_seq()?);
    }
    Ok(written)
}

/// Keeps one target per domain: the first with a base path (it probes the root too), else the
/// first.
fn one_per_domain(targets: Vec<SeedTarget>) -> Vec<SeedTarget> {
    let mut kept: Vec<SeedTarget> = Vec::with_capacity(targets.len());
    let mut positions = std::collections::HashMap::new();
    for target in targets {
        match positions.get(&target.domain()) {
            None => {
                positions.insert(target.domain(), kept.len());
                kept.push(target);
            }
            Some(&position) => {
                let existing: &mut SeedTarget = &mut kept[position];
                if existing.base_path().is_none() && target.base_path().is_some() {
                    tracing::info!(kept = %target, dropped = %existing, "one crawl per domain");
                    *existing = target;
                } else {
                    tracing::info!(kept = %existing, dropped = %target, "one crawl per domain");
                }
            }
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_target_per_domain_preferring_a_path() {
        let targets: Vec<SeedTarget> = [
            "example.test",
            "other.test",
            "https://example.test/docs",
            "https://example.test/blog",
            "http://other.test",
        ]
        .iter()
        .map(|raw| raw.parse().unwrap())
        .collect();
        let kept: Vec<String> = one_per_domain(targets)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(kept, ["https://example.test/docs", "https://other.test"]);
    }

    #[test]
    fn the_user_agent_names_the_project() {
        let agent = default_user_agent();
        assert!(agent.starts_with("skillscout/"), "{agent}");
        assert!(agent.contains("(+https://"), "{agent}");
    }
}
