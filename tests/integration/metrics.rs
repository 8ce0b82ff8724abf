//! `crawl --metrics-addr`: a crawl worker that does not serve the directory still shows its
//! crawl and its process in the Prometheus text format, under the names `serve` uses.
//! See: The front door and the operator's kit.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::serve::http;
use crate::server::{TestServer, serve_file};
use crate::util::KillOnDrop;

/// Writes one site publishing a legacy index of one skill.
fn write_site(root: &std::path::Path) {
    let skills = root.join("metrics.test/.well-known/skills");
    std::fs::create_dir_all(skills.join("probe-tool")).unwrap();
    std::fs::write(
        skills.join("probe-tool/SKILL.md"),
        "---\nname: probe-tool\ndescription: Probes things for the metrics test.\n---\n# Probe\n\nProbe.\n",
    )
    .unwrap();
    std::fs::write(
        skills.join("index.json"),
        r#"{"skills": [{"name": "probe-tool", "description": "Probes things for the metrics test.", "files": ["SKILL.md"]}]}"#,
    )
    .unwrap();
}

/// The value of the sample `name` (with its labels) in an exposition text.
fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|value| value.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_worker_serves_its_metrics() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("metrics-worker-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let web = dir.join("web");
    write_site(&web);
    let server = TestServer::start(move |request| serve_file(&web, request)).await;
    let resolve = format!("*.test=127.0.0.1:{}", server.port());
    let data = dir.join("data");
    let mut child = KillOnDrop::spawn(
        Command::new(env!("CARGO_BIN_EXE_skillscout"))
            .args([
                "--data",
                data.to_str().unwrap(),
                "crawl",
                "http://metrics.test",
                "--resolve",
                &resolve,
                "--crawl-every",
                "1h",
                "--metrics-addr",
                "127.0.0.1:0",
                "--no-progress",
            ])
            .env_remove("RUST_LOG")
            .env_remove("SKILLSCOUT_LOG_FORMAT")
            .stdout(Stdio::null())
            .stderr(Stdio::piped()),
    );
    let stderr = child.stderr.take().unwrap();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    let result = tokio::task::spawn_blocking(move || {
        let addr: SocketAddr = loop {
            let line = receiver
                .recv_timeout(Duration::from_secs(60))
                .expect("a `serving metrics on` line");
            if let Some((_, rest)) = line.split_once("serving metrics on http://") {
                break rest.trim().trim_end_matches("/metrics").parse().unwrap();
            }
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        let text = loop {
            let (status, text) = http(addr, "/metrics", None);
            assert_eq!(status, 200, "{text}");
            if sample(&text, "skillscout_crawl_domains_total{outcome=\"ok\"}") == Some(1.0) {
                break text;
            }
            assert!(Instant::now() < deadline, "the crawl never showed:\n{text}");
            std::thread::sleep(Duration::from_millis(100));
        };
        assert_eq!(
            sample(&text, "skillscout_crawl_runs_total"),
            Some(1.0),
            "{text}"
        );
        assert!(
            sample(&text, "skillscout_crawl_requests_total").is_some_and(|n| n >= 2.0),
            "{text}"
        );
        assert_eq!(
            sample(&text, "skillscout_crawl_errors_total"),
            Some(0.0),
            "{text}"
        );
        assert!(
            sample(&text, "skillscout_uptime_seconds").is_some(),
            "{text}"
        );
        assert!(
            text.contains("# TYPE skillscout_crawl_domains_total counter"),
            "{text}"
        );
        if cfg!(target_os = "linux") {
            assert!(
                sample(&text, "process_resident_memory_bytes").is_some_and(|n| n > 1e6),
                "{text}"
            );
            assert!(
                sample(&text, "process_open_fds").is_some_and(|n| n > 0.0),
                "{text}"
            );
            assert!(
                sample(&text, "process_cpu_seconds_total").is_some(),
                "{text}"
            );
        }
        // Only /metrics is served: nothing of the directory.
        assert_eq!(http(addr, "/v1/search?q=probe", None).0, 404);
        addr
    })
    .await;
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let status = child.wait().unwrap();
    result.unwrap();
    assert_eq!(
        status.code(),
        Some(0),
        "a worker stopped by SIGTERM exits 0"
    );
}
