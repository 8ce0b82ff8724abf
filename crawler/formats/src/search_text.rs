//! The text of a record that search reads besides its name, title, description, tags and
//! body: what a service takes and returns, the tools a skill declares, and the headings of
//! its instructions. Which parts of a descriptor or frontmatter are searchable is format
//! knowledge, so it lives here; the index only weighs the groups.

use serde_json::Value;

use crate::skill::{Format, Skill};

/// The most texts collected into one group, and the most bytes: a descriptor or frontmatter
/// with thousands of parameters must not make one record's index entry unbounded.
const MAX_TEXTS: usize = 256;
const MAX_BYTES: usize = 64 * 1024;
/// How deep descriptor and tool declarations are walked.
const MAX_DEPTH: usize = 6;

/// The searchable text of a record beyond its main fields, in groups that search weighs
/// apart.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchText {
    /// What the skill takes and does, as declared for machines: a skill-sharing descriptor's
    /// `inputs`, `output` and `tools`, or a GAIA skill's `tools` — each name, description and
    /// parameter name (`max_results` stays one text, the analyzer splits it).
    pub tools: Vec<String>,
    /// The headings of the SKILL.md body (ATX `#` headings outside fenced code).
    pub headings: Vec<String>,
}

impl Skill {
    /// Returns the record's searchable text beyond its main fields.
    pub fn search_text(&self) -> SearchText {
        let mut tools = Texts::default();
        let declarations: Vec<&Value> = match self.format {
            Format::SkillSharing => ["inputs", "output", "outputs", "tools"]
                .iter()
                .filter_map(|key| self.frontmatter.get(*key))
                .collect(),
            Format::AgentSkills | Format::McpSkills => {
                let metadata = self.frontmatter.get("metadata");
                let gaia = metadata.and_then(|metadata| metadata.get("gaia"));
                [
                    self.frontmatter.get("tools"),
                    metadata.and_then(|metadata| metadata.get("tools")),
                    gaia.and_then(|gaia| gaia.get("tools")),
                ]
                .into_iter()
                .flatten()
                .collect()
            }
        };
        for declaration in declarations {
            tools.walk(declaration, 0);
        }
        SearchText {
            tools: tools.texts,
            headings: headings(&self.body),
        }
    }
}

/// Texts collected within the limits.
#[derive(Debug, Default)]
struct Texts {
    texts: Vec<String>,
    bytes: usize,
}

impl Texts {
    fn push(&mut self, text: &str) {
        let text = text.trim();
        if text.is_empty() || self.texts.len() >= MAX_TEXTS || self.bytes >= MAX_BYTES {
            return;
        }
        let room = MAX_BYTES - self.bytes;
        let mut end = text.len().min(room);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        self.bytes += end;
        self.texts.push(text[..end].to_owned());
    }

    /// Collects the names, titles and descriptions in a declaration, and the names of the
    /// parameters and properties it lists; type names, defaults and flags say nothing about
    /// what the skill does and are left out.
    fn walk(&mut self, value: &Value, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        match value {
            Value::Array(items) => {
                for item in items {
                    self.walk(item, depth + 1);
                }
            }
            Value::Object(fields) => {
                for (key, value) in fields {
                    match (key.as_str(), value) {
                        ("name" | "title" | "description" | "summary", Value::String(text)) => {
                            self.push(text);
                        }
                        ("parameters" | "properties" | "params", Value::Object(parameters)) => {
                            for (name, parameter) in parameters {
                                self.push(name);
                                self.walk(parameter, depth + 1);
                            }
                        }
                        (_, Value::Array(_) | Value::Object(_)) => self.walk(value, depth + 1),
                        _ => {}
                    }
                }
            }
            // A list of tool names (`tools: [search, fetch]`).
            Value::String(text) if depth > 0 => self.push(text),
            _ => {}
        }
    }
}

/// Returns the ATX headings of a markdown body, outside fenced code blocks.
fn headings(body: &str) -> Vec<String> {
    let mut texts = Texts::default();
    let mut fence: Option<&str> = None;
    for line in body.lines() {
        let trimmed = line.trim_start();
        if let Some(open) = fence {
            if trimmed.starts_with(open) {
                fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") {
            fence = Some("```");
            continue;
        }
        if trimmed.starts_with("~~~") {
            fence = Some("~~~");
            continue;
        }
        let level = trimmed.chars().take_while(|c| *c == '#').count();
        if (1..=6).contains(&level) && trimmed[level..].starts_with([' ', '\t']) {
            texts.push(trimmed[level..].trim().trim_end_matches('#'));
        }
    }
    texts.texts
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn headings_outside_code() {
        let body = "# Merge PDFs\n\nText\n## Step 1: split ##\n```sh\n# not a heading\n```\n#hashtag\n   ### Indented\n~~~\n# neither\n~~~\n";
        assert_eq!(headings(body), ["Merge PDFs", "Step 1: split", "Indented"]);
    }

    #[test]
    fn declarations_give_names_descriptions_and_parameters() {
        let mut texts = Texts::default();
        texts.walk(
            &json!([{
                "name": "search_web",
                "description": "Search the web for current information",
                "parameters": {"query": {"type": "string", "required": true},
                               "max_results": {"type": "integer", "default": 5}},
                "returns": {"type": "object"},
                "atomic": false
            }, "fetch_page"]),
            0,
        );
        assert_eq!(
            texts.texts,
            [
                "search_web",
                "Search the web for current information",
                "query",
                "max_results",
                "fetch_page"
            ]
        );
    }

    #[test]
    fn limits_hold() {
        let many: Vec<Value> = (0..1000)
            .map(|n| json!({"name": format!("tool{n}")}))
            .collect();
        let mut texts = Texts::default();
        texts.walk(&Value::Array(many), 0);
        assert_eq!(texts.texts.len(), MAX_TEXTS);
        let mut texts = Texts::default();
        texts.walk(&json!([{"description": "é".repeat(MAX_BYTES)}]), 0);
        assert!(texts.bytes <= MAX_BYTES);
    }
}
