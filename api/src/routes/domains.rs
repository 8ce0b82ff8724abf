//! `GET /v1/domains` and `GET /v1/domains/{domain}`: crawl status and diagnostics per domain,
//! its health report, and the progress of the background crawl.

use axum::Json;
use axum::extract::State;
use formats::Domain;
use indexer::MAX_LIMIT;

use crate::auth::Auth;
use crate::cursor;
use crate::error::ApiError;
use crate::extract::{ApiPath, Params};
use crate::state::AppState;
use crate::wire::{DomainDetail, DomainList};

/// `GET /v1/domains?limit=&cursor=`.
#[utoipa::path(
    get,
    path = "/v1/domains",
    tag = "publishers",
    params(
        ("limit" = Option<u32>, Query, description = "Domains per page (1 to 100)"),
        ("cursor" = Option<String>, Query, description = "The `next_cursor` of the previous page"),
    ),
    responses(
        (status = 200, description = "A page of publishers, and the background crawl", body = crate::wire::DomainList),
        (status = 400, description = "A parameter is invalid", body = crate::error::ErrorBody),
        (status = 401, description = "The bearer token is wrong", body = crate::error::ErrorBody),
        (status = 503, description = "Overloaded: try again after `Retry-After`", body = crate::error::ErrorBody)
    ),
    security((), ("bearer" = []))
)]
pub(crate) async fn list(
    State(state): State<AppState>,
    Auth(caller): Auth,
    params: Params,
) -> Result<Json<DomainList>, ApiError> {
    let limit = params.limit(MAX_LIMIT)?;
    let after = match params.one("cursor")? {
        Some(raw) => Some(cursor::decode("domains", raw)?),
        None => None,
    };
    let page = state
        .directory()
        .ask(move |directory| directory.domains(caller, after.as_deref(), limit))
        .await?;
    Ok(Json(page))
}

/// `GET /v1/domains/{domain}`.
#[utoipa::path(
    get,
    path = "/v1/domains/{domain}",
    tag = "publishers",
    params(("domain" = String, Path, description = "The publisher's domain")),
    responses(
        (status = 200, description = "The publisher's crawl status, frontier row and health report", body = crate::wire::DomainDetail),
        (status = 404, description = "The domain was never crawled", body = crate::error::ErrorBody),
        (status = 400, description = "A parameter is invalid", body = crate::error::ErrorBody),
        (status = 401, description = "The bearer token is wrong", body = crate::error::ErrorBody),
        (status = 503, description = "Overloaded: try again after `Retry-After`", body = crate::error::ErrorBody)
    ),
    security((), ("bearer" = []))
)]
pub(crate) async fn one(
    State(state): State<AppState>,
    Auth(caller): Auth,
    ApiPath(domain): ApiPath<String>,
) -> Result<Json<DomainDetail>, ApiError> {
    let domain: Domain = domain
        .parse()
        .map_err(|_| ApiError::InvalidPath(format!("invalid domain {domain:?}")))?;
    let answer = state
        .directory()
        .ask(move |directory| directory.domain(caller, &domain))
        .await?;
    Ok(Json(answer.detail))
}
