//! `skillscout serve` and `skillscout demo` end to end: the binary starts, says where it
//! listens, answers, crawls in the background when asked, and stops on SIGTERM.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::server::{TestServer, serve_file};
use crate::util::{KillOnDrop, repo_root};

/// A running `skillscout`, killed if the test fails before it stops.
pub(crate) struct Running {
    child: KillOnDrop,
    pub(crate) addr: SocketAddr,
    lines: Vec<String>,
}

impl Running {
    /// Starts `skillscout ARGS` and waits for its stdout line that starts with `prefix` and
    /// ends with the address (`… http://ADDR`).
    pub(crate) fn start(args: &[&str], prefix: &str) -> Running {
        Running::start_in(
            Path::new(env!("CARGO_BIN_EXE_skillscout")),
            &repo_root(),
            args,
            prefix,
        )
    }

    /// Starts the binary `program` with ARGS in the directory `dir`, as [`Running::start`].
    pub(crate) fn start_in(program: &Path, dir: &Path, args: &[&str], prefix: &str) -> Running {
        let child = KillOnDrop::spawn(
            Command::new(program)
                .args(args)
                .current_dir(dir)
                .env_remove("RUST_LOG")
                .stdout(Stdio::piped())
                .stderr(Stdio::null()),
        );
        // Owned by `Running` from here on, so that a failure below still ends the process.
        let mut running = Running {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            lines: Vec::new(),
        };
        let stdout = running.child.stdout.take().unwrap();
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = receiver
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no `{prefix}` line; got {:?}", running.lines));
            running.lines.push(line.clone());
            if let Some(rest) = line.strip_prefix(prefix) {
                running.addr = rest.trim().trim_start_matches("http://").parse().unwrap();
                return running;
            }
        }
    }

    /// Sends SIGTERM and returns the exit code.
    pub(crate) fn terminate(mut self) -> Option<i32> {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the server did not stop on SIGTERM");
    }
}

/// One HTTP/1.1 request; returns the status and the body.
pub(crate) fn http(addr: SocketAddr, path: &str, token: Option<&str>) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let auth = token.map_or(String::new(), |token| {
        format!("Authorization: Bearer {token}\r\n")
    });
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let split = response
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .map_or(response.len(), |at| at + 4);
    let head = String::from_utf8_lossy(&response[..split]).into_owned();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let chunked = head
        .lines()
        .any(|line| line.eq_ignore_ascii_case("transfer-encoding: chunked"));
    let body = if chunked {
        dechunk(&response[split..])
    } else {
        response[split..].to_vec()
    };
    (status, String::from_utf8_lossy(&body).into_owned())
}

/// The body of a chunked response (a streamed export), its chunk sizes taken out.
fn dechunk(mut rest: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let line_end = rest
            .windows(2)
            .position(|window| window == b"\r\n")
            .expect("a chunk size line");
        let size_line = String::from_utf8_lossy(&rest[..line_end]).into_owned();
        let size = usize::from_str_radix(size_line.split(';').next().unwrap().trim(), 16)
            .unwrap_or_else(|_| panic!("a chunk size: {size_line:?}"));
        if size == 0 {
            return body;
        }
        let data = &rest[line_end + 2..];
        body.extend_from_slice(&data[..size]);
        rest = data[size..]
            .strip_prefix(b"\r\n")
            .expect("a chunk ends with CRLF");
    }
}

pub(crate) fn json(body: &str) -> serde_json::Value {
    // Whole bodies (Content-Length), or streamed ones put together by `http`.
    serde_json::from_str(body).unwrap_or_else(|error| panic!("{error}: {body}"))
}

fn data_dir(label: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("serve-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn path_arg(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn seeds_domains_txt_parses_line_by_line() {
    let text = std::fs::read_to_string(repo_root().join("seeds/domains.txt")).unwrap();
    let mut count = 0;
    for (number, line) in text.lines().enumerate() {
        let seed = line.split('#').next().unwrap().trim();
        if seed.is_empty() {
            continue;
        }
        count += 1;
        if let Err(error) = formats::seeds::SeedTarget::parse(seed) {
            panic!("seeds/domains.txt line {}: {error}", number + 1);
        }
    }
    let (seeds, errors) = formats::seeds::parse_seeds(&text);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(seeds.len(), count);
    assert!(count >= 3, "a handful of real domains");
}

#[test]
fn serve_answers_with_tokens_and_stops_on_sigterm() {
    let data = data_dir("plain");
    let tokens = data.join("tokens.txt");
    std::fs::write(&tokens, "# operators\nsecret-one\n").unwrap();
    let server = Running::start(
        &[
            "serve",
            "--data",
            path_arg(&data),
            "--addr",
            "127.0.0.1:0",
            "--token-file",
            path_arg(&tokens),
        ],
        "listening on ",
    );
    let (status, body) = http(server.addr, "/healthz", None);
    assert_eq!(status, 200, "{body}");
    assert_eq!(json(&body)["status"], "ok");
    let (status, _) = http(server.addr, "/v1/search?q=pdf", Some("secret-one"));
    assert_eq!(status, 200);
    let (status, body) = http(server.addr, "/v1/search?q=pdf", Some("wrong"));
    assert_eq!(status, 401);
    assert_eq!(json(&body)["error"]["code"], "unauthorized");
    // A 100 KB query: longer than any URI the HTTP layer accepts, refused before routing.
    let (status, _) = http(
        server.addr,
        &format!("/v1/search?q={}", "a".repeat(100 * 1024)),
        None,
    );
    assert!((400..500).contains(&status), "{status}");
    let (status, body) = http(
        server.addr,
        &format!("/v1/search?q={}", "a".repeat(20 * 1024)),
        None,
    );
    assert_eq!(status, 400);
    assert_eq!(json(&body)["error"]["code"], "invalid_parameter");
    assert_eq!(server.terminate(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_crawls_in_the_background_and_searches_see_it() {
    let web = repo_root().join("seeds/web");
    let site = TestServer::start(move |request| serve_file(&web, request)).await;
    let port = site.addr.port();
    tokio::task::spawn_blocking(move || {
        let data = data_dir("crawl");
        let seeds = data.join("seeds.txt");
        std::fs::write(
            &seeds,
            "http://pdfworks.test\nhttp://legacy-tools.test\nhttp://services.test\nhttp://sloppy.test\n",
        )
        .unwrap();
        let resolve = format!("*.test=127.0.0.1:{port}");
        let server = Running::start(
            &[
                "serve",
                "--data",
                path_arg(&data),
                "--addr",
                "127.0.0.1:0",
                "--crawl",
                "--seeds",
                path_arg(&seeds),
                "--crawl-every",
                "6h",
                "--resolve",
                &resolve,
                "--host-delay-ms",
                "0",
                // The fixture web names other origins; only the four seeds are counted here.
                "--no-discover",
            ],
            "listening on ",
        );
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            // Batches are searchable as they are stored: wait for the one with pdfworks.test.
            let (status, body) = http(server.addr, "/v1/search?q=merge&domain=pdfworks.test", None);
            assert_eq!(status, 200);
            if json(&body)["total"].as_u64().unwrap_or(0) > 0 {
                assert!(body.contains("pdfworks.test/pdf-merge"), "{body}");
                break;
            }
            assert!(Instant::now() < deadline, "the background crawl never showed up in searches");
            std::thread::sleep(Duration::from_millis(100));
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        let domains = loop {
            let (_, body) = http(server.addr, "/v1/domains", None);
            let domains = json(&body);
            if domains["crawl"]["last"].is_object() {
                break domains;
            }
            assert!(Instant::now() < deadline, "the crawl never finished: {domains}");
            std::thread::sleep(Duration::from_millis(100));
        };
        assert_eq!(domains["crawl"]["enabled"], true);
        assert_eq!(domains["crawl"]["last"]["totals"]["domains"], 4);
        assert!(domains["crawl"]["next_crawl_at"].is_string(), "{domains}");
        assert_eq!(domains["domains"].as_array().unwrap().len(), 4);
        let (_, metrics) = http(server.addr, "/metrics", None);
        assert!(metrics.contains("skillscout_crawl_domains_total{outcome=\"ok\"} 4"), "{metrics}");
        assert_eq!(server.terminate(), Some(0));
    })
    .await
    .unwrap();
}

#[test]
fn demo_serves_the_fixture_web_offline() {
    let demo = Running::start(&["demo", "--addr", "127.0.0.1:0"], "open ");
    assert!(
        demo.lines[0].starts_with("crawled 4 demo sites: 12 skills"),
        "{:?}",
        demo.lines
    );
    let (status, body) = http(demo.addr, "/healthz", None);
    assert_eq!(status, 200, "{body}");
    let (_, body) = http(demo.addr, "/v1/search?q=pdf", None);
    assert!(json(&body)["total"].as_u64().unwrap() >= 3, "{body}");
    let (status, page) = http(demo.addr, "/", None);
    assert_eq!(status, 200);
    assert!(page.contains("pdfworks.test"), "{page}");
    assert_eq!(demo.terminate(), Some(0));
}

/// See: The front door and the operator's kit (installs and runs anywhere). The binary is
/// copied out of the build tree and started in an empty folder, as after `cargo install`:
/// the demo's fixture web is inside it, and its temporary data directory is removed after.
#[test]
fn demo_runs_from_an_installed_binary_in_any_directory() {
    let installed = tempfile::tempdir().unwrap();
    let binary = installed.path().join("skillscout");
    // A hard link where the file system allows it: the binary is large.
    if std::fs::hard_link(env!("CARGO_BIN_EXE_skillscout"), &binary).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_skillscout"), &binary).unwrap();
    }
    let elsewhere = tempfile::tempdir().unwrap();
    let demo = Running::start_in(
        &binary,
        elsewhere.path(),
        &["demo", "--addr", "127.0.0.1:0"],
        "open ",
    );
    assert!(
        demo.lines[0].starts_with("crawled 4 demo sites: 12 skills"),
        "{:?}",
        demo.lines
    );
    let (_, body) = http(demo.addr, "/v1/search?q=csv", None);
    assert!(json(&body)["total"].as_u64().unwrap() >= 1, "{body}");
    // A legacy skill's script came from the built-in web too.
    let (status, script) = http(
        demo.addr,
        "/v1/skills/legacy-tools.test/csv-cleanup/files/scripts/clean.py",
        None,
    );
    assert_eq!(status, 200, "{script}");
    assert_eq!(
        script,
        std::fs::read_to_string(
            repo_root().join(
                "seeds/web/legacy-tools.test/.well-known/skills/csv-cleanup/scripts/clean.py"
            )
        )
        .unwrap()
    );
    assert_eq!(demo.terminate(), Some(0));
    let left: Vec<_> = std::fs::read_dir(elsewhere.path()).unwrap().collect();
    assert!(
        left.is_empty(),
        "the demo left {left:?} in its working directory"
    );
}

/// See: The front door and the operator's kit (mistakes get answers that point at the fix).
/// A mistyped `--data` is not created and served as an empty directory.
#[test]
fn serve_refuses_a_data_directory_that_does_not_exist() {
    let dir = tempfile::tempdir().unwrap();
    let output = crate::util::skillscout(
        dir.path(),
        &["serve", "--data", "typo-dir", "--addr", "127.0.0.1:0"],
    );
    assert_eq!(output.status.code(), Some(1));
    let message = crate::util::stderr(&output);
    assert!(
        message
            .contains("the data directory typo-dir does not exist, so there is nothing to serve"),
        "{message}"
    );
    assert!(
        message.contains("skillscout --data typo-dir crawl"),
        "{message}"
    );
    assert!(message.contains("--crawl"), "{message}");
    assert!(!dir.path().join("typo-dir").exists(), "nothing is created");
}
