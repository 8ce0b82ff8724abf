//! The seed format: which sites to crawl (docs/crawl.md, `skillscout crawl`).
//!
//! A seed, on a line of a seed file or as a command-line TARGET, is one of:
//!
//! - a bare host, `example.com`, crawled as `https://example.com`;
//! - a host with a port, `example.com:8443`, also https;
//! - an origin, `http://host:port`;
//! - an origin with a path, `https://code.claude.com/docs`. Docs sites publish under their
//!   path, so the well-known paths are probed under that path first, then at the root;
//! - an MCP endpoint, `mcp+https://host/path` (or `mcp+http://host:port/path`), read through
//!   the MCP Skills Extension instead of the well-known paths ([`crate::mcp`]). The scheme
//!   after `mcp+` is required, and the path is the endpoint's, kept as written.
//!
//! A seed file holds one seed per line, or is a ranked list of `rank,domain` lines as the
//! Tranco list and its like publish them (a first line of column names is skipped). `#`
//! starts a comment at the start of a line or after whitespace (so `https://host/#x` is a
//! seed with a fragment, which is refused, not a seed followed by a comment). Blank lines are
//! ignored, and every bad line is reported with its line number while the good ones are
//! still used. [`parse_line`] reads one line, so a list of a million lines can be read as it
//! streams.

use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;

use url::{Host, Url};

use crate::diagnostic::{Code, Diagnostic};
use crate::skill::Domain;

/// The longest seed accepted, in bytes.
pub const MAX_SEED_LEN: usize = 2048;
/// The longest host name accepted, in characters, without a trailing dot (RFC 1035 §2.3.4).
pub const MAX_HOST_LEN: usize = 253;
/// The longest label of a host name accepted, in characters (RFC 1035 §2.3.4).
pub const MAX_LABEL_LEN: usize = 63;

/// How many characters of an over-long seed its error message quotes.
const QUOTED_PREFIX_CHARS: usize = 40;

/// One site to crawl: an http(s) origin and, for sites that publish under a path, that path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SeedTarget {
    /// `scheme://host[:port]/`, lowercase host, default port dropped.
    origin: Url,
    /// The path without a trailing slash, percent-encoded; `None` for the root.
    base_path: Option<String>,
    /// The origin's domain, computed once since a target is only built from a valid origin.
    domain: Domain,
    /// The MCP endpoint, for an `mcp+http(s)://` seed: the site is read through the Skills
    /// Extension of the server there, not through the well-known paths.
    mcp_endpoint: Option<Url>,
}

/// The prefix that marks a seed as an MCP endpoint.
pub const MCP_SEED_PREFIX: &str = "mcp+";

impl SeedTarget {
    /// Parses a seed line or command-line target. Surrounding whitespace is ignored.
    ///
    /// The error names the input and what is wrong with it, e.g.
    /// `invalid seed "ftp://x": scheme must be http or https`.
    pub fn parse(raw: &str) -> Result<SeedTarget, String> {
        let seed = raw.trim();
        let invalid = |problem: &str| format!("invalid seed {seed:?}: {problem}");

        if seed.len() > MAX_SEED_LEN {
            let prefix: String = seed.chars().take(QUOTED_PREFIX_CHARS).collect();
            return Err(format!(
                "invalid seed starting {prefix:?}: it is {} bytes long (at most {MAX_SEED_LEN})",
                seed.len()
            ));
        }
        let mcp = seed
            .get(..MCP_SEED_PREFIX.len())
            .is_some_and(|prefix| prefix.eq_ignore_ascii_case(MCP_SEED_PREFIX));
        let url_text = if mcp {
            &seed[MCP_SEED_PREFIX.len()..]
        } else {
            seed
        };
        if mcp && !url_text.contains("://") {
            return Err(invalid(
                "an MCP endpoint names its scheme: mcp+https://host/path or mcp+http://host/path",
            ));
        }
        let (scheme, rest) = split_scheme(url_text).map_err(invalid)?;
        check_authority_and_path(rest).map_err(invalid)?;
        let mut url =
            Url::parse(&format!("{scheme}://{rest}")).map_err(|err| invalid(&err.to_string()))?;
        if url.port() == Some(0) {
            return Err(invalid("port 0 is not usable"));
        }
        normalise_host(&mut url).map_err(|problem| invalid(&problem))?;
        let (base_path, mcp_endpoint) = if mcp {
            check_endpoint_path(&url).map_err(invalid)?;
            (None, Some(url.clone()))
        } else {
            (base_path(&url).map_err(invalid)?, None)
        };

        let mut origin = url;
        origin.set_path("/");
        let domain = Domain::from_url(&origin).map_err(|err| invalid(&err.to_string()))?;
        Ok(SeedTarget {
            origin,
            base_path,
            domain,
            mcp_endpoint,
        })
    }

    /// Returns the MCP endpoint, for an `mcp+http(s)://` target; `None` for a web site.
    pub fn mcp_endpoint(&self) -> Option<&Url> {
        self.mcp_endpoint.as_ref()
    }

    /// Returns `scheme://host[:port]/`, with path `/`.
    pub fn origin(&self) -> &Url {
        &self.origin
    }

    /// Returns the path the site publishes under, without a trailing slash (`/docs`), or
    /// `None` for the root.
    pub fn base_path(&self) -> Option<&str> {
        self.base_path.as_deref()
    }

    /// Returns the origin's domain: host, and `:port` when not the scheme's default.
    pub fn domain(&self) -> Domain {
        self.domain.clone()
    }

    /// Returns why the target is not a public site, for lists that take only public ones
    /// (`seeds add`, submissions): an IP address instead of a name, or `localhost`. `None`
    /// for a DNS name; where a name resolves is the fetch layer's to check.
    pub fn not_public(&self) -> Option<&'static str> {
        match self.origin.host() {
            Some(Host::Ipv4(_) | Host::Ipv6(_)) => Some("an IP address, not a domain name"),
            Some(Host::Domain(name)) => {
                let name = name.trim_end_matches('.');
                (name == "localhost" || name.ends_with(".localhost"))
                    .then_some("localhost is not a public site")
            }
            None => Some("it has no host"),
        }
    }

    /// Base URLs to probe well-known paths under, most specific first, each ending in '/':
    /// ["https://h/docs/", "https://h/"] or ["https://h/"].
    pub fn probe_bases(&self) -> Vec<Url> {
        let mut bases = Vec::with_capacity(2);
        if let Some(path) = &self.base_path {
            let mut base = self.origin.clone();
            base.set_path(&format!("{path}/"));
            bases.push(base);
        }
        bases.push(self.origin.clone());
        bases
    }
}

/// Splits a seed into its scheme (`https` when it names none) and the rest, after checking
/// its text: not empty, no whitespace or control character.
fn split_scheme(seed: &str) -> Result<(&'static str, &str), &'static str> {
    if seed.is_empty() {
        return Err("it is empty");
    }
    // `url` silently drops tabs and newlines inside a URL; a seed holding one is a typo,
    // not a request for the joined-up host.
    if seed.chars().any(char::is_whitespace) {
        return Err("it contains whitespace");
    }
    if seed.chars().any(char::is_control) {
        return Err("it contains a control character");
    }
    match seed.split_once("://") {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => Ok(("http", rest)),
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("https") => Ok(("https", rest)),
        Some(_) => Err("scheme must be http or https"),
        None => Ok(("https", seed)),
    }
}

/// Checks what follows the scheme, on the text, before `url` normalises it away: credentials
/// would be sent to the site, and `url` resolves `..` (even as `%2e%2e`) without a trace.
fn check_authority_and_path(rest: &str) -> Result<(), &'static str> {
    let authority_end = rest.find(['/', '\\', '?', '#']).unwrap_or(rest.len());
    let (authority, after_authority) = rest.split_at(authority_end);
    if authority.is_empty() {
        return Err("it has no host");
    }
    if authority.contains('@') {
        return Err("credentials (user@host) are not allowed");
    }
    let path_end = after_authority
        .find(['?', '#'])
        .unwrap_or(after_authority.len());
    let (raw_path, query_or_fragment) = after_authority.split_at(path_end);
    if query_or_fragment.starts_with('?') {
        return Err("query strings are not allowed");
    }
    if query_or_fragment.starts_with('#') {
        return Err("fragments are not allowed");
    }
    if raw_path.split(['/', '\\']).any(is_dot_dot) {
        return Err("its path contains a `..` segment");
    }
    Ok(())
}

/// Checks the host: a DNS name that follows the rules, or an IP address.
fn normalise_host(url: &mut Url) -> Result<(), String> {
    match url.host() {
        Some(Host::Domain(host)) => {
            if let Some(problem) = dns_name_problem(host) {
                return Err(problem);
            }
            // `example.com.` and `example.com` are the same site; keep one spelling so
            // that duplicates are found and domains match.
            if let Some(host) = host.strip_suffix('.').map(str::to_owned) {
                url.set_host(Some(&host)).map_err(|err| err.to_string())?;
            }
            Ok(())
        }
        Some(Host::Ipv4(_) | Host::Ipv6(_)) => Ok(()),
        None => Err("it has no host".to_owned()),
    }
}

/// Returns the path a site publishes under, without a trailing slash, or `None` for the root.
fn base_path(url: &Url) -> Result<Option<String>, &'static str> {
    let path = url.path().trim_end_matches('/');
    if path.is_empty() {
        return Ok(None);
    }
    // The leading '/' yields one empty segment; any other is a `//` inside the path.
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    if segments.iter().any(|segment| segment.is_empty()) {
        return Err("its path contains an empty segment (`//`)");
    }
    if segments
        .iter()
        .any(|segment| segment.eq_ignore_ascii_case(".well-known"))
    {
        return Err("give the site, not the index URL (the path contains .well-known)");
    }
    Ok(Some(path.to_owned()))
}

/// Checks an MCP endpoint's path: no empty segment inside it (`//`). The path is otherwise
/// the server's business, `.well-known` included.
fn check_endpoint_path(url: &Url) -> Result<(), &'static str> {
    let path = url.path();
    let inner = path.strip_suffix('/').unwrap_or(path);
    if inner.split('/').skip(1).any(str::is_empty) {
        return Err("its path contains an empty segment (`//`)");
    }
    Ok(())
}

impl FromStr for SeedTarget {
    type Err = String;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        SeedTarget::parse(raw)
    }
}

impl fmt::Display for SeedTarget {
    /// Writes the origin and path without a trailing slash, e.g.
    /// `https://code.claude.com/docs` or `https://example.com`; the output parses back to
    /// the same target.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(endpoint) = &self.mcp_endpoint {
            return write!(f, "{MCP_SEED_PREFIX}{endpoint}");
        }
        let origin = self.origin.as_str();
        f.write_str(origin.strip_suffix('/').unwrap_or(origin))?;
        if let Some(path) = &self.base_path {
            f.write_str(path)?;
        }
        Ok(())
    }
}

/// A bad line of a seed file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct SeedError {
    /// The 1-based line number.
    pub line: usize,
    /// The seed as written on the line, without its comment and surrounding whitespace.
    pub text: String,
    /// What is wrong, naming the seed.
    pub message: String,
}

impl SeedError {
    /// Returns the error as a [`Code::InvalidSeed`] diagnostic, for crawl reports.
    pub fn to_diagnostic(&self) -> Diagnostic {
        Diagnostic::new(Code::InvalidSeed, self.to_string())
    }
}

/// Returns a domain key as people read it: an internationalised name in Unicode
/// (`xn--bcher-kva.example` becomes `bücher.example`), a port kept. Keys stay in punycode
/// everywhere they are stored or compared; this is for showing them.
pub fn display_domain(domain: &str) -> String {
    let (host, port) = match domain.rsplit_once(':') {
        Some((host, port))
            if !host.starts_with('[') && port.bytes().all(|b| b.is_ascii_digit()) =>
        {
            (host, Some(port))
        }
        _ => (domain, None),
    };
    if !host.split('.').any(|label| label.starts_with("xn--")) {
        return domain.to_owned();
    }
    let (unicode, result) = idna::domain_to_unicode(host);
    if result.is_err() {
        return domain.to_owned();
    }
    match port {
        Some(port) => format!("{unicode}:{port}"),
        None => unicode,
    }
}

/// One good line of a seed file: its target, and its rank in a ranked list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedLine {
    /// The target.
    pub target: SeedTarget,
    /// The rank of a `rank,domain` line.
    pub rank: Option<u64>,
}

/// Reads line `number` (1-based) of a seed file: `Ok(None)` for a blank or comment line (or
/// a first line of column names, `rank,domain`), the target otherwise, or what is wrong.
pub fn parse_line(line: &str, number: usize) -> Result<Option<SeedLine>, SeedError> {
    let line = if number == 1 {
        line.strip_prefix('\u{feff}').unwrap_or(line)
    } else {
        line
    };
    let seed = strip_comment(line).trim();
    if seed.is_empty() {
        return Ok(None);
    }
    let error = |message: String| SeedError {
        line: number,
        text: seed.to_owned(),
        message,
    };
    let (rank, seed_text) = match seed.split_once(',') {
        Some((rank, rest))
            if !rank.is_empty() && rank.trim().bytes().all(|b| b.is_ascii_digit()) =>
        {
            let rank = rank
                .trim()
                .parse::<u64>()
                .map_err(|_| error(format!("rank {rank:?} is too large")))?;
            (Some(rank), rest.trim())
        }
        Some((first, second))
            if number == 1
                && [first, second].iter().all(|column| {
                    let column = column.trim();
                    !column.is_empty()
                        && column
                            .chars()
                            .all(|c| c.is_ascii_alphabetic() || c == '_' || c == ' ')
                }) =>
        {
            return Ok(None);
        }
        _ => (None, seed),
    };
    match SeedTarget::parse(seed_text) {
        Ok(target) => Ok(Some(SeedLine { target, rank })),
        Err(message) => Err(error(message)),
    }
}

/// Parses a seed file: targets in file order with duplicates removed (first kept), and one
/// error per bad line.
pub fn parse_seeds(text: &str) -> (Vec<SeedTarget>, Vec<SeedError>) {
    let mut seen = HashSet::new();
    let mut targets = Vec::new();
    let mut errors = Vec::new();
    for (index, line) in text.lines().enumerate() {
        match parse_line(line, index + 1) {
            Ok(Some(SeedLine { target, .. })) => {
                if seen.insert(target.clone()) {
                    targets.push(target);
                }
            }
            Ok(None) => {}
            Err(error) => errors.push(error),
        }
    }
    (targets, errors)
}

/// Returns `line` without its comment: from a `#` at the start or after whitespace.
fn strip_comment(line: &str) -> &str {
    let mut after_whitespace = true;
    for (at, character) in line.char_indices() {
        if character == '#' && after_whitespace {
            return &line[..at];
        }
        after_whitespace = character.is_whitespace();
    }
    line
}

/// Returns true for a path segment that `url` would resolve as `..`.
fn is_dot_dot(segment: &str) -> bool {
    let segment = segment.to_ascii_lowercase();
    matches!(segment.as_str(), ".." | ".%2e" | "%2e." | "%2e%2e")
}

/// Returns what makes `host` (as `url` parsed it: lowercase, IDNA-encoded) unusable as a DNS
/// name, or `None`. Underscores are allowed: they are not valid in host names, but real sites
/// use them and resolvers accept them.
fn dns_name_problem(host: &str) -> Option<String> {
    let name = host.strip_suffix('.').unwrap_or(host);
    if name.len() > MAX_HOST_LEN {
        return Some(format!(
            "host is {} characters long (at most {MAX_HOST_LEN})",
            name.len()
        ));
    }
    for label in name.split('.') {
        if label.is_empty() {
            return Some(format!("host {host:?} has an empty label"));
        }
        if label.len() > MAX_LABEL_LEN {
            return Some(format!(
                "host label {label:?} is {} characters long (at most {MAX_LABEL_LEN})",
                label.len()
            ));
        }
        if let Some(bad) = label
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
        {
            return Some(format!(
                "host {host:?} contains {bad:?}, which is not allowed in a host name"
            ));
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Some(format!("host label {label:?} starts or ends with a hyphen"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    use proptest::prelude::*;

    #[test]
    fn good_seeds() {
        // (seed, Display, origin, base path, domain)
        #[rustfmt::skip]
        let cases = [
            ("example.com", "https://example.com", "https://example.com/", None, "example.com"),
            ("Example.COM", "https://example.com", "https://example.com/", None, "example.com"),
            ("  example.com\t", "https://example.com", "https://example.com/", None, "example.com"),
            ("example.com.", "https://example.com", "https://example.com/", None, "example.com"),
            ("example.com:8443", "https://example.com:8443", "https://example.com:8443/", None, "example.com:8443"),
            ("example.com:443", "https://example.com", "https://example.com/", None, "example.com"),
            ("http://example.com:80/", "http://example.com", "http://example.com/", None, "example.com"),
            ("HTTP://localhost:8080", "http://localhost:8080", "http://localhost:8080/", None, "localhost:8080"),
            ("intranet", "https://intranet", "https://intranet/", None, "intranet"),
            ("my_site.example.com", "https://my_site.example.com", "https://my_site.example.com/", None, "my_site.example.com"),
            ("127.0.0.1:9000", "https://127.0.0.1:9000", "https://127.0.0.1:9000/", None, "127.0.0.1:9000"),
            ("http://[::1]:8080", "http://[::1]:8080", "http://[::1]:8080/", None, "[::1]:8080"),
            ("bücher.example", "https://xn--bcher-kva.example", "https://xn--bcher-kva.example/", None, "xn--bcher-kva.example"),
            ("https://example.com/", "https://example.com", "https://example.com/", None, "example.com"),
            ("https://example.com//", "https://example.com", "https://example.com/", None, "example.com"),
            ("https://code.claude.com/docs", "https://code.claude.com/docs", "https://code.claude.com/", Some("/docs"), "code.claude.com"),
            ("https://code.claude.com/docs/", "https://code.claude.com/docs", "https://code.claude.com/", Some("/docs"), "code.claude.com"),
            ("code.claude.com/docs", "https://code.claude.com/docs", "https://code.claude.com/", Some("/docs"), "code.claude.com"),
            ("HTTPS://Docs.Example.COM/Guide/v2/", "https://docs.example.com/Guide/v2", "https://docs.example.com/", Some("/Guide/v2"), "docs.example.com"),
            ("https://example.com/a.b/c-d", "https://example.com/a.b/c-d", "https://example.com/", Some("/a.b/c-d"), "example.com"),
            ("https://example.com/dócs", "https://example.com/d%C3%B3cs", "https://example.com/", Some("/d%C3%B3cs"), "example.com"),
        ];
        for (seed, display, origin, base_path, domain) in cases {
            let target = SeedTarget::parse(seed).unwrap_or_else(|err| panic!("{seed:?}: {err}"));
            assert_eq!(target.to_string(), display, "{seed:?}");
            assert_eq!(target.origin().as_str(), origin, "{seed:?}");
            assert_eq!(target.base_path(), base_path, "{seed:?}");
            assert_eq!(target.domain().as_str(), domain, "{seed:?}");
            assert_eq!(
                SeedTarget::parse(display).as_ref(),
                Ok(&target),
                "{seed:?} round trip"
            );
        }
    }

    #[test]
    fn bad_seeds() {
        let long_label = format!("{}.com", "a".repeat(MAX_LABEL_LEN + 1));
        let long_host = format!("{}com", "abcdefghi.".repeat(26));
        let long_seed = format!("example.com/{}", "p".repeat(MAX_SEED_LEN));
        #[rustfmt::skip]
        let cases = [
            ("", "it is empty"),
            ("   ", "it is empty"),
            ("ftp://example.com", "scheme must be http or https"),
            ("file:///etc/passwd", "scheme must be http or https"),
            ("wss://example.com", "scheme must be http or https"),
            ("https://user:pw@example.com", "credentials (user@host) are not allowed"),
            ("user@example.com", "credentials (user@host) are not allowed"),
            ("https://@example.com", "credentials (user@host) are not allowed"),
            ("https://example.com/?q=1", "query strings are not allowed"),
            ("https://example.com?", "query strings are not allowed"),
            ("https://example.com/docs#intro", "fragments are not allowed"),
            ("https://", "it has no host"),
            ("https:///docs", "it has no host"),
            ("//example.com", "it has no host"),
            ("/docs", "it has no host"),
            ("exa mple.com", "it contains whitespace"),
            ("exa\tmple.com", "it contains whitespace"),
            ("https://example.com/my docs", "it contains whitespace"),
            ("exa\u{0}mple.com", "it contains a control character"),
            ("exa!mple.com", "host \"exa!mple.com\" contains '!', which is not allowed in a host name"),
            ("exa*mple.com", "host \"exa*mple.com\" contains '*', which is not allowed in a host name"),
            ("-example.com", "host label \"-example\" starts or ends with a hyphen"),
            ("example..com", "host \"example..com\" has an empty label"),
            ("https://example.com/a/../b", "its path contains a `..` segment"),
            ("https://example.com/..", "its path contains a `..` segment"),
            ("https://example.com/a/%2E%2e/b", "its path contains a `..` segment"),
            ("https://example.com\\..\\b", "its path contains a `..` segment"),
            ("https://example.com//docs", "its path contains an empty segment (`//`)"),
            ("https://example.com/.well-known/agent-skills/index.json", "give the site, not the index URL (the path contains .well-known)"),
            ("example.com/docs/.Well-Known/skill-sharing", "give the site, not the index URL (the path contains .well-known)"),
            ("example.com:0", "port 0 is not usable"),
            ("example.com:99999", "invalid port number"),
            ("example.com:http", "invalid port number"),
            ("http:example.com", "invalid port number"),
            ("::1", "empty host"),
            ("https://[::1", "invalid IPv6 address"),
            ("example.123", "invalid IPv4 address"),
            (long_label.as_str(), "host label \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\" is 64 characters long (at most 63)"),
            (long_host.as_str(), "host is 263 characters long (at most 253)"),
        ];
        for (seed, problem) in cases {
            let expected = format!("invalid seed {:?}: {problem}", seed.trim());
            assert_eq!(SeedTarget::parse(seed), Err(expected), "{seed:?}");
        }
        assert_eq!(
            SeedTarget::parse(&long_seed),
            Err(format!(
                "invalid seed starting \"example.com/pppppppppppppppppppppppppppp\": \
                 it is {} bytes long (at most {MAX_SEED_LEN})",
                long_seed.len()
            ))
        );
    }

    #[test]
    fn ranked_lists_and_their_headers() {
        let text = "rank,domain\n1,example.com\n2, other.example \n3,ftp://x\n99999999999999999999999,x.example\nplain.example\n";
        let mut lines = Vec::new();
        for (index, line) in text.lines().enumerate() {
            lines.push(
                parse_line(line, index + 1)
                    .map(|line| line.map(|line| (line.target.to_string(), line.rank))),
            );
        }
        assert_eq!(lines[0], Ok(None));
        assert_eq!(
            lines[1],
            Ok(Some(("https://example.com".to_owned(), Some(1))))
        );
        assert_eq!(
            lines[2],
            Ok(Some(("https://other.example".to_owned(), Some(2))))
        );
        assert_eq!(lines[3].as_ref().unwrap_err().line, 4);
        assert!(lines[4].as_ref().unwrap_err().message.contains("too large"));
        assert_eq!(
            lines[5],
            Ok(Some(("https://plain.example".to_owned(), None)))
        );
        // Column names only count on the first line.
        assert!(parse_line("rank,domain", 2).is_err());
        // A byte order mark on the first line is not part of the seed.
        assert_eq!(
            parse_line("\u{feff}1,example.com", 1)
                .unwrap()
                .unwrap()
                .rank,
            Some(1)
        );
    }

    #[test]
    fn international_names_are_shown_in_unicode() {
        assert_eq!(display_domain("xn--bcher-kva.example"), "bücher.example");
        assert_eq!(
            display_domain("xn--bcher-kva.example:8443"),
            "bücher.example:8443"
        );
        assert_eq!(display_domain("example.com"), "example.com");
        assert_eq!(display_domain("[::1]:8080"), "[::1]:8080");
        assert_eq!(display_domain("xn--zz.example"), "xn--zz.example");
        let target = SeedTarget::parse("bücher.example").unwrap();
        assert_eq!(display_domain(target.domain().as_str()), "bücher.example");
    }

    #[test]
    fn addresses_and_localhost_are_not_public_sites() {
        for seed in [
            "127.0.0.1",
            "http://[::1]:8080",
            "10.0.0.1",
            "localhost:3000",
            "a.localhost",
            "8.8.8.8",
        ] {
            assert!(
                SeedTarget::parse(seed).unwrap().not_public().is_some(),
                "{seed}"
            );
        }
        for seed in [
            "example.com",
            "intranet",
            "mcp+https://example.com/mcp",
            "xn--bcher-kva.example",
        ] {
            assert_eq!(
                SeedTarget::parse(seed).unwrap().not_public(),
                None,
                "{seed}"
            );
        }
    }

    #[test]
    fn mcp_endpoints() {
        // (seed, Display, origin, domain)
        #[rustfmt::skip]
        let cases = [
            ("mcp+https://example.com/mcp", "mcp+https://example.com/mcp", "https://example.com/", "example.com"),
            ("MCP+HTTPS://Example.COM:443/mcp", "mcp+https://example.com/mcp", "https://example.com/", "example.com"),
            ("mcp+http://127.0.0.1:8080/", "mcp+http://127.0.0.1:8080/", "http://127.0.0.1:8080/", "127.0.0.1:8080"),
            ("mcp+http://127.0.0.1:8080", "mcp+http://127.0.0.1:8080/", "http://127.0.0.1:8080/", "127.0.0.1:8080"),
            ("mcp+https://h.example/a/b/", "mcp+https://h.example/a/b/", "https://h.example/", "h.example"),
        ];
        for (seed, display, origin, domain) in cases {
            let target = SeedTarget::parse(seed).unwrap_or_else(|err| panic!("{seed:?}: {err}"));
            assert_eq!(target.to_string(), display, "{seed:?}");
            assert_eq!(target.origin().as_str(), origin, "{seed:?}");
            assert_eq!(target.domain().as_str(), domain, "{seed:?}");
            assert_eq!(target.base_path(), None, "{seed:?}");
            let endpoint = target.mcp_endpoint().expect("an MCP endpoint");
            assert_eq!(format!("mcp+{endpoint}"), display, "{seed:?}");
            assert_eq!(
                SeedTarget::parse(display).as_ref(),
                Ok(&target),
                "{seed:?} round trip"
            );
        }
        assert_eq!(
            SeedTarget::parse("https://example.com/mcp")
                .unwrap()
                .mcp_endpoint(),
            None
        );
        assert_ne!(
            SeedTarget::parse("mcp+https://example.com/mcp"),
            SeedTarget::parse("https://example.com/mcp")
        );

        #[rustfmt::skip]
        let bad = [
            ("mcp+example.com/mcp", "an MCP endpoint names its scheme: mcp+https://host/path or mcp+http://host/path"),
            ("mcp+ftp://example.com/mcp", "scheme must be http or https"),
            ("mcp+https://user@example.com/mcp", "credentials (user@host) are not allowed"),
            ("mcp+https://example.com/mcp?x=1", "query strings are not allowed"),
            ("mcp+https://example.com/a/../mcp", "its path contains a `..` segment"),
            ("mcp+https://example.com//mcp", "its path contains an empty segment (`//`)"),
            ("mcp+https://", "it has no host"),
            ("mcp+", "an MCP endpoint names its scheme: mcp+https://host/path or mcp+http://host/path"),
        ];
        for (seed, problem) in bad {
            assert_eq!(
                SeedTarget::parse(seed),
                Err(format!("invalid seed {seed:?}: {problem}")),
                "{seed:?}"
            );
        }
        let (targets, errors) = parse_seeds("mcp+http://localhost:9/mcp # an MCP server\nmcp+x\n");
        assert_eq!(targets.len(), 1);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].line, 2);
    }

    #[test]
    fn probe_bases_go_from_the_path_to_the_root() {
        let cases: [(&str, &[&str]); 5] = [
            ("example.com", &["https://example.com/"]),
            ("http://localhost:8080/", &["http://localhost:8080/"]),
            (
                "https://code.claude.com/docs",
                &["https://code.claude.com/docs/", "https://code.claude.com/"],
            ),
            (
                "example.com:8443/a/b/",
                &["https://example.com:8443/a/b/", "https://example.com:8443/"],
            ),
            (
                "example.com/dócs",
                &["https://example.com/d%C3%B3cs/", "https://example.com/"],
            ),
        ];
        for (seed, expected) in cases {
            let target = SeedTarget::parse(seed).unwrap();
            let bases: Vec<String> = target.probe_bases().iter().map(Url::to_string).collect();
            assert_eq!(bases, expected, "{seed:?}");
        }
    }

    #[test]
    fn seed_files() {
        let text = "\u{feff}# seeds for the demo\n\
                    \n\
                    example.com\n\
                    \x20 https://code.claude.com/docs   # a docs site\n\
                    ftp://files.example.com\n\
                    example.com\t# again, as a bare host\n\
                    https://example.com/\n\
                    https://example.com/#top\n\
                    localhost:8080#not-a-comment\r\n\
                    \x20   # indented comment\n\
                    http://example.com\r\n\
                    https://CODE.claude.com/docs/\n\
                    \x20\t\n\
                    user@example.com # trailing comment after a bad seed";
        let (targets, errors) = parse_seeds(text);
        let targets: Vec<String> = targets.iter().map(SeedTarget::to_string).collect();
        assert_eq!(
            targets,
            [
                "https://example.com",
                "https://code.claude.com/docs",
                "http://example.com"
            ]
        );
        let errors: Vec<(usize, &str)> = errors
            .iter()
            .map(|error| (error.line, error.text.as_str()))
            .collect();
        assert_eq!(
            errors,
            [
                (5, "ftp://files.example.com"),
                (8, "https://example.com/#top"),
                (9, "localhost:8080#not-a-comment"),
                (14, "user@example.com"),
            ]
        );
    }

    #[test]
    fn seed_errors_read_well() {
        let (_, errors) = parse_seeds("example.com\n\nftp://x # old mirror\n");
        let [error] = errors.as_slice() else {
            panic!("expected one error, got {errors:?}");
        };
        insta::assert_snapshot!(error, @r#"line 3: invalid seed "ftp://x": scheme must be http or https"#);
        let diagnostic = error.to_diagnostic();
        assert_eq!(diagnostic.code, Code::InvalidSeed);
        assert_eq!(diagnostic.message, error.to_string());
    }

    #[test]
    fn empty_and_comment_only_files() {
        for text in [
            "",
            "\n\n",
            "# only a comment\n   # another\n",
            "\u{feff}",
            "\r\n\r\n",
        ] {
            assert_eq!(parse_seeds(text), (Vec::new(), Vec::new()), "{text:?}");
        }
    }

    /// Seed-like text: hosts, schemes, ports, paths, comments and junk in varying order.
    fn seed_line() -> impl Strategy<Value = String> {
        prop_oneof![
            "\\PC{0,40}",
            "(mcp\\+)?(https?://|HTTP://|ftp://|//)?[a-zA-Z0-9_.\\-é@:\\[\\]]{0,20}(:[0-9]{0,6})?(/[a-zA-Z0-9.%é#?\\\\ ]{0,12}){0,3}( #[ a-z]{0,8})?",
            "[ \t]*#.{0,20}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn arbitrary_text_never_panics(lines in prop::collection::vec(seed_line(), 0..12)) {
            let text = lines.join("\n");
            let (targets, errors) = parse_seeds(&text);
            let line_count = text.lines().count();
            let mut previous_line = 0;
            for error in &errors {
                prop_assert!(error.line > previous_line && error.line <= line_count, "{error:?}");
                previous_line = error.line;
                prop_assert!(error.message.starts_with("invalid seed "), "{error:?}");
            }
            let unique: HashSet<&SeedTarget> = targets.iter().collect();
            prop_assert_eq!(unique.len(), targets.len());
            for target in &targets {
                let reparsed = SeedTarget::parse(&target.to_string());
                prop_assert_eq!(reparsed.as_ref(), Ok(target), "{}", target);
                for base in target.probe_bases() {
                    prop_assert!(base.path().ends_with('/'));
                    prop_assert!(base.query().is_none() && base.fragment().is_none());
                    prop_assert!(base.username().is_empty() && base.password().is_none());
                }
            }
        }
    }
}
