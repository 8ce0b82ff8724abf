//! Exports: the skills a search selects, written offline in one of three layouts
//! (docs/export.md), and the well-known writer the
//! `/mirror/{domain}/…` routes share.
//!
//! - `skills-dir`: `<name>/SKILL.md` plus the skill's files, the layout agents load from
//!   (`.agents/skills/`, `.claude/skills/`); names made unique by the rule in `naming`.
//! - `well-known`: `<domain>/.well-known/agent-skills/index.json` (v0.2) plus the artifacts,
//!   servable as is; crawling it gives the same records (the read model's `well_known`, which
//!   the mirror serves too).
//! - `jsonl`: `skills.jsonl`, one record per line, as `GET /v1/skills/{domain}/{name}` sends
//!   it.
//!
//! Every export has a `manifest.json` (`manifest`): every file with its size and SHA-256, the
//! query, filters and time, the version, the skills left out and why, the files missing, the
//! renamings and, with `since`, the tombstones. On disk an export is built beside its target
//! and renamed into place (`sink::publish_atomically`); over HTTP it is streamed as it is
//! written (`sink::TarSink` over the response body).
//!
//! Skills the safety audit finds `critical` are left out (listed in `left_out` with the
//! reason) unless the request asks for them (`include_risky`).
//!
//! Only verified content is exported: bytes come from the blob store, which holds only what
//! matched its digest; a file the directory does not hold is listed as missing. The caller's
//! access applies: the read model selects what the caller may see (`directory::selection`),
//! and every record is asked about again when it is read to be written.
//!
//! # Layout
//!
//! - `http`: `GET /v1/export`, streamed from a blocking thread through a bounded channel.
//! - `naming`: folder names of `skills-dir`.
//! - `manifest`: [`Manifest`].
//! - `sink`: folders, `.tar.gz` streams, and the atomic rename.

pub(crate) mod http;
mod manifest;
mod naming;
mod sink;

use std::io::{self, Seek, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use formats::{Digest, Skill, SkillId};
use indexer::{Caller, Filters};
use serde::Serialize;
use sha2::{Digest as _, Sha256};
use time::OffsetDateTime;

pub use manifest::{
    ExportedSkill, FileRecord, LeftOut, MANIFEST, Manifest, Missing, Removed, Renamed, Summary,
};
pub use sink::PublishError;
pub(crate) use sink::{Sink, TarSink};

use crate::directory::Directory;
use crate::directory::files::check_path;
use crate::directory::selection::{Loaded, Plan, Selection};
use crate::directory::well_known;
use crate::error::ApiError;
use crate::state::AppState;
use sink::{DirSink, Target, publish_atomically};

/// Why a file listed by a legacy (v0.1) index is missing when its bytes were never fetched,
/// and how to get them.
const NEVER_FETCHED: &str = "it was never fetched: the crawl kept only the SKILL.md of this \
    legacy (v0.1) skill (crawled with --no-prefetch-files, or the file is past the prefetch \
    limits); crawl its domain again without --no-prefetch-files to fetch it";

/// The file of the `jsonl` layout.
pub const JSONL_FILE: &str = "skills.jsonl";
/// The SKILL.md file name.
const SKILL_MD: &str = "SKILL.md";

/// How an export is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// `<name>/SKILL.md` plus files: what agents load.
    #[default]
    SkillsDir,
    /// `<domain>/.well-known/agent-skills/index.json` plus artifacts: a federation source.
    WellKnown,
    /// One record per line.
    Jsonl,
}

impl Layout {
    /// Returns the layout's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Layout::SkillsDir => "skills-dir",
            Layout::WellKnown => "well-known",
            Layout::Jsonl => "jsonl",
        }
    }
}

impl FromStr for Layout {
    type Err = String;

    fn from_str(raw: &str) -> Result<Layout, String> {
        match raw {
            "skills-dir" => Ok(Layout::SkillsDir),
            "well-known" => Ok(Layout::WellKnown),
            "jsonl" => Ok(Layout::Jsonl),
            other => Err(format!(
                "unknown layout {other:?} (expected skills-dir, well-known or jsonl)"
            )),
        }
    }
}

/// What to export.
#[derive(Debug, Clone, Default)]
pub struct ExportRequest {
    /// Search text; empty selects every record the filters select.
    pub query: String,
    /// Exact filters, as for searches (no `verdict`: `valid` and `lenient`; no `risk`: every
    /// risk, critical skills listed as left out unless `include_risky`).
    pub filters: Filters,
    /// Only what changed at or after this time; removals are listed as tombstones.
    pub since: Option<OffsetDateTime>,
    /// Who the export is for.
    pub caller: Caller,
    /// The layout.
    pub layout: Layout,
    /// Writes the skills the safety audit finds `critical` too; without it they are listed in
    /// the manifest's `left_out`, with the reason.
    pub include_risky: bool,
}

impl ExportRequest {
    /// Returns what the read model selects for this export.
    pub(crate) fn selection(&self) -> Selection<'_> {
        Selection {
            query: &self.query,
            filters: &self.filters,
            since: self.since,
            caller: self.caller,
            include_risky: self.include_risky,
        }
    }
}

/// Chooses the records of `request` (blocking).
pub(crate) fn plan(directory: &Directory, request: &ExportRequest) -> Result<Plan, ApiError> {
    directory.plan(&request.selection())
}

/// What an export reports as it goes (a terminal progress bar).
pub trait ExportProgress: Send + Sync {
    /// The selection is made: `skills` records will be written.
    fn planned(&self, skills: usize);
    /// One more record was handled (written or left out).
    fn advanced(&self);
}

/// Reports nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl ExportProgress for NoProgress {
    fn planned(&self, _skills: usize) {}
    fn advanced(&self) {}
}

/// Why an export failed; nothing was left behind.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The request cannot be answered as asked (a bad filter, a query over the length limit):
    /// change it.
    #[error(transparent)]
    Request(ApiError),
    /// The export could not be put in place (see [`PublishError`]).
    #[error(transparent)]
    Publish(#[from] PublishError),
    /// Reading what the export holds failed (the crawl store, the index or the blob store).
    #[error("cannot read what the export holds: {}", .0.detail())]
    Read(ApiError),
    /// Writing the export failed.
    #[error("cannot write {}", .path.display())]
    Write {
        /// The file being written.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
}

impl ExportError {
    /// Returns true when the request is at fault (change it), not the directory or the disk.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            ExportError::Request(_) | ExportError::Publish(PublishError::Exists(_))
        )
    }
}

impl From<ApiError> for ExportError {
    fn from(error: ApiError) -> ExportError {
        if error.status_and_code().0.is_client_error() {
            ExportError::Request(error)
        } else {
            ExportError::Read(error)
        }
    }
}

/// Writes the export of `request` to `out` (blocking): a folder, or with `archive` one
/// `.tar.gz`; built beside `out` and renamed into place, so a failure leaves nothing. An
/// existing `out` is refused unless `force`. Returns the manifest.
pub fn export_to_path(
    state: &AppState,
    request: &ExportRequest,
    out: &Path,
    archive: bool,
    force: bool,
    progress: &dyn ExportProgress,
) -> Result<Manifest, ExportError> {
    if !force && out.symlink_metadata().is_ok() {
        return Err(PublishError::Exists(out.to_owned()).into());
    }
    let directory = state.directory();
    let plan = plan(directory, request)?;
    progress.planned(plan.ids.len());
    let spool = out
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_owned();
    let now = OffsetDateTime::now_utc();
    let target = if archive {
        Target::File
    } else {
        Target::Folder
    };
    let manifest = publish_atomically(out, force, target, |temporary| {
        let failed = |source: io::Error| ExportError::Write {
            path: temporary.to_owned(),
            source,
        };
        if archive {
            let file = std::fs::File::create(temporary).map_err(failed)?;
            let mut sink = TarSink::new(io::BufWriter::new(file), unix_time(now));
            let manifest = write(
                directory,
                request,
                plan,
                Output::Files(&mut sink),
                &spool,
                now,
                progress,
            )?;
            let finished = sink
                .finish()
                .and_then(|writer| writer.into_inner().map_err(io::IntoInnerError::into_error))
                .and_then(|file| file.sync_all());
            finished.map_err(failed)?;
            Ok(manifest)
        } else {
            let mut sink = DirSink::new(temporary);
            write(
                directory,
                request,
                plan,
                Output::Files(&mut sink),
                &spool,
                now,
                progress,
            )
            .map_err(ExportError::from)
        }
    })?;
    Ok(manifest)
}

/// Where the records go.
pub(crate) enum Output<'a> {
    /// Files of the layout, and the manifest last.
    Files(&'a mut dyn Sink),
    /// Only for `jsonl`: the lines themselves, no manifest (`GET /v1/export` without
    /// `archive`).
    Lines(&'a mut dyn Write),
}

/// Seconds since the epoch (0 before it).
pub(crate) fn unix_time(at: OffsetDateTime) -> u64 {
    u64::try_from(at.unix_timestamp()).unwrap_or(0)
}

/// Writes the records of `plan` in `request.layout` (blocking). Large files are never held
/// in memory: a file an archive needs the size of first is spooled in `spool` (a folder on
/// the target's file system).
pub(crate) fn write(
    directory: &Directory,
    request: &ExportRequest,
    plan: Plan,
    output: Output<'_>,
    spool: &Path,
    now: OffsetDateTime,
    progress: &dyn ExportProgress,
) -> Result<Manifest, ApiError> {
    let mut writer = Writer {
        directory,
        request,
        manifest: Manifest {
            skillscout_version: env!("CARGO_PKG_VERSION"),
            created_at: now,
            layout: request.layout,
            query: request.query.clone(),
            filters: request.filters.clone(),
            since: request.since,
            caller: request.caller,
            summary: Summary::default(),
            skills: Vec::new(),
            files: Vec::new(),
            renamed: Vec::new(),
            missing: Vec::new(),
            left_out: Vec::new(),
            removed: plan
                .removed
                .into_iter()
                .map(|(id, at)| Removed { id, at })
                .collect(),
            notes: plan.notes,
        },
        progress,
    };
    let ids = plan.ids;
    match (request.layout, output) {
        (Layout::Jsonl, Output::Lines(lines)) => writer.jsonl(&ids, lines)?,
        (Layout::Jsonl, Output::Files(sink)) => {
            // A folder takes the lines in place; an archive needs their size before them, so
            // they are spooled beside the target first.
            let (mut file, spooled) = match sink.in_place(JSONL_FILE) {
                Some(file) => (file.map_err(io_error)?, false),
                None => {
                    let file = tempfile::tempfile_in(spool).map_err(|error| {
                        ApiError::Internal(format!("cannot spool in {}: {error}", spool.display()))
                    })?;
                    (file, true)
                }
            };
            let mut hashing = Hashing::new(io::BufWriter::new(&mut file));
            writer.jsonl(&ids, &mut hashing)?;
            let (size, digest) = hashing.finish().map_err(io_error)?;
            if spooled {
                file.rewind().map_err(io_error)?;
                sink.put_reader(JSONL_FILE, size, &mut file)
                    .map_err(io_error)?;
            }
            writer.recorded(JSONL_FILE, size, digest);
            writer.finish(sink)?;
        }
        (Layout::SkillsDir, Output::Files(sink)) => {
            writer.skills_dir(&ids, sink)?;
            writer.finish(sink)?;
        }
        (Layout::WellKnown, Output::Files(sink)) => {
            writer.well_known(&ids, sink)?;
            writer.finish(sink)?;
        }
        (layout, Output::Lines(_)) => {
            return Err(ApiError::Internal(format!(
                "the {} layout is made of files",
                layout.as_str()
            )));
        }
    }
    Ok(writer.manifest)
}

fn io_error(error: io::Error) -> ApiError {
    ApiError::Internal(format!("cannot write the export: {error}"))
}

/// The state of one export being written.
struct Writer<'a> {
    directory: &'a Directory,
    request: &'a ExportRequest,
    manifest: Manifest,
    progress: &'a dyn ExportProgress,
}

impl Writer<'_> {
    /// Reads a record to write: `None` (with a `left_out` entry when the caller may know of
    /// it) when it is gone, no longer visible or no longer of a wanted verdict.
    fn load(&mut self, id: &SkillId) -> Result<Option<Skill>, ApiError> {
        match self.directory.load(&self.request.selection(), id)? {
            Loaded::Skill(skill) => Ok(Some(*skill)),
            // Not even its id is shown to a caller who may not see it.
            Loaded::Hidden => Ok(None),
            Loaded::LeftOut(reason) => {
                self.left_out(id, reason);
                Ok(None)
            }
        }
    }

    /// True when `id` would be written as a skill folder now: an agent skill the caller may
    /// see, live, with a wanted verdict (what [`Writer::load`] and the format check keep).
    fn writable(&self, id: &SkillId) -> Result<bool, ApiError> {
        Ok(matches!(
            self.directory.load(&self.request.selection(), id)?,
            Loaded::Skill(skill) if skill.format != formats::Format::SkillSharing
        ))
    }

    fn left_out(&mut self, id: &SkillId, reason: String) {
        self.manifest.left_out.push(LeftOut {
            id: id.clone(),
            reason,
        });
    }

    fn missing(&mut self, id: &SkillId, path: &str, reason: String) {
        self.manifest.missing.push(Missing {
            id: id.clone(),
            path: path.to_owned(),
            reason,
        });
    }

    fn exported(&mut self, id: &SkillId, path: String) {
        self.manifest.skills.push(ExportedSkill {
            id: id.clone(),
            path,
        });
    }

    fn recorded(&mut self, path: &str, size: u64, sha256: Digest) {
        self.manifest.files.push(FileRecord {
            path: path.to_owned(),
            size,
            sha256,
        });
    }

    fn put(&mut self, sink: &mut dyn Sink, path: &str, bytes: &[u8]) -> Result<(), ApiError> {
        sink.put(path, bytes).map_err(io_error)?;
        self.recorded(path, bytes.len() as u64, Digest::of(bytes));
        Ok(())
    }

    /// Writes one of a skill's other files: one that cannot be written beside the others (a
    /// name that differs only in case on a case-insensitive disk, a file where another needs a
    /// folder) is listed as missing, and the export goes on; a failure of the output itself
    /// (a full disk, a closed connection) ends it.
    fn put_file(
        &mut self,
        sink: &mut dyn Sink,
        id: &SkillId,
        path: &str,
        bytes: &[u8],
    ) -> Result<(), ApiError> {
        match sink.put(path, bytes) {
            Ok(()) => {
                self.recorded(path, bytes.len() as u64, Digest::of(bytes));
                Ok(())
            }
            Err(error)
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::AlreadyExists
                        | std::io::ErrorKind::NotADirectory
                        | std::io::ErrorKind::IsADirectory
                        | std::io::ErrorKind::InvalidInput
                        | std::io::ErrorKind::InvalidFilename
                ) =>
            {
                let file = path.split_once('/').map_or(path, |(_, file)| file);
                self.missing(
                    id,
                    file,
                    format!("it cannot be written beside the skill's other files: {error}"),
                );
                Ok(())
            }
            Err(error) => Err(io_error(error)),
        }
    }

    /// The verified bytes of a file of `skill`, or why there are none.
    fn file_bytes(&self, skill: &Skill, path: &str) -> Result<Result<Vec<u8>, String>, ApiError> {
        let digest = match skill.file(path).and_then(|file| file.sha256) {
            Some(digest) => digest,
            // A SKILL.md artifact is the SKILL.md, even where the record lists no file.
            None if path == SKILL_MD && skill.artifact == formats::skill::Artifact::SkillMd => {
                match skill.digest {
                    Some(digest) => digest,
                    None => return Ok(Err("it was never fetched".to_owned())),
                }
            }
            None => return Ok(Err(NEVER_FETCHED.to_owned())),
        };
        match self.directory.blob(&digest)? {
            Some(bytes) => Ok(Ok(bytes)),
            None => Ok(Err(format!(
                "the directory does not hold its bytes ({digest})"
            ))),
        }
    }

    fn jsonl(&mut self, ids: &[SkillId], lines: &mut dyn Write) -> Result<(), ApiError> {
        for id in ids {
            self.progress.advanced();
            let Some(skill) = self.load(id)? else {
                continue;
            };
            let view = self.directory.record_view(self.request.caller, skill)?;
            let mut line = serde_json::to_vec(&view).map_err(|error| ApiError::internal(&error))?;
            line.push(b'\n');
            lines.write_all(&line).map_err(io_error)?;
            self.exported(id, JSONL_FILE.to_owned());
        }
        lines.flush().map_err(io_error)
    }

    fn skills_dir(&mut self, ids: &[SkillId], sink: &mut dyn Sink) -> Result<(), ApiError> {
        // Folder names go only to the skills that can be written: one left out (a service, a
        // record gone or no longer visible) must not take a name and rename another.
        let mut writable: Vec<SkillId> = Vec::new();
        for id in ids {
            if self.writable(id)? {
                writable.push(id.clone());
            }
        }
        let folders: std::collections::HashMap<SkillId, String> = writable
            .iter()
            .cloned()
            .zip(naming::folders(&writable))
            .collect();
        for id in ids {
            self.progress.advanced();
            let Some(skill) = self.load(id)? else {
                continue;
            };
            if skill.format == formats::Format::SkillSharing {
                self.left_out(id, "a skill-sharing service has no SKILL.md".to_owned());
                continue;
            }
            let Some(folder) = folders.get(id).cloned() else {
                self.left_out(id, "it changed while the export was written".to_owned());
                continue;
            };
            let skill_md = match self.file_bytes(&skill, SKILL_MD)? {
                Ok(bytes) => bytes,
                Err(why) => {
                    self.left_out(id, format!("its SKILL.md is missing: {why}"));
                    continue;
                }
            };
            // Agents require the frontmatter `name` to be the folder's: a skill renamed for a
            // collision, or whose SKILL.md names it otherwise, gets its SKILL.md's `name` set.
            let own_name = skill
                .frontmatter
                .get("name")
                .and_then(|name| name.as_str())
                .unwrap_or(id.slug().as_str())
                .to_owned();
            let skill_md = if folder == id.slug().as_str() && own_name == folder {
                skill_md
            } else {
                self.manifest.renamed.push(Renamed {
                    id: id.clone(),
                    from: if folder == id.slug().as_str() {
                        own_name
                    } else {
                        id.slug().to_string()
                    },
                    to: folder.clone(),
                });
                naming::with_name(&skill_md, &folder)
            };
            self.put(sink, &format!("{folder}/{SKILL_MD}"), &skill_md)?;
            for file in &skill.files {
                if file.path == SKILL_MD {
                    continue;
                }
                if check_path(&file.path).is_err() {
                    self.missing(id, &file.path, "its path is not safe to write".to_owned());
                    continue;
                }
                match self.file_bytes(&skill, &file.path)? {
                    Ok(bytes) => {
                        self.put_file(sink, id, &format!("{folder}/{}", file.path), &bytes)?;
                    }
                    Err(why) => self.missing(id, &file.path, why),
                }
            }
            self.exported(id, folder);
        }
        Ok(())
    }

    fn well_known(&mut self, ids: &[SkillId], sink: &mut dyn Sink) -> Result<(), ApiError> {
        let mut domain: Option<formats::Domain> = None;
        let mut entries = Vec::new();
        for id in ids {
            self.progress.advanced();
            if domain.as_ref() != Some(id.domain()) {
                if let Some(done) = domain.take() {
                    self.index(sink, &done, &mut entries)?;
                }
                domain = Some(id.domain().clone());
            }
            let Some(skill) = self.load(id)? else {
                continue;
            };
            let published = match self.directory.publish(&skill) {
                Ok(published) => published,
                Err(well_known::Unpublishable::Failed(detail)) => {
                    return Err(ApiError::Internal(detail));
                }
                Err(why) => {
                    self.left_out(id, why.reason());
                    continue;
                }
            };
            for path in &published.missing {
                let fetched = skill.file(path).is_some_and(|file| file.sha256.is_some());
                let why = if fetched {
                    "the directory does not hold its bytes"
                } else {
                    NEVER_FETCHED
                };
                self.missing(id, path, why.to_owned());
            }
            let path = format!("{}/{}/{}", id.domain(), well_known::BASE, published.path);
            self.put(sink, &path, &published.bytes)?;
            entries.push(published.entry);
            self.exported(id, path);
        }
        if let Some(done) = domain {
            self.index(sink, &done, &mut entries)?;
        }
        Ok(())
    }

    /// Writes a domain's index, when it has entries.
    fn index(
        &mut self,
        sink: &mut dyn Sink,
        domain: &formats::Domain,
        entries: &mut Vec<well_known::Entry>,
    ) -> Result<(), ApiError> {
        if entries.is_empty() {
            return Ok(());
        }
        let json = well_known::index_json(entries);
        entries.clear();
        self.put(sink, &format!("{domain}/{}", well_known::INDEX_PATH), &json)
    }

    /// Counts, then writes the manifest.
    fn finish(&mut self, sink: &mut dyn Sink) -> Result<(), ApiError> {
        let manifest = &mut self.manifest;
        manifest.summary = Summary {
            skills: manifest.skills.len(),
            files: manifest.files.len(),
            bytes: manifest.files.iter().map(|file| file.size).sum(),
            renamed: manifest.renamed.len(),
            missing: manifest.missing.len(),
            left_out: manifest.left_out.len(),
            removed: manifest.removed.len(),
        };
        let mut json = serde_json::to_vec_pretty(&self.manifest)
            .map_err(|error| ApiError::internal(&error))?;
        json.push(b'\n');
        sink.put(MANIFEST, &json).map_err(io_error)
    }
}

/// A writer that counts and hashes what goes through it.
struct Hashing<W: Write> {
    inner: W,
    hasher: Sha256,
    size: u64,
}

impl<W: Write> Hashing<W> {
    fn new(inner: W) -> Hashing<W> {
        Hashing {
            inner,
            hasher: Sha256::new(),
            size: 0,
        }
    }

    fn finish(mut self) -> io::Result<(u64, Digest)> {
        self.inner.flush()?;
        let hex: String = self
            .hasher
            .finalize()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        let digest = Digest::from_hex(&hex).expect("a SHA-256 is 64 hex characters");
        Ok((self.size, digest))
    }
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let written = self.inner.write(bytes)?;
        self.hasher.update(&bytes[..written]);
        self.size += written as u64;
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use formats::skill::{Artifact, DigestStatus, FileEntry};
    use formats::{Access, Digest};
    use store::blobs::Blobs;

    use super::*;
    use crate::testing;

    // A record left out of a skills-dir export (a skill-sharing service has no SKILL.md)
    // takes no folder name: the agent skill of the same name keeps its own.
    #[test]
    fn a_record_left_out_takes_no_name() {
        let dir = tempfile::tempdir().unwrap();
        let blobs = Blobs::open(dir.path()).unwrap();
        let skill_md = b"---\nname: pdf\ndescription: PDF.\n---\nUse it.\n";
        let md = blobs.blocking().put(skill_md).unwrap();
        let mut service = testing::record("a.test/pdf", Access::Public);
        service.format = formats::Format::SkillSharing;
        let mut skill = testing::record("b.test/pdf", Access::Public);
        skill.artifact = Artifact::SkillMd;
        skill.digest = Some(md);
        skill.digest_status = DigestStatus::Verified;
        skill.files = vec![FileEntry {
            path: "SKILL.md".to_owned(),
            size: Some(skill_md.len() as u64),
            sha256: Some(md),
        }];
        let status = testing::status_of(std::slice::from_ref(&service));
        let state = testing::directory(dir.path(), &status, vec![service, skill], blobs);
        let out = dir.path().join("out");
        let request = ExportRequest {
            layout: Layout::SkillsDir,
            caller: Caller::Anonymous,
            ..ExportRequest::default()
        };
        let manifest = export_to_path(&state, &request, &out, false, false, &NoProgress).unwrap();
        assert_eq!(std::fs::read(out.join("pdf/SKILL.md")).unwrap(), skill_md);
        assert!(manifest.renamed.is_empty(), "{:?}", manifest.renamed);
        assert_eq!(manifest.left_out.len(), 1);
    }

    // A file that cannot be written beside the skill's others (here a file where another
    // needs a folder) is listed as missing; the export goes on.
    #[test]
    fn a_file_that_cannot_be_written_is_missing_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let blobs = Blobs::open(dir.path()).unwrap();
        let skill_md = b"---\nname: notes\ndescription: Notes.\n---\nRead them.\n";
        let put = |bytes: &[u8]| blobs.blocking().put(bytes).unwrap();
        let (md, plain, nested) = (put(skill_md), put(b"plain"), put(b"nested"));
        let entry = |path: &str, digest: Digest, size: usize| FileEntry {
            path: path.to_owned(),
            size: Some(size as u64),
            sha256: Some(digest),
        };
        let mut record = testing::record("a.test/notes", Access::Public);
        record.artifact = Artifact::SkillMd;
        record.digest = Some(md);
        record.digest_status = DigestStatus::Verified;
        record.files = vec![
            entry("SKILL.md", md, skill_md.len()),
            entry("docs", plain, 5),
            entry("docs/guide.md", nested, 6),
        ];
        let status = testing::status_of(std::slice::from_ref(&record));
        let state = testing::directory(dir.path(), &status, vec![record], blobs.clone());
        let out = dir.path().join("out");
        let request = ExportRequest {
            layout: Layout::SkillsDir,
            caller: Caller::Anonymous,
            ..ExportRequest::default()
        };
        let manifest = export_to_path(&state, &request, &out, false, false, &NoProgress).unwrap();
        assert_eq!(std::fs::read(out.join("notes/docs")).unwrap(), b"plain");
        assert_eq!(manifest.missing.len(), 1, "{:?}", manifest.missing);
        assert_eq!(manifest.missing[0].path, "docs/guide.md");
    }
}
