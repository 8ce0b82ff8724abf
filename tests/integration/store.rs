//! `--store postgres://…` end to end: a crawl of the fixture web into a PostgreSQL store gives
//! the same records as a crawl into the embedded store, `skillscout migrate` reports the schema
//! versions, and bad locations are clear errors. The server comes from
//! `SKILLSCOUT_TEST_POSTGRES` (`scripts/pg-throwaway.sh` starts one); without it the test says
//! it skips, and under CI it fails.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

use crate::server::{TestServer, serve_file};
use crate::util::{KillOnDrop, repo_root, skillscout, stderr, stdout};

const URL_VARIABLE: &str = "SKILLSCOUT_TEST_POSTGRES";

/// A schema of its own on the test server, dropped at the end.
pub(crate) struct TestSchema {
    server: String,
    pub(crate) url: String,
    name: String,
}

impl TestSchema {
    #[allow(clippy::print_stderr)]
    pub(crate) fn create() -> Option<TestSchema> {
        let Some(server) = std::env::var(URL_VARIABLE)
            .ok()
            .filter(|url| !url.is_empty())
        else {
            assert!(
                std::env::var_os("CI").is_none(),
                "{URL_VARIABLE} is unset: under CI the PostgreSQL tests run, they do not skip"
            );
            eprintln!(
                "skipping: {URL_VARIABLE} is unset (scripts/pg-throwaway.sh starts a server)"
            );
            return None;
        };
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "skillscout_cli_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        psql(
            &server,
            &format!("DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name}"),
        );
        let separator = if server.contains('?') { '&' } else { '?' };
        let url = format!("{server}{separator}options=-c%20search_path%3D{name}");
        Some(TestSchema { server, url, name })
    }
}

impl Drop for TestSchema {
    fn drop(&mut self) {
        psql(
            &self.server,
            &format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name),
        );
    }
}

/// Runs `sql` on the database at `url` with psql; returns its unaligned, untitled output.
pub(crate) fn psql(url: &str, sql: &str) -> String {
    let output = Command::new("psql")
        .args([
            url,
            "--quiet",
            "--no-psqlrc",
            "-tA",
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            sql,
        ])
        .output()
        .expect("psql runs");
    assert!(output.status.success(), "psql: {}", stderr(&output));
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

pub(crate) async fn run(dir: &Path, args: Vec<String>) -> std::process::Output {
    let dir = dir.to_owned();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        skillscout(&dir, &args)
    })
    .await
    .unwrap()
}

/// Crawls the fixture web (served on `port`) into `data`, with `store` when given, and returns
/// the JSONL export of every record, times left out, sorted by id.
async fn crawl_and_export(dir: &Path, data: &str, store: Option<&str>, port: u16) -> Vec<Value> {
    let mut global: Vec<String> = vec!["--data".into(), data.into()];
    if let Some(store) = store {
        global.extend(["--store".into(), store.into()]);
    }
    let resolve = format!("*.test=127.0.0.1:{port}");
    let mut crawl = global;
    crawl.extend(
        [
            "crawl",
            "--resolve",
            &resolve,
            "--host-delay-ms",
            "0",
            "--prefetch-files",
            "http://pdfworks.test",
            "http://legacy-tools.test",
            "http://services.test",
            "http://sloppy.test",
        ]
        .map(str::to_owned),
    );
    let output = run(dir, crawl).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    export_records(dir, data, store).await
}

/// Exports every record of `data` (with `store` when given) as JSONL and returns them, times
/// left out, sorted by id.
pub(crate) async fn export_records(dir: &Path, data: &str, store: Option<&str>) -> Vec<Value> {
    let mut global: Vec<String> = vec!["--data".into(), data.into()];
    if let Some(store) = store {
        global.extend(["--store".into(), store.into()]);
    }
    let out = format!("{data}-export");
    let mut export = global;
    export.extend(
        [
            "export",
            "--layout",
            "jsonl",
            "--verdict",
            "any",
            "--private",
            "--out",
            &out,
        ]
        .map(str::to_owned),
    );
    let output = run(dir, export).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = std::fs::read_to_string(dir.join(&out).join("skills.jsonl")).unwrap();
    let mut records: Vec<Value> = text
        .lines()
        .map(|line| {
            let mut record: Value = serde_json::from_str(line).unwrap();
            let object = record.as_object_mut().unwrap();
            for time in ["first_seen", "last_seen", "last_changed"] {
                object.remove(time);
            }
            record
        })
        .collect();
    records.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
    records
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_store_holds_the_same_records_as_the_embedded_one() {
    let Some(schema) = TestSchema::create() else {
        return;
    };
    let web = repo_root().join("seeds/web");
    let server = TestServer::start(move |request| serve_file(&web, request)).await;
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();

    let embedded = crawl_and_export(&dir, "embedded", None, server.port()).await;
    let shared = crawl_and_export(&dir, "shared", Some(&schema.url), server.port()).await;
    assert!(embedded.len() >= 10, "{}", embedded.len());
    assert_eq!(shared, embedded);
    // The shared store's data directory holds the index, not the crawl state.
    assert!(dir.join("shared/index").is_dir());
    assert!(!dir.join("shared/blobs").exists());

    // The crawl migrated the schema; `migrate` says there is nothing left to do.
    let output = skillscout(&dir, &["--store", &schema.url, "migrate"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output).trim(), "schema version 5 → 5");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn migrate_needs_a_postgres_store_and_bad_locations_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let output = skillscout(dir.path(), &["migrate"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("--store"), "{}", stderr(&output));

    let output = skillscout(
        dir.path(),
        &[
            "--store",
            "mysql://localhost/skills",
            "crawl",
            "http://a.test",
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("postgres://"),
        "{}",
        stderr(&output)
    );

    if let Some(schema) = TestSchema::create() {
        let output = skillscout(dir.path(), &["--store", &schema.url, "migrate"]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert_eq!(stdout(&output).trim(), "schema version 0 → 5");
    }
}

/// A `serve` process; killed (SIGKILL) when dropped.
struct Replica {
    /// Held for its guard: the process ends with the replica.
    _child: KillOnDrop,
    addr: String,
}

impl Replica {
    fn start(dir: &Path, data: &str, store: &str) -> Replica {
        Replica::syncing_every(dir, data, store, "1s")
    }

    fn syncing_every(dir: &Path, data: &str, store: &str, every: &str) -> Replica {
        use std::io::BufRead;
        let mut child = KillOnDrop::spawn(
            Command::new(env!("CARGO_BIN_EXE_skillscout"))
                .args([
                    "--data",
                    data,
                    "--store",
                    store,
                    "serve",
                    "--addr",
                    "127.0.0.1:0",
                ])
                .args(["--sync-every", every])
                .current_dir(dir)
                .env_remove("RUST_LOG")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null()),
        );
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .trim()
            .strip_prefix("listening on http://")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        Replica {
            _child: child,
            addr,
        }
    }

    /// GETs `path` and returns the body (HTTP/1.0, so the server closes the connection).
    fn get(&self, path: &str) -> String {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(&self.addr).unwrap();
        write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let (head, body) = response.split_once("\r\n\r\n").unwrap();
        assert!(
            head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200"),
            "{head}"
        );
        body.to_owned()
    }

    fn health(&self) -> Value {
        serde_json::from_str(&self.get("/healthz")).unwrap()
    }

    /// Waits until the index holds every change of the store up to at least `seq`; returns
    /// the index's change number.
    fn caught_up(&self, seq: u64) -> u64 {
        for _ in 0..300 {
            let health = self.health();
            let index = health["index_seq"].as_u64().unwrap();
            if index >= seq && health["sync_lag"] == 0 {
                return index;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!(
            "{} did not catch up with change {seq}: {}",
            self.addr,
            self.health()
        );
    }

    /// The search answer for `query`, every verdict, without its timing.
    fn search(&self, query: &str) -> Value {
        let mut body: Value =
            serde_json::from_str(&self.get(&format!("/v1/search?q={query}&verdict=any&limit=100")))
                .unwrap();
        body.as_object_mut().unwrap().remove("took_ms");
        body
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_follow_the_shared_store_and_a_killed_one_catches_up() {
    let Some(schema) = TestSchema::create() else {
        return;
    };
    let web = repo_root().join("seeds/web");
    let server = TestServer::start(move |request| serve_file(&web, request)).await;
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("replicas-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let url = schema.url.clone();
    let crawl = |sites: &[&str]| {
        let resolve = format!("*.test=127.0.0.1:{}", server.port());
        let mut args: Vec<String> = ["--data", "crawler", "--store", &url, "crawl"]
            .map(str::to_owned)
            .to_vec();
        args.extend(
            [
                "--resolve",
                &resolve,
                "--host-delay-ms",
                "0",
                "--prefetch-files",
            ]
            .map(str::to_owned),
        );
        args.extend(sites.iter().map(|site| (*site).to_owned()));
        run(&dir, args)
    };

    // The store exists (migrated) before the replicas start; they begin empty.
    let output = skillscout(&dir, &["--store", &url, "migrate"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let blocking_dir = dir.clone();
    let blocking_url = url.clone();
    let (one, two) = tokio::task::spawn_blocking(move || {
        (
            Replica::start(&blocking_dir, "one", &blocking_url),
            Replica::start(&blocking_dir, "two", &blocking_url),
        )
    })
    .await
    .unwrap();
    assert_eq!(one.health()["index_seq"], 0);

    // A crawl by a third process reaches both replicas' indexes.
    let output = crawl(&["http://pdfworks.test", "http://legacy-tools.test"]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let (one, two) = tokio::task::spawn_blocking(move || {
        let seq = one.caught_up(1);
        assert_eq!(two.caught_up(seq), seq);
        let found = one.search("pdf");
        assert!(found["total"].as_u64().unwrap() >= 3, "{found}");
        assert_eq!(two.search("pdf"), found);
        assert!(one.get("/metrics").contains("skillscout_index_sync_lag 0"));
        (one, two)
    })
    .await
    .unwrap();

    // Replica two is killed; a crawl goes on; two restarts on its own data and catches up.
    let before = two.health()["index_seq"].as_u64().unwrap();
    drop(two);
    let output = crawl(&["http://services.test", "http://sloppy.test"]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let restart_dir = dir.clone();
    let restart_url = url.clone();
    tokio::task::spawn_blocking(move || {
        let seq = one.caught_up(before + 1);
        let two = Replica::start(&restart_dir, "two", &restart_url);
        assert_eq!(two.caught_up(seq), seq);
        for query in ["invoice", "pdf", ""] {
            assert_eq!(two.search(query), one.search(query), "{query:?}");
        }
        assert!(one.search("invoice")["total"].as_u64().unwrap() >= 1);
    })
    .await
    .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

// Between two syncs, `/healthz` tells how far the index is behind the store: the lag grows as
// another process stores changes, before the replica's next sync takes them in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_reports_its_lag_between_syncs() {
    let Some(schema) = TestSchema::create() else {
        return;
    };
    let web = repo_root().join("seeds/web");
    let server = TestServer::start(move |request| serve_file(&web, request)).await;
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("lag-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let url = schema.url.clone();
    let output = skillscout(&dir, &["--store", &url, "migrate"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let (replica_dir, replica_url) = (dir.clone(), url.clone());
    // It syncs when it starts, then not for an hour.
    let replica = tokio::task::spawn_blocking(move || {
        Replica::syncing_every(&replica_dir, "replica", &replica_url, "1h")
    })
    .await
    .unwrap();
    assert_eq!(replica.health()["sync_lag"], 0);

    let resolve = format!("*.test=127.0.0.1:{}", server.port());
    let args = [
        "--data",
        "crawler",
        "--store",
        &url,
        "crawl",
        "--resolve",
        &resolve,
        "--host-delay-ms",
        "0",
        "http://pdfworks.test",
    ]
    .map(str::to_owned)
    .to_vec();
    let output = run(&dir, args).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    tokio::task::spawn_blocking(move || {
        for _ in 0..100 {
            let health = replica.health();
            if health["sync_lag"].as_u64().unwrap() > 0 {
                assert_eq!(health["index_seq"], 0, "{health}");
                assert_eq!(health["sync_lag"], health["store_seq"], "{health}");
                assert!(
                    replica
                        .get("/metrics")
                        .contains(&format!("skillscout_index_sync_lag {}", health["sync_lag"])),
                );
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("the lag never showed: {}", replica.health());
    })
    .await
    .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A TCP proxy on loopback to the throwaway cluster's unix socket, which a test can cut (every
/// connection closed, new ones refused) and restore: a PostgreSQL outage without stopping the
/// server the other tests share.
struct Cuttable {
    port: u16,
    up: std::sync::Arc<std::sync::atomic::AtomicBool>,
    cut: std::sync::Arc<tokio::sync::Notify>,
}

impl Cuttable {
    /// Starts a proxy to the cluster of `server_url` (its `host=` unix socket directory).
    async fn start(server_url: &str) -> Cuttable {
        let socket_dir = server_url
            .split("host=")
            .nth(1)
            .map(|rest| rest.split('&').next().unwrap_or(rest).to_owned())
            .expect("the test server is reached over a unix socket");
        let socket = std::path::PathBuf::from(socket_dir).join(".s.PGSQL.5432");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let up = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let cut = std::sync::Arc::new(tokio::sync::Notify::new());
        let (accepting, cutting) = (std::sync::Arc::clone(&up), std::sync::Arc::clone(&cut));
        tokio::spawn(async move {
            loop {
                let Ok((mut client, _)) = listener.accept().await else {
                    return;
                };
                if !accepting.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let socket = socket.clone();
                let cutting = std::sync::Arc::clone(&cutting);
                tokio::spawn(async move {
                    let Ok(mut server) = tokio::net::UnixStream::connect(&socket).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        () = cutting.notified() => {}
                    }
                });
            }
        });
        Cuttable { port, up, cut }
    }

    fn cut(&self) {
        self.up.store(false, Ordering::SeqCst);
        self.cut.notify_waiters();
    }

    fn restore(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

/// A replica whose store goes away says so on `/healthz` and `/metrics` within a moment, keeps
/// serving its index, and once the store is back syncs within about a second, not after a
/// long back-off.
// See: the frontier issue, "during an outage /healthz says ok with a stale store_seq; after
// it, backoffs of up to 32 s delay recovery by half a minute".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_says_when_its_store_is_down_and_recovers_at_once() {
    let Some(schema) = TestSchema::create() else {
        return;
    };
    let web = repo_root().join("seeds/web");
    let server = TestServer::start(move |request| serve_file(&web, request)).await;
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("outage-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let url = schema.url.clone();
    let output = skillscout(&dir, &["--store", &url, "migrate"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let proxy = Cuttable::start(&url).await;
    // The same database and schema, over the proxy.
    let options = url.split("options=").nth(1).unwrap().to_owned();
    let database = url
        .split('?')
        .next()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_owned();
    let proxied = format!(
        "postgres://postgres@127.0.0.1:{}/{database}?connect_timeout=2&options={options}",
        proxy.port
    );
    let (replica_dir, replica_url) = (dir.clone(), proxied.clone());
    let replica = tokio::task::spawn_blocking(move || {
        Replica::syncing_every(&replica_dir, "replica", &replica_url, "1s")
    })
    .await
    .unwrap();
    assert_eq!(replica.health()["status"], "ok");

    proxy.cut();
    let replica = tokio::task::spawn_blocking(move || {
        for _ in 0..100 {
            let health = replica.health();
            if health["status"] == "degraded" {
                assert_eq!(health["store"]["status"], "unavailable", "{health}");
                assert!(health["store"]["since"].is_string(), "{health}");
                assert!(replica.get("/metrics").contains("skillscout_store_up 0"));
                return replica;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("the outage never showed: {}", replica.health());
    })
    .await
    .unwrap();

    // The store changes meanwhile (a crawl straight to it); a few syncs fail.
    let resolve = format!("*.test=127.0.0.1:{}", server.port());
    let args = [
        "--data",
        "crawler",
        "--store",
        &url,
        "crawl",
        "--resolve",
        &resolve,
        "--host-delay-ms",
        "0",
        "http://pdfworks.test",
    ]
    .map(str::to_owned)
    .to_vec();
    let output = run(&dir, args).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    tokio::time::sleep(std::time::Duration::from_secs(6)).await;
    let seq: u64 = psql(&url, "SELECT last_seq FROM change_counter")
        .parse()
        .unwrap();
    assert!(seq > 0);

    proxy.restore();
    let restored = std::time::Instant::now();
    tokio::task::spawn_blocking(move || {
        let index = replica.caught_up(seq);
        assert_eq!(index, seq);
        let health = replica.health();
        assert_eq!(health["status"], "ok", "{health}");
        assert!(replica.get("/metrics").contains("skillscout_store_up 1"));
    })
    .await
    .unwrap();
    // Backed off to 8 s by now, the sync came with the first probe that got through.
    assert!(
        restored.elapsed() < std::time::Duration::from_secs(4),
        "recovered after {:?}",
        restored.elapsed()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A throwaway cluster of its own that accepts TCP connections on 127.0.0.1 only over TLS
/// (`scripts/pg-throwaway.sh` with `PG_TLS_PORT`), stopped when dropped.
struct TlsCluster {
    dir: String,
    port: u16,
}

impl TlsCluster {
    fn start() -> TlsCluster {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let tls = repo_root().join("crawler/tests/fixtures/tls");
        let output = Command::new(repo_root().join("scripts/pg-throwaway.sh"))
            .arg("start")
            .env("PG_TLS_PORT", port.to_string())
            .env("PG_TLS_CERT", tls.join("server.pem"))
            .env("PG_TLS_KEY", tls.join("server.key"))
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        let exports = stdout(&output);
        let dir = exports
            .lines()
            .find_map(|line| line.strip_prefix("export SKILLSCOUT_TEST_POSTGRES_DIR='"))
            .and_then(|rest| rest.strip_suffix('\''))
            .unwrap_or_else(|| panic!("no cluster folder in {exports}"))
            .to_owned();
        TlsCluster { dir, port }
    }

    /// The store URL of the cluster over TCP: the certificate's name (`secure.test`), the
    /// loopback address, and `extra` parameters.
    fn url(&self, extra: &str) -> String {
        format!(
            "postgres://postgres@secure.test:{}/skillscout_test?hostaddr=127.0.0.1{extra}",
            self.port
        )
    }
}

impl Drop for TlsCluster {
    fn drop(&mut self) {
        let _ = Command::new(repo_root().join("scripts/pg-throwaway.sh"))
            .args(["stop", &self.dir])
            .output();
    }
}

// `sslmode=require` connects over TLS and checks the server's certificate against
// `sslrootcert` (or the system's roots); without it, a connection is made in the clear, which
// this server refuses.
#[test]
fn the_store_can_be_reached_over_tls() {
    // Only where the PostgreSQL tests run (the server's programs are there).
    let Some(_schema) = TestSchema::create() else {
        return;
    };
    let cluster = TlsCluster::start();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let ca = repo_root().join("crawler/tests/fixtures/tls/ca.pem");
    let trusted = cluster.url(&format!("&sslmode=require&sslrootcert={}", ca.display()));
    let output = skillscout(&dir, &["--store", &trusted, "migrate"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));

    let untrusted = cluster.url("&sslmode=require");
    let output = skillscout(&dir, &["--store", &untrusted, "migrate"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("certificate"),
        "{}",
        stderr(&output)
    );

    let clear = cluster.url("");
    let output = skillscout(&dir, &["--store", &clear, "migrate"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("no encryption"),
        "{}",
        stderr(&output)
    );

    let misplaced = cluster.url(&format!("&sslrootcert={}", ca.display()));
    let output = skillscout(&dir, &["--store", &misplaced, "migrate"]);
    assert_ne!(output.status.code(), Some(0));
    assert!(
        stderr(&output).contains("sslmode=require"),
        "{}",
        stderr(&output)
    );
}
