//! `GET /v1/search`: the index's answer (DESIGN.md §6).

use axum::Json;
use axum::extract::State;
use axum::http::header::ETAG;
use axum::response::{IntoResponse, Response};
use indexer::{SearchRequest, SearchResults};

use crate::auth::Auth;
use crate::caching::etag_of;
use crate::error::ApiError;
use crate::extract::Params;
use crate::state::AppState;
use crate::wire::SearchBody;

/// `GET /v1/search?q=&type=&access=&domain=&format=&tag=&limit=20&offset=0`.
pub(super) async fn search(
    State(state): State<AppState>,
    Auth(caller): Auth,
    params: Params,
) -> Result<Response, ApiError> {
    let request = params.search_request(caller)?;
    let mut body = SearchBody::from(run(&state, request).await?);
    // The entity tag leaves out `took_ms`, so the same results revalidate as unchanged.
    let took_ms = std::mem::take(&mut body.took_ms);
    let etag = serde_json::to_vec(&body)
        .map(|bytes| etag_of(&bytes))
        .map_err(|error| ApiError::internal(&error))?;
    body.took_ms = took_ms;
    Ok(([(ETAG, etag)], Json(body)).into_response())
}

/// Runs a search on the blocking pool.
pub(crate) async fn run(
    state: &AppState,
    request: SearchRequest,
) -> Result<SearchResults, ApiError> {
    state
        .blocking(move |state| Ok(state.index().search(&request)?))
        .await
}
