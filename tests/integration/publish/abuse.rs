//! IndexNow abuse, end to end (issue #32): key files that redirect on their own host, and a
//! flood of thousands of pings for one host. The budgets answer 429 with `Retry-After`, and
//! the publisher's server, which counts every request it gets, is asked no more than the
//! directory's politeness allows: its key file once, its requests spaced by the host delay,
//! a crawl only for a ping the budgets let through.
//!
//! See: issue #32 (publishers in the loop), "each abuse case tested".

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::{KEY, ping_path, request, request_with, search_until, serve_over, total, write_site};
use crate::serve::{Running, json};
use crate::server::{Hit, Reply, TestServer, serve_file};

/// A key whose file redirects to a file holding another key.
const STALE_KEY: &str = "stale-key-0001";
/// A key whose file redirects back and forth on its host.
const LOOP_KEY: &str = "loop-key-0001";

fn key_reads(server: &TestServer, host: &str, path: &str) -> usize {
    server
        .hits_for(host)
        .iter()
        .filter(|hit| hit.path == path)
        .count()
}

/// IndexNow asks for a key file on the ping's host (`keyLocation` elsewhere is a 422) and
/// says nothing of redirects. Whoever answers for the key file's URL chose where a redirect
/// on the same host leads, so the directory follows it and reads the file there; the key
/// still covers only the folder of the location the ping named, not the one the redirect
/// leads to. A loop is not a key file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_file_redirected_on_its_host_is_followed_for_the_folder_the_ping_names() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("key-redirect-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let web = dir.join("web");
    write_site(&web, "hop.test", "relay-plan", "Plans relays.");
    let keys = web.join("hop.test/keys");
    std::fs::create_dir_all(&keys).unwrap();
    std::fs::write(keys.join("current.txt"), KEY).unwrap();
    std::fs::write(keys.join("old.txt"), "some-other-key-0001").unwrap();
    let files = web.clone();
    let server = TestServer::start(move |request| {
        if request.host == "hop.test" {
            let to = match request.path.as_str() {
                path if path == format!("/{KEY}.txt") => Some("/keys/current.txt".to_owned()),
                // Two hops: the folder's key file leads to the root's, which moved.
                path if path == format!("/docs/{KEY}.txt") => Some(format!("/{KEY}.txt")),
                path if path == format!("/{STALE_KEY}.txt") => Some("/keys/old.txt".to_owned()),
                path if path == format!("/{LOOP_KEY}.txt") => Some(format!("/b/{LOOP_KEY}.txt")),
                path if path == format!("/b/{LOOP_KEY}.txt") => Some(format!("/{LOOP_KEY}.txt")),
                _ => None,
            };
            if let Some(to) = to {
                return Reply::redirect(&format!("http://hop.test{to}"));
            }
        }
        serve_file(&files, request)
    })
    .await;
    let running = serve_over(&dir, "http://hop.test\n", server.port(), &[]);
    let addr = running.addr;
    let skills = "http://hop.test/.well-known/skills/index.json";

    // The root key file moved on its host: followed, the key verified, the site due.
    let (status, _, body) = request(addr, "GET", &ping_path(skills, KEY), None);
    assert_eq!(status, 200, "{body}");
    assert_eq!(json(&body)["domains"][0]["domain"], "hop.test", "{body}");
    assert_eq!(key_reads(&server, "hop.test", &format!("/{KEY}.txt")), 1);
    assert_eq!(key_reads(&server, "hop.test", "/keys/current.txt"), 1);
    // Remembered as verified for its location: no second read.
    let (status, _, body) = request(addr, "GET", &ping_path(skills, KEY), None);
    assert_eq!(status, 200, "{body}");
    assert_eq!(key_reads(&server, "hop.test", "/keys/current.txt"), 1);

    // A key file in /docs/ covers /docs/, wherever it redirects: a skills URL outside it is
    // refused before anything is read; a URL inside it passes once the redirects, two hops
    // to the root's file, lead to the key.
    let ping = |location: &str, url: &str| {
        serde_json::json!({"host": "hop.test", "key": KEY, "keyLocation": location,
            "urlList": [url]})
        .to_string()
    };
    let in_docs = format!("http://hop.test/docs/{KEY}.txt");
    let (status, _, body) = request(addr, "POST", "/indexnow", Some(&ping(&in_docs, skills)));
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        key_reads(&server, "hop.test", &format!("/docs/{KEY}.txt")),
        0
    );
    let (status, _, body) = request(
        addr,
        "POST",
        "/indexnow",
        Some(&ping(&in_docs, "http://hop.test/docs/notes.html")),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(json(&body)["domains"], serde_json::json!([]), "{body}");
    assert_eq!(
        key_reads(&server, "hop.test", &format!("/docs/{KEY}.txt")),
        1
    );

    // A redirect to a file that holds another key, and a loop: refused, and the loop is read
    // a bounded number of times.
    let (status, _, body) = request(addr, "GET", &ping_path(skills, STALE_KEY), None);
    assert_eq!(status, 403, "{body}");
    let (status, _, body) = request(addr, "GET", &ping_path(skills, LOOP_KEY), None);
    assert_eq!(status, 403, "{body}");
    let loop_reads = server
        .hits_for("hop.test")
        .iter()
        .filter(|hit| hit.path.ends_with(&format!("{LOOP_KEY}.txt")))
        .count();
    assert!((2..=12).contains(&loop_reads), "{loop_reads}");

    drop(running);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The delay between two requests to one host, in this test.
const HOST_DELAY: Duration = Duration::from_millis(200);
/// The pings one host may be named in at once (`BudgetConfig::host_pings_per_minute`), and
/// how often one more is let through after them.
const HOST_BURST: u64 = 10;
const HOST_REFILL: Duration = Duration::from_secs(6);
/// The pings one client may send at once (`serve --ping-budget`), and how often one more is
/// let through after them.
const CLIENT_BURST: u64 = 120;
const CLIENT_REFILL: Duration = Duration::from_millis(500);

/// The most a budget of `burst`, refilled one every `refill`, lets through in `elapsed`.
fn at_most(burst: u64, refill: Duration, elapsed: Duration) -> u64 {
    burst + (elapsed.as_millis() / refill.as_millis()) as u64 + 1
}

/// What a flood of pings came to.
#[derive(Debug, Default)]
struct Flood {
    /// Answered 200 or 202: let through by every budget.
    passed: u64,
    /// Refused by the client's budget.
    client_refused: u64,
    /// Refused by the host's budget.
    host_refused: u64,
    /// Anything else (status and body), which there must not be.
    unexpected: Vec<String>,
}

/// Sends `count` pings for `pub.test`, `workers` at a time, each from the client
/// `from(n)` names (through the trusted proxy's `X-Forwarded-For`), or from the connection's
/// address.
fn flood(
    addr: SocketAddr,
    count: usize,
    workers: usize,
    from: impl Fn(usize) -> Option<String> + Sync,
) -> Flood {
    let path = ping_path("http://pub.test/.well-known/skills/index.json", KEY);
    let next = AtomicUsize::new(0);
    let answers = std::sync::Mutex::new(Vec::with_capacity(count));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    if n >= count {
                        break;
                    }
                    let headers: Vec<String> = from(n)
                        .map(|client| format!("X-Forwarded-For: {client}"))
                        .into_iter()
                        .collect();
                    let answer = request_with(addr, "GET", &path, None, &headers);
                    answers.lock().unwrap().push(answer);
                }
            });
        }
    });
    let mut flood = Flood::default();
    for (status, head, body) in answers.into_inner().unwrap() {
        let retry_after = head
            .lines()
            .find_map(|line| line.strip_prefix("retry-after: "))
            .and_then(|value| value.trim().parse::<u64>().ok());
        match status {
            200 | 202 => flood.passed += 1,
            429 if retry_after.is_some_and(|seconds| seconds >= 1)
                && body.contains("too_many_requests") =>
            {
                if body.contains("your address's IndexNow budget") {
                    flood.client_refused += 1;
                } else if body.contains("this host's IndexNow budget") {
                    flood.host_refused += 1;
                } else {
                    flood.unexpected.push(format!("{status} {body}"));
                }
            }
            _ => flood.unexpected.push(format!("{status} {head} {body}")),
        }
    }
    flood
}

/// Waits for the background crawl to be idle twice in a row (a ping let through makes the
/// host due; its crawl may start a moment later), for at most `within`.
fn wait_until_idle(addr: SocketAddr, within: Duration) {
    let started = Instant::now();
    let mut idle = 0;
    while idle < 2 && started.elapsed() < within {
        let (_, _, body) = request(addr, "GET", "/v1/domains", None);
        let running = json(&body)["crawl"]["running"].as_bool().unwrap_or(true);
        idle = if running { 0 } else { idle + 1 };
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Asserts that the host's requests were one at a time, each at least the host delay after
/// the server began to answer the one before (no client can have had that answer sooner).
fn assert_spaced(hits: &[Hit]) {
    let mut hits = hits.to_vec();
    hits.sort_by_key(|hit| hit.started);
    for pair in hits.windows(2) {
        let gap = pair[1].started.saturating_duration_since(pair[0].replied);
        assert!(
            gap >= HOST_DELAY,
            "{} came {gap:?} after {} was answered",
            pair[1].path,
            pair[0].path
        );
    }
}

/// Thousands of pings for one host over loopback, from one client and then from a thousand
/// (behind a trusted proxy): past their bursts, the client's and the host's budgets refuse
/// with 429 and `Retry-After`; the host's key file is read once, and the host gets requests
/// only one at a time, spaced, and a crawl only for a ping that was let through. Bounds are
/// counted from the time the flood took, so a slow machine loosens them rather than failing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ping_flood_is_held_to_the_budgets_and_the_host_to_its_politeness() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("ping-flood-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let web = dir.join("web");
    write_site(
        &web,
        "pub.test",
        "ledger-sync",
        "Reconciles ledgers nightly.",
    );
    std::fs::write(web.join("pub.test").join(format!("{KEY}.txt")), KEY).unwrap();
    let server = Arc::new(TestServer::static_tree(web).await);
    let seeds = dir.join("seeds.txt");
    std::fs::write(&seeds, "http://pub.test\n").unwrap();
    let data = dir.join("data");
    let resolve = format!("*.test=127.0.0.1:{}", server.port());
    let host_delay = HOST_DELAY.as_millis().to_string();
    let client_burst = CLIENT_BURST.to_string();
    let running = Running::start(
        &[
            "--data",
            data.to_str().unwrap(),
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--crawl",
            "--seeds",
            seeds.to_str().unwrap(),
            "--crawl-every",
            "1h",
            "--resolve",
            &resolve,
            "--host-delay-ms",
            &host_delay,
            "--ping-budget",
            &client_burst,
            // The publishers' budgets alone: the request rate limit would refuse the flood
            // first.
            "--rate-limit",
            "off",
            "--trusted-proxy",
            "127.0.0.1",
        ],
        "listening on",
    );
    let addr = running.addr;
    let found = tokio::task::spawn_blocking(move || {
        search_until(addr, "ledger", Duration::from_secs(60), |answer| {
            total(answer) == 1
        })
    })
    .await
    .unwrap();
    assert!(found.is_some(), "the seed was never crawled");
    tokio::task::spawn_blocking(move || wait_until_idle(addr, Duration::from_secs(30)))
        .await
        .unwrap();
    server.clear_hits();

    // One client: 3,000 pings, 16 at a time (under the server's work limit, so that none is
    // shed with a 503).
    let started = Instant::now();
    let from_one = tokio::task::spawn_blocking(move || flood(addr, 3000, 16, |_| None))
        .await
        .unwrap();
    let one_client = started.elapsed();
    assert!(from_one.unexpected.is_empty(), "{:?}", from_one.unexpected);
    // The client's budget let through at most its burst and what refilled; the host's held
    // what passed the client's to its own.
    let past_client = from_one.passed + from_one.host_refused;
    assert!(
        past_client <= at_most(CLIENT_BURST, CLIENT_REFILL, one_client),
        "{from_one:?} in {one_client:?}"
    );
    assert!(
        from_one.client_refused >= 3000 - past_client,
        "{from_one:?}"
    );
    assert!(from_one.host_refused > 0, "{from_one:?}");
    assert!(
        (1..=at_most(HOST_BURST, HOST_REFILL, one_client)).contains(&from_one.passed),
        "{from_one:?} in {one_client:?}"
    );

    // A thousand clients naming the same host: its budget holds whoever sends.
    let from_many = tokio::task::spawn_blocking(move || {
        flood(addr, 1000, 16, |n| {
            Some(format!("10.{}.{}.1", n / 250, n % 250))
        })
    })
    .await
    .unwrap();
    let both = started.elapsed();
    assert!(
        from_many.unexpected.is_empty(),
        "{:?}",
        from_many.unexpected
    );
    let passed = from_one.passed + from_many.passed;
    assert!(
        passed <= at_most(HOST_BURST, HOST_REFILL, both),
        "{from_one:?} {from_many:?} in {both:?}"
    );
    assert!(from_many.host_refused >= 1000 - from_many.passed - from_many.client_refused);

    // The host's side: its key file read once, every request spaced, and a crawl (a read of
    // its index) only for a ping that was let through, plus one running when they came.
    tokio::task::spawn_blocking(move || wait_until_idle(addr, Duration::from_secs(60)))
        .await
        .unwrap();
    let hits = server.hits_for("pub.test");
    let key_reads = hits
        .iter()
        .filter(|hit| hit.path == format!("/{KEY}.txt"))
        .count();
    assert_eq!(key_reads, 1, "{hits:#?}");
    assert_spaced(&hits);
    let crawls = hits
        .iter()
        .filter(|hit| hit.path == "/.well-known/skills/index.json")
        .count() as u64;
    assert!(
        crawls <= passed + 1,
        "{crawls} crawls for {passed} pings let through"
    );

    drop(running);
    let _ = std::fs::remove_dir_all(&dir);
}
