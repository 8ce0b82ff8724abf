//! The one error type of the server, and the one JSON shape every error has:
//! `{"error": {"code": "...", "message": "..."}}` (docs/api.md).
//!
//! Extractor rejections are converted into it too (see `extract`), so a bad parameter is a
//! 400 in that shape and never axum's plain-text rejection.

use std::time::Duration;

use axum::Json;
use axum::extract::rejection::{BytesRejection, PathRejection};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// The `WWW-Authenticate` challenge sent with every 401.
pub(crate) const BEARER_CHALLENGE: &str = r#"Bearer realm="skillscout", error="invalid_token""#;

/// What went wrong with a request, phrased as what the caller can do about it.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// A query parameter is malformed, repeated or out of range: fix the request.
    #[error("{message}")]
    InvalidParameter {
        /// The parameter.
        name: String,
        /// What is wrong with it.
        message: String,
    },
    /// A pagination cursor was not issued by this server (or was altered): start over
    /// without it.
    #[error("invalid cursor: {0}")]
    InvalidCursor(String),
    /// A path in the URL cannot name anything here (not UTF-8, `..`, an absolute path).
    #[error("{0}")]
    InvalidPath(String),
    /// The request body cannot be read.
    #[error("{0}")]
    InvalidBody(String),
    /// Nothing by that name, or nothing the caller may see (a private record asked for
    /// anonymously is exactly as absent as a missing one).
    #[error("{0}")]
    NotFound(String),
    /// The method is not served at this path.
    #[error("method not allowed")]
    MethodNotAllowed,
    /// The `Authorization` header holds no valid bearer token: send a valid one, or none.
    #[error("invalid bearer token")]
    Unauthorized,
    /// The request body is over the limit (`ServeConfig::max_body_bytes`).
    #[error("request body is too large")]
    PayloadTooLarge,
    /// The request proves nothing it must (an IndexNow key the host does not publish).
    #[error("{0}")]
    Forbidden(String),
    /// The request is well formed but names what it may not (IndexNow: URLs of another
    /// host, a key not of the protocol's form).
    #[error("{0}")]
    Unprocessable(String),
    /// The caller, the domain or the host has used its budget: retry after the
    /// `Retry-After` seconds.
    #[error("{message}")]
    TooManyRequests {
        /// What was refused, and whose budget it was.
        message: String,
        /// When the next request would pass.
        retry_after: Duration,
    },
    /// The server did not answer in time; retry later.
    #[error("the request took longer than {} ms", .0.as_millis())]
    Timeout(Duration),
    /// The server is at its work limit (`ServeConfig::max_in_flight`); retry after the
    /// `Retry-After` seconds.
    #[error("the server is busy; retry in a moment")]
    Overloaded,
    /// The caller spent its request budget (`ServeConfig::rate_limit`); retry after the
    /// given seconds (also in `Retry-After`).
    #[error("too many requests from this client; retry in {0} s")]
    RateLimited(u64),
    /// A bug or a failing disk. The detail is logged, never sent.
    #[error("internal error")]
    Internal(String),
}

impl ApiError {
    /// Returns an [`ApiError::InvalidParameter`] for `name`.
    pub(crate) fn parameter(name: &str, message: impl Into<String>) -> ApiError {
        ApiError::InvalidParameter {
            name: name.to_owned(),
            message: message.into(),
        }
    }

    /// Returns an [`ApiError::Internal`] that keeps `error`'s whole chain for the log.
    pub(crate) fn internal(error: &(dyn std::error::Error + 'static)) -> ApiError {
        let mut detail = error.to_string();
        let mut source = error.source();
        while let Some(cause) = source {
            detail.push_str(": ");
            detail.push_str(&cause.to_string());
            source = cause.source();
        }
        ApiError::Internal(detail)
    }

    /// Returns the HTTP status and the stable snake_case code of this error.
    pub fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            ApiError::InvalidParameter { .. } => (StatusCode::BAD_REQUEST, "invalid_parameter"),
            ApiError::InvalidCursor(_) => (StatusCode::BAD_REQUEST, "invalid_cursor"),
            ApiError::InvalidPath(_) => (StatusCode::BAD_REQUEST, "invalid_path"),
            ApiError::InvalidBody(_) => (StatusCode::BAD_REQUEST, "invalid_body"),
            ApiError::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
            ApiError::MethodNotAllowed => (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed"),
            ApiError::Unauthorized => (StatusCode::UNAUTHORIZED, "unauthorized"),
            ApiError::PayloadTooLarge => (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
            ApiError::Forbidden(_) => (StatusCode::FORBIDDEN, "forbidden"),
            ApiError::Unprocessable(_) => (StatusCode::UNPROCESSABLE_ENTITY, "unprocessable"),
            ApiError::TooManyRequests { .. } => {
                (StatusCode::TOO_MANY_REQUESTS, "too_many_requests")
            }
            ApiError::Timeout(_) => (StatusCode::SERVICE_UNAVAILABLE, "timeout"),
            ApiError::Overloaded => (StatusCode::SERVICE_UNAVAILABLE, "overloaded"),
            ApiError::RateLimited(_) => (StatusCode::TOO_MANY_REQUESTS, "rate_limited"),
            ApiError::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal_error"),
        }
    }

    /// Returns what went wrong in full, for a log or a terminal: the detail of an internal
    /// error (which [`ApiError::public_message`] never sends), the message otherwise.
    pub fn detail(&self) -> String {
        match self {
            ApiError::Internal(detail) => detail.clone(),
            other => other.to_string(),
        }
    }

    /// Returns the JSON body sent with this error: `{"error": {"code", "message"}}`.
    pub fn to_json(&self) -> serde_json::Value {
        let (_, code) = self.status_and_code();
        serde_json::json!({ "error": { "code": code, "message": self.public_message() } })
    }

    /// Returns the message sent to the client: internal details never leave the server.
    pub fn public_message(&self) -> String {
        match self {
            ApiError::Internal(detail) => {
                tracing::error!(error = %detail, "request failed");
                "internal error".to_owned()
            }
            other => other.to_string(),
        }
    }
}

/// Returns `text` cut to `max` characters, with `…` when it was cut: how a message quotes
/// what a caller sent.
pub(crate) fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// The JSON body of every error: `{"error": {"code", "message"}}`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct ErrorBody {
    error: ErrorDetail,
}

/// What went wrong.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct ErrorDetail {
    /// A stable snake_case code, such as `invalid_parameter` or `not_found`.
    code: &'static str,
    /// What went wrong, for people.
    message: String,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code) = self.status_and_code();
        let body = ErrorBody {
            error: ErrorDetail {
                code,
                message: self.public_message(),
            },
        };
        let mut response = (status, Json(body)).into_response();
        if matches!(self, ApiError::Unauthorized) {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static(BEARER_CHALLENGE),
            );
        }
        if let ApiError::TooManyRequests { retry_after, .. } = &self {
            // Whole seconds, rounded up: a client that waits this long passes.
            let seconds = retry_after.as_secs() + u64::from(retry_after.subsec_nanos() > 0);
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds.max(1)));
        }
        if matches!(self, ApiError::Overloaded) {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }
}

impl From<indexer::Error> for ApiError {
    fn from(error: indexer::Error) -> ApiError {
        match error {
            indexer::Error::QueryTooLong { .. } => ApiError::parameter("q", error.to_string()),
            other => ApiError::internal(&other),
        }
    }
}

impl From<store::StoreError> for ApiError {
    fn from(error: store::StoreError) -> ApiError {
        ApiError::internal(&error)
    }
}

impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> ApiError {
        ApiError::InvalidPath(rejection.body_text())
    }
}

impl From<BytesRejection> for ApiError {
    fn from(rejection: BytesRejection) -> ApiError {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::PayloadTooLarge
        } else {
            ApiError::InvalidBody(rejection.body_text())
        }
    }
}
