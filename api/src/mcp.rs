//! `POST /mcp`: the directory as an MCP server over Streamable HTTP, with the Skills Extension
//! (SEP-2640, `io.modelcontextprotocol/skills`) and one tool, `search_skills`.
//!
//! Both protocol eras are answered, statelessly: a client of protocol `2026-07-28` asks
//! `server/discover` and sends each request as its own POST; an older client sends
//! `initialize` first and gets no session id, so every request stands alone either way and
//! any replica can answer any request. Responses are plain JSON.
//!
//! - `skills/list {cursor?}`: the agent skills the caller may see whose verdict is `valid` or
//!   `lenient` and whose risk is not `critical`, in id order, read [`LIST_PAGE`] records at a time from the index (keyset
//!   pagination: a cursor names the last id of its page). A record that cannot be served (see
//!   [`entry`]) is left out of its page, so a page may hold fewer skills.
//! - `skills/get {uri}`: the entry of any skill served, listed or not; `-32602` for a URI
//!   that names no skill served to this caller.
//! - `resources/read {uri}`: a file of a served skill, from the blob store (text when the
//!   bytes are UTF-8, base64 otherwise); `resources/list`: the `SKILL.md` of every served
//!   skill, paged as `skills/list`.
//! - `tools/list`, `tools/call`: `search_skills`, the `/v1/search` query and filters.
//!
//! Each entry's `_meta` carries the directory's provenance (`PROVENANCE_KEY`): where the skill
//! was found, its digest status and verdict, and the static audit's `risk` and number of
//! `findings` (the record and the skill page list them).
//!
//! A skill's URI is `skill://{domain}/{name}/SKILL.md`: the publisher's host in the authority
//! slot keeps same-named skills of different publishers apart. Its files are
//! `skill://{domain}/{name}/{path}`, each path segment percent-encoded.
//!
//! Access: the caller comes from the bearer token as on every endpoint ([`caller_layer`]); an
//! anonymous caller never sees a private skill, in listings, entries, files or search hits,
//! and a wrong token is a 401 before any MCP message is read. The `Host` header must name
//! this server (`--public-url`) or loopback, and a browser's `Origin` must be the public URL's
//! origin (DNS rebinding and cross-site requests are refused with a 403).

use std::sync::Arc;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use indexer::{Caller, Filters, ListRequest};
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
    GetSkillRequestParams, GetSkillResult, Implementation, JsonObject, ListResourcesResult,
    ListSkillsResult, ListToolsResult, MetaObject, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResultType, ServerCapabilities, ServerConfig, SkillFrontmatter,
    SkillResource, SkillResources, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

use crate::auth::Auth;
use crate::cursor;
use crate::directory::files::FileError;
use crate::directory::urls::{parse_skill_uri, skill_file_uri, skill_page_path, skill_uri};
use crate::directory::{Unservable, servable};
use crate::error::{ApiError, shorten};
use crate::extract::Params;
use crate::state::AppState;
use crate::wire::{SearchBody, rfc3339};

/// Records read from the index for one page of `skills/list` or `resources/list`.
pub(crate) const LIST_PAGE: usize = 100;
/// The `_meta` key of a skill entry's provenance: where the directory found it and what it
/// made of it (digest status, verdict, risk).
pub(crate) const PROVENANCE_KEY: &str = "io.github.skillscout/provenance";
/// The name of the search tool.
pub(crate) const SEARCH_TOOL: &str = "search_skills";
/// Hits `search_skills` returns when `limit` is not given.
pub(crate) const DEFAULT_SEARCH_LIMIT: u64 = 10;

const SKILL_MD: &str = "SKILL.md";
/// The formats whose records are agent skills (a `SKILL.md` and its files).
const SKILL_FORMATS: [&str; 2] = ["agent-skills", "mcp-skills"];
/// The cursor kind of `skills/list` and `resources/list` pages.
const CURSOR_KIND: &str = "mcp";

/// Returns the `/mcp` service over `state`.
pub(crate) fn service(state: &AppState) -> StreamableHttpService<McpServer, NeverSessionManager> {
    let config = state.config();
    let public = &config.public_url;
    let mut hosts = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
    ];
    if let Some(host) = public.host_str() {
        hosts.push(host.trim_matches(['[', ']']).to_owned());
    }
    // With its port spelled out: a browser sends `Origin` without the scheme's default port,
    // and the transport reads a missing port as that default.
    let origin = match (public.host_str(), public.port_or_known_default()) {
        (Some(host), Some(port)) => format!("{}://{host}:{port}", public.scheme()),
        _ => public.origin().ascii_serialization(),
    };
    let transport = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_allowed_hosts(hosts)
        .with_allowed_origins([origin])
        .with_max_request_body_bytes(config.max_body_bytes);
    let server = McpServer {
        state: state.clone(),
    };
    StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        transport,
    )
}

/// Resolves the caller of a `/mcp` request from its bearer token with the extractor every
/// endpoint uses (a wrong token is a 401), for the handler to read.
pub(crate) async fn caller_layer(Auth(caller): Auth, mut request: Request, next: Next) -> Response {
    request.extensions_mut().insert(caller);
    next.run(request).await
}

/// The MCP server handler: renders the read model's answers in the Skills Extension.
#[derive(Debug, Clone)]
pub(crate) struct McpServer {
    state: AppState,
}

/// Returns `skill` as a Skills Extension entry, or why it cannot be served: the read model
/// decides which records are served (`directory::servable`); this makes the entry.
pub(crate) fn entry(skill: &formats::Skill) -> Result<rmcp::model::Skill, Unservable> {
    servable(skill)?;
    let mut fields = skill.frontmatter.clone();
    let (Some(Value::String(name)), Some(Value::String(description))) =
        (fields.remove("name"), fields.remove("description"))
    else {
        return Err(Unservable::Frontmatter);
    };
    let (domain, slug) = (skill.domain.as_str(), skill.name.as_str());
    let mut resources = Vec::with_capacity(skill.files.len());
    for file in &skill.files {
        let (Some(size), Some(digest)) = (file.size, file.sha256) else {
            return Err(Unservable::UnknownFile(file.path.clone()));
        };
        resources.push(SkillResource::new(
            skill_file_uri(domain, slug, &file.path),
            digest.to_string(),
            size,
        ));
    }
    let mut frontmatter = SkillFrontmatter::new(name, description);
    frontmatter.extra = fields;
    let provenance = json!({
        "origin": skill.source_url.as_str(),
        "index": skill.index_url.as_str(),
        "digestStatus": skill.digest_status,
        "verdict": skill.verdict().as_str(),
        "risk": skill.risk.as_str(),
        "findings": skill.findings.len(),
        "firstSeen": rfc3339(skill.first_seen),
        "lastSeen": rfc3339(skill.last_seen),
        "lastChanged": rfc3339(skill.last_changed),
    });
    let mut meta = JsonObject::new();
    meta.insert(PROVENANCE_KEY.to_owned(), provenance);
    let entry = rmcp::model::Skill::new(
        skill_uri(domain, slug),
        frontmatter,
        SkillResources::Files(resources),
    )
    .with_meta(MetaObject(meta));
    entry.validate().map_err(|_| Unservable::Frontmatter)?;
    Ok(entry)
}

/// Returns the caller that [`caller_layer`] resolved for the request of `context`.
fn caller_of(context: &RequestContext<RoleServer>) -> Caller {
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Caller>())
        .copied()
        .unwrap_or(Caller::Anonymous)
}

fn internal(error: &ApiError) -> ErrorData {
    ErrorData::internal_error(error.public_message(), None)
}

impl McpServer {
    /// How long a client may treat a listing or an entry as current: the time between two
    /// crawls when the server recrawls, the cache lifetime of the HTTP API otherwise.
    fn ttl_ms(&self) -> u64 {
        let config = self.state.config();
        let ttl = config.recrawl_every.unwrap_or(config.cache_max_age);
        u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX)
    }

    /// Public answers may be shared by any cache; an authenticated caller's may hold private
    /// skills.
    fn scope(caller: Caller) -> CacheScope {
        match caller {
            Caller::Anonymous => CacheScope::Public,
            Caller::Authenticated => CacheScope::Private,
        }
    }

    /// Reads one page of agent skills the caller may see, and the cursor of the next.
    async fn page(
        &self,
        caller: Caller,
        request: Option<PaginatedRequestParams>,
    ) -> Result<(Vec<formats::Skill>, Option<String>), ErrorData> {
        let after = match request.and_then(|request| request.cursor) {
            None => None,
            Some(raw) => Some(cursor::decode(CURSOR_KIND, &raw).map_err(|error| {
                ErrorData::invalid_params(
                    format!("invalid cursor: {}", error.public_message()),
                    None,
                )
            })?),
        };
        let request = ListRequest {
            caller,
            filters: Filters {
                format: SKILL_FORMATS
                    .iter()
                    .map(|&format| format.to_owned())
                    .collect(),
                ..Filters::default()
            },
            after,
            limit: LIST_PAGE,
        };
        // The index lists the page's ids; each record is one point read of the crawl store,
        // the source the index is derived from.
        let (records, next) = self
            .state
            .directory()
            .ask(move |directory| directory.records(&request))
            .await
            .map_err(|error| internal(&error))?;
        let next = next.map(|after| cursor::encode(CURSOR_KIND, &after));
        Ok((records, next))
    }

    /// Returns the record a `skill://` URI names and the file path in it, when the caller
    /// may see it and it is served; `-32602` otherwise, as for any URI this server does not
    /// serve.
    async fn resolve(
        &self,
        caller: Caller,
        uri: &str,
    ) -> Result<(formats::Skill, rmcp::model::Skill, String), ErrorData> {
        let unknown = |why: String| {
            ErrorData::invalid_params(
                format!("{} is not served here: {why}", shorten(uri, 300)),
                Some(json!({ "uri": shorten(uri, 300) })),
            )
        };
        let Some((id, path)) = parse_skill_uri(uri) else {
            return Err(unknown(
                "not a skill:// URI of the form skill://<domain>/<name>/<path>".into(),
            ));
        };
        let skill = match self
            .state
            .directory()
            .visible_record(caller, id.clone())
            .await
        {
            Ok(skill) => skill,
            Err(ApiError::NotFound(_)) => return Err(unknown(format!("no skill {id}"))),
            Err(other) => return Err(internal(&other)),
        };
        let entry = entry(&skill).map_err(|why| unknown(why.reason()))?;
        Ok((skill, entry, path))
    }

    /// Returns the public URL of the page of the skill `domain/name`, as a search hit gives
    /// them (an unparsable pair keeps its text as it is).
    fn page_url(&self, domain: &str, name: &str) -> String {
        let urls = self.state.directory().urls();
        match (
            domain.parse::<formats::Domain>(),
            name.parse::<formats::Slug>(),
        ) {
            (Ok(domain), Ok(name)) => urls.url(&skill_page_path(&domain, &name)),
            _ => urls.url(&format!("/skill/{domain}/{name}")),
        }
    }

    async fn search(&self, caller: Caller, arguments: JsonObject) -> CallToolResult {
        let params = match search_params(arguments) {
            Ok(params) => params,
            Err(message) => return CallToolResult::error(vec![ContentBlock::text(message)]),
        };
        let request = match params.search_request(caller) {
            Ok(request) => request,
            Err(error) => {
                return CallToolResult::error(vec![ContentBlock::text(error.public_message())]);
            }
        };
        let results = match self
            .state
            .directory()
            .ask(move |directory| directory.search(&request))
            .await
        {
            Ok(results) => results,
            Err(error) => {
                return CallToolResult::error(vec![ContentBlock::text(error.public_message())]);
            }
        };
        let mut body = match serde_json::to_value(SearchBody::from(results)) {
            Ok(body) => body,
            Err(error) => {
                return CallToolResult::error(vec![ContentBlock::text(error.to_string())]);
            }
        };
        if let Some(hits) = body.get_mut("hits").and_then(Value::as_array_mut) {
            for hit in hits {
                let field = |name: &str| hit.get(name).and_then(Value::as_str).map(str::to_owned);
                let (Some(domain), Some(name), Some(format)) =
                    (field("domain"), field("name"), field("format"))
                else {
                    continue;
                };
                let skill = SKILL_FORMATS
                    .contains(&format.as_str())
                    .then(|| skill_uri(&domain, &name));
                hit["uri"] = json!(skill);
                hit["page"] = json!(self.page_url(&domain, &name));
            }
        }
        CallToolResult::structured(body)
    }
}

/// The names `search_skills` takes besides `query`, `limit` and `offset`: the `/v1/search`
/// filters, each a string or a list of strings.
const SEARCH_FILTERS: [&str; 8] = [
    "type", "access", "domain", "format", "tag", "license", "verdict", "risk",
];

/// Turns `search_skills` arguments into the query parameters of `/v1/search`, so that both
/// check them alike.
fn search_params(arguments: JsonObject) -> Result<Params, String> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut limit_given = false;
    for (name, value) in arguments {
        match (name.as_str(), value) {
            ("query", Value::String(query)) => pairs.push(("q".into(), query)),
            ("query", Value::Null) => {}
            ("limit" | "offset", Value::Number(number)) => {
                limit_given |= name == "limit";
                pairs.push((name, number.to_string()));
            }
            (filter, Value::String(value)) if SEARCH_FILTERS.contains(&filter) => {
                pairs.push((name, value));
            }
            (filter, Value::Array(values)) if SEARCH_FILTERS.contains(&filter) => {
                for value in values {
                    let Value::String(value) = value else {
                        return Err(format!("{name} must be a string or a list of strings"));
                    };
                    pairs.push((name.clone(), value));
                }
            }
            (filter, Value::Null) if SEARCH_FILTERS.contains(&filter) => {}
            ("query", _) => return Err("query must be a string".into()),
            ("limit" | "offset", _) => return Err(format!("{name} must be an integer")),
            (filter, _) if SEARCH_FILTERS.contains(&filter) => {
                return Err(format!("{name} must be a string or a list of strings"));
            }
            (other, _) => {
                return Err(format!(
                    "unknown argument {:?}; search_skills takes query, limit, offset, {}",
                    shorten(other, 100),
                    SEARCH_FILTERS.join(", ")
                ));
            }
        }
    }
    if !limit_given {
        pairs.push(("limit".into(), DEFAULT_SEARCH_LIMIT.to_string()));
    }
    Ok(Params::from_pairs(pairs))
}

/// The `search_skills` tool as `tools/list` shows it.
fn search_tool() -> Tool {
    let filter = |what: &str| {
        json!({
            "description": what,
            "anyOf": [
                { "type": "string" },
                { "type": "array", "items": { "type": "string" } }
            ]
        })
    };
    let schema = json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "What the skill should do: a few keywords (\"pdf extraction\") or the whole task in your own words. Empty lists skills by the filters alone."
            },
            "type": filter("Capability types: skill (every agent skill), plugin, api, knowledge, task."),
            "access": filter("Access policies: public, restricted, private (private skills need a token)."),
            "domain": filter("Publishers' domains, such as example.com."),
            "format": filter("Source formats: agent-skills, skill-sharing, mcp-skills."),
            "tag": filter("Tags."),
            "license": filter("Licences, such as mit."),
            "verdict": filter("Verdicts: valid, lenient, invalid, any (default: valid and lenient)."),
            "risk": filter("Risks the static safety audit gives: none, low, medium, high, critical, any (default: all but critical)."),
            "limit": { "type": "integer", "minimum": 1, "maximum": indexer::MAX_LIMIT, "default": DEFAULT_SEARCH_LIMIT },
            "offset": { "type": "integer", "minimum": 0, "default": 0 }
        },
        "additionalProperties": false
    });
    let Value::Object(schema) = schema else {
        unreachable!("a JSON object literal is an object")
    };
    Tool::new(
        SEARCH_TOOL,
        "Search the skill directory: returns the best-matching skills for a task, with their \
         ids, descriptions and scores. A hit with a `uri` is an agent skill served here: call \
         skills/get with that URI for its manifest, then resources/read for its files.",
        schema,
    )
    .with_title("Search skills")
    .with_annotations(ToolAnnotations::new().read_only(true))
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_resources()
            .enable_tools()
            .enable_skills()
            .build();
        let mut server = Implementation::new("skillscout", env!("CARGO_PKG_VERSION"));
        server.title = Some(self.state.config().name.clone());
        ServerConfig::new(capabilities)
            .with_server_info(server)
            .with_instructions(
                "A directory of agent skills crawled from publishers' sites. Find a skill for a \
                 task with the search_skills tool, confirm it with skills/get, and read its files \
                 with resources/read. skills/list pages through every skill. A skill's URI is \
                 skill://<publisher's domain>/<name>/SKILL.md.",
            )
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let caller = caller_of(&context);
        let (records, next_cursor) = self.page(caller, request).await?;
        let skills = records
            .iter()
            .filter_map(|skill| entry(skill).ok())
            .collect();
        Ok(ListSkillsResult {
            result_type: Some(ResultType::COMPLETE),
            meta: None,
            next_cursor,
            ttl_ms: Some(self.ttl_ms()),
            cache_scope: Some(Self::scope(caller)),
            skills,
        })
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let caller = caller_of(&context);
        let (_, entry, path) = self.resolve(caller, &request.uri).await?;
        if path != SKILL_MD {
            return Err(ErrorData::invalid_params(
                "a skill is named by the URI of its SKILL.md",
                Some(json!({ "uri": shorten(&request.uri, 300) })),
            ));
        }
        Ok(GetSkillResult::new(entry)
            .with_ttl_ms(self.ttl_ms())
            .with_cache_scope(Self::scope(caller)))
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let caller = caller_of(&context);
        let (records, next_cursor) = self.page(caller, request).await?;
        let resources = records
            .iter()
            .filter_map(|skill| {
                let entry = entry(skill).ok()?;
                let size = skill
                    .files
                    .iter()
                    .find(|file| file.path == SKILL_MD)
                    .and_then(|file| file.size);
                let mut resource = Resource::new(entry.uri, skill.name.as_str());
                resource.title = Some(skill.title.clone());
                resource.description = Some(skill.description.clone());
                resource.mime_type = Some("text/markdown".to_owned());
                resource.size = size;
                Some(resource)
            })
            .collect();
        Ok(ListResourcesResult {
            result_type: Some(ResultType::COMPLETE),
            meta: None,
            next_cursor,
            ttl_ms: Some(self.ttl_ms()),
            cache_scope: Some(Self::scope(caller)),
            resources,
        })
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let caller = caller_of(&context);
        let (skill, _, path) = self.resolve(caller, &request.uri).await?;
        let uri = request.uri;
        let read_path = path.clone();
        let read = self
            .state
            .directory()
            .ask(move |directory| Ok(directory.file(&skill, &read_path)))
            .await
            .map_err(|error| internal(&error))?;
        let file = match read {
            Ok(file) => file,
            Err(FileError::InvalidPath(message) | FileError::NotFound(message)) => {
                return Err(ErrorData::invalid_params(
                    message,
                    Some(json!({ "uri": shorten(&uri, 300) })),
                ));
            }
            Err(FileError::Unavailable(message)) => {
                return Err(ErrorData::internal_error(message, None));
            }
            Err(FileError::Internal(message)) => {
                tracing::error!(%message, "cannot read a skill file");
                return Err(internal(&ApiError::Internal(message)));
            }
        };
        let mime_type = file
            .content_type
            .split(';')
            .next()
            .unwrap_or(file.content_type)
            .to_owned();
        let contents = match String::from_utf8(file.bytes) {
            Ok(text) => ResourceContents::text(text, uri),
            Err(not_text) => ResourceContents::blob(BASE64.encode(not_text.into_bytes()), uri),
        }
        .with_mime_type(mime_type);
        Ok(ReadResourceResult::new(vec![contents])
            .with_ttl_ms(self.ttl_ms())
            .with_cache_scope(Self::scope(caller))
            .into())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![search_tool()]))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        (name == SEARCH_TOOL).then(search_tool)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != SEARCH_TOOL {
            return Err(ErrorData::invalid_params(
                format!(
                    "no tool {:?}; this server has {SEARCH_TOOL}",
                    shorten(&request.name, 100)
                ),
                None,
            ));
        }
        let caller = caller_of(&context);
        let arguments = request.arguments.unwrap_or_default();
        Ok(self.search(caller, arguments).await.into())
    }
}

#[cfg(test)]
mod tests {
    use formats::skill::FileEntry;
    use formats::{Access, Digest, Format};

    use super::*;
    use crate::directory::{
        MAX_SERVED_BYTES as MAX_SKILL_BYTES, MAX_SERVED_FILES as MAX_SKILL_FILES,
    };
    use crate::testing;

    /// An agent skill whose frontmatter and files make it servable.
    fn servable() -> formats::Skill {
        let mut skill = testing::record("a.test/pdf-tools", Access::Public);
        skill.frontmatter.insert("name".into(), json!("pdf-tools"));
        skill
            .frontmatter
            .insert("description".into(), json!("Extracts text."));
        skill.frontmatter.insert("license".into(), json!("MIT"));
        skill.files = vec![file("SKILL.md", 120), file("scripts/run.py", 30)];
        skill
    }

    fn file(path: &str, size: u64) -> FileEntry {
        FileEntry {
            path: path.to_owned(),
            size: Some(size),
            sha256: Some(Digest::of(path.as_bytes())),
        }
    }

    #[test]
    fn an_entry_is_the_whole_manifest_with_the_frontmatter_verbatim() {
        let entry = entry(&servable()).unwrap();
        assert_eq!(entry.uri, "skill://a.test/pdf-tools/SKILL.md");
        assert_eq!(entry.frontmatter.name, "pdf-tools");
        assert_eq!(entry.frontmatter.extra["license"], json!("MIT"));
        let SkillResources::Files(files) = &entry.resources else {
            panic!("dynamic");
        };
        let uris: Vec<&str> = files.iter().map(|file| file.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "skill://a.test/pdf-tools/SKILL.md",
                "skill://a.test/pdf-tools/scripts/run.py"
            ]
        );
        assert_eq!(files[1].size, 30);
        assert_eq!(files[1].digest, Digest::of(b"scripts/run.py").to_string());
        let provenance = &entry.meta.unwrap().0[PROVENANCE_KEY];
        assert_eq!(provenance["digestStatus"], "verified");
        assert_eq!(provenance["origin"], "http://a.test/pdf-tools/SKILL.md");
        assert_eq!(provenance["risk"], "none");
        assert_eq!(provenance["findings"], 0);
    }

    #[test]
    fn skills_the_extension_cannot_describe_are_not_served() {
        let mut service = servable();
        service.format = Format::SkillSharing;
        assert_eq!(entry(&service), Err(Unservable::NotAnAgentSkill));

        let mut renamed = servable();
        renamed
            .frontmatter
            .insert("name".into(), json!("other-name"));
        assert_eq!(entry(&renamed), Err(Unservable::Frontmatter));
        let mut undescribed = servable();
        undescribed.frontmatter.remove("description");
        assert_eq!(entry(&undescribed), Err(Unservable::Frontmatter));

        let mut flagged = servable();
        flagged.risk = formats::audit::Risk::Critical;
        assert_eq!(entry(&flagged), Err(Unservable::Critical));
        flagged.risk = formats::audit::Risk::High;
        assert!(entry(&flagged).is_ok(), "a high risk is shown, not refused");

        let mut unfetched = servable();
        unfetched.files[1].sha256 = None;
        assert_eq!(
            entry(&unfetched),
            Err(Unservable::UnknownFile("scripts/run.py".into()))
        );
        let mut headless = servable();
        headless.files.remove(0);
        assert_eq!(entry(&headless), Err(Unservable::NoSkillMd));

        // The extension's limits: 512 files, 16 MiB.
        let mut crowded = servable();
        crowded.files = (0..MAX_SKILL_FILES)
            .map(|n| file(&format!("f{n}"), 1))
            .collect();
        crowded.files.push(file("SKILL.md", 1));
        assert_eq!(entry(&crowded), Err(Unservable::TooLarge));
        crowded.files.remove(0);
        assert!(entry(&crowded).is_ok(), "512 files are allowed");
        let mut heavy = servable();
        heavy.files[1].size = Some(MAX_SKILL_BYTES);
        assert_eq!(entry(&heavy), Err(Unservable::TooLarge));
        heavy.files[1].size = Some(MAX_SKILL_BYTES - 120);
        assert!(entry(&heavy).is_ok(), "16 MiB in all is allowed");
    }
}
