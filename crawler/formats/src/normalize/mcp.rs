//! An MCP server's skill (a checked `skills/list` entry plus the files read for it) becomes
//! one record.
//!
//! The host-side checks of SEP-2640 happen here: every file read is checked against its
//! listing, size first and then digest, and the SKILL.md frontmatter is compared with the
//! listing's field by field. Any discrepancy is a verification failure, as a digest mismatch
//! is: the record keeps the listing's name and description, `digest_status: mismatch` and an
//! error, and none of the content read.

use time::OffsetDateTime;
use url::Url;

use super::{Fetched, MAX_SKILL_MD_BYTES, Source, apply_skill_md, inspect, record_file};
use crate::audit::AuditFile;
use crate::diagnostic::{Code, Diagnostic};
use crate::mcp::{self, ListedFiles, ListedSkill, SKILL_MD};
use crate::skill::{
    AGENT_SKILL_CAPABILITY, Access, Artifact, Digest, DigestStatus, FileEntry, Format, Skill,
    SkillId,
};

/// A file read for a listed skill: its path relative to the skill root, and what reading it
/// gave.
#[derive(Debug, Clone, Copy)]
pub struct McpRead<'a> {
    /// The path relative to the skill root (`SKILL.md`, `scripts/run.py`, …).
    pub path: &'a str,
    /// The bytes read, or why there are none.
    pub fetched: Fetched<'a>,
}

/// Returns the `source_url` of an MCP skill: the endpoint URL with the skill's URI as its
/// fragment (`https://host/mcp#skill://pdf/SKILL.md`). It keeps the endpoint's origin, so
/// that it reads as content of the publisher's host, and the `skill://` URI the content is
/// read under.
pub fn mcp_source_url(endpoint: &Url, skill_uri: &str) -> Url {
    let mut url = endpoint.clone();
    url.set_fragment(Some(skill_uri));
    url
}

/// Builds the record of a skill an MCP server lists, from the files read for it (in any
/// order; SKILL.md must be among them unless the listing entry was refused). `source` is the
/// endpoint. Files the listing declares but `reads` lacks are not verified, and the content
/// is then not used.
pub fn mcp_skill(
    source: &Source,
    listed: &ListedSkill,
    reads: &[McpRead<'_>],
    seen_at: OffsetDateTime,
) -> Skill {
    let text = |key: &str| {
        listed
            .frontmatter
            .get(key)
            .and_then(|value| value.as_str())
            .map(str::trim)
            .unwrap_or_default()
            .to_owned()
    };
    let title = match text("name") {
        name if name.is_empty() => listed.slug.to_string(),
        name => name,
    };
    let mut skill = Skill {
        id: SkillId::new(source.domain().clone(), listed.slug.clone()),
        domain: source.domain().clone(),
        format: Format::McpSkills,
        name: listed.slug.clone(),
        title,
        description: text("description"),
        capability_type: AGENT_SKILL_CAPABILITY.to_owned(),
        access: Access::Public,
        version: None,
        source_url: mcp_source_url(source.index_url(), &listed.uri),
        index_url: source.index_url().clone(),
        artifact: Artifact::SkillMd,
        digest: None,
        digest_status: DigestStatus::Unfetched,
        frontmatter: serde_json::Map::new(),
        body: String::new(),
        files: match &listed.files {
            ListedFiles::Files(files) => files
                .iter()
                .map(|file| FileEntry {
                    path: file.path.clone(),
                    size: Some(file.size),
                    sha256: Some(file.digest),
                })
                .collect(),
            ListedFiles::Dynamic => Vec::new(),
        },
        tags: Vec::new(),
        license: None,
        diagnostics: listed.diagnostics.clone(),
        risk: crate::audit::Risk::None,
        findings: Vec::new(),
        fingerprint: None,
        first_seen: seen_at,
        last_seen: seen_at,
        last_changed: seen_at,
    };
    if listed.refused {
        return skill;
    }
    let read = |path: &str| reads.iter().find(|read| read.path == path);

    let Some(skill_md_read) = read(SKILL_MD) else {
        skill.diagnostics.push(Diagnostic::new(
            Code::Unfetched,
            format!("{} was not read", listed.uri),
        ));
        return skill;
    };
    let skill_md = match skill_md_read.fetched {
        Fetched::Bytes { bytes, .. } => bytes,
        Fetched::Failed(why) => {
            skill.diagnostics.push(why.clone());
            return skill;
        }
    };
    skill.digest = Some(Digest::of(skill_md));

    // Size, then digest, of every file the listing declares; the content is used only when
    // all of them match.
    match &listed.files {
        ListedFiles::Files(files) => {
            skill.digest_status = DigestStatus::Verified;
            for file in files {
                let bytes = match read(&file.path).map(|read| read.fetched) {
                    Some(Fetched::Bytes { bytes, .. }) => bytes,
                    Some(Fetched::Failed(why)) => {
                        // Nothing of the skill is used: it was not had whole.
                        skill.digest_status = DigestStatus::Unfetched;
                        skill.diagnostics.push(why.clone());
                        return skill;
                    }
                    None => {
                        skill.digest_status = DigestStatus::Unfetched;
                        skill.diagnostics.push(Diagnostic::new(
                            Code::Unfetched,
                            format!("{} was not read; the skill's content is not used", file.uri),
                        ));
                        return skill;
                    }
                };
                if let Err(mismatch) = mcp::check_file(file, bytes) {
                    skill.digest_status = DigestStatus::Mismatch;
                    skill.diagnostics.push(mismatch);
                    return skill;
                }
            }
        }
        ListedFiles::Dynamic => {
            skill.digest_status = DigestStatus::Absent;
            skill.diagnostics.push(Diagnostic::new(
                Code::DynamicResources,
                "the server lists this skill's files as \"dynamic\": only SKILL.md is read, and nothing can be verified",
            ));
        }
    }

    if skill_md.len() > MAX_SKILL_MD_BYTES {
        skill.diagnostics.push(Diagnostic::new(
            Code::TooLarge,
            format!(
                "SKILL.md is {} bytes, more than the {MAX_SKILL_MD_BYTES} bytes used",
                skill_md.len()
            ),
        ));
        return skill;
    }
    let parsed = crate::skill_md::parse(skill_md, Some(&listed.folder));
    let differences = mcp::compare_frontmatter(&listed.frontmatter, &parsed.frontmatter);
    if !differences.is_empty() {
        // SEP-2640: a frontmatter that differs from the listing fails verification as a
        // digest mismatch does. When the frontmatter could not be read at all, say why too.
        skill.digest_status = DigestStatus::Mismatch;
        skill.diagnostics.extend(differences);
        skill.diagnostics.extend(
            parsed
                .diagnostics
                .into_iter()
                .filter(|diagnostic| unreadable_frontmatter(diagnostic.code)),
        );
        return skill;
    }
    // The listing's name checks already said what is wrong with the name; the parser's
    // `name_mismatch` (name against folder) would say it twice.
    let mut parsed = parsed;
    parsed.diagnostics.retain(|diagnostic| {
        !matches!(diagnostic.code, Code::NameMismatch | Code::InvalidName)
            || !skill
                .diagnostics
                .iter()
                .any(|had| had.code == diagnostic.code)
    });
    skill.files.clear();
    let mut had = Vec::with_capacity(reads.len());
    for read in reads {
        if let Fetched::Bytes { bytes, .. } = read.fetched {
            record_file(&mut skill, read.path, bytes);
            had.push(AuditFile {
                path: read.path,
                bytes,
            });
        }
    }
    apply_skill_md(&mut skill, parsed);
    inspect(&mut skill, &had);
    skill
}

/// Codes that say a SKILL.md's frontmatter could not be read at all.
fn unreadable_frontmatter(code: Code) -> bool {
    matches!(
        code,
        Code::InvalidUtf8
            | Code::MissingFrontmatter
            | Code::UnclosedFrontmatter
            | Code::InvalidYaml
            | Code::YamlLimit
            | Code::FrontmatterNotMapping
    )
}

#[cfg(test)]
mod tests;
