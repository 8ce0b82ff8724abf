//! Reading published skills from disk: a skill folder, a SKILL.md, an index file, or a whole
//! well-known tree (`<root>/.well-known/...`), as `skillscout validate` and the corpus tests do.
//!
//! A well-known tree is a web site whose files are its URLs: [`DiskSite`] drives the same site
//! pipeline as a crawl ([`formats::site`]), answering each URL on the site's host with the file
//! below the root (with the same size caps as responses), and every other URL with a reason.
//! The site's domain is the root folder's name (when that is a valid host name, as in
//! `example.test/.well-known/...`, else `localhost`). A lone skill folder or SKILL.md is not a
//! site: it is checked as the skill it is.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use time::OffsetDateTime;
use url::Url;

use crate::check::SiteLabel;
pub use crate::check::{Checked, CheckedIndex, CheckedSkill};
use crate::error::{Error, Result};
use formats::audit::{self, AuditFile, AuditInput, Risk};
use formats::diagnostic::{Code, Diagnostic};
use formats::health;
use formats::index::{self, MAX_INDEX_BYTES, SKILL_MD};
use formats::normalize::MAX_SKILL_MD_BYTES;
pub use formats::site::WELL_KNOWN_INDEXES;
use formats::site::{
    Body, FetchFailure, Reply, Request, SiteCrawl, SiteFindings, SiteOptions, decode_path_segment,
};
use formats::skill::{Domain, Format, Skill};
use formats::skill_md::{self, SkillMd};

/// The domain given to a tree whose folder name is not a host name.
pub const FALLBACK_DOMAIN: &str = "localhost";

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
        let skill = check_skill_md(path, parent_name(path))?.checked;
        return Ok(Checked {
            skills: vec![skill],
            ..Checked::default()
        });
    }
    check_index_file(path, seen_at)
}

/// The options of every local check: files listed by v0.1 indexes are read too.
fn options(seen_at: OffsetDateTime) -> SiteOptions {
    SiteOptions {
        seen_at,
        prefetch_files: true,
        audit: true,
    }
}

/// Reads every well-known index of the tree at `root` and the artifacts they list, as a crawl
/// of the site would.
pub fn check_tree(root: &Path, seen_at: OffsetDateTime) -> Result<Checked> {
    let site = DiskSite::new(root.to_owned())?;
    let found = site.crawl(options(seen_at));
    if found.indexes.is_empty() && found.failures.is_empty() {
        return Err(Error::UnrecognisedInput {
            path: root.to_owned(),
        });
    }
    let mut checked = Checked::default();
    let label = SiteLabel {
        path: root.to_owned(),
        url: site.base().clone(),
    };
    let health = health::report(&health::Site::from_findings(site.base(), &found));
    checked.add_site(label, found, Vec::new(), health, |url| {
        site.existing_file(url)
    });
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
    let mut records = Vec::new();
    for domain in domains {
        let site = DiskSite::new(domain)?;
        records.extend(site.crawl(options(OffsetDateTime::UNIX_EPOCH)).records);
    }
    Ok(records)
}

/// Reads one index file: inside a well-known tree it is read as part of that site; alone, its
/// folder stands for the directory the index is served from.
fn check_index_file(path: &Path, seen_at: OffsetDateTime) -> Result<Checked> {
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
            let site = DiskSite::new(root.to_owned())?;
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
            let site = DiskSite::new(folder)?;
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
    let found =
        SiteCrawl::index(url.clone(), format, options(seen_at)).run(|request| site.get(request));
    let mut checked = Checked::default();
    let health = health::report(&health::Site::from_findings(site.base(), &found));
    let label = SiteLabel {
        path: absolute,
        url,
    };
    checked.add_site(label, found, Vec::new(), health, |url| {
        site.existing_file(url)
    });
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

/// Checks a skill folder: its SKILL.md against the folder name, every file's path against
/// the rules an index's `files[]` must follow, and every file with the safety audit.
fn check_skill_folder(folder: &Path) -> Result<Checked> {
    let expected = folder.canonicalize().ok().and_then(|path| {
        path.file_name()
            .map(|name| name.to_string_lossy().into_owned())
    });
    let mut lone = check_skill_md(&folder.join(SKILL_MD), expected)?;
    let mut files = Vec::new();
    list_files(folder, folder, &mut files)?;
    let mut had = Vec::new();
    let mut read = 0usize;
    for relative in files {
        if let Err(problem) = index::check_relative_path(&relative) {
            lone.checked.diagnostics.push(problem.at(relative));
            continue;
        }
        // Regular files only (a named pipe would never end), what the audit reads of a skill
        // and a byte more, so that it says what it left out; a file that cannot be read is
        // left out.
        let file = folder.join(&relative);
        if !fs::metadata(&file).is_ok_and(|metadata| metadata.is_file()) {
            continue;
        }
        let left = (audit::MAX_SKILL_BYTES + 1).saturating_sub(read);
        let Ok(bytes) = read_prefix(&file, left) else {
            continue;
        };
        read += bytes.len();
        had.push((relative, bytes));
    }
    lone.audit(&had);
    Ok(Checked {
        skills: vec![lone.checked],
        ..Checked::default()
    })
}

/// A lone SKILL.md, checked: what is reported, and what the audit needs of it.
struct LoneSkill {
    checked: CheckedSkill,
    parsed: Option<SkillMd>,
}

impl LoneSkill {
    /// Audits the skill's files (path relative to its root, bytes) with what its SKILL.md
    /// says it does.
    fn audit(&mut self, files: &[(String, Vec<u8>)]) {
        let files: Vec<AuditFile<'_>> = files
            .iter()
            .map(|(path, bytes)| AuditFile { path, bytes })
            .collect();
        let parsed = self.parsed.clone().unwrap_or_default();
        let allowed_tools = audit::allowed_tools(&parsed.frontmatter);
        let found = audit::audit(&AuditInput {
            name: parsed.name.as_deref().unwrap_or(&self.checked.label),
            description: parsed.description.as_deref().unwrap_or(""),
            allowed_tools: &allowed_tools,
            files: &files,
        });
        self.checked.risk = found.risk;
        self.checked.findings = found.findings;
    }
}

/// Checks one SKILL.md against the name of the folder it is in.
fn check_skill_md(path: &Path, expected_name: Option<String>) -> Result<LoneSkill> {
    let read = read_capped(path, MAX_SKILL_MD_BYTES)?;
    let mut diagnostics = Vec::new();
    let mut name = None;
    let mut parsed = None;
    if read.too_large {
        // An oversized file was not read; parsing nothing would only add noise.
        diagnostics.push(Diagnostic::new(
            Code::TooLarge,
            format!(
                "{} is larger than the {MAX_SKILL_MD_BYTES} bytes read",
                path.display()
            ),
        ));
    } else {
        let skill_md = skill_md::parse(&read.bytes, expected_name.as_deref());
        diagnostics.extend(skill_md.diagnostics.iter().cloned());
        name.clone_from(&skill_md.name);
        parsed = Some(skill_md);
    }
    let checked = CheckedSkill {
        path: path.to_owned(),
        label: expected_name
            .or(name)
            .unwrap_or_else(|| SKILL_MD.to_owned()),
        record: None,
        diagnostics,
        risk: Risk::None,
        findings: Vec::new(),
    };
    let mut lone = LoneSkill { checked, parsed };
    if !read.too_large {
        lone.audit(&[(SKILL_MD.to_owned(), read.bytes)]);
    }
    Ok(lone)
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

/// A folder served as a web site: the URLs on its host are the files below its root.
#[derive(Debug, Clone)]
pub struct DiskSite {
    root: PathBuf,
    base: Url,
    domain: Domain,
}

impl DiskSite {
    /// Returns the site of the folder `root`, at `https://<folder name>/` (or
    /// `https://localhost/` when the folder's name is not a host name).
    pub fn new(root: PathBuf) -> Result<DiskSite> {
        let name = root.canonicalize().ok().and_then(|path| {
            path.file_name()
                .map(|name| name.to_string_lossy().to_ascii_lowercase())
        });
        let host = name
            .filter(|name| name.contains('.') && name.parse::<Domain>().is_ok())
            .unwrap_or_else(|| FALLBACK_DOMAIN.to_owned());
        let base = Url::parse(&format!("https://{host}/"))
            .map_err(|_| Error::UnrecognisedInput { path: root.clone() })?;
        DiskSite::with_base(root, base)
    }

    /// Returns the site of the folder `root` at `base` (an origin, e.g. `http://example.test/`):
    /// to read a tree as the site a server of that tree would be.
    pub fn with_base(root: PathBuf, base: Url) -> Result<DiskSite> {
        let domain =
            Domain::from_url(&base).map_err(|_| Error::UnrecognisedInput { path: root.clone() })?;
        Ok(DiskSite { root, base, domain })
    }

    /// Returns the site's base URL.
    pub fn base(&self) -> &Url {
        &self.base
    }

    /// Crawls the site: probes its well-known paths and follows what they list.
    pub fn crawl(&self, options: SiteOptions) -> SiteFindings {
        SiteCrawl::probe(vec![self.base.clone()], options).run(|request| self.get(request))
    }

    /// Returns the URL of an absolute path on this site.
    fn url(&self, path: &str) -> Result<Url> {
        self.base.join(path).map_err(|_| Error::UnrecognisedInput {
            path: self.root.join(path.trim_start_matches('/')),
        })
    }

    /// Maps a URL on this site to a path below the root; `None` for other hosts and for paths
    /// that would leave the root (`..`, encoded slashes).
    fn file(&self, url: &Url) -> Option<PathBuf> {
        if Domain::from_url(url).ok()? != self.domain {
            return None;
        }
        let mut file = self.root.clone();
        for segment in url.path_segments()? {
            let decoded = decode_path_segment(segment)?;
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

    /// Returns the file a URL maps to, when it exists.
    fn existing_file(&self, url: &Url) -> Option<PathBuf> {
        self.file(url).filter(|file| file.is_file())
    }

    /// Answers one request of the site pipeline with the file it maps to.
    pub fn get(&self, request: &Request) -> Reply {
        let url = &request.url;
        let Some(file) = self.file(url) else {
            return Err(FetchFailure::new(
                Code::Unfetched,
                url,
                format!("not on the site {}; it was not read", self.base),
            ));
        };
        if !file.is_file() {
            return Err(FetchFailure::new(
                Code::NotFound,
                url,
                format!("no file {}", file.display()),
            ));
        }
        // A link may point out of the tree; what is served is only what is below the root.
        let inside = match (file.canonicalize(), self.root.canonicalize()) {
            (Ok(file), Ok(root)) => file.starts_with(root),
            _ => false,
        };
        if !inside {
            return Err(FetchFailure::new(
                Code::PathTraversal,
                url,
                format!("{} leads out of {}", file.display(), self.root.display()),
            ));
        }
        match read_capped(&file, request.limit) {
            Ok(read) if read.too_large => Err(FetchFailure::new(
                Code::TooLarge,
                url,
                format!(
                    "{} is larger than the {} bytes read",
                    file.display(),
                    request.limit
                ),
            )),
            Ok(read) => Ok(Body {
                url: url.clone(),
                bytes: read.bytes,
                content_type: None,
                link_header: None,
            }),
            Err(error) => Err(FetchFailure::new(
                Code::NotFound,
                url,
                format!("cannot read {}: {}", file.display(), error_source(&error)),
            )),
        }
    }
}

/// Returns the I/O cause of a read error.
fn error_source(error: &Error) -> String {
    match error {
        Error::Read { source, .. } => source.to_string(),
        other => other.to_string(),
    }
}

/// A file's bytes, or nothing when it is over the limit.
struct CappedRead {
    bytes: Vec<u8>,
    too_large: bool,
}

/// Reads at most `limit` bytes of a file.
fn read_prefix(path: &Path, limit: usize) -> Result<Vec<u8>> {
    let read_error = |source| Error::Read {
        path: path.to_owned(),
        source,
    };
    let file = fs::File::open(path).map_err(read_error)?;
    let mut bytes = Vec::new();
    file.take(u64::try_from(limit).unwrap_or(u64::MAX))
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    Ok(bytes)
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
            too_large: true,
        });
    }
    Ok(CappedRead {
        bytes,
        too_large: false,
    })
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
        assert_eq!(decode_path_segment("a%20b").as_deref(), Some("a b"));
        assert_eq!(decode_path_segment("%2"), None);
        assert_eq!(decode_path_segment("%zz"), None);
        assert_eq!(decode_path_segment("%ff"), None);
    }
}
