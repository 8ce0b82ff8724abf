//! The `Link` response header (RFC 8288 §3), read for the origins its targets name: each
//! `<URI-Reference>` resolved against the answer's URL, relation types that only hint at
//! resources a page loads left out. Lenient like a browser: a malformed link value is skipped
//! up to the next comma outside quotes and angle brackets, and the rest is still read.

use std::borrow::Cow;

use url::Url;

use super::{Found, MAX_DOCUMENT_ORIGINS};

/// The most bytes of an answer's `Link` headers read; a driver need keep no more of them.
pub const MAX_LINK_HEADER_BYTES: usize = 16 * 1024;

/// Relation types that point at what a page loads (fonts, scripts, a CDN to connect to early),
/// not at a site that may publish: a link whose every type is one of these is left out.
const RESOURCE_HINTS: [&str; 8] = [
    "dns-prefetch",
    "icon",
    "modulepreload",
    "preconnect",
    "prefetch",
    "preload",
    "prerender",
    "stylesheet",
];

/// One link value: its target as written, and its `rel` parameter (the first one, RFC 8288
/// §3.3), unquoted.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LinkValue<'h> {
    target: &'h str,
    rel: Option<Cow<'h, str>>,
}

impl LinkValue<'_> {
    /// True when the link only hints at a resource to load ([`RESOURCE_HINTS`]).
    fn is_resource_hint(&self) -> bool {
        self.rel.as_deref().is_some_and(|rel| {
            let mut types = rel.split_ascii_whitespace().peekable();
            types.peek().is_some()
                && types.all(|kind| {
                    RESOURCE_HINTS
                        .iter()
                        .any(|hint| hint.eq_ignore_ascii_case(kind))
                })
        })
    }
}

/// Returns the origins other than `at`'s that the `Link` header field `header` of an answer
/// from `at` names (several field lines joined with commas, RFC 9110 §5.3): each target
/// resolved against `at`, http(s) only, at most [`MAX_DOCUMENT_ORIGINS`], and only the first
/// [`MAX_LINK_HEADER_BYTES`] read.
pub fn link_origins(header: &str, at: &Url) -> Vec<Url> {
    let header = &header[..header.floor_char_boundary(MAX_LINK_HEADER_BYTES)];
    let mut found = Found::new(at, MAX_DOCUMENT_ORIGINS);
    for link in parse(header) {
        if link.is_resource_hint() {
            continue;
        }
        if let Ok(target) = at.join(link.target.trim())
            && !found.add(&target)
        {
            break;
        }
    }
    found.origins
}

/// Parses a `Link` header field into its link values, skipping malformed ones.
fn parse(header: &str) -> Vec<LinkValue<'_>> {
    let mut reader = Reader {
        text: header,
        at: 0,
    };
    let mut links = Vec::new();
    loop {
        reader.skip(|byte| byte == b',' || is_space(byte));
        let Some(byte) = reader.peek() else {
            return links;
        };
        if byte != b'<' {
            reader.skip_value();
            continue;
        }
        let Some(target) = reader.target() else {
            // No `>`: the field ends inside the reference (cut short, or never closed).
            return links;
        };
        match reader.params() {
            Some(rel) => links.push(LinkValue { target, rel }),
            None => reader.skip_value(),
        }
    }
}

/// A cursor over a header field; every delimiter it looks for is ASCII, so each index it
/// stops at is a character boundary.
struct Reader<'h> {
    text: &'h str,
    at: usize,
}

impl<'h> Reader<'h> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn skip(&mut self, mut over: impl FnMut(u8) -> bool) {
        while self.peek().is_some_and(&mut over) {
            self.at += 1;
        }
    }

    /// Reads `<URI-Reference>`, the cursor on its `<`.
    fn target(&mut self) -> Option<&'h str> {
        let start = self.at + 1;
        let end = start + self.text.get(start..)?.find('>')?;
        self.at = end + 1;
        Some(&self.text[start..end])
    }

    /// Reads the parameters after a target up to the end of the link value, returning its
    /// first `rel`; `None` when they are malformed.
    fn params(&mut self) -> Option<Option<Cow<'h, str>>> {
        let (mut rel, mut rel_seen) = (None, false);
        loop {
            self.skip(is_space);
            match self.peek() {
                None => return Some(rel),
                Some(b',') => {
                    self.at += 1;
                    return Some(rel);
                }
                Some(b';') => self.at += 1,
                Some(_) => return None,
            }
            self.skip(is_space);
            let name = self.token();
            if name.is_empty() {
                // `<…>;` with nothing after, or `<…>; , …`: nothing to read.
                continue;
            }
            self.skip(is_space);
            let value = if self.peek() == Some(b'=') {
                self.at += 1;
                self.skip(is_space);
                if self.peek() == Some(b'"') {
                    Some(self.quoted()?)
                } else {
                    Some(Cow::Borrowed(self.token()))
                }
            } else {
                None
            };
            if !rel_seen && name.eq_ignore_ascii_case("rel") {
                rel_seen = true;
                rel = value;
            }
        }
    }

    /// Reads a token (RFC 9110 §5.6.2).
    fn token(&mut self) -> &'h str {
        let start = self.at;
        self.skip(is_token_char);
        &self.text[start..self.at]
    }

    /// Reads a quoted string, the cursor on its opening quote, and returns its content
    /// unescaped; `None` when it is never closed.
    fn quoted(&mut self) -> Option<Cow<'h, str>> {
        let start = self.at + 1;
        let mut at = start;
        let mut escaped = false;
        let bytes = self.text.as_bytes();
        loop {
            match bytes.get(at)? {
                b'\\' => {
                    escaped = true;
                    at += 2;
                }
                b'"' => break,
                _ => at += 1,
            }
        }
        self.at = at + 1;
        let content = self.text.get(start..at)?;
        if !escaped {
            return Some(Cow::Borrowed(content));
        }
        let mut unescaped = String::with_capacity(content.len());
        let mut chars = content.chars();
        while let Some(char) = chars.next() {
            unescaped.push(if char == '\\' {
                chars.next().unwrap_or('\\')
            } else {
                char
            });
        }
        Some(Cow::Owned(unescaped))
    }

    /// Moves past the current link value: to the next comma outside quotes and angle
    /// brackets, or the end.
    fn skip_value(&mut self) {
        let bytes = self.text.as_bytes();
        let (mut quoted, mut bracketed) = (false, false);
        while let Some(&byte) = bytes.get(self.at) {
            self.at += 1;
            match byte {
                b'\\' if quoted => self.at += 1,
                b'"' if !bracketed => quoted = !quoted,
                b'<' if !quoted => bracketed = true,
                b'>' if !quoted => bracketed = false,
                b',' if !quoted && !bracketed => return,
                _ => {}
            }
        }
        self.at = self.at.min(bytes.len());
    }
}

fn is_space(byte: u8) -> bool {
    byte == b' ' || byte == b'\t'
}

fn is_token_char(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> Url {
        Url::parse("https://pub.test/.well-known/agent-skills/index.json").unwrap()
    }

    fn origins(header: &str) -> Vec<String> {
        link_origins(header, &at())
            .into_iter()
            .map(String::from)
            .collect()
    }

    #[test]
    fn link_values_are_split_with_their_first_rel() {
        let links = parse(
            r#"<https://a.test/x,y>; rel="alternate next"; rel=ignored, <b>;title="a, \"b\"; c";REL=describedby,<c>"#,
        );
        assert_eq!(
            links,
            [
                LinkValue {
                    target: "https://a.test/x,y",
                    rel: Some("alternate next".into())
                },
                LinkValue {
                    target: "b",
                    rel: Some("describedby".into())
                },
                LinkValue {
                    target: "c",
                    rel: None
                },
            ]
        );
        let escaped = parse(r#"<d>; rel="a\"b""#);
        assert_eq!(escaped[0].rel.as_deref(), Some("a\"b"));
    }

    #[test]
    fn targets_at_other_origins_are_named_relative_ones_resolved() {
        assert_eq!(
            origins(
                "<https://other.test/.well-known/agent-skills/index.json>; rel=\"alternate\", \
                 </docs>; rel=help, <//third.test/x>, <../up>; rel=up, \
                 <https://PUB.test:443/x>; rel=alternate, <HTTPS://Other.Test:443/again>"
            ),
            ["https://other.test/", "https://third.test/"]
        );
    }

    #[test]
    fn near_misses_name_nothing() {
        for header in [
            "",
            "   ,, ,",
            "<mailto:someone@other.test>; rel=author",
            "<ftp://files.test/x>",
            "<data:text/plain,hi>",
            "<https://>; rel=alternate",
            "<https://cut.test/x",
            "https://bare.test/",
            "<https://cdn.test/font.woff2>; rel=preload; as=font, <https://fonts.test>; rel=\"preconnect dns-prefetch\"",
        ] {
            assert!(
                origins(header).is_empty(),
                "{header:?}: {:?}",
                origins(header)
            );
        }
    }

    #[test]
    fn a_malformed_value_is_skipped_and_the_rest_read() {
        assert_eq!(
            origins(
                "garbage \"with, comma\", <https://a.test/> junk \"<,>\", <https://b.test/>; \
                 rel=alternate, <https://c.test/>; title=\"never closed, <https://d.test/>"
            ),
            ["https://b.test/"]
        );
        // A preload that is also something else is a link like any other.
        assert_eq!(
            origins("<https://d.test/>; rel=\"preload alternate\""),
            ["https://d.test/"]
        );
        assert_eq!(
            origins("<https://e.test/>; rel; rel=preload"),
            ["https://e.test/"]
        );
    }

    #[test]
    fn a_huge_header_is_read_only_so_far() {
        let farm: Vec<String> = (0..100_000)
            .map(|n| format!("<https://f{n}.test/>; rel=alternate"))
            .collect();
        let header = farm.join(", ");
        let found = origins(&header);
        assert_eq!(found.len(), MAX_DOCUMENT_ORIGINS);
        assert_eq!(found[0], "https://f0.test/");
        // Only the first bytes are read: a target past them is never met.
        let late = format!(
            "{}, <https://late.test/>",
            " ".repeat(MAX_LINK_HEADER_BYTES)
        );
        assert!(origins(&late).is_empty());
        // A cut in the middle of a multi-byte character is not a panic.
        let wide = format!("{}<https://é.test/>", "é".repeat(MAX_LINK_HEADER_BYTES));
        assert!(origins(&wide).is_empty());
    }
}
