//! The skillscout directory server (axum): the JSON API of docs/api.md, access control, the
//! directory re-published in the skill protocols (skill-sharing and JSON-RPC), and the web
//! directory.
//!
//! ```no_run
//! # async fn run(state: api::AppState) -> std::io::Result<()> {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! api::serve(listener, state, async { let _ = tokio::signal::ctrl_c().await; }).await
//! # }
//! ```
//!
//! # Layout
//!
//! - `directory`: the read model. Every question a front end asks (visible search results, a
//!   skill with its files, a domain's status, health and skills, the change feed, what an
//!   export holds, the mirror, the skill-sharing view) is answered there once, under the
//!   access policy; `directory::urls` builds every URL and `skill://` URI.
//! - The front ends, renderings of its answers that never import one another: `routes` (the
//!   JSON API and the skill-sharing endpoints, one module per resource), `web` (the pages),
//!   `mcp` (`POST /mcp`), `rpc` (`POST /rpc`, JSON-RPC 2.0) and [`export`] (`skillscout
//!   export` and `/v1/export`).
//! - `intake`: where requests that change what the directory crawls go (the admin API's
//!   seeds and delisting), the one writer of the frontier in `api`.
//! - `router`: the route table that mounts them, with the layers around them (work limit,
//!   timeout, metrics, tracing, CORS, caching headers).
//! - `state`: [`AppState`] (the read model, tokens, metrics, configuration, work limit) and
//!   [`ServeConfig`].
//! - `access`: the access policy, the one rule of who sees which record.
//! - `auth`: bearer [`Tokens`] and the caller extractor.
//! - [`wire`]: the JSON bodies, built from the read model's answers.
//! - `markup`: HTML escaping and `<mark>` snippets outside the page templates.
//! - `error`: [`ApiError`], the one error type and JSON shape.
//! - `extract`: extractors whose rejections are [`ApiError`]s; query parameters, checked once
//!   for every front end (closed-value filters among them).
//! - `cursor`: opaque, checked pagination cursors.
//! - `caching`: ETag, 304 and Cache-Control; the request timeout.
//! - `metrics`: Prometheus counters and histograms.
//! - `progress`: [`CrawlProgress`], what the background crawl reports.
//!
//! # Invariants
//!
//! - The server never writes the index and never fetches a remote URL: it reads the index,
//!   the crawl store and the blob store, which the crawl fills. The one write it makes is to
//!   the frontier, through `intake` (what to crawl, what is delisted).
//! - An anonymous caller never sees a `private` record on any endpoint: not in hits, totals,
//!   facet counts, records, files, changes, protocol documents or pages. Every record an
//!   endpoint lists or shows, and every crawl error or diagnostic about one, passes the one
//!   access policy (`access`); the index applies the same rule to totals and facet counts.
//! - JSON bodies are [`wire`] types, never the stored types serialised as they are.
//! - Every error is `{"error": {"code", "message"}}` with a 4xx status (JSON-RPC errors are
//!   JSON-RPC error objects); 5xx only for the server's own failures, whose details are logged
//!   and never sent.
//! - No input panics the server.

mod access;
mod auth;
mod caching;
mod cursor;
mod directory;
mod error;
pub mod export;
mod extract;
mod intake;
mod markup;
mod mcp;
mod metrics;
mod openapi;
mod progress;
mod ratelimit;
mod router;
mod routes;
mod rpc;
mod state;
#[cfg(test)]
mod testing;
mod web;
pub mod wire;

use std::future::Future;

use axum::Router;
use tokio::net::TcpListener;

pub use auth::{RELOAD_CHECK, Tokens};
pub use directory::health_of;
pub use error::ApiError;
pub use intake::budget::BudgetConfig;
pub use intake::{KEY_CHECK_WAIT, KeyCheck, Prober};

pub use metrics::{serve_worker_metrics, worker_metrics};
pub use progress::CrawlProgress;
pub use ratelimit::{RATELIMIT, RATELIMIT_POLICY, RateLimit, TrustedProxy};
pub use state::{
    AppState, DEFAULT_CACHE_MAX_AGE, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_IN_FLIGHT, DEFAULT_NAME,
    DEFAULT_REQUEST_TIMEOUT, ServeConfig,
};

/// Returns the server's router: every endpoint, with tracing, metrics, CORS on reads,
/// caching headers, the request timeout and the body limit.
pub fn router(state: AppState) -> Router {
    router::router(state)
}

/// Answers a search over `index` alone exactly as `GET /v1/search` answers the same query
/// parameters for `caller`: the parameters are checked alike (a bad one is the same error)
/// and the same access policy applies; [`wire::SearchBody`] makes the same body of the
/// results (`skillscout search --json`).
pub fn search(
    index: &indexer::SearchIndex,
    parameters: Vec<(String, String)>,
    caller: indexer::Caller,
) -> Result<indexer::SearchResults, ApiError> {
    let request = extract::Params::from_pairs(parameters).search_request(caller)?;
    directory::visible_search(index, &access::Policy::default(), &request)
}

/// Returns the exact filters that the query parameters `parameters` name, checked as every
/// endpoint checks them (`skillscout export`'s flags).
pub fn filters(parameters: Vec<(String, String)>) -> Result<indexer::Filters, ApiError> {
    extract::Params::from_pairs(parameters).filters()
}

/// Serves the directory on `listener` until `shutdown` completes, then stops accepting
/// connections and lets the requests in flight finish.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    // The peer's address: each caller's key in the rate limit and the publishers' budgets.
    let app = router(state).into_make_service_with_connect_info::<std::net::SocketAddr>();
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
}
