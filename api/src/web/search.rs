//! `GET /?q=…`: the search page. It takes the parameters of `/v1/search` (docs/api.md) and
//! shows the same results: hits with badges and highlighted snippets (one per cluster of
//! copies, with how many other places publish it), facets as links that add or remove a
//! filter (each with its count), and pages. The script swaps the `#results`
//! element as the query is typed; without it, the form and the links are plain GET requests.

use std::collections::HashMap;

use axum::extract::State;
use axum::http::header::LOCATION;
use axum::http::{HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use formats::audit::Risk;
use formats::{Skill, Verdict};
use indexer::{FacetCounts, Filters, SearchHit, SearchRequest, SearchResults};
use maud::{Markup, html};
use url::form_urlencoded;

use super::html::{self, Layout, badge, labelled_badge};
use super::{Page, WebError, audit};
use crate::auth::Auth;
use crate::directory::urls::{domain_page_path, skill_page_path};
use crate::error::{ApiError, shorten};
use crate::extract::Params;
use crate::state::AppState;

/// The filters of the search page, in the order the facets are shown: the parameter, its
/// heading.
const FILTERS: [(&str, &str); 8] = [
    ("type", "Type"),
    ("access", "Access"),
    ("verdict", "Verdict"),
    ("risk", "Risk"),
    ("domain", "Publisher"),
    ("format", "Format"),
    ("license", "License"),
    ("tag", "Tag"),
];

/// How many values of a facet are shown, unless the page is asked for more.
const FACET_VALUES: usize = 12;
/// The page's own parameter (not one of `/v1/search`): the facets to show whole.
const MORE: &str = "more";

/// `GET /search?…`: the search page is `/?…`, so a guessed `/search` link is sent there
/// with its parameters, permanently.
pub(crate) async fn search_redirect(uri: Uri) -> Response {
    let location = match uri.query() {
        Some(query) if !query.is_empty() => format!("/?{query}"),
        _ => "/".to_owned(),
    };
    let location = HeaderValue::from_str(&location).unwrap_or(HeaderValue::from_static("/"));
    (StatusCode::PERMANENT_REDIRECT, [(LOCATION, location)]).into_response()
}

/// `GET /`: the search page.
pub(crate) async fn home(
    State(state): State<AppState>,
    auth: Result<Auth, ApiError>,
    params: Result<Params, ApiError>,
) -> Result<Page, WebError> {
    let (Auth(caller), params) = (auth?, params?);
    let request = params.search_request(caller)?;
    // The hits do not carry a verdict or a licence: the page's records do.
    let (results, records) = {
        let request = request.clone();
        state
            .directory()
            .ask(move |directory| directory.search_with_records(&request))
            .await?
    };
    let title = if request.query.is_empty() {
        "Agent skills".to_owned()
    } else {
        format!("{} – search", shorten(&request.query, 60))
    };
    let keep: Vec<(String, String)> = params
        .pairs()
        .iter()
        .filter(|(key, _)| key != "q" && key != "offset")
        .cloned()
        .collect();
    let layout = Layout {
        site: &state.config().name,
        title: &title,
        section: "search",
        query: &request.query,
        keep: &keep,
    };
    let body = results_body(&params, &request, &results, &records);
    Ok(Page::ok(html::page(&layout, body)))
}

/// Returns `/?…` with the current parameters, `name=value` toggled, and the offset reset.
fn toggle_link(params: &Params, name: &str, value: &str) -> String {
    let mut serializer = form_urlencoded::Serializer::new(String::new());
    let mut present = false;
    for (key, current) in params.pairs() {
        if key == "offset" {
            continue;
        }
        if key == name {
            let kept: Vec<&str> = current
                .split(',')
                .map(str::trim)
                .filter(|part| {
                    let same = part.eq_ignore_ascii_case(value);
                    present |= same;
                    !same && !part.is_empty()
                })
                .collect();
            if !kept.is_empty() {
                serializer.append_pair(key, &kept.join(","));
            }
            continue;
        }
        serializer.append_pair(key, current);
    }
    if !present {
        serializer.append_pair(name, value);
    }
    search_link(serializer.finish())
}

/// Returns the search page's path with `query` (`/` for none).
fn search_link(query: String) -> String {
    if query.is_empty() {
        "/".to_owned()
    } else {
        format!("/?{query}")
    }
}

/// Returns `/?…` with the current parameters and another offset.
fn offset_link(params: &Params, offset: usize) -> String {
    let mut serializer = form_urlencoded::Serializer::new(String::new());
    for (key, value) in params.pairs() {
        if key != "offset" {
            serializer.append_pair(key, value);
        }
    }
    if offset > 0 {
        serializer.append_pair("offset", &offset.to_string());
    }
    search_link(serializer.finish())
}

/// Returns `/?…` with only the query kept.
fn query_only_link(query: &str) -> String {
    if query.is_empty() {
        return "/".to_owned();
    }
    let mut serializer = form_urlencoded::Serializer::new(String::new());
    serializer.append_pair("q", query);
    format!("/?{}", serializer.finish())
}

/// Returns the values of the filter `name` that the request sets, lowercased.
fn active(filters: &Filters, name: &str) -> Vec<String> {
    let values = match name {
        "type" => &filters.capability_type,
        "access" => &filters.access,
        "verdict" => &filters.verdict,
        "risk" => &filters.risk,
        "domain" => &filters.domain,
        "format" => &filters.format,
        "tag" => &filters.tag,
        _ => &filters.license,
    };
    values
        .iter()
        .flat_map(|value| value.split(','))
        .map(|value| value.trim().to_lowercase())
        .filter(|value| !value.is_empty())
        .collect()
}

/// Returns the counts of the facet `name`.
fn counts<'a>(results: &'a SearchResults, name: &str) -> Option<&'a FacetCounts> {
    let facets = &results.facets;
    Some(match name {
        "type" => &facets.capability_type,
        "access" => &facets.access,
        "verdict" => &facets.verdict,
        "risk" => &facets.risk,
        "domain" => &facets.domain,
        "format" => &facets.format,
        "tag" => &facets.tag,
        "license" => &facets.license,
        _ => return None,
    })
}

fn results_body(
    params: &Params,
    request: &SearchRequest,
    results: &SearchResults,
    records: &HashMap<String, Skill>,
) -> Markup {
    let mut chips = Vec::new();
    for (name, label) in FILTERS {
        for value in active(&request.filters, name) {
            chips.push((label, toggle_link(params, name, &value), value));
        }
    }
    let first = request.offset + 1;
    let last = request.offset + results.hits.len();
    let total = results.total;
    let more = (request.offset + results.hits.len()) < total as usize
        && request.offset + request.limit <= indexer::MAX_OFFSET;
    let page_number = request.offset / request.limit.max(1) + 1;
    let pages = (total as usize).div_ceil(request.limit.max(1)).max(1);
    html! {
        p #live-status .visually-hidden role="status" aria-live="polite" {}
        div #results .layout {
            aside #filters .facets aria-label="Filters" {
                @for (name, label) in FILTERS {
                    (facet(params, request, results, name, label))
                }
            }
            section aria-label="Results" {
                @if !chips.is_empty() {
                    div.chips {
                        @for (label, href, value) in &chips {
                            a.chip href=(href) data-live {
                                (label) ": " (value) " ✕"
                                span.visually-hidden { " (remove this filter)" }
                            }
                        }
                    }
                }
                p.summary {
                    (total) " skill" @if total != 1 { "s" }
                    @if !request.query.is_empty() { " for “" (shorten(&request.query, 80)) "”" }
                    @if !results.hits.is_empty() { " · showing " (first) "–" (last) }
                }
                // On a phone the facets follow the results.
                a.to-filters href="#filters" { "Filters ↓" }
                @if results.hits.is_empty() {
                    (empty_state(params, request, &chips))
                }
                @for hit in &results.hits {
                    (hit_card(hit, records.get(&hit.id.to_string())))
                }
                @if request.offset > 0 || more {
                    nav.pages aria-label="Pages" {
                        @if request.offset > 0 {
                            a href=(offset_link(params, request.offset.saturating_sub(request.limit))) rel="prev" data-live { "← Previous" }
                        }
                        span.muted { "Page " (page_number) " of " (pages) }
                        @if more {
                            a href=(offset_link(params, request.offset + request.limit)) rel="next" data-live { "Next →" }
                        }
                    }
                }
            }
        }
    }
}

fn empty_state(
    params: &Params,
    request: &SearchRequest,
    chips: &[(&str, String, String)],
) -> Markup {
    let include_invalid = toggle_link(params, "verdict", indexer::ANY_VERDICT);
    let include_critical = toggle_link(params, "risk", indexer::ANY_RISK);
    html! {
        div.card {
            h2 { "No skill matches" }
            ul {
                @if !chips.is_empty() {
                    li { a href=(query_only_link(&request.query)) data-live { "Remove every filter" } " and search again." }
                }
                @if !request.query.is_empty() {
                    li { "Try fewer or other words; matches are on whole words and their stems." }
                    li { a href="/" data-live { "Browse every skill" } "." }
                }
                @if request.filters.verdict.is_empty() {
                    li { "Skills that are not installable (verdict " code { "invalid" } ") are left out; "
                        a href=(include_invalid) data-live { "include them" } "." }
                }
                @if request.filters.risk.is_empty() {
                    li { "Skills the safety audit finds " code { "critical" } " are left out; "
                        a href=(include_critical) data-live { "include them" } "." }
                }
            }
        }
    }
}

fn facet(
    params: &Params,
    request: &SearchRequest,
    results: &SearchResults,
    name: &str,
    label: &str,
) -> Markup {
    let on = active(&request.filters, name);
    let whole = params
        .pairs()
        .iter()
        .any(|(key, value)| key == MORE && value.split(',').any(|facet| facet == name));
    let shown = if whole { usize::MAX } else { FACET_VALUES };
    let hidden = counts(results, name).map_or(0, |counts| counts.0.len().saturating_sub(shown));
    let values: Vec<(String, Option<u64>)> = match counts(results, name) {
        Some(counts) => {
            let mut values: Vec<(String, Option<u64>)> = counts
                .0
                .iter()
                .take(shown)
                .map(|(value, count)| (value.clone(), Some(*count)))
                .collect();
            for value in &on {
                if !values.iter().any(|(shown, _)| shown == value) {
                    values.push((value.clone(), Some(counts.get(value))));
                }
            }
            values
        }
        None => on.iter().map(|value| (value.clone(), None)).collect(),
    };
    if values.is_empty() {
        return html! {};
    }
    html! {
        h2 id={ "facet-" (name) } { (label) }
        ul aria-labelledby={ "facet-" (name) } {
            @for (value, count) in &values {
                @let pressed = on.contains(value);
                li {
                    a href=(toggle_link(params, name, value)) aria-current=[pressed.then_some("true")] data-live {
                        span {
                            (value)
                            @if pressed { span.visually-hidden { " (filtering; select to remove)" } }
                        }
                        @if let Some(count) = count { span.count { (count) } }
                    }
                }
            }
            @if hidden > 0 {
                li.more { a href=(toggle_link(params, MORE, name)) data-live { (hidden) " more" } }
            } @else if whole && counts(results, name).is_some_and(|counts| counts.0.len() > FACET_VALUES) {
                li.more { a href=(toggle_link(params, MORE, name)) data-live { "Fewer" } }
            }
        }
    }
}

fn hit_card(hit: &SearchHit, record: Option<&Skill>) -> Markup {
    let href = skill_page_path(&hit.domain, &hit.name);
    let verdict = record.map(Skill::verdict);
    let description = shorten(&hit.description, 240);
    let snippet = hit.snippet.has_marks().then(|| html::marked(&hit.snippet));
    // A snippet cut from the description replaces it; one from the body is shown below it.
    let snippet_in_description = hit
        .snippet
        .text
        .trim_matches(|c: char| c == '…' || c.is_whitespace())
        .split(' ')
        .take(4)
        .collect::<Vec<_>>()
        .join(" ");
    let from_description = hit.description.contains(&snippet_in_description);
    html! {
        article.hit {
            h2 { a href=(href) { (hit.title) } }
            div.by {
                "by " a href=(domain_page_path(&hit.domain)) { (hit.domain.as_str()) }
                " · " span.id { (hit.name.as_str()) }
                @if hit.copies > 0 {
                    " · " a href={ (href) "#copies" } {
                        "also published at " (hit.copies) " other origin" @if hit.copies != 1 { "s" }
                    }
                }
            }
            @match (&snippet, from_description) {
                (Some(snippet), true) => p { (html::trusted(snippet.clone())) },
                (Some(snippet), false) => {
                    p { (description) }
                    p.muted { (html::trusted(snippet.clone())) }
                }
                (None, _) => p { (description) },
            }
            div.badges {
                (labelled_badge("type", "", &hit.capability_type))
                (labelled_badge("access", hit.access.as_str(), hit.access.as_str()))
                @if let Some(verdict) = verdict {
                    (labelled_badge("verdict", verdict_name(verdict), verdict_name(verdict)))
                }
                @if let Some(record) = record.filter(|record| record.risk != Risk::None) {
                    (audit::risk_badge(record.risk))
                }
                (labelled_badge("format", "", hit.format.as_str()))
                @if let Some(version) = &hit.version { (badge("", &format!("v{}", shorten(version, 20)))) }
                @if let Some(license) = record.and_then(|record| record.license.as_deref()) {
                    (labelled_badge("license", "", &shorten(license, 30)))
                }
            }
        }
    }
}

/// Returns the name of a verdict, as the API spells it.
pub(crate) fn verdict_name(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Valid => "valid",
        Verdict::Lenient => "lenient",
        Verdict::Invalid => "invalid",
    }
}

#[cfg(test)]
mod tests {
    use indexer::{Caller, Facets};

    use super::*;

    /// A search answer whose publisher facet has `domains` values.
    fn results_with_publishers(domains: usize) -> SearchResults {
        let facets = Facets {
            domain: FacetCounts(
                (0..domains)
                    .map(|n| (format!("publisher-{n:02}.test"), 100 - n as u64))
                    .collect(),
            ),
            ..Facets::default()
        };
        SearchResults {
            query: String::new(),
            total: 0,
            hits: Vec::new(),
            facets,
            took_ms: 0,
        }
    }

    #[test]
    fn a_facet_with_more_values_than_it_shows_links_to_the_rest() {
        let results = results_with_publishers(24);
        let params = Params::parse("q=pdf").unwrap();
        let request = params.search_request(Caller::Anonymous).unwrap();
        let html = facet(&params, &request, &results, "domain", "Publisher").into_string();
        assert_eq!(html.matches("class=\"count\"").count(), FACET_VALUES);
        assert!(html.contains("href=\"/?q=pdf&amp;more=domain\""), "{html}");
        assert!(html.contains("12 more"), "{html}");

        let params = Params::parse("q=pdf&more=domain").unwrap();
        let html = facet(&params, &request, &results, "domain", "Publisher").into_string();
        assert_eq!(html.matches("class=\"count\"").count(), 24);
        assert!(html.contains(">Fewer<"), "{html}");
        assert!(html.contains("href=\"/?q=pdf\""), "{html}");

        let few = results_with_publishers(5);
        let html = facet(&params, &request, &few, "domain", "Publisher").into_string();
        assert!(!html.contains("class=\"more\""), "{html}");
    }

    #[test]
    fn facet_links_toggle_values_and_reset_the_offset() {
        let params = Params::parse("q=pdf&type=api,task&offset=20").unwrap();
        assert_eq!(toggle_link(&params, "type", "api"), "/?q=pdf&type=task");
        assert_eq!(
            toggle_link(&params, "type", "plugin"),
            "/?q=pdf&type=api%2Ctask&type=plugin"
        );
        assert_eq!(
            toggle_link(&params, "access", "public"),
            "/?q=pdf&type=api%2Ctask&access=public"
        );
        assert_eq!(
            offset_link(&params, 40),
            "/?q=pdf&type=api%2Ctask&offset=40"
        );
        assert_eq!(offset_link(&params, 0), "/?q=pdf&type=api%2Ctask");
        assert_eq!(query_only_link("a b"), "/?q=a+b");
        let one = Params::parse("type=api").unwrap();
        assert_eq!(toggle_link(&one, "type", "api"), "/");
    }
}
