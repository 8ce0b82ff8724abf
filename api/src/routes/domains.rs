//! `GET /v1/domains` and `GET /v1/domains/{domain}`: crawl status and diagnostics per domain,
//! and the progress of the background crawl.
//!
//! The store's status counts every skill a domain published, and its errors and diagnostics
//! may concern records the caller may not see. The counts shown come from the index (which
//! only counts what the caller may see), and each error or diagnostic that concerns a record
//! (it names the record's id) is shown only when the access policy lets the caller see that
//! record; one whose record is no longer stored counts as private.

use std::collections::HashMap;

use axum::Json;
use axum::extract::State;
use formats::{Access, Domain, SkillId};
use indexer::{Caller, Filters, MAX_LIMIT, SearchRequest};
use store::DomainStatus;

use crate::auth::Auth;
use crate::cursor;
use crate::error::ApiError;
use crate::extract::{ApiPath, Params};
use crate::state::AppState;
use crate::wire::{CrawlErrorView, DiagnosticView, DomainDetail, DomainList, DomainSummary};

/// `GET /v1/domains?limit=&cursor=`.
pub(super) async fn list(
    State(state): State<AppState>,
    Auth(caller): Auth,
    params: Params,
) -> Result<Json<DomainList>, ApiError> {
    let limit = params.limit(MAX_LIMIT)?;
    let after = match params.one("cursor")? {
        Some(raw) => Some(cursor::decode("domains", raw)?),
        None => None,
    };
    let page = state
        .blocking(move |state| domain_page(state, caller, after.as_deref(), limit))
        .await?;
    Ok(Json(page))
}

/// Returns one page of domain summaries (blocking).
pub(crate) fn domain_page(
    state: &AppState,
    caller: Caller,
    after: Option<&str>,
    limit: usize,
) -> Result<DomainList, ApiError> {
    let after: Option<Domain> = match after {
        Some(after) => Some(after.parse().map_err(|_| {
            ApiError::InvalidCursor("the cursor does not name a domain".to_owned())
        })?),
        None => None,
    };
    // One page from the store, not every domain: the listing costs the same at a million
    // publishers as at ten.
    let mut page: Vec<DomainStatus> = state.store().domains_after(after.as_ref(), limit + 1)?;
    let next_cursor = if page.len() > limit {
        page.truncate(limit);
        page.last()
            .map(|status| cursor::encode("domains", status.domain.as_str()))
    } else {
        None
    };
    let domains: Vec<String> = page.iter().map(|s| s.domain.to_string()).collect();
    let counts = visible_counts(state, caller, domains)?;
    let mut summaries = Vec::with_capacity(page.len());
    for status in page {
        let skills = counts.get(status.domain.as_str()).copied().unwrap_or(0);
        let status = redact(state, caller, status)?;
        let errors = status.errors.len() + status.errors_omitted;
        summaries.push(DomainSummary {
            domain: status.domain,
            origin: status.origin,
            outcome: status.outcome,
            formats: status.formats,
            skills,
            requests: status.requests,
            errors,
            crawled_at: status.crawled_at,
            last_success: status.last_success,
        });
    }
    Ok(DomainList {
        domains: summaries,
        next_cursor,
        crawl: state.progress().view(),
    })
}

/// `GET /v1/domains/{domain}`.
pub(super) async fn one(
    State(state): State<AppState>,
    Auth(caller): Auth,
    ApiPath(domain): ApiPath<String>,
) -> Result<Json<DomainDetail>, ApiError> {
    let domain: Domain = domain
        .parse()
        .map_err(|_| ApiError::InvalidPath(format!("invalid domain {domain:?}")))?;
    let detail = state
        .blocking(move |state| domain_detail(state, caller, &domain))
        .await?;
    Ok(Json(detail))
}

/// Returns the status of one domain as `caller` may see it (blocking).
pub(crate) fn domain_detail(
    state: &AppState,
    caller: Caller,
    domain: &Domain,
) -> Result<DomainDetail, ApiError> {
    let Some(status) = state.store().domain(domain)? else {
        return Err(ApiError::NotFound(format!(
            "domain {domain} was never crawled"
        )));
    };
    let counts = visible_counts(state, caller, vec![domain.to_string()])?;
    let status = redact(state, caller, status)?;
    Ok(DomainDetail {
        skills: counts.get(domain.as_str()).copied().unwrap_or(0),
        domain: status.domain,
        origin: status.origin,
        outcome: status.outcome,
        formats: status.formats,
        indexes: status.indexes,
        requests: status.requests,
        errors: status.errors.iter().map(CrawlErrorView::from).collect(),
        errors_omitted: status.errors_omitted,
        diagnostics: status
            .diagnostics
            .iter()
            .map(DiagnosticView::from)
            .collect(),
        crawled_at: status.crawled_at,
        last_success: status.last_success,
        caching: status.caching,
        crawling: state.progress().view().running,
    })
}

/// Counts the records of each domain that `caller` may see, with one facet query.
fn visible_counts(
    state: &AppState,
    caller: Caller,
    domains: Vec<String>,
) -> Result<HashMap<String, u64>, ApiError> {
    if domains.is_empty() {
        return Ok(HashMap::new());
    }
    let request = SearchRequest {
        query: String::new(),
        // A publisher's count holds every skill it lists, invalid ones too (DESIGN.md §6).
        filters: Filters {
            domain: domains,
            verdict: vec![indexer::ANY_VERDICT.to_owned()],
            ..Filters::default()
        },
        limit: 0,
        offset: 0,
        caller,
    };
    let results = state.index().search(&request)?;
    Ok(results
        .facets
        .domain
        .0
        .into_iter()
        .filter(|(_, count)| *count > 0)
        .collect())
}

/// Removes the errors and diagnostics that concern a record the access policy does not let
/// `caller` see (blocking: reads the domain's records when some entry concerns one).
fn redact(
    state: &AppState,
    caller: Caller,
    mut status: DomainStatus,
) -> Result<DomainStatus, ApiError> {
    let concerns_a_record = status.errors.iter().any(|error| error.record.is_some())
        || status
            .diagnostics
            .iter()
            .any(|diagnostic| diagnostic.record.is_some());
    if !concerns_a_record {
        return Ok(status);
    }
    let mut access: HashMap<SkillId, Access> = HashMap::new();
    state
        .store()
        .visit_records_of(&status.domain, &mut |record| {
            access.insert(record.skill.id, record.skill.access);
        })?;
    let visible = |record: &Option<SkillId>| match record {
        None => true,
        Some(id) => {
            let level = access.get(id).copied().unwrap_or(Access::Private);
            state.may_see(caller, level)
        }
    };
    status.errors.retain(|error| visible(&error.record));
    status
        .diagnostics
        .retain(|diagnostic| visible(&diagnostic.record));
    Ok(status)
}
