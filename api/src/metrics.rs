//! Prometheus metrics, written by hand in the text exposition format (version 0.0.4): the
//! numbers are few and a metrics crate would be a heavier build than this file.
//!
//! Routes are labelled by their matched pattern (`/v1/skills/{domain}/{name}`), never by the
//! raw path, so the label set stays small whatever clients request.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;

use axum::http::HeaderValue;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};

use crate::progress::{Counters, CrawlProgress};
use crate::state::AppState;

/// Upper bounds of the latency histogram's buckets, in seconds.
const BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];
/// The route label of requests that matched no route.
const UNMATCHED: &str = "unmatched";

#[derive(Debug, Default)]
struct Histogram {
    /// Counts per bucket (not cumulative; summed when rendered).
    buckets: [u64; BUCKETS.len()],
    sum: f64,
    count: u64,
}

/// Request counters and latency histograms.
#[derive(Debug)]
pub(crate) struct Metrics {
    started: Instant,
    requests: Mutex<BTreeMap<(String, u16), u64>>,
    latency: Mutex<BTreeMap<String, Histogram>>,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics {
            started: Instant::now(),
            requests: Mutex::default(),
            latency: Mutex::default(),
        }
    }
}

/// What `/metrics` adds about the index and the crawl.
#[derive(Debug, Default)]
pub(crate) struct Gauges {
    /// Records anonymous callers can see.
    pub(crate) public_records: u64,
    /// The crawl store change sequence number the index reflects.
    pub(crate) index_seq: u64,
    /// The crawl store's latest change number, when the server follows a shared store.
    pub(crate) store_seq: Option<u64>,
    /// False while a shared store the server follows cannot be read.
    pub(crate) store_up: bool,
    /// Crawl counters.
    pub(crate) crawl: Counters,
    /// True while a crawl runs.
    pub(crate) crawl_running: bool,
}

impl Metrics {
    /// Counts one answered request.
    pub(crate) fn observe(&self, route: &str, status: u16, elapsed: Duration) {
        *self
            .requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry((route.to_owned(), status))
            .or_default() += 1;
        let seconds = elapsed.as_secs_f64();
        let mut latency = self.latency.lock().unwrap_or_else(|e| e.into_inner());
        let histogram = latency.entry(route.to_owned()).or_default();
        if let Some(bucket) = BUCKETS.iter().position(|bound| seconds <= *bound) {
            histogram.buckets[bucket] += 1;
        }
        histogram.sum += seconds;
        histogram.count += 1;
    }

    /// Returns the exposition text.
    pub(crate) fn render(&self, gauges: &Gauges) -> String {
        let mut out = String::new();
        out.push_str(
            "# HELP skillscout_http_requests_total HTTP requests answered, by route and status.\n",
        );
        out.push_str("# TYPE skillscout_http_requests_total counter\n");
        for ((route, status), count) in self
            .requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            let _ = writeln!(
                out,
                "skillscout_http_requests_total{{route=\"{}\",status=\"{status}\"}} {count}",
                label(route)
            );
        }
        out.push_str(
            "# HELP skillscout_http_request_duration_seconds Time to answer a request, by route.\n",
        );
        out.push_str("# TYPE skillscout_http_request_duration_seconds histogram\n");
        for (route, histogram) in self
            .latency
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            let route = label(route);
            let mut cumulative = 0;
            for (bound, count) in BUCKETS.iter().zip(histogram.buckets) {
                cumulative += count;
                let _ = writeln!(
                    out,
                    "skillscout_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"{bound}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                out,
                "skillscout_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {}",
                histogram.count
            );
            let _ = writeln!(
                out,
                "skillscout_http_request_duration_seconds_sum{{route=\"{route}\"}} {}",
                histogram.sum
            );
            let _ = writeln!(
                out,
                "skillscout_http_request_duration_seconds_count{{route=\"{route}\"}} {}",
                histogram.count
            );
        }
        let simple: [(&str, &str, &str, u64); 2] = [
            (
                "skillscout_index_records",
                "gauge",
                "Records in the search index that anonymous callers can see.",
                gauges.public_records,
            ),
            (
                "skillscout_index_seq",
                "gauge",
                "The crawl store change sequence number the index reflects.",
                gauges.index_seq,
            ),
        ];
        for (name, kind, help, value) in simple {
            write_simple(&mut out, name, kind, help, value);
        }
        write_crawl(&mut out, &gauges.crawl, gauges.crawl_running);
        for (name, kind, help, value) in [
            (
                "skillscout_index_syncs_total",
                "counter",
                "Index syncs from the crawl store.",
                gauges.crawl.syncs,
            ),
            (
                "skillscout_index_synced_changes_total",
                "counter",
                "Store changes applied to the index.",
                gauges.crawl.synced_changes,
            ),
        ] {
            write_simple(&mut out, name, kind, help, value);
        }
        if let Some(store_seq) = gauges.store_seq {
            let lag = store_seq.saturating_sub(gauges.index_seq);
            let up = u8::from(gauges.store_up);
            let _ = writeln!(
                out,
                "# HELP skillscout_store_seq The shared crawl store's latest change number, read after the latest sync.\n\
                 # TYPE skillscout_store_seq gauge\nskillscout_store_seq {store_seq}\n\
                 # HELP skillscout_index_sync_lag Changes of the shared store the index does not hold yet.\n\
                 # TYPE skillscout_index_sync_lag gauge\nskillscout_index_sync_lag {lag}\n\
                 # HELP skillscout_store_up 1 while the shared crawl store can be read, 0 while it cannot.\n\
                 # TYPE skillscout_store_up gauge\nskillscout_store_up {up}"
            );
        }
        write_process(&mut out, self.started);
        out
    }
}

/// Writes one sample without labels, with its help and type.
fn write_simple(out: &mut String, name: &str, kind: &str, help: &str, value: u64) {
    let _ = writeln!(
        out,
        "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
    );
}

/// Writes the crawl's metrics: the same names on `serve`'s `/metrics` (its background crawl)
/// and on a crawl worker's `--metrics-addr`.
fn write_crawl(out: &mut String, crawl: &Counters, running: bool) {
    for (name, kind, help, value) in [
        (
            "skillscout_crawl_running",
            "gauge",
            "1 while a crawl runs.",
            u64::from(running),
        ),
        (
            "skillscout_crawl_runs_total",
            "counter",
            "Crawls (or a worker's rounds) started.",
            crawl.runs,
        ),
        (
            "skillscout_crawl_requests_total",
            "counter",
            "HTTP requests made by crawls.",
            crawl.requests,
        ),
        (
            "skillscout_crawl_errors_total",
            "counter",
            "Errors recorded by crawls.",
            crawl.errors,
        ),
        (
            "skillscout_discovered_total",
            "counter",
            "Origins named in crawled content that crawls added to the frontier as discovered.",
            crawl.discovered,
        ),
        (
            "skillscout_discovered_probed_total",
            "counter",
            "Discovered domains crawls probed.",
            crawl.discovered_probed,
        ),
        (
            "skillscout_discovered_publishing_total",
            "counter",
            "Probed discovered domains found publishing skills.",
            crawl.discovered_publishing,
        ),
    ] {
        write_simple(out, name, kind, help, value);
    }
    out.push_str("# HELP skillscout_crawl_domains_total Domains crawled, by outcome.\n");
    out.push_str("# TYPE skillscout_crawl_domains_total counter\n");
    for (outcome, count) in &crawl.domains {
        let _ = writeln!(
            out,
            "skillscout_crawl_domains_total{{outcome=\"{outcome}\"}} {count}"
        );
    }
}

/// Writes the process's metrics: uptime, and on Linux (from `/proc/self`) the standard
/// `process_*` names: CPU time, resident memory, open file descriptors, threads, start time.
fn write_process(out: &mut String, started: Instant) {
    write_simple(
        out,
        "skillscout_uptime_seconds",
        "gauge",
        "Seconds since the process started serving.",
        started.elapsed().as_secs(),
    );
    let Some(process) = ProcessStats::read() else {
        return;
    };
    let _ = writeln!(
        out,
        "# HELP process_cpu_seconds_total User and system CPU time spent, in seconds.\n\
         # TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total {}",
        process.cpu_seconds
    );
    if let Some(start) = process.start_time_seconds {
        let _ = writeln!(
            out,
            "# HELP process_start_time_seconds Start time of the process since the Unix epoch, in seconds.\n\
             # TYPE process_start_time_seconds gauge\nprocess_start_time_seconds {start}"
        );
    }
    for (name, help, value) in [
        (
            "process_resident_memory_bytes",
            "Resident memory size, in bytes.",
            process.resident_bytes,
        ),
        (
            "process_open_fds",
            "Open file descriptors.",
            process.open_fds,
        ),
        (
            "process_threads",
            "Threads of the process.",
            process.threads,
        ),
    ] {
        write_simple(out, name, "gauge", help, value);
    }
}

/// What `/proc/self` says about this process.
#[derive(Debug)]
struct ProcessStats {
    cpu_seconds: f64,
    start_time_seconds: Option<u64>,
    resident_bytes: u64,
    open_fds: u64,
    threads: u64,
}

/// Clock ticks a second in `/proc` (Linux's `USER_HZ`, fixed at 100 for user space).
const USER_HZ: f64 = 100.0;

impl ProcessStats {
    /// Reads `/proc/self`; `None` where there is none (not Linux) or it cannot be read.
    fn read() -> Option<ProcessStats> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let field = |name: &str| -> Option<u64> {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|value| value.parse().ok())
        };
        let resident_bytes = field("VmRSS:").unwrap_or(0) * 1024;
        let threads = field("Threads:").unwrap_or(0);
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        // The fields after the command name, which is in parentheses and may hold spaces.
        let after = stat.rsplit_once(')')?.1;
        let fields: Vec<&str> = after.split_whitespace().collect();
        // utime and stime are fields 14 and 15 of the line, starttime 22 (from 1); `after`
        // starts at field 3.
        let ticks = |index: usize| fields.get(index - 3)?.parse::<u64>().ok();
        let cpu_seconds = (ticks(14)? + ticks(15)?) as f64 / USER_HZ;
        let start_time_seconds = ticks(22).and_then(|start| {
            let boot = std::fs::read_to_string("/proc/stat").ok()?;
            let boot: u64 = boot
                .lines()
                .find_map(|line| line.strip_prefix("btime "))?
                .trim()
                .parse()
                .ok()?;
            Some(boot + (start as f64 / USER_HZ) as u64)
        });
        let open_fds = std::fs::read_dir("/proc/self/fd")
            .map(|entries| entries.count() as u64)
            .unwrap_or(0);
        Some(ProcessStats {
            cpu_seconds,
            start_time_seconds,
            resident_bytes,
            open_fds,
            threads,
        })
    }
}

/// Returns the metrics of a crawl worker that does not serve the directory (`crawl
/// --metrics-addr`): its crawl, reported to `progress`, and the process.
pub fn worker_metrics(progress: &CrawlProgress, started: Instant) -> String {
    let (crawl, running) = progress.counters();
    let mut out = String::new();
    write_crawl(&mut out, &crawl, running);
    write_process(&mut out, started);
    out
}

/// Serves `GET /metrics` (the Prometheus text format) for a crawl worker on `listener`, until
/// `shutdown` completes.
pub async fn serve_worker_metrics(
    listener: tokio::net::TcpListener,
    progress: CrawlProgress,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let started = Instant::now();
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let text = worker_metrics(&progress, started);
            async move {
                (
                    [
                        (CONTENT_TYPE, HeaderValue::from_static(TEXT_FORMAT)),
                        (CACHE_CONTROL, HeaderValue::from_static("no-store")),
                    ],
                    text,
                )
            }
        }),
    );
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
}

/// The content type of the Prometheus text format.
pub(crate) const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Escapes a label value (backslash, quote, newline).
fn label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Middleware: counts every request by matched route and status, and times it.
pub(crate) async fn track(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or(UNMATCHED, MatchedPath::as_str)
        .to_owned();
    let started = Instant::now();
    let response = next.run(request).await;
    state
        .metrics()
        .observe(&route, response.status().as_u16(), started.elapsed());
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposition_format() {
        let metrics = Metrics::default();
        metrics.observe("/v1/search", 200, Duration::from_millis(3));
        metrics.observe("/v1/search", 200, Duration::from_secs(30));
        metrics.observe("/v1/search", 400, Duration::from_micros(100));
        let text = metrics.render(&Gauges::default());
        assert!(
            text.contains(
                "skillscout_http_requests_total{route=\"/v1/search\",status=\"200\"} 2\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "skillscout_http_requests_total{route=\"/v1/search\",status=\"400\"} 1\n"
            ),
            "{text}"
        );
        assert!(text.contains("skillscout_http_request_duration_seconds_bucket{route=\"/v1/search\",le=\"0.005\"} 2\n"), "{text}");
        assert!(
            text.contains(
                "skillscout_http_request_duration_seconds_bucket{route=\"/v1/search\",le=\"5\"} 2\n"
            ),
            "{text}"
        );
        assert!(text.contains("skillscout_http_request_duration_seconds_bucket{route=\"/v1/search\",le=\"+Inf\"} 3\n"), "{text}");
        assert!(
            text.contains(
                "skillscout_http_request_duration_seconds_count{route=\"/v1/search\"} 3\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("# TYPE skillscout_index_records gauge\nskillscout_index_records 0\n"),
            "{text}"
        );
    }

    /// A crawl worker's metrics are named as the server's, where they overlap.
    #[test]
    fn worker_metrics_use_the_server_names() {
        let names = |text: &str| -> std::collections::BTreeSet<String> {
            text.lines()
                .filter_map(|line| line.strip_prefix("# TYPE "))
                .filter_map(|line| line.split(' ').next())
                .map(str::to_owned)
                .collect()
        };
        let progress = CrawlProgress::default();
        let worker = names(&worker_metrics(&progress, Instant::now()));
        let server = names(&Metrics::default().render(&Gauges::default()));
        assert!(
            worker.contains("skillscout_crawl_domains_total"),
            "{worker:?}"
        );
        assert!(worker.contains("skillscout_uptime_seconds"), "{worker:?}");
        assert!(worker.contains("skillscout_discovered_total"), "{worker:?}");
        let missing: Vec<_> = worker.difference(&server).collect();
        assert!(
            missing.is_empty(),
            "not in the server's /metrics: {missing:?}"
        );
    }
}
