//! Crawl workers sharing one PostgreSQL store's frontier, as processes: over a loopback web of
//! a few hundred hosts, three workers crawl every host exactly once between them, keep each
//! host's requests spaced across workers (server-side timestamps), and store the same records
//! as one crawl into the embedded store; a worker killed with SIGKILL mid-crawl loses nothing,
//! its hosts being retaken once their leases expire.
//!
//! PostgreSQL comes from `SKILLSCOUT_TEST_POSTGRES` (see `store.rs`).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::server::{Hit, TestServer, serve_file};
use crate::store::{TestSchema, export_records, psql, run};
use crate::util::{KillOnDrop, stderr};

/// Hosts of the loopback web.
const HOSTS: usize = 240;
/// The host delay every crawl uses, in milliseconds.
const HOST_DELAY_MS: u64 = 150;

/// Writes the loopback web into `root`: host `hNNN.test` publishes a legacy index of two
/// skills, except every fifth host, which publishes nothing, and every seventh, whose
/// robots.txt allows everything (the others have none). Returns the seed file's text.
fn write_web(root: &Path) -> String {
    let _ = std::fs::remove_dir_all(root);
    let mut seeds = String::new();
    for index in 0..HOSTS {
        let host = format!("h{index:03}.test");
        seeds.push_str(&format!("http://{host}\n"));
        let site = root.join(&host);
        std::fs::create_dir_all(&site).unwrap();
        if index % 7 == 0 {
            std::fs::write(site.join("robots.txt"), "User-agent: *\nAllow: /\n").unwrap();
        }
        if index % 5 == 4 {
            continue;
        }
        let skills = site.join(".well-known/skills");
        let names = ["alpha-tool", "beta-tool"];
        for name in names {
            std::fs::create_dir_all(skills.join(name)).unwrap();
            std::fs::write(
                skills.join(name).join("SKILL.md"),
                format!(
                    "---\nname: {name}\ndescription: The {name} of {host}.\n---\n# {name}\n\nUse it on {host}.\n"
                ),
            )
            .unwrap();
        }
        let entries: Vec<Value> = names
            .iter()
            .map(|name| serde_json::json!({"name": name, "description": format!("The {name} of {host}."), "files": ["SKILL.md"]}))
            .collect();
        std::fs::write(
            skills.join("index.json"),
            serde_json::json!({ "skills": entries }).to_string(),
        )
        .unwrap();
    }
    seeds
}

/// A test's folder, its web and its server.
struct Setup {
    dir: PathBuf,
    server: TestServer,
}

impl Setup {
    async fn start(name: &str) -> Setup {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let web = dir.join("web");
        let seeds = write_web(&web);
        std::fs::write(dir.join("seeds.txt"), seeds).unwrap();
        let server = TestServer::start(move |request| serve_file(&web, request)).await;
        Setup { dir, server }
    }

    /// The arguments of a crawl of the whole web into `data`.
    fn crawl_args(&self, data: &str, store: Option<&str>, agent: &str) -> Vec<String> {
        let mut args: Vec<String> = vec!["--data".into(), data.into()];
        if let Some(store) = store {
            args.extend(["--store".into(), store.into()]);
        }
        let resolve = format!("*.test=127.0.0.1:{}", self.server.port());
        args.extend(
            [
                "crawl",
                "--seeds",
                "seeds.txt",
                "--resolve",
                &resolve,
                "--host-delay-ms",
                &HOST_DELAY_MS.to_string(),
                "--user-agent",
                agent,
                "--no-progress",
            ]
            .map(str::to_owned),
        );
        args
    }

    /// Starts a crawl process.
    fn spawn(&self, args: &[String]) -> KillOnDrop {
        KillOnDrop::spawn(
            Command::new(env!("CARGO_BIN_EXE_skillscout"))
                .args(args)
                .current_dir(&self.dir)
                .env_remove("RUST_LOG")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped()),
        )
    }

    /// The single crawl into the embedded store that the workers must match: its records,
    /// and the requests each host received.
    async fn baseline(&self) -> (Vec<Value>, HashMap<String, usize>) {
        let output = run(&self.dir, self.crawl_args("embedded", None, "baseline")).await;
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let records = export_records(&self.dir, "embedded", None).await;
        assert_eq!(
            records.len(),
            HOSTS / 5 * 4 * 2,
            "two skills on 4 hosts of 5"
        );
        let per_host = requests_per_host(&self.server.hits());
        assert_eq!(per_host.len(), HOSTS);
        self.server.clear_hits();
        (records, per_host)
    }
}

fn requests_per_host(hits: &[Hit]) -> HashMap<String, usize> {
    let mut per_host = HashMap::new();
    for hit in hits {
        *per_host.entry(hit.host.clone()).or_default() += 1;
    }
    per_host
}

/// The hits of each host, in the order they arrived.
fn hits_by_host(hits: &[Hit]) -> HashMap<String, Vec<Hit>> {
    let mut by_host: HashMap<String, Vec<Hit>> = HashMap::new();
    for hit in hits {
        by_host
            .entry(hit.host.clone())
            .or_default()
            .push(hit.clone());
    }
    for hits in by_host.values_mut() {
        hits.sort_by_key(|hit| hit.started);
    }
    by_host
}

/// Every host's requests, whichever worker made them, are one at a time and at least the
/// host delay apart, measured on the server from when it began to send an answer (no client
/// can have had the answer, and started its pause, sooner) to the next request's arrival; a
/// host taken over by another worker waits at least `handover` after the last request of the
/// worker before.
fn assert_spaced(by_host: &HashMap<String, Vec<Hit>>, handover: Duration) {
    let delay = Duration::from_millis(HOST_DELAY_MS);
    for (host, hits) in by_host {
        for pair in hits.windows(2) {
            let gap = pair[1].started.saturating_duration_since(pair[0].replied);
            let least = if agent(&pair[0]) == agent(&pair[1]) {
                delay
            } else {
                handover.max(delay)
            };
            assert!(
                gap >= least,
                "{host}: {} ({}) came {gap:?} after {} ({}) was answered",
                pair[1].path,
                agent(&pair[1]),
                pair[0].path,
                agent(&pair[0]),
            );
        }
    }
}

fn agent(hit: &Hit) -> &str {
    hit.headers.get("user-agent").map_or("?", String::as_str)
}

/// Waits for a worker and returns its stdout; it must exit 0.
fn finished(child: KillOnDrop) -> String {
    let output = child.wait_with_output();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_crawl_every_host_once_and_politely() {
    let Some(schema) = TestSchema::create() else {
        return;
    };
    let setup = Setup::start("workers").await;
    let (expected, baseline_requests) = setup.baseline().await;

    let workers: Vec<KillOnDrop> = (0..3)
        .map(|worker| {
            setup.spawn(&setup.crawl_args(
                &format!("worker-{worker}"),
                Some(&schema.url),
                &format!("worker-{worker}"),
            ))
        })
        .collect();
    let summaries: Vec<String> =
        tokio::task::spawn_blocking(move || workers.into_iter().map(finished).collect())
            .await
            .unwrap();

    // Every host was crawled exactly once: the same requests as in the single crawl (every
    // path counted), all from one worker.
    let hits = setup.server.hits();
    assert_eq!(requests_per_host(&hits), baseline_requests);
    let by_host = hits_by_host(&hits);
    let mut crawled_by: HashMap<String, usize> = HashMap::new();
    for (host, hits) in &by_host {
        let agents: HashSet<&str> = hits.iter().map(agent).collect();
        assert_eq!(agents.len(), 1, "{host} was crawled by {agents:?}");
        *crawled_by
            .entry((*agents.iter().next().unwrap()).to_owned())
            .or_default() += 1;
    }
    assert!(
        crawled_by.len() >= 2,
        "one worker did everything: {crawled_by:?}"
    );
    assert_spaced(&by_host, Duration::ZERO);
    // Each worker reports the domains it crawled; together, every host.
    let reported: usize = summaries
        .iter()
        .map(|summary| {
            let count = summary
                .strip_prefix("crawled ")
                .and_then(|rest| rest.split(' ').next())
                .and_then(|count| count.parse::<usize>().ok());
            count.unwrap_or_else(|| panic!("unexpected summary {summary:?}"))
        })
        .sum();
    assert_eq!(reported, HOSTS, "{summaries:?}");

    // The same records as the single crawl.
    assert_eq!(
        export_records(&setup.dir, "worker-0", Some(&schema.url)).await,
        expected
    );

    // A worker started right after the round (no targets: what is due) crawls nothing:
    // every host is due later.
    setup.server.clear_hits();
    let mut late = setup.crawl_args("late", Some(&schema.url), "late");
    if let Some(at) = late.iter().position(|arg| arg == "--seeds") {
        late.drain(at..at + 2);
    }
    let output = run(&setup.dir, late).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(setup.server.hits().is_empty(), "{:?}", setup.server.hits());
    let _ = std::fs::remove_dir_all(&setup.dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_worker_loses_nothing() {
    let Some(schema) = TestSchema::create() else {
        return;
    };
    let setup = Setup::start("killed-worker").await;
    let (expected, _) = setup.baseline().await;

    // Few slots each and a short lease, so the kill lands mid-crawl and its hosts are
    // retaken within the test.
    let worker_args = |worker: usize| {
        let mut args = setup.crawl_args(
            &format!("worker-{worker}"),
            Some(&schema.url),
            &format!("worker-{worker}"),
        );
        args.extend(["--concurrency", "6", "--lease", "2s"].map(str::to_owned));
        args
    };
    let mut victim = setup.spawn(&worker_args(0));
    let survivors: Vec<KillOnDrop> = (1..3)
        .map(|worker| setup.spawn(&worker_args(worker)))
        .collect();
    // Kill the victim once it has crawled for a while.
    let started = Instant::now();
    loop {
        let victim_hits = setup
            .server
            .hits()
            .iter()
            .filter(|hit| agent(hit) == "worker-0")
            .count();
        if victim_hits >= 40 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the victim made {victim_hits} requests in a minute"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    victim.kill().unwrap();
    let _ = victim.wait();
    tokio::task::spawn_blocking(move || {
        for survivor in survivors {
            finished(survivor);
        }
    })
    .await
    .unwrap();

    // Hosts the victim had started were crawled again by a survivor, still politely.
    let by_host = hits_by_host(&setup.server.hits());
    assert_eq!(by_host.len(), HOSTS);
    // A survivor takes a host over when the victim's lease expires, some three quarters of
    // the 2 s lease after the victim's last request (it renews every quarter); asserted with
    // room for a heartbeat made late by a loaded machine, and far above the host delay.
    assert_spaced(&by_host, Duration::from_millis(1000));
    let retaken = by_host
        .values()
        .filter(|hits| {
            let agents: HashSet<&str> = hits.iter().map(agent).collect();
            agents.contains("worker-0") && agents.len() > 1
        })
        .count();
    assert!(retaken >= 1, "no host of the killed worker was retaken");

    // Nothing is lost: every record, as in the single crawl.
    assert_eq!(
        export_records(&setup.dir, "worker-1", Some(&schema.url)).await,
        expected
    );
    let _ = std::fs::remove_dir_all(&setup.dir);
}

#[test]
fn a_lease_must_outlast_the_host_delay() {
    let dir = tempfile::tempdir().unwrap();
    let too_short = [
        "crawl",
        "--lease",
        "1s",
        "--host-delay-ms",
        "1000",
        "--no-progress",
        "http://a.test",
    ];
    let output = crate::util::skillscout(dir.path(), &too_short);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("too short"), "{}", stderr(&output));
    if let Some(schema) = TestSchema::create() {
        let mut args = vec!["--store", schema.url.as_str()];
        args.extend(too_short);
        let output = crate::util::skillscout(dir.path(), &args);
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(stderr(&output).contains("too short"), "{}", stderr(&output));
    }
}

/// `serve --crawl --crawl-every` over a shared store is a worker like `crawl`: the frontier,
/// not the process, schedules the next crawl of each domain, and another worker started
/// meanwhile finds nothing due.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_serving_crawler_is_one_more_worker() {
    use std::io::BufRead;
    let Some(schema) = TestSchema::create() else {
        return;
    };
    let setup = Setup::start("serving-worker").await;
    let resolve = format!("*.test=127.0.0.1:{}", setup.server.port());
    let mut server = KillOnDrop::spawn(
        Command::new(env!("CARGO_BIN_EXE_skillscout"))
            .args(["--data", "server", "--store", &schema.url, "serve"])
            .args(["--addr", "127.0.0.1:0", "--sync-every", "1s", "--crawl"])
            .args([
                "--seeds",
                "seeds.txt",
                "--crawl-every",
                "1h",
                "--resolve",
                &resolve,
            ])
            .args(["--host-delay-ms", "0"])
            .current_dir(&setup.dir)
            .env_remove("RUST_LOG")
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    );
    let mut line = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("listening on"), "{line:?}");

    // Every domain crawled once and scheduled an hour later by the store.
    let url = schema.url.clone();
    let counts = tokio::task::spawn_blocking(move || {
        let sql = "SELECT count(*), min(crawls), max(crawls), \
                   bool_and(next_crawl_at > now() + interval '50 minutes') FROM frontier";
        let started = Instant::now();
        loop {
            let counts = psql(&url, sql);
            if counts.starts_with(&format!("{HOSTS}|1|1|"))
                || started.elapsed() > Duration::from_secs(60)
            {
                return counts;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    })
    .await
    .unwrap();
    assert_eq!(counts, format!("{HOSTS}|1|1|t"));

    // The serving worker keeps running; a worker started now (no targets: what is due)
    // finds nothing due.
    assert!(server.try_wait().unwrap().is_none(), "the server stopped");
    setup.server.clear_hits();
    let mut late = setup.crawl_args("late", Some(&schema.url), "late");
    if let Some(at) = late.iter().position(|arg| arg == "--seeds") {
        late.drain(at..at + 2);
    }
    let output = run(&setup.dir, late).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(setup.server.hits().is_empty());
    drop(server);
    let _ = std::fs::remove_dir_all(&setup.dir);
}

/// A host that asks, with `Retry-After`, for a longer wait than a crawl waits out is left for
/// its next crawl, and the frontier schedules that crawl no sooner than the wait: no worker
/// asks it again before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_retry_after_holds_across_workers() {
    use crate::server::Reply;
    let Some(schema) = TestSchema::create() else {
        return;
    };
    let server = TestServer::start(|request| {
        if request.host == "slow.test" && request.path != "/robots.txt" {
            Reply::status(429).header("Retry-After", "7200")
        } else {
            Reply::not_found()
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let resolve = format!("*.test=127.0.0.1:{}", server.port());
    let args: Vec<String> = [
        "--store",
        &schema.url,
        "crawl",
        "--resolve",
        &resolve,
        "--host-delay-ms",
        "0",
        // An interval of a minute, so that the host's two hours stand out.
        "--min-interval",
        "1m",
        "--max-interval",
        "1m",
        "--no-progress",
        "http://slow.test",
        "http://fine.test",
    ]
    .map(str::to_owned)
    .to_vec();
    let output = run(dir.path(), args).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        server
            .hits_for("slow.test")
            .iter()
            .any(|hit| hit.status == 429)
    );
    let url = schema.url.clone();
    let scheduled = tokio::task::spawn_blocking(move || {
        psql(
            &url,
            "SELECT string_agg(domain || '=' || (next_crawl_at > now() + interval '110 minutes'), ',' \
             ORDER BY domain) FROM frontier",
        )
    })
    .await
    .unwrap();
    assert_eq!(scheduled, "fine.test=false,slow.test=true");
}
