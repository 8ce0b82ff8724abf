//! Every URL and `skill://` URI the directory hands out, built in one place: the public URLs
//! of protocol documents (on `--public-url`), the paths of the pages and of the JSON API, and
//! the URIs of skills served over MCP.

use std::borrow::Cow;

use formats::{Domain, SkillId, Slug};
use percent_encoding::{
    AsciiSet, CONTROLS, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode,
};
use url::Url;

use super::files::check_path;
use crate::error::ApiError;

/// The bytes a URL path segment keeps percent-encoded: everything but RFC 3986 unreserved
/// characters, `:` and `@` (which are `pchar`s).
const PATH_SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b':')
    .remove(b'@');

/// The scheme of a skill's URI.
const SKILL_SCHEME: &str = "skill://";
/// The file that names a skill over MCP.
const SKILL_MD: &str = "SKILL.md";
/// What a `skill://` path segment escapes: everything but unreserved characters and
/// sub-delimiters.
const URI_SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// Builds the directory's URLs on its public URL.
#[derive(Debug, Clone)]
pub(crate) struct Urls {
    base: String,
}

impl Urls {
    /// Returns the URLs of a directory served at `public_url`.
    pub(crate) fn new(public_url: &Url) -> Urls {
        Urls {
            base: public_url.as_str().trim_end_matches('/').to_owned(),
        }
    }

    /// Returns the public URL of `path` (which starts with `/`) on this server.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

/// Percent-encodes one URL path segment.
pub(crate) fn encode_segment(segment: &str) -> String {
    utf8_percent_encode(segment, PATH_SEGMENT).to_string()
}

/// Percent-encodes a relative path, segment by segment.
pub(crate) fn encode_path(path: &str) -> String {
    path.split('/')
        .map(encode_segment)
        .collect::<Vec<_>>()
        .join("/")
}

/// Returns the path of a record in the JSON API: `/v1/skills/{domain}/{name}`.
pub(crate) fn record_path(domain: &Domain, name: &Slug) -> String {
    format!(
        "/v1/skills/{}/{}",
        encode_segment(domain.as_str()),
        encode_segment(name.as_str())
    )
}

/// Returns the path of one of a record's files in the JSON API.
pub(crate) fn file_path(domain: &Domain, name: &Slug, path: &str) -> String {
    format!("{}/files/{}", record_path(domain, name), encode_path(path))
}

/// Returns the path of a record's skill-sharing descriptor.
pub(crate) fn descriptor_path(domain: &Domain, name: &Slug) -> String {
    format!("{}/descriptor", record_path(domain, name))
}

/// Returns the path of a record's page.
pub(crate) fn skill_page_path(domain: &Domain, name: &Slug) -> String {
    format!(
        "/skill/{}/{}",
        encode_segment(domain.as_str()),
        encode_segment(name.as_str())
    )
}

/// Returns the path of a publisher's page.
pub(crate) fn domain_page_path(domain: &Domain) -> String {
    format!("/domains/{}", encode_segment(domain.as_str()))
}

/// Returns the path of a publisher's status in the JSON API.
pub(crate) fn domain_status_path(domain: &Domain) -> String {
    format!("/v1/domains/{}", encode_segment(domain.as_str()))
}

/// Returns the path of the mirror of a publisher (what `npx skills add` is pointed at).
pub(crate) fn mirror_path(domain: &Domain) -> String {
    format!("/mirror/{}", encode_segment(domain.as_str()))
}

/// Returns the URI of the root folder of the skill `domain/name`.
fn skill_root(domain: &str, name: &str) -> String {
    format!(
        "{SKILL_SCHEME}{domain}/{}",
        utf8_percent_encode(name, URI_SEGMENT)
    )
}

/// Returns the URI of the file at `path` (relative to the skill's folder) of the skill
/// `domain/name`: `skill://{domain}/{name}/{path}`, each segment percent-encoded.
pub(crate) fn skill_file_uri(domain: &str, name: &str, path: &str) -> String {
    let mut uri = skill_root(domain, name);
    for segment in path.split('/') {
        uri.push('/');
        uri.extend(utf8_percent_encode(segment, URI_SEGMENT));
    }
    uri
}

/// Returns the URI of the `SKILL.md` of record `domain/name`, which names the skill over MCP.
pub(crate) fn skill_uri(domain: &str, name: &str) -> String {
    skill_file_uri(domain, name, SKILL_MD)
}

/// Returns the record and the file path a `skill://` URI names, or `None` when it cannot name
/// a file of a skill of this directory.
pub(crate) fn parse_skill_uri(uri: &str) -> Option<(SkillId, String)> {
    let rest = uri.strip_prefix(SKILL_SCHEME)?;
    let (domain, rest) = rest.split_once('/')?;
    let (name, path) = rest.split_once('/')?;
    let decode = |raw: &str| {
        percent_decode_str(raw)
            .decode_utf8()
            .ok()
            .map(Cow::into_owned)
    };
    let name = decode(name)?;
    let path = path
        .split('/')
        .map(decode)
        .collect::<Option<Vec<String>>>()?
        .join("/");
    check_path(&path).ok()?;
    let id = parse_id(domain, &name).ok()?;
    Some((id, path))
}

/// Returns the skill-sharing id of a record: `{name}@{domain}`.
pub(crate) fn sharing_id(domain: &Domain, name: &Slug) -> String {
    format!("{name}@{domain}")
}

/// Returns the record id of a skill-sharing id, when it is one.
pub(crate) fn parse_sharing_id(id: &str) -> Option<SkillId> {
    let (name, domain) = id.rsplit_once('@')?;
    parse_id(domain, name).ok()
}

/// Returns the record id named by a domain and a name taken from a URL path.
pub(crate) fn parse_id(domain: &str, name: &str) -> Result<SkillId, ApiError> {
    let domain: Domain = domain
        .parse()
        .map_err(|_| ApiError::InvalidPath(format!("invalid domain {domain:?}")))?;
    let slug: Slug = name
        .parse()
        .map_err(|_| ApiError::InvalidPath(format!("invalid skill name {name:?}")))?;
    Ok(SkillId::new(domain, slug))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_segments_are_escaped() {
        assert_eq!(encode_segment("a b/c%"), "a%20b%2Fc%25");
        assert_eq!(encode_segment("localhost:8080"), "localhost:8080");
        assert_eq!(encode_segment("a-._~:@!é"), "a-._~:@%21%C3%A9");
        assert_eq!(encode_path("scripts/clean me.py"), "scripts/clean%20me.py");
        let urls = Urls::new(&Url::parse("http://directory.test/").unwrap());
        assert_eq!(urls.url("/mcp"), "http://directory.test/mcp");
    }

    #[test]
    fn uris_name_a_file_of_a_skill() {
        let uri = skill_uri("example.com:8080", "pdf-tools");
        assert_eq!(uri, "skill://example.com:8080/pdf-tools/SKILL.md");
        let (id, path) = parse_skill_uri(&uri).unwrap();
        assert_eq!(id.to_string(), "example.com:8080/pdf-tools");
        assert_eq!(path, "SKILL.md");

        let spaced = skill_file_uri("example.com", "pdf-tools", "docs/weird name#1.md");
        assert_eq!(
            spaced,
            "skill://example.com/pdf-tools/docs/weird%20name%231.md"
        );
        assert_eq!(parse_skill_uri(&spaced).unwrap().1, "docs/weird name#1.md");

        for bad in [
            "file:///etc/passwd",
            "skill://example.com/pdf-tools",
            "skill://example.com/pdf-tools/../secret/SKILL.md",
            "skill://example.com/pdf-tools/a/%2e%2e/SKILL.md",
            "skill://example.com/pdf-tools/a%2F..%2F..%2Fb",
            "skill://example.com/pdf-tools//SKILL.md",
            "skill://not a domain/pdf-tools/SKILL.md",
            "skill://example.com/pdf-tools/%ff",
        ] {
            assert!(parse_skill_uri(bad).is_none(), "{bad}");
        }
    }
}
