//! `GET /v1/search`: the index's answer, as the access policy lets the caller see it
//! (DESIGN.md §6).

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
        .blocking(move |state| visible_results(state, &request))
        .await
}

/// Searches as the request's caller, keeping only the hits the access policy lets the caller
/// see (blocking). The index applies the same rule inside the query, so that totals and facet
/// counts leave out what the caller may not see.
pub(crate) fn visible_results(
    state: &AppState,
    request: &SearchRequest,
) -> Result<SearchResults, ApiError> {
    let mut results = state.index().search(request)?;
    let found = results.hits.len();
    results
        .hits
        .retain(|hit| state.may_see(request.caller, hit.access));
    if results.hits.len() != found {
        tracing::error!(
            refused = found - results.hits.len(),
            "the index returned hits the access policy refuses"
        );
    }
    Ok(results)
}
