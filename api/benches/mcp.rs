//! `POST /mcp` at scale: a `skills/list` walk over every skill and `search_skills` latency, on
//! a directory of N agent skills (default 100,000) served on loopback.
//!
//! `cargo bench -p api --bench mcp` builds the directory in a temporary data directory (each
//! skill a SKILL.md and a script in the blob store, records of 100 domains applied to the crawl
//! store, the index synced), serves it, and with `rmcp`'s client (protocol 2026-07-28, one
//! client, requests one at a time):
//!
//! - walks `skills/list` from the first page to the last, timing each page;
//! - calls `search_skills` with short queries and task descriptions, and, as the baseline in
//!   the same run, sends the same searches to `GET /v1/search` over plain HTTP: the ratio is
//!   what the MCP layer adds to a search.
//!
//! Options: `--skills N`, `--searches N` (default 300). It prints a Markdown table for
//! `docs/BENCHMARKS.md`.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use api::{AppState, ServeConfig, Tokens};
use formats::skill::{Artifact, DigestStatus, FileEntry};
use formats::{Access, Format, Skill, SkillId};
use indexer::{Index, IndexConfig};
use rmcp::model::{CallToolRequestParams, ClientConfig, PaginatedRequestParams, ProtocolVersion};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use serde_json::json;
use store::blobs::Blobs;
use store::{DomainStatus, Store};
use time::OffsetDateTime;
use url::Url;

/// Skills per domain.
const PER_DOMAIN: usize = 1_000;

/// Words the synthetic skills are written in, so that searches have work to do.
const WORDS: [&str; 48] = [
    "pdf",
    "extract",
    "text",
    "invoice",
    "table",
    "spreadsheet",
    "csv",
    "clean",
    "merge",
    "split",
    "image",
    "resize",
    "ocr",
    "scan",
    "contract",
    "summarise",
    "email",
    "draft",
    "reply",
    "calendar",
    "meeting",
    "notes",
    "git",
    "commit",
    "release",
    "changelog",
    "test",
    "coverage",
    "docker",
    "deploy",
    "kubernetes",
    "logs",
    "alert",
    "database",
    "query",
    "migration",
    "schema",
    "api",
    "client",
    "webhook",
    "translate",
    "language",
    "audio",
    "transcribe",
    "video",
    "slides",
    "chart",
    "report",
];

/// Short queries and task descriptions in a user's words.
const QUERIES: [&str; 10] = [
    "pdf extraction",
    "ocr scan",
    "git changelog",
    "database migration schema",
    "transcribe audio",
    "turn this scanned contract into text I can search",
    "why is my docker deploy failing, show me the logs",
    "write a reply to this email and put the meeting in my calendar",
    "clean up a messy csv spreadsheet and make a chart for the report",
    "resize every image in a folder and merge them into slides",
];

/// A small deterministic generator (xorshift), so every run builds the same directory.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as usize
    }

    fn words(&mut self, count: usize) -> String {
        (0..count)
            .map(|_| WORDS[self.next() % WORDS.len()])
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn record(n: usize, rng: &mut Rng, blobs: &Blobs, now: OffsetDateTime) -> Skill {
    let domain = format!("d{:03}.bench.test", n / PER_DOMAIN);
    let name = format!("{}-{n:06}", WORDS[n % WORDS.len()]);
    let description = format!("Use when asked to {}.", rng.words(12));
    let body = format!("# Steps\n\n1. {}.\n2. {}.\n", rng.words(20), rng.words(20));
    let skill_md = format!("---\nname: {name}\ndescription: {description}\n---\n{body}");
    let script = format!("print({n})\n");
    let skill_md_digest = blobs.blocking().put(skill_md.as_bytes()).unwrap();
    let script_digest = blobs.blocking().put(script.as_bytes()).unwrap();
    let id: SkillId = format!("{domain}/{name}").parse().unwrap();
    let mut frontmatter = serde_json::Map::new();
    frontmatter.insert("name".into(), json!(name));
    frontmatter.insert("description".into(), json!(description));
    Skill {
        format: Format::AgentSkills,
        title: name.clone(),
        description,
        capability_type: "skill".into(),
        access: Access::Public,
        version: None,
        source_url: Url::parse(&format!("http://{domain}/{name}/SKILL.md")).unwrap(),
        index_url: Url::parse(&format!(
            "http://{domain}/.well-known/agent-skills/index.json"
        ))
        .unwrap(),
        artifact: Artifact::SkillMd,
        digest: Some(skill_md_digest),
        digest_status: DigestStatus::Verified,
        frontmatter,
        body,
        files: vec![
            FileEntry {
                path: "SKILL.md".into(),
                size: Some(skill_md.len() as u64),
                sha256: Some(skill_md_digest),
            },
            FileEntry {
                path: "scripts/run.py".into(),
                size: Some(script.len() as u64),
                sha256: Some(script_digest),
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
}

/// Builds a directory of `count` skills in `dir`.
fn build(dir: &std::path::Path, count: usize) -> AppState {
    let blobs = Blobs::open(dir).unwrap();
    let store = Arc::new(Store::open(dir).unwrap());
    let now = OffsetDateTime::now_utc();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut n = 0;
    while n < count {
        let records: Vec<Skill> = (n..(n + PER_DOMAIN).min(count))
            .map(|n| record(n, &mut rng, &blobs, now))
            .collect();
        n += records.len();
        let status = DomainStatus::read_ok(
            records[0].domain.clone(),
            format!("http://{}", records[0].domain),
            vec![Format::AgentSkills],
            vec![records[0].index_url.clone()],
            records.len(),
            now,
        );
        store
            .blocking()
            .apply_domain(&status, records, now)
            .unwrap();
    }
    let Index { mut writer, search } =
        Index::open_or_create(&dir.join(indexer::INDEX_DIR), IndexConfig::default()).unwrap();
    indexer::sync(&store, &mut writer).unwrap();
    search.reload().unwrap();
    AppState::new(search, store, blobs, Tokens::none(), ServeConfig::default())
}

/// Median, 99th percentile and maximum of `samples`, in milliseconds.
fn summary(samples: &mut [Duration]) -> (f64, f64, f64) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let at = |q: f64| ms(samples[((samples.len() - 1) as f64 * q).round() as usize]);
    (at(0.5), at(0.99), ms(samples[samples.len() - 1]))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |name: &str, default: usize| {
        args.iter()
            .position(|arg| arg == name)
            .and_then(|at| args.get(at + 1))
            .map_or(default, |raw| raw.parse().expect("a number"))
    };
    let count = value("--skills", 100_000);
    let searches = value("--searches", 300);

    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let state = build(dir.path(), count);
    eprintln!(
        "built {count} skills in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(api::serve(listener, state, std::future::pending()));
        let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder().build().unwrap();
        let config = StreamableHttpClientTransportConfig::with_uri(format!("http://{addr}/mcp"));
        let transport = StreamableHttpClientTransport::with_client(http.clone(), config);
        let client = ClientConfig::default()
            .serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
            .unwrap();

        // The full walk.
        let mut pages = Vec::new();
        let mut listed = 0;
        let mut cursor: Option<String> = None;
        let walk = Instant::now();
        loop {
            let params = cursor
                .take()
                .map(|cursor| PaginatedRequestParams::default().with_cursor(Some(cursor)));
            let started = Instant::now();
            let page = client.list_skills(params).await.unwrap();
            pages.push(started.elapsed());
            listed += page.skills.len();
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        let walk = walk.elapsed();
        assert_eq!(listed, count, "the walk lists every skill once");
        let (page_p50, page_p99, page_max) = summary(&mut pages);

        // Searches: MCP, then the same through /v1/search, interleaved query by query.
        let mut over_mcp = Vec::new();
        let mut over_http = Vec::new();
        for round in 0..searches {
            let query = QUERIES[round % QUERIES.len()];
            let arguments = json!({ "query": query, "limit": 10 });
            let serde_json::Value::Object(arguments) = arguments else {
                unreachable!()
            };
            let started = Instant::now();
            let answer = client
                .call_tool(CallToolRequestParams::new("search_skills").with_arguments(arguments))
                .await
                .unwrap();
            over_mcp.push(started.elapsed());
            assert_ne!(answer.is_error, Some(true));

            let started = Instant::now();
            let url = Url::parse_with_params(
                &format!("http://{addr}/v1/search"),
                [("q", query), ("limit", "10")],
            )
            .unwrap();
            let body = http
                .get(url)
                .send()
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap();
            over_http.push(started.elapsed());
            assert!(!body.is_empty());
        }
        let (mcp_p50, mcp_p99, mcp_max) = summary(&mut over_mcp);
        let (http_p50, http_p99, http_max) = summary(&mut over_http);

        println!("| measure ({count} skills, one client) | median | p99 | max |");
        println!("| --- | --- | --- | --- |");
        println!(
            "| `skills/list` page (100 skills) | {page_p50:.1} ms | {page_p99:.1} ms | {page_max:.1} ms |"
        );
        println!(
            "| `search_skills` ({searches} calls) | {mcp_p50:.2} ms | {mcp_p99:.2} ms | {mcp_max:.2} ms |"
        );
        println!(
            "| `GET /v1/search`, same queries (baseline) | {http_p50:.2} ms | {http_p99:.2} ms | {http_max:.2} ms |"
        );
        println!();
        println!(
            "Full `skills/list` walk: {} pages, {listed} skills in {:.1} s ({:.0} skills/s). \
             `search_skills` / `/v1/search` median ratio: {:.2}×.",
            pages.len(),
            walk.as_secs_f64(),
            listed as f64 / walk.as_secs_f64(),
            mcp_p50 / http_p50
        );
        client.cancel().await.unwrap();
    });
}
