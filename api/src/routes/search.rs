//! `GET /v1/search`: the read model's visible results (docs/api.md).

use axum::Json;
use axum::extract::State;
use axum::http::header::ETAG;
use axum::response::{IntoResponse, Response};

use crate::auth::Auth;
use crate::caching::etag_of;
use crate::error::ApiError;
use crate::extract::Params;
use crate::state::AppState;
use crate::wire::SearchBody;

/// `GET /v1/search?q=&type=&access=&domain=&format=&tag=&license=&verdict=&risk=&limit=20&offset=0`.
pub(crate) async fn search(
    State(state): State<AppState>,
    Auth(caller): Auth,
    params: Params,
) -> Result<Response, ApiError> {
    let request = params.search_request(caller)?;
    let results = state
        .directory()
        .ask(move |directory| directory.search(&request))
        .await?;
    let mut body = SearchBody::from(results);
    // The entity tag leaves out `took_ms`, so the same results revalidate as unchanged.
    let took_ms = std::mem::take(&mut body.took_ms);
    let etag = serde_json::to_vec(&body)
        .map(|bytes| etag_of(&bytes))
        .map_err(|error| ApiError::internal(&error))?;
    body.took_ms = took_ms;
    Ok(([(ETAG, etag)], Json(body)).into_response())
}
