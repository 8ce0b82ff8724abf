//! `skillscout crawl`: reads the targets, crawls them politely into the data directory,
//! writes the report and prints one summary line.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use crawler::crawl::worker::{self, FrontierWork};
use crawler::crawl::{CrawlConfig, CrawlReport, Work};
use formats::seeds::{SeedTarget, parse_seeds};
use indexer::{Index, IndexConfig};
use store::blobs::Blobs;
use store::{Outcome, Store};

use crate::cli::{CrawlArgs, DEFAULT_SEEDS};
use crate::progress::{ActiveBar, CrawlProgress};
use crate::report::{Observers, ReportFile};
use crate::{ExitStatus, UsageResult, usage};

/// Runs `skillscout crawl`.
pub(crate) fn run(
    data: &Path,
    store: Option<&str>,
    model: Option<Arc<dyn indexer::Embed>>,
    args: &CrawlArgs,
    bar: &ActiveBar,
) -> anyhow::Result<ExitStatus> {
    let fetch = args.fetch.settings()?;
    if args.concurrency == 0 {
        return Err(usage(anyhow::anyhow!("--concurrency must be at least 1")));
    }
    let mut command_line = Vec::new();
    for raw in &args.targets {
        command_line.push(SeedTarget::parse(raw).map_err(anyhow::Error::msg).usage()?);
    }
    let targets = match collect_targets(args, command_line) {
        Ok(targets) => targets,
        Err(error) => return could_not_run(&error),
    };
    let (store, blobs) = match open_data(data, store) {
        Ok(opened) => opened,
        Err(error) => return could_not_run(&error),
    };
    // A shared store's frontier may hold due domains already: a worker needs no target.
    if targets.is_empty() && store.frontier().is_none() {
        return could_not_run(&anyhow::anyhow!("no valid target to crawl"));
    }
    let hosts = targets.len();
    let work = match store.frontier() {
        Some(frontier) => Work::Frontier(FrontierWork {
            frontier: frontier.clone(),
            owner: worker_name(),
            add: targets,
            lease_for: args.lease.unwrap_or(worker::DEFAULT_LEASE),
            recrawl_after: args.crawl_every.unwrap_or(worker::DEFAULT_RECRAWL_AFTER),
            keep_running: args.crawl_every.is_some(),
        }),
        None if args.crawl_every.is_some() || args.lease.is_some() => {
            return Err(usage(anyhow::anyhow!(
                "--crawl-every and --lease schedule crawl workers over a shared store: they \
                 need --store postgres://… (with the embedded store, use serve --crawl \
                 --crawl-every)"
            )));
        }
        None => Work::Targets(targets),
    };
    if let Work::Frontier(work) = &work {
        work.check(fetch.host_delay)
            .map_err(anyhow::Error::msg)
            .usage()?;
    }
    let config = CrawlConfig {
        fetch,
        concurrency: args.concurrency,
        prefetch_files: args.prefetch_files,
        // Lines go to the report file as each domain is stored; the crawl keeps only sums.
        keep_report_lines: false,
    };
    let report_file = match &args.report {
        Some(path) => Some(Arc::new(ReportFile::create(path)?)),
        None => None,
    };

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let started = Instant::now();
    let report = runtime.block_on(async {
        let progress = Arc::new(CrawlProgress::start(hosts, !args.no_progress, bar));
        let observers = Arc::new(Observers {
            progress: progress.clone(),
            report: report_file.clone(),
        });
        let shutdown = async {
            if tokio::signal::ctrl_c().await.is_err() {
                // Without a signal handler the crawl simply runs to the end.
                std::future::pending::<()>().await;
            }
        };
        let result = crawler::crawl::crawl_work(
            config,
            work,
            Arc::clone(&store),
            blobs,
            observers,
            shutdown,
        )
        .await;
        progress.finish();
        result
    });
    let report = match report {
        Ok(report) => report,
        Err(error) => return could_not_run(&anyhow::Error::new(error)),
    };

    // The index is a view of the store: bring it up to date with what this crawl stored
    // (also after an interruption: the finished domains are stored).
    if let Err(error) = sync_index(data, &store, model) {
        return could_not_run(&error);
    }
    if let Some(report_file) = &report_file {
        report_file.finish(&report)?;
    }
    let summary = summary_line(&report, started.elapsed().as_secs_f64());
    if args.report.as_deref() == Some(Path::new("-")) {
        tracing::info!("{summary}");
    } else {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{summary}").context("cannot write to stdout")?;
    }
    if report.interrupted {
        tracing::warn!("interrupted: the domains listed in the report were stored");
        return Ok(ExitStatus::Failure);
    }
    Ok(ExitStatus::Success)
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

/// Prints why the crawl could not run; the exit status is 1 (DESIGN.md §5).
fn could_not_run(error: &anyhow::Error) -> anyhow::Result<ExitStatus> {
    let _ = writeln!(std::io::stderr(), "error: {error:#}");
    Ok(ExitStatus::Failure)
}

/// Opens the crawl store and the blob store: the embedded ones in the data directory, or the
/// PostgreSQL store at `location` (`--store`).
pub(crate) fn open_data(
    data: &Path,
    location: Option<&str>,
) -> anyhow::Result<(Arc<Store>, Blobs)> {
    let embedded = location.is_none_or(|location| location.trim().is_empty());
    let (store, blobs) = store::open(location, data).with_context(|| {
        if embedded {
            format!(
                "cannot open the data directory {} (is another skillscout using it?)",
                data.display()
            )
        } else {
            "cannot open the store given by --store".to_owned()
        }
    })?;
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

/// Applies the store's new changes to the search index in `DATA/index`.
/// With a model, every record written gets its vector.
pub(crate) fn sync_index(
    data: &Path,
    store: &Store,
    model: Option<Arc<dyn indexer::Embed>>,
) -> anyhow::Result<indexer::SyncStats> {
    let dir = data.join(indexer::INDEX_DIR);
    let config = IndexConfig {
        model,
        ..IndexConfig::default()
    };
    let Index { mut writer, .. } = Index::open_or_create(&dir, config)
        .with_context(|| format!("cannot open the search index in {}", dir.display()))?;
    // `sync` logs what it changed.
    indexer::sync(store, &mut writer)
        .with_context(|| format!("cannot update the search index in {}", dir.display()))
}

/// Adds the seed file's targets to those of the command line; bad seed lines are reported
/// with their line number and skipped.
fn collect_targets(
    args: &CrawlArgs,
    mut targets: Vec<SeedTarget>,
) -> anyhow::Result<Vec<SeedTarget>> {
    let seeds_file = match (&args.seeds, args.targets.is_empty()) {
        (Some(path), _) => Some(path.clone()),
        (None, true) => Some(PathBuf::from(DEFAULT_SEEDS)),
        (None, false) => None,
    };
    if let Some(path) = seeds_file {
        targets.extend(read_seeds(&path)?);
    }
    Ok(targets)
}

/// Reads a seed file; bad lines are logged with their line number and skipped.
pub(crate) fn read_seeds(path: &Path) -> anyhow::Result<Vec<SeedTarget>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the seed file {}", path.display()))?;
    let (seeds, errors) = parse_seeds(&text);
    for error in &errors {
        tracing::warn!(file = %path.display(), "{error}");
    }
    Ok(seeds)
}

/// One line that says how the crawl went.
fn summary_line(report: &CrawlReport, seconds: f64) -> String {
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
    format!(
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
    )
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}
