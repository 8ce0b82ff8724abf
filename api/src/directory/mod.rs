//! The read model: every question a front end asks of the directory, answered once, under the
//! access policy. The JSON routes, the web pages, MCP, JSON-RPC and exports are renderings of
//! these answers; none of them reads the index, the crawl store or the blob store itself, and
//! none imports another (ARCHITECTURE.md, "One read model").
//!
//! The answers: visible search results (`search`), a skill with its files (`skills`), a
//! domain's status, health report and skills (`domains`), the change feed (`changes`), what an
//! export holds (`selection`), a publisher re-published as a v0.2 index (`well_known`), the
//! skill-sharing view of a record (`sharing`). `urls` builds every URL and `skill://` URI.
//!
//! Questions are blocking (the index and the stores block): a front end on the async runtime
//! asks through [`Directory::ask`], which runs them on the blocking pool.

mod changes;
mod domains;
pub(crate) mod files;
mod search;
pub(crate) mod selection;
pub(crate) mod sharing;
mod skills;
pub(crate) mod urls;
pub(crate) mod well_known;

use std::sync::Arc;

use formats::Access;
use indexer::{Caller, SearchIndex};
use store::blobs::Blobs;
use store::{Backend, BlobStore, Store};

pub(crate) use changes::ChangesFrom;
pub(crate) use domains::DomainAnswer;
pub use domains::health_of;
pub(crate) use search::visible_search;
#[cfg(test)]
pub(crate) use skills::{MAX_SERVED_BYTES, MAX_SERVED_FILES};
pub(crate) use skills::{SkillPage, Unservable, servable};

use crate::access::Policy;
use crate::error::ApiError;
use crate::progress::CrawlProgress;
use urls::Urls;
use well_known::PackCache;

/// The directory as the front ends see it. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Directory {
    inner: Arc<Inner>,
}

struct Inner {
    index: SearchIndex,
    store: Arc<Store>,
    blobs: Blobs,
    policy: Policy,
    /// Legacy skills' archives as the mirror and exports pack them.
    packs: PackCache,
    /// What the background crawl reports: part of the domains' answers.
    progress: CrawlProgress,
    urls: Urls,
}

impl std::fmt::Debug for Directory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Directory")
            .field("index", &self.inner.index)
            .finish_non_exhaustive()
    }
}

impl Directory {
    /// Returns the directory over `index` (a reader), the crawl store (only read) and the blob
    /// store, under the access policy `policy`, with its URLs on `urls`.
    pub(crate) fn new(
        index: SearchIndex,
        store: Arc<Store>,
        blobs: Blobs,
        policy: Policy,
        progress: CrawlProgress,
        urls: Urls,
    ) -> Directory {
        Directory {
            inner: Arc::new(Inner {
                index,
                store,
                blobs,
                policy,
                packs: PackCache::default(),
                progress,
                urls,
            }),
        }
    }

    /// Returns this directory under another access policy (tests swap one in).
    #[cfg(test)]
    pub(crate) fn with_policy(&self, policy: Policy) -> Directory {
        let inner = &self.inner;
        Directory::new(
            inner.index.clone(),
            Arc::clone(&inner.store),
            inner.blobs.clone(),
            policy,
            inner.progress.clone(),
            inner.urls.clone(),
        )
    }

    /// Runs a question on the blocking pool (the index and the stores block) and returns its
    /// answer.
    pub(crate) async fn ask<T, F>(&self, question: F) -> Result<T, ApiError>
    where
        T: Send + 'static,
        F: FnOnce(&Directory) -> Result<T, ApiError> + Send + 'static,
    {
        let directory = self.clone();
        tokio::task::spawn_blocking(move || question(&directory))
            .await
            .map_err(|error| ApiError::Internal(format!("a blocking task failed: {error}")))?
    }

    /// Returns the URLs of this directory.
    pub(crate) fn urls(&self) -> &Urls {
        &self.inner.urls
    }

    /// Returns the crawl progress the domains' answers show.
    pub(crate) fn progress(&self) -> &CrawlProgress {
        &self.inner.progress
    }

    /// Returns true when `caller` may see a record whose access level is `access`: the one
    /// access policy (see [`crate::access`]), which every answer asks.
    fn may_see(&self, caller: Caller, access: Access) -> bool {
        self.inner.policy.allows(caller, access)
    }

    /// Returns the index.
    fn index(&self) -> &SearchIndex {
        &self.inner.index
    }

    /// Returns the crawl store's backend (blocking).
    fn store(&self) -> &dyn Backend {
        self.inner.store.blocking()
    }

    /// Returns the blob store's backend (blocking).
    fn blobs(&self) -> &dyn BlobStore {
        self.inner.blobs.blocking()
    }

    /// Writes a backup of the crawl store and the blobs to `out` (blocking), spooling the
    /// store's snapshot in `spool`.
    pub(crate) fn backup(
        &self,
        spool: &std::path::Path,
        out: impl std::io::Write,
    ) -> Result<store::backup::Manifest, store::backup::BackupError> {
        store::backup::write(
            self.store(),
            self.blobs(),
            spool,
            env!("CARGO_PKG_VERSION"),
            out,
        )
    }

    /// Returns the change number the index has reached (a point read of its commit, cheap
    /// enough for the async runtime: `/healthz` answers under overload).
    pub(crate) fn index_seq(&self) -> Result<u64, ApiError> {
        Ok(self.index().committed_seq()?)
    }

    /// Returns how many records an anonymous caller may see (blocking).
    pub(crate) fn public_records(&self) -> Result<u64, ApiError> {
        Ok(self.index().count(Caller::Anonymous)?)
    }

    /// Returns a tag that changes whenever the index does (an entity tag's ingredient).
    pub(crate) fn snapshot_tag(&self) -> String {
        self.index().snapshot_tag()
    }

    /// The index, for tests that compare it with the policy.
    #[cfg(test)]
    pub(crate) fn index_for_tests(&self) -> &SearchIndex {
        self.index()
    }

    /// The crawl store, for tests that change it behind the index.
    #[cfg(test)]
    pub(crate) fn store_for_tests(&self) -> &dyn Backend {
        self.store()
    }
}
