//! A skill with its files: one record as a caller may see it, its files' bytes, pages of
//! records in id order, and whether a record is served over MCP.
//!
//! Records are read from the crawl store, the source the index is derived from: one point
//! read, with the `last_seen` of the latest crawl (a crawl that sees a record unchanged
//! advances it there without logging a change, docs/record.md). The index chooses pages.

use std::collections::HashSet;

use formats::audit::Risk;
use formats::{Format, Skill, SkillId, Verdict};
use indexer::{ListPage, ListRequest};
use serde_json::Value;

use super::Directory;
use super::files::{self, FileBytes, FileError};
use super::urls;
use crate::error::ApiError;
use crate::wire::RecordView;

/// The most files a skill served over MCP has (the Skills Extension's per-skill limit,
/// `SKILL.md` included).
pub(crate) const MAX_SERVED_FILES: usize = 512;
/// The most bytes a skill served over MCP adds up to (the extension's per-skill limit).
pub(crate) const MAX_SERVED_BYTES: u64 = 16 * 1024 * 1024;

/// What a skill's page shows beyond the record.
#[derive(Debug, Clone)]
pub(crate) struct SkillPage {
    /// The record.
    pub(crate) skill: Skill,
    /// The paths of its files whose bytes the directory holds.
    pub(crate) held: HashSet<String>,
    /// Its `skill://` URI when it is served over MCP.
    pub(crate) mcp_uri: Option<String>,
    /// True when the mirror of its publisher lists it.
    pub(crate) mirrored: bool,
    /// The other copies of it the caller may see, the one a search shows first.
    pub(crate) also_at: Vec<SkillId>,
}

impl Directory {
    /// Returns the record `id` when `caller` may see it; a record the caller may not see is as
    /// absent as a missing one (blocking).
    pub(crate) fn record(&self, caller: indexer::Caller, id: &SkillId) -> Result<Skill, ApiError> {
        let stored = self.store().record(&id.to_string())?;
        stored
            .filter(|stored| !stored.is_tombstone())
            .map(|stored| stored.skill)
            .filter(|skill| self.may_see(caller, skill.access))
            .ok_or_else(|| ApiError::NotFound(format!("no skill {id}")))
    }

    /// Returns the other copies of `skill` (the same content published elsewhere) that
    /// `caller` may see, the one a search shows first (blocking: asks the index).
    pub(crate) fn also_at(
        &self,
        caller: indexer::Caller,
        skill: &Skill,
    ) -> Result<Vec<SkillId>, ApiError> {
        let Some(fingerprint) = &skill.fingerprint else {
            return Ok(Vec::new());
        };
        Ok(self
            .index()
            .copies(fingerprint, caller)?
            .into_iter()
            .filter(|copy| copy.id != skill.id && self.may_see(caller, copy.access))
            .map(|copy| copy.id)
            .collect())
    }

    /// Returns the record as its JSON shows it, with the copies `caller` may see (blocking).
    pub(crate) fn record_view(
        &self,
        caller: indexer::Caller,
        skill: Skill,
    ) -> Result<RecordView, ApiError> {
        let also_at = self.also_at(caller, &skill)?;
        Ok(RecordView::new(skill, also_at))
    }

    /// Returns the record `id` as its JSON shows it, when `caller` may see it (blocking).
    pub(crate) fn record_json(
        &self,
        caller: indexer::Caller,
        id: &SkillId,
    ) -> Result<RecordView, ApiError> {
        let skill = self.record(caller, id)?;
        self.record_view(caller, skill)
    }

    /// Returns the record `id` when `caller` may see it, from the async runtime.
    pub(crate) async fn visible_record(
        &self,
        caller: indexer::Caller,
        id: SkillId,
    ) -> Result<Skill, ApiError> {
        self.ask(move |directory| directory.record(caller, &id))
            .await
    }

    /// Returns the bytes of the file `path` of `skill`, a record the caller was shown
    /// (blocking: reads the blob store).
    pub(crate) fn file(&self, skill: &Skill, path: &str) -> Result<FileBytes, FileError> {
        files::read(self.blobs(), skill, path)
    }

    /// Returns the SKILL.md text of an agent skill: the bytes the crawl kept, or the record's
    /// frontmatter and body rendered back when they were not kept (blocking).
    pub(crate) fn skill_md(&self, skill: &Skill) -> Option<String> {
        if skill.format == Format::SkillSharing {
            return None;
        }
        match self.file(skill, "SKILL.md") {
            Ok(file) => Some(String::from_utf8_lossy(&file.bytes).into_owned()),
            Err(_) => Some(formats::normalize::render_skill_md(skill)),
        }
    }

    /// Returns the record `id` as its page shows it, when `caller` may see it (blocking).
    pub(crate) fn skill_page(
        &self,
        caller: indexer::Caller,
        id: &SkillId,
    ) -> Result<SkillPage, ApiError> {
        let skill = self.record(caller, id)?;
        let held = skill
            .files
            .iter()
            .filter(|file| {
                file.sha256
                    .is_some_and(|digest| self.blobs().contains(&digest))
            })
            .map(|file| file.path.clone())
            .collect();
        let mcp_uri = servable(&skill)
            .is_ok()
            .then(|| urls::skill_uri(skill.domain.as_str(), skill.name.as_str()));
        Ok(SkillPage {
            also_at: self.also_at(caller, &skill)?,
            mirrored: mirrored(&skill),
            skill,
            held,
            mcp_uri,
        })
    }

    /// Returns a page of listed records in id order, keeping those the access policy lets the
    /// request's caller see (blocking).
    pub(crate) fn list(&self, request: &ListRequest) -> Result<ListPage, ApiError> {
        let mut page = self.index().list(request)?;
        page.records
            .retain(|skill| self.may_see(request.caller, skill.access));
        Ok(page)
    }

    /// Returns a page of whole records in id order: the index lists the page's ids, and each
    /// record is one point read of the crawl store, kept when it is live and the caller may
    /// see it (blocking). Returns the records and the position after the page, if any.
    pub(crate) fn records(
        &self,
        request: &ListRequest,
    ) -> Result<(Vec<Skill>, Option<String>), ApiError> {
        let page = self.list(request)?;
        let mut records = Vec::with_capacity(page.records.len());
        for listed in &page.records {
            let stored = self.store().record(&listed.id.to_string())?;
            if let Some(stored) = stored.filter(|stored| !stored.is_tombstone())
                && self.may_see(request.caller, stored.skill.access)
            {
                records.push(stored.skill);
            }
        }
        Ok((records, page.next_cursor))
    }
}

/// True for a skill the mirror of its publisher lists: an agent skill from a well-known index
/// whose content is usable and not found `critical` by the audit (what a default search
/// lists) and whose every file was fetched. A
/// legacy skill crawled without its files is not re-published as if SKILL.md were all of it.
pub(crate) fn mirrored(skill: &Skill) -> bool {
    skill.format == Format::AgentSkills
        && matches!(skill.verdict(), Verdict::Valid | Verdict::Lenient)
        && skill.risk != Risk::Critical
        && unfetched_files(skill).next().is_none()
}

/// The paths of the files of `skill` whose bytes were never fetched (no digest): a legacy
/// skill's files beside its SKILL.md when the crawl did not prefetch them.
pub(crate) fn unfetched_files(skill: &Skill) -> impl Iterator<Item = &str> {
    skill
        .files
        .iter()
        .filter(|file| file.sha256.is_none())
        .map(|file| file.path.as_str())
}

/// Why a record is not served as a skill over MCP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unservable {
    /// Not an agent skill: a skill-sharing service has no `SKILL.md`.
    NotAnAgentSkill,
    /// Its verdict is `invalid`.
    Invalid,
    /// The safety audit finds it `critical`: not listed by default, and not served as a skill
    /// (its page and record still show it, with the findings).
    Critical,
    /// The directory does not know the size and digest of one of its files.
    UnknownFile(String),
    /// It has no `SKILL.md` among its files.
    NoSkillMd,
    /// It has more files or bytes than the extension's per-skill limits.
    TooLarge,
    /// Its frontmatter lacks a string `name` or `description`, or its `name` is not the
    /// record's name (the URI's last segment must equal it).
    Frontmatter,
}

impl Unservable {
    /// Returns why, in a clause.
    pub(crate) fn reason(&self) -> String {
        match self {
            Unservable::NotAnAgentSkill => {
                "it is a skill-sharing service, not an agent skill".into()
            }
            Unservable::Invalid => "its verdict is invalid".into(),
            Unservable::Critical => "the safety audit finds it critical".into(),
            Unservable::UnknownFile(path) => {
                format!("the size and digest of its file {path:?} are not known")
            }
            Unservable::NoSkillMd => "it has no SKILL.md".into(),
            Unservable::TooLarge => {
                format!("it has more than {MAX_SERVED_FILES} files or {MAX_SERVED_BYTES} bytes")
            }
            Unservable::Frontmatter => {
                "its frontmatter has no name and description, or a name other than its own".into()
            }
        }
    }
}

/// Returns whether `skill` is served over MCP, or why not: an agent skill (`agent-skills` or
/// `mcp-skills`) whose verdict is not `invalid` and whose risk is not `critical`, whose frontmatter has a string `name` equal to
/// the record's name and a string `description`, whose every file has a known size and digest
/// (the crawl kept its bytes), within the extension's limits of [`MAX_SERVED_FILES`] files and
/// [`MAX_SERVED_BYTES`] bytes.
pub(crate) fn servable(skill: &Skill) -> Result<(), Unservable> {
    if skill.format == Format::SkillSharing {
        return Err(Unservable::NotAnAgentSkill);
    }
    if skill.verdict() == Verdict::Invalid {
        return Err(Unservable::Invalid);
    }
    if skill.risk == Risk::Critical {
        return Err(Unservable::Critical);
    }
    let (Some(Value::String(name)), Some(Value::String(_))) = (
        skill.frontmatter.get("name"),
        skill.frontmatter.get("description"),
    ) else {
        return Err(Unservable::Frontmatter);
    };
    if name != skill.name.as_str() {
        return Err(Unservable::Frontmatter);
    }
    if skill.files.len() > MAX_SERVED_FILES {
        return Err(Unservable::TooLarge);
    }
    let mut total: u64 = 0;
    for file in &skill.files {
        let (Some(size), Some(_)) = (file.size, file.sha256) else {
            return Err(Unservable::UnknownFile(file.path.clone()));
        };
        total = total.saturating_add(size);
    }
    if total > MAX_SERVED_BYTES {
        return Err(Unservable::TooLarge);
    }
    if !skill.files.iter().any(|file| file.path == "SKILL.md") {
        return Err(Unservable::NoSkillMd);
    }
    Ok(())
}
