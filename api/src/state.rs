//! What every handler shares: the read model (over the index, the crawl store and the blob
//! store), the tokens, the metrics, the configuration and the work limit.

use std::sync::Arc;
use std::time::Duration;

use indexer::SearchIndex;
use store::Store;
use store::blobs::Blobs;
use url::Url;

use crate::access::Policy;
use crate::auth::Tokens;
use crate::directory::Directory;
use crate::directory::urls::Urls;
use crate::intake::budget::BudgetConfig;
use crate::intake::{Intake, Prober};
use crate::metrics::Metrics;
use crate::progress::CrawlProgress;
use crate::ratelimit::{ClientLimits, RateLimit, TrustedProxy};

/// The default time a request may take before it is answered with a 503.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// The default largest request body of `POST /rpc` and the submissions (`POST /v1/domains`).
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
    /// The largest request body of `POST /rpc`, MCP and the submissions (a larger one is a
    /// 413); the admin API and IndexNow have limits of their own.
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
    /// The tokens of the admin API (`/admin/v1/…`); `None` turns it off.
    pub admin_tokens: Option<Tokens>,
    /// The publishers' budgets: recrawl requests, submissions and IndexNow pings.
    pub budgets: BudgetConfig,
    /// Each client's request budget (by bearer token, else by address); `None` turns the
    /// limit off.
    pub rate_limit: Option<RateLimit>,
    /// The proxies whose `X-Forwarded-For` names the client, for the rate limit.
    pub trusted_proxies: Vec<TrustedProxy>,
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
            admin_tokens: None,
            budgets: BudgetConfig::default(),
            rate_limit: Some(RateLimit::DEFAULT),
            trusted_proxies: Vec::new(),
        }
    }
}

/// The server's shared state. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Shared>,
}

struct Shared {
    directory: Directory,
    /// Where requests that change what the directory crawls go (the admin API).
    intake: Intake,
    tokens: Tokens,
    metrics: Metrics,
    config: ServeConfig,
    /// One permit per request being served (see [`ServeConfig::max_in_flight`]).
    work: Arc<tokio::sync::Semaphore>,
    /// The per-client budgets, unless the limit is off.
    client_limits: Option<ClientLimits>,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("directory", &self.inner.directory)
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
        let intake = Intake::new(Arc::clone(&store), config.budgets);
        let directory = Directory::new(
            index,
            store,
            blobs,
            Policy::default(),
            CrawlProgress::default(),
            Urls::new(&config.public_url),
        );
        let client_limits = config
            .rate_limit
            .map(|limit| ClientLimits::new(limit, config.trusted_proxies.clone()));
        AppState {
            inner: Arc::new(Shared {
                work,
                client_limits,
                directory,
                intake,
                tokens,
                metrics: Metrics::default(),
                config,
            }),
        }
    }

    /// Gives the server what reads publishers' sites (IndexNow key files), which the binary
    /// builds over the crawler's fetch layer; false when it had one already (kept).
    pub fn set_prober(&self, prober: Arc<dyn Prober>) -> bool {
        self.inner.intake.set_prober(prober)
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
        shared.directory = shared.directory.with_policy(policy);
        AppState {
            inner: Arc::new(shared),
        }
    }

    /// Returns the crawl progress that `/v1/domains` and `/metrics` show; a background crawl
    /// reports to it.
    pub fn progress(&self) -> &CrawlProgress {
        self.inner.directory.progress()
    }

    /// Returns where requests that change what the directory crawls go.
    pub(crate) fn intake(&self) -> &Intake {
        &self.inner.intake
    }

    /// Returns what is woken when a request changed the store (a delisting through the admin
    /// API): whoever owns the index writer syncs the index then.
    pub fn on_store_change(&self) -> Arc<tokio::sync::Notify> {
        self.inner.intake.on_change()
    }

    /// True when the admin API is on (`serve --admin-token-file`).
    pub fn admin_enabled(&self) -> bool {
        self.inner.config.admin_tokens.is_some()
    }

    /// Returns the admin API's tokens, when it is on.
    pub(crate) fn admin_tokens(&self) -> Option<&Tokens> {
        self.inner.config.admin_tokens.as_ref()
    }

    /// Returns the read model, which every front end asks.
    pub(crate) fn directory(&self) -> &Directory {
        &self.inner.directory
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

    /// Returns the per-client rate limiter, unless the limit is off.
    pub(crate) fn client_limits(&self) -> Option<&ClientLimits> {
        self.inner.client_limits.as_ref()
    }
}

/// The work permit of a request (`router::shed_load`), for a handler whose response body is
/// streamed: the stream keeps a clone, so the work counts against the limit until the body is
/// sent (or [`MAX_STREAM_HOLD`] has passed), not only until the handler returns.
#[derive(Debug, Clone)]
pub(crate) struct WorkPermit(
    pub(crate) Arc<std::sync::Mutex<Option<tokio::sync::OwnedSemaphorePermit>>>,
);

impl WorkPermit {
    /// Gives the permit back now, whoever still holds a clone.
    pub(crate) fn release(&self) {
        let permit = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        drop(permit);
    }
}

/// How long a streamed body (an export, the well-known index) counts against the work limit
/// after its handler answered.
pub(crate) const MAX_STREAM_HOLD: Duration = Duration::from_secs(30);
