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

use serde::Serialize;

use super::Site;
use crate::diagnostic::Code;
use crate::index::SCHEMA_V0_2;
use crate::site::{AGENT_SKILLS_INDEX, LEGACY_SKILLS_INDEX, SKILL_SHARING_INDEX};
use crate::skill::{Format, Skill, Verdict};
use crate::verdict::is_entry_field;

/// The id of the vercel `skills` CLI in [`ClientReport::client`].
pub const SKILLS_CLI: &str = "skills-cli";

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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refusal {
    /// The skill's name, or the entry's field path when no record names it.
    pub entry: String,
    /// Why.
    pub reason: String,
    /// The one-line fix.
    pub fix: String,
}

/// What one agent client makes of a publisher's origin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClientReport {
    /// A stable id of the client ([`SKILLS_CLI`]).
    pub client: &'static str,
    /// The client and the version whose rules are applied, for people.
    pub name: &'static str,
    /// Whether it installs everything, some, none, or whether the question does not arise.
    pub verdict: ClientVerdict,
    /// One sentence.
    pub summary: String,
    /// The entries it refuses, each with its fix.
    pub refused: Vec<Refusal>,
}

/// How much a client installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientVerdict {
    /// Every skill.
    All,
    /// Some skills.
    Some,
    /// No skill.
    None,
    /// The origin publishes no agent skills.
    NotApplicable,
}

impl ClientVerdict {
    /// Returns the verdict's name, as serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            ClientVerdict::All => "all",
            ClientVerdict::Some => "some",
            ClientVerdict::None => "none",
            ClientVerdict::NotApplicable => "not_applicable",
        }
    }
}

/// Returns the report of the vercel `skills` CLI 1.7 with `verdict` and `summary`.
fn cli_report(verdict: ClientVerdict, summary: String, refused: Vec<Refusal>) -> ClientReport {
    ClientReport {
        client: SKILLS_CLI,
        name: "vercel skills CLI 1.7",
        verdict,
        summary,
        refused,
    }
}

/// Returns what the `skills` CLI 1.7 installs from the origin of `site`.
pub fn skills_cli(site: &Site<'_>) -> ClientReport {
    let agent_skills: Vec<&Skill> = site
        .skills
        .iter()
        .filter(|skill| skill.format == Format::AgentSkills)
        .collect();
    if site.indexes.is_empty() {
        return cli_report(
            ClientVerdict::None,
            "The CLI finds no index at this origin, so it installs nothing.".to_owned(),
            Vec::new(),
        );
    }
    if agent_skills.is_empty()
        && site
            .indexes
            .iter()
            .all(|url| url.path().ends_with(SKILL_SHARING_INDEX))
    {
        return cli_report(
            ClientVerdict::NotApplicable,
            "The origin publishes no agent skills; the CLI installs agent skills, not \
             skill-sharing services."
                .to_owned(),
            Vec::new(),
        );
    }
    let index_code = |code: Code| site.index_diagnostic(code);
    // What drops a whole index, before any entry is read.
    let mut dropped = None;
    if site.has_agent_skills_index() {
        if let Some(diagnostic) = index_code(Code::UnknownSchema) {
            dropped = Some(Refusal {
                entry: format!("the whole index {AGENT_SKILLS_INDEX}"),
                reason: format!(
                    "{}: the CLI drops an index whose `$schema` it does not know",
                    diagnostic.message
                ),
                fix: format!("set \"$schema\" to \"{SCHEMA_V0_2}\""),
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
                    "publish an object {{\"$schema\": \"{SCHEMA_V0_2}\", \"skills\": [...]}}"
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
            let entry = is_entry_field(diagnostic.field.as_deref());
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
        skill.index_url.path().ends_with(LEGACY_SKILLS_INDEX)
            && refused
                .iter()
                .any(|refusal| refusal.entry == skill.name.as_str())
    });
    if legacy_refused && dropped.is_none() {
        dropped = Some(Refusal {
            entry: format!("the whole index {LEGACY_SKILLS_INDEX}"),
            reason: "a v0.1 index is read all or nothing: one entry the CLI refuses drops the \
                     whole index"
                .to_owned(),
            fix: "fix the entries below, or move to a v0.2 index, whose entries are judged one \
                  by one"
                .to_owned(),
        });
    }
    let refused_skills = refused.len();
    for diagnostic in &site.diagnostics {
        if is_entry_field(diagnostic.field.as_deref()) && REFUSED_ENTRY.contains(&diagnostic.code) {
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
            ClientVerdict::None,
            "The CLI drops the whole index, so it installs nothing from this origin; the fix \
             below is all it takes."
                .to_owned(),
        ),
        Some(_) => (
            ClientVerdict::None,
            format!(
                "The CLI drops the whole index, so it installs nothing from this origin; once \
                 that is fixed it would still refuse the {} entries below.",
                refused.len()
            ),
        ),
        None if refused.is_empty() => (
            ClientVerdict::All,
            format!("The CLI installs all {total} agent skills as published."),
        ),
        None if installable == 0 => (
            ClientVerdict::None,
            "The CLI refuses every entry of this origin's index.".to_owned(),
        ),
        None => (
            ClientVerdict::Some,
            format!(
                "The CLI installs {installable} of {total} agent skills; it refuses the entries \
                 below."
            ),
        ),
    };
    refused.splice(0..0, dropped);
    cli_report(verdict, summary, refused)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Diagnostic;
    use crate::health::tests::{record, site};

    const V02: &str = "http://a.test/.well-known/agent-skills/index.json";
    const V01: &str = "http://a.test/.well-known/skills/index.json";

    fn skills(index: &str) -> Vec<Skill> {
        vec![record("a.test/alpha", index), record("a.test/beta", index)]
    }

    fn report(index: &str, diagnostics: &[Diagnostic], records: &[Skill]) -> ClientReport {
        let mut site = site("http://a.test", &[index], records);
        site.diagnostics = diagnostics.to_vec();
        skills_cli(&site)
    }

    #[test]
    fn a_sound_v02_index_installs_everything() {
        let report = report(V02, &[], &skills(V02));
        assert_eq!(report.verdict, ClientVerdict::All);
        assert!(report.refused.is_empty());
    }

    #[test]
    fn an_index_without_schema_or_with_an_unknown_one_is_dropped_whole() {
        for code in [Code::MissingSchema, Code::UnknownSchema] {
            let diagnostic = Diagnostic::new(code, "about the schema");
            let report = report(V02, &[diagnostic], &skills(V02));
            assert_eq!(report.verdict, ClientVerdict::None, "{code:?}");
            assert!(report.refused[0].entry.starts_with("the whole index"));
            assert!(report.refused[0].fix.contains("$schema"), "{code:?}");
        }
        // A legacy index has no `$schema` by design.
        let diagnostic = Diagnostic::new(Code::MissingSchema, "no schema");
        let report = report(V01, &[diagnostic], &skills(V01));
        assert_eq!(report.verdict, ClientVerdict::All);
    }

    #[test]
    fn a_v02_entry_with_a_sha256_field_is_refused_with_its_fix() {
        let mut records = skills(V02);
        records[0].diagnostics.push(
            Diagnostic::new(Code::Sha256Field, "entry has `sha256` instead of `digest`")
                .at("skills[0].sha256"),
        );
        let refused = report(V02, &[], &records);
        assert_eq!(refused.verdict, ClientVerdict::Some);
        assert_eq!(refused.refused.len(), 1);
        assert_eq!(refused.refused[0].entry, "alpha");
        assert_eq!(refused.refused[0].fix, Code::Sha256Field.hint());
        // An entry that made no record is named by its place in the index.
        let skipped = Diagnostic::new(Code::UnknownType, "unknown type").at("skills[2].type");
        let refused = report(V02, &[skipped], &records);
        assert_eq!(refused.refused[1].entry, "skills[2]");
    }

    #[test]
    fn one_refused_entry_drops_a_legacy_index_whole() {
        let mut records = skills(V01);
        records[1].diagnostics.push(
            Diagnostic::new(Code::InvalidName, "invalid skill name \"Beta\"").at("skills[1].name"),
        );
        let refused = report(V01, &[], &records);
        assert_eq!(refused.verdict, ClientVerdict::None);
        assert!(refused.refused[0].entry.ends_with(LEGACY_SKILLS_INDEX));
        assert_eq!(refused.refused[1].entry, "beta");
    }

    #[test]
    fn services_are_not_for_the_skills_cli() {
        let records: Vec<Skill> = skills(V02)
            .into_iter()
            .map(|skill| Skill {
                format: Format::SkillSharing,
                ..skill
            })
            .collect();
        let mut services = site(
            "http://a.test",
            &["http://a.test/.well-known/skill-sharing"],
            &records,
        );
        services.formats = vec![Format::SkillSharing];
        assert_eq!(skills_cli(&services).verdict, ClientVerdict::NotApplicable);
    }
}
