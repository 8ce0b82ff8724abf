//! Publishers in the loop, end to end: `serve --crawl` over a loopback web, where a publisher
//! changes a SKILL.md that the directory holds fresh in its HTTP cache, pings over IndexNow
//! and finds the change searchable within seconds; every answer of the IndexNow table and of
//! the recrawl endpoint, and the abuse cases (key files that are HTML, huge, elsewhere or
//! missing, keys of the wrong form, other hosts' URLs, 10,001 URLs, private addresses, a ping
//! flood, unknown domains); `abuse` has key files redirected on their host and a flood of
//! thousands of pings. See: Publishers in the loop.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::serve::{Running, json};
use crate::server::{Reply, TestServer, serve_file};

mod abuse;

/// The key `pub.test` and `new.test` publish.
const KEY: &str = "a1b2c3d4-e5f6-0718-293a-4b5c6d7e8f90";

/// One request; returns the status, the head and the body.
pub(crate) fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> (u16, String, String) {
    request_with(addr, method, path, body, &[])
}

/// One request with more header lines (`Name: value`); returns the status, the head (its
/// field names lowercase, as the server sends them) and the body.
fn request_with(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&str>,
    headers: &[String],
) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let body = body.unwrap_or("");
    let mut extra = String::new();
    for header in headers {
        extra.push_str(header);
        extra.push_str("\r\n");
    }
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json; charset=utf-8\r\n\
         {extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let text = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    (status, head.to_owned(), body.to_owned())
}

fn skill_md(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n\n{description}\n")
}

/// Writes a site publishing one skill under the legacy well-known path.
pub(crate) fn write_site(web: &Path, host: &str, name: &str, description: &str) {
    let skills = web.join(host).join(".well-known/skills");
    std::fs::create_dir_all(skills.join(name)).unwrap();
    std::fs::write(
        skills.join(name).join("SKILL.md"),
        skill_md(name, description),
    )
    .unwrap();
    let index = serde_json::json!({"skills": [{"name": name, "description": description, "files": ["SKILL.md"]}]});
    std::fs::write(skills.join("index.json"), index.to_string()).unwrap();
}

/// Writes the loopback web: `pub.test` (seeded, with its key file), `new.test` (not seeded,
/// with its key file), and hosts whose key files are wrong: HTML, huge, a redirect to another
/// host.
fn write_web(web: &Path) {
    write_site(
        web,
        "pub.test",
        "ledger-sync",
        "Reconciles ledgers nightly.",
    );
    std::fs::write(
        web.join("pub.test").join(format!("{KEY}.txt")),
        format!("{KEY}\n"),
    )
    .unwrap();
    write_site(web, "new.test", "orchard-map", "Maps apple orchards.");
    std::fs::write(web.join("new.test").join(format!("{KEY}.txt")), KEY).unwrap();
    for host in ["html.test", "huge.test", "moved.test"] {
        write_site(web, host, "filler", "Fills.");
    }
    std::fs::write(
        web.join("html.test").join(format!("{KEY}.txt")),
        format!("<html><body>{KEY}</body></html>"),
    )
    .unwrap();
    std::fs::write(
        web.join("huge.test").join(format!("{KEY}.txt")),
        format!("{KEY}{}", " ".repeat(4096)),
    )
    .unwrap();
}

/// Every found file is fresh for an hour, with an entity tag (what makes a directory's copy
/// stale until a ping says otherwise); `moved.test`'s key file redirects to another host.
pub(crate) async fn start_web(web: PathBuf) -> TestServer {
    TestServer::start(move |request| {
        if request.host == "moved.test" && request.path == format!("/{KEY}.txt") {
            return Reply::redirect(&format!("http://pub.test/{KEY}.txt"));
        }
        let reply = serve_file(&web, request);
        let Reply::Full {
            status: 200,
            body,
            headers,
        } = reply
        else {
            return reply;
        };
        let etag = format!(
            "\"{}\"",
            body.len() ^ body.iter().map(|b| *b as usize).sum::<usize>()
        );
        if request.headers.get("if-none-match") == Some(&etag) {
            return Reply::status(304)
                .header("ETag", &etag)
                .header("Cache-Control", "max-age=3600");
        }
        Reply::Full {
            status: 200,
            body,
            headers,
        }
        .header("ETag", &etag)
        .header("Cache-Control", "max-age=3600")
    })
    .await
}

/// Polls a search until `matches` holds of its hits, or `within` passes.
pub(crate) fn search_until(
    addr: SocketAddr,
    query: &str,
    within: Duration,
    matches: impl Fn(&serde_json::Value) -> bool,
) -> Option<Duration> {
    let started = Instant::now();
    while started.elapsed() < within {
        let (status, _, body) = request(addr, "GET", &format!("/v1/search?q={query}"), None);
        if status == 200 && matches(&json(&body)) {
            return Some(started.elapsed());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

pub(crate) fn total(answer: &serde_json::Value) -> u64 {
    answer["total"].as_u64().unwrap_or(0)
}

fn ping_path(url: &str, key: &str) -> String {
    format!("/indexnow?url={url}&key={key}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ping_makes_a_change_searchable_and_bad_pings_get_the_protocol_answers() {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("publish-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let web = dir.join("web");
    write_web(&web);
    let seeds = dir.join("seeds.txt");
    std::fs::write(&seeds, "http://pub.test\n").unwrap();
    let server = Arc::new(start_web(web.clone()).await);
    let resolve = format!("*.test=127.0.0.1:{}", server.port());
    let data = dir.join("data");
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
            "0",
        ],
        "listening on",
    );
    let addr = running.addr;
    let found = tokio::task::spawn_blocking(move || {
        search_until(addr, "ledger", Duration::from_secs(30), |answer| {
            total(answer) == 1
        })
    })
    .await
    .unwrap();
    assert!(found.is_some(), "the seed was never crawled");

    // The publisher changes its skill; the directory's copies are fresh for an hour, so
    // nothing changes until the publisher says so.
    write_site(
        &web,
        "pub.test",
        "ledger-sync",
        "Reconciles ledgers with zebrafish precision.",
    );
    std::thread::sleep(Duration::from_millis(1500));
    let (_, _, body) = request(addr, "GET", "/v1/search?q=zebrafish", None);
    assert_eq!(total(&json(&body)), 0);

    // A ping for the changed SKILL.md: 200, the domain due, the change searchable.
    let (status, _, body) = request(
        addr,
        "GET",
        &ping_path(
            "http://pub.test/.well-known/skills/ledger-sync/SKILL.md",
            KEY,
        ),
        None,
    );
    assert_eq!(status, 200, "{body}");
    let answer = json(&body);
    assert_eq!(answer["status"], "accepted");
    assert_eq!(answer["domains"][0]["domain"], "pub.test");
    assert_eq!(answer["domains"][0]["state"], "due");
    let took = tokio::task::spawn_blocking(move || {
        search_until(addr, "zebrafish", Duration::from_secs(10), |answer| {
            total(answer) == 1
        })
    })
    .await
    .unwrap();
    assert!(took.is_some(), "the change never became searchable");
    // Only what the ping named is asked for again, conditionally; the index, still fresh by
    // its Cache-Control and not named, is used as it is.
    let hits_of = |path: &str| -> Vec<_> {
        server
            .hits_for("pub.test")
            .into_iter()
            .filter(|hit| hit.path == path)
            .collect()
    };
    assert_eq!(hits_of("/.well-known/skills/index.json").len(), 1);
    let skill_hits = hits_of("/.well-known/skills/ledger-sync/SKILL.md");
    assert_eq!(skill_hits.len(), 2);
    assert!(skill_hits[1].headers.contains_key("if-none-match"));

    // The protocol's table, case by case.
    let post = |body: &str| request(addr, "POST", "/indexnow", Some(body));
    let url = "http://pub.test/.well-known/skills/index.json";
    // 400: no key, no URL, not a URL, not JSON, 10,001 URLs.
    assert_eq!(
        request(addr, "GET", &format!("/indexnow?url={url}"), None).0,
        400
    );
    assert_eq!(
        request(addr, "GET", &format!("/indexnow?key={KEY}"), None).0,
        400
    );
    assert_eq!(
        request(addr, "GET", &ping_path("not-a-url", KEY), None).0,
        400
    );
    assert_eq!(post("{not json").0, 400);
    let many: Vec<String> = (0..10_001)
        .map(|n| format!("http://pub.test/p{n}"))
        .collect();
    let body = serde_json::json!({"host": "pub.test", "key": KEY, "urlList": many}).to_string();
    assert_eq!(post(&body).0, 400);
    // 422: keys of the wrong length or alphabet, another host's URL, a key file elsewhere.
    for key in [
        "short",
        &"k".repeat(129),
        "has_underscore1",
        "spaces%20here1",
    ] {
        let (status, _, body) = request(addr, "GET", &ping_path(url, key), None);
        assert_eq!(status, 422, "{key}: {body}");
    }
    let mixed = serde_json::json!({"host": "pub.test", "key": KEY,
        "urlList": [url, "http://other.test/.well-known/skills/index.json"]});
    assert_eq!(post(&mixed.to_string()).0, 422);
    let elsewhere = serde_json::json!({"host": "pub.test", "key": KEY,
        "keyLocation": format!("http://other.test/{KEY}.txt"), "urlList": [url]});
    assert_eq!(post(&elsewhere.to_string()).0, 422);
    // 403: a key the host does not publish, key files that are HTML, huge or moved to
    // another host, and a host at a private address (the fetch layer's guard refuses it).
    let wrong = "0000aaaa-1111-bbbb";
    assert_eq!(request(addr, "GET", &ping_path(url, wrong), None).0, 403);
    for host in ["html.test", "huge.test", "moved.test"] {
        let target = format!("http://{host}/.well-known/skills/index.json");
        let (status, _, body) = request(addr, "GET", &ping_path(&target, KEY), None);
        assert_eq!(status, 403, "{host}: {body}");
    }
    let private = format!("http://127.0.0.1:{}/", server.port());
    assert_eq!(request(addr, "GET", &ping_path(&private, KEY), None).0, 403);
    assert!(server.hits().iter().all(|hit| hit.host != "127.0.0.1"));
    // A refused key is remembered: pinging again reads no file.
    let key_reads = |host: &str, key: &str| {
        server
            .hits_for(host)
            .iter()
            .filter(|hit| hit.path == format!("/{key}.txt"))
            .count()
    };
    let before = key_reads("pub.test", wrong);
    for _ in 0..3 {
        assert_eq!(request(addr, "GET", &ping_path(url, wrong), None).0, 403);
    }
    assert_eq!(key_reads("pub.test", wrong), before);

    // A host the frontier does not hold, pinged with its verified key: added as submitted,
    // crawled, searchable. A ping naming no skills path adds nothing.
    let (status, _, body) = request(
        addr,
        "POST",
        "/indexnow",
        Some(
            &serde_json::json!({"host": "new.test", "key": KEY,
                "urlList": ["http://new.test/blog/post.html"]})
            .to_string(),
        ),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(json(&body)["domains"], serde_json::json!([]));
    let (status, _, body) = request(
        addr,
        "POST",
        "/indexnow",
        Some(
            &serde_json::json!({"host": "new.test", "key": KEY,
                "urlList": ["http://new.test/", "http://new.test/.well-known/skills/index.json"]})
            .to_string(),
        ),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(json(&body)["domains"][0]["added"], true);
    let took = tokio::task::spawn_blocking(move || {
        search_until(addr, "orchards", Duration::from_secs(10), |answer| {
            total(answer) == 1
        })
    })
    .await
    .unwrap();
    assert!(took.is_some(), "the pinged new host was never crawled");
    // A crawl someone asked for stores each skill as it is read: the domain's status lands
    // when its crawl ends, a moment later.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let body = loop {
        let (status, _, body) = request(addr, "GET", "/v1/domains/new.test", None);
        if status == 200 || std::time::Instant::now() > deadline {
            break body;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(json(&body)["state"], "submitted", "{body}");
    // The key file was read once for both pings.
    assert_eq!(key_reads("new.test", KEY), 1);

    // Recrawl on request: 202 with when; a second within five minutes is 429 with
    // Retry-After; an unknown domain is 404.
    let (status, _, body) = request(addr, "POST", "/v1/domains/pub.test/recrawl", None);
    assert_eq!(status, 202, "{body}");
    let answer = json(&body);
    assert_eq!(answer["state"], "due");
    assert!(answer["due_at"].is_string());
    let (status, head, _) = request(addr, "POST", "/v1/domains/pub.test/recrawl", None);
    assert_eq!(status, 429);
    let retry_after: u64 = head
        .lines()
        .find_map(|line| line.strip_prefix("retry-after: "))
        .and_then(|value| value.trim().parse().ok())
        .expect("a Retry-After header");
    assert!((200..=300).contains(&retry_after), "{retry_after}");
    assert_eq!(
        request(addr, "POST", "/v1/domains/nowhere.test/recrawl", None).0,
        404
    );

    // A ping flood for one host: its budget holds (429 with Retry-After), and the host gets
    // no more requests than the crawl's own.
    server.clear_hits();
    let mut statuses = Vec::new();
    for _ in 0..30 {
        statuses.push(request(addr, "GET", &ping_path(url, KEY), None).0);
    }
    assert!(
        statuses.iter().all(|status| [200, 429].contains(status)),
        "{statuses:?}"
    );
    assert!(
        statuses.iter().filter(|status| **status == 429).count() >= 20,
        "{statuses:?}"
    );
    std::thread::sleep(Duration::from_secs(2));
    // The verified key is remembered: no key file read; one crawl at most for all the pings
    // (the domain is due once, however often it is named).
    assert_eq!(key_reads("pub.test", KEY), 0);
    let index_reads = server
        .hits_for("pub.test")
        .iter()
        .filter(|hit| hit.path == "/.well-known/skills/index.json")
        .count();
    assert!(index_reads <= 3, "{index_reads}");

    drop(running);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Starts `serve --crawl` over the web in `dir` with `seeds` (no background round is due
/// for an hour after the first).
pub(crate) fn serve_over(dir: &Path, seeds: &str, port: u16, extra: &[&str]) -> Running {
    let seeds_file = dir.join("seeds.txt");
    std::fs::write(&seeds_file, seeds).unwrap();
    let resolve = format!("*.test=127.0.0.1:{port}");
    let data = dir.join("data");
    let mut args = vec![
        "--data",
        data.to_str().unwrap(),
        "serve",
        "--addr",
        "127.0.0.1:0",
        "--crawl",
        "--seeds",
        seeds_file.to_str().unwrap(),
        "--crawl-every",
        "1h",
        "--resolve",
        &resolve,
        "--host-delay-ms",
        "0",
    ];
    args.extend_from_slice(extra);
    let args: Vec<String> = args.into_iter().map(str::to_owned).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Running::start(&args, "listening on")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submitted_site_is_probed_at_once_and_kept_only_if_it_publishes() {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("submit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let web = dir.join("web");
    write_web(&web);
    // A site with nothing at the well-known paths.
    std::fs::create_dir_all(web.join("empty.test")).unwrap();
    std::fs::write(web.join("empty.test/index.html"), "<h1>hello</h1>").unwrap();
    let server = start_web(web.clone()).await;
    let running = serve_over(&dir, "http://pub.test\n", server.port(), &[]);
    let addr = running.addr;
    let submit = |domain: &str| {
        request(
            addr,
            "POST",
            "/v1/domains",
            Some(&serde_json::json!({ "domain": domain }).to_string()),
        )
    };

    // A site that publishes: 202 with its report, kept as submitted, searchable.
    // (The fixtures speak plain HTTP: submitted with the scheme; a bare name means https.)
    let (status, _, body) = submit("http://new.test");
    assert_eq!(status, 202, "{body}");
    let answer = json(&body);
    assert_eq!(answer["domain"], "new.test");
    assert_eq!(answer["outcome"], "ok", "{body}");
    assert_eq!(answer["state"], "submitted");
    assert!(answer["health"]["score"].is_u64(), "{body}");
    let found = tokio::task::spawn_blocking(move || {
        search_until(addr, "orchards", Duration::from_secs(10), |answer| {
            total(answer) == 1
        })
    })
    .await
    .unwrap();
    assert!(found.is_some());

    // A site that publishes nothing: its report, and it is not kept.
    let (status, _, body) = submit("http://empty.test");
    assert_eq!(status, 202, "{body}");
    let answer = json(&body);
    assert_eq!(answer["outcome"], "not_found", "{body}");
    assert!(answer["state"].is_null(), "{body}");

    // Refused before anything is fetched: IP addresses, localhost, what is not a host.
    server.clear_hits();
    for (domain, expected) in [
        ("127.0.0.1", 422),
        ("10.0.0.8", 422),
        ("[::1]", 422),
        ("localhost", 422),
        ("app.localhost", 422),
        ("not a host", 400),
        ("", 400),
    ] {
        let (status, _, body) = submit(domain);
        assert_eq!(status, expected, "{domain}: {body}");
    }
    assert_eq!(request(addr, "POST", "/v1/domains", Some("{")).0, 400);
    assert!(server.hits().is_empty());

    // The form: a redirect to the site's page, which says what happened (no script).
    let (status, head, _) = request_form(addr, "/domains", "domain=http%3A%2F%2Fhtml.test");
    assert_eq!(status, 303, "{head}");
    assert!(
        head.contains("location: /domains/html.test?submitted=kept"),
        "{head}"
    );
    let (status, _, page) = request(addr, "GET", "/domains/html.test?submitted=kept", None);
    assert_eq!(status, 200);
    assert!(page.contains("is now listed"));
    assert!(page.contains("Recrawl now"));
    let (_, _, page) = request(addr, "GET", "/domains", None);
    assert!(page.contains("Add your site"));
    // This server crawls: its form does not say that sites wait for the operator's crawls.
    assert!(!page.contains("revisited only when"), "{page}");

    // "Recrawl now" as a plain form: a redirect with the outcome; at once again: 429.
    let (status, head, _) = request_form(addr, "/domains/pub.test/recrawl", "");
    assert_eq!(status, 303, "{head}");
    assert!(
        head.contains("location: /domains/pub.test?recrawl=due"),
        "{head}"
    );
    let (status, head, page) = request_form(addr, "/domains/pub.test/recrawl", "");
    assert_eq!(status, 429, "{head}");
    assert!(head.contains("retry-after:"), "{head}");
    assert!(page.contains("retry in"), "{page}");

    drop(running);

    // A delisted domain's submission is accepted, and nothing is crawled.
    let data = dir.join("data");
    let output = crate::util::skillscout(
        &dir,
        &[
            "--data",
            data.to_str().unwrap(),
            "delist",
            "html.test",
            "--reason",
            "spam",
        ],
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        crate::util::stderr(&output)
    );
    let running = serve_over(&dir, "http://pub.test\n", server.port(), &[]);
    let addr = running.addr;
    std::thread::sleep(Duration::from_millis(500));
    server.clear_hits();
    let (status, _, body) = request(
        addr,
        "POST",
        "/v1/domains",
        Some(r#"{"domain": "html.test"}"#),
    );
    assert_eq!(status, 202, "{body}");
    assert_eq!(json(&body)["state"], "delisted");
    std::thread::sleep(Duration::from_millis(1500));
    assert!(server.hits_for("html.test").is_empty());
    drop(running);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A form post.
fn request_form(addr: SocketAddr, path: &str, body: &str) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let text = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    (status, head.to_owned(), body.to_owned())
}

/// `seeds import-directory` reads every page of another directory's domain list and adds its
/// domains as `imported`, with the directory as their source; known and delisted domains are
/// left as they are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_starts_from_another_directorys_domains() {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("import-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let web = dir.join("web");
    write_web(&web);
    let mut seeds = String::new();
    // More than one page of 100.
    for n in 0..130 {
        seeds.push_str(&format!("http://h{n:03}.test\n"));
    }
    seeds.push_str("http://pub.test\n");
    let server = start_web(web.clone()).await;
    let running = serve_over(&dir, &seeds, server.port(), &[]);
    let addr = running.addr;
    // Every seed crawled (most publish nothing; they are listed all the same).
    let started = Instant::now();
    loop {
        let (_, _, body) = request(addr, "GET", "/v1/domains?limit=100", None);
        let answer = json(&body);
        if answer["domains"].as_array().is_some_and(|d| d.len() == 100)
            && answer["crawl"]["running"] == false
        {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "{body}");
        std::thread::sleep(Duration::from_millis(200));
    }

    let other = dir.join("other");
    let resolve = format!("dir.test={addr}");
    let import = |extra: &[&str]| {
        let mut args = vec![
            "--data",
            other.to_str().unwrap(),
            "seeds",
            "import-directory",
            "http://dir.test/",
            "--resolve",
            &resolve,
            "--host-delay-ms",
            "0",
        ];
        args.extend_from_slice(extra);
        crate::util::skillscout(&dir, &args)
    };
    let output = import(&[]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        crate::util::stderr(&output)
    );
    let said = crate::util::stdout(&output);
    assert!(
        said.starts_with("131 domains read in 2 pages: 131 new"),
        "{said}"
    );
    let listed = crate::util::skillscout(
        &dir,
        &["--data", other.to_str().unwrap(), "seeds", "list", "--json"],
    );
    let entries: Vec<serde_json::Value> = crate::util::stdout(&listed)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(entries.len(), 131);
    for entry in &entries {
        assert_eq!(entry["added_as"], "imported", "{entry}");
        assert_eq!(entry["source"], "http://dir.test/", "{entry}");
    }
    assert!(
        entries
            .iter()
            .any(|entry| entry["target"] == "http://pub.test")
    );
    // Read again: nothing new.
    let output = import(&[]);
    assert!(crate::util::stdout(&output).contains("0 new, 0 updated, 131 unchanged"));
    // Not a directory: an error, nothing added.
    let output = crate::util::skillscout(
        &dir,
        &[
            "--data",
            other.to_str().unwrap(),
            "seeds",
            "import-directory",
            "http://pub.test/",
            "--resolve",
            &format!("pub.test=127.0.0.1:{}", server.port()),
        ],
    );
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        crate::util::stderr(&output)
    );
    drop(running);
    let _ = std::fs::remove_dir_all(&dir);
}
