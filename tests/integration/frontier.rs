//! The frontier as an operator uses it: `seeds add|list|remove` (bad lines, ranked lists,
//! IDNs, addresses), `crawl` of named targets or of what is due, `delist` removing a domain
//! everywhere and holding across restarts and re-seeding, the same commands going through
//! a running server's admin API, and SIGTERM ending a crawl with its report written.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::serve::{Running, http, json};
use crate::server::{TestServer, serve_file};
use crate::util::{KillOnDrop, repo_root, skillscout, stderr, stdout};

/// A fresh data directory under the target directory.
fn data_dir(label: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("frontier-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the binary off the async runtime (a test server runs on it).
async fn run(dir: &Path, args: &[&str]) -> std::process::Output {
    let dir = dir.to_owned();
    let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        skillscout(&dir, &args)
    })
    .await
    .unwrap()
}

/// The fixture web on loopback.
async fn fixture_server() -> TestServer {
    let web = repo_root().join("seeds/web");
    TestServer::start(move |request| serve_file(&web, request)).await
}

/// `seeds list --json`, one object per line.
fn listed(dir: &Path, extra: &[&str]) -> Vec<serde_json::Value> {
    let mut args = vec!["--data", "data", "seeds", "list", "--json"];
    args.extend(extra);
    let output = skillscout(dir, &args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    stdout(&output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn seed_lists_are_read_line_by_line_and_bad_lines_are_reported() {
    let dir = data_dir("seeds");
    std::fs::write(
        dir.join("list.txt"),
        "# a comment\nexample.test\n\nexample.test\nftp://nope.test\nbücher.example\n127.0.0.1:8080\nlocalhost\nhttps://docs.example.test/guide\nnot a host\n\u{fffd}\u{1}garbage\n",
    )
    .unwrap();
    let output = skillscout(&dir, &["--data", "data", "seeds", "add", "list.txt"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output).trim(),
        "3 new, 0 updated, 1 unchanged, 0 delisted (skipped); 5 bad lines skipped"
    );
    let errors = stderr(&output);
    for line in [5, 7, 8, 10, 11] {
        assert!(errors.contains(&format!("line {line}")), "{errors}");
    }
    assert!(errors.contains("--allow-private"), "{errors}");

    let rows = listed(&dir, &[]);
    let domains: Vec<&str> = rows
        .iter()
        .map(|row| row["domain"].as_str().unwrap())
        .collect();
    assert_eq!(
        domains,
        ["docs.example.test", "example.test", "xn--bcher-kva.example"],
        "stored as punycode"
    );
    assert_eq!(rows[0]["target"], "https://docs.example.test/guide");
    assert!(rows.iter().all(|row| row["added_as"] == "seed"));
    // Shown as people read it.
    let table = skillscout(&dir, &["--data", "data", "seeds", "list"]);
    assert!(
        stdout(&table).contains("bücher.example"),
        "{}",
        stdout(&table)
    );

    // A ranked list from standard input; addresses allowed when asked; a re-read list is
    // unchanged.
    let mut child = KillOnDrop::spawn(
        Command::new(env!("CARGO_BIN_EXE_skillscout"))
            .args(["--data", "data", "seeds", "add", "--allow-private", "-"])
            .current_dir(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    );
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(b"rank,domain\n1,ranked.test\n2,example.test\n3,127.0.0.1:8080\n")
            .unwrap();
    }
    let output = child.wait_with_output();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output).trim(),
        "2 new, 1 updated, 0 unchanged, 0 delisted (skipped); 0 bad lines skipped",
        "example.test takes its rank"
    );
    let ranked = listed(&dir, &[]);
    let rank = |domain: &str| {
        ranked
            .iter()
            .find(|row| row["domain"] == domain)
            .map(|row| row["rank"].clone())
            .unwrap()
    };
    assert_eq!(rank("ranked.test"), 1);
    assert_eq!(rank("example.test"), 2);

    // Removal, of a known domain and of an unknown one (named by any target).
    let output = skillscout(
        &dir,
        &[
            "--data",
            "data",
            "seeds",
            "remove",
            "https://ranked.test/",
            "unknown.test",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output).trim(),
        "1 removed, 1 not in the frontier, 0 delisted (kept: undelist them first)"
    );
    let unreadable = skillscout(&dir, &["--data", "data", "seeds", "add", "missing.txt"]);
    assert_eq!(unreadable.status.code(), Some(2), "{}", stderr(&unreadable));
    assert!(stderr(&unreadable).contains("missing.txt"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_crawls_the_targets_it_names_or_what_is_due() {
    let server = fixture_server().await;
    let dir = data_dir("named");
    let resolve = format!("*.test=127.0.0.1:{}", server.port());
    let crawl = |targets: &[&str]| {
        let mut args = vec![
            "--data",
            "data",
            "crawl",
            "--resolve",
            resolve.as_str(),
            "--host-delay-ms",
            "0",
            "--no-progress",
            // The fixture web names other origins; only the three seeds are counted here.
            "--no-discover",
        ];
        args.extend(targets);
        args.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    std::fs::write(
        dir.join("seeds.txt"),
        "http://pdfworks.test\nhttp://legacy-tools.test\nhttp://services.test\n",
    )
    .unwrap();
    let added = run(
        &dir,
        &[
            "--data",
            "data",
            "seeds",
            "add",
            "seeds.txt",
            "--allow-private",
        ],
    )
    .await;
    assert_eq!(added.status.code(), Some(0), "{}", stderr(&added));

    // One named target: only it is crawled, though three are due.
    let one: Vec<String> = crawl(&["http://pdfworks.test"]);
    let refs: Vec<&str> = one.iter().map(String::as_str).collect();
    let output = run(&dir, &refs).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).starts_with("crawled 1 domain "),
        "{}",
        stdout(&output)
    );
    assert_eq!(
        server
            .hits()
            .iter()
            .filter(|hit| hit.host != "pdfworks.test")
            .count(),
        0
    );

    // No target: what is due, the two others.
    let due: Vec<String> = crawl(&[]);
    let refs: Vec<&str> = due.iter().map(String::as_str).collect();
    let output = run(&dir, &refs).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).starts_with("crawled 2 domains "),
        "{}",
        stdout(&output)
    );
    // Nothing is due now.
    let output = run(&dir, &refs).await;
    assert!(
        stdout(&output).starts_with("crawled 0 domains "),
        "{}",
        stdout(&output)
    );

    // The frontier says when each is due again and how it got there.
    let rows = listed(&dir, &[]);
    assert_eq!(rows.len(), 3);
    for row in &rows {
        assert_eq!(row["crawls"], 1, "{row}");
        assert_eq!(row["last_outcome"], "ok", "{row}");
        assert_eq!(row["interval_secs"], 86_400, "{row}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delisting_removes_a_domain_everywhere_and_holds() {
    let server = fixture_server().await;
    let dir = data_dir("delist");
    let resolve = format!("*.test=127.0.0.1:{}", server.port());
    let crawl = |target: &'static str| {
        vec![
            "--data".to_owned(),
            "data".to_owned(),
            "crawl".to_owned(),
            "--resolve".to_owned(),
            resolve.clone(),
            "--host-delay-ms".to_owned(),
            "0".to_owned(),
            "--no-progress".to_owned(),
            target.to_owned(),
            "http://legacy-tools.test".to_owned(),
        ]
    };
    let first = crawl("http://pdfworks.test");
    let refs: Vec<&str> = first.iter().map(String::as_str).collect();
    let output = run(&dir, &refs).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let search = |dir: &Path| {
        let output = skillscout(
            dir,
            &["--data", "data", "search", "--json", "--verdict", "any", ""],
        );
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        json(&stdout(&output))
    };
    assert!(
        search(&dir)["facets"]["domain"]["pdfworks.test"]
            .as_u64()
            .unwrap()
            > 0
    );

    let output = run(
        &dir,
        &[
            "--data",
            "data",
            "delist",
            "pdfworks.test",
            "--reason",
            "asked by its owner",
        ],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output).trim(),
        "delisted pdfworks.test: 3 skills removed"
    );
    // Gone from search at once, the other domain kept.
    let hits = search(&dir);
    assert!(
        hits["facets"]["domain"].get("pdfworks.test").is_none(),
        "{hits}"
    );
    assert!(
        hits["facets"]["domain"]["legacy-tools.test"]
            .as_u64()
            .unwrap()
            > 0
    );
    // Gone from exports.
    let export = dir.join("export");
    let output = run(
        &dir,
        &[
            "--data",
            "data",
            "export",
            "--out",
            export.to_str().unwrap(),
            "--layout",
            "jsonl",
        ],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let lines = std::fs::read_to_string(export.join("skills.jsonl")).unwrap();
    assert!(!lines.contains("pdfworks.test"), "{lines}");

    // Neither a seed list nor a crawl naming it brings it back, across restarts.
    std::fs::write(dir.join("again.txt"), "pdfworks.test\n").unwrap();
    let output = run(&dir, &["--data", "data", "seeds", "add", "again.txt"]).await;
    assert!(
        stdout(&output).contains("1 delisted (skipped)"),
        "{}",
        stdout(&output)
    );
    server.clear_hits();
    let again = crawl("http://pdfworks.test");
    let refs: Vec<&str> = again.iter().map(String::as_str).collect();
    let output = run(&dir, &refs).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("skipped 1 delisted"),
        "{}",
        stdout(&output)
    );
    assert!(server.hits_for("pdfworks.test").is_empty());
    assert!(
        search(&dir)["facets"]["domain"]
            .get("pdfworks.test")
            .is_none()
    );
    let delisted = listed(&dir, &["--state", "delisted"]);
    assert_eq!(delisted.len(), 1);
    assert_eq!(delisted[0]["delisted"]["reason"], "asked by its owner");

    // Undelisted, it is crawled again.
    let output = run(&dir, &["--data", "data", "undelist", "pdfworks.test"]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let output = run(&dir, &refs).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        search(&dir)["facets"]["domain"]["pdfworks.test"]
            .as_u64()
            .unwrap()
            > 0
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_commands_go_through_a_running_server() {
    let server = fixture_server().await;
    let dir = data_dir("admin");
    let resolve = format!("*.test=127.0.0.1:{}", server.port());
    let output = run(
        &dir,
        &[
            "--data",
            "data",
            "crawl",
            "--resolve",
            &resolve,
            "--host-delay-ms",
            "0",
            "--no-progress",
            "http://pdfworks.test",
            "http://legacy-tools.test",
        ],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    std::fs::write(dir.join("admin-tokens"), "# operators\nadm1n-t0ken\n").unwrap();
    std::fs::write(dir.join("wrong-token"), "not-the-token\n").unwrap();
    let data = dir.join("data");
    let admin_file = dir.join("admin-tokens");
    let serving = tokio::task::spawn_blocking(move || {
        Running::start(
            &[
                "--data",
                data.to_str().unwrap(),
                "serve",
                "--addr",
                "127.0.0.1:0",
                "--admin-token-file",
                admin_file.to_str().unwrap(),
            ],
            "listening on ",
        )
    })
    .await
    .unwrap();
    let (_, body) = http(serving.addr, "/v1/search?q=&domain=pdfworks.test", None);
    assert!(json(&body)["total"].as_u64().unwrap() > 0);

    // Without a token, the command says how to go through the server.
    let output = run(
        &dir,
        &[
            "--data",
            "data",
            "delist",
            "pdfworks.test",
            "--reason",
            "spam",
        ],
    )
    .await;
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("--admin-token-file"),
        "{}",
        stderr(&output)
    );
    // A wrong token is refused; the right one works.
    let output = run(
        &dir,
        &[
            "--data",
            "data",
            "delist",
            "pdfworks.test",
            "--reason",
            "spam",
            "--admin-token-file",
            "wrong-token",
        ],
    )
    .await;
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("401"), "{}", stderr(&output));
    let output = run(
        &dir,
        &[
            "--data",
            "data",
            "delist",
            "pdfworks.test",
            "--reason",
            "spam",
            "--admin-token-file",
            "admin-tokens",
        ],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output).trim(),
        "delisted pdfworks.test: 3 skills removed"
    );

    // The server's search, domain page and change feed follow.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (_, body) = http(
            serving.addr,
            "/v1/search?q=&domain=pdfworks.test&verdict=any",
            None,
        );
        if json(&body)["total"] == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "search still shows the delisted domain: {body}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (status, _) = http(serving.addr, "/v1/domains/pdfworks.test", None);
    assert_eq!(status, 404);
    let (_, changes) = http(serving.addr, "/v1/changes", None);
    let changes = json(&changes);
    let deletes = changes["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|change| {
            change["change"] == "delete"
                && change["id"].as_str().unwrap().starts_with("pdfworks.test/")
        })
        .count();
    assert_eq!(deletes, 3, "{changes}");

    // The other commands too.
    let admin = |args: &[&str]| {
        let mut all = vec!["--data", "data"];
        all.extend(args);
        all.extend(["--admin-token-file", "admin-tokens"]);
        skillscout(&dir, &all)
    };
    let output = admin(&["seeds", "list", "--state", "delisted", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("\"reason\":\"spam\""),
        "{}",
        stdout(&output)
    );
    std::fs::write(dir.join("more.txt"), "more.test\npdfworks.test\n").unwrap();
    let output = admin(&["seeds", "add", "more.txt"]);
    assert_eq!(
        stdout(&output).trim(),
        "1 new, 0 updated, 0 unchanged, 1 delisted (skipped); 0 bad lines skipped"
    );
    let output = admin(&["seeds", "remove", "more.test"]);
    assert!(
        stdout(&output).starts_with("1 removed"),
        "{}",
        stdout(&output)
    );
    let output = admin(&["undelist", "pdfworks.test"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    // An anonymous caller of the admin API is refused.
    let (status, _) = http(serving.addr, "/admin/v1/seeds", None);
    assert_eq!(status, 401);
    assert_eq!(serving.terminate(), Some(0));
    assert!(
        !dir.join("data/serve.json").exists(),
        "serve.json outlived the server"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_a_crawl_with_its_report_written() {
    // A web whose every host answers slowly, so the crawl is mid-way when told to stop.
    let server = TestServer::start(|_request| crate::server::Reply::Drip {
        body: b"slow".to_vec(),
        pause: Duration::from_millis(30),
    })
    .await;
    let dir = data_dir("sigterm");
    let seeds: String = (0..200).map(|i| format!("http://h{i:03}.test\n")).collect();
    std::fs::write(dir.join("seeds.txt"), seeds).unwrap();
    let resolve = format!("*.test=127.0.0.1:{}", server.port());
    let child = KillOnDrop::spawn(
        Command::new(env!("CARGO_BIN_EXE_skillscout"))
            .args([
                "--data",
                "data",
                "crawl",
                "--seeds",
                "seeds.txt",
                "--resolve",
                &resolve,
            ])
            .args([
                "--host-delay-ms",
                "0",
                "--concurrency",
                "4",
                "--no-progress",
            ])
            .args(["--report", "report.json"])
            .current_dir(&dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    );
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(143), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("(interrupted)"),
        "{}",
        stdout(&output)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    let crawled = report["totals"]["domains"].as_u64().unwrap();
    assert!(crawled > 0 && crawled < 200, "{crawled}");
    assert!(!dir.join("report.json.partial").exists());

    // The rest is crawled by the next crawl of what is due; nothing is lost.
    let output = run(
        &dir,
        &[
            "--data",
            "data",
            "crawl",
            "--resolve",
            &resolve,
            "--host-delay-ms",
            "0",
            "--concurrency",
            "32",
            "--no-progress",
        ],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let rows = listed(&dir, &[]);
    assert_eq!(rows.len(), 200);
    assert!(
        rows.iter().all(|row| row["crawls"] == 1),
        "each crawled once"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
