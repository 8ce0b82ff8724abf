//! MCP servers as a skill source: the Skills Extension (SEP-2640, extension id
//! `io.modelcontextprotocol/skills`) as the crawler reads it, without any I/O.
//!
//! A crawl of an MCP endpoint is a short conversation of JSON-RPC requests, each one HTTP
//! POST: learn the server's capabilities (`server/discover` on protocol 2026-07-28, or
//! `initialize` on the older protocols), page through `skills/list`, then read each listed
//! file with `resources/read`. This module builds the request bodies and headers' values,
//! reads the answers (JSON or server-sent events), and checks each listing entry against the
//! specification's rules before anything is read: its URI, its name, its files' paths,
//! digests and sizes, and the limits of 512 files and 16 MiB per skill. The normaliser
//! ([`crate::normalize::mcp_skill`]) then checks every file read (size first, then digest)
//! and the SKILL.md frontmatter, field by field, against the listing.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use crate::diagnostic::{Code, Diagnostic};
use crate::skill::{Digest, SkillName, Slug};

/// The Skills Extension's identifier in `capabilities.extensions`.
pub const SKILLS_EXTENSION_ID: &str = "io.modelcontextprotocol/skills";
/// The protocol without `initialize` or sessions, tried first.
pub const STATELESS_PROTOCOL: &str = "2026-07-28";
/// The older protocols offered to `initialize` when a server does not know
/// [`STATELESS_PROTOCOL`], newest first.
pub const LEGACY_PROTOCOLS: [&str; 2] = ["2025-11-25", "2025-06-18"];
/// The most files one skill may list (SEP-2640).
pub const MAX_SKILL_FILES: usize = 512;
/// The most bytes one skill's files may add up to (SEP-2640).
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;
/// The most `skills/list` pages read from one endpoint; a server that keeps handing out
/// cursors is read this far and no further.
pub const MAX_LIST_PAGES: usize = 50;
/// The most skills read from one endpoint; later entries are left out, and said to be.
pub const MAX_ENDPOINT_SKILLS: usize = 2000;
/// The largest answer accepted to `server/discover`, `initialize` or one `skills/list` page.
pub const MAX_LIST_RESPONSE_BYTES: usize = 2 * 1024 * 1024;
/// The most bytes of `skills/list` answers read from one endpoint, all pages together: the
/// listing is held whole while it is checked, so it is bounded whatever the page count.
pub const MAX_LISTING_BYTES: usize = 8 * 1024 * 1024;
/// The largest answer accepted to one `resources/read`: a file is at most
/// [`MAX_SKILL_BYTES`], and JSON string escapes or base64 make it bigger on the wire.
pub const MAX_READ_RESPONSE_BYTES: usize = 48 * 1024 * 1024;
/// The file every skill has at its root.
pub const SKILL_MD: &str = "SKILL.md";

/// The client name sent to servers.
const CLIENT_NAME: &str = "skillscout";

/// Which generation of the protocol a conversation uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// Protocol 2026-07-28: no handshake, every request carries its own context in `_meta`.
    Stateless,
    /// An older protocol (the given version), negotiated with `initialize`.
    Legacy(&'static str),
}

impl Era {
    /// Returns the protocol version sent in the `MCP-Protocol-Version` header.
    pub fn protocol_version(self) -> &'static str {
        match self {
            Era::Stateless => STATELESS_PROTOCOL,
            Era::Legacy(version) => version,
        }
    }
}

/// Returns the body of a JSON-RPC request. On the stateless protocol the request's `_meta`
/// carries the protocol version and the client's (empty) capabilities, which that protocol
/// requires of every request.
pub fn request_body(id: u64, method: &str, params: Map<String, Value>, era: Era) -> Vec<u8> {
    let mut params = params;
    if era == Era::Stateless {
        params.insert(
            "_meta".to_owned(),
            json!({
                "io.modelcontextprotocol/protocolVersion": STATELESS_PROTOCOL,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": client_info(),
            }),
        );
    }
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
        .to_string()
        .into_bytes()
}

/// Returns the body of an `initialize` request offering `version`.
pub fn initialize_body(id: u64, version: &str) -> Vec<u8> {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": client_info(),
        },
    })
    .to_string()
    .into_bytes()
}

/// Returns the body of the `notifications/initialized` notification.
pub fn initialized_body() -> Vec<u8> {
    json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })
        .to_string()
        .into_bytes()
}

fn client_info() -> Value {
    json!({ "name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION") })
}

/// Why an answer is not a usable JSON-RPC result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RpcError {
    /// The server answered with a JSON-RPC error.
    Server {
        /// The error code (`-32601`: method not found, `-32602`: invalid params, …).
        code: i64,
        /// The server's message.
        message: String,
    },
    /// The answer is not a JSON-RPC response to the request.
    Invalid(String),
}

impl RpcError {
    /// Returns the error as a message naming what the server said.
    pub fn message(&self) -> String {
        match self {
            RpcError::Server { code, message } => {
                format!("the server answered error {code}: {message}")
            }
            RpcError::Invalid(problem) => problem.clone(),
        }
    }
}

/// Reads the response to request `id` from an HTTP body: a JSON object, or a server-sent
/// event stream whose `data:` events hold JSON-RPC messages (notifications before the
/// response are skipped).
pub fn parse_response(body: &[u8], content_type: Option<&str>, id: u64) -> Result<Value, RpcError> {
    let Ok(text) = std::str::from_utf8(body) else {
        return Err(RpcError::Invalid("the answer is not UTF-8".to_owned()));
    };
    let is_event_stream = content_type.is_some_and(|value| {
        value
            .split(';')
            .next()
            .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("text/event-stream"))
    });
    if !is_event_stream {
        let message: Value = serde_json::from_str(text)
            .map_err(|error| RpcError::Invalid(format!("the answer is not JSON: {error}")))?;
        return response_of(message, id).unwrap_or_else(|| {
            Err(RpcError::Invalid(format!(
                "the answer is not the response to request {id}"
            )))
        });
    }
    for data in sse_data(text) {
        let Ok(message) = serde_json::from_str::<Value>(&data) else {
            continue;
        };
        if let Some(result) = response_of(message, id) {
            return result;
        }
    }
    Err(RpcError::Invalid(format!(
        "the event stream holds no response to request {id}"
    )))
}

/// The `data` of each event of a server-sent event stream (lines joined with `\n`).
fn sse_data(text: &str) -> Vec<String> {
    let mut events = Vec::new();
    let mut data: Option<String> = None;
    for line in text.lines().chain(std::iter::once("")) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            events.extend(data.take());
            continue;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        if field == "data" {
            let value = value.strip_prefix(' ').unwrap_or(value);
            match &mut data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => data = Some(value.to_owned()),
            }
        }
    }
    events
}

/// The result or error of `message` when it is the response to `id`; `None` for any other
/// message (a notification, a request of the server's, another id).
fn response_of(message: Value, id: u64) -> Option<Result<Value, RpcError>> {
    let Value::Object(mut message) = message else {
        return None;
    };
    if message.get("id").and_then(Value::as_u64) != Some(id) {
        // An error without an id answers whatever request could not be read.
        let anonymous_error =
            message.get("id").is_none_or(Value::is_null) && message.contains_key("error");
        if !anonymous_error {
            return None;
        }
    }
    if let Some(error) = message.remove("error") {
        let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
        let text = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("no message");
        return Some(Err(RpcError::Server {
            code,
            message: shorten(text),
        }));
    }
    match message.remove("result") {
        Some(result @ Value::Object(_)) => Some(Ok(result)),
        Some(_) => Some(Err(RpcError::Invalid(
            "the result is not an object".to_owned(),
        ))),
        None => Some(Err(RpcError::Invalid(
            "the response has neither a result nor an error".to_owned(),
        ))),
    }
}

/// Server text quoted in messages is cut to this many characters.
const QUOTED_CHARS: usize = 200;

fn shorten(text: &str) -> String {
    let mut short: String = text.chars().take(QUOTED_CHARS).collect();
    if short.len() < text.len() {
        short.push('…');
    }
    short
}

/// What a server's capabilities say about skills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkillsSupport {
    /// `capabilities.extensions` declares the Skills Extension.
    pub extension: bool,
    /// `capabilities.resources` is declared (files are read as resources).
    pub resources: bool,
}

impl SkillsSupport {
    /// Reads the capabilities of a `server/discover` or `initialize` result.
    pub fn of(result: &Value) -> SkillsSupport {
        let capabilities = result.get("capabilities");
        SkillsSupport {
            extension: capabilities
                .and_then(|capabilities| capabilities.get("extensions"))
                .and_then(|extensions| extensions.get(SKILLS_EXTENSION_ID))
                .is_some_and(|settings| !settings.is_null()),
            resources: capabilities
                .and_then(|capabilities| capabilities.get("resources"))
                .is_some_and(|resources| !resources.is_null()),
        }
    }

    /// Returns why skills cannot be read, or `None` when they can.
    pub fn problem(self) -> Option<Diagnostic> {
        let missing = match (self.extension, self.resources) {
            (true, true) => return None,
            (false, _) => format!("the server does not declare the Skills Extension ({SKILLS_EXTENSION_ID})"),
            (true, false) => "the server declares the Skills Extension but not resources, through which skill files are read".to_owned(),
        };
        Some(Diagnostic::new(
            Code::NoSkillsExtension,
            format!("{missing}; it publishes no skills to read"),
        ))
    }
}

/// One page of `skills/list`.
#[derive(Debug, Clone, PartialEq)]
pub struct ListPage {
    /// The entries, as sent.
    pub skills: Vec<Value>,
    /// The cursor of the next page, if any.
    pub next_cursor: Option<String>,
}

/// Reads a `skills/list` result.
pub fn parse_list_page(result: &Value) -> Result<ListPage, String> {
    let Some(skills) = result.get("skills").and_then(Value::as_array) else {
        return Err("the skills/list result has no `skills` array".to_owned());
    };
    let next_cursor = match result.get("nextCursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(cursor)) => Some(cursor.clone()),
        Some(_) => return Err("the skills/list `nextCursor` is not a string".to_owned()),
    };
    Ok(ListPage {
        skills: skills.clone(),
        next_cursor,
    })
}

/// One file a listing entry declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedFile {
    /// The URI to read it with.
    pub uri: String,
    /// Its path relative to the skill root.
    pub path: String,
    /// The digest of its bytes.
    pub digest: Digest,
    /// Its size in bytes.
    pub size: u64,
}

/// The files a listing entry declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListedFiles {
    /// Every file, with digests and sizes; the first is SKILL.md.
    Files(Vec<ListedFile>),
    /// `"dynamic"`: no manifest, nothing to verify. Only SKILL.md is read.
    Dynamic,
}

/// One skill as `skills/list` gives it, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedSkill {
    /// The record key: the skill's name, suffixed when another listed skill has the same.
    pub slug: Slug,
    /// The last segment of the URI's path before `/SKILL.md` (the folder name).
    pub folder: String,
    /// The URI of the skill's SKILL.md.
    pub uri: String,
    /// The frontmatter the listing gives.
    pub frontmatter: Map<String, Value>,
    /// The files it declares.
    pub files: ListedFiles,
    /// True when the entry itself breaks a rule that makes reading it pointless (too many
    /// files, too many bytes, a file outside the skill, no SKILL.md): nothing is read.
    pub refused: bool,
    /// What was wrong with the entry.
    pub diagnostics: Vec<Diagnostic>,
}

impl ListedSkill {
    /// Returns the listed SKILL.md, when the entry lists files.
    pub fn skill_md(&self) -> Option<&ListedFile> {
        match &self.files {
            ListedFiles::Files(files) => files.iter().find(|file| file.path == SKILL_MD),
            ListedFiles::Dynamic => None,
        }
    }
}

/// Every skill an endpoint lists, checked, and what was wrong with the listing as a whole.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Listing {
    /// The usable entries, in listing order, each with a key of its own.
    pub skills: Vec<ListedSkill>,
    /// Entries that could not be used at all, and skills that share a name.
    pub diagnostics: Vec<Diagnostic>,
}

/// Checks every entry of an endpoint's listing (all pages, in order). Entries without a
/// usable URI or name are left out with a diagnostic; skills that share a name are all kept:
/// the one whose URI sorts first keeps the name, the others get `{name}~2`, `{name}~3`, …
/// in URI order (`~` never appears in a valid skill name), each with a `duplicate_name`
/// warning, so that no skill is dropped and the keys do not depend on the listing's order.
pub fn read_listing(entries: &[Value]) -> Listing {
    let mut listing = Listing::default();
    for (position, entry) in entries.iter().enumerate() {
        match listed_skill(entry, position) {
            Ok(skill) => listing.skills.push(skill),
            Err(diagnostic) => listing.diagnostics.push(diagnostic),
        }
    }
    disambiguate(&mut listing);
    listing
}

/// Gives skills that share a key keys of their own (see [`read_listing`]).
fn disambiguate(listing: &mut Listing) {
    let mut by_slug: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (index, skill) in listing.skills.iter().enumerate() {
        by_slug
            .entry(skill.slug.to_string())
            .or_default()
            .push(index);
    }
    let mut taken: BTreeSet<String> = by_slug.keys().cloned().collect();
    let mut unusable: BTreeSet<usize> = BTreeSet::new();
    for (slug, mut indexes) in by_slug {
        if indexes.len() < 2 {
            continue;
        }
        indexes.sort_by(|a, b| listing.skills[*a].uri.cmp(&listing.skills[*b].uri));
        let kept_uri = listing.skills[indexes[0]].uri.clone();
        let mut suffix = 2;
        for &index in &indexes[1..] {
            let renamed = loop {
                let candidate = format!("{slug}~{suffix}");
                suffix += 1;
                if taken.insert(candidate.clone()) {
                    break candidate;
                }
            };
            let skill = &mut listing.skills[index];
            let Ok(key) = renamed.parse::<Slug>() else {
                // A name at the key length limit cannot take a suffix.
                unusable.insert(index);
                listing.diagnostics.push(Diagnostic::new(
                    Code::DuplicateName,
                    format!(
                        "{} has the name {slug:?}, like {kept_uri}, and is too long to be kept under another key; it is left out",
                        skill.uri
                    ),
                ));
                continue;
            };
            let message = format!(
                "{} has the name {slug:?}, like {kept_uri}; it is kept under the key {renamed:?}",
                skill.uri
            );
            listing
                .diagnostics
                .push(Diagnostic::new(Code::DuplicateName, message.clone()).as_warning());
            skill
                .diagnostics
                .push(Diagnostic::new(Code::DuplicateName, message).as_warning());
            skill.slug = key;
        }
    }
    let mut index = 0;
    listing.skills.retain(|_| {
        index += 1;
        !unusable.contains(&(index - 1))
    });
}

/// Checks one listing entry. An `Err` is an entry that cannot become a record.
fn listed_skill(entry: &Value, position: usize) -> Result<ListedSkill, Diagnostic> {
    let field = |name: &str| format!("skills[{position}].{name}");
    let Some(entry) = entry.as_object() else {
        return Err(
            Diagnostic::new(Code::InvalidField, "the entry is not an object")
                .at(format!("skills[{position}]")),
        );
    };
    let Some(uri) = entry.get("uri").and_then(Value::as_str) else {
        return Err(
            Diagnostic::new(Code::MissingField, "the entry has no `uri` string").at(field("uri")),
        );
    };
    let Some(folder) = folder_of(uri) else {
        return Err(Diagnostic::new(
            Code::InvalidField,
            format!(
                "{} does not name a SKILL.md (`…/<name>/SKILL.md`, no query or fragment)",
                shorten(uri)
            ),
        )
        .at(field("uri")));
    };
    let frontmatter = match entry.get("frontmatter") {
        Some(Value::Object(frontmatter)) => frontmatter.clone(),
        _ => {
            return Err(Diagnostic::new(
                Code::MissingField,
                format!("{} has no `frontmatter` object", shorten(uri)),
            )
            .at(field("frontmatter")));
        }
    };
    let name = frontmatter
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or(folder.as_str())
        .to_owned();
    let slug: Slug = name.parse().map_err(|error: crate::skill::InvalidValue| {
        Diagnostic::new(Code::InvalidName, format!("{}: {}", shorten(uri), error.0))
            .at(field("frontmatter.name"))
    })?;

    let mut skill = ListedSkill {
        slug,
        folder: folder.clone(),
        uri: uri.to_owned(),
        frontmatter,
        files: ListedFiles::Dynamic,
        refused: false,
        diagnostics: Vec::new(),
    };
    if let Some(problem) = SkillName::problem(&name) {
        skill.diagnostics.push(
            Diagnostic::new(Code::InvalidName, format!("skill name {name:?} {problem}"))
                .at("frontmatter.name"),
        );
    }
    if name != folder {
        skill.diagnostics.push(
            Diagnostic::new(
                Code::NameMismatch,
                format!("the frontmatter name {name:?} differs from the URI's folder {folder:?}"),
            )
            .at("frontmatter.name"),
        );
    }
    match entry.get("resources") {
        Some(Value::String(marker)) if marker == "dynamic" => {}
        Some(Value::Array(resources)) => read_resources(&mut skill, resources),
        _ => {
            skill.refused = true;
            skill.diagnostics.push(
                Diagnostic::new(
                    Code::InvalidField,
                    "`resources` is neither a list of files nor \"dynamic\"",
                )
                .at("resources"),
            );
        }
    }
    Ok(skill)
}

/// The folder name of a SKILL.md URI: the path segment before `/SKILL.md`.
fn folder_of(uri: &str) -> Option<String> {
    if uri.contains(['?', '#']) {
        return None;
    }
    let root = uri.strip_suffix(SKILL_MD)?.strip_suffix('/')?;
    let folder = root.rsplit('/').next()?;
    if folder.is_empty() || root.ends_with("//") || !root.contains("://") {
        return None;
    }
    let decoded = percent_encoding::percent_decode_str(folder)
        .decode_utf8()
        .ok()?;
    Some(decoded.into_owned())
}

/// Checks the listed files: paths inside the skill, digests, the limits, SKILL.md present.
fn read_resources(skill: &mut ListedSkill, resources: &[Value]) {
    let root = &skill.uri[..skill.uri.len() - SKILL_MD.len()];
    if resources.len() > MAX_SKILL_FILES {
        skill.refused = true;
        skill.diagnostics.push(Diagnostic::new(
            Code::TooManyEntries,
            format!(
                "the skill lists {} files, more than the {MAX_SKILL_FILES} allowed; nothing is read",
                resources.len()
            ),
        ));
        return;
    }
    let mut files: Vec<ListedFile> = Vec::with_capacity(resources.len());
    let mut total: u64 = 0;
    for (index, resource) in resources.iter().enumerate() {
        let at = format!("resources[{index}]");
        let uri = resource.get("uri").and_then(Value::as_str);
        let digest = resource.get("digest").and_then(Value::as_str);
        let size = resource.get("size").and_then(Value::as_u64);
        let (Some(uri), Some(digest), Some(size)) = (uri, digest, size) else {
            skill.refused = true;
            skill.diagnostics.push(
                Diagnostic::new(
                    Code::InvalidField,
                    "a file entry needs `uri`, `digest` and `size`",
                )
                .at(at),
            );
            continue;
        };
        let Some(path) = relative_path(root, uri) else {
            skill.refused = true;
            skill.diagnostics.push(
                Diagnostic::new(
                    Code::PathTraversal,
                    format!(
                        "{} is not a file inside the skill's folder {root}",
                        shorten(uri)
                    ),
                )
                .at(format!("{at}.uri")),
            );
            continue;
        };
        let Ok(digest) = digest.parse::<Digest>() else {
            skill.refused = true;
            skill.diagnostics.push(
                Diagnostic::new(
                    Code::InvalidDigest,
                    format!(
                        "{path}: digest {:?} is not `sha256:` and 64 lowercase hex characters",
                        shorten(digest)
                    ),
                )
                .at(format!("{at}.digest")),
            );
            continue;
        };
        if files.iter().any(|file| file.path == path) {
            skill.refused = true;
            skill.diagnostics.push(
                Diagnostic::new(Code::InvalidField, format!("{path} is listed twice"))
                    .at(format!("{at}.uri")),
            );
            continue;
        }
        total = total.saturating_add(size);
        files.push(ListedFile {
            uri: uri.to_owned(),
            path,
            digest,
            size,
        });
    }
    if total > MAX_SKILL_BYTES {
        skill.refused = true;
        skill.diagnostics.push(Diagnostic::new(
            Code::TooLarge,
            format!(
                "the skill's files add up to {total} bytes, more than the {MAX_SKILL_BYTES} allowed; nothing is read"
            ),
        ));
    }
    match files.iter().position(|file| file.path == SKILL_MD) {
        // SKILL.md first: it is read first.
        Some(position) => files[..=position].rotate_right(1),
        None => {
            skill.refused = true;
            skill.diagnostics.push(Diagnostic::new(
                Code::MissingSkillMd,
                format!("the skill's files do not include its own {}", skill.uri),
            ));
        }
    }
    skill.files = ListedFiles::Files(files);
}

/// The path of `uri` relative to the skill root `root` (which ends in `/`), when it names a
/// file inside it: no `.` or `..` segment, no empty segment, no backslash or control
/// character, no query or fragment.
fn relative_path(root: &str, uri: &str) -> Option<String> {
    let relative = uri.strip_prefix(root)?;
    if relative.is_empty() || relative.contains(['?', '#', '\\']) {
        return None;
    }
    let decoded = percent_encoding::percent_decode_str(relative)
        .decode_utf8()
        .ok()?;
    let safe = decoded.split('/').all(|segment| {
        !matches!(segment, "" | "." | "..") && !segment.chars().any(|c| c.is_control() || c == '\\')
    });
    safe.then(|| decoded.into_owned())
}

/// Reads a `resources/read` result for `uri`: the bytes of its `text` (UTF-8) or `blob`
/// (base64) content.
pub fn read_contents(result: &Value, uri: &str) -> Result<Vec<u8>, String> {
    let Some(contents) = result.get("contents").and_then(Value::as_array) else {
        return Err("the resources/read result has no `contents` array".to_owned());
    };
    let content = contents
        .iter()
        .find(|content| content.get("uri").and_then(Value::as_str) == Some(uri))
        .or_else(|| (contents.len() == 1).then(|| &contents[0]));
    let Some(content) = content else {
        return Err(format!(
            "the resources/read result holds no content for {}",
            shorten(uri)
        ));
    };
    if let Some(text) = content.get("text").and_then(Value::as_str) {
        return Ok(text.as_bytes().to_vec());
    }
    if let Some(blob) = content.get("blob").and_then(Value::as_str) {
        return base64_decode(blob)
            .ok_or_else(|| format!("the blob of {} is not valid base64", shorten(uri)));
    }
    Err(format!(
        "the content of {} has neither `text` nor `blob`",
        shorten(uri)
    ))
}

/// Decodes standard base64 (with or without padding; whitespace is not allowed).
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    fn value(byte: u8) -> Option<u32> {
        Some(match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    let trimmed = text.trim_end_matches('=');
    if text.len() - trimmed.len() > 2 || trimmed.len() % 4 == 1 {
        return None;
    }
    let mut bytes = Vec::with_capacity(trimmed.len() / 4 * 3 + 2);
    for chunk in trimmed.as_bytes().chunks(4) {
        let mut group: u32 = 0;
        for (index, byte) in chunk.iter().enumerate() {
            group |= value(*byte)? << (18 - 6 * index);
        }
        let produced = chunk.len() * 6 / 8;
        for index in 0..produced {
            bytes.push((group >> (16 - 8 * index)) as u8);
        }
    }
    Some(bytes)
}

/// Checks the bytes read for a listed file: size first, then digest (SEP-2640's order, so
/// that a wrong length is reported without hashing). The error is the diagnostic to record.
pub fn check_file(file: &ListedFile, bytes: &[u8]) -> Result<(), Diagnostic> {
    let size = bytes.len() as u64;
    if size != file.size {
        return Err(Diagnostic::new(
            Code::SizeMismatch,
            format!(
                "{} is {size} bytes, but the listing says {}; the content is not used",
                file.uri, file.size
            ),
        ));
    }
    let actual = Digest::of(bytes);
    if actual != file.digest {
        return Err(Diagnostic::new(
            Code::DigestMismatch,
            format!(
                "{} has digest {actual}, but the listing publishes {}; the content is not used",
                file.uri, file.digest
            ),
        ));
    }
    Ok(())
}

/// Compares the frontmatter of the SKILL.md read with the listing's, field by field: one
/// `frontmatter_mismatch` per field that is missing on one side or differs. Numbers compare
/// by value (`1` and `1.0` are the same), since the two sides may come from different YAML
/// readers.
pub fn compare_frontmatter(
    listed: &Map<String, Value>,
    read: &Map<String, Value>,
) -> Vec<Diagnostic> {
    let keys: BTreeSet<&String> = listed.keys().chain(read.keys()).collect();
    let mut differences = Vec::new();
    for key in keys {
        let message = match (listed.get(key), read.get(key)) {
            (Some(listed), Some(read)) if same_value(listed, read) => continue,
            (Some(listed), Some(read)) => format!(
                "the listing gives {key} = {}, but SKILL.md says {}",
                shorten(&listed.to_string()),
                shorten(&read.to_string())
            ),
            (Some(_), None) => format!("the listing gives {key}, which SKILL.md does not have"),
            (None, Some(_)) => format!("SKILL.md has {key}, which the listing leaves out"),
            (None, None) => continue,
        };
        differences.push(
            Diagnostic::new(Code::FrontmatterMismatch, message).at(format!("frontmatter.{key}")),
        );
    }
    differences
}

fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => a == b || a.as_f64() == b.as_f64(),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_value(a, b))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, a)| b.get(key).is_some_and(|b| same_value(a, b)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests;
