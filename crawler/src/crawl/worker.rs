//! Crawl workers over a shared frontier ([`store::Frontier`]): the domains of a crawl come
//! from leases instead of a fixed list, so that several processes, on one machine or many,
//! crawl one frontier between them.
//!
//! A worker leases domains in batches, holding at most half its concurrency more than it
//! crawls at once (so a slot that frees is filled at once), renews the leases of
//! the domains it holds every quarter of the lease (a heartbeat), and releases each domain only
//! after its results are stored (the store writer does): a worker killed at
//! any point loses nothing, as the domains it held become due again when their leases expire
//! and another worker crawls them anew. A store that cannot be reached for a while (a
//! PostgreSQL restart) is waited out: leasing, storing and releasing are tried again with a
//! doubling wait, up to [`STORE_RETRIES`] times.
//!
//! Politeness across workers: a domain is held by one worker at a time, from before its
//! first request until after its last, so its requests are spaced as within one process. A
//! domain retaken from a dead worker starts no sooner than its lease's expiry, which is some
//! three quarters of a lease after that worker's last request (its last heartbeat came at most
//! a quarter of a lease before it died; two thirds are promised, leaving room for a late
//! heartbeat); [`FrontierWork::check`] refuses a
//! lease too short for that to cover the host delay. The default lease
//! ([`DEFAULT_LEASE`], 90 s) covers the longest `Crawl-delay` honoured (60 s) as well.
//! A host that asks for a `Retry-After` longer than a crawl waits out is left for the
//! domain's next crawl, which the frontier schedules no sooner than the wait
//! ([`Fetcher::take_left`](crate::fetch::Fetcher::take_left)). Requests to other hosts than the
//! domain's own (redirect targets, CDNs) are spaced per worker only.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use formats::seeds::SeedTarget;
use store::{Frontier, FrontierTarget, StoreError};

/// How long a lease lasts unless renewed.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(90);
/// How long after a crawl a domain is due again, when the worker was given no interval.
pub const DEFAULT_RECRAWL_AFTER: Duration = Duration::from_secs(60 * 60);
/// The wait after a lease that found nothing due, when the worker has nothing to do.
pub const IDLE_POLL: Duration = Duration::from_millis(500);
/// How many times a worker tries a store call again when it failed because the store was
/// unavailable (PostgreSQL restarting, a network cut), waiting twice as long each time from
/// [`STORE_RETRY_FIRST`] up to [`STORE_RETRY_LONGEST`]: about four minutes in all before the
/// worker gives up and exits 1.
pub const STORE_RETRIES: u32 = 9;
/// The wait before the first retry of a store call.
pub const STORE_RETRY_FIRST: Duration = Duration::from_secs(1);
/// The longest wait between two retries of a store call.
pub const STORE_RETRY_LONGEST: Duration = Duration::from_secs(60);

/// The wait before retry number `attempt` (0 for the first) of a store call.
pub(crate) fn store_retry_wait(attempt: u32) -> Duration {
    STORE_RETRY_FIRST
        .saturating_mul(1 << attempt.min(16))
        .min(STORE_RETRY_LONGEST)
}

/// Runs `call` (blocking), and again after a doubling wait while it fails with
/// [`StoreError::Unavailable`], at most [`STORE_RETRIES`] times; other errors are returned at
/// once. A write that failed so was not stored (every write is one transaction), so trying it
/// again stores it once.
pub(crate) fn retry_unavailable<T>(
    what: &str,
    mut call: impl FnMut() -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let mut attempt = 0;
    loop {
        match call() {
            Err(error @ StoreError::Unavailable { .. }) if attempt < STORE_RETRIES => {
                let wait = store_retry_wait(attempt);
                tracing::warn!(%error, retry_in = ?wait, "{what} failed; retrying");
                std::thread::sleep(wait);
                attempt += 1;
            }
            other => return other,
        }
    }
}

/// The wait after a lease that found nothing due, while domains are in flight.
const LEASE_SPACING: Duration = Duration::from_millis(100);

/// A crawl whose domains come from the shared frontier.
#[derive(Debug, Clone)]
pub struct FrontierWork {
    /// The frontier.
    pub frontier: Frontier,
    /// This worker's name, unique among the workers (host, process id, start time).
    pub owner: String,
    /// Targets to add to the frontier before leasing (due at once when new).
    pub add: Vec<SeedTarget>,
    /// How long a lease lasts unless renewed.
    pub lease_for: Duration,
    /// How long after its crawl a domain is due again.
    pub recrawl_after: Duration,
    /// Keep leasing as domains fall due, until shutdown, instead of stopping once nothing is
    /// due and nothing is leased by anyone.
    pub keep_running: bool,
}

impl FrontierWork {
    /// Refuses settings under which a domain retaken from a dead worker could be asked again
    /// sooner than `host_delay` after that worker's last request: a lease is renewed every
    /// quarter of it, so two thirds of it (with room for a late heartbeat) pass between a dead
    /// worker's last request and its lease's expiry.
    pub fn check(&self, host_delay: Duration) -> Result<(), String> {
        if self.lease_for.is_zero() || self.lease_for * 2 / 3 < host_delay {
            return Err(format!(
                "a lease of {:?} is too short for a host delay of {host_delay:?}: it must be \
                 at least 1.5 times the host delay",
                self.lease_for
            ));
        }
        Ok(())
    }
}

/// The domains this worker holds (leased and not yet stored and released).
#[derive(Debug, Clone, Default)]
pub(crate) struct Held(Arc<Mutex<HashSet<String>>>);

impl Held {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.0.lock().unwrap_or_else(|error| error.into_inner())
    }

    fn insert(&self, domain: String) {
        self.lock().insert(domain);
    }

    fn remove(&self, domains: &[String]) {
        let mut held = self.lock();
        for domain in domains {
            held.remove(domain);
        }
    }

    fn snapshot(&self) -> Vec<String> {
        self.lock().iter().cloned().collect()
    }

    fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }
}

/// The worker's side of the frontier: leasing, renewing, releasing.
#[derive(Debug, Clone)]
pub(crate) struct Leases {
    work: Arc<FrontierWork>,
    held: Held,
}

/// What a top-up of the crawl's queue found.
pub(crate) enum TopUp {
    /// Targets leased, to crawl (maybe none for now).
    Targets(Vec<SeedTarget>),
    /// Nothing is due, nothing is leased by anyone, and this worker holds nothing: the round
    /// is over.
    RoundOver,
}

impl Leases {
    pub(crate) fn new(work: FrontierWork) -> Leases {
        Leases {
            work: Arc::new(work),
            held: Held::default(),
        }
    }

    /// Adds the work's targets to the frontier.
    pub(crate) async fn add_targets(&self) -> Result<(), StoreError> {
        let targets: Vec<FrontierTarget> = self
            .work
            .add
            .iter()
            .map(|target| FrontierTarget {
                domain: target.domain().to_string(),
                target: target.to_string(),
            })
            .collect();
        for chunk in targets.chunks(1000) {
            self.work.frontier.add(chunk.to_vec()).await?;
        }
        Ok(())
    }

    /// The wait before leasing again after a lease that found nothing due: short while
    /// domains are in flight, longer when idle.
    pub(crate) fn spacing(&self, in_flight: usize) -> Duration {
        if in_flight > 0 {
            LEASE_SPACING
        } else {
            IDLE_POLL
        }
    }

    /// Leases up to `room` domains. With nothing leased, nothing in flight and nothing held,
    /// asks whether the round is over (never, for a worker that keeps running).
    pub(crate) async fn top_up(&self, room: usize, in_flight: usize) -> Result<TopUp, StoreError> {
        let mut targets = Vec::new();
        if room > 0 {
            let leased = self
                .work
                .frontier
                .lease(&self.work.owner, room, self.work.lease_for)
                .await?;
            for lease in leased {
                match SeedTarget::parse(&lease.target) {
                    Ok(target) => {
                        self.held.insert(lease.domain);
                        targets.push(target);
                    }
                    Err(error) => {
                        // A row another version wrote, or damaged: released for a day, and said.
                        tracing::error!(domain = %lease.domain, target = %lease.target, %error, "the frontier holds a target that does not parse; skipped");
                        self.work
                            .frontier
                            .finish(
                                &self.work.owner,
                                vec![lease.domain],
                                Duration::from_secs(86_400),
                            )
                            .await?;
                    }
                }
            }
        }
        if targets.is_empty() && in_flight == 0 && self.held.is_empty() && !self.work.keep_running {
            let counts = self.work.frontier.counts().await?;
            if counts.idle() {
                return Ok(TopUp::RoundOver);
            }
        }
        Ok(TopUp::Targets(targets))
    }

    /// Releases the stored `domains` (from the store writer's blocking thread) and schedules
    /// their next crawl: after the recrawl interval, or after the wait the domain's host asked
    /// for (`Retry-After` over the cap) when that is longer.
    pub(crate) fn finish(
        &self,
        domains: Vec<(String, Option<Duration>)>,
    ) -> Result<(), StoreError> {
        let mut groups: Vec<(Duration, Vec<String>)> = Vec::new();
        for (domain, not_before) in domains {
            let next_after = not_before.map_or(self.work.recrawl_after, |wait| {
                wait.max(self.work.recrawl_after)
            });
            match groups.iter_mut().find(|(after, _)| *after == next_after) {
                Some((_, group)) => group.push(domain),
                None => groups.push((next_after, vec![domain])),
            }
        }
        for (next_after, domains) in groups {
            let released = retry_unavailable("releasing leases", || {
                self.work
                    .frontier
                    .blocking()
                    .finish(&self.work.owner, &domains, next_after)
            })?;
            if released.len() < domains.len() {
                let released: HashSet<&String> = released.iter().collect();
                for domain in domains.iter().filter(|domain| !released.contains(domain)) {
                    tracing::warn!(%domain, "stored a domain whose lease had been taken over (it is crawled again by its new holder)");
                }
            }
            self.held.remove(&domains);
        }
        Ok(())
    }

    /// Renews the leases of the domains held, every quarter of a lease, until dropped (the
    /// caller aborts the task). A renewal that fails is logged and tried at the next beat.
    pub(crate) async fn heartbeat(self) {
        let mut beats = tokio::time::interval(self.work.lease_for / 4);
        beats.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // The first tick is at once: the leases were just taken.
        beats.tick().await;
        loop {
            beats.tick().await;
            let held = self.held.snapshot();
            if held.is_empty() {
                continue;
            }
            match self
                .work
                .frontier
                .renew(&self.work.owner, held.clone(), self.work.lease_for)
                .await
            {
                Ok(renewed) => {
                    // A domain released by the writer since the snapshot is not lost.
                    let renewed: HashSet<String> = renewed.into_iter().collect();
                    let still_held = self.held.snapshot();
                    for domain in still_held
                        .iter()
                        .filter(|d| held.contains(d) && !renewed.contains(*d))
                    {
                        tracing::warn!(%domain, "the lease expired and was taken over by another worker");
                    }
                }
                Err(error) => tracing::warn!(%error, "cannot renew the leases; retrying"),
            }
        }
    }
}
