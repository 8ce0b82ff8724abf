//! The publishers' budgets: how often a domain may be recrawled on request, how many requests
//! (recrawls and submissions) one client address may make, and, apart, how many IndexNow
//! pings one client address and one host may send. Each is a GCRA limit (`governor`) keyed by
//! domain, host or address; a request past one is refused with the time after which it would
//! pass (a 429 with `Retry-After`). The keys kept are bounded: the limiters forget keys whose
//! budget is whole again, every [`SWEEP_EVERY`] checks.

use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};

use crate::error::ApiError;

/// How many checks of one limiter pass between two sweeps of the keys it holds.
const SWEEP_EVERY: u64 = 1024;

/// The budgets' sizes (`ServeConfig::budgets`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetConfig {
    /// The least time between two accepted recrawl requests of one domain.
    pub recrawl_every: Duration,
    /// Recrawl requests and submissions one client address may make in a burst; the budget
    /// refills at this many per hour.
    pub client_requests_per_hour: NonZeroU32,
    /// IndexNow pings one client address may send in a burst; refills at this many a minute.
    pub client_pings_per_minute: NonZeroU32,
    /// IndexNow pings that may name one host in a burst; refills at this many a minute.
    pub host_pings_per_minute: NonZeroU32,
}

impl Default for BudgetConfig {
    fn default() -> BudgetConfig {
        BudgetConfig {
            recrawl_every: Duration::from_secs(5 * 60),
            client_requests_per_hour: NonZeroU32::new(30).expect("not zero"),
            client_pings_per_minute: NonZeroU32::new(120).expect("not zero"),
            host_pings_per_minute: NonZeroU32::new(10).expect("not zero"),
        }
    }
}

/// One keyed limit.
struct Limit<K: Hash + Eq + Clone> {
    limiter: DefaultKeyedRateLimiter<K>,
    checks: AtomicU64,
    /// Says whose budget it is, in the refusal.
    what: &'static str,
}

impl<K: Hash + Eq + Clone> Limit<K> {
    fn new(quota: Quota, what: &'static str) -> Limit<K> {
        Limit {
            limiter: DefaultKeyedRateLimiter::dashmap(quota),
            checks: AtomicU64::new(0),
            what,
        }
    }

    /// Spends one unit of `key`'s budget, or says when one will be there.
    fn spend(&self, key: &K) -> Result<(), ApiError> {
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            self.limiter.retain_recent();
            self.limiter.shrink_to_fit();
        }
        self.limiter.check_key(key).map_err(|not_until| {
            let retry_after = not_until.wait_time_from(DefaultClock::default().now());
            ApiError::TooManyRequests {
                message: format!(
                    "{} is used up; retry in {} s",
                    self.what,
                    retry_after.as_secs().max(1)
                ),
                retry_after,
            }
        })
    }
}

/// Every budget of the publishers' endpoints.
pub(crate) struct Budgets {
    recrawls: Limit<String>,
    clients: Limit<IpAddr>,
    ping_clients: Limit<IpAddr>,
    ping_hosts: Limit<String>,
}

impl std::fmt::Debug for Budgets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Budgets").finish_non_exhaustive()
    }
}

impl Budgets {
    /// Returns budgets of these sizes.
    pub(crate) fn new(config: BudgetConfig) -> Budgets {
        let recrawl = Quota::with_period(config.recrawl_every.max(Duration::from_millis(1)))
            .expect("a period of at least a millisecond");
        Budgets {
            recrawls: Limit::new(recrawl, "this domain's recrawl budget (one per period)"),
            clients: Limit::new(
                Quota::per_hour(config.client_requests_per_hour),
                "your address's budget of recrawl requests and submissions",
            ),
            ping_clients: Limit::new(
                Quota::per_minute(config.client_pings_per_minute),
                "your address's IndexNow budget",
            ),
            ping_hosts: Limit::new(
                Quota::per_minute(config.host_pings_per_minute),
                "this host's IndexNow budget",
            ),
        }
    }

    /// Spends one request of `client`'s budget (a recrawl request or a submission).
    pub(crate) fn client_request(&self, client: IpAddr) -> Result<(), ApiError> {
        self.clients.spend(&client)
    }

    /// Spends the recrawl of `domain` its period allows.
    pub(crate) fn recrawl(&self, domain: &str) -> Result<(), ApiError> {
        self.recrawls.spend(&domain.to_owned())
    }

    /// Spends one ping of `client`'s budget, then one of `host`'s.
    pub(crate) fn ping(&self, client: IpAddr, host: &str) -> Result<(), ApiError> {
        self.ping_clients.spend(&client)?;
        self.ping_hosts.spend(&host.to_ascii_lowercase())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Budgets {
        Budgets::new(BudgetConfig {
            recrawl_every: Duration::from_secs(300),
            client_requests_per_hour: NonZeroU32::new(3).unwrap(),
            client_pings_per_minute: NonZeroU32::new(4).unwrap(),
            host_pings_per_minute: NonZeroU32::new(2).unwrap(),
        })
    }

    fn retry_after(result: Result<(), ApiError>) -> Duration {
        match result {
            Err(ApiError::TooManyRequests { retry_after, .. }) => retry_after,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn a_domain_is_recrawled_once_per_period_whoever_asks() {
        let budgets = small();
        budgets.recrawl("a.test").unwrap();
        let wait = retry_after(budgets.recrawl("a.test"));
        assert!(wait > Duration::from_secs(290) && wait <= Duration::from_secs(300));
        budgets.recrawl("b.test").unwrap();
    }

    #[test]
    fn a_client_has_a_burst_then_waits() {
        let budgets = small();
        let client: IpAddr = "192.0.2.1".parse().unwrap();
        for _ in 0..3 {
            budgets.client_request(client).unwrap();
        }
        let wait = retry_after(budgets.client_request(client));
        // Three an hour: one every twenty minutes.
        assert!(wait > Duration::from_secs(19 * 60), "{wait:?}");
        budgets
            .client_request("192.0.2.2".parse().unwrap())
            .unwrap();
    }

    #[test]
    fn pings_are_held_per_host_and_per_client() {
        let budgets = small();
        let one: IpAddr = "192.0.2.1".parse().unwrap();
        let two: IpAddr = "192.0.2.2".parse().unwrap();
        budgets.ping(one, "h.test").unwrap();
        budgets.ping(two, "H.test").unwrap();
        // The host's budget holds whoever sends the pings.
        retry_after(budgets.ping("192.0.2.3".parse().unwrap(), "h.test"));
        // One client's budget holds whatever hosts its pings name (four, one spent).
        for host in ["x.test", "y.test", "z.test"] {
            budgets.ping(one, host).unwrap();
        }
        retry_after(budgets.ping(one, "w.test"));
        // Pings do not use the budget of recrawl requests.
        budgets.client_request(one).unwrap();
    }
}
