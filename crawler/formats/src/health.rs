//! The publisher's health report: one check per thing a publisher controls, each with pass,
//! warn or fail and what to do, a score out of 100 from published weights, and which agent
//! clients install from the origin ([`clients`]). Beside the score, how many skills the
//! static safety audit puts at each risk ([`RiskCounts`]).
//!
//! The report reads only what a crawl of the site found ([`Site`]): how far it got, the
//! indexes read, the crawl's errors, the index diagnostics and the records. The directory's
//! publisher page and `/v1/domains/{domain}` make it from what the crawl stored, `skillscout
//! validate URL` from the crawl it has just run, and `validate PATH` from a well-known tree
//! read from disk, where the checks that need HTTP (robots.txt, HTTPS, caching headers) say
//! "not checked". What the crawl does not record is never guessed: it is "not checked" and
//! left out of the score.

pub mod clients;

use std::collections::BTreeMap;

use serde::Serialize;
use url::Url;

use crate::audit::{Risk, Severity as AuditSeverity};
use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::site::{AGENT_SKILLS_INDEX, SiteFindings};
use crate::skill::{DigestStatus, Format, Skill, SkillId, Verdict};
use crate::verdict::{is_entry_field, reported};

pub use clients::{ClientReport, ClientVerdict, Refusal};

/// How far a crawl of a site got (the crawl report's `outcome`, as far as health is
/// concerned).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reach {
    /// The origin answered (whether or not it publishes an index).
    Answered,
    /// robots.txt kept the crawler away.
    Disallowed,
    /// No connection could be made.
    Unreachable,
}

/// One error of a site's crawl (the crawl report's `errors`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteError {
    /// The stable code, a [`Code`] name.
    pub code: String,
    /// What happened.
    pub message: String,
    /// The URL it happened at.
    pub url: String,
}

/// What the answers to the index requests said about caching.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caching {
    /// Every answer carried a validator (`ETag` or `Last-Modified`).
    pub validator: bool,
    /// Every answer said how long it stays fresh (`Cache-Control: max-age` or `Expires`).
    pub freshness: bool,
}

/// What a crawl found on one site: everything the report reads.
#[derive(Debug, Clone)]
pub struct Site<'a> {
    /// The origin crawled, as the publisher names it (`https://example.com`, or with a path).
    pub origin: String,
    /// How far the crawl got.
    pub reach: Reach,
    /// True when the site was read over HTTP; a tree read from disk has no robots.txt,
    /// transport or response headers to judge.
    pub over_http: bool,
    /// The formats of the indexes read.
    pub formats: Vec<Format>,
    /// The index URLs read.
    pub indexes: Vec<Url>,
    /// The crawl's errors.
    pub errors: Vec<SiteError>,
    /// The index diagnostics (and the site's notes).
    pub diagnostics: Vec<Diagnostic>,
    /// What the index answers said about caching, when an answer was heard.
    pub caching: Option<Caching>,
    /// The records the crawl made.
    pub skills: &'a [Skill],
}

impl<'a> Site<'a> {
    /// Returns what the site pipeline found in a tree read from disk (or any crawl whose
    /// findings are at hand), as a crawl would record it: the indexes read whole, every failed
    /// request, every index error and every record error agent clients reject.
    pub fn from_findings(origin: &Url, found: &'a SiteFindings) -> Site<'a> {
        let usable: Vec<_> = found.indexes.iter().filter(|index| index.usable).collect();
        let mut formats: Vec<Format> = usable.iter().map(|index| index.format).collect();
        formats.dedup();
        let mut errors: Vec<SiteError> = found
            .failures
            .iter()
            .map(|failure| SiteError {
                code: failure.code.as_str().to_owned(),
                message: failure.message.clone(),
                url: failure.url.to_string(),
            })
            .collect();
        let mut diagnostics = found.notes.clone();
        for index in &found.indexes {
            for diagnostic in &index.diagnostics {
                if diagnostic.severity == Severity::Error {
                    errors.push(SiteError::of(diagnostic, &index.url));
                }
            }
            diagnostics.extend(index.diagnostics.iter().cloned());
        }
        for record in &found.records {
            for diagnostic in record.diagnostics.iter().filter(|d| reported(d)) {
                errors.push(SiteError::of(diagnostic, &record.source_url));
            }
        }
        let unreachable = !found.failures.is_empty()
            && found
                .failures
                .iter()
                .all(|failure| failure.code == Code::Unreachable);
        let reach = if !usable.is_empty() {
            Reach::Answered
        } else if found.disallowed
            || found.failures.iter().any(|failure| {
                matches!(
                    failure.code,
                    Code::RobotsDisallowed | Code::RobotsUnavailable
                )
            })
        {
            Reach::Disallowed
        } else if found.indexes.is_empty() && unreachable {
            Reach::Unreachable
        } else {
            Reach::Answered
        };
        Site {
            origin: origin.as_str().trim_end_matches('/').to_owned(),
            reach,
            over_http: false,
            formats,
            indexes: usable
                .iter()
                .filter(|index| index.complete)
                .map(|index| index.url.clone())
                .collect(),
            errors,
            diagnostics,
            caching: None,
            skills: &found.records,
        }
    }

    /// Returns true when the site published an agent-skills index at the v0.2 path.
    fn has_agent_skills_index(&self) -> bool {
        self.indexes
            .iter()
            .any(|url| url.path().ends_with(AGENT_SKILLS_INDEX))
    }

    /// Returns the index diagnostics about an index as a whole (not about one of its
    /// entries).
    fn index_diagnostic(&self, code: Code) -> Option<&Diagnostic> {
        self.diagnostics
            .iter()
            .find(|d| d.code == code && !is_entry_field(d.field.as_deref()))
    }
}

impl SiteError {
    /// Returns the report's error for a diagnostic found at `url`: the field, when there is
    /// one, leads the message.
    pub fn of(diagnostic: &Diagnostic, url: &Url) -> SiteError {
        let message = match &diagnostic.field {
            Some(field) => format!("{field}: {}", diagnostic.message),
            None => diagnostic.message.clone(),
        };
        SiteError {
            code: diagnostic.code.as_str().to_owned(),
            message,
            url: url.to_string(),
        }
    }
}

/// The publisher's health report: `{score, checks, clients, risk}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Health {
    /// Out of 100: see [`score`].
    pub score: u32,
    /// Every check, in a fixed order.
    pub checks: Vec<Check>,
    /// Which agent clients install from the origin as published.
    pub clients: Vec<ClientReport>,
    /// What the static safety audit found in the site's skills. Reported beside the score,
    /// not in it: the score measures how a site publishes, and a static audit is a linter,
    /// not a certificate.
    pub risk: RiskCounts,
}

/// The most flagged skills a report names; the counts cover them all.
pub const MAX_FLAGGED: usize = 50;

/// How many of a site's skills are at each risk, and how many findings at each severity.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RiskCounts {
    /// Skills by risk, every level named (`none` to `critical`), zeros included.
    pub skills: BTreeMap<Risk, usize>,
    /// Findings by severity, every level named (`low` to `critical`), zeros included.
    pub findings: BTreeMap<AuditSeverity, usize>,
    /// The skills at `high` or `critical` risk, most risky first, then by id; at most
    /// [`MAX_FLAGGED`].
    pub flagged: Vec<Flagged>,
}

/// A skill the audit flags.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flagged {
    /// The skill.
    pub id: SkillId,
    /// Its risk.
    pub risk: Risk,
    /// How many findings it has.
    pub findings: usize,
}

impl RiskCounts {
    /// Counts the risks and findings of `skills`.
    pub fn of(skills: &[Skill]) -> RiskCounts {
        let mut counts = RiskCounts {
            skills: RISKS.iter().map(|risk| (*risk, 0)).collect(),
            findings: SEVERITIES.iter().map(|severity| (*severity, 0)).collect(),
            flagged: Vec::new(),
        };
        for skill in skills {
            *counts.skills.entry(skill.risk).or_default() += 1;
            for finding in &skill.findings {
                *counts.findings.entry(finding.severity).or_default() += 1;
            }
            if skill.risk >= Risk::High {
                counts.flagged.push(Flagged {
                    id: skill.id.clone(),
                    risk: skill.risk,
                    findings: skill.findings.len(),
                });
            }
        }
        counts
            .flagged
            .sort_by(|a, b| b.risk.cmp(&a.risk).then_with(|| a.id.cmp(&b.id)));
        counts.flagged.truncate(MAX_FLAGGED);
        counts
    }

    /// Returns how many skills are at `risk`.
    pub fn skills_at(&self, risk: Risk) -> usize {
        self.skills.get(&risk).copied().unwrap_or(0)
    }
}

/// Every risk, lowest first.
const RISKS: [Risk; 5] = [
    Risk::None,
    Risk::Low,
    Risk::Medium,
    Risk::High,
    Risk::Critical,
];
/// Every finding severity, lowest first.
const SEVERITIES: [AuditSeverity; 4] = [
    AuditSeverity::Low,
    AuditSeverity::Medium,
    AuditSeverity::High,
    AuditSeverity::Critical,
];

/// Returns the health report of `site`. The records are read in id order, so that the report
/// is the same whatever order a crawl found them in.
pub fn report(site: &Site<'_>) -> Health {
    if !site.skills.is_sorted_by(|a, b| a.id <= b.id) {
        let mut sorted = site.skills.to_vec();
        sorted.sort_by(|a, b| a.id.cmp(&b.id));
        return report(&Site {
            skills: &sorted,
            ..site.clone()
        });
    }
    let checks = checks(site);
    Health {
        score: score(&checks),
        checks,
        clients: vec![clients::skills_cli(site)],
        risk: RiskCounts::of(site.skills),
    }
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Nothing to fix.
    Pass,
    /// Works, but should be fixed; half the weight.
    Warn,
    /// Broken; no weight.
    Fail,
    /// The crawl records nothing to judge this by; left out of the score.
    NotChecked,
    /// Nothing this check applies to (no agent skills, say); left out of the score.
    NotApplicable,
}

impl Status {
    /// Returns the status's name, as serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Warn => "warn",
            Status::Fail => "fail",
            Status::NotChecked => "not_checked",
            Status::NotApplicable => "not_applicable",
        }
    }
}

/// One check of the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// A stable snake_case name for scripts (`robots`, `index_found`, …).
    pub id: &'static str,
    /// What is checked, for people (`backticked` spans are code).
    pub name: &'static str,
    /// Its weight in the score (the weights add up to 100).
    pub weight: u32,
    /// The outcome.
    pub status: Status,
    /// What was found, in a sentence.
    pub detail: String,
    /// The findings one by one, when there are several.
    pub items: Vec<String>,
    /// What to do, when something is to be done.
    pub fix: Option<String>,
}

/// Codes about an index as a whole.
const INDEX_SHAPE: [Code; 7] = [
    Code::InvalidJson,
    Code::InvalidUtf8,
    Code::TooLarge,
    Code::InvalidIndex,
    Code::MissingSchema,
    Code::UnknownSchema,
    Code::BareArray,
];

/// Crawl error codes of a fetch that failed.
const FETCH_ERRORS: [Code; 12] = [
    Code::NotFound,
    Code::Gone,
    Code::HttpStatus,
    Code::Timeout,
    Code::Unreachable,
    Code::TooLarge,
    Code::RateLimited,
    Code::InvalidResponse,
    Code::TooManyRedirects,
    Code::RedirectLoop,
    Code::InvalidRedirect,
    Code::RefusedDestination,
];

/// The checks, in order: (id, name, weight).
const ROBOTS: (&str, &str, u32) = ("robots", "robots.txt allows the well-known paths", 10);
const INDEX_FOUND: (&str, &str, u32) = ("index_found", "An index found", 15);
const INDEX_SHAPE_CHECK: (&str, &str, u32) = ("index_shape", "`$schema` and index shape valid", 10);
const ENTRIES: (&str, &str, u32) = ("entries", "Every entry valid", 15);
const FETCHED: (&str, &str, u32) = ("fetched", "Artifacts fetched", 10);
const DIGESTS: (&str, &str, u32) = ("digests", "Digests verified", 10);
const CONTENT: (&str, &str, u32) = ("content", "SKILL.md frontmatter valid", 15);
const HTTPS: (&str, &str, u32) = ("https", "Served over HTTPS", 5);
const CACHING: (&str, &str, u32) = ("caching", "Caching headers present", 5);
const SAME_ORIGIN: (&str, &str, u32) = ("same_origin", "Artifacts on the same origin", 5);

impl Check {
    /// Returns a check with no findings listed and nothing to do.
    fn new(
        (id, name, weight): (&'static str, &'static str, u32),
        status: Status,
        detail: impl Into<String>,
    ) -> Check {
        Check {
            id,
            name,
            weight,
            status,
            detail: detail.into(),
            items: Vec::new(),
            fix: None,
        }
    }

    /// Returns the check with what to do.
    fn fix(self, fix: &str) -> Check {
        Check {
            fix: Some(fix.to_owned()),
            ..self
        }
    }

    /// Returns the check with its findings listed (at most [`MAX_ITEMS`]).
    fn items(self, mut items: Vec<String>) -> Check {
        if items.len() > MAX_ITEMS {
            let more = items.len() - MAX_ITEMS;
            items.truncate(MAX_ITEMS);
            items.push(format!("and {more} more"));
        }
        Check { items, ..self }
    }
}

/// The most findings a check lists.
const MAX_ITEMS: usize = 12;

/// What to do when each finding says its own fix.
const EACH_FIX: &str = "Apply the fix given with each problem.";

/// Returns the checks of a site, in their fixed order.
pub fn checks(site: &Site<'_>) -> Vec<Check> {
    let indexed = !site.indexes.is_empty();
    let when_indexed = |check: Check| {
        if indexed {
            check
        } else {
            let detail = "No index was read, so there is nothing to check.";
            Check::new(
                (check.id, check.name, check.weight),
                Status::NotApplicable,
                detail,
            )
        }
    };
    vec![
        over_http(site, ROBOTS, robots),
        index_found(site),
        when_indexed(index_shape(site)),
        when_indexed(entries(site)),
        when_indexed(fetched(site)),
        when_indexed(digests(site.skills)),
        when_indexed(content(site.skills)),
        over_http(site, HTTPS, https),
        over_http(site, CACHING, caching),
        when_indexed(same_origin(site.skills)),
    ]
}

/// Runs a check that needs HTTP, or says it was not checked for a tree read from disk.
fn over_http(
    site: &Site<'_>,
    check: (&'static str, &'static str, u32),
    run: fn(&Site<'_>) -> Check,
) -> Check {
    if site.over_http {
        return run(site);
    }
    Check::new(
        check,
        Status::NotChecked,
        "Checked only over HTTP: validate the site's URL to check it.",
    )
}

/// Returns the score out of 100: each check's weight, in full for a pass and half for a
/// warning, over the weights of the checks that were made.
pub fn score(checks: &[Check]) -> u32 {
    let (mut earned, mut possible) = (0, 0);
    for check in checks {
        let points = match check.status {
            Status::Pass => 2 * check.weight,
            Status::Warn => check.weight,
            Status::Fail => 0,
            Status::NotChecked | Status::NotApplicable => continue,
        };
        earned += points;
        possible += 2 * check.weight;
    }
    if possible == 0 {
        return 0;
    }
    (100 * earned + possible / 2) / possible
}

/// Returns up to `max` items, comma-separated, and how many more there are.
fn list(items: &[String], max: usize) -> String {
    let mut text = items
        .iter()
        .take(max)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > max {
        text.push_str(&format!(" and {} more", items.len() - max));
    }
    text
}

/// Returns the worse of two statuses.
fn worse(a: Status, b: Status) -> Status {
    let rank = |status| match status {
        Status::Fail => 3,
        Status::Warn => 2,
        Status::Pass => 1,
        Status::NotChecked | Status::NotApplicable => 0,
    };
    if rank(b) > rank(a) { b } else { a }
}

fn robots(site: &Site<'_>) -> Check {
    let error = |code: Code| site.errors.iter().find(|error| error.code == code.as_str());
    if let Some(error) = error(Code::RobotsDisallowed) {
        let found = format!("robots.txt forbids the well-known paths: {}", error.message);
        return Check::new(ROBOTS, Status::Fail, found).fix(
            "Allow `/.well-known/` in robots.txt (`Allow: /.well-known/` for `User-agent: *`).",
        );
    }
    if let Some(error) = error(Code::RobotsUnavailable) {
        let found = format!("robots.txt could not be read: {}", error.message);
        return Check::new(ROBOTS, Status::Warn, found).fix(
            "Serve robots.txt with a 200, or a 404 when you have none; a 5xx or 429 keeps \
             crawlers away.",
        );
    }
    match site.reach {
        Reach::Disallowed => Check::new(ROBOTS, Status::Fail, "robots.txt kept the crawler away.")
            .fix("Allow `/.well-known/` in robots.txt."),
        Reach::Unreachable => Check::new(
            ROBOTS,
            Status::NotApplicable,
            "The origin could not be reached.",
        ),
        Reach::Answered => Check::new(
            ROBOTS,
            Status::Pass,
            "robots.txt allows the well-known paths (or there is none).",
        ),
    }
}

fn index_found(site: &Site<'_>) -> Check {
    if site.indexes.is_empty() {
        let found = match site.reach {
            Reach::Unreachable => format!("{} could not be reached.", site.origin),
            _ => "No index at /.well-known/agent-skills/index.json, \
                  /.well-known/skills/index.json or /.well-known/skill-sharing."
                .to_owned(),
        };
        return Check::new(INDEX_FOUND, Status::Fail, found).fix(
            "Publish `/.well-known/agent-skills/index.json` (discovery v0.2) listing your skills.",
        );
    }
    let paths: Vec<String> = site
        .indexes
        .iter()
        .map(|url| url.path().to_owned())
        .collect();
    let formats: Vec<&str> = site.formats.iter().map(|format| format.as_str()).collect();
    let found = format!("Read {} ({}).", list(&paths, 5), formats.join(", "));
    Check::new(INDEX_FOUND, Status::Pass, found)
}

fn index_shape(site: &Site<'_>) -> Check {
    let agent_skills = site.has_agent_skills_index();
    let mut status = Status::Pass;
    let mut found = Vec::new();
    for diagnostic in &site.diagnostics {
        if !INDEX_SHAPE.contains(&diagnostic.code) || is_entry_field(diagnostic.field.as_deref()) {
            continue;
        }
        let this = match diagnostic.code {
            // A legacy v0.1 index has no `$schema` by design.
            Code::MissingSchema if !agent_skills => continue,
            Code::MissingSchema | Code::BareArray => Status::Warn,
            Code::UnknownSchema => Status::Fail,
            _ if diagnostic.severity == Severity::Error => Status::Fail,
            _ => Status::Warn,
        };
        status = worse(status, this);
        found.push(format!(
            "{} (`{}`). Fix: {}",
            diagnostic.message,
            diagnostic.code.as_str(),
            diagnostic.code.hint()
        ));
    }
    if found.is_empty() {
        let detail = "Every index read parses and has the shape its format asks for.";
        return Check::new(INDEX_SHAPE_CHECK, status, detail);
    }
    Check::new(
        INDEX_SHAPE_CHECK,
        status,
        "The index is read, with these problems:",
    )
    .items(found)
    .fix(EACH_FIX)
}

fn entries(site: &Site<'_>) -> Check {
    // The index's entry diagnostics (entries that made no record) and the records'.
    let on_records = site
        .skills
        .iter()
        .flat_map(|skill| skill.diagnostics.iter());
    let mut status = Status::Pass;
    let mut found = Vec::new();
    for diagnostic in site.diagnostics.iter().chain(on_records) {
        let field = diagnostic.field.as_deref();
        if !is_entry_field(field) {
            continue;
        }
        let this = match diagnostic.severity {
            Severity::Error => Status::Fail,
            Severity::Warning => Status::Warn,
            Severity::Info => continue,
        };
        status = worse(status, this);
        let field = field.unwrap_or("entry");
        found.push(format!(
            "`{field}`: {}. Fix: {}",
            diagnostic.message,
            diagnostic.code.hint()
        ));
    }
    found.sort();
    found.dedup();
    if found.is_empty() {
        let detail = "Every index entry has the fields its format requires.";
        return Check::new(ENTRIES, status, detail);
    }
    let detail = format!("{} problems in index entries:", found.len());
    Check::new(ENTRIES, status, detail)
        .items(found)
        .fix(EACH_FIX)
}

fn fetched(site: &Site<'_>) -> Check {
    let mut missing: Vec<String> = site
        .skills
        .iter()
        .filter(|skill| skill.digest_status == DigestStatus::Unfetched)
        .map(|skill| skill.name.to_string())
        .collect();
    for error in &site.errors {
        if FETCH_ERRORS.iter().any(|code| code.as_str() == error.code) {
            missing.push(format!("{} ({})", error.url, error.code));
        }
    }
    if missing.is_empty() {
        let found = "Every artifact the indexes list was fetched.";
        return Check::new(FETCHED, Status::Pass, found);
    }
    let found = format!("Not fetched: {}.", list(&missing, 5));
    Check::new(FETCHED, Status::Fail, found).fix(
        "Make every `url` in the index answer 200 with the artifact; check for typos and for \
         paths relative to the wrong folder.",
    )
}

fn digests(skills: &[Skill]) -> Check {
    let agent_skills: Vec<&Skill> = skills
        .iter()
        .filter(|skill| skill.format == Format::AgentSkills)
        .collect();
    if agent_skills.is_empty() {
        let found = "No agent skills: skill-sharing services publish no digest.";
        return Check::new(DIGESTS, Status::NotApplicable, found);
    }
    let with = |status: DigestStatus| -> Vec<String> {
        agent_skills
            .iter()
            .filter(|skill| skill.digest_status == status)
            .map(|skill| skill.name.to_string())
            .collect()
    };
    let (mismatch, absent) = (with(DigestStatus::Mismatch), with(DigestStatus::Absent));
    if !mismatch.is_empty() {
        let found = format!(
            "Digest mismatch: {}; their content was not used.",
            list(&mismatch, 5)
        );
        return Check::new(DIGESTS, Status::Fail, found).fix(Code::DigestMismatch.hint());
    }
    if !absent.is_empty() {
        let found = format!(
            "No digest published for {}, so their content cannot be checked.",
            list(&absent, 5)
        );
        return Check::new(DIGESTS, Status::Warn, found)
            .fix("Add `\"digest\": \"sha256:<64 lower-case hex>\"` to each entry.");
    }
    let verified = with(DigestStatus::Verified).len();
    let found = format!("{verified} of {} digests verified.", agent_skills.len());
    Check::new(DIGESTS, Status::Pass, found)
}

fn content(skills: &[Skill]) -> Check {
    if skills.is_empty() {
        return Check::new(CONTENT, Status::NotApplicable, "No skill was listed.");
    }
    let with = |verdict: Verdict| -> Vec<String> {
        skills
            .iter()
            .filter(|skill| skill.verdict() == verdict)
            .map(|skill| skill.name.to_string())
            .collect()
    };
    let (invalid, lenient) = (with(Verdict::Invalid), with(Verdict::Lenient));
    if !invalid.is_empty() {
        let found = format!("Not installable (verdict invalid): {}.", list(&invalid, 5));
        return Check::new(CONTENT, Status::Fail, found)
            .fix("Open each skill below and apply the fix of its errors.");
    }
    if !lenient.is_empty() {
        let found = format!(
            "Installable, but failing the strict check: {}.",
            list(&lenient, 5)
        );
        return Check::new(CONTENT, Status::Warn, found).fix(
            "Open each skill and apply the fixes of its strict errors (unknown fields, a name \
             that differs from its folder).",
        );
    }
    let found = format!("All {} skills pass the strict check.", skills.len());
    Check::new(CONTENT, Status::Pass, found)
}

fn https(site: &Site<'_>) -> Check {
    let mut plain: Vec<String> = Vec::new();
    if site.origin.starts_with("http://") {
        plain.push(site.origin.clone());
    } else {
        let urls = site
            .indexes
            .iter()
            .chain(site.skills.iter().map(|skill| &skill.source_url));
        for url in urls {
            if url.scheme() == "http" && !plain.contains(&url.to_string()) {
                plain.push(url.to_string());
            }
        }
    }
    if plain.is_empty() {
        let found = "The origin, its indexes and its artifacts use HTTPS.";
        return Check::new(HTTPS, Status::Pass, found);
    }
    Check::new(
        HTTPS,
        Status::Fail,
        format!("Plain HTTP: {}.", list(&plain, 4)),
    )
    .fix("Serve the site over HTTPS; agent clients may refuse to install over plain HTTP.")
}

/// What to do when an index's answers say nothing about caching.
const CACHING_FIX: &str = "Send `ETag` or `Last-Modified` and `Cache-Control: max-age=…` with the \
    index and artifacts, so crawlers and clients revalidate instead of downloading again.";

fn caching(site: &Site<'_>) -> Check {
    let Some(caching) = site.caching else {
        let found = if site.indexes.is_empty() {
            "No index was read, so there is nothing to check."
        } else {
            "The last crawl was answered from its own fresh cache, so it heard nothing new; \
             the next one that asks the origin will tell."
        };
        let status = if site.indexes.is_empty() {
            Status::NotApplicable
        } else {
            Status::NotChecked
        };
        return Check::new(CACHING, status, found).fix(CACHING_FIX);
    };
    match (caching.validator, caching.freshness) {
        (true, true) => Check::new(
            CACHING,
            Status::Pass,
            "The index answers carry a validator (ETag or Last-Modified) and a lifetime \
             (Cache-Control max-age or Expires).",
        ),
        (true, false) => Check::new(
            CACHING,
            Status::Warn,
            "The index answers carry a validator but no lifetime: every crawl asks again.",
        )
        .fix(CACHING_FIX),
        (false, true) => Check::new(
            CACHING,
            Status::Warn,
            "The index answers carry a lifetime but no validator: once stale, they are \
             downloaded whole again.",
        )
        .fix(CACHING_FIX),
        (false, false) => Check::new(
            CACHING,
            Status::Fail,
            "The index answers carry neither a validator nor a lifetime.",
        )
        .fix(CACHING_FIX),
    }
}

fn same_origin(skills: &[Skill]) -> Check {
    let elsewhere: Vec<String> = skills
        .iter()
        .filter(|skill| skill.source_url.origin() != skill.index_url.origin())
        .map(|skill| {
            format!(
                "{} ({})",
                skill.name,
                skill.source_url.host_str().unwrap_or("?")
            )
        })
        .collect();
    if elsewhere.is_empty() {
        let found = "Every artifact is served by the origin of its index.";
        return Check::new(SAME_ORIGIN, Status::Pass, found);
    }
    let found = format!("On another origin: {}.", list(&elsewhere, 5));
    Check::new(SAME_ORIGIN, Status::Warn, found).fix(
        "Serve artifacts from the index's origin; some clients refuse cross-origin artifacts, \
         and a digest is the only tie between them.",
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use serde_json::Map;
    use time::OffsetDateTime;

    use super::*;
    use crate::skill::{Access, Artifact, SkillId};

    /// An agent skill `id` listed by `index`, its SKILL.md verified, with no diagnostics.
    pub(crate) fn record(id: &str, index: &str) -> Skill {
        let id: SkillId = id.parse().unwrap();
        let index_url: Url = index.parse().unwrap();
        Skill {
            domain: id.domain().clone(),
            name: id.slug().clone(),
            format: Format::AgentSkills,
            title: id.slug().to_string(),
            description: "Does things.".to_owned(),
            capability_type: "skill".to_owned(),
            access: Access::Public,
            version: None,
            source_url: index_url.join(&format!("{}/SKILL.md", id.slug())).unwrap(),
            index_url,
            artifact: Artifact::SkillMd,
            digest: None,
            digest_status: DigestStatus::Verified,
            frontmatter: Map::new(),
            body: String::new(),
            files: Vec::new(),
            tags: Vec::new(),
            license: None,
            diagnostics: Vec::new(),
            risk: crate::audit::Risk::None,
            findings: Vec::new(),
            fingerprint: None,
            first_seen: OffsetDateTime::UNIX_EPOCH,
            last_seen: OffsetDateTime::UNIX_EPOCH,
            last_changed: OffsetDateTime::UNIX_EPOCH,
            id,
        }
    }

    /// A site read over HTTP from `origin` that read `indexes`.
    pub(crate) fn site<'a>(origin: &str, indexes: &[&str], skills: &'a [Skill]) -> Site<'a> {
        Site {
            origin: origin.to_owned(),
            reach: Reach::Answered,
            over_http: true,
            formats: vec![Format::AgentSkills],
            indexes: indexes.iter().map(|url| url.parse().unwrap()).collect(),
            errors: Vec::new(),
            diagnostics: Vec::new(),
            caching: None,
            skills,
        }
    }

    fn check(weight: u32, status: Status) -> Check {
        Check::new(("x", "x", weight), status, "")
    }

    fn status_of(checks: &[Check], id: &str) -> Status {
        checks.iter().find(|check| check.id == id).unwrap().status
    }

    #[test]
    fn the_score_weighs_passes_fully_warnings_half_and_leaves_out_what_was_not_checked() {
        assert_eq!(
            score(&[check(10, Status::Pass), check(10, Status::Fail)]),
            50
        );
        assert_eq!(
            score(&[check(10, Status::Pass), check(10, Status::Warn)]),
            75
        );
        assert_eq!(
            score(&[
                check(10, Status::Pass),
                check(90, Status::NotChecked),
                check(5, Status::NotApplicable)
            ]),
            100
        );
        assert_eq!(score(&[]), 0);
        let weights: u32 = checks(&site("https://a.test", &[], &[]))
            .iter()
            .map(|check| check.weight)
            .sum();
        assert_eq!(weights, 100);
    }

    #[test]
    fn a_sound_https_origin_passes_and_caching_is_never_guessed() {
        let index = "https://a.test/.well-known/agent-skills/index.json";
        let skills = [record("a.test/alpha", index)];
        let mut good = site("https://a.test", &[index], &skills);
        good.caching = Some(Caching {
            validator: true,
            freshness: true,
        });
        let all = checks(&good);
        for check in &all {
            assert_eq!(check.status, Status::Pass, "{}: {}", check.id, check.detail);
        }
        assert_eq!(score(&all), 100);
        // What the index answers said about caching decides that check.
        for (heard, expected) in [
            (None, Status::NotChecked),
            (Some((true, false)), Status::Warn),
            (Some((false, true)), Status::Warn),
            (Some((false, false)), Status::Fail),
        ] {
            good.caching = heard.map(|(validator, freshness)| Caching {
                validator,
                freshness,
            });
            assert_eq!(caching(&good).status, expected, "{heard:?}");
        }
    }

    #[test]
    fn an_origin_without_an_index_fails_and_is_not_judged_further() {
        let all = checks(&site("https://a.test", &[], &[]));
        assert_eq!(status_of(&all, "index_found"), Status::Fail);
        assert_eq!(status_of(&all, "entries"), Status::NotApplicable);
        assert_eq!(status_of(&all, "https"), Status::Pass);
        // robots.txt and HTTPS pass, the index fails: 15 of 30 weighted points.
        assert_eq!(score(&all), 50);
    }

    #[test]
    fn a_tree_on_disk_is_not_judged_on_what_needs_http() {
        let index = "http://a.test/.well-known/agent-skills/index.json";
        let skills = [record("a.test/alpha", index)];
        let mut tree = site("http://a.test", &[index], &skills);
        tree.over_http = false;
        let all = checks(&tree);
        for id in ["robots", "https", "caching"] {
            assert_eq!(status_of(&all, id), Status::NotChecked, "{id}");
        }
        assert_eq!(score(&all), 100);
    }

    #[test]
    fn the_audit_is_counted_beside_the_score() {
        use crate::audit::{Finding, Rule};
        let index = "https://a.test/.well-known/agent-skills/index.json";
        let finding = |severity| Finding {
            rule: Rule::ALL[0],
            severity,
            file: "SKILL.md".to_owned(),
            line: 3,
            excerpt: "x".to_owned(),
            message: "y".to_owned(),
        };
        let mut flagged = record("a.test/beta", index);
        flagged.risk = Risk::Critical;
        flagged.findings = vec![
            finding(AuditSeverity::Critical),
            finding(AuditSeverity::Low),
        ];
        let mut noted = record("a.test/alpha", index);
        noted.risk = Risk::Low;
        noted.findings = vec![finding(AuditSeverity::Low)];
        let skills = [noted, flagged, record("a.test/gamma", index)];
        let health = report(&site("https://a.test", &[index], &skills));
        let counts = &health.risk;
        assert_eq!(
            (
                counts.skills_at(Risk::None),
                counts.skills_at(Risk::Low),
                counts.skills_at(Risk::High),
                counts.skills_at(Risk::Critical)
            ),
            (1, 1, 0, 1)
        );
        assert_eq!(counts.findings[&AuditSeverity::Low], 2);
        assert_eq!(counts.flagged.len(), 1);
        assert_eq!(counts.flagged[0].id.to_string(), "a.test/beta");
        assert_eq!(counts.flagged[0].findings, 2);
        // The score does not move.
        let clean = [record("a.test/alpha", index)];
        assert_eq!(
            health.score,
            report(&site("https://a.test", &[index], &clean)).score
        );
        let json = serde_json::to_value(counts).unwrap();
        assert_eq!(json["skills"]["critical"], 1);
        assert_eq!(json["findings"]["medium"], 0);
    }
}
