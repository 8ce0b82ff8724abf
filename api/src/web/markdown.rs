//! SKILL.md bodies as HTML, safe to put in a page: markdown rendered by pulldown-cmark with
//! publisher HTML shown as text.
//!
//! The only HTML in the result is what the markdown writer makes from markdown constructs,
//! whose text and attribute values it escapes. Raw HTML in a body (a `<script>`, an
//! `<img onerror=…>`, an `<iframe>`) is turned into text before the writer sees it, so it is
//! shown, never parsed: a deny-by-default rule that needs no tag allow-list (and no HTML
//! sanitiser: ammonia, the one for Rust, depends on MPL-2.0 crates that `deny.toml` refuses).
//!
//! Links and images are rewritten with the skill in mind:
//! - only `http`, `https` and `mailto` links are kept; another scheme (`javascript:`,
//!   `data:`, …) leaves the link's text without a link;
//! - a relative URL naming one of the skill's files goes to our file endpoint
//!   (`/v1/skills/{domain}/{name}/files/{path}`), so a link to `scripts/run.py` works and an
//!   image the skill ships is served by us;
//! - another relative URL is resolved against the SKILL.md's own URL, as its publisher meant
//!   it: a link to the publisher's site;
//! - an image from anywhere else is not loaded: its alt text is shown instead. The page's
//!   `Content-Security-Policy` would refuse it anyway.
//!
//! Links get `rel="nofollow noopener noreferrer"`.

use std::collections::HashSet;

use pulldown_cmark::{CowStr, Event, LinkType, Options, Parser, Tag, TagEnd, html};
use url::Url;

use crate::directory::urls::encode_path;
use crate::markup::escape;

/// A base that no real URL has, to resolve a relative URL against a skill's folder and see
/// whether it stays inside it.
const FOLDER_BASE: &str = "http://skill.invalid/";

/// The schemes a link may have.
const LINK_SCHEMES: [&str; 3] = ["http", "https", "mailto"];

/// Where a body's links and images point.
pub(crate) struct Links<'a> {
    /// The path of the record's file endpoint: `/v1/skills/{domain}/{name}/files`.
    pub(crate) files_path: &'a str,
    /// The paths of the skill's files that the directory holds.
    pub(crate) files: &'a HashSet<String>,
    /// The URL the SKILL.md came from.
    pub(crate) source: &'a Url,
}

/// Returns the HTML of a SKILL.md body: rendered, publisher HTML as text, links resolved.
pub(crate) fn render(body: &str, links: &Links<'_>) -> String {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES;
    let mut events = Vec::new();
    // Links do not nest: whether the open one was kept as a link.
    let mut link_kept = true;
    // Images do not nest either: whether the open one is shown as its alt text.
    let mut image_as_text = false;
    for event in Parser::new_ext(body, options) {
        match event {
            Event::Html(raw) | Event::InlineHtml(raw) => events.push(Event::Text(raw)),
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                ..
            }) => match link_href(&dest_url, link_type, links) {
                Some(href) => {
                    link_kept = true;
                    let title = if title.is_empty() {
                        String::new()
                    } else {
                        format!(" title=\"{}\"", escape(&title))
                    };
                    events.push(Event::InlineHtml(CowStr::from(format!(
                        "<a href=\"{}\"{title} rel=\"nofollow noopener noreferrer\">",
                        escape(&href)
                    ))));
                }
                None => link_kept = false,
            },
            Event::End(TagEnd::Link) => {
                if link_kept {
                    events.push(Event::InlineHtml(CowStr::from("</a>")));
                }
                link_kept = true;
            }
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) => match image_src(&dest_url, links) {
                Some(src) => events.push(Event::Start(Tag::Image {
                    link_type,
                    dest_url: CowStr::from(src),
                    title,
                    id,
                })),
                None => {
                    image_as_text = true;
                    events.push(Event::Text(CowStr::from("[image: ")));
                }
            },
            Event::End(TagEnd::Image) if image_as_text => {
                image_as_text = false;
                events.push(Event::Text(CowStr::from("]")));
            }
            other => events.push(other),
        }
    }
    let mut out = String::with_capacity(body.len() * 3 / 2);
    html::push_html(&mut out, events.into_iter());
    out
}

/// Returns the skill's file a relative URL names, and its fragment, if it names one.
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

/// Returns where a link goes, or `None` when it is not to be a link.
fn link_href(value: &str, link_type: LinkType, links: &Links<'_>) -> Option<String> {
    if link_type == LinkType::Email {
        return Some(format!("mailto:{value}"));
    }
    if value.starts_with('#') {
        return Some(value.to_owned());
    }
    if let Some((path, fragment)) = own_file(value, links.files) {
        let fragment = fragment.map(|f| format!("#{f}")).unwrap_or_default();
        return Some(format!(
            "{}/{}{fragment}",
            links.files_path,
            encode_path(&path)
        ));
    }
    // Absolute, or relative to the SKILL.md: where its publisher meant.
    let url = links.source.join(value.trim()).ok()?;
    LINK_SCHEMES
        .contains(&url.scheme())
        .then(|| url.to_string())
}

/// Returns where an image is loaded from, or `None` when it is not to be loaded.
fn image_src(value: &str, links: &Links<'_>) -> Option<String> {
    let (path, _) = own_file(value, links.files)?;
    Some(format!("{}/{}", links.files_path, encode_path(&path)))
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
        let links = Links {
            files_path: "/v1/skills/pub.test/demo/files",
            files: &files,
            source: &source,
        };
        render(body, &links)
    }

    /// Returns the tags of `html` (text holds no `<`: the writer escapes it).
    fn tags(html: &str) -> Vec<&str> {
        html.split('<')
            .skip(1)
            .map(|rest| &rest[..rest.find('>').unwrap_or(rest.len())])
            .collect()
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
    fn publisher_html_is_text_and_no_link_runs_script() {
        let html = rendered(
            "<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n[click](javascript:alert(1))\n\n\
             <a href=\"javascript:alert(1)\">x</a> <iframe src=\"https://evil.test\"></iframe> \
             <div onclick=\"x()\" style=\"color:red\">d</div>\n\n![p](data:image/png;base64,AAAA)\n\n\
             [j](JaVaScRiPt:alert(1)) [t](\" onmouseover=\"x) <javascript:alert(1)>\n\n\
             *<script>alert(2)</script>*",
        );
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
        for tag in tags(&html) {
            let name = tag
                .trim_start_matches('/')
                .split([' ', '/'])
                .next()
                .unwrap();
            assert!(
                ["p", "a", "em", "img"].contains(&name),
                "unexpected tag <{tag}> in {html}"
            );
            let lower = tag.to_lowercase();
            for forbidden in [" on", "javascript:", "data:", "style="] {
                assert!(!lower.contains(forbidden), "<{tag}> in {html}");
            }
        }
    }

    #[test]
    fn relative_links_go_to_the_file_endpoint_and_foreign_images_are_not_loaded() {
        let html = rendered(
            "[run](scripts/run%20me.py) [run2](./scripts/run%20me.py#l1) [up](../other.md) \
             [abs](/docs) [top](#usage) [mail](mailto:a@pub.test)\n\n![logo](img/logo.png) \
             ![remote](https://tracker.test/pixel.gif) ![proto](//tracker.test/p.gif) \
             ![missing](img/none.png)",
        );
        for expected in [
            "href=\"/v1/skills/pub.test/demo/files/scripts/run%20me.py\"",
            "href=\"/v1/skills/pub.test/demo/files/scripts/run%20me.py#l1\"",
            "href=\"https://pub.test/.well-known/agent-skills/other.md\"",
            "href=\"https://pub.test/docs\"",
            "href=\"#usage\"",
            "href=\"mailto:a@pub.test\"",
            "src=\"/v1/skills/pub.test/demo/files/img/logo.png\"",
            "[image: remote]",
            "rel=\"nofollow noopener noreferrer\"",
        ] {
            assert!(html.contains(expected), "{expected} in {html}");
        }
        assert!(!html.contains("tracker.test"), "{html}");
        assert!(!html.contains("img/none.png"), "{html}");
    }
}
