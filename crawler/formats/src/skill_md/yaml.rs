//! The frontmatter's YAML: parsed under explicit limits, with errors a publisher can act on.
//!
//! The limits are the `MAX_*` constants of the parent module. A YAML bomb (aliases of
//! aliases, deep nesting, a huge flat document) ends in a [`Code::YamlLimit`] diagnostic
//! after bounded work, never in a panic, a stack overflow or a large allocation.

use std::fmt;

use serde::Deserialize as _;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};
use serde_saphyr::budget::BudgetBreach;
use serde_saphyr::{Budget, DuplicateKeyPolicy, MessageFormatter as _, NonFiniteFloatPolicy};

use super::{
    MAX_FRONTMATTER_BYTES, MAX_YAML_ALIAS_DEPTH, MAX_YAML_ALIAS_REPLAYED_EVENTS, MAX_YAML_ALIASES,
    MAX_YAML_ANCHORS, MAX_YAML_DEPTH, MAX_YAML_EVENTS, kind_of,
};
use crate::diagnostic::{Code, Diagnostic};

/// Returns the options the frontmatter YAML is parsed with: our limits, YAML 1.2 core
/// scalars (`yes` stays a string), and duplicate keys refused.
fn yaml_options() -> serde_saphyr::Options {
    // `Budget`, `AliasLimits` and `Options` are non-exhaustive: start from the defaults.
    let mut budget = Budget::default();
    budget.max_depth = MAX_YAML_DEPTH;
    budget.flow_nesting_limit = MAX_YAML_DEPTH;
    budget.max_events = MAX_YAML_EVENTS;
    budget.max_nodes = MAX_YAML_EVENTS;
    budget.max_anchors = MAX_YAML_ANCHORS;
    budget.max_aliases = MAX_YAML_ALIASES;
    budget.max_merge_keys = MAX_YAML_ALIASES;
    budget.max_documents = 1;
    budget.max_total_scalar_bytes = MAX_FRONTMATTER_BYTES;

    let mut alias_limits = serde_saphyr::options::AliasLimits::default();
    alias_limits.max_total_replayed_events = MAX_YAML_ALIAS_REPLAYED_EVENTS;
    alias_limits.max_replay_stack_depth = MAX_YAML_ALIAS_DEPTH;

    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options.alias_limits = alias_limits;
    options.duplicate_keys = DuplicateKeyPolicy::Error;
    options.strict_booleans = true;
    options.leading_zero_numbers_as_strings = true;
    options.underscored_numbers_as_strings = true;
    options.non_finite_float_policy = NonFiniteFloatPolicy::AsString;
    options.with_snippet = false;
    options
}

/// Parses the frontmatter YAML into a JSON object. An empty frontmatter is an empty mapping.
pub(super) fn parse(yaml: &str) -> Result<Map<String, Value>, Diagnostic> {
    if yaml.len() > MAX_FRONTMATTER_BYTES {
        let message = format!(
            "frontmatter is {} bytes, more than the {MAX_FRONTMATTER_BYTES} this parser reads",
            yaml.len()
        );
        return Err(Diagnostic::new(Code::YamlLimit, message).at("frontmatter"));
    }
    let value: Value = serde_saphyr::from_str_with_options(yaml, yaml_options())
        .map_err(|error| yaml_error(&error))?;
    let frontmatter = match value {
        Value::Object(frontmatter) => frontmatter,
        // Nothing but comments and blank lines, or an explicit null.
        Value::Null => Map::new(),
        other => {
            let message = format!(
                "frontmatter is {}, not a mapping of `key: value` fields",
                kind_of(&other)
            );
            return Err(Diagnostic::new(Code::FrontmatterNotMapping, message).at("frontmatter"));
        }
    };
    Ok(frontmatter)
}

/// Returns the diagnostic for a YAML parser error: [`Code::YamlLimit`] for a broken limit,
/// [`Code::InvalidYaml`] for anything else. Lines are counted in SKILL.md, so they match what
/// an editor shows.
fn yaml_error(error: &serde_saphyr::Error) -> Diagnostic {
    let mut original = error;
    while let serde_saphyr::Error::WithSnippet { error, .. }
    | serde_saphyr::Error::AliasError { error, .. } = original
    {
        original = error;
    }
    let (code, detail) = classify_yaml_error(original);
    let detail = match detail {
        Some(detail) => detail,
        None => {
            let text = serde_saphyr::UserMessageFormatter.format_message(original);
            text.lines().next().unwrap_or_default().trim().to_owned()
        }
    };
    let location = match error.location() {
        Some(location) if location.line() > 0 => {
            // The opening fence is line 1 of SKILL.md, so YAML line 1 is SKILL.md line 2.
            format!(
                "line {} column {}: ",
                location.line() + 1,
                location.column()
            )
        }
        _ => String::new(),
    };
    let what = if code == Code::YamlLimit {
        "frontmatter breaks a parser limit"
    } else {
        "invalid YAML in frontmatter"
    };
    Diagnostic::new(code, format!("{what}: {location}{detail}")).at("frontmatter")
}

/// Returns the code for a YAML error, and our own wording for the limits we set.
fn classify_yaml_error(error: &serde_saphyr::Error) -> (Code, Option<String>) {
    use serde_saphyr::Error;
    let limit = |detail: String| (Code::YamlLimit, Some(detail));
    match error {
        Error::Budget { breach, .. } => match breach {
            BudgetBreach::Documents { .. } => (
                Code::InvalidYaml,
                Some("more than one YAML document (remove the `...` line)".to_owned()),
            ),
            BudgetBreach::Depth { .. } => {
                limit(format!("nested deeper than {MAX_YAML_DEPTH} levels"))
            }
            BudgetBreach::Events { .. } | BudgetBreach::Nodes { .. } => {
                limit(format!("more than {MAX_YAML_EVENTS} YAML events"))
            }
            BudgetBreach::Aliases { .. } => limit(format!("more than {MAX_YAML_ALIASES} aliases")),
            BudgetBreach::Anchors { .. } => limit(format!("more than {MAX_YAML_ANCHORS} anchors")),
            BudgetBreach::ScalarBytes { .. } => limit(format!(
                "its strings come to more than {MAX_FRONTMATTER_BYTES} bytes, counting every use of an alias"
            )),
            BudgetBreach::MergeKeys { .. } => {
                limit(format!("more than {MAX_YAML_ALIASES} merge keys"))
            }
            BudgetBreach::AliasAnchorRatio { aliases, anchors } => {
                limit(format!("{aliases} aliases for only {anchors} anchors"))
            }
            _ => (Code::YamlLimit, None),
        },
        Error::AliasReplayLimitExceeded { .. } | Error::AliasReplayCounterOverflow { .. } => limit(
            format!("aliases expand to more than {MAX_YAML_ALIAS_REPLAYED_EVENTS} YAML events"),
        ),
        Error::AliasReplayStackDepthExceeded { .. } => limit(format!(
            "aliases nest more than {MAX_YAML_ALIAS_DEPTH} levels deep"
        )),
        Error::AliasExpansionLimitExceeded { .. } => (Code::YamlLimit, None),
        Error::ExternalMessage { source, .. } => match &**source {
            // The scanner's own nesting limit, which `flow_nesting_limit` sets for `[[[…`.
            serde_saphyr::ExternalMessageSource::Parser(scan)
                if matches!(
                    scan.kind(),
                    serde_saphyr::granit_parser::ErrorKind::RecursionLimitExceeded
                ) =>
            {
                limit(format!("nested deeper than {MAX_YAML_DEPTH} levels"))
            }
            _ => (Code::InvalidYaml, None),
        },
        _ => (Code::InvalidYaml, None),
    }
}

/// Reads the scalar at `path` (a chain of mapping keys) as written in `yaml`, so that a number
/// keeps its spelling: `1.10` stays `"1.10"`, where JSON would make it 1.1.
pub(super) fn scalar_as_written(yaml: &str, path: &[&str]) -> Option<String> {
    let seed = AsWritten { path };
    serde_saphyr::with_deserializer_from_str_with_options(yaml, yaml_options(), |deserializer| {
        seed.deserialize(deserializer)
    })
    .ok()
    .flatten()
}

/// Walks down a chain of mapping keys and reads the scalar at its end as text.
struct AsWritten<'a> {
    /// The keys still to follow.
    path: &'a [&'a str],
}

impl<'de> DeserializeSeed<'de> for AsWritten<'_> {
    type Value = Option<String>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        if self.path.is_empty() {
            // A string target makes the YAML deserializer hand over the scalar's own text.
            String::deserialize(deserializer).map(Some)
        } else {
            deserializer.deserialize_map(self)
        }
    }
}

impl<'de> Visitor<'de> for AsWritten<'_> {
    type Value = Option<String>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a mapping")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let Some((wanted, rest)) = self.path.split_first() else {
            return Ok(None);
        };
        let mut found = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == *wanted && found.is_none() {
                found = map.next_value_seed(AsWritten { path: rest })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    /// Returns a billion-laughs bomb: ten levels of anchors, each aliasing the one before
    /// nine times, for 10^9 strings once expanded.
    fn billion_laughs() -> String {
        let mut yaml = String::from("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for level in 1..10 {
            let previous = format!("*l{}", level - 1);
            let items = [previous.as_str(); 9].join(", ");
            yaml.push_str(&format!("l{level}: &l{level} [{items}]\n"));
        }
        yaml
    }

    #[test]
    fn hostile_yaml_hits_a_limit_quickly() {
        let deep_block: String = (0..200)
            .map(|depth| format!("{}k:\n", " ".repeat(depth)))
            .collect();
        let many_events = format!("[{}]\n", vec!["a"; MAX_YAML_EVENTS].join(","));
        let many_anchors: String = (0..=MAX_YAML_ANCHORS)
            .map(|index| format!("k{index}: &a{index} v\n"))
            .collect();
        let many_aliases = format!(
            "a: &a v\nb: [{}]\n",
            vec!["*a"; MAX_YAML_ALIASES + 1].join(", ")
        );
        let long_string = "x".repeat(20_000);
        let amplified = format!("a: &a {long_string}\nb: [{}]\n", ["*a"; 12].join(", "));
        let cases = [
            ("billion laughs", billion_laughs()),
            ("deep flow sequences", "[".repeat(10_000)),
            ("deep flow mappings", "{a: ".repeat(10_000)),
            ("deep block mappings", deep_block),
            ("too large", "k: v\n".repeat(MAX_FRONTMATTER_BYTES / 5 + 1)),
            ("many events", many_events),
            ("many anchors", many_anchors),
            ("many aliases", many_aliases),
            ("one long string aliased", amplified),
        ];
        let mut messages = String::new();
        for (label, yaml) in cases {
            let start = Instant::now();
            let result = parse(&yaml);
            let elapsed = start.elapsed();
            assert!(elapsed < Duration::from_secs(5), "{label} took {elapsed:?}");
            let Err(diagnostic) = result else {
                panic!("{label}: parsed without hitting a limit");
            };
            assert_eq!(diagnostic.code, Code::YamlLimit, "{label}: {diagnostic:?}");
            messages.push_str(&format!("{label}: {}\n", diagnostic.message));
        }
        insta::assert_snapshot!(messages, @r#"
        billion laughs: frontmatter breaks a parser limit: line 6 column 10: aliases expand to more than 10000 YAML events
        deep flow sequences: frontmatter breaks a parser limit: line 2 column 33: nested deeper than 32 levels
        deep flow mappings: frontmatter breaks a parser limit: line 2 column 129: nested deeper than 32 levels
        deep block mappings: frontmatter breaks a parser limit: line 34 column 33: nested deeper than 32 levels
        too large: frontmatter is 65540 bytes, more than the 65536 this parser reads
        many events: frontmatter breaks a parser limit: line 2 column 39996: more than 20000 YAML events
        many anchors: frontmatter breaks a parser limit: line 66 column 11: more than 64 anchors
        many aliases: frontmatter breaks a parser limit: line 3 column 261: more than 64 aliases
        one long string aliased: frontmatter breaks a parser limit: line 3 column 13: its strings come to more than 65536 bytes, counting every use of an alias
        "#);
    }

    #[test]
    fn reads_yaml_1_2_core_scalars() {
        let yaml = "a: yes\nb: 010\nc: .nan\nd: 1_000\ne: !custom x\nf: 2024-01-01\ng: 0x1F\nh: 1.5\ni: ~\nj: True\n";
        let frontmatter = parse(yaml).expect("valid YAML");
        let expected = serde_json::json!({
            "a": "yes",
            "b": "010",
            "c": ".nan",
            "d": "1_000",
            "e": "x",
            "f": "2024-01-01",
            "g": 31,
            "h": 1.5,
            "i": null,
            "j": true,
        });
        assert_eq!(Value::Object(frontmatter), expected);
    }

    #[test]
    fn invalid_yaml_is_one_line_naming_the_place() {
        let cases = [
            "a:\n\tb: 1\n",
            "a: \"open\n",
            "a: *nowhere\n",
            "~: null key\n",
            "? [a]\n: sequence key\n",
            "a: 1\n...\nb: 2\n",
            "a: [1, 2\n",
        ];
        let mut messages = String::new();
        for yaml in cases {
            let Err(diagnostic) = parse(yaml) else {
                panic!("{yaml:?} parsed");
            };
            assert_eq!(diagnostic.code, Code::InvalidYaml, "{yaml:?}");
            assert!(!diagnostic.message.contains('\n'), "{diagnostic:?}");
            messages.push_str(&diagnostic.message);
            messages.push('\n');
        }
        insta::assert_snapshot!(messages, @r#"
        invalid YAML in frontmatter: line 3 column 2: tabs disallowed within this context (block indentation)
        invalid YAML in frontmatter: line 2 column 4: unclosed quote
        invalid YAML in frontmatter: line 2 column 4: reference to unknown value
        invalid YAML in frontmatter: line 2 column 1: null is not allowed here
        invalid YAML in frontmatter: line 2 column 3: expected string scalar
        invalid YAML in frontmatter: line 4 column 1: more than one YAML document (remove the `...` line)
        invalid YAML in frontmatter: line 2 column 4: unclosed bracket '['
        "#);
    }
}
