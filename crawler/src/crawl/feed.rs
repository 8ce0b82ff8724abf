//! Where a crawl's domains come from: the targets it was given, or what the frontier holds due.
//! Either way they are leased on the frontier ([`store::Frontier`]) before their first
//! request and released with what the crawl saw once their results are stored, so that
//! several crawls, on one machine or many, share one frontier and a crawl killed at any point
//! loses nothing (its domains are due again once their leases expire).
//!
//! Given targets are read a page at a time, added to the frontier (as seeds, due now) and
//! leased by name, so a seed list of a million lines is never held whole. A crawl of due
//! domains leases them in pages, holding at most half its concurrency more than it crawls.
//! The leases of held domains are renewed every quarter of a lease (a heartbeat).
//!
//! Politeness across crawls: a domain is held by one crawl at a time, from before its first
//! request until after its last, so its requests are spaced as within one process. A domain
//! retaken from a dead crawl starts no sooner than its lease's expiry, some three quarters of
//! a lease after that crawl's last request; [`Feed::check`] refuses a lease too short for that
//! to cover the host delay. A host that asks for a `Retry-After` longer than a crawl waits out
//! is scheduled no sooner than the wait. Requests to other hosts than the domain's own
//! (redirect targets, CDNs) are spaced per process only.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use formats::seeds::SeedTarget;
use store::{AddMode, AddStats, AddedAs, Crawled, Frontier, NewTarget, Schedule, StoreError};

/// How long a lease lasts unless renewed.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(90);
/// The wait after a lease that found nothing due, when the crawl has nothing to do.
pub const IDLE_POLL: Duration = Duration::from_millis(500);
/// How many times a crawl tries a store call again when it failed because the store was
/// unavailable (PostgreSQL restarting, a network cut), waiting twice as long each time from
/// [`STORE_RETRY_FIRST`] up to [`STORE_RETRY_LONGEST`]: about two minutes in all before the
/// crawl gives up.
pub const STORE_RETRIES: u32 = 12;
/// The wait before the first retry of a store call.
pub const STORE_RETRY_FIRST: Duration = Duration::from_millis(250);
/// The longest wait between two retries of a store call: short, so that a store back after
/// an outage is noticed within seconds.
pub const STORE_RETRY_LONGEST: Duration = Duration::from_secs(15);
/// How many given targets are added to the frontier in one transaction.
pub const ADD_PAGE: usize = 1024;
/// How often a crawl that keeps running and has nothing to do says so.
pub const IDLE_REPORT_EVERY: Duration = Duration::from_secs(60);

/// The wait after a lease that found nothing due, while domains are in flight.
const LEASE_SPACING: Duration = Duration::from_millis(100);
/// How long before asking again for the given targets another crawl held: they are most
/// likely being crawled (if their holder died, its leases expire and this crawl takes them).
const RETRY_HELD: Duration = Duration::from_millis(500);

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

/// The given targets of a crawl, read as the crawl goes (a seed file line by line).
pub type Targets = Box<dyn Iterator<Item = SeedTarget> + Send>;

/// Which domains a crawl crawls.
pub enum Source {
    /// These targets, now: each is added to the frontier (a known domain becomes due now) and
    /// crawled once, unless it is delisted or another crawl holds it.
    Targets(Targets),
    /// The frontier's due domains.
    Due,
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Targets(_) => f.write_str("Targets"),
            Source::Due => f.write_str("Due"),
        }
    }
}

/// How a crawl takes its domains from the frontier.
#[derive(Debug)]
pub struct Feed {
    /// Which domains.
    pub source: Source,
    /// This crawl's name, unique among crawls (host, process id, start time).
    pub owner: String,
    /// How long a lease lasts unless renewed.
    pub lease_for: Duration,
    /// How the next visit of each crawled domain is scheduled.
    pub schedule: Schedule,
    /// Keep leasing as domains fall due, until shutdown (after the given targets, if any),
    /// instead of stopping once nothing is due and nothing is leased by anyone.
    pub keep_running: bool,
}

impl Feed {
    /// A crawl of `targets` now, by `owner`, with the default lease and schedule.
    pub fn targets(targets: Vec<SeedTarget>, owner: impl Into<String>) -> Feed {
        Feed {
            source: Source::Targets(Box::new(targets.into_iter())),
            owner: owner.into(),
            lease_for: DEFAULT_LEASE,
            schedule: Schedule::default(),
            keep_running: false,
        }
    }

    /// A crawl of what is due, by `owner`, with the default lease and schedule.
    pub fn due(owner: impl Into<String>) -> Feed {
        Feed {
            source: Source::Due,
            owner: owner.into(),
            lease_for: DEFAULT_LEASE,
            schedule: Schedule::default(),
            keep_running: false,
        }
    }

    /// Refuses settings under which a domain retaken from a dead crawl could be asked again
    /// sooner than `host_delay` after that crawl's last request (a lease is renewed every
    /// quarter of it, so two thirds of it, with room for a late heartbeat, pass between a
    /// dead crawl's last request and its lease's expiry), and a schedule out of bounds.
    pub fn check(&self, host_delay: Duration) -> Result<(), String> {
        if self.lease_for.is_zero() || self.lease_for * 2 / 3 < host_delay {
            return Err(format!(
                "a lease of {:?} is too short for a host delay of {host_delay:?}: it must be \
                 at least 1.5 times the host delay",
                self.lease_for
            ));
        }
        self.schedule.check()
    }
}

/// The domains this crawl holds (leased and not yet stored and released).
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

    fn len(&self) -> usize {
        self.lock().len()
    }
}

/// What a top-up of the crawl's queue found.
pub(crate) enum TopUp {
    /// Targets leased, to crawl (maybe none for now).
    Targets(Vec<SeedTarget>),
    /// A crawl that keeps running has nothing in flight and nothing is due: what the
    /// frontier holds now.
    Idle(store::FrontierCounts),
    /// Nothing more to crawl: the given targets are all read, or (for a crawl of due domains
    /// that does not keep running) nothing is due, nothing is leased by anyone, and this
    /// crawl holds nothing.
    Over,
}

/// A given target another crawl held, to ask for again at `at`.
struct Deferred {
    target: SeedTarget,
    at: tokio::time::Instant,
}

/// What a crawl of given targets skipped, for its summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Skipped {
    /// Targets of delisted domains.
    pub delisted: u64,
    /// Targets crawled since this crawl began (named twice, or given to another crawl too)
    /// or removed from the frontier meanwhile.
    pub held_elsewhere: u64,
}

/// The crawl's side of the frontier: feeding, leasing, renewing, releasing.
pub(crate) struct Leases {
    frontier: Frontier,
    owner: String,
    lease_for: Duration,
    schedule: Schedule,
    keep_running: bool,
    /// True for a crawl of given targets (they may all be read already).
    given: bool,
    /// Set once a crawl that keeps running has crawled its given targets and works through
    /// due domains.
    working: Mutex<bool>,
    /// The given targets still to read, if any.
    targets: Mutex<Option<Targets>>,
    /// Given targets added to the frontier and not leased yet.
    added: Mutex<VecDeque<SeedTarget>>,
    /// Given targets another crawl held when they were asked for, with when to ask again.
    deferred: Mutex<Vec<Deferred>>,
    held: Held,
    /// Leased domains someone asked for ([`store::FrontierTarget::requested`]), until their
    /// crawl starts.
    requested: Mutex<HashSet<String>>,
    skipped: Mutex<Skipped>,
    added_stats: Mutex<AddStats>,
    /// When the crawl last said it was idle.
    last_idle_report: Mutex<Option<tokio::time::Instant>>,
    /// When the crawl began, by the store's clock.
    started: Mutex<Option<time::OffsetDateTime>>,
}

impl std::fmt::Debug for Leases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Leases")
            .field("owner", &self.owner)
            .finish_non_exhaustive()
    }
}

impl Leases {
    pub(crate) fn new(frontier: Frontier, feed: Feed) -> Leases {
        let targets = match feed.source {
            Source::Targets(targets) => Some(targets),
            Source::Due => None,
        };
        Leases {
            frontier,
            owner: feed.owner,
            lease_for: feed.lease_for,
            schedule: feed.schedule,
            keep_running: feed.keep_running,
            given: targets.is_some(),
            working: Mutex::new(false),
            targets: Mutex::new(targets),
            added: Mutex::new(VecDeque::new()),
            deferred: Mutex::new(Vec::new()),
            held: Held::default(),
            requested: Mutex::new(HashSet::new()),
            skipped: Mutex::new(Skipped::default()),
            added_stats: Mutex::new(AddStats::default()),
            last_idle_report: Mutex::new(None),
            started: Mutex::new(None),
        }
    }

    /// True while a crawl of given targets has them to crawl (a crawl that keeps running
    /// turns to due domains after them).
    pub(crate) fn has_targets(&self) -> bool {
        self.given && !*lock(&self.working)
    }

    /// True once for a leased domain someone asked for: its crawl is about to start.
    pub(crate) fn take_requested(&self, domain: &str) -> bool {
        lock(&self.requested).remove(domain)
    }

    /// Returns what the crawl skipped, and what adding its targets did.
    pub(crate) fn skipped(&self) -> (Skipped, AddStats) {
        (*lock(&self.skipped), *lock(&self.added_stats))
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

    /// Leases up to `room` domains to crawl.
    pub(crate) async fn top_up(&self, room: usize, in_flight: usize) -> Result<TopUp, StoreError> {
        if self.has_targets() {
            match self.top_up_targets(room).await? {
                // Its targets crawled, a crawl that keeps running goes on as a worker.
                TopUp::Over if self.keep_running => {
                    tracing::info!("the targets given are crawled; crawling what falls due");
                    *lock(&self.working) = true;
                }
                other => return Ok(other),
            }
        }
        let mut targets = Vec::new();
        if room > 0 {
            let leased = self
                .frontier
                .lease(&self.owner, room, self.lease_for)
                .await?;
            for lease in leased {
                match SeedTarget::parse(&lease.target) {
                    Ok(target) => {
                        if lease.requested {
                            lock(&self.requested).insert(lease.domain.clone());
                        }
                        self.held.insert(lease.domain);
                        targets.push(target);
                    }
                    Err(error) => {
                        // A row another version wrote, or damaged: released for a day, and said.
                        tracing::error!(domain = %lease.domain, target = %lease.target, %error, "the frontier holds a target that does not parse; skipped");
                        self.frontier
                            .release(&self.owner, vec![lease.domain], Duration::from_secs(86_400))
                            .await?;
                    }
                }
            }
        }
        if targets.is_empty() && in_flight == 0 {
            let counts = self.frontier.counts().await?;
            // The leases left are this crawl's own, which its writer releases as it stores
            // them: nothing more will fall to this crawl now.
            let ours = self.held.len() as u64;
            if !self.keep_running && counts.due == 0 && counts.leased <= ours {
                return Ok(TopUp::Over);
            }
            if ours == 0 {
                self.report_idle(&counts);
                if self.keep_running && counts.due == 0 {
                    return Ok(TopUp::Idle(counts));
                }
            }
        }
        Ok(TopUp::Targets(targets))
    }

    /// Says, once a minute, why a crawl that keeps running has nothing to do.
    fn report_idle(&self, counts: &store::FrontierCounts) {
        let now = tokio::time::Instant::now();
        let mut last = lock(&self.last_idle_report);
        if last.is_some_and(|at| now.duration_since(at) < IDLE_REPORT_EVERY) {
            return;
        }
        *last = Some(now);
        let next_due = counts
            .next_due
            .map(|at| at.to_string())
            .unwrap_or_else(|| "never".to_owned());
        if counts.leased > 0 {
            tracing::info!(
                leased_elsewhere = counts.leased,
                domains = counts.total,
                %next_due,
                "idle: the due domains are leased by other crawls (a dead crawl's leases expire)"
            );
        } else {
            tracing::info!(domains = counts.total, %next_due, "idle: nothing is due");
        }
    }

    /// Leases up to `room` of the given targets, reading and adding a page of them when the
    /// added ones run out. A target another crawl holds is asked for again every
    /// [`RETRY_HELD`] (all of them at once) until it is crawled, by its holder or, when the
    /// holder's lease expired, by this crawl; one crawled since this crawl began counts as
    /// crawled.
    async fn top_up_targets(&self, room: usize) -> Result<TopUp, StoreError> {
        let mut out = Vec::new();
        let ready: Vec<SeedTarget> = {
            let now = tokio::time::Instant::now();
            let mut deferred = lock(&self.deferred);
            let (ready, waiting): (Vec<Deferred>, Vec<Deferred>) = std::mem::take(&mut *deferred)
                .into_iter()
                .partition(|held| held.at <= now);
            *deferred = waiting;
            ready.into_iter().map(|held| held.target).collect()
        };
        if !ready.is_empty() {
            self.lease_page(ready, &mut out).await?;
        }
        while out.len() < room {
            let page: Vec<SeedTarget> = {
                let mut added = lock(&self.added);
                let take = (room - out.len()).min(added.len());
                added.drain(..take).collect()
            };
            if page.is_empty() {
                if !self.add_page().await? {
                    break;
                }
                continue;
            }
            self.lease_page(page, &mut out).await?;
        }
        let exhausted =
            self.targets_done() && lock(&self.added).is_empty() && lock(&self.deferred).is_empty();
        // Every given target is leased or accounted for: the domains in flight end the crawl.
        if out.is_empty() && exhausted {
            return Ok(TopUp::Over);
        }
        Ok(TopUp::Targets(out))
    }

    /// Leases the targets of `page` by name; those leased go to `out`, those another crawl
    /// holds wait to be asked for again, the rest are counted as skipped.
    async fn lease_page(
        &self,
        page: Vec<SeedTarget>,
        out: &mut Vec<SeedTarget>,
    ) -> Result<(), StoreError> {
        let names: Vec<String> = page.iter().map(|t| t.domain().to_string()).collect();
        let since = self.started().await?;
        let answer = self
            .frontier
            .lease_named(&self.owner, names, self.lease_for, since)
            .await?;
        let held: HashSet<&str> = answer.held.iter().map(String::as_str).collect();
        let leased: HashSet<&str> = answer
            .leased
            .iter()
            .map(|lease| lease.domain.as_str())
            .collect();
        lock(&self.requested).extend(
            answer
                .leased
                .iter()
                .filter(|lease| lease.requested)
                .map(|lease| lease.domain.clone()),
        );
        let retry_at = tokio::time::Instant::now() + RETRY_HELD;
        for target in page {
            let domain = target.domain().to_string();
            if leased.contains(domain.as_str()) {
                self.held.insert(domain);
                out.push(target);
            } else if held.contains(domain.as_str()) {
                lock(&self.deferred).push(Deferred {
                    target,
                    at: retry_at,
                });
            }
        }
        let mut skipped = lock(&self.skipped);
        skipped.delisted += answer.delisted.len() as u64;
        skipped.held_elsewhere += answer.crawled.len() as u64 + answer.unknown.len() as u64;
        for domain in &answer.delisted {
            tracing::info!(%domain, "not crawled: delisted");
        }
        Ok(())
    }

    /// Returns when this crawl began, by the store's clock (read once).
    async fn started(&self) -> Result<time::OffsetDateTime, StoreError> {
        if let Some(started) = *lock(&self.started) {
            return Ok(started);
        }
        let now = self.frontier.now().await?;
        *lock(&self.started) = Some(now);
        Ok(now)
    }

    /// True once every given target was read.
    fn targets_done(&self) -> bool {
        lock(&self.targets).is_none()
    }

    /// Reads the next page of given targets, one target per domain, and adds it to the
    /// frontier (known domains become due now); false once there is nothing left to read.
    async fn add_page(&self) -> Result<bool, StoreError> {
        let page: Vec<SeedTarget> = {
            let mut targets = lock(&self.targets);
            let Some(iterator) = targets.as_mut() else {
                return Ok(false);
            };
            let page: Vec<SeedTarget> = iterator.by_ref().take(ADD_PAGE).collect();
            if page.is_empty() {
                // Dropping the reader ends the crawl of given targets once the rest is done.
                *targets = None;
                return Ok(false);
            }
            page
        };
        let page = one_per_domain(page);
        let new: Vec<NewTarget> = page
            .iter()
            .map(|target| NewTarget {
                domain: target.domain().to_string(),
                target: target.to_string(),
                added_as: AddedAs::Seed,
                source: None,
                rank: None,
            })
            .collect();
        // Known domains keep their schedule: they are leased by name, due or not, and one
        // crawled since this crawl began (by another worker given the same list) is not
        // crawled again.
        let stats = self.frontier.add(new, AddMode::Keep).await?;
        lock(&self.added_stats).add(stats);
        lock(&self.added).extend(page);
        Ok(true)
    }

    /// Releases the stored domains (from the store writer's blocking thread) and schedules
    /// their next crawl from what each crawl saw.
    pub(crate) fn finish(&self, crawled: Vec<Crawled>) -> Result<(), StoreError> {
        let domains: Vec<String> = crawled.iter().map(|crawl| crawl.domain.clone()).collect();
        let released = retry_unavailable("releasing leases", || {
            self.frontier
                .blocking()
                .finish(&self.owner, &crawled, &self.schedule)
        })?;
        if released.len() < domains.len() {
            let released: HashSet<&String> = released.iter().collect();
            for domain in domains.iter().filter(|domain| !released.contains(domain)) {
                tracing::warn!(%domain, "stored a domain whose lease had been taken over (it is crawled again by its new holder)");
            }
        }
        self.held.remove(&domains);
        Ok(())
    }

    /// Renews the leases of the domains held, every quarter of a lease, until dropped (the
    /// caller aborts the task). A renewal that fails is logged and tried at the next beat.
    pub(crate) async fn heartbeat(self: Arc<Self>) {
        let mut beats = tokio::time::interval(self.lease_for / 4);
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
                .frontier
                .renew(&self.owner, held.clone(), self.lease_for)
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
                        tracing::warn!(%domain, "the lease expired and was taken over by another crawl");
                    }
                }
                Err(error) => tracing::warn!(%error, "cannot renew the leases; retrying"),
            }
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|error| error.into_inner())
}

/// Keeps one target per domain: the first with a base path (it probes the root too), else the
/// first. An MCP endpoint is never replaced by a web site of its host, nor replaces one: a
/// domain has one status, so one of the two sources is read per crawl, the first given.
pub(crate) fn one_per_domain(targets: Vec<SeedTarget>) -> Vec<SeedTarget> {
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
                let existing_is_root_site =
                    existing.base_path().is_none() && existing.mcp_endpoint().is_none();
                if existing_is_root_site && target.base_path().is_some() {
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

        let targets: Vec<SeedTarget> = [
            "mcp+https://example.test/mcp",
            "https://example.test/docs",
            "other.test",
            "mcp+https://other.test/mcp",
        ]
        .iter()
        .map(|raw| raw.parse().unwrap())
        .collect();
        let kept: Vec<String> = one_per_domain(targets)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(kept, ["mcp+https://example.test/mcp", "https://other.test"]);
    }

    #[test]
    fn store_retries_wait_longer_each_time_up_to_a_bound() {
        assert_eq!(store_retry_wait(0), STORE_RETRY_FIRST);
        assert_eq!(store_retry_wait(1), STORE_RETRY_FIRST * 2);
        assert_eq!(store_retry_wait(30), STORE_RETRY_LONGEST);
        let total: Duration = (0..STORE_RETRIES).map(store_retry_wait).sum();
        assert!(
            total >= Duration::from_secs(60) && total <= Duration::from_secs(180),
            "{total:?}"
        );
    }
}
