//! The shared crawl frontier: the domains that several crawl workers, on one machine or
//! many, crawl between them, each leased to one worker at a time.
//!
//! A worker adds its targets ([`FrontierStore::add`]), then repeatedly leases a batch of due
//! domains ([`FrontierStore::lease`]), crawls them while it renews their leases
//! ([`FrontierStore::renew`], a heartbeat), and once a domain's results are stored releases it
//! with the time of its next crawl ([`FrontierStore::finish`]). A lease that is not renewed
//! expires, and the domain is due again: the domains of a worker that died are taken over by
//! the others, and nothing it had not stored is lost (it is crawled again).
//!
//! Only a store that several processes share has a frontier (the PostgreSQL one); the
//! embedded store is one process's, and its crawls take their targets as given
//! ([`Store::frontier`](crate::Store::frontier) is `None`).
//!
//! Every time here is the store's clock, never a worker's: workers on machines whose clocks
//! disagree still agree on who holds what.

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use crate::types::StoreError;

/// One domain of the frontier: its key and the target (seed line) crawled for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontierTarget {
    /// The domain key (`SeedTarget::domain`), unique in the frontier.
    pub domain: String,
    /// The seed line to crawl for it.
    pub target: String,
}

/// How much work the frontier holds right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FrontierCounts {
    /// Domains due and not leased (or whose lease expired): a worker may lease them now.
    pub due: u64,
    /// Domains leased by a worker whose lease has not expired.
    pub leased: u64,
    /// Every domain of the frontier.
    pub total: u64,
}

impl FrontierCounts {
    /// True when nothing is due and nobody holds a lease: the round is over.
    pub fn idle(&self) -> bool {
        self.due == 0 && self.leased == 0
    }
}

/// The frontier of a shared store. Blocking, like the other store traits.
pub trait FrontierStore: Send + Sync + Debug {
    /// Adds `targets`, each due at once if its domain is new; a domain already there keeps
    /// its schedule and lease (its target is replaced when it differs); a domain given twice
    /// keeps its first target. Idempotent: workers that start with the same seeds add them
    /// once.
    fn add(&self, targets: &[FrontierTarget]) -> Result<(), StoreError>;

    /// Leases at most `max` due domains to `owner` for `lease_for`: domains whose
    /// `next_crawl_at` has passed and that nobody holds (or whose lease expired), oldest due
    /// first. Two workers leasing at once never get the same domain.
    fn lease(
        &self,
        owner: &str,
        max: usize,
        lease_for: Duration,
    ) -> Result<Vec<FrontierTarget>, StoreError>;

    /// Extends `owner`'s leases of `domains` to `lease_for` from now; returns the domains
    /// `owner` still holds (a domain missing from the answer was taken over by another
    /// worker after its lease expired).
    fn renew(
        &self,
        owner: &str,
        domains: &[String],
        lease_for: Duration,
    ) -> Result<Vec<String>, StoreError>;

    /// Releases `owner`'s leases of `domains`, whose results are stored, and makes each due
    /// again `next_after` from now; returns the domains released (a domain `owner` no
    /// longer held is left to its new holder).
    fn finish(
        &self,
        owner: &str,
        domains: &[String],
        next_after: Duration,
    ) -> Result<Vec<String>, StoreError>;

    /// Counts what is due and what is leased now.
    fn counts(&self) -> Result<FrontierCounts, StoreError>;
}

/// A cheap-to-clone handle on a [`FrontierStore`], with `async` methods that run each call on
/// the blocking pool (as [`Store`](crate::Store)'s do).
#[derive(Debug, Clone)]
pub struct Frontier {
    backend: Arc<dyn FrontierStore>,
}

impl Frontier {
    /// Returns a handle on `backend`.
    pub fn from_backend(backend: Arc<dyn FrontierStore>) -> Frontier {
        Frontier { backend }
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
    pub async fn add(&self, targets: Vec<FrontierTarget>) -> Result<(), StoreError> {
        self.run(move |backend| backend.add(&targets)).await
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
        domains: Vec<String>,
        next_after: Duration,
    ) -> Result<Vec<String>, StoreError> {
        let owner = owner.to_owned();
        self.run(move |backend| backend.finish(&owner, &domains, next_after))
            .await
    }

    /// See [`FrontierStore::counts`].
    pub async fn counts(&self) -> Result<FrontierCounts, StoreError> {
        self.run(|backend| backend.counts()).await
    }
}
