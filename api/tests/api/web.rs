//! The web directory: pages render, escape what they show, and link filters and pages.

use std::sync::Arc;

use api::{ServeConfig, Tokens};
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use store::Store;
use store::blobs::Blobs;

use crate::fixture::{As, get, send_to, state_over};

#[tokio::test]
async fn the_search_page_lists_hits_with_facets_and_snippets() {
    let page = get("/?q=pdf", As::Anonymous).await;
    assert_eq!(page.status, StatusCode::OK);
    assert_eq!(
        page.header(header::CONTENT_TYPE),
        Some("text/html; charset=utf-8")
    );
    let html = page.text();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("value=\"pdf\""), "the box keeps the query");
    assert!(html.contains("<mark>"), "snippets highlight");
    assert!(html.contains("href=\"/skill/pdfworks.test/pdf-merge\""));
    assert!(
        html.contains("href=\"/?q=pdf&amp;domain=pdfworks.test\""),
        "facet links add a filter"
    );
}

#[tokio::test]
async fn a_guessed_search_path_redirects_to_the_search_page_with_its_parameters() {
    for (uri, location) in [
        ("/search?q=pdf%20merge&type=api", "/?q=pdf%20merge&type=api"),
        ("/search?", "/"),
        ("/search", "/"),
    ] {
        let page = get(uri, As::Anonymous).await;
        assert_eq!(page.status, StatusCode::PERMANENT_REDIRECT, "{uri}");
        assert_eq!(page.header(header::LOCATION), Some(location), "{uri}");
    }
}

#[tokio::test]
async fn filters_show_as_removable_chips_and_pages_link() {
    let html = get("/?type=api&limit=1", As::Anonymous).await.text();
    assert!(html.contains("class=\"chip\""), "{html}");
    assert!(
        html.contains("href=\"/?limit=1\""),
        "removing the only filter"
    );
    assert!(
        html.contains("href=\"/?type=api&amp;limit=1&amp;offset=1\""),
        "next page"
    );
}

#[tokio::test]
async fn text_from_requests_and_records_is_escaped() {
    let html = get("/?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E", As::Anonymous)
        .await
        .text();
    assert!(!html.contains("<script>"), "{html}");
    assert!(html.contains("&lt;script&gt;"));
}

#[tokio::test]
async fn the_skill_page_shows_the_record_files_and_diagnostics() {
    let page = get("/skill/legacy-tools.test/csv-cleanup", As::Anonymous).await;
    assert_eq!(page.status, StatusCode::OK);
    let html = page.text();
    assert!(html.contains("legacy-tools.test/csv-cleanup"));
    assert!(
        html.contains("href=\"/v1/skills/legacy-tools.test/csv-cleanup/files/scripts/clean.py\""),
        "{html}"
    );
    assert!(html.contains("Verdicts and diagnostics"));
    assert!(html.contains(">SKILL.md</h2>"));

    let sloppy = get("/skill/sloppy.test/Release-Notes", As::Anonymous)
        .await
        .text();
    assert!(sloppy.contains("sev-error"), "{sloppy}");
    assert!(sloppy.contains("invalid_name"));
}

#[tokio::test]
async fn domain_pages() {
    let list = get("/domains", As::Anonymous).await;
    assert_eq!(list.status, StatusCode::OK);
    let html = list.text();
    for domain in crate::fixture::DOMAINS {
        assert!(
            html.contains(&format!("href=\"/domains/{domain}\"")),
            "{domain}"
        );
    }
    let one = get("/domains/pdfworks.test", As::Anonymous).await;
    assert_eq!(one.status, StatusCode::OK);
    assert!(
        one.text()
            .contains("href=\"/skill/pdfworks.test/pdf-form-filling\"")
    );
}

/// A server that does not crawl (`serve` without `--crawl`) still probes a submitted site,
/// once: its publishers' page says so beside the form, and that the site then waits for the
/// operator's crawls. A crawling server's page does not.
#[tokio::test]
async fn the_add_site_form_says_what_a_server_that_does_not_crawl_does_with_a_site() {
    for crawls in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(&dir.path().join("store")).unwrap());
        let blobs = Blobs::open(dir.path()).unwrap();
        let config = ServeConfig::default();
        let state = state_over(dir.path(), store, blobs, Tokens::none(), config);
        if crawls {
            state.progress().enable();
        }
        let request = Request::get("/domains").body(Body::empty()).unwrap();
        let page = send_to(state, request).await;
        assert_eq!(page.status, StatusCode::OK);
        let html = page.text();
        assert!(html.contains("action=\"/domains\""), "{html}");
        assert_eq!(html.contains("checked once, at once"), !crawls, "{html}");
        assert_eq!(
            html.contains("revisited only when the directory"),
            !crawls,
            "{html}"
        );
        assert_eq!(
            html.contains("This server does not crawl"),
            !crawls,
            "{html}"
        );
    }
}

#[tokio::test]
async fn missing_pages_are_html_404s() {
    for uri in [
        "/skill/pdfworks.test/nothing",
        "/skill/%FF/x",
        "/domains/unknown.test",
        "/domains/a/b",
    ] {
        let page = get(uri, As::Anonymous).await;
        assert!(page.status.is_client_error(), "{uri}: {}", page.status);
        assert_eq!(
            page.header(header::CONTENT_TYPE),
            Some("text/html; charset=utf-8"),
            "{uri}"
        );
    }
    let bad = get("/?limit=100000", As::Anonymous).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.text().contains("invalid_parameter"));
}

#[tokio::test]
async fn pages_carry_a_content_security_policy_and_assets_are_ours() {
    for uri in [
        "/",
        "/skill/pdfworks.test/pdf-merge",
        "/domains",
        "/nothing/here",
    ] {
        let page = get(uri, As::Anonymous).await;
        let policy = page
            .header(header::CONTENT_SECURITY_POLICY)
            .unwrap_or_default();
        if uri == "/nothing/here" {
            // Not a page path: the JSON 404.
            assert!(policy.is_empty(), "{uri}");
            continue;
        }
        assert!(policy.contains("script-src 'self'"), "{uri}: {policy}");
        assert!(policy.contains("default-src 'none'"), "{uri}: {policy}");
        let html = page.text();
        // Nothing loaded from another host, no inline script or style.
        for attribute in ["src=\"http", "href=\"//", "<style", "style=\""] {
            assert!(!html.contains(attribute), "{uri}: {attribute}");
        }
        assert_eq!(html.matches("<script").count(), 1, "{uri}");
    }
    // The page names its assets by paths with a digest of their content.
    let home = get("/", As::Anonymous).await.text();
    let asset = |extension: &str| {
        let end = home.find(&format!(".{extension}\"")).unwrap() + 1 + extension.len();
        let start = home[..end].rfind("/assets/").unwrap();
        home[start..end].to_owned()
    };
    let css = get(&asset("css"), As::Anonymous).await;
    assert_eq!(css.status, StatusCode::OK);
    assert_eq!(
        css.header(header::CONTENT_TYPE),
        Some("text/css; charset=utf-8")
    );
    let js = get(&asset("js"), As::Anonymous).await;
    assert_eq!(js.status, StatusCode::OK);
    let missing = get("/assets/site.000000000000.js", As::Anonymous).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_skill_page_renders_markdown_and_offers_installs() {
    let html = get("/skill/pdfworks.test/pdf-merge", As::Anonymous)
        .await
        .text();
    assert!(html.contains("class=\"markdown\""), "{html}");
    assert!(html.contains("npx skills add http://pdfworks.test --skill pdf-merge"));
    assert!(
        html.contains(
            "npx skills add http://directory.test/mirror/pdfworks.test --skill pdf-merge"
        )
    );
    // The URI an agent connected to the directory over MCP loads it by.
    assert!(
        html.contains("skill://pdfworks.test/pdf-merge/SKILL.md"),
        "{html}"
    );
    assert!(html.contains("http://directory.test/mcp"));
    let service = get(
        "/skill/services.test/test.services.translate-v2",
        As::Anonymous,
    )
    .await
    .text();
    assert!(
        service.contains("https://api.services.test/v1/translate-v2"),
        "the endpoint: {service}"
    );
    assert!(service.contains("<code>document</code>"), "an input");
    assert!(
        !service.contains("npx skills add"),
        "services are not installed"
    );
    assert!(!service.contains("skill://"), "nor served over MCP");
}

#[tokio::test]
async fn the_publisher_page_is_a_health_report() {
    let sloppy = get("/domains/sloppy.test", As::Anonymous).await.text();
    assert!(sloppy.contains("health score"), "{sloppy}");
    assert!(sloppy.contains("Caching headers present"));
    assert!(sloppy.contains("not checked"));
    assert!(sloppy.contains("Entries the skills CLI refuses"));
    assert!(sloppy.contains("Invalid skills and why"));
    assert!(sloppy.contains("/mirror/sloppy.test"));
    let pdfworks = get("/domains/pdfworks.test", As::Anonymous).await.text();
    assert!(
        pdfworks.contains("The CLI installs all 3 agent skills as published."),
        "{pdfworks}"
    );
    let services = get("/domains/services.test", As::Anonymous).await.text();
    assert!(services.contains("publishes no agent skills"), "{services}");
    let sorted = get("/domains?sort=score", As::Anonymous).await.text();
    // By name legacy-tools.test comes first; by score pdfworks.test (a verified v0.2 index)
    // beats it (a v0.1 index without digests).
    let first = sorted.find(">pdfworks.test<").unwrap();
    let last = sorted.find(">legacy-tools.test<").unwrap();
    assert!(first < last, "the best score first");
    let bad = get("/domains?sort=nonsense", As::Anonymous).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
}
