//! A publisher's skills as an agent-skills discovery v0.2 index and its artifacts: the
//! `well-known` export layout and the `/mirror/{domain}/…` routes are this one code.
//!
//! Only verified content is published, from the blob store: a skill with a SKILL.md artifact
//! is a `skill-md` entry with those bytes; one with an archive artifact is an `archive` entry
//! with the archive's bytes as fetched (so both keep their digests, and crawling the result
//! gives the same records); a legacy (v0.1) skill with files beside its SKILL.md becomes an
//! `archive` entry holding them, packed here (a `.tar.gz` made the same way each time, so its
//! digest is stable).

use std::io::Write;

use flate2::Compression;
use flate2::write::GzEncoder;
use formats::skill::Artifact;
use formats::{Digest, Format, Skill};
use serde::Serialize;
use store::BlobStore;

/// The index path inside a domain's folder.
pub(crate) const INDEX_PATH: &str = ".well-known/agent-skills/index.json";
/// The folder of the index and the artifacts inside a domain's folder.
pub(crate) const BASE: &str = ".well-known/agent-skills";
/// The `$schema` of a v0.2 index.
pub(crate) const SCHEMA_V2: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";
/// The SKILL.md file name.
const SKILL_MD: &str = "SKILL.md";

/// One index entry (agent-skills discovery v0.2).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Entry {
    name: String,
    #[serde(rename = "type")]
    kind: &'static str,
    description: String,
    url: String,
    digest: Digest,
}

/// A skill as published: its entry, where its artifact goes (relative to [`BASE`]), the
/// artifact's bytes, and the files that could not be put in it.
#[derive(Debug)]
pub(crate) struct Published {
    pub(crate) entry: Entry,
    pub(crate) path: String,
    pub(crate) bytes: Vec<u8>,
    pub(crate) missing: Vec<String>,
}

impl Published {
    /// Returns the hex of the artifact's digest (an entity tag for it).
    pub(crate) fn entry_digest_hex(&self) -> String {
        self.entry.digest.hex()
    }
}

/// Why a skill cannot be published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unpublishable {
    /// The skill is not an agent skill (a skill-sharing service has no SKILL.md).
    NotAnAgentSkill,
    /// The directory does not hold the artifact's verified bytes.
    Missing(String),
    /// Reading the blob store failed.
    Failed(String),
}

impl Unpublishable {
    /// Returns why, as the manifest says it.
    pub(crate) fn reason(&self) -> String {
        match self {
            Unpublishable::NotAnAgentSkill => {
                "a skill-sharing service has no SKILL.md to publish".to_owned()
            }
            Unpublishable::Missing(why) | Unpublishable::Failed(why) => why.clone(),
        }
    }
}

/// Returns the v0.2 index of `entries`.
pub(crate) fn index_json(entries: &[Entry]) -> Vec<u8> {
    #[derive(Serialize)]
    struct Index<'a> {
        #[serde(rename = "$schema")]
        schema: &'static str,
        skills: &'a [Entry],
    }
    let mut json = serde_json::to_vec_pretty(&Index {
        schema: SCHEMA_V2,
        skills: entries,
    })
    .expect("an index of strings serialises");
    json.push(b'\n');
    json
}

/// Returns the path (relative to [`BASE`]) a skill named `slug` could be published at, given
/// what the artifact is; used by the mirror to find the skill a request names.
pub(crate) fn slug_of(path: &str) -> Option<&str> {
    if let Some(slug) = path.strip_suffix("/SKILL.md") {
        return Some(slug);
    }
    [".tar.gz", ".tgz", ".zip"]
        .iter()
        .find_map(|extension| path.strip_suffix(extension))
}

/// Where a published skill's artifact comes from.
enum Source {
    /// The artifact as fetched, from the blob store.
    Blob(Digest),
    /// A legacy skill's files, packed here.
    Packed,
}

/// Decides how `skill` is published: entry type, path, and where the bytes come from.
fn source(skill: &Skill) -> Result<(&'static str, String, Source), Unpublishable> {
    if skill.format != Format::AgentSkills {
        return Err(Unpublishable::NotAnAgentSkill);
    }
    let slug = skill.name.as_str();
    let others = skill.files.iter().any(|file| file.path != SKILL_MD);
    let digest = || {
        skill.digest.ok_or_else(|| {
            Unpublishable::Missing(format!("the artifact of {} was never fetched", skill.id))
        })
    };
    match skill.artifact {
        Artifact::Archive => {
            let extension = archive_extension(skill.source_url.path());
            Ok((
                "archive",
                format!("{slug}{extension}"),
                Source::Blob(digest()?),
            ))
        }
        Artifact::SkillMd if !others => Ok((
            "skill-md",
            format!("{slug}/{SKILL_MD}"),
            Source::Blob(digest()?),
        )),
        Artifact::SkillMd => Ok(("archive", format!("{slug}.tar.gz"), Source::Packed)),
        Artifact::Descriptor => Err(Unpublishable::NotAnAgentSkill),
    }
}

/// Returns the index entry of `skill` without reading an artifact the blob store holds as is
/// (blocking): what the mirror's index needs.
pub(crate) fn entry(skill: &Skill, blobs: &dyn BlobStore) -> Result<Entry, Unpublishable> {
    let (kind, path, source) = source(skill)?;
    let digest = match source {
        Source::Blob(digest) if blobs.contains(&digest) => digest,
        Source::Blob(digest) => return Err(not_held(skill, digest)),
        Source::Packed => Digest::of(&pack(skill, blobs)?.0),
    };
    Ok(Entry {
        name: skill.name.to_string(),
        kind,
        description: skill.description.clone(),
        url: path,
        digest,
    })
}

/// Publishes `skill` from the blob store (blocking).
pub(crate) fn publish(skill: &Skill, blobs: &dyn BlobStore) -> Result<Published, Unpublishable> {
    let (kind, path, source) = source(skill)?;
    let (bytes, missing) = match source {
        Source::Blob(digest) => (artifact(skill, digest, blobs)?, Vec::new()),
        Source::Packed => pack(skill, blobs)?,
    };
    let entry = Entry {
        name: skill.name.to_string(),
        kind,
        description: skill.description.clone(),
        url: path.clone(),
        digest: Digest::of(&bytes),
    };
    Ok(Published {
        entry,
        path,
        bytes,
        missing,
    })
}

fn not_held(skill: &Skill, digest: Digest) -> Unpublishable {
    Unpublishable::Missing(format!(
        "the directory does not hold the artifact of {} ({digest})",
        skill.id
    ))
}

/// The artifact's verified bytes (the blob store checks them against their digest).
fn artifact(
    skill: &Skill,
    digest: Digest,
    blobs: &dyn BlobStore,
) -> Result<Vec<u8>, Unpublishable> {
    match blobs.get(&digest) {
        Ok(Some(bytes)) => Ok(bytes),
        Ok(None) => Err(not_held(skill, digest)),
        Err(error) => Err(Unpublishable::Failed(format!(
            "cannot read blob {digest}: {error}"
        ))),
    }
}

/// `.zip` for a zip archive, `.tar.gz` otherwise (the two archive formats read).
fn archive_extension(source_path: &str) -> &'static str {
    if source_path.to_ascii_lowercase().ends_with(".zip") {
        ".zip"
    } else {
        ".tar.gz"
    }
}

/// Packs a legacy skill's files into a `.tar.gz`, in path order with fixed metadata, so the
/// same files always make the same bytes. Files whose bytes the directory does not hold are
/// left out and returned; without SKILL.md there is nothing to publish.
fn pack(skill: &Skill, blobs: &dyn BlobStore) -> Result<(Vec<u8>, Vec<String>), Unpublishable> {
    let mut files: Vec<_> = skill.files.iter().collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let mut builder = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::default()));
    let mut missing = Vec::new();
    for file in files {
        let bytes = match file.sha256.map(|digest| blobs.get(&digest)) {
            Some(Ok(Some(bytes))) => bytes,
            Some(Err(error)) => return Err(Unpublishable::Failed(error.to_string())),
            Some(Ok(None)) | None => {
                missing.push(file.path.clone());
                continue;
            }
        };
        append(&mut builder, &file.path, &bytes, 0)
            .map_err(|error| Unpublishable::Failed(error.to_string()))?;
    }
    if missing.iter().any(|path| path == SKILL_MD) {
        return Err(Unpublishable::Missing(format!(
            "the directory does not hold the SKILL.md of {}",
            skill.id
        )));
    }
    let bytes = builder
        .into_inner()
        .and_then(GzEncoder::finish)
        .map_err(|error| Unpublishable::Failed(error.to_string()))?;
    Ok((bytes, missing))
}

/// Appends one regular file to a tar archive, with fixed owner and mode.
pub(crate) fn append<W: Write>(
    builder: &mut tar::Builder<W>,
    path: &str,
    bytes: &[u8],
    mtime: u64,
) -> std::io::Result<()> {
    let mut header = tar::Header::new_gnu();
    header.set_size(bytes.len() as u64);
    header.set_mode(0o644);
    header.set_mtime(mtime);
    header.set_entry_type(tar::EntryType::Regular);
    builder.append_data(&mut header, path, bytes)
}
