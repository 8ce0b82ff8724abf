//! The publishers' endpoints, anonymous and budgeted: `POST /v1/domains` (a submission,
//! probed at once), `POST /v1/domains/{domain}/recrawl` and IndexNow (`GET /indexnow`, `POST /indexnow`, answered as indexnow.org's table says: 200
//! accepted, 202 key validation pending, 400 bad request, 403 key not valid, 422 URLs not of
//! the host or a key not of the protocol's form, 429 too many requests). What they write goes
//! through the intake; what they say is never trusted about content: a ping only makes a
//! domain due, and the crawl reads what there is.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{Extensions, StatusCode};
use formats::Domain;
use serde::Deserialize;

use crate::error::ApiError;
use crate::extract::{ApiPath, client_address};
use crate::intake::indexnow::read_ping;
use crate::intake::{PingOutcome, Submitted};
use crate::state::AppState;
use crate::wire::{
    PingAnswer, PingBody, PingStatus, RefreshView, SubmitAnswer, SubmitBody, SubmitPending,
    SubmitState,
};

/// Reads a domain named in a path.
pub(crate) fn path_domain(raw: &str) -> Result<Domain, ApiError> {
    raw.parse()
        .map_err(|_| ApiError::InvalidPath(format!("invalid domain {raw:?}")))
}

/// `POST /v1/domains/{domain}/recrawl`: 202 with when the domain became due, 404 for a
/// domain the frontier does not hold, 429 past the domain's or the caller's budget.
#[utoipa::path(
    post,
    path = "/v1/domains/{domain}/recrawl",
    tag = "publishers",
    params(("domain" = String, Path, description = "A domain the directory's frontier holds")),
    responses(
        (status = 202, description = "The domain is due now (or delisted: nothing is crawled)", body = RefreshView),
        (status = 400, description = "`invalid_path`: not a domain", body = crate::error::ErrorBody),
        (status = 404, description = "`not_found`: the frontier does not hold the domain", body = crate::error::ErrorBody),
        (status = 429, description = "`too_many_requests`: the domain was recrawled on request within the last 5 minutes, or the caller used its budget (30 requests, refilled at 30 an hour)",
            body = crate::error::ErrorBody, headers(("Retry-After" = u64, description = "Seconds until a request would pass"))),
        (status = 503, description = "Overloaded: try again after `Retry-After`", body = crate::error::ErrorBody)
    )
)]
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
    let view = RefreshView::new(refresh, &state.config().public_url);
    Ok((StatusCode::ACCEPTED, Json(view)))
}

/// `POST /v1/domains` `{"domain"}`: a submission, probed at once. 202 with the domain's
/// status and health report (as `GET /v1/domains/{domain}`: its `state` is `null` when it
/// publishes nothing and was not kept), or, while the probe runs on, where to find it; 400
/// for what is not a domain, 422 for an IP address or `localhost`, 429 past the budgets.
#[utoipa::path(
    post,
    path = "/v1/domains",
    tag = "publishers",
    request_body(content = SubmitBody, content_type = "application/json"),
    responses(
        (status = 202, description = "Probed: the domain's status and health report; or, when the probe runs past 8 seconds or the domain is delisted, where the report will be", body = SubmitAnswer),
        (status = 400, description = "`invalid_body`: not JSON, no `domain`, not a host name, an MCP endpoint", body = crate::error::ErrorBody),
        (status = 413, description = "`payload_too_large`: a body over the server's limit (64 KiB)", body = crate::error::ErrorBody),
        (status = 422, description = "`unprocessable`: an IP address or `localhost` (accepted by a server run with `--allow-private`)", body = crate::error::ErrorBody),
        (status = 429, description = "`too_many_requests`: the caller's budget (shared with recrawl requests), or the recrawl budget of a domain the frontier holds",
            body = crate::error::ErrorBody, headers(("Retry-After" = u64, description = "Seconds until a request would pass"))),
        (status = 503, description = "Overloaded: try again after `Retry-After`", body = crate::error::ErrorBody)
    )
)]
pub(crate) async fn submit(
    State(state): State<AppState>,
    extensions: Extensions,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<(StatusCode, Json<SubmitAnswer>), ApiError> {
    let body = body?;
    let body: SubmitBody = serde_json::from_slice(&body)
        .map_err(|error| ApiError::InvalidBody(format!("expected {{\"domain\"}}: {error}")))?;
    let submitted = state
        .intake()
        .submit(client_address(&extensions), &body.domain)
        .await?;
    let answer = submission_answer(&state, submitted).await?;
    Ok((StatusCode::ACCEPTED, Json(answer)))
}

/// The answer to a submission.
async fn submission_answer(
    state: &AppState,
    submitted: Submitted,
) -> Result<SubmitAnswer, ApiError> {
    let (domain, pending) = match submitted {
        Submitted::Probed { domain, .. } => {
            let parsed = path_domain(&domain)?;
            let answer = state
                .directory()
                .ask(move |directory| directory.domain(indexer::Caller::Anonymous, &parsed))
                .await;
            match answer {
                Ok(answer) => return Ok(SubmitAnswer::Report(Box::new(answer.detail))),
                // The probe stored nothing (it could not run): said as pending.
                Err(ApiError::NotFound(_)) => (domain, SubmitState::Probing),
                Err(error) => return Err(error),
            }
        }
        Submitted::Probing(domain) => (domain, SubmitState::Probing),
        Submitted::Delisted(domain) => (domain, SubmitState::Delisted),
    };
    Ok(SubmitAnswer::Pending(SubmitPending::new(
        domain,
        pending,
        &state.config().public_url,
    )))
}

/// The query of `GET /indexnow`.
#[derive(Debug, Deserialize)]
pub(crate) struct PingQuery {
    url: Option<String>,
    key: Option<String>,
    #[serde(rename = "keyLocation")]
    key_location: Option<String>,
}

/// `GET /indexnow?url=&key=[&keyLocation=]`.
#[utoipa::path(
    get,
    path = "/indexnow",
    tag = "publishers",
    params(
        ("url" = String, Query, description = "The URL that changed (absolute http or https)"),
        ("key" = String, Query, description = "The key: 8 to 128 characters of `a-z`, `A-Z`, `0-9` and `-`"),
        ("keyLocation" = Option<String>, Query, description = "Where the key file is, on the URL's host (`/{key}.txt` at its root when absent); it covers the URLs under its folder"),
    ),
    responses(
        (status = 200, description = "The key is verified: `domains` holds the domain the ping made due, if any", body = PingAnswer),
        (status = 202, description = "The key file is still being read (after 5 seconds, or by another ping): the ping counts once it is verified", body = PingAnswer),
        (status = 400, description = "`invalid_body`: a missing key or URL, a URL that is not absolute http(s)", body = crate::error::ErrorBody),
        (status = 403, description = "`forbidden`: the key file could not be read through the crawler or does not hold the key (remembered for 10 minutes)", body = crate::error::ErrorBody),
        (status = 422, description = "`unprocessable`: a URL outside the key file's folder, `keyLocation` on another host, a key not of the protocol's form", body = crate::error::ErrorBody),
        (status = 429, description = "`too_many_requests`: the caller's pings (120 in a burst, refilled at 120 a minute) or the host's (10, refilled at 10 a minute)",
            body = crate::error::ErrorBody, headers(("Retry-After" = u64, description = "Seconds until a ping would pass"))),
        (status = 503, description = "Overloaded: try again after `Retry-After`", body = crate::error::ErrorBody)
    )
)]
pub(crate) async fn ping_get(
    State(state): State<AppState>,
    extensions: Extensions,
    query: Result<Query<PingQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<(StatusCode, Json<PingAnswer>), ApiError> {
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
#[utoipa::path(
    post,
    path = "/indexnow",
    tag = "publishers",
    request_body(content = PingBody, content_type = "application/json", description = "The `Content-Type` is not checked; the body is read as JSON"),
    responses(
        (status = 200, description = "The key is verified: `domains` holds the domain the ping made due, if any", body = PingAnswer),
        (status = 202, description = "The key file is still being read (after 5 seconds, or by another ping): the ping counts once it is verified", body = PingAnswer),
        (status = 400, description = "`invalid_body`: not JSON, a missing key or URL, a URL that is not absolute http(s), more than 10,000 URLs", body = crate::error::ErrorBody),
        (status = 403, description = "`forbidden`: the key file could not be read through the crawler or does not hold the key (remembered for 10 minutes)", body = crate::error::ErrorBody),
        (status = 413, description = "`payload_too_large`: a body over 4 MiB", body = crate::error::ErrorBody),
        (status = 422, description = "`unprocessable`: a URL of another host than `host`, or outside the key file's folder, `keyLocation` on another host, a key not of the protocol's form", body = crate::error::ErrorBody),
        (status = 429, description = "`too_many_requests`: the caller's pings (120 in a burst, refilled at 120 a minute) or the host's (10, refilled at 10 a minute)",
            body = crate::error::ErrorBody, headers(("Retry-After" = u64, description = "Seconds until a ping would pass"))),
        (status = 503, description = "Overloaded: try again after `Retry-After`", body = crate::error::ErrorBody)
    )
)]
pub(crate) async fn ping_post(
    State(state): State<AppState>,
    extensions: Extensions,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<(StatusCode, Json<PingAnswer>), ApiError> {
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

/// Answers a ping read already: 200 once its key is verified, 202 while it is being read.
async fn answer(
    state: &AppState,
    extensions: &Extensions,
    ping: crate::intake::indexnow::Ping,
) -> Result<(StatusCode, Json<PingAnswer>), ApiError> {
    let outcome = state
        .intake()
        .ping(client_address(extensions), ping)
        .await?;
    Ok(match outcome {
        PingOutcome::Accepted(refreshed) => {
            let public_url = &state.config().public_url;
            let domains = refreshed
                .into_iter()
                .map(|refresh| RefreshView::new(refresh, public_url))
                .collect();
            (
                StatusCode::OK,
                Json(PingAnswer {
                    status: PingStatus::Accepted,
                    domains,
                }),
            )
        }
        PingOutcome::Pending => (
            StatusCode::ACCEPTED,
            Json(PingAnswer {
                status: PingStatus::Pending,
                domains: Vec::new(),
            }),
        ),
    })
}
