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
