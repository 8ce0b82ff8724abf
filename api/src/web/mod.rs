//! The web directory: server-rendered pages over the same data and access rules as the API.
//!
//! - `GET /?q=&type=&access=&verdict=&risk=&domain=&format=&license=&tag=&limit=&offset=`
//!   (`search.rs`): search (empty `q` browses), facets as links that add or remove a filter,
//!   pages. `GET /search?…` redirects there with its parameters.
//! - `GET /skill/{domain}/{name}` (`skill.rs`): a record: metadata, verdicts with every
//!   diagnostic and its fix, the safety audit's findings and the other places the same skill
//!   is published (`audit.rs`), SKILL.md rendered with publisher HTML shown as text
//!   (`markdown.rs`), files, install snippets.
//! - `GET /domains` (`domains.rs`): publishers with their score; `GET /domains/{domain}`
//!   (`publisher.rs`): the publisher's health report and which agent clients install from
//!   it, as the read model answers them (`formats::health` makes the report).
//! - `GET /assets/…` (`assets.rs`): the style sheet and the script, served by us.
//!
//! Pages are renderings of the read model's answers (`directory`), as maud templates
//! (`html.rs` has the layout). Every page works without script;
//! the one script only enhances (live search, copy buttons). Every page is sent with a
//! `Content-Security-Policy` that allows scripts, styles and images from this server only and
//! no inline script, so even markup that slipped through escaping could not run.

mod assets;
mod audit;
mod domains;
pub(crate) mod html;
mod markdown;
mod publish;
mod publisher;
mod search;
mod skill;

pub(crate) use assets::asset;
pub(crate) use domains::domains;
pub(crate) use publish::{recrawl_form, submit_form};
pub(crate) use publisher::domain;
pub(crate) use search::{home, search_redirect};
pub(crate) use skill::skill;

use axum::http::header::{
    CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY, RETRY_AFTER, WWW_AUTHENTICATE,
    X_CONTENT_TYPE_OPTIONS,
};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};

use crate::error::ApiError;
use crate::state::AppState;
use html::Layout;

/// The policy every page is sent with: scripts, styles, images and fetches from this server
/// only, no inline script or style, no plugins, no framing, forms that post only here.
pub(crate) const CONTENT_SECURITY_POLICY_VALUE: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; \
     frame-ancestors 'none'";

/// A rendered page and its status, sent with the page headers.
pub(crate) struct Page {
    status: StatusCode,
    html: Markup,
}

impl Page {
    /// Returns a `200 OK` page.
    pub(crate) fn ok(html: Markup) -> Page {
        Page {
            status: StatusCode::OK,
            html,
        }
    }

    /// Returns a `202 Accepted` page (a form whose work goes on).
    pub(crate) fn accepted(html: Markup) -> Page {
        Page {
            status: StatusCode::ACCEPTED,
            html,
        }
    }
}

impl IntoResponse for Page {
    fn into_response(self) -> Response {
        let mut response = (self.status, self.html.into_string()).into_response();
        let headers = response.headers_mut();
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        headers.insert(
            CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY_VALUE),
        );
        headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
        headers.insert(REFERRER_POLICY, HeaderValue::from_static("same-origin"));
        response
    }
}

/// Returns the layout of a page that is not the search page.
pub(crate) fn layout<'a>(state: &'a AppState, title: &'a str, section: &'a str) -> Layout<'a> {
    Layout {
        site: &state.config().name,
        title,
        section,
        query: "",
        keep: &[],
    }
}

/// An error shown as a page rather than as JSON.
#[derive(Debug)]
pub(crate) struct WebError(ApiError);

impl From<ApiError> for WebError {
    fn from(error: ApiError) -> WebError {
        WebError(error)
    }
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        let (status, code) = self.0.status_and_code();
        let message = self.0.public_message();
        let title = if status == StatusCode::NOT_FOUND {
            "Not found"
        } else {
            "Cannot show this page"
        };
        let body = html! {
            div.card {
                h1 { (title) }
                p.lead { (message) }
                p.muted { (status.as_u16()) " · " code { (code) } }
                p { a href="/" { "Back to the directory" } }
            }
        };
        let layout = Layout {
            site: "skillscout",
            title,
            section: "",
            query: "",
            keep: &[],
        };
        let mut response = Page {
            status,
            html: html::page(&layout, body),
        }
        .into_response();
        if let ApiError::TooManyRequests { retry_after, .. } = &self.0 {
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(retry_after.as_secs().max(1)));
        }
        if matches!(self.0, ApiError::Unauthorized) {
            response.headers_mut().insert(
                WWW_AUTHENTICATE,
                HeaderValue::from_static(crate::error::BEARER_CHALLENGE),
            );
        }
        response
    }
}

/// The 404 page for unknown web paths.
pub(crate) fn not_found_page() -> Response {
    WebError(ApiError::NotFound("there is no page here".to_owned())).into_response()
}

/// The page a browser gets when the server sheds its request (see `router::shed_load`): a
/// 503 with `Retry-After`, like the JSON answer, that says what to do.
pub(crate) fn overloaded_page() -> Response {
    let body = html! {
        div.card {
            h1 { "The directory is busy" }
            p.lead { "Too many requests are being answered right now. Please try again in a few seconds." }
            p { a href="" { "Try again" } }
        }
    };
    let layout = Layout {
        site: "skillscout",
        title: "Busy",
        section: "",
        query: "",
        keep: &[],
    };
    let mut response = Page {
        status: StatusCode::SERVICE_UNAVAILABLE,
        html: html::page(&layout, body),
    }
    .into_response();
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// Returns true for the paths of the web pages (which answer errors as pages).
pub(crate) fn is_page_path(path: &str) -> bool {
    path == "/"
        || path == "/search"
        || path == "/domains"
        || path.starts_with("/skill/")
        || path.starts_with("/domains/")
        || path.starts_with("/assets/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(crate::error::shorten("héllo", 2), "hé…");
        let snippet = indexer::Snippet {
            text: "a b <script>x</script> & 'c'".to_owned(),
            marks: vec![2..3, 26..27],
        };
        assert_eq!(
            html::marked(&snippet),
            "a <mark>b</mark> &lt;script&gt;x&lt;/script&gt; &amp; &#39;<mark>c</mark>&#39;"
        );
        assert_eq!(
            crate::markup::escape("<a href='x'>&"),
            "&lt;a href=&#39;x&#39;&gt;&amp;"
        );
    }

    // The templates and `html::escape` must agree on what cannot pass: the characters that
    // end an element's text or a quoted attribute.
    #[test]
    fn the_template_engine_escapes_what_the_escaper_escapes() {
        let hostile = "<script>alert(1)</script>\" onerror=\"x\" & <img src=x>";
        let rendered = html! { p title=(hostile) { (hostile) } }.into_string();
        assert!(!rendered.contains("<script>"));
        assert!(!rendered.contains("<img"));
        assert!(!rendered.contains("\" onerror"));
        for c in ['<', '>', '"'] {
            let inside = rendered
                .trim_start_matches("<p title=\"")
                .trim_end_matches("</p>");
            assert!(!inside.replace("\">", "").contains(c), "{c} in {rendered}");
        }
    }
}
