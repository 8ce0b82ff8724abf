//! Normalises every domain of the shared test corpus (real skills from public repositories,
//! laid out as `.test` domains) and checks the outcome against its `MANIFEST.json`: every
//! skill is accounted for, valid skills yield records whose SKILL.md digest matches, and
//! invalid ones carry the diagnostics the manifest's `issues` describe.
//!
//! The corpus lives beside the checkout (`../shared/corpus`); CI has it. Where it is absent the
//! test says so and passes, so that the crate's own tests still run on their own.

use std::collections::{BTreeMap, BTreeSet};

use crawler::local;
use formats::{Code, DigestStatus, Format, Severity, Skill};
use serde_json::Value;
use time::OffsetDateTime;

use crate::corpus_dir;

/// Maps one manifest issue (e.g. `invalid-name: 'Ahrefs Automation'`) to the diagnostic code
/// skillscout must report for it, or `None` for issues that are not about the published skill.
fn expected_code(issue: &str) -> Option<Code> {
    let kind = issue.split([':', ' ']).next().unwrap_or(issue);
    match kind {
        "description-over-1024-chars" => Some(Code::DescriptionTooLong),
        "large-SKILL.md" => Some(Code::LargeSkillMd),
        "invalid-name" => Some(Code::InvalidName),
        "missing-name" => Some(Code::MissingName),
        "no-frontmatter" => Some(Code::MissingFrontmatter),
        "missing-description" => Some(Code::MissingDescription),
        "crlf-line-endings" => Some(Code::CrlfLineEndings),
        "non-spec-frontmatter-keys" => Some(Code::UnknownField),
        // The corpus names skill folders after the frontmatter name, so a difference from the
        // *source repository's* folder is invisible to a crawler.
        "name-differs-from-source-folder" => None,
        other => panic!("unknown manifest issue kind {other:?}; teach this test about it"),
    }
}

/// Returns the keys listed by a `non-spec-frontmatter-keys: a, b` issue.
fn non_spec_keys(issue: &str) -> Vec<String> {
    issue
        .split_once(':')
        .map(|(_, keys)| keys.split(',').map(|key| key.trim().to_owned()).collect())
        .unwrap_or_default()
}

#[test]
fn corpus_matches_manifest() {
    let Some(corpus) = corpus_dir() else {
        return;
    };
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(corpus.join("MANIFEST.json")).unwrap()).unwrap();
    let now = OffsetDateTime::now_utc();
    let mut failures = Vec::new();
    let mut checked_skills = 0;
    let mut archives = 0;

    for domain in manifest["domains"].as_array().unwrap() {
        let name = domain["domain"].as_str().unwrap();
        let checked = local::check_tree(&corpus.join(name), now)
            .unwrap_or_else(|error| panic!("{name}: {error:#}"));
        for index in &checked.indexes {
            for diagnostic in &index.diagnostics {
                if diagnostic.severity == Severity::Error {
                    failures.push(format!("{name}: index error {diagnostic:?}"));
                }
            }
        }
        // A skill a domain publishes in both layouts yields one record, from the index probed
        // first, as a crawl does.
        let mut records: BTreeMap<String, Vec<&Skill>> = BTreeMap::new();
        for record in checked.records() {
            assert_eq!(record.format, Format::AgentSkills);
            records
                .entry(record.id.to_string())
                .or_default()
                .push(record);
        }
        let listed: BTreeSet<&str> = domain["skills"]
            .as_array()
            .unwrap()
            .iter()
            .map(|skill| skill["key"].as_str().unwrap())
            .collect();
        for id in records.keys() {
            if !listed.contains(id.as_str()) {
                failures.push(format!(
                    "{id}: record for a skill the manifest does not list"
                ));
            }
        }

        for skill in domain["skills"].as_array().unwrap() {
            let key = skill["key"].as_str().unwrap();
            let Some(found) = records.get(key) else {
                failures.push(format!("{key}: no record"));
                continue;
            };
            for record in found {
                checked_skills += 1;
                if record.artifact == formats::Artifact::Archive {
                    archives += 1;
                }
                check_record(skill, record, &mut failures);
            }
        }
    }

    let total = manifest["totals"]["skills"].as_u64().unwrap();
    assert!(
        checked_skills as u64 >= total,
        "checked {checked_skills} records for {total} skills"
    );
    assert!(archives > 0, "no archive was read");
    assert!(
        failures.is_empty(),
        "{} problems:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

pub(crate) fn check_record(skill: &Value, record: &Skill, failures: &mut Vec<String>) {
    let key = skill["key"].as_str().unwrap();
    let layout = record.index_url.path();
    let label = format!("{key} ({layout})");
    let issues: Vec<&str> = skill["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|issue| issue.as_str().unwrap())
        .collect();
    let codes: BTreeSet<Code> = record.diagnostics.iter().map(|d| d.code).collect();

    // The content is there and is the published SKILL.md.
    let expected_sha = skill["skill_md_sha256"].as_str().unwrap();
    match record.file("SKILL.md").and_then(|file| file.sha256) {
        Some(sha) if sha.hex() == expected_sha => {}
        other => failures.push(format!(
            "{label}: SKILL.md digest {other:?}, expected {expected_sha}"
        )),
    }
    let expected_status = if record.index_url.path().contains("/agent-skills/") {
        DigestStatus::Verified
    } else {
        DigestStatus::Absent
    };
    if record.digest_status != expected_status {
        failures.push(format!(
            "{label}: digest_status {:?}, expected {expected_status:?}",
            record.digest_status
        ));
    }
    if record.body.is_empty() && !issues.iter().any(|i| i.starts_with("no-frontmatter")) {
        failures.push(format!("{label}: empty body"));
    }

    // Every issue of the manifest is reported.
    let mut expected: BTreeSet<Code> = BTreeSet::new();
    for issue in &issues {
        let Some(code) = expected_code(issue) else {
            continue;
        };
        expected.insert(code);
        if !codes.contains(&code) {
            failures.push(format!("{label}: issue {issue:?} not reported as {code}"));
        }
        if code == Code::UnknownField {
            for key_name in non_spec_keys(issue) {
                let field = format!("frontmatter.{key_name}");
                let reported = record
                    .diagnostics
                    .iter()
                    .any(|d| d.code == Code::UnknownField && d.field.as_deref() == Some(&field));
                if !reported {
                    failures.push(format!("{label}: unknown field {key_name:?} not reported"));
                }
            }
        }
    }

    // Nothing else is an error: a name that differs from its folder is the one error that
    // follows from the manifest's facts rather than its issue list.
    let frontmatter_name = skill["frontmatter_name"].as_str();
    let folder = skill["dir"].as_str().unwrap();
    if frontmatter_name.is_some_and(|name| name != folder) {
        expected.insert(Code::NameMismatch);
    }
    if !skill["name_valid"].as_bool().unwrap() && frontmatter_name.is_some() {
        expected.insert(Code::InvalidName);
    }
    for diagnostic in &record.diagnostics {
        if diagnostic.severity == Severity::Error && !expected.contains(&diagnostic.code) {
            failures.push(format!("{label}: unexpected {diagnostic:?}"));
        }
    }
    let strictly_valid = issues.is_empty() && skill["name_valid"].as_bool().unwrap();
    if strictly_valid && !record.judgement().passes(formats::VerdictKind::Strict) {
        failures.push(format!("{label}: valid skill fails the strict verdict"));
    }
    if frontmatter_name.is_some() && record.title != frontmatter_name.unwrap_or_default() {
        failures.push(format!(
            "{label}: title {:?}, expected the frontmatter name {frontmatter_name:?}",
            record.title
        ));
    }
}
