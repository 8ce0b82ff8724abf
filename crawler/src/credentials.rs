//! Per-origin HTTP headers from `--credentials FILE`, so that a publisher can let skillscout
//! see its own `private` skill-sharing entries.
//!
//! The file is a JSON object from an origin key to an object of header names and values:
//!
//! ```json
//! { "services.example.com": { "Authorization": "Bearer 3f9c…" },
//!   "http://staging.example.com:8080": { "Authorization": "Bearer 71ab…" } }
//! ```
//!
//! A key `host[:port]` (or `https://host[:port]`) means that host over https only; a key
//! `http://host[:port]` opts in to plain http for that host (docs/crawl.md). Headers go only to
//! requests whose scheme, host and port are exactly those of a key: never to another origin,
//! including across a redirect, which the fetch layer follows hop by hop, and never on a hop
//! that follows a redirect from https to http (the fetch layer asks [`Credentials::for_url`]
//! only while the chain has not been downgraded). robots.txt requests carry none (it is public,
//! and its origin may be one a downgrading redirect reached). Values are marked sensitive and
//! never appear in logs, reports or `Debug` output.

use std::collections::BTreeMap;
use std::fmt;

use http::{HeaderMap, HeaderName, HeaderValue};
use url::Url;

use formats::skill::Domain;

/// The largest credentials file read, in bytes.
pub const MAX_CREDENTIALS_BYTES: usize = 64 * 1024;

/// Headers that describe the connection or the message rather than the caller; a credentials
/// file may not set them.
const REFUSED_HEADERS: [&str; 7] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "upgrade",
    "te",
    "trailer",
];

/// The scheme a credentials key allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Scheme {
    Https,
    Http,
}

impl Scheme {
    fn of(url: &Url) -> Option<Scheme> {
        match url.scheme() {
            "https" => Some(Scheme::Https),
            "http" => Some(Scheme::Http),
            _ => None,
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            Scheme::Https => "",
            Scheme::Http => "http://",
        }
    }
}

/// Reads a key: `host[:port]` and `https://host[:port]` mean https, `http://host[:port]` http.
fn parse_key(key: &str) -> Option<(Scheme, Domain)> {
    let (scheme, host) = if let Some(rest) = key.strip_prefix("http://") {
        (Scheme::Http, rest)
    } else if let Some(rest) = key.strip_prefix("https://") {
        (Scheme::Https, rest)
    } else {
        (Scheme::Https, key)
    };
    // A trailing slash is harmless; any other path, query or fragment is not an origin.
    let host = host.strip_suffix('/').unwrap_or(host);
    Some((scheme, host.parse().ok()?))
}

/// Headers to send per origin.
#[derive(Clone, Default)]
pub struct Credentials {
    by_origin: BTreeMap<(Scheme, Domain), HeaderMap>,
}

impl Credentials {
    /// Parses a credentials file. The error names the bad entry, never a header value.
    pub fn parse(bytes: &[u8]) -> Result<Credentials, String> {
        if bytes.len() > MAX_CREDENTIALS_BYTES {
            return Err(format!(
                "the credentials file is {} bytes, more than {MAX_CREDENTIALS_BYTES}",
                bytes.len()
            ));
        }
        let raw: BTreeMap<String, BTreeMap<String, String>> = serde_json::from_slice(bytes)
            .map_err(|error| {
                // serde_json's message can quote the input; keep only its position.
                format!(
                    "the credentials file is not a JSON object of host -> {{header: value}} (line {}, column {})",
                    error.line(),
                    error.column()
                )
            })?;
        let mut by_origin = BTreeMap::new();
        for (host, headers) in raw {
            let origin = parse_key(&host).ok_or_else(|| {
                format!(
                    "credentials: {host:?} is not a host, host:port, or http:// or https:// followed by one"
                )
            })?;
            let mut map = HeaderMap::new();
            for (name, value) in headers {
                let header = HeaderName::from_bytes(name.as_bytes())
                    .map_err(|_| format!("credentials for {host}: invalid header name {name:?}"))?;
                if REFUSED_HEADERS.contains(&header.as_str()) {
                    return Err(format!(
                        "credentials for {host}: the header {name:?} cannot be set"
                    ));
                }
                let mut value = HeaderValue::from_str(&value).map_err(|_| {
                    format!(
                        "credentials for {host}: the value of {name:?} is not a valid header value"
                    )
                })?;
                value.set_sensitive(true);
                map.append(header, value);
            }
            if by_origin.insert(origin, map).is_some() {
                return Err(format!(
                    "credentials: {host:?} names an origin that another key names too"
                ));
            }
        }
        Ok(Credentials { by_origin })
    }

    /// Returns the headers for a request to `url`, if its origin (scheme, host and port) has
    /// credentials.
    pub fn for_url(&self, url: &Url) -> Option<&HeaderMap> {
        let scheme = Scheme::of(url)?;
        let domain = Domain::from_url(url).ok()?;
        self.by_origin.get(&(scheme, domain))
    }

    /// Returns the hosts that have credentials.
    pub fn hosts(&self) -> impl Iterator<Item = &Domain> {
        self.by_origin.keys().map(|(_, domain)| domain)
    }

    /// Returns true when no origin has credentials.
    pub fn is_empty(&self) -> bool {
        self.by_origin.is_empty()
    }
}

impl fmt::Debug for Credentials {
    /// Names the hosts and header names only.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for ((scheme, host), headers) in &self.by_origin {
            let names: Vec<&str> = headers.keys().map(HeaderName::as_str).collect();
            map.entry(&format!("{}{host}", scheme.prefix()), &names);
        }
        map.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_go_only_to_their_exact_host() {
        let credentials = Credentials::parse(
            br#"{"services.test": {"Authorization": "Bearer s3cret"}, "other.test:8443": {"X-Key": "k"}}"#,
        )
        .unwrap();
        let url = |raw: &str| Url::parse(raw).unwrap();
        let headers = credentials
            .for_url(&url("https://services.test/.well-known/skill-sharing"))
            .unwrap();
        assert_eq!(headers["authorization"], "Bearer s3cret");
        assert!(headers["authorization"].is_sensitive());
        assert!(credentials.for_url(&url("https://evil.test/")).is_none());
        assert!(
            credentials
                .for_url(&url("https://services.test.evil.test/"))
                .is_none()
        );
        assert!(
            credentials
                .for_url(&url("https://services.test:8443/"))
                .is_none()
        );
        assert!(
            credentials
                .for_url(&url("https://other.test:8443/x"))
                .is_some()
        );
        let debug = format!("{credentials:?}");
        assert!(!debug.contains("s3cret"), "{debug}");
        assert!(debug.contains("authorization"), "{debug}");
    }

    // See: the hardening issue, defect 4 (credentials were sent over plain http).
    #[test]
    fn a_bare_host_means_https_only_and_http_must_be_asked_for() {
        let credentials = Credentials::parse(
            br#"{"secure.test": {"X-Key": "a"}, "http://plain.test:8080": {"X-Key": "b"}}"#,
        )
        .unwrap();
        let url = |raw: &str| Url::parse(raw).unwrap();
        assert!(credentials.for_url(&url("https://secure.test/x")).is_some());
        assert!(credentials.for_url(&url("http://secure.test/x")).is_none());
        assert!(
            credentials
                .for_url(&url("http://plain.test:8080/x"))
                .is_some()
        );
        assert!(
            credentials
                .for_url(&url("https://plain.test:8080/x"))
                .is_none()
        );
        assert!(credentials.for_url(&url("http://plain.test/x")).is_none());
        let explicit = Credentials::parse(br#"{"https://secure.test/": {"X-Key": "a"}}"#).unwrap();
        assert!(explicit.for_url(&url("https://secure.test/x")).is_some());
        assert!(explicit.for_url(&url("http://secure.test/x")).is_none());
    }

    #[test]
    fn bad_files_are_refused_without_quoting_secrets() {
        for (bad, expected) in [
            (
                &br#"{"services.test": {"Authorization": "Bearer s3cret"#[..],
                "not a JSON object",
            ),
            (br#"["x"]"#, "not a JSON object"),
            (br#"{"a/b": {}}"#, "is not a host"),
            (br#"{"ftp://a.test": {}}"#, "is not a host"),
            (br#"{"https://a.test/path": {}}"#, "is not a host"),
            (
                br#"{"a.test": {}, "https://a.test": {}}"#,
                "another key names too",
            ),
            (br#"{"a.test": {"bad name": "x"}}"#, "invalid header name"),
            (br#"{"a.test": {"Host": "x"}}"#, "cannot be set"),
            (
                br#"{"a.test": {"X": "s3cret\n"}}"#,
                "not a valid header value",
            ),
        ] {
            let error = Credentials::parse(bad).unwrap_err();
            assert!(error.contains(expected), "{error}");
            assert!(!error.contains("s3cret"), "{error}");
        }
    }
}
