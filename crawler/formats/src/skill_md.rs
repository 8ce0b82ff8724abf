//! SKILL.md: the YAML frontmatter and markdown body of a skill, checked against the Agent
//! Skills format (specs/agent-skills-format.md) and the GAIA extensions ([`gaia`]).
//!
//! [`parse`] takes the bytes as fetched and always returns a [`SkillMd`]: whatever is wrong
//! becomes a [`Diagnostic`], and the parts that could be read are kept. Severities are the
//! strict view (the rules `skills-ref` applies); each [`Code`] carries its lenient severity.
//!
//! The frontmatter comes from publishers we do not trust, so the YAML parser runs under
//! explicit limits (the `MAX_*` constants below): anchors and aliases, nesting depth, parser
//! events and size are all bounded, and breaking a limit is a [`Code::YamlLimit`] diagnostic.

pub mod gaia;
mod yaml;

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::diagnostic::{Code, Diagnostic};
use crate::skill::SkillName;

/// The longest skill name the specification allows, in characters.
pub const MAX_NAME_CHARS: usize = crate::skill::MAX_NAME_LEN;
/// The longest description the specification allows, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// The longest `compatibility` the specification allows, in characters.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;
/// SKILL.md files larger than this get a `large_skill_md` warning (the spec recommends < 5k
/// tokens for the body).
pub const LARGE_SKILL_MD_BYTES: usize = 50_000;
/// The top-level fields the Agent Skills specification allows (skills-ref rejects any other).
pub const SPEC_FIELDS: [&str; 6] = [
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];
/// Top-level fields Claude Code reads beyond the specification; other clients ignore them.
pub const CLAUDE_CODE_FIELDS: [&str; 7] = [
    "argument-hint",
    "disable-model-invocation",
    "user-invocable",
    "model",
    "context",
    "agent",
    "hooks",
];

/// The largest frontmatter parsed, in bytes, and the most bytes its strings may come to once
/// aliases are expanded. Real frontmatter is a few kilobytes at most.
pub const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;
/// The deepest nesting of mappings and sequences allowed in the frontmatter.
pub const MAX_YAML_DEPTH: usize = 32;
/// The most YAML parser events (scalars, collection starts and ends) in the frontmatter.
pub const MAX_YAML_EVENTS: usize = 20_000;
/// The most anchors (`&name`) in the frontmatter.
pub const MAX_YAML_ANCHORS: usize = 64;
/// The most aliases (`*name`) in the frontmatter.
pub const MAX_YAML_ALIASES: usize = 64;
/// The most events that aliases may replay in total: this is what stops a billion-laughs
/// bomb, whose few aliases each stand for exponentially many events.
pub const MAX_YAML_ALIAS_REPLAYED_EVENTS: usize = 10_000;
/// The deepest the parser's alias replay may nest. A backstop: anchors are recorded already
/// expanded, so it is [`MAX_YAML_ALIAS_REPLAYED_EVENTS`] that stops alias bombs.
pub const MAX_YAML_ALIAS_DEPTH: usize = 8;
/// The most diagnostics reported for the items of one list or for unknown fields; the rest
/// are counted in one last diagnostic, so that a hostile list cannot flood the report.
pub const MAX_LIST_DIAGNOSTICS: usize = 20;

/// A SKILL.md file, parsed: the frontmatter, the body, the fields the record uses, and every
/// problem found.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SkillMd {
    /// The parsed YAML frontmatter as JSON; empty when absent or unparseable.
    pub frontmatter: Map<String, Value>,
    /// The markdown after the closing fence line, with CRLF normalised to LF; the whole text
    /// when there is no frontmatter.
    pub body: String,
    /// The frontmatter `name`, trimmed, when it is a non-blank string.
    pub name: Option<String>,
    /// The frontmatter `description`, trimmed, when it is a non-blank string.
    pub description: Option<String>,
    /// The top-level `license`, else `metadata.license`, else `metadata.gaia.license`.
    pub license: Option<String>,
    /// The top-level `version` (GAIA), else `metadata.version`, else `metadata.gaia.version`,
    /// as written (a YAML number `1.10` stays `"1.10"`).
    pub version: Option<String>,
    /// Tags from the top level, `metadata` and `metadata.gaia`, each a list of strings or one
    /// comma- or space-separated string; trimmed, deduplicated, in order, empty ones dropped.
    pub tags: Vec<String>,
    /// Every problem found.
    pub diagnostics: Vec<Diagnostic>,
}

/// Parses a SKILL.md file. `expected_name` is the directory or index entry name the
/// frontmatter `name` must equal.
pub fn parse(bytes: &[u8], expected_name: Option<&str>) -> SkillMd {
    let mut skill = SkillMd::default();
    let text = decode(bytes, &mut skill.diagnostics);

    let (yaml, body) = match split_frontmatter(&text) {
        Ok(parts) => parts,
        Err(code) => {
            skill.diagnostics.push(fence_diagnostic(code, &text));
            if code == Code::MissingFrontmatter {
                // Without frontmatter both required fields are missing, and validators that
                // list them separately should agree with us.
                skill.diagnostics.push(missing_name());
                skill
                    .diagnostics
                    .push(missing_description("frontmatter has no description"));
            }
            skill.body = text;
            return skill;
        }
    };
    skill.body = body.to_owned();

    match yaml::parse(yaml) {
        Ok(frontmatter) => {
            check_fields(&frontmatter, yaml, expected_name, &mut skill);
            skill.frontmatter = frontmatter;
        }
        // A frontmatter that cannot be read says all there is to say about its fields.
        Err(diagnostic) => skill.diagnostics.push(diagnostic),
    }
    skill
}

/// Splits raw text into (frontmatter YAML text, body), or says why it cannot:
/// [`Code::MissingFrontmatter`] when the first line is not `---`, [`Code::UnclosedFrontmatter`]
/// when no later line is. Fence lines may have trailing spaces and tabs and may end in CRLF.
/// The body starts after the closing fence's line break.
pub fn split_frontmatter(text: &str) -> Result<(&str, &str), Code> {
    let (first_line, after_open) = match text.split_once('\n') {
        Some((first_line, rest)) => (first_line, Some(rest)),
        None => (text, None),
    };
    if !is_fence(first_line) {
        return Err(Code::MissingFrontmatter);
    }
    let Some(after_open) = after_open else {
        return Err(Code::UnclosedFrontmatter);
    };
    let mut offset = 0;
    for line in after_open.split_inclusive('\n') {
        if is_fence(line.strip_suffix('\n').unwrap_or(line)) {
            return Ok((&after_open[..offset], &after_open[offset + line.len()..]));
        }
        offset += line.len();
    }
    Err(Code::UnclosedFrontmatter)
}

/// Returns true when `line` (without its `\n`) is a `---` fence.
fn is_fence(line: &str) -> bool {
    let line = line.strip_suffix('\r').unwrap_or(line);
    line.trim_end_matches([' ', '\t']) == "---"
}

/// Decodes the bytes as UTF-8 text with LF line endings, reporting what had to be changed.
fn decode(bytes: &[u8], diagnostics: &mut Vec<Diagnostic>) -> String {
    if bytes.len() > LARGE_SKILL_MD_BYTES {
        let message = format!(
            "SKILL.md is {} bytes, more than the {LARGE_SKILL_MD_BYTES} an agent should load at once",
            bytes.len()
        );
        diagnostics.push(Diagnostic::new(Code::LargeSkillMd, message));
    }
    let mut text = match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(error) => {
            let message = format!(
                "SKILL.md is not valid UTF-8 (first bad byte at offset {}); bad bytes were replaced with U+FFFD",
                error.valid_up_to()
            );
            diagnostics.push(Diagnostic::new(Code::InvalidUtf8, message));
            String::from_utf8_lossy(bytes).into_owned()
        }
    };
    if let Some(rest) = text.strip_prefix('\u{feff}') {
        let message = "SKILL.md starts with a UTF-8 byte order mark; it was ignored";
        diagnostics.push(Diagnostic::new(Code::ByteOrderMark, message));
        text = rest.to_owned();
    }
    if text.contains('\r') {
        // CRLF and lone CR (old Mac files) both end a line. Reading them in one pass keeps
        // normalising idempotent: "\r\r\n" is two line ends, not a CR left behind.
        let lines = text.matches("\r\n").count();
        let lone = text.matches('\r').count() - lines;
        let message = match (lines, lone) {
            (lines, 0) => format!("SKILL.md has {lines} CRLF line endings; they were read as LF"),
            (0, lone) => format!("SKILL.md has {lone} CR line endings; they were read as LF"),
            (lines, lone) => format!(
                "SKILL.md has {lines} CRLF and {lone} CR line endings; they were read as LF"
            ),
        };
        diagnostics.push(Diagnostic::new(Code::CrlfLineEndings, message));
        text = text.replace("\r\n", "\n").replace('\r', "\n");
    }
    text
}

/// Returns the diagnostic for a frontmatter fence problem found by [`split_frontmatter`].
fn fence_diagnostic(code: Code, text: &str) -> Diagnostic {
    if code == Code::UnclosedFrontmatter {
        return Diagnostic::new(
            code,
            "the frontmatter opened by `---` on line 1 is never closed by a `---` line",
        );
    }
    let first_line = text.lines().next().unwrap_or_default();
    let message = if first_line.trim().is_empty() {
        "SKILL.md has no frontmatter: the first line is empty, not `---`".to_owned()
    } else {
        format!(
            "SKILL.md has no frontmatter: the first line is {}, not `---`",
            quoted(first_line)
        )
    };
    Diagnostic::new(code, message)
}

/// Where in the frontmatter a field is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// The top level.
    Top,
    /// Under `metadata`.
    Metadata,
    /// Under `metadata.gaia`.
    MetadataGaia,
}

impl Place {
    /// Every place, in the order values are looked up.
    const ALL: [Place; 3] = [Place::Top, Place::Metadata, Place::MetadataGaia];

    /// Returns the keys leading to this place from the top level.
    fn keys(self) -> &'static [&'static str] {
        match self {
            Place::Top => &[],
            Place::Metadata => &["metadata"],
            Place::MetadataGaia => &["metadata", "gaia"],
        }
    }

    /// Returns the diagnostic field path of this place, e.g. `frontmatter.metadata`.
    fn path(self) -> String {
        let mut path = "frontmatter".to_owned();
        for key in self.keys() {
            path.push('.');
            path.push_str(key);
        }
        path
    }

    /// Returns the diagnostic field path of `key` at this place.
    fn field(self, key: &str) -> String {
        format!("{}.{key}", self.path())
    }

    /// Returns the mapping at this place, when there is one.
    fn table(self, frontmatter: &Map<String, Value>) -> Option<&Map<String, Value>> {
        let mut table = frontmatter;
        for key in self.keys() {
            table = table.get(*key)?.as_object()?;
        }
        Some(table)
    }

    /// Returns the scalar `key` of `table` (the mapping at this place) as text, reading
    /// numbers as written in `yaml`.
    fn scalar<'a>(self, table: &'a Map<String, Value>, key: &str, yaml: &str) -> RawScalar<'a> {
        match table.get(key) {
            None => RawScalar::Absent,
            Some(Value::String(text)) => RawScalar::Text(text.clone()),
            Some(Value::Number(number)) => {
                let mut path = self.keys().to_vec();
                path.push(key);
                let written = yaml::scalar_as_written(yaml, &path);
                RawScalar::Text(written.unwrap_or_else(|| number.to_string()))
            }
            Some(other) => RawScalar::Other(other),
        }
    }
}

/// A field read as a scalar.
#[derive(Debug, PartialEq)]
enum RawScalar<'a> {
    /// The field is not there.
    Absent,
    /// A string, or a number as written.
    Text(String),
    /// Anything else: null, a boolean, a list or a mapping.
    Other(&'a Value),
}

/// Checks the frontmatter fields and fills in the values the record uses.
fn check_fields(
    frontmatter: &Map<String, Value>,
    yaml: &str,
    expected_name: Option<&str>,
    skill: &mut SkillMd,
) {
    let diagnostics = &mut skill.diagnostics;
    check_unknown_fields(frontmatter, diagnostics);
    skill.name = check_name(frontmatter.get("name"), expected_name, diagnostics);
    skill.description = check_description(frontmatter.get("description"), diagnostics);
    if let Some(license) = frontmatter
        .get("license")
        .filter(|value| !value.is_string())
    {
        diagnostics.push(wrong_type("frontmatter.license", "a string", license));
    }
    if let Some(compatibility) = frontmatter.get("compatibility") {
        check_compatibility(compatibility, diagnostics);
    }
    if let Some(metadata) = frontmatter
        .get("metadata")
        .filter(|value| !value.is_object())
    {
        diagnostics.push(wrong_type("frontmatter.metadata", "a mapping", metadata));
    }
    if let Some(tools) = frontmatter.get("allowed-tools") {
        check_allowed_tools(tools, diagnostics);
    }
    gaia::check(frontmatter, yaml, diagnostics);

    skill.license = first_text(frontmatter, "license");
    skill.version = first_version(frontmatter, yaml);
    skill.tags = collect_tags(frontmatter);
}

/// Reports every top-level field the specification does not define.
fn check_unknown_fields(frontmatter: &Map<String, Value>, diagnostics: &mut Vec<Diagnostic>) {
    let mut found = Vec::new();
    for key in frontmatter.keys() {
        if SPEC_FIELDS.contains(&key.as_str()) {
            continue;
        }
        let who_reads_it = if gaia::GAIA_FIELDS.contains(&key.as_str()) {
            "GAIA reads it, other clients ignore it"
        } else if CLAUDE_CODE_FIELDS.contains(&key.as_str()) {
            "Claude Code reads it, other clients ignore it"
        } else {
            "clients ignore it"
        };
        let message = format!(
            "field {} is not in the Agent Skills specification; {who_reads_it}",
            quoted(key)
        );
        found.push(Diagnostic::new(Code::UnknownField, message).at(format!("frontmatter.{key}")));
    }
    diagnostics.extend(capped(found, "frontmatter"));
}

/// Checks `name` and returns it, trimmed, when it is a non-blank string.
fn check_name(
    name: Option<&Value>,
    expected_name: Option<&str>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<String> {
    let name = match name {
        None | Some(Value::Null) => {
            diagnostics.push(missing_name());
            return None;
        }
        Some(Value::String(name)) => name,
        Some(other) => {
            diagnostics.push(wrong_type("frontmatter.name", "a string", other));
            return None;
        }
    };
    if let Some(problem) = SkillName::problem(name) {
        let message = format!("invalid skill name {}: {problem}", quoted(name));
        diagnostics.push(Diagnostic::new(Code::InvalidName, message).at("frontmatter.name"));
    }
    if let Some(expected) = expected_name
        && name != expected
    {
        let message = format!(
            "name {} differs from the skill's directory or index name {}",
            quoted(name),
            quoted(expected)
        );
        diagnostics.push(Diagnostic::new(Code::NameMismatch, message).at("frontmatter.name"));
    }
    let name = name.trim();
    (!name.is_empty()).then(|| name.to_owned())
}

/// Returns the diagnostic for a frontmatter without `name`.
fn missing_name() -> Diagnostic {
    Diagnostic::new(Code::MissingName, "frontmatter has no name").at("frontmatter.name")
}

/// Returns the diagnostic for a frontmatter without a usable `description`.
fn missing_description(message: &str) -> Diagnostic {
    Diagnostic::new(Code::MissingDescription, message).at("frontmatter.description")
}

/// Checks `description` and returns it, trimmed, when it is a non-blank string.
fn check_description(
    description: Option<&Value>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<String> {
    let description = match description {
        None | Some(Value::Null) => {
            diagnostics.push(missing_description("frontmatter has no description"));
            return None;
        }
        Some(Value::String(description)) => description.trim(),
        Some(other) => {
            diagnostics.push(wrong_type("frontmatter.description", "a string", other));
            return None;
        }
    };
    if description.is_empty() {
        diagnostics.push(missing_description("description is empty"));
        return None;
    }
    let chars = description.chars().count();
    if chars > MAX_DESCRIPTION_CHARS {
        let message =
            format!("description is {chars} characters long (at most {MAX_DESCRIPTION_CHARS})");
        let diagnostic = Diagnostic::new(Code::DescriptionTooLong, message);
        diagnostics.push(diagnostic.at("frontmatter.description"));
    }
    Some(description.to_owned())
}

/// Checks that `compatibility` is a string of 1 to [`MAX_COMPATIBILITY_CHARS`] characters.
fn check_compatibility(compatibility: &Value, diagnostics: &mut Vec<Diagnostic>) {
    let field = "frontmatter.compatibility";
    let Some(compatibility) = compatibility.as_str() else {
        diagnostics.push(wrong_type(field, "a string", compatibility));
        return;
    };
    let chars = compatibility.trim().chars().count();
    if chars == 0 {
        let message = "compatibility is empty; remove it or say what the skill needs";
        diagnostics.push(Diagnostic::new(Code::InvalidField, message).at(field));
    } else if chars > MAX_COMPATIBILITY_CHARS {
        let message =
            format!("compatibility is {chars} characters long (at most {MAX_COMPATIBILITY_CHARS})");
        diagnostics.push(Diagnostic::new(Code::CompatibilityTooLong, message).at(field));
    }
}

/// Checks that `allowed-tools` is a string or a list of strings.
fn check_allowed_tools(tools: &Value, diagnostics: &mut Vec<Diagnostic>) {
    let field = "frontmatter.allowed-tools";
    let items = match tools {
        Value::String(_) => return,
        Value::Array(items) => items,
        other => {
            diagnostics.push(wrong_type(field, "a string or a list of strings", other));
            return;
        }
    };
    let mut found = Vec::new();
    for (index, item) in items.iter().enumerate() {
        if !item.is_string() {
            found.push(wrong_type(&format!("{field}[{index}]"), "a string", item));
        }
    }
    diagnostics.extend(capped(found, field));
}

/// Returns the first non-blank string `key` at the top level, in `metadata`, then in
/// `metadata.gaia`, trimmed.
fn first_text(frontmatter: &Map<String, Value>, key: &str) -> Option<String> {
    for place in Place::ALL {
        let text = place
            .table(frontmatter)
            .and_then(|table| table.get(key))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|text| !text.is_empty());
        if let Some(text) = text {
            return Some(text.to_owned());
        }
    }
    None
}

/// Returns the first non-blank version, string or number, at the top level, in `metadata`,
/// then in `metadata.gaia`, trimmed.
fn first_version(frontmatter: &Map<String, Value>, yaml: &str) -> Option<String> {
    for place in Place::ALL {
        let Some(table) = place.table(frontmatter) else {
            continue;
        };
        if let RawScalar::Text(version) = place.scalar(table, "version", yaml) {
            let version = version.trim();
            if !version.is_empty() {
                return Some(version.to_owned());
            }
        }
    }
    None
}

/// Returns the tags from every place, trimmed and deduplicated, in order. A string holds
/// several tags separated by commas, or by spaces when it has no comma.
fn collect_tags(frontmatter: &Map<String, Value>) -> Vec<String> {
    let mut tags = Vec::new();
    let mut seen = HashSet::new();
    let mut add = |tag: &str| {
        let tag = tag.trim();
        if !tag.is_empty() && seen.insert(tag.to_owned()) {
            tags.push(tag.to_owned());
        }
    };
    for place in Place::ALL {
        match place.table(frontmatter).and_then(|table| table.get("tags")) {
            Some(Value::String(text)) if text.contains(',') => text.split(',').for_each(&mut add),
            Some(Value::String(text)) => text.split_whitespace().for_each(&mut add),
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).for_each(&mut add),
            _ => {}
        }
    }
    tags
}

/// Returns an [`Code::InvalidField`] diagnostic for a value of the wrong type at `field`.
fn wrong_type(field: &str, expected: &str, value: &Value) -> Diagnostic {
    let name = field.strip_prefix("frontmatter.").unwrap_or(field);
    let message = format!("field {name:?} must be {expected}, not {}", kind_of(value));
    Diagnostic::new(Code::InvalidField, message).at(field)
}

/// Returns what kind of JSON value `value` is, for messages.
fn kind_of(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(flag) => format!("a boolean ({flag})"),
        Value::Number(number) => format!("a number ({number})"),
        Value::String(_) => "a string".to_owned(),
        Value::Array(_) => "a list".to_owned(),
        Value::Object(_) => "a mapping".to_owned(),
    }
}

/// Returns `text` quoted for a message, cut to 80 characters so that a hostile value cannot
/// bloat the report.
fn quoted(text: &str) -> String {
    const MAX_SHOWN_CHARS: usize = 80;
    match text.char_indices().nth(MAX_SHOWN_CHARS) {
        Some((cut, _)) => format!("{:?}…", &text[..cut]),
        None => format!("{text:?}"),
    }
}

/// Returns at most [`MAX_LIST_DIAGNOSTICS`] of `found`, plus one diagnostic counting the rest,
/// with the code and severity of the first one left out.
fn capped(found: Vec<Diagnostic>, field: &str) -> Vec<Diagnostic> {
    let extra = found.len().saturating_sub(MAX_LIST_DIAGNOSTICS);
    let mut found = found.into_iter();
    let mut kept: Vec<Diagnostic> = found.by_ref().take(MAX_LIST_DIAGNOSTICS).collect();
    if let Some(mut summary) = found.next() {
        summary.message = format!("{extra} more problems like the ones above in {field}");
        summary.field = Some(field.to_owned());
        kept.push(summary);
    }
    kept
}

#[cfg(test)]
mod tests {
    use proptest::prelude::{Just, Strategy, any, prop_assert, prop_assert_eq, prop_oneof};

    use super::*;
    use crate::diagnostic::Severity;

    /// The diagnostics expected for one case: code and field, in order.
    type Expected<'a> = Vec<(Code, Option<&'a str>)>;
    /// What [`split_frontmatter`] returns.
    type Split<'a> = Result<(&'a str, &'a str), Code>;

    /// Returns each diagnostic's code and field, in order.
    fn found(skill: &SkillMd) -> Expected<'_> {
        skill
            .diagnostics
            .iter()
            .map(|diagnostic| (diagnostic.code, diagnostic.field.as_deref()))
            .collect()
    }

    /// Returns the diagnostics as `severity code field: message` lines, for snapshots.
    fn rendered(skill: &SkillMd) -> String {
        let mut out = String::new();
        for diagnostic in &skill.diagnostics {
            let field = diagnostic.field.as_deref().unwrap_or("-");
            out.push_str(&format!(
                "{} {} {field}: {}\n",
                diagnostic.severity, diagnostic.code, diagnostic.message
            ));
        }
        out
    }

    #[test]
    fn lone_carriage_returns_end_lines_once() {
        let first = parse(
            b"---\nname: pdf\ndescription: d\n---\na\r\r\nb\rc\n",
            Some("pdf"),
        );
        assert_eq!(first.body, "a\n\nb\nc\n");
        let again = parse(
            format!("---\nname: pdf\ndescription: d\n---\n{}", first.body).as_bytes(),
            Some("pdf"),
        );
        assert_eq!(again.body, first.body);
    }

    #[test]
    fn splits_frontmatter() {
        let cases: [(&str, Split<'_>); 13] = [
            ("---\nname: a\n---\nbody\n", Ok(("name: a\n", "body\n"))),
            ("---\n---\n", Ok(("", ""))),
            ("---\n---", Ok(("", ""))),
            (
                "---  \t\nname: a\n--- \n\n# T\n",
                Ok(("name: a\n", "\n# T\n")),
            ),
            (
                "---\r\nname: a\r\n---\r\nbody\r\n",
                Ok(("name: a\r\n", "body\r\n")),
            ),
            ("---\na: 1\n---\nb\n---\nc\n", Ok(("a: 1\n", "b\n---\nc\n"))),
            (
                "---\nkey: ----\n ---x\n---\n",
                Ok(("key: ----\n ---x\n", "")),
            ),
            ("# Title\n", Err(Code::MissingFrontmatter)),
            ("", Err(Code::MissingFrontmatter)),
            ("\n---\nname: a\n---\n", Err(Code::MissingFrontmatter)),
            (" ---\nname: a\n---\n", Err(Code::MissingFrontmatter)),
            ("---\nname: a\n", Err(Code::UnclosedFrontmatter)),
            ("---", Err(Code::UnclosedFrontmatter)),
        ];
        for (text, expected) in cases {
            assert_eq!(split_frontmatter(text), expected, "{text:?}");
        }
    }

    #[test]
    fn diagnostics_per_rule() {
        use Code::*;
        const OK: &str = "---\nname: pdf\ndescription: Reads PDFs.\n---\nBody\n";
        let long_description = format!(
            "---\nname: pdf\ndescription: {}\n---\n",
            "é".repeat(MAX_DESCRIPTION_CHARS + 1)
        );
        let max_description = format!(
            "---\nname: pdf\ndescription: {}\n---\n",
            "é".repeat(MAX_DESCRIPTION_CHARS)
        );
        let long_compatibility = format!(
            "---\nname: pdf\ndescription: d\ncompatibility: {}\n---\n",
            "x".repeat(MAX_COMPATIBILITY_CHARS + 1)
        );
        let large = format!("{OK}{}", "x".repeat(LARGE_SKILL_MD_BYTES));
        let many_unknown: String = (0..MAX_LIST_DIAGNOSTICS + 5)
            .map(|index| format!("extra{index}: 1\n"))
            .collect();
        let many_unknown = format!("---\nname: pdf\ndescription: d\n{many_unknown}---\n");
        let extra_fields: Vec<String> = (0..MAX_LIST_DIAGNOSTICS)
            .map(|index| format!("frontmatter.extra{index}"))
            .collect();
        let mut capped_unknown: Expected<'_> = extra_fields
            .iter()
            .map(|field| (UnknownField, Some(field.as_str())))
            .collect();
        // The fields past the cap are counted in one diagnostic on the whole frontmatter.
        capped_unknown.push((UnknownField, Some("frontmatter")));

        let cases: Vec<(&str, Vec<u8>, Option<&str>, Expected<'_>)> = vec![
            ("valid", OK.into(), Some("pdf"), vec![]),
            ("valid, no expected name", OK.into(), None, vec![]),
            (
                "deeply nested frontmatter",
                format!("---\nname: {}\n---\n", "[".repeat(10_000)).into(),
                Some("pdf"),
                vec![(YamlLimit, Some("frontmatter"))],
            ),
            (
                "every spec field",
                b"---\nname: pdf\ndescription: d\nlicense: MIT\ncompatibility: git\nmetadata:\n  a: b\nallowed-tools: Bash(git:*) Read\n---\n".to_vec(),
                Some("pdf"),
                vec![],
            ),
            (
                "invalid utf-8",
                b"---\nname: pdf\ndescription: caf\xe9\n---\n".to_vec(),
                Some("pdf"),
                vec![(InvalidUtf8, None)],
            ),
            (
                "byte order mark",
                [b"\xef\xbb\xbf".as_slice(), OK.as_bytes()].concat(),
                Some("pdf"),
                vec![(ByteOrderMark, None)],
            ),
            ("crlf", OK.replace('\n', "\r\n").into(), Some("pdf"), vec![(CrlfLineEndings, None)]),
            // Found by the normaliser's idempotence property: "\r\r\n" is two line ends.
            ("lone cr", OK.replace('\n', "\r").into(), Some("pdf"), vec![(CrlfLineEndings, None)]),
            ("large", large.into(), Some("pdf"), vec![(LargeSkillMd, None)]),
            (
                "no frontmatter",
                b"# PDF\n\nReads PDFs.\n".to_vec(),
                Some("pdf"),
                vec![
                    (MissingFrontmatter, None),
                    (MissingName, Some("frontmatter.name")),
                    (MissingDescription, Some("frontmatter.description")),
                ],
            ),
            (
                "empty file",
                vec![],
                None,
                vec![
                    (MissingFrontmatter, None),
                    (MissingName, Some("frontmatter.name")),
                    (MissingDescription, Some("frontmatter.description")),
                ],
            ),
            (
                "unclosed",
                b"---\nname: pdf\ndescription: d\n".to_vec(),
                Some("pdf"),
                vec![(UnclosedFrontmatter, None)],
            ),
            (
                "fences with trailing blanks",
                b"--- \t\nname: pdf\ndescription: d\n---  \n".to_vec(),
                Some("pdf"),
                vec![],
            ),
            (
                "empty frontmatter",
                b"---\n---\n".to_vec(),
                Some("pdf"),
                vec![
                    (MissingName, Some("frontmatter.name")),
                    (MissingDescription, Some("frontmatter.description")),
                ],
            ),
            (
                "comment-only frontmatter",
                b"---\n# nothing yet\n---\n".to_vec(),
                None,
                vec![
                    (MissingName, Some("frontmatter.name")),
                    (MissingDescription, Some("frontmatter.description")),
                ],
            ),
            (
                "invalid yaml",
                b"---\nname: pdf\ndescription: a: b\n---\n".to_vec(),
                Some("pdf"),
                vec![(InvalidYaml, Some("frontmatter"))],
            ),
            (
                "duplicate key",
                b"---\nname: pdf\nname: pdf\ndescription: d\n---\n".to_vec(),
                Some("pdf"),
                vec![(InvalidYaml, Some("frontmatter"))],
            ),
            (
                "two documents",
                b"---\nname: pdf\n...\ndescription: d\n---\n".to_vec(),
                Some("pdf"),
                vec![(InvalidYaml, Some("frontmatter"))],
            ),
            (
                "list frontmatter",
                b"---\n- name\n- description\n---\n".to_vec(),
                Some("pdf"),
                vec![(FrontmatterNotMapping, Some("frontmatter"))],
            ),
            (
                "scalar frontmatter",
                b"---\njust text\n---\n".to_vec(),
                Some("pdf"),
                vec![(FrontmatterNotMapping, Some("frontmatter"))],
            ),
            (
                "unknown fields",
                b"---\nname: pdf\ndescription: d\nversion: 1.0.0\nargument-hint: <file>\nrequires: [x]\n---\n".to_vec(),
                Some("pdf"),
                vec![
                    (UnknownField, Some("frontmatter.version")),
                    (UnknownField, Some("frontmatter.argument-hint")),
                    (UnknownField, Some("frontmatter.requires")),
                ],
            ),
            ("many unknown fields", many_unknown.into(), None, capped_unknown),
            (
                "missing name",
                b"---\ndescription: d\n---\n".to_vec(),
                Some("pdf"),
                vec![(MissingName, Some("frontmatter.name"))],
            ),
            (
                "null name",
                b"---\nname:\ndescription: d\n---\n".to_vec(),
                Some("pdf"),
                vec![(MissingName, Some("frontmatter.name"))],
            ),
            (
                "number name",
                b"---\nname: 42\ndescription: d\n---\n".to_vec(),
                Some("pdf"),
                vec![(InvalidField, Some("frontmatter.name"))],
            ),
            (
                "invalid name that matches",
                b"---\nname: PDF\ndescription: d\n---\n".to_vec(),
                Some("PDF"),
                vec![(InvalidName, Some("frontmatter.name"))],
            ),
            (
                "invalid name that differs",
                b"---\nname: PDF Tools\ndescription: d\n---\n".to_vec(),
                Some("pdf-tools"),
                vec![
                    (InvalidName, Some("frontmatter.name")),
                    (NameMismatch, Some("frontmatter.name")),
                ],
            ),
            (
                "valid name that differs",
                b"---\nname: pdf\ndescription: d\n---\n".to_vec(),
                Some("pdf-tools"),
                vec![(NameMismatch, Some("frontmatter.name"))],
            ),
            (
                "empty name",
                b"---\nname: ''\ndescription: d\n---\n".to_vec(),
                None,
                vec![(InvalidName, Some("frontmatter.name"))],
            ),
            (
                "missing description",
                b"---\nname: pdf\n---\n".to_vec(),
                Some("pdf"),
                vec![(MissingDescription, Some("frontmatter.description"))],
            ),
            (
                "null description",
                b"---\nname: pdf\ndescription: ~\n---\n".to_vec(),
                Some("pdf"),
                vec![(MissingDescription, Some("frontmatter.description"))],
            ),
            (
                "blank description",
                b"---\nname: pdf\ndescription: '  '\n---\n".to_vec(),
                Some("pdf"),
                vec![(MissingDescription, Some("frontmatter.description"))],
            ),
            (
                "list description",
                b"---\nname: pdf\ndescription: [a, b]\n---\n".to_vec(),
                Some("pdf"),
                vec![(InvalidField, Some("frontmatter.description"))],
            ),
            (
                "long description",
                long_description.into(),
                Some("pdf"),
                vec![(DescriptionTooLong, Some("frontmatter.description"))],
            ),
            ("longest description", max_description.into(), Some("pdf"), vec![]),
            (
                "number compatibility",
                b"---\nname: pdf\ndescription: d\ncompatibility: 3\n---\n".to_vec(),
                Some("pdf"),
                vec![(InvalidField, Some("frontmatter.compatibility"))],
            ),
            (
                "empty compatibility",
                b"---\nname: pdf\ndescription: d\ncompatibility: ''\n---\n".to_vec(),
                Some("pdf"),
                vec![(InvalidField, Some("frontmatter.compatibility"))],
            ),
            (
                "long compatibility",
                long_compatibility.into(),
                Some("pdf"),
                vec![(CompatibilityTooLong, Some("frontmatter.compatibility"))],
            ),
            (
                "list metadata",
                b"---\nname: pdf\ndescription: d\nmetadata: [a]\n---\n".to_vec(),
                Some("pdf"),
                vec![(InvalidField, Some("frontmatter.metadata"))],
            ),
            (
                "list of allowed tools",
                b"---\nname: pdf\ndescription: d\nallowed-tools: [Read, Bash]\n---\n".to_vec(),
                Some("pdf"),
                vec![],
            ),
            (
                "allowed tools with a number",
                b"---\nname: pdf\ndescription: d\nallowed-tools: [Read, 5]\n---\n".to_vec(),
                Some("pdf"),
                vec![(InvalidField, Some("frontmatter.allowed-tools[1]"))],
            ),
            (
                "allowed tools mapping",
                b"---\nname: pdf\ndescription: d\nallowed-tools: {Read: true}\n---\n".to_vec(),
                Some("pdf"),
                vec![(InvalidField, Some("frontmatter.allowed-tools"))],
            ),
            (
                "list license",
                b"---\nname: pdf\ndescription: d\nlicense: [MIT]\n---\n".to_vec(),
                Some("pdf"),
                vec![(InvalidField, Some("frontmatter.license"))],
            ),
        ];
        for (label, bytes, expected_name, expected) in cases {
            let skill = parse(&bytes, expected_name);
            assert_eq!(found(&skill), expected, "{label}: {:#?}", skill.diagnostics);
        }
    }

    #[test]
    fn messages_name_the_input() {
        let cases: [(&[u8], Option<&str>); 8] = [
            (b"# Ahrefs\n", Some("ahrefs")),
            (b"\xef\xbb\xbf---\r\nname: Ahrefs Automation\r\ndescription: ''\r\n---\r\n\xff", Some("ahrefs-automation")),
            (b"---\nname: pdf\n", None),
            (b"---\nname: pdf\ndescription: a: b\n---\n", None),
            (b"---\nname: pdf\nname: pdf\n---\n", None),
            (b"---\n- a\n---\n", None),
            (
                b"---\nname: 7\ndescription: [d]\ncompatibility: ''\nmetadata: x\nlicense: {a: 1}\nallowed-tools: 1\nwhen_to_use: x\nuser-invocable: true\nauthor: me\n---\n",
                None,
            ),
            (
                b"---\nname: p\ndescription: d\nmetadata:\n  gaia:\n    version: v1.0\n    permissions: [net:read, shell:read, 'filesystem:read:']\n    security_tier: Verified\n    tools: [{description: d}]\n---\n",
                None,
            ),
        ];
        let mut out = String::new();
        for (bytes, expected_name) in cases {
            out.push_str(&rendered(&parse(bytes, expected_name)));
            out.push('\n');
        }
        insta::assert_snapshot!(out, @r##"
        error missing_frontmatter -: SKILL.md has no frontmatter: the first line is "# Ahrefs", not `---`
        error missing_name frontmatter.name: frontmatter has no name
        error missing_description frontmatter.description: frontmatter has no description

        error invalid_utf8 -: SKILL.md is not valid UTF-8 (first bad byte at offset 55); bad bytes were replaced with U+FFFD
        info byte_order_mark -: SKILL.md starts with a UTF-8 byte order mark; it was ignored
        info crlf_line_endings -: SKILL.md has 4 CRLF line endings; they were read as LF
        error invalid_name frontmatter.name: invalid skill name "Ahrefs Automation": has uppercase letters
        error name_mismatch frontmatter.name: name "Ahrefs Automation" differs from the skill's directory or index name "ahrefs-automation"
        error missing_description frontmatter.description: description is empty

        error unclosed_frontmatter -: the frontmatter opened by `---` on line 1 is never closed by a `---` line

        error invalid_yaml frontmatter: invalid YAML in frontmatter: line 3 column 15: mapping values are not allowed in this context

        error invalid_yaml frontmatter: invalid YAML in frontmatter: line 3 column 1: duplicate mapping key `name` is not allowed here

        error frontmatter_not_mapping frontmatter: frontmatter is a list, not a mapping of `key: value` fields

        error unknown_field frontmatter.when_to_use: field "when_to_use" is not in the Agent Skills specification; clients ignore it
        error unknown_field frontmatter.user-invocable: field "user-invocable" is not in the Agent Skills specification; Claude Code reads it, other clients ignore it
        error unknown_field frontmatter.author: field "author" is not in the Agent Skills specification; GAIA reads it, other clients ignore it
        error invalid_field frontmatter.name: field "name" must be a string, not a number (7)
        error invalid_field frontmatter.description: field "description" must be a string, not a list
        error invalid_field frontmatter.license: field "license" must be a string, not a mapping
        error invalid_field frontmatter.compatibility: compatibility is empty; remove it or say what the skill needs
        error invalid_field frontmatter.metadata: field "metadata" must be a mapping, not a string
        error invalid_field frontmatter.allowed-tools: field "allowed-tools" must be a string or a list of strings, not a number (1)

        warning invalid_version frontmatter.metadata.gaia.version: version "v1.0" is not SemVer 2.0.0: drop the leading 'v'
        warning invalid_security_tier frontmatter.metadata.gaia.security_tier: security tier "Verified" is not one of verified, community, experimental
        warning invalid_permission frontmatter.metadata.gaia.permissions[0]: invalid permission "net:read": unknown domain "net" (expected one of filesystem, network, shell, desktop, mcp, env, database)
        warning invalid_permission frontmatter.metadata.gaia.permissions[1]: invalid permission "shell:read": shell allows the levels execute, none, not "read"
        warning invalid_permission frontmatter.metadata.gaia.permissions[2]: invalid permission "filesystem:read:": the scope after the last ':' is empty
        warning invalid_field frontmatter.metadata.gaia.tools[0]: tool 1 has no name
        "##);
    }

    #[test]
    fn reads_name_description_and_license() {
        let cases = [
            (
                "name: pdf\ndescription: Reads PDFs.\n",
                Some("pdf"),
                Some("Reads PDFs."),
                None,
            ),
            (
                "name: ' pdf '\ndescription: \"  padded \"\n",
                Some("pdf"),
                Some("padded"),
                None,
            ),
            (
                "name: Ahrefs Automation\n",
                Some("Ahrefs Automation"),
                None,
                None,
            ),
            ("name: ''\ndescription: ''\n", None, None, None),
            ("name: 5\ndescription: 5\n", None, None, None),
            (
                "description: >\n  Folded\n  text.\n",
                None,
                Some("Folded text."),
                None,
            ),
            (
                "description: |\n  Line one.\n  Line two.\n",
                None,
                Some("Line one.\nLine two."),
                None,
            ),
            ("license: ' MIT '\n", None, None, Some("MIT")),
            (
                "metadata:\n  license: Apache-2.0\n",
                None,
                None,
                Some("Apache-2.0"),
            ),
            (
                "license: ''\nmetadata:\n  license: X\n",
                None,
                None,
                Some("X"),
            ),
            (
                "license: [MIT]\nmetadata:\n  gaia:\n    license: BSD-3-Clause\n",
                None,
                None,
                Some("BSD-3-Clause"),
            ),
            (
                "license: MIT\nmetadata:\n  license: X\n",
                None,
                None,
                Some("MIT"),
            ),
        ];
        for (fields, name, description, license) in cases {
            let skill = parse(format!("---\n{fields}---\n").as_bytes(), None);
            assert_eq!(skill.name.as_deref(), name, "{fields:?}");
            assert_eq!(skill.description.as_deref(), description, "{fields:?}");
            assert_eq!(skill.license.as_deref(), license, "{fields:?}");
        }
    }

    #[test]
    fn reads_versions_as_written() {
        let cases = [
            ("version: 1.0.0\n", Some("1.0.0")),
            ("version: '1.0.0'\n", Some("1.0.0")),
            ("version: 1.0\n", Some("1.0")),
            ("version: 1.10\n", Some("1.10")),
            ("version: 2\n", Some("2")),
            ("version: 1e3\n", Some("1e3")),
            ("version: 010\n", Some("010")),
            ("version: ''\n", None),
            ("version: ~\n", None),
            ("version: true\n", None),
            ("metadata:\n  version: 1.10\n", Some("1.10")),
            ("metadata:\n  gaia:\n    version: 0.10\n", Some("0.10")),
            ("version: {a: 1}\nmetadata:\n  version: '3'\n", Some("3")),
            ("version: 1.0.0\nmetadata:\n  version: '3'\n", Some("1.0.0")),
            (
                "metadata:\n  version: [1]\n  gaia:\n    version: 2.0.0\n",
                Some("2.0.0"),
            ),
            // Through an alias, the number is still read as written.
            ("anchors:\n  v: &v 1.20\nversion: *v\n", Some("1.20")),
        ];
        for (fields, version) in cases {
            let skill = parse(format!("---\n{fields}---\n").as_bytes(), None);
            assert_eq!(skill.version.as_deref(), version, "{fields:?}");
        }
    }

    #[test]
    fn collects_tags() {
        let cases: [(&str, &[&str]); 7] = [
            ("tags: [a, b]\n", &["a", "b"]),
            ("tags: 'a, b c,, '\n", &["a", "b c"]),
            ("tags: a  b\tc\n", &["a", "b", "c"]),
            ("tags: [' a ', '', a, 1, [x]]\n", &["a"]),
            (
                "tags: [a, b]\nmetadata:\n  tags: b, c d\n  gaia:\n    tags: e f\n",
                &["a", "b", "c d", "e", "f"],
            ),
            ("tags: {a: 1}\nmetadata:\n  tags: [z]\n", &["z"]),
            ("name: x\n", &[]),
        ];
        for (fields, tags) in cases {
            let skill = parse(format!("---\n{fields}---\n").as_bytes(), None);
            assert_eq!(skill.tags, tags, "{fields:?}");
        }
    }

    #[test]
    fn keeps_the_body() {
        let cases: [(&[u8], &str); 7] = [
            (b"---\nname: a\n---\n# T\n\ntext\n", "# T\n\ntext\n"),
            (b"---\nname: a\n---\n\n# T\n", "\n# T\n"),
            (b"---\r\nname: a\r\n---\r\n# T\r\nx\r\n", "# T\nx\n"),
            (b"---\nname: a\n---", ""),
            (b"\xef\xbb\xbf# No frontmatter\n", "# No frontmatter\n"),
            (
                b"---\nname: a\n# never closed\n",
                "---\nname: a\n# never closed\n",
            ),
            (
                b"---\nname: [\n---\nkept despite the YAML\n",
                "kept despite the YAML\n",
            ),
        ];
        for (bytes, body) in cases {
            let skill = parse(bytes, None);
            assert_eq!(skill.body, body, "{:?}", String::from_utf8_lossy(bytes));
        }
        let skill = parse(b"---\nname: a\nlist: [1, x]\n---\n", None);
        let expected = serde_json::json!({"name": "a", "list": [1, "x"]});
        assert_eq!(Value::Object(skill.frontmatter), expected);
    }

    /// Returns how `skill` disagrees with its entry in the corpus manifest: the `issues` the
    /// corpus builder found, each mapped to the code it corresponds to, and its name.
    fn corpus_disagreements(skill: &SkillMd, entry: &Value, dir: &str) -> Vec<String> {
        use Code::*;
        // The codes the manifest speaks about; any other error is a disagreement.
        const CHECKED: [Code; 9] = [
            DescriptionTooLong,
            LargeSkillMd,
            InvalidName,
            MissingName,
            MissingFrontmatter,
            MissingDescription,
            CrlfLineEndings,
            NameMismatch,
            UnknownField,
        ];
        let mut problems = Vec::new();
        let mut expected_codes = Vec::new();
        let mut expected_unknown = std::collections::BTreeSet::new();
        let mut expected_in_message = Vec::new();
        let issues = entry["issues"].as_array().cloned().unwrap_or_default();
        for issue in issues.iter().filter_map(Value::as_str) {
            if let Some(chars) = issue.strip_prefix("description-over-1024-chars (") {
                let chars = chars.trim_end_matches(')');
                expected_codes.push(DescriptionTooLong);
                expected_in_message.push((DescriptionTooLong, format!("is {chars} characters")));
            } else if let Some(bytes) = issue.strip_prefix("large-SKILL.md (") {
                let bytes = bytes.trim_end_matches(" bytes)");
                expected_codes.push(LargeSkillMd);
                expected_in_message.push((LargeSkillMd, format!("is {bytes} bytes")));
            } else if let Some(name) = issue.strip_prefix("invalid-name: ") {
                let name = name.trim_matches('\'');
                expected_codes.push(InvalidName);
                expected_in_message.push((InvalidName, format!("{name:?}")));
            } else if let Some(keys) = issue.strip_prefix("non-spec-frontmatter-keys: ") {
                expected_unknown.extend(keys.split(", ").map(|key| format!("frontmatter.{key}")));
                expected_codes.push(UnknownField);
            } else if issue.starts_with("name-differs-from-source-folder") {
                // About the upstream repository's folder, which the corpus renamed.
            } else {
                match issue {
                    "missing-name" => expected_codes.push(MissingName),
                    "no-frontmatter" => expected_codes.push(MissingFrontmatter),
                    "missing-description" => expected_codes.push(MissingDescription),
                    "crlf-line-endings" => expected_codes.push(CrlfLineEndings),
                    other => problems.push(format!("issue {other:?} is not mapped to a code")),
                }
            }
        }
        let frontmatter_name = entry["frontmatter_name"].as_str();
        if frontmatter_name.is_some_and(|name| name != dir) {
            expected_codes.push(NameMismatch);
        }

        for code in CHECKED {
            let expected = expected_codes.contains(&code);
            let found = skill.diagnostics.iter().any(|d| d.code == code);
            if expected != found {
                problems.push(format!("{code}: expected {expected}, found {found}"));
            }
        }
        let unknown: std::collections::BTreeSet<String> = skill
            .diagnostics
            .iter()
            .filter(|d| d.code == UnknownField)
            .filter_map(|d| d.field.clone())
            .collect();
        if unknown != expected_unknown {
            problems.push(format!(
                "unknown fields {unknown:?}, expected {expected_unknown:?}"
            ));
        }
        for (code, text) in expected_in_message {
            let said = skill
                .diagnostics
                .iter()
                .any(|d| d.code == code && d.message.contains(&text));
            if !said {
                problems.push(format!("no {code} diagnostic says {text:?}"));
            }
        }
        for diagnostic in &skill.diagnostics {
            if diagnostic.severity == Severity::Error && !CHECKED.contains(&diagnostic.code) {
                problems.push(format!("unexpected error {diagnostic:?}"));
            }
        }
        if skill.name.as_deref() != frontmatter_name {
            problems.push(format!(
                "name {:?}, expected {frontmatter_name:?}",
                skill.name
            ));
        }
        problems
    }

    /// Parses every SKILL.md of the shared real-world corpus that sits in a folder (the rest
    /// are in archives) and checks the result against the corpus manifest.
    #[test]
    #[allow(clippy::print_stderr)]
    fn agrees_with_the_corpus_manifest() {
        let corpus = std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/corpus"
        ));
        let Ok(manifest) = std::fs::read(corpus.join("MANIFEST.json")) else {
            assert!(
                std::env::var_os("CI").is_none(),
                "../shared/corpus is missing: under CI the corpus tests run, they do not skip"
            );
            eprintln!("skipping: ../shared/corpus not found");
            return;
        };
        let manifest: Value = serde_json::from_slice(&manifest).expect("MANIFEST.json is JSON");
        let domains = manifest["domains"]
            .as_array()
            .expect("MANIFEST.json lists domains");
        let mut checked = 0;
        let mut disagreements = Vec::new();
        for domain in domains {
            let domain_name = domain["domain"].as_str().expect("a domain has a name");
            for entry in domain["skills"].as_array().expect("a domain lists skills") {
                let dir = entry["dir"].as_str().expect("a skill has a dir");
                let well_known = corpus.join(domain_name).join(".well-known");
                let path = ["skills", "agent-skills"]
                    .iter()
                    .map(|layout| well_known.join(layout).join(dir).join("SKILL.md"))
                    .find(|path| path.is_file());
                let Some(path) = path else {
                    continue;
                };
                let bytes = std::fs::read(&path).expect("a corpus SKILL.md is readable");
                let skill = parse(&bytes, Some(dir));
                checked += 1;
                for problem in corpus_disagreements(&skill, entry, dir) {
                    disagreements.push(format!("{}: {problem}", path.display()));
                }
            }
        }
        assert!(
            checked > 100,
            "only {checked} corpus skills found in folders"
        );
        assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
    }

    /// Returns a strategy for JSON values a few levels deep, with plain keys.
    fn json_values() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            (-1.0e6..1.0e6f64).prop_map(Value::from),
            "[ -~é€😀]{0,16}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map("[a-z_-]{1,8}", inner, 0..4)
                    .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        #[test]
        fn arbitrary_bytes_never_panic(
            bytes in proptest::collection::vec(any::<u8>(), 0..1024),
            expected_name in proptest::option::of("[a-z-]{0,8}"),
        ) {
            let skill = parse(&bytes, expected_name.as_deref());
            prop_assert_eq!(&skill, &parse(&bytes, expected_name.as_deref()));
            for diagnostic in &skill.diagnostics {
                prop_assert!(!diagnostic.message.is_empty());
            }
        }

        #[test]
        fn yaml_ish_frontmatter_never_panics(
            yaml in "([a-z0-9_-]{1,6}|[-:\\[\\]{}&*!|>'\"#,?%@`~. \t\n]){0,80}",
            body in "[^\r]{0,40}",
        ) {
            let text = format!("---\n{yaml}\n---\n{body}");
            let skill = parse(text.as_bytes(), Some("pdf"));
            prop_assert_eq!(&skill, &parse(text.as_bytes(), Some("pdf")));
            if let Some(name) = &skill.name {
                let written = skill.frontmatter.get("name").and_then(Value::as_str);
                prop_assert_eq!(written.map(str::trim), Some(name.as_str()));
            }
        }

        /// JSON is YAML, so a frontmatter written as JSON must parse back to the same value.
        #[test]
        fn json_frontmatter_round_trips(
            fields in proptest::collection::btree_map("[a-z_-]{1,8}", json_values(), 0..6),
        ) {
            let expected: Map<String, Value> = fields.into_iter().collect();
            let json = Value::Object(expected.clone()).to_string();
            let skill = parse(format!("---\n{json}\n---\n").as_bytes(), None);
            let parse_errors: Vec<&Diagnostic> = skill
                .diagnostics
                .iter()
                .filter(|d| matches!(d.code, Code::InvalidYaml | Code::YamlLimit))
                .collect();
            prop_assert!(parse_errors.is_empty(), "{json}: {parse_errors:?}");
            prop_assert_eq!(skill.frontmatter, expected, "{}", json);
        }
    }
}
