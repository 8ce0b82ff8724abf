//! SKILL.md bodies as HTML: markdown rendered by pulldown-cmark, then sanitised by ammonia,
//! so whatever HTML a publisher wrote never runs here.
//!
//! Links and images are rewritten with the skill in mind:
//! - a relative URL naming one of the skill's files goes to our file endpoint
//!   (`/v1/skills/{domain}/{name}/files/{path}`), so a link to `scripts/run.py` works and an
//!   image the skill ships is served by us;
//! - another relative URL is resolved against the SKILL.md's own URL, as its publisher meant
//!   it: a link to the publisher's site;
//! - an image from any other place is not loaded (its `src` is dropped; its `alt` text stays).
//!   The page's `Content-Security-Policy` would refuse it anyway.
//!
//! Links get `rel="nofollow noopener noreferrer"`, and only `http`, `https` and `mailto` URLs
//! are kept (`javascript:` and `data:` are removed by the sanitiser before any rewriting).

use std::borrow::Cow;
use std::collections::HashSet;

use pulldown_cmark::{Options, Parser, html};
use url::Url;

use super::encode_path;

/// A base that no real URL has, to resolve a relative URL against a skill's folder and see
/// whether it stays inside it.
const FOLDER_BASE: &str = "http://skill.invalid/";

/// Returns the HTML of a SKILL.md body: rendered, sanitised, its relative links resolved.
///
/// `files_path` is the path of the record's file endpoint (`/v1/skills/{domain}/{name}/files`),
/// `files` the paths of the skill's files that the directory holds, and `source` the URL the
/// SKILL.md came from.
pub(crate) fn render(
    body: &str,
    files_path: &str,
    files: &HashSet<String>,
    source: &Url,
) -> String {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES;
    let mut unsafe_html = String::with_capacity(body.len() * 3 / 2);
    html::push_html(&mut unsafe_html, Parser::new_ext(body, options));

    let files = files.clone();
    let files_path = files_path.to_owned();
    let source = source.clone();
    ammonia::Builder::default()
        .url_schemes(HashSet::from(["http", "https", "mailto"]))
        .link_rel(Some("nofollow noopener noreferrer"))
        .attribute_filter(
            move |element, attribute, value| match (element, attribute) {
                ("a", "href") => Some(Cow::Owned(link(value, &files_path, &files, &source))),
                ("img", "src") => image(value, &files_path, &files).map(Cow::Owned),
                _ => Some(Cow::Borrowed(value)),
            },
        )
        .clean(&unsafe_html)
        .to_string()
}

/// Returns the skill's file a relative URL names, if it names one.
fn own_file(value: &str, files: &HashSet<String>) -> Option<(String, Option<String>)> {
    if value.starts_with('/') || value.starts_with('#') || Url::parse(value).is_ok() {
        return None;
    }
    let base = Url::parse(FOLDER_BASE).ok()?;
    let resolved = base.join(value).ok()?;
    if resolved.host_str() != base.host_str() {
        return None;
    }
    let path = percent_encoding::percent_decode_str(resolved.path().trim_start_matches('/'))
        .decode_utf8()
        .ok()?
        .into_owned();
    files
        .contains(&path)
        .then(|| (path, resolved.fragment().map(str::to_owned)))
}

fn link(value: &str, files_path: &str, files: &HashSet<String>, source: &Url) -> String {
    if value.starts_with('#') {
        return value.to_owned();
    }
    if let Some((path, fragment)) = own_file(value, files) {
        let fragment = fragment.map(|f| format!("#{f}")).unwrap_or_default();
        return format!("{files_path}/{}{fragment}", encode_path(&path));
    }
    match Url::parse(value) {
        Ok(_) => value.to_owned(),
        // A relative link to something the skill does not ship: where its publisher meant.
        Err(_) => source
            .join(value)
            .map(String::from)
            .unwrap_or_else(|_| "#".to_owned()),
    }
}

fn image(value: &str, files_path: &str, files: &HashSet<String>) -> Option<String> {
    let (path, _) = own_file(value, files)?;
    Some(format!("{files_path}/{}", encode_path(&path)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rendered(body: &str) -> String {
        let files = HashSet::from([
            "SKILL.md".to_owned(),
            "scripts/run me.py".to_owned(),
            "img/logo.png".to_owned(),
        ]);
        let source = Url::parse("https://pub.test/.well-known/agent-skills/demo/SKILL.md").unwrap();
        render(body, "/v1/skills/pub.test/demo/files", &files, &source)
    }

    #[test]
    fn markdown_renders() {
        let html =
            rendered("# Title\n\nSome *text* and `code`.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n");
        assert!(html.contains("<h1>Title</h1>"), "{html}");
        assert!(html.contains("<em>text</em>"));
        assert!(html.contains("<table>"));
    }

    #[test]
    fn publisher_html_never_runs() {
        let html = rendered(
            "<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n[click](javascript:alert(1))\n\n<a href=\"javascript:alert(1)\">x</a> <iframe src=\"https://evil.test\"></iframe> <div onclick=\"x()\" style=\"color:red\">d</div>\n\n![p](data:image/png;base64,AAAA)",
        );
        for forbidden in [
            "<script",
            "onerror",
            "javascript:",
            "<iframe",
            "onclick",
            "style=",
            "data:",
        ] {
            assert!(!html.contains(forbidden), "{forbidden} in {html}");
        }
    }

    #[test]
    fn relative_links_go_to_the_file_endpoint_and_foreign_images_are_not_loaded() {
        let html = rendered(
            "[run](scripts/run%20me.py) [run2](./scripts/run%20me.py#l1) [up](../other.md) [abs](/docs) [top](#usage)\n\n![logo](img/logo.png) ![remote](https://tracker.test/pixel.gif) ![proto](//tracker.test/p.gif) ![missing](img/none.png)",
        );
        assert!(
            html.contains("href=\"/v1/skills/pub.test/demo/files/scripts/run%20me.py\""),
            "{html}"
        );
        assert!(
            html.contains("href=\"/v1/skills/pub.test/demo/files/scripts/run%20me.py#l1\""),
            "{html}"
        );
        assert!(
            html.contains("href=\"https://pub.test/.well-known/agent-skills/other.md\""),
            "{html}"
        );
        assert!(html.contains("href=\"https://pub.test/docs\""), "{html}");
        assert!(html.contains("href=\"#usage\""), "{html}");
        assert!(
            html.contains("src=\"/v1/skills/pub.test/demo/files/img/logo.png\""),
            "{html}"
        );
        assert!(!html.contains("tracker.test"), "{html}");
        assert!(!html.contains("img/none.png"), "{html}");
        assert!(html.contains("alt=\"remote\""), "{html}");
    }
}
