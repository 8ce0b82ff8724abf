//! The canonical skill record (docs/record.md) and the validated newtypes it is made of.
//!
//! This is the only definition of [`Skill`] in the workspace. A `Skill` is only ever built by
//! the normaliser, so every record holds normalised values; the newtypes' constructors (and
//! their `Deserialize` impls, which go through the same checks) keep it that way when records
//! are read back from disk.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest as _, Sha256};
use time::OffsetDateTime;
use url::Url;

use crate::audit::{Finding, Risk};
use crate::diagnostic::Diagnostic;
use crate::verdict::{Judgement, judge};

/// The longest skill name the specification allows.
pub const MAX_NAME_LEN: usize = 64;
/// The longest slug kept as a record key; longer index names are rejected outright.
pub const MAX_SLUG_LEN: usize = 128;

/// Implements `Serialize`/`Deserialize` through `Display`/`FromStr`, so that reading a record
/// back runs the same validation as building it.
macro_rules! string_serde {
    ($ty:ty) => {
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let raw = String::deserialize(deserializer)?;
                raw.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

/// Why a value was refused by a newtype constructor.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidValue(pub String);

/// A skill name that follows the Agent Skills naming rule: 1-64 characters of `a-z`, `0-9`
/// and `-`, no hyphen at either end, no two hyphens in a row.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SkillName(String);

impl SkillName {
    /// Returns the name as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Returns what is wrong with `name` under the naming rule, or `None` when it follows it.
    pub fn problem(name: &str) -> Option<String> {
        if name.is_empty() {
            return Some("is empty".to_owned());
        }
        let chars = name.chars().count();
        if chars > MAX_NAME_LEN {
            return Some(format!(
                "is {chars} characters long (at most {MAX_NAME_LEN})"
            ));
        }
        if let Some(bad) = name
            .chars()
            .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
        {
            return Some(if bad.is_ascii_uppercase() {
                "has uppercase letters".to_owned()
            } else {
                format!("has the character {bad:?} (only a-z, 0-9 and - are allowed)")
            });
        }
        if name.starts_with('-') || name.ends_with('-') {
            return Some("starts or ends with a hyphen".to_owned());
        }
        if name.contains("--") {
            return Some("has two hyphens in a row".to_owned());
        }
        None
    }
}

impl FromStr for SkillName {
    type Err = InvalidValue;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match SkillName::problem(name) {
            None => Ok(SkillName(name.to_owned())),
            Some(problem) => Err(InvalidValue(format!("skill name {name:?} {problem}"))),
        }
    }
}

impl fmt::Display for SkillName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

string_serde!(SkillName);

/// The key of a skill within its domain: the index entry's `name` (agent-skills) or `id`
/// (skill-sharing), kept raw even when it breaks the naming rule, as long as it is safe as
/// one URL path segment.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Slug(String);

impl Slug {
    /// Returns the slug as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for Slug {
    type Err = InvalidValue;

    fn from_str(slug: &str) -> Result<Self, Self::Err> {
        let unsafe_char = slug.chars().find(|c| {
            c.is_control() || c.is_whitespace() || matches!(c, '/' | '\\' | '?' | '#' | '%')
        });
        if slug.is_empty() || slug == "." || slug == ".." {
            Err(InvalidValue(format!(
                "skill key {slug:?} is not usable as a path segment"
            )))
        } else if slug.chars().count() > MAX_SLUG_LEN {
            Err(InvalidValue(format!(
                "skill key {slug:?} is longer than {MAX_SLUG_LEN} characters"
            )))
        } else if let Some(bad) = unsafe_char {
            Err(InvalidValue(format!(
                "skill key {slug:?} contains {bad:?}, which cannot be used in a path segment"
            )))
        } else {
            Ok(Slug(slug.to_owned()))
        }
    }
}

impl fmt::Display for Slug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

string_serde!(Slug);

/// The host of an index URL, lowercased, with `:port` when the port is not the scheme's
/// default.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Domain(String);

impl Domain {
    /// Returns the domain of an http(s) URL.
    pub fn from_url(url: &Url) -> Result<Domain, InvalidValue> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(InvalidValue(format!("{url} is not an http(s) URL")));
        }
        let Some(host) = url.host_str() else {
            return Err(InvalidValue(format!("{url} has no host")));
        };
        let host = host.to_ascii_lowercase();
        // `url` keeps host names such as `..` or `a..b`; no site is called that, and such a
        // name would be a path segment of `..` in the API and on disk.
        let labels = host.strip_suffix('.').unwrap_or(&host);
        if url
            .host()
            .is_some_and(|h| matches!(h, url::Host::Domain(_)))
            && labels.split('.').any(str::is_empty)
        {
            return Err(InvalidValue(format!(
                "{url} has an empty label in its host"
            )));
        }
        Ok(match url.port() {
            Some(port) => Domain(format!("{host}:{port}")),
            None => Domain(host),
        })
    }

    /// Returns the domain as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for Domain {
    type Err = InvalidValue;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        // A domain is exactly what `from_url` produces for `https://{raw}/`, so parse it that
        // way and insist on the round trip; this rejects paths, credentials and junk.
        let invalid = || InvalidValue(format!("invalid domain {raw:?}"));
        if raw.is_empty() || raw.contains(['/', '@', '?', '#', '\\']) {
            return Err(invalid());
        }
        let url = Url::parse(&format!("https://{raw}/")).map_err(|_| invalid())?;
        let domain = Domain::from_url(&url)?;
        // `url` drops the default https port; keep an explicit :443 as given is not allowed.
        if domain.0 != raw.to_ascii_lowercase() {
            return Err(invalid());
        }
        Ok(domain)
    }
}

impl fmt::Display for Domain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

string_serde!(Domain);

/// A record's stable key: `{domain}/{slug}`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SkillId {
    domain: Domain,
    slug: Slug,
}

impl SkillId {
    /// Returns the id of `slug` within `domain`.
    pub fn new(domain: Domain, slug: Slug) -> SkillId {
        SkillId { domain, slug }
    }

    /// Returns the domain part.
    pub fn domain(&self) -> &Domain {
        &self.domain
    }

    /// Returns the slug part.
    pub fn slug(&self) -> &Slug {
        &self.slug
    }
}

impl FromStr for SkillId {
    type Err = InvalidValue;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        let Some((domain, slug)) = raw.split_once('/') else {
            return Err(InvalidValue(format!(
                "skill id {raw:?} is not of the form domain/name"
            )));
        };
        Ok(SkillId::new(domain.parse()?, slug.parse()?))
    }
}

impl fmt::Display for SkillId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.domain, self.slug)
    }
}

string_serde!(SkillId);

/// A SHA-256 digest, always printed as `sha256:` and 64 lowercase hex characters.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Digest([u8; 32]);

impl Digest {
    /// Returns the SHA-256 digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Digest {
        Digest(Sha256::digest(bytes).into())
    }

    /// Returns the digest whose 32 bytes a SHA-256 hasher produced.
    pub fn from_sha256(bytes: [u8; 32]) -> Digest {
        Digest(bytes)
    }

    /// Returns the digest's 32 bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// Returns the digest as 64 lowercase hex characters, without the prefix.
    pub fn hex(&self) -> String {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut out = String::with_capacity(64);
        for byte in self.0 {
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0x0f)]));
        }
        out
    }

    /// Parses 64 hex characters of either case.
    pub fn from_hex(hex: &str) -> Option<Digest> {
        if hex.len() != 64 || !hex.is_ascii() {
            return None;
        }
        let mut bytes = [0u8; 32];
        for (index, pair) in hex.as_bytes().chunks_exact(2).enumerate() {
            let pair = std::str::from_utf8(pair).ok()?;
            bytes[index] = u8::from_str_radix(pair, 16).ok()?;
        }
        Some(Digest(bytes))
    }
}

impl FromStr for Digest {
    type Err = InvalidValue;

    /// Parses the canonical form only: `sha256:` and 64 lowercase hex characters. The
    /// variants found in the wild are accepted, with a diagnostic, by the index parser.
    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        raw.strip_prefix("sha256:")
            .filter(|hex| !hex.bytes().any(|b| b.is_ascii_uppercase()))
            .and_then(Digest::from_hex)
            .ok_or_else(|| InvalidValue(format!("invalid digest {raw:?}")))
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256:{}", self.hex())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

string_serde!(Digest);

/// Which protocol published a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// `/.well-known/agent-skills/index.json` or the legacy `/.well-known/skills/index.json`.
    AgentSkills,
    /// `/.well-known/skill-sharing`.
    SkillSharing,
    /// An MCP server's Skills Extension (`skills/list` and `resources/read` of `skill://`
    /// files), for an `mcp+http(s)://` seed.
    McpSkills,
}

impl Format {
    /// Every format.
    pub const ALL: [Format; 3] = [Format::AgentSkills, Format::SkillSharing, Format::McpSkills];

    /// Returns the wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::AgentSkills => "agent-skills",
            Format::SkillSharing => "skill-sharing",
            Format::McpSkills => "mcp-skills",
        }
    }
}

/// Who may see a skill (skill-sharing §5.5). Agent-skills entries are always public.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// Visible to everyone, invocable without authentication.
    Public,
    /// Visible to everyone, invocable with authentication.
    Restricted,
    /// Visible only to authenticated callers.
    Private,
}

impl Access {
    /// Every access level, most open first.
    pub const ALL: [Access; 3] = [Access::Public, Access::Restricted, Access::Private];

    /// Returns the wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Access::Public => "public",
            Access::Restricted => "restricted",
            Access::Private => "private",
        }
    }
}

impl FromStr for Access {
    type Err = InvalidValue;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        match raw {
            "public" => Ok(Access::Public),
            "restricted" => Ok(Access::Restricted),
            "private" => Ok(Access::Private),
            other => Err(InvalidValue(format!(
                "invalid access {other:?} (expected public, restricted or private)"
            ))),
        }
    }
}

/// The capability types skill-sharing defines; any other value is kept, lowercased.
pub const KNOWN_CAPABILITY_TYPES: [&str; 4] = ["plugin", "api", "knowledge", "task"];
/// The capability type of every agent-skills record.
pub const AGENT_SKILL_CAPABILITY: &str = "skill";

/// How far the artifact's digest could be checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DigestStatus {
    /// The fetched bytes match the published digest.
    Verified,
    /// The fetched bytes differ from the published digest; the content was not used.
    Mismatch,
    /// Nothing was published to check against.
    Absent,
    /// The artifact was not fetched.
    Unfetched,
}

/// What the directory makes of a skill (docs/record.md `verdict`), from its content alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Content fetched, its digest verified where one is published, and it passes the
    /// strict check.
    Valid,
    /// Content fetched and usable; it fails the strict check only on rules agent clients
    /// ignore (unknown frontmatter fields, a name differing from its folder, a long
    /// description, …).
    Lenient,
    /// No usable content: never fetched or gone, a digest mismatch, no frontmatter or
    /// description, a name that breaks the naming rule (agent clients refuse such names), an
    /// unsafe path.
    Invalid,
}

impl Verdict {
    /// Every verdict, best first.
    pub const ALL: [Verdict; 3] = [Verdict::Valid, Verdict::Lenient, Verdict::Invalid];

    /// Returns the verdict's name, as serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Valid => "valid",
            Verdict::Lenient => "lenient",
            Verdict::Invalid => "invalid",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What kind of artifact the content came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Artifact {
    /// A single SKILL.md (v0.2 `skill-md`, or v0.1 `{name}/SKILL.md`).
    SkillMd,
    /// A `.tar.gz` or `.zip` archive (v0.2 `archive`).
    Archive,
    /// A skill-sharing descriptor JSON.
    Descriptor,
}

/// One file known to belong to a skill.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FileEntry {
    /// Path relative to the skill root, `/`-separated.
    pub path: String,
    /// Size in bytes, when known.
    pub size: Option<u64>,
    /// SHA-256 of the file's bytes, when known.
    pub sha256: Option<Digest>,
}

/// The canonical record: one per skill, whatever its source (docs/record.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    /// `{domain}/{slug}`.
    pub id: SkillId,
    /// Host of the index URL, with `:port` when not the default.
    pub domain: Domain,
    /// The protocol that published the skill.
    pub format: Format,
    /// The slug: the index entry's `name` or `id`.
    pub name: Slug,
    /// Human name: frontmatter or descriptor `name`, else the slug.
    pub title: String,
    /// What the skill does.
    pub description: String,
    /// Skill-sharing's `capability_type`, lowercased; `skill` for agent-skills.
    pub capability_type: String,
    /// Who may see the skill.
    pub access: Access,
    /// The skill's version, when the source gives one.
    pub version: Option<String>,
    /// The URL the content came from (SKILL.md, archive or descriptor).
    pub source_url: Url,
    /// The index that listed the skill.
    pub index_url: Url,
    /// What the content came from.
    pub artifact: Artifact,
    /// SHA-256 of the artifact as fetched.
    pub digest: Option<Digest>,
    /// How far the digest could be checked.
    pub digest_status: DigestStatus,
    /// Parsed frontmatter (descriptor fields for skill-sharing), as a JSON object.
    pub frontmatter: serde_json::Map<String, serde_json::Value>,
    /// The SKILL.md markdown body.
    pub body: String,
    /// Files known to belong to the skill.
    pub files: Vec<FileEntry>,
    /// Tags, from the frontmatter (top level, `metadata` or `metadata.gaia`) or descriptor.
    pub tags: Vec<String>,
    /// Licence, when the source gives one.
    pub license: Option<String>,
    /// Every problem found while normalising.
    pub diagnostics: Vec<Diagnostic>,
    /// The roll-up of `findings` (docs/audit.md): `none` when nothing was found, and for a
    /// skill whose content was never had (or a record stored before the audit existed).
    #[serde(default)]
    pub risk: Risk,
    /// What the static safety audit found in the skill's files, most severe first.
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// The fingerprint of all of the skill's files ([`crate::fingerprint`]): copies with the
    /// same one are the same skill published at several places. `None` when some file's
    /// content was not had (a legacy entry whose listed files were not fetched, content
    /// that was never fetched or failed its digest) and for skill-sharing services.
    #[serde(default)]
    pub fingerprint: Option<Digest>,
    /// When the skill was first seen.
    #[serde(with = "time::serde::rfc3339")]
    pub first_seen: OffsetDateTime,
    /// When the skill was last seen in its index.
    #[serde(with = "time::serde::rfc3339")]
    pub last_seen: OffsetDateTime,
    /// When the record's content last changed.
    #[serde(with = "time::serde::rfc3339")]
    pub last_changed: OffsetDateTime,
}

impl Skill {
    /// Returns the skill's [`Verdict`] and the diagnostics it rests on: the one judgement
    /// ([`crate::verdict::judge`]) of its digest status and diagnostics, so a record stored
    /// before verdicts existed has one too.
    pub fn judgement(&self) -> Judgement<'_> {
        judge(Some(self.digest_status), &self.diagnostics)
    }

    /// Returns the skill's [`Verdict`] (see [`Skill::judgement`]).
    pub fn verdict(&self) -> Verdict {
        self.judgement().verdict
    }

    /// Returns the file entry for `path`, if the skill lists one.
    pub fn file(&self, path: &str) -> Option<&FileEntry> {
        self.files.iter().find(|file| file.path == path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skill_names() {
        let cases = [
            ("pdf-processing", None),
            ("a", None),
            ("a1-b2", None),
            ("", Some("is empty")),
            ("PDF-Processing", Some("has uppercase letters")),
            ("-pdf", Some("starts or ends with a hyphen")),
            ("pdf-", Some("starts or ends with a hyphen")),
            ("pdf--proc", Some("has two hyphens in a row")),
            (
                "pdf_proc",
                Some("has the character '_' (only a-z, 0-9 and - are allowed)"),
            ),
            ("Ahrefs Automation", Some("has uppercase letters")),
            (
                "r-lib/cli",
                Some("has the character '/' (only a-z, 0-9 and - are allowed)"),
            ),
            (
                "é",
                Some("has the character 'é' (only a-z, 0-9 and - are allowed)"),
            ),
        ];
        for (name, problem) in cases {
            assert_eq!(SkillName::problem(name).as_deref(), problem, "{name:?}");
        }
        let long = "a".repeat(65);
        assert_eq!(
            SkillName::problem(&long).as_deref(),
            Some("is 65 characters long (at most 64)")
        );
        assert!(SkillName::problem(&"a".repeat(64)).is_none());
    }

    #[test]
    fn slugs_keep_raw_names_but_refuse_unsafe_ones() {
        for ok in [
            "pdf",
            "-21risk-automation",
            "google_maps-automation",
            "com.example.x-v1",
        ] {
            assert!(ok.parse::<Slug>().is_ok(), "{ok}");
        }
        for bad in ["", ".", "..", "a/b", "a b", "a\nb", "a?b", "a%2f"] {
            assert!(bad.parse::<Slug>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn domains() {
        let url = Url::parse("HTTPS://Example.COM:443/x").unwrap();
        assert_eq!(Domain::from_url(&url).unwrap().as_str(), "example.com");
        let url = Url::parse("http://127.0.0.1:8080/.well-known/skills/index.json").unwrap();
        assert_eq!(Domain::from_url(&url).unwrap().as_str(), "127.0.0.1:8080");
        assert!("example.com".parse::<Domain>().is_ok());
        assert!("example.com:8080".parse::<Domain>().is_ok());
        assert!("[::1]:8080".parse::<Domain>().is_ok());
        for bad in [
            "",
            "..",
            ".",
            "a..b",
            ".example.com",
            "a/b",
            "user@host",
            "example.com:443",
            "exa mple.com",
            "x:99999",
        ] {
            assert!(bad.parse::<Domain>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn ids_round_trip() {
        let id: SkillId = "example.com:8080/pdf-tools".parse().unwrap();
        assert_eq!(id.domain().as_str(), "example.com:8080");
        assert_eq!(id.slug().as_str(), "pdf-tools");
        assert_eq!(id.to_string(), "example.com:8080/pdf-tools");
        assert!("nodomain".parse::<SkillId>().is_err());
        assert!("example.com/a/b".parse::<SkillId>().is_err());
    }

    #[test]
    fn digests() {
        let digest = Digest::of(b"hello");
        let text = digest.to_string();
        assert_eq!(
            text,
            "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        assert_eq!(text.parse::<Digest>().unwrap(), digest);
        assert!(text.to_uppercase().parse::<Digest>().is_err());
        assert!(digest.hex().parse::<Digest>().is_err());
        assert!("sha256:zz".parse::<Digest>().is_err());
        let json = serde_json::to_string(&digest).unwrap();
        assert_eq!(serde_json::from_str::<Digest>(&json).unwrap(), digest);
    }
}
