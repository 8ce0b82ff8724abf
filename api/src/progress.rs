//! The background crawl as the server sees it: whether one runs, how far it got, how the last
//! one ended, and counters for `/metrics`. The server never crawls itself; whoever runs the
//! crawl (the `serve --crawl` command) reports here, and tells this type about each domain.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use indexer::SyncStats;
use serde::Serialize;
use store::{CrawlReport, DomainReport, Outcome};
use time::OffsetDateTime;

use crate::wire::TotalsView;

/// Shared crawl progress. Cheap to clone; every clone is the same progress.
#[derive(Debug, Clone, Default)]
pub struct CrawlProgress {
    inner: Arc<Mutex<State>>,
}

#[derive(Debug, Default)]
struct State {
    enabled: bool,
    current: Option<Run>,
    last: Option<Run>,
    next_at: Option<OffsetDateTime>,
    counters: Counters,
    last_sync: Option<(OffsetDateTime, SyncStats)>,
    /// The crawl store's latest change number, as a replica following a shared store last
    /// read it (after its latest sync); `None` for a server that does not follow one.
    store_seq: Option<u64>,
    /// Since when, and why, the shared store cannot be read; `None` while it can.
    store_down: Option<(OffsetDateTime, String)>,
}

/// Monotonic counters, exported by `/metrics`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Counters {
    /// Crawls started.
    pub(crate) runs: u64,
    /// Domains crawled, by outcome.
    pub(crate) domains: BTreeMap<&'static str, u64>,
    /// HTTP requests made by crawls.
    pub(crate) requests: u64,
    /// Crawl errors recorded.
    pub(crate) errors: u64,
    /// Index syncs done.
    pub(crate) syncs: u64,
    /// Records upserted into and deleted from the index by syncs.
    pub(crate) synced_changes: u64,
    /// Origins added to the frontier as `discovered` by background crawls.
    pub(crate) discovered: u64,
    /// Discovered domains the background crawls probed.
    pub(crate) discovered_probed: u64,
    /// Probed discovered domains found publishing.
    pub(crate) discovered_publishing: u64,
}

/// One crawl run.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct Run {
    /// When it started.
    #[serde(with = "time::serde::rfc3339")]
    pub(crate) started_at: OffsetDateTime,
    /// When it ended; `None` while it runs.
    #[serde(with = "time::serde::rfc3339::option")]
    pub(crate) finished_at: Option<OffsetDateTime>,
    /// Domains to crawl.
    pub(crate) domains_total: usize,
    /// Domains done so far.
    pub(crate) domains_done: usize,
    /// The totals of the report, once it ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) totals: Option<TotalsView>,
    /// True when it was interrupted.
    pub(crate) interrupted: bool,
    /// Why it could not run, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
}

/// What `/v1/domains` says about crawling.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct CrawlView {
    /// True when this server crawls in the background.
    pub(crate) enabled: bool,
    /// True while a crawl runs.
    pub(crate) running: bool,
    /// The running crawl.
    pub(crate) current: Option<Run>,
    /// The last crawl that ended.
    pub(crate) last: Option<Run>,
    /// When the next crawl starts.
    #[serde(with = "time::serde::rfc3339::option")]
    pub(crate) next_crawl_at: Option<OffsetDateTime>,
    /// When the search index last took in the store's changes.
    #[serde(with = "time::serde::rfc3339::option")]
    pub(crate) index_synced_at: Option<OffsetDateTime>,
}

fn outcome_name(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Ok => "ok",
        Outcome::NotFound => "not_found",
        Outcome::Disallowed => "disallowed",
        Outcome::Unreachable => "unreachable",
        Outcome::Error => "error",
    }
}

impl CrawlProgress {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Says that this server crawls in the background.
    pub fn enable(&self) {
        self.lock().enabled = true;
    }

    /// Says that a crawl of `domains` domains started.
    pub fn crawl_started(&self, domains: usize) {
        let mut state = self.lock();
        state.counters.runs += 1;
        state.next_at = None;
        state.current = Some(Run {
            started_at: OffsetDateTime::now_utc(),
            finished_at: None,
            domains_total: domains,
            domains_done: 0,
            totals: None,
            interrupted: false,
            error: None,
        });
    }

    /// Says that the running crawl ended with `report`.
    pub fn crawl_finished(&self, report: &CrawlReport) {
        let mut state = self.lock();
        let mut run = state.current.take().unwrap_or_else(|| Run {
            started_at: OffsetDateTime::now_utc(),
            finished_at: None,
            domains_total: report.totals.domains,
            domains_done: report.totals.domains,
            totals: None,
            interrupted: false,
            error: None,
        });
        run.finished_at = Some(OffsetDateTime::now_utc());
        run.totals = Some(TotalsView::from(report.totals));
        run.interrupted = report.interrupted;
        state.last = Some(run);
    }

    /// Says that the running crawl could not go on.
    pub fn crawl_failed(&self, error: &str) {
        let mut state = self.lock();
        if let Some(mut run) = state.current.take() {
            run.finished_at = Some(OffsetDateTime::now_utc());
            run.error = Some(error.to_owned());
            state.last = Some(run);
        }
    }

    /// Says when the next crawl starts (`None`: no further crawl).
    pub fn next_crawl_at(&self, at: Option<OffsetDateTime>) {
        self.lock().next_at = at;
    }

    /// Says that the search index took in the store's changes.
    pub fn index_synced(&self, stats: &SyncStats) {
        let mut state = self.lock();
        state.counters.syncs += 1;
        state.counters.synced_changes += (stats.upserted + stats.deleted) as u64;
        state.last_sync = Some((OffsetDateTime::now_utc(), *stats));
    }

    /// Records the crawl store's latest change number, read after a sync by a server that
    /// follows a shared store: `/healthz` and `/metrics` report how far the index is behind.
    pub fn store_seen(&self, seq: u64) {
        self.lock().store_seq = Some(seq);
    }

    /// Returns the store's latest change number as last read, when the server follows one.
    pub(crate) fn store_seq(&self) -> Option<u64> {
        self.lock().store_seq
    }

    /// Says that the shared store could not be read (`error`): `/healthz` reports the server
    /// degraded, its index and `store_seq` as of the last time it could, until
    /// [`CrawlProgress::store_reachable`].
    pub fn store_unreachable(&self, error: &str) {
        let mut state = self.lock();
        if state.store_down.is_none() {
            state.store_down = Some((OffsetDateTime::now_utc(), error.to_owned()));
        }
    }

    /// Says that the shared store answers again.
    pub fn store_reachable(&self) {
        self.lock().store_down = None;
    }

    /// Since when, and why, the shared store cannot be read.
    pub fn store_down(&self) -> Option<(OffsetDateTime, String)> {
        self.lock().store_down.clone()
    }

    pub(crate) fn view(&self) -> CrawlView {
        let state = self.lock();
        CrawlView {
            enabled: state.enabled,
            running: state.current.is_some(),
            current: state.current.clone(),
            last: state.last.clone(),
            next_crawl_at: state.next_at,
            index_synced_at: state.last_sync.map(|(at, _)| at),
        }
    }

    pub(crate) fn counters(&self) -> (Counters, bool) {
        let state = self.lock();
        (state.counters.clone(), state.current.is_some())
    }
}

impl CrawlProgress {
    /// Adds to discovery's counts: origins added as `discovered`, those probed, and those
    /// found publishing.
    pub fn discovered(&self, discovered: u64, probed: u64, publishing: u64) {
        let mut state = self.lock();
        state.counters.discovered += discovered;
        state.counters.discovered_probed += probed;
        state.counters.discovered_publishing += publishing;
    }

    /// Says that one domain of the running crawl finished.
    pub fn domain_finished(&self, report: &DomainReport) {
        let mut state = self.lock();
        if let Some(run) = &mut state.current {
            run.domains_done += 1;
        }
        *state
            .counters
            .domains
            .entry(outcome_name(report.outcome))
            .or_default() += 1;
        state.counters.requests += report.requests as u64;
        state.counters.errors += (report.errors.len() + report.errors_omitted) as u64;
    }
}
