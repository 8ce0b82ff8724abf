//! `GET /v1/changes?since=&cursor=&limit=`: the change feed (the model is the MCP registry's
//! `updated_since` with deleted entries). Follow `next_cursor` until it is `null`; to poll
//! later, pass `since` = the `at` of the last change applied (changes at exactly that instant
//! come again, and applying one twice is harmless). A mirror of the anonymous view keeps a
//! record that later became private; a mirror that must follow such changes authenticates.

use axum::Json;
use axum::extract::State;
use indexer::MAX_LIMIT;

use crate::auth::Auth;
use crate::directory::ChangesFrom;
use crate::error::ApiError;
use crate::extract::Params;
use crate::state::AppState;
use crate::wire::ChangesPage;

/// `GET /v1/changes`.
#[utoipa::path(
    get,
    path = "/v1/changes",
    tag = "changes",
    params(
        ("since" = Option<String>, Query, description = "RFC 3339 time: changes at or after it"),
        ("cursor" = Option<String>, Query, description = "The `next_cursor` of the previous page"),
        ("limit" = Option<u32>, Query, description = "Changes per page (1 to 100)"),
    ),
    responses(
        (status = 200, description = "Changes, oldest first", body = crate::wire::ChangesPage),
        (status = 400, description = "A parameter is invalid", body = crate::error::ErrorBody),
        (status = 401, description = "The bearer token is wrong", body = crate::error::ErrorBody),
        (status = 503, description = "Overloaded: try again after `Retry-After`", body = crate::error::ErrorBody)
    ),
    security((), ("bearer" = []))
)]
pub(crate) async fn changes(
    State(state): State<AppState>,
    Auth(caller): Auth,
    params: Params,
) -> Result<Json<ChangesPage>, ApiError> {
    let limit = params.limit(MAX_LIMIT)?;
    let from = match (params.one("cursor")?, params.since()?) {
        (Some(cursor), _) => ChangesFrom::Cursor(cursor.to_owned()),
        (None, Some(since)) => ChangesFrom::Since(since),
        (None, None) => ChangesFrom::Start,
    };
    let page = state
        .directory()
        .ask(move |directory| directory.changes(caller, from, limit))
        .await?;
    Ok(Json(page))
}
