//! `/admin/v1/…`: the operator's API over the frontier (through `intake`), under tokens of its own
//! (`serve --admin-token-file`), so that `seeds`, `delist` and `undelist` work while this
//! server holds the embedded store. Off (404) without admin tokens; a missing or wrong token
//! is a 401.

use axum::Json;
use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use formats::seeds::SeedTarget;
use serde::{Deserialize, Serialize};
use store::{
    AddMode, AddStats, AddedAs, Delisted, FrontierEntry, FrontierState, ListFilter, NewTarget,
    RemoveStats,
};

use crate::error::ApiError;
use crate::state::AppState;
use indexer::Caller;

/// The most targets one `POST /admin/v1/seeds` takes.
pub(crate) const MAX_ADMIN_TARGETS: usize = 10_000;
/// The most rows one page of `GET /admin/v1/seeds` returns.
const MAX_PAGE: usize = 10_000;
/// The longest delisting reason kept.
const MAX_REASON_CHARS: usize = 2000;

/// Checks the caller's admin token.
fn authorize(state: &AppState, headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(tokens) = state.admin_tokens() else {
        return Err(ApiError::NotFound(
            "the admin API is off (serve --admin-token-file turns it on)".to_owned(),
        ));
    };
    match tokens.caller(headers.get(AUTHORIZATION).map(|value| value.as_bytes()))? {
        Caller::Authenticated => Ok(()),
        Caller::Anonymous => Err(ApiError::Unauthorized),
    }
}

/// One target of `POST /admin/v1/seeds`.
#[derive(Debug, Deserialize)]
pub(crate) struct AddTarget {
    target: String,
    #[serde(default)]
    added_as: Option<String>,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    rank: Option<u64>,
}

/// The body of `POST /admin/v1/seeds`.
#[derive(Debug, Deserialize)]
pub(crate) struct AddBody {
    targets: Vec<AddTarget>,
    #[serde(default)]
    mode: Option<String>,
}

/// The answer of `POST /admin/v1/seeds`.
#[derive(Debug, Serialize)]
pub(crate) struct AddAnswer {
    #[serde(flatten)]
    stats: AddStats,
}

/// `POST /admin/v1/seeds`: adds targets to the frontier.
pub(crate) async fn add(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Json<AddBody>, axum::extract::rejection::JsonRejection>,
) -> Result<Json<AddAnswer>, ApiError> {
    authorize(&state, &headers)?;
    let Json(body) = body.map_err(|rejection| ApiError::InvalidBody(rejection.body_text()))?;
    if body.targets.len() > MAX_ADMIN_TARGETS {
        return Err(ApiError::InvalidBody(format!(
            "at most {MAX_ADMIN_TARGETS} targets per request, not {}",
            body.targets.len()
        )));
    }
    let mode = match body.mode.as_deref() {
        None | Some("keep") => AddMode::Keep,
        Some("crawl_now") => AddMode::CrawlNow,
        Some(other) => {
            return Err(ApiError::InvalidBody(format!(
                "unknown mode {other:?}: expected keep or crawl_now"
            )));
        }
    };
    let mut targets = Vec::with_capacity(body.targets.len());
    for (index, item) in body.targets.into_iter().enumerate() {
        let target = SeedTarget::parse(&item.target)
            .map_err(|message| ApiError::InvalidBody(format!("target {index}: {message}")))?;
        let added_as = match item.added_as.as_deref() {
            None => AddedAs::Seed,
            Some(name) => AddedAs::ALL
                .into_iter()
                .find(|value| value.as_str() == name)
                .ok_or_else(|| {
                    ApiError::InvalidBody(format!(
                        "target {index}: unknown added_as {name:?}: expected seed, submitted, \
                         discovered or imported"
                    ))
                })?,
        };
        targets.push(NewTarget {
            domain: target.domain().to_string(),
            target: target.to_string(),
            added_as,
            source: item.source,
            rank: item.rank,
        });
    }
    let stats = state
        .intake()
        .add(targets, mode)
        .await
        .map_err(|error| ApiError::internal(&error))?;
    Ok(Json(AddAnswer { stats }))
}

/// The query of `GET /admin/v1/seeds`.
#[derive(Debug, Deserialize)]
pub(crate) struct ListQuery {
    #[serde(default)]
    after: Option<String>,
    #[serde(default)]
    limit: Option<usize>,
    #[serde(default)]
    state: Option<String>,
    #[serde(default)]
    due: Option<bool>,
}

/// The answer of `GET /admin/v1/seeds`.
#[derive(Debug, Serialize)]
pub(crate) struct ListAnswer {
    domains: Vec<FrontierEntry>,
}

/// `GET /admin/v1/seeds`: a page of the frontier, in domain order.
pub(crate) async fn list(
    State(state): State<AppState>,
    headers: HeaderMap,
    query: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<ListAnswer>, ApiError> {
    authorize(&state, &headers)?;
    let Query(query) =
        query.map_err(|rejection| ApiError::parameter("query", rejection.body_text()))?;
    let limit = query.limit.unwrap_or(1000);
    if limit == 0 || limit > MAX_PAGE {
        return Err(ApiError::parameter(
            "limit",
            format!("limit must be between 1 and {MAX_PAGE}"),
        ));
    }
    let filter_state = match query.state.as_deref() {
        None => None,
        Some(raw) => Some(
            raw.parse::<FrontierState>()
                .map_err(|message| ApiError::parameter("state", message))?,
        ),
    };
    let domains = state
        .intake()
        .list(
            query.after,
            limit,
            ListFilter {
                state: filter_state,
                due: query.due.unwrap_or(false),
            },
        )
        .await
        .map_err(|error| ApiError::internal(&error))?;
    Ok(Json(ListAnswer { domains }))
}

/// The body of `POST /admin/v1/seeds/remove`.
#[derive(Debug, Deserialize)]
pub(crate) struct RemoveBody {
    domains: Vec<String>,
}

/// `POST /admin/v1/seeds/remove`: removes domains (delisted ones stay).
pub(crate) async fn remove(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Json<RemoveBody>, axum::extract::rejection::JsonRejection>,
) -> Result<Json<RemoveStats>, ApiError> {
    authorize(&state, &headers)?;
    let Json(body) = body.map_err(|rejection| ApiError::InvalidBody(rejection.body_text()))?;
    if body.domains.len() > MAX_ADMIN_TARGETS {
        return Err(ApiError::InvalidBody(format!(
            "at most {MAX_ADMIN_TARGETS} domains per request"
        )));
    }
    let mut domains = Vec::with_capacity(body.domains.len());
    for raw in &body.domains {
        domains.push(domain_key(raw)?);
    }
    let stats = state
        .intake()
        .remove(domains)
        .await
        .map_err(|error| ApiError::internal(&error))?;
    Ok(Json(stats))
}

/// The body of `POST /admin/v1/delist`.
#[derive(Debug, Deserialize)]
pub(crate) struct DelistBody {
    domain: String,
    reason: String,
}

/// `POST /admin/v1/delist`: delists a domain, removing its records everywhere.
pub(crate) async fn delist(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Json<DelistBody>, axum::extract::rejection::JsonRejection>,
) -> Result<Json<Delisted>, ApiError> {
    authorize(&state, &headers)?;
    let Json(body) = body.map_err(|rejection| ApiError::InvalidBody(rejection.body_text()))?;
    let domain = domain_key(&body.domain)?;
    let reason = body.reason.trim();
    if reason.is_empty() {
        return Err(ApiError::InvalidBody(
            "reason: say why the domain is delisted".to_owned(),
        ));
    }
    let reason: String = reason.chars().take(MAX_REASON_CHARS).collect();
    let delisted = state
        .intake()
        .delist(&domain, &reason)
        .await
        .map_err(|error| ApiError::internal(&error))?;
    Ok(Json(delisted))
}

/// The body of `POST /admin/v1/undelist`.
#[derive(Debug, Deserialize)]
pub(crate) struct UndelistBody {
    domain: String,
}

/// The answer of `POST /admin/v1/undelist`.
#[derive(Debug, Serialize)]
pub(crate) struct UndelistAnswer {
    undelisted: bool,
}

/// `POST /admin/v1/undelist`: takes a domain off the deny list, due at once.
pub(crate) async fn undelist(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Json<UndelistBody>, axum::extract::rejection::JsonRejection>,
) -> Result<Json<UndelistAnswer>, ApiError> {
    authorize(&state, &headers)?;
    let Json(body) = body.map_err(|rejection| ApiError::InvalidBody(rejection.body_text()))?;
    let domain = domain_key(&body.domain)?;
    let undelisted = state
        .intake()
        .undelist(&domain)
        .await
        .map_err(|error| ApiError::internal(&error))?;
    Ok(Json(UndelistAnswer { undelisted }))
}

/// Reads a domain (or a target naming one) as its frontier key.
fn domain_key(raw: &str) -> Result<String, ApiError> {
    SeedTarget::parse(raw)
        .map(|target| target.domain().to_string())
        .map_err(ApiError::InvalidBody)
}

/// `GET /admin/v1/backup`: a backup of the crawl store (a consistent snapshot) and the blobs,
/// streamed as a `.tar.gz` (`skillscout backup` while this server holds the data directory).
/// A failure after the first byte ends the body early; the archive's manifest comes last, so
/// a cut archive does not restore.
pub(crate) async fn backup(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<axum::response::Response, ApiError> {
    use axum::http::HeaderValue;
    use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
    use axum::response::IntoResponse;
    use std::io::Write as _;

    use crate::export::http::{CHANNEL_CHUNKS, ChannelWriter, ChunkStream};

    authorize(&state, &headers)?;
    let (sender, receiver) = tokio::sync::mpsc::channel(CHANNEL_CHUNKS);
    let directory = state.directory().clone();
    tokio::task::spawn_blocking(move || {
        let mut body = ChannelWriter::new(sender);
        let written = directory
            .backup(&std::env::temp_dir(), &mut body)
            .map_err(|error| error.to_string())
            .and_then(|manifest| {
                body.flush().map_err(|error| error.to_string())?;
                Ok(manifest)
            });
        match written {
            Ok(manifest) => tracing::info!(
                records = manifest.records,
                blobs = manifest.blobs,
                "backup streamed"
            ),
            Err(error) => {
                tracing::warn!(%error, "the backup stopped before its end");
                body.fail(std::io::Error::other("the backup failed"));
            }
        }
    });
    Ok((
        [
            (CONTENT_TYPE, HeaderValue::from_static("application/gzip")),
            (CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        axum::body::Body::from_stream(ChunkStream(receiver)),
    )
        .into_response())
}
