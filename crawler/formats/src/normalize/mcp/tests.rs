use serde_json::{Value, json};
use time::macros::datetime;

use super::*;
use crate::mcp::read_listing;
use crate::skill::Verdict;

const SKILL_MD_TEXT: &str = "---\nname: pdf\ndescription: Reads PDFs.\nlicense: MIT\n---\n# PDF\n";
const SCRIPT: &[u8] = b"print('hi')\n";

fn source() -> Source {
    Source::new(Url::parse("http://127.0.0.1:9/mcp").unwrap()).unwrap()
}

fn listing_entry(frontmatter: Value, script_digest: Digest) -> ListedSkill {
    let entry = json!({
        "uri": "skill://pdf/SKILL.md",
        "frontmatter": frontmatter,
        "resources": [
            {"uri": "skill://pdf/SKILL.md", "digest": Digest::of(SKILL_MD_TEXT.as_bytes()).to_string(), "size": SKILL_MD_TEXT.len()},
            {"uri": "skill://pdf/scripts/run.py", "digest": script_digest.to_string(), "size": SCRIPT.len()},
        ],
    });
    read_listing(&[entry]).skills.remove(0)
}

fn good_frontmatter() -> Value {
    json!({"name": "pdf", "description": "Reads PDFs.", "license": "MIT"})
}

fn reads<'a>(skill_md: &'a [u8], script: &'a [u8]) -> [McpRead<'a>; 2] {
    [
        McpRead {
            path: "SKILL.md",
            fetched: Fetched::Bytes {
                bytes: skill_md,
                content_type: None,
            },
        },
        McpRead {
            path: "scripts/run.py",
            fetched: Fetched::Bytes {
                bytes: script,
                content_type: None,
            },
        },
    ]
}

const SEEN: OffsetDateTime = datetime!(2026-11-25 12:00 UTC);

#[test]
fn a_verified_skill() {
    let listed = listing_entry(good_frontmatter(), Digest::of(SCRIPT));
    let skill = mcp_skill(
        &source(),
        &listed,
        &reads(SKILL_MD_TEXT.as_bytes(), SCRIPT),
        SEEN,
    );
    assert_eq!(skill.diagnostics, []);
    assert_eq!(skill.verdict(), Verdict::Valid);
    assert_eq!(skill.id.to_string(), "127.0.0.1:9/pdf");
    assert_eq!(skill.format, Format::McpSkills);
    assert_eq!(skill.digest_status, DigestStatus::Verified);
    assert_eq!(skill.digest, Some(Digest::of(SKILL_MD_TEXT.as_bytes())));
    assert_eq!(
        skill.source_url.as_str(),
        "http://127.0.0.1:9/mcp#skill://pdf/SKILL.md"
    );
    assert_eq!(skill.index_url.as_str(), "http://127.0.0.1:9/mcp");
    assert_eq!(skill.body, "# PDF\n");
    assert_eq!(skill.license.as_deref(), Some("MIT"));
    let files: Vec<(&str, Option<u64>, Option<Digest>)> = skill
        .files
        .iter()
        .map(|file| (file.path.as_str(), file.size, file.sha256))
        .collect();
    assert_eq!(
        files,
        [
            (
                "SKILL.md",
                Some(SKILL_MD_TEXT.len() as u64),
                Some(Digest::of(SKILL_MD_TEXT.as_bytes()))
            ),
            (
                "scripts/run.py",
                Some(SCRIPT.len() as u64),
                Some(Digest::of(SCRIPT))
            ),
        ]
    );
}

#[test]
fn a_lying_digest_keeps_the_content_out() {
    let listed = listing_entry(good_frontmatter(), Digest::of(b"something else"));
    let skill = mcp_skill(
        &source(),
        &listed,
        &reads(SKILL_MD_TEXT.as_bytes(), SCRIPT),
        SEEN,
    );
    assert_eq!(skill.digest_status, DigestStatus::Mismatch);
    assert_eq!(skill.verdict(), Verdict::Invalid);
    assert!(
        skill
            .diagnostics
            .iter()
            .any(|d| d.code == Code::DigestMismatch)
    );
    assert_eq!(skill.body, "");
    assert!(skill.frontmatter.is_empty());
}

#[test]
fn a_wrong_size_is_found_before_the_digest() {
    let listed = listing_entry(good_frontmatter(), Digest::of(SCRIPT));
    let skill = mcp_skill(
        &source(),
        &listed,
        &reads(SKILL_MD_TEXT.as_bytes(), b"print()"),
        SEEN,
    );
    let codes: Vec<Code> = skill.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, [Code::SizeMismatch]);
    assert_eq!(skill.verdict(), Verdict::Invalid);
}

#[test]
fn a_frontmatter_unlike_the_listing_fails_verification() {
    let listed = listing_entry(
        json!({"name": "pdf", "description": "Reads every PDF.", "license": "MIT"}),
        Digest::of(SCRIPT),
    );
    let skill = mcp_skill(
        &source(),
        &listed,
        &reads(SKILL_MD_TEXT.as_bytes(), SCRIPT),
        SEEN,
    );
    assert_eq!(skill.digest_status, DigestStatus::Mismatch);
    assert_eq!(skill.verdict(), Verdict::Invalid);
    let mismatches: Vec<&Diagnostic> = skill
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::FrontmatterMismatch)
        .collect();
    assert_eq!(mismatches.len(), 1);
    assert_eq!(
        mismatches[0].field.as_deref(),
        Some("frontmatter.description")
    );
    assert_eq!(skill.body, "");
    // The listing's description stands in the record, as an index's does.
    assert_eq!(skill.description, "Reads every PDF.");
}

#[test]
fn failed_and_missing_reads() {
    let listed = listing_entry(good_frontmatter(), Digest::of(SCRIPT));
    let failure = Diagnostic::new(Code::McpProtocol, "boom");
    let skill = mcp_skill(
        &source(),
        &listed,
        &[McpRead {
            path: "SKILL.md",
            fetched: Fetched::Failed(&failure),
        }],
        SEEN,
    );
    assert_eq!(skill.digest_status, DigestStatus::Unfetched);
    assert_eq!(skill.verdict(), Verdict::Invalid);
    // SKILL.md had and checked, a supporting file failed: nothing of the skill was had whole.
    let [skill_md, _] = reads(SKILL_MD_TEXT.as_bytes(), SCRIPT);
    let half = [
        skill_md,
        McpRead {
            path: "scripts/run.py",
            fetched: Fetched::Failed(&failure),
        },
    ];
    let skill = mcp_skill(&source(), &listed, &half, SEEN);
    assert_eq!(skill.digest_status, DigestStatus::Unfetched);
    assert_eq!(skill.verdict(), Verdict::Invalid);
    let only_skill_md = &reads(SKILL_MD_TEXT.as_bytes(), SCRIPT)[..1];
    let skill = mcp_skill(&source(), &listed, only_skill_md, SEEN);
    assert!(skill.diagnostics.iter().any(|d| d.code == Code::Unfetched));
    assert_eq!(skill.verdict(), Verdict::Invalid);
}

#[test]
fn dynamic_skills_read_skill_md_without_verification() {
    let entry = json!({"uri": "skill://pdf/SKILL.md", "frontmatter": good_frontmatter(), "resources": "dynamic"});
    let listed = read_listing(&[entry]).skills.remove(0);
    let skill = mcp_skill(
        &source(),
        &listed,
        &reads(SKILL_MD_TEXT.as_bytes(), SCRIPT)[..1],
        SEEN,
    );
    assert_eq!(skill.digest_status, DigestStatus::Absent);
    assert!(
        skill
            .diagnostics
            .iter()
            .any(|d| d.code == Code::DynamicResources)
    );
    assert_eq!(skill.verdict(), Verdict::Valid);
    assert_eq!(skill.body, "# PDF\n");
}

#[test]
fn refused_entries_are_never_read() {
    let entry = json!({"uri": "skill://pdf/SKILL.md", "frontmatter": good_frontmatter(), "resources": [
        {"uri": "skill://pdf/SKILL.md", "digest": Digest::of(b"").to_string(), "size": crate::mcp::MAX_SKILL_BYTES + 1},
    ]});
    let listed = read_listing(&[entry]).skills.remove(0);
    assert!(listed.refused);
    let skill = mcp_skill(
        &source(),
        &listed,
        &reads(SKILL_MD_TEXT.as_bytes(), SCRIPT),
        SEEN,
    );
    assert_eq!(skill.digest_status, DigestStatus::Unfetched);
    assert!(skill.diagnostics.iter().any(|d| d.code == Code::TooLarge));
    assert_eq!(skill.verdict(), Verdict::Invalid);
}

#[test]
fn an_unreadable_frontmatter_says_why() {
    let text = "no frontmatter here\n";
    let entry = json!({"uri": "skill://pdf/SKILL.md", "frontmatter": good_frontmatter(), "resources": [
        {"uri": "skill://pdf/SKILL.md", "digest": Digest::of(text.as_bytes()).to_string(), "size": text.len()},
    ]});
    let listed = read_listing(&[entry]).skills.remove(0);
    let skill = mcp_skill(
        &source(),
        &listed,
        &reads(text.as_bytes(), SCRIPT)[..1],
        SEEN,
    );
    assert_eq!(skill.digest_status, DigestStatus::Mismatch);
    let codes: Vec<Code> = skill.diagnostics.iter().map(|d| d.code).collect();
    assert!(codes.contains(&Code::FrontmatterMismatch), "{codes:?}");
    assert!(codes.contains(&Code::MissingFrontmatter), "{codes:?}");
}
