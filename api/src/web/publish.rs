//! The publishers' forms: "Add your site" (`POST /domains`, on the publishers' page) and
//! "Recrawl now" (`POST /domains/{domain}/recrawl`, on a publisher's page). Plain forms that
//! work without script: each answers with a redirect to the publisher's page, which says what
//! happened. With the script, "Recrawl now" asks the JSON API and shows the crawl's result
//! when it lands, without a reload (`assets/site.js`).

use axum::body::Bytes;
use axum::extract::State;
use axum::http::header::LOCATION;
use axum::http::{Extensions, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use formats::Domain;
use maud::{Markup, html};

use super::{Page, WebError, layout};
use crate::directory::urls::{domain_page_path, domain_status_path};
use crate::error::{ApiError, shorten};
use crate::extract::{ApiPath, client_address};
use crate::intake::{Refresh, Submitted};
use crate::state::AppState;

/// The "Add your site" form. A submission is probed at once on every server; a server that
/// does not crawl (`serve` without `--crawl`) never probes it again, so its form says the
/// site waits for the operator's crawls.
pub(crate) fn add_site_form(server_crawls: bool) -> Markup {
    html! {
        form.add-site method="post" action="/domains" {
            label for="add-domain" { "Add your site" }
            " "
            input #add-domain name="domain" type="text" inputmode="url" autocomplete="url"
                placeholder="example.com" required maxlength="253";
            " "
            button type="submit" { "Add" }
            @if server_crawls {
                p.muted { "It is checked at once; it is listed if it publishes skills at a well-known path." }
            } @else {
                p.muted {
                    "It is checked once, at once, and listed if it publishes skills at a well-known path. "
                    "This server does not crawl on its own: after that check, your site is revisited only when the directory's operator runs a crawl."
                }
            }
        }
    }
}

/// The "Recrawl now" form of a publisher's page, with the time of its last crawl for the
/// script to notice the next one.
pub(crate) fn recrawl_button(domain: &Domain, crawled_at: time::OffsetDateTime) -> Markup {
    let crawled = crate::wire::rfc3339(crawled_at);
    html! {
        form.recrawl method="post" action={ (domain_page_path(domain)) "/recrawl" }
            data-recrawl=(format!("/v1/domains/{}/recrawl", domain.as_str()))
            data-status=(domain_status_path(domain))
            data-crawled-at=(crawled) {
            button type="submit" { "Recrawl now" }
            " "
            span.muted #recrawl-status role="status" aria-live="polite" {}
        }
    }
}

/// The notice a publisher's page shows after one of the forms (`?recrawl=` or
/// `?submitted=`).
pub(crate) fn notice(recrawl: Option<&str>, submitted: Option<&str>) -> Option<&'static str> {
    match (recrawl, submitted) {
        (Some("due"), _) => {
            Some("Recrawl requested: the site is crawled as soon as a crawler is free.")
        }
        (Some("delisted"), _) => Some("This site is delisted: it is not crawled."),
        (_, Some("kept")) => Some("Your site was checked and is now listed."),
        (_, Some("not-kept")) => Some(
            "Your site was checked but publishes no skills index at a well-known path, so it is not listed. The report below says what was found.",
        ),
        _ => None,
    }
}

fn see_other(location: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(value) = HeaderValue::from_str(location) {
        response.headers_mut().insert(LOCATION, value);
    }
    response
}

/// `POST /domains` (form field `domain`): a submission, then its report.
pub(crate) async fn submit_form(
    State(state): State<AppState>,
    extensions: Extensions,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<Response, WebError> {
    let body = body.map_err(ApiError::from)?;
    let domain = url::form_urlencoded::parse(&body)
        .find(|(name, _)| name == "domain")
        .map(|(_, value)| value.into_owned())
        .unwrap_or_default();
    let submitted = state
        .intake()
        .submit(client_address(&extensions), &domain)
        .await?;
    let (domain, outcome) = match submitted {
        Submitted::Probed { domain, kept } => (domain, if kept { "kept" } else { "not-kept" }),
        Submitted::Delisted(domain) => {
            return Ok(message_page(
                &state,
                &domain,
                "This site is delisted by the directory's operator: it is not crawled.",
            ));
        }
        Submitted::Probing(domain) => {
            return Ok(message_page(
                &state,
                &domain,
                "Your site is being checked. Its report appears on its page in a moment.",
            ));
        }
    };
    let parsed: Domain = domain
        .parse()
        .map_err(|_| ApiError::InvalidBody(format!("invalid domain {}", shorten(&domain, 100))))?;
    Ok(see_other(&format!(
        "{}?submitted={outcome}",
        domain_page_path(&parsed)
    )))
}

/// A page that says what became of a form, with a link to the publisher's page.
fn message_page(state: &AppState, domain: &str, message: &str) -> Response {
    let link = domain
        .parse::<Domain>()
        .map(|domain| domain_page_path(&domain))
        .unwrap_or_else(|_| "/domains".to_owned());
    let body = html! {
        div.card {
            h1 { (domain) }
            p.lead { (message) }
            p { a href=(link) { "The site's page" } }
        }
    };
    Page::accepted(super::html::page(&layout(state, domain, "domains"), body)).into_response()
}

/// `POST /domains/{domain}/recrawl`: a recrawl request, then the publisher's page.
pub(crate) async fn recrawl_form(
    State(state): State<AppState>,
    extensions: Extensions,
    path: Result<ApiPath<String>, ApiError>,
) -> Result<Response, WebError> {
    let ApiPath(domain) = path?;
    let domain: Domain = domain
        .parse()
        .map_err(|_| ApiError::NotFound(format!("no domain {}", shorten(&domain, 100))))?;
    let refresh = state
        .intake()
        .recrawl(client_address(&extensions), domain.as_str())
        .await?;
    let outcome = match refresh {
        Refresh::Due { .. } => "due",
        Refresh::Delisted(_) => "delisted",
    };
    Ok(see_other(&format!(
        "{}?recrawl={outcome}",
        domain_page_path(&domain)
    )))
}
