//! The bodies of the publishers' endpoints (docs/api.md, "Publishers"): what a submission and
//! an IndexNow ping send, and what a submission, a recrawl request and a ping are answered.
//! Requests are read leniently (a missing field is the handler's 400, with the protocol's
//! words); their schemas say what a valid request holds.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use url::Url;
use utoipa::ToSchema;

use super::DomainDetail;
use crate::intake::Refresh;
use crate::openapi::schemas;

/// The body of `POST /v1/domains`.
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct SubmitBody {
    /// The site: a host name (reached over HTTPS), or an origin with its scheme, taken as
    /// given.
    #[schema(example = "example.com")]
    pub(crate) domain: String,
}

/// The body of `POST /indexnow`, as indexnow.org gives it.
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct PingBody {
    /// The host the URLs belong to (the first URL's when absent).
    pub(crate) host: Option<String>,
    /// The key: 8 to 128 characters of `a-z`, `A-Z`, `0-9` and `-`.
    #[schema(required = true, value_type = String, pattern = "^[a-zA-Z0-9-]{8,128}$")]
    pub(crate) key: Option<String>,
    /// Where the key file is, on the same host (`{scheme}://{host}/{key}.txt` when absent);
    /// it covers only the URLs under its folder.
    #[serde(rename = "keyLocation")]
    #[schema(value_type = Option<String>, format = Uri)]
    pub(crate) key_location: Option<String>,
    /// The URLs that changed (1 to 10,000), all of `host`.
    #[serde(rename = "urlList", default)]
    #[schema(required = true, min_items = 1, max_items = 10_000)]
    pub(crate) url_list: Vec<String>,
}

/// What an accepted recrawl request or ping made of a domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RefreshState {
    /// It is crawled as soon as a crawler is free.
    Due,
    /// The operator delisted it: nothing is crawled.
    Delisted,
}

/// A domain a recrawl request or a ping made due: the body of
/// `POST /v1/domains/{domain}/recrawl`, and each of a ping's `domains`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct RefreshView {
    /// The domain.
    #[schema(schema_with = schemas::domain)]
    domain: String,
    /// `due`, or `delisted` (nothing is crawled).
    state: RefreshState,
    /// When it became due (absent when delisted).
    #[serde(
        with = "time::serde::rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    due_at: Option<OffsetDateTime>,
    /// True when a ping added it to the frontier, as `submitted` (absent otherwise).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    added: bool,
    /// Where its status and health report are read.
    #[schema(format = Uri)]
    status_url: String,
}

impl RefreshView {
    /// Returns the view of `refresh`, its status URL on `public_url`.
    pub(crate) fn new(refresh: Refresh, public_url: &Url) -> RefreshView {
        let (domain, state, due_at, added) = match refresh {
            Refresh::Due { domain, at, added } => (domain, RefreshState::Due, Some(at), added),
            Refresh::Delisted(domain) => (domain, RefreshState::Delisted, None, false),
        };
        RefreshView {
            status_url: status_url(public_url, &domain),
            domain,
            state,
            due_at,
            added,
        }
    }
}

/// Returns the URL of `domain`'s status (`GET /v1/domains/{domain}`) on `public_url`.
fn status_url(public_url: &Url, domain: &str) -> String {
    public_url
        .join(&format!("v1/domains/{domain}"))
        .map(String::from)
        .unwrap_or_default()
}

/// Where a submission stands when its report is not in the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SubmitState {
    /// The probe runs on past the answer: the report lands at `status_url`.
    Probing,
    /// The operator delisted the domain: nothing is crawled.
    Delisted,
}

/// A submission answered without its report.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SubmitPending {
    /// The domain.
    #[schema(schema_with = schemas::domain)]
    domain: String,
    /// `probing` or `delisted`.
    state: SubmitState,
    /// Where its status and health report are read.
    #[schema(format = Uri)]
    status_url: String,
}

impl SubmitPending {
    /// Returns the answer for `domain` in `state`, its status URL on `public_url`.
    pub(crate) fn new(domain: String, state: SubmitState, public_url: &Url) -> SubmitPending {
        SubmitPending {
            status_url: status_url(public_url, &domain),
            domain,
            state,
        }
    }
}

/// The `202` body of `POST /v1/domains`: the domain's status and health report once the
/// probe ran (its `state` is `null` when the site publishes nothing and was not kept), or
/// where the report will be.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub(crate) enum SubmitAnswer {
    /// The probe ran: `GET /v1/domains/{domain}`'s body.
    Report(Box<DomainDetail>),
    /// The probe runs on, or the domain is delisted.
    Pending(SubmitPending),
}

/// Whether a ping counts yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum PingStatus {
    /// The key is verified (`200`).
    Accepted,
    /// The key file is still being read (`202`): the ping counts once it is verified.
    Pending,
}

/// The body of an IndexNow ping's `200` and `202`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PingAnswer {
    /// `accepted` or `pending`.
    pub(crate) status: PingStatus,
    /// The domain the ping made due, or none (when no URL names a skills path, the site's
    /// root or the target crawled for it, or while the key is pending).
    pub(crate) domains: Vec<RefreshView>,
}
