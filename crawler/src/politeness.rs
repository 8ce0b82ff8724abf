//! Politeness (docs/crawl.md): one request at a time per host, a pause between the end of one
//! request and the start of the next, and honest waiting when a server says `Retry-After`.
//!
//! The [`HostScheduler`] is shared by every task of a crawl, because one host can be reached
//! from several domains (a CDN that serves artifacts for many publishers). A request holds its
//! host's permit from before it is sent until its body is read; dropping the permit records
//! when the host may be asked again. Entries of hosts that are idle and past their pause are
//! pruned, so the map grows with the number of hosts in flight, not with the crawl's size.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use tokio::sync::OwnedMutexGuard;
use tokio::time::Instant;

/// The longest `Retry-After` honoured; a server asking for more is left for the next crawl.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60 * 60);
/// How many idle hosts the scheduler keeps before it prunes.
const PRUNE_THRESHOLD: usize = 1024;

/// When the host's last request ended, and the pause it asked for after it.
#[derive(Debug)]
struct HostSlot {
    last_end: Option<Instant>,
    /// The pause after the last (or current) request: its own pause, or longer when the
    /// permit holder asked for more (`Retry-After`, backoff).
    pause: Duration,
}

impl HostSlot {
    /// When the next request may start, if it wants at least `pause` after the last one.
    fn next_start(&self, pause: Duration) -> Option<Instant> {
        self.last_end.map(|end| end + self.pause.max(pause))
    }
}

/// Serialises requests per host and spaces them out.
#[derive(Debug, Default)]
pub struct HostScheduler {
    hosts: Mutex<HashMap<String, Arc<tokio::sync::Mutex<HostSlot>>>>,
}

impl HostScheduler {
    /// Returns an empty scheduler.
    pub fn new() -> HostScheduler {
        HostScheduler::default()
    }

    /// Waits until `host` (as `host:port`) has no request in flight and the pause since the
    /// last one has passed, then returns a permit to make one request. `pause` is the least
    /// time to leave between requests around this one: the gap before it is the longer of the
    /// last request's pause and `pause` (so a `Crawl-delay` learnt from robots.txt already
    /// spaces the request that follows robots.txt), and the gap after it at least `pause`.
    pub async fn acquire(&self, host: &str, pause: Duration) -> HostPermit {
        let slot = {
            let mut hosts = self.hosts.lock().unwrap_or_else(|e| e.into_inner());
            if hosts.len() > PRUNE_THRESHOLD {
                prune(&mut hosts);
            }
            Arc::clone(hosts.entry(host.to_owned()).or_insert_with(|| {
                Arc::new(tokio::sync::Mutex::new(HostSlot {
                    last_end: None,
                    pause,
                }))
            }))
        };
        let mut guard = slot.lock_owned().await;
        if let Some(next_start) = guard.next_start(pause) {
            tokio::time::sleep_until(next_start).await;
        }
        guard.pause = pause;
        HostPermit { guard }
    }

    /// Returns how many hosts the scheduler tracks (in flight or within their pause).
    pub fn tracked_hosts(&self) -> usize {
        self.hosts.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

/// Drops the hosts nobody holds and whose pause has passed.
fn prune(hosts: &mut HashMap<String, Arc<tokio::sync::Mutex<HostSlot>>>) {
    let now = Instant::now();
    hosts.retain(|_, slot| {
        if Arc::strong_count(slot) > 1 {
            return true;
        }
        match slot.try_lock() {
            Ok(state) => state
                .next_start(Duration::ZERO)
                .is_some_and(|next| next > now),
            Err(_) => true,
        }
    });
}

/// The right to make one request to a host. Dropping it ends the request: the host's next
/// request may start after the pause.
#[derive(Debug)]
pub struct HostPermit {
    guard: OwnedMutexGuard<HostSlot>,
}

impl HostPermit {
    /// Asks for a longer pause than usual after this request, e.g. for `Retry-After`.
    pub fn extend_pause(&mut self, wait: Duration) {
        self.guard.pause = self.guard.pause.max(wait);
    }
}

impl Drop for HostPermit {
    fn drop(&mut self) {
        self.guard.last_end = Some(Instant::now());
    }
}

/// One of the crawl's `--concurrency` slots, held by a site while it runs. A site that must wait
/// out a `Retry-After` gives its slot back for the wait ([`CrawlSlot::park`]) and takes one
/// again before its next request ([`CrawlSlot::resume`]), so that other sites are crawled
/// meanwhile instead of the slot sitting idle (docs/crawl.md).
#[derive(Debug)]
pub struct CrawlSlot {
    slots: Arc<tokio::sync::Semaphore>,
    permit: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl CrawlSlot {
    /// Returns the slot that `permit`, taken from `slots`, stands for.
    pub fn new(
        slots: Arc<tokio::sync::Semaphore>,
        permit: tokio::sync::OwnedSemaphorePermit,
    ) -> CrawlSlot {
        CrawlSlot {
            slots,
            permit: Some(permit),
        }
    }

    /// Gives the slot back, for a wait.
    pub fn park(&mut self) {
        self.permit = None;
    }

    /// Takes a slot again after a wait (at once when the slot was not given back).
    pub async fn resume(&mut self) {
        if self.permit.is_none() {
            // The crawl never closes its semaphore; a closed one would only mean no limit.
            self.permit = Arc::clone(&self.slots).acquire_owned().await.ok();
        }
    }
}

/// Parses a `Retry-After` value: delay-seconds or an HTTP-date (RFC 9110 §10.2.3). A date in
/// the past means "now".
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Returns the wait before retry number `attempt` (1-based) of a transient failure:
/// `base`, then twice that, and so on.
pub fn backoff(base: Duration, attempt: u32) -> Duration {
    base.saturating_mul(1u32 << attempt.saturating_sub(1).min(16))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn requests_to_one_host_are_serialised_and_spaced() {
        let scheduler = Arc::new(HostScheduler::new());
        let pause = Duration::from_millis(500);
        let started = Instant::now();
        let mut tasks = Vec::new();
        for _ in 0..3 {
            let scheduler = Arc::clone(&scheduler);
            tasks.push(tokio::spawn(async move {
                let permit = scheduler.acquire("a.test:80", pause).await;
                let began = Instant::now();
                tokio::time::sleep(Duration::from_millis(100)).await;
                drop(permit);
                (began, Instant::now())
            }));
        }
        let mut spans = Vec::new();
        for task in tasks {
            spans.push(task.await.unwrap());
        }
        spans.sort();
        for pair in spans.windows(2) {
            let (_, end) = pair[0];
            let (start, _) = pair[1];
            assert!(start >= end + pause, "{:?} then {:?}", pair[0], pair[1]);
        }
        // Another host is not held up by the first.
        let other = scheduler.acquire("b.test:80", pause).await;
        drop(other);
        assert!(started.elapsed() >= Duration::from_millis(1200));
    }

    #[tokio::test(start_paused = true)]
    async fn a_longer_pause_holds_the_host_back() {
        let scheduler = HostScheduler::new();
        let mut permit = scheduler
            .acquire("a.test:80", Duration::from_millis(10))
            .await;
        permit.extend_pause(Duration::from_secs(5));
        drop(permit);
        let before = Instant::now();
        let _again = scheduler
            .acquire("a.test:80", Duration::from_millis(10))
            .await;
        assert!(before.elapsed() >= Duration::from_secs(5));
    }

    // See: the hardening issue, defect 1: the request after robots.txt came one host delay
    // after it, not one Crawl-delay.
    #[tokio::test(start_paused = true)]
    async fn a_request_that_wants_a_longer_pause_waits_it_before_it_starts() {
        let scheduler = HostScheduler::new();
        drop(
            scheduler
                .acquire("a.test:80", Duration::from_millis(10))
                .await,
        );
        let before = Instant::now();
        let _next = scheduler
            .acquire("a.test:80", Duration::from_millis(300))
            .await;
        assert!(before.elapsed() >= Duration::from_millis(300));
    }

    #[tokio::test(start_paused = true)]
    async fn idle_hosts_are_pruned() {
        let scheduler = HostScheduler::new();
        for index in 0..(PRUNE_THRESHOLD + 10) {
            let permit = scheduler
                .acquire(&format!("h{index}.test:80"), Duration::from_millis(1))
                .await;
            drop(permit);
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
        let _permit = scheduler.acquire("last.test:80", Duration::ZERO).await;
        assert!(
            scheduler.tracked_hosts() < 10,
            "{}",
            scheduler.tracked_hosts()
        );
    }

    #[test]
    fn retry_after_in_both_forms() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        assert_eq!(
            parse_retry_after("120", now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(parse_retry_after(" 0 ", now), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:50:37 GMT", now),
            Some(Duration::from_secs(60))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        for bad in ["", "-5", "soon", "1.5"] {
            assert_eq!(parse_retry_after(bad, now), None, "{bad}");
        }
    }

    #[test]
    fn backoff_doubles() {
        let base = Duration::from_millis(250);
        assert_eq!(backoff(base, 1), base);
        assert_eq!(backoff(base, 2), base * 2);
        assert_eq!(backoff(base, 3), base * 4);
        assert!(backoff(base, 100) >= backoff(base, 16));
    }
}
