//! The SSRF guard (docs/crawl.md): the crawler fetches URLs that strangers publish, so it must
//! never be steered into the network it runs in.
//!
//! Two doors lead to an address, and both are guarded:
//! - host names go through [`GuardedResolver`], which answers `--resolve` overrides (trusted:
//!   that is how tests and the offline demo reach loopback servers) and otherwise asks the
//!   system resolver and drops every non-public address it returns, so a DNS answer cannot
//!   point the crawler at 127.0.0.1 (the connection is made to exactly the addresses checked
//!   here, which also closes the DNS-rebinding gap);
//! - IP-literal hosts (`http://127.0.0.1/`, `http://2130706433/`, `http://[::ffff:127.0.0.1]/`)
//!   never reach a resolver, so the fetch layer checks them with [`check_literal`] before
//!   every request and at every redirect hop. The `url` crate has already turned decimal,
//!   octal and hex IPv4 forms into plain addresses by then.

use std::collections::HashMap;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::str::FromStr;
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

/// One `--resolve HOST=IP[:PORT]` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolveOverride {
    pattern: HostPattern,
    address: SocketAddr,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    /// `*`: every host.
    Any,
    /// `*.suffix`: every host ending in `.suffix` (not `suffix` itself).
    Suffix(String),
    /// One host.
    Exact(String),
}

impl ResolveOverride {
    /// Returns the address the override gives; port 0 means "the URL's port".
    pub fn address(&self) -> SocketAddr {
        self.address
    }
}

impl FromStr for ResolveOverride {
    type Err = String;

    /// Parses `HOST=IP`, `HOST=IP:PORT`, `HOST=[IPv6]:PORT`; HOST may be `*` or `*.suffix`.
    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        let invalid = |problem: &str| format!("invalid --resolve {raw:?}: {problem}");
        let Some((host, target)) = raw.split_once('=') else {
            return Err(invalid("expected HOST=IP[:PORT]"));
        };
        let host = host.trim().to_ascii_lowercase();
        let target = target.trim();
        let pattern = if host == "*" {
            HostPattern::Any
        } else if let Some(suffix) = host.strip_prefix("*.") {
            let suffix = suffix.trim_end_matches('.');
            if suffix.is_empty() || suffix.contains(['*', '/', ':', '@', ' ']) {
                return Err(invalid("a wildcard is `*` or `*.suffix`"));
            }
            HostPattern::Suffix(suffix.to_owned())
        } else {
            let host = host.trim_end_matches('.');
            if host.is_empty() || host.contains(['*', '/', ':', '@', ' ']) {
                return Err(invalid("HOST must be a host name, `*` or `*.suffix`"));
            }
            HostPattern::Exact(host.to_owned())
        };
        let address = if let Ok(address) = target.parse::<SocketAddr>() {
            address
        } else if let Ok(ip) = target.trim_matches(['[', ']']).parse::<IpAddr>() {
            SocketAddr::new(ip, 0)
        } else {
            return Err(invalid(
                "IP must be an IPv4 or IPv6 address, optionally with :PORT",
            ));
        };
        Ok(ResolveOverride { pattern, address })
    }
}

impl fmt::Display for ResolveOverride {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.pattern {
            HostPattern::Any => f.write_str("*")?,
            HostPattern::Suffix(suffix) => write!(f, "*.{suffix}")?,
            HostPattern::Exact(host) => f.write_str(host)?,
        }
        if self.address.port() == 0 {
            write!(f, "={}", self.address.ip())
        } else {
            write!(f, "={}", self.address)
        }
    }
}

/// The `--resolve` rules, looked up most specific first: an exact host, then the longest
/// matching `*.suffix`, then `*`.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    exact: HashMap<String, SocketAddr>,
    suffixes: Vec<(String, SocketAddr)>,
    any: Option<SocketAddr>,
}

impl Overrides {
    /// Builds the lookup from rules; a later rule for the same pattern replaces an earlier one.
    pub fn new(rules: &[ResolveOverride]) -> Overrides {
        let mut overrides = Overrides::default();
        for rule in rules {
            match &rule.pattern {
                HostPattern::Any => overrides.any = Some(rule.address),
                HostPattern::Exact(host) => {
                    overrides.exact.insert(host.clone(), rule.address);
                }
                HostPattern::Suffix(suffix) => {
                    overrides.suffixes.retain(|(known, _)| known != suffix);
                    overrides.suffixes.push((suffix.clone(), rule.address));
                }
            }
        }
        overrides
            .suffixes
            .sort_by_key(|(suffix, _)| std::cmp::Reverse(suffix.len()));
        overrides
    }

    /// Returns the trusted address for `host`, if a rule names it.
    pub fn lookup(&self, host: &str) -> Option<SocketAddr> {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if let Some(address) = self.exact.get(&host) {
            return Some(*address);
        }
        for (suffix, address) in &self.suffixes {
            if host.len() > suffix.len()
                && host.ends_with(suffix.as_str())
                && host.as_bytes()[host.len() - suffix.len() - 1] == b'.'
            {
                return Some(*address);
            }
        }
        self.any
    }

    /// Returns true when there are no rules.
    pub fn is_empty(&self) -> bool {
        self.exact.is_empty() && self.suffixes.is_empty() && self.any.is_none()
    }
}

/// Why a destination was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{host} resolves to {address}, a {kind} address; skillscout only fetches public addresses")]
pub struct RefusedAddress {
    /// The host as written in the URL.
    pub host: String,
    /// The refused address.
    pub address: IpAddr,
    /// What kind of range it is in.
    pub kind: &'static str,
}

/// Returns the kind of non-public range `ip` is in, or `None` for a public address.
///
/// IPv6 addresses that embed an IPv4 address (v4-mapped `::ffff:a.b.c.d`, v4-compatible
/// `::a.b.c.d`, NAT64 `64:ff9b::/96` and 6to4 `2002::/16`) are judged by the embedded address,
/// so `::ffff:127.0.0.1` is loopback.
pub fn non_public_kind(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_kind(v4),
        IpAddr::V6(v6) => v6_kind(v6),
    }
}

fn v4_kind(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    let kind = match (a, b, c) {
        _ if ip.is_unspecified() => "unspecified",
        (0, _, _) => "unspecified",
        (127, _, _) => "loopback",
        (10, _, _) | (192, 168, _) => "private",
        (172, 16..=31, _) => "private",
        (100, 64..=127, _) => "carrier-grade NAT",
        (169, 254, _) => "link-local",
        (192, 0, 0) => "IETF protocol assignment",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "documentation",
        (198, 18..=19, _) => "benchmarking",
        (224..=239, _, _) => "multicast",
        (240..=255, _, _) => "reserved",
        _ => return None,
    };
    Some(kind)
}

fn v6_kind(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = embedded_v4(ip) {
        return v4_kind(v4);
    }
    let segments = ip.segments();
    let kind = match segments[0] {
        _ if ip.is_unspecified() => "unspecified",
        _ if ip.is_loopback() => "loopback",
        0xfc00..=0xfdff => "unique local",
        0xfe80..=0xfebf => "link-local",
        0xfec0..=0xfeff => "site-local",
        0xff00..=0xffff => "multicast",
        0x2001 if segments[1] == 0x0db8 => "documentation",
        0x0100 if segments[1..4] == [0, 0, 0] => "discard",
        _ => return None,
    };
    Some(kind)
}

/// Returns the IPv4 address embedded in an IPv6 address, for the forms that route to it.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let tail = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    match s {
        // v4-mapped ::ffff:a.b.c.d
        [0, 0, 0, 0, 0, 0xffff, _, _] => Some(tail),
        // v4-compatible ::a.b.c.d (deprecated, but some stacks still route it); `::` and `::1`
        // are handled as IPv6 unspecified and loopback.
        [0, 0, 0, 0, 0, 0, hi, _] if hi != 0 => Some(tail),
        // NAT64 well-known prefix 64:ff9b::/96
        [0x0064, 0xff9b, 0, 0, 0, 0, _, _] => Some(tail),
        // 6to4 2002:AABB:CCDD::/48
        [0x2002, hi, lo, ..] => Some(Ipv4Addr::new(
            (hi >> 8) as u8,
            hi as u8,
            (lo >> 8) as u8,
            lo as u8,
        )),
        _ => None,
    }
}

/// Checks a URL whose host is an IP literal against the guard. Host names pass here; the
/// resolver checks them.
pub fn check_literal(url: &Url, allow_private: bool) -> Result<(), RefusedAddress> {
    if allow_private {
        return Ok(());
    }
    let ip = match url.host() {
        Some(Host::Ipv4(ip)) => IpAddr::V4(ip),
        Some(Host::Ipv6(ip)) => IpAddr::V6(ip),
        Some(Host::Domain(_)) | None => return Ok(()),
    };
    match non_public_kind(ip) {
        Some(kind) => Err(RefusedAddress {
            host: url.host_str().unwrap_or_default().to_owned(),
            address: ip,
            kind,
        }),
        None => Ok(()),
    }
}

/// The resolver given to the HTTP client: `--resolve` overrides first, then the system
/// resolver with non-public answers removed.
#[derive(Debug, Clone)]
pub struct GuardedResolver {
    overrides: Arc<Overrides>,
    allow_private: bool,
}

impl GuardedResolver {
    /// Returns a resolver with these overrides; `allow_private` lifts the guard.
    pub fn new(overrides: Arc<Overrides>, allow_private: bool) -> GuardedResolver {
        GuardedResolver {
            overrides,
            allow_private,
        }
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        if let Some(address) = self.overrides.lookup(&host) {
            let addrs: Addrs = Box::new(std::iter::once(address));
            return Box::pin(std::future::ready(Ok(addrs)));
        }
        let allow_private = self.allow_private;
        Box::pin(async move {
            let resolved: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if allow_private {
                let addrs: Addrs = Box::new(resolved.into_iter());
                return Ok(addrs);
            }
            let mut refused = None;
            let mut public = Vec::with_capacity(resolved.len());
            for address in resolved {
                match non_public_kind(address.ip()) {
                    None => public.push(address),
                    Some(kind) => {
                        refused.get_or_insert(RefusedAddress {
                            host: host.clone(),
                            address: address.ip(),
                            kind,
                        });
                    }
                }
            }
            match (public.is_empty(), refused) {
                (true, Some(refused)) => Err(Box::new(refused) as _),
                _ => {
                    let addrs: Addrs = Box::new(public.into_iter());
                    Ok(addrs)
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(ip: &str) -> Option<&'static str> {
        non_public_kind(ip.parse().unwrap())
    }

    #[test]
    fn non_public_ranges() {
        let cases = [
            ("127.0.0.1", Some("loopback")),
            ("127.255.255.254", Some("loopback")),
            ("10.1.2.3", Some("private")),
            ("172.16.0.1", Some("private")),
            ("172.31.255.255", Some("private")),
            ("172.32.0.1", None),
            ("192.168.1.1", Some("private")),
            ("169.254.169.254", Some("link-local")),
            ("100.64.0.1", Some("carrier-grade NAT")),
            ("100.128.0.1", None),
            ("0.0.0.0", Some("unspecified")),
            ("0.1.2.3", Some("unspecified")),
            ("224.0.0.1", Some("multicast")),
            ("255.255.255.255", Some("reserved")),
            ("8.8.8.8", None),
            ("93.184.216.34", None),
            ("::1", Some("loopback")),
            ("::", Some("unspecified")),
            ("::ffff:127.0.0.1", Some("loopback")),
            ("::ffff:10.0.0.1", Some("private")),
            ("::ffff:8.8.8.8", None),
            ("::127.0.0.1", Some("loopback")),
            ("64:ff9b::a9fe:a9fe", Some("link-local")),
            ("2002:7f00:1::", Some("loopback")),
            ("fc00::1", Some("unique local")),
            ("fd12:3456::1", Some("unique local")),
            ("fe80::1", Some("link-local")),
            ("ff02::1", Some("multicast")),
            ("2001:db8::1", Some("documentation")),
            ("2606:4700:4700::1111", None),
        ];
        for (ip, expected) in cases {
            assert_eq!(kind(ip), expected, "{ip}");
        }
    }

    #[test]
    fn literal_hosts_in_every_spelling_are_checked() {
        for raw in [
            "http://127.0.0.1/",
            "http://2130706433/",
            "http://0x7f000001/",
            "http://0177.0.0.1/",
            "http://127.1/",
            "http://[::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://169.254.169.254/latest/meta-data/",
            "http://0.0.0.0:8080/",
        ] {
            let url = Url::parse(raw).unwrap();
            assert!(check_literal(&url, false).is_err(), "{raw}");
            assert!(check_literal(&url, true).is_ok(), "{raw}");
        }
        for raw in [
            "http://8.8.8.8/",
            "https://example.com/",
            "http://localhost/",
        ] {
            // Names (even `localhost`) are the resolver's business.
            assert!(
                check_literal(&Url::parse(raw).unwrap(), false).is_ok(),
                "{raw}"
            );
        }
        let refused = check_literal(&Url::parse("http://2130706433/").unwrap(), false);
        assert_eq!(
            refused.unwrap_err().to_string(),
            "127.0.0.1 resolves to 127.0.0.1, a loopback address; skillscout only fetches public addresses"
        );
    }

    #[test]
    fn overrides_parse_and_match_most_specific_first() {
        let rules: Vec<ResolveOverride> = [
            "*=127.0.0.9",
            "*.test=127.0.0.2:8080",
            "*.deep.test=[::1]:9000",
            "exact.deep.test=127.0.0.4",
            "Mixed.Case.=10.0.0.1",
        ]
        .iter()
        .map(|raw| raw.parse().unwrap())
        .collect();
        let overrides = Overrides::new(&rules);
        let lookup = |host: &str| overrides.lookup(host).map(|a| a.to_string());
        assert_eq!(lookup("exact.deep.test").as_deref(), Some("127.0.0.4:0"));
        assert_eq!(lookup("a.deep.test").as_deref(), Some("[::1]:9000"));
        assert_eq!(lookup("pdfworks.test").as_deref(), Some("127.0.0.2:8080"));
        assert_eq!(lookup("PDFWORKS.TEST.").as_deref(), Some("127.0.0.2:8080"));
        assert_eq!(lookup("mixed.case").as_deref(), Some("10.0.0.1:0"));
        // `*.test` does not match `test` itself, nor `nottest`.
        assert_eq!(lookup("test").as_deref(), Some("127.0.0.9:0"));
        assert_eq!(lookup("nottest").as_deref(), Some("127.0.0.9:0"));
        assert!(Overrides::new(&[]).lookup("x.test").is_none());
        assert_eq!(rules[1].to_string(), "*.test=127.0.0.2:8080");
        assert_eq!(rules[0].to_string(), "*=127.0.0.9");
    }

    #[test]
    fn bad_overrides_are_refused_with_a_reason() {
        for bad in [
            "nohost",
            "=127.0.0.1",
            "a.test=",
            "a.test=localhost",
            "a.test=127.0.0.1:99999",
            "*.=127.0.0.1",
            "a*b=127.0.0.1",
            "a.test:80=127.0.0.1",
        ] {
            let error = bad.parse::<ResolveOverride>().unwrap_err();
            assert!(error.starts_with("invalid --resolve"), "{bad}: {error}");
        }
    }

    #[tokio::test]
    async fn the_resolver_trusts_overrides_and_refuses_private_answers() {
        let rules = vec!["*.test=127.0.0.1:1".parse().unwrap()];
        let resolver = GuardedResolver::new(Arc::new(Overrides::new(&rules)), false);
        let addrs: Vec<SocketAddr> = resolver
            .resolve("a.test".parse().unwrap())
            .await
            .unwrap()
            .collect();
        assert_eq!(addrs, ["127.0.0.1:1".parse().unwrap()]);
        // `localhost` resolves (from /etc/hosts, no network) to loopback only: refused.
        let error = match resolver.resolve("localhost".parse().unwrap()).await {
            Ok(addrs) => panic!("resolved to {:?}", addrs.collect::<Vec<_>>()),
            Err(error) => error,
        };
        assert!(error.downcast_ref::<RefusedAddress>().is_some(), "{error}");
        let open = GuardedResolver::new(Arc::new(Overrides::default()), true);
        assert!(open.resolve("localhost".parse().unwrap()).await.is_ok());
    }
}
