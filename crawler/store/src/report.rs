//! The crawl report (`skillscout crawl --report FILE`, docs/crawl.md): per domain, how its
//! crawl ended and what went wrong; in total, what changed in the store.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize, Serializer};

use crate::types::{ApplyStats, CrawlErrorEntry, DomainStatus, Outcome};
use formats::skill::{Domain, Format};

/// One domain's line of the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DomainReport {
    /// The domain.
    pub domain: Domain,
    /// The origin crawled (with its path, for sites that publish under one).
    pub origin: String,
    /// How the crawl ended.
    pub outcome: Outcome,
    /// The formats found.
    pub formats: Vec<Format>,
    /// Live skills after the crawl.
    pub skills: usize,
    /// HTTP requests made for the domain, robots.txt included.
    pub requests: usize,
    /// What went wrong, each with a stable code and the URL it concerns.
    #[serde(serialize_with = "contract_errors")]
    pub errors: Vec<CrawlErrorEntry>,
    /// Errors past the per-domain cap, counted but not listed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub errors_omitted: usize,
    /// Records added, updated, removed (tombstoned) and seen unchanged.
    #[serde(flatten)]
    pub changes: ApplyStats,
}

impl DomainReport {
    /// Returns the report line of a domain's status and what storing it changed.
    pub fn new(status: &DomainStatus, changes: ApplyStats) -> DomainReport {
        DomainReport {
            domain: status.domain.clone(),
            origin: status.origin.clone(),
            outcome: status.outcome,
            formats: status.formats.clone(),
            skills: status.skills,
            requests: status.requests,
            errors: status.errors.clone(),
            errors_omitted: status.errors_omitted,
            changes,
        }
    }
}

/// Writes the errors in the report's shape, `{"code", "message", "url"}` (docs/crawl.md). The
/// record an error concerns is the API's to know (it hides errors about records a caller may
/// not see); the report is the operator's and keeps its documented shape.
fn contract_errors<S: Serializer>(
    errors: &[CrawlErrorEntry],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct ReportError<'a> {
        code: &'a str,
        message: &'a str,
        url: &'a str,
    }
    serializer.collect_seq(errors.iter().map(|error| ReportError {
        code: &error.code,
        message: &error.message,
        url: &error.url,
    }))
}

fn is_zero(value: &usize) -> bool {
    *value == 0
}

/// The sums over all domains.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    /// Domains crawled to the end.
    pub domains: usize,
    /// Live skills found.
    pub skills: usize,
    /// Records added.
    pub added: usize,
    /// Records updated.
    pub updated: usize,
    /// Records removed (tombstoned).
    pub removed: usize,
    /// Records seen unchanged.
    pub unchanged: usize,
    /// HTTP requests made.
    pub requests: usize,
    /// Error entries, listed or omitted.
    pub errors: usize,
    /// Origins named in what the crawl read that it added to the frontier as `discovered`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub discovered: usize,
    /// Discovered domains this crawl went on to probe.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub discovered_probed: usize,
    /// Probed discovered domains that publish skills (an index was read).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub discovered_publishing: usize,
}

/// The whole report.
///
/// A crawl of many domains need not keep every line: it can hand each line to whoever writes
/// the report as it is stored, and keep only the sums ([`CrawlReport::add`] with `keep`
/// false), so that its memory does not grow with the number of domains.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CrawlReport {
    /// One line per domain crawled to the end, in seed order (empty when the lines were
    /// handed out as they were stored instead).
    pub domains: Vec<DomainReport>,
    /// The sums.
    pub totals: Totals,
    /// True when the crawl was stopped (Ctrl-C) before every domain was done; the domains
    /// listed were crawled to the end and stored.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// How many domains ended with each outcome, kept or not.
    #[serde(skip)]
    outcomes: BTreeMap<Outcome, usize>,
}

impl CrawlReport {
    /// Builds the report from domain lines, computing the totals.
    pub fn new(domains: Vec<DomainReport>, interrupted: bool) -> CrawlReport {
        let mut report = CrawlReport {
            interrupted,
            ..CrawlReport::default()
        };
        for domain in domains {
            report.add(domain, true);
        }
        report
    }

    /// Counts one domain's line into the sums, and keeps the line when `keep` is true.
    pub fn add(&mut self, domain: DomainReport, keep: bool) {
        let totals = &mut self.totals;
        totals.domains += 1;
        totals.skills += domain.skills;
        totals.added += domain.changes.added;
        totals.updated += domain.changes.updated;
        totals.removed += domain.changes.removed;
        totals.unchanged += domain.changes.unchanged;
        totals.requests += domain.requests;
        totals.errors += domain.errors.len() + domain.errors_omitted;
        *self.outcomes.entry(domain.outcome).or_default() += 1;
        if keep {
            self.domains.push(domain);
        }
    }

    /// Returns how many domains ended with `outcome`.
    pub fn count(&self, outcome: Outcome) -> usize {
        self.outcomes.get(&outcome).copied().unwrap_or(0)
    }
}
