//! `skillscout validate URL` and the publisher page give the same health report.
//!
//! `validate` crawls a site as the directory does (`crawl_domain`, without storing anything) and makes
//! the report with the directory's own function (`api::health_of`) from that status and those
//! records; this checks that the report the directory serves for the same site
//! (`GET /v1/domains/{domain}`, which its publisher page renders) is the same, for every
//! domain of the fixture web and of the shared corpus.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use api::{ServeConfig, Tokens};
use axum::body::Body;
use axum::http::{Request, header};
use crawler::crawl::{CrawlConfig, Reading, crawl_domain};
use crawler::fetch::Fetcher;
use formats::seeds::SeedTarget;
use serde_json::Value;
use store::Store;
use store::blobs::Blobs;

use crate::fixture::{DOMAINS, TOKEN, crawl_report_into, repo_root, send_to, state_over};
use crate::server::{TestServer, serve_file};

/// The health reports `validate` makes of the sites `domains` of `web`, as JSON.
async fn validated(web: &Path, domains: &[String]) -> BTreeMap<String, Value> {
    let root = web.to_owned();
    let server = TestServer::start(move |request| serve_file(&root, request)).await;
    let mut config = CrawlConfig::default();
    config.fetch.host_delay = std::time::Duration::ZERO;
    config.fetch.resolve = vec![
        format!("*.test=127.0.0.1:{}", server.addr.port())
            .parse()
            .unwrap(),
    ];
    let fetcher = Fetcher::new(config.fetch, None).unwrap();
    let mut reports = BTreeMap::new();
    for domain in domains {
        let target: SeedTarget = format!("http://{domain}").parse().unwrap();
        let crawled = crawl_domain(&fetcher, &target, Reading::EVERY_FILE, None, None).await;
        let health = api::health_of(&crawled.status, &crawled.found.records);
        let view = serde_json::to_value(api::wire::HealthView::from(&health)).unwrap();
        reports.insert(domain.clone(), view);
    }
    reports
}

/// The health reports the directory serves for `domains` after crawling them from `web`.
async fn served(web: &Path, domains: &[String]) -> BTreeMap<String, Value> {
    let data = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(data.path()).unwrap());
    let blobs = Blobs::open(data.path()).unwrap();
    let hosts: Vec<&str> = domains.iter().map(String::as_str).collect();
    crawl_report_into(&store, &blobs, web, &hosts, true);
    let state = state_over(
        data.path(),
        store,
        blobs,
        Tokens::from_list([TOKEN]),
        ServeConfig::default(),
    );
    let mut reports = BTreeMap::new();
    for domain in domains {
        // The operator's view: `validate` sees every skill the site lists.
        let request = Request::get(format!("/v1/domains/{domain}"))
            .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
            .body(Body::empty())
            .unwrap();
        let reply = send_to(state.clone(), request).await;
        reports.insert(domain.clone(), reply.json()["health"].clone());
    }
    reports
}

async fn assert_same_reports(web: PathBuf, domains: Vec<String>) {
    let validated = validated(&web, &domains).await;
    let served = served(&web, &domains).await;
    assert_eq!(validated.len(), domains.len());
    for (domain, report) in &validated {
        assert!(report["score"].is_u64(), "{domain}: {report}");
        assert_eq!(
            report, &served[domain],
            "{domain}: validate and the publisher page differ"
        );
    }
}

#[tokio::test]
async fn validate_and_the_publisher_page_agree_on_the_fixture_web() {
    let domains = DOMAINS.iter().map(|domain| (*domain).to_owned()).collect();
    assert_same_reports(repo_root().join("seeds/web"), domains).await;
}

#[tokio::test]
async fn validate_and_the_publisher_page_agree_on_the_corpus() {
    let corpus = repo_root().join("../shared/corpus");
    if !corpus.join("MANIFEST.json").is_file() {
        assert!(
            std::env::var_os("CI").is_none(),
            "../shared/corpus is missing: under CI the corpus tests run, they do not skip"
        );
        return;
    }
    let mut domains: Vec<String> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.join(".well-known").is_dir())
        .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    domains.sort();
    assert!(domains.len() > 20, "{domains:?}");
    assert_same_reports(corpus, domains).await;
}
