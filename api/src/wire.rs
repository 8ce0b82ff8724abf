//! Wire types: the bodies the JSON endpoints send, built from the index's answers, the stored
//! record and the crawl store's types.
//!
//! The field names here are the HTTP contract (docs/record.md and docs/api.md), and they are spelled out
//! here rather than borrowed from `formats`, `store` or `indexer`, so that renaming a field of
//! a stored type does not silently change what clients get: the conversion stops compiling,
//! and the contract snapshots (`api/tests/api/snapshots`) check the result. Values of the
//! closed vocabularies (`access`, `format`, `outcome`, diagnostic `code`s, …) keep their own
//! serialisation, whose snake_case names are documented contracts of their types.

use formats::audit::{Finding, Risk, Rule, Severity as FindingSeverity};
use formats::diagnostic::{Code, Severity};
use formats::health::{Check, ClientReport, Flagged, Health, Refusal, RiskCounts};
use formats::skill::{Artifact, DigestStatus, FileEntry};
use formats::{Access, Diagnostic, Digest, Domain, Format, Skill, SkillId, Slug, Verdict};
use indexer::{FacetCounts, Facets, SearchHit, SearchResults};
use std::collections::BTreeMap;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};
use store::{CachingHeaders, CrawlErrorEntry, Outcome, Totals};
use time::OffsetDateTime;
use url::Url;
use utoipa::ToSchema;

use crate::markup;
use crate::openapi::schemas;
use crate::progress::CrawlView;

mod publish;

pub(crate) use publish::{
    PingAnswer, PingBody, PingStatus, RefreshView, SubmitAnswer, SubmitBody, SubmitPending,
    SubmitState,
};

/// Returns a time as RFC 3339 text, as every JSON body and page writes times.
pub(crate) fn rfc3339(at: OffsetDateTime) -> String {
    at.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// The `GET /v1/search` body (docs/api.md); `skillscout search --json` prints it too.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SearchBody {
    pub(crate) query: String,
    pub(crate) total: u64,
    pub(crate) hits: Vec<HitView>,
    pub(crate) facets: FacetsView,
    pub(crate) took_ms: u64,
}

impl From<SearchResults> for SearchBody {
    fn from(results: SearchResults) -> SearchBody {
        SearchBody {
            query: results.query,
            total: results.total,
            hits: results.hits.into_iter().map(HitView::from).collect(),
            facets: FacetsView::from(results.facets),
            took_ms: results.took_ms,
        }
    }
}

/// One search hit.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct HitView {
    #[schema(schema_with = schemas::skill_id)]
    id: SkillId,
    #[schema(schema_with = schemas::domain)]
    domain: Domain,
    #[schema(schema_with = schemas::slug)]
    name: Slug,
    title: String,
    description: String,
    capability_type: String,
    #[schema(schema_with = schemas::access)]
    access: Access,
    #[schema(schema_with = schemas::format)]
    format: Format,
    version: Option<String>,
    source_url: Url,
    score: f32,
    /// HTML: the extract escaped, with the matched words in `<mark>` elements.
    snippet: String,
    /// How many other copies of this skill (the same content, published elsewhere) the
    /// caller may see; the record's `also_at` lists them.
    also_at_count: usize,
}

impl From<SearchHit> for HitView {
    fn from(hit: SearchHit) -> HitView {
        HitView {
            snippet: markup::marked(&hit.snippet),
            id: hit.id,
            domain: hit.domain,
            name: hit.name,
            title: hit.title,
            description: hit.description,
            capability_type: hit.capability_type,
            access: hit.access,
            format: hit.format,
            version: hit.version,
            source_url: hit.source_url,
            score: hit.score,
            also_at_count: hit.copies,
        }
    }
}

/// Facet counts per dimension.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct FacetsView {
    capability_type: Counts,
    access: Counts,
    domain: Counts,
    format: Counts,
    tag: Counts,
    verdict: Counts,
    license: Counts,
    risk: Counts,
}

impl From<Facets> for FacetsView {
    fn from(facets: Facets) -> FacetsView {
        FacetsView {
            capability_type: Counts::from(facets.capability_type),
            access: Counts::from(facets.access),
            domain: Counts::from(facets.domain),
            format: Counts::from(facets.format),
            tag: Counts::from(facets.tag),
            verdict: Counts::from(facets.verdict),
            license: Counts::from(facets.license),
            risk: Counts::from(facets.risk),
        }
    }
}

/// Values and their counts, most frequent first, as one JSON object `{value: count}`.
#[derive(Debug, Clone)]
pub(crate) struct Counts(Vec<(String, u64)>);

impl From<FacetCounts> for Counts {
    fn from(counts: FacetCounts) -> Counts {
        Counts(counts.0)
    }
}

impl utoipa::PartialSchema for Counts {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        schemas::counts().into()
    }
}

impl ToSchema for Counts {}

impl Serialize for Counts {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (value, count) in &self.0 {
            map.serialize_entry(value, count)?;
        }
        map.end()
    }
}

/// The canonical record (docs/record.md), as `GET /v1/skills/{domain}/{name}` and
/// `/v1/changes` send it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct RecordView {
    #[schema(schema_with = schemas::skill_id)]
    id: SkillId,
    #[schema(schema_with = schemas::domain)]
    domain: Domain,
    #[schema(schema_with = schemas::format)]
    format: Format,
    #[schema(schema_with = schemas::slug)]
    name: Slug,
    title: String,
    description: String,
    capability_type: String,
    #[schema(schema_with = schemas::access)]
    access: Access,
    version: Option<String>,
    source_url: Url,
    index_url: Url,
    #[schema(schema_with = schemas::artifact)]
    artifact: Artifact,
    #[schema(schema_with = schemas::optional_digest)]
    digest: Option<Digest>,
    #[schema(schema_with = schemas::digest_status)]
    digest_status: DigestStatus,
    /// The SKILL.md frontmatter, as published.
    #[schema(schema_with = schemas::any_object)]
    frontmatter: Map<String, Value>,
    body: String,
    files: Vec<FileView>,
    tags: Vec<String>,
    license: Option<String>,
    diagnostics: Vec<DiagnosticView>,
    #[schema(schema_with = schemas::verdict)]
    verdict: Verdict,
    #[schema(schema_with = schemas::risk)]
    risk: Risk,
    findings: Vec<FindingView>,
    /// The content fingerprint copies share (`formats::fingerprint`).
    #[schema(schema_with = schemas::optional_digest)]
    fingerprint: Option<Digest>,
    /// The ids of the other copies the caller may see, the one a search shows first.
    #[schema(schema_with = schemas::skill_ids)]
    also_at: Vec<SkillId>,
    #[serde(with = "time::serde::rfc3339")]
    first_seen: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    last_seen: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    last_changed: OffsetDateTime,
}

impl RecordView {
    /// Returns the record with `also_at`, the other copies of it the caller may see (the read
    /// model finds them).
    pub(crate) fn new(skill: Skill, also_at: Vec<SkillId>) -> RecordView {
        let verdict = skill.verdict();
        RecordView {
            verdict,
            risk: skill.risk,
            findings: skill.findings.iter().map(FindingView::from).collect(),
            fingerprint: skill.fingerprint,
            also_at,
            id: skill.id,
            domain: skill.domain,
            format: skill.format,
            name: skill.name,
            title: skill.title,
            description: skill.description,
            capability_type: skill.capability_type,
            access: skill.access,
            version: skill.version,
            source_url: skill.source_url,
            index_url: skill.index_url,
            artifact: skill.artifact,
            digest: skill.digest,
            digest_status: skill.digest_status,
            frontmatter: skill.frontmatter,
            body: skill.body,
            files: skill.files.iter().map(FileView::from).collect(),
            tags: skill.tags,
            license: skill.license,
            diagnostics: skill.diagnostics.iter().map(DiagnosticView::from).collect(),
            first_seen: skill.first_seen,
            last_seen: skill.last_seen,
            last_changed: skill.last_changed,
        }
    }
}

/// One finding of the static safety audit (docs/audit.md); `rule` and `severity` keep the
/// snake_case names their types document.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct FindingView {
    #[schema(schema_with = schemas::rule)]
    rule: Rule,
    #[schema(schema_with = schemas::finding_severity)]
    severity: FindingSeverity,
    file: String,
    line: u32,
    excerpt: String,
    message: String,
}

impl From<&Finding> for FindingView {
    fn from(finding: &Finding) -> FindingView {
        FindingView {
            rule: finding.rule,
            severity: finding.severity,
            file: finding.file.clone(),
            line: finding.line,
            excerpt: finding.excerpt.clone(),
            message: finding.message.clone(),
        }
    }
}

/// One file of a record.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct FileView {
    path: String,
    size: Option<u64>,
    #[schema(schema_with = schemas::optional_digest)]
    sha256: Option<Digest>,
}

impl From<&FileEntry> for FileView {
    fn from(file: &FileEntry) -> FileView {
        FileView {
            path: file.path.clone(),
            size: file.size,
            sha256: file.sha256,
        }
    }
}

/// One diagnostic, of a record or of a domain. The record a domain's diagnostic concerns is
/// used to hide it (see `access`), never sent.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct DiagnosticView {
    #[schema(schema_with = schemas::severity)]
    pub(crate) severity: Severity,
    #[schema(schema_with = schemas::code)]
    pub(crate) code: Code,
    pub(crate) message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) field: Option<String>,
}

impl From<&Diagnostic> for DiagnosticView {
    fn from(diagnostic: &Diagnostic) -> DiagnosticView {
        DiagnosticView {
            severity: diagnostic.severity,
            code: diagnostic.code,
            message: diagnostic.message.clone(),
            field: diagnostic.field.clone(),
        }
    }
}

/// One error of a domain's crawl, in the crawl report's shape (docs/crawl.md).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct CrawlErrorView {
    pub(crate) code: String,
    pub(crate) message: String,
    pub(crate) url: String,
}

impl From<&CrawlErrorEntry> for CrawlErrorView {
    fn from(error: &CrawlErrorEntry) -> CrawlErrorView {
        CrawlErrorView {
            code: error.code.clone(),
            message: error.message.clone(),
            url: error.url.clone(),
        }
    }
}

/// One domain in the `GET /v1/domains` list.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct DomainSummary {
    /// The domain.
    #[schema(schema_with = schemas::domain)]
    pub(crate) domain: Domain,
    /// The origin crawled.
    pub(crate) origin: String,
    /// How its last crawl ended.
    #[schema(schema_with = schemas::outcome)]
    pub(crate) outcome: Outcome,
    /// The formats it publishes.
    #[schema(schema_with = schemas::formats)]
    pub(crate) formats: Vec<Format>,
    /// Skills the caller may see.
    pub(crate) skills: u64,
    /// HTTP requests of its last crawl.
    pub(crate) requests: usize,
    /// Errors of its last crawl (those the caller may see).
    pub(crate) errors: usize,
    /// When its last crawl finished.
    #[serde(with = "time::serde::rfc3339")]
    pub(crate) crawled_at: OffsetDateTime,
    /// When an index of it was last read successfully.
    #[serde(with = "time::serde::rfc3339::option")]
    pub(crate) last_success: Option<OffsetDateTime>,
    /// Its place in the frontier.
    #[serde(flatten)]
    pub(crate) frontier: FrontierView,
}

/// The `GET /v1/domains` body.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct DomainList {
    /// Domains in name order.
    pub(crate) domains: Vec<DomainSummary>,
    /// The cursor of the next page, or `null` on the last.
    pub(crate) next_cursor: Option<String>,
    /// The background crawl.
    pub(crate) crawl: CrawlView,
}

/// The `GET /v1/domains/{domain}` body: the full status.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct DomainDetail {
    /// The domain.
    #[schema(schema_with = schemas::domain)]
    pub(crate) domain: Domain,
    /// The origin crawled.
    pub(crate) origin: String,
    /// How its last crawl ended.
    #[schema(schema_with = schemas::outcome)]
    pub(crate) outcome: Outcome,
    /// The formats it publishes.
    #[schema(schema_with = schemas::formats)]
    pub(crate) formats: Vec<Format>,
    /// The index URLs read in its last crawl.
    #[schema(value_type = Vec<String>, format = Uri)]
    pub(crate) indexes: Vec<Url>,
    /// Skills the caller may see.
    pub(crate) skills: u64,
    /// HTTP requests of its last crawl.
    pub(crate) requests: usize,
    /// Errors of its last crawl (those the caller may see).
    pub(crate) errors: Vec<CrawlErrorView>,
    /// Errors past the listed ones, counted only.
    pub(crate) errors_omitted: usize,
    /// Index-level diagnostics (those the caller may see).
    pub(crate) diagnostics: Vec<DiagnosticView>,
    /// When its last crawl finished.
    #[serde(with = "time::serde::rfc3339")]
    pub(crate) crawled_at: OffsetDateTime,
    /// When an index of it was last read successfully.
    #[serde(with = "time::serde::rfc3339::option")]
    pub(crate) last_success: Option<OffsetDateTime>,
    /// What its index answers said about caching in its last crawl (`null` when no answer
    /// was fetched: a fresh entry of the crawler's cache says nothing new).
    #[schema(schema_with = schemas::caching)]
    pub(crate) caching: Option<CachingHeaders>,
    /// True while a background crawl runs (this domain may be in it).
    pub(crate) crawling: bool,
    /// Its place in the frontier: state, schedule, how it got there (`null` when the
    /// frontier no longer holds it).
    #[serde(flatten)]
    pub(crate) frontier: FrontierView,
    /// The publisher health report.
    pub(crate) health: HealthView,
}

/// A domain's row of the frontier, as `/v1/domains` and `/v1/domains/{domain}` show it.
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
pub(crate) struct FrontierView {
    /// `seed`, `submitted`, `discovered` or `imported` (how it got there; a delisted domain
    /// is never shown).
    #[schema(schema_with = schemas::frontier_state)]
    pub(crate) state: Option<&'static str>,
    /// Where it came from, when that says more (the directory it was imported from).
    pub(crate) source: Option<String>,
    /// When it is crawled next.
    #[serde(with = "time::serde::rfc3339::option")]
    pub(crate) next_crawl_at: Option<OffsetDateTime>,
    /// Its revisit interval, in seconds (it shrinks while its skills change and grows while
    /// they do not).
    pub(crate) interval: Option<u64>,
}

impl From<Option<&store::FrontierEntry>> for FrontierView {
    fn from(entry: Option<&store::FrontierEntry>) -> FrontierView {
        let Some(entry) = entry.filter(|entry| entry.delisted.is_none()) else {
            return FrontierView::default();
        };
        FrontierView {
            state: Some(entry.state().as_str()),
            source: entry.source.clone(),
            next_crawl_at: Some(entry.next_crawl_at),
            interval: entry.interval_secs,
        }
    }
}

/// The publisher health report, `{score, checks, clients, risk}`: in
/// `GET /v1/domains/{domain}` and, per origin, in `skillscout validate --json`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct HealthView {
    score: u32,
    checks: Vec<CheckView>,
    clients: Vec<ClientView>,
    risk: RiskCountsView,
}

impl From<&Health> for HealthView {
    fn from(health: &Health) -> HealthView {
        HealthView {
            score: health.score,
            checks: health.checks.iter().map(CheckView::from).collect(),
            clients: health.clients.iter().map(ClientView::from).collect(),
            risk: RiskCountsView::from(&health.risk),
        }
    }
}

/// What the safety audit found in a site's skills: skills by risk, findings by severity, and
/// the skills at `high` or `critical` risk.
#[derive(Debug, Clone, Serialize, ToSchema)]
struct RiskCountsView {
    /// Skills by risk.
    #[schema(schema_with = schemas::counts)]
    skills: BTreeMap<Risk, usize>,
    /// Findings by severity.
    #[schema(schema_with = schemas::counts)]
    findings: BTreeMap<FindingSeverity, usize>,
    flagged: Vec<FlaggedView>,
}

impl From<&RiskCounts> for RiskCountsView {
    fn from(counts: &RiskCounts) -> RiskCountsView {
        RiskCountsView {
            skills: counts.skills.clone(),
            findings: counts.findings.clone(),
            flagged: counts.flagged.iter().map(FlaggedView::from).collect(),
        }
    }
}

/// A skill the audit flags.
#[derive(Debug, Clone, Serialize, ToSchema)]
struct FlaggedView {
    #[schema(schema_with = schemas::skill_id)]
    id: SkillId,
    #[schema(schema_with = schemas::risk)]
    risk: Risk,
    findings: usize,
}

impl From<&Flagged> for FlaggedView {
    fn from(flagged: &Flagged) -> FlaggedView {
        FlaggedView {
            id: flagged.id.clone(),
            risk: flagged.risk,
            findings: flagged.findings,
        }
    }
}

/// One check of a health report.
#[derive(Debug, Clone, Serialize, ToSchema)]
struct CheckView {
    id: &'static str,
    name: &'static str,
    weight: u32,
    /// `pass`, `warn`, `fail`, `not_checked` or `not_applicable`.
    #[schema(schema_with = schemas::check_status)]
    status: &'static str,
    detail: String,
    items: Vec<String>,
    fix: Option<String>,
}

impl From<&Check> for CheckView {
    fn from(check: &Check) -> CheckView {
        CheckView {
            id: check.id,
            name: check.name,
            weight: check.weight,
            status: check.status.as_str(),
            detail: check.detail.clone(),
            items: check.items.clone(),
            fix: check.fix.clone(),
        }
    }
}

/// What one agent client makes of the origin.
#[derive(Debug, Clone, Serialize, ToSchema)]
struct ClientView {
    client: &'static str,
    name: &'static str,
    /// `all`, `some`, `none` or `not_applicable`.
    #[schema(schema_with = schemas::client_verdict)]
    verdict: &'static str,
    summary: String,
    refused: Vec<RefusalView>,
}

impl From<&ClientReport> for ClientView {
    fn from(report: &ClientReport) -> ClientView {
        ClientView {
            client: report.client,
            name: report.name,
            verdict: report.verdict.as_str(),
            summary: report.summary.clone(),
            refused: report.refused.iter().map(RefusalView::from).collect(),
        }
    }
}

/// One entry a client refuses.
#[derive(Debug, Clone, Serialize, ToSchema)]
struct RefusalView {
    entry: String,
    reason: String,
    fix: String,
}

impl From<&Refusal> for RefusalView {
    fn from(refusal: &Refusal) -> RefusalView {
        RefusalView {
            entry: refusal.entry.clone(),
            reason: refusal.reason.clone(),
            fix: refusal.fix.clone(),
        }
    }
}

/// The sums of a finished crawl, as `/v1/domains` shows the last one (the crawl report's
/// `totals`, docs/crawl.md).
#[derive(Debug, Clone, Copy, Default, Serialize, ToSchema)]
pub(crate) struct TotalsView {
    pub(crate) domains: usize,
    pub(crate) skills: usize,
    pub(crate) added: usize,
    pub(crate) updated: usize,
    pub(crate) removed: usize,
    pub(crate) unchanged: usize,
    pub(crate) requests: usize,
    pub(crate) errors: usize,
}

impl From<Totals> for TotalsView {
    fn from(totals: Totals) -> TotalsView {
        TotalsView {
            domains: totals.domains,
            skills: totals.skills,
            added: totals.added,
            updated: totals.updated,
            removed: totals.removed,
            unchanged: totals.unchanged,
            requests: totals.requests,
            errors: totals.errors,
        }
    }
}

/// One entry of the `GET /v1/changes` log.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ChangeView {
    /// The record's id.
    #[schema(schema_with = schemas::skill_id)]
    pub(crate) id: SkillId,
    /// `upsert` or `delete`.
    #[schema(schema_with = schemas::change_kind)]
    pub(crate) change: &'static str,
    /// When it changed: the record's `last_changed`, or when it was removed.
    #[serde(with = "time::serde::rfc3339")]
    pub(crate) at: OffsetDateTime,
    /// The record, for upserts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) record: Option<RecordView>,
}

/// The `GET /v1/changes` body.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ChangesPage {
    /// Changes, oldest first.
    pub(crate) changes: Vec<ChangeView>,
    /// The cursor of the next page, or `null` when the log is read to its end.
    pub(crate) next_cursor: Option<String>,
}
