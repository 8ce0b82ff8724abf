//! One MCP endpoint's crawl: the Skills Extension read over HTTP, one JSON-RPC call per POST,
//! every call through the session (the address guard, robots.txt, the host's turn, retries,
//! size caps), so an MCP server is crawled as politely as a web site.
//!
//! The conversation: `server/discover` on protocol 2026-07-28 (no handshake, no session);
//! when the server does not understand it (a 4xx or a JSON-RPC error), `initialize` on an older
//! protocol, `notifications/initialized`, and the `Mcp-Session-Id` the server hands out.
//! Then `skills/list` page by page (at most [`mcp::MAX_LIST_PAGES`] pages,
//! [`mcp::MAX_LISTING_BYTES`] and [`mcp::MAX_ENDPOINT_SKILLS`] skills), and `resources/read` for each listed file, SKILL.md
//! first, each file checked (size, then digest) as it arrives so that a lying skill costs no
//! further request. A file whose digest the blob store already holds is not read again.

use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use serde_json::{Map, Value, json};
use time::OffsetDateTime;
use url::Url;

use super::{Kept, keep_blob};
use crate::fetch::{FetchFailure, Fetcher, Session};
use formats::diagnostic::{Code, Diagnostic};
use formats::mcp::{
    self, Era, LEGACY_PROTOCOLS, ListedFile, ListedFiles, ListedSkill, RpcError, SKILL_MD,
    SkillsSupport,
};
use formats::normalize::{self, Fetched, McpRead, Source};
use formats::site::{IndexRead, SiteFindings};
use formats::skill::DigestStatus;

/// The `MCP-Protocol-Version` header.
const PROTOCOL_VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
/// The `Mcp-Method` header (protocol 2026-07-28 routes on it).
const METHOD_HEADER: HeaderName = HeaderName::from_static("mcp-method");
/// The `Mcp-Name` header: the resource a `resources/read` is for.
const NAME_HEADER: HeaderName = HeaderName::from_static("mcp-name");
/// The `Mcp-Session-Id` header of the older protocols.
const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
/// Room for the JSON around a file's bytes in a `resources/read` answer.
const READ_ENVELOPE_BYTES: usize = 64 * 1024;
/// A file's bytes may grow this many times on the wire: JSON escapes of control characters
/// (`\u0000`) are six bytes for one.
const WIRE_GROWTH: usize = 6;

/// Why a call gave no result.
enum CallError {
    /// The request failed before an answer (robots.txt, the guard, the network, a cap).
    Fetch(FetchFailure),
    /// The server answered a status other than 2xx, with the JSON-RPC error its body held.
    Status(StatusCode, Option<RpcError>),
    /// The server answered 2xx with a JSON-RPC error, or with something else than a response.
    Rpc(RpcError),
}

impl CallError {
    /// True when the answer to `server/discover` is how a server of the older protocols
    /// refuses it: a JSON-RPC error, or a 4xx other than 401 and 403.
    fn means_older_protocol(&self) -> bool {
        match self {
            CallError::Rpc(_) => true,
            CallError::Status(status, _) => {
                status.is_client_error()
                    && !matches!(*status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
            }
            CallError::Fetch(_) => false,
        }
    }

    /// Returns the failure as the crawl records it.
    fn failure(&self, url: &Url, method: &str) -> FetchFailure {
        match self {
            CallError::Fetch(failure) => failure.clone(),
            CallError::Status(status, rpc) => {
                let detail = rpc.as_ref().map(RpcError::message).unwrap_or_default();
                let code = match *status {
                    StatusCode::NOT_FOUND => Code::NotFound,
                    StatusCode::GONE => Code::Gone,
                    _ => Code::HttpStatus,
                };
                FetchFailure::new(
                    code,
                    url,
                    format!("{method}: status {} {detail}", status.as_u16())
                        .trim_end()
                        .to_owned(),
                )
            }
            CallError::Rpc(rpc) => FetchFailure::new(
                Code::McpProtocol,
                url,
                format!("{method}: {}", rpc.message()),
            ),
        }
    }
}

/// A call's result, with the answer's headers and size.
struct Answer {
    result: Value,
    headers: HeaderMap,
    bytes: usize,
}

/// One conversation with an endpoint.
struct Client<'a, 's> {
    session: &'a mut Session<'s>,
    endpoint: &'a Url,
    era: Era,
    /// The session an older server handed out in answer to `initialize`.
    session_id: Option<HeaderValue>,
    next_id: u64,
}

impl Client<'_, '_> {
    fn headers(&self, method: &str, name: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        headers.insert(
            PROTOCOL_VERSION_HEADER,
            HeaderValue::from_static(self.era.protocol_version()),
        );
        if !method.is_empty()
            && let Ok(value) = HeaderValue::from_str(method)
        {
            headers.insert(METHOD_HEADER, value);
        }
        if let Some(value) = name.and_then(|name| HeaderValue::from_str(name).ok()) {
            headers.insert(NAME_HEADER, value);
        }
        if let Some(session_id) = &self.session_id {
            headers.insert(SESSION_HEADER, session_id.clone());
        }
        headers
    }

    /// Sends one request and returns its result and the answer's headers.
    async fn call(
        &mut self,
        method: &str,
        params: Map<String, Value>,
        name: Option<&str>,
        limit: usize,
    ) -> Result<Answer, CallError> {
        self.next_id += 1;
        let id = self.next_id;
        let body = if method == "initialize" {
            let version = params
                .get("protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or(LEGACY_PROTOCOLS[0]);
            mcp::initialize_body(id, version)
        } else {
            mcp::request_body(id, method, params, self.era)
        };
        let headers = self.headers(method, name);
        let mut response = self
            .session
            .post(self.endpoint, &headers, &body, limit)
            .await
            .map_err(CallError::Fetch)?;
        let bytes = response.body.len();
        let parsed = if bytes <= PARSE_INLINE_BYTES {
            mcp::parse_response(&response.body, response.content_type.as_deref(), id)
        } else {
            // A file's answer may be tens of MiB: parsed on the blocking pool, not on an
            // async worker that the other hosts' crawls share.
            let body = std::mem::take(&mut response.body);
            let content_type = response.content_type.clone();
            tokio::task::spawn_blocking(move || {
                mcp::parse_response(&body, content_type.as_deref(), id)
            })
            .await
            .unwrap_or_else(|error| {
                Err(RpcError::Invalid(format!(
                    "the answer could not be parsed: {error}"
                )))
            })
        };
        if !response.status.is_success() {
            return Err(CallError::Status(response.status, parsed.err()));
        }
        match parsed {
            Ok(result) => Ok(Answer {
                result,
                headers: response.headers,
                bytes,
            }),
            Err(rpc) => Err(CallError::Rpc(rpc)),
        }
    }

    /// Sends `notifications/initialized`; the answer (202, or 200) carries nothing.
    async fn notify_initialized(&mut self) -> Result<(), FetchFailure> {
        let headers = self.headers("notifications/initialized", None);
        let response = self
            .session
            .post(
                self.endpoint,
                &headers,
                &mcp::initialized_body(),
                mcp::MAX_LIST_RESPONSE_BYTES,
            )
            .await?;
        if response.status.is_success() {
            Ok(())
        } else {
            Err(FetchFailure::new(
                Code::HttpStatus,
                self.endpoint,
                format!(
                    "notifications/initialized: status {}",
                    response.status.as_u16()
                ),
            ))
        }
    }

    /// Ends the session an older server handed out, as its protocol asks of a client that is
    /// done; a server that refuses (405) or fails is left to expire it.
    async fn end_session(&mut self) {
        if self.session_id.is_none() {
            return;
        }
        let headers = self.headers("", None);
        if let Err(failure) = self.session.delete(self.endpoint, &headers).await {
            tracing::debug!(endpoint = %self.endpoint, failure = %failure.message, "the MCP session could not be ended");
        }
    }

    /// Learns the server's capabilities: `server/discover`, else `initialize` on an older
    /// protocol. `Ok(None)` when the endpoint is not there (404 or 410 to both).
    async fn negotiate(&mut self) -> Result<Option<Value>, FetchFailure> {
        let limit = mcp::MAX_LIST_RESPONSE_BYTES;
        let discovered = self.call("server/discover", Map::new(), None, limit).await;
        let first_failure = match discovered {
            Ok(answer) => return Ok(Some(answer.result)),
            // A server of the older protocols does not know `server/discover`: it answers a
            // 4xx or a JSON-RPC error (method not found, unsupported version, no session).
            // Authentication failures, server errors and failed requests are not that, and a
            // second request would meet them again.
            Err(error) if error.means_older_protocol() => {
                error.failure(self.endpoint, "server/discover")
            }
            Err(error) => return Err(error.failure(self.endpoint, "server/discover")),
        };
        tracing::debug!(endpoint = %self.endpoint, failure = %first_failure.message, "falling back to initialize");
        let mut last = Err(first_failure);
        for version in LEGACY_PROTOCOLS {
            self.era = Era::Legacy(version);
            let mut params = Map::new();
            params.insert("protocolVersion".to_owned(), json!(version));
            match self.call("initialize", params, None, limit).await {
                Ok(Answer {
                    result, headers, ..
                }) => {
                    // The server may pick another version it knows; ours is only sent in the
                    // header when it is one we offer.
                    if let Some(picked) = result.get("protocolVersion").and_then(Value::as_str)
                        && let Some(known) = LEGACY_PROTOCOLS.iter().find(|known| **known == picked)
                    {
                        self.era = Era::Legacy(known);
                    }
                    self.session_id = headers.get(SESSION_HEADER).cloned();
                    self.notify_initialized().await?;
                    return Ok(Some(result));
                }
                Err(CallError::Fetch(failure)) => return Err(failure),
                Err(CallError::Status(StatusCode::NOT_FOUND | StatusCode::GONE, _)) => {
                    return Ok(None);
                }
                // A JSON-RPC error may refuse the version offered: offer the next one.
                Err(error @ CallError::Rpc(_)) => {
                    last = Err(error.failure(self.endpoint, "initialize"));
                }
                Err(error) => return Err(error.failure(self.endpoint, "initialize")),
            }
        }
        last
    }
}

/// Reads one MCP endpoint to the end. Robots.txt was read already. Never fails: every problem
/// is a failure, an index diagnostic or a record diagnostic in what it returns.
pub(super) async fn crawl_endpoint(
    session: &mut Session<'_>,
    fetcher: &Fetcher,
    endpoint: &Url,
    seen_at: OffsetDateTime,
    kept: &mut Kept<'_>,
) -> SiteFindings {
    let mut found = SiteFindings::default();
    let Ok(source) = Source::new(endpoint.clone()) else {
        found.failures.push(FetchFailure::new(
            Code::InvalidUrl,
            endpoint,
            "the endpoint is not an http(s) URL with a host",
        ));
        return found;
    };
    let mut client = Client {
        session,
        endpoint,
        era: Era::Stateless,
        session_id: None,
        next_id: 0,
    };
    let capabilities = match client.negotiate().await {
        Ok(Some(capabilities)) => capabilities,
        Ok(None) => {
            found.notes.push(Diagnostic::new(
                Code::NotFound,
                format!("{endpoint} answers 404: no MCP server there"),
            ));
            return found;
        }
        Err(failure) => {
            found.disallowed = failure.code == Code::RobotsDisallowed;
            // Refused by robots.txt, or gone for good: the endpoint's skills are withdrawn.
            if matches!(failure.code, Code::RobotsDisallowed | Code::Gone) {
                found.withdrawn.push(endpoint.clone());
            }
            found.failures.push(failure);
            return found;
        }
    };
    if let Some(problem) = SkillsSupport::of(&capabilities).problem() {
        found.notes.push(problem);
        client.end_session().await;
        return found;
    }

    let (entries, mut index) = list_skills(&mut client, endpoint).await;
    let Some(entries) = entries else {
        found.failures.extend(index.failures);
        client.end_session().await;
        return found;
    };
    let listing = mcp::read_listing(&entries);
    found
        .named
        .extend(formats::discover::json_value_origins(&entries, endpoint));
    index.read.diagnostics.extend(listing.diagnostics);
    found.failures.extend(index.failures);
    found.indexes.push(index.read);

    for listed in listing.skills {
        let reads = read_files(&mut client, fetcher, &listed).await;
        let uri = listed.uri.clone();
        let lost = std::sync::Arc::clone(&kept.blobs_lost);
        match normalize_on_blocking_pool(fetcher, &source, listed, reads, seen_at, lost).await {
            Ok(record) => {
                found.named.extend(formats::discover::origins(&record));
                kept.hold(vec![record]);
                kept.flush_if_full().await;
            }
            Err(message) => {
                // Never a silent drop: the failure is reported, and the listing counts as read
                // in part, so the skill's stored record is not removed.
                found.failures.push(FetchFailure::new(
                    Code::McpProtocol,
                    endpoint,
                    format!("{uri}: the record could not be built: {message}"),
                ));
                if let Some(index) = found.indexes.last_mut() {
                    index.complete = false;
                }
            }
        }
    }
    client.end_session().await;
    found
}

/// What paging through `skills/list` gave: the index as read, and the failure that cut the
/// listing short, if any.
struct ListRead {
    read: IndexRead,
    failures: Vec<FetchFailure>,
}

/// Pages through `skills/list`. The entries are `None` when the first page failed; a later
/// page's failure keeps what came before but makes the index unusable, so that the skills of
/// the pages not read are not removed.
async fn list_skills(
    client: &mut Client<'_, '_>,
    endpoint: &Url,
) -> (Option<Vec<Value>>, ListRead) {
    let mut list = ListRead {
        read: IndexRead {
            url: endpoint.clone(),
            format: formats::Format::McpSkills,
            version: None,
            diagnostics: Vec::new(),
            usable: true,
            complete: true,
        },
        failures: Vec::new(),
    };
    let mut entries: Vec<Value> = Vec::new();
    let mut cursor: Option<String> = None;
    let mut cursors_seen = std::collections::HashSet::new();
    let mut listing_bytes = 0;
    for page in 0.. {
        if page == mcp::MAX_LIST_PAGES {
            list.read.diagnostics.push(
                Diagnostic::new(
                    Code::TooManyEntries,
                    format!(
                        "skills/list has more than {} pages; the rest is not read",
                        mcp::MAX_LIST_PAGES
                    ),
                )
                .as_warning(),
            );
            // Not read whole: skills on the pages left unread are not removed.
            list.read.complete = false;
            break;
        }
        let mut params = Map::new();
        if let Some(cursor) = &cursor {
            params.insert("cursor".to_owned(), json!(cursor));
        }
        let result = client
            .call("skills/list", params, None, mcp::MAX_LIST_RESPONSE_BYTES)
            .await;
        let parsed = match result {
            Ok(answer) => {
                listing_bytes += answer.bytes;
                mcp::parse_list_page(&answer.result)
                    .map_err(|problem| FetchFailure::new(Code::McpProtocol, endpoint, problem))
            }
            Err(error) => Err(error.failure(endpoint, "skills/list")),
        };
        let page_read = match parsed {
            Ok(page_read) => page_read,
            Err(failure) => {
                list.failures.push(failure);
                if page == 0 {
                    return (None, list);
                }
                list.read.usable = false;
                break;
            }
        };
        entries.extend(page_read.skills);
        if listing_bytes > mcp::MAX_LISTING_BYTES && page_read.next_cursor.is_some() {
            list.read.diagnostics.push(
                Diagnostic::new(
                    Code::TooLarge,
                    format!(
                        "skills/list answers add up to more than {} bytes; the rest is not read",
                        mcp::MAX_LISTING_BYTES
                    ),
                )
                .as_warning(),
            );
            list.read.complete = false;
            break;
        }
        if entries.len() > mcp::MAX_ENDPOINT_SKILLS {
            entries.truncate(mcp::MAX_ENDPOINT_SKILLS);
            list.read.diagnostics.push(
                Diagnostic::new(
                    Code::TooManyEntries,
                    format!(
                        "the server lists more than {} skills; the rest is not read",
                        mcp::MAX_ENDPOINT_SKILLS
                    ),
                )
                .as_warning(),
            );
            list.read.complete = false;
            break;
        }
        match page_read.next_cursor {
            Some(next) if !cursors_seen.insert(next.clone()) => {
                list.read.diagnostics.push(
                    Diagnostic::new(
                        Code::McpProtocol,
                        format!("skills/list hands out the cursor {next:?} a second time; the listing ends there"),
                    )
                    .as_warning(),
                );
                list.read.complete = false;
                break;
            }
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    (Some(entries), list)
}

/// A file read for a skill: its path and its bytes, or the diagnostic of why there are none.
type FileRead = (String, Result<Vec<u8>, Diagnostic>);

/// Reads a listed skill's files, SKILL.md first, checking each against the listing as it
/// arrives and stopping at the first that fails. A refused entry is not read at all.
async fn read_files(
    client: &mut Client<'_, '_>,
    fetcher: &Fetcher,
    listed: &ListedSkill,
) -> Vec<FileRead> {
    let mut reads = Vec::new();
    if listed.refused {
        return reads;
    }
    match &listed.files {
        ListedFiles::Files(files) => {
            for file in files {
                let known = match fetcher.blobs() {
                    Some(blobs) => blobs.get(&file.digest).await.ok().flatten(),
                    None => None,
                };
                let limit = usize::try_from(file.size)
                    .unwrap_or(usize::MAX)
                    .saturating_mul(WIRE_GROWTH)
                    .saturating_add(READ_ENVELOPE_BYTES)
                    .min(mcp::MAX_READ_RESPONSE_BYTES);
                let read = match known {
                    Some(bytes) => Ok(bytes),
                    None => read_resource(client, &file.uri, limit).await,
                };
                let (read, failed) = match read {
                    Ok(bytes) => {
                        let (bytes, matches) = check_off_worker(file, bytes).await;
                        (Ok(bytes), !matches)
                    }
                    Err(why) => (Err(why), true),
                };
                reads.push((file.path.clone(), read));
                if failed {
                    break;
                }
            }
        }
        ListedFiles::Dynamic => {
            let limit = normalize::MAX_SKILL_MD_BYTES * WIRE_GROWTH + READ_ENVELOPE_BYTES;
            let read = read_resource(client, &listed.uri, limit).await;
            reads.push((SKILL_MD.to_owned(), read));
        }
    }
    reads
}

/// Bytes above which an answer is parsed on the blocking pool rather than on an async worker.
const PARSE_INLINE_BYTES: usize = 64 * 1024;

/// Bytes above which a file is hashed on the blocking pool rather than on an async worker,
/// which the other hosts' crawls share (a skill's file may be 16 MiB).
const HASH_INLINE_BYTES: usize = 64 * 1024;

/// Checks `bytes` against the listing's `file` (size, then digest); gives the bytes back with
/// whether they match.
async fn check_off_worker(file: &ListedFile, bytes: Vec<u8>) -> (Vec<u8>, bool) {
    if bytes.len() <= HASH_INLINE_BYTES {
        let matches = mcp::check_file(file, &bytes).is_ok();
        return (bytes, matches);
    }
    let file = file.clone();
    tokio::task::spawn_blocking(move || {
        let matches = mcp::check_file(&file, &bytes).is_ok();
        (bytes, matches)
    })
    .await
    // A check that could not run is a check that failed: the normaliser reports the file.
    .unwrap_or_default()
}

/// Reads one resource's bytes.
async fn read_resource(
    client: &mut Client<'_, '_>,
    uri: &str,
    limit: usize,
) -> Result<Vec<u8>, Diagnostic> {
    let mut params = Map::new();
    params.insert("uri".to_owned(), json!(uri));
    let endpoint = client.endpoint.clone();
    match client
        .call("resources/read", params, Some(uri), limit)
        .await
    {
        Ok(answer) => {
            let contents = if answer.bytes <= PARSE_INLINE_BYTES {
                mcp::read_contents(&answer.result, uri)
            } else {
                // Decoding a large `blob` (base64, up to 16 MiB) would hold up the other
                // hosts' crawls on this async worker.
                let owned_uri = uri.to_owned();
                tokio::task::spawn_blocking(move || mcp::read_contents(&answer.result, &owned_uri))
                    .await
                    .unwrap_or_else(|error| {
                        Err(format!("the content could not be decoded: {error}"))
                    })
            };
            contents
                .map_err(|problem| Diagnostic::new(Code::McpProtocol, format!("{uri}: {problem}")))
        }
        Err(error) => {
            let failure = error.failure(&endpoint, "resources/read");
            Err(Diagnostic::new(
                failure.code,
                format!("{uri}: {}", failure.message),
            ))
        }
    }
}

/// Builds the record on the blocking pool (hashing up to 16 MiB, parsing YAML), and keeps the
/// files' bytes in the blob store when they were verified (or had nothing to verify against).
async fn normalize_on_blocking_pool(
    fetcher: &Fetcher,
    source: &Source,
    listed: ListedSkill,
    reads: Vec<FileRead>,
    seen_at: OffsetDateTime,
    blobs_lost: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> Result<formats::Skill, String> {
    let blobs = fetcher.blobs().cloned();
    let source = source.clone();
    let uri = listed.uri.clone();
    let built = tokio::task::spawn_blocking(move || {
        let views: Vec<McpRead<'_>> = reads
            .iter()
            .map(|(path, read)| McpRead {
                path,
                fetched: match read {
                    Ok(bytes) => Fetched::Bytes {
                        bytes,
                        content_type: None,
                    },
                    Err(why) => Fetched::Failed(why),
                },
            })
            .collect();
        let record = normalize::mcp_skill(&source, &listed, &views, seen_at);
        // Bytes are kept unless the record failed verification (the site pipeline's rule):
        // a file read after a failed one is never read, so every byte kept was checked.
        // Nor are the bytes of content refused for its size (a dynamic skill's SKILL.md has
        // no listed size to refuse it by before it is read).
        let verified = matches!(
            record.digest_status,
            DigestStatus::Verified | DigestStatus::Absent
        ) && record
            .diagnostics
            .iter()
            .all(|diagnostic| diagnostic.code != Code::TooLarge);
        if verified {
            for (_, read) in &reads {
                if let Ok(bytes) = read {
                    keep_blob(blobs.as_ref(), bytes, &blobs_lost);
                }
            }
        }
        record
    })
    .await;
    built.map_err(|error| {
        tracing::error!(%error, %uri, "normalising an MCP skill failed");
        error.to_string()
    })
}
