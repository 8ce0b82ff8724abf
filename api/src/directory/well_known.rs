//! A publisher's skills as an agent-skills discovery v0.2 index and its artifacts: the
//! `well-known` export layout and the mirror (`/mirror/{domain}/…`) are this one code.
//!
//! Only verified content is published, from the blob store: a skill with a SKILL.md artifact
//! is a `skill-md` entry with those bytes; one with an archive artifact is an `archive` entry
//! with the archive's bytes as fetched (so both keep their digests, and crawling the result
//! gives the same records); a legacy (v0.1) skill with files beside its SKILL.md becomes an
//! `archive` entry holding them, packed here (a `.tar.gz` made the same way each time, so its
//! digest is stable).

use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use flate2::Compression;
use flate2::write::GzEncoder;
use formats::index::SCHEMA_V0_2;
use formats::skill::Artifact;
use formats::{Digest, Domain, Format, Skill};
use indexer::{Caller, Filters, ListRequest, MAX_LIMIT};
use serde::Serialize;
use store::BlobStore;

use super::Directory;
use super::skills::{mirrored, unfetched_files};
use super::urls::parse_id;
use crate::error::ApiError;

/// The index path inside a domain's folder.
pub(crate) const INDEX_PATH: &str = ".well-known/agent-skills/index.json";
/// The folder of the index and the artifacts inside a domain's folder.
pub(crate) const BASE: &str = ".well-known/agent-skills";
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
        schema: SCHEMA_V0_2,
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
/// (blocking): what the mirror's index needs. A legacy skill whose files the directory does not
/// all hold has none: the mirror publishes whole skills only.
pub(crate) fn entry(
    skill: &Skill,
    blobs: &dyn BlobStore,
    packs: &PackCache,
) -> Result<Entry, Unpublishable> {
    let (kind, path, source) = source(skill)?;
    let digest = match source {
        Source::Blob(digest) if blobs.contains(&digest) => digest,
        Source::Blob(digest) => return Err(not_held(skill, digest)),
        Source::Packed => {
            let (archive, missing) = packed(skill, blobs, packs)?;
            if !missing.is_empty() {
                return Err(incomplete(skill, &missing));
            }
            Digest::of(&archive)
        }
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
pub(crate) fn publish(
    skill: &Skill,
    blobs: &dyn BlobStore,
    packs: &PackCache,
) -> Result<Published, Unpublishable> {
    let (kind, path, source) = source(skill)?;
    let (bytes, missing) = match source {
        Source::Blob(digest) => (artifact(skill, digest, blobs)?, Vec::new()),
        Source::Packed => {
            let (bytes, missing) = packed(skill, blobs, packs)?;
            (bytes.as_ref().clone(), missing)
        }
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

/// Why a legacy skill missing `missing` (paths whose bytes are not held) is not re-published
/// by the mirror, and how its files are had.
pub(crate) fn incomplete(skill: &Skill, missing: &[String]) -> Unpublishable {
    const SHOWN: usize = 5;
    let mut paths = missing
        .iter()
        .take(SHOWN)
        .map(|path| format!("{path:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    if missing.len() > SHOWN {
        paths.push_str(&format!(" and {} more", missing.len() - SHOWN));
    }
    Unpublishable::Missing(format!(
        "the directory holds {} of the {} files of {} (not {paths}), and the mirror publishes \
         whole skills only; a crawl with file prefetching (the default, unless \
         --no-prefetch-files) fetches them",
        skill.files.len().saturating_sub(missing.len()),
        skill.files.len(),
        skill.id
    ))
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

/// The most bytes of packed archives a [`PackCache`] keeps.
pub(crate) const PACK_CACHE_BYTES: usize = 64 << 20;

/// Archives larger than this are packed again when asked for rather than crowd out the others.
const PACK_CACHE_LARGEST: usize = PACK_CACHE_BYTES / 4;

/// Archives packed for legacy skills, kept by what went into them (each file's path and
/// digest), so that the mirror does not read and compress a skill's files again on every
/// request for its index or its archive. At most [`PACK_CACHE_BYTES`] are kept; the oldest
/// go first. Only complete archives are kept: one that left a file out (its bytes not held)
/// is packed again next time, when the bytes may be there.
#[derive(Debug, Default)]
pub(crate) struct PackCache {
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    archives: HashMap<Digest, Arc<Vec<u8>>>,
    /// Keys, oldest first.
    order: VecDeque<Digest>,
    bytes: usize,
}

impl PackCache {
    fn get(&self, key: &Digest) -> Option<Arc<Vec<u8>>> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.archives.get(key).cloned()
    }

    fn keep(&self, key: Digest, archive: Arc<Vec<u8>>) {
        if archive.len() > PACK_CACHE_LARGEST {
            return;
        }
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.archives.contains_key(&key) {
            return;
        }
        while kept.bytes + archive.len() > PACK_CACHE_BYTES {
            let Some(oldest) = kept.order.pop_front() else {
                break;
            };
            if let Some(evicted) = kept.archives.remove(&oldest) {
                kept.bytes -= evicted.len();
            }
        }
        kept.bytes += archive.len();
        kept.order.push_back(key);
        kept.archives.insert(key, archive);
    }

    /// Returns how many bytes of archives are kept.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.kept
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .bytes
    }
}

/// What a packed archive is made of: each file's path and digest, in path order.
fn pack_key(skill: &Skill) -> Digest {
    let mut files: Vec<_> = skill.files.iter().collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let mut key = Vec::new();
    for file in files {
        key.extend_from_slice(file.path.as_bytes());
        key.push(0);
        match file.sha256 {
            Some(digest) => key.extend_from_slice(digest.hex().as_bytes()),
            None => key.push(b'-'),
        }
        key.push(b'\n');
    }
    Digest::of(&key)
}

/// [`pack`], from `packs` when the same files were packed before.
fn packed(
    skill: &Skill,
    blobs: &dyn BlobStore,
    packs: &PackCache,
) -> Result<(Arc<Vec<u8>>, Vec<String>), Unpublishable> {
    let key = pack_key(skill);
    if let Some(archive) = packs.get(&key) {
        return Ok((archive, Vec::new()));
    }
    let (bytes, missing) = pack(skill, blobs)?;
    let archive = Arc::new(bytes);
    if missing.is_empty() {
        packs.keep(key, Arc::clone(&archive));
    }
    Ok((archive, missing))
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

impl Directory {
    /// Publishes `skill` from the blob store (blocking): what a `well-known` export writes.
    pub(crate) fn publish(&self, skill: &Skill) -> Result<Published, Unpublishable> {
        publish(skill, self.blobs(), &self.inner.packs)
    }

    /// Returns the mirror's index of `domain` as `caller` may see it (blocking): the skills a
    /// default search lists. 404 when it lists nothing, so a client tries elsewhere.
    ///
    /// The index chooses the records (the domain's, a page at a time) and the store has the
    /// last word: each is read again, one at a time, so that a domain of thousands of large
    /// skills is never held whole.
    pub(crate) fn mirror_index(
        &self,
        caller: Caller,
        domain: &Domain,
    ) -> Result<Vec<u8>, ApiError> {
        let mut entries = Vec::new();
        let mut list = ListRequest {
            caller,
            filters: Filters {
                domain: vec![domain.to_string()],
                ..Filters::default()
            },
            after: None,
            limit: MAX_LIMIT,
        };
        loop {
            let (records, next) = self.records(&list)?;
            for skill in records.iter().filter(|skill| mirrored(skill)) {
                match entry(skill, self.blobs(), &self.inner.packs) {
                    Ok(entry) => entries.push(entry),
                    Err(Unpublishable::Failed(detail)) => return Err(ApiError::Internal(detail)),
                    Err(_) => {}
                }
            }
            match next {
                Some(after) => list.after = Some(after),
                None => break,
            }
        }
        if entries.is_empty() {
            return Err(ApiError::NotFound(format!(
                "the directory has no skill of {domain} to mirror"
            )));
        }
        Ok(index_json(&entries))
    }

    /// Returns the artifact at `path` (relative to the index's folder) of the mirror of
    /// `domain`, as `caller` may see it (blocking).
    pub(crate) fn mirror_file(
        &self,
        caller: Caller,
        domain: &Domain,
        path: &str,
    ) -> Result<Published, ApiError> {
        let not_here = || ApiError::NotFound(format!("the mirror of {domain} has no {path:?}"));
        let Some(slug) = slug_of(path).filter(|slug| !slug.contains('/')) else {
            return Err(not_here());
        };
        let skill = self.record(caller, &parse_id(domain.as_str(), slug)?)?;
        // What the mirror's index does not list (an invalid skill, one the audit finds
        // critical) is not served from it either; a skill whose files were not all fetched is
        // refused below, with the files it lacks.
        if skill.format == Format::AgentSkills
            && !mirrored(&skill)
            && unfetched_files(&skill).next().is_none()
        {
            return Err(ApiError::NotFound(format!(
                "the mirror of {domain} does not list {}",
                skill.name
            )));
        }
        match self.publish(&skill) {
            Ok(published) if published.path == path && published.missing.is_empty() => {
                Ok(published)
            }
            Ok(published) if published.path == path => Err(ApiError::NotFound(
                incomplete(&skill, &published.missing).reason(),
            )),
            Ok(_) | Err(Unpublishable::NotAnAgentSkill | Unpublishable::Missing(_)) => {
                Err(not_here())
            }
            Err(Unpublishable::Failed(detail)) => Err(ApiError::Internal(detail)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use formats::Access;
    use formats::skill::{DigestStatus, FileEntry};
    use store::blobs::Blobs;

    use super::*;
    use crate::testing;

    /// A blob store that counts the reads it answers.
    #[derive(Debug)]
    struct Counting {
        inner: Blobs,
        reads: AtomicUsize,
    }

    impl BlobStore for Counting {
        fn contains(&self, digest: &Digest) -> bool {
            self.inner.blocking().contains(digest)
        }

        fn get(&self, digest: &Digest) -> std::io::Result<Option<Vec<u8>>> {
            self.reads.fetch_add(1, Ordering::SeqCst);
            self.inner.blocking().get(digest)
        }

        fn put(&self, bytes: &[u8]) -> std::io::Result<Digest> {
            self.inner.blocking().put(bytes)
        }
    }

    /// A legacy skill `a.test/{name}` with SKILL.md and one more file whose bytes are held
    /// unless `held` is false.
    fn legacy(blobs: &dyn BlobStore, name: &str, extra: &[u8], held: bool) -> Skill {
        let skill_md = format!("---\nname: {name}\ndescription: D.\n---\nUse it.\n");
        let md = blobs.put(skill_md.as_bytes()).unwrap();
        let other = if held {
            blobs.put(extra).unwrap()
        } else {
            Digest::of(extra)
        };
        let mut skill = testing::record(&format!("a.test/{name}"), Access::Public);
        skill.artifact = Artifact::SkillMd;
        skill.digest = Some(md);
        skill.digest_status = DigestStatus::Verified;
        skill.files = vec![
            FileEntry {
                path: SKILL_MD.to_owned(),
                size: Some(skill_md.len() as u64),
                sha256: Some(md),
            },
            FileEntry {
                path: "scripts/run.py".to_owned(),
                size: Some(extra.len() as u64),
                sha256: Some(other),
            },
        ];
        skill
    }

    fn counting() -> (tempfile::TempDir, Counting) {
        let dir = tempfile::tempdir().unwrap();
        let inner = Blobs::open(dir.path()).unwrap();
        let blobs = Counting {
            inner,
            reads: AtomicUsize::new(0),
        };
        (dir, blobs)
    }

    #[test]
    fn a_legacy_skill_is_packed_once_and_served_the_same() {
        let (_dir, blobs) = counting();
        let packs = PackCache::default();
        let skill = legacy(&blobs, "notes", b"print('hi')\n", true);

        let first = entry(&skill, &blobs, &packs).unwrap();
        assert_eq!(
            blobs.reads.load(Ordering::SeqCst),
            2,
            "both files read to pack"
        );
        let published = publish(&skill, &blobs, &packs).unwrap();
        let again = entry(&skill, &blobs, &packs).unwrap();
        assert_eq!(blobs.reads.load(Ordering::SeqCst), 2, "nothing read again");
        assert_eq!(published.entry.digest, first.digest);
        assert_eq!(again.digest, first.digest);
        assert_eq!(Digest::of(&published.bytes), first.digest);

        // Other files make another archive: the key is what went into it.
        let changed = legacy(&blobs, "notes", b"print('bye')\n", true);
        let other = entry(&changed, &blobs, &packs).unwrap();
        assert_ne!(other.digest, first.digest);
        assert_eq!(blobs.reads.load(Ordering::SeqCst), 4);

        let unkept = pack(&skill, &blobs).unwrap().0;
        assert_eq!(
            published.bytes, unkept,
            "the kept archive is the one packing makes"
        );
    }

    #[test]
    fn an_archive_that_left_a_file_out_is_not_kept() {
        let (_dir, blobs) = counting();
        let packs = PackCache::default();
        let skill = legacy(&blobs, "notes", b"not held", false);
        let published = publish(&skill, &blobs, &packs).unwrap();
        assert_eq!(published.missing, ["scripts/run.py"]);
        assert_eq!(packs.bytes(), 0);
        // Once the bytes are held, the whole skill is packed.
        blobs.put(b"not held").unwrap();
        let complete = publish(&skill, &blobs, &packs).unwrap();
        assert!(complete.missing.is_empty());
        assert_ne!(complete.entry.digest, published.entry.digest);
        assert_eq!(packs.bytes(), complete.bytes.len());
    }

    #[test]
    fn the_cache_keeps_to_its_budget_oldest_out_first() {
        let packs = PackCache::default();
        let archive = |n: u8| Arc::new(vec![n; PACK_CACHE_LARGEST]);
        for n in 0..5u8 {
            packs.keep(Digest::of(&[n]), archive(n));
        }
        assert_eq!(packs.bytes(), PACK_CACHE_BYTES);
        assert!(packs.get(&Digest::of(&[0])).is_none(), "the oldest went");
        for n in 1..5u8 {
            assert_eq!(packs.get(&Digest::of(&[n])).unwrap()[0], n);
        }
        packs.keep(Digest::of(&[9]), Arc::new(vec![9; PACK_CACHE_LARGEST + 1]));
        assert!(
            packs.get(&Digest::of(&[9])).is_none(),
            "an archive over a quarter of the budget is not kept"
        );
    }
}
