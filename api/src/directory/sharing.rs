//! The directory in the skill-sharing protocol (`specs/skill-sharing-discovery.md`): the index
//! entry and the descriptor of a record, which the skill-sharing routes and JSON-RPC's
//! `describe_skill` both publish.
//!
//! Ids: an entry's `id` is `{name}@{domain}` (e.g. `pdf-merge@pdfworks.test`). Record ids
//! (`{domain}/{name}`) hold a `/`, which skill-sharing clients, skillscout's own crawler among
//! them, refuse in an id that they use as a path segment; `@` never occurs in a domain, so the
//! id is unique across domains and splits back at its last `@`.
//!
//! Capability types: agent-skills records (`skill` in this directory's records) are published
//! as `knowledge`, the skill-sharing type for instructions an agent reads, so that the index
//! holds only the protocol's four types; `?type=knowledge` therefore lists them too. A skill
//! without a version is published as `0.0.0`, since the protocol requires one.

use formats::{Access, Format, Skill};
use indexer::{Caller, Filters, ListRequest, Listed, MAX_LIMIT};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::Directory;
use super::urls::{Urls, descriptor_path, file_path, sharing_id, skill_page_path};
use crate::error::ApiError;

/// The protocol version this directory publishes.
pub(crate) const PROTOCOL_VERSION: &str = "1.0.0";
/// The most skills the well-known index lists (the most a skill-sharing crawler such as
/// skillscout reads from one index); `/skills` pages through all of them.
pub(crate) const MAX_INDEX_SKILLS: usize = 10_000;
/// The version published for a skill that has none.
pub(crate) const UNVERSIONED: &str = "0.0.0";

/// One Skill Index entry (§5.2).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct IndexEntry {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) capability_type: String,
    pub(crate) description: String,
    pub(crate) descriptor_url: String,
    pub(crate) access: Access,
    pub(crate) version: String,
}

/// Returns the capability type a record of `format` is published with.
pub(crate) fn published_type(format: Format, capability_type: &str) -> &str {
    if format != Format::SkillSharing {
        "knowledge"
    } else {
        capability_type
    }
}

/// Returns the index entry of a listed record (its description cut at
/// [`indexer::MAX_LISTED_CHARS`]; the descriptor has the whole).
fn entry(urls: &Urls, listed: &Listed) -> IndexEntry {
    IndexEntry {
        id: sharing_id(&listed.domain, &listed.name),
        name: listed.title.clone(),
        capability_type: published_type(listed.format, &listed.capability_type).to_owned(),
        description: listed.description.clone(),
        descriptor_url: urls.url(&descriptor_path(&listed.domain, &listed.name)),
        access: listed.access,
        version: listed
            .version
            .clone()
            .unwrap_or_else(|| UNVERSIONED.to_owned()),
    }
}

/// Turns `?type=` values into index filter values; `None` when no record can match.
pub(crate) fn type_filter(values: Vec<String>) -> Option<Vec<String>> {
    if values.is_empty() {
        return Some(Vec::new());
    }
    let mut filter = Vec::new();
    for value in values {
        match value.to_lowercase().as_str() {
            // Never published: agent-skills records are `knowledge` here.
            "skill" => {}
            "knowledge" => filter.extend(["knowledge".to_owned(), "skill".to_owned()]),
            other => filter.push(other.to_owned()),
        }
    }
    (!filter.is_empty()).then_some(filter)
}

impl Directory {
    /// Lists up to `max` records `caller` may see, of the capability types in `filter`, in id
    /// order, after `after`, as skill-sharing index entries (blocking). Returns the entries and
    /// the position to go on from, when more remain.
    pub(crate) fn sharing_entries(
        &self,
        caller: Caller,
        filter: Vec<String>,
        mut after: Option<String>,
        max: usize,
    ) -> Result<(Vec<IndexEntry>, Option<String>), ApiError> {
        let mut entries = Vec::new();
        loop {
            let request = ListRequest {
                caller,
                filters: Filters {
                    capability_type: filter.clone(),
                    ..Filters::default()
                },
                after: after.clone(),
                limit: (max - entries.len()).min(MAX_LIMIT),
            };
            let page = self.list(&request)?;
            entries.extend(page.records.iter().map(|skill| entry(self.urls(), skill)));
            after = page.next_cursor;
            if after.is_none() || entries.len() >= max {
                return Ok((entries, after));
            }
        }
    }
}

/// Returns the descriptor of a record: a skill-sharing record's own descriptor with the
/// index fields this directory publishes, or one made for an agent skill, whose endpoint is
/// its SKILL.md here.
pub(crate) fn descriptor_of(urls: &Urls, skill: &Skill) -> Value {
    let entry = entry(urls, &Listed::of(skill));
    let mut fields = match skill.format {
        Format::SkillSharing => skill.frontmatter.clone(),
        Format::AgentSkills | Format::McpSkills => agent_skill_descriptor(urls, skill),
    };
    fields.insert("protocol".into(), json!({ "version": PROTOCOL_VERSION }));
    fields.insert("id".into(), json!(entry.id));
    fields.insert("name".into(), json!(skill.title));
    fields.insert("version".into(), json!(entry.version));
    fields.insert("capability_type".into(), json!(entry.capability_type));
    fields.insert("description".into(), json!(skill.description));
    fields.insert("access".into(), json!(entry.access));
    if !skill.tags.is_empty() {
        fields.insert("tags".into(), json!(skill.tags));
    }
    fields
        .entry("documentation_url")
        .or_insert_with(|| json!(urls.url(&skill_page_path(&skill.domain, &skill.name))));
    Value::Object(fields)
}

fn agent_skill_descriptor(urls: &Urls, skill: &Skill) -> Map<String, Value> {
    let origin = skill.index_url.origin().ascii_serialization();
    let endpoint = urls.url(&file_path(&skill.domain, &skill.name, "SKILL.md"));
    let mut fields = Map::new();
    fields.insert(
        "provider".into(),
        json!({ "name": skill.domain, "url": origin }),
    );
    fields.insert(
        "endpoint".into(),
        json!({ "url": endpoint, "method": "GET" }),
    );
    fields.insert("inputs".into(), json!([]));
    fields.insert(
        "output".into(),
        json!({ "type": "text/markdown", "description": "the skill's SKILL.md" }),
    );
    fields.insert("auth".into(), json!({ "type": "none" }));
    if let Some(license) = &skill.license {
        fields.insert("license".into(), json!(license));
    }
    fields.insert("source_url".into(), json!(skill.source_url));
    fields
}
