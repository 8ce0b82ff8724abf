//! Where requests that change what the directory crawls go: the admin API's seeds, removals
//! and delistings. The read model (`directory`) only reads; this is the one place in `api`
//! that writes, and it writes only the frontier (delisting tombstones a domain's records in
//! the same store transaction). Whoever owns the index writer hears of each change, so a
//! delisted domain leaves search at once.

use std::sync::Arc;

use store::{
    AddMode, AddStats, Delisted, Frontier, FrontierEntry, ListFilter, NewTarget, RemoveStats,
    StoreError,
};
use tokio::sync::Notify;

/// The frontier's writes, and who to tell of them.
#[derive(Debug, Clone)]
pub(crate) struct Intake {
    frontier: Frontier,
    changed: Arc<Notify>,
}

impl Intake {
    /// Returns the intake over `frontier`.
    pub(crate) fn new(frontier: Frontier) -> Intake {
        Intake {
            frontier,
            changed: Arc::new(Notify::new()),
        }
    }

    /// Returns what is woken after a change to the records (a delisting).
    pub(crate) fn on_change(&self) -> Arc<Notify> {
        Arc::clone(&self.changed)
    }

    /// Adds targets to the frontier.
    pub(crate) async fn add(
        &self,
        targets: Vec<NewTarget>,
        mode: AddMode,
    ) -> Result<AddStats, StoreError> {
        self.frontier.add(targets, mode).await
    }

    /// Returns a page of the frontier.
    pub(crate) async fn list(
        &self,
        after: Option<String>,
        limit: usize,
        filter: ListFilter,
    ) -> Result<Vec<FrontierEntry>, StoreError> {
        self.frontier.list(after, limit, filter).await
    }

    /// Removes domains from the frontier (delisted ones stay).
    pub(crate) async fn remove(&self, domains: Vec<String>) -> Result<RemoveStats, StoreError> {
        self.frontier.remove(domains).await
    }

    /// Delists a domain and says so to the index's owner.
    pub(crate) async fn delist(&self, domain: &str, reason: &str) -> Result<Delisted, StoreError> {
        let delisted = self.frontier.delist(domain, reason).await?;
        tracing::info!(%domain, records = delisted.records_removed, "domain delisted");
        self.changed.notify_one();
        Ok(delisted)
    }

    /// Takes a domain off the deny list.
    pub(crate) async fn undelist(&self, domain: &str) -> Result<bool, StoreError> {
        let undelisted = self.frontier.undelist(domain).await?;
        if undelisted {
            tracing::info!(%domain, "domain undelisted");
        }
        Ok(undelisted)
    }
}
