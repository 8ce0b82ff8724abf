//! `GET /openapi.json` against the server's real answers: every operation of the document is
//! sent requests, each answer's status is one the document declares for it, each header it
//! declares is there, and each JSON body is valid against the schema the document gives (JSON
//! Schema 2020-12, formats checked). The publishers' writes run on a server of their own
//! (their budgets are spent as they are asked), whose prober crawls the fixture web and
//! answers key checks from a table; each of them is made to give every answer it declares.
//!
//! See: The front door and the operator's kit (a machine-readable API), and issue #34.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use api::{AppState, KeyCheck, Prober, ServeConfig, Tokens};
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use store::blobs::Blobs;
use store::{AddMode, AddedAs, NewTarget, Store};
use tokio::sync::Notify;
use url::Url;

use crate::fixture::{As, Reply, crawl_report_into, get, repo_root, send_to, state, state_over};

/// One request: the document's path template it exercises, the method, the URI, the body
/// and who asks.
struct Case {
    template: &'static str,
    method: Method,
    uri: String,
    body: Option<String>,
    who: As,
}

/// A `GET`.
fn case(template: &'static str, uri: &str, who: As) -> Case {
    Case {
        template,
        method: Method::GET,
        uri: uri.to_owned(),
        body: None,
        who,
    }
}

/// A `POST` with `body` (JSON, or what claims to be), anonymous as the publishers are.
fn post(template: &'static str, uri: &str, body: Option<String>) -> Case {
    Case {
        template,
        method: Method::POST,
        uri: uri.to_owned(),
        body,
        who: As::Anonymous,
    }
}

impl Case {
    fn request(&self) -> Request<Body> {
        let mut builder = Request::builder()
            .method(self.method.clone())
            .uri(&self.uri);
        match self.who {
            As::Anonymous => {}
            As::Token => {
                builder = builder.header(
                    header::AUTHORIZATION,
                    format!("Bearer {}", crate::fixture::TOKEN),
                );
            }
            As::WrongToken => {
                builder = builder.header(header::AUTHORIZATION, "Bearer not-the-token");
            }
        }
        let body = match &self.body {
            Some(body) => {
                builder = builder.header(header::CONTENT_TYPE, "application/json");
                Body::from(body.clone())
            }
            None => Body::empty(),
        };
        builder.body(body).unwrap()
    }

    /// `METHOD template`, as the test names an operation.
    fn operation(&self) -> String {
        format!("{} {}", self.method, self.template)
    }
}

/// Requests for every read of the document, on the shared fixture server, with answers of
/// several kinds each (hits and none, a record with files and one without, errors).
fn read_cases() -> Vec<Case> {
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

/// The key the write server's prober finds in every key file.
const VALID_KEY: &str = "openapi-valid-key";
/// A key whose file is read until the test says so.
const SLOW_KEY: &str = "openapi-slow-key";
/// A key no key file holds.
const WRONG_KEY: &str = "openapi-wrong-key";

/// The write server's prober: a probe crawls the target from the fixture web on loopback; a
/// key check answers from the keys above, without a file.
#[derive(Debug, Clone)]
struct FixtureProber {
    store: Arc<Store>,
    blobs: Blobs,
    /// Woken when the slow key's check starts.
    slow_started: Arc<Notify>,
    /// Ends the slow key's check.
    slow_release: Arc<Notify>,
}

impl Prober for FixtureProber {
    fn check_key(&self, _key_url: Url, key: String) -> BoxFuture<'static, KeyCheck> {
        let started = Arc::clone(&self.slow_started);
        let release = Arc::clone(&self.slow_release);
        Box::pin(async move {
            match key.as_str() {
                VALID_KEY => KeyCheck::Valid,
                SLOW_KEY => {
                    started.notify_one();
                    release.notified().await;
                    KeyCheck::Valid
                }
                _ => KeyCheck::Invalid("the file does not hold the key".to_owned()),
            }
        })
    }

    fn probe(&self, target: String) -> BoxFuture<'static, Result<(), String>> {
        let prober = self.clone();
        Box::pin(async move {
            let target: formats::seeds::SeedTarget = target.parse()?;
            let domain = target.domain().to_string();
            tokio::task::spawn_blocking(move || {
                crawl_report_into(
                    &prober.store,
                    &prober.blobs,
                    &repo_root().join("seeds/web"),
                    &[domain.as_str()],
                    false,
                );
            })
            .await
            .map_err(|error| error.to_string())
        })
    }

    fn allows_private(&self) -> bool {
        false
    }
}

/// A server over an empty store whose frontier holds two fixture sites, with a prober.
async fn write_server(dir: &std::path::Path) -> (AppState, FixtureProber) {
    let store = Arc::new(Store::open(&dir.join("store")).unwrap());
    let blobs = Blobs::open(dir).unwrap();
    let seeds = ["pdfworks.test", "legacy-tools.test"]
        .into_iter()
        .map(|domain| NewTarget {
            domain: domain.to_owned(),
            target: format!("http://{domain}"),
            added_as: AddedAs::Seed,
            source: None,
            rank: None,
        })
        .collect();
    store.frontier().add(seeds, AddMode::Keep).await.unwrap();
    let prober = FixtureProber {
        store: Arc::clone(&store),
        blobs: blobs.clone(),
        slow_started: Arc::new(Notify::new()),
        slow_release: Arc::new(Notify::new()),
    };
    let state = state_over(dir, store, blobs, Tokens::none(), ServeConfig::default());
    assert!(state.set_prober(Arc::new(prober.clone())));
    (state, prober)
}

/// The publishers' writes, in an order that makes each give every answer it declares (the
/// recrawl budget a recrawl spends refuses the submission after it; one host's pings run
/// out).
fn write_cases() -> Vec<Case> {
    let submit = |body: &str| post("/v1/domains", "/v1/domains", Some(body.to_owned()));
    let recrawl = |domain: &str| {
        post(
            "/v1/domains/{domain}/recrawl",
            &format!("/v1/domains/{domain}/recrawl"),
            None,
        )
    };
    let ping_get = |url: &str, key: &str| {
        case(
            "/indexnow",
            &format!("/indexnow?url={url}&key={key}"),
            As::Anonymous,
        )
    };
    let ping_post = |body: Value| post("/indexnow", "/indexnow", Some(body.to_string()));
    let skills = "http://pdfworks.test/.well-known/agent-skills/index.json";
    let mut cases = vec![
        // A site that publishes (kept, `submitted`), one that publishes nothing (its report,
        // not kept), then what is refused before anything is fetched.
        submit(r#"{"domain": "http://sloppy.test"}"#),
        submit(r#"{"domain": "http://nothing.test"}"#),
        submit(r#"{"domain": "127.0.0.1"}"#),
        submit(r#"{"domain": "not a host"}"#),
        submit("{not json"),
        submit(&format!(r#"{{"domain": "{}"}}"#, "a".repeat(100 * 1024))),
        recrawl("pdfworks.test"),
        recrawl("pdfworks.test"),
        recrawl("nowhere.test"),
        recrawl("not%20a%20domain"),
        // A known domain whose recrawl was just spent.
        submit(r#"{"domain": "http://pdfworks.test"}"#),
        ping_get(skills, VALID_KEY),
        ping_get("http://pdfworks.test/blog/post.html", VALID_KEY),
        case(
            "/indexnow",
            &format!("/indexnow?key={VALID_KEY}"),
            As::Anonymous,
        ),
        ping_get(skills, "short"),
        ping_get(skills, WRONG_KEY),
        ping_post(json!({"host": "legacy-tools.test", "key": VALID_KEY,
            "urlList": ["http://legacy-tools.test/"]})),
        post("/indexnow", "/indexnow", Some("{not json".to_owned())),
        ping_post(json!({"host": "legacy-tools.test", "key": VALID_KEY,
            "urlList": ["http://legacy-tools.test/", "http://other.test/"]})),
        ping_post(json!({"host": "legacy-tools.test", "key": WRONG_KEY,
            "urlList": ["http://legacy-tools.test/"]})),
        post(
            "/indexnow",
            "/indexnow",
            Some(format!(r#"{{"pad": "{}"}}"#, "a".repeat(4 * 1024 * 1024))),
        ),
    ];
    // One host named more often than its budget allows (10 in a burst): the last two, a
    // `GET` and a `POST`, are refused.
    for n in 0..12 {
        cases.push(if n % 2 == 0 {
            ping_get("http://busy.test/", VALID_KEY)
        } else {
            ping_post(
                json!({"host": "busy.test", "key": VALID_KEY, "urlList": ["http://busy.test/"]}),
            )
        });
    }
    cases
}

/// Three pings with the slow key: the first (a `POST`) waits on its key file, the others (a
/// `GET` and a `POST`) are told the key is pending (202); once the file is read, the first is
/// accepted.
async fn pending_ping(state: &AppState, prober: &FixtureProber) -> Vec<(Case, Reply)> {
    let url = "http://legacy-tools.test/.well-known/skills/index.json";
    let by_post = || {
        post(
            "/indexnow",
            "/indexnow",
            Some(
                json!({"host": "legacy-tools.test", "key": SLOW_KEY, "urlList": [url]}).to_string(),
            ),
        )
    };
    let first = by_post();
    let reading = tokio::spawn(send_to(state.clone(), first.request()));
    prober.slow_started.notified().await;
    let mut answers = Vec::new();
    let by_get = case(
        "/indexnow",
        &format!("/indexnow?url={url}&key={SLOW_KEY}"),
        As::Anonymous,
    );
    for pending in [by_get, by_post()] {
        let told = send_to(state.clone(), pending.request()).await;
        assert_eq!(told.status, StatusCode::ACCEPTED, "{}", told.text());
        answers.push((pending, told));
    }
    prober.slow_release.notify_one();
    // Accepted, unless the machine stalled past the wait for key files (then 202 again).
    let read = reading.await.unwrap();
    answers.push((first, read));
    answers
}

/// Returns the document's answer for `method template` with `status`, or why there is none.
fn response_for<'a>(
    document: &'a Value,
    method: &Method,
    template: &str,
    status: StatusCode,
) -> Result<&'a Value, String> {
    let method = method.as_str().to_ascii_lowercase();
    let responses = &document["paths"][template][&method]["responses"];
    let response = &responses[status.as_str()];
    if response.is_null() {
        return Err(format!(
            "{method} {template}: status {status} is not in the document (it declares {:?})",
            responses
                .as_object()
                .map(|map| map.keys().collect::<Vec<_>>())
        ));
    }
    Ok(response)
}

/// Returns the document's schema for `method template`'s answer with `status` and
/// `content_type`, or why the document does not declare that answer: `Ok(None)` for a media
/// type declared without a schema (bytes, text).
fn schema_for(
    document: &Value,
    method: &Method,
    template: &str,
    status: StatusCode,
    content_type: &str,
) -> Result<Option<Value>, String> {
    let response = response_for(document, method, template, status)?;
    let media_type = content_type.split(';').next().unwrap_or_default().trim();
    let content = response["content"].as_object().cloned().unwrap_or_default();
    let declared = content
        .get(media_type)
        .or_else(|| content.get("*/*"))
        .ok_or_else(|| {
            format!(
                "{method} {template} {status}: {media_type:?} is not a declared media type ({:?})",
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

/// Checks one answer against the document: its status, the headers declared for it, and its
/// body against the schema; returns what does not hold.
fn check(document: &Value, case: &Case, reply: &Reply) -> Result<bool, Vec<String>> {
    // Long enough to tell the cases apart; the large bodies' URIs are short.
    let name = format!("{} {} ({})", case.method, case.uri, reply.status);
    let response = response_for(document, &case.method, case.template, reply.status)
        .map_err(|why| vec![format!("{name}: {why}")])?;
    let mut failures = Vec::new();
    for declared in response["headers"]
        .as_object()
        .into_iter()
        .flat_map(|h| h.keys())
    {
        if reply.headers.get(declared.as_str()).is_none() {
            failures.push(format!("{name}: no {declared} header"));
        }
    }
    let content_type = reply
        .header(header::CONTENT_TYPE)
        .unwrap_or_default()
        .to_owned();
    let validated = match schema_for(
        document,
        &case.method,
        case.template,
        reply.status,
        &content_type,
    ) {
        Ok(Some(schema)) => {
            let body: Value = serde_json::from_slice(&reply.body).unwrap();
            for error in validate(document, schema, &body) {
                failures.push(format!("{name}: {error}"));
            }
            true
        }
        Ok(None) => false,
        Err(why) => {
            failures.push(format!("{name}: {why}"));
            false
        }
    };
    if failures.is_empty() {
        Ok(validated)
    } else {
        Err(failures)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_endpoint_answers_as_the_document_says() {
    let reply = get("/openapi.json", As::Anonymous).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.header(header::CONTENT_TYPE), Some("application/json"));
    let document = reply.json();
    assert_eq!(document["openapi"], "3.1.0", "{document}");
    assert!(document["components"]["securitySchemes"]["bearer"].is_object());

    let mut answers = Vec::new();
    let reads = state();
    for case in read_cases() {
        let reply = send_to(reads.clone(), case.request()).await;
        answers.push((case, reply));
    }
    let dir = tempfile::tempdir().unwrap();
    let (writes, prober) = write_server(dir.path()).await;
    for case in write_cases() {
        let reply = send_to(writes.clone(), case.request()).await;
        answers.push((case, reply));
    }
    answers.extend(pending_ping(&writes, &prober).await);

    // Every operation of the document is asked for here; a new endpoint needs its cases.
    let mut documented = BTreeSet::new();
    for (template, operations) in document["paths"].as_object().unwrap() {
        for method in operations.as_object().unwrap().keys() {
            documented.insert(format!("{} {template}", method.to_ascii_uppercase()));
        }
    }
    let asked: BTreeSet<String> = answers.iter().map(|(case, _)| case.operation()).collect();
    assert_eq!(
        documented, asked,
        "documented operations and the ones this test asks for"
    );

    let mut failures = Vec::new();
    let mut validated = 0;
    let mut seen: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (case, reply) in &answers {
        seen.entry(case.operation())
            .or_default()
            .insert(reply.status.as_str().to_owned());
        match check(&document, case, reply) {
            Ok(true) => validated += 1,
            Ok(false) => {}
            Err(found) => failures.extend(found),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(validated >= 60, "only {validated} answers validated");

    // The publishers' writes give every answer they declare, but the overload's.
    for operation in [
        "POST /v1/domains",
        "POST /v1/domains/{domain}/recrawl",
        "GET /indexnow",
        "POST /indexnow",
    ] {
        let (method, template) = operation.split_once(' ').unwrap();
        let declared: BTreeSet<String> =
            document["paths"][template][method.to_ascii_lowercase()]["responses"]
                .as_object()
                .unwrap()
                .keys()
                .filter(|status| *status != "503")
                .cloned()
                .collect();
        assert_eq!(seen[operation], declared, "{operation}");
    }
}

/// The document is checked, not only produced: a body that breaks a schema fails.
#[tokio::test]
async fn a_body_that_breaks_the_schema_is_caught() {
    let document = get("/openapi.json", As::Anonymous).await.json();
    let schema = schema_for(
        &document,
        &Method::GET,
        "/v1/search",
        StatusCode::OK,
        "application/json",
    )
    .unwrap()
    .unwrap();
    let mut body = get("/v1/search?q=pdf", As::Anonymous).await.json();
    assert!(validate(&document, schema.clone(), &body).is_empty());
    body["hits"][0]["access"] = json!("everyone");
    body["total"] = json!("many");
    let errors = validate(&document, schema, &body);
    assert_eq!(errors.len(), 2, "{errors:?}");
}
