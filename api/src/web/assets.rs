//! The pages' style sheet and script, compiled into the binary and served by us: no build
//! step, nothing loaded from another host.
//!
//! Each is served at a path that carries a digest of its content, so it can be cached for a
//! year and a new version is fetched as soon as a page names it.

use std::sync::LazyLock;

use axum::extract::Path;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

const STYLE: &str = include_str!("assets/site.css");
const SCRIPT: &str = include_str!("assets/site.js");

static STYLE_PATH: LazyLock<String> = LazyLock::new(|| versioned("site", "css", STYLE));
static SCRIPT_PATH: LazyLock<String> = LazyLock::new(|| versioned("site", "js", SCRIPT));

/// Returns `/assets/{name}.{digest}.{extension}`.
fn versioned(name: &str, extension: &str, body: &str) -> String {
    let digest = formats::Digest::of(body.as_bytes()).hex();
    format!("/assets/{name}.{}.{extension}", &digest[..12])
}

/// Returns the path of the style sheet.
pub(crate) fn style_path() -> &'static str {
    &STYLE_PATH
}

/// Returns the path of the script.
pub(crate) fn script_path() -> &'static str {
    &SCRIPT_PATH
}

/// `GET /assets/{file}`: the style sheet or the script.
pub(crate) async fn asset(Path(file): Path<String>) -> Response {
    let path = format!("/assets/{file}");
    let (body, content_type) = if path == style_path() {
        (STYLE, "text/css; charset=utf-8")
    } else if path == script_path() {
        (SCRIPT, "text/javascript; charset=utf-8")
    } else {
        return super::not_found_page();
    };
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(
        CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=31536000, immutable"),
    );
    response
}
