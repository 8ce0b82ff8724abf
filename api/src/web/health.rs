//! The publisher's health report: one check per thing a publisher controls, each with
//! pass, warn or fail and what to do, and a score out of 100 from published weights.
//!
//! Every check reads what the crawl recorded: the domain's status (outcome, indexes read,
//! crawl errors, index diagnostics) and its records (digest status, diagnostics, URLs). What
//! the crawl does not record (response headers, so caching) is shown as "not checked" and
//! left out of the score rather than guessed.

use formats::skill::DigestStatus;
use formats::{Code, Format, Severity, Skill, Verdict};
use store::Outcome;

use crate::wire::DomainDetail;

/// The well-known path of an agent-skills v0.2 index.
pub(crate) const AGENT_SKILLS_INDEX: &str = "/.well-known/agent-skills/index.json";

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
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
    /// Returns the status's name, also its badge class.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Warn => "warn",
            Status::Fail => "fail",
            Status::NotChecked => "not-checked",
            Status::NotApplicable => "n/a",
        }
    }
}

/// One check of the report.
#[derive(Debug, Clone)]
pub(crate) struct Check {
    /// What is checked.
    pub(crate) name: &'static str,
    /// Its weight in the score (the weights add up to 100).
    pub(crate) weight: u32,
    /// The outcome.
    pub(crate) status: Status,
    /// What was found, in a sentence.
    pub(crate) detail: String,
    /// The findings one by one, when there are several.
    pub(crate) items: Vec<String>,
    /// What to do, when something is to be done.
    pub(crate) fix: Option<String>,
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
const FETCH_ERRORS: [&str; 11] = [
    "not_found",
    "http_status",
    "timeout",
    "unreachable",
    "too_large",
    "rate_limited",
    "invalid_response",
    "too_many_redirects",
    "redirect_loop",
    "invalid_redirect",
    "refused_destination",
];

/// Returns true for a diagnostic about an index entry rather than about the content.
pub(crate) fn is_entry_diagnostic(field: Option<&str>) -> bool {
    field.is_some_and(|field| field.starts_with("skills["))
}

/// Returns true when the domain published an agent-skills index at the v0.2 path.
pub(crate) fn has_agent_skills_index(detail: &DomainDetail) -> bool {
    detail
        .indexes
        .iter()
        .any(|url| url.path().ends_with(AGENT_SKILLS_INDEX))
}

impl Check {
    /// Returns a check with no findings listed and nothing to do.
    fn new(name: &'static str, weight: u32, status: Status, detail: impl Into<String>) -> Check {
        Check {
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

/// Returns the checks of a publisher, from its status and its records the caller may see.
pub(crate) fn checks(detail: &DomainDetail, skills: &[Skill]) -> Vec<Check> {
    let indexed = !detail.indexes.is_empty();
    let when_indexed = |check: Check| {
        if indexed {
            check
        } else {
            let detail = "No index was read, so there is nothing to check.";
            Check::new(check.name, check.weight, Status::NotApplicable, detail)
        }
    };
    vec![
        robots(detail),
        index_found(detail),
        when_indexed(index_shape(detail)),
        when_indexed(entries(detail, skills)),
        when_indexed(fetched(detail, skills)),
        when_indexed(digests(skills)),
        when_indexed(content(skills)),
        https(detail, skills),
        caching(detail),
        when_indexed(same_origin(skills)),
    ]
}

/// Returns the score out of 100: each check's weight, in full for a pass and half for a
/// warning, over the weights of the checks that were made.
pub(crate) fn score(checks: &[Check]) -> u32 {
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

fn robots(detail: &DomainDetail) -> Check {
    let name = "robots.txt allows the well-known paths";
    let error = |code: &str| detail.errors.iter().find(|error| error.code == code);
    if let Some(error) = error("robots_disallowed") {
        let found = format!("robots.txt forbids the well-known paths: {}", error.message);
        return Check::new(name, 10, Status::Fail, found).fix(
            "Allow `/.well-known/` in robots.txt (`Allow: /.well-known/` for `User-agent: *`).",
        );
    }
    if let Some(error) = error("robots_unavailable") {
        let found = format!("robots.txt could not be read: {}", error.message);
        return Check::new(name, 10, Status::Warn, found).fix(
            "Serve robots.txt with a 200, or a 404 when you have none; a 5xx or 429 keeps \
             crawlers away.",
        );
    }
    match detail.outcome {
        Outcome::Disallowed => {
            Check::new(name, 10, Status::Fail, "robots.txt kept the crawler away.")
                .fix("Allow `/.well-known/` in robots.txt.")
        }
        Outcome::Unreachable => Check::new(
            name,
            10,
            Status::NotApplicable,
            "The origin could not be reached.",
        ),
        _ => Check::new(
            name,
            10,
            Status::Pass,
            "robots.txt allows the well-known paths (or there is none).",
        ),
    }
}

fn index_found(detail: &DomainDetail) -> Check {
    let name = "An index found";
    if detail.indexes.is_empty() {
        let found = match detail.outcome {
            Outcome::Unreachable => format!("{} could not be reached.", detail.origin),
            _ => "No index at /.well-known/agent-skills/index.json, \
                  /.well-known/skills/index.json or /.well-known/skill-sharing."
                .to_owned(),
        };
        return Check::new(name, 15, Status::Fail, found).fix(
            "Publish `/.well-known/agent-skills/index.json` (discovery v0.2) listing your skills.",
        );
    }
    let paths: Vec<String> = detail
        .indexes
        .iter()
        .map(|url| url.path().to_owned())
        .collect();
    let formats: Vec<&str> = detail
        .formats
        .iter()
        .map(|format| format.as_str())
        .collect();
    let found = format!("Read {} ({}).", list(&paths, 5), formats.join(", "));
    Check::new(name, 15, Status::Pass, found)
}

fn index_shape(detail: &DomainDetail) -> Check {
    let name = "`$schema` and index shape valid";
    let agent_skills = has_agent_skills_index(detail);
    let mut status = Status::Pass;
    let mut found = Vec::new();
    for diagnostic in &detail.diagnostics {
        if !INDEX_SHAPE.contains(&diagnostic.code)
            || is_entry_diagnostic(diagnostic.field.as_deref())
        {
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
        return Check::new(name, 10, status, detail);
    }
    Check::new(name, 10, status, "The index is read, with these problems:")
        .items(found)
        .fix(EACH_FIX)
}

fn entries(detail: &DomainDetail, skills: &[Skill]) -> Check {
    let name = "Every entry valid";
    // The index's entry diagnostics (entries that made no record) and the records'.
    let on_status = detail
        .diagnostics
        .iter()
        .map(|d| (d.severity, d.code, d.field.as_deref(), d.message.as_str()));
    let on_records = skills.iter().flat_map(|skill| {
        skill
            .diagnostics
            .iter()
            .map(|d| (d.severity, d.code, d.field.as_deref(), d.message.as_str()))
    });
    let mut status = Status::Pass;
    let mut found = Vec::new();
    for (severity, code, field, message) in on_status.chain(on_records) {
        if !is_entry_diagnostic(field) {
            continue;
        }
        let this = match severity {
            Severity::Error => Status::Fail,
            Severity::Warning => Status::Warn,
            Severity::Info => continue,
        };
        status = worse(status, this);
        let field = field.unwrap_or("entry");
        found.push(format!("`{field}`: {message}. Fix: {}", code.hint()));
    }
    found.sort();
    found.dedup();
    if found.is_empty() {
        let detail = "Every index entry has the fields its format requires.";
        return Check::new(name, 15, status, detail);
    }
    let detail = format!("{} problems in index entries:", found.len());
    Check::new(name, 15, status, detail)
        .items(found)
        .fix(EACH_FIX)
}

fn fetched(detail: &DomainDetail, skills: &[Skill]) -> Check {
    let name = "Artifacts fetched";
    let mut missing: Vec<String> = skills
        .iter()
        .filter(|skill| skill.digest_status == DigestStatus::Unfetched)
        .map(|skill| skill.name.to_string())
        .collect();
    for error in &detail.errors {
        if FETCH_ERRORS.contains(&error.code.as_str()) {
            missing.push(format!("{} ({})", error.url, error.code));
        }
    }
    if missing.is_empty() {
        let found = "Every artifact the indexes list was fetched.";
        return Check::new(name, 10, Status::Pass, found);
    }
    let found = format!("Not fetched: {}.", list(&missing, 5));
    Check::new(name, 10, Status::Fail, found).fix(
        "Make every `url` in the index answer 200 with the artifact; check for typos and for \
         paths relative to the wrong folder.",
    )
}

fn digests(skills: &[Skill]) -> Check {
    let name = "Digests verified";
    let agent_skills: Vec<&Skill> = skills
        .iter()
        .filter(|skill| skill.format == Format::AgentSkills)
        .collect();
    if agent_skills.is_empty() {
        let found = "No agent skills: skill-sharing services publish no digest.";
        return Check::new(name, 10, Status::NotApplicable, found);
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
        return Check::new(name, 10, Status::Fail, found).fix(Code::DigestMismatch.hint());
    }
    if !absent.is_empty() {
        let found = format!(
            "No digest published for {}, so their content cannot be checked.",
            list(&absent, 5)
        );
        return Check::new(name, 10, Status::Warn, found)
            .fix("Add `\"digest\": \"sha256:<64 lower-case hex>\"` to each entry.");
    }
    let verified = with(DigestStatus::Verified).len();
    let found = format!("{verified} of {} digests verified.", agent_skills.len());
    Check::new(name, 10, Status::Pass, found)
}

fn content(skills: &[Skill]) -> Check {
    let name = "SKILL.md frontmatter valid";
    if skills.is_empty() {
        return Check::new(name, 15, Status::NotApplicable, "No skill was listed.");
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
        return Check::new(name, 15, Status::Fail, found)
            .fix("Open each skill below and apply the fix of its errors.");
    }
    if !lenient.is_empty() {
        let found = format!(
            "Installable, but failing the strict check: {}.",
            list(&lenient, 5)
        );
        return Check::new(name, 15, Status::Warn, found).fix(
            "Open each skill and apply the fixes of its strict errors (unknown fields, a name \
             that differs from its folder).",
        );
    }
    let found = format!("All {} skills pass the strict check.", skills.len());
    Check::new(name, 15, Status::Pass, found)
}

fn https(detail: &DomainDetail, skills: &[Skill]) -> Check {
    let name = "Served over HTTPS";
    let mut plain: Vec<String> = Vec::new();
    if detail.origin.starts_with("http://") {
        plain.push(detail.origin.clone());
    } else {
        let urls = detail
            .indexes
            .iter()
            .chain(skills.iter().map(|skill| &skill.source_url));
        for url in urls {
            if url.scheme() == "http" && !plain.contains(&url.to_string()) {
                plain.push(url.to_string());
            }
        }
    }
    if plain.is_empty() {
        let found = "The origin, its indexes and its artifacts use HTTPS.";
        return Check::new(name, 5, Status::Pass, found);
    }
    Check::new(
        name,
        5,
        Status::Fail,
        format!("Plain HTTP: {}.", list(&plain, 4)),
    )
    .fix("Serve the site over HTTPS; agent clients may refuse to install over plain HTTP.")
}

/// What to do when an index's answers say nothing about caching.
const CACHING_FIX: &str = "Send `ETag` or `Last-Modified` and `Cache-Control: max-age=…` with the \
    index and artifacts, so crawlers and clients revalidate instead of downloading again.";

fn caching(detail: &DomainDetail) -> Check {
    let name = "Caching headers present";
    let Some(caching) = detail.caching else {
        let found = if detail.indexes.is_empty() {
            "No index was read, so there is nothing to check."
        } else {
            "The last crawl was answered from its own fresh cache, so it heard nothing new; \
             the next one that asks the origin will tell."
        };
        let status = if detail.indexes.is_empty() {
            Status::NotApplicable
        } else {
            Status::NotChecked
        };
        return Check::new(name, 5, status, found).fix(CACHING_FIX);
    };
    match (caching.validator, caching.freshness) {
        (true, true) => Check::new(
            name,
            5,
            Status::Pass,
            "The index answers carry a validator (ETag or Last-Modified) and a lifetime \
             (Cache-Control max-age or Expires).",
        ),
        (true, false) => Check::new(
            name,
            5,
            Status::Warn,
            "The index answers carry a validator but no lifetime: every crawl asks again.",
        )
        .fix(CACHING_FIX),
        (false, true) => Check::new(
            name,
            5,
            Status::Warn,
            "The index answers carry a lifetime but no validator: once stale, they are \
             downloaded whole again.",
        )
        .fix(CACHING_FIX),
        (false, false) => Check::new(
            name,
            5,
            Status::Fail,
            "The index answers carry neither a validator nor a lifetime.",
        )
        .fix(CACHING_FIX),
    }
}

fn same_origin(skills: &[Skill]) -> Check {
    let name = "Artifacts on the same origin";
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
        return Check::new(name, 5, Status::Pass, found);
    }
    let found = format!("On another origin: {}.", list(&elsewhere, 5));
    Check::new(name, 5, Status::Warn, found).fix(
        "Serve artifacts from the index's origin; some clients refuse cross-origin artifacts, \
         and a digest is the only tie between them.",
    )
}

#[cfg(test)]
mod tests {
    use store::CachingHeaders;

    use super::*;

    fn check(weight: u32, status: Status) -> Check {
        Check::new("x", weight, status, "")
    }

    fn caching_check(detail: &DomainDetail) -> Check {
        super::caching(detail)
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
    }

    fn detail(origin: &str, outcome: Outcome, indexes: &[&str]) -> DomainDetail {
        DomainDetail {
            domain: "a.test".parse().unwrap(),
            origin: origin.to_owned(),
            outcome,
            formats: vec![Format::AgentSkills],
            indexes: indexes.iter().map(|url| url.parse().unwrap()).collect(),
            skills: 0,
            requests: 1,
            errors: Vec::new(),
            errors_omitted: 0,
            diagnostics: Vec::new(),
            crawled_at: time::OffsetDateTime::UNIX_EPOCH,
            last_success: None,
            caching: None,
            crawling: false,
        }
    }

    fn status_of(checks: &[Check], name: &str) -> Status {
        checks
            .iter()
            .find(|check| check.name == name)
            .unwrap()
            .status
    }

    #[test]
    fn a_sound_https_origin_passes_and_caching_is_never_guessed() {
        let index = "https://a.test/.well-known/agent-skills/index.json";
        let skills: Vec<Skill> = ["a.test/alpha"]
            .into_iter()
            .map(|id| Skill {
                index_url: index.parse().unwrap(),
                source_url: "https://a.test/.well-known/agent-skills/alpha/SKILL.md"
                    .parse()
                    .unwrap(),
                ..crate::testing::record(id, formats::Access::Public)
            })
            .collect();
        let mut good = detail("https://a.test", Outcome::Ok, &[index]);
        good.caching = Some(CachingHeaders {
            validator: true,
            freshness: true,
        });
        let checks = checks(&good, &skills);
        for check in &checks {
            assert_eq!(
                check.status,
                Status::Pass,
                "{}: {}",
                check.name,
                check.detail
            );
        }
        // What the index answers said about caching decides that check.
        for (caching, expected) in [
            (None, Status::NotChecked),
            (Some((true, false)), Status::Warn),
            (Some((false, true)), Status::Warn),
            (Some((false, false)), Status::Fail),
        ] {
            good.caching = caching.map(|(validator, freshness)| CachingHeaders {
                validator,
                freshness,
            });
            let check = caching_check(&good);
            assert_eq!(check.status, expected, "{caching:?}");
        }
        assert_eq!(score(&checks), 100);
    }

    #[test]
    fn an_origin_without_an_index_fails_and_is_not_judged_further() {
        let checks = checks(&detail("https://a.test", Outcome::NotFound, &[]), &[]);
        assert_eq!(status_of(&checks, "An index found"), Status::Fail);
        assert_eq!(
            status_of(&checks, "Every entry valid"),
            Status::NotApplicable
        );
        assert_eq!(status_of(&checks, "Served over HTTPS"), Status::Pass);
        // robots.txt and HTTPS pass, the index fails: 15 of 30 weighted points.
        assert_eq!(score(&checks), 50);
    }
}
