//! What the directory reads from a publisher's site when the publisher asks for something:
//! the IndexNow key file, which proves a ping comes from the host's owner. Read through the
//! fetch layer like any crawl request: the address guard, robots.txt, the host's turn (shared
//! with the crawl when the settings are, see [`FetchSettings::hosts`]), a capped body.

use url::Url;

use crate::fetch::{BodyLimit, FetchSettings, Fetcher, HttpCache};

/// The largest key file read: a key is at most 128 characters; a file much larger is not a
/// key file (an HTML page, a catch-all answer).
pub const MAX_KEY_FILE_BYTES: usize = 1024;

/// Reads IndexNow key files.
#[derive(Debug)]
pub struct KeyReader {
    fetcher: Fetcher,
}

impl KeyReader {
    /// Returns a reader over these settings; `cache` lends it the robots.txt a crawl stored.
    pub fn new(settings: FetchSettings, cache: Option<HttpCache>) -> Result<KeyReader, String> {
        Ok(KeyReader {
            fetcher: Fetcher::new(settings, cache)?,
        })
    }

    /// Reads `key_url` and says whether its body is `key` (a UTF-8 byte order mark and
    /// surrounding white space aside); the error says why not. A redirect to another host (or
    /// port), a
    /// body over [`MAX_KEY_FILE_BYTES`], a URL robots.txt disallows or an address the guard
    /// refuses is a refusal.
    pub async fn check(&self, key_url: &Url, key: &str) -> Result<(), String> {
        let result = self.read(key_url, key).await;
        // Read again on the next check: a long-lived reader keeps no robots.txt of its own.
        self.fetcher.forget_robots(key_url);
        result
    }

    async fn read(&self, key_url: &Url, key: &str) -> Result<(), String> {
        let mut session = self.fetcher.session()?;
        let robots = session.robots(key_url).await;
        if let Some(failure) = robots.failure {
            return Err(failure.message);
        }
        let path = match key_url.query() {
            Some(query) => format!("{}?{query}", key_url.path()),
            None => key_url.path().to_owned(),
        };
        if !robots.policy.allows(&path) {
            return Err(format!("robots.txt disallows {key_url}"));
        }
        let response = session
            .get(key_url, BodyLimit::Fail(MAX_KEY_FILE_BYTES))
            .await
            .map_err(|failure| format!("{} ({})", failure.message, failure.code))?;
        if !same_host(&response.url, key_url) {
            return Err(format!(
                "{key_url} redirects to {}, another host",
                response.url
            ));
        }
        let body = response
            .body
            .strip_prefix("\u{feff}".as_bytes())
            .unwrap_or(&response.body);
        let text = std::str::from_utf8(body)
            .map_err(|_| format!("{key_url} is not UTF-8 text"))?
            .trim();
        if text != key {
            return Err(format!("{key_url} does not hold the key"));
        }
        Ok(())
    }
}

/// True when `to` is on `from`'s host: the same name and the same port, where a scheme's
/// default port counts as none (so `http://a.test/` moving to `https://a.test/` stays on its
/// host, and `http://a.test:8080/` moving to `http://a.test:9090/`, another service, does not).
fn same_host(to: &Url, from: &Url) -> bool {
    to.host_str() == from.host_str() && to.port() == from.port()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_file_stays_on_its_host_and_port() {
        let from = |raw: &str| Url::parse(raw).unwrap();
        let key = from("http://a.test/k.txt");
        assert!(same_host(&from("https://a.test/k.txt"), &key));
        assert!(same_host(&from("http://a.test/keys/k.txt"), &key));
        assert!(!same_host(&from("http://b.test/k.txt"), &key));
        assert!(!same_host(&from("http://a.test:8080/k.txt"), &key));
        let on_port = from("http://a.test:8080/k.txt");
        assert!(same_host(&from("http://a.test:8080/other.txt"), &on_port));
        assert!(!same_host(&from("http://a.test:9090/k.txt"), &on_port));
        assert!(!same_host(&from("https://a.test/k.txt"), &on_port));
    }
}
