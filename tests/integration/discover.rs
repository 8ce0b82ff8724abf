//! Discovery end to end: origins named in what a crawl reads (SKILL.md links, any field of an
//! index holding a URL, the `Link` headers of its answer) become `discovered` candidates,
//! probed in the running crawl and counted in the report and /metrics; link farms in bodies,
//! documents and headers are held to the budget; a delisted domain never comes back.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::publish::{request, search_until, serve_over, start_web, total, write_site};
use crate::serve::json;
use crate::server::{Reply, TestServer, serve_file};
use crate::util::{skillscout, stderr, stdout};

/// The `$schema` of a v0.2 index: a URL at another origin that is no candidate.
const SCHEMA: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";

/// Returns the value of the counter `name` in a /metrics text.
fn metric(metrics: &str, name: &str) -> u64 {
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{name} ")))
        .and_then(|value| value.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {metrics}"))
}

/// Polls /metrics until the counter `name` reaches `at_least` (or 30 s pass); returns the text.
fn metrics_once(addr: SocketAddr, name: &str, at_least: u64) -> String {
    let started = Instant::now();
    loop {
        let (_, _, metrics) = request(addr, "GET", "/metrics", None);
        let value = metrics
            .lines()
            .find_map(|line| line.strip_prefix(&format!("{name} ")))
            .and_then(|value| value.parse::<u64>().ok())
            .unwrap_or(0);
        if value >= at_least || started.elapsed() > Duration::from_secs(30) {
            return metrics;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Writes `pub.test`'s v0.2 index: one skill, whose entry names `field.test` in a field that
/// is not its artifact's URL, and a second entry whose artifact at `elsewhere.test` is missing.
fn write_index_naming_others(web: &std::path::Path) {
    let dir = web.join("pub.test/.well-known/agent-skills");
    std::fs::create_dir_all(dir.join("relay")).unwrap();
    std::fs::write(
        dir.join("relay/SKILL.md"),
        "---\nname: relay\ndescription: Relays messages.\n---\n# relay\n",
    )
    .unwrap();
    let index = serde_json::json!({
        "$schema": SCHEMA,
        "skills": [
            {"name": "relay", "type": "skill-md", "description": "Relays messages.",
             "url": "relay/SKILL.md", "author": {"name": "Team", "url": "http://field.test/team"}},
            {"name": "moved", "type": "skill-md", "description": "Moved away.",
             "url": "http://elsewhere.test/moved/SKILL.md"},
        ]
    });
    std::fs::write(dir.join("index.json"), index.to_string()).unwrap();
}

/// Discovery: origins linked from a crawled SKILL.md become `discovered` candidates (the
/// origin only), probed in the same running crawl, counted in /metrics; a link farm is held
/// to the budget; a delisted domain never comes back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn origins_named_in_skills_are_discovered_and_probed_in_the_running_crawl() {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("discover-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let web = dir.join("web");
    let mut body = String::from(
        "See [the guide](http://found.test/docs/guide.html) and http://gone.test/page.\n",
    );
    for n in 0..2000 {
        body.push_str(&format!("[{n}](http://farm{n:04}.test/x) "));
    }
    write_site(&web, "pub.test", "linker", "Links to other sites.");
    std::fs::write(
        web.join("pub.test/.well-known/skills/linker/SKILL.md"),
        format!("---\nname: linker\ndescription: Links to other sites.\n---\n# linker\n\n{body}\n"),
    )
    .unwrap();
    write_site(&web, "found.test", "quarry-plan", "Plans quarries.");
    let server = start_web(web.clone()).await;
    let data = dir.join("data");
    std::fs::create_dir_all(&dir).unwrap();
    let output = crate::util::skillscout(
        &dir,
        &[
            "--data",
            data.to_str().unwrap(),
            "delist",
            "gone.test",
            "--reason",
            "abuse",
        ],
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        crate::util::stderr(&output)
    );
    let running = serve_over(
        &dir,
        "http://pub.test\n",
        server.port(),
        &["--discover-budget", "20"],
    );
    let addr = running.addr;
    let found = tokio::task::spawn_blocking(move || {
        search_until(addr, "quarries", Duration::from_secs(30), |answer| {
            total(answer) == 1
        })
    })
    .await
    .unwrap();
    assert!(found.is_some(), "the linked site was never probed");
    let (_, _, body) = request(addr, "GET", "/v1/domains/found.test", None);
    let answer = json(&body);
    assert_eq!(answer["state"], "discovered", "{body}");
    assert_eq!(answer["source"], "pub.test", "{body}");
    // Only the origin was taken: the page linked was never asked for.
    assert!(
        server
            .hits_for("found.test")
            .iter()
            .all(|hit| hit.path != "/docs/guide.html")
    );
    // The delisted domain stayed out; the farm was held to the budget.
    assert!(server.hits_for("gone.test").is_empty());
    let metrics = metrics_once(addr, "skillscout_discovered_probed_total", 20);
    let value = |name: &str| metric(&metrics, name);
    // The budget counts new domains (20: found.test and 19 of the farm); the delisted
    // gone.test, which the frontier holds, costs nothing and stays out.
    assert_eq!(value("skillscout_discovered_total"), 20, "{metrics}");
    assert_eq!(value("skillscout_discovered_probed_total"), 20, "{metrics}");
    assert_eq!(
        value("skillscout_discovered_publishing_total"),
        1,
        "{metrics}"
    );
    let farms: std::collections::HashSet<String> = server
        .hits()
        .into_iter()
        .filter(|hit| hit.host.starts_with("farm"))
        .map(|hit| hit.host)
        .collect();
    assert_eq!(farms.len(), 19, "{farms:?}");
    drop(running);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Any field of an index holding a URL names its origin (an entry's artifact URL that failed
/// too), and so does the `Link` header of the index's answer; all are probed in the running
/// crawl and counted. A resource hint
/// (`preconnect`), the index's `$schema` and its own origin name nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn origins_in_index_fields_and_link_headers_are_probed_in_the_running_crawl() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("discover-doc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let web = dir.join("web");
    write_index_naming_others(&web);
    write_site(&web, "field.test", "quarry-plan", "Plans quarries.");
    write_site(&web, "header.test", "kiln-watch", "Watches kilns.");
    let server = TestServer::start(move |request| {
        let reply = serve_file(&web, request);
        if request.host == "pub.test" && request.path == "/.well-known/agent-skills/index.json" {
            return reply
                .header(
                    "Link",
                    "<http://header.test/.well-known/skills/index.json>; rel=\"alternate\"",
                )
                .header(
                    "Link",
                    "<http://cdn.test>; rel=preconnect, </same>; rel=self",
                );
        }
        reply
    })
    .await;
    let running = serve_over(
        &dir,
        "http://pub.test\n",
        server.port(),
        &["--discover-budget", "20"],
    );
    let addr = running.addr;
    let found = tokio::task::spawn_blocking(move || {
        let quarries = search_until(addr, "quarries", Duration::from_secs(30), |answer| {
            total(answer) == 1
        });
        let kilns = search_until(addr, "kilns", Duration::from_secs(30), |answer| {
            total(answer) == 1
        });
        (quarries, kilns)
    })
    .await
    .unwrap();
    assert!(
        found.0.is_some(),
        "the origin in an index field was never probed"
    );
    assert!(
        found.1.is_some(),
        "the origin in a Link header was never probed"
    );
    for domain in ["field.test", "header.test"] {
        let (_, _, body) = request(addr, "GET", &format!("/v1/domains/{domain}"), None);
        let answer = json(&body);
        assert_eq!(answer["state"], "discovered", "{body}");
        assert_eq!(answer["source"], "pub.test", "{body}");
    }
    // Only origins were taken: the paths named were never asked for.
    assert!(
        server
            .hits_for("field.test")
            .iter()
            .all(|hit| hit.path != "/team")
    );
    assert!(server.hits_for("cdn.test").is_empty());
    // field.test and header.test publish; elsewhere.test, named by an artifact that failed,
    // was probed and publishes nothing.
    let metrics = metrics_once(addr, "skillscout_discovered_probed_total", 3);
    assert_eq!(
        metric(&metrics, "skillscout_discovered_total"),
        3,
        "{metrics}"
    );
    assert_eq!(
        metric(&metrics, "skillscout_discovered_probed_total"),
        3,
        "{metrics}"
    );
    assert_eq!(
        metric(&metrics, "skillscout_discovered_publishing_total"),
        2,
        "{metrics}"
    );
    drop(running);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A site whose index and `Link` headers are link farms (hundreds of origins each) adds no
/// more than the budget; the crawl's report and summary count what it added, and a crawl of
/// given targets leaves the candidates due, unprobed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_farm_in_documents_and_headers_is_held_to_the_budget() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("discover-farm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let farm: Vec<String> = (0..300)
        .map(|n| format!("http://doc{n:03}.test/x"))
        .collect();
    let index = serde_json::json!({
        "skills": [{"name": "farm", "description": "A farm.", "files": ["SKILL.md"], "see": farm}]
    })
    .to_string();
    let links: Vec<String> = (0..300)
        .map(|n| format!("<http://head{n:03}.test/>; rel=alternate"))
        .collect();
    let links = links.join(", ");
    let server = TestServer::start(move |request| match request.path.as_str() {
        "/.well-known/skills/index.json" => Reply::json(index.clone()).header("Link", &links),
        "/.well-known/skills/farm/SKILL.md" => {
            Reply::ok("---\nname: farm\ndescription: A farm.\n---\n# farm\n")
        }
        _ => Reply::not_found(),
    })
    .await;
    let data = dir.join("data");
    let report = dir.join("report.json");
    std::fs::create_dir_all(&dir).unwrap();
    let args = [
        "crawl",
        "--data",
        data.to_str().unwrap(),
        "--resolve",
        &format!("*.test=127.0.0.1:{}", server.port()),
        "--host-delay-ms",
        "0",
        "--discover-budget",
        "5",
        "--report",
        report.to_str().unwrap(),
        "http://farm.test",
    ]
    .map(str::to_owned);
    let run_dir = dir.clone();
    let output = tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        skillscout(&run_dir, &args)
    })
    .await
    .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("; 5 discovered (0 probed, 0 publishing)"),
        "{}",
        stdout(&output)
    );
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(written["totals"]["discovered"], 5, "{written}");
    // The first origins the index names, in order; none was asked for yet.
    let listed = skillscout(
        &dir,
        &[
            "--data",
            data.to_str().unwrap(),
            "seeds",
            "list",
            "--state",
            "discovered",
            "--json",
        ],
    );
    let mut domains: Vec<String> = stdout(&listed)
        .lines()
        .map(|line| json(line)["domain"].as_str().unwrap().to_owned())
        .collect();
    domains.sort();
    assert_eq!(
        domains,
        [
            "doc000.test",
            "doc001.test",
            "doc002.test",
            "doc003.test",
            "doc004.test"
        ]
    );
    assert!(server.hits().iter().all(|hit| hit.host == "farm.test"));
    let _ = std::fs::remove_dir_all(&dir);
}
