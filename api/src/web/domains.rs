//! `GET /domains?sort=&cursor=`: the publishers, with their score, skill count and last
//! crawl; sortable by any of them.
//!
//! Pages hold up to 100 publishers in domain order (the store's order); `sort` orders the
//! page shown. A publisher's score is computed as on its page, from its status and records.

use axum::extract::State;
use maud::{Markup, html};

use super::html::{self, badge};
use super::publisher::outcome_name;
use super::{Page, WebError, layout};
use crate::auth::Auth;
use crate::directory::urls::domain_page_path;
use crate::error::ApiError;
use crate::extract::Params;
use crate::state::AppState;
use crate::wire::rfc3339;

/// Publishers per page.
const PAGE: usize = 100;

/// The orders `/domains` offers: the parameter value and the column heading.
const SORTS: [(&str, &str); 5] = [
    ("domain", "Publisher"),
    ("score", "Score"),
    ("skills", "Skills"),
    ("crawled", "Last crawl"),
    ("errors", "Errors"),
];

struct Row {
    domain: formats::Domain,
    outcome: store::Outcome,
    score: u32,
    skills: u64,
    crawled_at: time::OffsetDateTime,
    errors: usize,
}

/// `GET /domains`: every crawled domain.
pub(crate) async fn domains(
    State(state): State<AppState>,
    auth: Result<Auth, ApiError>,
    params: Result<Params, ApiError>,
) -> Result<Page, WebError> {
    let (Auth(caller), params) = (auth?, params?);
    let after = match params.one("cursor")? {
        Some(raw) => Some(crate::cursor::decode("domains", raw)?),
        None => None,
    };
    let sort = match params.one("sort")? {
        None => "domain",
        Some(sort) => SORTS
            .iter()
            .map(|(name, _)| *name)
            .find(|name| *name == sort)
            .ok_or_else(|| {
                ApiError::parameter(
                    "sort",
                    "sort must be one of domain, score, skills, crawled, errors",
                )
            })?,
    };
    let (list, mut rows) = state
        .directory()
        .ask(move |directory| {
            let list = directory.domains(caller, after.as_deref(), PAGE)?;
            let scores = directory.scores(caller, &list)?;
            let mut rows = Vec::with_capacity(list.domains.len());
            for (summary, score) in list.domains.iter().zip(scores) {
                rows.push(Row {
                    score,
                    domain: summary.domain.clone(),
                    outcome: summary.outcome,
                    skills: summary.skills,
                    crawled_at: summary.crawled_at,
                    errors: summary.errors,
                });
            }
            Ok((list, rows))
        })
        .await?;
    match sort {
        "score" => rows.sort_by(|a, b| {
            b.score
                .cmp(&a.score)
                .then(a.domain.as_str().cmp(b.domain.as_str()))
        }),
        "errors" => rows.sort_by(|a, b| {
            b.errors
                .cmp(&a.errors)
                .then(a.domain.as_str().cmp(b.domain.as_str()))
        }),
        "skills" => rows.sort_by(|a, b| {
            b.skills
                .cmp(&a.skills)
                .then(a.domain.as_str().cmp(b.domain.as_str()))
        }),
        "crawled" => rows.sort_by_key(|row| std::cmp::Reverse(row.crawled_at)),
        _ => {}
    }
    let crawl = &list.crawl;
    let crawl_note = match (&crawl.current, &crawl.last) {
        (Some(run), _) => format!(
            "Crawling: {} of {} domains done (started {}).",
            run.domains_done,
            run.domains_total,
            rfc3339(run.started_at)
        ),
        (None, Some(run)) => {
            let totals = run.totals.unwrap_or_default();
            format!(
                "Last crawl: {} domains, {} skills ({} added, {} updated, {} removed), {} errors; finished {}.",
                totals.domains,
                totals.skills,
                totals.added,
                totals.updated,
                totals.removed,
                totals.errors,
                run.finished_at.map(rfc3339).unwrap_or_default()
            )
        }
        (None, None) if crawl.enabled => "No crawl has finished yet.".to_owned(),
        (None, None) => {
            "This server does not crawl; it serves what `skillscout crawl` stored.".to_owned()
        }
    };
    let body = html! {
        h1 { "Publishers" }
        p.muted { (html::prose(&crawl_note)) }
        (super::publish::add_site_form(crawl.enabled))
        (table(&rows, sort))
        @if rows.is_empty() { p.muted { "No domain was crawled yet." } }
        @if let Some(next) = &list.next_cursor {
            nav.pages aria-label="Pages" { a href={ "/domains?sort=" (sort) "&cursor=" (next) } { "Next →" } }
        }
    };
    Ok(Page::ok(html::page(
        &layout(&state, "Publishers", "domains"),
        body,
    )))
}

fn table(rows: &[Row], sort: &str) -> Markup {
    html! {
        div.table-wrap {
            table {
                caption { "Sorted by " (SORTS.iter().find(|(name, _)| *name == sort).map_or("publisher", |(_, label)| label).to_lowercase()) "; select a heading to sort by it." }
                thead {
                    tr {
                        @for (name, label) in SORTS {
                            th scope="col" aria-sort=[(name == sort).then_some(if name == "domain" { "ascending" } else { "descending" })] {
                                a href={ "/domains?sort=" (name) } {
                                    (label)
                                    @if name == sort { span aria-hidden="true" { @if name == "domain" { " ▲" } @else { " ▼" } } }
                                }
                            }
                        }
                        th scope="col" { "Crawl" }
                    }
                }
                tbody {
                    @for row in rows {
                        @let outcome = outcome_name(row.outcome);
                        tr {
                            td { a href=(domain_page_path(&row.domain)) { (row.domain.as_str()) } }
                            td { (row.score) }
                            td { (row.skills) }
                            td { (html::time(row.crawled_at)) }
                            td.errors { (row.errors) }
                            td { (badge(outcome, outcome)) }
                        }
                    }
                }
            }
        }
    }
}
