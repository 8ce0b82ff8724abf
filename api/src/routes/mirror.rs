//! `GET /mirror/{domain}/.well-known/agent-skills/index.json` and the artifacts it lists: a
//! publisher's verified skills re-published by the directory as an agent-skills v0.2 index,
//! from the blob store (docs/api.md). An agent client pointed at
//! `http://directory/mirror/example.com` installs what the directory saw, digest-checked,
//! even when the origin is down.
//!
//! The index and the artifacts are made by the read model's well-known writer
//! (`directory::well_known`), so a mirror and a `well-known` export of the same skills are the
//! same bytes. The skills listed are those a search lists by default (verdict `valid` or
//! `lenient`, risk not `critical`) that the caller may see.

use axum::extract::State;
use axum::http::HeaderValue;
use axum::http::header::{CONTENT_TYPE, ETAG, X_CONTENT_TYPE_OPTIONS};
use axum::response::{IntoResponse, Response};
use formats::Domain;

use crate::auth::Auth;
use crate::caching::etag_of;
use crate::error::ApiError;
use crate::extract::ApiPath;
use crate::state::AppState;

/// `GET /mirror/{domain}/.well-known/agent-skills/{*path}`: the index, or one artifact.
#[utoipa::path(
    get,
    path = "/mirror/{domain}/.well-known/agent-skills/{path}",
    tag = "mirror",
    params(
        ("domain" = String, Path, description = "The publisher's domain"),
        ("path" = String, Path, description = "`index.json`, or an artifact the index lists"),
    ),
    responses(
        (status = 200, description = "The agent-skills discovery v0.2 index of the publisher's whole, verified skills (`index.json`), or one artifact it lists", content(
            (Object = "application/json"),
            (Vec<u8> = "application/gzip"),
            (Vec<u8> = "application/zip"),
            (String = "text/markdown"),
        )),
        (status = 404, description = "Nothing to mirror, or no such artifact (a skill whose files the directory does not all hold is not mirrored)", body = crate::error::ErrorBody),
        (status = 400, description = "A parameter is invalid", body = crate::error::ErrorBody),
        (status = 401, description = "The bearer token is wrong", body = crate::error::ErrorBody),
        (status = 503, description = "Overloaded: try again after `Retry-After`", body = crate::error::ErrorBody)
    ),
    security((), ("bearer" = []))
)]
pub(crate) async fn mirror(
    State(state): State<AppState>,
    Auth(caller): Auth,
    ApiPath((domain, path)): ApiPath<(String, String)>,
) -> Result<Response, ApiError> {
    let domain: Domain = domain
        .parse()
        .map_err(|_| ApiError::InvalidPath(format!("invalid domain {domain:?}")))?;
    let directory = state.directory();
    if path == "index.json" {
        let json = directory
            .ask(move |directory| directory.mirror_index(caller, &domain))
            .await?;
        return Ok((
            [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
            json,
        )
            .into_response());
    }
    let published = directory
        .ask(move |directory| directory.mirror_file(caller, &domain, &path))
        .await?;
    let content_type = if published.path.ends_with(".zip") {
        "application/zip"
    } else if published.path.ends_with(".tar.gz") {
        "application/gzip"
    } else {
        "text/markdown; charset=utf-8"
    };
    let etag = HeaderValue::from_str(&format!("\"{}\"", published.entry_digest_hex()))
        .unwrap_or_else(|_| etag_of(&published.bytes));
    Ok((
        [
            (CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (ETAG, etag),
            (X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
        ],
        published.bytes,
    )
        .into_response())
}
