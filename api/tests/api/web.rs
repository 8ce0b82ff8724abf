//! The web directory: pages render, escape what they show, and link filters and pages.

use axum::http::{StatusCode, header};

use crate::fixture::{As, get};

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
