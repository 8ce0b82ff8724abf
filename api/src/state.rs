//! What every handler shares: the index reader, the crawl store (read only), the blob store,
//! the tokens, the crawl progress, the metrics and the configuration.

use std::sync::Arc;
use std::time::Duration;

use formats::{Access, Domain, Skill, SkillId, Slug};
use indexer::{Caller, ListPage, ListRequest, SearchIndex};
use store::blobs::Blobs;
use store::{Backend, BlobStore, Store};
use url::Url;

use crate::access::Policy;
use crate::auth::Tokens;
use crate::error::ApiError;
use crate::export::well_known::PackCache;
use crate::metrics::Metrics;
use crate::progress::CrawlProgress;

/// The default time a request may take before it is answered with a 503.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// The default largest request body (only `POST /rpc` reads one).
pub const DEFAULT_MAX_BODY_BYTES: usize = 64 * 1024;
/// The default `max-age` of anonymous read responses.
pub const DEFAULT_CACHE_MAX_AGE: Duration = Duration::from_secs(60);
/// The default for [`ServeConfig::max_in_flight`]: enough to keep two cores busy with
/// searches (a few ms of CPU each) without a queue that only adds latency.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 64;
/// The default name of the directory, shown in pages and as the skill-sharing provider.
pub const DEFAULT_NAME: &str = "skillscout directory";

/// How the server behaves.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// The URL clients reach this server at; links in protocol documents (`descriptor_url`,
    /// the provider URL) are built on it.
    pub public_url: Url,
    /// The directory's name, as the skill-sharing `provider.name` and in page titles.
    pub name: String,
    /// The time a request may take before it is answered with a 503 `timeout`.
    pub request_timeout: Duration,
    /// The largest request body accepted (a larger one is a 413).
    pub max_body_bytes: usize,
    /// How long clients and shared caches may keep an anonymous read response.
    pub cache_max_age: Duration,
    /// The most requests served at once (every route but `/healthz` and `/metrics`); one past
    /// it is answered at once with a 503 `overloaded` and `Retry-After`, rather than queued.
    pub max_in_flight: usize,
    /// How long after a crawl the server crawls again (`serve --crawl-every`), if it does:
    /// how long an MCP client may treat a listing as current (`ttlMs`). Without it,
    /// [`ServeConfig::cache_max_age`].
    pub recrawl_every: Option<Duration>,
}

impl Default for ServeConfig {
    fn default() -> ServeConfig {
        ServeConfig {
            public_url: Url::parse("http://127.0.0.1:8080/").expect("a valid literal URL"),
            name: DEFAULT_NAME.to_owned(),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            cache_max_age: DEFAULT_CACHE_MAX_AGE,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            recrawl_every: None,
        }
    }
}

/// The server's shared state. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Shared>,
}

struct Shared {
    index: SearchIndex,
    store: Arc<Store>,
    blobs: Blobs,
    tokens: Tokens,
    progress: CrawlProgress,
    metrics: Metrics,
    config: ServeConfig,
    policy: Policy,
    /// Legacy skills' archives as the mirror and exports pack them.
    packs: PackCache,
    /// One permit per request being served (see [`ServeConfig::max_in_flight`]).
    work: Arc<tokio::sync::Semaphore>,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("index", &self.inner.index)
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl AppState {
    /// Returns the state of a server over `index` (a reader: the server never writes it),
    /// the crawl store (only read) and the blob store.
    pub fn new(
        index: SearchIndex,
        store: Arc<Store>,
        blobs: Blobs,
        tokens: Tokens,
        config: ServeConfig,
    ) -> AppState {
        let work = Arc::new(tokio::sync::Semaphore::new(config.max_in_flight.max(1)));
        AppState {
            inner: Arc::new(Shared {
                work,
                index,
                store,
                blobs,
                tokens,
                progress: CrawlProgress::default(),
                metrics: Metrics::default(),
                config,
                policy: Policy::default(),
                packs: PackCache::default(),
            }),
        }
    }

    /// Takes a permit to serve one request, or `None` when the server is at its work limit.
    pub(crate) fn try_start_work(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        Arc::clone(&self.inner.work).try_acquire_owned().ok()
    }

    /// Returns how many more requests could start work now.
    #[cfg(test)]
    pub(crate) fn available_work(&self) -> usize {
        self.inner.work.available_permits()
    }

    /// Returns this state with another access policy (tests swap one in before the state is
    /// shared).
    #[cfg(test)]
    pub(crate) fn with_policy(self, policy: Policy) -> AppState {
        let mut shared = Arc::into_inner(self.inner).expect("the state is not shared yet");
        shared.policy = policy;
        AppState {
            inner: Arc::new(shared),
        }
    }

    /// Returns the crawl progress that `/v1/domains` and `/metrics` show; a background crawl
    /// reports to it.
    pub fn progress(&self) -> &CrawlProgress {
        &self.inner.progress
    }

    pub(crate) fn index(&self) -> &SearchIndex {
        &self.inner.index
    }

    /// Returns the crawl store's backend: blocking, so only for code inside
    /// [`AppState::blocking`].
    pub(crate) fn store(&self) -> &dyn Backend {
        self.inner.store.blocking()
    }

    /// Returns the blob store's backend: blocking, so only for code inside
    /// [`AppState::blocking`].
    pub(crate) fn blobs(&self) -> &dyn BlobStore {
        self.inner.blobs.blocking()
    }

    /// Returns the archives packed for legacy skills (see [`PackCache`]).
    pub(crate) fn packs(&self) -> &PackCache {
        &self.inner.packs
    }

    pub(crate) fn tokens(&self) -> &Tokens {
        &self.inner.tokens
    }

    pub(crate) fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    pub(crate) fn config(&self) -> &ServeConfig {
        &self.inner.config
    }

    /// Returns the public URL of `path` (which starts with `/`) on this server.
    pub(crate) fn url(&self, path: &str) -> String {
        let base = self.inner.config.public_url.as_str().trim_end_matches('/');
        format!("{base}{path}")
    }

    /// Runs `work` on the blocking pool (index and store reads block) and returns its result.
    pub(crate) async fn blocking<T, F>(&self, work: F) -> Result<T, ApiError>
    where
        T: Send + 'static,
        F: FnOnce(&AppState) -> Result<T, ApiError> + Send + 'static,
    {
        let state = self.clone();
        tokio::task::spawn_blocking(move || work(&state))
            .await
            .map_err(|error| ApiError::Internal(format!("a blocking task failed: {error}")))?
    }

    /// Returns true when `caller` may see a record whose access level is `access`: the one
    /// access policy (see [`crate::access`]), which every endpoint asks.
    pub(crate) fn may_see(&self, caller: Caller, access: Access) -> bool {
        self.inner.policy.allows(caller, access)
    }

    /// Returns the record `id` when `caller` may see it; a record the caller may not see is
    /// as absent as a missing one.
    ///
    /// The record is read from the crawl store, the source the index is derived from: one
    /// point read, with the `last_seen` of the latest crawl (a crawl that sees a record
    /// unchanged advances it there without logging a change, DESIGN.md §2).
    pub(crate) async fn visible_record(
        &self,
        caller: Caller,
        id: SkillId,
    ) -> Result<Skill, ApiError> {
        let key = id.to_string();
        let found = self
            .blocking(move |state| {
                let stored = state.store().record(&key)?;
                Ok(stored
                    .filter(|stored| !stored.is_tombstone())
                    .map(|stored| stored.skill))
            })
            .await?;
        found
            .filter(|skill| self.may_see(caller, skill.access))
            .ok_or_else(|| ApiError::NotFound(format!("no skill {id}")))
    }

    /// Returns a page of records in id order, keeping those the access policy lets the
    /// request's caller see (blocking).
    pub(crate) fn visible_list(&self, request: &ListRequest) -> Result<ListPage, ApiError> {
        let mut page = self.index().list(request)?;
        page.records
            .retain(|skill| self.may_see(request.caller, skill.access));
        Ok(page)
    }
}

/// Returns the record id named by a domain and a name taken from a URL path.
pub(crate) fn parse_id(domain: &str, name: &str) -> Result<SkillId, ApiError> {
    let domain: Domain = domain
        .parse()
        .map_err(|_| ApiError::InvalidPath(format!("invalid domain {domain:?}")))?;
    let slug: Slug = name
        .parse()
        .map_err(|_| ApiError::InvalidPath(format!("invalid skill name {name:?}")))?;
    Ok(SkillId::new(domain, slug))
}
