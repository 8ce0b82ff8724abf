//! Crawls of well-behaved servers on loopback: every format, politeness measured on the
//! server's side, HTTP caching across crawls, tombstones, credentials, prefetching, the
//! corpus end to end, and Ctrl-C.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crawler::crawl::{CrawlConfig, Reading, crawl_domain};
use crawler::credentials::Credentials;
use crawler::fetch::{Fetcher, HttpCache};
use formats::{Access, Digest, DigestStatus};
use store::Outcome;

use crate::server::{Reply, TestServer, serve_file};
use crate::{Data, corpus_dir, domain, error_codes, fixture_web, test_config};

#[tokio::test]
async fn the_fixture_web_yields_every_format() {
    let server = TestServer::static_tree(fixture_web()).await;
    let data = Data::new();
    let report = data
        .crawl(
            test_config(&server),
            &[
                "pdfworks.test",
                "legacy-tools.test",
                "services.test",
                "sloppy.test",
                "nothing-here.test",
            ],
        )
        .await;

    let pdfworks = domain(&report, "pdfworks.test");
    assert_eq!(pdfworks.outcome, Outcome::Ok);
    assert_eq!(pdfworks.skills, 3);
    assert!(pdfworks.errors.is_empty(), "{:?}", pdfworks.errors);
    // robots.txt, three probes, three artifacts.
    assert_eq!(pdfworks.requests, 7);
    for record in data
        .store
        .blocking()
        .records_of(&"pdfworks.test".parse().unwrap())
        .unwrap()
    {
        assert_eq!(
            record.skill.digest_status,
            DigestStatus::Verified,
            "{}",
            record.skill.id
        );
        // Every file of the skill is kept for the API and exports.
        for file in &record.skill.files {
            let digest = file.sha256.expect("a digest per file");
            assert!(
                data.blobs.blocking().contains(&digest),
                "{} {}",
                record.skill.id,
                file.path
            );
        }
    }
    let archive = data
        .store
        .blocking()
        .record("pdfworks.test/pdf-form-filling")
        .unwrap()
        .unwrap();
    assert!(archive.skill.files.len() > 1, "{:?}", archive.skill.files);

    let legacy = domain(&report, "legacy-tools.test");
    assert_eq!((legacy.outcome, legacy.skills), (Outcome::Ok, 2));
    let services = domain(&report, "services.test");
    assert_eq!((services.outcome, services.skills), (Outcome::Ok, 5));
    let private = data
        .store
        .blocking()
        .record("services.test/test.services.payroll-audit-v1")
        .unwrap()
        .unwrap();
    assert_eq!(private.skill.access, Access::Private);
    assert_eq!(private.skill.capability_type, "task");

    let sloppy = domain(&report, "sloppy.test");
    assert_eq!(sloppy.outcome, Outcome::Ok);
    let nothing = domain(&report, "nothing-here.test");
    assert_eq!(nothing.outcome, Outcome::NotFound);
    assert!(nothing.errors.is_empty());
    // robots.txt and the three probes, nothing else.
    assert_eq!(nothing.requests, 4);

    assert_eq!(report.totals.domains, 5);
    assert_eq!(report.totals.skills, 3 + 2 + 5 + 2);
    assert_eq!(report.totals.added, report.totals.skills);
    assert_eq!(
        report.totals.requests,
        report.domains.iter().map(|d| d.requests).sum::<usize>()
    );
    // The server saw exactly the requests the report counts.
    assert_eq!(server.hits().len(), report.totals.requests);
    for hit in server.hits() {
        let agent = hit.headers.get("user-agent").cloned().unwrap_or_default();
        assert!(agent.starts_with("skillscout/"), "{agent}");
    }
}

#[tokio::test]
async fn requests_to_one_host_are_spaced_by_the_host_delay() {
    let server = TestServer::static_tree(fixture_web()).await;
    let data = Data::new();
    let mut config = test_config(&server);
    let delay = Duration::from_millis(150);
    config.fetch.host_delay = delay;
    data.crawl(config, &["pdfworks.test", "legacy-tools.test"])
        .await;
    for host in ["pdfworks.test", "legacy-tools.test"] {
        let mut hits = server.hits_for(host);
        assert!(hits.len() >= 4, "{host}: {hits:?}");
        hits.sort_by_key(|hit| hit.started);
        for pair in hits.windows(2) {
            let gap = pair[1].started.saturating_duration_since(pair[0].replied);
            assert!(
                gap >= delay,
                "{host}: {} then {} after {gap:?}",
                pair[0].path,
                pair[1].path
            );
        }
    }
    // The two hosts were crawled side by side, not one after the other.
    let pdf = server.hits_for("pdfworks.test");
    let legacy = server.hits_for("legacy-tools.test");
    let pdf_end = pdf.iter().map(|hit| hit.finished).max().unwrap();
    let legacy_start = legacy.iter().map(|hit| hit.started).min().unwrap();
    assert!(legacy_start < pdf_end);
}

#[tokio::test]
async fn crawl_delay_raises_the_pause() {
    let web = fixture_web();
    let server = TestServer::start(move |request| {
        if request.path == "/robots.txt" {
            return Reply::ok("User-agent: skillscout\nCrawl-delay: 0.3\n");
        }
        serve_file(&web, request)
    })
    .await;
    let data = Data::new();
    let report = data.crawl(test_config(&server), &["pdfworks.test"]).await;
    assert_eq!(domain(&report, "pdfworks.test").outcome, Outcome::Ok);
    let mut hits = server.hits_for("pdfworks.test");
    hits.sort_by_key(|hit| hit.started);
    // Every pause is at least the Crawl-delay, the first one after robots.txt included.
    // See: the hardening issue, defect 1.
    assert_eq!(hits[0].path, "/robots.txt");
    for pair in hits.windows(2) {
        let gap = pair[1].started.saturating_duration_since(pair[0].replied);
        assert!(gap >= Duration::from_millis(300), "{gap:?}");
    }
}

/// Serves the fixture web with `cache_control`, an ETag per file, and 304 for a matching
/// `If-None-Match`; counts conditional requests.
async fn caching_server(cache_control: &'static str, conditional: Arc<AtomicUsize>) -> TestServer {
    let web = fixture_web();
    TestServer::start(move |request| {
        let reply = serve_file(&web, request);
        let Reply::Full {
            status: 200,
            body,
            headers,
        } = reply
        else {
            // Not-found answers are cacheable too.
            return reply.header("Cache-Control", cache_control);
        };
        let etag = format!("\"{}\"", Digest::of(&body).hex());
        if let Some(sent) = request.headers.get("if-none-match") {
            conditional.fetch_add(1, Ordering::SeqCst);
            if *sent == etag {
                return Reply::status(304)
                    .header("ETag", &etag)
                    .header("Cache-Control", cache_control);
            }
        }
        let mut reply = Reply::Full {
            status: 200,
            body,
            headers,
        };
        reply = reply
            .header("ETag", &etag)
            .header("Cache-Control", cache_control);
        reply
    })
    .await
}

#[tokio::test]
async fn a_fresh_cache_makes_no_request_at_all() {
    let conditional = Arc::new(AtomicUsize::new(0));
    let server = caching_server("max-age=3600", Arc::clone(&conditional)).await;
    let data = Data::new();
    let hosts = ["legacy-tools.test", "services.test"];
    let first = data.crawl(test_config(&server), &hosts).await;
    let before = server.hits().len();
    assert_eq!(before, first.totals.requests);

    let second = data.crawl(test_config(&server), &hosts).await;
    assert_eq!(
        server.hits().len(),
        before,
        "a fresh response was requested again"
    );
    assert_eq!(second.totals.requests, 0);
    assert_eq!(second.totals.unchanged, first.totals.added);
    assert_eq!(
        (
            second.totals.added,
            second.totals.updated,
            second.totals.removed
        ),
        (0, 0, 0)
    );
    assert_eq!(conditional.load(Ordering::SeqCst), 0);
}

/// A publisher's "this changed" (an IndexNow ping, a recrawl request) marks its origin's
/// cached copies: the next crawl asks again for each, conditionally, though `max-age` still
/// calls them fresh; another origin's fresh copies are still used without a request, and
/// robots.txt stays cached. See: Publishers in the loop.
#[tokio::test]
async fn a_stale_mark_revalidates_fresh_copies_of_one_origin() {
    let conditional = Arc::new(AtomicUsize::new(0));
    let server = caching_server("max-age=3600", Arc::clone(&conditional)).await;
    let data = Data::new();
    let hosts = ["legacy-tools.test", "services.test"];
    data.crawl(test_config(&server), &hosts).await;
    let before = server.hits().len();
    let served: BTreeSet<String> = server
        .hits_for("legacy-tools.test")
        .into_iter()
        .filter(|hit| hit.status == 200 && hit.path != "/robots.txt")
        .map(|hit| hit.path)
        .collect();
    assert!(!served.is_empty());

    let origin = url::Url::parse("http://legacy-tools.test/").unwrap();
    assert!(data.store.mark_stale(&origin).await.unwrap() >= served.len());
    let second = data.crawl(test_config(&server), &hosts).await;
    let new_hits: Vec<_> = server.hits().into_iter().skip(before).collect();
    assert!(new_hits.iter().all(|hit| hit.host == "legacy-tools.test"));
    assert!(!new_hits.iter().any(|hit| hit.path == "/robots.txt"));
    // Every copy is asked for again: a found one conditionally (304), a cached "not found"
    // as it was first asked.
    let first: BTreeSet<String> = server
        .hits_for("legacy-tools.test")
        .into_iter()
        .take_while(|hit| hit.started < new_hits[0].started)
        .filter(|hit| hit.path != "/robots.txt")
        .map(|hit| hit.path)
        .collect();
    let asked: BTreeSet<String> = new_hits.iter().map(|hit| hit.path.clone()).collect();
    assert_eq!(asked, first);
    for hit in new_hits.iter().filter(|hit| served.contains(&hit.path)) {
        assert!(hit.headers.contains_key("if-none-match"), "{}", hit.path);
        assert_eq!(hit.status, 304, "{}", hit.path);
    }
    assert_eq!(second.totals.added + second.totals.removed, 0);

    // Revalidated, the copies are fresh again: a third crawl asks nothing.
    let after = server.hits().len();
    data.crawl(test_config(&server), &hosts).await;
    assert_eq!(server.hits().len(), after);
}

#[tokio::test]
async fn a_stale_cache_is_revalidated_and_304_keeps_the_records() {
    let conditional = Arc::new(AtomicUsize::new(0));
    let server = caching_server("no-cache", Arc::clone(&conditional)).await;
    let data = Data::new();
    let hosts = ["legacy-tools.test", "services.test"];
    let first = data.crawl(test_config(&server), &hosts).await;
    let first_seq = data.store.blocking().last_seq().unwrap();
    let hits_before = server.hits().len();

    let served: BTreeSet<(String, String)> = server
        .hits()
        .into_iter()
        .filter(|hit| hit.status == 200)
        .map(|hit| (hit.host, hit.path))
        .collect();

    let second = data.crawl(test_config(&server), &hosts).await;
    let new_hits: Vec<_> = server.hits().into_iter().skip(hits_before).collect();
    // robots.txt is fresh for a day; everything served before is asked again, conditionally.
    assert!(!new_hits.iter().any(|hit| hit.path == "/robots.txt"));
    for hit in &new_hits {
        if served.contains(&(hit.host.clone(), hit.path.clone())) {
            assert!(
                hit.headers.contains_key("if-none-match"),
                "{} was not conditional",
                hit.path
            );
            assert_eq!(hit.status, 304, "{}", hit.path);
        }
    }
    assert!(conditional.load(Ordering::SeqCst) >= 2 + 1 + 1 + 5);
    assert_eq!(second.totals.unchanged, first.totals.added);
    assert_eq!(second.totals.updated, 0);
    assert_eq!(
        data.store.blocking().last_seq().unwrap(),
        first_seq,
        "unchanged records were rewritten"
    );
}

#[tokio::test]
async fn no_store_is_never_cached() {
    let conditional = Arc::new(AtomicUsize::new(0));
    let server = caching_server("no-store", Arc::clone(&conditional)).await;
    let data = Data::new();
    data.crawl(test_config(&server), &["legacy-tools.test"])
        .await;
    let before = server.hits().len();
    let second = data
        .crawl(test_config(&server), &["legacy-tools.test"])
        .await;
    // robots.txt is cached by its own rule; everything else is fetched again, unconditionally.
    assert_eq!(second.totals.requests, before - 1);
    assert_eq!(conditional.load(Ordering::SeqCst), 0);
    let url = url::Url::parse("http://legacy-tools.test/.well-known/skills/index.json").unwrap();
    assert!(data.store.blocking().cached(&url).unwrap().is_none());
}

#[tokio::test]
async fn a_skill_that_vanishes_becomes_a_tombstone() {
    let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let web = fixture_web();
    let server = {
        let dropped = Arc::clone(&dropped);
        TestServer::start(move |request| {
            if dropped.load(Ordering::SeqCst) && request.path == "/.well-known/skills/index.json" {
                return Reply::json(
                    r#"{"skills": [{"name": "changelog-writer", "description": "Writes changelogs.", "files": ["SKILL.md"]}]}"#,
                );
            }
            serve_file(&web, request)
        })
        .await
    };
    let data = Data::new();
    let first = data
        .crawl(test_config(&server), &["legacy-tools.test"])
        .await;
    assert_eq!(first.totals.added, 2);
    dropped.store(true, Ordering::SeqCst);
    let second = data
        .crawl(test_config(&server), &["legacy-tools.test"])
        .await;
    assert_eq!(second.totals.removed, 1);
    assert_eq!(second.totals.updated, 1, "the index description changed");
    let gone = data
        .store
        .blocking()
        .record("legacy-tools.test/csv-cleanup")
        .unwrap()
        .unwrap();
    assert!(gone.is_tombstone());
    let changes = data.store.blocking().changes_after(0, 100).unwrap();
    assert!(changes.iter().any(|record| record.is_tombstone()));
}

#[tokio::test]
async fn an_unreadable_index_removes_nothing() {
    let broken = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let web = fixture_web();
    let server = {
        let broken = Arc::clone(&broken);
        TestServer::start(move |request| {
            if broken.load(Ordering::SeqCst) && request.path == "/.well-known/skills/index.json" {
                return Reply::json("{not json");
            }
            serve_file(&web, request)
        })
        .await
    };
    let data = Data::new();
    data.crawl(test_config(&server), &["legacy-tools.test"])
        .await;
    broken.store(true, Ordering::SeqCst);
    let second = data
        .crawl(test_config(&server), &["legacy-tools.test"])
        .await;
    let line = domain(&second, "legacy-tools.test");
    assert_eq!(line.outcome, Outcome::Error);
    assert_eq!(error_codes(line), ["invalid_json"]);
    assert_eq!(second.totals.removed, 0);
    let kept = data
        .store
        .blocking()
        .record("legacy-tools.test/csv-cleanup")
        .unwrap()
        .unwrap();
    assert!(!kept.is_tombstone());
}

/// A publisher withdraws its skills by answering 410 Gone at its index, or by disallowing
/// the well-known paths in robots.txt: the next crawl removes them (tombstones in the change
/// log). An index that answers 404 keeps its skills until it is read again (a 404 may be a
/// mistake of a moment).
#[tokio::test]
async fn a_withdrawn_index_removes_its_skills() {
    let phase = Arc::new(AtomicUsize::new(0));
    let web = fixture_web();
    let server = {
        let phase = Arc::clone(&phase);
        TestServer::start(move |request| {
            let now = phase.load(Ordering::SeqCst);
            match (request.host.as_str(), request.path.as_str()) {
                ("legacy-tools.test", "/.well-known/skills/index.json") if now == 1 => {
                    Reply::status(410)
                }
                ("legacy-tools.test", "/.well-known/skills/index.json") if now == 2 => {
                    Reply::not_found()
                }
                ("pdfworks.test", "/robots.txt") if now >= 1 => {
                    Reply::ok("User-agent: *\nDisallow: /.well-known/\n")
                }
                _ => serve_file(&web, request),
            }
        })
        .await
    };
    let data = Data::new();
    let first = data
        .crawl(
            test_config(&server),
            &["legacy-tools.test", "pdfworks.test"],
        )
        .await;
    assert_eq!(first.totals.added, 5);

    phase.store(1, Ordering::SeqCst);
    // A day later: robots.txt is kept a day (RFC 9309), then read again.
    let robots = url::Url::parse("http://pdfworks.test/robots.txt").unwrap();
    data.store.blocking().set_cached(&robots, None).unwrap();
    let second = data
        .crawl(
            test_config(&server),
            &["legacy-tools.test", "pdfworks.test"],
        )
        .await;
    assert_eq!(second.totals.removed, 5, "{second:#?}");
    assert_eq!(
        domain(&second, "pdfworks.test").outcome,
        Outcome::Disallowed
    );
    for domain in ["legacy-tools.test", "pdfworks.test"] {
        let records = data
            .store
            .blocking()
            .records_of(&domain.parse().unwrap())
            .unwrap();
        assert!(!records.is_empty());
        assert!(
            records.iter().all(|record| record.is_tombstone()),
            "{domain}"
        );
    }

    // Published again, then answered 404: the skills come back and stay.
    phase.store(0, Ordering::SeqCst);
    let third = data
        .crawl(test_config(&server), &["legacy-tools.test"])
        .await;
    assert_eq!(third.totals.added, 2);
    phase.store(2, Ordering::SeqCst);
    let fourth = data
        .crawl(test_config(&server), &["legacy-tools.test"])
        .await;
    assert_eq!(fourth.totals.removed, 0);
}

#[tokio::test]
async fn credentials_reach_only_their_host() {
    let server = TestServer::start(|request| {
        let authorised = request.headers.get("authorization").map(String::as_str)
            == Some("Bearer s3cret");
        match (request.host.as_str(), request.path.as_str()) {
            ("private.test", "/.well-known/skill-sharing") => {
                let access = if authorised { "private" } else { "public" };
                Reply::json(format!(
                    r#"{{"protocol": {{"version": "1.0.0"}}, "provider": {{"name": "P"}}, "skills": [
                        {{"id": "secret-v1", "name": "Secret", "capability_type": "task", "description": "Only for staff.",
                          "descriptor_url": "http://cdn.test/secret.json", "access": "{access}", "version": "1.0.0"}}]}}"#
                ))
            }
            ("cdn.test", "/secret.json") => Reply::redirect("http://elsewhere.test/secret.json"),
            ("elsewhere.test", "/secret.json") => Reply::json(
                r#"{"protocol": {"version": "1.0.0"}, "id": "secret-v1", "name": "Secret", "version": "1.0.0",
                    "capability_type": "task", "description": "Only for staff.", "access": "private"}"#,
            ),
            _ => Reply::not_found(),
        }
    })
    .await;
    // A bare host key means https only (docs/crawl.md): over plain http nothing is sent.
    // See: the hardening issue, defect 4.
    let https_only = Data::new();
    let mut config = test_config(&server);
    config.fetch.credentials =
        Credentials::parse(br#"{"private.test": {"Authorization": "Bearer s3cret"}}"#).unwrap();
    https_only.crawl(config, &["private.test"]).await;
    assert!(
        server
            .hits()
            .iter()
            .all(|hit| !hit.headers.contains_key("authorization")),
        "a host key sent credentials over http"
    );
    server.clear_hits();

    // `http://host` opts in to plain http for that host, and only that host.
    let data = Data::new();
    let mut config = test_config(&server);
    config.fetch.credentials =
        Credentials::parse(br#"{"http://private.test": {"Authorization": "Bearer s3cret"}}"#)
            .unwrap();
    let report = data.crawl(config, &["private.test"]).await;
    assert_eq!(domain(&report, "private.test").outcome, Outcome::Ok);
    let record = data
        .store
        .blocking()
        .record("private.test/secret-v1")
        .unwrap()
        .unwrap();
    assert_eq!(record.skill.access, Access::Private);
    // Every request to that host but robots.txt (public by nature) carries them.
    for hit in server.hits() {
        let has = hit.headers.contains_key("authorization");
        let expected = hit.host == "private.test" && hit.path != "/robots.txt";
        assert_eq!(has, expected, "{} {}", hit.host, hit.path);
    }
    assert!(
        server
            .hits_for("elsewhere.test")
            .iter()
            .any(|hit| hit.path == "/secret.json")
    );
    let report_json = serde_json::to_string(&report).unwrap();
    assert!(!report_json.contains("s3cret"));
}

// Credentials never follow a redirect from https to http, even to an origin whose own key
// opts in to plain http (docs/crawl.md). See: the hardening issue, defect 4.
#[tokio::test]
async fn credentials_are_not_sent_after_a_redirect_from_https_to_http() {
    use std::sync::atomic::AtomicU16;
    let tls_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tls");
    let read = |name: &str| std::fs::read(tls_dir.join(name)).unwrap();
    let plain = TestServer::start(|request| match request.path.as_str() {
        "/secret.json" => Reply::json(
            r#"{"protocol": {"version": "1.0.0"}, "id": "secret-v1", "name": "Secret", "version": "1.0.0",
                "capability_type": "task", "description": "Only for staff.", "access": "private"}"#,
        ),
        _ => Reply::not_found(),
    })
    .await;
    let plain_port = plain.port();
    let tls_port = Arc::new(AtomicU16::new(0));
    let secure = {
        let tls_port = Arc::clone(&tls_port);
        TestServer::start_tls(&read("server.pem"), &read("server.key"), move |request| {
            let tls_port = tls_port.load(Ordering::SeqCst);
            match request.path.as_str() {
                "/.well-known/skill-sharing" => Reply::json(format!(
                    r#"{{"protocol": {{"version": "1.0.0"}}, "provider": {{"name": "P"}}, "skills": [
                        {{"id": "secret-v1", "name": "Secret", "capability_type": "task", "description": "Only for staff.",
                          "descriptor_url": "https://secure.test:{tls_port}/secret.json", "access": "private", "version": "1.0.0"}}]}}"#
                )),
                "/secret.json" => {
                    Reply::redirect(&format!("http://secure.test:{plain_port}/secret.json"))
                }
                _ => Reply::not_found(),
            }
        })
        .await
    };
    tls_port.store(secure.port(), Ordering::SeqCst);
    let config = || {
        let mut config = test_config(&secure);
        config.fetch.resolve = vec!["secure.test=127.0.0.1".parse().unwrap()];
        config.fetch.ca_certs =
            crawler::fetch::tls::parse_pem_certificates(&read("ca.pem")).unwrap();
        config.fetch.credentials = Credentials::parse(
            format!(
                r#"{{"secure.test:{}": {{"Authorization": "Bearer s3cret"}},
                    "http://secure.test:{plain_port}": {{"Authorization": "Bearer s3cret"}}}}"#,
                secure.port()
            )
            .as_bytes(),
        )
        .unwrap();
        config
    };
    let authorised = |hit: &crate::server::Hit| {
        hit.headers.get("authorization").map(String::as_str) == Some("Bearer s3cret")
    };

    let data = Data::new();
    let https = format!("https://secure.test:{}", secure.port());
    let report = data
        .crawl_targets(config(), &[&https], std::future::pending())
        .await;
    let domain_name = format!("secure.test:{}", secure.port());
    assert_eq!(domain(&report, &domain_name).outcome, Outcome::Ok);
    // Over https the key applies; the redirect was followed to plain http, without them.
    let index = secure
        .hits()
        .into_iter()
        .find(|hit| hit.path == "/.well-known/skill-sharing")
        .expect("the index was read");
    assert!(authorised(&index));
    let followed = plain.hits();
    assert!(followed.iter().any(|hit| hit.path == "/secret.json"));
    assert!(
        followed
            .iter()
            .all(|hit| !hit.headers.contains_key("authorization")),
        "credentials followed an https→http redirect: {followed:?}"
    );

    // The http key itself is good: asked directly, that origin gets it.
    plain.clear_hits();
    let http = format!("http://secure.test:{plain_port}");
    Data::new()
        .crawl_targets(config(), &[&http], std::future::pending())
        .await;
    let probe = plain
        .hits()
        .into_iter()
        .find(|hit| hit.path == "/.well-known/skill-sharing")
        .expect("the plain origin was probed");
    assert!(authorised(&probe));
}

// The publisher's health report says whether the index answers carry caching headers: the
// crawl records what they said.
#[tokio::test]
async fn what_the_index_answers_say_about_caching_is_recorded() {
    let index =
        r#"{"skills": [{"name": "tool", "description": "A tool.", "files": ["SKILL.md"]}]}"#;
    let server =
        TestServer::start(
            move |request| match (request.host.as_str(), request.path.as_str()) {
                ("cached.test", "/.well-known/skills/index.json") => Reply::json(index)
                    .header("ETag", "\"v1\"")
                    .header("Cache-Control", "public, max-age=60"),
                ("validated.test", "/.well-known/skills/index.json") => {
                    Reply::json(index).header("Last-Modified", "Wed, 25 Nov 2026 10:00:00 GMT")
                }
                ("bare.test", "/.well-known/skills/index.json") => Reply::json(index),
                (_, "/.well-known/skills/tool/SKILL.md") => {
                    Reply::ok("---\nname: tool\ndescription: A tool.\n---\nUse it.\n")
                }
                _ => Reply::not_found(),
            },
        )
        .await;
    let data = Data::new();
    data.crawl(
        test_config(&server),
        &["cached.test", "validated.test", "bare.test"],
    )
    .await;
    let caching = |host: &str| {
        data.store
            .blocking()
            .domain(&host.parse().unwrap())
            .unwrap()
            .unwrap()
            .caching
            .map(|said| (said.validator, said.freshness))
    };
    assert_eq!(caching("cached.test"), Some((true, true)));
    assert_eq!(caching("validated.test"), Some((true, false)));
    assert_eq!(caching("bare.test"), Some((false, false)));

    // Crawled again within its lifetime, the cached index is not asked for: nothing new is
    // heard, and what was heard before stays.
    let asked = server.hits_for("cached.test").len();
    data.crawl(test_config(&server), &["cached.test"]).await;
    assert!(
        !server.hits_for("cached.test")[asked..]
            .iter()
            .any(|hit| hit.path == "/.well-known/skills/index.json")
    );
    assert_eq!(caching("cached.test"), Some((true, true)));
}

/// The `Link` header of an index answer names origins for discovery, also when the answer is
/// a fresh copy from the HTTP cache (its headers are kept with it, several `Link` lines
/// joined); a resource hint and the site's own origin name none.
#[tokio::test]
async fn an_index_answer_s_link_header_names_origins_also_from_the_cache() {
    let index =
        r#"{"skills": [{"name": "tool", "description": "A tool.", "files": ["SKILL.md"]}]}"#;
    let server = TestServer::start(move |request| match request.path.as_str() {
        "/.well-known/skills/index.json" => Reply::json(index)
            .header("Link", "<http://linked.test/>; rel=alternate")
            .header(
                "Link",
                "</self>; rel=self, <https://cdn.test/f.woff2>; rel=preload",
            )
            .header("Cache-Control", "max-age=3600"),
        "/.well-known/skills/tool/SKILL.md" => {
            Reply::ok("---\nname: tool\ndescription: A tool.\n---\nUse it.\n")
                .header("Cache-Control", "max-age=3600")
        }
        _ => Reply::not_found().header("Cache-Control", "max-age=3600"),
    })
    .await;
    let data = Data::new();
    let mut config = test_config(&server);
    config.discover_budget = 10;
    let report = data.crawl(config, &["links.test"]).await;
    assert_eq!(report.totals.discovered, 1);

    let asked = server.hits().len();
    let fetcher = Fetcher::new(
        test_config(&server).fetch,
        Some(HttpCache {
            store: Arc::clone(&data.store),
            blobs: data.blobs.clone(),
        }),
    )
    .unwrap();
    let target = "http://links.test".parse().unwrap();
    let crawled = crawl_domain(&fetcher, &target, Reading::ARTIFACTS, None, None).await;
    assert_eq!(server.hits().len(), asked, "everything came from the cache");
    let named: Vec<&str> = crawled.found.named.iter().map(url::Url::as_str).collect();
    assert_eq!(named, ["http://linked.test/"]);
}

#[tokio::test]
async fn prefetching_fetches_the_listed_files() {
    let server = TestServer::static_tree(fixture_web()).await;
    let plain = Data::new();
    let mut config = test_config(&server);
    config.prefetch_files = false;
    plain.crawl(config, &["legacy-tools.test"]).await;
    assert!(
        !server
            .hits()
            .iter()
            .any(|hit| hit.path.ends_with("clean.py"))
    );

    // Fetching them is the default.
    let data = Data::new();
    data.crawl(test_config(&server), &["legacy-tools.test"])
        .await;
    assert!(
        server
            .hits()
            .iter()
            .any(|hit| hit.path.ends_with("/csv-cleanup/scripts/clean.py"))
    );
    let record = data
        .store
        .blocking()
        .record("legacy-tools.test/csv-cleanup")
        .unwrap()
        .unwrap();
    let script = record.skill.file("scripts/clean.py").unwrap();
    let bytes = data
        .blobs
        .blocking()
        .get(&script.sha256.unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(Some(bytes.len() as u64), script.size);
}

#[tokio::test]
async fn docs_sites_are_probed_under_their_path_first() {
    let web = fixture_web();
    let server = TestServer::start(move |request| {
        // The site publishes its index under /docs (and serves the same files at the root,
        // where absolute artifact URLs point).
        let path = request.path.strip_prefix("/docs").unwrap_or(&request.path);
        if path.ends_with("index.json") && !request.path.starts_with("/docs/") {
            return Reply::not_found();
        }
        serve_file(
            &web,
            &crate::server::Request {
                host: "pdfworks.test".to_owned(),
                path: path.to_owned(),
                headers: request.headers.clone(),
            },
        )
    })
    .await;
    let data = Data::new();
    let targets = ["http://docs.test/docs"];
    let report = data
        .crawl_targets(test_config(&server), &targets, std::future::pending())
        .await;
    let line = domain(&report, "docs.test");
    assert_eq!((line.outcome, line.skills), (Outcome::Ok, 3), "{line:?}");
    assert_eq!(line.origin, "http://docs.test/docs");
    let paths: Vec<String> = server.hits().iter().map(|hit| hit.path.clone()).collect();
    assert_eq!(paths[1], "/docs/.well-known/agent-skills/index.json");
    // The index was found under the path, so the root's agent-skills index was not probed.
    assert!(!paths.contains(&"/.well-known/agent-skills/index.json".to_owned()));
    // The formats not found under the path were probed at the root too.
    assert!(paths.contains(&"/.well-known/skills/index.json".to_owned()));
}

#[tokio::test]
async fn ctrl_c_keeps_the_domains_already_done() {
    let web = fixture_web();
    let server = TestServer::start(move |request| {
        if request.host == "slow.test" {
            return Reply::Hang;
        }
        serve_file(&web, request)
    })
    .await;
    let data = Data::new();
    let mut config = test_config(&server);
    config.fetch.request_timeout = Duration::from_secs(60);
    let targets = ["http://pdfworks.test", "http://slow.test"];
    let shutdown = tokio::time::sleep(Duration::from_millis(800));
    let started = std::time::Instant::now();
    let report = data.crawl_targets(config, &targets, shutdown).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(report.interrupted);
    let done: Vec<&str> = report.domains.iter().map(|d| d.domain.as_str()).collect();
    assert_eq!(done, ["pdfworks.test"]);
    assert_eq!(
        data.store
            .blocking()
            .records_of(&"pdfworks.test".parse().unwrap())
            .unwrap()
            .len(),
        3
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whole_corpus_crawls_with_verified_digests() {
    let Some(corpus) = corpus_dir() else {
        return;
    };
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(corpus.join("MANIFEST.json")).unwrap()).unwrap();
    let domains: Vec<String> = manifest["domains"]
        .as_array()
        .unwrap()
        .iter()
        .map(|domain| domain["domain"].as_str().unwrap().to_owned())
        .collect();
    let server = TestServer::static_tree(corpus.clone()).await;
    let data = Data::new();
    let mut config: CrawlConfig = test_config(&server);
    config.fetch.request_timeout = Duration::from_secs(20);
    let hosts: Vec<&str> = domains.iter().map(String::as_str).collect();
    let report = data.crawl(config, &hosts).await;

    let mut failures = Vec::new();
    for line in &report.domains {
        if line.outcome != Outcome::Ok {
            failures.push(format!(
                "{}: {:?} {:?}",
                line.domain, line.outcome, line.errors
            ));
        }
    }
    let mut seen = BTreeSet::new();
    for domain_entry in manifest["domains"].as_array().unwrap() {
        let name = domain_entry["domain"].as_str().unwrap();
        let records = data
            .store
            .blocking()
            .records_of(&name.parse().unwrap())
            .unwrap();
        for skill in domain_entry["skills"].as_array().unwrap() {
            let key = skill["key"].as_str().unwrap();
            let Some(record) = records
                .iter()
                .find(|record| record.skill.id.to_string() == key)
            else {
                failures.push(format!("{key}: not crawled"));
                continue;
            };
            seen.insert(key.to_owned());
            if record.skill.index_url.path().contains("/agent-skills/")
                && record.skill.digest_status != DigestStatus::Verified
            {
                failures.push(format!("{key}: {:?}", record.skill.digest_status));
            }
            crate::corpus::check_record(skill, &record.skill, &mut failures);
        }
        for record in &records {
            if !seen.contains(&record.skill.id.to_string()) {
                failures.push(format!("{}: not in the manifest", record.skill.id));
            }
        }
    }
    let total = manifest["totals"]["skills"].as_u64().unwrap() as usize;
    assert_eq!(seen.len(), total);
    assert!(
        failures.is_empty(),
        "{} problems:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[tokio::test]
async fn https_origins_are_trusted_through_ca_cert() {
    let tls = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tls");
    let read = |name: &str| std::fs::read(tls.join(name)).unwrap();
    let web = fixture_web();
    let server = TestServer::start_tls(&read("server.pem"), &read("server.key"), move |request| {
        serve_file(
            &web,
            &crate::server::Request {
                host: "legacy-tools.test".to_owned(),
                ..request.clone()
            },
        )
    })
    .await;
    let targets = ["https://secure.test"];

    // Without the CA, the certificate is refused and nothing is read.
    let data = Data::new();
    let report = data
        .crawl_targets(test_config(&server), &targets, std::future::pending())
        .await;
    let line = domain(&report, "secure.test");
    assert_eq!(line.outcome, Outcome::Unreachable, "{line:?}");
    assert!(
        line.errors[0].message.contains("certificate"),
        "{:?}",
        line.errors
    );

    // With it, the site crawls.
    let mut config = test_config(&server);
    config.fetch.ca_certs = crawler::fetch::tls::parse_pem_certificates(&read("ca.pem")).unwrap();
    let report = data
        .crawl_targets(config, &targets, std::future::pending())
        .await;
    let line = domain(&report, "secure.test");
    assert_eq!((line.outcome, line.skills), (Outcome::Ok, 2), "{line:?}");
}

/// A domain someone asked for (a ping, a recrawl request, a submission: the frontier marks it
/// requested) has its records stored as soon as they are read, before its next request to the
/// network, so that a change is searchable without waiting for the host's next turns; a
/// domain nobody asked for stores them once it is done. Seen from the site: when its last
/// probe (`/.well-known/skill-sharing`) is asked for, is the skill in the store yet?
#[tokio::test]
async fn an_awaited_domains_records_are_stored_before_its_next_request() {
    let data = Data::new();
    let description = Arc::new(std::sync::Mutex::new("The first version.".to_owned()));
    let stored_then: Arc<std::sync::Mutex<Vec<Option<String>>>> = Arc::default();
    let server = {
        let store = Arc::clone(&data.store);
        let description = Arc::clone(&description);
        let stored_then = Arc::clone(&stored_then);
        TestServer::start(move |request| match request.path.as_str() {
            "/.well-known/skills/index.json" => Reply::json(
                r#"{"skills":[{"name":"tool","description":"A tool.","files":["SKILL.md"]}]}"#,
            ),
            "/.well-known/skills/tool/SKILL.md" => {
                let description = description.lock().unwrap().clone();
                Reply::ok(format!(
                    "---\nname: tool\ndescription: {description}\n---\n# Tool\n"
                ))
            }
            "/.well-known/skill-sharing" => {
                let record = store.blocking().record("awaited.test/tool").unwrap();
                stored_then
                    .lock()
                    .unwrap()
                    .push(record.map(|record| record.skill.description));
                Reply::not_found()
            }
            _ => Reply::not_found(),
        })
        .await
    };

    // Nobody asked: the records wait for the domain's end.
    let first = data.crawl(test_config(&server), &["awaited.test"]).await;
    assert_eq!(first.totals.added, 1);
    assert_eq!(*stored_then.lock().unwrap(), [None]);

    // The publisher changes the skill and asks for a crawl.
    *description.lock().unwrap() = "The second version.".to_owned();
    data.store
        .frontier()
        .add(
            vec![store::NewTarget {
                domain: "awaited.test".to_owned(),
                target: "http://awaited.test".to_owned(),
                added_as: store::AddedAs::Seed,
                source: None,
                rank: None,
            }],
            store::AddMode::CrawlNow,
        )
        .await
        .unwrap();
    let second = data.crawl(test_config(&server), &["awaited.test"]).await;
    assert_eq!(second.totals.updated, 1);
    assert_eq!(
        stored_then.lock().unwrap()[1].as_deref(),
        Some("The second version."),
        "stored before the site's last probe"
    );
    let entry = data.store.frontier().entry("awaited.test").await.unwrap();
    assert_eq!(entry.unwrap().requested_at, None, "the request is answered");
}
