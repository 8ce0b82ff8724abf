//! Per-client rate limits: each client gets a token bucket (`governor`'s GCRA), refilled at
//! [`RateLimit::per_second`] up to [`RateLimit::burst`], keyed by who the client is: the
//! holder of a valid bearer token by that token, anyone else by address (an IPv6 address by
//! its /64). Over budget, a request is answered at once with a 429, `Retry-After` and the
//! `RateLimit-Policy` and `RateLimit` fields of draft-ietf-httpapi-ratelimit-headers-09. This
//! is separate from the work limit (`router::shed_load`), which protects the server from the
//! sum of all clients; this keeps one client from taking it all.

use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::header::{AUTHORIZATION, HeaderName, RETRY_AFTER};
use axum::http::{HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use formats::Digest;
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

use crate::error::ApiError;
use crate::state::AppState;

/// The `RateLimit-Policy` field: the policy a client's budget follows.
pub const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");
/// The `RateLimit` field: what is left of the client's budget.
pub const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");
/// The name of the one policy, as both fields give it.
const POLICY_NAME: &str = "client";
/// How many checks pass between two sweeps of the buckets of clients not seen lately.
const SWEEP_EVERY: u64 = 4096;

/// A client's budget: `per_second` requests a second on average, up to `burst` at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Requests a second, on average.
    pub per_second: NonZeroU32,
    /// Requests at once, after a pause long enough to refill the bucket.
    pub burst: NonZeroU32,
}

impl RateLimit {
    /// The default: 100 requests a second with bursts of 1,000, so that a person or a script
    /// paging through results never meets it and a flood does.
    pub const DEFAULT: RateLimit = RateLimit {
        per_second: NonZeroU32::new(100).expect("nonzero"),
        burst: NonZeroU32::new(1000).expect("nonzero"),
    };

    /// Parses `N/s`, `N/s,burst=M` (the burst defaults to ten seconds' worth), or `off`
    /// (`None`).
    pub fn parse(text: &str) -> Result<Option<RateLimit>, String> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("off") {
            return Ok(None);
        }
        let invalid = || {
            format!(
                "invalid rate limit {text:?}: use N/s, N/s,burst=M (e.g. 100/s,burst=1000) or off"
            )
        };
        let (rate, burst) = match text.split_once(',') {
            Some((rate, burst)) => (rate.trim(), Some(burst.trim())),
            None => (text, None),
        };
        let per_second: u32 = rate
            .strip_suffix("/s")
            .and_then(|number| number.trim().parse().ok())
            .ok_or_else(invalid)?;
        let per_second = NonZeroU32::new(per_second).ok_or_else(invalid)?;
        let burst = match burst {
            Some(burst) => burst
                .strip_prefix("burst=")
                .and_then(|number| number.trim().parse().ok())
                .and_then(NonZeroU32::new)
                .ok_or_else(invalid)?,
            None => per_second.saturating_mul(NonZeroU32::new(10).expect("nonzero")),
        };
        Ok(Some(RateLimit { per_second, burst }))
    }

    /// The seconds an empty bucket takes to fill again: the policy's window.
    fn window_seconds(&self) -> u64 {
        u64::from(self.burst.get()).div_ceil(u64::from(self.per_second.get()))
    }
}

impl std::fmt::Display for RateLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/s,burst={}", self.per_second, self.burst)
    }
}

/// A proxy whose `X-Forwarded-For` is believed: an address, or a network in CIDR notation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrustedProxy {
    network: IpAddr,
    prefix: u8,
}

impl TrustedProxy {
    /// Parses `ADDR` or `ADDR/PREFIX`.
    pub fn parse(text: &str) -> Result<TrustedProxy, String> {
        let text = text.trim();
        let invalid = || format!("invalid proxy {text:?}: use an address or ADDR/PREFIX");
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let network: IpAddr = address.parse().map_err(|_| invalid())?;
        let bits = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(prefix) => prefix.parse::<u8>().map_err(|_| invalid())?,
            None => bits,
        };
        if prefix > bits {
            return Err(invalid());
        }
        Ok(TrustedProxy {
            network: mask(network, prefix),
            prefix,
        })
    }

    /// Returns true when `address` is this proxy, or in its network.
    pub fn contains(&self, address: IpAddr) -> bool {
        let address = canonical(address);
        address.is_ipv4() == self.network.is_ipv4() && mask(address, self.prefix) == self.network
    }
}

impl std::fmt::Display for TrustedProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

/// Returns `address` with all but its first `prefix` bits zeroed.
fn mask(address: IpAddr, prefix: u8) -> IpAddr {
    match address {
        IpAddr::V4(v4) => {
            let bits = u32::from(v4);
            let kept = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            IpAddr::from((bits & kept).to_be_bytes())
        }
        IpAddr::V6(v6) => {
            let bits = u128::from(v6);
            let kept = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            IpAddr::from((bits & kept).to_be_bytes())
        }
    }
}

/// Returns an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) as the IPv4 address it is.
fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        IpAddr::V4(_) => address,
    }
}

/// Whose budget a request is taken from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Client {
    /// The holder of a valid bearer token, by the token's digest.
    Token(String),
    /// An IPv4 address, or an IPv6 address's /64.
    Address(IpAddr),
    /// A request without a peer address (a router used without a socket): one budget for all.
    Unknown,
}

type Limiter =
    RateLimiter<Client, DefaultKeyedStateStore<Client>, DefaultClock, StateInformationMiddleware>;

/// The server's rate limiter.
pub(crate) struct ClientLimits {
    limit: RateLimit,
    limiter: Limiter,
    trusted: Vec<TrustedProxy>,
    checks: AtomicU64,
    /// The `RateLimit-Policy` value, the same on every response.
    policy: HeaderValue,
}

impl std::fmt::Debug for ClientLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientLimits")
            .field("limit", &self.limit)
            .field("trusted", &self.trusted)
            .finish_non_exhaustive()
    }
}

impl ClientLimits {
    /// Returns the limiter for `limit`, believing `X-Forwarded-For` from `trusted` proxies.
    pub(crate) fn new(limit: RateLimit, trusted: Vec<TrustedProxy>) -> ClientLimits {
        let quota = Quota::per_second(limit.per_second).allow_burst(limit.burst);
        let policy = format!(
            "\"{POLICY_NAME}\";q={};w={}",
            limit.burst,
            limit.window_seconds()
        );
        ClientLimits {
            limit,
            limiter: RateLimiter::keyed(quota).with_middleware::<StateInformationMiddleware>(),
            trusted,
            checks: AtomicU64::new(0),
            policy: HeaderValue::from_str(&policy).expect("ASCII digits and quotes"),
        }
    }

    /// Returns the client address of a request from `peer`: the peer itself, or, when the
    /// peer is a trusted proxy, the nearest address in `X-Forwarded-For` that is not one (the
    /// entries a client wrote itself, further left, are not believed).
    fn client_address(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        client_address(peer, headers, &self.trusted)
    }

    /// Takes one request from `client`'s budget: `Ok` with what is left, or `Err` with the
    /// wait until the next request is allowed.
    fn check(&self, client: &Client) -> Result<u32, Duration> {
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            // Buckets that have filled up again are the same as none: forget them, so memory
            // holds only the clients of the last window.
            self.limiter.retain_recent();
            self.limiter.shrink_to_fit();
        }
        match self.limiter.check_key(client) {
            Ok(snapshot) => Ok(snapshot.remaining_burst_capacity()),
            Err(not_until) => Err(not_until.wait_time_from(self.limiter.clock().now())),
        }
    }

    /// The `RateLimit` value: `remaining` requests left, full again in `t` seconds.
    fn remaining(&self, remaining: u32) -> HeaderValue {
        let used = self.limit.burst.get().saturating_sub(remaining);
        let refill = u64::from(used).div_ceil(u64::from(self.limit.per_second.get()));
        HeaderValue::from_str(&format!("\"{POLICY_NAME}\";r={remaining};t={refill}"))
            .expect("ASCII digits and quotes")
    }
}

/// Parses one `X-Forwarded-For` entry: an IP address, possibly with a port
/// (`203.0.113.7:4711`, `[2001:db8::1]:4711`).
/// Returns the client address of a request from `peer`: the peer itself, or, when the peer
/// is one of the `trusted` proxies, the nearest address in `X-Forwarded-For` that is not one
/// (the entries a client wrote itself, further left, are not believed).
pub(crate) fn client_address(
    peer: IpAddr,
    headers: &HeaderMap,
    trusted: &[TrustedProxy],
) -> IpAddr {
    let is_trusted = |address: IpAddr| trusted.iter().any(|proxy| proxy.contains(address));
    let peer = canonical(peer);
    if !is_trusted(peer) {
        return peer;
    }
    let mut address = peer;
    let forwarded = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .collect::<Vec<_>>();
    for entry in forwarded.iter().rev() {
        let Some(hop) = parse_forwarded(entry) else {
            // Not an address: nothing further left can be believed.
            break;
        };
        address = hop;
        if !is_trusted(hop) {
            break;
        }
    }
    address
}

/// The client address of a request, as [`client_address`] reads it behind the trusted
/// proxies: set by [`limit`] on every request, for the publishers' budgets too.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClientAddress(pub(crate) IpAddr);

fn parse_forwarded(entry: &str) -> Option<IpAddr> {
    let entry = entry.trim();
    if let Ok(address) = entry.parse::<IpAddr>() {
        return Some(canonical(address));
    }
    entry
        .parse::<SocketAddr>()
        .ok()
        .map(|socket| canonical(socket.ip()))
}

/// Returns the key of an address: an IPv6 address by its /64, which one client usually holds
/// whole.
fn address_key(address: IpAddr) -> Client {
    match address {
        IpAddr::V6(v6) if v6.to_ipv4_mapped().is_none() => {
            Client::Address(mask(IpAddr::V6(v6), 64))
        }
        other => Client::Address(canonical(other)),
    }
}

/// Whose budget a request takes from: a valid bearer token's holder, or the client address.
fn client_of(state: &AppState, limits: &ClientLimits, request: &Request) -> Client {
    if let Some(token) = bearer(request.headers())
        && (state.tokens().is_valid(token)
            || state
                .admin_tokens()
                .is_some_and(|admin| admin.is_valid(token)))
    {
        return Client::Token(Digest::of(token.as_bytes()).hex());
    }
    match request.extensions().get::<ConnectInfo<SocketAddr>>() {
        Some(ConnectInfo(peer)) => address_key(limits.client_address(peer.ip(), request.headers())),
        None => Client::Unknown,
    }
}

/// Returns the bearer token of an `Authorization` header, if it has one.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|token| !token.is_empty())
}

/// The middleware: takes each request from its client's budget, answering a 429 when it is
/// spent. `/healthz` and `/metrics` are not counted: they are how an operator or a load
/// balancer watches the server.
pub(crate) async fn limit(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    if let Some(ConnectInfo(peer)) = request.extensions().get::<ConnectInfo<SocketAddr>>() {
        let address = client_address(
            peer.ip(),
            request.headers(),
            &state.config().trusted_proxies,
        );
        request.extensions_mut().insert(ClientAddress(address));
    }
    let Some(limits) = state.client_limits() else {
        return next.run(request).await;
    };
    if matches!(request.uri().path(), "/healthz" | "/metrics") {
        return next.run(request).await;
    }
    let client = client_of(&state, limits, &request);
    match limits.check(&client) {
        Ok(remaining) => {
            let mut response = next.run(request).await;
            let headers = response.headers_mut();
            headers.insert(RATELIMIT_POLICY, limits.policy.clone());
            headers.insert(RATELIMIT, limits.remaining(remaining));
            response
        }
        Err(wait) => {
            let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
            let seconds = seconds.max(1);
            let mut response = ApiError::RateLimited(seconds).into_response();
            let headers = response.headers_mut();
            headers.insert(RETRY_AFTER, HeaderValue::from(seconds));
            headers.insert(RATELIMIT_POLICY, limits.policy.clone());
            headers.insert(
                RATELIMIT,
                HeaderValue::from_str(&format!("\"{POLICY_NAME}\";r=0;t={seconds}"))
                    .expect("ASCII digits and quotes"),
            );
            response
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse() {
        assert_eq!(RateLimit::parse("off"), Ok(None));
        assert_eq!(
            RateLimit::parse("50/s,burst=500"),
            Ok(Some(RateLimit {
                per_second: NonZeroU32::new(50).unwrap(),
                burst: NonZeroU32::new(500).unwrap(),
            }))
        );
        assert_eq!(
            RateLimit::parse("7/s").unwrap().unwrap().burst.get(),
            70,
            "ten seconds' worth"
        );
        assert_eq!(RateLimit::DEFAULT.to_string(), "100/s,burst=1000");
        assert_eq!(RateLimit::DEFAULT.window_seconds(), 10);
        for bad in [
            "",
            "0/s",
            "100",
            "100/m",
            "100/s,burst=0",
            "100/s,bust=5",
            "-1/s",
        ] {
            assert!(RateLimit::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn proxies_parse_and_match() {
        let net = TrustedProxy::parse("10.1.0.0/16").unwrap();
        assert!(net.contains("10.1.200.3".parse().unwrap()));
        assert!(net.contains("::ffff:10.1.0.1".parse().unwrap()));
        assert!(!net.contains("10.2.0.1".parse().unwrap()));
        let one = TrustedProxy::parse("127.0.0.1").unwrap();
        assert!(one.contains("127.0.0.1".parse().unwrap()));
        assert!(!one.contains("127.0.0.2".parse().unwrap()));
        let v6 = TrustedProxy::parse("fd00::/8").unwrap();
        assert!(v6.contains("fd12::1".parse().unwrap()));
        assert!(!v6.contains("10.0.0.1".parse().unwrap()));
        assert!(
            TrustedProxy::parse("0.0.0.0/0")
                .unwrap()
                .contains("8.8.8.8".parse().unwrap())
        );
        for bad in ["", "10.0.0.0/33", "::/129", "proxy.example", "10.0.0.1/x"] {
            assert!(TrustedProxy::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn forwarded_for_is_believed_only_from_trusted_proxies() {
        let limits = ClientLimits::new(
            RateLimit::DEFAULT,
            vec![TrustedProxy::parse("10.0.0.0/8").unwrap()],
        );
        let headers = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert("x-forwarded-for", HeaderValue::from_str(value).unwrap());
            headers
        };
        let proxy: IpAddr = "10.0.0.5".parse().unwrap();
        let stranger: IpAddr = "198.51.100.9".parse().unwrap();
        // From an untrusted peer the header is ignored.
        assert_eq!(
            limits.client_address(stranger, &headers("203.0.113.1")),
            stranger
        );
        // Through a trusted proxy: the nearest untrusted hop; a client's own entries to its
        // left are not believed.
        assert_eq!(
            limits.client_address(proxy, &headers("1.2.3.4, 203.0.113.1, 10.0.0.7")),
            "203.0.113.1".parse::<IpAddr>().unwrap()
        );
        assert_eq!(
            limits.client_address(proxy, &headers("[2001:db8::1]:443")),
            "2001:db8::1".parse::<IpAddr>().unwrap()
        );
        assert_eq!(limits.client_address(proxy, &headers("garbage")), proxy);
        assert_eq!(limits.client_address(proxy, &HeaderMap::new()), proxy);
        // One IPv6 client, one /64.
        assert_eq!(
            address_key("2001:db8:1:2::1".parse().unwrap()),
            address_key("2001:db8:1:2:ffff::9".parse().unwrap())
        );
        assert_ne!(
            address_key("2001:db8:1:2::1".parse().unwrap()),
            address_key("2001:db8:1:3::1".parse().unwrap())
        );
    }
}
