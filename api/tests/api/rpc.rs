//! JSON-RPC 2.0 conformance: pagination returns every skill exactly once across pages, and
//! errors are the specification's error objects.

use std::collections::BTreeSet;

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::fixture::{As, rpc};

async fn call(body: Value, who: As) -> Value {
    let reply = rpc(&body.to_string(), who).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    reply.json()
}

/// Lists every skill `limit` at a time (in `namespace`, when given).
async fn list_all(limit: u64, namespace: Option<&str>, who: As) -> Vec<String> {
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..100 {
        let mut params = json!({ "limit": limit });
        if let Some(namespace) = namespace {
            params["namespace"] = json!(namespace);
        }
        if let Some(cursor) = &cursor {
            params["cursor"] = json!(cursor);
        }
        let answer = call(
            json!({"jsonrpc": "2.0", "id": 7, "method": "list_skills", "params": params}),
            who,
        )
        .await;
        assert_eq!(answer["id"], 7);
        let result = &answer["result"];
        let page = result["skills"].as_array().unwrap();
        assert!(page.len() <= limit as usize);
        for skill in page {
            assert_eq!(skill.as_object().unwrap().len(), 2, "names detail: {skill}");
            names.push(skill["name"].as_str().unwrap().to_owned());
        }
        match result["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return names,
        }
    }
    panic!("pagination did not end");
}

#[tokio::test]
async fn pagination_returns_every_skill_exactly_once_in_a_deterministic_order() {
    for who in [As::Anonymous, As::Token] {
        let whole = list_all(100, None, who).await;
        // Every skill but the private one (for anonymous callers) and `sloppy.test`'s
        // `Release-Notes`, whose name agent clients refuse (verdict `invalid`): the directory
        // re-publishes no skill a client could not install.
        let expected = if who == As::Anonymous { 10 } else { 11 };
        assert_eq!(whole.len(), expected);
        let mut sorted = whole.clone();
        sorted.sort();
        assert_eq!(whole, sorted, "id order");
        assert_eq!(
            sorted.iter().collect::<BTreeSet<_>>().len(),
            whole.len(),
            "no repeats"
        );
        for limit in [1, 2, 3, 5, 7] {
            assert_eq!(list_all(limit, None, who).await, whole, "limit {limit}");
        }
        let services = list_all(2, Some("services.test"), who).await;
        assert!(
            services
                .iter()
                .all(|name| name.starts_with("services.test/"))
        );
        // The six listed skills of the three other sites.
        assert_eq!(services.len(), expected - 6);
    }
}

#[tokio::test]
async fn a_cursor_of_another_namespace_or_forged_is_invalid_params() {
    let first = call(json!({"jsonrpc":"2.0","id":1,"method":"list_skills","params":{"limit":1,"namespace":"pdfworks.test"}}), As::Anonymous).await;
    let cursor = first["result"]["next_cursor"].as_str().unwrap();
    for params in [
        json!({"cursor": cursor, "namespace": "services.test"}),
        json!({"cursor": cursor}),
        json!({"cursor": "forged"}),
        json!({"cursor": format!("{cursor}00")}),
    ] {
        let answer = call(
            json!({"jsonrpc":"2.0","id":1,"method":"list_skills","params": params}),
            As::Anonymous,
        )
        .await;
        assert_eq!(answer["error"]["code"], -32602, "{params}: {answer}");
    }
}

#[tokio::test]
async fn errors_follow_json_rpc_2_0() {
    let cases: Vec<(&str, Value, i64)> = vec![
        ("{not json", Value::Null, -32700),
        ("", Value::Null, -32700),
        ("42", Value::Null, -32600),
        ("[]", Value::Null, -32600),
        (r#"{"id":1,"method":"list_skills"}"#, json!(1), -32600),
        (
            r#"{"jsonrpc":"1.0","id":1,"method":"list_skills"}"#,
            json!(1),
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"list_skills"}"#,
            Value::Null,
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":"x","method":5}"#,
            json!("x"),
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":"x","method":"list_skills","params":"oops"}"#,
            json!("x"),
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"drop_tables"}"#,
            json!(2),
            -32601,
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"list_skills","params":[1,2]}"#,
            json!(3),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"list_skills","params":{"limit":0}}"#,
            json!(3),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"list_skills","params":{"limit":101}}"#,
            json!(3),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"list_skills","params":{"limit":-1}}"#,
            json!(3),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"list_skills","params":{"detail":"everything"}}"#,
            json!(3),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"list_skills","params":{"namespace":"not a domain"}}"#,
            json!(3),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"describe_skill","params":{}}"#,
            json!(4),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"describe_skill","params":{"name":"pdfworks.test/pdf-merge","detail":"all"}}"#,
            json!(4),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"describe_skill","params":{"name":"no-slash-no-at"}}"#,
            json!(4),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"describe_skill","params":{"name":"pdfworks.test/nothing"}}"#,
            json!(4),
            -32001,
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"describe_skill","params":{"name":"services.test/test.services.translate-v2","version":"9.9.9"}}"#,
            json!(4),
            -32001,
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"read_skill_file","params":{"name":"pdfworks.test/pdf-merge"}}"#,
            json!(5),
            -32602,
        ),
    ];
    for (body, id, code) in cases {
        let reply = rpc(body, As::Anonymous).await;
        assert_eq!(reply.status, StatusCode::OK, "{body}");
        let answer = reply.json();
        assert_eq!(answer["jsonrpc"], "2.0", "{body}: {answer}");
        assert_eq!(answer["id"], id, "{body}: {answer}");
        assert_eq!(answer["error"]["code"], code, "{body}: {answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
        assert!(answer.get("result").is_none());
    }
}

#[tokio::test]
async fn batches_and_notifications() {
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "list_skills", "params": {"limit": 1}},
        {"jsonrpc": "2.0", "method": "list_skills"},
        {"jsonrpc": "2.0", "id": 2, "method": "nope"},
        5,
    ]);
    let answer = call(batch, As::Anonymous).await;
    let answers = answer.as_array().unwrap();
    assert_eq!(
        answers.len(),
        3,
        "the notification gets no answer: {answer}"
    );
    assert_eq!(answers[0]["id"], 1);
    assert!(answers[0]["result"]["skills"].is_array());
    assert_eq!(answers[1]["error"]["code"], -32601);
    assert_eq!(answers[2]["error"]["code"], -32600);
    assert_eq!(answers[2]["id"], Value::Null);

    let only_notifications = rpc(
        r#"[{"jsonrpc":"2.0","method":"list_skills"},{"jsonrpc":"2.0","method":"nope"}]"#,
        As::Anonymous,
    )
    .await;
    assert_eq!(only_notifications.status, StatusCode::NO_CONTENT);
    assert!(only_notifications.body.is_empty());
    let notification = rpc(r#"{"jsonrpc":"2.0","method":"list_skills"}"#, As::Anonymous).await;
    assert_eq!(notification.status, StatusCode::NO_CONTENT);

    let too_many: Vec<Value> = (0..21)
        .map(|id| json!({"jsonrpc": "2.0", "id": id, "method": "list_skills"}))
        .collect();
    let answer = call(Value::Array(too_many), As::Anonymous).await;
    assert_eq!(answer["error"]["code"], -32600);
}

#[tokio::test]
async fn describe_skill_details() {
    let manifest = call(json!({"jsonrpc":"2.0","id":1,"method":"describe_skill","params":{"name":"pdfworks.test/pdf-merge","detail":"manifest"}}), As::Anonymous).await;
    let skill = &manifest["result"]["skill"];
    assert_eq!(skill["manifest"]["name"], "pdfworks.test/pdf-merge");
    assert_eq!(skill["manifest"]["namespace"], "pdfworks.test");
    assert_eq!(skill["manifest"]["kind"], "instruction");
    assert!(skill.get("skill_md_frontmatter").is_none());
    assert!(skill.get("skill_md_content").is_none());

    let summary = call(json!({"jsonrpc":"2.0","id":1,"method":"describe_skill","params":{"name":"pdf-merge@pdfworks.test"}}), As::Anonymous).await;
    let skill = &summary["result"]["skill"];
    assert_eq!(skill["skill_md_frontmatter"]["name"], "pdf-merge");
    assert!(skill.get("skill_md_content").is_none());

    let full = call(json!({"jsonrpc":"2.0","id":1,"method":"describe_skill","params":{"name":"pdfworks.test/pdf-merge","detail":"full"}}), As::Anonymous).await;
    let content = full["result"]["skill"]["skill_md_content"]
        .as_str()
        .unwrap();
    assert!(content.starts_with("---\nname: pdf-merge"), "{content}");

    let action = call(json!({"jsonrpc":"2.0","id":1,"method":"describe_skill","params":{"name":"services.test/test.services.translate-v2","version":"2.0.1"}}), As::Anonymous).await;
    let skill = &action["result"]["skill"];
    assert_eq!(skill["manifest"]["kind"], "action");
    assert_eq!(
        skill["manifest"]["descriptor"]["id"],
        "test.services.translate-v2@services.test"
    );
    assert_eq!(skill["skill_md_frontmatter"], Value::Null);
}
