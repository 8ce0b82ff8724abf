//! A domain's answer: its crawl status and diagnostics, its publisher health report, and its
//! skills, as a caller may see them; and the domains a page at a time.
//!
//! The store's status counts every skill a domain published, and its errors and diagnostics
//! may concern records the caller may not see. The counts shown come from the index (which
//! only counts what the caller may see), and each error or diagnostic that concerns a record
//! (it names the record's id) is shown only when the access policy lets the caller see that
//! record; one whose record is no longer stored counts as private. The health report is made
//! of the same facts ([`health_of`]), so it says nothing of what the caller may not see.
//!
//! The frontier's view of a domain (its state, when it is crawled next, its interval, how it
//! came to be crawled) comes with the status. A delisted domain has neither status nor
//! records: its answer is a 404, as for a domain never crawled.

use std::collections::HashMap;

use formats::health::{self, Caching, Health, Reach, Site, SiteError};
use formats::{Access, Domain, Skill, SkillId};
use indexer::{Caller, Filters, SearchRequest};
use store::{DomainStatus, Outcome};

use super::Directory;
use super::skills::mirrored;
use crate::cursor;
use crate::error::ApiError;
use crate::wire::{
    CrawlErrorView, DiagnosticView, DomainDetail, DomainList, DomainSummary, FrontierView,
    HealthView,
};

/// Everything a domain's page and `/v1/domains/{domain}` show.
#[derive(Debug)]
pub(crate) struct DomainAnswer {
    /// The status, as `/v1/domains/{domain}` sends it (health included).
    pub(crate) detail: DomainDetail,
    /// The publisher health report.
    pub(crate) health: Health,
    /// The records of the domain the caller may see, without their bodies, frontmatter and
    /// files (a domain may hold thousands of large skills).
    pub(crate) skills: Vec<Skill>,
    /// How many of them the directory's mirror re-publishes.
    pub(crate) mirrored: usize,
}

/// Returns the health report of a domain from its crawl status and its records: the one way
/// a stored (or just crawled) status becomes what [`formats::health`] reads, for the
/// directory's answers and for `skillscout validate URL` alike.
pub fn health_of(status: &DomainStatus, skills: &[Skill]) -> Health {
    let reach = match status.outcome {
        Outcome::Disallowed => Reach::Disallowed,
        Outcome::Unreachable => Reach::Unreachable,
        Outcome::Ok | Outcome::NotFound | Outcome::Error => Reach::Answered,
    };
    let site = Site {
        origin: status.origin.clone(),
        reach,
        over_http: true,
        formats: status.formats.clone(),
        indexes: status.indexes.clone(),
        errors: status
            .errors
            .iter()
            .map(|error| SiteError {
                code: error.code.clone(),
                message: error.message.clone(),
                url: error.url.clone(),
            })
            .collect(),
        diagnostics: status.diagnostics.clone(),
        caching: status.caching.map(|caching| Caching {
            validator: caching.validator,
            freshness: caching.freshness,
        }),
        skills,
    };
    health::report(&site)
}

impl Directory {
    /// Returns one page of domain summaries (blocking).
    pub(crate) fn domains(
        &self,
        caller: Caller,
        after: Option<&str>,
        limit: usize,
    ) -> Result<DomainList, ApiError> {
        domain_page(self, caller, after, limit)
    }

    /// Returns the answer about one domain as `caller` may see it (blocking).
    pub(crate) fn domain(&self, caller: Caller, domain: &Domain) -> Result<DomainAnswer, ApiError> {
        let Some(status) = self.store().domain(domain)? else {
            return Err(ApiError::NotFound(format!(
                "domain {domain} was never crawled"
            )));
        };
        let counts = visible_counts(self, caller, vec![domain.to_string()])?;
        let status = redact(self, caller, status)?;
        let (skills, mirrored) = self.visible_skills_of(caller, domain)?;
        let health = health_of(&status, &skills);
        let detail = DomainDetail {
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
            crawling: self.progress().view().running,
            frontier: FrontierView::from(self.store().entry(domain.as_str())?.as_ref()),
            health: HealthView::from(&health),
        };
        Ok(DomainAnswer {
            detail,
            mirrored,
            health,
            skills,
        })
    }

    /// The records of `domain` the caller may see, one at a time from the store, kept without
    /// their body, frontmatter and files, which no domain answer reads, and how many of them
    /// the mirror lists (blocking).
    fn visible_skills_of(
        &self,
        caller: Caller,
        domain: &Domain,
    ) -> Result<(Vec<Skill>, usize), ApiError> {
        let mut skills = Vec::new();
        let mut mirrored_count = 0;
        self.store().visit_records_of(domain, &mut |stored| {
            if stored.removed_at.is_none() && self.may_see(caller, stored.skill.access) {
                let mut skill = stored.skill;
                // Whether the mirror lists it depends on its files: counted before they go.
                if mirrored(&skill) {
                    mirrored_count += 1;
                }
                skill.body = String::new();
                skill.frontmatter = serde_json::Map::new();
                skill.files = Vec::new();
                skills.push(skill);
            }
        })?;
        Ok((skills, mirrored_count))
    }

    /// Returns the health score of each domain of a page, as its answer gives it (blocking:
    /// reads each domain's records).
    pub(crate) fn scores(&self, caller: Caller, page: &DomainList) -> Result<Vec<u32>, ApiError> {
        let mut scores = Vec::with_capacity(page.domains.len());
        for summary in &page.domains {
            scores.push(self.domain(caller, &summary.domain)?.health.score);
        }
        Ok(scores)
    }
}

/// Returns one page of domain summaries (blocking).
fn domain_page(
    directory: &Directory,
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
    let mut page: Vec<DomainStatus> = directory.store().domains_after(after.as_ref(), limit + 1)?;
    let next_cursor = if page.len() > limit {
        page.truncate(limit);
        page.last()
            .map(|status| cursor::encode("domains", status.domain.as_str()))
    } else {
        None
    };
    let domains: Vec<String> = page.iter().map(|s| s.domain.to_string()).collect();
    let counts = visible_counts(directory, caller, domains)?;
    let mut summaries = Vec::with_capacity(page.len());
    for status in page {
        let skills = counts.get(status.domain.as_str()).copied().unwrap_or(0);
        let status = redact(directory, caller, status)?;
        let errors = status.errors.len() + status.errors_omitted;
        let frontier =
            FrontierView::from(directory.store().entry(status.domain.as_str())?.as_ref());
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
            frontier,
        });
    }
    Ok(DomainList {
        domains: summaries,
        next_cursor,
        crawl: directory.progress().view(),
    })
}

/// Counts the records of each domain that `caller` may see, with one facet query.
fn visible_counts(
    directory: &Directory,
    caller: Caller,
    domains: Vec<String>,
) -> Result<HashMap<String, u64>, ApiError> {
    if domains.is_empty() {
        return Ok(HashMap::new());
    }
    let request = SearchRequest {
        query: String::new(),
        // A publisher's count holds every skill it lists, invalid and critical ones too
        // (docs/api.md).
        filters: Filters {
            domain: domains,
            verdict: vec![indexer::ANY_VERDICT.to_owned()],
            risk: vec![indexer::ANY_RISK.to_owned()],
            ..Filters::default()
        },
        limit: 0,
        offset: 0,
        caller,
        // Each copy is its publisher's skill.
        fold: false,
    };
    let results = directory.index().search(&request)?;
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
    directory: &Directory,
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
    directory
        .store()
        .visit_records_of(&status.domain, &mut |record| {
            access.insert(record.skill.id, record.skill.access);
        })?;
    let visible = |record: &Option<SkillId>| match record {
        None => true,
        Some(id) => {
            let level = access.get(id).copied().unwrap_or(Access::Private);
            directory.may_see(caller, level)
        }
    };
    status.errors.retain(|error| visible(&error.record));
    status
        .diagnostics
        .retain(|diagnostic| visible(&diagnostic.record));
    Ok(status)
}
