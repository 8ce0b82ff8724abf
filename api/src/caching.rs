//! HTTP caching of read responses: an `ETag` on every successful GET (the hash of the body,
//! unless the handler set a better one), `304 Not Modified` when `If-None-Match` matches, and a
//! `Cache-Control` policy: anonymous answers may be cached publicly for a short while,
//! authenticated ones only privately and revalidated each time (they may hold private
//! records). `Vary: Authorization` keeps shared caches from mixing the two.
//!
//! Also here: the request timeout, answered with the one error shape.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{
    AUTHORIZATION, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, ETAG, IF_NONE_MATCH, VARY,
};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use formats::Digest;

use crate::error::ApiError;
use crate::state::AppState;

/// Returns a strong entity tag made from `bytes`.
pub(crate) fn etag_of(bytes: &[u8]) -> HeaderValue {
    let mut hex = Digest::of(bytes).hex();
    hex.truncate(32);
    HeaderValue::from_str(&format!("\"{hex}\"")).expect("hex digits are a valid header value")
}

/// True when an `If-None-Match` header matches `etag` (weak comparison, RFC 9110 §13.1.2).
fn matches(if_none_match: &HeaderValue, etag: &HeaderValue) -> bool {
    let (Ok(candidates), Ok(etag)) = (if_none_match.to_str(), etag.to_str()) else {
        return false;
    };
    let etag = etag.trim_start_matches("W/");
    candidates
        .split(',')
        .map(str::trim)
        .any(|candidate| candidate == "*" || candidate.trim_start_matches("W/") == etag)
}

/// Middleware: ETag, 304 and Cache-Control on GET and HEAD responses.
pub(crate) async fn conditional(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return next.run(request).await;
    }
    let authenticated = request.headers().contains_key(AUTHORIZATION);
    let if_none_match = request.headers().get(IF_NONE_MATCH).cloned();
    let response = next.run(request).await;
    let (mut parts, body) = response.into_parts();
    parts
        .headers
        .append(VARY, HeaderValue::from_static("Authorization"));
    if parts.status != StatusCode::OK {
        parts
            .headers
            .entry(CACHE_CONTROL)
            .or_insert(HeaderValue::from_static("no-store"));
        return Response::from_parts(parts, body);
    }
    if !parts.headers.contains_key(CACHE_CONTROL) {
        let policy = if authenticated {
            "private, no-cache".to_owned()
        } else {
            format!("public, max-age={}", state.config().cache_max_age.as_secs())
        };
        if let Ok(value) = HeaderValue::from_str(&policy) {
            parts.headers.insert(CACHE_CONTROL, value);
        }
    }
    let (etag, body) = match parts.headers.get(ETAG) {
        Some(etag) => (etag.clone(), body),
        None => {
            let bytes = match axum::body::to_bytes(body, usize::MAX).await {
                Ok(bytes) => bytes,
                Err(error) => {
                    return ApiError::Internal(format!("cannot read a response body: {error}"))
                        .into_response();
                }
            };
            let etag = etag_of(&bytes);
            parts.headers.insert(ETAG, etag.clone());
            (etag, Body::from(bytes))
        }
    };
    if if_none_match.is_some_and(|header| matches(&header, &etag)) {
        parts.status = StatusCode::NOT_MODIFIED;
        strip_content_headers(&mut parts.headers);
        return Response::from_parts(parts, Body::empty());
    }
    Response::from_parts(parts, body)
}

fn strip_content_headers(headers: &mut HeaderMap) {
    headers.remove(CONTENT_LENGTH);
    headers.remove(CONTENT_TYPE);
}

/// Middleware: answers a request that takes longer than the configured time with a 503
/// `timeout` error.
pub(crate) async fn timeout(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let limit = state.config().request_timeout;
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError::Timeout(limit).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_none_match_comparison() {
        let etag = HeaderValue::from_static("\"abc\"");
        for (header, expected) in [
            ("\"abc\"", true),
            ("W/\"abc\"", true),
            ("\"x\", \"abc\"", true),
            ("*", true),
            ("\"abd\"", false),
            ("abc", false),
        ] {
            assert_eq!(
                matches(&HeaderValue::from_static(header), &etag),
                expected,
                "{header}"
            );
        }
    }
}
