//! robots.txt (RFC 9309): which paths the `skillscout` product token may fetch, and how long
//! to wait between requests.
//!
//! This module is pure: it parses bytes someone else fetched, once per origin, into the rules
//! of the one group that applies to us, and answers `allows(path)` from those. It is our own
//! rather than the `robotstxt` crate (Google's matcher ported to Rust) because that crate is
//! unmaintained since 2021, exposes no `Crawl-delay`, and re-parses the whole file on every
//! query; the RFC's matching rules are short enough to implement, test and own here.
//!
//! What the RFC asks of a crawler, and where it is done:
//! - the group is chosen by a case-insensitive match of the product token; several groups
//!   naming it are merged; without one, the `*` groups apply, and without those everything is
//!   allowed (§2.2.1);
//! - the most specific (longest) matching rule wins, and `allow` wins a tie (§2.2.2);
//! - `*` matches any sequence and a trailing `$` anchors the end (§2.2.3);
//! - `/robots.txt` itself is always allowed (§2.2.2);
//! - at least the first 500 KiB are parsed ([`MAX_ROBOTS_BYTES`], §2.5);
//! - status codes and failures map to allow-all or disallow-all (§2.3.1, in [`RobotsPolicy`]).
//!
//! `Crawl-delay` is not in the RFC but widely used; it is read from the chosen group and
//! capped at [`MAX_CRAWL_DELAY`].

use std::time::Duration;

/// The product token skillscout matches groups with.
pub const PRODUCT_TOKEN: &str = "skillscout";
/// How much of a robots.txt is parsed; the rest is ignored (RFC 9309 §2.5 asks for at least
/// 500 KiB).
pub const MAX_ROBOTS_BYTES: usize = 500 * 1024;
/// The longest `Crawl-delay` honoured; a larger value is read as this.
pub const MAX_CRAWL_DELAY: Duration = Duration::from_secs(60);
/// The most rules kept from one group; a file with more is cut off there (the cap keeps a
/// hostile file from making every path check slow).
pub const MAX_RULES: usize = 10_000;

/// One `allow` or `disallow` line of the chosen group.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    allow: bool,
    /// The normalised path pattern.
    pattern: String,
}

/// The rules of the group that applies to skillscout.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Robots {
    rules: Vec<Rule>,
    crawl_delay: Option<Duration>,
}

impl Robots {
    /// Parses a robots.txt body for the product token `agent` (see [`PRODUCT_TOKEN`]). Only the
    /// first [`MAX_ROBOTS_BYTES`] are read; bytes that are not UTF-8 are replaced, which can
    /// only make a rule match less.
    pub fn parse(bytes: &[u8], agent: &str) -> Robots {
        let bytes = &bytes[..bytes.len().min(MAX_ROBOTS_BYTES)];
        let text = String::from_utf8_lossy(bytes);
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let agent = agent.to_ascii_lowercase();

        let mut ours = Group::default();
        let mut star = Group::default();
        // The agents of the group being read, and whether a rule has been seen since its
        // user-agent lines (a user-agent line after a rule starts a new group).
        let mut current_agents: Vec<String> = Vec::new();
        let mut in_rules = false;

        for line in text.split(['\n', '\r']) {
            let line = line.split('#').next().unwrap_or("").trim();
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let key = key.trim().to_ascii_lowercase();
            let value = value.trim();
            match key.as_str() {
                "user-agent" => {
                    if in_rules {
                        current_agents.clear();
                        in_rules = false;
                    }
                    current_agents.push(product_token(value));
                }
                "allow" | "disallow" | "crawl-delay" => {
                    in_rules = true;
                    let targets_us = current_agents.contains(&agent);
                    let targets_star = current_agents.iter().any(|a| a == "*");
                    if !targets_us && !targets_star {
                        continue;
                    }
                    let group = if targets_us { &mut ours } else { &mut star };
                    group.matched = true;
                    if key == "crawl-delay" {
                        if let Some(delay) = parse_delay(value) {
                            group.crawl_delay.get_or_insert(delay);
                        }
                    } else if !value.is_empty() && group.rules.len() < MAX_RULES {
                        // An empty `disallow:` allows everything, as does an empty `allow:`;
                        // neither adds a rule.
                        group.rules.push(Rule {
                            allow: key == "allow",
                            pattern: normalise(value),
                        });
                    }
                }
                // Sitemap and unknown keys do not end a group (RFC 9309 §2.2.4).
                _ => {}
            }
        }

        // A group that names us but holds no rules still applies (it allows everything).
        let chosen = if ours.matched || seen_agent(text, &agent) {
            ours
        } else {
            star
        };
        Robots {
            rules: chosen.rules,
            crawl_delay: chosen.crawl_delay,
        }
    }

    /// Returns true when `path_and_query` (as in a URL, starting with `/`) may be fetched.
    pub fn allows(&self, path_and_query: &str) -> bool {
        if path_and_query == "/robots.txt" {
            return true;
        }
        let path = normalise(path_and_query);
        let mut best: Option<(usize, bool)> = None;
        for rule in &self.rules {
            if !matches(&rule.pattern, &path) {
                continue;
            }
            let length = rule.pattern.len();
            best = match best {
                Some((best_length, best_allow))
                    if best_length > length || (best_length == length && best_allow) =>
                {
                    Some((best_length, best_allow))
                }
                _ => Some((length, rule.allow)),
            };
        }
        best.is_none_or(|(_, allow)| allow)
    }

    /// Returns the group's `Crawl-delay`, capped at [`MAX_CRAWL_DELAY`].
    pub fn crawl_delay(&self) -> Option<Duration> {
        self.crawl_delay
    }
}

/// What robots.txt says for an origin, including the cases where it could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RobotsPolicy {
    /// The file was read (status 2xx): its rules apply.
    Rules(Robots),
    /// There is no usable file (4xx other than 429): everything is allowed (RFC 9309 §2.3.1.3).
    AllowAll,
    /// The file could not be read (429, 5xx, timeout, too many redirects): nothing may be
    /// fetched from the origin in this crawl (RFC 9309 §2.3.1.4). The string says why.
    DisallowAll(String),
}

impl RobotsPolicy {
    /// Returns the policy for a robots.txt response with `status` and `body`.
    pub fn from_response(status: u16, body: &[u8]) -> RobotsPolicy {
        match status {
            200..=299 => RobotsPolicy::Rules(Robots::parse(body, PRODUCT_TOKEN)),
            429 => RobotsPolicy::DisallowAll("robots.txt answered 429 Too Many Requests".into()),
            400..=499 => RobotsPolicy::AllowAll,
            _ => RobotsPolicy::DisallowAll(format!("robots.txt answered status {status}")),
        }
    }

    /// Returns true when `path_and_query` may be fetched.
    pub fn allows(&self, path_and_query: &str) -> bool {
        match self {
            RobotsPolicy::Rules(robots) => robots.allows(path_and_query),
            RobotsPolicy::AllowAll => true,
            RobotsPolicy::DisallowAll(_) => false,
        }
    }

    /// Returns the `Crawl-delay` to honour, if any.
    pub fn crawl_delay(&self) -> Option<Duration> {
        match self {
            RobotsPolicy::Rules(robots) => robots.crawl_delay(),
            RobotsPolicy::AllowAll | RobotsPolicy::DisallowAll(_) => None,
        }
    }
}

#[derive(Debug, Default)]
struct Group {
    matched: bool,
    rules: Vec<Rule>,
    crawl_delay: Option<Duration>,
}

/// True when some `user-agent` line names `agent`, even if its group has no rule lines.
fn seen_agent(text: &str, agent: &str) -> bool {
    text.split(['\n', '\r']).any(|line| {
        let line = line.split('#').next().unwrap_or("");
        line.split_once(':').is_some_and(|(key, value)| {
            key.trim().eq_ignore_ascii_case("user-agent") && product_token(value.trim()) == agent
        })
    })
}

/// The product token of a `user-agent` value: its leading run of letters, `_` and `-`,
/// lowercased (`skillscout/1.0` names `skillscout`; RFC 9309 §2.2.1).
fn product_token(value: &str) -> String {
    if value.starts_with('*') {
        return "*".to_owned();
    }
    value
        .chars()
        .take_while(|c| c.is_ascii_alphabetic() || *c == '_' || *c == '-')
        .collect::<String>()
        .to_ascii_lowercase()
}

/// Parses a `Crawl-delay` value in seconds (fractions allowed), capped.
fn parse_delay(value: &str) -> Option<Duration> {
    let seconds: f64 = value.parse().ok()?;
    if !seconds.is_finite() || seconds < 0.0 {
        return None;
    }
    Some(Duration::from_secs_f64(
        seconds.min(MAX_CRAWL_DELAY.as_secs_f64()),
    ))
}

/// Normalises a pattern or path for comparison: characters outside printable ASCII are
/// percent-encoded as UTF-8, and existing escapes get upper-case hex (RFC 9309 §2.2.2).
fn normalise(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let bytes = raw.as_bytes();
    let mut index = 0;
    while index < bytes.len() {
        let byte = bytes[index];
        if byte == b'%'
            && index + 2 < bytes.len()
            && bytes[index + 1].is_ascii_hexdigit()
            && bytes[index + 2].is_ascii_hexdigit()
        {
            out.push('%');
            out.push(char::from(bytes[index + 1].to_ascii_uppercase()));
            out.push(char::from(bytes[index + 2].to_ascii_uppercase()));
            index += 3;
            continue;
        }
        if byte.is_ascii_graphic() {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
        index += 1;
    }
    out
}

/// Matches a normalised path against a pattern with `*` wildcards and an optional `$` end
/// anchor. Patterns match prefixes unless anchored. Runs in O(pattern × path) at worst.
fn matches(pattern: &str, path: &str) -> bool {
    let (pattern, anchored) = match pattern.strip_suffix('$') {
        Some(stripped) => (stripped, true),
        None => (pattern, false),
    };
    let pattern = pattern.as_bytes();
    let path = path.as_bytes();
    // Classic wildcard matching with backtracking to the last `*`.
    let (mut p, mut s) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    loop {
        if p == pattern.len() {
            if !anchored || s == path.len() {
                return true;
            }
        } else if pattern[p] == b'*' {
            star = Some((p, s));
            p += 1;
            continue;
        } else if s < path.len() && pattern[p] == path[s] {
            p += 1;
            s += 1;
            continue;
        }
        // Mismatch (or an anchored pattern ended early): let the last `*` eat one more byte.
        match star {
            Some((star_p, star_s)) if star_s < path.len() => {
                star = Some((star_p, star_s + 1));
                p = star_p + 1;
                s = star_s + 1;
            }
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn robots(text: &str) -> Robots {
        Robots::parse(text.as_bytes(), PRODUCT_TOKEN)
    }

    #[test]
    fn groups_are_chosen_by_product_token() {
        let text = "User-agent: *\nDisallow: /\n\nUser-agent: SkillScout/2.0\nAllow: /.well-known/\nDisallow: /\n";
        let r = robots(text);
        assert!(r.allows("/.well-known/agent-skills/index.json"));
        assert!(!r.allows("/private"));

        // Without our group, the `*` group applies.
        let r = robots("User-agent: *\nDisallow: /.well-known/\n\nUser-agent: other\nDisallow:\n");
        assert!(!r.allows("/.well-known/skills/index.json"));
        assert!(r.allows("/"));

        // A group naming us with no rules allows everything, even if `*` forbids it.
        let r = robots("User-agent: skillscout\nAllow:\n\nUser-agent: *\nDisallow: /\n");
        assert!(r.allows("/.well-known/skills/index.json"));
        let r = robots("User-agent: *\nDisallow: /\nUser-agent: skillscout\n");
        assert!(r.allows("/.well-known/skills/index.json"));
        // Blank lines do not end a group: consecutive user-agent lines share the rules.
        let r = robots("User-agent: skillscout\n\nUser-agent: *\nDisallow: /\n");
        assert!(!r.allows("/.well-known/skills/index.json"));

        // Several groups naming us are merged; consecutive user-agent lines share a group.
        let r = robots(
            "User-agent: a\nUser-agent: skillscout\nDisallow: /x\n\nUser-agent: skillscout\nDisallow: /y\n",
        );
        assert!(!r.allows("/x") && !r.allows("/y") && r.allows("/z"));

        // No file content at all: everything allowed.
        assert!(robots("").allows("/anything"));
        assert!(robots("garbage\n\0\u{1}").allows("/anything"));
    }

    #[test]
    fn longest_match_wins_and_allow_wins_ties() {
        let r = robots("User-agent: *\nDisallow: /.well-known/\nAllow: /.well-known/skills/\n");
        assert!(r.allows("/.well-known/skills/index.json"));
        assert!(!r.allows("/.well-known/agent-skills/index.json"));
        let r = robots("User-agent: *\nDisallow: /page\nAllow: /page\n");
        assert!(r.allows("/page"));
        let r = robots("User-agent: *\nAllow: /\nDisallow: /secret\n");
        assert!(!r.allows("/secret/x"));
        assert!(r.allows("/public"));
    }

    #[test]
    fn wildcards_and_anchors() {
        let cases = [
            ("/*.json$", "/.well-known/skills/index.json", true),
            ("/*.json$", "/.well-known/skills/index.json?x=1", false),
            ("/*.json", "/.well-known/skills/index.json?x=1", true),
            ("/fish*", "/fish.html", true),
            ("/fish*", "/Fish", false),
            ("/fish/", "/fish", false),
            ("/*/SKILL.md", "/.well-known/skills/pdf/SKILL.md", true),
            ("/a*b*c$", "/axxbyyc", true),
            ("/a*b*c$", "/axxbyycd", false),
            ("*", "/", true),
            ("/$", "/", true),
            ("/$", "/x", false),
            ("/%7euser", "/%7Euser/x", true),
        ];
        for (pattern, path, expected) in cases {
            let text = format!("User-agent: *\nDisallow: {pattern}\n");
            assert_eq!(!robots(&text).allows(path), expected, "{pattern} vs {path}");
        }
    }

    #[test]
    fn non_ascii_patterns_match_their_percent_encoding() {
        let r = robots("User-agent: *\nDisallow: /fö\n");
        assert!(!r.allows("/f%C3%B6o"));
        assert!(!r.allows("/f%c3%b6"));
        assert!(r.allows("/fo"));
    }

    #[test]
    fn robots_txt_itself_is_always_allowed() {
        assert!(robots("User-agent: *\nDisallow: /\n").allows("/robots.txt"));
    }

    #[test]
    fn crawl_delay_is_read_and_capped() {
        let r = robots("User-agent: skillscout\nCrawl-delay: 2.5\n");
        assert_eq!(r.crawl_delay(), Some(Duration::from_millis(2500)));
        let r = robots("User-agent: *\nCrawl-delay: 86400\n");
        assert_eq!(r.crawl_delay(), Some(MAX_CRAWL_DELAY));
        for bad in ["-1", "NaN", "inf", "soon"] {
            let r = robots(&format!("User-agent: *\nCrawl-delay: {bad}\n"));
            assert_eq!(r.crawl_delay(), None, "{bad}");
        }
        // Another agent's delay does not apply.
        let r = robots("User-agent: other\nCrawl-delay: 5\n");
        assert_eq!(r.crawl_delay(), None);
    }

    #[test]
    fn comments_crlf_bom_and_case() {
        let text = "\u{feff}# hello\r\nUSER-AGENT: * # all\r\nDISALLOW: /x # no\r\n";
        let r = robots(text);
        assert!(!r.allows("/x"));
        assert!(r.allows("/y"));
    }

    #[test]
    fn only_the_first_500_kib_is_parsed() {
        let mut text = String::from("User-agent: *\n");
        while text.len() < MAX_ROBOTS_BYTES {
            text.push_str("# padding padding padding padding padding padding\n");
        }
        text.push_str("Disallow: /\n");
        assert!(robots(&text).allows("/.well-known/skills/index.json"));
    }

    #[test]
    fn statuses_map_to_policies() {
        assert!(RobotsPolicy::from_response(404, b"").allows("/x"));
        assert!(RobotsPolicy::from_response(403, b"").allows("/x"));
        assert!(!RobotsPolicy::from_response(429, b"").allows("/x"));
        assert!(!RobotsPolicy::from_response(500, b"").allows("/x"));
        assert!(!RobotsPolicy::from_response(503, b"").allows("/x"));
        let policy = RobotsPolicy::from_response(200, b"User-agent: *\nDisallow: /x\n");
        assert!(!policy.allows("/x"));
        assert!(policy.allows("/y"));
    }

    #[test]
    fn pathological_patterns_stay_fast() {
        // Many stars against a long path that never matches: bounded by pattern × path.
        let pattern = "/".to_owned() + &"*a".repeat(200) + "b$";
        let text = format!("User-agent: *\nDisallow: {pattern}\n");
        let path = "/".to_owned() + &"a".repeat(2000);
        assert!(robots(&text).allows(&path));
    }

    proptest::proptest! {
        #[test]
        fn parsing_and_matching_never_panic(text in ".{0,400}", path in "/.{0,80}") {
            let r = Robots::parse(text.as_bytes(), PRODUCT_TOKEN);
            let _ = r.allows(&path);
        }
    }
}
