//! The policy is the one gate: every endpoint that lists or shows records shows them only when
//! it asks, and the index's own filter agrees with it.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use formats::diagnostic::Code;
use formats::skill::FileEntry;
use formats::{Access, Diagnostic, Skill};
use indexer::Caller;
use store::blobs::Blobs;
use store::{CrawlErrorEntry, DomainStatus};
use time::OffsetDateTime;
use tower::ServiceExt;

use super::Policy;
use crate::AppState;
use crate::testing::{self, TOKEN};

/// The bytes of `alpha`'s SKILL.md.
const ALPHA_FILE: &[u8] = b"# alpha-file-marker\n";

fn record(name: &str, access: Access, file: Option<formats::Digest>) -> Skill {
    let mut skill = testing::record(&format!("a.test/{name}"), access);
    skill.digest = file;
    skill.files = vec![FileEntry {
        path: "SKILL.md".to_owned(),
        size: Some(ALPHA_FILE.len() as u64),
        sha256: file,
    }];
    skill
}

/// A server over one domain, `a.test`, with a public `alpha` (whose SKILL.md is kept), a
/// restricted `charlie` and a private `bravo`; its last crawl has an error and a diagnostic
/// about `alpha` and `bravo` each.
fn state(dir: &std::path::Path) -> AppState {
    let blobs = Blobs::open(dir).unwrap();
    let digest = blobs.blocking().put(ALPHA_FILE).unwrap();
    let records = vec![
        record("alpha", Access::Public, Some(digest)),
        record("bravo", Access::Private, None),
        record("charlie", Access::Restricted, None),
    ];
    let mut errors = Vec::new();
    let mut diagnostics = Vec::new();
    for skill in &records[..2] {
        errors.push(CrawlErrorEntry {
            code: "timeout".to_owned(),
            message: format!("fetching {} timed out", skill.name),
            url: skill.source_url.to_string(),
            record: Some(skill.id.clone()),
        });
        diagnostics.push(
            Diagnostic::new(Code::DuplicateName, format!("{} is listed twice", skill.id))
                .as_warning()
                .about(skill.id.clone()),
        );
    }
    let status = DomainStatus {
        requests: 7,
        errors,
        diagnostics,
        ..testing::status_of(&records)
    };
    testing::directory(dir, &status, records, blobs)
}

/// Sends one request with the token; returns the status and the body as text.
async fn send(state: &AppState, method: &str, uri: &str, body: &str) -> (StatusCode, String) {
    let request = Request::builder()
        .method(method)
        .uri(uri)
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("content-type", "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap();
    let response = crate::router(state.clone()).oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

fn rpc(method: &str, params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params}}}"#)
}

/// Endpoints that list records, or crawl errors and diagnostics about them: with the real
/// policy an authenticated caller sees `alpha` and `bravo` there; with a policy that refuses
/// everything, neither. Query texts avoid the records' names, so an echo is no mention.
fn listings() -> Vec<(&'static str, &'static str, String)> {
    vec![
        ("GET", "/v1/search", String::new()),
        ("GET", "/v1/search?q=title", String::new()),
        ("GET", "/v1/domains/a.test", String::new()),
        ("GET", "/v1/changes", String::new()),
        ("GET", "/.well-known/skill-sharing", String::new()),
        ("GET", "/skills", String::new()),
        (
            "POST",
            "/rpc",
            rpc("list_skills", r#"{"detail":"summary"}"#),
        ),
        ("GET", "/", String::new()),
        ("GET", "/?q=title", String::new()),
        ("GET", "/domains/a.test", String::new()),
        ("GET", "/v1/export?layout=jsonl", String::new()),
    ]
}

/// Endpoints that show `alpha` (HTTP 200 with its title or its file) or, refused, answer as
/// if it did not exist (404, or the JSON-RPC "skill not found" error).
fn shows() -> Vec<(&'static str, &'static str, String, &'static str)> {
    vec![
        (
            "GET",
            "/v1/skills/a.test/alpha",
            String::new(),
            "alpha title",
        ),
        (
            "GET",
            "/v1/skills/a.test/alpha/descriptor",
            String::new(),
            "alpha title",
        ),
        (
            "GET",
            "/v1/skills/a.test/alpha/files/SKILL.md",
            String::new(),
            "alpha-file-marker",
        ),
        ("GET", "/skill/a.test/alpha", String::new(), "alpha title"),
        (
            "GET",
            "/mirror/a.test/.well-known/agent-skills/index.json",
            String::new(),
            "alpha",
        ),
        (
            "GET",
            "/mirror/a.test/.well-known/agent-skills/alpha/SKILL.md",
            String::new(),
            "alpha-file-marker",
        ),
        (
            "POST",
            "/rpc",
            rpc("describe_skill", r#"{"name":"a.test/alpha"}"#),
            "alpha title",
        ),
        (
            "POST",
            "/rpc",
            rpc(
                "read_skill_file",
                r#"{"name":"a.test/alpha","path":"SKILL.md"}"#,
            ),
            "alpha-file-marker",
        ),
    ]
}

#[tokio::test]
async fn every_endpoint_asks_the_policy() {
    let dir = tempfile::tempdir().unwrap();
    let allowing = state(&dir.path().join("allowing"));
    let refusing = state(&dir.path().join("refusing")).with_policy(Policy::refuse_all());

    for (method, uri, body) in listings() {
        let (status, shown) = send(&allowing, method, uri, &body).await;
        assert_eq!(status, StatusCode::OK, "{method} {uri}: {shown}");
        for name in ["alpha", "bravo"] {
            assert!(
                shown.contains(name),
                "{method} {uri} does not list {name}: {shown}"
            );
        }
        let (status, refused) = send(&refusing, method, uri, &body).await;
        assert_eq!(status, StatusCode::OK, "{method} {uri}: {refused}");
        for name in ["alpha", "bravo", "charlie"] {
            assert!(
                !refused.contains(name),
                "{method} {uri} lists {name} without asking the policy: {refused}"
            );
        }
    }

    for (method, uri, body, content) in shows() {
        let (status, shown) = send(&allowing, method, uri, &body).await;
        assert_eq!(status, StatusCode::OK, "{method} {uri}: {shown}");
        assert!(shown.contains(content), "{method} {uri}: {shown}");
        let (status, refused) = send(&refusing, method, uri, &body).await;
        assert!(!refused.contains(content), "{method} {uri}: {refused}");
        if method == "POST" {
            assert!(
                refused.contains(r#""code":-32001"#),
                "{uri} {body}: {refused}"
            );
        } else {
            assert_eq!(status, StatusCode::NOT_FOUND, "{method} {uri}: {refused}");
        }
    }

    // The domain list shows counts only: its error count is what the policy lets through.
    let (_, shown) = send(&allowing, "GET", "/v1/domains", "").await;
    assert!(shown.contains(r#""errors":2"#), "{shown}");
    let (_, refused) = send(&refusing, "GET", "/v1/domains", "").await;
    assert!(refused.contains(r#""errors":0"#), "{refused}");
    let (_, shown) = send(&allowing, "GET", "/domains", "").await;
    assert!(shown.contains("<td class=\"errors\">2</td>"), "{shown}");
    let (_, refused) = send(&refusing, "GET", "/domains", "").await;
    assert!(refused.contains("<td class=\"errors\">0</td>"), "{refused}");
}

#[tokio::test]
async fn anonymous_callers_lose_exactly_what_concerns_the_private_record() {
    let dir = tempfile::tempdir().unwrap();
    let state = state(dir.path());
    let request = Request::get("/v1/domains/a.test")
        .body(Body::empty())
        .unwrap();
    let response = crate::router(state).oneshot(request).await.unwrap();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    let detail: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    insta::assert_json_snapshot!(
        (&detail["errors"], &detail["diagnostics"], &detail["skills"]),
        @r#"
    [
      [
        {
          "code": "timeout",
          "message": "fetching alpha timed out",
          "url": "http://a.test/alpha/SKILL.md"
        }
      ],
      [
        {
          "severity": "warning",
          "code": "duplicate_name",
          "message": "a.test/alpha is listed twice"
        }
      ],
      2
    ]
    "#
    );
}

#[test]
fn the_index_agrees_with_the_policy() {
    let dir = tempfile::tempdir().unwrap();
    let state = state(dir.path());
    let policy = Policy::default();
    for caller in [Caller::Anonymous, Caller::Authenticated] {
        for (name, access) in [
            ("alpha", Access::Public),
            ("bravo", Access::Private),
            ("charlie", Access::Restricted),
        ] {
            let found = state
                .directory()
                .index_for_tests()
                .get(&format!("a.test/{name}"), caller)
                .unwrap();
            assert_eq!(
                found.is_some(),
                policy.allows(caller, access),
                "{caller:?} {access:?}"
            );
        }
    }
}

// See: the hardening issue, defect 2: a crawl that saw a record unchanged did not advance its
// `last_seen` anywhere a caller could see it.
#[tokio::test]
async fn a_record_seen_again_unchanged_shows_its_new_last_seen() {
    let dir = tempfile::tempdir().unwrap();
    let state = state(dir.path());
    let (_, before) = send(&state, "GET", "/v1/skills/a.test/alpha", "").await;
    let before: serde_json::Value = serde_json::from_str(&before).unwrap();
    assert_eq!(before["last_seen"], "1970-01-01T00:00:00Z");

    // The next crawl sees alpha unchanged: no change is logged, so the index is not touched.
    let later = OffsetDateTime::now_utc();
    let domain = "a.test".parse().unwrap();
    let seen_again: Vec<Skill> = state
        .directory()
        .store_for_tests()
        .records_of(&domain)
        .unwrap()
        .into_iter()
        .map(|stored| Skill {
            last_seen: later,
            ..stored.skill
        })
        .collect();
    let last_seq = state.directory().store_for_tests().last_seq().unwrap();
    let status = state
        .directory()
        .store_for_tests()
        .domain(&domain)
        .unwrap()
        .unwrap();
    state
        .directory()
        .store_for_tests()
        .apply_domain(&status, seen_again, later)
        .unwrap();
    assert_eq!(
        state.directory().store_for_tests().last_seq().unwrap(),
        last_seq
    );

    let (_, after) = send(&state, "GET", "/v1/skills/a.test/alpha", "").await;
    let after: serde_json::Value = serde_json::from_str(&after).unwrap();
    let shown = OffsetDateTime::parse(
        after["last_seen"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    assert_eq!(shown, later);
    assert_eq!(after["last_changed"], before["last_changed"]);
}

// See: the hardening issue ("the directory sheds load instead of queueing without bound").
// Kept here beside the fixture state it needs.
#[tokio::test]
async fn past_the_work_limit_requests_are_refused_at_once_but_health_answers() {
    let dir = tempfile::tempdir().unwrap();
    let state = state(dir.path());
    // Every permit taken, as by requests in flight.
    let mut held = Vec::new();
    while let Some(permit) = state.try_start_work() {
        held.push(permit);
    }
    assert_eq!(held.len(), crate::DEFAULT_MAX_IN_FLIGHT);

    for uri in [
        "/v1/search?q=alpha",
        "/v1/domains",
        "/",
        "/.well-known/skill-sharing",
    ] {
        let request = Request::builder().uri(uri).body(Body::empty()).unwrap();
        let response = crate::router(state.clone()).oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE, "{uri}");
        assert_eq!(response.headers()["retry-after"], "1", "{uri}");
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        // A page is refused with a page, which says what to do.
        if uri == "/" {
            let page = String::from_utf8_lossy(&bytes);
            assert!(page.contains("The directory is busy"), "{page}");
            continue;
        }
        let body: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(body["error"]["code"], "overloaded", "{uri}");
    }
    for uri in ["/healthz", "/metrics"] {
        let (status, _) = send(&state, "GET", uri, "").await;
        assert_eq!(status, StatusCode::OK, "{uri}");
    }

    drop(held);
    let (status, _) = send(&state, "GET", "/v1/search?q=alpha", "").await;
    assert_eq!(status, StatusCode::OK);
}
