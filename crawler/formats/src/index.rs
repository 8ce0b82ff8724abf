//! Agent-skills discovery indexes: `/.well-known/agent-skills/index.json` (v0.2) and the
//! legacy `/.well-known/skills/index.json` (v0.1, and the older `path` form).
//!
//! [`parse`] turns an index's bytes into [`IndexEntry`]s, each saying which artifact to fetch
//! and what digest to expect. It is lenient where the meaning is clear (a `sha256` field, an
//! unprefixed or upper-case digest, a bare array, an unknown `$schema`) and strict where
//! safety is at stake (paths, URLs), and it reports every deviation as a [`Diagnostic`].
//! Specs: `specs/agent-skills-discovery-v0.2.md`, `specs/agent-skills-discovery-v0.1.md`.

use serde_json::{Map, Value};
use url::Url;

use crate::diagnostic::{Code, Diagnostic};
use crate::skill::{Digest, SkillName, Slug};

/// The `$schema` URI of a v0.2 index.
pub const SCHEMA_V0_2: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";
/// The largest index read, in bytes (docs/crawl.md).
pub const MAX_INDEX_BYTES: usize = 2 * 1024 * 1024;
/// The most entries read from one index; the rest are reported and ignored.
pub const MAX_INDEX_ENTRIES: usize = 10_000;
/// The most `files[]` paths kept for one v0.1 entry.
pub const MAX_FILES_PER_SKILL: usize = 1_000;
/// The longest description the specification allows, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// The file every skill must have.
pub const SKILL_MD: &str = "SKILL.md";

/// Which version of the discovery format an index follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum IndexVersion {
    /// `$schema` with `type`, `url` and `digest` per entry.
    #[serde(rename = "0.2")]
    V0_2,
    /// No `$schema`; `files[]` (or the older `path`) per entry.
    #[serde(rename = "0.1")]
    V0_1,
}

/// What an entry's artifact is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A single SKILL.md: v0.2 `skill-md`, or the SKILL.md of a v0.1 entry.
    SkillMd,
    /// A `.tar.gz` or `.zip` archive of the skill directory.
    Archive,
}

/// One usable skill entry of an index.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexEntry {
    /// Position in the index's `skills` array.
    pub position: usize,
    /// The entry's `name`, kept raw (see [`Slug`]).
    pub slug: Slug,
    /// The entry's description (empty when missing).
    pub description: String,
    /// What the artifact is.
    pub kind: EntryKind,
    /// Where the artifact is, resolved against the index URL.
    pub url: Url,
    /// The digest the artifact must have, when one was published in a usable form.
    pub digest: Option<Digest>,
    /// For v0.1 entries: the skill directory URL the `files` paths are relative to.
    pub base_url: Option<Url>,
    /// For v0.1 entries: the listed paths that follow the path rules, `SKILL.md` included.
    pub files: Vec<String>,
    /// Problems with this entry; `field` is like `skills[3].digest`.
    pub diagnostics: Vec<Diagnostic>,
}

/// A parsed index.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentSkillsIndex {
    /// The format version the index was read as.
    pub version: IndexVersion,
    /// The `$schema` as published.
    pub schema: Option<String>,
    /// The entries that can be fetched, in index order.
    pub entries: Vec<IndexEntry>,
    /// Problems with the index as a whole, and with entries that were skipped.
    pub diagnostics: Vec<Diagnostic>,
}

/// Parses an agent-skills index fetched from `index_url`.
///
/// Reads in the order the sharing parser does: the document (size, UTF-8, JSON), then its
/// shape (`$schema` and the `skills` array), the version, and each entry. Never fails: input
/// that is not an index at all yields no entries and says why.
pub fn parse(bytes: &[u8], index_url: &Url) -> AgentSkillsIndex {
    let mut diagnostics = Vec::new();
    let Some(document) = read_document(bytes, &mut diagnostics) else {
        return AgentSkillsIndex::unusable(None, diagnostics);
    };
    let (schema, skills) = match read_shape(document, &mut diagnostics) {
        Ok(shape) => shape,
        Err(schema) => return AgentSkillsIndex::unusable(schema, diagnostics),
    };
    let version = read_version(schema.as_deref(), &skills, &mut diagnostics);
    let entries = read_entries(skills, index_url, &mut diagnostics);
    AgentSkillsIndex {
        version,
        schema,
        entries,
        diagnostics,
    }
}

impl AgentSkillsIndex {
    /// An index that yields nothing, with the reasons.
    fn unusable(schema: Option<String>, diagnostics: Vec<Diagnostic>) -> Self {
        AgentSkillsIndex {
            version: IndexVersion::V0_1,
            schema,
            entries: Vec::new(),
            diagnostics,
        }
    }
}

/// Reads the bytes as a JSON document: `None` when they are over the size cap (that one
/// diagnostic only) or not JSON. Bytes that are not UTF-8 are read with replacement
/// characters, and said so.
fn read_document(bytes: &[u8], diagnostics: &mut Vec<Diagnostic>) -> Option<Value> {
    if bytes.len() > MAX_INDEX_BYTES {
        diagnostics.push(Diagnostic::new(
            Code::TooLarge,
            format!(
                "index is {} bytes, more than the {MAX_INDEX_BYTES} bytes read",
                bytes.len()
            ),
        ));
        return None;
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(error) => {
            diagnostics.push(Diagnostic::new(
                Code::InvalidUtf8,
                format!("index is not UTF-8 ({error}); invalid bytes were replaced"),
            ));
            String::from_utf8_lossy(bytes)
        }
    };
    match serde_json::from_str(&text) {
        Ok(document) => Some(document),
        Err(error) => {
            diagnostics.push(Diagnostic::new(
                Code::InvalidJson,
                format!("index is not valid JSON: {error}"),
            ));
            None
        }
    }
}

/// Splits the document into its `$schema` and its `skills` array: an object with both, or a
/// bare array (tolerated, with a warning). `Err` holds the schema of a document that has no
/// usable `skills` array.
fn read_shape(
    document: Value,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<(Option<String>, Vec<Value>), Option<String>> {
    let mut object = match document {
        Value::Array(skills) => {
            diagnostics.push(Diagnostic::new(
                Code::BareArray,
                "index is a bare array; expected an object with a `skills` array",
            ));
            return Ok((None, skills));
        }
        Value::Object(object) => object,
        other => {
            diagnostics.push(Diagnostic::new(
                Code::InvalidIndex,
                format!(
                    "index must be an object with a `skills` array, found {}",
                    kind_of(&other)
                ),
            ));
            return Err(None);
        }
    };
    let schema = match object.remove("$schema") {
        None => None,
        Some(Value::String(schema)) => Some(schema),
        Some(other) => {
            diagnostics.push(
                Diagnostic::new(
                    Code::InvalidField,
                    format!("`$schema` must be a string, found {}", kind_of(&other)),
                )
                .at("$schema"),
            );
            None
        }
    };
    match object.remove("skills") {
        Some(Value::Array(skills)) => Ok((schema, skills)),
        Some(other) => {
            diagnostics.push(
                Diagnostic::new(
                    Code::InvalidIndex,
                    format!("`skills` must be an array, found {}", kind_of(&other)),
                )
                .at("skills"),
            );
            Err(schema)
        }
        None => {
            diagnostics.push(
                Diagnostic::new(Code::InvalidIndex, "index has no `skills` array").at("skills"),
            );
            Err(schema)
        }
    }
}

/// Returns the version the index is read as: v0.2 for the v0.2 `$schema` and (with a
/// warning) for an unknown one; without `$schema`, v0.1 unless entries have the v0.2 shape.
fn read_version(
    schema: Option<&str>,
    skills: &[Value],
    diagnostics: &mut Vec<Diagnostic>,
) -> IndexVersion {
    match schema {
        Some(SCHEMA_V0_2) => IndexVersion::V0_2,
        Some(unknown) => {
            // The spec says not to process an unknown schema; skillscout processes it anyway
            // (entries are read by their shape) and says so, because a directory that drops
            // a publisher's skills over a typo in a URI helps nobody.
            diagnostics.push(
                Diagnostic::new(
                    Code::UnknownSchema,
                    format!("unknown `$schema` {unknown:?}; entries are read by their shape"),
                )
                .at("$schema"),
            );
            IndexVersion::V0_2
        }
        None => {
            diagnostics.push(Diagnostic::new(
                Code::MissingSchema,
                "index has no `$schema`; entries are read by their shape",
            ));
            // Without `$schema` the spec says v0.1; entries that carry `type` or `url` are
            // still v0.2 entries, and the version reported follows what was published.
            let v0_2_shaped = skills.iter().any(|entry| {
                entry
                    .as_object()
                    .is_some_and(|entry| entry.contains_key("type") || entry.contains_key("url"))
            });
            if v0_2_shaped {
                IndexVersion::V0_2
            } else {
                IndexVersion::V0_1
            }
        }
    }
}

/// Reads the entries (up to [`MAX_INDEX_ENTRIES`]): entries that cannot be used, and a
/// name listed again, are skipped with index diagnostics.
fn read_entries(
    skills: Vec<Value>,
    index_url: &Url,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<IndexEntry> {
    if skills.len() > MAX_INDEX_ENTRIES {
        diagnostics.push(Diagnostic::new(
            Code::TooLarge,
            format!(
                "index lists {} skills; only the first {MAX_INDEX_ENTRIES} are read",
                skills.len()
            ),
        ));
    }
    let mut entries: Vec<IndexEntry> = Vec::new();
    for (position, raw) in skills.into_iter().take(MAX_INDEX_ENTRIES).enumerate() {
        let field = format!("skills[{position}]");
        let Value::Object(raw) = raw else {
            diagnostics.push(
                Diagnostic::new(
                    Code::InvalidField,
                    format!("skill entry must be an object, found {}", kind_of(&raw)),
                )
                .at(field),
            );
            continue;
        };
        let entry = match parse_entry(position, &raw, index_url) {
            Ok(entry) => entry,
            Err(mut skipped) => {
                diagnostics.append(&mut skipped);
                continue;
            }
        };
        if let Some(first) = entries.iter().find(|seen| seen.slug == entry.slug) {
            diagnostics.push(
                Diagnostic::new(
                    Code::DuplicateName,
                    format!(
                        "skill {:?} is listed again; the entry at skills[{}] is used",
                        entry.slug.as_str(),
                        first.position
                    ),
                )
                .at(field),
            );
            continue;
        }
        entries.push(entry);
    }
    entries
}

/// Reads one entry. `Err` holds the diagnostics of an entry that cannot be used at all.
fn parse_entry(
    position: usize,
    raw: &Map<String, Value>,
    index_url: &Url,
) -> Result<IndexEntry, Vec<Diagnostic>> {
    let field = |name: &str| format!("skills[{position}].{name}");
    let mut diagnostics = Vec::new();
    let slug = read_slug(raw, &field)?;
    if let Some(problem) = SkillName::problem(slug.as_str()) {
        diagnostics.push(
            Diagnostic::new(
                Code::InvalidName,
                format!("invalid skill name {:?}: {problem}", slug.as_str()),
            )
            .at(field("name")),
        );
    }
    let description = read_description(raw, &field, &mut diagnostics);
    let shape = Shape::of(raw);

    let mut entry = IndexEntry {
        position,
        slug,
        description,
        kind: EntryKind::SkillMd,
        url: index_url.clone(),
        digest: None,
        base_url: None,
        files: Vec::new(),
        diagnostics: Vec::new(),
    };
    let resolved = match shape {
        Shape::V0_2 => read_v0_2(raw, index_url, &mut entry, &field, &mut diagnostics),
        Shape::Files | Shape::Path => {
            read_v0_1(raw, index_url, shape, &mut entry, &field, &mut diagnostics)
        }
    };
    if resolved.is_err() {
        return Err(diagnostics);
    }
    entry.diagnostics = diagnostics;
    Ok(entry)
}

/// Reads the entry's `name` as a slug; `Err` skips the entry.
fn read_slug(
    raw: &Map<String, Value>,
    field: &dyn Fn(&str) -> String,
) -> Result<Slug, Vec<Diagnostic>> {
    match raw.get("name") {
        Some(Value::String(name)) => name.parse::<Slug>().map_err(|error| {
            vec![
                Diagnostic::new(Code::InvalidName, format!("{error}; the entry is skipped"))
                    .at(field("name")),
            ]
        }),
        Some(other) => Err(vec![
            Diagnostic::new(
                Code::InvalidField,
                format!(
                    "`name` must be a string, found {}; the entry is skipped",
                    kind_of(other)
                ),
            )
            .at(field("name")),
        ]),
        None => Err(vec![
            Diagnostic::new(Code::MissingField, "entry has no `name`; it is skipped")
                .at(field("name")),
        ]),
    }
}

/// Reads the entry's `description`, trimmed (empty when missing or not a string, said so).
fn read_description(
    raw: &Map<String, Value>,
    field: &dyn Fn(&str) -> String,
    diagnostics: &mut Vec<Diagnostic>,
) -> String {
    let description = match raw.get("description") {
        Some(Value::String(description)) => description.trim().to_owned(),
        Some(other) => {
            diagnostics.push(
                Diagnostic::new(
                    Code::InvalidField,
                    format!("`description` must be a string, found {}", kind_of(other)),
                )
                .at(field("description")),
            );
            String::new()
        }
        None => {
            diagnostics.push(
                Diagnostic::new(Code::MissingField, "entry has no `description`")
                    .at(field("description")),
            );
            String::new()
        }
    };
    if raw.get("description").is_some_and(Value::is_string) && description.is_empty() {
        diagnostics.push(
            Diagnostic::new(Code::EmptyDescription, "`description` is empty")
                .at(field("description")),
        );
    }
    let description_chars = description.chars().count();
    if description_chars > MAX_DESCRIPTION_CHARS {
        diagnostics.push(
            Diagnostic::new(
                Code::DescriptionTooLong,
                format!(
                    "`description` is {description_chars} characters (at most {MAX_DESCRIPTION_CHARS})"
                ),
            )
            .at(field("description")),
        );
    }
    description
}

/// Which form an entry takes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `type`, `url`, `digest`.
    V0_2,
    /// `files[]`.
    Files,
    /// The older `path`.
    Path,
}

impl Shape {
    /// Tells an entry's form by its keys; an entry with none of them is read as `files[]`.
    fn of(raw: &Map<String, Value>) -> Shape {
        if raw.contains_key("type") || raw.contains_key("url") {
            Shape::V0_2
        } else if raw.contains_key("path") && !raw.contains_key("files") {
            Shape::Path
        } else {
            Shape::Files
        }
    }
}

/// Reads `type`, `url` and `digest`. `Err` means the entry is skipped.
fn read_v0_2(
    raw: &Map<String, Value>,
    index_url: &Url,
    entry: &mut IndexEntry,
    field: &dyn Fn(&str) -> String,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<(), ()> {
    let url_text = match raw.get("url") {
        Some(Value::String(url)) => Some(url.as_str()),
        Some(other) => {
            diagnostics.push(
                Diagnostic::new(
                    Code::InvalidField,
                    format!("`url` must be a string, found {}", kind_of(other)),
                )
                .at(field("url")),
            );
            None
        }
        None => None,
    };

    entry.kind = read_type(raw, url_text, entry.slug.as_str(), field, diagnostics)?;
    let url_text = match (url_text, entry.kind) {
        (Some(url), _) => url.to_owned(),
        (None, EntryKind::SkillMd) => {
            let conventional = format!("{}/SKILL.md", entry.slug);
            diagnostics.push(
                Diagnostic::new(
                    Code::MissingField,
                    format!("entry has no `url`; using the conventional {conventional:?}"),
                )
                .at(field("url")),
            );
            conventional
        }
        (None, EntryKind::Archive) => {
            diagnostics.push(
                Diagnostic::new(
                    Code::MissingField,
                    "archive entry has no `url`; the entry is skipped",
                )
                .at(field("url")),
            );
            return Err(());
        }
    };
    entry.url = resolve(index_url, &url_text).map_err(|message| {
        diagnostics.push(
            Diagnostic::new(Code::InvalidUrl, format!("{message}; the entry is skipped"))
                .at(field("url")),
        );
    })?;

    entry.digest = read_digest(raw, field, diagnostics);
    Ok(())
}

/// Reads `type`; without a usable one, the URL says what the artifact is. `Err` means the
/// entry is skipped (an unknown type).
fn read_type(
    raw: &Map<String, Value>,
    url_text: Option<&str>,
    slug: &str,
    field: &dyn Fn(&str) -> String,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<EntryKind, ()> {
    let kind = match raw.get("type") {
        Some(Value::String(kind)) if kind == "skill-md" => EntryKind::SkillMd,
        Some(Value::String(kind)) if kind == "archive" => EntryKind::Archive,
        Some(Value::String(kind)) => {
            diagnostics.push(
                Diagnostic::new(
                    Code::UnknownType,
                    format!("unknown type {kind:?} for skill {slug:?}; the entry is skipped"),
                )
                .at(field("type")),
            );
            return Err(());
        }
        other => {
            let inferred = match url_text {
                Some(url) if looks_like_archive(url) => EntryKind::Archive,
                _ => EntryKind::SkillMd,
            };
            let found = match other {
                Some(value) => format!("`type` must be a string, found {}", kind_of(value)),
                None => "entry has no `type`".to_owned(),
            };
            let code = if other.is_some() {
                Code::InvalidField
            } else {
                Code::MissingField
            };
            let inferred_name = match inferred {
                EntryKind::Archive => "archive",
                EntryKind::SkillMd => "skill-md",
            };
            diagnostics.push(
                Diagnostic::new(
                    code,
                    format!("{found}; read as {inferred_name:?} from its URL"),
                )
                .at(field("type")),
            );
            inferred
        }
    };
    Ok(kind)
}

/// Reads `digest` (or a `sha256` field in its place); `None` when there is no usable one.
fn read_digest(
    raw: &Map<String, Value>,
    field: &dyn Fn(&str) -> String,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Digest> {
    let (digest_field, digest_value) = match (raw.get("digest"), raw.get("sha256")) {
        (Some(value), _) => ("digest", Some(value)),
        (None, Some(value)) => {
            diagnostics.push(
                Diagnostic::new(
                    Code::Sha256Field,
                    "entry has `sha256` instead of `digest`; its value is used",
                )
                .at(field("sha256")),
            );
            ("sha256", Some(value))
        }
        (None, None) => ("digest", None),
    };
    match digest_value {
        Some(Value::String(text)) => match parse_digest(text) {
            Ok((digest, None)) => Some(digest),
            Ok((digest, Some(warning))) => {
                diagnostics.push(warning.at(field(digest_field)));
                Some(digest)
            }
            Err(error) => {
                diagnostics.push(error.at(field(digest_field)));
                None
            }
        },
        Some(other) => {
            diagnostics.push(
                Diagnostic::new(
                    Code::InvalidField,
                    format!(
                        "`{digest_field}` must be a string, found {}",
                        kind_of(other)
                    ),
                )
                .at(field(digest_field)),
            );
            None
        }
        None => {
            diagnostics.push(
                Diagnostic::new(
                    Code::MissingField,
                    "entry has no `digest`; its content cannot be verified",
                )
                .at(field("digest")),
            );
            None
        }
    }
}

/// Reads a v0.1 entry (`files[]`, or the older `path`). `Err` means the entry is skipped.
fn read_v0_1(
    raw: &Map<String, Value>,
    index_url: &Url,
    shape: Shape,
    entry: &mut IndexEntry,
    field: &dyn Fn(&str) -> String,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<(), ()> {
    entry.kind = EntryKind::SkillMd;
    let directory = read_directory(raw, index_url, shape, &entry.slug, field, diagnostics)?;
    entry.url = resolve(&directory, SKILL_MD).map_err(|message| {
        diagnostics.push(
            Diagnostic::new(Code::InvalidUrl, format!("{message}; the entry is skipped"))
                .at(field("name")),
        );
    })?;
    entry.base_url = Some(directory);

    match raw.get("files") {
        Some(Value::Array(files)) => {
            read_files(files, entry, field, diagnostics);
        }
        Some(other) => diagnostics.push(
            Diagnostic::new(
                Code::InvalidField,
                format!("`files` must be an array, found {}", kind_of(other)),
            )
            .at(field("files")),
        ),
        None if shape == Shape::Files => diagnostics.push(
            Diagnostic::new(Code::MissingField, "entry has no `files` array").at(field("files")),
        ),
        None => {}
    }
    if entry.files.is_empty() {
        entry.files.push(SKILL_MD.to_owned());
    }
    diagnostics.push(
        Diagnostic::new(
            Code::DigestAbsent,
            "v0.1 indexes publish no digests; the content is not verified",
        )
        .at(field("files")),
    );
    Ok(())
}

/// Returns the skill directory of a v0.1 entry: `<name>/` beside the index, or the directory
/// an older `path` gives. `Err` means the entry is skipped.
fn read_directory(
    raw: &Map<String, Value>,
    index_url: &Url,
    shape: Shape,
    slug: &Slug,
    field: &dyn Fn(&str) -> String,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Url, ()> {
    match (shape, raw.get("path")) {
        (Shape::Path, Some(Value::String(path))) => {
            diagnostics.push(
                Diagnostic::new(
                    Code::LegacyPath,
                    "entry uses the pre-v0.1 `path` form instead of `files`",
                )
                .at(field("path")),
            );
            // The older drafts gave the skill directory (or its SKILL.md) as `path`.
            let directory = path.strip_suffix(SKILL_MD).unwrap_or(path);
            let directory = if directory.ends_with('/') {
                directory.to_owned()
            } else {
                format!("{directory}/")
            };
            resolve(index_url, &directory).map_err(|message| {
                diagnostics.push(
                    Diagnostic::new(Code::InvalidUrl, format!("{message}; the entry is skipped"))
                        .at(field("path")),
                );
            })
        }
        (Shape::Path, Some(other)) => {
            diagnostics.push(
                Diagnostic::new(
                    Code::InvalidField,
                    format!(
                        "`path` must be a string, found {}; the entry is skipped",
                        kind_of(other)
                    ),
                )
                .at(field("path")),
            );
            Err(())
        }
        _ => resolve(index_url, &format!("{slug}/")).map_err(|message| {
            diagnostics.push(
                Diagnostic::new(Code::InvalidUrl, format!("{message}; the entry is skipped"))
                    .at(field("name")),
            );
        }),
    }
}

/// Keeps the `files[]` paths that follow the v0.1 path rules and reports the others.
fn read_files(
    files: &[Value],
    entry: &mut IndexEntry,
    field: &dyn Fn(&str) -> String,
    diagnostics: &mut Vec<Diagnostic>,
) {
    if files.is_empty() {
        diagnostics.push(
            Diagnostic::new(
                Code::MissingSkillMd,
                "`files` is empty; it must list SKILL.md",
            )
            .at(field("files")),
        );
        return;
    }
    if files.len() > MAX_FILES_PER_SKILL {
        diagnostics.push(
            Diagnostic::new(
                Code::TooLarge,
                format!(
                    "`files` lists {} paths; only the first {MAX_FILES_PER_SKILL} are read",
                    files.len()
                ),
            )
            .at(field("files")),
        );
    }
    for (index, path) in files.iter().take(MAX_FILES_PER_SKILL).enumerate() {
        let at = field(&format!("files[{index}]"));
        let Value::String(path) = path else {
            diagnostics.push(
                Diagnostic::new(
                    Code::InvalidField,
                    format!("file path must be a string, found {}", kind_of(path)),
                )
                .at(at),
            );
            continue;
        };
        if let Err(problem) = check_relative_path(path) {
            diagnostics.push(problem.at(at));
            continue;
        }
        if entry.files.contains(path) {
            diagnostics.push(
                Diagnostic::new(Code::InvalidPath, format!("{path:?} is listed twice"))
                    .at(at)
                    .as_warning(),
            );
            continue;
        }
        entry.files.push(path.clone());
    }
    match entry.files.iter().position(|path| path == SKILL_MD) {
        None => diagnostics.push(
            Diagnostic::new(
                Code::MissingSkillMd,
                "`files` does not list SKILL.md; it is fetched from the conventional place anyway",
            )
            .at(field("files")),
        ),
        Some(0) => {}
        Some(position) => {
            // SKILL.md SHOULD be first: keep it first so consumers can rely on the order.
            let skill_md = entry.files.remove(position);
            entry.files.insert(0, skill_md);
        }
    }
}

/// Checks a path relative to a skill directory against the v0.1 path rules: relative,
/// `/`-separated, no `..` segment, printable ASCII without `\ ? # [ ]`. A path that fails is
/// never requested.
pub fn check_relative_path(path: &str) -> Result<(), Diagnostic> {
    if path.is_empty() {
        return Err(Diagnostic::new(Code::InvalidPath, "file path is empty"));
    }
    if path.starts_with('/') {
        return Err(Diagnostic::new(
            Code::PathTraversal,
            format!("file path {path:?} is absolute; paths are relative to the skill directory"),
        ));
    }
    if path.split('/').any(|segment| segment == "..") {
        return Err(Diagnostic::new(
            Code::PathTraversal,
            format!("file path {path:?} has a `..` segment"),
        ));
    }
    if let Some(bad) = path
        .chars()
        .find(|c| !(' '..='~').contains(c) || matches!(c, '\\' | '?' | '#' | '[' | ']'))
    {
        return Err(Diagnostic::new(
            Code::InvalidPath,
            format!(
                "file path {path:?} has the character {bad:?}; only printable ASCII without \\ ? # [ ] is allowed"
            ),
        ));
    }
    if path
        .split('/')
        .any(|segment| segment.is_empty() || segment == ".")
    {
        return Err(Diagnostic::new(
            Code::InvalidPath,
            format!("file path {path:?} has an empty or `.` segment"),
        ));
    }
    Ok(())
}

/// Parses a published digest, accepting the forms seen in the wild. `Ok` carries a warning
/// when the form was not the canonical one.
pub fn parse_digest(text: &str) -> Result<(Digest, Option<Diagnostic>), Diagnostic> {
    let trimmed = text.trim();
    if let Ok(digest) = trimmed.parse::<Digest>() {
        return Ok((digest, None));
    }
    let hex = match trimmed.split_once(':') {
        Some((algorithm, hex)) if algorithm.eq_ignore_ascii_case("sha256") => hex,
        Some((algorithm, _)) => {
            return Err(Diagnostic::new(
                Code::InvalidDigest,
                format!("digest {text:?} uses {algorithm:?}; only sha256 is supported"),
            ));
        }
        None => trimmed,
    };
    match Digest::from_hex(hex) {
        Some(digest) => Ok((
            digest,
            Some(Diagnostic::new(
                Code::DigestFormat,
                format!(
                    "digest {text:?} is not in the form `sha256:<64 lowercase hex>`; read as {digest}"
                ),
            )),
        )),
        None => Err(Diagnostic::new(
            Code::InvalidDigest,
            format!("digest {text:?} is not a SHA-256 hex string"),
        )),
    }
}

/// Resolves `reference` against `base` (RFC 3986 §5) and insists on http(s).
fn resolve(base: &Url, reference: &str) -> Result<Url, String> {
    let url = base
        .join(reference)
        .map_err(|error| format!("cannot resolve URL {reference:?}: {error}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "URL {reference:?} uses the scheme {:?}; only http and https are fetched",
            url.scheme()
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("URL {reference:?} has no host"));
    }
    Ok(url)
}

/// Returns true when a URL's path names an archive by its extension.
pub fn looks_like_archive(url: &str) -> bool {
    let path = url
        .split(['?', '#'])
        .next()
        .unwrap_or(url)
        .to_ascii_lowercase();
    path.ends_with(".tar.gz") || path.ends_with(".tgz") || path.ends_with(".zip")
}

/// Names a JSON value's type for messages.
pub(crate) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const HEX: &str = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";

    fn index_url() -> Url {
        Url::parse("https://example.test/.well-known/agent-skills/index.json").unwrap()
    }

    fn codes(diagnostics: &[Diagnostic]) -> Vec<&'static str> {
        diagnostics.iter().map(|d| d.code.as_str()).collect()
    }

    fn v02(entry: &str) -> String {
        format!(r#"{{"$schema": "{SCHEMA_V0_2}", "skills": [{entry}]}}"#)
    }

    #[test]
    fn v0_2_entries() {
        let url = index_url();
        // (entry JSON, expected artifact URL or None when skipped, digest present, entry codes, index codes)
        type Case<'a> = (&'a str, Option<&'a str>, bool, &'a [&'a str], &'a [&'a str]);
        let cases: &[Case<'_>] = &[
            (
                &format!(
                    r#"{{"name":"pdf","type":"skill-md","description":"d","url":"/.well-known/agent-skills/pdf/SKILL.md","digest":"sha256:{HEX}"}}"#
                ),
                Some("https://example.test/.well-known/agent-skills/pdf/SKILL.md"),
                true,
                &[],
                &[],
            ),
            // Relative URLs resolve against the index URL's directory.
            (
                &format!(
                    r#"{{"name":"pdf","type":"skill-md","description":"d","url":"pdf/SKILL.md","digest":"sha256:{HEX}"}}"#
                ),
                Some("https://example.test/.well-known/agent-skills/pdf/SKILL.md"),
                true,
                &[],
                &[],
            ),
            // Absolute URLs on another host (CDNs) are kept.
            (
                &format!(
                    r#"{{"name":"pdf","type":"archive","description":"d","url":"https://cdn.example.test/v2/pdf.tar.gz","digest":"sha256:{HEX}","extra":1}}"#
                ),
                Some("https://cdn.example.test/v2/pdf.tar.gz"),
                true,
                &[],
                &[],
            ),
            (
                &format!(
                    r#"{{"name":"pdf","type":"skill-md","description":"d","url":"pdf/SKILL.md","sha256":"{HEX}"}}"#
                ),
                Some("https://example.test/.well-known/agent-skills/pdf/SKILL.md"),
                true,
                &["sha256_field", "digest_format"],
                &[],
            ),
            (
                &format!(
                    r#"{{"name":"pdf","type":"skill-md","description":"d","url":"pdf/SKILL.md","digest":"SHA256:{}"}}"#,
                    HEX.to_uppercase()
                ),
                Some("https://example.test/.well-known/agent-skills/pdf/SKILL.md"),
                true,
                &["digest_format"],
                &[],
            ),
            (
                r#"{"name":"pdf","type":"skill-md","description":"d","url":"pdf/SKILL.md","digest":"sha256:abc"}"#,
                Some("https://example.test/.well-known/agent-skills/pdf/SKILL.md"),
                false,
                &["invalid_digest"],
                &[],
            ),
            (
                r#"{"name":"pdf","type":"skill-md","description":"d","url":"pdf/SKILL.md","digest":"md5:abc"}"#,
                Some("https://example.test/.well-known/agent-skills/pdf/SKILL.md"),
                false,
                &["invalid_digest"],
                &[],
            ),
            (
                r#"{"name":"pdf","type":"skill-md","description":"d","url":"pdf/SKILL.md"}"#,
                Some("https://example.test/.well-known/agent-skills/pdf/SKILL.md"),
                false,
                &["missing_field"],
                &[],
            ),
            (
                &format!(
                    r#"{{"name":"pdf","type":"plugin","description":"d","url":"x","digest":"sha256:{HEX}"}}"#
                ),
                None,
                false,
                &[],
                &["unknown_type"],
            ),
            (
                &format!(
                    r#"{{"name":"pdf","description":"d","url":"pdf.zip","digest":"sha256:{HEX}"}}"#
                ),
                Some("https://example.test/.well-known/agent-skills/pdf.zip"),
                true,
                &["missing_field"],
                &[],
            ),
            (
                &format!(
                    r#"{{"name":"pdf","type":"skill-md","description":"d","digest":"sha256:{HEX}"}}"#
                ),
                Some("https://example.test/.well-known/agent-skills/pdf/SKILL.md"),
                true,
                &["missing_field"],
                &[],
            ),
            (
                &format!(
                    r#"{{"name":"pdf","type":"archive","description":"d","digest":"sha256:{HEX}"}}"#
                ),
                None,
                false,
                &[],
                &["missing_field"],
            ),
            (
                &format!(
                    r#"{{"name":"pdf","type":"skill-md","description":"d","url":"file:///etc/passwd","digest":"sha256:{HEX}"}}"#
                ),
                None,
                false,
                &[],
                &["invalid_url"],
            ),
            (
                &format!(
                    r#"{{"name":"pdf","type":"skill-md","description":"d","url":"http://[::1","digest":"sha256:{HEX}"}}"#
                ),
                None,
                false,
                &[],
                &["invalid_url"],
            ),
            (
                &format!(
                    r#"{{"name":"PDF Tools","type":"skill-md","description":"d","url":"x","digest":"sha256:{HEX}"}}"#
                ),
                None,
                false,
                &[],
                &["invalid_name"],
            ),
            (
                &format!(
                    r#"{{"name":"-pdf","type":"skill-md","description":"","url":"x","digest":"sha256:{HEX}"}}"#
                ),
                Some("https://example.test/.well-known/agent-skills/x"),
                true,
                &["invalid_name", "empty_description"],
                &[],
            ),
            (
                &format!(
                    r#"{{"name":"pdf","type":"skill-md","description":"{}","url":"x","digest":"sha256:{HEX}"}}"#,
                    "x".repeat(1025)
                ),
                Some("https://example.test/.well-known/agent-skills/x"),
                true,
                &["description_too_long"],
                &[],
            ),
            (
                &format!(
                    r#"{{"type":"skill-md","description":"d","url":"x","digest":"sha256:{HEX}"}}"#
                ),
                None,
                false,
                &[],
                &["missing_field"],
            ),
            (r#"{"name":7}"#, None, false, &[], &["invalid_field"]),
            ("42", None, false, &[], &["invalid_field"]),
        ];
        for (entry, expected_url, has_digest, entry_codes, index_codes) in cases {
            let index = parse(v02(entry).as_bytes(), &url);
            assert_eq!(index.version, IndexVersion::V0_2, "{entry}");
            assert_eq!(codes(&index.diagnostics), *index_codes, "{entry}");
            match expected_url {
                Some(expected) => {
                    let parsed = &index.entries[0];
                    assert_eq!(parsed.url.as_str(), *expected, "{entry}");
                    assert_eq!(parsed.digest.is_some(), *has_digest, "{entry}");
                    assert_eq!(codes(&parsed.diagnostics), *entry_codes, "{entry}");
                }
                None => assert!(index.entries.is_empty(), "{entry}"),
            }
        }
    }

    #[test]
    fn index_shapes() {
        let url = index_url();
        let entry = format!(
            r#"{{"name":"pdf","type":"skill-md","description":"d","url":"pdf/SKILL.md","digest":"sha256:{HEX}"}}"#
        );
        // (document, entries, index codes)
        let cases: Vec<(String, usize, &[&str])> = vec![
            (v02(&entry), 1, &[]),
            (format!("[{entry}]"), 1, &["bare_array", "missing_schema"]),
            (
                format!(r#"{{"$schema":"https://example.test/other.json","skills":[{entry}]}}"#),
                1,
                &["unknown_schema"],
            ),
            (
                format!(r#"{{"$schema":"{SCHEMA_V0_2}","skills":[{entry},{entry}]}}"#),
                1,
                &["duplicate_name"],
            ),
            ("{}".to_owned(), 0, &["invalid_index"]),
            (r#"{"skills": {}}"#.to_owned(), 0, &["invalid_index"]),
            ("\"skills\"".to_owned(), 0, &["invalid_index"]),
            ("{\"skills\": [".to_owned(), 0, &["invalid_json"]),
            ("".to_owned(), 0, &["invalid_json"]),
            (r#"{"skills": []}"#.to_owned(), 0, &["missing_schema"]),
        ];
        for (document, entries, index_codes) in cases {
            let index = parse(document.as_bytes(), &url);
            assert_eq!(codes(&index.diagnostics), index_codes, "{document}");
            assert_eq!(index.entries.len(), entries, "{document}");
        }
    }

    #[test]
    fn invalid_utf8_and_oversized_input() {
        let url = index_url();
        let mut bytes = br#"{"skills":[{"name":"pdf","description":"caf"#.to_vec();
        bytes.extend_from_slice(&[0xff, 0xfe]);
        bytes.extend_from_slice(br#"","files":["SKILL.md"]}]}"#);
        let index = parse(&bytes, &url);
        assert_eq!(
            codes(&index.diagnostics),
            ["invalid_utf8", "missing_schema"]
        );
        assert_eq!(index.entries.len(), 1);

        let huge = vec![b' '; MAX_INDEX_BYTES + 1];
        assert_eq!(codes(&parse(&huge, &url).diagnostics), ["too_large"]);
    }

    #[test]
    fn v0_1_files() {
        let url = Url::parse("https://example.test/.well-known/skills/index.json").unwrap();
        let document = r#"{"skills": [
            {"name": "wrangler", "description": "Deploy workers.",
             "files": ["references/commands.md", "SKILL.md", "/etc/passwd", "../x", "a/../../b",
                       "scripts/run?.sh", "docs/[draft].md", "back\\slash", "tab\there", "ünï.md",
                       "a//b", "./x", "", 5, "SKILL.md"]},
            {"name": "bare", "description": "No files."},
            {"name": "nomd", "description": "d", "files": ["README.md"]},
            {"name": "empty", "description": "d", "files": []},
            {"name": "legacy", "description": "d", "path": "legacy/"},
            {"name": "legacy-md", "description": "d", "path": "/skills/legacy-md/SKILL.md"}
        ]}"#;
        let index = parse(document.as_bytes(), &url);
        assert_eq!(index.version, IndexVersion::V0_1);
        assert_eq!(codes(&index.diagnostics), ["missing_schema"]);
        let wrangler = &index.entries[0];
        assert_eq!(
            wrangler.url.as_str(),
            "https://example.test/.well-known/skills/wrangler/SKILL.md"
        );
        assert_eq!(
            wrangler.base_url.as_ref().unwrap().as_str(),
            "https://example.test/.well-known/skills/wrangler/"
        );
        assert_eq!(wrangler.files, ["SKILL.md", "references/commands.md"]);
        assert_eq!(
            codes(&wrangler.diagnostics),
            [
                "path_traversal",
                "path_traversal",
                "path_traversal",
                "invalid_path",
                "invalid_path",
                "invalid_path",
                "invalid_path",
                "invalid_path",
                "invalid_path",
                "invalid_path",
                "invalid_path",
                "invalid_field",
                "invalid_path",
                "digest_absent"
            ]
        );
        assert!(wrangler.digest.is_none());
        let bare = &index.entries[1];
        assert_eq!(bare.files, ["SKILL.md"]);
        assert_eq!(codes(&bare.diagnostics), ["missing_field", "digest_absent"]);
        assert_eq!(
            codes(&index.entries[2].diagnostics),
            ["missing_skill_md", "digest_absent"]
        );
        assert_eq!(
            codes(&index.entries[3].diagnostics),
            ["missing_skill_md", "digest_absent"]
        );
        let legacy = &index.entries[4];
        assert_eq!(
            legacy.url.as_str(),
            "https://example.test/.well-known/skills/legacy/SKILL.md"
        );
        assert_eq!(codes(&legacy.diagnostics), ["legacy_path", "digest_absent"]);
        assert_eq!(
            index.entries[5].url.as_str(),
            "https://example.test/skills/legacy-md/SKILL.md"
        );
    }

    #[test]
    fn digest_forms() {
        let canonical = format!("sha256:{HEX}");
        let cases = [
            (canonical.clone(), Some(false)),
            (HEX.to_owned(), Some(true)),
            (HEX.to_uppercase(), Some(true)),
            (format!("SHA256:{HEX}"), Some(true)),
            (format!(" sha256:{HEX} "), Some(false)),
            ("sha512:00".to_owned(), None),
            ("sha256:".to_owned(), None),
            ("zz".repeat(32), None),
        ];
        for (text, expected) in cases {
            match (parse_digest(&text), expected) {
                (Ok((digest, warning)), Some(warns)) => {
                    assert_eq!(digest.to_string(), canonical, "{text}");
                    assert_eq!(warning.is_some(), warns, "{text}");
                }
                (Err(error), None) => assert_eq!(error.code, Code::InvalidDigest),
                (other, _) => panic!("{text}: unexpected {other:?}"),
            }
        }
    }

    #[test]
    fn archive_extensions() {
        assert!(looks_like_archive("/a/b.tar.gz"));
        assert!(looks_like_archive("https://x/b.ZIP?v=2"));
        assert!(looks_like_archive("b.tgz#frag"));
        assert!(!looks_like_archive("b/SKILL.md"));
        assert!(!looks_like_archive("b.gz"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = parse(&bytes, &index_url());
        }

        #[test]
        fn arbitrary_entries_never_panic(
            name in ".{0,20}",
            kind in prop_oneof![Just("skill-md".to_owned()), Just("archive".to_owned()), ".{0,8}"],
            url in ".{0,40}",
            digest in ".{0,70}",
            files in proptest::collection::vec(".{0,12}", 0..4),
        ) {
            let entry = serde_json::json!({
                "name": name, "type": kind, "url": url, "digest": digest,
                "description": "d", "files": files,
            });
            let document = serde_json::json!({"$schema": SCHEMA_V0_2, "skills": [entry]});
            let index = parse(document.to_string().as_bytes(), &index_url());
            for entry in &index.entries {
                // Whatever came in, what comes out is fetchable and safe.
                prop_assert!(matches!(entry.url.scheme(), "http" | "https"));
                for path in &entry.files {
                    prop_assert!(check_relative_path(path).is_ok());
                }
            }
        }
    }
}
