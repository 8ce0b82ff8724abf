//! `GET /openapi.json` against the server's real answers: every path of the document is asked
//! for, each answer's status is one the document declares for it, and each JSON body is valid
//! against the schema the document gives (JSON Schema 2020-12, formats checked).
//!
//! See: The front door and the operator's kit (a machine-readable API).

use std::collections::BTreeSet;

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::fixture::{As, get};

/// One request: the document's path template it exercises, the URI, and who asks.
struct Case {
    template: &'static str,
    uri: &'static str,
    who: As,
}

const fn case(template: &'static str, uri: &'static str, who: As) -> Case {
    Case { template, uri, who }
}

/// Requests for every path of the document, with answers of several kinds each (hits and
/// none, a record with files and one without, errors).
fn cases() -> Vec<Case> {
    vec![
        case("/v1/search", "/v1/search?q=pdf", As::Anonymous),
        case("/v1/search", "/v1/search?q=&verdict=any", As::Token),
        case(
            "/v1/search",
            "/v1/search?q=nothing+matches+this+zzzz",
            As::Anonymous,
        ),
        case("/v1/search", "/v1/search?limit=1000", As::Anonymous),
        case("/v1/search", "/v1/search?q=pdf", As::WrongToken),
        case(
            "/v1/skills/{domain}/{name}",
            "/v1/skills/pdfworks.test/pdf-merge",
            As::Anonymous,
        ),
        case(
            "/v1/skills/{domain}/{name}",
            "/v1/skills/legacy-tools.test/csv-cleanup",
            As::Anonymous,
        ),
        case(
            "/v1/skills/{domain}/{name}",
            "/v1/skills/services.test/test.services.payroll-audit-v1",
            As::Token,
        ),
        case(
            "/v1/skills/{domain}/{name}",
            "/v1/skills/pdfworks.test/no-such-skill",
            As::Anonymous,
        ),
        case(
            "/v1/skills/{domain}/{name}/files/{path}",
            "/v1/skills/legacy-tools.test/csv-cleanup/files/scripts/clean.py",
            As::Anonymous,
        ),
        case(
            "/v1/skills/{domain}/{name}/files/{path}",
            "/v1/skills/legacy-tools.test/csv-cleanup/files/no/such.py",
            As::Anonymous,
        ),
        case(
            "/v1/skills/{domain}/{name}/descriptor",
            "/v1/skills/services.test/test.services.translate-v2/descriptor",
            As::Anonymous,
        ),
        case("/v1/domains", "/v1/domains", As::Anonymous),
        case("/v1/domains", "/v1/domains?limit=2", As::Token),
        case(
            "/v1/domains",
            "/v1/domains?cursor=not-a-cursor",
            As::Anonymous,
        ),
        case(
            "/v1/domains/{domain}",
            "/v1/domains/pdfworks.test",
            As::Anonymous,
        ),
        case("/v1/domains/{domain}", "/v1/domains/sloppy.test", As::Token),
        case(
            "/v1/domains/{domain}",
            "/v1/domains/never-crawled.test",
            As::Anonymous,
        ),
        case("/v1/changes", "/v1/changes", As::Anonymous),
        case("/v1/changes", "/v1/changes?limit=3", As::Token),
        case("/v1/changes", "/v1/changes?since=yesterday", As::Anonymous),
        case("/v1/export", "/v1/export?layout=jsonl", As::Anonymous),
        case("/v1/export", "/v1/export?layout=zip", As::Anonymous),
        case(
            "/mirror/{domain}/.well-known/agent-skills/{path}",
            "/mirror/pdfworks.test/.well-known/agent-skills/index.json",
            As::Anonymous,
        ),
        case(
            "/mirror/{domain}/.well-known/agent-skills/{path}",
            "/mirror/legacy-tools.test/.well-known/agent-skills/csv-cleanup.tar.gz",
            As::Anonymous,
        ),
        case(
            "/mirror/{domain}/.well-known/agent-skills/{path}",
            "/mirror/pdfworks.test/.well-known/agent-skills/nothing.zip",
            As::Anonymous,
        ),
        case(
            "/.well-known/skill-sharing",
            "/.well-known/skill-sharing",
            As::Anonymous,
        ),
        case("/skills", "/skills?type=api", As::Token),
        case("/healthz", "/healthz", As::Anonymous),
        case("/metrics", "/metrics", As::Anonymous),
        case("/openapi.json", "/openapi.json", As::Anonymous),
    ]
}

/// Returns the document's schema for `template`'s GET answer with `status` and
/// `content_type`, or why the document does not declare that answer: `Ok(None)` for a media
/// type declared without a schema (bytes, text).
fn schema_for(
    document: &Value,
    template: &str,
    status: StatusCode,
    content_type: &str,
) -> Result<Option<Value>, String> {
    let responses = &document["paths"][template]["get"]["responses"];
    let response = &responses[status.as_str()];
    if response.is_null() {
        return Err(format!(
            "GET {template}: status {status} is not in the document (it declares {:?})",
            responses
                .as_object()
                .map(|map| map.keys().collect::<Vec<_>>())
        ));
    }
    let media_type = content_type.split(';').next().unwrap_or_default().trim();
    let content = response["content"].as_object().cloned().unwrap_or_default();
    let declared = content
        .get(media_type)
        .or_else(|| content.get("*/*"))
        .ok_or_else(|| {
            format!(
                "GET {template} {status}: {media_type:?} is not a declared media type ({:?})",
                content.keys().collect::<Vec<_>>()
            )
        })?;
    Ok(declared["schema"]
        .as_object()
        .filter(|_| media_type == "application/json")
        .map(|schema| Value::Object(schema.clone())))
}

/// Validates `body` against `schema`, whose references point into the document's components.
fn validate(document: &Value, schema: Value, body: &Value) -> Vec<String> {
    let mut root = match schema {
        Value::Object(map) => map,
        other => return vec![format!("a schema that is not an object: {other}")],
    };
    root.insert(
        "$schema".to_owned(),
        json!("https://json-schema.org/draft/2020-12/schema"),
    );
    root.insert("components".to_owned(), document["components"].clone());
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&Value::Object(root))
        .unwrap_or_else(|error| panic!("the document's schema does not compile: {error}"));
    validator
        .iter_errors(body)
        .map(|error| format!("{error} at {}", error.instance_path()))
        .collect()
}

#[tokio::test]
async fn every_endpoint_answers_as_the_document_says() {
    let reply = get("/openapi.json", As::Anonymous).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(
        reply
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("application/json")
    );
    let document = reply.json();
    assert_eq!(document["openapi"], "3.1.0", "{document}");
    assert!(document["components"]["securitySchemes"]["bearer"].is_object());

    let cases = cases();
    // Every path of the document is asked for here; a new endpoint needs its case.
    let documented: BTreeSet<&str> = document["paths"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let asked: BTreeSet<&str> = cases.iter().map(|case| case.template).collect();
    assert_eq!(
        documented, asked,
        "documented paths and the ones this test asks for"
    );

    let mut failures = Vec::new();
    let mut validated = 0;
    for case in &cases {
        let reply = get(case.uri, case.who).await;
        let content_type = reply
            .headers
            .get("content-type")
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        match schema_for(&document, case.template, reply.status, &content_type) {
            Ok(Some(schema)) => {
                let body: Value = serde_json::from_slice(&reply.body).unwrap();
                for error in validate(&document, schema, &body) {
                    failures.push(format!("{} ({}): {error}", case.uri, reply.status));
                }
                validated += 1;
            }
            Ok(None) => {}
            Err(why) => failures.push(format!("{}: {why}", case.uri)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(validated >= 25, "only {validated} answers validated");
}

/// The document is checked, not only produced: a body that breaks a schema fails.
#[tokio::test]
async fn a_body_that_breaks_the_schema_is_caught() {
    let document = get("/openapi.json", As::Anonymous).await.json();
    let schema = schema_for(&document, "/v1/search", StatusCode::OK, "application/json")
        .unwrap()
        .unwrap();
    let mut body = get("/v1/search?q=pdf", As::Anonymous).await.json();
    assert!(validate(&document, schema.clone(), &body).is_empty());
    body["hits"][0]["access"] = json!("everyone");
    body["total"] = json!("many");
    let errors = validate(&document, schema, &body);
    assert_eq!(errors.len(), 2, "{errors:?}");
}
