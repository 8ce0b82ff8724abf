//! The skillscout directory server (axum): the JSON API of DESIGN.md §6, access control, the
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
//! - `state`: [`AppState`] (index reader, crawl store, blobs, tokens, progress) and
//!   [`ServeConfig`].
//! - `routes`: the route table and one handler module per resource: `search`, `skills`
//!   (records, files), `domains`, `changes`, `sharing` (the skill-sharing index, registry
//!   discovery and descriptors), `rpc` (JSON-RPC 2.0), `export` (`/v1/export`, streamed),
//!   `mirror` (`/mirror/{domain}/…`, a publisher re-published as a v0.2 index), `health`
//!   (`/healthz`, `/metrics`).
//! - [`export`]: exports in the `skills-dir`, `well-known` and `jsonl` layouts, with their
//!   manifest; used by `skillscout export`, `/v1/export` and the mirror.
//! - `web`: the server-rendered web directory (search, skill pages, publishers' health
//!   reports), maud templates with a `Content-Security-Policy`, and the assets they use.
//! - `mcp`: `POST /mcp`, the directory as an MCP server with the Skills Extension and the
//!   `search_skills` tool.
//! - `files`: a record's files: path rules and bytes from the blob store.
//! - `access`: the access policy, the one rule of who sees which record.
//! - `auth`: bearer [`Tokens`] and the caller extractor.
//! - [`wire`]: the JSON bodies, built from the index's answers, records and crawl status.
//! - `error`: [`ApiError`], the one error type and JSON shape.
//! - `extract`: extractors whose rejections are [`ApiError`]s; query parameters.
//! - `cursor`: opaque, checked pagination cursors.
//! - `caching`: ETag, 304 and Cache-Control; the request timeout.
//! - `metrics`: Prometheus counters and histograms.
//! - `progress`: [`CrawlProgress`], what the background crawl reports.
//!
//! # Invariants
//!
//! - The server never writes the index and never fetches a remote URL: it reads the index,
//!   the crawl store and the blob store, which the crawl fills.
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
mod error;
pub mod export;
mod extract;
mod files;
mod mcp;
mod metrics;
mod progress;
mod routes;
mod state;
#[cfg(test)]
mod testing;
mod web;
pub mod wire;

use std::future::Future;

use axum::Router;
use tokio::net::TcpListener;

pub use auth::{RELOAD_CHECK, Tokens};
pub use error::ApiError;

pub use progress::CrawlProgress;
pub use state::{
    AppState, DEFAULT_CACHE_MAX_AGE, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_IN_FLIGHT, DEFAULT_NAME,
    DEFAULT_REQUEST_TIMEOUT, ServeConfig,
};

/// Returns the server's router: every endpoint, with tracing, metrics, CORS on reads,
/// caching headers, the request timeout and the body limit.
pub fn router(state: AppState) -> Router {
    routes::router(state)
}

/// Serves the directory on `listener` until `shutdown` completes, then stops accepting
/// connections and lets the requests in flight finish.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = router(state);
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
}
