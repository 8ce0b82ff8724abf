//! Skill-sharing indexes (`/.well-known/skill-sharing`) and the descriptors they point at.
//!
//! The index lists `protocol`, `provider` and `skills[]`, each entry with `id`, `name`,
//! `capability_type`, `description`, `descriptor_url`, `access` and `version`
//! (specs/skill-sharing-discovery.md §5.2). Each entry's `descriptor_url` is a Skill Descriptor:
//! one JSON object describing the skill in full (docs/validate.md lists its fields).
//!
//! Like every parser in this crate, these functions never fail as a whole because of one bad
//! entry: what is wrong becomes a [`Diagnostic`] on the entry or the index. Two choices are
//! deliberately strict:
//!
//! - An entry whose `access` is missing or not understood is treated as `private`, so a skill
//!   whose policy is unclear is never shown to anonymous callers (fail closed).
//! - An entry whose `id` cannot be used as a record key is skipped, since the record's id is
//!   `{domain}/{id}` and every later step needs it.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use time::format_description::well_known::{Iso8601, Rfc3339};
use url::Url;

use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::index::kind_of as kind;
use crate::skill::{Access, KNOWN_CAPABILITY_TYPES, MAX_SLUG_LEN, Slug};
use crate::skill_md::gaia::semver_problem;

/// The protocol version this crate implements; any `1.x` is read the same way.
pub const PROTOCOL_VERSION: &str = "1.0.0";
/// The most index entries read; later ones are dropped with one [`Code::TooLarge`].
pub const MAX_SHARING_ENTRIES: usize = 10_000;
/// The largest index accepted, in bytes (docs/crawl.md caps the fetch at the same size).
pub const MAX_INDEX_BYTES: usize = 2 * 1024 * 1024;
/// The largest descriptor accepted, in bytes (docs/crawl.md caps the fetch at the same size).
pub const MAX_DESCRIPTOR_BYTES: usize = 1024 * 1024;
/// The most descriptor `tags` kept; later ones are dropped with one warning.
pub const MAX_DESCRIPTOR_TAGS: usize = 64;
/// The `auth.type` values a descriptor may declare.
pub const AUTH_TYPES: [&str; 4] = ["api_key", "oauth2", "custom", "none"];

/// How many characters of a published value a message quotes before cutting it short, so a
/// hostile megabyte-long value cannot blow up every report it appears in.
const MAX_QUOTED_CHARS: usize = 80;

/// Who publishes the skills of an index or descriptor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provider {
    /// The provider's name, as published.
    pub name: String,
    /// The provider's web site, as published.
    pub url: Option<String>,
}

/// One usable entry of a skill-sharing index.
#[derive(Debug, Clone, PartialEq)]
pub struct SharingEntry {
    /// The entry's `id`: the record's slug.
    pub slug: Slug,
    /// The display name; the `id` when `name` is missing or empty.
    pub name: String,
    /// `capability_type`, trimmed and lowercased; empty when missing or unusable. Values other
    /// than plugin, api, knowledge and task are kept, with [`Code::UnknownCapabilityType`].
    pub capability_type: String,
    /// The description; empty when missing.
    pub description: String,
    /// `descriptor_url` resolved against the index URL (RFC 3986); `None` when it is missing,
    /// cannot be resolved, or is not http(s).
    pub descriptor_url: Option<Url>,
    /// Who may see the skill; [`Access::Private`] when `access` is missing or invalid.
    pub access: Access,
    /// The version, as published (a JSON number is turned into its text).
    pub version: Option<String>,
    /// The entry object as published.
    pub raw: Map<String, Value>,
    /// Problems of this entry; `field` is a path such as `skills[3].access`.
    pub diagnostics: Vec<Diagnostic>,
}

/// A parsed skill-sharing index.
#[derive(Debug, Clone, PartialEq)]
pub struct SharingIndex {
    /// `protocol.version`, when it is a string.
    pub protocol_version: Option<String>,
    /// `provider`, when it has a string `name`.
    pub provider: Option<Provider>,
    /// The usable entries, in index order; skipped ones are explained in `diagnostics`.
    pub entries: Vec<SharingEntry>,
    /// Problems of the index as a whole, including why entries were skipped.
    pub diagnostics: Vec<Diagnostic>,
}

impl SharingIndex {
    /// Returns an index with nothing usable in it, for input that is not an index at all.
    fn unusable(diagnostic: Diagnostic) -> SharingIndex {
        SharingIndex {
            protocol_version: None,
            provider: None,
            entries: Vec::new(),
            diagnostics: vec![diagnostic],
        }
    }
}

/// Parses a skill-sharing index fetched from `index_url`: the URL the bytes were finally
/// served from, after redirects, since relative `descriptor_url`s resolve against it
/// (RFC 3986 §5.1.3).
///
/// Never fails: input that is not an index at all yields no entries and one diagnostic.
pub fn parse_index(bytes: &[u8], index_url: &Url) -> SharingIndex {
    let object = match read_object(bytes, MAX_INDEX_BYTES, "index", Code::InvalidIndex) {
        Ok(object) => object,
        Err(diagnostic) => return SharingIndex::unusable(diagnostic),
    };

    let mut reader = FieldReader::new(&object, "");
    let protocol_version = reader.protocol();
    let provider = reader.provider();
    let mut diagnostics = reader.diagnostics;

    let skills = skills_array(&object, &mut diagnostics);
    let entries = read_entries(skills, index_url, &mut diagnostics);
    SharingIndex {
        protocol_version,
        provider,
        entries,
        diagnostics,
    }
}

/// Returns the index's `skills` array (empty, with a diagnostic, when there is none).
///
/// Without a usable `skills` array the index still yields its protocol and provider, so
/// that the report says everything that is wrong at once.
fn skills_array<'a>(
    object: &'a Map<String, Value>,
    diagnostics: &mut Vec<Diagnostic>,
) -> &'a [Value] {
    match object.get("skills") {
        Some(Value::Array(skills)) => skills,
        None | Some(Value::Null) => {
            diagnostics.push(
                Diagnostic::new(Code::InvalidIndex, "index has no skills array").at("skills"),
            );
            &[]
        }
        Some(other) => {
            diagnostics.push(
                Diagnostic::new(
                    Code::InvalidIndex,
                    format!("skills is {}, not an array", kind(other)),
                )
                .at("skills"),
            );
            &[]
        }
    }
}

/// Reads the entries (up to [`MAX_SHARING_ENTRIES`]); an entry that is not an object, has no
/// usable id, or repeats an id is skipped with an index diagnostic.
fn read_entries(
    skills: &[Value],
    index_url: &Url,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<SharingEntry> {
    if skills.len() > MAX_SHARING_ENTRIES {
        diagnostics.push(
            Diagnostic::new(
                Code::TooLarge,
                format!(
                    "index lists {} skills; only the first {MAX_SHARING_ENTRIES} are read",
                    skills.len()
                ),
            )
            .at("skills"),
        );
    }

    let mut first_position: HashMap<String, usize> = HashMap::new();
    let mut entries = Vec::new();
    for (position, value) in skills.iter().take(MAX_SHARING_ENTRIES).enumerate() {
        let Value::Object(entry) = value else {
            diagnostics.push(
                Diagnostic::new(
                    Code::InvalidField,
                    format!(
                        "skipped skills[{position}]: it is {}, not an object",
                        kind(value)
                    ),
                )
                .at(format!("skills[{position}]")),
            );
            continue;
        };
        let slug = match entry_slug(entry, position) {
            Ok(slug) => slug,
            Err(diagnostic) => {
                diagnostics.push(diagnostic);
                continue;
            }
        };
        if let Some(first) = first_position.get(slug.as_str()) {
            diagnostics.push(
                Diagnostic::new(
                    Code::DuplicateId,
                    format!(
                        "skill id {} appears at skills[{first}] and skills[{position}]; \
                         only the first is used",
                        quoted(slug.as_str())
                    ),
                )
                .at(format!("skills[{position}].id")),
            );
            continue;
        }
        first_position.insert(slug.as_str().to_owned(), position);
        entries.push(parse_entry(entry, position, slug, index_url));
    }
    entries
}

/// Returns the entry's `id` as a slug, or the index-level diagnostic that skips the entry.
fn entry_slug(entry: &Map<String, Value>, position: usize) -> Result<Slug, Diagnostic> {
    let field = format!("skills[{position}].id");
    let id = match entry.get("id") {
        Some(Value::String(id)) => id,
        None | Some(Value::Null) => {
            return Err(Diagnostic::new(
                Code::MissingField,
                format!("skipped skills[{position}]: it has no id"),
            )
            .at(field));
        }
        Some(other) => {
            return Err(Diagnostic::new(
                Code::InvalidField,
                format!(
                    "skipped skills[{position}]: its id is {}, not a string",
                    kind(other)
                ),
            )
            .at(field));
        }
    };
    // `Slug`'s own message quotes the whole value, which is fine up to the slug length limit;
    // beyond it the message is written here, with the value cut short.
    if id.chars().count() > MAX_SLUG_LEN {
        return Err(Diagnostic::new(
            Code::InvalidName,
            format!(
                "skipped skills[{position}]: id {} is longer than {MAX_SLUG_LEN} characters",
                quoted(id)
            ),
        )
        .at(field));
    }
    id.parse::<Slug>().map_err(|err| {
        Diagnostic::new(
            Code::InvalidName,
            format!("skipped skills[{position}]: {err}"),
        )
        .at(field)
    })
}

/// Reads one keyed index entry; every problem lands on the entry.
fn parse_entry(
    entry: &Map<String, Value>,
    position: usize,
    slug: Slug,
    index_url: &Url,
) -> SharingEntry {
    let mut reader = FieldReader::new(entry, &format!("skills[{position}]."));

    let name = match reader.required_str("name") {
        Some(name) if name.trim().is_empty() => {
            reader.push(Diagnostic::as_warning(
                Diagnostic::new(
                    Code::InvalidField,
                    format!("skills[{position}].name is empty; the id is shown instead"),
                )
                .at(reader.path("name")),
            ));
            None
        }
        name => name,
    };
    let capability_type = reader.capability_type();
    let description = reader.required_str("description");
    if description.is_some_and(|description| description.trim().is_empty()) {
        reader.push(
            Diagnostic::new(
                Code::EmptyDescription,
                format!("skills[{position}].description is empty"),
            )
            .at(reader.path("description")),
        );
    }
    let descriptor_url = reader.url("descriptor_url", Some(index_url), Severity::Error);
    let access = reader.access("; the skill is treated as private");
    let version = reader.version();

    SharingEntry {
        name: name.unwrap_or(slug.as_str()).to_owned(),
        slug,
        capability_type: capability_type.unwrap_or_default(),
        description: description.unwrap_or_default().to_owned(),
        descriptor_url,
        access: access.unwrap_or(Access::Private),
        version,
        raw: entry.clone(),
        diagnostics: reader.diagnostics,
    }
}

/// A parsed Skill Descriptor.
#[derive(Debug, Clone, PartialEq)]
pub struct Descriptor {
    /// The descriptor object as published; empty when the input is not a JSON object.
    pub fields: Map<String, Value>,
    /// `id`, when it is a string.
    pub id: Option<String>,
    /// `name`, when it is a string.
    pub name: Option<String>,
    /// `version`, as published (a JSON number is turned into its text).
    pub version: Option<String>,
    /// `capability_type`, trimmed and lowercased.
    pub capability_type: Option<String>,
    /// `description`, when it is a string.
    pub description: Option<String>,
    /// `access`, when it is one of public, restricted or private.
    pub access: Option<Access>,
    /// `tags`, trimmed, without empty ones, at most [`MAX_DESCRIPTOR_TAGS`].
    pub tags: Vec<String>,
    /// `endpoint.url`, when it is an absolute http(s) URL.
    pub endpoint_url: Option<String>,
    /// `auth.type`, as published (values outside [`AUTH_TYPES`] are kept, with a diagnostic).
    pub auth_type: Option<String>,
    /// `documentation_url`, when it is an absolute http(s) URL.
    pub documentation_url: Option<String>,
    /// Everything wrong with the descriptor; `field` is a path such as `endpoint.url`.
    pub diagnostics: Vec<Diagnostic>,
}

impl Descriptor {
    /// Returns a descriptor with nothing in it, for input that is not a descriptor at all.
    fn unusable(diagnostic: Diagnostic) -> Descriptor {
        Descriptor {
            fields: Map::new(),
            id: None,
            name: None,
            version: None,
            capability_type: None,
            description: None,
            access: None,
            tags: Vec::new(),
            endpoint_url: None,
            auth_type: None,
            documentation_url: None,
            diagnostics: vec![diagnostic],
        }
    }
}

/// Parses a Skill Descriptor.
///
/// Never fails: input that is not a descriptor at all yields empty fields and one diagnostic.
pub fn parse_descriptor(bytes: &[u8]) -> Descriptor {
    let object = match read_object(
        bytes,
        MAX_DESCRIPTOR_BYTES,
        "descriptor",
        Code::InvalidDescriptor,
    ) {
        Ok(object) => object,
        Err(diagnostic) => return Descriptor::unusable(diagnostic),
    };

    let mut reader = FieldReader::new(&object, "");
    reader.protocol();
    let id = reader.required_str("id").map(str::to_owned);
    let name = reader.required_str("name").map(str::to_owned);
    let version = reader.version();
    if let Some(version) = version.as_deref()
        && let Some(problem) = semver_problem(version)
    {
        reader.push(
            Diagnostic::new(
                Code::InvalidVersion,
                format!(
                    "version {} is not a SemVer 2.0.0 version: {problem}",
                    quoted(version)
                ),
            )
            .at("version"),
        );
    }
    let capability_type = reader.capability_type();
    let description = reader.required_str("description").map(str::to_owned);
    // `provider`, `inputs` and `output` are only checked: their content stays in `fields`.
    reader.provider();
    let endpoint_url = reader.endpoint();
    reader.inputs();
    reader.required_object("output");
    let auth_type = reader.auth();
    let access = reader.access("");
    let tags = reader.tags();
    let documentation_url = reader
        .url("documentation_url", None, Severity::Warning)
        .map(String::from);
    reader.timestamp("created_at");
    reader.timestamp("updated_at");

    let diagnostics = reader.diagnostics;
    Descriptor {
        fields: object,
        id,
        name,
        version,
        capability_type,
        description,
        access,
        tags,
        endpoint_url,
        auth_type,
        documentation_url,
        diagnostics,
    }
}

/// Compares a descriptor with the index entry that pointed at it: differing id, version,
/// capability_type or access => [`Code::DescriptorMismatch`] (warning) each, naming both
/// values.
///
/// Values missing on either side are not compared; their absence is already reported by the
/// parser that found it. The entry's access is compared as published, not as the `private`
/// it falls back to.
pub fn check_descriptor(entry: &SharingEntry, descriptor: &Descriptor) -> Vec<Diagnostic> {
    let published_access = entry
        .raw
        .get("access")
        .and_then(Value::as_str)
        .and_then(|access| access.parse::<Access>().ok());
    let capability_type = Some(entry.capability_type.as_str()).filter(|value| !value.is_empty());
    let pairs = [
        ("id", Some(entry.slug.as_str()), descriptor.id.as_deref()),
        (
            "version",
            entry.version.as_deref(),
            descriptor.version.as_deref(),
        ),
        (
            "capability_type",
            capability_type,
            descriptor.capability_type.as_deref(),
        ),
        (
            "access",
            published_access.map(Access::as_str),
            descriptor.access.map(Access::as_str),
        ),
    ];

    let mut diagnostics = Vec::new();
    for (field, in_index, in_descriptor) in pairs {
        let (Some(in_index), Some(in_descriptor)) = (in_index, in_descriptor) else {
            continue;
        };
        if in_index != in_descriptor {
            diagnostics.push(
                Diagnostic::new(
                    Code::DescriptorMismatch,
                    format!(
                        "descriptor {field} {} differs from the index entry's {}",
                        quoted(in_descriptor),
                        quoted(in_index)
                    ),
                )
                .at(field),
            );
        }
    }
    diagnostics
}

/// Returns true when `version` follows the SemVer 2.0.0 grammar
/// (<https://semver.org/spec/v2.0.0.html>); [`semver_problem`] says what is wrong otherwise.
pub fn is_semver(version: &str) -> bool {
    semver_problem(version).is_none()
}

/// Reads `bytes` as one JSON object, or returns the one diagnostic saying why it is not one.
/// `what` names the document in messages; `not_object` is the code for valid JSON of the
/// wrong shape.
fn read_object(
    bytes: &[u8],
    limit: usize,
    what: &str,
    not_object: Code,
) -> Result<Map<String, Value>, Diagnostic> {
    if bytes.len() > limit {
        return Err(Diagnostic::new(
            Code::TooLarge,
            format!(
                "{what} is {} bytes, over the limit of {limit} bytes",
                bytes.len()
            ),
        ));
    }
    let text = std::str::from_utf8(bytes).map_err(|err| {
        Diagnostic::new(
            Code::InvalidUtf8,
            format!(
                "{what} is not valid UTF-8 (bad byte at offset {})",
                err.valid_up_to()
            ),
        )
    })?;
    // RFC 8259 §8.1 lets a parser ignore a byte order mark; serde_json does not, so it is
    // dropped here rather than failing a document whose meaning is clear.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let value: Value = serde_json::from_str(text).map_err(|err| {
        Diagnostic::new(
            Code::InvalidJson,
            format!("{what} is not valid JSON: {err}"),
        )
    })?;
    match value {
        Value::Object(object) => Ok(object),
        other => Err(Diagnostic::new(
            not_object,
            format!("{what} is {}, not a JSON object", kind(&other)),
        )),
    }
}

/// Reads the fields of one JSON object, collecting what is wrong with them under a path
/// prefix (`skills[3].`, `provider.`, or nothing for a document's top level).
struct FieldReader<'a> {
    object: &'a Map<String, Value>,
    prefix: String,
    diagnostics: Vec<Diagnostic>,
}

impl<'a> FieldReader<'a> {
    fn new(object: &'a Map<String, Value>, prefix: &str) -> FieldReader<'a> {
        FieldReader {
            object,
            prefix: prefix.to_owned(),
            diagnostics: Vec::new(),
        }
    }

    /// Returns the full path of `key`, as used in messages and `field`.
    fn path(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    fn push(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    /// Records that `key` holds a value of the wrong JSON type.
    fn wrong_type(&mut self, key: &str, value: &Value, expected: &str, severity: Severity) {
        let path = self.path(key);
        let mut diagnostic = Diagnostic::new(
            Code::InvalidField,
            format!("{path} is {}, not {expected}", kind(value)),
        )
        .at(path);
        diagnostic.severity = severity;
        self.push(diagnostic);
    }

    /// Returns a required field's value; records [`Code::MissingField`] when it is absent or
    /// null.
    fn required(&mut self, key: &str) -> Option<&'a Value> {
        let path = self.path(key);
        match self.object.get(key) {
            Some(Value::Null) => {
                self.push(Diagnostic::new(Code::MissingField, format!("{path} is null")).at(path));
                None
            }
            Some(value) => Some(value),
            None => {
                self.push(
                    Diagnostic::new(Code::MissingField, format!("{path} is missing")).at(path),
                );
                None
            }
        }
    }

    /// Returns a required string field.
    fn required_str(&mut self, key: &str) -> Option<&'a str> {
        match self.required(key)? {
            Value::String(text) => Some(text),
            other => {
                self.wrong_type(key, other, "a string", Severity::Error);
                None
            }
        }
    }

    /// Returns an optional string field; a value of another type is reported with `severity`.
    fn optional_str(&mut self, key: &str, severity: Severity) -> Option<&'a str> {
        match self.object.get(key)? {
            Value::Null => None,
            Value::String(text) => Some(text),
            other => {
                self.wrong_type(key, other, "a string", severity);
                None
            }
        }
    }

    /// Returns a required object field.
    fn required_object(&mut self, key: &str) -> Option<&'a Map<String, Value>> {
        match self.required(key)? {
            Value::Object(object) => Some(object),
            other => {
                self.wrong_type(key, other, "an object", Severity::Error);
                None
            }
        }
    }

    /// Reads the object at `key` with a nested reader, whose diagnostics join this one's.
    fn nested<T>(
        &mut self,
        key: &str,
        read: impl FnOnce(&mut FieldReader<'a>) -> Option<T>,
    ) -> Option<T> {
        let object = self.required_object(key)?;
        let mut nested = FieldReader::new(object, &format!("{}.", self.path(key)));
        let value = read(&mut nested);
        self.diagnostics.append(&mut nested.diagnostics);
        value
    }

    /// Reads `protocol.version`; a major version other than 1 is a warning, and the document
    /// is still read as 1.x.
    fn protocol(&mut self) -> Option<String> {
        self.nested("protocol", |protocol| {
            let version = protocol.required_str("version")?;
            if version.split(['.', '-', '+']).next() != Some("1") {
                let path = protocol.path("version");
                protocol.push(
                    Diagnostic::new(
                        Code::UnknownProtocolVersion,
                        format!(
                            "{path} {} is not 1.x; read as {PROTOCOL_VERSION}",
                            quoted(version)
                        ),
                    )
                    .at(path),
                );
            }
            Some(version.to_owned())
        })
    }

    /// Reads `provider{name, url}`.
    fn provider(&mut self) -> Option<Provider> {
        self.nested("provider", |provider| {
            let name = provider.required_str("name");
            let url = provider.optional_str("url", Severity::Warning);
            Some(Provider {
                name: name?.to_owned(),
                url: url.map(str::to_owned),
            })
        })
    }

    /// Reads a required `capability_type`, trimmed and lowercased; unknown values are kept.
    fn capability_type(&mut self) -> Option<String> {
        let raw = self.required_str("capability_type")?;
        let path = self.path("capability_type");
        let value = raw.trim().to_lowercase();
        if value.is_empty() {
            self.push(
                Diagnostic::new(
                    Code::InvalidField,
                    format!("{path} is empty (expected plugin, api, knowledge or task)"),
                )
                .at(path),
            );
            return None;
        }
        if !KNOWN_CAPABILITY_TYPES.contains(&value.as_str()) {
            self.push(
                Diagnostic::new(
                    Code::UnknownCapabilityType,
                    format!(
                        "{path} {} is not plugin, api, knowledge or task; kept as {}",
                        quoted(raw),
                        quoted(&value)
                    ),
                )
                .at(path),
            );
        }
        Some(value)
    }

    /// Reads a required `access`; `consequence` is appended to every message about it.
    fn access(&mut self, consequence: &str) -> Option<Access> {
        let path = self.path("access");
        let message = match self.object.get("access") {
            None => format!("{path} is missing{consequence}"),
            Some(Value::Null) => format!("{path} is null{consequence}"),
            Some(Value::String(raw)) => match raw.parse::<Access>() {
                Ok(access) => return Some(access),
                Err(_) => format!(
                    "{path} {} is not public, restricted or private{consequence}",
                    quoted(raw)
                ),
            },
            Some(other) => format!("{path} is {}, not a string{consequence}", kind(other)),
        };
        let code = match self.object.get("access") {
            None | Some(Value::Null) => Code::MissingField,
            Some(_) => Code::InvalidField,
        };
        self.push(Diagnostic::new(code, message).at(path));
        None
    }

    /// Reads a required `version`. A JSON number is accepted as its text, with a warning;
    /// an empty string counts as no version.
    fn version(&mut self) -> Option<String> {
        let path = self.path("version");
        match self.required("version")? {
            Value::String(version) if version.trim().is_empty() => {
                self.push(Diagnostic::as_warning(
                    Diagnostic::new(Code::InvalidField, format!("{path} is empty")).at(path),
                ));
                None
            }
            Value::String(version) => Some(version.clone()),
            Value::Number(number) => {
                self.push(Diagnostic::as_warning(
                    Diagnostic::new(
                        Code::InvalidField,
                        format!("{path} is the number {number}; write it as a string"),
                    )
                    .at(path),
                ));
                Some(number.to_string())
            }
            other => {
                self.wrong_type("version", other, "a string", Severity::Error);
                None
            }
        }
    }

    /// Reads a URL field: required when `severity` is an error, optional otherwise. Relative
    /// URLs resolve against `base`; without one they are refused. Only http(s) is accepted.
    fn url(&mut self, key: &str, base: Option<&Url>, severity: Severity) -> Option<Url> {
        let raw = if severity == Severity::Error {
            self.required_str(key)?
        } else {
            self.optional_str(key, severity)?
        };
        let path = self.path(key);
        let parsed = match base {
            Some(base) => base.join(raw),
            None => Url::parse(raw),
        };
        let problem = match parsed {
            _ if raw.trim().is_empty() => format!("{path} is empty"),
            Err(err) => format!("{path} {} is not a usable URL: {err}", quoted(raw)),
            Ok(url) if matches!(url.scheme(), "http" | "https") => return Some(url),
            Ok(url) => format!(
                "{path} {} uses the {} scheme; only http and https URLs are fetched",
                quoted(raw),
                url.scheme()
            ),
        };
        let mut diagnostic = Diagnostic::new(Code::InvalidUrl, problem).at(path);
        diagnostic.severity = severity;
        self.push(diagnostic);
        None
    }

    /// Reads `endpoint{url, …}` and returns the URL.
    fn endpoint(&mut self) -> Option<String> {
        self.nested("endpoint", |endpoint| {
            endpoint.url("url", None, Severity::Error).map(String::from)
        })
    }

    /// Checks that `inputs` is an array of objects.
    fn inputs(&mut self) {
        let Some(inputs) = self.required("inputs") else {
            return;
        };
        let Value::Array(inputs) = inputs else {
            self.wrong_type("inputs", inputs, "an array", Severity::Error);
            return;
        };
        for (position, input) in inputs.iter().enumerate() {
            if !input.is_object() {
                self.wrong_type(
                    &format!("inputs[{position}]"),
                    input,
                    "an object",
                    Severity::Error,
                );
            }
        }
    }

    /// Reads `auth{type, …}` and returns the type as published.
    fn auth(&mut self) -> Option<String> {
        self.nested("auth", |auth| {
            let auth_type = auth.required_str("type")?;
            if !AUTH_TYPES.contains(&auth_type) {
                let path = auth.path("type");
                auth.push(
                    Diagnostic::new(
                        Code::InvalidField,
                        format!(
                            "{path} {} is not api_key, oauth2, custom or none",
                            quoted(auth_type)
                        ),
                    )
                    .at(path),
                );
            }
            Some(auth_type.to_owned())
        })
    }

    /// Reads the optional `tags` array: strings, trimmed, empty ones dropped, at most
    /// [`MAX_DESCRIPTOR_TAGS`]. Problems here are warnings, since tags only help search.
    fn tags(&mut self) -> Vec<String> {
        let mut tags = Vec::new();
        let value = match self.object.get("tags") {
            None | Some(Value::Null) => return tags,
            Some(value) => value,
        };
        let Value::Array(values) = value else {
            self.wrong_type("tags", value, "an array of strings", Severity::Warning);
            return tags;
        };
        for (position, value) in values.iter().enumerate() {
            let Value::String(tag) = value else {
                self.wrong_type(
                    &format!("tags[{position}]"),
                    value,
                    "a string",
                    Severity::Warning,
                );
                continue;
            };
            let tag = tag.trim();
            if tag.is_empty() {
                continue;
            }
            if tags.len() == MAX_DESCRIPTOR_TAGS {
                self.push(Diagnostic::as_warning(
                    Diagnostic::new(
                        Code::TooLarge,
                        format!(
                            "tags has more than {MAX_DESCRIPTOR_TAGS} entries; the rest are ignored"
                        ),
                    )
                    .at(self.path("tags")),
                ));
                break;
            }
            tags.push(tag.to_owned());
        }
        tags
    }

    /// Checks that an optional timestamp is ISO 8601 (RFC 3339 date-times included).
    fn timestamp(&mut self, key: &str) {
        let Some(raw) = self.optional_str(key, Severity::Warning) else {
            return;
        };
        if !is_iso8601(raw) {
            let path = self.path(key);
            self.push(Diagnostic::as_warning(
                Diagnostic::new(
                    Code::InvalidField,
                    format!(
                        "{path} {} is not an ISO 8601 date or time, such as 2025-03-01T12:00:00Z",
                        quoted(raw)
                    ),
                )
                .at(path),
            ));
        }
    }
}

/// Returns true when `raw` is an RFC 3339 date-time, or an ISO 8601 date or date-time.
fn is_iso8601(raw: &str) -> bool {
    time::OffsetDateTime::parse(raw, &Rfc3339).is_ok()
        || time::OffsetDateTime::parse(raw, &Iso8601::DEFAULT).is_ok()
        || time::PrimitiveDateTime::parse(raw, &Iso8601::DEFAULT).is_ok()
        || time::Date::parse(raw, &Iso8601::DEFAULT).is_ok()
}

/// Quotes a published value for a message, cut to [`MAX_QUOTED_CHARS`] characters.
fn quoted(value: &str) -> String {
    if value.chars().count() <= MAX_QUOTED_CHARS {
        return format!("{value:?}");
    }
    let head: String = value.chars().take(MAX_QUOTED_CHARS).collect();
    format!("{head:?}...")
}

#[cfg(test)]
mod tests {
    use super::*;

    use Severity::{Error, Warning};
    use proptest::prelude::*;
    use serde_json::json;

    const INDEX_URL: &str = "https://skills.example.test/.well-known/skill-sharing";

    fn index_url() -> Url {
        Url::parse(INDEX_URL).unwrap()
    }

    /// A valid index with one entry; every test starts from it and breaks one thing.
    fn base_index() -> Value {
        json!({
            "protocol": {"version": "1.0.0"},
            "provider": {"name": "Lantern Works", "url": "https://lantern.example.test"},
            "skills": [{
                "id": "test.lantern.route-planner-v1",
                "name": "Route Planner",
                "capability_type": "api",
                "description": "Plans delivery routes between depots",
                "descriptor_url": "https://skills.example.test/descriptors/route-planner.json",
                "access": "public",
                "version": "1.4.0"
            }]
        })
    }

    /// A valid descriptor matching `base_index`'s entry.
    fn base_descriptor() -> Value {
        json!({
            "protocol": {"version": "1.0.0"},
            "id": "test.lantern.route-planner-v1",
            "name": "Route Planner",
            "version": "1.4.0",
            "capability_type": "api",
            "description": "Plans delivery routes between depots",
            "provider": {"name": "Lantern Works"},
            "endpoint": {"url": "https://api.lantern.example.test/route", "method": "POST"},
            "inputs": [{"name": "depots", "type": "array", "required": true}],
            "output": {"type": "object"},
            "auth": {"type": "api_key", "header": "X-Key"},
            "access": "public",
            "tags": ["logistics", "routing"],
            "documentation_url": "https://lantern.example.test/docs/route-planner",
            "created_at": "2025-02-03T04:05:06Z",
            "updated_at": "2025-03-01"
        })
    }

    /// Returns `value` with the member at JSON pointer `pointer` replaced (or removed: `None`).
    fn mutated(mut value: Value, pointer: &str, new: Option<Value>) -> Value {
        if pointer.is_empty() {
            return new.unwrap_or(Value::Null);
        }
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        match (value.pointer_mut(parent).unwrap(), new) {
            (Value::Object(object), Some(new)) => {
                object.insert(key.to_owned(), new);
            }
            (Value::Object(object), None) => {
                object.remove(key);
            }
            (Value::Array(array), Some(new)) => array[key.parse::<usize>().unwrap()] = new,
            (Value::Array(array), None) => {
                array.remove(key.parse::<usize>().unwrap());
            }
            (other, _) => panic!("{pointer} does not point into a container: {other}"),
        }
        value
    }

    fn parse(value: &Value) -> SharingIndex {
        parse_index(value.to_string().as_bytes(), &index_url())
    }

    /// Every diagnostic of the index and its entries, as (code, severity, field).
    fn all_diagnostics(index: &SharingIndex) -> Vec<(Code, Severity, String)> {
        let mut all = summary(&index.diagnostics);
        for entry in &index.entries {
            all.extend(summary(&entry.diagnostics));
        }
        all
    }

    fn summary(diagnostics: &[Diagnostic]) -> Vec<(Code, Severity, String)> {
        diagnostics
            .iter()
            .map(|d| (d.code, d.severity, d.field.clone().unwrap_or_default()))
            .collect()
    }

    /// The diagnostics a case expects, as (code, severity, field; "" for none).
    type Expected = &'static [(Code, Severity, &'static str)];

    fn owned(expected: &[(Code, Severity, &str)]) -> Vec<(Code, Severity, String)> {
        expected
            .iter()
            .map(|(code, severity, field)| (*code, *severity, (*field).to_owned()))
            .collect()
    }

    #[test]
    fn semver_grammar() {
        let cases = [
            ("1.0.0", true),
            ("0.0.0", true),
            ("10.20.30", true),
            ("1.0.0-alpha", true),
            ("1.0.0-alpha.1+build.5", true),
            ("1.0.0-0.3.7", true),
            ("1.0.0-x-y-z.--", true),
            ("1.0.0+20130313144700", true),
            ("1.0.0+001", true),
            ("1.0.0-rc.1+build-1.exp", true),
            ("1.0", false),
            ("1", false),
            ("1.0.0.0", false),
            ("01.0.0", false),
            ("1.02.0", false),
            ("1.0.0-", false),
            ("1.0.0+", false),
            ("1.0.0-01", false),
            ("1.0.0-alpha..1", false),
            ("1.0.0+build+5", false),
            ("1.0.0-alpha_1", false),
            ("v1.0.0", false),
            (" 1.0.0", false),
            ("1.0.0 ", false),
            ("1.a.0", false),
            ("-1.0.0", false),
            ("", false),
            ("１.0.0", false),
        ];
        for (version, expected) in cases {
            assert_eq!(is_semver(version), expected, "{version:?}");
        }
    }

    #[test]
    fn a_valid_index_has_no_diagnostics() {
        let index = parse(&base_index());
        assert_eq!(all_diagnostics(&index), []);
        assert_eq!(index.protocol_version.as_deref(), Some("1.0.0"));
        assert_eq!(
            index.provider,
            Some(Provider {
                name: "Lantern Works".to_owned(),
                url: Some("https://lantern.example.test".to_owned()),
            })
        );
        let [entry] = index.entries.as_slice() else {
            panic!("expected one entry, got {:?}", index.entries);
        };
        assert_eq!(entry.slug.as_str(), "test.lantern.route-planner-v1");
        assert_eq!(entry.name, "Route Planner");
        assert_eq!(entry.capability_type, "api");
        assert_eq!(entry.description, "Plans delivery routes between depots");
        assert_eq!(
            entry.descriptor_url.as_ref().map(Url::as_str),
            Some("https://skills.example.test/descriptors/route-planner.json")
        );
        assert_eq!(entry.access, Access::Public);
        assert_eq!(entry.version.as_deref(), Some("1.4.0"));
        assert_eq!(Value::Object(entry.raw.clone()), base_index()["skills"][0]);
    }

    #[test]
    fn unreadable_indexes() {
        let too_large = {
            let mut bytes = base_index().to_string().into_bytes();
            bytes.resize(MAX_INDEX_BYTES + 1, b' ');
            bytes
        };
        let with_bom = [
            b"\xEF\xBB\xBF".as_slice(),
            base_index().to_string().as_bytes(),
        ]
        .concat();
        let cases: [(&str, Vec<u8>, Expected, usize); 7] = [
            ("too large", too_large, &[(Code::TooLarge, Error, "")], 0),
            (
                "not utf-8",
                b"{\"skills\": [\"\xff\"]}".to_vec(),
                &[(Code::InvalidUtf8, Error, "")],
                0,
            ),
            (
                "not json",
                b"{\"skills\": [}".to_vec(),
                &[(Code::InvalidJson, Error, "")],
                0,
            ),
            ("empty", Vec::new(), &[(Code::InvalidJson, Error, "")], 0),
            (
                "an array",
                b"[]".to_vec(),
                &[(Code::InvalidIndex, Error, "")],
                0,
            ),
            (
                "a string",
                b"\"skills\"".to_vec(),
                &[(Code::InvalidIndex, Error, "")],
                0,
            ),
            ("byte order mark is ignored", with_bom, &[], 1),
        ];
        for (name, bytes, expected, entries) in cases {
            let index = parse_index(&bytes, &index_url());
            assert_eq!(all_diagnostics(&index), owned(expected), "{name}");
            assert_eq!(index.entries.len(), entries, "{name}");
        }
    }

    #[test]
    fn messages_name_the_problem() {
        let cases = [
            (
                b"{\n  \"skills\": [}".as_slice(),
                "index is not valid JSON: expected value at line 2 column 14",
            ),
            (
                b"{\"a\": \"\xc3\x28\"}".as_slice(),
                "index is not valid UTF-8 (bad byte at offset 7)",
            ),
            (b"[1, 2]".as_slice(), "index is an array, not a JSON object"),
        ];
        for (bytes, expected) in cases {
            let index = parse_index(bytes, &index_url());
            assert_eq!(index.diagnostics[0].message, expected);
        }
    }

    #[test]
    fn index_structure() {
        let entry = base_index()["skills"][0].clone();
        let second = mutated(entry.clone(), "/id", Some(json!("test.lantern.second-v1")));
        #[rustfmt::skip]
        let cases: Vec<(&str, Option<Value>, Expected, usize)> = vec![
            ("/protocol", None, &[(Code::MissingField, Error, "protocol")], 1),
            ("/protocol", Some(json!("1.0.0")), &[(Code::InvalidField, Error, "protocol")], 1),
            ("/protocol/version", None, &[(Code::MissingField, Error, "protocol.version")], 1),
            ("/protocol/version", Some(json!(1)), &[(Code::InvalidField, Error, "protocol.version")], 1),
            ("/protocol/version", Some(json!("2.0.0")), &[(Code::UnknownProtocolVersion, Warning, "protocol.version")], 1),
            ("/protocol/version", Some(json!("10.0")), &[(Code::UnknownProtocolVersion, Warning, "protocol.version")], 1),
            ("/protocol/version", Some(json!("1.3")), &[], 1),
            ("/protocol/version", Some(json!("1.0.0-draft")), &[], 1),
            ("/protocol/changelog_url", Some(json!("https://x.test/")), &[], 1),
            ("/provider", None, &[(Code::MissingField, Error, "provider")], 1),
            ("/provider", Some(json!(["Lantern"])), &[(Code::InvalidField, Error, "provider")], 1),
            ("/provider/name", None, &[(Code::MissingField, Error, "provider.name")], 1),
            ("/provider/name", Some(json!(null)), &[(Code::MissingField, Error, "provider.name")], 1),
            ("/provider/url", Some(json!(7)), &[(Code::InvalidField, Warning, "provider.url")], 1),
            ("/provider/url", None, &[], 1),
            ("/skills", None, &[(Code::InvalidIndex, Error, "skills")], 0),
            ("/skills", Some(json!({"a": entry})), &[(Code::InvalidIndex, Error, "skills")], 0),
            ("/skills", Some(json!([])), &[], 0),
            ("/skills/0", Some(json!("route-planner")), &[(Code::InvalidField, Error, "skills[0]")], 0),
            ("/skills/0/id", None, &[(Code::MissingField, Error, "skills[0].id")], 0),
            ("/skills/0/id", Some(json!(17)), &[(Code::InvalidField, Error, "skills[0].id")], 0),
            ("/skills/0/id", Some(json!("lantern/route")), &[(Code::InvalidName, Error, "skills[0].id")], 0),
            ("/skills/0/id", Some(json!("route planner")), &[(Code::InvalidName, Error, "skills[0].id")], 0),
            ("/skills/0/id", Some(json!("")), &[(Code::InvalidName, Error, "skills[0].id")], 0),
            ("/skills/0/id", Some(json!("..")), &[(Code::InvalidName, Error, "skills[0].id")], 0),
            ("/skills/0/id", Some(json!("a".repeat(MAX_SLUG_LEN + 1))), &[(Code::InvalidName, Error, "skills[0].id")], 0),
            ("/skills/0/id", Some(json!("Route_Planner.V1")), &[], 1),
            ("/skills", Some(json!([entry, second, entry])), &[(Code::DuplicateId, Error, "skills[2].id")], 2),
            ("/skills", Some(json!([1, entry, null])), &[(Code::InvalidField, Error, "skills[0]"), (Code::InvalidField, Error, "skills[2]")], 1),
            ("/extra", Some(json!({"anything": true})), &[], 1),
            ("/skills/0/x-extension", Some(json!([1, 2])), &[], 1),
        ];
        for (pointer, new, expected, entries) in cases {
            let index = parse(&mutated(base_index(), pointer, new.clone()));
            assert_eq!(
                all_diagnostics(&index),
                owned(expected),
                "{pointer} = {new:?}"
            );
            assert_eq!(index.entries.len(), entries, "{pointer} = {new:?}");
        }
    }

    #[test]
    fn a_bad_provider_or_protocol_does_not_hide_entries() {
        let index = parse(&mutated(
            mutated(base_index(), "/provider/name", None),
            "/protocol/version",
            Some(json!("3.1.0")),
        ));
        assert_eq!(index.provider, None);
        assert_eq!(index.protocol_version.as_deref(), Some("3.1.0"));
        assert_eq!(index.entries.len(), 1);
    }

    #[test]
    fn duplicate_ids_keep_the_first_and_name_both_positions() {
        let first = base_index()["skills"][0].clone();
        let later = mutated(first.clone(), "/name", Some(json!("Impostor")));
        let index = parse(&mutated(
            base_index(),
            "/skills",
            Some(json!([first, later])),
        ));
        assert_eq!(index.entries.len(), 1);
        assert_eq!(index.entries[0].name, "Route Planner");
        assert_eq!(
            index.diagnostics[0].message,
            "skill id \"test.lantern.route-planner-v1\" appears at skills[0] and skills[1]; \
             only the first is used"
        );
    }

    /// Returns one field of an entry as text, for the table below.
    fn entry_field(entry: &SharingEntry, field: &str) -> String {
        match field {
            "name" => entry.name.clone(),
            "capability_type" => entry.capability_type.clone(),
            "description" => entry.description.clone(),
            "descriptor_url" => format!("{:?}", entry.descriptor_url.as_ref().map(Url::as_str)),
            "access" => entry.access.as_str().to_owned(),
            "version" => format!("{:?}", entry.version),
            other => panic!("no field {other}"),
        }
    }

    #[test]
    fn entry_fields() {
        const ID: &str = "test.lantern.route-planner-v1";
        #[rustfmt::skip]
        type Case = (&'static str, Option<Value>, Expected, (&'static str, &'static str));
        #[rustfmt::skip]
        let cases: Vec<Case> = vec![
            ("name", None, &[(Code::MissingField, Error, "skills[0].name")], ("name", ID)),
            ("name", Some(json!(5)), &[(Code::InvalidField, Error, "skills[0].name")], ("name", ID)),
            ("name", Some(json!(" ")), &[(Code::InvalidField, Warning, "skills[0].name")], ("name", ID)),
            ("capability_type", None, &[(Code::MissingField, Error, "skills[0].capability_type")], ("capability_type", "")),
            ("capability_type", Some(json!(["api"])), &[(Code::InvalidField, Error, "skills[0].capability_type")], ("capability_type", "")),
            ("capability_type", Some(json!("  ")), &[(Code::InvalidField, Error, "skills[0].capability_type")], ("capability_type", "")),
            ("capability_type", Some(json!(" Knowledge ")), &[], ("capability_type", "knowledge")),
            ("capability_type", Some(json!("PLUGIN")), &[], ("capability_type", "plugin")),
            ("capability_type", Some(json!("Workflow")), &[(Code::UnknownCapabilityType, Warning, "skills[0].capability_type")], ("capability_type", "workflow")),
            ("description", None, &[(Code::MissingField, Error, "skills[0].description")], ("description", "")),
            ("description", Some(json!({"en": "x"})), &[(Code::InvalidField, Error, "skills[0].description")], ("description", "")),
            ("description", Some(json!("")), &[(Code::EmptyDescription, Warning, "skills[0].description")], ("description", "")),
            ("descriptor_url", None, &[(Code::MissingField, Error, "skills[0].descriptor_url")], ("descriptor_url", "None")),
            ("descriptor_url", Some(json!(42)), &[(Code::InvalidField, Error, "skills[0].descriptor_url")], ("descriptor_url", "None")),
            ("descriptor_url", Some(json!("")), &[(Code::InvalidUrl, Error, "skills[0].descriptor_url")], ("descriptor_url", "None")),
            ("descriptor_url", Some(json!("ftp://files.example.test/a.json")), &[(Code::InvalidUrl, Error, "skills[0].descriptor_url")], ("descriptor_url", "None")),
            ("descriptor_url", Some(json!("javascript:alert(1)")), &[(Code::InvalidUrl, Error, "skills[0].descriptor_url")], ("descriptor_url", "None")),
            ("descriptor_url", Some(json!("file:///etc/passwd")), &[(Code::InvalidUrl, Error, "skills[0].descriptor_url")], ("descriptor_url", "None")),
            ("descriptor_url", Some(json!("http://[::1")), &[(Code::InvalidUrl, Error, "skills[0].descriptor_url")], ("descriptor_url", "None")),
            ("descriptor_url", Some(json!("descriptors/a.json")), &[], ("descriptor_url", "Some(\"https://skills.example.test/.well-known/descriptors/a.json\")")),
            ("descriptor_url", Some(json!("/d/a.json")), &[], ("descriptor_url", "Some(\"https://skills.example.test/d/a.json\")")),
            ("descriptor_url", Some(json!("../../../a.json")), &[], ("descriptor_url", "Some(\"https://skills.example.test/a.json\")")),
            ("descriptor_url", Some(json!("//cdn.example.test/a.json")), &[], ("descriptor_url", "Some(\"https://cdn.example.test/a.json\")")),
            ("descriptor_url", Some(json!("HTTP://Other.Example.TEST/a.json")), &[], ("descriptor_url", "Some(\"http://other.example.test/a.json\")")),
            ("access", Some(json!("restricted")), &[], ("access", "restricted")),
            ("access", Some(json!("private")), &[], ("access", "private")),
            ("access", None, &[(Code::MissingField, Error, "skills[0].access")], ("access", "private")),
            ("access", Some(json!(null)), &[(Code::MissingField, Error, "skills[0].access")], ("access", "private")),
            ("access", Some(json!("Public")), &[(Code::InvalidField, Error, "skills[0].access")], ("access", "private")),
            ("access", Some(json!("everyone")), &[(Code::InvalidField, Error, "skills[0].access")], ("access", "private")),
            ("access", Some(json!(true)), &[(Code::InvalidField, Error, "skills[0].access")], ("access", "private")),
            ("version", None, &[(Code::MissingField, Error, "skills[0].version")], ("version", "None")),
            ("version", Some(json!(2)), &[(Code::InvalidField, Warning, "skills[0].version")], ("version", "Some(\"2\")")),
            ("version", Some(json!(1.5)), &[(Code::InvalidField, Warning, "skills[0].version")], ("version", "Some(\"1.5\")")),
            ("version", Some(json!("")), &[(Code::InvalidField, Warning, "skills[0].version")], ("version", "None")),
            ("version", Some(json!([1, 0])), &[(Code::InvalidField, Error, "skills[0].version")], ("version", "None")),
            ("version", Some(json!("2024.1")), &[], ("version", "Some(\"2024.1\")")),
        ];
        for (field, new, expected, (checked, value)) in cases {
            let pointer = format!("/skills/0/{field}");
            let index = parse(&mutated(base_index(), &pointer, new.clone()));
            assert_eq!(index.diagnostics, [], "{pointer} = {new:?}");
            let [entry] = index.entries.as_slice() else {
                panic!("{pointer} = {new:?}: expected one entry");
            };
            assert_eq!(
                summary(&entry.diagnostics),
                owned(expected),
                "{pointer} = {new:?}"
            );
            assert_eq!(entry_field(entry, checked), value, "{pointer} = {new:?}");
        }
    }

    #[test]
    fn too_many_entries_keeps_the_first() {
        let mut skills = Vec::new();
        for number in 0..MAX_SHARING_ENTRIES + 3 {
            skills.push(json!({
                "id": format!("s{number}"), "name": "n", "capability_type": "task",
                "description": "d", "descriptor_url": "d.json", "access": "public",
                "version": "1.0.0"
            }));
        }
        let index = parse(&mutated(
            base_index(),
            "/skills",
            Some(Value::Array(skills)),
        ));
        assert_eq!(index.entries.len(), MAX_SHARING_ENTRIES);
        assert_eq!(
            index.entries[MAX_SHARING_ENTRIES - 1].slug.as_str(),
            "s9999"
        );
        assert_eq!(
            summary(&index.diagnostics),
            owned(&[(Code::TooLarge, Error, "skills")])
        );
        assert_eq!(
            index.diagnostics[0].message,
            "index lists 10003 skills; only the first 10000 are read"
        );
    }

    #[test]
    fn messy_index_diagnostics() {
        let messy = json!({
            "protocol": {"version": "2.0"},
            "provider": {"url": 7},
            "skills": [
                "lantern-mapper",
                {"id": "lantern/mapper", "name": "Mapper"},
                {
                    "id": "mapper", "name": "", "capability_type": "Workflow", "description": "",
                    "descriptor_url": "ftp://files.example.test/mapper.json",
                    "access": "everyone", "version": 3
                },
                {"id": "mapper", "name": "Mapper again"},
                {"name": "Nameless"},
                {
                    "id": "beacon", "capability_type": "task", "descriptor_url": "../beacon.json",
                    "access": "restricted", "description": "Signals the depot"
                }
            ]
        });
        let index = parse(&messy);
        let mut all = index.diagnostics.clone();
        for entry in &index.entries {
            all.extend(entry.diagnostics.iter().cloned());
        }
        insta::assert_json_snapshot!(all, @r#"
        [
          {
            "severity": "warning",
            "code": "unknown_protocol_version",
            "message": "protocol.version \"2.0\" is not 1.x; read as 1.0.0",
            "field": "protocol.version"
          },
          {
            "severity": "error",
            "code": "missing_field",
            "message": "provider.name is missing",
            "field": "provider.name"
          },
          {
            "severity": "warning",
            "code": "invalid_field",
            "message": "provider.url is a number, not a string",
            "field": "provider.url"
          },
          {
            "severity": "error",
            "code": "invalid_field",
            "message": "skipped skills[0]: it is a string, not an object",
            "field": "skills[0]"
          },
          {
            "severity": "error",
            "code": "invalid_name",
            "message": "skipped skills[1]: skill key \"lantern/mapper\" contains '/', which cannot be used in a path segment",
            "field": "skills[1].id"
          },
          {
            "severity": "error",
            "code": "duplicate_id",
            "message": "skill id \"mapper\" appears at skills[2] and skills[3]; only the first is used",
            "field": "skills[3].id"
          },
          {
            "severity": "error",
            "code": "missing_field",
            "message": "skipped skills[4]: it has no id",
            "field": "skills[4].id"
          },
          {
            "severity": "warning",
            "code": "invalid_field",
            "message": "skills[2].name is empty; the id is shown instead",
            "field": "skills[2].name"
          },
          {
            "severity": "warning",
            "code": "unknown_capability_type",
            "message": "skills[2].capability_type \"Workflow\" is not plugin, api, knowledge or task; kept as \"workflow\"",
            "field": "skills[2].capability_type"
          },
          {
            "severity": "warning",
            "code": "empty_description",
            "message": "skills[2].description is empty",
            "field": "skills[2].description"
          },
          {
            "severity": "error",
            "code": "invalid_url",
            "message": "skills[2].descriptor_url \"ftp://files.example.test/mapper.json\" uses the ftp scheme; only http and https URLs are fetched",
            "field": "skills[2].descriptor_url"
          },
          {
            "severity": "error",
            "code": "invalid_field",
            "message": "skills[2].access \"everyone\" is not public, restricted or private; the skill is treated as private",
            "field": "skills[2].access"
          },
          {
            "severity": "warning",
            "code": "invalid_field",
            "message": "skills[2].version is the number 3; write it as a string",
            "field": "skills[2].version"
          },
          {
            "severity": "error",
            "code": "missing_field",
            "message": "skills[5].name is missing",
            "field": "skills[5].name"
          },
          {
            "severity": "error",
            "code": "missing_field",
            "message": "skills[5].version is missing",
            "field": "skills[5].version"
          }
        ]
        "#);
    }

    #[test]
    fn a_valid_descriptor_has_no_diagnostics() {
        let descriptor = parse_descriptor(base_descriptor().to_string().as_bytes());
        assert_eq!(descriptor.diagnostics, []);
        assert_eq!(Value::Object(descriptor.fields.clone()), base_descriptor());
        assert_eq!(
            descriptor.id.as_deref(),
            Some("test.lantern.route-planner-v1")
        );
        assert_eq!(descriptor.name.as_deref(), Some("Route Planner"));
        assert_eq!(descriptor.version.as_deref(), Some("1.4.0"));
        assert_eq!(descriptor.capability_type.as_deref(), Some("api"));
        assert_eq!(
            descriptor.description.as_deref(),
            Some("Plans delivery routes between depots")
        );
        assert_eq!(descriptor.access, Some(Access::Public));
        assert_eq!(descriptor.tags, ["logistics", "routing"]);
        assert_eq!(
            descriptor.endpoint_url.as_deref(),
            Some("https://api.lantern.example.test/route")
        );
        assert_eq!(descriptor.auth_type.as_deref(), Some("api_key"));
        assert_eq!(
            descriptor.documentation_url.as_deref(),
            Some("https://lantern.example.test/docs/route-planner")
        );
    }

    #[test]
    fn unreadable_descriptors() {
        let too_large = vec![b' '; MAX_DESCRIPTOR_BYTES + 1];
        let cases: [(&[u8], Code); 5] = [
            (&too_large, Code::TooLarge),
            (b"\xfe\xff{}", Code::InvalidUtf8),
            (b"{\"id\": ", Code::InvalidJson),
            (b"[{\"id\": \"x\"}]", Code::InvalidDescriptor),
            (b"null", Code::InvalidDescriptor),
        ];
        for (bytes, code) in cases {
            let descriptor = parse_descriptor(bytes);
            assert_eq!(
                summary(&descriptor.diagnostics),
                owned(&[(code, Error, "")])
            );
            assert!(descriptor.fields.is_empty());
            assert_eq!(descriptor.id, None);
        }
    }

    #[test]
    fn descriptor_fields() {
        type Case = (
            &'static str,
            Option<Value>,
            Vec<(Code, Severity, &'static str)>,
        );
        let mut cases: Vec<Case> = Vec::new();
        for required in [
            "protocol",
            "id",
            "name",
            "version",
            "capability_type",
            "description",
            "provider",
            "endpoint",
            "inputs",
            "output",
            "auth",
            "access",
        ] {
            cases.push((required, None, vec![(Code::MissingField, Error, required)]));
        }
        for optional in ["tags", "documentation_url", "created_at", "updated_at"] {
            cases.push((optional, None, vec![]));
        }
        #[rustfmt::skip]
        cases.extend([
            ("protocol/version", Some(json!("2.1.0")), vec![(Code::UnknownProtocolVersion, Warning, "protocol.version")]),
            ("protocol/version", None, vec![(Code::MissingField, Error, "protocol.version")]),
            ("id", Some(json!(12)), vec![(Code::InvalidField, Error, "id")]),
            ("version", Some(json!("1.4")), vec![(Code::InvalidVersion, Warning, "version")]),
            ("version", Some(json!("v1.4.0")), vec![(Code::InvalidVersion, Warning, "version")]),
            ("version", Some(json!(3)), vec![(Code::InvalidField, Warning, "version"), (Code::InvalidVersion, Warning, "version")]),
            ("version", Some(json!("2.0.0-beta.2+sha.5114f85")), vec![]),
            ("capability_type", Some(json!(" Knowledge")), vec![]),
            ("capability_type", Some(json!("widget")), vec![(Code::UnknownCapabilityType, Warning, "capability_type")]),
            ("provider", Some(json!("Lantern Works")), vec![(Code::InvalidField, Error, "provider")]),
            ("provider/name", None, vec![(Code::MissingField, Error, "provider.name")]),
            ("endpoint", Some(json!("https://api.lantern.example.test/route")), vec![(Code::InvalidField, Error, "endpoint")]),
            ("endpoint/url", None, vec![(Code::MissingField, Error, "endpoint.url")]),
            ("endpoint/url", Some(json!("/route")), vec![(Code::InvalidUrl, Error, "endpoint.url")]),
            ("endpoint/url", Some(json!("ws://api.lantern.example.test/route")), vec![(Code::InvalidUrl, Error, "endpoint.url")]),
            ("inputs", Some(json!({"depots": "array"})), vec![(Code::InvalidField, Error, "inputs")]),
            ("inputs", Some(json!([{"name": "a"}, "b"])), vec![(Code::InvalidField, Error, "inputs[1]")]),
            ("inputs", Some(json!([])), vec![]),
            ("output", Some(json!("json")), vec![(Code::InvalidField, Error, "output")]),
            ("auth", Some(json!("api_key")), vec![(Code::InvalidField, Error, "auth")]),
            ("auth/type", None, vec![(Code::MissingField, Error, "auth.type")]),
            ("auth/type", Some(json!("basic")), vec![(Code::InvalidField, Error, "auth.type")]),
            ("auth/type", Some(json!("none")), vec![]),
            ("access", Some(json!("secret")), vec![(Code::InvalidField, Error, "access")]),
            ("access", Some(json!(1)), vec![(Code::InvalidField, Error, "access")]),
            ("tags", Some(json!("logistics,routing")), vec![(Code::InvalidField, Warning, "tags")]),
            ("tags", Some(json!(["logistics", 7, " ", " routing "])), vec![(Code::InvalidField, Warning, "tags[1]")]),
            ("documentation_url", Some(json!("docs/route-planner")), vec![(Code::InvalidUrl, Warning, "documentation_url")]),
            ("documentation_url", Some(json!(false)), vec![(Code::InvalidField, Warning, "documentation_url")]),
            ("created_at", Some(json!("yesterday")), vec![(Code::InvalidField, Warning, "created_at")]),
            ("created_at", Some(json!("2025-02-30")), vec![(Code::InvalidField, Warning, "created_at")]),
            ("created_at", Some(json!("2025-02-03T04:05:06+02:00")), vec![]),
            ("created_at", Some(json!("2025-02-03T04:05:06.250Z")), vec![]),
            ("updated_at", Some(json!("2025-02-03T04:05:06")), vec![]),
            ("updated_at", Some(json!(1_700_000_000)), vec![(Code::InvalidField, Warning, "updated_at")]),
            ("x-vendor", Some(json!({"anything": [1, 2]})), vec![]),
        ]);
        for (field, new, expected) in cases {
            let pointer = format!("/{field}");
            let descriptor = parse_descriptor(
                mutated(base_descriptor(), &pointer, new.clone())
                    .to_string()
                    .as_bytes(),
            );
            assert_eq!(
                summary(&descriptor.diagnostics),
                owned(&expected),
                "{pointer} = {new:?}"
            );
        }
    }

    #[test]
    fn descriptor_values_after_problems() {
        let cases = [
            (
                "/capability_type",
                json!(" Knowledge"),
                "capability_type",
                "Some(\"knowledge\")",
            ),
            ("/version", json!(3), "version", "Some(\"3\")"),
            ("/access", json!("secret"), "access", "None"),
            ("/auth/type", json!("basic"), "auth_type", "Some(\"basic\")"),
            ("/endpoint/url", json!("/route"), "endpoint_url", "None"),
            (
                "/documentation_url",
                json!("ftp://x.test/d"),
                "documentation_url",
                "None",
            ),
            (
                "/tags",
                json!(["logistics", 7, " ", " routing "]),
                "tags",
                "[\"logistics\", \"routing\"]",
            ),
        ];
        for (pointer, new, field, expected) in cases {
            let descriptor = parse_descriptor(
                mutated(base_descriptor(), pointer, Some(new))
                    .to_string()
                    .as_bytes(),
            );
            let actual = match field {
                "capability_type" => format!("{:?}", descriptor.capability_type),
                "version" => format!("{:?}", descriptor.version),
                "access" => format!("{:?}", descriptor.access),
                "auth_type" => format!("{:?}", descriptor.auth_type),
                "endpoint_url" => format!("{:?}", descriptor.endpoint_url),
                "documentation_url" => format!("{:?}", descriptor.documentation_url),
                "tags" => format!("{:?}", descriptor.tags),
                other => panic!("no field {other}"),
            };
            assert_eq!(actual, expected, "{pointer}");
        }
    }

    #[test]
    fn descriptor_tags_are_capped() {
        let tags: Vec<String> = (0..MAX_DESCRIPTOR_TAGS + 10)
            .map(|n| format!("t{n}"))
            .collect();
        let descriptor = parse_descriptor(
            mutated(base_descriptor(), "/tags", Some(json!(tags)))
                .to_string()
                .as_bytes(),
        );
        assert_eq!(descriptor.tags.len(), MAX_DESCRIPTOR_TAGS);
        assert_eq!(
            summary(&descriptor.diagnostics),
            owned(&[(Code::TooLarge, Warning, "tags")])
        );
    }

    #[test]
    fn descriptor_mismatches() {
        let entry_of = |index: Value| parse(&index).entries.remove(0);
        #[rustfmt::skip]
        let cases: Vec<(Value, Value, &[&str])> = vec![
            (base_index(), base_descriptor(), &[]),
            (base_index(), mutated(base_descriptor(), "/id", Some(json!("test.lantern.other-v1"))), &["id"]),
            (base_index(), mutated(base_descriptor(), "/version", Some(json!("1.5.0"))), &["version"]),
            (base_index(), mutated(base_descriptor(), "/capability_type", Some(json!("Task"))), &["capability_type"]),
            (base_index(), mutated(base_descriptor(), "/capability_type", Some(json!(" API "))), &[]),
            (base_index(), mutated(base_descriptor(), "/access", Some(json!("private"))), &["access"]),
            (base_index(), mutated(base_descriptor(), "/name", Some(json!("Planner of Routes"))), &[]),
            // Missing on either side: not compared (the parsers already report it).
            (base_index(), mutated(base_descriptor(), "/version", None), &[]),
            (mutated(base_index(), "/skills/0/version", None), mutated(base_descriptor(), "/version", Some(json!("9.9.9"))), &[]),
            (mutated(base_index(), "/skills/0/capability_type", None), mutated(base_descriptor(), "/capability_type", Some(json!("task"))), &[]),
            // The entry's fail-closed `private` is not what it published.
            (mutated(base_index(), "/skills/0/access", Some(json!("open"))), base_descriptor(), &[]),
            (
                base_index(),
                json!({"id": "x", "version": "2.0.0", "capability_type": "plugin", "access": "restricted"}),
                &["id", "version", "capability_type", "access"],
            ),
        ];
        for (index, descriptor, expected) in cases {
            let entry = entry_of(index);
            let descriptor = parse_descriptor(descriptor.to_string().as_bytes());
            let diagnostics = check_descriptor(&entry, &descriptor);
            let fields: Vec<&str> = diagnostics
                .iter()
                .filter_map(|d| d.field.as_deref())
                .collect();
            assert_eq!(fields, expected);
            for diagnostic in &diagnostics {
                assert_eq!(
                    (diagnostic.code, diagnostic.severity),
                    (Code::DescriptorMismatch, Warning)
                );
            }
        }
        let entry = entry_of(base_index());
        let descriptor = parse_descriptor(
            mutated(base_descriptor(), "/version", Some(json!("1.5.0")))
                .to_string()
                .as_bytes(),
        );
        insta::assert_snapshot!(
            check_descriptor(&entry, &descriptor)[0].message,
            @r#"descriptor version "1.5.0" differs from the index entry's "1.4.0""#
        );
    }

    #[test]
    fn long_values_are_quoted_short() {
        let long = "é".repeat(10_000);
        let index = parse(&mutated(
            base_index(),
            "/skills/0/access",
            Some(json!(long)),
        ));
        let message = &index.entries[0].diagnostics[0].message;
        assert!(message.len() < 400, "{message}");
        assert!(message.contains("\"... is not public"), "{message}");
    }

    /// JSON built from the field names the parsers look for, so that generated documents get
    /// past the syntax checks and exercise the field rules.
    fn json_value() -> impl Strategy<Value = Value> {
        let key = prop::sample::select(vec![
            "protocol",
            "version",
            "provider",
            "name",
            "url",
            "skills",
            "id",
            "capability_type",
            "description",
            "descriptor_url",
            "access",
            "endpoint",
            "inputs",
            "output",
            "auth",
            "type",
            "tags",
            "documentation_url",
            "created_at",
            "updated_at",
        ]);
        let text = prop_oneof![
            prop::sample::select(vec![
                "",
                "1.0.0",
                "2.0",
                "public",
                "restricted",
                "private",
                "Public",
                "api",
                " Task ",
                "a/b",
                "..",
                "d.json",
                "../../x",
                "//other.test/x",
                "javascript:x",
                "ftp://x.test/",
                "http://[::1",
                "api_key",
                "2025-01-01",
                "1.0.0-rc.1+b",
            ])
            .prop_map(str::to_owned),
            "\\PC{0,12}",
        ];
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            text.prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 96, 8, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((key.clone(), inner), 0..10).prop_map(|pairs| {
                    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
                }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
            let index = parse_index(&bytes, &index_url());
            let descriptor = parse_descriptor(&bytes);
            let is_object = std::str::from_utf8(&bytes)
                .ok()
                .and_then(|text| serde_json::from_str::<Value>(text.strip_prefix('\u{feff}').unwrap_or(text)).ok())
                .is_some_and(|value| value.is_object());
            if !is_object {
                prop_assert_eq!(index.diagnostics.len(), 1);
                prop_assert!(index.entries.is_empty());
                prop_assert_eq!(descriptor.diagnostics.len(), 1);
                prop_assert!(descriptor.fields.is_empty());
            }
        }

        #[test]
        fn arbitrary_json_keeps_the_invariants(
            top in json_value(),
            entries in prop::collection::vec(json_value(), 0..8),
        ) {
            let mut document = match top {
                Value::Object(object) => object,
                _ => Map::new(),
            };
            document.insert("skills".to_owned(), Value::Array(entries));
            let bytes = Value::Object(document).to_string().into_bytes();

            let index = parse_index(&bytes, &index_url());
            let mut slugs = std::collections::HashSet::new();
            for entry in &index.entries {
                prop_assert!(slugs.insert(entry.slug.clone()), "duplicate {}", entry.slug);
                let published = entry.raw.get("access").and_then(Value::as_str);
                if published.and_then(|a| a.parse::<Access>().ok()).is_none() {
                    prop_assert_eq!(entry.access, Access::Private);
                    prop_assert!(entry.diagnostics.iter().any(|d| d.field.as_deref().is_some_and(|f| f.ends_with(".access"))));
                }
                if let Some(url) = &entry.descriptor_url {
                    prop_assert!(matches!(url.scheme(), "http" | "https"));
                }
                let normalised = entry.capability_type.trim().to_lowercase();
                prop_assert_eq!(&entry.capability_type, &normalised);
                for diagnostic in &entry.diagnostics {
                    prop_assert!(diagnostic.field.as_deref().is_some_and(|f| f.starts_with("skills[")));
                }
            }

            let descriptor = parse_descriptor(&bytes);
            prop_assert!(descriptor.tags.len() <= MAX_DESCRIPTOR_TAGS);
            if let Some(capability_type) = &descriptor.capability_type {
                prop_assert_eq!(capability_type, &capability_type.trim().to_lowercase());
            }
        }
    }
}
