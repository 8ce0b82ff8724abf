//! The crawl frontier: one row per domain the directory knows, with how it got there, when it
//! is crawled next, and whether an operator delisted it. Both backends keep one, so every
//! crawl (`crawl`, `serve --crawl`, the workers of a shared store) takes its domains from it.
//!
//! A crawl leases domains ([`FrontierStore::lease`] for what is due, [`FrontierStore::lease_named`]
//! for the targets it was given), crawls them while it renews the leases, and once a domain's
//! results are stored releases it with what it saw ([`FrontierStore::finish`]); the
//! [`schedule`] turns that into the next visit. A lease that is not renewed expires, and the
//! domain is due again: nothing a dead worker had not stored is lost. A delisted domain stays
//! in the frontier as a deny list entry that no seed list, submission or discovery undoes.
//!
//! Times are the store's clock, never a worker's. A domain whose last crawl lies in the
//! store's future (the clock was set back) is due at once rather than stuck until the clock
//! catches up.

pub mod schedule;

use std::fmt::{self, Debug};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::types::{Outcome, StoreError};
pub use schedule::{Observation, Schedule};

/// How a domain got into the frontier (docs/crawl.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AddedAs {
    /// From a seed list or a command-line target.
    Seed,
    /// Submitted by a publisher (`POST /v1/domains`, an IndexNow ping).
    Submitted,
    /// Named in something the crawler read on another site.
    Discovered,
    /// Read from another directory's domain list.
    Imported,
}

impl AddedAs {
    /// Every value, in the order they are documented.
    pub const ALL: [AddedAs; 4] = [
        AddedAs::Seed,
        AddedAs::Submitted,
        AddedAs::Discovered,
        AddedAs::Imported,
    ];

    /// Returns the value's name.
    pub fn as_str(self) -> &'static str {
        match self {
            AddedAs::Seed => "seed",
            AddedAs::Submitted => "submitted",
            AddedAs::Discovered => "discovered",
            AddedAs::Imported => "imported",
        }
    }
}

/// A domain's state as listings show it: how it got there, or `delisted`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrontierState {
    /// See [`AddedAs::Seed`].
    Seed,
    /// See [`AddedAs::Submitted`].
    Submitted,
    /// See [`AddedAs::Discovered`].
    Discovered,
    /// See [`AddedAs::Imported`].
    Imported,
    /// Taken out by an operator: never crawled, listed or re-added until undelisted.
    Delisted,
}

impl FrontierState {
    /// Every value, in the order they are documented.
    pub const ALL: [FrontierState; 5] = [
        FrontierState::Seed,
        FrontierState::Submitted,
        FrontierState::Discovered,
        FrontierState::Imported,
        FrontierState::Delisted,
    ];

    /// Returns the value's name.
    pub fn as_str(self) -> &'static str {
        match self {
            FrontierState::Seed => "seed",
            FrontierState::Submitted => "submitted",
            FrontierState::Discovered => "discovered",
            FrontierState::Imported => "imported",
            FrontierState::Delisted => "delisted",
        }
    }
}

impl From<AddedAs> for FrontierState {
    fn from(added_as: AddedAs) -> FrontierState {
        match added_as {
            AddedAs::Seed => FrontierState::Seed,
            AddedAs::Submitted => FrontierState::Submitted,
            AddedAs::Discovered => FrontierState::Discovered,
            AddedAs::Imported => FrontierState::Imported,
        }
    }
}

impl fmt::Display for FrontierState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for FrontierState {
    type Err = String;

    fn from_str(raw: &str) -> Result<FrontierState, String> {
        FrontierState::ALL
            .into_iter()
            .find(|state| state.as_str().eq_ignore_ascii_case(raw.trim()))
            .ok_or_else(|| {
                let names: Vec<&str> = FrontierState::ALL.iter().map(|s| s.as_str()).collect();
                format!(
                    "unknown state {raw:?}: expected one of {}",
                    names.join(", ")
                )
            })
    }
}

/// Why and when an operator delisted a domain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delisting {
    /// The operator's reason, as given.
    pub reason: String,
    /// When.
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
}

/// One domain of the frontier, as listings and the domain API show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrontierEntry {
    /// The domain key (`SeedTarget::domain`): host, and `:port` when not the default.
    pub domain: String,
    /// The target crawled for it (a seed line).
    pub target: String,
    /// How it got into the frontier.
    pub added_as: AddedAs,
    /// Where it came from, when that says more: the directory an imported domain was read
    /// from, the site a discovered one was named on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Its rank in a ranked seed list (`rank,domain`), when it came from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u64>,
    /// When it was added.
    #[serde(with = "time::serde::rfc3339")]
    pub added_at: OffsetDateTime,
    /// When it is due.
    #[serde(with = "time::serde::rfc3339")]
    pub next_crawl_at: OffsetDateTime,
    /// Its revisit interval, in seconds; `None` before its first crawl.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_secs: Option<u64>,
    /// When its last crawl finished.
    #[serde(
        default,
        with = "time::serde::rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub last_crawled_at: Option<OffsetDateTime>,
    /// How its last crawl ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_outcome: Option<Outcome>,
    /// When a crawl last changed one of its records.
    #[serde(
        default,
        with = "time::serde::rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub last_changed_at: Option<OffsetDateTime>,
    /// How many crawls of it finished.
    #[serde(default)]
    pub crawls: u64,
    /// The crawl that finished it last (host, process and start time): a crawl given the
    /// same target twice crawls it once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_crawled_by: Option<String>,
    /// Set while it is delisted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delisted: Option<Delisting>,
    /// When someone last asked for a crawl of it now (an IndexNow ping, a recrawl request, a
    /// submission, an operator's `crawl_now`) that no crawl begun since has answered: a
    /// request that lands while the domain is being crawled keeps it due when that crawl
    /// finishes, since the crawl may have read the site before the change.
    #[serde(
        default,
        with = "time::serde::rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub requested_at: Option<OffsetDateTime>,
}

impl FrontierEntry {
    /// Returns its state: how it got there, or delisted.
    pub fn state(&self) -> FrontierState {
        if self.delisted.is_some() {
            FrontierState::Delisted
        } else {
            self.added_as.into()
        }
    }

    /// Returns its revisit interval, once it was crawled.
    pub fn interval(&self) -> Option<Duration> {
        self.interval_secs.map(Duration::from_secs)
    }

    /// True when it may be crawled at `now`: not delisted, and due (or its last crawl lies
    /// in the future, which only a clock set back can do).
    pub fn is_due(&self, now: OffsetDateTime) -> bool {
        self.delisted.is_none()
            && (self.next_crawl_at <= now || self.last_crawled_at.is_some_and(|last| last > now))
    }
}

/// A target to add to the frontier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTarget {
    /// The domain key.
    pub domain: String,
    /// The seed line to crawl for it.
    pub target: String,
    /// How it got here.
    pub added_as: AddedAs,
    /// Where from (see [`FrontierEntry::source`]).
    pub source: Option<String>,
    /// Its rank in a ranked list.
    pub rank: Option<u64>,
}

/// What [`FrontierStore::add`] does with domains the frontier holds already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddMode {
    /// They keep their schedule (a seed list read again changes nothing).
    Keep,
    /// They become due now and are marked as asked for ([`FrontierEntry::requested_at`]): a
    /// recrawl request, a ping, a submission, an operator's `crawl_now`.
    CrawlNow,
}

/// What an [`FrontierStore::add`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddStats {
    /// New domains, due at once.
    pub added: u64,
    /// Known domains whose target changed, that became due now, or that were asked for.
    pub updated: u64,
    /// Known domains left as they were.
    pub unchanged: u64,
    /// Delisted domains, left delisted.
    pub delisted: u64,
}

impl AddStats {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: AddStats) {
        self.added += other.added;
        self.updated += other.updated;
        self.unchanged += other.unchanged;
        self.delisted += other.delisted;
    }
}

/// One domain of the frontier, leased: its key and the target to crawl.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontierTarget {
    /// The domain key, unique in the frontier.
    pub domain: String,
    /// The seed line to crawl for it.
    pub target: String,
    /// Whether someone asked for this crawl ([`FrontierEntry::requested_at`]): its results
    /// are awaited, so the crawl stores them as soon as it has them.
    pub requested: bool,
}

/// What [`FrontierStore::lease_named`] did with each domain named.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NamedLeases {
    /// The domains leased.
    pub leased: Vec<FrontierTarget>,
    /// Delisted domains.
    pub delisted: Vec<String>,
    /// Domains crawled since the crawl began (or named twice).
    pub crawled: Vec<String>,
    /// Domains another crawl holds now.
    pub held: Vec<String>,
    /// Domains the frontier does not hold.
    pub unknown: Vec<String>,
}

/// What a crawl of a leased domain saw, for [`FrontierStore::finish`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crawled {
    /// The domain.
    pub domain: String,
    /// How the crawl ended.
    pub outcome: Outcome,
    /// Whether it added, changed or removed a record.
    pub changed: bool,
    /// How long its host asked to be left alone beyond what the crawl waited out.
    pub not_before: Option<Duration>,
}

/// Which rows [`FrontierStore::list`] returns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListFilter {
    /// Only rows in this state.
    pub state: Option<FrontierState>,
    /// Only rows due now.
    pub due: bool,
}

/// How much work the frontier holds right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct FrontierCounts {
    /// Domains due and not leased (or whose lease expired): a crawl may lease them now.
    pub due: u64,
    /// Domains leased by a crawl whose lease has not expired.
    pub leased: u64,
    /// Every domain of the frontier, delisted ones included.
    pub total: u64,
    /// Delisted domains.
    pub delisted: u64,
    /// When the next domain not due yet falls due.
    #[serde(with = "time::serde::rfc3339::option")]
    pub next_due: Option<OffsetDateTime>,
}

impl FrontierCounts {
    /// True when nothing is due and nobody holds a lease: the round is over.
    pub fn idle(&self) -> bool {
        self.due == 0 && self.leased == 0
    }
}

/// What [`FrontierStore::remove`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoveStats {
    /// Rows removed.
    pub removed: u64,
    /// Delisted rows kept (undelist them first: the deny list is not forgotten by accident).
    pub delisted: u64,
    /// Domains the frontier did not hold.
    pub unknown: u64,
}

/// What [`FrontierStore::delist`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delisted {
    /// Whether the domain was delisted already (its reason is replaced).
    pub already: bool,
    /// The records of the domain that became tombstones.
    pub records_removed: u64,
}

/// The frontier. Blocking, like the other store traits; [`Frontier`] is the async handle.
pub trait FrontierStore: Send + Sync + Debug {
    /// Adds `targets`, new domains due at once. A known domain keeps its schedule unless
    /// `mode` is [`AddMode::CrawlNow`] and takes the new target when it differs; its state
    /// (how it got there) is kept. A delisted domain is left as it is. A domain given twice
    /// keeps its first target. Each call is one transaction.
    fn add(&self, targets: &[NewTarget], mode: AddMode) -> Result<AddStats, StoreError>;

    /// Leases at most `max` due domains to `owner` for `lease_for`, oldest due first. Two
    /// crawls leasing at once never get the same domain.
    fn lease(
        &self,
        owner: &str,
        max: usize,
        lease_for: Duration,
    ) -> Result<Vec<FrontierTarget>, StoreError>;

    /// Leases those of `domains` that are in the frontier, not delisted, not held by another
    /// crawl and not crawled since `since` (by this crawl or another: a target named twice,
    /// or given to several workers, is crawled once), due or not; says why each of the others
    /// was not leased.
    fn lease_named(
        &self,
        owner: &str,
        domains: &[String],
        lease_for: Duration,
        since: OffsetDateTime,
    ) -> Result<NamedLeases, StoreError>;

    /// Returns the store's clock: the time leases and schedules are reckoned in.
    fn now(&self) -> Result<OffsetDateTime, StoreError>;

    /// Extends `owner`'s leases of `domains` to `lease_for` from now; returns the domains
    /// `owner` still holds (a missing one was taken over after its lease expired).
    fn renew(
        &self,
        owner: &str,
        domains: &[String],
        lease_for: Duration,
    ) -> Result<Vec<String>, StoreError>;

    /// Releases `owner`'s leases of crawled domains, whose results are stored, and schedules
    /// each one's next crawl by `schedule`, except that a domain asked for after its lease
    /// was taken stays due (and asked for); returns the domains released (one `owner` no
    /// longer held is left to its new holder).
    fn finish(
        &self,
        owner: &str,
        crawled: &[Crawled],
        schedule: &Schedule,
    ) -> Result<Vec<String>, StoreError>;

    /// Releases `owner`'s leases of `domains` without a crawl (a target that cannot be
    /// crawled), due again `after` from now.
    fn release(&self, owner: &str, domains: &[String], after: Duration) -> Result<(), StoreError>;

    /// Counts what is due, leased, delisted and held, and when the next domain falls due.
    fn counts(&self) -> Result<FrontierCounts, StoreError>;

    /// Returns the row of `domain`.
    fn entry(&self, domain: &str) -> Result<Option<FrontierEntry>, StoreError>;

    /// Returns at most `limit` rows that pass `filter`, in domain order, after `after`.
    fn list(
        &self,
        after: Option<&str>,
        limit: usize,
        filter: ListFilter,
    ) -> Result<Vec<FrontierEntry>, StoreError>;

    /// Removes the rows of `domains`, except delisted ones; their records and statuses stay
    /// until the domain is crawled again or delisted.
    fn remove(&self, domains: &[String]) -> Result<RemoveStats, StoreError>;

    /// Delists `domain` for `reason`, adding it to the frontier if it is not there: in one
    /// transaction its live records become tombstones (readers of the change log remove them
    /// everywhere), its status and cached responses are forgotten, and no crawl stores
    /// anything for it until it is undelisted.
    fn delist(&self, domain: &str, reason: &str) -> Result<Delisted, StoreError>;

    /// Takes `domain` off the deny list, due at once; false when it was not delisted.
    fn undelist(&self, domain: &str) -> Result<bool, StoreError>;
}

/// A cheap-to-clone handle on a [`FrontierStore`], with `async` methods that run each call on
/// the blocking pool (as [`Store`](crate::Store)'s do).
#[derive(Debug, Clone)]
pub struct Frontier {
    backend: Arc<dyn FrontierStore>,
    /// Woken when domains became due now through this handle (or a clone).
    due_now: Arc<tokio::sync::Notify>,
}

impl Frontier {
    /// Returns a handle on `backend`.
    pub fn from_backend(backend: Arc<dyn FrontierStore>) -> Frontier {
        Frontier {
            backend,
            due_now: Arc::new(tokio::sync::Notify::new()),
        }
    }

    /// Returns what is woken when domains become due now through this handle or its clones
    /// ([`AddMode::CrawlNow`]), so that a crawl of this process that waits for due domains
    /// need not wait for its next look; crawls of other processes find them when they look.
    pub fn due_now(&self) -> Arc<tokio::sync::Notify> {
        Arc::clone(&self.due_now)
    }

    /// Returns the backend, for code that runs on a blocking thread already.
    pub fn blocking(&self) -> &dyn FrontierStore {
        self.backend.as_ref()
    }

    async fn run<T: Send + 'static>(
        &self,
        call: impl FnOnce(&dyn FrontierStore) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        crate::on_blocking_pool(Arc::clone(&self.backend), |backend| call(backend)).await
    }

    /// See [`FrontierStore::add`].
    pub async fn add(
        &self,
        targets: Vec<NewTarget>,
        mode: AddMode,
    ) -> Result<AddStats, StoreError> {
        let stats = self.run(move |backend| backend.add(&targets, mode)).await?;
        if mode == AddMode::CrawlNow && stats.added + stats.updated > 0 {
            // Every crawl waiting now, and the next one to wait if none is (a crawl between
            // two looks).
            self.due_now.notify_waiters();
            self.due_now.notify_one();
        }
        Ok(stats)
    }

    /// See [`FrontierStore::lease`].
    pub async fn lease(
        &self,
        owner: &str,
        max: usize,
        lease_for: Duration,
    ) -> Result<Vec<FrontierTarget>, StoreError> {
        let owner = owner.to_owned();
        self.run(move |backend| backend.lease(&owner, max, lease_for))
            .await
    }

    /// See [`FrontierStore::lease_named`].
    pub async fn lease_named(
        &self,
        owner: &str,
        domains: Vec<String>,
        lease_for: Duration,
        since: OffsetDateTime,
    ) -> Result<NamedLeases, StoreError> {
        let owner = owner.to_owned();
        self.run(move |backend| backend.lease_named(&owner, &domains, lease_for, since))
            .await
    }

    /// See [`FrontierStore::now`].
    pub async fn now(&self) -> Result<OffsetDateTime, StoreError> {
        self.run(|backend| backend.now()).await
    }

    /// See [`FrontierStore::renew`].
    pub async fn renew(
        &self,
        owner: &str,
        domains: Vec<String>,
        lease_for: Duration,
    ) -> Result<Vec<String>, StoreError> {
        let owner = owner.to_owned();
        self.run(move |backend| backend.renew(&owner, &domains, lease_for))
            .await
    }

    /// See [`FrontierStore::finish`].
    pub async fn finish(
        &self,
        owner: &str,
        crawled: Vec<Crawled>,
        schedule: Schedule,
    ) -> Result<Vec<String>, StoreError> {
        let owner = owner.to_owned();
        self.run(move |backend| backend.finish(&owner, &crawled, &schedule))
            .await
    }

    /// See [`FrontierStore::release`].
    pub async fn release(
        &self,
        owner: &str,
        domains: Vec<String>,
        after: Duration,
    ) -> Result<(), StoreError> {
        let owner = owner.to_owned();
        self.run(move |backend| backend.release(&owner, &domains, after))
            .await
    }

    /// See [`FrontierStore::counts`].
    pub async fn counts(&self) -> Result<FrontierCounts, StoreError> {
        self.run(|backend| backend.counts()).await
    }

    /// See [`FrontierStore::entry`].
    pub async fn entry(&self, domain: &str) -> Result<Option<FrontierEntry>, StoreError> {
        let domain = domain.to_owned();
        self.run(move |backend| backend.entry(&domain)).await
    }

    /// See [`FrontierStore::list`].
    pub async fn list(
        &self,
        after: Option<String>,
        limit: usize,
        filter: ListFilter,
    ) -> Result<Vec<FrontierEntry>, StoreError> {
        self.run(move |backend| backend.list(after.as_deref(), limit, filter))
            .await
    }

    /// See [`FrontierStore::remove`].
    pub async fn remove(&self, domains: Vec<String>) -> Result<RemoveStats, StoreError> {
        self.run(move |backend| backend.remove(&domains)).await
    }

    /// See [`FrontierStore::delist`].
    pub async fn delist(&self, domain: &str, reason: &str) -> Result<Delisted, StoreError> {
        let domain = domain.to_owned();
        let reason = reason.to_owned();
        self.run(move |backend| backend.delist(&domain, &reason))
            .await
    }

    /// See [`FrontierStore::undelist`].
    pub async fn undelist(&self, domain: &str) -> Result<bool, StoreError> {
        let domain = domain.to_owned();
        self.run(move |backend| backend.undelist(&domain)).await
    }
}
