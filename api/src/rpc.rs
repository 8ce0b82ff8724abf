//! `POST /rpc`: the directory over JSON-RPC 2.0 (<https://www.jsonrpc.org/specification>),
//! with the Skills Protocol's discovery methods (`specs/skills-protocol-discovery-rpc.md`):
//!
//! - `list_skills {namespace?, detail?: names|summary, limit?: 1-100 (50), cursor?}`: the
//!   skills the caller may see, in id order, a page at a time. A namespace is a domain.
//! - `describe_skill {name, version?, detail?: manifest|summary|full}`.
//! - `read_skill_file {name, version?, path}`: a file of the skill, confined to it.
//!
//! A skill's `name` is its record id, `{domain}/{name}` (the skill-sharing form
//! `{name}@{domain}` is accepted too). Batches (arrays of requests) are answered with an array;
//! notifications (requests without an `id`) get no answer, and a body of only notifications
//! gets `204 No Content`. Errors are JSON-RPC error objects with HTTP 200; only transport
//! problems (a bad token, a body over the limit) are HTTP errors.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use formats::{Format, Skill, SkillId};
use indexer::{Caller, Filters, ListRequest, MAX_LIMIT};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::auth::Auth;
use crate::cursor;
use crate::directory::files::{self, FileError};
use crate::directory::sharing::descriptor_of;
use crate::directory::urls::{file_path, parse_id, parse_sharing_id};
use crate::error::{ApiError, shorten};
use crate::extract::ApiBytes;
use crate::state::AppState;
use crate::wire::FileView;

/// Invalid JSON was received.
pub(crate) const PARSE_ERROR: i64 = -32700;
/// The JSON sent is not a valid Request object.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// The method does not exist.
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters.
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// The server failed.
pub(crate) const INTERNAL_ERROR: i64 = -32603;
/// No skill by that name (or version) that the caller may see.
pub(crate) const SKILL_NOT_FOUND: i64 = -32001;
/// The skill has no such file, or its bytes were not kept.
pub(crate) const FILE_NOT_FOUND: i64 = -32002;
/// The file is not text; its bytes are at the URL in `data.url`.
pub(crate) const BINARY_FILE: i64 = -32003;
/// The most requests in one batch.
pub(crate) const MAX_BATCH: usize = 20;
/// Skills per `list_skills` page when `limit` is not given.
pub(crate) const DEFAULT_LIST_LIMIT: usize = 50;

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
struct RpcError {
    code: i64,
    message: String,
    data: Option<Value>,
}

impl RpcError {
    fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError::new(INVALID_PARAMS, message)
    }

    fn to_json(&self) -> Value {
        let mut error = json!({ "code": self.code, "message": self.message });
        if let Some(data) = &self.data {
            error["data"] = data.clone();
        }
        error
    }
}

impl From<ApiError> for RpcError {
    fn from(error: ApiError) -> RpcError {
        match error {
            ApiError::InvalidCursor(message) => {
                RpcError::invalid_params(format!("invalid cursor: {message}"))
            }
            ApiError::InvalidParameter { message, .. } | ApiError::InvalidPath(message) => {
                RpcError::invalid_params(message)
            }
            ApiError::NotFound(message) => RpcError::new(SKILL_NOT_FOUND, message),
            other => RpcError::new(INTERNAL_ERROR, other.public_message()),
        }
    }
}

fn response(id: Value, outcome: Result<Value, RpcError>) -> Value {
    match outcome {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err(error) => json!({ "jsonrpc": "2.0", "id": id, "error": error.to_json() }),
    }
}

/// `POST /rpc`.
pub(crate) async fn rpc(
    State(state): State<AppState>,
    Auth(caller): Auth,
    ApiBytes(body): ApiBytes,
) -> Response {
    let value: Value = match serde_json::from_slice(&body) {
        Ok(value) => value,
        Err(error) => {
            let error = RpcError::new(PARSE_ERROR, format!("parse error: {error}"));
            return Json(response(Value::Null, Err(error))).into_response();
        }
    };
    let answers = match value {
        Value::Array(requests) => {
            if requests.is_empty() || requests.len() > MAX_BATCH {
                let error = RpcError::new(
                    INVALID_REQUEST,
                    format!("a batch must hold 1 to {MAX_BATCH} requests"),
                );
                return Json(response(Value::Null, Err(error))).into_response();
            }
            let mut answers = Vec::new();
            for request in requests {
                answers.extend(handle(&state, caller, request).await);
            }
            if answers.is_empty() {
                return StatusCode::NO_CONTENT.into_response();
            }
            Value::Array(answers)
        }
        single => match handle(&state, caller, single).await {
            Some(answer) => answer,
            None => return StatusCode::NO_CONTENT.into_response(),
        },
    };
    Json(answers).into_response()
}

/// Answers one request; `None` for a notification.
async fn handle(state: &AppState, caller: Caller, request: Value) -> Option<Value> {
    let Value::Object(request) = request else {
        let error = RpcError::new(INVALID_REQUEST, "a request must be a JSON object");
        return Some(response(Value::Null, Err(error)));
    };
    let id = match request.get("id") {
        None => None,
        Some(id @ (Value::String(_) | Value::Number(_) | Value::Null)) => Some(id.clone()),
        Some(_) => {
            let error = RpcError::new(INVALID_REQUEST, "id must be a string, a number or null");
            return Some(response(Value::Null, Err(error)));
        }
    };
    let invalid = |message: &str| {
        let error = RpcError::new(INVALID_REQUEST, message);
        Some(response(id.clone().unwrap_or(Value::Null), Err(error)))
    };
    if request.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid("jsonrpc must be \"2.0\"");
    }
    let Some(method) = request.get("method").and_then(Value::as_str) else {
        return invalid("method must be a string");
    };
    let params = match request.get("params") {
        None | Some(Value::Null) => Value::Object(serde_json::Map::new()),
        Some(params @ Value::Object(_)) => params.clone(),
        Some(Value::Array(_)) => {
            let error = RpcError::invalid_params("params must be an object (by name)");
            return id.map(|id| response(id, Err(error)));
        }
        Some(_) => return invalid("params must be an object or an array"),
    };
    let outcome = match method {
        "list_skills" => list_skills(state, caller, params).await,
        "describe_skill" => describe_skill(state, caller, params).await,
        "read_skill_file" => read_skill_file(state, caller, params).await,
        other => Err(RpcError::new(
            METHOD_NOT_FOUND,
            format!("method {:?} not found", shorten(other, 100)),
        )),
    };
    // A notification is executed but not answered.
    id.map(|id| response(id, outcome))
}

fn parse_params<T: DeserializeOwned>(params: Value) -> Result<T, RpcError> {
    serde_json::from_value(params)
        .map_err(|error| RpcError::invalid_params(format!("invalid params: {error}")))
}

#[derive(Debug, Deserialize)]
struct ListParams {
    namespace: Option<String>,
    detail: Option<String>,
    limit: Option<u64>,
    cursor: Option<String>,
}

async fn list_skills(state: &AppState, caller: Caller, params: Value) -> Result<Value, RpcError> {
    let params: ListParams = parse_params(params)?;
    let summary = match params.detail.as_deref().unwrap_or("names") {
        "names" => false,
        "summary" => true,
        other => {
            return Err(RpcError::invalid_params(format!(
                "detail must be \"names\" or \"summary\", not {:?}",
                shorten(other, 100)
            )));
        }
    };
    let limit = match params.limit {
        None => DEFAULT_LIST_LIMIT,
        Some(limit) if (1..=MAX_LIMIT as u64).contains(&limit) => limit as usize,
        Some(limit) => {
            return Err(RpcError::invalid_params(format!(
                "limit must be from 1 to {MAX_LIMIT}, not {limit}"
            )));
        }
    };
    let namespace = match params.namespace.as_deref() {
        None => None,
        Some(raw) => Some(raw.parse::<formats::Domain>().map_err(|_| {
            RpcError::invalid_params(format!(
                "namespace must be a domain, such as example.com, not {:?}",
                shorten(raw, 100)
            ))
        })?),
    };
    let scope = namespace
        .as_ref()
        .map_or(String::new(), ToString::to_string);
    let after = match &params.cursor {
        None => None,
        Some(raw) => {
            let position = cursor::decode("rpc", raw)?;
            let (cursor_scope, after) = position.split_once('\n').unwrap_or(("", ""));
            if cursor_scope != scope {
                return Err(RpcError::invalid_params(
                    "invalid cursor: it belongs to a listing of another namespace",
                ));
            }
            Some(after.to_owned())
        }
    };
    let request = ListRequest {
        caller,
        filters: Filters {
            domain: namespace.iter().map(ToString::to_string).collect(),
            ..Filters::default()
        },
        after,
        limit,
    };
    let page = state
        .directory()
        .ask(move |directory| directory.list(&request))
        .await?;
    let skills: Vec<Value> = page
        .records
        .iter()
        .map(|skill| {
            let mut item = json!({ "name": skill.id, "version": skill.version });
            if summary {
                item["description"] = json!(skill.description);
                item["namespace"] = json!(skill.domain);
                item["kind"] = json!(kind(skill.format, &skill.capability_type));
                item["title"] = json!(skill.title);
                item["capability_type"] = json!(skill.capability_type);
                item["access"] = json!(skill.access);
            }
            item
        })
        .collect();
    let next_cursor = page
        .next_cursor
        .map(|after| cursor::encode("rpc", &format!("{scope}\n{after}")));
    Ok(json!({ "skills": skills, "next_cursor": next_cursor }))
}

/// `action` for skills that do something when invoked, `instruction` for skills an agent
/// reads (every agent skill, and skill-sharing `knowledge`).
fn kind(format: Format, capability_type: &str) -> &'static str {
    match (format, capability_type) {
        (Format::SkillSharing, "api" | "plugin" | "task") => "action",
        _ => "instruction",
    }
}

/// Returns the record id a skill `name` parameter means.
fn skill_id(name: &str) -> Result<SkillId, RpcError> {
    let parsed = match name.split_once('/') {
        Some((domain, slug)) => parse_id(domain, slug).ok(),
        None => parse_sharing_id(name),
    };
    parsed.ok_or_else(|| {
        RpcError::invalid_params(format!(
            "name must be a skill id such as example.com/pdf-tools, not {:?}",
            shorten(name, 100)
        ))
    })
}

/// Returns the skill `name` (at `version`, when given) that `caller` may see.
async fn find_skill(
    state: &AppState,
    caller: Caller,
    name: &str,
    version: Option<&str>,
) -> Result<Skill, RpcError> {
    let id = skill_id(name)?;
    let not_found = || {
        let mut error = RpcError::new(SKILL_NOT_FOUND, format!("skill {id} not found"));
        error.data = Some(json!({ "name": id }));
        error
    };
    let skill = match state.directory().visible_record(caller, id.clone()).await {
        Ok(skill) => skill,
        Err(ApiError::NotFound(_)) => return Err(not_found()),
        Err(other) => return Err(other.into()),
    };
    if let Some(version) = version
        && skill.version.as_deref() != Some(version)
    {
        let mut error = RpcError::new(
            SKILL_NOT_FOUND,
            format!(
                "skill {id} has no version {:?}; the directory has {}",
                shorten(version, 100),
                skill.version.as_deref().unwrap_or("an unversioned one")
            ),
        );
        error.data = Some(json!({ "name": id, "version": skill.version }));
        return Err(error);
    }
    Ok(skill)
}

#[derive(Debug, Deserialize)]
struct DescribeParams {
    name: String,
    version: Option<String>,
    detail: Option<String>,
}

async fn describe_skill(
    state: &AppState,
    caller: Caller,
    params: Value,
) -> Result<Value, RpcError> {
    let params: DescribeParams = parse_params(params)?;
    let detail = params.detail.as_deref().unwrap_or("summary");
    if !matches!(detail, "manifest" | "summary" | "full") {
        return Err(RpcError::invalid_params(format!(
            "detail must be \"manifest\", \"summary\" or \"full\", not {:?}",
            shorten(detail, 100)
        )));
    }
    let skill = find_skill(state, caller, &params.name, params.version.as_deref()).await?;
    let mut described = json!({ "manifest": manifest(state, &skill) });
    if detail != "manifest" {
        described["skill_md_frontmatter"] = match skill.format {
            Format::AgentSkills | Format::McpSkills => Value::Object(skill.frontmatter.clone()),
            Format::SkillSharing => Value::Null,
        };
    }
    if detail == "full" {
        let skill = skill.clone();
        described["skill_md_content"] = state
            .directory()
            .ask(move |directory| Ok(directory.skill_md(&skill)))
            .await?
            .map_or(Value::Null, Value::String);
    }
    Ok(json!({ "skill": described }))
}

/// The manifest: the record's metadata, in the RPC spec's manifest names where it has them.
fn manifest(state: &AppState, skill: &Skill) -> Value {
    let mut manifest = json!({
        "name": skill.id,
        "version": skill.version,
        "description": skill.description,
        "kind": kind(skill.format, &skill.capability_type),
        "namespace": skill.domain,
        "title": skill.title,
        "tags": skill.tags,
        "capability_type": skill.capability_type,
        "access": skill.access,
        "format": skill.format,
        "license": skill.license,
        "source_url": skill.source_url,
        "digest": skill.digest,
        "digest_status": skill.digest_status,
        "files": skill.files.iter().map(FileView::from).collect::<Vec<_>>(),
    });
    if skill.format == Format::SkillSharing {
        manifest["descriptor"] = descriptor_of(state.directory().urls(), skill);
    }
    manifest
}

#[derive(Debug, Deserialize)]
struct ReadParams {
    name: String,
    version: Option<String>,
    path: String,
}

async fn read_skill_file(
    state: &AppState,
    caller: Caller,
    params: Value,
) -> Result<Value, RpcError> {
    let params: ReadParams = parse_params(params)?;
    files::check_path(&params.path).map_err(rpc_file_error)?;
    let skill = find_skill(state, caller, &params.name, params.version.as_deref()).await?;
    let url = state
        .directory()
        .urls()
        .url(&file_path(&skill.domain, &skill.name, &params.path));
    let path = params.path.clone();
    let file = state
        .directory()
        .ask(move |directory| Ok(directory.file(&skill, &path)))
        .await?
        .map_err(rpc_file_error)?;
    match String::from_utf8(file.bytes) {
        Ok(content) => Ok(json!({ "content": content })),
        Err(_) => {
            let mut error = RpcError::new(
                BINARY_FILE,
                format!(
                    "{} is not a text file; fetch its bytes over HTTP",
                    params.path
                ),
            );
            error.data = Some(json!({ "url": url }));
            Err(error)
        }
    }
}

fn rpc_file_error(error: FileError) -> RpcError {
    match error {
        FileError::InvalidPath(message) => RpcError::invalid_params(message),
        FileError::NotFound(message) | FileError::Unavailable(message) => {
            RpcError::new(FILE_NOT_FOUND, message)
        }
        FileError::Internal(detail) => {
            tracing::error!(error = %detail, "reading a skill file failed");
            RpcError::new(INTERNAL_ERROR, "internal error")
        }
    }
}
