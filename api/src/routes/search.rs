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
#[utoipa::path(
    get,
    path = "/v1/search",
    tag = "search",
    params(
        ("q" = Option<String>, Query, description = "Words and \"quoted phrases\"; empty lists everything"),
        ("type" = Option<String>, Query, description = "Capability types (repeat or comma-separate for OR)"),
        ("access" = Option<String>, Query, description = "`public`, `restricted` or `private`"),
        ("domain" = Option<String>, Query, description = "Publishers' domains"),
        ("format" = Option<String>, Query, description = "`agent-skills`, `skill-sharing` or `mcp-skills`"),
        ("tag" = Option<String>, Query, description = "Tags"),
        ("license" = Option<String>, Query, description = "Licences"),
        ("verdict" = Option<String>, Query, description = "`valid`, `lenient`, `invalid` or `any`; default: valid and lenient"),
        ("risk" = Option<String>, Query, description = "`none`, `low`, `medium`, `high`, `critical` or `any`; default: all but critical"),
        ("limit" = Option<u32>, Query, description = "Hits per page (1 to 100, default 20)"),
        ("offset" = Option<u32>, Query, description = "Hits to skip"),
    ),
    responses(
        (status = 200, description = "The hits and facet counts", body = crate::wire::SearchBody),
        (status = 400, description = "A parameter is invalid", body = crate::error::ErrorBody),
        (status = 401, description = "The bearer token is wrong", body = crate::error::ErrorBody),
        (status = 503, description = "Overloaded: try again after `Retry-After`", body = crate::error::ErrorBody)
    ),
    security((), ("bearer" = []))
)]
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
