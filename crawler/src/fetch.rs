//! The fetch layer: the only code in skillscout that touches the network.
//!
//! One [`Fetcher`] serves a whole crawl; each domain's crawl opens a [`Session`], which owns an
//! HTTP client of its own, so the at most one idle connection it keeps per host is closed
//! when the domain is done (docs/crawl.md: a shared pool keeping an idle socket per recently
//! crawled host runs out of file descriptors at thousands of hosts per second).
//!
//! Every request goes through the same steps, in [`Session::get`]:
//! 1. the SSRF guard for IP-literal hosts ([`guard`]; host names are checked by the resolver);
//! 2. robots.txt of the URL's origin, fetched once per origin and crawl ([`formats::robots`]);
//! 3. the HTTP cache: a fresh stored response is used without a request, a stale one is
//!    revalidated with `If-None-Match` / `If-Modified-Since` (RFC 9111, through
//!    `http-cache-semantics`; bodies live in the blob store);
//! 4. the host's turn ([`crate::politeness`]): one request in flight per host, spaced;
//! 5. the request, with a connect and a whole-request timeout, the body streamed against a
//!    byte cap that counts decompressed bytes (a gzip bomb is `too_large`, not an OOM);
//! 6. `429`/`503` honour `Retry-After` (both forms, capped), other transient failures (a
//!    connection reset, closed before the answer, or ended before the body it announced)
//!    are retried with backoff, a timeout is not retried;
//! 7. redirects are followed by hand, each hop going through steps 1-6 again; credentials are
//!    attached per hop, so they never follow a redirect to another host.
//!
//! [`Session::post`] sends a JSON-RPC call (an MCP endpoint's) through steps 1, 2 and 4-6;
//! it is never cached, and follows only a `307`/`308` to the same origin.

pub mod admin;
pub mod guard;
pub mod tls;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use http::header::{
    CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, ETAG, EXPIRES, IF_MODIFIED_SINCE, IF_NONE_MATCH,
    LAST_MODIFIED, LINK, LOCATION, RETRY_AFTER, USER_AGENT,
};
use http::{HeaderMap, HeaderValue, StatusCode};
use http_cache_semantics::{AfterResponse, BeforeRequest, CacheOptions, CachePolicy};
use tokio::sync::OnceCell;
use url::Url;

use crate::credentials::Credentials;
use crate::politeness::{self, CrawlSlot, HostScheduler};
use formats::diagnostic::Code;
use formats::discover::link::MAX_LINK_HEADER_BYTES;
use formats::robots::{MAX_ROBOTS_BYTES, RobotsPolicy};
use guard::{GuardedResolver, Overrides, RefusedAddress, ResolveOverride};
use store::blobs::Blobs;
use store::{CacheEntry, CachingHeaders, Store};

/// How long a robots.txt is trusted before it is fetched again (RFC 9309 §2.4).
pub const ROBOTS_CACHE_TTL: Duration = Duration::from_secs(24 * 60 * 60);
/// How many origins' robots.txt are kept in memory before idle ones are dropped (they stay in
/// the HTTP cache on disk).
const ROBOTS_MEMORY: usize = 4096;

/// What the fetch layer needs to know; the crawl's configuration provides it.
#[derive(Debug, Clone)]
pub struct FetchSettings {
    /// The `User-Agent` header.
    pub user_agent: String,
    /// The pause between two requests to one host (raised by `Crawl-delay`).
    pub host_delay: Duration,
    /// The time allowed to open a connection.
    pub connect_timeout: Duration,
    /// The time allowed for a whole request, body included.
    pub request_timeout: Duration,
    /// The most redirects followed for one request.
    pub max_redirects: usize,
    /// The most retries of one request after a transient failure or `Retry-After`.
    pub max_retries: u32,
    /// The first backoff before a retry; it doubles with each attempt.
    pub retry_base_delay: Duration,
    /// The longest `Retry-After` waited for; a longer one leaves the host for the next crawl.
    pub max_retry_after: Duration,
    /// `--resolve` rules (trusted addresses).
    pub resolve: Vec<ResolveOverride>,
    /// Lifts the SSRF guard.
    pub allow_private: bool,
    /// Extra trusted root certificates (`--ca-cert`), DER.
    pub ca_certs: Vec<rustls::pki_types::CertificateDer<'static>>,
    /// Per-host headers.
    pub credentials: Credentials,
    /// The hosts' turns. Settings cloned from one another share them, so the fetchers built
    /// from them (a serving process's crawl and its IndexNow key reads) take turns at a host
    /// together: one request at a time, spaced by the host delay.
    pub hosts: Arc<HostScheduler>,
}

/// Where cached responses are kept: policies in the store, bodies in the blob store.
#[derive(Debug, Clone)]
pub struct HttpCache {
    /// The crawl store (the HTTP cache table).
    pub store: Arc<Store>,
    /// The blob store (bodies).
    pub blobs: Blobs,
}

pub use formats::site::FetchFailure;

/// A usable response: status 2xx (or a cached one), body read whole.
#[derive(Debug, Clone)]
pub struct Response {
    /// The URL the body came from, after redirects.
    pub url: Url,
    /// The body.
    pub body: Vec<u8>,
    /// The `Content-Type`, if any.
    pub content_type: Option<String>,
    /// True when no request was made (a fresh cache entry).
    pub from_cache: bool,
    /// What the origin's answer said about caching; `None` for a fresh entry of our cache.
    pub caching: Option<CachingHeaders>,
    /// The `Link` header field values, joined with commas, at most
    /// [`MAX_LINK_HEADER_BYTES`] (a cached answer's, as stored).
    pub link_header: Option<String>,
}

/// The answer to a [`Session::post`], whatever its status.
#[derive(Debug, Clone)]
pub struct PostResponse {
    /// The URL that answered, after same-origin redirects.
    pub url: Url,
    /// The status.
    pub status: StatusCode,
    /// The headers.
    pub headers: HeaderMap,
    /// The `Content-Type`, if any.
    pub content_type: Option<String>,
    /// The body of a success or a client error; empty otherwise.
    pub body: Vec<u8>,
}

/// How many bytes of a body to accept.
#[derive(Debug, Clone, Copy)]
pub enum BodyLimit {
    /// More than this many bytes is a `too_large` failure.
    Fail(usize),
    /// Bytes past this many are dropped (robots.txt: only the first 500 KiB are parsed).
    Truncate(usize),
}

impl BodyLimit {
    fn bytes(self) -> usize {
        match self {
            BodyLimit::Fail(bytes) | BodyLimit::Truncate(bytes) => bytes,
        }
    }
}

/// What robots.txt said for an origin, and why, when it could not be read.
#[derive(Debug, Clone)]
pub struct RobotsOutcome {
    /// The policy to apply.
    pub policy: RobotsPolicy,
    /// The failure that made the policy disallow everything (or the origin unreachable).
    pub failure: Option<FetchFailure>,
}

/// Shared state of one crawl's fetching.
#[derive(Debug)]
pub struct Fetcher {
    settings: FetchSettings,
    tls: rustls::ClientConfig,
    resolver: GuardedResolver,
    scheduler: Arc<HostScheduler>,
    robots: Mutex<HashMap<String, Arc<OnceCell<RobotsOutcome>>>>,
    cache: Option<HttpCache>,
    /// Hosts that asked for a wait over [`FetchSettings::max_retry_after`]: left for the next
    /// crawl, with no further request to them in this one (docs/crawl.md), with when they were
    /// left and the wait they asked for. Only such hosts are kept, so the map stays small.
    left_hosts: Mutex<HashMap<String, (Instant, Duration)>>,
}

impl Fetcher {
    /// Returns a fetcher; `cache` is `None` for a crawl that keeps nothing (`validate URL`).
    pub fn new(settings: FetchSettings, cache: Option<HttpCache>) -> Result<Fetcher, String> {
        let tls = tls::client_config(&settings.ca_certs)?;
        let resolver = GuardedResolver::new(
            Arc::new(Overrides::new(&settings.resolve)),
            settings.allow_private,
        );
        let scheduler = Arc::clone(&settings.hosts);
        Ok(Fetcher {
            settings,
            tls,
            resolver,
            scheduler,
            robots: Mutex::new(HashMap::new()),
            cache,
            left_hosts: Mutex::new(HashMap::new()),
        })
    }

    /// Leaves `host`, which asked to wait `wait`, for the next crawl: no further request goes
    /// to it in this one.
    fn leave_host(&self, host: &str, wait: Duration) {
        let mut left = self.left_hosts.lock().unwrap_or_else(|e| e.into_inner());
        left.insert(host.to_owned(), (Instant::now(), wait));
    }

    /// True when `host` was left for the next crawl.
    fn is_left(&self, host: &str) -> bool {
        let left = self.left_hosts.lock().unwrap_or_else(|e| e.into_inner());
        left.contains_key(host)
    }

    /// For a crawl that never ends (a crawl worker that keeps running, whose "next crawl" of a
    /// domain is scheduled by the store): returns how long `host` still asks to be left alone,
    /// if it was left, and forgets it, so that the domain's next crawl may ask it again. Hosts
    /// whose wait has passed are forgotten too.
    pub fn take_left(&self, host: &str) -> Option<Duration> {
        let now = Instant::now();
        let mut left = self.left_hosts.lock().unwrap_or_else(|e| e.into_inner());
        let remaining = left
            .remove(&host.to_ascii_lowercase())
            .map(|(since, wait)| wait.saturating_sub(now.saturating_duration_since(since)));
        left.retain(|_, (since, wait)| now.saturating_duration_since(*since) < *wait);
        remaining
    }

    /// Returns the settings.
    pub fn settings(&self) -> &FetchSettings {
        &self.settings
    }

    /// Returns the blob store, when responses are kept.
    pub fn blobs(&self) -> Option<&Blobs> {
        self.cache.as_ref().map(|cache| &cache.blobs)
    }

    /// Opens a session: an HTTP client whose connections close when the session is dropped.
    pub fn session(&self) -> Result<Session<'_>, String> {
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(self.tls.clone())
            .dns_resolver(Arc::new(self.resolver.clone()))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .connect_timeout(self.settings.connect_timeout)
            .timeout(self.settings.request_timeout)
            .pool_max_idle_per_host(1)
            .gzip(true)
            .referer(false)
            .build()
            .map_err(|error| format!("cannot build the HTTP client: {error}"))?;
        Ok(Session {
            fetcher: self,
            client,
            requests: 0,
            cache_updates: Vec::new(),
            slot: None,
            preloaded: None,
        })
    }

    fn robots_cell(&self, origin: &str) -> Arc<OnceCell<RobotsOutcome>> {
        let mut robots = self.robots.lock().unwrap_or_else(|e| e.into_inner());
        if robots.len() > ROBOTS_MEMORY {
            robots.retain(|_, cell| Arc::strong_count(cell) > 1 || !cell.initialized());
        }
        Arc::clone(robots.entry(origin.to_owned()).or_default())
    }

    /// Forgets an origin's robots.txt once its domain is done; it stays in the HTTP cache.
    pub fn forget_robots(&self, origin: &Url) {
        let key = origin.origin().ascii_serialization();
        let mut robots = self.robots.lock().unwrap_or_else(|e| e.into_inner());
        robots.remove(&key);
    }

    /// Returns the pause to leave after a request to `url`'s host: the host delay, or the
    /// origin's `Crawl-delay` when larger and known.
    fn pause_for(&self, url: &Url) -> Duration {
        let key = url.origin().ascii_serialization();
        let crawl_delay = {
            let robots = self.robots.lock().unwrap_or_else(|e| e.into_inner());
            robots
                .get(&key)
                .and_then(|cell| cell.get())
                .and_then(|outcome| outcome.policy.crawl_delay())
        };
        self.settings
            .host_delay
            .max(crawl_delay.unwrap_or_default())
    }
}

/// One domain's fetching: its client, its request count and its cache updates.
#[derive(Debug)]
pub struct Session<'f> {
    fetcher: &'f Fetcher,
    client: reqwest::Client,
    requests: usize,
    cache_updates: Vec<(Url, Option<CacheEntry>)>,
    /// The crawl slot the session's site holds, given back while it waits out a
    /// `Retry-After`; `None` outside a crawl (`validate URL`).
    slot: Option<CrawlSlot>,
    /// The cache entries of the site's origin, read once when the session starts
    /// ([`Session::preload`]): its URLs are looked up here, not in the store one by one.
    preloaded: Option<Preloaded>,
}

/// The cache entries of one origin, by URL.
#[derive(Debug)]
struct Preloaded {
    /// `scheme://host[:port]`.
    origin: String,
    entries: HashMap<String, CacheEntry>,
}

/// The method of a request on the wire, with a POST's body.
#[derive(Debug, Clone, Copy)]
enum Verb<'b> {
    Get,
    Post(&'b [u8]),
    Delete,
}

/// What one request on the wire gave.
struct Exchange {
    status: StatusCode,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl Session<'_> {
    /// Gives the session its site's crawl slot, to give back while it waits out a
    /// `Retry-After`.
    pub fn with_slot(mut self, slot: Option<CrawlSlot>) -> Self {
        self.slot = slot;
        self
    }

    /// Returns how many HTTP requests this session made.
    pub fn requests(&self) -> usize {
        self.requests
    }

    /// Reads the cache entries of `origin` at once, so that the site's requests find theirs
    /// without a store read each (a domain never crawled has none, and costs one read).
    /// A failure to read leaves the lookups to the store, URL by URL.
    pub async fn preload(&mut self, origin: &Url) {
        let Some(cache) = &self.fetcher.cache else {
            return;
        };
        match cache.store.cached_of_origin(origin).await {
            Ok(entries) => {
                self.preloaded = Some(Preloaded {
                    origin: origin.origin().ascii_serialization(),
                    entries: entries.into_iter().collect(),
                });
            }
            Err(error) => {
                tracing::debug!(%error, %origin, "cannot read the origin's cache entries")
            }
        }
    }

    /// Returns the stored cache entry of `url`: from the preloaded origin, or the store.
    fn stored_entry(&self, url: &Url) -> Option<CacheEntry> {
        if let Some(preloaded) = &self.preloaded
            && url.origin().ascii_serialization() == preloaded.origin
        {
            return preloaded.entries.get(url.as_str()).cloned();
        }
        let cache = self.fetcher.cache.as_ref()?;
        // A point read from redb's page cache: cheaper in place than on the blocking pool
        // (see the `store` crate docs).
        cache.store.blocking().cached(url).ok()?
    }

    /// True when a fetch of `url` would be answered from the cache, without a request: a
    /// stored copy (or "not found") that is fresh and that no publisher marked out of date.
    pub fn answers_from_cache(&self, url: &Url) -> bool {
        let Some(entry) = self.stored_entry(url) else {
            return false;
        };
        if entry.revalidate {
            return false;
        }
        let Ok(policy) = serde_json::from_value::<CachePolicy>(entry.policy) else {
            return false;
        };
        let Some(request) = self.cache_request(url) else {
            return false;
        };
        matches!(
            policy.before_request(&request, SystemTime::now()),
            BeforeRequest::Fresh(_)
        )
    }

    /// Takes the HTTP cache updates made so far, to store with the domain's results.
    pub fn take_cache_updates(&mut self) -> Vec<(Url, Option<CacheEntry>)> {
        std::mem::take(&mut self.cache_updates)
    }

    /// Returns what robots.txt says for `url`'s origin, fetching it once per crawl.
    pub async fn robots(&mut self, url: &Url) -> RobotsOutcome {
        let origin = url.origin().ascii_serialization();
        let cell = self.fetcher.robots_cell(&origin);
        let outcome = cell.get_or_init(|| self.load_robots(url)).await;
        outcome.clone()
    }

    async fn load_robots(&mut self, url: &Url) -> RobotsOutcome {
        let mut robots_url = url.clone();
        robots_url.set_path("/robots.txt");
        robots_url.set_query(None);
        robots_url.set_fragment(None);

        if let Some(body) = self.cached_robots(&robots_url).await {
            return RobotsOutcome {
                policy: RobotsPolicy::from_response(200, &body),
                failure: None,
            };
        }
        let result = self
            .get_unchecked(&robots_url, BodyLimit::Truncate(MAX_ROBOTS_BYTES))
            .await;
        match result {
            Ok((status, body)) => {
                let policy = RobotsPolicy::from_response(status.as_u16(), &body);
                let failure = match &policy {
                    RobotsPolicy::DisallowAll(why) => Some(FetchFailure::new(
                        Code::RobotsUnavailable,
                        &robots_url,
                        format!("{why}; nothing is fetched from this origin in this crawl"),
                    )),
                    RobotsPolicy::Rules(_) | RobotsPolicy::AllowAll => {
                        self.remember_robots(&robots_url, &body, status).await;
                        None
                    }
                };
                RobotsOutcome { policy, failure }
            }
            // More redirects than RFC 9309 asks a crawler to follow (a loop never ends):
            // "unavailable", which allows all (§2.3.1.2).
            Err(failure) if matches!(failure.code, Code::TooManyRedirects | Code::RedirectLoop) => {
                RobotsOutcome {
                    policy: RobotsPolicy::AllowAll,
                    failure: None,
                }
            }
            Err(failure) => {
                let code = match failure.code {
                    Code::Unreachable | Code::RefusedDestination => failure.code,
                    _ => Code::RobotsUnavailable,
                };
                RobotsOutcome {
                    policy: RobotsPolicy::DisallowAll(failure.message.clone()),
                    failure: Some(FetchFailure {
                        code,
                        message: format!(
                            "robots.txt could not be read ({}: {}); nothing is fetched from this origin in this crawl",
                            failure.code, failure.message
                        ),
                        url: failure.url,
                    }),
                }
            }
        }
    }

    /// A robots.txt stored less than a day ago, as its body (empty for a 4xx: allow all).
    async fn cached_robots(&self, robots_url: &Url) -> Option<Vec<u8>> {
        let cache = self.fetcher.cache.as_ref()?;
        let entry = self.stored_entry(robots_url)?;
        let age = time::OffsetDateTime::now_utc() - entry.stored_at;
        if age.is_negative() || age.unsigned_abs() > ROBOTS_CACHE_TTL {
            return None;
        }
        match entry.body {
            Some(digest) => cache.blobs.get(&digest).await.ok()?,
            None if (400..500).contains(&entry.status) => Some(Vec::new()),
            None => None,
        }
    }

    /// Keeps a robots.txt for a day. A 4xx (most sites have none) is kept as its status
    /// alone, which allows all: no blob to write for it.
    async fn remember_robots(&mut self, robots_url: &Url, body: &[u8], status: StatusCode) {
        let Some(cache) = &self.fetcher.cache else {
            return;
        };
        let (status, digest) = if status.is_success() {
            match cache.blobs.put(body.to_vec()).await {
                Ok(digest) => (200, Some(digest)),
                Err(_) => return,
            }
        } else {
            (status.as_u16(), None)
        };
        self.cache_updates.push((
            robots_url.clone(),
            Some(CacheEntry {
                policy: serde_json::Value::Null,
                status,
                body: digest,
                stored_at: time::OffsetDateTime::now_utc(),
                revalidate: false,
            }),
        ));
    }

    /// Fetches `url` politely (robots.txt, cache, host turn, retries, redirects) and returns
    /// its body, or why there is none.
    pub async fn get(&mut self, url: &Url, limit: BodyLimit) -> Result<Response, FetchFailure> {
        let cached = self.cache_lookup(url).await;
        match &cached {
            Some(CacheHit::Fresh {
                body,
                content_type,
                link_header,
            }) => {
                return Ok(Response {
                    url: url.clone(),
                    body: body.clone(),
                    content_type: content_type.clone(),
                    from_cache: true,
                    caching: None,
                    link_header: link_header.clone(),
                });
            }
            Some(CacheHit::FreshNotFound(status)) => {
                return Err(status_failure(url, *status));
            }
            Some(CacheHit::Stale(_)) | None => {}
        }
        let stale = match cached {
            Some(CacheHit::Stale(stale)) => Some(stale),
            _ => None,
        };

        let mut current = url.clone();
        let mut visited: HashSet<Url> = HashSet::from([url.clone()]);
        let mut conditional = stale.as_ref().map(|stale| stale.conditional.clone());
        let mut redirects = 0;
        // Once a redirect has gone from https to http, no hop of this chain gets credentials.
        let mut downgraded = false;
        loop {
            self.check_destination(&current).await?;
            let exchange = self
                .exchange(
                    &current,
                    conditional.as_ref(),
                    Verb::Get,
                    limit,
                    true,
                    !downgraded,
                )
                .await?;
            let status = exchange.status;

            if status == StatusCode::NOT_MODIFIED {
                // Only an answer to the conditional request can revalidate; a 304 to the
                // unconditional retry below is an error, not a loop.
                if let Some(stale) = &stale
                    && redirects == 0
                    && conditional.is_some()
                {
                    match self.revalidated(url, stale, &exchange).await {
                        Some(response) => return Ok(response),
                        None => {
                            // The 304 does not match what is cached: ask again, unconditionally.
                            conditional = None;
                            continue;
                        }
                    }
                }
                return Err(FetchFailure::new(
                    Code::HttpStatus,
                    &current,
                    "answered 304 Not Modified to a request that was not conditional",
                ));
            }
            if status.is_redirection() {
                let next = redirect_target(&current, &exchange.headers)?;
                redirects += 1;
                if !visited.insert(next.clone()) {
                    return Err(FetchFailure::new(
                        Code::RedirectLoop,
                        &current,
                        format!("redirects back to {next}, already visited"),
                    ));
                }
                if redirects > self.fetcher.settings.max_redirects {
                    return Err(FetchFailure::new(
                        Code::TooManyRedirects,
                        &current,
                        format!(
                            "more than {} redirects (the next is to {next})",
                            self.fetcher.settings.max_redirects
                        ),
                    ));
                }
                // A conditional request is only for the URL that was cached.
                conditional = None;
                downgraded |= current.scheme() == "https" && next.scheme() == "http";
                current = next;
                continue;
            }
            if status.is_success() {
                let content_type = header_text(&exchange.headers, CONTENT_TYPE);
                if redirects == 0 {
                    self.cache_store(url, &exchange).await;
                }
                return Ok(Response {
                    url: current,
                    caching: Some(caching_of(&exchange.headers)),
                    link_header: link_header(&exchange.headers),
                    body: exchange.body,
                    content_type,
                    from_cache: false,
                });
            }
            if redirects == 0 {
                self.cache_store(url, &exchange).await;
            }
            return Err(status_failure(&current, status));
        }
    }

    /// Fetches `url` without robots.txt checks (for robots.txt itself) or caching, following
    /// redirects; returns the final status (any) and body. The host's pause is the host delay
    /// (its `Crawl-delay` is not known yet). No credentials go with it: robots.txt is public
    /// by nature (a 401 for it allows everything, like any 4xx), and the origin may be one a
    /// redirect reached from https over plain http, where credentials must not follow.
    async fn get_unchecked(
        &mut self,
        url: &Url,
        limit: BodyLimit,
    ) -> Result<(StatusCode, Vec<u8>), FetchFailure> {
        let mut current = url.clone();
        let mut visited: HashSet<Url> = HashSet::from([url.clone()]);
        for _ in 0..=self.fetcher.settings.max_redirects {
            check_scheme_and_literal(&current, self.fetcher.settings.allow_private)?;
            let exchange = self
                .exchange(&current, None, Verb::Get, limit, false, false)
                .await?;
            if exchange.status.is_redirection() && exchange.status != StatusCode::NOT_MODIFIED {
                let next = redirect_target(&current, &exchange.headers)?;
                if !visited.insert(next.clone()) {
                    return Err(FetchFailure::new(
                        Code::RedirectLoop,
                        &current,
                        format!("redirects back to {next}, already visited"),
                    ));
                }
                current = next;
                continue;
            }
            return Ok((exchange.status, exchange.body));
        }
        Err(FetchFailure::new(
            Code::TooManyRedirects,
            url,
            format!(
                "more than {} redirects",
                self.fetcher.settings.max_redirects
            ),
        ))
    }

    /// POSTs `body` to `url` politely (the address guard, robots.txt, the host's turn,
    /// retries) and returns the answer whatever its status, with its body for a success or a
    /// client error. Nothing is cached (RFC 9111 §9.3.3: POST answers are not reused here).
    /// Only a `307` or `308` to the same origin is followed, with the same body: a POST is
    /// never replayed to another origin, nor turned into a GET by a `301`-`303`.
    pub async fn post(
        &mut self,
        url: &Url,
        headers: &HeaderMap,
        body: &[u8],
        limit: usize,
    ) -> Result<PostResponse, FetchFailure> {
        let mut current = url.clone();
        let mut visited: HashSet<Url> = HashSet::from([url.clone()]);
        for _ in 0..=self.fetcher.settings.max_redirects {
            self.check_destination(&current).await?;
            let exchange = self
                .exchange(
                    &current,
                    Some(headers),
                    Verb::Post(body),
                    BodyLimit::Fail(limit),
                    true,
                    true,
                )
                .await?;
            let status = exchange.status;
            if !status.is_redirection() {
                return Ok(PostResponse {
                    url: current,
                    status,
                    content_type: header_text(&exchange.headers, CONTENT_TYPE),
                    headers: exchange.headers,
                    body: exchange.body,
                });
            }
            let next = redirect_target(&current, &exchange.headers)?;
            let keeps_method = matches!(
                status,
                StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT
            );
            if !keeps_method || next.origin() != current.origin() {
                return Err(FetchFailure::new(
                    Code::InvalidRedirect,
                    &current,
                    format!(
                        "a POST answered {} to {next}; only a 307 or 308 to the same origin is followed",
                        status.as_u16()
                    ),
                ));
            }
            if !visited.insert(next.clone()) {
                return Err(FetchFailure::new(
                    Code::RedirectLoop,
                    &current,
                    format!("redirects back to {next}, already visited"),
                ));
            }
            current = next;
        }
        Err(FetchFailure::new(
            Code::TooManyRedirects,
            url,
            format!(
                "more than {} redirects",
                self.fetcher.settings.max_redirects
            ),
        ))
    }

    /// Sends a DELETE to `url` politely (the address guard, robots.txt, the host's turn) and
    /// returns its status; redirects are not followed. MCP clients end a session this way.
    pub async fn delete(
        &mut self,
        url: &Url,
        headers: &HeaderMap,
    ) -> Result<StatusCode, FetchFailure> {
        self.check_destination(url).await?;
        let exchange = self
            .exchange(
                url,
                Some(headers),
                Verb::Delete,
                BodyLimit::Truncate(0),
                true,
                true,
            )
            .await?;
        Ok(exchange.status)
    }

    /// The SSRF guard for literal addresses and robots.txt, for one hop.
    async fn check_destination(&mut self, url: &Url) -> Result<(), FetchFailure> {
        check_scheme_and_literal(url, self.fetcher.settings.allow_private)?;
        let robots = self.robots(url).await;
        if let Some(failure) = robots.failure {
            return Err(FetchFailure {
                url: url.clone(),
                ..failure
            });
        }
        let path = match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_owned(),
        };
        if !robots.policy.allows(&path) {
            return Err(FetchFailure::new(
                Code::RobotsDisallowed,
                url,
                "robots.txt does not allow skillscout to fetch this URL",
            ));
        }
        Ok(())
    }

    /// One request on the wire, with the host's turn, retries and the body read whole: a GET,
    /// a POST (whose body is read for client errors too, since a JSON-RPC server explains a
    /// 4xx in it) or a DELETE. `headers` go with it (conditional headers of a revalidation, or
    /// a POST's).
    async fn exchange(
        &mut self,
        url: &Url,
        headers: Option<&HeaderMap>,
        verb: Verb<'_>,
        limit: BodyLimit,
        use_crawl_delay: bool,
        send_credentials: bool,
    ) -> Result<Exchange, FetchFailure> {
        let settings = &self.fetcher.settings;
        let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
        let pause = if use_crawl_delay {
            self.fetcher.pause_for(url)
        } else {
            settings.host_delay
        };
        if self.fetcher.is_left(&host) {
            return Err(FetchFailure::new(
                Code::RateLimited,
                url,
                "the host asked earlier in this crawl to wait longer than is waited; left for the next crawl",
            ));
        }
        let mut attempt = 0;
        // True while waiting out a `Retry-After`: the site's crawl slot is given back meanwhile.
        let mut server_asked_to_wait = false;
        loop {
            if server_asked_to_wait && let Some(slot) = &mut self.slot {
                slot.park();
            }
            let mut permit = self.fetcher.scheduler.acquire(&host, pause).await;
            if let Some(slot) = &mut self.slot {
                slot.resume().await;
            }
            self.requests += 1;
            let request = match verb {
                Verb::Get => self.client.get(url.as_str()),
                Verb::Post(body) => self.client.post(url.as_str()).body(body.to_vec()),
                Verb::Delete => self.client.delete(url.as_str()),
            };
            let mut request = request.header(USER_AGENT, settings.user_agent.as_str());
            if send_credentials && let Some(headers) = settings.credentials.for_url(url) {
                request = request.headers(headers.clone());
            }
            if let Some(headers) = headers {
                request = request.headers(headers.clone());
            }
            let outcome = request.send().await;
            let response = match outcome {
                Ok(response) => response,
                Err(error) => {
                    let mut failure = classify(url, &error);
                    let transient = is_transient(&error);
                    if transient && attempt < settings.max_retries {
                        attempt += 1;
                        permit
                            .extend_pause(politeness::backoff(settings.retry_base_delay, attempt));
                        tracing::debug!(%url, attempt, "retrying after a transient failure");
                        continue;
                    }
                    if transient && attempt > 0 {
                        failure.message = format!("{} after {attempt} retries", failure.message);
                    }
                    return Err(failure);
                }
            };
            let status = response.status();
            if matches!(
                status,
                StatusCode::TOO_MANY_REQUESTS
                    | StatusCode::SERVICE_UNAVAILABLE
                    | StatusCode::BAD_GATEWAY
                    | StatusCode::GATEWAY_TIMEOUT
            ) {
                let retry_after = header_text(response.headers(), RETRY_AFTER)
                    .and_then(|value| politeness::parse_retry_after(&value, SystemTime::now()));
                if let Some(wait) = retry_after
                    && wait > settings.max_retry_after
                {
                    self.fetcher.leave_host(&host, wait);
                    return Err(FetchFailure::new(
                        Code::RateLimited,
                        url,
                        format!(
                            "status {} asks to wait {} s, more than the {} s waited; left for the next crawl",
                            status.as_u16(),
                            wait.as_secs(),
                            settings.max_retry_after.as_secs()
                        ),
                    ));
                }
                if attempt < settings.max_retries {
                    attempt += 1;
                    let wait = retry_after
                        .unwrap_or_else(|| politeness::backoff(settings.retry_base_delay, attempt));
                    permit.extend_pause(wait);
                    server_asked_to_wait = retry_after.is_some();
                    tracing::debug!(%url, status = status.as_u16(), wait_ms = wait.as_millis() as u64, "waiting before a retry");
                    continue;
                }
                let code = if matches!(
                    status,
                    StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE
                ) {
                    Code::RateLimited
                } else {
                    Code::HttpStatus
                };
                return Err(FetchFailure::new(
                    code,
                    url,
                    format!(
                        "answered status {} after {} retries",
                        status.as_u16(),
                        settings.max_retries
                    ),
                ));
            }
            let headers = response.headers().clone();
            let read_error_body = matches!(verb, Verb::Post(_)) && status.is_client_error();
            let body = if status.is_success() || read_error_body {
                match read_body(url, response, limit).await {
                    Ok(body) => body,
                    Err(BodyFailure {
                        transient: true, ..
                    }) if attempt < settings.max_retries => {
                        attempt += 1;
                        permit
                            .extend_pause(politeness::backoff(settings.retry_base_delay, attempt));
                        tracing::debug!(%url, attempt, "retrying after a body cut short");
                        continue;
                    }
                    Err(BodyFailure {
                        mut failure,
                        transient,
                    }) => {
                        if transient && attempt > 0 {
                            failure.message =
                                format!("{} after {attempt} retries", failure.message);
                        }
                        return Err(failure);
                    }
                }
            } else {
                Vec::new()
            };
            drop(permit);
            return Ok(Exchange {
                status,
                headers,
                body,
            });
        }
    }

    async fn cache_lookup(&self, url: &Url) -> Option<CacheHit> {
        let cache = self.fetcher.cache.as_ref()?;
        let entry = self.stored_entry(url)?;
        let policy: CachePolicy = serde_json::from_value(entry.policy.clone()).ok()?;
        let mut request = self.cache_request(url)?;
        if entry.revalidate {
            // The publisher said this copy is out of date: asked again as a client's
            // `no-cache` would, with the validators it has.
            request
                .headers
                .insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        }
        let Some(body_digest) = entry.body else {
            // A cached "not found": used while fresh, never revalidated.
            if entry.revalidate {
                return None;
            }
            let status = StatusCode::from_u16(entry.status).ok()?;
            return match policy.before_request(&request, SystemTime::now()) {
                BeforeRequest::Fresh(_) => Some(CacheHit::FreshNotFound(status)),
                BeforeRequest::Stale { .. } => None,
            };
        };
        match policy.before_request(&request, SystemTime::now()) {
            BeforeRequest::Fresh(parts) => {
                let body = cache.blobs.get(&body_digest).await.ok()??;
                Some(CacheHit::Fresh {
                    body,
                    content_type: header_text(&parts.headers, CONTENT_TYPE),
                    link_header: link_header(&parts.headers),
                })
            }
            BeforeRequest::Stale { request, matches } => {
                if !matches || !cache.blobs.contains(&body_digest).await {
                    return None;
                }
                let mut conditional = HeaderMap::new();
                for name in [IF_NONE_MATCH, IF_MODIFIED_SINCE] {
                    if let Some(value) = request.headers.get(&name) {
                        conditional.insert(name, value.clone());
                    }
                }
                if conditional.is_empty() {
                    return None;
                }
                Some(CacheHit::Stale(Box::new(Stale {
                    policy,
                    body_digest,
                    conditional,
                })))
            }
        }
    }

    /// The request as the cache policy sees it.
    fn cache_request(&self, url: &Url) -> Option<http::request::Parts> {
        let mut builder = http::Request::builder()
            .uri(url.as_str())
            .header(USER_AGENT, self.fetcher.settings.user_agent.as_str());
        if let Some(headers) = self.fetcher.settings.credentials.for_url(url) {
            for (name, value) in headers {
                builder = builder.header(name, value);
            }
        }
        Some(builder.body(()).ok()?.into_parts().0)
    }

    async fn revalidated(
        &mut self,
        url: &Url,
        stale: &Stale,
        exchange: &Exchange,
    ) -> Option<Response> {
        let cache = self.fetcher.cache.as_ref()?;
        let request = self.cache_request(url)?;
        let response = response_parts(exchange)?;
        let AfterResponse::NotModified(policy, parts) =
            stale
                .policy
                .after_response(&request, &response, SystemTime::now())
        else {
            return None;
        };
        let body = cache.blobs.get(&stale.body_digest).await.ok()??;
        let entry = CacheEntry {
            policy: serde_json::to_value(&policy).ok()?,
            status: 200,
            body: Some(stale.body_digest),
            stored_at: time::OffsetDateTime::now_utc(),
            revalidate: false,
        };
        self.cache_updates.push((url.clone(), Some(entry)));
        // A 304 revalidated the entry: the origin has a validator, whatever this answer
        // repeats of its headers.
        let caching = CachingHeaders {
            validator: true,
            ..caching_of(&exchange.headers)
        };
        Some(Response {
            url: url.clone(),
            body,
            content_type: header_text(&parts.headers, CONTENT_TYPE),
            from_cache: false,
            caching: Some(caching),
            link_header: link_header(&parts.headers),
        })
    }

    /// Stores a 2xx response, or a 404/410 as a cached "not found", when its headers allow.
    async fn cache_store(&mut self, url: &Url, exchange: &Exchange) {
        let Some(cache) = &self.fetcher.cache else {
            return;
        };
        let cacheable_status = exchange.status.is_success()
            || matches!(exchange.status, StatusCode::NOT_FOUND | StatusCode::GONE);
        // Without explicit freshness, a validator or a Last-Modified date (for heuristic
        // freshness), a response can never be reused: skip the policy and the write. Most
        // answers of a crawl, the 404s of sites without skills, are like this.
        let may_be_reused = [CACHE_CONTROL, EXPIRES, ETAG, LAST_MODIFIED]
            .iter()
            .any(|name| exchange.headers.contains_key(name));
        if !cacheable_status || !may_be_reused {
            return;
        }
        let (Some(request), Some(response)) = (self.cache_request(url), response_parts(exchange))
        else {
            return;
        };
        let options = CacheOptions {
            // skillscout is the only user of its cache, as a browser is of its own.
            shared: false,
            ..CacheOptions::default()
        };
        let now = SystemTime::now();
        let policy = CachePolicy::new_options(&request, &response, now, options);
        if !policy.is_storable() {
            self.cache_updates.push((url.clone(), None));
            return;
        }
        // A response that is already stale and has no validator can never be reused or
        // revalidated: keeping it would only cost a write (most 404s are like this).
        let has_validator = [ETAG, LAST_MODIFIED]
            .iter()
            .any(|name| exchange.headers.contains_key(name));
        if policy.is_stale(now) && !has_validator {
            return;
        }
        let Ok(policy) = serde_json::to_value(&policy) else {
            return;
        };
        let body = if exchange.status.is_success() {
            match cache.blobs.put(exchange.body.clone()).await {
                Ok(digest) => Some(digest),
                Err(_) => return,
            }
        } else {
            None
        };
        self.cache_updates.push((
            url.clone(),
            Some(CacheEntry {
                policy,
                status: exchange.status.as_u16(),
                body,
                stored_at: time::OffsetDateTime::now_utc(),
                revalidate: false,
            }),
        ));
    }
}

enum CacheHit {
    Fresh {
        body: Vec<u8>,
        content_type: Option<String>,
        link_header: Option<String>,
    },
    FreshNotFound(StatusCode),
    Stale(Box<Stale>),
}

struct Stale {
    policy: CachePolicy,
    body_digest: formats::skill::Digest,
    conditional: HeaderMap,
}

fn response_parts(exchange: &Exchange) -> Option<http::response::Parts> {
    let mut response = http::Response::builder()
        .status(exchange.status)
        .body(())
        .ok()?;
    let mut headers = exchange.headers.clone();
    // A cached answer's headers keep one line per field name (`http-cache-semantics` inserts
    // each stored line in turn): `Link` lines are stored joined, as RFC 9110 §5.3 allows, so
    // that a cached index answer names what the network one did.
    if headers.get_all(LINK).iter().nth(1).is_some()
        && let Some(joined) = link_header(&headers)
        && let Ok(value) = HeaderValue::from_str(&joined)
    {
        headers.insert(LINK, value);
    }
    *response.headers_mut() = headers;
    Some(response.into_parts().0)
}

/// Returns what a response's headers say about caching: a validator (`ETag` or
/// `Last-Modified`) and explicit freshness (`Cache-Control: max-age`/`s-maxage`, `Expires`).
pub fn caching_of(headers: &HeaderMap) -> CachingHeaders {
    let freshness = headers
        .get_all(http::header::CACHE_CONTROL)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|directive| {
            let directive = directive.trim().to_ascii_lowercase();
            directive.starts_with("max-age=") || directive.starts_with("s-maxage=")
        });
    CachingHeaders {
        validator: headers.contains_key(http::header::ETAG)
            || headers.contains_key(http::header::LAST_MODIFIED),
        freshness: freshness || headers.contains_key(http::header::EXPIRES),
    }
}

/// Returns the `Link` field values joined with commas (RFC 9110 §5.3), cut at
/// [`MAX_LINK_HEADER_BYTES`]: all a reader of them reads. Values that are not visible ASCII
/// are skipped.
fn link_header(headers: &HeaderMap) -> Option<String> {
    let mut joined = String::new();
    for value in headers.get_all(LINK) {
        let Ok(value) = value.to_str() else { continue };
        if !joined.is_empty() {
            joined.push_str(", ");
        }
        let room = MAX_LINK_HEADER_BYTES.saturating_sub(joined.len());
        // `to_str` holds only ASCII: any byte index is a character boundary.
        joined.push_str(value.get(..room).unwrap_or(value));
        if joined.len() >= MAX_LINK_HEADER_BYTES {
            break;
        }
    }
    (!joined.is_empty()).then_some(joined)
}

fn header_text(headers: &HeaderMap, name: http::HeaderName) -> Option<String> {
    headers
        .get(name)
        .and_then(|value: &HeaderValue| value.to_str().ok())
        .map(str::to_owned)
}

fn check_scheme_and_literal(url: &Url, allow_private: bool) -> Result<(), FetchFailure> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(FetchFailure::new(
            Code::InvalidUrl,
            url,
            "only http and https URLs are fetched",
        ));
    }
    guard::check_literal(url, allow_private)
        .map_err(|refused| FetchFailure::new(Code::RefusedDestination, url, refused.to_string()))
}

fn redirect_target(current: &Url, headers: &HeaderMap) -> Result<Url, FetchFailure> {
    let Some(location) = header_text(headers, LOCATION) else {
        return Err(FetchFailure::new(
            Code::InvalidRedirect,
            current,
            "a redirect without a Location header",
        ));
    };
    let next = current.join(&location).map_err(|_| {
        FetchFailure::new(
            Code::InvalidRedirect,
            current,
            format!("redirects to {location:?}, which is not a URL"),
        )
    })?;
    if !matches!(next.scheme(), "http" | "https") {
        return Err(FetchFailure::new(
            Code::InvalidRedirect,
            current,
            format!("redirects to {next}, which is not http(s)"),
        ));
    }
    Ok(next)
}

fn status_failure(url: &Url, status: StatusCode) -> FetchFailure {
    match status {
        StatusCode::NOT_FOUND => {
            FetchFailure::new(Code::NotFound, url, format!("status {}", status.as_u16()))
        }
        StatusCode::GONE => FetchFailure::new(Code::Gone, url, "status 410 (gone for good)"),
        _ => FetchFailure::new(
            Code::HttpStatus,
            url,
            format!("unexpected status {}", status.as_u16()),
        ),
    }
}

/// Why a body was not read whole.
struct BodyFailure {
    failure: FetchFailure,
    /// The connection broke off or ended before the body it announced was complete: worth
    /// a retry, like a reset before the answer.
    transient: bool,
}

impl From<FetchFailure> for BodyFailure {
    fn from(failure: FetchFailure) -> BodyFailure {
        BodyFailure {
            failure,
            transient: false,
        }
    }
}

/// Reads a body against its limit, counting decompressed bytes.
async fn read_body(
    url: &Url,
    mut response: reqwest::Response,
    limit: BodyLimit,
) -> Result<Vec<u8>, BodyFailure> {
    let cap = limit.bytes();
    // Content-Length describes the bytes on the wire (compressed, if encoded); a larger one
    // than the cap can be refused before reading, whatever the encoding.
    let declared = header_text(response.headers(), CONTENT_LENGTH)
        .and_then(|value| value.trim().parse::<u64>().ok());
    if let (Some(declared), BodyLimit::Fail(_)) = (declared, limit)
        && declared > cap as u64
    {
        return Err(too_large(url, cap, Some(declared)).into());
    }
    let mut body = Vec::with_capacity(declared.map_or(8 * 1024, |d| d.min(cap as u64) as usize));
    loop {
        let chunk = match response.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => return Ok(body),
            Err(error) => {
                return Err(BodyFailure {
                    failure: classify(url, &error),
                    transient: is_transient(&error) || is_cut_short(&error),
                });
            }
        };
        let room = cap - body.len();
        if chunk.len() > room {
            return match limit {
                BodyLimit::Truncate(_) => {
                    body.extend_from_slice(&chunk[..room]);
                    Ok(body)
                }
                BodyLimit::Fail(_) => Err(too_large(url, cap, None).into()),
            };
        }
        body.extend_from_slice(&chunk);
    }
}

fn too_large(url: &Url, cap: usize, declared: Option<u64>) -> FetchFailure {
    let message = match declared {
        Some(declared) => format!("the body is {declared} bytes, more than the {cap} bytes read"),
        None => format!("the body (decompressed) is larger than the {cap} bytes read"),
    };
    FetchFailure::new(Code::TooLarge, url, message)
}

/// Maps a client error to a stable code, with a message that names the cause.
fn classify(url: &Url, error: &reqwest::Error) -> FetchFailure {
    if let Some(refused) = find_source::<RefusedAddress>(error) {
        return FetchFailure::new(Code::RefusedDestination, url, refused.to_string());
    }
    let cause = root_cause(error);
    // First: a connect timeout is a timeout too, but it means no connection was made.
    if error.is_connect() {
        return FetchFailure::new(Code::Unreachable, url, format!("cannot connect: {cause}"));
    }
    if error.is_timeout() {
        return FetchFailure::new(Code::Timeout, url, "the request timed out");
    }
    if error.is_body() || error.is_decode() {
        return FetchFailure::new(
            Code::InvalidResponse,
            url,
            format!("the body could not be read: {cause}"),
        );
    }
    // The connection was made and then failed (closed or reset mid-request): the host was
    // reached, so this is not `unreachable`.
    FetchFailure::new(
        Code::InvalidResponse,
        url,
        format!("the request failed: {cause}"),
    )
}

/// True for failures worth retrying: the connection was reset, or closed before the answer
/// was complete.
fn is_transient(error: &reqwest::Error) -> bool {
    if error.is_timeout() || find_source::<RefusedAddress>(error).is_some() {
        return false;
    }
    if find_source::<hyper::Error>(error).is_some_and(hyper::Error::is_incomplete_message) {
        return true;
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = source {
        if let Some(io) = current.downcast_ref::<std::io::Error>() {
            return matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::ConnectionAborted
                    | std::io::ErrorKind::BrokenPipe
            );
        }
        source = current.source();
    }
    false
}

/// True when the connection ended before the body its head announced was complete (hyper's
/// incomplete body: a `Content-Length` not reached). A gzip stream cut short inside a
/// complete body is not this: the server sent what it meant to.
fn is_cut_short(error: &reqwest::Error) -> bool {
    let Some(hyper) = find_source::<hyper::Error>(error) else {
        return false;
    };
    let mut source = std::error::Error::source(hyper);
    while let Some(current) = source {
        if let Some(io) = current.downcast_ref::<std::io::Error>() {
            return io.kind() == std::io::ErrorKind::UnexpectedEof;
        }
        source = current.source();
    }
    false
}

fn find_source<'e, T: std::error::Error + 'static>(
    error: &'e (dyn std::error::Error + 'static),
) -> Option<&'e T> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = source {
        if let Some(found) = current.downcast_ref::<T>() {
            return Some(found);
        }
        source = current.source();
    }
    None
}

/// The innermost cause's message, which is the informative one for network errors.
fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    while let Some(next) = current.source() {
        current = next;
    }
    current.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_field_lines_are_joined_and_cut_at_the_cap() {
        let mut headers = HeaderMap::new();
        assert_eq!(link_header(&headers), None);
        headers.append(
            LINK,
            HeaderValue::from_static("<https://a.test/>; rel=alternate"),
        );
        headers.append(
            LINK,
            HeaderValue::from_bytes(b"<https://\xe9.test/>").unwrap(),
        );
        headers.append(LINK, HeaderValue::from_static("</b>"));
        assert_eq!(
            link_header(&headers).as_deref(),
            Some("<https://a.test/>; rel=alternate, </b>")
        );
        let huge = format!("<https://x.test/{}>", "x".repeat(2 * MAX_LINK_HEADER_BYTES));
        headers.append(LINK, HeaderValue::from_str(&huge).unwrap());
        headers.append(LINK, HeaderValue::from_static("<https://late.test/>"));
        let joined = link_header(&headers).unwrap();
        assert_eq!(joined.len(), MAX_LINK_HEADER_BYTES);
        assert!(!joined.contains("late.test"));
    }
}
