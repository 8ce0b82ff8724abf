//! `POST /mcp` conformance, with `rmcp`'s client against a server on 127.0.0.1:0: both
//! protocol eras, the Skills Extension's entries checked file by file against what
//! `resources/read` returns, keyset pagination over thousands of skills, the access policy,
//! `-32602` paths, the `search_skills` tool, and the transport's guards.

use std::collections::BTreeSet;
use std::sync::Arc;

use api::{AppState, ServeConfig, Tokens};
use base64::Engine;
use formats::skill::{Artifact, DigestStatus, FileEntry};
use formats::{Access, Format, Skill, SkillId};
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResult, ClientConfig, ErrorCode,
    GetSkillRequestParams, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ResourceContents, SkillResources,
};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use serde_json::{Value, json};
use store::blobs::Blobs;
use store::{DomainStatus, Store};
use time::OffsetDateTime;
use tokio::net::TcpListener;
use url::Url;

use crate::fixture::{self, PRIVATE_ID, TOKEN, hit_ids};

type Client = RunningService<RoleClient, ClientConfig>;

/// The two ways a client starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Era {
    /// Protocol 2026-07-28: `server/discover`, then self-contained requests.
    Discover,
    /// The older protocols: `initialize`, then requests.
    Initialize,
}

const ERAS: [Era; 2] = [Era::Discover, Era::Initialize];

/// Serves `state` on 127.0.0.1:0 until the test's runtime ends; returns the `/mcp` URL.
async fn serve(state: AppState) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(api::serve(listener, state, std::future::pending()));
    format!("http://{addr}/mcp")
}

fn http_client() -> reqwest::Client {
    let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().build().unwrap()
}

async fn connect(url: &str, era: Era, token: Option<&str>) -> Client {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    let transport = StreamableHttpClientTransport::with_client(http_client(), config);
    let (client, mode) = match era {
        Era::Discover => (
            ClientConfig::default(),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        ),
        Era::Initialize => (
            ClientConfig::default().with_protocol_version(ProtocolVersion::V_2025_11_25),
            ClientLifecycleMode::Initialize,
        ),
    };
    let client = client.serve_with_lifecycle(transport, mode).await.unwrap();
    let info = client.peer_info().unwrap();
    let expected = match era {
        Era::Discover => ProtocolVersion::V_2026_07_28,
        Era::Initialize => ProtocolVersion::V_2025_11_25,
    };
    assert_eq!(info.protocol_version, expected);
    assert!(
        info.capabilities.supports_skills(),
        "{:?}",
        info.capabilities
    );
    assert!(info.capabilities.resources.is_some());
    assert!(info.capabilities.tools.is_some());
    client
}

/// Pages through `skills/list`; checks each page's cache hints (on protocol 2026-07-28) and
/// returns the entries in order with the number of pages.
async fn list_all(
    client: &Client,
    era: Era,
    scope: CacheScope,
) -> (Vec<rmcp::model::Skill>, usize) {
    let mut skills = Vec::new();
    let mut cursor: Option<String> = None;
    for pages in 1..=1_000 {
        let params = cursor
            .take()
            .map(|cursor| PaginatedRequestParams::default().with_cursor(Some(cursor)));
        let page = client.list_skills(params).await.unwrap();
        if era == Era::Discover {
            assert!(page.ttl_ms.is_some_and(|ttl| ttl > 0), "{:?}", page.ttl_ms);
            assert_eq!(page.cache_scope, Some(scope));
        }
        assert!(page.skills.len() <= 100);
        skills.extend(page.skills);
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return (skills, pages),
        }
    }
    panic!("skills/list did not end");
}

/// The raw bytes of a `resources/read` answer.
fn bytes_of(contents: &[ResourceContents], uri: &str) -> Vec<u8> {
    assert_eq!(contents.len(), 1, "{contents:?}");
    match &contents[0] {
        ResourceContents::TextResourceContents {
            uri: read, text, ..
        } => {
            assert_eq!(read, uri);
            text.as_bytes().to_vec()
        }
        ResourceContents::BlobResourceContents {
            uri: read, blob, ..
        } => {
            assert_eq!(read, uri);
            base64::engine::general_purpose::STANDARD
                .decode(blob)
                .unwrap()
        }
        other => panic!("unexpected contents {other:?}"),
    }
}

/// Reads every file of `entry` and checks size, digest and (for `SKILL.md`) the frontmatter,
/// as a host must before it loads a skill.
async fn verify(client: &Client, entry: &rmcp::model::Skill) {
    entry.validate().unwrap();
    let SkillResources::Files(files) = &entry.resources else {
        panic!("{} has dynamic resources", entry.uri);
    };
    assert!(
        files.iter().any(|file| file.uri == entry.uri),
        "{}",
        entry.uri
    );
    for file in files {
        let read = client
            .read_resource(ReadResourceRequestParams::new(file.uri.clone()))
            .await
            .unwrap();
        let bytes = bytes_of(&read.contents, &file.uri);
        file.verify(&bytes)
            .unwrap_or_else(|error| panic!("{}: {error}", file.uri));
        if file.uri == entry.uri {
            let parsed = formats::skill_md::parse(&bytes, None);
            let listed = serde_json::to_value(&entry.frontmatter).unwrap();
            assert_eq!(Value::Object(parsed.frontmatter), listed, "{}", entry.uri);
        }
    }
}

fn code_of(error: ServiceError) -> ErrorCode {
    match error {
        ServiceError::McpError(error) => error.code,
        other => panic!("not an MCP error: {other:?}"),
    }
}

/// The agent skills of the fixture web a caller may see, as `/v1/search` lists them.
async fn agent_skills_by_search(token: bool) -> BTreeSet<String> {
    let who = if token {
        fixture::As::Token
    } else {
        fixture::As::Anonymous
    };
    let reply = fixture::get("/v1/search?format=agent-skills&limit=100", who).await;
    reply.json()["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| {
            format!(
                "skill://{}/{}/SKILL.md",
                hit["domain"].as_str().unwrap(),
                hit["name"].as_str().unwrap()
            )
        })
        .collect()
}

#[tokio::test]
async fn both_eras_list_every_agent_skill_and_every_file_verifies() {
    let url = serve(fixture::state()).await;
    let expected = agent_skills_by_search(false).await;
    assert!(expected.len() >= 5, "{expected:?}");
    for era in ERAS {
        let client = connect(&url, era, None).await;
        let (skills, _) = list_all(&client, era, CacheScope::Public).await;
        let listed: BTreeSet<String> = skills.iter().map(|skill| skill.uri.clone()).collect();
        assert_eq!(listed.len(), skills.len(), "a skill listed twice");
        assert_eq!(listed, expected, "{era:?}");
        for entry in &skills {
            verify(&client, entry).await;
            // `skills/get` gives the same entry as the listing, with its provenance.
            let got = client
                .get_skill(GetSkillRequestParams::new(entry.uri.clone()))
                .await
                .unwrap();
            assert_eq!(&got.skill, entry);
            if era == Era::Discover {
                assert_eq!(got.cache_scope, Some(CacheScope::Public));
                assert!(got.ttl_ms.is_some());
            }
            let meta = entry.meta.as_ref().unwrap();
            let provenance = &meta.0["io.github.skillscout/provenance"];
            assert!(
                provenance["origin"]
                    .as_str()
                    .unwrap()
                    .starts_with("http://"),
                "{provenance}"
            );
            assert!(matches!(
                provenance["verdict"].as_str(),
                Some("valid" | "lenient")
            ));
            assert!(provenance["firstSeen"].as_str().unwrap().ends_with('Z'));
        }
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn a_skill_is_had_by_uri_without_listing_and_unknown_uris_are_invalid_params() {
    let url = serve(fixture::state()).await;
    let uri = agent_skills_by_search(false).await.pop_last().unwrap();
    for era in ERAS {
        // A fresh client that never listed: skills/get and resources/read by URI alone.
        let client = connect(&url, era, None).await;
        let got = client
            .get_skill(GetSkillRequestParams::new(uri.clone()))
            .await
            .unwrap();
        verify(&client, &got.skill).await;

        let private_service = {
            let (domain, name) = PRIVATE_ID.split_once('/').unwrap();
            format!("skill://{domain}/{name}/SKILL.md")
        };
        let not_served = [
            "skill://nowhere.test/missing/SKILL.md".to_owned(),
            "https://example.com/SKILL.md".to_owned(),
            "skill://".to_owned(),
            // A skill-sharing service has no SKILL.md; a private one is absent anyway.
            private_service,
            // A skill is named by its SKILL.md, not another file or its folder.
            uri.replace("/SKILL.md", ""),
            uri.replace("/SKILL.md", "/README.md"),
            uri.replace("/SKILL.md", "/../other/SKILL.md"),
        ];
        for bad in &not_served {
            let error = client
                .get_skill(GetSkillRequestParams::new(bad.clone()))
                .await
                .unwrap_err();
            assert_eq!(
                code_of(error),
                ErrorCode::INVALID_PARAMS,
                "skills/get {bad}"
            );
        }
        for bad in [
            uri.replace("/SKILL.md", "/no-such-file.md"),
            uri.replace("/SKILL.md", "/../../etc/passwd"),
            uri.replace("/SKILL.md", "/%2e%2e/SKILL.md"),
            "skill://nowhere.test/missing/SKILL.md".to_owned(),
        ] {
            let error = client
                .read_resource(ReadResourceRequestParams::new(bad.clone()))
                .await
                .unwrap_err();
            assert_eq!(
                code_of(error),
                ErrorCode::INVALID_PARAMS,
                "resources/read {bad}"
            );
        }
        client.cancel().await.unwrap();
    }
}

/// Calls `search_skills` with `arguments` (a JSON object) and returns the tool's answer.
async fn call_search_skills(client: &Client, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("tool arguments are an object: {arguments}")
    };
    client
        .call_tool(CallToolRequestParams::new("search_skills").with_arguments(arguments))
        .await
        .unwrap()
}

/// [`call_search_skills`]'s structured answer, failing the test when the tool answers with an
/// error.
async fn search_skills(client: &Client, arguments: Value) -> Value {
    let answer = call_search_skills(client, arguments).await;
    assert_ne!(answer.is_error, Some(true), "{answer:?}");
    answer.structured_content.unwrap()
}

/// A stand-in sentence model: a text's vector counts its words of two topics (languages;
/// money), plus a little of a third so that no vector is zero.
struct Topics;

impl indexer::Embed for Topics {
    fn embed(&self, text: &str) -> Vec<f32> {
        const TOPICS: [&[&str]; 2] = [
            &["spanish", "translate", "translates", "languages"],
            &["salaries", "payroll", "invoice", "invoices"],
        ];
        let mut vector = [0.0f32, 0.0, 0.1];
        for word in text.split(|c: char| !c.is_alphanumeric()) {
            let word = word.to_lowercase();
            for (topic, words) in TOPICS.iter().enumerate() {
                if words.contains(&word.as_str()) {
                    vector[topic] += 1.0;
                }
            }
        }
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        vector.iter().map(|x| x / norm).collect()
    }

    fn dimensions(&self) -> usize {
        3
    }

    fn model_id(&self) -> String {
        "topics (a stand-in)".to_owned()
    }
}

/// With the semantic option, `search_skills` ranks as `/v1/search` does: a task whose words
/// no record holds finds the skill near it in meaning.
#[tokio::test]
async fn search_skills_with_the_semantic_option_finds_skills_by_meaning() {
    const TRANSLATOR: &str = "services.test/test.services.translate-v2";
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_owned();
    let with_model = tokio::task::spawn_blocking(move || {
        fixture::build_state_with_model(&data, Arc::new(Topics))
    })
    .await
    .unwrap();
    let words_alone = serve(fixture::state()).await;
    let with_model = serve(with_model).await;
    let mut found = Vec::new();
    for url in [&words_alone, &with_model] {
        let client = connect(url, Era::Discover, None).await;
        let body = search_skills(&client, json!({ "query": "put my letter into Spanish" })).await;
        found.push(hit_ids(&body));
        client.cancel().await.unwrap();
    }
    assert!(
        !found[0].iter().any(|id| id == TRANSLATOR),
        "{:?}",
        found[0]
    );
    assert!(found[1].iter().any(|id| id == TRANSLATOR), "{:?}", found[1]);
}

#[tokio::test]
async fn search_skills_finds_skills_for_a_task_as_the_caller_may_see_them() {
    let url = serve(fixture::state()).await;
    for (token, sees_private) in [(None, false), (Some(TOKEN), true)] {
        let client = connect(&url, Era::Discover, token).await;
        let tools = client.list_all_tools().await.unwrap();
        assert_eq!(tools.len(), 1);
        let tool = &tools[0];
        assert_eq!(tool.name, "search_skills");
        assert!(tool.input_schema["properties"]["query"].is_object());
        assert!(tool.description.as_deref().unwrap().contains("skills/get"));

        // Browsing every verdict with no query lists every record the caller may see.
        let body = search_skills(
            &client,
            json!({ "query": "", "verdict": "any", "limit": 100 }),
        )
        .await;
        let ids = hit_ids(&body);
        assert_eq!(
            ids.iter().any(|id| id == PRIVATE_ID),
            sees_private,
            "{ids:?}"
        );
        assert_eq!(body["total"].as_u64().unwrap() as usize, ids.len());

        // A task in the user's words; an agent skill's hit carries the URI skills/get takes.
        let body = search_skills(
            &client,
            json!({ "query": "release notes from the git history", "format": ["agent-skills"] }),
        )
        .await;
        let hits = body["hits"].as_array().unwrap();
        assert!(!hits.is_empty(), "{body}");
        assert!(hits.len() <= 10, "the default limit is 10");
        let uri = hits[0]["uri"].as_str().unwrap();
        let got = client
            .get_skill(GetSkillRequestParams::new(uri.to_owned()))
            .await
            .unwrap();
        assert_eq!(got.skill.uri, uri);

        // Bad arguments are a tool error the agent can read, not a protocol error.
        for bad in [
            json!({ "query": 7 }),
            json!({ "limit": 0 }),
            json!({ "limit": "ten" }),
            json!({ "type": [1, 2] }),
            json!({ "colour": "blue" }),
        ] {
            let answer = call_search_skills(&client, bad.clone()).await;
            assert_eq!(answer.is_error, Some(true), "{bad}: {answer:?}");
        }
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn the_transport_refuses_wrong_tokens_foreign_origins_and_large_bodies() {
    let url = serve(fixture::state()).await;
    let http = http_client();
    let discover = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": { "name": "test", "version": "1" }
        }
    });
    let post = |body: String| {
        http.post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body)
    };
    let ok = post(discover.to_string()).send().await.unwrap();
    assert_eq!(ok.status(), 200, "{}", ok.text().await.unwrap());

    let wrong = post(discover.to_string())
        .bearer_auth("not-the-token")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);

    let foreign = post(discover.to_string())
        .header("origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403);
    let own = post(discover.to_string())
        .header("origin", "http://directory.test")
        .send()
        .await
        .unwrap();
    assert_eq!(own.status(), 200);

    let rebound = post(discover.to_string())
        .header("host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), 403);

    let huge = post(format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{{\"pad\":\"{}\"}}}}",
        "x".repeat(api::DEFAULT_MAX_BODY_BYTES + 1)
    ))
    .send()
    .await
    .unwrap();
    assert_eq!(huge.status(), 413);
}

/// A directory of `count` agent skills of `a.test` (one private) with a SKILL.md and a
/// supporting file each, their bytes in the blob store.
fn many_skills(dir: &std::path::Path, count: usize) -> AppState {
    let blobs = Blobs::open(dir).unwrap();
    let now = OffsetDateTime::now_utc();
    let records: Vec<Skill> = (0..count)
        .map(|n| {
            let name = format!("skill-{n:05}");
            let description = format!("Skill number {n} does numbered things.");
            let skill_md =
                format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n");
            let helper = format!("print({n})\n");
            let skill_md_digest = blobs.blocking().put(skill_md.as_bytes()).unwrap();
            let helper_digest = blobs.blocking().put(helper.as_bytes()).unwrap();
            let id: SkillId = format!("a.test/{name}").parse().unwrap();
            let mut frontmatter = serde_json::Map::new();
            frontmatter.insert("name".into(), json!(name));
            frontmatter.insert("description".into(), json!(description));
            Skill {
                format: Format::AgentSkills,
                title: name.clone(),
                description,
                capability_type: "skill".into(),
                access: if n == 7 {
                    Access::Private
                } else {
                    Access::Public
                },
                version: None,
                source_url: Url::parse(&format!("http://a.test/{name}/SKILL.md")).unwrap(),
                index_url: Url::parse("http://a.test/.well-known/agent-skills/index.json").unwrap(),
                artifact: Artifact::SkillMd,
                digest: Some(skill_md_digest),
                digest_status: DigestStatus::Verified,
                frontmatter,
                body: format!("# {name}\n"),
                files: vec![
                    FileEntry {
                        path: "SKILL.md".into(),
                        size: Some(skill_md.len() as u64),
                        sha256: Some(skill_md_digest),
                    },
                    FileEntry {
                        path: "scripts/run.py".into(),
                        size: Some(helper.len() as u64),
                        sha256: Some(helper_digest),
                    },
                ],
                tags: Vec::new(),
                license: None,
                diagnostics: Vec::new(),
                risk: formats::audit::Risk::None,
                findings: Vec::new(),
                fingerprint: None,
                first_seen: now,
                last_seen: now,
                last_changed: now,
                domain: id.domain().clone(),
                name: id.slug().clone(),
                id,
            }
        })
        .collect();
    let status = DomainStatus::read_ok(
        records[0].domain.clone(),
        "http://a.test".into(),
        vec![Format::AgentSkills],
        vec![records[0].index_url.clone()],
        records.len(),
        now,
    );
    let store = Arc::new(Store::open(dir).unwrap());
    store
        .blocking()
        .apply_domain(&status, records, now)
        .unwrap();
    let config = ServeConfig {
        recrawl_every: Some(std::time::Duration::from_secs(6 * 3600)),
        ..ServeConfig::default()
    };
    fixture::state_over(dir, store, blobs, Tokens::from_list([TOKEN]), config)
}

#[tokio::test]
async fn pagination_walks_thousands_of_skills_once_each_and_private_ones_need_a_token() {
    const COUNT: usize = 2_500;
    let dir = tempfile::tempdir().unwrap();
    let state = tokio::task::spawn_blocking({
        let dir = dir.path().to_owned();
        move || many_skills(&dir, COUNT)
    })
    .await
    .unwrap();
    let url = serve(state).await;
    let private = "skill://a.test/skill-00007/SKILL.md";
    for (token, scope, expected) in [
        (None, CacheScope::Public, COUNT - 1),
        (Some(TOKEN), CacheScope::Private, COUNT),
    ] {
        for era in ERAS {
            let client = connect(&url, era, token).await;
            let (skills, pages) = list_all(&client, era, scope).await;
            assert_eq!(skills.len(), expected, "{era:?} {token:?}");
            assert_eq!(pages, COUNT.div_ceil(100), "{era:?} {token:?}");
            let uris: Vec<&str> = skills.iter().map(|skill| skill.uri.as_str()).collect();
            assert!(uris.is_sorted(), "skills come in id order");
            assert_eq!(uris.iter().collect::<BTreeSet<_>>().len(), expected);
            assert_eq!(uris.contains(&private), token.is_some());
            for entry in skills.iter().step_by(499) {
                verify(&client, entry).await;
            }
            let got = client
                .get_skill(GetSkillRequestParams::new(private.to_owned()))
                .await;
            match token {
                None => assert_eq!(code_of(got.unwrap_err()), ErrorCode::INVALID_PARAMS),
                Some(_) => verify(&client, &got.unwrap().skill).await,
            }
            if era == Era::Discover {
                let got = client
                    .get_skill(GetSkillRequestParams::new(
                        "skill://a.test/skill-00001/SKILL.md".to_owned(),
                    ))
                    .await
                    .unwrap();
                // The recrawl schedule (six hours) is how long the entry stays current.
                assert_eq!(got.ttl_ms, Some(6 * 3600 * 1000));
            }
            // A cursor that was not issued here is invalid params, not a fresh listing.
            let error = client
                .list_skills(Some(
                    PaginatedRequestParams::default().with_cursor(Some("bogus".to_owned())),
                ))
                .await
                .unwrap_err();
            assert_eq!(code_of(error), ErrorCode::INVALID_PARAMS);
            client.cancel().await.unwrap();
        }
    }
}

// The audit's risk travels with each entry's provenance; a critical skill is not served.
#[tokio::test]
async fn provenance_carries_the_risk_and_critical_skills_are_not_served() {
    let url = serve(crate::audit::state()).await;
    let client = connect(&url, Era::Discover, None).await;
    let (skills, _) = list_all(&client, Era::Discover, CacheScope::Public).await;
    let uris: Vec<&str> = skills.iter().map(|skill| skill.uri.as_str()).collect();
    assert!(
        !uris.contains(&"skill://flagged.test/quick-setup/SKILL.md"),
        "{uris:?}"
    );
    let flagged = skills
        .iter()
        .find(|skill| skill.uri == "skill://flagged.test/toolchain-setup/SKILL.md")
        .unwrap();
    let provenance = &flagged.meta.as_ref().unwrap().0["io.github.skillscout/provenance"];
    assert_eq!(provenance["risk"], "high", "{provenance}");
    assert_eq!(provenance["findings"], 1, "{provenance}");
    let error = client
        .get_skill(GetSkillRequestParams::new(
            "skill://flagged.test/quick-setup/SKILL.md".to_owned(),
        ))
        .await
        .unwrap_err();
    assert_eq!(code_of(error), ErrorCode::INVALID_PARAMS);
    client.cancel().await.unwrap();
}
