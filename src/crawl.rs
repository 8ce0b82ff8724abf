//! `skillscout crawl`: crawls the targets given (added to the frontier) or the frontier's due
//! domains, politely, into the data directory; writes the report and prints one summary line.

use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use anyhow::Context;
use crawler::crawl::feed::DEFAULT_LEASE;
use crawler::crawl::{CrawlConfig, CrawlReport, CrawlSummary, Feed, Source};
use formats::seeds::SeedTarget;
use indexer::{Index, IndexConfig};
use store::blobs::Blobs;
use store::{Outcome, Store, StoreError};

use crate::cli::CrawlArgs;
use crate::progress::{ActiveBar, CrawlProgress};
use crate::report::{Observers, ReportFile};
use crate::seeds::{SeedCounts, SeedReader};
use crate::signals::Stop;
use crate::{ExitStatus, UsageResult, usage};

/// Threads for blocking work (the store writer, normalising archives, blob writes): enough to
/// keep both the network and the disk busy. Each thread costs memory (its own malloc arena),
/// and tokio's default of 512 let a crawl of small sites start dozens.
const MAX_BLOCKING_THREADS: usize = 8;

/// Runs `skillscout crawl`.
pub(crate) fn run(
    data: &Path,
    store: Option<&str>,
    model: Option<Arc<dyn indexer::Embed>>,
    args: &CrawlArgs,
    bar: &ActiveBar,
) -> anyhow::Result<ExitStatus> {
    let location = store;
    let fetch = args.fetch.settings()?;
    if args.concurrency == 0 {
        return Err(usage(anyhow::anyhow!("--concurrency must be at least 1")));
    }
    let schedule = args.schedule.schedule(args.crawl_every)?;
    let mut command_line = Vec::new();
    for raw in &args.targets {
        command_line.push(SeedTarget::parse(raw).map_err(anyhow::Error::msg).usage()?);
    }
    let reader = match &args.seeds {
        // The crawler checks every address it connects to; a seed list of IP addresses is
        // the operator's to give here.
        Some(path) => match SeedReader::open(path, true) {
            Ok(reader) => Some(reader),
            Err(error) => return could_not_run(&error),
        },
        None => None,
    };
    let seed_counts: Option<Arc<SeedCounts>> = reader.as_ref().map(SeedReader::counts);
    // How many targets there are, for the progress bar: the lines of the seed list, counted
    // without keeping them.
    let listed = match &args.seeds {
        Some(path) if path != Path::new("-") => count_lines(path),
        _ => 0,
    };
    let given = !command_line.is_empty() || reader.is_some();
    let (store, blobs) = match open_data(data, store) {
        Ok(opened) => opened,
        Err(error) => return could_not_run(&error),
    };
    let source = if given {
        let from_file = reader.into_iter().flatten().map(|line| line.target);
        Source::Targets(Box::new(command_line.clone().into_iter().chain(from_file)))
    } else {
        Source::Due
    };
    let feed = Feed {
        source,
        owner: worker_name(),
        lease_for: args.lease.unwrap_or(DEFAULT_LEASE),
        schedule,
        keep_running: args.crawl_every.is_some(),
    };
    feed.check(fetch.host_delay)
        .map_err(anyhow::Error::msg)
        .usage()?;
    let config = CrawlConfig {
        fetch,
        concurrency: args.concurrency,
        prefetch_files: args.prefetch_files || !args.no_prefetch_files,
        // Lines go to the report file as each domain is stored; the crawl keeps only sums.
        keep_report_lines: false,
        audit: true,
        discover_budget: args.discover.budget(),
    };
    let report_file = match &args.report {
        Some(path) => Some(Arc::new(ReportFile::create(path)?)),
        None => None,
    };

    // Bound before the crawl starts, so that a port taken is said at once.
    let metrics_listener = match args.metrics_addr {
        Some(addr) => match bind_metrics(addr) {
            Ok(listener) => Some(listener),
            Err(error) => return could_not_run(&error),
        },
        None => None,
    };
    let metrics = metrics_listener
        .as_ref()
        .map(|_| api::CrawlProgress::default());

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(MAX_BLOCKING_THREADS)
        .build()
        .context("cannot start the async runtime")?;
    let keep_running = feed.keep_running;
    if !given && !keep_running {
        // Nothing to crawl is said with what to do, not as a crawl of 0 domains.
        // A store that holds records but no frontier (records stored by an older release,
        // or by a test) still has its index brought up to date by a crawl of nothing.
        let holds_records = runtime.block_on(store.last_seq()).is_ok_and(|seq| seq > 0);
        if !holds_records
            && let Ok(counts) = runtime.block_on(store.frontier().counts())
            && let Some(advice) = nothing_to_crawl(&counts, data, location)
        {
            return Err(usage(advice));
        }
    }
    let started = Instant::now();
    let (crawled, stop) = runtime.block_on(async {
        let hosts = if given {
            command_line.len() + listed
        } else {
            store
                .frontier()
                .counts()
                .await
                .map(|counts| usize::try_from(counts.due).unwrap_or(usize::MAX))
                .unwrap_or_default()
        };
        if !given {
            tracing::info!(due = hosts, "crawling the frontier's due domains");
        }
        let progress = Arc::new(CrawlProgress::start(hosts, !args.no_progress, bar));
        let observers = Arc::new(Observers {
            progress: progress.clone(),
            report: report_file.clone(),
            metrics: metrics.clone(),
            running: std::sync::atomic::AtomicBool::new(true),
        });
        let stop = Stop::on_signals();
        let metrics_server = match (metrics_listener, &metrics) {
            (Some(listener), Some(metrics)) => {
                metrics.enable();
                metrics.crawl_started(hosts);
                serve_metrics(listener, metrics.clone(), stop.wait())
            }
            _ => None,
        };
        let result = crawler::crawl::crawl_work(
            config,
            feed,
            Arc::clone(&store),
            blobs,
            observers,
            stop.wait(),
        )
        .await;
        progress.finish();
        if let Some(server) = metrics_server {
            server.abort();
        }
        (result, stop)
    });
    // The crawl's threads end here, before the index writer starts its own: the memory they
    // held is there for the writer to reuse, so a crawl's peak is the larger of the two
    // phases rather than their sum.
    drop(runtime);
    let (report, summary) = match crawled {
        Ok(crawled) => crawled,
        Err(error) => return could_not_run(&anyhow::Error::new(error)),
    };

    // The index is a view of the store: bring it up to date with what this crawl stored
    // (also after an interruption: the finished domains are stored).
    if let Err(error) = rebuild_index(data, &store, model, bar) {
        return could_not_run(&error);
    }
    if let Some(report_file) = &report_file {
        report_file.finish(&report)?;
    }
    let summary_text = summary_line(
        &report,
        &summary,
        seed_counts.as_deref(),
        started.elapsed().as_secs_f64(),
    );
    if args.report.as_deref() == Some(Path::new("-")) {
        tracing::info!("{summary_text}");
    } else {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{summary_text}").context("cannot write to stdout")?;
    }
    if report.interrupted {
        // A worker that keeps running is stopped by a signal on purpose: that is its end.
        if keep_running {
            tracing::info!("stopped: the domains listed in the report were stored");
            return Ok(ExitStatus::Success);
        }
        tracing::warn!("interrupted: the domains listed in the report were stored");
        return Ok(stop.exit_status());
    }
    Ok(ExitStatus::Success)
}

/// Returns what to do when a crawl given no targets finds an empty frontier, or `None` when it
/// has domains (due now or later: a scheduled run that finds nothing due is not a mistake).
fn nothing_to_crawl(
    counts: &store::FrontierCounts,
    data: &Path,
    location: Option<&str>,
) -> Option<anyhow::Error> {
    if counts.total > 0 {
        return None;
    }
    let store = match location {
        Some(location) if !location.trim().is_empty() => "the store given by --store".to_owned(),
        _ => format!("the data directory {}", data.display()),
    };
    Some(anyhow::anyhow!(
        "nothing to crawl: no targets were given and the frontier of {store} is empty. Name \
         sites to crawl (`skillscout crawl example.com`), a seed list (`skillscout crawl \
         --seeds FILE`, one target per line), or add them to the frontier first (`skillscout \
         seeds add FILE`); `skillscout demo` shows a crawl with no internet"
    ))
}

/// Counts the lines of a file without keeping them (0 when it cannot be read: the crawl
/// then says so itself).
fn count_lines(path: &Path) -> usize {
    use std::io::Read as _;
    let Ok(mut file) = std::fs::File::open(path) else {
        return 0;
    };
    let mut buffer = vec![0u8; 64 * 1024];
    let mut lines = 0;
    loop {
        match file.read(&mut buffer) {
            Ok(0) | Err(_) => return lines,
            Ok(read) => lines += buffer[..read].iter().filter(|&&b| b == b'\n').count(),
        }
    }
}

/// Returns a name for this crawl worker that no other worker has: the machine's host name,
/// the process id and the start time.
pub(crate) fn worker_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "unknown-host".to_owned());
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|since| since.as_nanos())
        .unwrap_or_default();
    format!("{host}/{}/{started}", std::process::id())
}

/// Binds the `--metrics-addr` listener.
fn bind_metrics(addr: std::net::SocketAddr) -> anyhow::Result<std::net::TcpListener> {
    let listener = std::net::TcpListener::bind(addr)
        .with_context(|| format!("cannot listen on --metrics-addr {addr}"))?;
    listener
        .set_nonblocking(true)
        .context("cannot set up the metrics listener")?;
    Ok(listener)
}

/// Serves the worker's metrics on `listener` until `stop`; `None` (logged) when the listener
/// cannot be used.
fn serve_metrics(
    listener: std::net::TcpListener,
    metrics: api::CrawlProgress,
    stop: impl Future<Output = ()> + Send + 'static,
) -> Option<tokio::task::JoinHandle<()>> {
    let listener = match tokio::net::TcpListener::from_std(listener) {
        Ok(listener) => listener,
        Err(error) => {
            tracing::error!(%error, "cannot serve the metrics");
            return None;
        }
    };
    match listener.local_addr() {
        Ok(local) => tracing::info!("serving metrics on http://{local}/metrics"),
        Err(error) => tracing::warn!(%error, "the metrics listener has no address"),
    }
    Some(tokio::spawn(async move {
        if let Err(error) = api::serve_worker_metrics(listener, metrics, stop).await {
            tracing::error!(%error, "the metrics server failed");
        }
    }))
}

/// Prints why the crawl could not run; the exit status is 1 (docs/crawl.md).
fn could_not_run(error: &anyhow::Error) -> anyhow::Result<ExitStatus> {
    crate::print_error(error);
    Ok(ExitStatus::Failure)
}

/// Opens the crawl store and the blob store: the embedded ones in the data directory, or the
/// PostgreSQL store at `location` (`--store`).
pub(crate) fn open_data(
    data: &Path,
    location: Option<&str>,
) -> anyhow::Result<(Arc<Store>, Blobs)> {
    let embedded = location.is_none_or(|location| location.trim().is_empty());
    let (store, blobs) = match store::open(location, data) {
        Ok(opened) => opened,
        Err(StoreError::InUse { .. }) => {
            anyhow::bail!(
                "the data directory {} is in use by another skillscout process (a server or \
                 a crawl): stop it first, or crawl with that server (serve --crawl; the seeds \
                 commands reach it through its admin API)",
                data.display()
            );
        }
        Err(error) => {
            return Err(anyhow::Error::new(error).context(if embedded {
                format!("cannot open the data directory {}", data.display())
            } else {
                "cannot open the store given by --store".to_owned()
            }));
        }
    };
    Ok((Arc::new(store), blobs))
}

/// `skillscout migrate`: applies the pending migrations of the PostgreSQL store at `location`.
pub(crate) fn migrate(location: Option<&str>) -> anyhow::Result<ExitStatus> {
    let Some(location) = location else {
        return Err(usage(anyhow::anyhow!(
            "migrate needs --store postgres://… (or SKILLSCOUT_STORE): the embedded store \
             migrates itself"
        )));
    };
    let migrated = store::migrate(location).context("cannot migrate the store")?;
    writeln!(
        std::io::stdout(),
        "schema version {} → {}",
        migrated.from,
        migrated.to
    )
    .context("cannot write to stdout")?;
    Ok(ExitStatus::Success)
}

/// The index writer's memory budget for the sync after a crawl: tantivy's least.
const SYNC_WRITER_MEMORY_BYTES: usize = 15 * 1024 * 1024;

/// The store changes the sync after a crawl applies per commit.
const SYNC_AFTER_CRAWL_BATCH: usize = 1_000;

/// Applies the store's new changes to the search index in `DATA/index`.
/// With a model, every record written gets its vector.
pub(crate) fn sync_index(
    data: &Path,
    store: &Store,
    model: Option<Arc<dyn indexer::Embed>>,
) -> anyhow::Result<indexer::SyncStats> {
    rebuild_index(data, store, model, &ActiveBar::default())
}

/// Brings the search index in `data` up to date with `store` (all of it for a new index),
/// showing the progress of a bulk sync: a bar with the rate and the time left on a terminal
/// (lifted by log lines through `bar`), progress log lines otherwise.
pub(crate) fn rebuild_index(
    data: &Path,
    store: &Store,
    model: Option<Arc<dyn indexer::Embed>>,
    bar: &ActiveBar,
) -> anyhow::Result<indexer::SyncStats> {
    let dir = data.join(indexer::INDEX_DIR);
    // One indexing thread at tantivy's smallest budget, and a commit every
    // SYNC_AFTER_CRAWL_BATCH changes: the documents waiting for the indexing thread and those
    // it holds until a commit are what the sync costs in memory, so a crawl's peak stays near
    // that of its fetching (a rebuild by `serve` takes larger batches).
    let config = IndexConfig {
        model,
        writer_threads: Some(1),
        writer_memory_bytes: SYNC_WRITER_MEMORY_BYTES,
        sync_batch: SYNC_AFTER_CRAWL_BATCH,
    };
    let Index { mut writer, .. } = Index::open_or_create(&dir, config)
        .with_context(|| format!("cannot open the search index in {}", dir.display()))?;
    let mut progress = crate::progress::IndexProgress::new(bar);
    // `sync` logs what it changed.
    let synced = indexer::sync_observed(store, &mut writer, &mut |step| progress.observe(step));
    progress.finish();
    synced.with_context(|| format!("cannot update the search index in {}", dir.display()))
}

/// One line that says how the crawl went.
fn summary_line(
    report: &CrawlReport,
    summary: &CrawlSummary,
    seeds: Option<&SeedCounts>,
    seconds: f64,
) -> String {
    let totals = &report.totals;
    let outcomes = [
        (Outcome::Ok, "ok"),
        (Outcome::NotFound, "not found"),
        (Outcome::Disallowed, "disallowed"),
        (Outcome::Unreachable, "unreachable"),
        (Outcome::Error, "error"),
    ]
    .iter()
    .map(|(outcome, name)| format!("{} {name}", report.count(*outcome)))
    .collect::<Vec<_>>()
    .join(", ");
    let stopped = if report.interrupted {
        " (interrupted)"
    } else {
        ""
    };
    let mut line = format!(
        "crawled {} domain{} in {seconds:.1} s{stopped}: {outcomes}; {} skill{} ({} added, {} updated, {} removed, {} unchanged); {} request{}, {} error{}",
        totals.domains,
        plural(totals.domains),
        totals.skills,
        plural(totals.skills),
        totals.added,
        totals.updated,
        totals.removed,
        totals.unchanged,
        totals.requests,
        plural(totals.requests),
        totals.errors,
        plural(totals.errors),
    );
    if totals.discovered > 0 {
        line.push_str(&format!(
            "; {} discovered ({} probed, {} publishing)",
            totals.discovered, totals.discovered_probed, totals.discovered_publishing
        ));
    }
    let mut skipped = Vec::new();
    if summary.skipped.delisted > 0 {
        skipped.push(format!("{} delisted", summary.skipped.delisted));
    }
    if summary.skipped.held_elsewhere > 0 {
        skipped.push(format!(
            "{} crawled meanwhile (named twice, or by another crawl)",
            summary.skipped.held_elsewhere
        ));
    }
    if let Some(seeds) = seeds {
        let bad = seeds.bad.load(Ordering::Relaxed);
        if bad > 0 {
            skipped.push(format!("{bad} bad seed line{}", plural(bad as usize)));
        }
    }
    if !skipped.is_empty() {
        line.push_str(&format!("; skipped {}", skipped.join(", ")));
    }
    line
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}
