//! IndexNow (indexnow.org) read as the protocol documents it: a ping names a host, a key and
//! the URLs that changed; the key proves the ping comes from the host's owner when the host
//! publishes it in a text file (`{scheme}://{host}/{key}.txt`, or `keyLocation` on the same
//! host, which then covers only the URLs under its folder). This module checks what a ping
//! says (all pure: the key file is fetched by the crawler, through the intake's prober) and
//! remembers, per host, the keys whose files were read: verified ones for a day, refused ones
//! for a few minutes, so that a flood of pings costs the host one request.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use formats::seeds::SeedTarget;
use url::Url;

use crate::error::{ApiError, shorten};

/// The most URLs one ping names (the protocol's limit per POST).
pub(crate) const MAX_URLS: usize = 10_000;
/// The largest body of `POST /indexnow`: 10,000 URLs of some 400 bytes.
pub(crate) const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// The shortest and longest key (characters of `a-z`, `A-Z`, `0-9` and `-`).
pub(crate) const KEY_CHARS: std::ops::RangeInclusive<usize> = 8..=128;
/// How long a verified key is trusted without reading its file again.
pub(crate) const VERIFIED_FOR: Duration = Duration::from_secs(24 * 3600);
/// How long a key whose file did not hold it is refused without reading the file again.
pub(crate) const REFUSED_FOR: Duration = Duration::from_secs(10 * 60);
/// The most keys remembered; past it, expired ones are forgotten, and if none has expired a
/// new one is checked each time rather than remembered.
const MAX_REMEMBERED: usize = 100_000;

/// The well-known paths a skills publisher changes under: a ping naming a URL under one (or
/// the origin's root) makes its domain due.
pub(crate) const SKILLS_PATHS: [&str; 3] = [
    "/.well-known/agent-skills/",
    "/.well-known/skills/",
    "/.well-known/skill-sharing",
];

/// A ping, checked for its form: every URL is of its host and under its key file's folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ping {
    /// `host[:port]`, lowercase: what the URLs' authority must be.
    pub(crate) host: String,
    /// The key.
    pub(crate) key: String,
    /// Where the key file is read.
    pub(crate) key_url: Url,
    /// The URLs that changed.
    pub(crate) urls: Vec<Url>,
}

/// Checks a key's form: 8 to 128 characters of `a-z`, `A-Z`, `0-9` and `-` (a 422 otherwise,
/// as the protocol's table says for a key "not matching the schema").
pub(crate) fn check_key(key: &str) -> Result<(), ApiError> {
    let chars = key.chars().count();
    if !KEY_CHARS.contains(&chars) {
        return Err(ApiError::Unprocessable(format!(
            "key: {chars} characters; an IndexNow key has {} to {}",
            KEY_CHARS.start(),
            KEY_CHARS.end()
        )));
    }
    if let Some(bad) = key
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-'))
    {
        return Err(ApiError::Unprocessable(format!(
            "key: {bad:?} is not allowed; an IndexNow key has only a-z, A-Z, 0-9 and -"
        )));
    }
    Ok(())
}

/// `host[:port]` of an http(s) URL, lowercase; `None` for another scheme or no host.
fn authority(url: &Url) -> Option<String> {
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let host = url.host_str()?.to_ascii_lowercase();
    Some(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host,
    })
}

/// Reads one URL of a ping: an absolute http(s) URL (400 otherwise).
fn read_url(raw: &str, what: &str) -> Result<Url, ApiError> {
    let url = Url::parse(raw.trim()).map_err(|error| {
        ApiError::InvalidBody(format!("{what} {:?}: {error}", shorten(raw, 100)))
    })?;
    if authority(&url).is_none() {
        return Err(ApiError::InvalidBody(format!(
            "{what} {:?}: not an http or https URL with a host",
            shorten(raw, 100)
        )));
    }
    Ok(url)
}

/// Reads a ping: `host` (the URLs' host; the first URL's when not given), `key`,
/// `keyLocation` and the URLs. The answers are the protocol's: 400 for what is missing or
/// not a URL, 422 for a key not of the protocol's form or a URL of another host or outside
/// the key file's folder.
pub(crate) fn read_ping(
    host: Option<&str>,
    key: Option<&str>,
    key_location: Option<&str>,
    urls: &[String],
) -> Result<Ping, ApiError> {
    let key = key
        .filter(|key| !key.is_empty())
        .ok_or_else(|| ApiError::InvalidBody("key: missing".to_owned()))?;
    if urls.is_empty() {
        return Err(ApiError::InvalidBody("no URL given".to_owned()));
    }
    if urls.len() > MAX_URLS {
        return Err(ApiError::InvalidBody(format!(
            "{} URLs; one ping names at most {MAX_URLS}",
            urls.len()
        )));
    }
    let mut read = Vec::with_capacity(urls.len());
    for raw in urls {
        read.push(read_url(raw, "url")?);
    }
    check_key(key)?;
    let host = match host {
        Some(host) => {
            let host = host.trim().trim_end_matches('/').to_ascii_lowercase();
            if host.is_empty() || host.contains(['/', '@', ' ', '?', '#']) {
                return Err(ApiError::InvalidBody(format!(
                    "host {:?}: a host name is expected",
                    shorten(&host, 100)
                )));
            }
            host
        }
        None => authority(&read[0]).unwrap_or_default(),
    };
    if let Some(other) = read
        .iter()
        .find(|url| authority(url).as_deref() != Some(host.as_str()))
    {
        return Err(ApiError::Unprocessable(format!(
            "{} is not a URL of {host}",
            shorten(other.as_str(), 200)
        )));
    }
    let key_url = match key_location {
        Some(raw) if !raw.trim().is_empty() => {
            let location = read_url(raw, "keyLocation")?;
            if authority(&location).as_deref() != Some(host.as_str()) {
                return Err(ApiError::Unprocessable(format!(
                    "keyLocation {} is not on {host}",
                    shorten(location.as_str(), 200)
                )));
            }
            location
        }
        _ => {
            let mut url = read[0].clone();
            url.set_path(&format!("/{key}.txt"));
            url.set_query(None);
            url.set_fragment(None);
            url
        }
    };
    // A key file covers the URLs under its folder (the protocol: a file in /folder/ covers
    // /folder/…, not /); http and https may be mixed.
    let folder = &key_url.path()[..=key_url.path().rfind('/').unwrap_or(0)];
    if let Some(outside) = read.iter().find(|url| !url.path().starts_with(folder)) {
        return Err(ApiError::Unprocessable(format!(
            "{} is outside {folder}, the folder of the key file",
            shorten(outside.as_str(), 200)
        )));
    }
    Ok(Ping {
        host,
        key: key.to_owned(),
        key_url,
        urls: read,
    })
}

/// True when a URL a ping names says its site's skills changed: under a well-known skills
/// path, the origin's root, or under the target the frontier crawls for the domain (a site
/// published under a path, an MCP endpoint).
pub(crate) fn names_skills(url: &Url, target: Option<&SeedTarget>) -> bool {
    let path = url.path();
    if path == "/" || SKILLS_PATHS.iter().any(|prefix| path.starts_with(prefix)) {
        return true;
    }
    let Some(target) = target else {
        return false;
    };
    if let Some(endpoint) = target.mcp_endpoint() {
        return path.trim_end_matches('/') == endpoint.path().trim_end_matches('/');
    }
    target.base_path().is_some_and(|base| {
        path == base
            || path
                .strip_prefix(base)
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

/// Which cached copies a verified ping makes out of date, of `cached` (the URLs of the copies
/// the directory holds of the ping's host, in either scheme): each URL named (in either
/// scheme), everything under a named folder (a path that ends in `/`; the root names
/// everything) and, for a URL under `/.well-known/agent-skills/`, that folder's index too (it
/// carries the digest of each skill, which changes with the skill's files). A URL named that
/// the directory holds no copy of is new to it: every copy is then out of date, so that the
/// crawl reads again the indexes that may list it. The other copies are used while their
/// `Cache-Control` calls them fresh.
pub(crate) fn stale_copies(named: &[Url], cached: &[String]) -> Vec<String> {
    fn without_scheme(url: &str) -> &str {
        url.split_once("://").map_or(url, |(_, rest)| rest)
    }
    let mut by_key: HashMap<&str, Vec<&String>> = HashMap::new();
    for url in cached {
        by_key.entry(without_scheme(url)).or_default().push(url);
    }
    let mut stale: Vec<&String> = Vec::new();
    for url in named {
        let key = without_scheme(url.as_str());
        let path = url.path();
        if path.ends_with('/') {
            stale.extend(
                cached
                    .iter()
                    .filter(|copy| without_scheme(copy).starts_with(key)),
            );
        } else {
            match by_key.get(key) {
                Some(copies) => stale.extend(copies.iter().copied()),
                None => return cached.to_vec(),
            }
        }
        const CURRENT: &str = "/.well-known/agent-skills/";
        if let Some(at) = path.find(CURRENT) {
            let authority = key.split_once('/').map_or(key, |(authority, _)| authority);
            let index = format!("{authority}{}index.json", &path[..at + CURRENT.len()]);
            if let Some(copies) = by_key.get(index.as_str()) {
                stale.extend(copies.iter().copied());
            }
        }
    }
    stale.sort_unstable();
    stale.dedup();
    stale.into_iter().cloned().collect()
}

/// What is remembered of a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Known {
    /// Its file held it.
    Verified,
    /// Its file did not.
    Refused,
    /// Its file is being read now (another ping asked first).
    Pending,
}

/// A key's slot: host, key and key file URL.
type Slot = (String, String, String);
/// What is known of each slot, until when.
type KnownKeys = HashMap<Slot, (Known, Instant)>;

/// The keys read, per host, key and key file.
#[derive(Debug, Default)]
pub(crate) struct Keys {
    known: Mutex<KnownKeys>,
}

impl Keys {
    fn slot(ping: &Ping) -> Slot {
        (
            ping.host.clone(),
            ping.key.clone(),
            ping.key_url.as_str().to_owned(),
        )
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, KnownKeys> {
        self.known
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Returns what is known of `ping`'s key; `None` when its file must be read, in which
    /// case the key is marked pending until [`Keys::settle`].
    pub(crate) fn claim(&self, ping: &Ping, now: Instant) -> Option<Known> {
        let slot = Keys::slot(ping);
        let mut known = self.lock();
        if let Some((state, until)) = known.get(&slot)
            && now < *until
        {
            return Some(*state);
        }
        if known.len() >= MAX_REMEMBERED {
            known.retain(|_, (_, until)| now < *until);
        }
        if known.len() < MAX_REMEMBERED {
            // A pending read that never settles (a task that died) is tried again after a
            // minute.
            known.insert(slot, (Known::Pending, now + Duration::from_secs(60)));
        }
        None
    }

    /// Remembers what reading `ping`'s key file said.
    pub(crate) fn settle(&self, ping: &Ping, verified: bool, now: Instant) {
        let (state, keep) = if verified {
            (Known::Verified, VERIFIED_FOR)
        } else {
            (Known::Refused, REFUSED_FOR)
        };
        let mut known = self.lock();
        if known.len() < MAX_REMEMBERED || known.contains_key(&Keys::slot(ping)) {
            known.insert(Keys::slot(ping), (state, now + keep));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(list: &[&str]) -> Vec<String> {
        list.iter().map(|url| (*url).to_owned()).collect()
    }

    fn status(result: Result<Ping, ApiError>) -> u16 {
        match result {
            Ok(_) => 200,
            Err(error) => error.status_and_code().0.as_u16(),
        }
    }

    #[test]
    fn keys_of_the_protocol_form_pass() {
        for key in [
            "abcd1234",
            "73134416ae45434d98edc086e0bf6740",
            &"A-9".repeat(42),
        ] {
            check_key(key).unwrap();
        }
        for key in [
            "short12",
            &"a".repeat(129),
            "has space1",
            "under_score",
            "ключключключ",
        ] {
            let error = check_key(key).unwrap_err();
            assert_eq!(error.status_and_code().0.as_u16(), 422, "{key}");
        }
    }

    #[test]
    fn a_ping_is_answered_as_the_protocol_table_says() {
        let key = Some("abcd1234");
        let one = urls(&["https://h.test/.well-known/agent-skills/index.json"]);
        // Missing parts and what is not a URL: 400.
        assert_eq!(status(read_ping(None, None, None, &one)), 400);
        assert_eq!(status(read_ping(None, key, None, &[])), 400);
        assert_eq!(
            status(read_ping(None, key, None, &urls(&["not a url"]))),
            400
        );
        assert_eq!(
            status(read_ping(None, key, None, &urls(&["ftp://h.test/x"]))),
            400
        );
        let many = vec!["https://h.test/x".to_owned(); MAX_URLS + 1];
        assert_eq!(status(read_ping(Some("h.test"), key, None, &many)), 400);
        // A key not of the form, URLs of another host: 422.
        assert_eq!(status(read_ping(None, Some("abc"), None, &one)), 422);
        let mixed = urls(&["https://h.test/a", "https://other.test/b"]);
        assert_eq!(status(read_ping(Some("h.test"), key, None, &mixed)), 422);
        assert_eq!(status(read_ping(Some("other.test"), key, None, &one)), 422);
        let elsewhere = Some("https://other.test/abcd1234.txt");
        assert_eq!(status(read_ping(Some("h.test"), key, elsewhere, &one)), 422);
        // A key file in a folder covers only that folder.
        let folder = Some("https://h.test/docs/abcd1234.txt");
        assert_eq!(status(read_ping(Some("h.test"), key, folder, &one)), 422);
        let inside = urls(&["http://h.test/docs/.well-known/skills/index.json"]);
        let ping = read_ping(Some("H.test"), key, folder, &inside).unwrap();
        assert_eq!(ping.key_url.as_str(), "https://h.test/docs/abcd1234.txt");
        // The default key file is at the root, on the first URL's scheme.
        let ping = read_ping(
            Some("h.test"),
            key,
            None,
            &urls(&["http://h.test/", "https://h.test/x"]),
        )
        .unwrap();
        assert_eq!(ping.key_url.as_str(), "http://h.test/abcd1234.txt");
        assert_eq!(ping.host, "h.test");
    }

    #[test]
    fn only_skills_paths_and_the_root_name_skills() {
        let url = |text: &str| Url::parse(text).unwrap();
        assert!(names_skills(&url("https://h.test/"), None));
        assert!(names_skills(
            &url("https://h.test/.well-known/skills/a/SKILL.md"),
            None
        ));
        assert!(names_skills(
            &url("https://h.test/.well-known/skill-sharing"),
            None
        ));
        assert!(!names_skills(&url("https://h.test/blog/post.html"), None));
        let docs = SeedTarget::parse("https://h.test/docs").unwrap();
        assert!(names_skills(
            &url("https://h.test/docs/.well-known/x"),
            Some(&docs)
        ));
        assert!(!names_skills(&url("https://h.test/docsx"), Some(&docs)));
        let mcp = SeedTarget::parse("mcp+https://h.test/mcp").unwrap();
        assert!(names_skills(&url("https://h.test/mcp"), Some(&mcp)));
        assert!(!names_skills(&url("https://h.test/other"), Some(&mcp)));
    }

    #[test]
    fn keys_are_read_once_and_remembered() {
        let keys = Keys::default();
        let ping = read_ping(None, Some("abcd1234"), None, &urls(&["https://h.test/"])).unwrap();
        let now = Instant::now();
        assert_eq!(keys.claim(&ping, now), None);
        assert_eq!(keys.claim(&ping, now), Some(Known::Pending));
        keys.settle(&ping, false, now);
        assert_eq!(keys.claim(&ping, now), Some(Known::Refused));
        assert_eq!(keys.claim(&ping, now + REFUSED_FOR), None);
        keys.settle(&ping, true, now);
        assert_eq!(
            keys.claim(&ping, now + VERIFIED_FOR / 2),
            Some(Known::Verified)
        );
    }

    fn stale(named: &[&str], cached: &[String]) -> Vec<String> {
        let named: Vec<Url> = named.iter().map(|url| Url::parse(url).unwrap()).collect();
        stale_copies(&named, cached)
    }

    #[test]
    fn a_ping_makes_out_of_date_the_copies_it_names_and_no_others() {
        let cached = urls(&[
            "https://a.test/.well-known/skills/index.json",
            "https://a.test/.well-known/skills/tool/SKILL.md",
            "https://a.test/.well-known/skills/tool/run.sh",
            "https://a.test/.well-known/skills/other/SKILL.md",
            "https://a.test/robots.txt",
        ]);
        // The URL named, in the scheme the directory reads the site over or the other.
        for scheme in ["https", "http"] {
            assert_eq!(
                stale(
                    &[&format!(
                        "{scheme}://a.test/.well-known/skills/tool/SKILL.md"
                    )],
                    &cached
                ),
                urls(&["https://a.test/.well-known/skills/tool/SKILL.md"])
            );
        }
        // A folder names what lies under it; the root names everything.
        assert_eq!(
            stale(&["https://a.test/.well-known/skills/tool/"], &cached),
            urls(&[
                "https://a.test/.well-known/skills/tool/SKILL.md",
                "https://a.test/.well-known/skills/tool/run.sh",
            ])
        );
        let mut everything = cached.clone();
        everything.sort();
        assert_eq!(stale(&["https://a.test/"], &cached), everything);
        // A near miss: a path that only begins like a folder named is not under it.
        assert_eq!(
            stale(&["https://a.test/.well-known/skills/to/"], &cached),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_url_the_directory_holds_no_copy_of_makes_every_copy_out_of_date() {
        let cached = urls(&[
            "https://a.test/.well-known/skills/index.json",
            "https://a.test/.well-known/skills/tool/SKILL.md",
        ]);
        assert_eq!(
            stale(&["https://a.test/.well-known/skills/new/SKILL.md"], &cached),
            cached
        );
    }

    #[test]
    fn a_skill_under_the_current_path_makes_its_index_out_of_date_too() {
        let cached = urls(&[
            "https://a.test/.well-known/agent-skills/index.json",
            "https://a.test/.well-known/agent-skills/tool/SKILL.md",
            "https://a.test/.well-known/agent-skills/other/SKILL.md",
            "https://a.test/docs/.well-known/agent-skills/index.json",
        ]);
        assert_eq!(
            stale(
                &["https://a.test/.well-known/agent-skills/tool/SKILL.md"],
                &cached
            ),
            urls(&[
                "https://a.test/.well-known/agent-skills/index.json",
                "https://a.test/.well-known/agent-skills/tool/SKILL.md",
            ])
        );
        // The legacy index carries no digests: a changed SKILL.md leaves it as it is.
        let legacy = urls(&[
            "https://a.test/.well-known/skills/index.json",
            "https://a.test/.well-known/skills/tool/SKILL.md",
        ]);
        assert_eq!(
            stale(
                &["https://a.test/.well-known/skills/tool/SKILL.md"],
                &legacy
            ),
            urls(&["https://a.test/.well-known/skills/tool/SKILL.md"])
        );
    }
}
