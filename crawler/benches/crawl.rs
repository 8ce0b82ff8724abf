//! Crawl throughput and memory against a simulated web on loopback.
//!
//! `cargo bench -p crawler --bench crawl` starts a server process that answers for thousands
//! of virtual hosts (`h{N}.bench.test`; one host in ten publishes a legacy index of two
//! skills, the others answer 404), then measures, each in a fresh process so that peak memory
//! is its own:
//!
//! - **raw**: the same URLs the crawler requests (robots.txt, the three probes, the SKILL.md
//!   files), fetched by a plain shared `reqwest` client at the same concurrency, hosts one
//!   after the other within a task, without politeness, parsing or storage;
//! - **skillscout**: `crawler::crawl::crawl` into a fresh data directory, with the host delay
//!   given (0 ms measures the machinery's own cost; 1000 ms, the default, shows that
//!   politeness costs time per host, not per crawl, when enough hosts run at once).
//!
//! It prints a Markdown table for `docs/BENCHMARKS.md`. Options: `--hosts N` (default 5000),
//! `--quick` (1000 hosts, fewer runs).
//!
//! `--hostile N[,N…]` measures one hostile domain instead: `big.bench.test` lists N skills,
//! each SKILL.md 1 MiB, and the crawler (64 hosts at once, no host delay) crawls it alone, once
//! per size. What the crawler holds must not grow with N: its records go to the store as they
//! are built.
//!
//! `--tree DIR [--rounds N] [--delay-ms MS] [--prefetch-files]` crawls a tree of sites on disk
//! (`DIR/<host>/.well-known/…`, as `seeds/web` and `../shared/corpus` are), served on
//! loopback, N times (default 10) with the safety audit and N times without it (the crawl's
//! `audit: false`: no audit and no content fingerprint), each into a fresh data directory, in
//! the same process, turn about (with, without, without, with, …) so that a slower stretch
//! of the machine weighs on both. It prints each crawl's wall time, both medians and what the
//! audit adds, in percent of the median without it.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Response, StatusCode, Uri};
use crawler::crawl::{CrawlConfig, Quiet};
use crawler::fetch::guard::{GuardedResolver, Overrides};
use formats::seeds::SeedTarget;
use store::Store;
use store::blobs::Blobs;

/// How many loopback addresses the server listens on, one per run.
const ADDRESSES: u8 = 16;

const SKILL: &str = "---\nname: SKILLNAME\ndescription: Converts files between formats for the benchmark.\n---\n# Steps\n\n1. Read the file.\n2. Write it back.\n";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| args.iter().any(|arg| arg == name);
    let value = |name: &str| {
        args.iter()
            .position(|arg| arg == name)
            .and_then(|at| args.get(at + 1))
            .cloned()
    };
    if flag("--serve") {
        return serve();
    }
    if let Some(mode) = value("--child") {
        let address = value("--address").unwrap();
        let hosts: usize = value("--hosts").unwrap().parse().unwrap();
        let concurrency: usize = value("--concurrency").unwrap().parse().unwrap();
        let delay: u64 = value("--delay-ms")
            .unwrap_or_else(|| "0".into())
            .parse()
            .unwrap();
        return child(&mode, &address, hosts, concurrency, delay);
    }
    if let Some(tree) = value("--tree") {
        let rounds = value("--rounds").map_or(10, |n| n.parse().unwrap());
        let delay = value("--delay-ms").map_or(0, |n| n.parse().unwrap());
        return crawl_tree(
            std::path::Path::new(&tree),
            rounds,
            delay,
            flag("--prefetch-files"),
        );
    }
    if let Some(sizes) = value("--hostile") {
        let sizes: Vec<usize> = sizes.split(',').map(|n| n.parse().unwrap()).collect();
        return orchestrate_hostile(&sizes);
    }
    let quick = flag("--quick");
    let hosts: usize = value("--hosts")
        .map(|h| h.parse().unwrap())
        .unwrap_or(if quick { 1000 } else { 5000 });
    orchestrate(hosts, quick);
}

/// Starts the server process; returns it and its port.
fn start_server(exe: &std::path::Path) -> (std::process::Child, u16) {
    let mut server = Command::new(exe)
        .arg("--serve")
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the server process");
    let port: u16 = {
        use std::io::BufRead;
        let stdout = server.stdout.take().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .unwrap();
        line.trim().strip_prefix("PORT ").unwrap().parse().unwrap()
    };
    (server, port)
}

/// Runs one scenario in a child process; returns `(seconds, requests, peak KiB)`.
fn run_child(exe: &std::path::Path, mode: &str, args: &[String]) -> Option<(f64, f64, f64)> {
    let output = Command::new(exe)
        .args(["--child", mode])
        .args(args)
        .output()
        .expect("run a scenario");
    let text = String::from_utf8_lossy(&output.stdout);
    let Some(line) = text.lines().find(|line| line.starts_with("RESULT ")) else {
        eprintln!(
            "{mode} failed: {text}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        return None;
    };
    let fields: Vec<f64> = line[7..]
        .split_whitespace()
        .map(|field| field.parse().unwrap())
        .collect();
    Some((fields[0], fields[1], fields[2]))
}

/// Crawls the hostile domain at each size and prints the table.
fn orchestrate_hostile(sizes: &[usize]) {
    let exe = std::env::current_exe().unwrap();
    let (mut server, port) = start_server(&exe);
    println!("| skills listed (1 MiB each) | time (s) | MiB/s | peak RSS (MiB) |");
    println!("| ---: | ---: | ---: | ---: |");
    for (run, size) in sizes.iter().enumerate() {
        let address = format!("127.0.0.{}:{port}", 2 + run % usize::from(ADDRESSES));
        let args = [
            "--address".to_owned(),
            address,
            "--hosts".to_owned(),
            size.to_string(),
            "--concurrency".to_owned(),
            "64".to_owned(),
        ];
        let Some((seconds, _, peak_kib)) = run_child(&exe, "hostile", &args) else {
            continue;
        };
        println!(
            "| {size} | {seconds:.1} | {:.0} | {:.1} |",
            *size as f64 / seconds,
            peak_kib / 1024.0
        );
    }
    let _ = server.kill();
    let _ = server.wait();
}

/// Runs the scenarios, each in a child process, and prints the table.
fn orchestrate(hosts: usize, quick: bool) {
    let exe = std::env::current_exe().unwrap();
    let (mut server, port) = start_server(&exe);

    let mut runs: Vec<(&str, usize, usize, u64)> = vec![
        ("raw", hosts, 64, 0),
        ("skillscout", hosts, 64, 0),
        ("skillscout", hosts, 64, 0),
        ("raw", hosts, 64, 0),
    ];
    if !quick {
        runs.extend([
            ("skillscout", hosts / 5, 64, 0),
            ("skillscout", hosts, 16, 0),
            ("skillscout", hosts, 256, 0),
            ("raw", hosts, 256, 0),
            ("skillscout", hosts / 2, 1024, 1000),
        ]);
    }
    println!(
        "| run | hosts | concurrency | host delay | time (s) | hosts/s | requests/s | peak RSS (MiB) |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (run, (mode, hosts, concurrency, delay)) in runs.into_iter().enumerate() {
        let address = format!("127.0.0.{}:{port}", 2 + run % usize::from(ADDRESSES));
        let args = [
            "--address".to_owned(),
            address,
            "--hosts".to_owned(),
            hosts.to_string(),
            "--concurrency".to_owned(),
            concurrency.to_string(),
            "--delay-ms".to_owned(),
            delay.to_string(),
        ];
        let Some((seconds, requests, peak_kib)) = run_child(&exe, mode, &args) else {
            continue;
        };
        println!(
            "| {mode} | {hosts} | {concurrency} | {delay} ms | {seconds:.2} | {:.0} | {:.0} | {:.1} |",
            hosts as f64 / seconds,
            requests / seconds,
            peak_kib / 1024.0
        );
    }
    let _ = server.kill();
    let _ = server.wait();
}

/// The simulated web: every host answers; one in ten publishes two skills.
fn serve() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        // One loopback address per run (127.0.0.2, .3, ...) on the same port: connections
        // closed by one run linger in TIME_WAIT for a minute, and a fresh destination address
        // keeps them from crowding the ephemeral ports of the next run.
        let first = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = first.local_addr().unwrap().port();
        let mut servers = tokio::task::JoinSet::new();
        for last in 2..2 + ADDRESSES {
            let listener = tokio::net::TcpListener::bind(format!("127.0.0.{last}:{port}"))
                .await
                .expect("bind a loopback address");
            servers
                .spawn(async move { axum::serve(listener, Router::new().fallback(answer)).await });
        }
        println!("PORT {port}");
        axum::serve(first, Router::new().fallback(answer))
            .await
            .unwrap();
    });
}

async fn answer(headers: HeaderMap, uri: Uri) -> Response<Body> {
    let host = headers
        .get("host")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("")
        .split(':')
        .next()
        .unwrap_or("");
    let number: usize = host
        .strip_prefix('h')
        .and_then(|rest| rest.split('.').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    let publishes = number.is_multiple_of(10);
    let path = uri.path();
    if let Some(size) = host
        .strip_prefix("big-")
        .and_then(|rest| rest.split('.').next())
        .and_then(|n| n.parse().ok())
    {
        return hostile(size, path);
    }
    let body = match path {
        "/.well-known/skills/index.json" if publishes => Some(
            r#"{"skills": [
                {"name": "convert-a", "description": "Converts files between formats for the benchmark.", "files": ["SKILL.md"]},
                {"name": "convert-b", "description": "Converts files between formats for the benchmark.", "files": ["SKILL.md"]}
            ]}"#
            .to_owned(),
        ),
        "/.well-known/skills/convert-a/SKILL.md" if publishes => {
            Some(SKILL.replace("SKILLNAME", "convert-a"))
        }
        "/.well-known/skills/convert-b/SKILL.md" if publishes => {
            Some(SKILL.replace("SKILLNAME", "convert-b"))
        }
        _ => None,
    };
    match body {
        Some(body) => Response::new(Body::from(body)),
        None => {
            let mut response = Response::new(Body::empty());
            *response.status_mut() = StatusCode::NOT_FOUND;
            response
        }
    }
}

/// The size of each hostile SKILL.md.
const HOSTILE_SKILL_BYTES: usize = 1024 * 1024;

/// The hostile domain `big-{N}.bench.test`: a legacy index of N skills, each SKILL.md 1 MiB.
fn hostile(skills: usize, path: &str) -> Response<Body> {
    let not_found = || {
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::NOT_FOUND;
        response
    };
    if path == "/.well-known/skills/index.json" {
        let entries: Vec<String> = (0..skills)
            .map(|n| {
                format!(
                    r#"{{"name": "skill-{n}", "description": "Hostile skill {n}.", "files": ["SKILL.md"]}}"#
                )
            })
            .collect();
        return Response::new(Body::from(format!(
            r#"{{"skills": [{}]}}"#,
            entries.join(",")
        )));
    }
    let Some(n) = path
        .strip_prefix("/.well-known/skills/skill-")
        .and_then(|rest| rest.strip_suffix("/SKILL.md"))
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|n| *n < skills)
    else {
        return not_found();
    };
    let mut text = format!("---\nname: skill-{n}\ndescription: Hostile skill {n}.\n---\n");
    let line = format!("Step {n} of a very long skill, written to fill a megabyte.\n");
    while text.len() + line.len() <= HOSTILE_SKILL_BYTES {
        text.push_str(&line);
    }
    Response::new(Body::from(text))
}

/// The URLs the crawler requests for host `number`, in order.
fn urls_of(number: usize) -> Vec<String> {
    let base = format!("http://h{number}.bench.test");
    let mut urls = vec![
        format!("{base}/robots.txt"),
        format!("{base}/.well-known/agent-skills/index.json"),
        format!("{base}/.well-known/skills/index.json"),
    ];
    if number.is_multiple_of(10) {
        urls.push(format!("{base}/.well-known/skills/convert-a/SKILL.md"));
        urls.push(format!("{base}/.well-known/skills/convert-b/SKILL.md"));
    }
    urls.push(format!("{base}/.well-known/skill-sharing"));
    urls
}

/// Runs one scenario and prints `RESULT seconds requests peak_kib`.
fn child(mode: &str, address: &str, hosts: usize, concurrency: usize, delay_ms: u64) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let resolve = format!("*={address}");
    let started = Instant::now();
    let requests = match mode {
        "raw" => runtime.block_on(raw(&resolve, hosts, concurrency)),
        "hostile" => runtime.block_on(hostile_crawl(&resolve, hosts, concurrency)),
        _ => runtime.block_on(skillscout(&resolve, hosts, concurrency, delay_ms)),
    };
    let seconds = started.elapsed().as_secs_f64();
    println!("RESULT {seconds} {requests} {}", peak_kib());
}

async fn raw(resolve: &str, hosts: usize, concurrency: usize) -> usize {
    let overrides = Overrides::new(&[resolve.parse().unwrap()]);
    let client = reqwest::Client::builder()
        .dns_resolver(Arc::new(GuardedResolver::new(Arc::new(overrides), true)))
        .tls_backend_preconfigured(crawler::fetch::tls::client_config(&[]).unwrap())
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        // One keep-alive connection per host, closed soon after the host's last request, so
        // that tens of thousands of hosts do not leave as many idle sockets open.
        .pool_max_idle_per_host(1)
        .pool_idle_timeout(Duration::from_secs(1))
        .build()
        .unwrap();
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..concurrency {
        let client = client.clone();
        let next = Arc::clone(&next);
        tasks.spawn(async move {
            let mut made = 0;
            loop {
                let number = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                if number > hosts {
                    return made;
                }
                for url in urls_of(number) {
                    let response = client.get(&url).send().await.unwrap();
                    let _ = response.bytes().await.unwrap();
                    made += 1;
                }
            }
        });
    }
    let mut total = 0;
    while let Some(made) = tasks.join_next().await {
        total += made.unwrap();
    }
    total
}

async fn skillscout(resolve: &str, hosts: usize, concurrency: usize, delay_ms: u64) -> usize {
    let targets: Vec<SeedTarget> = (1..=hosts)
        .map(|number| format!("http://h{number}.bench.test").parse().unwrap())
        .collect();
    let report = crawl_into_fresh_dir(resolve, targets, concurrency, delay_ms).await;
    let expected_skills = hosts / 10 * 2;
    assert_eq!(report.totals.skills, expected_skills, "{:?}", report.totals);
    report.totals.requests
}

/// Crawls the hostile domain listing `skills` skills.
async fn hostile_crawl(resolve: &str, skills: usize, concurrency: usize) -> usize {
    let target = format!("http://big-{skills}.bench.test");
    let report = crawl_into_fresh_dir(resolve, vec![target.parse().unwrap()], concurrency, 0).await;
    assert_eq!(report.totals.skills, skills, "{:?}", report.totals);
    assert_eq!(report.totals.added, skills, "{:?}", report.totals);
    report.totals.requests
}

/// Crawls `targets` into a fresh data directory, as `skillscout crawl` does; removes it after.
async fn crawl_into_fresh_dir(
    resolve: &str,
    targets: Vec<SeedTarget>,
    concurrency: usize,
    delay_ms: u64,
) -> crawler::crawl::CrawlReport {
    let dir = std::env::temp_dir().join(format!("skillscout-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = Arc::new(Store::open(&dir).unwrap());
    let blobs = Blobs::open(&dir).unwrap();
    let mut config = CrawlConfig::default();
    config.fetch.resolve = vec![resolve.parse().unwrap()];
    config.fetch.host_delay = Duration::from_millis(delay_ms);
    config.concurrency = concurrency;
    // As `skillscout crawl` does: report lines are handed out as they are stored, not kept.
    config.keep_report_lines = false;
    let report = crawler::crawl::crawl(
        config,
        targets,
        store,
        blobs,
        Arc::new(Quiet),
        std::future::pending(),
    )
    .await
    .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    report
}

/// The process's peak resident memory, in KiB.
fn peak_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmHWM:"))
                .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Crawls every site of `tree` `rounds` times with the audit and `rounds` times without it,
/// turn about, each into a fresh data directory, and prints each crawl's wall time, both
/// medians and what the audit adds.
fn crawl_tree(tree: &std::path::Path, rounds: usize, delay_ms: u64, prefetch: bool) {
    let mut hosts: Vec<String> = std::fs::read_dir(tree)
        .expect("read the tree")
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.path().join(".well-known").is_dir())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    hosts.sort();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let root = tree.to_owned();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let port = listener.local_addr().unwrap().port();
    runtime.spawn(async move {
        let root = Arc::new(root);
        let files = Router::new().fallback(move |headers: HeaderMap, uri: Uri| {
            let root = Arc::clone(&root);
            async move { tree_file(&root, &headers, &uri) }
        });
        axum::serve(listener, files).await
    });
    let resolve = format!("*=127.0.0.1:{port}");
    // Seconds per crawl: [without the audit, with it].
    let mut times: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut skills = [0, 0];
    let mut flagged = 0;
    for round in 0..rounds * 2 {
        // With, without, without, with, …: each pair runs both, in alternating order.
        let audit = matches!(round % 4, 0 | 3);
        let targets: Vec<SeedTarget> = hosts
            .iter()
            .map(|host| format!("http://{host}").parse().unwrap())
            .collect();
        // Each round audits the tree's skills afresh, not from the last round's memory.
        formats::audit::forget_remembered();
        let started = Instant::now();
        let (report, at_high) = runtime.block_on(crawl_tree_once(
            &resolve, targets, delay_ms, prefetch, audit,
        ));
        let seconds = started.elapsed().as_secs_f64();
        let which = usize::from(audit);
        skills[which] = report.totals.skills;
        if audit {
            flagged = at_high;
        }
        println!(
            "crawl {}: {seconds:.3} s, {} skills, audit {}",
            round + 1,
            report.totals.skills,
            if audit { "on" } else { "off" }
        );
        times[which].push(seconds);
    }
    assert_eq!(skills[0], skills[1], "both crawls read the same skills");
    let [without, with] = times.map(|mut times| {
        times.sort_by(f64::total_cmp);
        let median = if times.len() % 2 == 0 {
            (times[times.len() / 2 - 1] + times[times.len() / 2]) / 2.0
        } else {
            times[times.len() / 2]
        };
        (median, times[0], times[times.len() - 1])
    });
    println!(
        "{} hosts, {} skills ({flagged} at high or critical risk), {rounds} crawls each way",
        hosts.len(),
        skills[1]
    );
    println!(
        "MEDIAN without the audit {:.3} s (min {:.3}, max {:.3}); with it {:.3} s (min {:.3}, max {:.3}); the audit adds {:+.1}%",
        without.0,
        without.1,
        without.2,
        with.0,
        with.1,
        with.2,
        (with.0 / without.0 - 1.0) * 100.0
    );
}

/// Crawls `targets` once into a fresh data directory; returns the report and how many of the
/// stored skills are at `high` or `critical` risk.
async fn crawl_tree_once(
    resolve: &str,
    targets: Vec<SeedTarget>,
    delay_ms: u64,
    prefetch: bool,
    audit: bool,
) -> (crawler::crawl::CrawlReport, usize) {
    let dir = std::env::temp_dir().join(format!("skillscout-bench-tree-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = Arc::new(Store::open(&dir).unwrap());
    let blobs = Blobs::open(&dir).unwrap();
    let mut config = CrawlConfig::default();
    config.fetch.resolve = vec![resolve.parse().unwrap()];
    config.fetch.host_delay = Duration::from_millis(delay_ms);
    config.prefetch_files = prefetch;
    config.keep_report_lines = false;
    config.audit = audit;
    let report = crawler::crawl::crawl(
        config,
        targets,
        Arc::clone(&store),
        blobs,
        Arc::new(Quiet),
        std::future::pending(),
    )
    .await
    .unwrap();
    let flagged = flagged_skills(&store);
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
    (report, flagged)
}

/// Answers a request with the file of `root` its host and path name, or a 404.
fn tree_file(root: &std::path::Path, headers: &HeaderMap, uri: &Uri) -> Response<Body> {
    let host = headers
        .get("host")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("")
        .split(':')
        .next()
        .unwrap_or("");
    let mut file = root.join(host);
    let mut safe = !host.is_empty() && !host.contains(['/', '\\']) && host != "..";
    for segment in uri.path().split('/').filter(|segment| !segment.is_empty()) {
        match formats::site::decode_path_segment(segment) {
            Some(decoded) if decoded != ".." && !decoded.contains(['/', '\\']) => {
                file.push(decoded);
            }
            _ => safe = false,
        }
    }
    match std::fs::read(&file) {
        Ok(bytes) if safe && file.is_file() => Response::new(Body::from(bytes)),
        _ => {
            let mut response = Response::new(Body::empty());
            *response.status_mut() = StatusCode::NOT_FOUND;
            response
        }
    }
}

/// Returns how many live records of `store` are at `high` or `critical` risk.
fn flagged_skills(store: &Store) -> usize {
    let mut flagged = 0;
    let mut after = 0;
    loop {
        let changes = store.blocking().changes_after(after, 1000).unwrap();
        let Some(last) = changes.last() else {
            return flagged;
        };
        after = last.seq;
        flagged += changes
            .iter()
            .filter(|record| {
                !record.is_tombstone() && record.skill.risk >= formats::audit::Risk::High
            })
            .count();
    }
}
