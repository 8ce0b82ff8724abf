//! A client of a running server's admin API (`/admin/v1/…`): how `seeds`, `delist` and
//! `undelist` change the frontier of an embedded store that a `serve` process holds.
//!
//! The server is the operator's own, named by the operator (or by the file the server wrote
//! in its data directory), so no address guard applies; every answer is read with a size
//! cap, and a token never follows a redirect (none is followed).

use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use store::{AddMode, AddStats, Delisted, FrontierEntry, ListFilter, NewTarget, RemoveStats};
use url::Url;

/// The largest answer read from the admin API.
const MAX_ANSWER_BYTES: usize = 64 * 1024 * 1024;
/// The time allowed for one admin call (adding 10,000 seeds included).
const TIMEOUT: Duration = Duration::from_secs(120);

/// The time allowed for a backup download.
pub const BACKUP_TIMEOUT: Duration = Duration::from_secs(6 * 3600);

/// Why an admin call failed.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// The server could not be reached or its answer read.
    #[error("cannot reach the admin API at {url}: {message}")]
    Unreachable {
        /// The URL called.
        url: String,
        /// What failed.
        message: String,
    },
    /// The server refused the call.
    #[error("the admin API at {url} answered {status}: {message}")]
    Refused {
        /// The URL called.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The error message of the answer.
        message: String,
    },
}

/// A client of one server's admin API.
#[derive(Debug, Clone)]
pub struct AdminClient {
    base: Url,
    token: String,
    client: reqwest::Client,
}

/// The body of `POST /admin/v1/seeds`.
#[derive(Debug, Serialize)]
struct AddBody<'a> {
    targets: Vec<AddTarget<'a>>,
    mode: &'a str,
}

/// One target of [`AddBody`].
#[derive(Debug, Serialize)]
struct AddTarget<'a> {
    target: &'a str,
    added_as: &'a str,
    source: Option<&'a str>,
    rank: Option<u64>,
}

/// A page of `GET /admin/v1/seeds`.
#[derive(Debug, serde::Deserialize)]
struct ListAnswer {
    domains: Vec<FrontierEntry>,
}

/// The answer of `POST /admin/v1/undelist`.
#[derive(Debug, serde::Deserialize)]
struct UndelistAnswer {
    undelisted: bool,
}

impl AdminClient {
    /// A client of the server at `base` (its address, e.g. `http://127.0.0.1:8080/`), with
    /// `token`.
    pub fn new(base: Url, token: String) -> Result<AdminClient, AdminError> {
        let unreachable = |message: String| AdminError::Unreachable {
            url: base.to_string(),
            message,
        };
        // An https server is checked against the system's roots, as the crawl does.
        let tls = super::tls::client_config(&[]).map_err(unreachable)?;
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(TIMEOUT)
            .build()
            .map_err(|error| unreachable(error.to_string()))?;
        Ok(AdminClient {
            base,
            token,
            client,
        })
    }

    /// Adds targets to the frontier (see `FrontierStore::add`).
    pub async fn add(&self, targets: &[NewTarget], mode: AddMode) -> Result<AddStats, AdminError> {
        let body = AddBody {
            targets: targets
                .iter()
                .map(|target| AddTarget {
                    target: &target.target,
                    added_as: target.added_as.as_str(),
                    source: target.source.as_deref(),
                    rank: target.rank,
                })
                .collect(),
            mode: match mode {
                AddMode::Keep => "keep",
                AddMode::CrawlNow => "crawl_now",
            },
        };
        self.post("admin/v1/seeds", &body).await
    }

    /// Lists a page of the frontier.
    pub async fn list(
        &self,
        after: Option<&str>,
        limit: usize,
        filter: ListFilter,
    ) -> Result<Vec<FrontierEntry>, AdminError> {
        let mut url = self.url("admin/v1/seeds")?;
        {
            let mut query = url.query_pairs_mut();
            query.append_pair("limit", &limit.to_string());
            if let Some(after) = after {
                query.append_pair("after", after);
            }
            if let Some(state) = filter.state {
                query.append_pair("state", state.as_str());
            }
            if filter.due {
                query.append_pair("due", "true");
            }
        }
        let request = self.client.get(url.clone()).bearer_auth(&self.token);
        let answer: ListAnswer = self.send(url, request).await?;
        Ok(answer.domains)
    }

    /// Removes domains from the frontier.
    pub async fn remove(&self, domains: &[String]) -> Result<RemoveStats, AdminError> {
        self.post(
            "admin/v1/seeds/remove",
            &serde_json::json!({ "domains": domains }),
        )
        .await
    }

    /// Delists a domain.
    pub async fn delist(&self, domain: &str, reason: &str) -> Result<Delisted, AdminError> {
        self.post(
            "admin/v1/delist",
            &serde_json::json!({ "domain": domain, "reason": reason }),
        )
        .await
    }

    /// Takes a domain off the deny list; false when it was not delisted.
    pub async fn undelist(&self, domain: &str) -> Result<bool, AdminError> {
        let answer: UndelistAnswer = self
            .post(
                "admin/v1/undelist",
                &serde_json::json!({ "domain": domain }),
            )
            .await?;
        Ok(answer.undelisted)
    }

    /// Downloads a backup of the server's data directory (`GET /admin/v1/backup`) into
    /// `out`, a chunk at a time; returns the bytes written. A backup may take up to
    /// [`BACKUP_TIMEOUT`].
    pub async fn backup(&self, out: &mut dyn std::io::Write) -> Result<u64, AdminError> {
        let url = self.url("admin/v1/backup")?;
        let unreachable = |message: String| AdminError::Unreachable {
            url: url.to_string(),
            message,
        };
        let mut response = self
            .client
            .get(url.clone())
            .bearer_auth(&self.token)
            .timeout(BACKUP_TIMEOUT)
            .send()
            .await
            .map_err(|error| unreachable(error.to_string()))?;
        let status = response.status();
        if !status.is_success() {
            let body = response.bytes().await.unwrap_or_default();
            let message = serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|value| {
                    value
                        .pointer("/error/message")
                        .and_then(|message| message.as_str())
                        .map(str::to_owned)
                })
                .unwrap_or_else(|| String::from_utf8_lossy(&body).chars().take(200).collect());
            return Err(AdminError::Refused {
                url: url.to_string(),
                status: status.as_u16(),
                message,
            });
        }
        let mut written = 0u64;
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|error| unreachable(format!("the backup was cut short: {error}")))?
        {
            out.write_all(&chunk)
                .map_err(|error| unreachable(format!("cannot write the backup: {error}")))?;
            written += chunk.len() as u64;
        }
        Ok(written)
    }

    fn url(&self, path: &str) -> Result<Url, AdminError> {
        self.base
            .join(path)
            .map_err(|error| AdminError::Unreachable {
                url: self.base.to_string(),
                message: error.to_string(),
            })
    }

    async fn post<B: Serialize, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, AdminError> {
        let url = self.url(path)?;
        let body = serde_json::to_vec(body).map_err(|error| AdminError::Unreachable {
            url: url.to_string(),
            message: format!("cannot encode the request: {error}"),
        })?;
        let request = self
            .client
            .post(url.clone())
            .bearer_auth(&self.token)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(body);
        self.send(url, request).await
    }

    async fn send<T: DeserializeOwned>(
        &self,
        url: Url,
        request: reqwest::RequestBuilder,
    ) -> Result<T, AdminError> {
        let unreachable = |message: String| AdminError::Unreachable {
            url: url.to_string(),
            message,
        };
        let mut response = request
            .send()
            .await
            .map_err(|error| unreachable(error.to_string()))?;
        let status = response.status();
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|error| unreachable(error.to_string()))?
        {
            if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                return Err(unreachable(format!(
                    "the answer is larger than {MAX_ANSWER_BYTES} bytes"
                )));
            }
            body.extend_from_slice(&chunk);
        }
        if !status.is_success() {
            let message = serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|value| {
                    value
                        .pointer("/error/message")
                        .and_then(|message| message.as_str())
                        .map(str::to_owned)
                })
                .unwrap_or_else(|| String::from_utf8_lossy(&body).chars().take(200).collect());
            return Err(AdminError::Refused {
                url: url.to_string(),
                status: status.as_u16(),
                message,
            });
        }
        serde_json::from_slice(&body)
            .map_err(|error| unreachable(format!("unexpected answer: {error}")))
    }
}
