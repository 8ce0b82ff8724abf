//! `GET /v1/skills/{domain}/{name}` (the record) and `…/files/{*path}` (raw file bytes).

use axum::Json;
use axum::extract::State;
use axum::http::HeaderValue;
use axum::http::header::{CONTENT_SECURITY_POLICY, CONTENT_TYPE, ETAG, X_CONTENT_TYPE_OPTIONS};
use axum::response::{IntoResponse, Response};

use crate::auth::Auth;
use crate::directory::files::{self, FileError};
use crate::directory::urls::parse_id;
use crate::error::ApiError;
use crate::extract::ApiPath;
use crate::state::AppState;
use crate::wire::RecordView;

/// `GET /v1/skills/{domain}/{name}`: the canonical record (docs/record.md).
#[utoipa::path(
    get,
    path = "/v1/skills/{domain}/{name}",
    tag = "skills",
    params(
        ("domain" = String, Path, description = "The publisher's domain"),
        ("name" = String, Path, description = "The skill's name"),
    ),
    responses(
        (status = 200, description = "The record", body = crate::wire::RecordView),
        (status = 404, description = "No such skill (or one the caller may not see)", body = crate::error::ErrorBody),
        (status = 400, description = "A parameter is invalid", body = crate::error::ErrorBody),
        (status = 401, description = "The bearer token is wrong", body = crate::error::ErrorBody),
        (status = 503, description = "Overloaded: try again after `Retry-After`", body = crate::error::ErrorBody)
    ),
    security((), ("bearer" = []))
)]
pub(crate) async fn record(
    State(state): State<AppState>,
    Auth(caller): Auth,
    ApiPath((domain, name)): ApiPath<(String, String)>,
) -> Result<Json<RecordView>, ApiError> {
    let id = parse_id(&domain, &name)?;
    let view = state
        .directory()
        .ask(move |directory| directory.record_json(caller, &id))
        .await?;
    Ok(Json(view))
}

/// `GET /v1/skills/{domain}/{name}/files/{*path}`: the bytes of one of the record's files.
#[utoipa::path(
    get,
    path = "/v1/skills/{domain}/{name}/files/{path}",
    tag = "skills",
    params(
        ("domain" = String, Path, description = "The publisher's domain"),
        ("name" = String, Path, description = "The skill's name"),
        ("path" = String, Path, description = "The file's path in the skill, `/`-separated"),
    ),
    responses(
        (status = 200, description = "The file's verified bytes, with a media type from its name (`application/octet-stream` when unknown)", content(
            (Vec<u8> = "*/*"),
        )),
        (status = 404, description = "No such file, or its bytes are not held", body = crate::error::ErrorBody),
        (status = 400, description = "A parameter is invalid", body = crate::error::ErrorBody),
        (status = 401, description = "The bearer token is wrong", body = crate::error::ErrorBody),
        (status = 503, description = "Overloaded: try again after `Retry-After`", body = crate::error::ErrorBody)
    ),
    security((), ("bearer" = []))
)]
pub(crate) async fn file(
    State(state): State<AppState>,
    Auth(caller): Auth,
    ApiPath((domain, name, path)): ApiPath<(String, String, String)>,
) -> Result<Response, ApiError> {
    files::check_path(&path).map_err(file_error)?;
    let id = parse_id(&domain, &name)?;
    let directory = state.directory();
    let skill = directory.visible_record(caller, id).await?;
    let file = directory
        .ask(move |directory| directory.file(&skill, &path).map_err(file_error))
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
fn file_error(error: FileError) -> ApiError {
    match error {
        FileError::InvalidPath(message) => ApiError::InvalidPath(message),
        FileError::NotFound(message) | FileError::Unavailable(message) => {
            ApiError::NotFound(message)
        }
        FileError::Internal(detail) => ApiError::Internal(detail),
    }
}
