//! `GET /healthz` and `GET /metrics`.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderValue;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::error::ApiError;
use crate::metrics::Gauges;
use crate::state::AppState;

const NO_STORE: HeaderValue = HeaderValue::from_static("no-store");

/// `GET /healthz`: 200 while the server answers and its index can be read; `status` is
/// `degraded` (still 200: the index is served, as of its last sync) while a shared store it
/// follows cannot be read, with since when and why.
///
/// The index's commit point is read in place, not on the blocking pool: it is one small
/// metadata file in the page cache, and under overload the pool is busy with the searches
/// that are still admitted, so health answered from there waited behind them (p50 0.2 s at
/// 1,000 connections, docs/BENCHMARKS.md).
pub(crate) async fn healthz(State(state): State<AppState>) -> Result<Response, ApiError> {
    let seq = state.directory().index_seq()?;
    let mut body: Value = json!({
        "status": "ok",
        "version": env!("CARGO_PKG_VERSION"),
        "index_seq": seq,
    });
    // A replica following a shared store: how many changes its index is behind, as of the
    // store's change number read after its latest sync.
    if let Some(store_seq) = state.progress().store_seq() {
        body["store_seq"] = json!(store_seq);
        body["sync_lag"] = json!(store_seq.saturating_sub(seq));
    }
    if let Some((since, error)) = state.progress().store_down() {
        body["status"] = json!("degraded");
        body["store"] = json!({
            "status": "unavailable",
            "since": since.format(&time::format_description::well_known::Rfc3339).ok(),
            "error": error,
        });
    }
    Ok(([(CACHE_CONTROL, NO_STORE)], Json(body)).into_response())
}

/// `GET /metrics`: Prometheus text.
pub(crate) async fn metrics(State(state): State<AppState>) -> Result<Response, ApiError> {
    let gauges = state
        .directory()
        .ask(|directory| {
            let (crawl, crawl_running) = directory.progress().counters();
            Ok(Gauges {
                public_records: directory.public_records()?,
                index_seq: directory.index_seq()?,
                store_seq: directory.progress().store_seq(),
                store_up: directory.progress().store_down().is_none(),
                crawl,
                crawl_running,
            })
        })
        .await?;
    let text = state.metrics().render(&gauges);
    Ok((
        [
            (
                CONTENT_TYPE,
                HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
            ),
            (CACHE_CONTROL, NO_STORE),
        ],
        text,
    )
        .into_response())
}
