//! Reading published skills from disk: a skill folder, a SKILL.md, an index file, or a whole
//! well-known tree (`<root>/.well-known/...`), as `skillscout validate` and the corpus tests do.
//!
//! A well-known tree is treated as a web site whose domain is the root folder's name (when
//! that is a valid host name, as in `example.test/.well-known/...`, else `localhost`): URLs on
//! that host map to files below the root, URLs on other hosts are left unfetched and said so.
//! Files are read with the same size caps as the crawler applies to responses.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use time::OffsetDateTime;
use url::Url;

use crate::error::{Error, Result};
use formats::diagnostic::{Code, Diagnostic};
use formats::index::{self, IndexVersion, MAX_INDEX_BYTES, SKILL_MD};
use formats::normalize::{
    self, Fetched, MAX_ARCHIVE_BYTES, MAX_DESCRIPTOR_BYTES, MAX_SKILL_MD_BYTES, Source,
};
use formats::sharing;
use formats::skill::{Domain, Format, Skill};
use formats::skill_md;

/// The well-known index paths, in the order they are probed.
pub const WELL_KNOWN_INDEXES: [(&str, Format); 3] = [
    ("/.well-known/agent-skills/index.json", Format::AgentSkills),
    ("/.well-known/skills/index.json", Format::AgentSkills),
    ("/.well-known/skill-sharing", Format::SkillSharing),
];
/// The domain given to a tree whose folder name is not a host name.
pub const FALLBACK_DOMAIN: &str = "localhost";

/// One index that was read.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedIndex {
    /// The file it was read from.
    pub path: PathBuf,
    /// The URL it stands for.
    pub url: Url,
    /// Its protocol.
    pub format: Format,
    /// For agent-skills indexes, the version it was read as.
    pub version: Option<IndexVersion>,
    /// Problems with the index as a whole and with entries that were skipped.
    pub diagnostics: Vec<Diagnostic>,
}

/// One skill that was checked.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedSkill {
    /// The file its content came from (SKILL.md, archive or descriptor), or its index when
    /// the content could not be read.
    pub path: PathBuf,
    /// What to call it in messages: the record id, or the folder name.
    pub label: String,
    /// The normalised record; `None` when a lone SKILL.md or skill folder was checked.
    pub record: Option<Skill>,
    /// Everything found wrong with it.
    pub diagnostics: Vec<Diagnostic>,
}

/// What was found at a local path.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Checked {
    /// The indexes read.
    pub indexes: Vec<CheckedIndex>,
    /// The skills checked.
    pub skills: Vec<CheckedSkill>,
}

impl Checked {
    /// Returns the normalised records found.
    pub fn records(&self) -> impl Iterator<Item = &Skill> {
        self.skills.iter().filter_map(|skill| skill.record.as_ref())
    }
}

/// Reads whatever `path` is: a skill folder, a SKILL.md, an index file, or a well-known tree.
pub fn check(path: &Path, seen_at: OffsetDateTime) -> Result<Checked> {
    let metadata = fs::metadata(path).map_err(|source| Error::Read {
        path: path.to_owned(),
        source,
    })?;
    if metadata.is_dir() {
        if path.join(".well-known").is_dir() {
            return check_tree(path, seen_at);
        }
        if path.join(SKILL_MD).is_file() {
            return check_skill_folder(path);
        }
        return Err(Error::UnrecognisedInput {
            path: path.to_owned(),
        });
    }
    let file_name = path
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("");
    if file_name.eq_ignore_ascii_case(SKILL_MD) {
        let skill = check_skill_md(path, parent_name(path))?;
        return Ok(Checked {
            indexes: Vec::new(),
            skills: vec![skill],
        });
    }
    check_index_file(path, seen_at)
}

/// Reads every well-known index of the tree at `root` and the artifacts they list.
pub fn check_tree(root: &Path, seen_at: OffsetDateTime) -> Result<Checked> {
    let site = Site::new(root.to_owned())?;
    let mut checked = Checked::default();
    let mut found_any = false;
    for (index_path, format) in WELL_KNOWN_INDEXES {
        let url = site.url(index_path)?;
        let Some(file) = site.file(&url).filter(|file| file.is_file()) else {
            continue;
        };
        found_any = true;
        check_index(&site, &file, url, format, seen_at, &mut checked)?;
    }
    if !found_any {
        return Err(Error::UnrecognisedInput {
            path: root.to_owned(),
        });
    }
    Ok(checked)
}

/// Reads every domain of a corpus laid out as well-known trees (`<dir>/<domain>/.well-known`,
/// as `../shared/corpus` is), in domain order. A skill listed by two indexes of its domain
/// (a v0.2 and a legacy one) is kept once, as the first index lists it, as a crawl does.
pub fn corpus_records(dir: &Path) -> Result<Vec<Skill>> {
    let entries = std::fs::read_dir(dir).map_err(|source| Error::Read {
        path: dir.to_owned(),
        source,
    })?;
    let mut domains: Vec<_> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.join(".well-known").is_dir())
        .collect();
    domains.sort();
    let seen_at = OffsetDateTime::UNIX_EPOCH;
    let mut records = Vec::new();
    for domain in domains {
        let checked = check_tree(&domain, seen_at)?;
        for record in checked.records() {
            if !records.iter().any(|kept: &Skill| kept.id == record.id) {
                records.push(record.clone());
            }
        }
    }
    Ok(records)
}

/// Reads one index file: inside a well-known tree it is read as part of that site; alone, its
/// folder stands for the directory the index is served from.
fn check_index_file(path: &Path, seen_at: OffsetDateTime) -> Result<Checked> {
    let mut checked = Checked::default();
    let absolute = fs::canonicalize(path).map_err(|source| Error::Read {
        path: path.to_owned(),
        source,
    })?;
    let tree_root = absolute
        .ancestors()
        .find(|dir| dir.file_name().is_some_and(|name| name == ".well-known"))
        .and_then(Path::parent);
    let (site, url) = match tree_root {
        Some(root) => {
            let site = Site::new(root.to_owned())?;
            let Ok(relative) = absolute.strip_prefix(root) else {
                return Err(Error::UnrecognisedInput {
                    path: path.to_owned(),
                });
            };
            let url_path = format!("/{}", relative.to_string_lossy().replace('\\', "/"));
            let url = site.url(&url_path)?;
            (site, url)
        }
        None => {
            let folder = absolute.parent().unwrap_or(Path::new("/")).to_owned();
            let site = Site::new(folder)?;
            let name = absolute
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("index.json");
            let url = site.url(&format!("/{name}"))?;
            (site, url)
        }
    };
    let bytes = read_capped(&absolute, MAX_INDEX_BYTES)?;
    let format = if looks_like_sharing(&absolute, &bytes.bytes) {
        Format::SkillSharing
    } else {
        Format::AgentSkills
    };
    check_index(&site, &absolute, url, format, seen_at, &mut checked)?;
    Ok(checked)
}

/// True when a file is a skill-sharing index rather than an agent-skills one.
fn looks_like_sharing(path: &Path, bytes: &[u8]) -> bool {
    if path.file_name().is_some_and(|name| name == "skill-sharing") {
        return true;
    }
    match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(serde_json::Value::Object(object)) => {
            object.contains_key("protocol") || object.contains_key("provider")
        }
        _ => false,
    }
}

fn check_index(
    site: &Site,
    file: &Path,
    url: Url,
    format: Format,
    seen_at: OffsetDateTime,
    checked: &mut Checked,
) -> Result<()> {
    let Ok(source) = Source::new(url.clone()) else {
        return Err(Error::UnrecognisedInput {
            path: file.to_owned(),
        });
    };
    let read = read_capped(file, MAX_INDEX_BYTES)?;
    let mut diagnostics = read.diagnostics;
    match format {
        Format::AgentSkills => {
            let parsed = index::parse(&read.bytes, &url);
            diagnostics.extend(parsed.diagnostics);
            checked.indexes.push(CheckedIndex {
                path: file.to_owned(),
                url,
                format,
                version: Some(parsed.version),
                diagnostics,
            });
            for entry in &parsed.entries {
                let artifact = site.fetch(&entry.url, limit_for(entry.kind));
                let mut record =
                    normalize::agent_skill(&source, entry, artifact.as_fetched(), seen_at);
                if artifact.bytes.is_some() {
                    check_listed_files(site, entry, &mut record);
                }
                checked.skills.push(CheckedSkill {
                    path: artifact.path.unwrap_or_else(|| file.to_owned()),
                    label: record.id.to_string(),
                    diagnostics: record.diagnostics.clone(),
                    record: Some(record),
                });
            }
        }
        Format::SkillSharing => {
            let parsed = sharing::parse_index(&read.bytes, &url);
            diagnostics.extend(parsed.diagnostics);
            checked.indexes.push(CheckedIndex {
                path: file.to_owned(),
                url,
                format,
                version: None,
                diagnostics,
            });
            for entry in &parsed.entries {
                let artifact = match &entry.descriptor_url {
                    Some(descriptor_url) => site.fetch(descriptor_url, MAX_DESCRIPTOR_BYTES),
                    None => LocalArtifact::failed(Diagnostic::new(
                        Code::Unfetched,
                        "no usable `descriptor_url`; the descriptor was not read",
                    )),
                };
                let record =
                    normalize::shared_skill(&source, entry, artifact.as_fetched(), seen_at);
                checked.skills.push(CheckedSkill {
                    path: artifact.path.unwrap_or_else(|| file.to_owned()),
                    label: record.id.to_string(),
                    diagnostics: record.diagnostics.clone(),
                    record: Some(record),
                });
            }
        }
    }
    Ok(())
}

fn limit_for(kind: index::EntryKind) -> usize {
    match kind {
        index::EntryKind::SkillMd => MAX_SKILL_MD_BYTES,
        index::EntryKind::Archive => MAX_ARCHIVE_BYTES,
    }
}

/// For v0.1 entries: every file `files[]` lists must exist; record the size and digest of each.
fn check_listed_files(site: &Site, entry: &index::IndexEntry, record: &mut Skill) {
    let Some(base) = &entry.base_url else {
        return;
    };
    for path in &entry.files {
        if path == SKILL_MD {
            continue;
        }
        let Ok(url) = base.join(path) else {
            continue;
        };
        let Some(file) = site.file(&url) else {
            continue;
        };
        match fs::read(&file) {
            Ok(bytes) => normalize::record_file(record, path, &bytes),
            Err(_) => record.diagnostics.push(
                Diagnostic::new(
                    Code::NotFound,
                    format!(
                        "`files` lists {path:?}, but {} does not exist",
                        file.display()
                    ),
                )
                .at(format!("skills[{}].files", entry.position)),
            ),
        }
    }
}

/// Checks a skill folder: its SKILL.md against the folder name, and every file's path against
/// the rules an index's `files[]` must follow.
fn check_skill_folder(folder: &Path) -> Result<Checked> {
    let expected = folder.canonicalize().ok().and_then(|path| {
        path.file_name()
            .map(|name| name.to_string_lossy().into_owned())
    });
    let mut skill = check_skill_md(&folder.join(SKILL_MD), expected)?;
    let mut files = Vec::new();
    list_files(folder, folder, &mut files)?;
    for relative in files {
        if let Err(problem) = index::check_relative_path(&relative) {
            skill.diagnostics.push(problem.at(relative));
        }
    }
    Ok(Checked {
        indexes: Vec::new(),
        skills: vec![skill],
    })
}

/// Checks one SKILL.md against the name of the folder it is in.
fn check_skill_md(path: &Path, expected_name: Option<String>) -> Result<CheckedSkill> {
    let read = read_capped(path, MAX_SKILL_MD_BYTES)?;
    let mut diagnostics = read.diagnostics;
    let mut name = None;
    // An oversized file was not read; parsing nothing would only add noise.
    if diagnostics.is_empty() {
        let parsed = skill_md::parse(&read.bytes, expected_name.as_deref());
        diagnostics.extend(parsed.diagnostics);
        name = parsed.name;
    }
    Ok(CheckedSkill {
        path: path.to_owned(),
        label: expected_name
            .or(name)
            .unwrap_or_else(|| SKILL_MD.to_owned()),
        record: None,
        diagnostics,
    })
}

/// The most files listed when checking one skill folder.
const MAX_FOLDER_FILES: usize = 10_000;

fn list_files(root: &Path, dir: &Path, out: &mut Vec<String>) -> Result<()> {
    let entries = fs::read_dir(dir).map_err(|source| Error::Read {
        path: dir.to_owned(),
        source,
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .collect();
    paths.sort();
    for path in paths {
        if out.len() >= MAX_FOLDER_FILES {
            return Ok(());
        }
        let Ok(metadata) = fs::symlink_metadata(&path) else {
            continue;
        };
        if metadata.is_dir() {
            list_files(root, &path, out)?;
        } else if let Ok(relative) = path.strip_prefix(root) {
            out.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
    Ok(())
}

fn parent_name(path: &Path) -> Option<String> {
    let absolute = fs::canonicalize(path).ok()?;
    let parent = absolute.parent()?;
    Some(parent.file_name()?.to_string_lossy().into_owned())
}

/// A folder served as a web site.
struct Site {
    root: PathBuf,
    base: Url,
    domain: Domain,
}

impl Site {
    fn new(root: PathBuf) -> Result<Site> {
        let name = root.canonicalize().ok().and_then(|path| {
            path.file_name()
                .map(|name| name.to_string_lossy().to_ascii_lowercase())
        });
        let host = name
            .filter(|name| name.contains('.') && name.parse::<Domain>().is_ok())
            .unwrap_or_else(|| FALLBACK_DOMAIN.to_owned());
        let unrecognised = || Error::UnrecognisedInput { path: root.clone() };
        let base = Url::parse(&format!("https://{host}/")).map_err(|_| unrecognised())?;
        let domain = Domain::from_url(&base).map_err(|_| unrecognised())?;
        Ok(Site { root, base, domain })
    }

    /// Returns the URL of an absolute path on this site.
    fn url(&self, path: &str) -> Result<Url> {
        self.base.join(path).map_err(|_| Error::UnrecognisedInput {
            path: self.root.join(path.trim_start_matches('/')),
        })
    }

    /// Maps a URL on this site to a file below the root; `None` for other hosts.
    fn file(&self, url: &Url) -> Option<PathBuf> {
        if Domain::from_url(url).ok()? != self.domain {
            return None;
        }
        let mut file = self.root.clone();
        for segment in url.path_segments()? {
            let decoded = percent_decode(segment)?;
            if decoded.is_empty()
                || decoded == "."
                || decoded == ".."
                || decoded.contains(['/', '\\'])
            {
                return None;
            }
            file.push(decoded);
        }
        Some(file)
    }

    fn fetch(&self, url: &Url, limit: usize) -> LocalArtifact {
        let Some(file) = self.file(url) else {
            return LocalArtifact::failed(Diagnostic::new(
                Code::Unfetched,
                format!("{url} is not on this site; it was not checked"),
            ));
        };
        if !file.is_file() {
            return LocalArtifact::failed(Diagnostic::new(
                Code::NotFound,
                format!("{url} does not exist (no file {})", file.display()),
            ));
        }
        match read_capped(&file, limit) {
            Ok(read) if read.diagnostics.is_empty() => LocalArtifact {
                path: Some(file),
                bytes: Some(read.bytes),
                failure: None,
            },
            Ok(mut read) => LocalArtifact {
                path: Some(file),
                bytes: None,
                failure: read.diagnostics.pop(),
            },
            Err(error) => LocalArtifact {
                path: Some(file),
                bytes: None,
                failure: Some(Diagnostic::new(Code::NotFound, format!("{error:#}"))),
            },
        }
    }
}

/// What reading one artifact from disk gave.
struct LocalArtifact {
    path: Option<PathBuf>,
    bytes: Option<Vec<u8>>,
    failure: Option<Diagnostic>,
}

impl LocalArtifact {
    fn failed(diagnostic: Diagnostic) -> LocalArtifact {
        LocalArtifact {
            path: None,
            bytes: None,
            failure: Some(diagnostic),
        }
    }

    fn as_fetched(&self) -> Fetched<'_> {
        match (&self.bytes, &self.failure) {
            (Some(bytes), _) => Fetched::Bytes {
                bytes,
                content_type: None,
            },
            (None, Some(failure)) => Fetched::Failed(failure),
            (None, None) => Fetched::Failed(&UNREADABLE),
        }
    }
}

static UNREADABLE: std::sync::LazyLock<Diagnostic> =
    std::sync::LazyLock::new(|| Diagnostic::new(Code::NotFound, "the file could not be read"));

/// A file's bytes, or a `too_large` diagnostic when it is over `limit`.
struct CappedRead {
    bytes: Vec<u8>,
    diagnostics: Vec<Diagnostic>,
}

fn read_capped(path: &Path, limit: usize) -> Result<CappedRead> {
    let read_error = |source| Error::Read {
        path: path.to_owned(),
        source,
    };
    let file = fs::File::open(path).map_err(read_error)?;
    let mut bytes = Vec::new();
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    file.take(cap).read_to_end(&mut bytes).map_err(read_error)?;
    if bytes.len() > limit {
        return Ok(CappedRead {
            bytes: Vec::new(),
            diagnostics: vec![Diagnostic::new(
                Code::TooLarge,
                format!("{} is larger than the {limit} bytes read", path.display()),
            )],
        });
    }
    Ok(CappedRead {
        bytes,
        diagnostics: Vec::new(),
    })
}

fn percent_decode(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = std::str::from_utf8(bytes.get(index + 1..index + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;
    use formats::skill::DigestStatus;

    const SEEN: OffsetDateTime = datetime!(2026-11-22 12:00 UTC);

    /// A fresh directory named `name` (a site's domain), removed when dropped.
    struct TempSite(PathBuf);

    impl TempSite {
        fn new(name: &str) -> TempSite {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let parent = std::env::temp_dir().join(format!(
                "skillscout-local-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            let root = parent.join(name);
            fs::create_dir_all(&root).unwrap();
            TempSite(root)
        }

        fn write(&self, path: &str, bytes: &[u8]) -> PathBuf {
            let file = self.0.join(path);
            fs::create_dir_all(file.parent().unwrap()).unwrap();
            fs::write(&file, bytes).unwrap();
            file
        }
    }

    impl Drop for TempSite {
        fn drop(&mut self) {
            if let Some(parent) = self.0.parent() {
                let _ = fs::remove_dir_all(parent);
            }
        }
    }

    fn codes(diagnostics: &[Diagnostic]) -> Vec<&'static str> {
        diagnostics.iter().map(|d| d.code.as_str()).collect()
    }

    const SKILL: &[u8] = b"---\nname: pdf\ndescription: Reads PDFs.\n---\nbody\n";

    #[test]
    fn an_oversized_skill_md_is_only_too_large() {
        let site = TempSite::new("pdf");
        let mut big = SKILL.to_vec();
        big.resize(MAX_SKILL_MD_BYTES + 1, b'x');
        let file = site.write("SKILL.md", &big);
        let checked = check(&file, SEEN).unwrap();
        assert_eq!(codes(&checked.skills[0].diagnostics), ["too_large"]);
    }

    #[test]
    fn a_tree_maps_its_own_urls_to_files_and_reports_the_rest() {
        let site = TempSite::new("example.test");
        site.write(".well-known/skills/pdf/SKILL.md", SKILL);
        site.write(
            ".well-known/skills/index.json",
            br#"{"skills": [
                {"name": "pdf", "description": "Reads PDFs.", "files": ["SKILL.md", "scripts/run.sh"]},
                {"name": "gone", "description": "d", "files": ["SKILL.md"]}
            ]}"#,
        );
        site.write(
            ".well-known/agent-skills/index.json",
            br#"{"$schema": "https://schemas.agentskills.io/discovery/0.2.0/schema.json", "skills": [
                {"name": "cdn", "type": "skill-md", "description": "d",
                 "url": "https://cdn.example.net/cdn/SKILL.md",
                 "digest": "sha256:0000000000000000000000000000000000000000000000000000000000000000"}
            ]}"#,
        );
        let checked = check(&site.0, SEEN).unwrap();
        assert_eq!(checked.indexes.len(), 2);
        let by_label = |label: &str| {
            checked
                .skills
                .iter()
                .find(|skill| skill.label == label)
                .unwrap_or_else(|| panic!("no {label}"))
        };
        let cdn = by_label("example.test/cdn");
        assert_eq!(codes(&cdn.diagnostics), ["unfetched"]);
        assert_eq!(
            cdn.record.as_ref().unwrap().digest_status,
            DigestStatus::Unfetched
        );
        let pdf = by_label("example.test/pdf");
        assert_eq!(codes(&pdf.diagnostics), ["digest_absent", "not_found"]);
        let gone = by_label("example.test/gone");
        assert_eq!(codes(&gone.diagnostics), ["digest_absent", "not_found"]);
    }

    #[test]
    fn a_lone_index_file_resolves_against_its_folder() {
        let site = TempSite::new("anywhere");
        site.write("pdf/SKILL.md", SKILL);
        let digest = formats::skill::Digest::of(SKILL);
        let index = site.write(
            "index.json",
            format!(
                r#"{{"$schema": "https://schemas.agentskills.io/discovery/0.2.0/schema.json", "skills": [
                    {{"name": "pdf", "type": "skill-md", "description": "Reads PDFs.", "url": "pdf/SKILL.md", "digest": "{digest}"}}
                ]}}"#
            )
            .as_bytes(),
        );
        let checked = check(&index, SEEN).unwrap();
        let record = checked.records().next().unwrap();
        assert_eq!(record.id.to_string(), "localhost/pdf");
        assert_eq!(record.digest_status, DigestStatus::Verified);
        assert!(
            codes(&record.diagnostics).is_empty(),
            "{:?}",
            record.diagnostics
        );
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%20b").as_deref(), Some("a b"));
        assert_eq!(percent_decode("%2"), None);
        assert_eq!(percent_decode("%zz"), None);
        assert_eq!(percent_decode("%ff"), None);
    }
}
