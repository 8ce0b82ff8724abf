//! `GET /v1/skills/{domain}/{name}` (the record) and `…/files/{*path}` (raw file bytes).

use axum::Json;
use axum::extract::State;
use axum::http::HeaderValue;
use axum::http::header::{CONTENT_SECURITY_POLICY, CONTENT_TYPE, ETAG, X_CONTENT_TYPE_OPTIONS};
use axum::response::{IntoResponse, Response};

use crate::auth::Auth;
use crate::error::ApiError;
use crate::extract::ApiPath;
use crate::files::{self, FileError};
use crate::state::{AppState, parse_id};
use crate::wire::RecordView;

/// `GET /v1/skills/{domain}/{name}`: the canonical record (DESIGN.md §2).
pub(super) async fn record(
    State(state): State<AppState>,
    Auth(caller): Auth,
    ApiPath((domain, name)): ApiPath<(String, String)>,
) -> Result<Json<RecordView>, ApiError> {
    let id = parse_id(&domain, &name)?;
    Ok(Json(RecordView::from(
        state.visible_record(caller, id).await?,
    )))
}

/// `GET /v1/skills/{domain}/{name}/files/{*path}`: the bytes of one of the record's files.
pub(super) async fn file(
    State(state): State<AppState>,
    Auth(caller): Auth,
    ApiPath((domain, name, path)): ApiPath<(String, String, String)>,
) -> Result<Response, ApiError> {
    files::check_path(&path).map_err(file_error)?;
    let id = parse_id(&domain, &name)?;
    let skill = state.visible_record(caller, id).await?;
    let file = state
        .blocking(move |state| files::read(state, &skill, &path).map_err(file_error))
        .await?;
    let etag = crate::caching::etag_of(&file.bytes);
    Ok((
        [
            (CONTENT_TYPE, HeaderValue::from_static(file.content_type)),
            (ETAG, etag),
            (X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
            (
                CONTENT_SECURITY_POLICY,
                HeaderValue::from_static("default-src 'none'; sandbox"),
            ),
        ],
        file.bytes,
    )
        .into_response())
}

/// Maps a file error to the API's error.
pub(crate) fn file_error(error: FileError) -> ApiError {
    match error {
        FileError::InvalidPath(message) => ApiError::InvalidPath(message),
        FileError::NotFound(message) | FileError::Unavailable(message) => {
            ApiError::NotFound(message)
        }
        FileError::Internal(detail) => ApiError::Internal(detail),
    }
}
