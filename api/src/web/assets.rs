//! The pages' style sheet and script, compiled into the binary and served by us: no build
//! step, nothing loaded from another host.

use axum::extract::Path;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// The path of the style sheet; its name carries a version so that a change is fetched anew.
pub(crate) const STYLE_PATH: &str = "/assets/site-1.css";
/// The path of the script.
pub(crate) const SCRIPT_PATH: &str = "/assets/site-1.js";

const STYLE: &str = include_str!("assets/site.css");
const SCRIPT: &str = include_str!("assets/site.js");

/// `GET /assets/{file}`: the style sheet or the script.
pub(crate) async fn asset(Path(file): Path<String>) -> Response {
    let (body, content_type) = match format!("/assets/{file}").as_str() {
        STYLE_PATH => (STYLE, "text/css; charset=utf-8"),
        SCRIPT_PATH => (SCRIPT, "text/javascript; charset=utf-8"),
        _ => return super::not_found_page(),
    };
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(
        CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=86400"),
    );
    response
}
