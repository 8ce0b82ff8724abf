//! The GAIA extension fields of SKILL.md (specs/gaia-skill-format.md §2 and §3).
//!
//! GAIA adds `version`, `author`, `permissions`, `requirements`, `tools`, `security_tier`,
//! `registry`, `tags`, `homepage` and `repository` to the frontmatter. Publishers put them at
//! the top level (which the Agent Skills specification forbids) or under `metadata.gaia`;
//! `version`, `author` and `tags` also appear directly under `metadata`, where the Agent Skills
//! specification's own example puts a free-form `version: "1.0"`.
//!
//! GAIA is an extension, not the core format, so every problem found here is at most a
//! warning: a skill that is fine by the Agent Skills specification still passes the strict
//! verdict whatever its GAIA fields say.

use serde_json::{Map, Value};

use super::{Place, RawScalar, capped, quoted, wrong_type};
use crate::diagnostic::{Code, Diagnostic};

/// The fields GAIA defines beyond the Agent Skills specification (§2.2).
pub const GAIA_FIELDS: [&str; 10] = [
    "version",
    "author",
    "permissions",
    "requirements",
    "tools",
    "security_tier",
    "registry",
    "tags",
    "homepage",
    "repository",
];

/// The permission domains of GAIA §3.1, each with the levels it allows.
pub const PERMISSION_LEVELS: [(&str, &[&str]); 7] = [
    ("filesystem", &["read", "write", "none"]),
    ("network", &["read", "write", "none"]),
    ("shell", &["execute", "none"]),
    ("desktop", &["control", "none"]),
    ("mcp", &["connect", "none"]),
    ("env", &["read", "none"]),
    ("database", &["read", "write", "none"]),
];

/// The security tiers of GAIA §4.
pub const SECURITY_TIERS: [&str; 3] = ["verified", "community", "experimental"];

/// The GAIA fields whose value is a plain string.
const STRING_FIELDS: [&str; 4] = ["author", "registry", "homepage", "repository"];

/// Checks the GAIA fields wherever they sit and appends what is wrong to `diagnostics`.
///
/// `yaml` is the frontmatter text `frontmatter` was parsed from; it is used to read numeric
/// versions as written.
pub(super) fn check(
    frontmatter: &Map<String, Value>,
    yaml: &str,
    diagnostics: &mut Vec<Diagnostic>,
) {
    if let Some(metadata) = frontmatter.get("metadata").and_then(Value::as_object) {
        if let Some(gaia) = metadata.get("gaia").filter(|gaia| !gaia.is_object()) {
            let field = Place::MetadataGaia.path();
            diagnostics.push(Diagnostic::as_warning(wrong_type(
                &field,
                "a mapping",
                gaia,
            )));
        }
        check_metadata(metadata, yaml, diagnostics);
    }
    for place in [Place::Top, Place::MetadataGaia] {
        if let Some(table) = place.table(frontmatter) {
            check_gaia_table(place, table, yaml, diagnostics);
        }
    }
}

/// Checks `metadata.version`, `metadata.author` and `metadata.tags`, the GAIA fields that
/// publishers also put directly under `metadata`. The version there is free-form (the Agent
/// Skills specification's example is `"1.0"`), so only its type is checked.
fn check_metadata(metadata: &Map<String, Value>, yaml: &str, diagnostics: &mut Vec<Diagnostic>) {
    let place = Place::Metadata;
    if let RawScalar::Other(value) = place.scalar(metadata, "version", yaml) {
        let field = place.field("version");
        diagnostics.push(Diagnostic::as_warning(wrong_type(
            &field, "a string", value,
        )));
    }
    if let Some(author) = metadata.get("author").filter(|author| !author.is_string()) {
        diagnostics.push(Diagnostic::as_warning(wrong_type(
            &place.field("author"),
            "a string",
            author,
        )));
    }
    if let Some(tags) = metadata.get("tags") {
        check_tags(&place.field("tags"), tags, diagnostics);
    }
}

/// Checks one place GAIA fields are read from: the top level or `metadata.gaia`.
fn check_gaia_table(
    place: Place,
    table: &Map<String, Value>,
    yaml: &str,
    diagnostics: &mut Vec<Diagnostic>,
) {
    match place.scalar(table, "version", yaml) {
        RawScalar::Absent => {}
        RawScalar::Text(version) => {
            if let Some(problem) = semver_problem(&version) {
                let message = format!(
                    "version {} is not SemVer 2.0.0: {problem}",
                    quoted(&version)
                );
                diagnostics.push(
                    Diagnostic::new(Code::InvalidVersion, message).at(place.field("version")),
                );
            }
        }
        RawScalar::Other(value) => {
            diagnostics.push(Diagnostic::as_warning(wrong_type(
                &place.field("version"),
                "a string",
                value,
            )));
        }
    }
    for key in STRING_FIELDS {
        if let Some(value) = table.get(key).filter(|value| !value.is_string()) {
            diagnostics.push(Diagnostic::as_warning(wrong_type(
                &place.field(key),
                "a string",
                value,
            )));
        }
    }
    // At the top level `license` is an Agent Skills field, checked with the others.
    if place == Place::MetadataGaia
        && let Some(license) = table.get("license").filter(|license| !license.is_string())
    {
        diagnostics.push(Diagnostic::as_warning(wrong_type(
            &place.field("license"),
            "a string",
            license,
        )));
    }
    if let Some(requirements) = table.get("requirements").filter(|value| !value.is_object()) {
        let field = place.field("requirements");
        diagnostics.push(Diagnostic::as_warning(wrong_type(
            &field,
            "a mapping",
            requirements,
        )));
    }
    if let Some(tier) = table.get("security_tier") {
        check_security_tier(&place.field("security_tier"), tier, diagnostics);
    }
    if let Some(permissions) = table.get("permissions") {
        check_permissions(&place.field("permissions"), permissions, diagnostics);
    }
    if let Some(tools) = table.get("tools") {
        check_tools(&place.field("tools"), tools, diagnostics);
    }
    if let Some(tags) = table.get("tags") {
        check_tags(&place.field("tags"), tags, diagnostics);
    }
}

/// Checks `security_tier` against the three tiers of GAIA §4.
fn check_security_tier(field: &str, tier: &Value, diagnostics: &mut Vec<Diagnostic>) {
    let Some(tier) = tier.as_str() else {
        diagnostics.push(Diagnostic::as_warning(wrong_type(field, "a string", tier)));
        return;
    };
    if !SECURITY_TIERS.contains(&tier) {
        let message = format!(
            "security tier {} is not one of {}",
            quoted(tier),
            SECURITY_TIERS.join(", ")
        );
        diagnostics.push(Diagnostic::new(Code::InvalidSecurityTier, message).at(field));
    }
}

/// Checks that `permissions` is a list of `<domain>:<level>[:scope]` strings (GAIA §3).
fn check_permissions(field: &str, permissions: &Value, diagnostics: &mut Vec<Diagnostic>) {
    let Some(permissions) = permissions.as_array() else {
        diagnostics.push(Diagnostic::as_warning(wrong_type(
            field,
            "a list of strings",
            permissions,
        )));
        return;
    };
    let mut found = Vec::new();
    for (index, permission) in permissions.iter().enumerate() {
        let item = format!("{field}[{index}]");
        match permission.as_str() {
            None => found.push(Diagnostic::as_warning(wrong_type(
                &item, "a string", permission,
            ))),
            Some(text) => {
                if let Some(problem) = permission_problem(text) {
                    let message = format!("invalid permission {}: {problem}", quoted(text));
                    found.push(Diagnostic::new(Code::InvalidPermission, message).at(item));
                }
            }
        }
    }
    diagnostics.extend(capped(found, field));
}

/// Checks that `tools` is a list of mappings, each with a string `name` (GAIA §5).
fn check_tools(field: &str, tools: &Value, diagnostics: &mut Vec<Diagnostic>) {
    let Some(tools) = tools.as_array() else {
        diagnostics.push(Diagnostic::as_warning(wrong_type(
            field,
            "a list of mappings",
            tools,
        )));
        return;
    };
    let mut found = Vec::new();
    for (index, tool) in tools.iter().enumerate() {
        let item = format!("{field}[{index}]");
        let Some(tool) = tool.as_object() else {
            found.push(Diagnostic::as_warning(wrong_type(&item, "a mapping", tool)));
            continue;
        };
        match tool.get("name") {
            Some(Value::String(_)) => {}
            Some(name) => found.push(Diagnostic::as_warning(wrong_type(
                &format!("{item}.name"),
                "a string",
                name,
            ))),
            None => {
                let message = format!("tool {} has no name", index + 1);
                found.push(Diagnostic::as_warning(
                    Diagnostic::new(Code::InvalidField, message).at(item),
                ));
            }
        }
    }
    diagnostics.extend(capped(found, field));
}

/// Checks that `tags` is a list of strings. A single comma- or space-separated string is
/// accepted too: its meaning is clear, and the record splits it.
fn check_tags(field: &str, tags: &Value, diagnostics: &mut Vec<Diagnostic>) {
    let items = match tags {
        Value::String(_) => return,
        Value::Array(items) => items,
        other => {
            diagnostics.push(Diagnostic::as_warning(wrong_type(
                field,
                "a list of strings",
                other,
            )));
            return;
        }
    };
    let mut found = Vec::new();
    for (index, tag) in items.iter().enumerate() {
        if !tag.is_string() {
            found.push(Diagnostic::as_warning(wrong_type(
                &format!("{field}[{index}]"),
                "a string",
                tag,
            )));
        }
    }
    diagnostics.extend(capped(found, field));
}

/// Returns what is wrong with a GAIA permission, or `None` when it follows
/// `<domain>:<level>[:scope]` with a domain and level from GAIA §3.1.
pub fn permission_problem(permission: &str) -> Option<String> {
    let mut parts = permission.splitn(3, ':');
    let domain = parts.next().unwrap_or_default();
    let Some(level) = parts.next() else {
        return Some("write it as <domain>:<level>[:scope], e.g. network:read".to_owned());
    };
    let scope = parts.next();
    let Some((_, levels)) = PERMISSION_LEVELS.iter().find(|(known, _)| *known == domain) else {
        let domains: Vec<&str> = PERMISSION_LEVELS.iter().map(|(known, _)| *known).collect();
        return Some(format!(
            "unknown domain {} (expected one of {})",
            quoted(domain),
            domains.join(", ")
        ));
    };
    if !levels.contains(&level) {
        return Some(format!(
            "{domain} allows the levels {}, not {}",
            levels.join(", "),
            quoted(level)
        ));
    }
    match scope {
        Some("") => Some("the scope after the last ':' is empty".to_owned()),
        Some(_) if level == "none" => Some(format!("{domain}:none grants nothing to scope")),
        _ => None,
    }
}

/// Returns what is wrong with `version` under SemVer 2.0.0 (<https://semver.org>), or `None`
/// when it is a valid version such as `1.2.3`, `1.0.0-rc.1` or `1.0.0+build.5`.
pub fn semver_problem(version: &str) -> Option<String> {
    if version.starts_with(['v', 'V']) {
        return Some("drop the leading 'v'".to_owned());
    }
    // The build metadata starts at the first '+', the pre-release at the first '-' before it.
    let (rest, build) = match version.split_once('+') {
        Some((rest, build)) => (rest, Some(build)),
        None => (version, None),
    };
    let (core, pre_release) = match rest.split_once('-') {
        Some((core, pre_release)) => (core, Some(pre_release)),
        None => (rest, None),
    };
    let numbers: Vec<&str> = core.split('.').collect();
    if numbers.len() != 3 {
        return Some(format!(
            "expected MAJOR.MINOR.PATCH, found {} number{}",
            numbers.len(),
            if numbers.len() == 1 { "" } else { "s" }
        ));
    }
    for number in numbers {
        if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
            return Some(format!("{} is not a number", quoted(number)));
        }
        if number.len() > 1 && number.starts_with('0') {
            return Some(format!("{} has a leading zero", quoted(number)));
        }
    }
    if let Some(pre_release) = pre_release {
        for identifier in pre_release.split('.') {
            if let Some(problem) = identifier_problem(identifier) {
                return Some(format!("pre-release {problem}"));
            }
            let numeric = identifier.bytes().all(|b| b.is_ascii_digit());
            if numeric && identifier.len() > 1 && identifier.starts_with('0') {
                return Some(format!(
                    "pre-release identifier {} has a leading zero",
                    quoted(identifier)
                ));
            }
        }
    }
    if let Some(build) = build {
        for identifier in build.split('.') {
            if let Some(problem) = identifier_problem(identifier) {
                return Some(format!("build metadata {problem}"));
            }
        }
    }
    None
}

/// Returns what is wrong with one dot-separated pre-release or build identifier.
fn identifier_problem(identifier: &str) -> Option<String> {
    if identifier.is_empty() {
        return Some("has an empty identifier".to_owned());
    }
    let bad = identifier
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-'));
    bad.map(|bad| {
        format!(
            "identifier {} has the character {bad:?} (only 0-9, A-Z, a-z and - are allowed)",
            quoted(identifier)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Severity;
    use crate::skill_md::{MAX_LIST_DIAGNOSTICS, parse};

    /// The diagnostics expected for one case: code, field and severity, in order.
    type Expected<'a> = Vec<(Code, &'a str, Severity)>;

    #[test]
    fn gaia_fields() {
        use Code::*;
        use Severity::{Error, Warning};
        let many_bad: String = (0..MAX_LIST_DIAGNOSTICS + 3)
            .map(|_| "    - web:read\n")
            .collect();
        let many_bad = format!("metadata:\n  gaia:\n    permissions:\n{many_bad}");
        let item_fields: Vec<String> = (0..MAX_LIST_DIAGNOSTICS)
            .map(|index| format!("frontmatter.metadata.gaia.permissions[{index}]"))
            .collect();
        let mut capped_permissions: Expected<'_> = item_fields
            .iter()
            .map(|field| (InvalidPermission, field.as_str(), Warning))
            .collect();
        capped_permissions.push((
            InvalidPermission,
            "frontmatter.metadata.gaia.permissions",
            Warning,
        ));

        let cases: Vec<(&str, &str, Expected<'_>)> = vec![
            (
                "a full GAIA block under metadata.gaia",
                "metadata:\n  gaia:\n    version: 1.2.0-rc.1\n    author: AMD\n    license: MIT\n    \
                 permissions: [network:read:*.example.com, filesystem:none, shell:execute:git]\n    \
                 tools:\n      - name: search\n        description: Searches\n    \
                 security_tier: community\n    tags: [search, web]\n    \
                 requirements: {python: '>=3.10'}\n    registry: https://registry.example\n",
                vec![],
            ),
            (
                "GAIA fields at the top level are unknown to the specification",
                "version: 1.0.0\nauthor: AMD\npermissions: [network:none]\nsecurity_tier: verified\n\
                 tools: [{name: greet}]\n",
                vec![
                    (UnknownField, "frontmatter.version", Error),
                    (UnknownField, "frontmatter.author", Error),
                    (UnknownField, "frontmatter.permissions", Error),
                    (UnknownField, "frontmatter.security_tier", Error),
                    (UnknownField, "frontmatter.tools", Error),
                ],
            ),
            (
                "free-form metadata version",
                "metadata:\n  version: '1.0'\n",
                vec![],
            ),
            (
                "numeric metadata version",
                "metadata:\n  version: 1.0\n",
                vec![],
            ),
            (
                "list metadata version",
                "metadata:\n  version: [1]\n",
                vec![(InvalidField, "frontmatter.metadata.version", Warning)],
            ),
            (
                "metadata.gaia version must be SemVer",
                "metadata:\n  gaia:\n    version: '1.0'\n",
                vec![(InvalidVersion, "frontmatter.metadata.gaia.version", Warning)],
            ),
            (
                "top-level numeric version",
                "version: 1.0\n",
                vec![
                    (UnknownField, "frontmatter.version", Error),
                    (InvalidVersion, "frontmatter.version", Warning),
                ],
            ),
            (
                "top-level mapping version",
                "version: {major: 1}\n",
                vec![
                    (UnknownField, "frontmatter.version", Error),
                    (InvalidField, "frontmatter.version", Warning),
                ],
            ),
            (
                "permissions as one string",
                "metadata:\n  gaia:\n    permissions: network:read\n",
                vec![(
                    InvalidField,
                    "frontmatter.metadata.gaia.permissions",
                    Warning,
                )],
            ),
            (
                "bad permissions",
                "metadata:\n  gaia:\n    permissions: [network:execute, 5, shell:execute]\n",
                vec![
                    (
                        InvalidPermission,
                        "frontmatter.metadata.gaia.permissions[0]",
                        Warning,
                    ),
                    (
                        InvalidField,
                        "frontmatter.metadata.gaia.permissions[1]",
                        Warning,
                    ),
                ],
            ),
            (
                "many bad permissions",
                many_bad.as_str(),
                capped_permissions,
            ),
            (
                "unknown security tier",
                "metadata:\n  gaia:\n    security_tier: trusted\n",
                vec![(
                    InvalidSecurityTier,
                    "frontmatter.metadata.gaia.security_tier",
                    Warning,
                )],
            ),
            (
                "numeric security tier",
                "metadata:\n  gaia:\n    security_tier: 1\n",
                vec![(
                    InvalidField,
                    "frontmatter.metadata.gaia.security_tier",
                    Warning,
                )],
            ),
            (
                "tools that are not mappings with a name",
                "metadata:\n  gaia:\n    tools: [search, {description: d}, {name: 5}, {name: ok}]\n",
                vec![
                    (InvalidField, "frontmatter.metadata.gaia.tools[0]", Warning),
                    (InvalidField, "frontmatter.metadata.gaia.tools[1]", Warning),
                    (
                        InvalidField,
                        "frontmatter.metadata.gaia.tools[2].name",
                        Warning,
                    ),
                ],
            ),
            (
                "tools as a mapping",
                "metadata:\n  gaia:\n    tools: {name: search}\n",
                vec![(InvalidField, "frontmatter.metadata.gaia.tools", Warning)],
            ),
            (
                "metadata author and tags of the wrong type",
                "metadata:\n  author: [a, b]\n  tags: {a: 1}\n",
                vec![
                    (InvalidField, "frontmatter.metadata.author", Warning),
                    (InvalidField, "frontmatter.metadata.tags", Warning),
                ],
            ),
            (
                "a tag that is not a string",
                "metadata:\n  gaia:\n    tags: [a, 1]\n",
                vec![(InvalidField, "frontmatter.metadata.gaia.tags[1]", Warning)],
            ),
            ("tags as one string", "metadata:\n  tags: 'a, b'\n", vec![]),
            (
                "requirements as a list",
                "metadata:\n  gaia:\n    requirements: [python]\n",
                vec![(
                    InvalidField,
                    "frontmatter.metadata.gaia.requirements",
                    Warning,
                )],
            ),
            (
                "metadata.gaia not a mapping",
                "metadata:\n  gaia: [version]\n",
                vec![(InvalidField, "frontmatter.metadata.gaia", Warning)],
            ),
            (
                "string fields of the wrong type",
                "metadata:\n  gaia:\n    license: 5\n    homepage: [x]\n    author: true\n",
                vec![
                    (InvalidField, "frontmatter.metadata.gaia.author", Warning),
                    (InvalidField, "frontmatter.metadata.gaia.homepage", Warning),
                    (InvalidField, "frontmatter.metadata.gaia.license", Warning),
                ],
            ),
        ];
        for (label, fields, expected) in cases {
            let text = format!("---\nname: pdf\ndescription: d\n{fields}---\n");
            let skill = parse(text.as_bytes(), Some("pdf"));
            let found: Expected<'_> = skill
                .diagnostics
                .iter()
                .map(|d| (d.code, d.field.as_deref().unwrap_or("-"), d.severity))
                .collect();
            assert_eq!(found, expected, "{label}: {:#?}", skill.diagnostics);
        }
    }

    #[test]
    fn semver() {
        let cases = [
            ("1.0.0", None),
            ("0.1.0", None),
            ("10.20.30", None),
            ("1.0.0-alpha", None),
            ("1.0.0-alpha.1", None),
            ("1.0.0-0.3.7", None),
            ("1.0.0-x.7.z.92", None),
            ("1.0.0-x-y-z.--", None),
            ("1.0.0+20130313144700", None),
            ("1.0.0-beta+exp.sha.5114f85", None),
            ("1.0.0+21AF26D3---117B344092BD", None),
            ("1.0", Some("expected MAJOR.MINOR.PATCH, found 2 numbers")),
            ("2", Some("expected MAJOR.MINOR.PATCH, found 1 number")),
            (
                "1.2.3.4",
                Some("expected MAJOR.MINOR.PATCH, found 4 numbers"),
            ),
            ("v1.0.0", Some("drop the leading 'v'")),
            ("01.0.0", Some("\"01\" has a leading zero")),
            ("1.x.0", Some("\"x\" is not a number")),
            ("1..0", Some("\"\" is not a number")),
            ("", Some("expected MAJOR.MINOR.PATCH, found 1 number")),
            ("1.0.0-", Some("pre-release has an empty identifier")),
            (
                "1.0.0-alpha..1",
                Some("pre-release has an empty identifier"),
            ),
            (
                "1.0.0-01",
                Some("pre-release identifier \"01\" has a leading zero"),
            ),
            ("1.0.0+", Some("build metadata has an empty identifier")),
            (
                "1.0.0-béta",
                Some(
                    "pre-release identifier \"béta\" has the character 'é' (only 0-9, A-Z, a-z and - are allowed)",
                ),
            ),
            (
                "1.0.0+a+b",
                Some(
                    "build metadata identifier \"a+b\" has the character '+' (only 0-9, A-Z, a-z and - are allowed)",
                ),
            ),
            ("1.0.0 ", Some("\"0 \" is not a number")),
        ];
        for (version, problem) in cases {
            assert_eq!(semver_problem(version).as_deref(), problem, "{version:?}");
        }
    }

    #[test]
    fn permissions() {
        let cases = [
            ("filesystem:read", None),
            ("filesystem:write:./output/**", None),
            ("filesystem:none", None),
            ("network:read:*.brave.com", None),
            ("network:write", None),
            ("shell:execute:git,npm", None),
            ("shell:none", None),
            ("desktop:control", None),
            ("mcp:connect", None),
            ("env:read", None),
            ("database:write", None),
            // The scope is everything after the second colon, colons included.
            ("network:read:https://api.example.com:8443", None),
            (
                "network",
                Some("write it as <domain>:<level>[:scope], e.g. network:read"),
            ),
            (
                "",
                Some("write it as <domain>:<level>[:scope], e.g. network:read"),
            ),
            (
                "internet:read",
                Some(
                    "unknown domain \"internet\" (expected one of filesystem, network, shell, desktop, mcp, env, database)",
                ),
            ),
            (
                "Network:read",
                Some(
                    "unknown domain \"Network\" (expected one of filesystem, network, shell, desktop, mcp, env, database)",
                ),
            ),
            (
                "shell:read",
                Some("shell allows the levels execute, none, not \"read\""),
            ),
            (
                "network:execute",
                Some("network allows the levels read, write, none, not \"execute\""),
            ),
            (
                "env:write",
                Some("env allows the levels read, none, not \"write\""),
            ),
            (
                "mcp:",
                Some("mcp allows the levels connect, none, not \"\""),
            ),
            (
                "filesystem:read:",
                Some("the scope after the last ':' is empty"),
            ),
            (
                "filesystem:none:/tmp",
                Some("filesystem:none grants nothing to scope"),
            ),
        ];
        for (permission, problem) in cases {
            assert_eq!(
                permission_problem(permission).as_deref(),
                problem,
                "{permission:?}"
            );
        }
    }
}
