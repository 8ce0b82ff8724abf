//! `skillscout crawl` and `skillscout validate URL` end to end, against the fixture web served
//! on loopback and reached through `--resolve`.

use std::path::{Path, PathBuf};

use crate::server::{TestServer, serve_file};
use crate::util::{repo_root, skillscout, stderr, stdout};

/// Serves `seeds/web` on 127.0.0.1:0.
async fn fixture_server() -> TestServer {
    let web = repo_root().join("seeds/web");
    TestServer::start(move |request| serve_file(&web, request)).await
}

fn resolve(server: &TestServer) -> String {
    format!("*.test=127.0.0.1:{}", server.port())
}

/// A fresh data directory under the target directory.
fn data_dir(label: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("crawl-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Runs the binary off the async runtime (the server runs on it).
async fn run(dir: &Path, args: Vec<String>) -> std::process::Output {
    let dir = dir.to_owned();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        skillscout(&dir, &args)
    })
    .await
    .unwrap()
}

fn args(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

/// Replaces the elapsed time in a summary line.
fn without_time(line: &str) -> String {
    let Some(start) = line.find(" in ") else {
        return line.to_owned();
    };
    let end = line[start..]
        .find(" s")
        .map_or(line.len(), |end| start + end);
    format!("{} in [time]{}", &line[..start], &line[end..])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawl_stores_the_fixture_web_and_writes_the_report() {
    let server = fixture_server().await;
    let data = data_dir("web");
    let report = data.join("report.json");
    let output = run(
        &repo_root(),
        args(&[
            "crawl",
            "--data",
            data.to_str().unwrap(),
            "--resolve",
            &resolve(&server),
            "--host-delay-ms",
            "0",
            "--report",
            report.to_str().unwrap(),
            "http://pdfworks.test",
            "http://legacy-tools.test",
            "http://services.test",
            "http://sloppy.test",
            "http://empty.test",
        ]),
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    // Two other origins are named, and left due: the descriptors' endpoints
    // (`api.services.test`) and an entry of sloppy.test's index (`video.example`).
    insta::assert_snapshot!(without_time(stdout(&output).trim()), @"crawled 5 domains in [time] s: 4 ok, 1 not found, 0 disallowed, 0 unreachable, 0 error; 12 skills (12 added, 0 updated, 0 removed, 0 unchanged); 33 requests, 2 errors; 2 discovered (0 probed, 0 publishing)");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    // Lines come in the order the domains were stored (the report is written as the crawl
    // goes); every domain has one.
    let lines = json["domains"].as_array().unwrap();
    assert_eq!(lines.len(), 5);
    let pdfworks = lines
        .iter()
        .find(|line| line["domain"] == "pdfworks.test")
        .unwrap();
    insta::assert_json_snapshot!(pdfworks, @r#"
    {
      "domain": "pdfworks.test",
      "origin": "http://pdfworks.test",
      "outcome": "ok",
      "formats": [
        "agent-skills"
      ],
      "skills": 3,
      "requests": 7,
      "errors": [],
      "added": 3,
      "updated": 0,
      "removed": 0,
      "unchanged": 0
    }
    "#);
    insta::assert_json_snapshot!(json["totals"], @r#"
    {
      "domains": 5,
      "skills": 12,
      "added": 12,
      "updated": 0,
      "removed": 0,
      "unchanged": 0,
      "requests": 33,
      "errors": 2,
      "discovered": 2
    }
    "#);
    // Per-host events are structured log lines on stderr.
    assert!(
        stderr(&output).contains("domain crawled"),
        "{}",
        stderr(&output)
    );

    // When the crawl ends, the index is up to date: search finds what was crawled, and an
    // anonymous search does not see the private skill-sharing entry.
    let search = |extra: &[&str]| {
        let mut arguments = vec!["search", "--data", data.to_str().unwrap(), "--json"];
        arguments.extend_from_slice(extra);
        let found = skillscout(&repo_root(), &arguments);
        assert_eq!(found.status.code(), Some(0), "{}", stderr(&found));
        serde_json::from_slice::<serde_json::Value>(&found.stdout).unwrap()
    };
    let body = search(&["pdf"]);
    let ids: Vec<&str> = body["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| hit["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"pdfworks.test/pdf-merge"), "{ids:?}");
    // Every skill but `sloppy.test`'s `Release-Notes` (verdict `invalid`: a name agent clients
    // refuse) and, anonymously, the private one.
    assert_eq!(search(&[""])["total"], 10);
    assert_eq!(search(&["--private", ""])["total"], 11);
    assert_eq!(search(&["--verdict", "any", ""])["total"], 11);

    // A second crawl finds nothing new.
    let again = run(
        &repo_root(),
        args(&[
            "crawl",
            "--data",
            data.to_str().unwrap(),
            "--resolve",
            &resolve(&server),
            "--host-delay-ms",
            "0",
            "http://pdfworks.test",
        ]),
    )
    .await;
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(
        stdout(&again).contains("(0 added, 0 updated, 0 removed, 3 unchanged)"),
        "{}",
        stdout(&again)
    );
    let _ = std::fs::remove_dir_all(&data);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_seed_lines_are_reported_and_the_rest_crawled() {
    let server = fixture_server().await;
    let data = data_dir("seeds");
    std::fs::create_dir_all(&data).unwrap();
    let seeds = data.join("seeds.txt");
    std::fs::write(
        &seeds,
        "# fixture sites\nhttp://pdfworks.test\n\nftp://nope.test\nhttp://legacy-tools.test # legacy\n",
    )
    .unwrap();
    let output = run(
        &repo_root(),
        args(&[
            "crawl",
            "--data",
            data.to_str().unwrap(),
            "--resolve",
            &resolve(&server),
            "--host-delay-ms",
            "0",
            "--seeds",
            seeds.to_str().unwrap(),
        ]),
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output)
            .contains("line 4: invalid seed \"ftp://nope.test\": scheme must be http or https"),
        "{}",
        stderr(&output)
    );
    assert!(
        stdout(&output).starts_with("crawled 2 domains"),
        "{}",
        stdout(&output)
    );
    let _ = std::fs::remove_dir_all(&data);
}

#[test]
fn a_crawl_that_cannot_run_exits_1_and_bad_usage_exits_2() {
    let data = data_dir("fail");
    std::fs::create_dir_all(&data).unwrap();
    let missing = skillscout(
        &repo_root(),
        &[
            "crawl",
            "--data",
            data.to_str().unwrap(),
            "--seeds",
            "no/such/seeds.txt",
        ],
    );
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).contains("cannot read the seed file no/such/seeds.txt"),
        "{}",
        stderr(&missing)
    );

    let file = data.join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let bad_data = skillscout(
        &repo_root(),
        &[
            "crawl",
            "--data",
            file.to_str().unwrap(),
            "http://pdfworks.test",
        ],
    );
    assert_eq!(bad_data.status.code(), Some(1));
    assert!(
        stderr(&bad_data).contains("cannot open the data directory"),
        "{}",
        stderr(&bad_data)
    );
    assert!(
        stderr(&bad_data).contains("it is a file, not a directory"),
        "{}",
        stderr(&bad_data)
    );

    let bad_flag = skillscout(
        &repo_root(),
        &[
            "crawl",
            "--data",
            data.to_str().unwrap(),
            "--resolve",
            "nonsense",
            "x.test",
        ],
    );
    assert_eq!(bad_flag.status.code(), Some(2));
    assert!(
        stderr(&bad_flag).contains("invalid --resolve \"nonsense\""),
        "{}",
        stderr(&bad_flag)
    );

    // `serve` checks its work limit before it opens anything.
    let no_work = skillscout(
        &repo_root(),
        &[
            "serve",
            "--data",
            data.to_str().unwrap(),
            "--max-in-flight",
            "0",
        ],
    );
    assert_eq!(no_work.status.code(), Some(2), "{}", stderr(&no_work));
    assert!(stderr(&no_work).contains("--max-in-flight must be at least 1"));

    // Flag values the binary checks itself are bad usage too, and so is a bad target.
    for args in [
        &["--concurrency", "0", "x.test"][..],
        &["--connect-timeout-ms", "0", "x.test"][..],
        &["not a host"][..],
    ] {
        let mut full = vec!["crawl", "--data", data.to_str().unwrap()];
        full.extend_from_slice(args);
        let output = skillscout(&repo_root(), &full);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    let _ = std::fs::remove_dir_all(&data);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validate_checks_a_live_origin_like_a_local_tree() {
    let server = fixture_server().await;
    let output = run(
        &repo_root(),
        args(&[
            "validate",
            "--resolve",
            &resolve(&server),
            "--host-delay-ms",
            "0",
            "http://pdfworks.test",
        ]),
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    insta::assert_snapshot!(stdout(&output), @r"
    ok   index http://pdfworks.test/.well-known/agent-skills/index.json (agent-skills v0.2)
    ok   pdfworks.test/pdf-text-extraction  http://pdfworks.test/.well-known/agent-skills/pdf-text-extraction/SKILL.md (passes lenient)
    ok   pdfworks.test/pdf-form-filling  http://pdfworks.test/.well-known/agent-skills/pdf-form-filling.tar.gz (passes lenient)
    ok   pdfworks.test/pdf-merge  http://pdfworks.test/.well-known/agent-skills/pdf-merge.zip (passes lenient; risk low)

    health http://pdfworks.test/: 90/100
         fail           Served over HTTPS: Plain HTTP: http://pdfworks.test.
           help: Serve the site over HTTPS; agent clients may refuse to install over plain HTTP.
         fail           Caching headers present: The index answers carry neither a validator nor a lifetime.
           help: Send `ETag` or `Last-Modified` and `Cache-Control: max-age=…` with the index and artifacts, so crawlers and clients revalidate instead of downloading again.
         safety audit (not scored): 1 skill at low risk
         vercel skills CLI 1.7: The CLI installs all 3 agent skills as published. (all)

    3 skills checked (strict): 3 passed, 0 failed; 0 errors, 0 warnings
    safety audit: 1 finding; 0 skills critical (a static audit is a linter, not a certificate)
    1 low finding hidden; --verbose shows them
    ");

    let missing = run(
        &repo_root(),
        args(&[
            "validate",
            "--resolve",
            &resolve(&server),
            "--host-delay-ms",
            "0",
            "http://empty.test",
        ]),
    )
    .await;
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stdout(&missing).contains("error[not_found] http://empty.test publishes no skill index"),
        "{}",
        stdout(&missing)
    );
}

/// A minimal MCP server of protocol 2026-07-28 on 127.0.0.1:0, written by hand: one skill,
/// `pdf`, with a SKILL.md and one script. Returns its port.
async fn mcp_server() -> u16 {
    use axum::http::HeaderMap;
    use formats::Digest;
    use serde_json::{Value, json};

    const SKILL_MD: &str = "---\nname: pdf\ndescription: Reads PDF files.\n---\n# PDF\n";
    const SCRIPT: &str = "print('pdf')\n";
    let answer = |headers: HeaderMap, body: axum::body::Bytes| async move {
        let request: Value = serde_json::from_slice(&body).unwrap_or_default();
        let id = request["id"].clone();
        let method = headers
            .get("mcp-method")
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default();
        let file = |path: &str, text: &str| json!({"uri": format!("skill://pdf/{path}"), "digest": Digest::of(text.as_bytes()).to_string(), "size": text.len()});
        let result = match method {
            "server/discover" => json!({
                "resultType": "complete", "supportedVersions": ["2026-07-28"], "ttlMs": 0, "cacheScope": "private",
                "capabilities": {"resources": {}, "extensions": {"io.modelcontextprotocol/skills": {}}},
            }),
            "skills/list" => json!({
                "resultType": "complete", "ttlMs": 0, "cacheScope": "private",
                "skills": [{
                    "uri": "skill://pdf/SKILL.md",
                    "frontmatter": {"name": "pdf", "description": "Reads PDF files."},
                    "resources": [file("SKILL.md", SKILL_MD), file("run.py", SCRIPT)],
                }],
            }),
            "resources/read" => {
                let uri = request["params"]["uri"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                let text = if uri.ends_with("SKILL.md") {
                    SKILL_MD
                } else {
                    SCRIPT
                };
                json!({"contents": [{"uri": uri, "text": text}]})
            }
            _ => {
                return axum::Json(
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}}),
                );
            }
        };
        axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": result}))
    };
    let router = axum::Router::new().route("/mcp", axum::routing::post(answer));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    port
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_endpoint_is_validated_and_crawled() {
    let port = mcp_server().await;
    let resolve = format!("mcp.test=127.0.0.1:{port}");
    let endpoint = format!("mcp+http://mcp.test:{port}/mcp");
    let output = run(
        &repo_root(),
        args(&[
            "validate",
            "--resolve",
            &resolve,
            "--host-delay-ms",
            "0",
            &endpoint,
        ]),
    )
    .await;
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}{}",
        stdout(&output),
        stderr(&output)
    );
    assert!(
        stdout(&output).contains(&format!("ok   mcp.test:{port}/pdf")),
        "{}",
        stdout(&output)
    );

    let data = data_dir("mcp");
    let report = data.join("report.json");
    let output = run(
        &repo_root(),
        args(&[
            "crawl",
            "--data",
            data.to_str().unwrap(),
            "--resolve",
            &resolve,
            "--host-delay-ms",
            "0",
            "--no-progress",
            "--report",
            report.to_str().unwrap(),
            &endpoint,
        ]),
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let line = &report["domains"][0];
    assert_eq!(line["domain"], format!("mcp.test:{port}"));
    assert_eq!(line["origin"], endpoint);
    assert_eq!(line["outcome"], "ok", "{report:#}");
    assert_eq!(line["formats"], serde_json::json!(["mcp-skills"]));
    assert_eq!(line["skills"], 1);
    // robots.txt (a 404), discover, one page, two files.
    assert_eq!(line["requests"], 5, "{report:#}");
    let _ = std::fs::remove_dir_all(&data);
}

/// See: The front door and the operator's kit (installs and runs anywhere). A crawl given
/// nothing to crawl, in a directory with no frontier, says how to give it something.
#[test]
fn a_crawl_with_nothing_to_crawl_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let output = skillscout(dir.path(), &["crawl"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(message.contains("nothing to crawl"), "{message}");
    assert!(
        message.contains("the frontier of the data directory ./data is empty"),
        "{message}"
    );
    assert!(
        message.contains("skillscout crawl example.com"),
        "{message}"
    );
    assert!(message.contains("--seeds FILE"), "{message}");
    assert!(message.contains("skillscout seeds add FILE"), "{message}");
    assert!(stdout(&output).is_empty(), "{}", stdout(&output));
}
