//! The crawl: many domains at once, each politely, results stored as they come.
//!
//! [`crawl_work`] runs up to `concurrency` domain crawls at a time ([`domain::crawl_domain`]);
//! a domain waiting out a `Retry-After` gives its slot to another meanwhile ([`CrawlSlot`]).
//! Its domains come from the frontier ([`feed`]: the targets it was given, or what is due),
//! leased before their first request. One writer (`crawl/writer.rs`) applies finished domains to the
//! store in batches, releases each on the frontier with what its crawl saw, and hands its
//! report line to the observer ([`CrawlObserver::domain_stored`]), keeping only sums unless
//! [`CrawlConfig::keep_report_lines`] asks for the lines: what a crawl keeps grows neither
//! with the number of domains nor with a domain's size ([`domain::STREAM_BYTES`]). Ctrl-C or
//! SIGTERM (the `shutdown` future) stops new work and abandons domains in flight, whose leases
//! then expire; every domain that finished is stored and reported, and the report says the
//! crawl was interrupted.

pub mod discover;
pub mod domain;
pub mod feed;
mod writer;

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use time::OffsetDateTime;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::credentials::Credentials;
use crate::fetch::{FetchSettings, Fetcher, HttpCache};
use crate::politeness::CrawlSlot;
pub use domain::{DomainCrawl, IndexRead, Reading, Streaming, crawl_domain};
pub use feed::{Feed, Skipped, Source};
use feed::{Leases, STORE_RETRIES, TopUp};
use formats::seeds::SeedTarget;
use formats::site::SiteFindings;
use store::blobs::Blobs;
pub use store::report::{CrawlReport, DomainReport, Totals};
use store::{
    AddStats, ApplyStats, CrawlErrorEntry, DomainStatus, DomainUpdate, Outcome, Store, StoreError,
};
use writer::{Finished, write_batches};

/// The default pause between two requests to one host (docs/crawl.md).
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
/// The error code of a domain whose crawl panicked.
const INTERNAL_ERROR: &str = "internal_error";

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
            hosts: Arc::new(crate::politeness::HostScheduler::new()),
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
    /// Also fetch every file a v0.1 `files[]` lists, so that the directory holds whole
    /// skills (the mirror, MCP and exports need them). On by default.
    pub prefetch_files: bool,
    /// Keep every domain's line in the returned [`CrawlReport`]. A crawl of many domains
    /// turns it off and writes the lines as [`CrawlObserver::domain_stored`] hands them out,
    /// so that what it keeps does not grow with the number of domains.
    pub keep_report_lines: bool,
    /// Audit and fingerprint every record's content (docs/audit.md). Always true but for the
    /// crawl benchmark, which crawls the same sites without it to measure what it costs.
    pub audit: bool,
    /// The most origins named in what the crawl reads that it adds to the frontier as
    /// `discovered` (see [`discover`]); 0 (the default) turns discovery off.
    pub discover_budget: usize,
}

impl Default for CrawlConfig {
    fn default() -> CrawlConfig {
        CrawlConfig {
            fetch: FetchSettings::default(),
            concurrency: DEFAULT_CONCURRENCY,
            prefetch_files: true,
            keep_report_lines: true,
            audit: true,
            // Off unless asked for: a crawl of given targets adds only what it was given.
            discover_budget: 0,
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

    /// A crawl that keeps running found nothing due after crawling something: a round is
    /// over; the next domain falls due at `next_due`.
    fn round_finished(&self, next_due: Option<OffsetDateTime>) {
        let _ = next_due;
    }

    /// A domain's line of the report, with what it changed in the store, once it is stored:
    /// a report writer that writes lines as they come lets the crawl keep none
    /// ([`CrawlConfig::keep_report_lines`]).
    fn domain_stored(&self, line: &DomainReport) {
        let _ = line;
    }

    /// Discovery counted more: `added` holds what it counted since it last said so (the
    /// sums over a crawl are in its report's totals).
    fn discovered(&self, added: &discover::DiscoveryStats) {
        let _ = added;
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

/// What a crawl did besides its report: the targets it skipped and what adding them did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CrawlSummary {
    /// Given targets not crawled (delisted, held elsewhere, named twice).
    pub skipped: Skipped,
    /// What adding the given targets to the frontier did.
    pub added: AddStats,
}

/// Crawls `targets` now, by a crawl of a name of its own, and stores what it finds; returns
/// the report. Targets that name the same domain are crawled once (a site with a base path
/// wins over the bare host, since it probes the root as well; otherwise the first given).
/// The crawl stops early when `shutdown` completes.
pub async fn crawl(
    config: CrawlConfig,
    targets: Vec<SeedTarget>,
    store: Arc<Store>,
    blobs: Blobs,
    observer: Arc<dyn CrawlObserver>,
    shutdown: impl Future<Output = ()>,
) -> Result<CrawlReport, CrawlError> {
    let owner = format!("crawl/{}/{}", std::process::id(), unique_suffix());
    let (report, _) = crawl_work(
        config,
        Feed::targets(targets, owner),
        store,
        blobs,
        observer,
        shutdown,
    )
    .await?;
    Ok(report)
}

/// A suffix that makes a crawl's name unique within a process.
fn unique_suffix() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Crawls the domains `feed` names, leased on the store's frontier, and stores what it finds;
/// returns the report of the domains this crawl stored. Each domain is released on the
/// frontier once its results are stored, with its next crawl scheduled. A crawl of given
/// targets ends when they are all crawled; a crawl of due domains when nothing is due and
/// nothing is leased by anyone or, for one that keeps running, at shutdown.
pub async fn crawl_work(
    config: CrawlConfig,
    feed: Feed,
    store: Arc<Store>,
    blobs: Blobs,
    observer: Arc<dyn CrawlObserver>,
    shutdown: impl Future<Output = ()>,
) -> Result<(CrawlReport, CrawlSummary), CrawlError> {
    feed.check(config.fetch.host_delay)
        .map_err(CrawlError::Config)?;
    let leases = Arc::new(Leases::new(store.frontier().clone(), feed));
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
    let (sender, receiver) = tokio::sync::mpsc::channel::<Finished>(concurrency * 2);
    let writer = {
        let store = Arc::clone(&store);
        let observer = Arc::clone(&observer);
        let runtime = tokio::runtime::Handle::current();
        let keep_lines = config.keep_report_lines;
        let leases = Arc::clone(&leases);
        tokio::task::spawn_blocking(move || {
            write_batches(
                &store,
                receiver,
                observer.as_ref(),
                &runtime,
                keep_lines,
                &leases,
            )
        })
    };
    let heartbeat = tokio::spawn(Arc::clone(&leases).heartbeat());

    let crawl_one = |target: SeedTarget, slot: CrawlSlot| {
        let fetcher = Arc::clone(&fetcher);
        let store = Store::clone(&store);
        let observer = Arc::clone(&observer);
        let awaited = leases.take_requested(&target.domain().to_string());
        let reading = Reading {
            prefetch_files: config.prefetch_files,
            audit: config.audit,
        };
        async move {
            // Records stored while an awaited domain runs are taken into the index at once.
            let stored = || {
                let store = Store::clone(&store);
                let observer = Arc::clone(&observer);
                tokio::spawn(async move {
                    match store.last_seq().await {
                        Ok(seq) => observer.stored(seq),
                        Err(error) => tracing::warn!(%error, "cannot read the change log"),
                    }
                });
            };
            let streaming = Streaming {
                store: &store,
                awaited,
                stored: &stored,
            };
            crawl_domain(&fetcher, &target, reading, Some(slot), Some(streaming)).await
        }
    };
    let mut sites = Sites::new(Vec::new(), concurrency, crawl_one);
    let mut discovery =
        discover::Discovery::new(config.discover_budget, config.fetch.allow_private);
    let mut interrupted = false;
    let mut failure = None;
    // A crawl keeps up to half its concurrency more domains leased than it runs, so that a
    // slot that frees is filled at once, and leases again once a quarter of that is free (or
    // a slot would go idle); after a lease that found nothing due, it waits a moment.
    let want = concurrency + (concurrency / 2).max(1);
    let batch = (concurrency / 4).max(1);
    let wants_lease = |pending: usize| pending < concurrency || want - pending.min(want) >= batch;
    // Whether the frontier had work since the crawl last found it idle (a round).
    let mut round_open = false;
    let mut next_top_up = tokio::time::Instant::now();
    let mut feeding = true;
    // Leases that failed in a row because the store was unavailable.
    let mut lease_failures = 0;
    // A domain made due now in this process (a ping, a recrawl request) is leased at once.
    let due_now = store.frontier().due_now();
    tokio::pin!(shutdown);
    loop {
        if feeding && wants_lease(sites.occupied()) && tokio::time::Instant::now() >= next_top_up {
            let in_flight = sites.occupied();
            match leases
                .top_up(want.saturating_sub(in_flight), sites.pending())
                .await
            {
                Ok(TopUp::Targets(leased)) => {
                    lease_failures = 0;
                    next_top_up = tokio::time::Instant::now();
                    if leased.is_empty() {
                        next_top_up += leases.spacing(sites.pending());
                    } else {
                        round_open = true;
                    }
                    sites.extend(leased);
                }
                Ok(TopUp::Idle(counts)) => {
                    lease_failures = 0;
                    next_top_up = tokio::time::Instant::now() + leases.spacing(0);
                    if round_open {
                        round_open = false;
                        observer.round_finished(counts.next_due);
                        discovery.renew();
                    }
                }
                Ok(TopUp::Over) => feeding = false,
                // The store is unavailable (PostgreSQL restarting): the domains in flight go
                // on, and leasing is tried again after a doubling wait.
                Err(error @ StoreError::Unavailable { .. }) if lease_failures < STORE_RETRIES => {
                    let wait = feed::store_retry_wait(lease_failures);
                    tracing::warn!(%error, retry_in = ?wait, "leasing domains failed; retrying");
                    lease_failures += 1;
                    next_top_up = tokio::time::Instant::now() + wait;
                }
                Err(error) => {
                    failure = Some(error);
                    break;
                }
            }
        }
        if !feeding && sites.pending() == 0 {
            break;
        }
        let timer = feeding && wants_lease(sites.occupied());
        let finished = tokio::select! {
            biased;
            () = &mut shutdown => {
                interrupted = true;
                tracing::warn!(pending = sites.pending(), "crawl interrupted; keeping the domains already done");
                break;
            }
            finished = sites.next(), if sites.pending() > 0 => finished,
            () = tokio::time::sleep_until(next_top_up), if timer => continue,
            () = due_now.notified(), if feeding => {
                next_top_up = tokio::time::Instant::now();
                continue;
            }
        };
        let Some((position, target, crawled)) = finished else {
            continue;
        };
        let crawled = match crawled {
            Ok(crawled) => crawled,
            // A panic in a domain's crawl is a bug; the domain ends `error` and the others go on.
            Err(message) => failed_domain(&target, message),
        };
        let report = DomainReport::new(&crawled.status, ApplyStats::default());
        log_domain(&report);
        observer.domain_finished(&report);
        let before = discovery.stats;
        let source = target.domain().to_string();
        discovery.crawled(&source, crawled.status.outcome);
        let candidates = discovery.candidates(&source, &crawled.found.named);
        if let Err(error) = discovery.add(store.frontier(), candidates).await {
            tracing::warn!(%error, domain = %source, "cannot add the origins it names to the frontier");
        }
        if discovery.stats != before {
            observer.discovered(&discovery.stats.since(&before));
        }
        // The frontier records how long the domain's host asked to be left alone beyond
        // what the crawl waits out (`Retry-After` over the cap), so that no crawl asks it
        // again sooner.
        let not_before = target
            .origin()
            .host_str()
            .and_then(|host| fetcher.take_left(host));
        let update = DomainUpdate {
            status: crawled.status,
            fresh: crawled.found.records,
            streamed: crawled.streamed,
            cache: crawled.cache,
            withdrawn: crawled.found.withdrawn,
        };
        if sender
            .send(Finished {
                position,
                update,
                not_before,
            })
            .await
            .is_err()
        {
            // The writer stopped on a store error; it is returned below.
            break;
        }
    }
    sites.abort().await;
    drop(sender);

    let written = writer
        .await
        .map_err(|error| CrawlError::Config(format!("the store writer failed: {error}")));
    // The leases of domains abandoned (interrupted) are left to expire: a domain's last
    // request may have just been made, and its next holder must leave the host delay.
    heartbeat.abort();
    let mut report = written??;
    if let Some(error) = failure {
        return Err(CrawlError::Store(error));
    }
    report.totals.discovered = discovery.stats.discovered;
    report.totals.discovered_probed = discovery.stats.probed;
    report.totals.discovered_publishing = discovery.stats.publishing;
    if discovery.stats.over_budget > 0 {
        tracing::info!(
            left_out = discovery.stats.over_budget,
            budget = config.discover_budget,
            "the discovery budget was spent; further origins named were left out"
        );
    }
    report.interrupted = interrupted;
    let (skipped, added) = leases.skipped();
    Ok((report, CrawlSummary { skipped, added }))
}

/// The sites of a crawl, each in its own task, at most `concurrency` holding a crawl slot at
/// once, handed out as they finish. A site waiting out a `Retry-After` gives its slot back
/// ([`CrawlSlot`]), and another site starts meanwhile.
struct Sites<T, F> {
    /// Targets not started yet, with their positions.
    queue: VecDeque<(usize, SeedTarget)>,
    slots: Arc<Semaphore>,
    crawl_one: F,
    tasks: JoinSet<T>,
    /// The position and target of each running task. A target is kept only while it is
    /// queued or running, so a worker that keeps leasing holds what is in flight, not every
    /// domain it ever crawled.
    running: HashMap<tokio::task::Id, (usize, SeedTarget)>,
    /// The position of the next target added.
    added: usize,
    /// The number of crawl slots.
    concurrency: usize,
}

impl<T, F, Fut> Sites<T, F>
where
    T: Send + 'static,
    F: Fn(SeedTarget, CrawlSlot) -> Fut,
    Fut: Future<Output = T> + Send + 'static,
{
    fn new(targets: Vec<SeedTarget>, concurrency: usize, crawl_one: F) -> Self {
        let mut sites = Sites {
            queue: VecDeque::new(),
            slots: Arc::new(Semaphore::new(concurrency.max(1))),
            crawl_one,
            tasks: JoinSet::new(),
            running: HashMap::new(),
            added: 0,
            concurrency: concurrency.max(1),
        };
        sites.extend(targets);
        sites
    }

    /// Returns the next site to finish, with its target and its position: `Err` with the
    /// panic's message when its task panicked. `None` once every site is done.
    async fn next(&mut self) -> Option<(usize, SeedTarget, Result<T, String>)> {
        loop {
            let more = !self.queue.is_empty();
            if !more && self.tasks.is_empty() {
                return None;
            }
            tokio::select! {
                biased;
                joined = self.tasks.join_next_with_id(), if !self.tasks.is_empty() => {
                    let (id, result) = match joined? {
                        Ok((id, crawled)) => (id, Ok(crawled)),
                        Err(error) => (error.id(), Err(panic_message(error))),
                    };
                    if let Some((position, target)) = self.running.remove(&id) {
                        return Some((position, target, result));
                    }
                }
                permit = Arc::clone(&self.slots).acquire_owned(), if more => {
                    // The semaphore is never closed.
                    let Ok(permit) = permit else { continue };
                    let Some((position, target)) = self.queue.pop_front() else { continue };
                    let slot = CrawlSlot::new(Arc::clone(&self.slots), permit);
                    let handle = self.tasks.spawn((self.crawl_one)(target.clone(), slot));
                    self.running.insert(handle.id(), (position, target));
                }
            }
        }
    }

    /// Adds sites to crawl after those given.
    fn extend(&mut self, targets: Vec<SeedTarget>) {
        for target in targets {
            self.queue.push_back((self.added, target));
            self.added += 1;
        }
    }

    /// Returns how many sites are running or not started.
    fn pending(&self) -> usize {
        self.queue.len() + self.tasks.len()
    }

    /// Returns how many sites hold or wait for a crawl slot: those waiting out a `Retry-After`
    /// gave theirs back, and more sites may start meanwhile.
    fn occupied(&self) -> usize {
        let holding = self
            .concurrency
            .saturating_sub(self.slots.available_permits());
        self.queue.len() + self.tasks.len().min(holding)
    }

    /// Stops the running sites and waits until their tasks are gone.
    async fn abort(mut self) {
        self.tasks.abort_all();
        while self.tasks.join_next().await.is_some() {}
    }
}

/// Logs a crawled domain: at info when it published something or answered in a way its
/// publisher would want to fix (an error, robots.txt), at debug when it publishes nothing or
/// cannot be reached, so a census of a million domains that mostly publish nothing does not
/// write a million lines.
fn log_domain(report: &DomainReport) {
    let errors = report.errors.len() + report.errors_omitted;
    if matches!(
        report.outcome,
        Outcome::Ok | Outcome::Error | Outcome::Disallowed
    ) {
        tracing::info!(
            domain = %report.domain,
            outcome = ?report.outcome,
            skills = report.skills,
            requests = report.requests,
            errors,
            "domain crawled"
        );
    } else {
        tracing::debug!(
            domain = %report.domain,
            outcome = ?report.outcome,
            requests = report.requests,
            "domain crawled"
        );
    }
}

/// Returns what a failed task said.
fn panic_message(error: tokio::task::JoinError) -> String {
    if !error.is_panic() {
        return error.to_string();
    }
    let payload = error.into_panic();
    payload
        .downcast_ref::<&str>()
        .map(|message| (*message).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// The crawl of a domain whose task panicked: outcome `error`, with the panic as its error.
/// No index counts as read, so the domain's stored records are left as they were.
fn failed_domain(target: &SeedTarget, message: String) -> DomainCrawl {
    tracing::error!(%target, %message, "a domain crawl failed");
    let now = OffsetDateTime::now_utc();
    DomainCrawl {
        status: DomainStatus {
            domain: target.domain(),
            origin: target.to_string(),
            outcome: Outcome::Error,
            formats: Vec::new(),
            indexes: Vec::new(),
            skills: 0,
            requests: 0,
            errors: vec![CrawlErrorEntry {
                code: INTERNAL_ERROR.to_owned(),
                message: format!(
                    "the crawl of this domain failed unexpectedly (a bug in skillscout): {message}"
                ),
                url: target.to_string(),
                record: None,
            }],
            errors_omitted: 0,
            diagnostics: Vec::new(),
            crawled_at: now,
            last_success: None,
            caching: None,
        },
        found: SiteFindings::default(),
        streamed: store::Streamed::default(),
        cache: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // See: the hardening issue, defect 6: a panicking domain vanished from the report.
    #[tokio::test]
    async fn a_site_that_panics_is_reported_and_the_others_go_on() {
        let targets: Vec<SeedTarget> = ["a.test", "boom.test", "c.test"]
            .iter()
            .map(|raw| raw.parse().unwrap())
            .collect();
        let crawl_one = |target: SeedTarget, _slot: CrawlSlot| async move {
            assert!(target.domain().as_str() != "boom.test", "injected failure");
            target.domain().to_string()
        };
        let mut results = vec![None; targets.len()];
        let mut sites = Sites::new(targets.clone(), 2, crawl_one);
        while let Some((position, _target, result)) = sites.next().await {
            results[position] = Some(result);
        }
        assert_eq!(results[0], Some(Ok("a.test".to_owned())));
        assert_eq!(results[2], Some(Ok("c.test".to_owned())));
        let Some(Err(message)) = &results[1] else {
            panic!("{:?}", results[1]);
        };
        assert!(message.contains("injected failure"), "{message}");

        let failed = failed_domain(&targets[1], message.clone());
        assert_eq!(failed.status.outcome, Outcome::Error);
        assert_eq!(failed.status.domain.as_str(), "boom.test");
        assert_eq!(failed.status.errors[0].code, INTERNAL_ERROR);
        assert!(failed.status.indexes.is_empty());
    }

    // See: the hardening issue, defect 3: a host waiting out a Retry-After held its crawl slot.
    #[tokio::test(start_paused = true)]
    async fn a_site_that_parks_its_slot_lets_another_site_run() {
        let targets: Vec<SeedTarget> = ["waits.test", "quick.test"]
            .iter()
            .map(|raw| raw.parse().unwrap())
            .collect();
        let crawl_one = |target: SeedTarget, mut slot: CrawlSlot| async move {
            if target.domain().as_str() == "waits.test" {
                slot.park();
                tokio::time::sleep(Duration::from_secs(30)).await;
                slot.resume().await;
            }
            target.domain().to_string()
        };
        let mut sites = Sites::new(targets, 1, crawl_one);
        let mut order = Vec::new();
        while let Some((_, _, result)) = sites.next().await {
            order.push(result.unwrap());
        }
        // One slot: without parking, `quick.test` would wait the 30 s out behind it.
        assert_eq!(order, ["quick.test", "waits.test"]);
    }

    #[test]
    fn the_user_agent_names_the_project() {
        let agent = default_user_agent();
        assert!(agent.starts_with("skillscout/"), "{agent}");
        assert!(agent.contains("(+https://"), "{agent}");
    }
}
