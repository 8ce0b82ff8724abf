//! The publishers' endpoints: `POST /v1/domains/{domain}/recrawl` (anonymous, budgeted) and
//! IndexNow (`GET /indexnow`, `POST /indexnow`, answered as indexnow.org's table says: 200
//! accepted, 202 key validation pending, 400 bad request, 403 key not valid, 422 URLs not of
//! the host or a key not of the protocol's form, 429 too many requests). What they write goes
//! through the intake; what they say is never trusted about content: a ping only makes a
//! domain due, and the crawl reads what there is.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{Extensions, StatusCode};
use axum::response::{IntoResponse, Response};
use formats::Domain;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::error::ApiError;
use crate::extract::{ApiPath, client_address};
use crate::intake::indexnow::read_ping;
use crate::intake::{PingOutcome, Refresh, Submitted};
use crate::state::AppState;

/// What a recrawl request, a submission or a ping made due.
#[derive(Debug, Serialize)]
pub(crate) struct RefreshView {
    domain: String,
    /// `due` (it is crawled as soon as a crawler is free) or `delisted` (nothing is crawled).
    state: &'static str,
    /// When it became due.
    #[serde(
        with = "time::serde::rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    due_at: Option<OffsetDateTime>,
    /// True when the ping added it to the frontier.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    added: bool,
    /// Where its status and health report are read.
    status_url: String,
}

impl RefreshView {
    pub(crate) fn of(state: &AppState, refresh: Refresh) -> RefreshView {
        let (domain, view_state, due_at, added) = match refresh {
            Refresh::Due { domain, at, added } => (domain, "due", Some(at), added),
            Refresh::Delisted(domain) => (domain, "delisted", None, false),
        };
        let status_url = state
            .config()
            .public_url
            .join(&format!("v1/domains/{domain}"))
            .map(|url| url.to_string())
            .unwrap_or_default();
        RefreshView {
            domain,
            state: view_state,
            due_at,
            added,
            status_url,
        }
    }
}

/// Reads a domain named in a path.
pub(crate) fn path_domain(raw: &str) -> Result<Domain, ApiError> {
    raw.parse()
        .map_err(|_| ApiError::InvalidPath(format!("invalid domain {raw:?}")))
}

/// `POST /v1/domains/{domain}/recrawl`: 202 with when the domain became due, 404 for a
/// domain the frontier does not hold, 429 past the domain's or the caller's budget.
pub(crate) async fn recrawl(
    State(state): State<AppState>,
    ApiPath(domain): ApiPath<String>,
    extensions: Extensions,
) -> Result<(StatusCode, Json<RefreshView>), ApiError> {
    let domain = path_domain(&domain)?;
    let refresh = state
        .intake()
        .recrawl(client_address(&extensions), domain.as_str())
        .await?;
    Ok((StatusCode::ACCEPTED, Json(RefreshView::of(&state, refresh))))
}

/// The body of `POST /v1/domains`.
#[derive(Debug, Deserialize)]
pub(crate) struct SubmitBody {
    domain: String,
}

/// What a submission whose report is not there (yet) says.
#[derive(Debug, Serialize)]
struct SubmitPending {
    domain: String,
    /// `probing` (the probe runs on: the report lands at `status_url`) or `delisted`.
    state: &'static str,
    status_url: String,
}

/// `POST /v1/domains` `{"domain"}`: a submission, probed at once. 202 with the domain's
/// status and health report (as `GET /v1/domains/{domain}`: its `state` is `null` when it
/// publishes nothing and was not kept), or, while the probe runs on, where to find it; 400
/// for what is not a domain, 422 for an IP address or `localhost`, 429 past the budgets.
pub(crate) async fn submit(
    State(state): State<AppState>,
    extensions: Extensions,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<Response, ApiError> {
    let body = body?;
    let body: SubmitBody = serde_json::from_slice(&body)
        .map_err(|error| ApiError::InvalidBody(format!("expected {{\"domain\"}}: {error}")))?;
    let submitted = state
        .intake()
        .submit(client_address(&extensions), &body.domain)
        .await?;
    submission_answer(&state, submitted).await
}

/// The answer to a submission.
async fn submission_answer(state: &AppState, submitted: Submitted) -> Result<Response, ApiError> {
    let (domain, view_state) = match submitted {
        Submitted::Probed { domain, .. } => {
            let parsed = path_domain(&domain)?;
            let answer = state
                .directory()
                .ask(move |directory| directory.domain(indexer::Caller::Anonymous, &parsed))
                .await;
            match answer {
                Ok(answer) => {
                    return Ok((StatusCode::ACCEPTED, Json(answer.detail)).into_response());
                }
                // The probe stored nothing (it could not run): said as pending.
                Err(ApiError::NotFound(_)) => (domain, "probing"),
                Err(error) => return Err(error),
            }
        }
        Submitted::Probing(domain) => (domain, "probing"),
        Submitted::Delisted(domain) => (domain, "delisted"),
    };
    let status_url = state
        .config()
        .public_url
        .join(&format!("v1/domains/{domain}"))
        .map(|url| url.to_string())
        .unwrap_or_default();
    Ok((
        StatusCode::ACCEPTED,
        Json(SubmitPending {
            domain,
            state: view_state,
            status_url,
        }),
    )
        .into_response())
}

/// The query of `GET /indexnow`.
#[derive(Debug, Deserialize)]
pub(crate) struct PingQuery {
    url: Option<String>,
    key: Option<String>,
    #[serde(rename = "keyLocation")]
    key_location: Option<String>,
}

/// The body of `POST /indexnow`.
#[derive(Debug, Deserialize)]
pub(crate) struct PingBody {
    host: Option<String>,
    key: Option<String>,
    #[serde(rename = "keyLocation")]
    key_location: Option<String>,
    #[serde(rename = "urlList", default)]
    url_list: Vec<String>,
}

/// The answer to an accepted ping.
#[derive(Debug, Serialize)]
struct PingAnswer {
    /// `accepted` (200) or `pending` (202: the key file is still being read).
    status: &'static str,
    /// The domains the ping made due (none when no URL names a skills path).
    domains: Vec<RefreshView>,
}

/// `GET /indexnow?url=&key=[&keyLocation=]`.
pub(crate) async fn ping_get(
    State(state): State<AppState>,
    extensions: Extensions,
    query: Result<Query<PingQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query.map_err(|rejection| ApiError::InvalidBody(rejection.body_text()))?;
    let url = query
        .url
        .ok_or_else(|| ApiError::InvalidBody("url: missing".to_owned()))?;
    let ping = read_ping(
        None,
        query.key.as_deref(),
        query.key_location.as_deref(),
        &[url],
    )?;
    answer(&state, &extensions, ping).await
}

/// `POST /indexnow` `{"host", "key", "keyLocation"?, "urlList"}`.
pub(crate) async fn ping_post(
    State(state): State<AppState>,
    extensions: Extensions,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<Response, ApiError> {
    let body = body?;
    let body: PingBody = serde_json::from_slice(&body)
        .map_err(|error| ApiError::InvalidBody(format!("not an IndexNow body: {error}")))?;
    let ping = read_ping(
        body.host.as_deref(),
        body.key.as_deref(),
        body.key_location.as_deref(),
        &body.url_list,
    )?;
    answer(&state, &extensions, ping).await
}

async fn answer(
    state: &AppState,
    extensions: &Extensions,
    ping: crate::intake::indexnow::Ping,
) -> Result<Response, ApiError> {
    let outcome = state
        .intake()
        .ping(client_address(extensions), ping)
        .await?;
    Ok(match outcome {
        PingOutcome::Accepted(refreshed) => (
            StatusCode::OK,
            Json(PingAnswer {
                status: "accepted",
                domains: refreshed
                    .into_iter()
                    .map(|refresh| RefreshView::of(state, refresh))
                    .collect(),
            }),
        )
            .into_response(),
        PingOutcome::Pending => (
            StatusCode::ACCEPTED,
            Json(PingAnswer {
                status: "pending",
                domains: Vec::new(),
            }),
        )
            .into_response(),
    })
}
