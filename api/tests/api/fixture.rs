//! The state every test serves: the fixture web crawled once (with `prefetch_files`, so legacy
//! files are kept), synced into an index, behind a router with one token; and request helpers.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use api::{AppState, ServeConfig, Tokens};
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode, header};
use crawler::crawl::{CrawlConfig, CrawlReport, Quiet};
use formats::seeds::SeedTarget;
use indexer::{Index, IndexConfig};
use serde_json::Value;
use store::Store;
use store::blobs::Blobs;
use tower::ServiceExt;

use crate::server::{TestServer, serve_file};

/// The token the fixture server accepts.
pub(crate) const TOKEN: &str = "fixture-token-0123";
/// The one private record of the fixture web.
pub(crate) const PRIVATE_ID: &str = "services.test/test.services.payroll-audit-v1";
/// The fixture web's domains.
pub(crate) const DOMAINS: [&str; 4] = [
    "legacy-tools.test",
    "pdfworks.test",
    "services.test",
    "sloppy.test",
];

pub(crate) fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

struct Fixture {
    state: AppState,
    _dir: tempfile::TempDir,
}

/// Returns the shared state (built on first use).
pub(crate) fn state() -> AppState {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let state = build_state(dir.path(), Tokens::from_list([TOKEN]));
            Fixture { state, _dir: dir }
        })
        .state
        .clone()
}

/// Crawls the fixture web into `data` (a store, blobs and a synced index) on a runtime of its
/// own, so it works from any test, async or not.
pub(crate) fn crawl_fixture_web(data: &Path) -> (Arc<Store>, Blobs) {
    let store = Arc::new(Store::open(data).unwrap());
    let blobs = Blobs::open(data).unwrap();
    let report = crawl_report_into(
        &store,
        &blobs,
        &repo_root().join("seeds/web"),
        &DOMAINS,
        true,
    );
    // Nothing failed: the one error listed is the name of sloppy.test's `Release-Notes`, which
    // agent clients refuse (its verdict is invalid, and the report says why).
    let codes: Vec<&str> = report
        .domains
        .iter()
        .flat_map(|line| line.errors.iter().map(|error| error.code.as_str()))
        .collect();
    assert!(
        codes.iter().all(|code| *code == "invalid_name"),
        "{report:?}"
    );
    (store, blobs)
}

/// Crawls the sites of `domains` from `web` (one folder per host) on loopback into `store`
/// and `blobs` (with `prefetch`, also every file a legacy index lists), on a runtime of its
/// own, and checks that nothing failed.
pub(crate) fn crawl_into(
    store: &Arc<Store>,
    blobs: &Blobs,
    web: &Path,
    domains: &[&str],
    prefetch: bool,
) {
    let report = crawl_report_into(store, blobs, web, domains, prefetch);
    assert_eq!(report.totals.errors, 0, "{report:?}");
}

/// Crawls as [`crawl_into`] does, and returns the crawl report.
pub(crate) fn crawl_report_into(
    store: &Arc<Store>,
    blobs: &Blobs,
    web: &Path,
    domains: &[&str],
    prefetch: bool,
) -> CrawlReport {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .unwrap();
                runtime.block_on(async {
                    let web = web.to_owned();
                    let server = TestServer::start(move |request| serve_file(&web, request)).await;
                    let mut config = CrawlConfig {
                        prefetch_files: prefetch,
                        ..CrawlConfig::default()
                    };
                    config.fetch.host_delay = std::time::Duration::ZERO;
                    config.fetch.resolve = vec![
                        format!("*.test=127.0.0.1:{}", server.addr.port())
                            .parse()
                            .unwrap(),
                    ];
                    let targets: Vec<SeedTarget> = domains
                        .iter()
                        .map(|domain| format!("http://{domain}").parse().unwrap())
                        .collect();
                    crawler::crawl::crawl(
                        config,
                        targets,
                        Arc::clone(store),
                        blobs.clone(),
                        Arc::new(Quiet),
                        std::future::pending(),
                    )
                    .await
                    .unwrap()
                })
            })
            .join()
            .unwrap()
    })
}

/// Builds the state of a server over a freshly crawled fixture web in `data`.
pub(crate) fn build_state(data: &Path, tokens: Tokens) -> AppState {
    let (store, blobs) = crawl_fixture_web(data);
    state_over(data, store, blobs, tokens, ServeConfig::default())
}

/// Builds the state of a server over a freshly crawled fixture web in `data`, its index
/// written and searched with the sentence model `model` (the semantic option).
pub(crate) fn build_state_with_model(data: &Path, model: Arc<dyn indexer::Embed>) -> AppState {
    let (store, blobs) = crawl_fixture_web(data);
    let index = IndexConfig {
        model: Some(model),
        ..IndexConfig::default()
    };
    state_with_index(
        data,
        store,
        blobs,
        Tokens::none(),
        ServeConfig::default(),
        index,
    )
}

/// Syncs the index in `data` with `store` and returns a server state over them, with the
/// public URL `http://directory.test/`.
pub(crate) fn state_over(
    data: &Path,
    store: Arc<Store>,
    blobs: Blobs,
    tokens: Tokens,
    config: ServeConfig,
) -> AppState {
    state_with_index(data, store, blobs, tokens, config, IndexConfig::default())
}

fn state_with_index(
    data: &Path,
    store: Arc<Store>,
    blobs: Blobs,
    tokens: Tokens,
    config: ServeConfig,
    index: IndexConfig,
) -> AppState {
    let Index { mut writer, search } =
        Index::open_or_create(&data.join(indexer::INDEX_DIR), index).unwrap();
    indexer::sync(&store, &mut writer).unwrap();
    search.reload().unwrap();
    let config = ServeConfig {
        public_url: "http://directory.test/".parse().unwrap(),
        ..config
    };
    AppState::new(search, store, blobs, tokens, config)
}

/// A response, read whole.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Vec<u8>,
}

impl Reply {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|error| {
            panic!(
                "not JSON ({error}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub(crate) fn header(&self, name: header::HeaderName) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }
}

/// Sends `request` to the router of `state`, with no socket.
pub(crate) async fn send_to(state: AppState, request: Request<Body>) -> Reply {
    let response = api::router(state).oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap()
        .to_vec();
    Reply {
        status,
        headers,
        body,
    }
}

/// Who is asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum As {
    Anonymous,
    Token,
    WrongToken,
}

fn with_auth(builder: axum::http::request::Builder, who: As) -> axum::http::request::Builder {
    match who {
        As::Anonymous => builder,
        As::Token => builder.header(header::AUTHORIZATION, format!("Bearer {TOKEN}")),
        As::WrongToken => builder.header(header::AUTHORIZATION, "Bearer not-the-token"),
    }
}

/// `GET uri` on the shared state.
pub(crate) async fn get(uri: &str, who: As) -> Reply {
    let request = with_auth(Request::get(uri), who)
        .body(Body::empty())
        .unwrap();
    send_to(state(), request).await
}

/// `POST /rpc` with a JSON body on the shared state.
pub(crate) async fn rpc(body: &str, who: As) -> Reply {
    let request = with_auth(Request::builder().method(Method::POST).uri("/rpc"), who)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap();
    send_to(state(), request).await
}

/// Replaces every time and duration that changes from run to run, for snapshots.
pub(crate) fn redact(mut value: Value) -> Value {
    fn walk(value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (key, item) in map.iter_mut() {
                    let volatile = matches!(
                        key.as_str(),
                        "first_seen"
                            | "last_seen"
                            | "last_changed"
                            | "crawled_at"
                            | "last_success"
                            | "at"
                            | "took_ms"
                            | "started_at"
                            | "finished_at"
                            | "index_synced_at"
                            | "next_crawl_at"
                            | "score"
                    );
                    if volatile && !item.is_null() {
                        *item = Value::String("[redacted]".to_owned());
                    } else {
                        walk(item);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut value);
    value
}

/// Asserts the error shape: `{"error": {"code", "message"}}` and nothing else.
pub(crate) fn assert_error_shape(reply: &Reply, code: &str) {
    assert_eq!(
        reply.header(header::CONTENT_TYPE),
        Some("application/json"),
        "{}",
        reply.text()
    );
    let json = reply.json();
    let object = json.as_object().unwrap();
    assert_eq!(object.len(), 1, "{json}");
    let error = json["error"].as_object().unwrap();
    assert_eq!(error.len(), 2, "{json}");
    assert_eq!(error["code"], code, "{json}");
    assert!(
        error["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{json}"
    );
}

/// The ids of the hits of a search answer (`/v1/search` or the MCP `search_skills` tool), in
/// order.
pub(crate) fn hit_ids(body: &Value) -> Vec<String> {
    body["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| hit["id"].as_str().unwrap().to_owned())
        .collect()
}
