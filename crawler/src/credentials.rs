//! Per-host HTTP headers from `--credentials FILE`, so that a publisher can let skillscout see
//! its own `private` skill-sharing entries.
//!
//! The file is a JSON object from host (as in a domain: `host` or `host:port`) to an object of
//! header names and values:
//!
//! ```json
//! { "services.example.com": { "Authorization": "Bearer 3f9c…" } }
//! ```
//!
//! Headers go only to requests whose URL host (and port) is exactly that key: never to another
//! host, including across a redirect, which the fetch layer follows hop by hop. Values are
//! marked sensitive and never appear in logs, reports or `Debug` output.

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

/// Headers to send per host.
#[derive(Clone, Default)]
pub struct Credentials {
    by_host: BTreeMap<Domain, HeaderMap>,
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
        let mut by_host = BTreeMap::new();
        for (host, headers) in raw {
            let domain: Domain = host
                .parse()
                .map_err(|_| format!("credentials: {host:?} is not a host or host:port"))?;
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
            by_host.insert(domain, map);
        }
        Ok(Credentials { by_host })
    }

    /// Returns the headers for a request to `url`, if its host has credentials.
    pub fn for_url(&self, url: &Url) -> Option<&HeaderMap> {
        let domain = Domain::from_url(url).ok()?;
        self.by_host.get(&domain)
    }

    /// Returns the hosts that have credentials.
    pub fn hosts(&self) -> impl Iterator<Item = &Domain> {
        self.by_host.keys()
    }

    /// Returns true when no host has credentials.
    pub fn is_empty(&self) -> bool {
        self.by_host.is_empty()
    }
}

impl fmt::Debug for Credentials {
    /// Names the hosts and header names only.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for (host, headers) in &self.by_host {
            let names: Vec<&str> = headers.keys().map(HeaderName::as_str).collect();
            map.entry(&host.as_str(), &names);
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

    #[test]
    fn bad_files_are_refused_without_quoting_secrets() {
        for (bad, expected) in [
            (
                &br#"{"services.test": {"Authorization": "Bearer s3cret"#[..],
                "not a JSON object",
            ),
            (br#"["x"]"#, "not a JSON object"),
            (br#"{"a/b": {}}"#, "is not a host"),
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
