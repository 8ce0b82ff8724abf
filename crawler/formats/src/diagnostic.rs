//! Diagnostics: what was wrong with a piece of published input, said in a stable form.
//!
//! Every parser and the normaliser report problems as [`Diagnostic`]s instead of failing, so
//! that one bad entry never hides the others (docs/validate.md). A diagnostic carries a stable
//! snake_case [`Code`] that scripts and the API rely on, a severity, a human message that
//! names the bad input, and optionally the field it was found in.
//!
//! Severities are the *strict* view: the rules of the specifications, as the reference
//! validator `skills-ref` applies them. [`Code::lenient_severity`] gives the *lenient* view,
//! what agent clients actually accept; both verdicts are computed from the same list.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::skill::SkillId;

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing; nothing is wrong.
    Info,
    /// Something is off, but the meaning is clear and the input is still used.
    Warning,
    /// A rule is broken: the skill fails the verdict this severity belongs to.
    Error,
}

impl Severity {
    /// Returns the lowercase name used in JSON and in human output.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Declares [`Code`] with its wire name, strict severity, lenient severity and advice in one
/// table, so the four can never drift apart.
macro_rules! codes {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, $strict:ident, $lenient:ident, $hint:literal; )*) => {
        /// A stable identifier for a kind of problem. The snake_case names are a public
        /// contract: they appear in JSON reports, the API and `skillscout validate --json`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub enum Code {
            $( $(#[$doc])* #[serde(rename = $name)] $variant, )*
        }

        impl Code {
            /// Every code, in declaration order.
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];

            /// Returns the stable snake_case name of the code.
            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $name,)* }
            }

            /// Returns the severity under the strict verdict (the specifications' rules).
            pub fn strict_severity(self) -> Severity {
                match self { $(Code::$variant => Severity::$strict,)* }
            }

            /// Returns the severity under the lenient verdict (what agent clients accept).
            pub fn lenient_severity(self) -> Severity {
                match self { $(Code::$variant => Severity::$lenient,)* }
            }

            /// Returns one sentence of advice for a publisher who sees this code.
            pub fn hint(self) -> &'static str {
                match self { $(Code::$variant => $hint,)* }
            }
        }
    };
}

codes! {
    // Reading bytes.
    /// The input is not valid JSON.
    InvalidJson = "invalid_json", Error, Error,
        "fix the JSON syntax; `jq . FILE` shows where it breaks";
    /// The input is not valid UTF-8 text.
    InvalidUtf8 = "invalid_utf8", Error, Error,
        "save the file as UTF-8";
    /// The input is larger than the limit for its kind.
    TooLarge = "too_large", Error, Error,
        "make the file smaller than the limit, or split the skill";
    /// The JSON parses but is not shaped like the format it claims to be.
    InvalidIndex = "invalid_index", Error, Error,
        "publish an object with a `skills` array, as the specification shows";

    // Agent-skills discovery indexes.
    /// The index has no `$schema`, so it is read as v0.1.
    MissingSchema = "missing_schema", Info, Info,
        "add \"$schema\": \"https://schemas.agentskills.io/discovery/0.2.0/schema.json\" when you move to v0.2";
    /// The index names a `$schema` this version does not know; it is read as v0.2 anyway.
    UnknownSchema = "unknown_schema", Warning, Warning,
        "use the schema URI https://schemas.agentskills.io/discovery/0.2.0/schema.json";
    /// The index is a bare array instead of `{"skills": [...]}`.
    BareArray = "bare_array", Warning, Warning,
        "wrap the array in an object: {\"skills\": [...]}";
    /// A required field is missing.
    MissingField = "missing_field", Error, Error,
        "add the field; the specification lists the required ones";
    /// A field has the wrong JSON or YAML type, or a value outside its allowed set.
    InvalidField = "invalid_field", Error, Error,
        "give the field the type and value the specification requires";
    /// An entry's `type` is neither `skill-md` nor `archive`; the entry is skipped.
    UnknownType = "unknown_type", Warning, Warning,
        "use \"type\": \"skill-md\" for a single SKILL.md or \"archive\" for a .tar.gz or .zip";
    /// A URL cannot be parsed or resolved, or uses a scheme other than http(s).
    InvalidUrl = "invalid_url", Error, Error,
        "use an absolute https URL or a path relative to the index";
    /// The entry uses `sha256` instead of `digest`.
    Sha256Field = "sha256_field", Warning, Warning,
        "rename the field to `digest` and prefix the value with `sha256:`";
    /// The digest lacks the `sha256:` prefix or is not lowercase; it was normalised.
    DigestFormat = "digest_format", Warning, Warning,
        "write digests as `sha256:` followed by 64 lowercase hex characters";
    /// The digest is not a SHA-256 hex string at all.
    InvalidDigest = "invalid_digest", Error, Error,
        "compute the digest with `sha256sum` over the exact bytes you serve";
    /// No digest is published, so the content cannot be verified.
    DigestAbsent = "digest_absent", Info, Info,
        "publish a v0.2 index with a `digest` for each artifact";
    /// The fetched content does not match the published digest and was not used.
    DigestMismatch = "digest_mismatch", Error, Error,
        "re-compute the digest after every change to the artifact";
    /// Two entries of one index share a name or id; only the first is used (an MCP server's
    /// skills that share a name are all kept, the later ones under a suffixed key).
    DuplicateName = "duplicate_name", Error, Error,
        "give every skill in the index a unique name";
    /// The entry uses the pre-v0.1 `path` form instead of `files`.
    LegacyPath = "legacy_path", Info, Info,
        "list the skill's files in a `files` array, or move to the v0.2 index";
    /// A `files[]` path breaks the v0.1 path rules; it is never requested.
    InvalidPath = "invalid_path", Error, Error,
        "use relative paths of printable ASCII with `/` separators and no \\ ? # [ ]";
    /// A path escapes the skill directory (`..`, an absolute path, or a link outside it).
    PathTraversal = "path_traversal", Error, Error,
        "keep every path inside the skill directory";
    /// The skill has no `SKILL.md` where one is required.
    MissingSkillMd = "missing_skill_md", Error, Error,
        "put SKILL.md at the root of the skill and list it first in `files`";
    /// The index description is empty.
    EmptyDescription = "empty_description", Warning, Warning,
        "copy the SKILL.md description into the index entry";
    /// The index description differs from the SKILL.md description.
    DescriptionMismatch = "description_mismatch", Info, Info,
        "keep the index description equal to the SKILL.md description";

    // Names.
    /// A name breaks the naming rule (1-64 of a-z, 0-9 and single inner hyphens); agent
    /// clients (the vercel `skills` CLI, OpenCode) refuse such a skill.
    InvalidName = "invalid_name", Error, Error,
        "use 1-64 lowercase letters, digits and single hyphens, e.g. `pdf-processing`";
    /// The frontmatter name differs from the directory or index entry name.
    NameMismatch = "name_mismatch", Error, Warning,
        "make the frontmatter `name` equal to the skill's directory name";

    // SKILL.md.
    /// SKILL.md does not start with a `---` frontmatter fence.
    MissingFrontmatter = "missing_frontmatter", Error, Error,
        "start SKILL.md with a YAML block between two `---` lines holding name and description";
    /// The frontmatter has an opening fence but no closing one.
    UnclosedFrontmatter = "unclosed_frontmatter", Error, Error,
        "close the frontmatter with a line holding only `---`";
    /// The frontmatter is not valid YAML.
    InvalidYaml = "invalid_yaml", Error, Error,
        "fix the YAML syntax; quote values that contain `: ` or start with a special character";
    /// The frontmatter exceeds a parser limit (aliases, depth, size).
    YamlLimit = "yaml_limit", Error, Error,
        "frontmatter should be a small flat mapping; remove anchors, aliases and deep nesting";
    /// The frontmatter is valid YAML but not a mapping.
    FrontmatterNotMapping = "frontmatter_not_mapping", Error, Error,
        "write the frontmatter as `key: value` lines";
    /// `name` is missing from the frontmatter.
    MissingName = "missing_name", Error, Warning,
        "add `name:` with the skill's directory name";
    /// `description` is missing or empty in the frontmatter.
    MissingDescription = "missing_description", Error, Error,
        "add `description:` saying what the skill does and when to use it";
    /// The description is longer than 1024 characters.
    DescriptionTooLong = "description_too_long", Error, Warning,
        "shorten the description to at most 1024 characters; move detail into the body";
    /// `compatibility` is longer than 500 characters.
    CompatibilityTooLong = "compatibility_too_long", Error, Warning,
        "shorten `compatibility` to at most 500 characters";
    /// A top-level frontmatter field outside the specification.
    UnknownField = "unknown_field", Error, Info,
        "move extra fields under `metadata:`, which the specification reserves for them";
    /// SKILL.md starts with a UTF-8 byte order mark.
    ByteOrderMark = "byte_order_mark", Info, Info,
        "save SKILL.md as UTF-8 without a byte order mark";
    /// SKILL.md uses CRLF line endings.
    CrlfLineEndings = "crlf_line_endings", Info, Info,
        "use LF line endings";
    /// SKILL.md is large for a file loaded whole into an agent's context.
    LargeSkillMd = "large_skill_md", Warning, Info,
        "keep SKILL.md short and move reference material into files it links to";
    /// A GAIA permission does not follow `<domain>:<level>[:scope]`.
    InvalidPermission = "invalid_permission", Warning, Info,
        "write permissions as `<domain>:<level>[:scope]`, e.g. `network:read:*.example.com`";
    /// A GAIA `security_tier` outside verified, community, experimental.
    InvalidSecurityTier = "invalid_security_tier", Warning, Info,
        "use one of: verified, community, experimental";
    /// A version that is not SemVer 2.0.0.
    InvalidVersion = "invalid_version", Warning, Info,
        "use a SemVer version such as 1.2.0";

    // Archives.
    /// The archive cannot be read.
    InvalidArchive = "invalid_archive", Error, Error,
        "publish a valid .tar.gz or .zip";
    /// The archive format is neither .tar.gz nor .zip.
    UnsupportedArchive = "unsupported_archive", Error, Error,
        "publish .tar.gz or .zip and serve it as application/gzip or application/zip";
    /// The archive holds a symlink or hard link that leaves the skill directory.
    UnsafeLink = "unsafe_link", Error, Error,
        "replace links with the files they point to";
    /// A link inside the skill directory was not kept; skillscout does not follow links.
    SkippedLink = "skipped_link", Info, Info,
        "replace links with the files they point to; skillscout does not follow links";
    /// The archive holds a device, fifo or other special file.
    SpecialFile = "special_file", Error, Error,
        "archives may hold only regular files, directories and links inside the skill";
    /// The archive has more entries than allowed.
    TooManyEntries = "too_many_entries", Error, Error,
        "ship fewer files in the archive";
    /// SKILL.md is not at the archive root.
    SkillMdNotAtRoot = "skill_md_not_at_root", Error, Error,
        "put the skill's files at the archive root, not inside a wrapper folder";

    // Skill-sharing.
    /// Two entries of one skill-sharing index share an `id`.
    DuplicateId = "duplicate_id", Error, Error,
        "give every skill in the index a unique id";
    /// A `capability_type` outside plugin, api, knowledge, task; kept lowercased.
    UnknownCapabilityType = "unknown_capability_type", Warning, Warning,
        "use one of: plugin, api, knowledge, task";
    /// The protocol version is not one this version knows.
    UnknownProtocolVersion = "unknown_protocol_version", Warning, Warning,
        "declare \"protocol\": {\"version\": \"1.0.0\"}";
    /// The descriptor disagrees with its index entry.
    DescriptorMismatch = "descriptor_mismatch", Warning, Warning,
        "keep the descriptor's id, version, capability_type and access equal to the index entry";

    /// A skill-sharing descriptor is valid JSON but not a JSON object.
    InvalidDescriptor = "invalid_descriptor", Error, Error,
        "publish the descriptor as one JSON object holding the fields the specification lists";

    // Fetching.
    /// An artifact the index points at does not exist.
    NotFound = "not_found", Error, Error,
        "publish the file at the URL the index gives, or correct the URL";
    /// The URL answered 410 Gone: the publisher says it is gone for good. An index that
    /// answers so has its skills removed from the directory.
    Gone = "gone", Error, Error,
        "publish the file again at this URL if it was removed by mistake; 410 tells crawlers it is gone for good";
    /// An artifact was not fetched (another host, or not reachable from here); it is unchecked.
    Unfetched = "unfetched", Info, Info,
        "validate the origin URL instead of local files to check artifacts on other hosts";
    /// robots.txt does not allow the `skillscout` user agent to fetch the URL.
    RobotsDisallowed = "robots_disallowed", Error, Error,
        "allow `User-agent: skillscout` to fetch /.well-known/ and your skill files in robots.txt";
    /// robots.txt answered 429 or 5xx, or timed out: the whole origin is left alone this crawl.
    RobotsUnavailable = "robots_unavailable", Error, Error,
        "serve /robots.txt with 200 (or 404 when you have none); errors there block every crawler";
    /// The request did not finish within the time limit (connect or whole request).
    Timeout = "timeout", Error, Error,
        "answer well-known requests within a few seconds";
    /// The host could not be reached: no DNS answer, connection refused or reset.
    Unreachable = "unreachable", Error, Error,
        "check that the host name resolves and the server accepts connections";
    /// The destination is a loopback, private, link-local or other non-public address.
    RefusedDestination = "refused_destination", Error, Error,
        "publish skills at a public address; URLs pointing into private networks are never fetched";
    /// A chain of redirects was longer than allowed.
    TooManyRedirects = "too_many_redirects", Error, Error,
        "redirect at most 5 times, ideally once, to the final URL";
    /// A redirect led back to a URL already visited.
    RedirectLoop = "redirect_loop", Error, Error,
        "fix the redirect rules so that they end at a resource";
    /// A redirect had no usable `Location` (missing, unparseable, or not http(s)).
    InvalidRedirect = "invalid_redirect", Error, Error,
        "send an absolute or relative http(s) URL in `Location`";
    /// The server answered with a status that is neither success, redirect nor not-found.
    HttpStatus = "http_status", Error, Error,
        "serve well-known files and the artifacts they list with status 200";
    /// The server kept answering 429 or 503, or asked to wait longer than the crawler waits.
    RateLimited = "rate_limited", Error, Error,
        "allow at least one request per second from skillscout, or a short Retry-After";
    /// The response was malformed: a body shorter than its Content-Length, a broken
    /// compressed stream, or invalid HTTP.
    InvalidResponse = "invalid_response", Error, Error,
        "send complete responses whose Content-Length and Content-Encoding match the body";

    // MCP servers (the Skills Extension).
    /// A file read from an MCP server has a size other than its listing says; the content was
    /// not used.
    SizeMismatch = "size_mismatch", Error, Error,
        "list each file with the exact size in bytes of what `resources/read` returns";
    /// The frontmatter of the SKILL.md read differs from the frontmatter `skills/list` gives;
    /// the content was not used.
    FrontmatterMismatch = "frontmatter_mismatch", Error, Error,
        "build the `skills/list` frontmatter from the SKILL.md you serve, field by field";
    /// The MCP server does not declare the Skills Extension (or resources), so it has no
    /// skills to read.
    NoSkillsExtension = "no_skills_extension", Info, Info,
        "declare `io.modelcontextprotocol/skills` under `capabilities.extensions`, and `resources`";
    /// The MCP server answered with a JSON-RPC error, or with a message that is not the
    /// response the protocol defines.
    McpProtocol = "mcp_protocol", Error, Error,
        "answer `server/discover` (or `initialize`), `skills/list` and `resources/read` as the MCP specification defines";
    /// A skill lists its files as `"dynamic"`: no digest to verify, so only SKILL.md is read.
    DynamicResources = "dynamic_resources", Info, Info,
        "list every file with its digest and size so that its content can be verified";

    // Seeds.
    /// A seed line is not a host, an origin or an origin with a path.
    InvalidSeed = "invalid_seed", Error, Error,
        "write one host (`example.com`), origin or origin with path per line";
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem found in published input.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Diagnostic {
    /// The strict severity; see [`Code::lenient_severity`] for the lenient one.
    pub severity: Severity,
    /// The stable code.
    pub code: Code,
    /// What was wrong, naming the bad input.
    pub message: String,
    /// Where: a field path such as `skills[2].digest` or `frontmatter.name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The record it concerns, for a diagnostic kept outside the record (on its publisher's
    /// domain), so that whoever may not see the record does not see it either.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<SkillId>,
}

impl Diagnostic {
    /// Returns a diagnostic with the code's strict severity.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: code.strict_severity(),
            code,
            message: message.into(),
            field: None,
            record: None,
        }
    }

    /// Returns the diagnostic with the record it concerns.
    pub fn about(mut self, record: SkillId) -> Self {
        self.record = Some(record);
        self
    }

    /// Returns the diagnostic with the field it concerns.
    pub fn at(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// Returns the diagnostic lowered to a warning: the input is still used, as for extension
    /// fields that are not part of the core specification.
    pub fn as_warning(mut self) -> Self {
        self.severity = self.severity.min(Severity::Warning);
        self
    }

    /// Returns the severity under the given verdict.
    pub fn severity_for(&self, verdict: VerdictKind) -> Severity {
        match verdict {
            VerdictKind::Strict => self.severity,
            VerdictKind::Lenient => self.code.lenient_severity().min(self.severity),
        }
    }
}

/// Which of the two verdicts to judge by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictKind {
    /// The specifications' rules, as the reference validator applies them.
    Strict,
    /// What agent clients accept.
    Lenient,
}

/// Returns true when no diagnostic is an error under the given verdict.
pub fn passes(diagnostics: &[Diagnostic], verdict: VerdictKind) -> bool {
    diagnostics
        .iter()
        .all(|diagnostic| diagnostic.severity_for(verdict) < Severity::Error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_snake_case() {
        let mut seen = std::collections::HashSet::new();
        for code in Code::ALL {
            let name = code.as_str();
            assert!(seen.insert(name), "duplicate code {name}");
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit()),
                "{name} is not snake_case"
            );
            let json = serde_json::to_string(code).unwrap();
            assert_eq!(json, format!("\"{name}\""));
            assert!(code.lenient_severity() <= code.strict_severity(), "{name}");
            assert!(!code.hint().is_empty());
        }
    }

    /// Publishers and scripts read the code list in docs/validate.md: it must name every code.
    #[test]
    fn the_validate_reference_lists_every_code() {
        let reference = include_str!("../../../docs/validate.md");
        for code in Code::ALL {
            assert!(
                reference.contains(&format!("`{}`", code.as_str())),
                "docs/validate.md does not list the code {code}"
            );
        }
    }

    #[test]
    fn lenient_never_raises_severity() {
        let diagnostic = Diagnostic::new(Code::UnknownField, "unknown field \"x\"");
        assert_eq!(
            diagnostic.severity_for(VerdictKind::Strict),
            Severity::Error
        );
        assert_eq!(
            diagnostic.severity_for(VerdictKind::Lenient),
            Severity::Info
        );
        assert!(!passes(
            std::slice::from_ref(&diagnostic),
            VerdictKind::Strict
        ));
        assert!(passes(&[diagnostic], VerdictKind::Lenient));
    }

    #[test]
    fn json_shape() {
        let diagnostic = Diagnostic::new(Code::InvalidName, "invalid skill name \"A\"").at("name");
        insta::assert_json_snapshot!(diagnostic, @r#"
        {
          "severity": "error",
          "code": "invalid_name",
          "message": "invalid skill name \"A\"",
          "field": "name"
        }
        "#);
    }
}
