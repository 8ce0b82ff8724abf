//! Hostile input gets a 4xx in the error shape, never a 5xx and never a panic; and any search
//! text is a valid query.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};

use crate::fixture::{As, assert_error_shape, get, rpc, send_to, state};

#[tokio::test]
async fn query_syntax_is_never_an_error() {
    for q in [
        "((((",
        "))",
        "\"unclosed",
        "a AND OR NOT",
        "*",
        "~~~",
        "%00",
        "名前 pdf",
        "+-!^",
    ] {
        let uri = format!(
            "/v1/search?q={}",
            url::form_urlencoded::byte_serialize(q.as_bytes()).collect::<String>()
        );
        let reply = get(&uri, As::Anonymous).await;
        assert_eq!(reply.status, StatusCode::OK, "{q}: {}", reply.text());
        assert_eq!(reply.json()["query"], q.trim());
    }
}

#[tokio::test]
async fn bad_parameters_are_400_in_the_error_shape() {
    // The largest URI the `http` crate represents is 64 KiB; a longer one (a 100 KB `q`) is
    // refused by the HTTP server before routing (see `serve::a_100_kb_query_is_refused`).
    let huge_q = format!("/v1/search?q={}", "a".repeat(60 * 1024));
    let long_q = format!("/v1/search?q={}", "a".repeat(1001));
    let cases: Vec<(String, &str)> = vec![
        (huge_q, "invalid_parameter"),
        (long_q, "invalid_parameter"),
        ("/v1/search?limit=100000".into(), "invalid_parameter"),
        ("/v1/search?limit=0".into(), "invalid_parameter"),
        ("/v1/search?limit=abc".into(), "invalid_parameter"),
        ("/v1/search?offset=-1".into(), "invalid_parameter"),
        (
            "/v1/search?offset=99999999999999999999999".into(),
            "invalid_parameter",
        ),
        ("/v1/search?q=a&q=b".into(), "invalid_parameter"),
        (
            format!("/v1/search?type={}", "x,".repeat(60)),
            "invalid_parameter",
        ),
        ("/v1/changes?limit=101".into(), "invalid_parameter"),
        ("/v1/changes?since=yesterday".into(), "invalid_parameter"),
        ("/v1/changes?cursor=forged".into(), "invalid_cursor"),
        (
            "/v1/changes?cursor=AAAAAAAAAAAAAAAAAAAA".into(),
            "invalid_cursor",
        ),
        ("/v1/domains?cursor=zz".into(), "invalid_cursor"),
        (
            "/skills?cursor=6a6a6a6a6a6a6a6a6a6a6a6a".into(),
            "invalid_cursor",
        ),
        ("/skills?limit=-5".into(), "invalid_parameter"),
        ("/v1/skills/%FF%FE/x".into(), "invalid_path"),
        ("/v1/skills/pdfworks.test/%C0%AF".into(), "invalid_path"),
        ("/v1/skills/bad%20domain/x".into(), "invalid_path"),
        ("/v1/domains/not%2Fa%2Fdomain".into(), "invalid_path"),
        (
            "/v1/skills/pdfworks.test/pdf-merge/files/..%2F..%2Fetc%2Fpasswd".into(),
            "invalid_path",
        ),
        (
            "/v1/skills/pdfworks.test/pdf-merge/files/a/../../SKILL.md".into(),
            "invalid_path",
        ),
        (
            "/v1/skills/pdfworks.test/pdf-merge/files/%2Fetc%2Fpasswd".into(),
            "invalid_path",
        ),
        (
            "/v1/skills/pdfworks.test/pdf-merge/files/a%5C..%5Cb".into(),
            "invalid_path",
        ),
        (
            "/v1/skills/pdfworks.test/pdf-merge/files/%FF".into(),
            "invalid_path",
        ),
    ];
    for (uri, code) in cases {
        let reply = get(&uri, As::Anonymous).await;
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "{}: {}",
            &uri[..uri.len().min(80)],
            reply.text()
        );
        assert_error_shape(&reply, code);
    }
}

#[tokio::test]
async fn a_cursor_from_another_listing_or_past_the_log_is_refused() {
    let registry = get("/skills?limit=1", As::Anonymous).await.json();
    let cursor = registry["next_cursor"].as_str().unwrap().to_owned();
    let reply = get(&format!("/v1/changes?cursor={cursor}"), As::Anonymous).await;
    assert_error_shape(&reply, "invalid_cursor");
    let reply = get(&format!("/v1/domains?cursor={cursor}"), As::Anonymous).await;
    assert_error_shape(&reply, "invalid_cursor");

    // A changes cursor with a valid checksum but past the end of the log.
    let page = get("/v1/changes?limit=1", As::Token).await.json();
    let cursor = page["next_cursor"].as_str().unwrap();
    let reply = get(&format!("/v1/changes?cursor={cursor}"), As::Token).await;
    assert_eq!(reply.status, StatusCode::OK);
    let mut tampered = cursor.to_owned().into_bytes();
    let last_payload_digit = tampered.len() - 13;
    tampered[last_payload_digit] = if tampered[last_payload_digit] == b'9' {
        b'8'
    } else {
        b'9'
    };
    let reply = get(
        &format!(
            "/v1/changes?cursor={}",
            String::from_utf8(tampered).unwrap()
        ),
        As::Token,
    )
    .await;
    assert_error_shape(&reply, "invalid_cursor");
}

#[tokio::test]
async fn unknown_domains_and_skills_are_404() {
    for uri in [
        "/v1/domains/unknown.test",
        "/v1/skills/unknown.test/anything",
        "/v1/skills/unknown.test/anything/descriptor",
        "/v1/skills/unknown.test/anything/files/SKILL.md",
    ] {
        let reply = get(uri, As::Anonymous).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{uri}");
        assert_error_shape(&reply, "not_found");
    }
    let reply = get("/v1/search?domain=unknown.test", As::Anonymous).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.json()["total"], 0);
}

#[tokio::test]
async fn oversized_and_odd_bodies() {
    let huge = "x".repeat(api::DEFAULT_MAX_BODY_BYTES + 1);
    let reply = rpc(&huge, As::Anonymous).await;
    assert_eq!(reply.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_error_shape(&reply, "payload_too_large");

    let request = Request::builder()
        .method(Method::POST)
        .uri("/rpc")
        .header(header::CONTENT_TYPE, "application/octet-stream")
        .body(Body::from(vec![0xff, 0xfe, 0x00]))
        .unwrap();
    let reply = send_to(state(), request).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.json()["error"]["code"], -32700);
}

#[tokio::test]
async fn hostile_rpc_paths_are_invalid_params() {
    for path in [
        "../../etc/passwd",
        "/etc/passwd",
        "a/../../b",
        "C:\\x",
        "",
        "scripts/../SKILL.md",
    ] {
        let body = serde_json::json!({
            "jsonrpc": "2.0", "id": 1, "method": "read_skill_file",
            "params": {"name": "legacy-tools.test/csv-cleanup", "path": path},
        });
        let reply = rpc(&body.to_string(), As::Anonymous).await.json();
        assert_eq!(reply["error"]["code"], -32602, "{path}: {reply}");
    }
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"read_skill_file","params":{"name":"legacy-tools.test/csv-cleanup","path":"scripts/missing.py"}}"#;
    let reply = rpc(body, As::Anonymous).await.json();
    assert_eq!(reply["error"]["code"], -32002, "{reply}");
}
