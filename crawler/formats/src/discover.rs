//! Origins a skill names, for discovery: other sites that may publish skills too. Read from
//! what a crawl already has, never fetched here: the URL its artifact came from (an index,
//! a descriptor or an MCP listing pointing at another origin) and the links of its SKILL.md
//! body. Only origins (`scheme://host[:port]/`) are kept, never a path: a candidate is probed
//! at its well-known paths like any site.

use std::sync::LazyLock;

use regex::Regex;
use url::Url;

use crate::skill::Skill;

/// The most links read from one SKILL.md body: a body that is a link farm names no more.
pub const MAX_BODY_LINKS: usize = 64;

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
    let own = origin_of(&skill.index_url);
    let mut out: Vec<Url> = Vec::new();
    let mut add = |url: &Url| {
        if let Some(origin) = origin_of(url)
            && Some(&origin) != own.as_ref()
            && !out.contains(&origin)
        {
            out.push(origin);
        }
    };
    add(&skill.source_url);
    for found in LINK.find_iter(&skill.body).take(MAX_BODY_LINKS) {
        // Punctuation that ends a sentence is not part of the link.
        let text = found
            .as_str()
            .trim_end_matches(['.', ',', ';', ':', '!', '?', '*', '_']);
        if let Ok(url) = Url::parse(text) {
            add(&url);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
