//! The directory in the skill-sharing protocol (`specs/skill-sharing-discovery.md`):
//!
//! - `GET /.well-known/skill-sharing[?type=]`: this directory's own Skill Index, listing the
//!   skills of every domain (§5.2), filtered by capability type (§5.6) and by access (§5.5:
//!   `private` skills only for authenticated callers);
//! - `GET /skills[?type=&limit=&cursor=]`: registry discovery (§5.4), the same entries a page
//!   at a time;
//! - `GET /v1/skills/{domain}/{name}/descriptor`: the Skill Descriptor each entry's
//!   `descriptor_url` points at.
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

use axum::Json;
use axum::extract::State;
use formats::{Access, Format, Skill, SkillId};
use indexer::{Caller, Filters, ListRequest, MAX_LIMIT};
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::auth::Auth;
use crate::cursor;
use crate::error::ApiError;
use crate::extract::{ApiPath, Params};
use crate::state::{AppState, parse_id};

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

/// The Skill Index document.
#[derive(Debug, Serialize)]
pub(crate) struct SkillIndex {
    protocol: Value,
    provider: Value,
    skills: Vec<IndexEntry>,
}

/// The `/skills` body.
#[derive(Debug, Serialize)]
pub(crate) struct RegistryPage {
    skills: Vec<IndexEntry>,
    next_cursor: Option<String>,
}

/// Returns the skill-sharing id of a record: `{name}@{domain}`.
pub(crate) fn sharing_id(skill: &Skill) -> String {
    format!("{}@{}", skill.name, skill.domain)
}

/// Returns the record id of a skill-sharing id, when it is one.
pub(crate) fn parse_sharing_id(id: &str) -> Option<SkillId> {
    let (name, domain) = id.rsplit_once('@')?;
    parse_id(domain, name).ok()
}

/// Returns the capability type a record is published with.
pub(crate) fn published_type(skill: &Skill) -> &str {
    if skill.format == Format::AgentSkills {
        "knowledge"
    } else {
        &skill.capability_type
    }
}

/// Returns the URL path of a record below `/v1/skills/`.
pub(crate) fn record_path(skill: &Skill) -> String {
    format!(
        "/v1/skills/{}/{}",
        crate::web::encode_segment(skill.domain.as_str()),
        crate::web::encode_segment(skill.name.as_str())
    )
}

fn entry(state: &AppState, skill: &Skill) -> IndexEntry {
    IndexEntry {
        id: sharing_id(skill),
        name: skill.title.clone(),
        capability_type: published_type(skill).to_owned(),
        description: skill.description.clone(),
        descriptor_url: state.url(&format!("{}/descriptor", record_path(skill))),
        access: skill.access,
        version: skill
            .version
            .clone()
            .unwrap_or_else(|| UNVERSIONED.to_owned()),
    }
}

/// Turns `?type=` values into index filter values; `None` when no record can match.
fn type_filter(values: Vec<String>) -> Option<Vec<String>> {
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

/// Lists up to `max` records `caller` may see, of the capability types in `filter`, in id
/// order, after `after` (blocking). Returns the entries and whether more remain.
fn list_entries(
    state: &AppState,
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
        let page = state.visible_list(&request)?;
        entries.extend(page.records.iter().map(|skill| entry(state, skill)));
        after = page.next_cursor;
        if after.is_none() || entries.len() >= max {
            return Ok((entries, after));
        }
    }
}

/// `GET /.well-known/skill-sharing[?type=]`.
pub(super) async fn index(
    State(state): State<AppState>,
    Auth(caller): Auth,
    params: Params,
) -> Result<Json<SkillIndex>, ApiError> {
    let filter = type_filter(params.all("type")?);
    let skills = match filter {
        None => Vec::new(),
        Some(filter) => state
            .blocking(move |state| {
                let (entries, more) = list_entries(state, caller, filter, None, MAX_INDEX_SKILLS)?;
                if more.is_some() {
                    tracing::warn!(
                        max = MAX_INDEX_SKILLS,
                        "the well-known skill-sharing index is truncated; /skills lists every skill"
                    );
                }
                Ok(entries)
            })
            .await?,
    };
    Ok(Json(SkillIndex {
        protocol: json!({ "version": PROTOCOL_VERSION }),
        provider: json!({ "name": state.config().name, "url": state.url("/") }),
        skills,
    }))
}

/// `GET /skills[?type=&limit=&cursor=]`: registry discovery.
pub(super) async fn registry(
    State(state): State<AppState>,
    Auth(caller): Auth,
    params: Params,
) -> Result<Json<RegistryPage>, ApiError> {
    let limit = params.limit(MAX_LIMIT)?;
    let filter = type_filter(params.all("type")?);
    let after = match params.one("cursor")? {
        Some(raw) => Some(cursor::decode("registry", raw)?),
        None => None,
    };
    let Some(filter) = filter else {
        return Ok(Json(RegistryPage {
            skills: Vec::new(),
            next_cursor: None,
        }));
    };
    let (skills, next) = state
        .blocking(move |state| list_entries(state, caller, filter, after, limit))
        .await?;
    Ok(Json(RegistryPage {
        skills,
        next_cursor: next.map(|after| cursor::encode("registry", &after)),
    }))
}

/// `GET /v1/skills/{domain}/{name}/descriptor`: the Skill Descriptor of a record.
pub(super) async fn descriptor(
    State(state): State<AppState>,
    Auth(caller): Auth,
    ApiPath((domain, name)): ApiPath<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let id = parse_id(&domain, &name)?;
    let skill = state.visible_record(caller, id).await?;
    Ok(Json(descriptor_of(&state, &skill)))
}

/// Returns the descriptor of a record: a skill-sharing record's own descriptor with the
/// index fields this directory publishes, or one made for an agent skill, whose endpoint is
/// its SKILL.md here.
pub(crate) fn descriptor_of(state: &AppState, skill: &Skill) -> Value {
    let entry = entry(state, skill);
    let mut fields = match skill.format {
        Format::SkillSharing => skill.frontmatter.clone(),
        Format::AgentSkills => agent_skill_descriptor(state, skill),
    };
    fields.insert("protocol".into(), json!({ "version": PROTOCOL_VERSION }));
    fields.insert("id".into(), json!(entry.id));
    fields.insert("name".into(), json!(entry.name));
    fields.insert("version".into(), json!(entry.version));
    fields.insert("capability_type".into(), json!(entry.capability_type));
    fields.insert("description".into(), json!(entry.description));
    fields.insert("access".into(), json!(entry.access));
    if !skill.tags.is_empty() {
        fields.insert("tags".into(), json!(skill.tags));
    }
    fields
        .entry("documentation_url")
        .or_insert_with(|| json!(state.url(&crate::web::skill_page_path(skill))));
    Value::Object(fields)
}

fn agent_skill_descriptor(state: &AppState, skill: &Skill) -> Map<String, Value> {
    let origin = skill.index_url.origin().ascii_serialization();
    let endpoint = state.url(&format!("{}/files/SKILL.md", record_path(skill)));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sharing_ids_split_at_the_last_at_sign() {
        let id = parse_sharing_id("pdf-merge@pdfworks.test").unwrap();
        assert_eq!(id.to_string(), "pdfworks.test/pdf-merge");
        let id = parse_sharing_id("a@b@localhost:8080").unwrap();
        assert_eq!(id.to_string(), "localhost:8080/a@b");
        assert!(parse_sharing_id("no-at-sign").is_none());
        assert!(parse_sharing_id("x@not a domain").is_none());
    }

    #[test]
    fn type_filters() {
        assert_eq!(type_filter(vec![]), Some(vec![]));
        assert_eq!(type_filter(vec!["skill".into()]), None);
        assert_eq!(
            type_filter(vec!["Knowledge".into()]),
            Some(vec!["knowledge".into(), "skill".into()])
        );
        assert_eq!(type_filter(vec!["api".into()]), Some(vec!["api".into()]));
    }
}
