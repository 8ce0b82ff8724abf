//! `manifest.json`: what an export holds and what it left out, so that a reader can check
//! every byte and knows what is not there.

use formats::{Digest, SkillId};
use indexer::{Caller, Filters};
use serde::Serialize;
use time::OffsetDateTime;

use super::Layout;

/// The manifest's file name, at the root of the export.
pub const MANIFEST: &str = "manifest.json";

/// The manifest of one export.
#[derive(Debug, Clone, Serialize)]
pub struct Manifest {
    /// The skillscout version that made the export.
    pub skillscout_version: &'static str,
    /// When the export was made.
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// The layout.
    pub layout: Layout,
    /// The search text (empty: every record the filters select).
    pub query: String,
    /// The exact filters.
    pub filters: Filters,
    /// With `--since`: only what changed since then.
    #[serde(with = "time::serde::rfc3339::option")]
    pub since: Option<OffsetDateTime>,
    /// Who the export was made for (`anonymous` never holds a private skill).
    pub caller: Caller,
    /// The counts.
    pub summary: Summary,
    /// The skills exported, in id order, and where each one is.
    pub skills: Vec<ExportedSkill>,
    /// Every file written (the manifest aside), with its size and SHA-256.
    pub files: Vec<FileRecord>,
    /// Skills written under another name than their own (`skills-dir`: a name taken by
    /// another publisher's skill, or a SKILL.md whose `name` is not its folder's).
    pub renamed: Vec<Renamed>,
    /// Files of exported skills that the directory does not hold (never fetched, or their
    /// bytes were not kept): not in the export.
    pub missing: Vec<Missing>,
    /// Selected skills that are not in the export, and why.
    pub left_out: Vec<LeftOut>,
    /// With `--since`: the skills removed from their index since then (tombstones).
    pub removed: Vec<Removed>,
    /// Anything else the reader should know (a search deeper than the index pages).
    pub notes: Vec<String>,
}

/// The counts of an export, as its summary line prints them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Skills exported.
    pub skills: usize,
    /// Files written (the manifest aside).
    pub files: usize,
    /// Bytes of those files.
    pub bytes: u64,
    /// Skills renamed.
    pub renamed: usize,
    /// Files missing.
    pub missing: usize,
    /// Skills left out.
    pub left_out: usize,
    /// Tombstones.
    pub removed: usize,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} skills, {} files, {} bytes, {} renamed, {} missing, {} left out, {} removed",
            self.skills,
            self.files,
            self.bytes,
            self.renamed,
            self.missing,
            self.left_out,
            self.removed
        )
    }
}

/// One exported skill.
#[derive(Debug, Clone, Serialize)]
pub struct ExportedSkill {
    /// The record's id.
    pub id: SkillId,
    /// Where it is in the export: its folder, artifact or line file.
    pub path: String,
}

/// One file written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileRecord {
    /// Its path in the export, `/`-separated.
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
    /// The SHA-256 of its bytes.
    pub sha256: Digest,
}

/// A skill written under another name.
#[derive(Debug, Clone, Serialize)]
pub struct Renamed {
    /// The record's id.
    pub id: SkillId,
    /// Its own name (its SKILL.md's `name` when only that differed from the folder).
    pub from: String,
    /// The name (and folder) it has in the export.
    pub to: String,
}

/// A file of an exported skill that is not in the export.
#[derive(Debug, Clone, Serialize)]
pub struct Missing {
    /// The record's id.
    pub id: SkillId,
    /// The file's path in the skill.
    pub path: String,
    /// Why it is missing.
    pub reason: String,
}

/// A selected skill that is not in the export.
#[derive(Debug, Clone, Serialize)]
pub struct LeftOut {
    /// The record's id.
    pub id: SkillId,
    /// Why it was left out.
    pub reason: String,
}

/// A skill removed from its index (a tombstone of the change log).
#[derive(Debug, Clone, Serialize)]
pub struct Removed {
    /// The record's id.
    pub id: SkillId,
    /// When it was removed.
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
}
