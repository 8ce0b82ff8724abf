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
