//! No private record leaks to an anonymous caller, on any endpoint (docs/api.md): not by
//! id, title or description, nor by a total or a facet count. The fixture web has one private
//! record, `services.test/test.services.payroll-audit-v1` ("Payroll Audit"); every endpoint is
//! asked anonymously (it must not mention it) and with the token (it must, where the endpoint
//! can show it), and with a wrong token (401 with `WWW-Authenticate`).

use axum::http::{StatusCode, header};
use serde_json::Value;

use crate::fixture::{As, PRIVATE_ID, assert_error_shape, get, rpc};

/// Every GET endpoint, each with a request that would show the private record to a caller
/// allowed to see it.
const ENDPOINTS: [&str; 20] = [
    "/v1/search?q=payroll",
    "/v1/search",
    "/v1/search?access=private",
    "/v1/search?type=task",
    "/v1/search?domain=services.test&limit=100",
    "/v1/skills/services.test/test.services.payroll-audit-v1",
    "/v1/skills/services.test/test.services.payroll-audit-v1/descriptor",
    "/v1/domains",
    "/v1/domains/services.test",
    "/v1/changes",
    "/v1/changes?since=1970-01-01T00:00:00Z",
    "/.well-known/skill-sharing",
    "/.well-known/skill-sharing?type=task",
    "/skills",
    "/skills?type=task",
    "/",
    "/?q=payroll",
    "/?type=task",
    "/skill/services.test/test.services.payroll-audit-v1",
    "/domains/services.test",
];

/// True when `text` shows the private record's content (its title, description or descriptor
/// URL), as opposed to echoing what the request asked for.
fn mentions_private(text: &str) -> bool {
    [
        "Payroll Audit",
        "Audits a payroll run",
        "payroll-audit-v1.json",
    ]
    .iter()
    .any(|needle| text.contains(needle))
}

/// True when `text` names the private record by id.
fn names_private(text: &str) -> bool {
    text.contains("payroll-audit-v1")
}

#[tokio::test]
async fn anonymous_callers_never_see_the_private_record() {
    for uri in ENDPOINTS {
        let anonymous = get(uri, As::Anonymous).await;
        assert!(
            !mentions_private(&anonymous.text()),
            "{uri} leaks the private record:\n{}",
            anonymous.text()
        );
        if !uri.contains("payroll") {
            assert!(
                !names_private(&anonymous.text()),
                "{uri} names the private record"
            );
        }
        assert!(
            anonymous.status.is_success() || anonymous.status == StatusCode::NOT_FOUND,
            "{uri}: {}",
            anonymous.status
        );

        let authenticated = get(uri, As::Token).await;
        assert_eq!(authenticated.status, StatusCode::OK, "{uri}");
        let shows_it = mentions_private(&authenticated.text());
        // The JSON domain status shows counts, not names.
        if !uri.starts_with("/v1/domains") {
            assert!(
                shows_it,
                "{uri} does not show the private record with a token"
            );
        }
    }
}

#[tokio::test]
async fn a_private_record_asked_for_anonymously_is_as_absent_as_a_missing_one() {
    for (private, missing) in [
        (
            "/v1/skills/services.test/test.services.payroll-audit-v1",
            "/v1/skills/services.test/test.services.no-such-v1",
        ),
        (
            "/v1/skills/services.test/test.services.payroll-audit-v1/descriptor",
            "/v1/skills/services.test/test.services.no-such-v1/descriptor",
        ),
        (
            "/v1/skills/services.test/test.services.payroll-audit-v1/files/SKILL.md",
            "/v1/skills/services.test/test.services.no-such-v1/files/SKILL.md",
        ),
    ] {
        let private = get(private, As::Anonymous).await;
        let missing = get(missing, As::Anonymous).await;
        assert_eq!(private.status, StatusCode::NOT_FOUND);
        assert_eq!(missing.status, StatusCode::NOT_FOUND);
        assert_error_shape(&private, "not_found");
        let shape = |reply: &crate::fixture::Reply| {
            reply.json()["error"]["message"]
                .as_str()
                .unwrap()
                .replace("payroll-audit", "X")
                .replace("no-such", "X")
        };
        assert_eq!(shape(&private), shape(&missing));
    }
}

#[tokio::test]
async fn totals_and_facet_counts_leave_the_private_record_out() {
    let anonymous = get("/v1/search?limit=1", As::Anonymous).await.json();
    let authenticated = get("/v1/search?limit=1", As::Token).await.json();
    // `Release-Notes` (verdict `invalid`) is left out of both; the private record of the
    // anonymous view.
    assert_eq!(anonymous["total"], 10);
    assert_eq!(authenticated["total"], 11);
    assert_eq!(anonymous["facets"]["access"].get("private"), None);
    assert_eq!(authenticated["facets"]["access"]["private"], 1);
    assert_eq!(anonymous["facets"]["domain"]["services.test"], 4);
    assert_eq!(authenticated["facets"]["domain"]["services.test"], 5);
    assert_eq!(anonymous["facets"]["capability_type"].get("task"), None);

    let domains = get("/v1/domains", As::Anonymous).await.json();
    let services = domains["domains"]
        .as_array()
        .unwrap()
        .iter()
        .find(|domain| domain["domain"] == "services.test")
        .unwrap()
        .clone();
    assert_eq!(services["skills"], 4);
    let detail = get("/v1/domains/services.test", As::Token).await.json();
    assert_eq!(detail["skills"], 5);
}

#[tokio::test]
async fn rpc_hides_the_private_record() {
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"list_skills","params":{"namespace":"services.test","detail":"summary"}}"#;
    let anonymous = rpc(list, As::Anonymous).await.json();
    assert!(!mentions_private(&anonymous.to_string()), "{anonymous}");
    assert!(!names_private(&anonymous.to_string()), "{anonymous}");
    assert_eq!(anonymous["result"]["skills"].as_array().unwrap().len(), 4);
    let authenticated = rpc(list, As::Token).await.json();
    assert_eq!(
        authenticated["result"]["skills"].as_array().unwrap().len(),
        5
    );

    for method in [
        format!(r#"{{"jsonrpc":"2.0","id":2,"method":"describe_skill","params":{{"name":"{PRIVATE_ID}"}}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":2,"method":"read_skill_file","params":{{"name":"{PRIVATE_ID}","path":"SKILL.md"}}}}"#),
        r#"{"jsonrpc":"2.0","id":2,"method":"describe_skill","params":{"name":"test.services.payroll-audit-v1@services.test"}}"#.to_owned(),
    ] {
        let anonymous = rpc(&method, As::Anonymous).await.json();
        assert_eq!(anonymous["error"]["code"], -32001, "{anonymous}");
        let authenticated = rpc(&method, As::Token).await.json();
        let code = &authenticated["error"]["code"];
        // With the token the skill is found (read_skill_file then says it has no SKILL.md).
        assert!(authenticated.get("result").is_some() || *code == -32002, "{authenticated}");
    }
}

#[tokio::test]
async fn a_wrong_token_is_401_with_www_authenticate_everywhere() {
    for uri in ENDPOINTS {
        let reply = get(uri, As::WrongToken).await;
        assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{uri}");
        assert!(
            reply
                .header(header::WWW_AUTHENTICATE)
                .is_some_and(|value| value.starts_with("Bearer")),
            "{uri}"
        );
        let is_web_page = uri == "/"
            || uri.starts_with("/?")
            || uri.starts_with("/skill/")
            || uri.starts_with("/domains/");
        if is_web_page {
            assert!(reply.text().contains("unauthorized"), "{uri}");
        } else {
            assert_error_shape(&reply, "unauthorized");
        }
    }
    let reply = rpc(
        r#"{"jsonrpc":"2.0","id":1,"method":"list_skills"}"#,
        As::WrongToken,
    )
    .await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
    assert_error_shape(&reply, "unauthorized");
}

#[tokio::test]
async fn changes_hide_private_upserts_from_anonymous_mirrors() {
    let anonymous = get("/v1/changes", As::Anonymous).await.json();
    let ids: Vec<&Value> = anonymous["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|change| &change["id"])
        .collect();
    assert_eq!(ids.len(), 11);
    assert!(!ids.iter().any(|id| *id == PRIVATE_ID));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn domain_errors_about_a_private_record_are_hidden_from_anonymous_callers() {
    use axum::body::Body;
    use axum::http::Request;
    use store::CrawlErrorEntry;

    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_owned();
    let state = tokio::task::spawn_blocking(move || {
        let (store, blobs) = crate::fixture::crawl_fixture_web(&data);
        // Pretend the last crawl of services.test failed to fetch two descriptors, one of
        // them the private skill's.
        let domain: formats::Domain = "services.test".parse().unwrap();
        let mut status = store.blocking().domain(&domain).unwrap().unwrap();
        for (slug, code) in [
            ("payroll-audit-v1", "http_status"),
            ("translate-v2", "timeout"),
        ] {
            status.errors.push(CrawlErrorEntry {
                code: code.to_owned(),
                message: format!("descriptor test.services.{slug} could not be fetched"),
                url: format!("http://services.test/descriptors/{slug}.json"),
                record: Some(
                    format!("services.test/test.services.{slug}")
                        .parse()
                        .unwrap(),
                ),
            });
        }
        let live: Vec<formats::Skill> = store
            .blocking()
            .records_of(&domain)
            .unwrap()
            .into_iter()
            .map(|record| record.skill)
            .collect();
        store
            .blocking()
            .apply_domain(&status, live, time::OffsetDateTime::now_utc())
            .unwrap();
        let indexer::Index { mut writer, search } = indexer::Index::open_or_create(
            &data.join(indexer::INDEX_DIR),
            indexer::IndexConfig::default(),
        )
        .unwrap();
        indexer::sync(&store, &mut writer).unwrap();
        search.reload().unwrap();
        api::AppState::new(
            search,
            store,
            blobs,
            api::Tokens::from_list([crate::fixture::TOKEN]),
            api::ServeConfig::default(),
        )
    })
    .await
    .unwrap();

    for (who, uri) in [
        (As::Anonymous, "/v1/domains/services.test"),
        (As::Anonymous, "/domains/services.test"),
        (As::Token, "/v1/domains/services.test"),
    ] {
        let mut request = Request::get(uri);
        if who == As::Token {
            request = request.header("authorization", format!("Bearer {}", crate::fixture::TOKEN));
        }
        let reply =
            crate::fixture::send_to(state.clone(), request.body(Body::empty()).unwrap()).await;
        let text = reply.text();
        assert!(
            text.contains("translate-v2.json"),
            "{uri}: the public error stays"
        );
        assert_eq!(
            text.contains("payroll-audit-v1"),
            who == As::Token,
            "{uri}: {text}"
        );
    }
    let list = crate::fixture::send_to(
        state.clone(),
        Request::get("/v1/domains").body(Body::empty()).unwrap(),
    )
    .await
    .json();
    let services = list["domains"]
        .as_array()
        .unwrap()
        .iter()
        .find(|domain| domain["domain"] == "services.test")
        .unwrap()
        .clone();
    assert_eq!(services["errors"], 1);
}
