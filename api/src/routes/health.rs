//! `GET /healthz` and `GET /metrics`.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderValue;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

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
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "meta",
    responses(
        (status = 200, description = "The server answers and its index can be read", body = HealthBody),
        (status = 503, description = "The index cannot be read, or the server is overloaded", body = crate::error::ErrorBody)
    )
)]
pub(crate) async fn healthz(State(state): State<AppState>) -> Result<Response, ApiError> {
    let seq = state.directory().index_seq()?;
    // A replica following a shared store: how many changes its index is behind, as of the
    // store's change number read after its latest sync.
    let store_seq = state.progress().store_seq();
    let store = state
        .progress()
        .store_down()
        .map(|(since, error)| StoreDown {
            status: "unavailable",
            since: since
                .format(&time::format_description::well_known::Rfc3339)
                .ok(),
            error,
        });
    let body = HealthBody {
        status: if store.is_some() { "degraded" } else { "ok" },
        version: env!("CARGO_PKG_VERSION"),
        index_seq: seq,
        store_seq,
        sync_lag: store_seq.map(|store_seq| store_seq.saturating_sub(seq)),
        store,
    };
    Ok(([(CACHE_CONTROL, NO_STORE)], Json(body)).into_response())
}

/// The `GET /healthz` body.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct HealthBody {
    /// `ok`, or `degraded` while a shared store this replica follows cannot be read.
    #[schema(schema_with = health_status)]
    status: &'static str,
    /// The server's version.
    version: &'static str,
    /// The search index's change number.
    index_seq: u64,
    /// A replica's last-read change number of the shared store.
    #[serde(skip_serializing_if = "Option::is_none")]
    store_seq: Option<u64>,
    /// How many changes the index is behind the shared store.
    #[serde(skip_serializing_if = "Option::is_none")]
    sync_lag: Option<u64>,
    /// Why the shared store cannot be read, while it cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    store: Option<StoreDown>,
}

/// A shared store that cannot be read.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct StoreDown {
    /// Always `unavailable`.
    status: &'static str,
    /// Since when (RFC 3339).
    since: Option<String>,
    /// Why.
    error: String,
}

fn health_status() -> utoipa::openapi::schema::Object {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some(["ok", "degraded"]))
        .build()
}

/// `GET /metrics`: Prometheus text.
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "meta",
    responses((status = 200, description = "Prometheus text exposition", content_type = "text/plain"))
)]
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
