//! Crawls of MCP servers on loopback: an `rmcp` server with the Skills Extension, mounted in
//! an axum router beside a robots.txt, whose handler can lie (a wrong digest, a frontmatter
//! unlike its SKILL.md), page its listing, leave the extension out, or speak only the older
//! protocol. Every request the router sees is logged with its `Mcp-Method` and times.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::Response;
use rmcp::model::{
    ErrorData, GetSkillRequestParams, GetSkillResult, ListSkillsResult, PaginatedRequestParams,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ResourceContents, ServerCapabilities, ServerConfig, Skill, SkillFrontmatter, SkillResource,
    SkillResources,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{RoleServer, ServerHandler};

use crawler::crawl::{CrawlConfig, CrawlReport};
use formats::skill::{Digest, DigestStatus, Verdict};
use formats::{Code, Format};
use store::Outcome;

use base64::Engine as _;

use crate::{Data, domain, error_codes};

/// One request the router saw.
#[derive(Debug, Clone)]
struct Hit {
    path: String,
    method: String,
    /// The `Mcp-Method` header, or the HTTP method for requests without one.
    mcp_method: String,
    started: Instant,
    finished: Instant,
}

/// A skill the server lists, and the bytes it serves for each file URI.
#[derive(Clone)]
struct Served {
    entry: Skill,
    /// Served as `text` when UTF-8, else as a base64 `blob`.
    files: Vec<(String, Vec<u8>)>,
}

/// How the test server behaves.
#[derive(Clone, Default)]
struct Behaviour {
    skills: Vec<Served>,
    /// Skills per `skills/list` page (0: all on one).
    page_size: usize,
    /// Leave the Skills Extension out of the capabilities.
    without_extension: bool,
    /// Support only protocol 2025-11-25 (the older, `initialize` era).
    legacy_only: bool,
    /// When set, only this many of `skills` are listed (a test changes it between crawls).
    listed: Option<Arc<AtomicUsize>>,
    /// Answer with `application/json` rather than event streams (stateless server).
    json_response: bool,
}

#[derive(Clone)]
struct Handler(Arc<Behaviour>);

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        let builder = ServerCapabilities::builder().enable_resources();
        let capabilities = if self.0.without_extension {
            builder.build()
        } else {
            builder.enable_skills().build()
        };
        ServerConfig::new(capabilities)
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        if self.0.legacy_only {
            std::borrow::Cow::Owned(vec![ProtocolVersion::V_2025_11_25])
        } else {
            std::borrow::Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS)
        }
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let start: usize = request
            .and_then(|params| params.cursor)
            .map(|cursor| cursor.parse().unwrap())
            .unwrap_or(0);
        let listed = self
            .0
            .listed
            .as_ref()
            .map_or(usize::MAX, |listed| listed.load(Ordering::SeqCst));
        let all: Vec<Skill> = self
            .0
            .skills
            .iter()
            .take(listed)
            .map(|s| s.entry.clone())
            .collect();
        let size = if self.0.page_size == 0 {
            all.len()
        } else {
            self.0.page_size
        };
        let end = (start + size).min(all.len());
        let mut result = ListSkillsResult::with_all_items(all[start..end].to_vec());
        result.next_cursor = (end < all.len()).then(|| end.to_string());
        Ok(result)
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        self.0
            .skills
            .iter()
            .find(|served| served.entry.uri == request.uri)
            .map(|served| GetSkillResult::new(served.entry.clone()))
            .ok_or_else(|| ErrorData::invalid_params("no such skill", None))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let bytes = self
            .0
            .skills
            .iter()
            .flat_map(|served| served.files.iter())
            .find(|(uri, _)| *uri == request.uri)
            .map(|(_, bytes)| bytes.clone());
        let contents = match bytes.map(String::from_utf8) {
            Some(Ok(text)) => ResourceContents::text(text, request.uri),
            Some(Err(binary)) => ResourceContents::blob(
                base64::engine::general_purpose::STANDARD.encode(binary.as_bytes()),
                request.uri,
            ),
            None => return Err(ErrorData::resource_not_found(request.uri, None)),
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

/// The MCP server on 127.0.0.1, at `/mcp`, with `robots` served at `/robots.txt`.
struct McpServer {
    port: u16,
    hits: Arc<Mutex<Vec<Hit>>>,
}

impl McpServer {
    async fn start(behaviour: Behaviour, robots: Option<&'static str>) -> McpServer {
        let json_response = behaviour.json_response;
        let behaviour = Arc::new(behaviour);
        let service = StreamableHttpService::new(
            move || Ok(Handler(Arc::clone(&behaviour))),
            Arc::new(LocalSessionManager::default()),
            StreamableHttpServerConfig::default()
                .disable_allowed_hosts()
                .with_sse_keep_alive(None)
                .with_legacy_session_mode(!json_response)
                .with_json_response(json_response),
        );
        let hits: Arc<Mutex<Vec<Hit>>> = Arc::default();
        let router = Router::new()
            .route(
                "/robots.txt",
                axum::routing::get(move || async move {
                    match robots {
                        Some(text) => (axum::http::StatusCode::OK, text),
                        None => (axum::http::StatusCode::NOT_FOUND, ""),
                    }
                }),
            )
            .nest_service("/mcp", service)
            .layer(middleware::from_fn_with_state(Arc::clone(&hits), log));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        McpServer { port, hits }
    }

    fn seed(&self) -> String {
        format!("mcp+http://mcp.test:{}/mcp", self.port)
    }

    fn domain(&self) -> String {
        format!("mcp.test:{}", self.port)
    }

    fn hits(&self) -> Vec<Hit> {
        self.hits.lock().unwrap().clone()
    }

    fn methods(&self) -> Vec<String> {
        self.hits().into_iter().map(|hit| hit.mcp_method).collect()
    }

    fn config(&self) -> CrawlConfig {
        let mut config = CrawlConfig::default();
        config.fetch.resolve = vec![format!("*.test=127.0.0.1:{}", self.port).parse().unwrap()];
        config.fetch.host_delay = Duration::ZERO;
        config.fetch.connect_timeout = Duration::from_secs(2);
        config.fetch.request_timeout = Duration::from_secs(5);
        config.fetch.retry_base_delay = Duration::from_millis(20);
        config
    }

    async fn crawl(&self, data: &Data, config: CrawlConfig) -> CrawlReport {
        data.crawl_targets(config, &[&self.seed()], std::future::pending())
            .await
    }
}

async fn log(State(hits): State<Arc<Mutex<Vec<Hit>>>>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let path = request.uri().path().to_owned();
    let method = request.method().to_string();
    let mcp_method = request
        .headers()
        .get("mcp-method")
        .and_then(|value| value.to_str().ok())
        .map_or_else(|| method.clone(), str::to_owned);
    let response = next.run(request).await;
    // Bodies are small and sent at once: the answer's head is as good as its end here.
    hits.lock().unwrap().push(Hit {
        path,
        method,
        mcp_method,
        started,
        finished: Instant::now(),
    });
    response
}

fn skill_md(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n\nUse it well.\n")
}

/// A skill whose listing tells the truth: its frontmatter and every file's digest and size.
fn honest(name: &str, description: &str, extra: &[(&str, &str)]) -> Served {
    let root = format!("skill://{name}");
    let mut files = vec![(
        format!("{root}/SKILL.md"),
        skill_md(name, description).into_bytes(),
    )];
    for (path, text) in extra {
        files.push((format!("{root}/{path}"), text.as_bytes().to_vec()));
    }
    let resources = files
        .iter()
        .map(|(uri, bytes)| SkillResource::from_bytes(uri.clone(), bytes))
        .collect();
    Served {
        entry: Skill::new(
            format!("{root}/SKILL.md"),
            SkillFrontmatter::new(name, description),
            SkillResources::Files(resources),
        ),
        files,
    }
}

fn record(data: &Data, id: &str) -> formats::Skill {
    data.store
        .blocking()
        .record(id)
        .unwrap()
        .unwrap_or_else(|| panic!("no record {id}"))
        .skill
}

fn codes(skill: &formats::Skill) -> Vec<Code> {
    skill.diagnostics.iter().map(|d| d.code).collect()
}

#[tokio::test]
async fn good_lying_and_mismatching_skills() {
    // Files over 64 KiB are checked on the blocking pool, the others inline: both kinds here.
    let table = "row,1\n".repeat(20_000);
    let good = honest(
        "pdf-tools",
        "Extracts text from PDF files.",
        &[
            ("scripts/extract.py", "print('pdf')\n"),
            ("scripts/table.csv", &table),
        ],
    );
    let data_file = "a,b\n".repeat(30_000);
    let mut lying = honest(
        "csv-clean",
        "Cleans CSV files.",
        &[("data.txt", &data_file)],
    );
    if let SkillResources::Files(files) = &mut lying.entry.resources {
        // The supporting file's digest lies; its size is right.
        files[1] = SkillResource::new(
            files[1].uri.clone(),
            Digest::of("a,c\n".repeat(30_000).as_bytes()).to_string(),
            files[1].size,
        );
    }
    let mut mismatching = honest("notes", "Takes notes.", &[]);
    mismatching.entry.frontmatter = SkillFrontmatter::new("notes", "Takes careful notes.");
    let server = McpServer::start(
        Behaviour {
            skills: vec![good, lying, mismatching],
            ..Behaviour::default()
        },
        None,
    )
    .await;
    let data = Data::new();
    let report = server.crawl(&data, server.config()).await;

    let line = domain(&report, &server.domain());
    assert_eq!(line.outcome, Outcome::Ok, "{line:#?}");
    assert_eq!(line.formats, [Format::McpSkills]);
    assert_eq!(line.skills, 3);
    assert_eq!(
        line.requests,
        server.hits().len(),
        "every request is counted"
    );
    assert_eq!(line.origin, server.seed());
    let mut errors = error_codes(line);
    errors.sort();
    assert_eq!(errors, ["digest_mismatch", "frontmatter_mismatch"]);

    let domain_name = server.domain();
    let good = record(&data, &format!("{domain_name}/pdf-tools"));
    assert_eq!(good.verdict(), Verdict::Valid, "{:#?}", good.diagnostics);
    assert_eq!(good.format, Format::McpSkills);
    assert_eq!(good.digest_status, DigestStatus::Verified);
    assert_eq!(good.description, "Extracts text from PDF files.");
    assert_eq!(good.body, "# pdf-tools\n\nUse it well.\n");
    assert_eq!(
        good.source_url.as_str(),
        format!("http://{domain_name}/mcp#skill://pdf-tools/SKILL.md")
    );
    assert_eq!(good.index_url.as_str(), format!("http://{domain_name}/mcp"));
    let paths: Vec<&str> = good.files.iter().map(|file| file.path.as_str()).collect();
    assert_eq!(
        paths,
        ["SKILL.md", "scripts/extract.py", "scripts/table.csv"]
    );
    let kept = good.file("scripts/table.csv").unwrap();
    assert_eq!(
        data.blobs
            .get(&kept.sha256.unwrap())
            .await
            .unwrap()
            .unwrap(),
        table.as_bytes()
    );
    let script = good.file("scripts/extract.py").unwrap();
    assert_eq!(
        data.blobs
            .get(&script.sha256.unwrap())
            .await
            .unwrap()
            .as_deref(),
        Some(&b"print('pdf')\n"[..]),
        "the verified files are kept for the server"
    );
    let skill_md_digest = good.file("SKILL.md").unwrap().sha256.unwrap();
    assert_eq!(good.digest, Some(skill_md_digest));
    assert!(data.blobs.get(&skill_md_digest).await.unwrap().is_some());

    let lying = record(&data, &format!("{domain_name}/csv-clean"));
    assert_eq!(lying.verdict(), Verdict::Invalid);
    assert_eq!(lying.digest_status, DigestStatus::Mismatch);
    assert!(
        codes(&lying).contains(&Code::DigestMismatch),
        "{:?}",
        lying.diagnostics
    );
    assert_eq!(
        lying.body, "",
        "content that fails verification is not used"
    );
    assert!(
        data.blobs
            .get(&Digest::of(b"a,b\n"))
            .await
            .unwrap()
            .is_none(),
        "bytes that fail verification are not kept"
    );

    let mismatching = record(&data, &format!("{domain_name}/notes"));
    assert_eq!(mismatching.verdict(), Verdict::Invalid);
    assert_eq!(mismatching.digest_status, DigestStatus::Mismatch);
    let mismatch = mismatching
        .diagnostics
        .iter()
        .find(|d| d.code == Code::FrontmatterMismatch)
        .unwrap_or_else(|| panic!("{:?}", mismatching.diagnostics));
    assert_eq!(mismatch.field.as_deref(), Some("frontmatter.description"));

    // The conversation: robots.txt, discover, one list page, then the files, SKILL.md first;
    // the lying skill's second file is where reading it stopped.
    let methods = server.methods();
    assert_eq!(methods[..3], ["GET", "server/discover", "skills/list"]);
    assert_eq!(
        methods.iter().filter(|m| *m == "resources/read").count(),
        6,
        "{methods:?}"
    );
    assert!(
        server.hits()[1..]
            .iter()
            .all(|hit| hit.method == "POST" && hit.path == "/mcp")
    );
    // (No session on protocol 2026-07-28, so no DELETE to end one.)

    // A second crawl reads nothing already held: the files' digests are in the blob store.
    let again = server.crawl(&data, server.config()).await;
    let line = domain(&again, &server.domain());
    assert_eq!(line.outcome, Outcome::Ok);
    assert_eq!(again.totals.unchanged, 3, "{again:#?}");
    let reads_after = server
        .methods()
        .iter()
        .filter(|m| *m == "resources/read")
        .count();
    // The files of the two records that failed verification were not kept, so they are read
    // again (csv-clean's SKILL.md and data.txt, notes' SKILL.md); pdf-tools' are not.
    assert_eq!(reads_after, 6 + 3);
}

#[tokio::test]
async fn binary_files_are_read_from_base64_blobs() {
    // Two files that are not UTF-8, so served as base64 `blob`s: one small, and one whose
    // answer is over 64 KiB, decoded on the blocking pool.
    let icon: Vec<u8> = (0..=255u8).rev().collect();
    let weights: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8 | 0x80).collect();
    let mut served = honest("ocr", "Reads text out of scanned pages.", &[]);
    for (path, bytes) in [("assets/icon.bin", &icon), ("assets/weights.bin", &weights)] {
        let uri = format!("skill://ocr/{path}");
        if let SkillResources::Files(resources) = &mut served.entry.resources {
            resources.push(SkillResource::from_bytes(uri.clone(), bytes));
        }
        served.files.push((uri, bytes.clone()));
    }
    let server = McpServer::start(
        Behaviour {
            skills: vec![served],
            ..Behaviour::default()
        },
        None,
    )
    .await;
    let data = Data::new();
    let report = server.crawl(&data, server.config()).await;
    assert_eq!(domain(&report, &server.domain()).outcome, Outcome::Ok);

    let skill = record(&data, &format!("{}/ocr", server.domain()));
    assert_eq!(skill.verdict(), Verdict::Valid, "{:#?}", skill.diagnostics);
    assert_eq!(skill.digest_status, DigestStatus::Verified);
    for (path, bytes) in [("assets/icon.bin", &icon), ("assets/weights.bin", &weights)] {
        let file = skill.file(path).unwrap_or_else(|| panic!("no {path}"));
        assert_eq!(file.size, Some(bytes.len() as u64), "{path}");
        let kept = data.blobs.get(&file.sha256.unwrap()).await.unwrap();
        assert_eq!(kept.as_deref(), Some(&bytes[..]), "{path} is kept decoded");
    }
}

#[tokio::test]
async fn pages_are_followed_and_vanished_skills_removed() {
    let skills: Vec<Served> = (0..5)
        .map(|n| honest(&format!("skill-{n}"), "Does a thing.", &[]))
        .collect();
    let listed = Arc::new(AtomicUsize::new(5));
    let server = McpServer::start(
        Behaviour {
            skills,
            page_size: 2,
            listed: Some(Arc::clone(&listed)),
            ..Behaviour::default()
        },
        None,
    )
    .await;
    let data = Data::new();
    let report = server.crawl(&data, server.config()).await;
    let line = domain(&report, &server.domain());
    assert_eq!(line.outcome, Outcome::Ok, "{line:#?}");
    assert_eq!(line.skills, 5);
    assert_eq!(report.totals.added, 5);
    let lists = server
        .methods()
        .iter()
        .filter(|m| *m == "skills/list")
        .count();
    assert_eq!(lists, 3, "5 skills in pages of 2");
    for n in 0..5 {
        let skill = record(&data, &format!("{}/skill-{n}", server.domain()));
        assert_eq!(skill.verdict(), Verdict::Valid);
    }

    // The endpoint now lists four: the fifth becomes a tombstone, as with an index.
    listed.store(4, Ordering::SeqCst);
    let second = server.crawl(&data, server.config()).await;
    assert_eq!(second.totals.removed, 1, "{second:#?}");
    let gone = data
        .store
        .blocking()
        .record(&format!("{}/skill-4", server.domain()))
        .unwrap()
        .unwrap();
    assert!(gone.is_tombstone());
}

#[tokio::test]
async fn a_skill_too_large_is_refused_from_its_listing() {
    let mut big = honest("big", "Too big.", &[]);
    if let SkillResources::Files(files) = &mut big.entry.resources {
        files.push(SkillResource::new(
            "skill://big/blob.bin",
            Digest::of(b"").to_string(),
            formats::mcp::MAX_SKILL_BYTES,
        ));
    }
    let server = McpServer::start(
        Behaviour {
            skills: vec![big],
            ..Behaviour::default()
        },
        None,
    )
    .await;
    let data = Data::new();
    let report = server.crawl(&data, server.config()).await;
    assert_eq!(domain(&report, &server.domain()).outcome, Outcome::Ok);
    let big = record(&data, &format!("{}/big", server.domain()));
    assert_eq!(big.verdict(), Verdict::Invalid);
    assert_eq!(big.digest_status, DigestStatus::Unfetched);
    assert!(
        codes(&big).contains(&Code::TooLarge),
        "{:?}",
        big.diagnostics
    );
    assert!(
        !server.methods().iter().any(|m| m == "resources/read"),
        "nothing is read: {:?}",
        server.methods()
    );
}

#[tokio::test]
async fn a_server_without_the_skills_extension_is_not_found() {
    let server = McpServer::start(
        Behaviour {
            skills: vec![honest("a", "A.", &[])],
            without_extension: true,
            ..Behaviour::default()
        },
        None,
    )
    .await;
    let data = Data::new();
    let report = server.crawl(&data, server.config()).await;
    let line = domain(&report, &server.domain());
    assert_eq!(line.outcome, Outcome::NotFound, "{line:#?}");
    assert_eq!(line.skills, 0);
    let status = data
        .store
        .blocking()
        .domain(&server.domain().parse().unwrap())
        .unwrap()
        .unwrap();
    assert!(
        status
            .diagnostics
            .iter()
            .any(|d| d.code == Code::NoSkillsExtension),
        "{:?}",
        status.diagnostics
    );
    assert_eq!(server.methods(), ["GET", "server/discover"]);
}

#[tokio::test]
async fn robots_txt_can_forbid_the_endpoint() {
    let server = McpServer::start(
        Behaviour {
            skills: vec![honest("a", "A.", &[])],
            ..Behaviour::default()
        },
        Some("User-agent: skillscout\nDisallow: /mcp\n"),
    )
    .await;
    let data = Data::new();
    let report = server.crawl(&data, server.config()).await;
    let line = domain(&report, &server.domain());
    assert_eq!(line.outcome, Outcome::Disallowed, "{line:#?}");
    assert_eq!(error_codes(line), ["robots_disallowed"]);
    assert_eq!(server.methods(), ["GET"], "only robots.txt was asked for");
    assert_eq!(line.requests, 1);
}

#[tokio::test]
async fn calls_are_one_at_a_time_and_spaced_by_the_host_delay() {
    let server = McpServer::start(
        Behaviour {
            skills: vec![honest("a", "A.", &[("x.txt", "x")]), honest("b", "B.", &[])],
            ..Behaviour::default()
        },
        None,
    )
    .await;
    let data = Data::new();
    let delay = Duration::from_millis(120);
    let mut config = server.config();
    config.fetch.host_delay = delay;
    let report = server.crawl(&data, config).await;
    assert_eq!(domain(&report, &server.domain()).outcome, Outcome::Ok);
    let mut hits = server.hits();
    // robots.txt, discover, list, 3 reads.
    assert_eq!(hits.len(), 6, "{hits:#?}");
    hits.sort_by_key(|hit| hit.started);
    for pair in hits.windows(2) {
        let gap = pair[1].started.saturating_duration_since(pair[0].finished);
        assert!(
            gap >= delay,
            "{} then {} after {gap:?}",
            pair[0].mcp_method,
            pair[1].mcp_method
        );
    }
}

#[tokio::test]
async fn an_older_server_is_read_after_initialize() {
    let server = McpServer::start(
        Behaviour {
            skills: vec![honest(
                "legacy",
                "An older server's skill.",
                &[("a.md", "# A\n")],
            )],
            legacy_only: true,
            ..Behaviour::default()
        },
        None,
    )
    .await;
    let data = Data::new();
    let report = server.crawl(&data, server.config()).await;
    let line = domain(&report, &server.domain());
    assert_eq!(line.outcome, Outcome::Ok, "{line:#?}");
    let methods = server.methods();
    assert_eq!(
        methods[..4],
        [
            "GET",
            "server/discover",
            "initialize",
            "notifications/initialized"
        ],
        "{methods:?}"
    );
    let skill = record(&data, &format!("{}/legacy", server.domain()));
    assert_eq!(skill.verdict(), Verdict::Valid, "{:#?}", skill.diagnostics);
    assert_eq!(skill.files.len(), 2);
    let hits = server.hits();
    let last = hits.last().unwrap();
    assert_eq!(
        (last.method.as_str(), last.path.as_str()),
        ("DELETE", "/mcp"),
        "the session is ended: {methods:?}"
    );
    assert_eq!(line.requests, hits.len());
}

#[tokio::test]
async fn an_endpoint_that_is_not_there_is_not_found() {
    let server = McpServer::start(Behaviour::default(), None).await;
    let data = Data::new();
    let seed = format!("mcp+http://mcp.test:{}/elsewhere", server.port);
    let report = data
        .crawl_targets(server.config(), &[&seed], std::future::pending())
        .await;
    let line = domain(&report, &server.domain());
    assert_eq!(line.outcome, Outcome::NotFound, "{line:#?}");
}

#[tokio::test]
async fn skills_that_share_a_name_are_all_kept() {
    let mut first = honest("pdf", "The first.", &[]);
    let mut second = honest("pdf", "The second.", &[]);
    for (served, folder) in [(&mut first, "b"), (&mut second, "a")] {
        // The same name under two folders: skill://b/pdf/SKILL.md and skill://a/pdf/SKILL.md.
        let text = served.files[0].1.clone();
        let uri = format!("skill://{folder}/pdf/SKILL.md");
        served.files = vec![(uri.clone(), text.clone())];
        served.entry.uri = uri.clone();
        served.entry.resources = SkillResources::Files(vec![SkillResource::from_bytes(uri, &text)]);
    }
    let server = McpServer::start(
        Behaviour {
            skills: vec![first, second],
            ..Behaviour::default()
        },
        None,
    )
    .await;
    let data = Data::new();
    let report = server.crawl(&data, server.config()).await;
    let line = domain(&report, &server.domain());
    assert_eq!(line.skills, 2, "{line:#?}");
    let kept = record(&data, &format!("{}/pdf", server.domain()));
    assert_eq!(kept.description, "The second.", "skill://a/… sorts first");
    let renamed = record(&data, &format!("{}/pdf~2", server.domain()));
    assert_eq!(renamed.description, "The first.");
    assert!(codes(&renamed).contains(&Code::DuplicateName));
    assert_eq!(renamed.verdict(), Verdict::Valid);
}

#[tokio::test]
async fn json_answers_are_read_as_well_as_event_streams() {
    let server = McpServer::start(
        Behaviour {
            skills: vec![honest("plain", "Answers in JSON.", &[("n.txt", "n")])],
            json_response: true,
            ..Behaviour::default()
        },
        None,
    )
    .await;
    let data = Data::new();
    let report = server.crawl(&data, server.config()).await;
    let line = domain(&report, &server.domain());
    assert_eq!(line.outcome, Outcome::Ok, "{line:#?}");
    assert_eq!(
        serde_json::to_value(&line.formats).unwrap(),
        serde_json::json!(["mcp-skills"])
    );
    let skill = record(&data, &format!("{}/plain", server.domain()));
    assert_eq!(skill.verdict(), Verdict::Valid, "{:#?}", skill.diagnostics);
}

/// A hand-written endpoint: `answer` gets each POST's `Mcp-Method` and JSON-RPC id and
/// returns the response; requests are logged like the rmcp server's.
async fn scripted<F>(answer: F) -> McpServer
where
    F: Fn(&str, u64, usize) -> Response + Clone + Send + Sync + 'static,
{
    let calls = Arc::new(AtomicUsize::new(0));
    let hits: Arc<Mutex<Vec<Hit>>> = Arc::default();
    let router = Router::new()
        .route(
            "/mcp",
            axum::routing::post(
                move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                    let answer = answer.clone();
                    let calls = Arc::clone(&calls);
                    async move {
                        let method = headers
                            .get("mcp-method")
                            .and_then(|value| value.to_str().ok())
                            .unwrap_or_default()
                            .to_owned();
                        let id = serde_json::from_slice::<serde_json::Value>(&body)
                            .ok()
                            .and_then(|body| body["id"].as_u64())
                            .unwrap_or(0);
                        answer(&method, id, calls.fetch_add(1, Ordering::SeqCst))
                    }
                },
            ),
        )
        .layer(middleware::from_fn_with_state(Arc::clone(&hits), log));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    McpServer { port, hits }
}

fn rpc_result(id: u64, result: serde_json::Value) -> Response {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result});
    Response::builder()
        .header("content-type", "application/json")
        .body(axum::body::Body::from(body.to_string()))
        .unwrap()
}

fn capabilities() -> serde_json::Value {
    serde_json::json!({
        "capabilities": {"resources": {}, "extensions": {formats::mcp::SKILLS_EXTENSION_ID: {}}}
    })
}

#[tokio::test]
async fn a_rate_limited_call_waits_and_is_retried() {
    let server = scripted(|method, id, call| match method {
        "server/discover" => rpc_result(id, capabilities()),
        "skills/list" if call == 1 => Response::builder()
            .status(429)
            .header("retry-after", "1")
            .body(axum::body::Body::empty())
            .unwrap(),
        "skills/list" => rpc_result(id, serde_json::json!({"skills": []})),
        _ => Response::builder()
            .status(400)
            .body(axum::body::Body::empty())
            .unwrap(),
    })
    .await;
    let data = Data::new();
    let report = server.crawl(&data, server.config()).await;
    let line = domain(&report, &server.domain());
    assert_eq!(line.outcome, Outcome::Ok, "{line:#?}");
    let lists: Vec<Hit> = server
        .hits()
        .into_iter()
        .filter(|hit| hit.mcp_method == "skills/list")
        .collect();
    assert_eq!(lists.len(), 2);
    let waited = lists[1]
        .started
        .saturating_duration_since(lists[0].finished);
    assert!(waited >= Duration::from_millis(900), "{waited:?}");
}

#[tokio::test]
async fn a_post_is_not_redirected_to_another_origin_nor_turned_into_a_get() {
    for (status, location) in [
        (307, "http://elsewhere.test/mcp"),
        (303, "/mcp2"),
        (302, "/mcp2"),
    ] {
        let server = scripted(move |_, _, _| {
            Response::builder()
                .status(status)
                .header("location", location)
                .body(axum::body::Body::empty())
                .unwrap()
        })
        .await;
        let data = Data::new();
        let report = server.crawl(&data, server.config()).await;
        let line = domain(&report, &server.domain());
        assert_eq!(line.outcome, Outcome::Error, "{status}: {line:#?}");
        assert_eq!(error_codes(line), ["invalid_redirect"], "{status}");
        assert_eq!(
            server.methods(),
            ["GET", "server/discover"],
            "{status}: robots.txt, then the POST, not followed"
        );
    }
}

#[tokio::test]
async fn a_server_error_to_discover_is_not_taken_for_an_older_server() {
    let server = scripted(|_, _, _| {
        Response::builder()
            .status(500)
            .body(axum::body::Body::empty())
            .unwrap()
    })
    .await;
    let data = Data::new();
    let report = server.crawl(&data, server.config()).await;
    let line = domain(&report, &server.domain());
    assert_eq!(line.outcome, Outcome::Error, "{line:#?}");
    assert_eq!(error_codes(line), ["http_status"]);
    assert_eq!(
        server.methods(),
        ["GET", "server/discover"],
        "no initialize after a 500"
    );
}

#[tokio::test]
async fn the_listing_is_read_up_to_its_page_cap() {
    let pages = formats::mcp::MAX_LIST_PAGES;
    let skills: Vec<Served> = (0..=pages)
        .map(|n| honest(&format!("s{n}"), "One of many.", &[]))
        .collect();
    let server = McpServer::start(
        Behaviour {
            skills,
            page_size: 1,
            ..Behaviour::default()
        },
        None,
    )
    .await;
    let data = Data::new();
    let report = server.crawl(&data, server.config()).await;
    let line = domain(&report, &server.domain());
    assert_eq!(line.outcome, Outcome::Ok, "{line:#?}");
    assert_eq!(line.skills, pages);
    let lists = server
        .methods()
        .iter()
        .filter(|m| *m == "skills/list")
        .count();
    assert_eq!(lists, pages);
    let status = data
        .store
        .blocking()
        .domain(&server.domain().parse().unwrap())
        .unwrap()
        .unwrap();
    assert!(
        status
            .diagnostics
            .iter()
            .any(|d| d.code == Code::TooManyEntries),
        "{:?}",
        status.diagnostics
    );
    // A listing read in part is not one whose missing skills were removed: the endpoint is
    // not among the indexes whose vanished records become tombstones.
    assert!(status.indexes.is_empty(), "{:?}", status.indexes);
    assert_eq!(status.formats, [Format::McpSkills]);
}

#[tokio::test]
async fn a_cursor_handed_out_twice_ends_the_listing() {
    let server = scripted(|method, id, _| match method {
        "server/discover" => rpc_result(id, capabilities()),
        "skills/list" => rpc_result(id, serde_json::json!({"skills": [], "nextCursor": "again"})),
        _ => Response::builder()
            .status(400)
            .body(axum::body::Body::empty())
            .unwrap(),
    })
    .await;
    let data = Data::new();
    let report = server.crawl(&data, server.config()).await;
    assert_eq!(domain(&report, &server.domain()).outcome, Outcome::Ok);
    let lists = server
        .methods()
        .iter()
        .filter(|m| *m == "skills/list")
        .count();
    assert_eq!(
        lists, 2,
        "the first page, then the cursor seen a second time"
    );
}

/// The entries of a `skills/list` name origins for discovery, in any field that holds an
/// absolute http(s) URL; `skill://` and `data:` URIs name none.
#[tokio::test]
async fn a_listing_names_the_origins_its_entries_point_at() {
    let server = scripted(|method, id, _| match method {
        "server/discover" => rpc_result(id, capabilities()),
        "skills/list" => rpc_result(
            id,
            serde_json::json!({"skills": [{
                "name": "linked",
                "description": "Points elsewhere.",
                "uri": "skill://linked/SKILL.md",
                "_meta": {"homepage": "https://docs.elsewhere.test/linked", "icon": "data:image/png;base64,AA"}
            }]}),
        ),
        _ => Response::builder()
            .status(400)
            .body(axum::body::Body::empty())
            .unwrap(),
    })
    .await;
    let data = Data::new();
    let mut config = server.config();
    config.discover_budget = 10;
    let report = server.crawl(&data, config).await;
    assert_eq!(report.totals.discovered, 1, "{report:#?}");
    let entry = data
        .store
        .frontier()
        .entry("docs.elsewhere.test")
        .await
        .unwrap()
        .expect("the origin is a candidate");
    assert_eq!(entry.source.as_deref(), Some(server.domain().as_str()));
}
