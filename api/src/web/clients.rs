//! Which agent clients install from a publisher's origin as published, and why not.
//!
//! The rules are those of the vercel `skills` CLI 1.7, which is much stricter about the
//! index than about the skills:
//! - an index without `$schema` is read as v0.1, whose entries must have `files` naming
//!   `SKILL.md`, and one bad entry drops the whole index;
//! - an index with a `$schema` it does not know is dropped;
//! - a v0.2 entry needs `type`, `url` and a `digest` of exactly `sha256:` and 64 lower-case
//!   hex digits (a `sha256` field is ignored), or it is refused;
//! - a skill whose name breaks the naming rule is refused.
//!
//! The facts come from the crawl's diagnostics: the index's own (entries that made no
//! record) and each record's entry diagnostics (fields `skills[…]`).

use formats::{Code, Format, Skill, Verdict};

use super::health::{AGENT_SKILLS_INDEX, has_agent_skills_index, is_entry_diagnostic};
use crate::wire::DomainDetail;

/// The `$schema` of a v0.2 index.
const SCHEMA_V02: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";

/// The well-known path of a legacy v0.1 index.
const LEGACY_INDEX: &str = "/.well-known/skills/index.json";

/// Entry codes that make the CLI refuse a v0.2 entry.
const REFUSED_ENTRY: [Code; 8] = [
    Code::MissingField,
    Code::InvalidField,
    Code::UnknownType,
    Code::InvalidUrl,
    Code::Sha256Field,
    Code::DigestFormat,
    Code::InvalidDigest,
    Code::DigestAbsent,
];

/// One entry a client refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// The skill's name, or the entry's field path when no record names it.
    pub(crate) entry: String,
    /// Why.
    pub(crate) reason: String,
    /// The one-line fix.
    pub(crate) fix: String,
}

/// What the `skills` CLI makes of a publisher's origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CliReport {
    /// Whether it installs everything, some, none, or whether the question does not arise.
    pub(crate) verdict: CliVerdict,
    /// One sentence.
    pub(crate) summary: String,
    /// The entries it refuses, each with its fix.
    pub(crate) refused: Vec<Refusal>,
}

/// How much the CLI installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CliVerdict {
    /// Every skill.
    All,
    /// Some skills.
    Some,
    /// No skill.
    None,
    /// The origin publishes no agent skills.
    NotApplicable,
}

impl CliVerdict {
    /// Returns the badge class and text.
    pub(crate) fn badge(self) -> (&'static str, &'static str) {
        match self {
            CliVerdict::All => ("pass", "installs"),
            CliVerdict::Some => ("warn", "installs some"),
            CliVerdict::None => ("fail", "refuses"),
            CliVerdict::NotApplicable => ("not-checked", "n/a"),
        }
    }
}

/// Returns what the `skills` CLI 1.7 installs from the origin of `detail`.
pub(crate) fn skills_cli(detail: &DomainDetail, skills: &[Skill]) -> CliReport {
    let agent_skills: Vec<&Skill> = skills
        .iter()
        .filter(|skill| skill.format == Format::AgentSkills)
        .collect();
    if detail.indexes.is_empty() {
        return CliReport {
            verdict: CliVerdict::None,
            summary: "The CLI finds no index at this origin, so it installs nothing.".to_owned(),
            refused: Vec::new(),
        };
    }
    if agent_skills.is_empty()
        && !detail
            .indexes
            .iter()
            .any(|url| !url.path().ends_with("/skill-sharing"))
    {
        return CliReport {
            verdict: CliVerdict::NotApplicable,
            summary: "The origin publishes no agent skills; the CLI installs agent skills, not \
                      skill-sharing services."
                .to_owned(),
            refused: Vec::new(),
        };
    }
    let index_code = |code: Code| {
        detail
            .diagnostics
            .iter()
            .find(|d| d.code == code && !is_entry_diagnostic(d.field.as_deref()))
    };
    // What drops a whole index, before any entry is read.
    let mut dropped = None;
    if has_agent_skills_index(detail) {
        if let Some(diagnostic) = index_code(Code::UnknownSchema) {
            dropped = Some(Refusal {
                entry: format!("the whole index {AGENT_SKILLS_INDEX}"),
                reason: format!(
                    "{}: the CLI drops an index whose `$schema` it does not know",
                    diagnostic.message
                ),
                fix: format!("set \"$schema\" to \"{SCHEMA_V02}\""),
            });
        } else if index_code(Code::MissingSchema).is_some() || index_code(Code::BareArray).is_some()
        {
            dropped = Some(Refusal {
                entry: format!("the whole index {AGENT_SKILLS_INDEX}"),
                reason: "without `$schema` the CLI reads it as v0.1: every entry would need a \
                         `files` list naming SKILL.md, and one entry without it drops the \
                         whole index"
                    .to_owned(),
                fix: format!(
                    "publish an object {{\"$schema\": \"{SCHEMA_V02}\", \"skills\": [...]}}"
                ),
            });
        }
    }

    // Entry by entry: the records' entry diagnostics, and the index's for entries that made
    // no record.
    let mut refused = Vec::new();
    for skill in &agent_skills {
        let mut reasons = Vec::new();
        let mut fixes: Vec<&str> = Vec::new();
        for diagnostic in &skill.diagnostics {
            let entry = is_entry_diagnostic(diagnostic.field.as_deref());
            if (entry && REFUSED_ENTRY.contains(&diagnostic.code))
                || diagnostic.code == Code::InvalidName
            {
                if !reasons.contains(&diagnostic.message) {
                    reasons.push(diagnostic.message.clone());
                }
                if !fixes.contains(&diagnostic.code.hint()) {
                    fixes.push(diagnostic.code.hint());
                }
            }
        }
        if reasons.is_empty() && skill.verdict() == Verdict::Invalid {
            reasons.push("the skill itself is invalid (see its page)".to_owned());
        }
        if !reasons.is_empty() {
            refused.push(Refusal {
                entry: skill.name.to_string(),
                reason: reasons.join("; "),
                fix: if fixes.is_empty() {
                    "open the skill's page and apply the fix of each error".to_owned()
                } else {
                    fixes.join("; ")
                },
            });
        }
    }
    // A v0.1 index is all or nothing: one refused entry drops it.
    let legacy_refused = agent_skills.iter().any(|skill| {
        skill.index_url.path().ends_with(LEGACY_INDEX)
            && refused
                .iter()
                .any(|refusal| refusal.entry == skill.name.as_str())
    });
    if legacy_refused && dropped.is_none() {
        dropped = Some(Refusal {
            entry: format!("the whole index {LEGACY_INDEX}"),
            reason: "a v0.1 index is read all or nothing: one entry the CLI refuses drops the \
                     whole index"
                .to_owned(),
            fix: "fix the entries below, or move to a v0.2 index, whose entries are judged one \
                  by one"
                .to_owned(),
        });
    }
    let refused_skills = refused.len();
    for diagnostic in &detail.diagnostics {
        if is_entry_diagnostic(diagnostic.field.as_deref())
            && REFUSED_ENTRY.contains(&diagnostic.code)
        {
            let field = diagnostic.field.as_deref().unwrap_or("entry");
            let entry = field.split('.').next().unwrap_or(field).to_owned();
            refused.push(Refusal {
                entry,
                reason: diagnostic.message.clone(),
                fix: diagnostic.code.hint().to_owned(),
            });
        }
    }
    let total = agent_skills.len();
    let installable = total.saturating_sub(refused_skills);
    let (verdict, summary) = match &dropped {
        Some(_) if refused.is_empty() => (
            CliVerdict::None,
            "The CLI drops the whole index, so it installs nothing from this origin; the fix \
             below is all it takes."
                .to_owned(),
        ),
        Some(_) => (
            CliVerdict::None,
            format!(
                "The CLI drops the whole index, so it installs nothing from this origin; once \
                 that is fixed it would still refuse the {} entries below.",
                refused.len()
            ),
        ),
        None if refused.is_empty() => (
            CliVerdict::All,
            format!("The CLI installs all {total} agent skills as published."),
        ),
        None if installable == 0 => (
            CliVerdict::None,
            "The CLI refuses every entry of this origin's index.".to_owned(),
        ),
        None => (
            CliVerdict::Some,
            format!(
                "The CLI installs {installable} of {total} agent skills; it refuses the entries \
                 below."
            ),
        ),
    };
    refused.splice(0..0, dropped);
    CliReport {
        verdict,
        summary,
        refused,
    }
}

#[cfg(test)]
mod tests {
    use formats::{Access, Diagnostic};
    use store::Outcome;
    use url::Url;

    use super::*;
    use crate::testing;
    use crate::wire::DiagnosticView;

    const V02: &str = "http://a.test/.well-known/agent-skills/index.json";
    const V01: &str = "http://a.test/.well-known/skills/index.json";

    fn detail(index: &str, diagnostics: &[Diagnostic]) -> DomainDetail {
        DomainDetail {
            domain: "a.test".parse().unwrap(),
            origin: "http://a.test".to_owned(),
            outcome: Outcome::Ok,
            formats: vec![Format::AgentSkills],
            indexes: vec![Url::parse(index).unwrap()],
            skills: 2,
            requests: 3,
            errors: Vec::new(),
            errors_omitted: 0,
            diagnostics: diagnostics.iter().map(DiagnosticView::from).collect(),
            crawled_at: time::OffsetDateTime::UNIX_EPOCH,
            last_success: None,
            caching: None,
            crawling: false,
        }
    }

    fn skills(index: &str) -> Vec<Skill> {
        ["a.test/alpha", "a.test/beta"]
            .into_iter()
            .map(|id| Skill {
                index_url: Url::parse(index).unwrap(),
                ..testing::record(id, Access::Public)
            })
            .collect()
    }

    #[test]
    fn a_sound_v02_index_installs_everything() {
        let report = skills_cli(&detail(V02, &[]), &skills(V02));
        assert_eq!(report.verdict, CliVerdict::All);
        assert!(report.refused.is_empty());
    }

    #[test]
    fn an_index_without_schema_or_with_an_unknown_one_is_dropped_whole() {
        for code in [Code::MissingSchema, Code::UnknownSchema] {
            let diagnostic = Diagnostic::new(code, "about the schema");
            let report = skills_cli(&detail(V02, &[diagnostic]), &skills(V02));
            assert_eq!(report.verdict, CliVerdict::None, "{code:?}");
            assert!(report.refused[0].entry.starts_with("the whole index"));
            assert!(report.refused[0].fix.contains("$schema"), "{code:?}");
        }
        // A legacy index has no `$schema` by design.
        let diagnostic = Diagnostic::new(Code::MissingSchema, "no schema");
        let report = skills_cli(&detail(V01, &[diagnostic]), &skills(V01));
        assert_eq!(report.verdict, CliVerdict::All);
    }

    #[test]
    fn a_v02_entry_with_a_sha256_field_is_refused_with_its_fix() {
        let mut records = skills(V02);
        records[0].diagnostics.push(
            Diagnostic::new(Code::Sha256Field, "entry has `sha256` instead of `digest`")
                .at("skills[0].sha256"),
        );
        let report = skills_cli(&detail(V02, &[]), &records);
        assert_eq!(report.verdict, CliVerdict::Some);
        assert_eq!(report.refused.len(), 1);
        assert_eq!(report.refused[0].entry, "alpha");
        assert_eq!(report.refused[0].fix, Code::Sha256Field.hint());
        // An entry that made no record is named by its place in the index.
        let skipped = Diagnostic::new(Code::UnknownType, "unknown type").at("skills[2].type");
        let report = skills_cli(&detail(V02, &[skipped]), &records);
        assert_eq!(report.refused[1].entry, "skills[2]");
    }

    #[test]
    fn one_refused_entry_drops_a_legacy_index_whole() {
        let mut records = skills(V01);
        records[1].diagnostics.push(
            Diagnostic::new(Code::InvalidName, "invalid skill name \"Beta\"").at("skills[1].name"),
        );
        let report = skills_cli(&detail(V01, &[]), &records);
        assert_eq!(report.verdict, CliVerdict::None);
        assert!(report.refused[0].entry.ends_with(LEGACY_INDEX));
        assert_eq!(report.refused[1].entry, "beta");
    }

    #[test]
    fn services_are_not_for_the_skills_cli() {
        let mut services = detail("http://a.test/.well-known/skill-sharing", &[]);
        services.formats = vec![Format::SkillSharing];
        let records: Vec<Skill> = skills(V02)
            .into_iter()
            .map(|skill| Skill {
                format: Format::SkillSharing,
                ..skill
            })
            .collect();
        let report = skills_cli(&services, &records);
        assert_eq!(report.verdict, CliVerdict::NotApplicable);
    }
}
