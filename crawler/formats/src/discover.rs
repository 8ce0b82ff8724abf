//! Origins a site names, for discovery: other sites that may publish skills too. Read from
//! what a crawl already has, never fetched here: absolute URLs in the documents it reads, the
//! artifact URL and SKILL.md links of each record, and the `Link` headers of its index answers
//! ([`link`]). Only origins (`scheme://host[:port]/`) are kept, never a path, and only so many
//! per document and per site: a candidate is probed at its well-known paths like any site.

pub mod link;

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;
use url::Url;

use crate::skill::Skill;

pub use link::link_origins;

/// The most links read from one SKILL.md body: a body that is a link farm names no more.
pub const MAX_BODY_LINKS: usize = 64;
/// The most origins taken from one document (an index, a descriptor, an MCP listing, the
/// `Link` headers of one answer): a document that is a link farm names no more.
pub const MAX_DOCUMENT_ORIGINS: usize = 64;
/// The most origins one site's crawl keeps ([`NamedOrigins`]), whatever it lists.
pub const MAX_SITE_ORIGINS: usize = 1024;
/// The longest string read as a URL; longer ones are not links anyone follows.
pub const MAX_URL_BYTES: usize = 2048;

/// Keys whose values identify a document's format rather than link to a site (JSON Schema,
/// JSON-LD): every v0.2 index names the schema's host, which publishes no skills for it.
const FORMAT_KEYS: [&str; 2] = ["$schema", "@context"];

/// An absolute http(s) URL in text (markdown links, autolinks, bare URLs alike).
static LINK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)\bhttps?://[^\s<>()\[\]"'`]+"#).expect("a valid literal pattern")
});

/// Returns `url`'s origin as a URL with path `/`, for http(s) URLs with a host.
pub fn origin_of(url: &Url) -> Option<Url> {
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        return None;
    }
    Url::parse(&url.origin().ascii_serialization()).ok()
}

/// Returns the origins `skill` names other than its own, each once, in the order met: its
/// artifact's and index's (when another origin serves them), then its body's links (at most
/// [`MAX_BODY_LINKS`] read).
pub fn origins(skill: &Skill) -> Vec<Url> {
    let mut found = Found::new(&skill.index_url, usize::MAX);
    found.add(&skill.source_url);
    for link in LINK.find_iter(&skill.body).take(MAX_BODY_LINKS) {
        // Punctuation that ends a sentence is not part of the link.
        let text = link
            .as_str()
            .trim_end_matches(['.', ',', ';', ':', '!', '?', '*', '_']);
        if let Ok(url) = Url::parse(text) {
            found.add(&url);
        }
    }
    found.origins
}

/// Returns the origins other than `at`'s that the JSON document `text`, fetched from `at`,
/// names: every string value that is an absolute http(s) URL as a whole, in any field but
/// `$schema` and `@context` (format identifiers), at most [`MAX_DOCUMENT_ORIGINS`].
///
/// The bytes are scanned for string literals rather than parsed again, so reading an index
/// for origins costs no second tree of it; input that is not JSON names what its quoted
/// strings name.
pub fn json_origins(text: &[u8], at: &Url) -> Vec<Url> {
    let mut found = Found::new(at, MAX_DOCUMENT_ORIGINS);
    let mut format_value = false;
    let mut position = 0;
    while let Some(open) = find(text, position, b'"') {
        let Some(close) = string_end(text, open) else {
            break;
        };
        let literal = &text[open..=close];
        position = close + 1;
        let is_key = text[position..]
            .iter()
            .find(|byte| !byte.is_ascii_whitespace())
            == Some(&b':');
        if is_key {
            format_value = FORMAT_KEYS
                .iter()
                .any(|key| literal.get(1..literal.len() - 1) == Some(key.as_bytes()));
            continue;
        }
        if std::mem::take(&mut format_value) {
            continue;
        }
        if let Some(url) = literal_url(literal)
            && !found.add(&url)
        {
            break;
        }
    }
    found.origins
}

/// Returns the origins other than `at`'s that the JSON values of one document fetched from
/// `at` name (an MCP listing's entries, already parsed): as [`json_origins`].
pub fn json_value_origins<'v>(values: impl IntoIterator<Item = &'v Value>, at: &Url) -> Vec<Url> {
    let mut found = Found::new(at, MAX_DOCUMENT_ORIGINS);
    let mut stack: Vec<&Value> = values.into_iter().collect();
    stack.reverse();
    while let Some(value) = stack.pop() {
        match value {
            Value::String(text) => {
                if let Some(url) = absolute_url(text)
                    && !found.add(&url)
                {
                    break;
                }
            }
            Value::Array(items) => stack.extend(items.iter().rev()),
            Value::Object(fields) => stack.extend(
                fields
                    .iter()
                    .rev()
                    .filter(|(key, value)| {
                        !(value.is_string() && FORMAT_KEYS.contains(&key.as_str()))
                    })
                    .map(|(_, value)| value),
            ),
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
    found.origins
}

/// The origins one site's crawl named, each once, in the order met, at most
/// [`MAX_SITE_ORIGINS`]: what discovery reads of the site once its crawl is done.
#[derive(Debug, Clone, Default)]
pub struct NamedOrigins {
    origins: Vec<Url>,
    seen: HashSet<Url>,
    left_out: usize,
}

impl NamedOrigins {
    /// Adds `origins`, skipping those already named; past [`MAX_SITE_ORIGINS`] they are only
    /// counted ([`NamedOrigins::left_out`]).
    pub fn extend(&mut self, origins: impl IntoIterator<Item = Url>) {
        for origin in origins {
            if self.seen.contains(&origin) {
                continue;
            }
            if self.origins.len() >= MAX_SITE_ORIGINS {
                self.left_out += 1;
                continue;
            }
            self.seen.insert(origin.clone());
            self.origins.push(origin);
        }
    }

    /// Returns the origins, in the order they were named.
    pub fn iter(&self) -> std::slice::Iter<'_, Url> {
        self.origins.iter()
    }

    /// Returns how many origins were kept.
    pub fn len(&self) -> usize {
        self.origins.len()
    }

    /// True when the site named no other origin.
    pub fn is_empty(&self) -> bool {
        self.origins.is_empty()
    }

    /// Returns how many more were named past [`MAX_SITE_ORIGINS`] (counted once each time
    /// they were met).
    pub fn left_out(&self) -> usize {
        self.left_out
    }
}

impl<'a> IntoIterator for &'a NamedOrigins {
    type Item = &'a Url;
    type IntoIter = std::slice::Iter<'a, Url>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Origins met in one source, other than its own, each once, up to a cap.
struct Found {
    own: Option<Url>,
    origins: Vec<Url>,
    cap: usize,
}

impl Found {
    fn new(at: &Url, cap: usize) -> Found {
        Found {
            own: origin_of(at),
            origins: Vec::new(),
            cap,
        }
    }

    /// Adds `url`'s origin unless it is the own one or met already; false once the cap is
    /// reached.
    fn add(&mut self, url: &Url) -> bool {
        if let Some(origin) = origin_of(url)
            && Some(&origin) != self.own.as_ref()
            && !self.origins.contains(&origin)
        {
            self.origins.push(origin);
        }
        self.origins.len() < self.cap
    }
}

/// Returns `text` as a URL when it is an absolute http(s) URL as a whole (surrounding white
/// space aside), at most [`MAX_URL_BYTES`] long.
fn absolute_url(text: &str) -> Option<Url> {
    let text = text.trim();
    let scheme = text.get(..4)?;
    if text.len() > MAX_URL_BYTES || !scheme.eq_ignore_ascii_case("http") {
        return None;
    }
    Url::parse(text).ok()
}

/// Returns the URL a JSON string literal (quotes included) holds, decoding its escapes
/// (`https:\/\/` is how some encoders write every URL) only when it has some.
fn literal_url(literal: &[u8]) -> Option<Url> {
    if literal.len() > MAX_URL_BYTES + 2 {
        return None;
    }
    let inner = literal.get(1..literal.len() - 1)?;
    let start = inner.iter().position(|byte| !byte.is_ascii_whitespace())?;
    if !inner[start..]
        .get(..4)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case(b"http"))
    {
        return None;
    }
    if inner.contains(&b'\\') {
        let text: String = serde_json::from_slice(literal).ok()?;
        absolute_url(&text)
    } else {
        absolute_url(std::str::from_utf8(inner).ok()?)
    }
}

/// Returns the index of the first `byte` in `text` at or after `from`.
fn find(text: &[u8], from: usize, byte: u8) -> Option<usize> {
    let offset = text.get(from..)?.iter().position(|other| *other == byte)?;
    Some(from + offset)
}

/// Returns the index of the quote that closes the JSON string opened at `open`, stepping over
/// escapes; `None` when the text ends first.
fn string_end(text: &[u8], open: usize) -> Option<usize> {
    let mut at = open + 1;
    loop {
        match text.get(at)? {
            b'\\' => at += 2,
            b'"' => return Some(at),
            _ => at += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    fn names(origins: &[Url]) -> Vec<&str> {
        origins.iter().map(Url::as_str).collect()
    }

    #[test]
    fn origins_are_kept_without_their_paths() {
        let url = Url::parse("https://Docs.Example.com:8443/a/b?c#d").unwrap();
        assert_eq!(
            origin_of(&url).unwrap().as_str(),
            "https://docs.example.com:8443/"
        );
        assert!(origin_of(&Url::parse("mailto:a@b.test").unwrap()).is_none());
        assert!(origin_of(&Url::parse("ftp://files.test/x").unwrap()).is_none());
    }

    #[test]
    fn links_in_text_are_found_and_trimmed() {
        let text = "See [docs](https://docs.test/guide), <https://auto.test/x>, and \
                    https://bare.test/path. Also http://plain.test:8080/y!";
        let found: Vec<String> = LINK
            .find_iter(text)
            .map(|m| {
                m.as_str()
                    .trim_end_matches(['.', ',', ';', ':', '!', '?', '*', '_'])
                    .to_owned()
            })
            .collect();
        assert_eq!(
            found,
            [
                "https://docs.test/guide",
                "https://auto.test/x",
                "https://bare.test/path",
                "http://plain.test:8080/y"
            ]
        );
    }

    #[test]
    fn any_field_of_a_document_holding_a_url_names_its_origin() {
        let at = url("https://pub.test/.well-known/agent-skills/index.json");
        let document = r#"{
            "$schema": "https://schemas.agentskills.io/discovery/0.2.0/schema.json",
            "skills": [
                {"name": "a", "url": "https://cdn.test/a/SKILL.md", "homepage": " HTTPS://Home.Test/x "},
                {"name": "b", "url": "b/SKILL.md", "see": ["https://pub.test/same", "http://cdn.test:80/again"]},
                {"escaped": "https:\/\/escaped.test\/p", "key": {"https://key.test/": 1}},
                {"prose": "see https://prose.test/ for more", "mail": "mailto:a@b.test",
                 "ftp": "ftp://files.test/", "relative": "/docs", "broken": "https://", "big": 7}
            ]
        }"#;
        assert_eq!(
            names(&json_origins(document.as_bytes(), &at)),
            [
                "https://cdn.test/",
                "https://home.test/",
                "http://cdn.test/",
                "https://escaped.test/"
            ]
        );
        // The same document, already parsed, names the same origins.
        let value: Value = serde_json::from_str(document).unwrap();
        assert_eq!(
            names(&json_value_origins([&value], &at)),
            names(&json_origins(document.as_bytes(), &at))
        );
    }

    #[test]
    fn a_document_that_is_not_json_or_is_cut_short_is_read_as_far_as_it_goes() {
        let at = url("https://pub.test/index.json");
        assert_eq!(
            names(&json_origins(br#"["https://a.test/", "https://b.te"#, &at)),
            ["https://a.test/"]
        );
        assert!(json_origins(b"<html>https://c.test/</html>", &at).is_empty());
        assert!(json_origins(b"\"\\", &at).is_empty());
        assert!(json_origins(&[b'"', 0xff, b'"'], &at).is_empty());
        // A string longer than a URL is skipped, not read.
        let long = format!(r#"["https://long.test/{}"]"#, "x".repeat(MAX_URL_BYTES));
        assert!(json_origins(long.as_bytes(), &at).is_empty());
    }

    #[test]
    fn a_document_that_is_a_link_farm_names_at_most_its_cap() {
        let at = url("https://farm.test/index.json");
        let farm: Vec<String> = (0..10_000)
            .map(|n| format!("https://f{n}.test/x"))
            .collect();
        let text = serde_json::to_string(&farm).unwrap();
        let found = json_origins(text.as_bytes(), &at);
        assert_eq!(found.len(), MAX_DOCUMENT_ORIGINS);
        assert_eq!(found[0].as_str(), "https://f0.test/");
        let values: Vec<Value> = farm.into_iter().map(Value::String).collect();
        assert_eq!(json_value_origins(&values, &at), found);
    }

    #[test]
    fn a_site_keeps_each_origin_once_up_to_its_cap() {
        let mut named = NamedOrigins::default();
        named.extend([url("https://a.test/"), url("https://b.test/")]);
        named.extend([url("https://a.test/")]);
        assert_eq!(
            names(&named.origins),
            ["https://a.test/", "https://b.test/"]
        );
        named.extend((0..MAX_SITE_ORIGINS).map(|n| url(&format!("https://s{n}.test/"))));
        assert_eq!(named.len(), MAX_SITE_ORIGINS);
        assert_eq!(named.left_out(), 2);
        assert_eq!(named.iter().next().unwrap().as_str(), "https://a.test/");
    }
}
