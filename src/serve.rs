//! `skillscout serve`: opens the data directory, brings the search index up to date with the
//! crawl store, and serves the directory; with `--crawl`, crawls in the background and syncs
//! the index after every batch the crawl stores, so searches see new skills without a restart.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use api::{AppState, CrawlProgress, ServeConfig, Tokens};
use crawler::crawl::feed::DEFAULT_LEASE;
use crawler::crawl::{CrawlConfig, CrawlObserver, CrawlReport, DomainReport, Feed, Source};
use crawler::fetch::HttpCache;
use indexer::{Index, IndexConfig, IndexWriterHandle, SearchIndex};
use store::blobs::Blobs;
use store::{AddMode, AddStats, AddedAs, NewTarget, Schedule, Store};
use tokio::net::TcpListener;
use tokio::sync::{Notify, watch};

use crate::cli::ServeArgs;
use crate::crawl::{open_data, worker_name};
use crate::frontdoor::{ServeFile, ServeFileGuard};
use crate::publish::CrawlerProber;
use crate::seeds::{ADD_PAGE, SeedReader};
use crate::{ExitStatus, usage};

/// Runs `skillscout serve`.
pub(crate) fn run(
    data: &Path,
    location: Option<&str>,
    model: Option<Arc<dyn indexer::Embed>>,
    args: &ServeArgs,
) -> anyhow::Result<ExitStatus> {
    if args.max_in_flight == 0 {
        return Err(usage(anyhow::anyhow!("--max-in-flight must be at least 1")));
    }
    check_something_to_serve(data, location, args.crawl)?;
    // One set of fetch settings, so that the background crawl and the key reads share the
    // hosts' turns.
    let fetch = args.fetch.settings()?;
    let background = if args.crawl {
        if args.concurrency == 0 {
            return Err(usage(anyhow::anyhow!("--concurrency must be at least 1")));
        }
        let seeds = match &args.seeds {
            Some(path) => Some(SeedReader::open(path, true)?),
            None => None,
        };
        let config = CrawlConfig {
            fetch: fetch.clone(),
            concurrency: args.concurrency,
            prefetch_files: args.prefetch_files || !args.no_prefetch_files,
            // The server shows the sums; a crawl of many domains keeps no line.
            keep_report_lines: false,
            audit: true,
            discover_budget: args.discover.budget(),
        };
        Some(BackgroundCrawl {
            config,
            seeds,
            schedule: args.schedule.schedule(args.crawl_every)?,
            keep_running: args.crawl_every.is_some(),
        })
    } else {
        None
    };
    let tokens = match &args.token_file {
        Some(path) => Tokens::from_file(path)
            .with_context(|| format!("cannot read --token-file {}", path.display()))?,
        None => Tokens::none(),
    };
    let admin_tokens = match &args.admin_token_file {
        Some(path) => Some(
            Tokens::from_file(path)
                .with_context(|| format!("cannot read --admin-token-file {}", path.display()))?,
        ),
        None => None,
    };
    runtime()?.block_on(async {
        let directory = Directory::open(data, location, model).await?;
        let listener = bind(args.addr).await?;
        let shutdown = Shutdown::on_signals();
        let state = directory.state(
            &listener,
            args.public_url.clone(),
            tokens,
            ServeConfig {
                max_in_flight: args.max_in_flight,
                recrawl_every: args.crawl_every,
                admin_tokens,
                rate_limit: args.rate_limit.0,
                trusted_proxies: args.trusted_proxy.clone(),
                budgets: api::BudgetConfig {
                    client_pings_per_minute: args.ping_budget,
                    ..api::BudgetConfig::default()
                },
                ..ServeConfig::default()
            },
        )?;
        let cache = HttpCache {
            store: Arc::clone(&directory.store),
            blobs: directory.blobs.clone(),
        };
        let probe_config = CrawlConfig {
            fetch,
            concurrency: 1,
            prefetch_files: args.prefetch_files || !args.no_prefetch_files,
            keep_report_lines: false,
            audit: true,
            // A submission's probe reads one site; what it names waits for the crawl.
            discover_budget: 0,
        };
        let prober = CrawlerProber::new(probe_config, cache, state.on_store_change()).map_err(
            |message| usage(anyhow::anyhow!("cannot set up the fetch layer: {message}")),
        )?;
        state.set_prober(Arc::new(prober));
        // Commands that change the frontier find this server here while it holds the
        // embedded store.
        let _serve_file = write_serve_file(data, location, &listener, &state)?;
        let changes = tokio::spawn(sync_on_change(
            directory.clone(),
            state.clone(),
            shutdown.clone(),
        ));
        // A replica over a shared store follows its change log.
        let follow_every = args.sync_every.or_else(|| {
            location
                .is_some_and(|location| !location.trim().is_empty())
                .then_some(DEFAULT_SYNC_EVERY)
        });
        let follower = match follow_every {
            Some(every) if !every.is_zero() => {
                directory.store_seen(state.progress()).await;
                Some(tokio::spawn(follow(
                    directory.clone(),
                    state.progress().clone(),
                    every,
                    shutdown.clone(),
                )))
            }
            _ => None,
        };
        let crawler = background.map(|crawl| {
            state.progress().enable();
            tokio::spawn(crawl.run(
                directory.clone(),
                state.progress().clone(),
                shutdown.clone(),
            ))
        });
        announce(&format!("listening on http://{}", listener.local_addr()?))?;
        api::serve(listener, state, shutdown.wait())
            .await
            .context("the server failed")?;
        if let Some(crawler) = crawler {
            let _ = crawler.await;
        }
        if let Some(follower) = follower {
            let _ = follower.await;
        }
        changes.abort();
        tracing::info!("server stopped");
        Ok(ExitStatus::Success)
    })
}

/// Refuses to serve an embedded store's data directory that does not exist (a mistyped
/// `--data` would otherwise be created empty and served as a directory of nothing), unless
/// `--crawl` is to fill it (the command cannot run: exit 1); warns when it exists but holds no crawl yet.
fn check_something_to_serve(
    data: &Path,
    location: Option<&str>,
    crawl: bool,
) -> anyhow::Result<()> {
    let embedded = location.is_none_or(|location| location.trim().is_empty());
    if !embedded || crawl {
        return Ok(());
    }
    if !data.exists() {
        return Err(anyhow::anyhow!(
            "the data directory {} does not exist, so there is nothing to serve: check the \
             path given to --data (or SKILLSCOUT_DATA), crawl into it first (`skillscout --data \
             {} crawl example.com`), or serve with --crawl to crawl as it serves",
            data.display(),
            data.display()
        ));
    }
    if !data.join(store::STORE_FILE).exists() {
        tracing::warn!(
            data = %data.display(),
            "the data directory holds no crawl yet: the directory is empty until something is \
             crawled into it (`skillscout crawl`, or serve with --crawl)"
        );
    }
    Ok(())
}

/// Returns the runtime the server runs on.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Binds the server's listener.
pub(crate) async fn bind(addr: SocketAddr) -> anyhow::Result<TcpListener> {
    TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))
}

/// Prints one line on stdout at once (scripts wait for it).
pub(crate) fn announce(line: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{line}")
        .and_then(|()| stdout.flush())
        .context("cannot write to stdout")
}

/// The data directory opened for serving: the store, the blobs, the index's one writer and a
/// reader. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Directory {
    pub(crate) store: Arc<Store>,
    pub(crate) blobs: Blobs,
    writer: Arc<Mutex<IndexWriterHandle>>,
    search: SearchIndex,
}

impl Directory {
    /// Opens the data directory (and the store at `location`, when given) and syncs the
    /// index with the store.
    /// With a model, every record gets its vector and searches fuse the records nearest in
    /// meaning with the word ranking.
    pub(crate) async fn open(
        data: &Path,
        location: Option<&str>,
        model: Option<Arc<dyn indexer::Embed>>,
    ) -> anyhow::Result<Directory> {
        let data = data.to_owned();
        let location = location.map(str::to_owned);
        let directory = tokio::task::spawn_blocking(move || -> anyhow::Result<Directory> {
            let (store, blobs) = open_data(&data, location.as_deref())?;
            let index_dir = data.join(indexer::INDEX_DIR);
            let config = IndexConfig {
                model,
                ..IndexConfig::default()
            };
            let Index { writer, search } = Index::open_or_create(&index_dir, config)
                .with_context(|| format!("cannot open the index in {}", index_dir.display()))?;
            Ok(Directory {
                store,
                blobs,
                writer: Arc::new(Mutex::new(writer)),
                search,
            })
        })
        .await
        .context("opening the data directory failed")??;
        directory.sync(None).await?;
        Ok(directory)
    }

    /// Applies the store's new changes to the index and makes them visible.
    pub(crate) async fn sync(&self, progress: Option<&CrawlProgress>) -> anyhow::Result<()> {
        let directory = self.clone();
        let stats = tokio::task::spawn_blocking(move || -> anyhow::Result<indexer::SyncStats> {
            let mut writer = directory.writer.lock().unwrap_or_else(|e| e.into_inner());
            // A bulk sync (a rebuild at start, a large crawl batch) shows its progress.
            let mut shown =
                crate::progress::IndexProgress::new(&crate::progress::ActiveBar::default());
            let synced = indexer::sync_observed(&directory.store, &mut writer, &mut |step| {
                shown.observe(step)
            });
            shown.finish();
            let stats = synced.context("index sync failed")?;
            directory.search.reload().context("index reload failed")?;
            Ok(stats)
        })
        .await
        .context("the index sync failed")??;
        if let Some(progress) = progress {
            progress.index_synced(&stats);
        }
        Ok(())
    }

    /// Reads the store's latest change number into `progress`, for `/healthz` and `/metrics`
    /// to report the index's lag; a store that cannot be read is logged and left for the next
    /// round.
    pub(crate) async fn store_seen(&self, progress: &CrawlProgress) {
        if let Err(error) = self.read_store_seq(progress).await {
            tracing::warn!(%error, "cannot read the store's latest change");
        }
    }

    /// [`Directory::store_seen`], leaving the caller to say why it failed.
    pub(crate) async fn read_store_seq(
        &self,
        progress: &CrawlProgress,
    ) -> Result<(), store::StoreError> {
        progress.store_seen(self.store.last_seq().await?);
        Ok(())
    }

    /// Returns the server state over this directory, with `config`'s public URL defaulting to
    /// the listener's address.
    pub(crate) fn state(
        &self,
        listener: &TcpListener,
        public_url: Option<url::Url>,
        tokens: Tokens,
        config: ServeConfig,
    ) -> anyhow::Result<AppState> {
        let public_url = match public_url {
            Some(url) => url,
            None => {
                let local = listener
                    .local_addr()
                    .context("the listener has no address")?;
                url::Url::parse(&format!("http://{local}/")).context("the listen address")?
            }
        };
        let config = ServeConfig {
            public_url,
            ..config
        };
        Ok(AppState::new(
            self.search.clone(),
            Arc::clone(&self.store),
            self.blobs.clone(),
            tokens,
            config,
        ))
    }
}

/// Stops everything on SIGINT or SIGTERM; cheap to clone.
#[derive(Clone)]
pub(crate) struct Shutdown {
    receiver: watch::Receiver<bool>,
}

impl Shutdown {
    /// Starts listening for the signals.
    pub(crate) fn on_signals() -> Shutdown {
        let (sender, receiver) = watch::channel(false);
        tokio::spawn(async move {
            signal().await;
            tracing::info!("shutting down: finishing the requests in flight");
            let _ = sender.send(true);
        });
        Shutdown { receiver }
    }

    /// Completes when the process is told to stop.
    pub(crate) fn wait(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut receiver = self.receiver.clone();
        async move {
            let _ = receiver.wait_for(|stop| *stop).await;
        }
    }
}

/// Completes on Ctrl-C (SIGINT) or SIGTERM.
async fn signal() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut stream) => {
                stream.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
}

/// Tells the server's progress about the crawl, and the index syncer about each stored batch.
/// A worker that keeps running reports each round (from work found to nothing due) as a crawl.
struct ServeObserver {
    progress: CrawlProgress,
    stored: Arc<Notify>,
    /// The lines stored in the current round.
    round: Mutex<CrawlReport>,
    /// True while a round is reported as running.
    running: std::sync::atomic::AtomicBool,
}

impl CrawlObserver for ServeObserver {
    fn domain_finished(&self, report: &DomainReport) {
        if !self.running.swap(true, std::sync::atomic::Ordering::SeqCst) {
            self.progress.crawl_started(0);
        }
        self.progress.domain_finished(report);
    }

    fn stored(&self, _last_seq: u64) {
        // Batches that arrive while a sync runs are taken in by the next one.
        self.stored.notify_one();
    }

    fn discovered(&self, added: &crawler::crawl::discover::DiscoveryStats) {
        self.progress.discovered(
            added.discovered as u64,
            added.probed as u64,
            added.publishing as u64,
        );
    }

    fn domain_stored(&self, line: &DomainReport) {
        self.round
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .add(line.clone(), false);
    }

    fn round_finished(&self, next_due: Option<time::OffsetDateTime>) {
        let round = std::mem::take(&mut *self.round.lock().unwrap_or_else(|e| e.into_inner()));
        self.running
            .store(false, std::sync::atomic::Ordering::SeqCst);
        tracing::info!(
            domains = round.totals.domains,
            skills = round.totals.skills,
            added = round.totals.added,
            updated = round.totals.updated,
            removed = round.totals.removed,
            next_due = ?next_due,
            "crawl round finished"
        );
        self.progress.crawl_finished(&round);
        self.progress.next_crawl_at(next_due);
    }
}

/// Runs one crawl of `targets` into `directory`, syncing the index after each stored batch
/// and once at the end; reports to `progress`.
pub(crate) async fn crawl_once(
    directory: &Directory,
    config: CrawlConfig,
    feed: Feed,
    hosts: usize,
    progress: &CrawlProgress,
    stop: impl Future<Output = ()>,
) -> anyhow::Result<CrawlReport> {
    let stored = Arc::new(Notify::new());
    let observer = Arc::new(ServeObserver {
        progress: progress.clone(),
        stored: Arc::clone(&stored),
        round: Mutex::new(CrawlReport::default()),
        running: std::sync::atomic::AtomicBool::new(true),
    });
    let (done_sender, mut done) = tokio::sync::oneshot::channel::<()>();
    let syncer = {
        let directory = directory.clone();
        let progress = progress.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = stored.notified() => {
                        if let Err(error) = directory.sync(Some(&progress)).await {
                            tracing::error!(error = format!("{error:#}"), "cannot sync the index");
                        }
                    }
                    _ = &mut done => return,
                }
            }
        })
    };
    progress.crawl_started(hosts);
    let result = crawler::crawl::crawl_work(
        config,
        feed,
        Arc::clone(&directory.store),
        directory.blobs.clone(),
        observer,
        stop,
    )
    .await;
    let _ = done_sender.send(());
    let _ = syncer.await;
    match result {
        Ok((report, _)) => {
            progress.crawl_finished(&report);
            directory.sync(Some(progress)).await?;
            Ok(report)
        }
        Err(error) => {
            progress.crawl_failed(&error.to_string());
            Err(anyhow::Error::new(error).context("the crawl could not go on"))
        }
    }
}

/// How often a server over a shared store (`--store`) syncs its index by default.
const DEFAULT_SYNC_EVERY: Duration = Duration::from_secs(2);
/// The longest wait between two tries when syncing with the store keeps failing (a store
/// restarting, a network cut): tries back off from `--sync-every` up to this.
const MAX_SYNC_BACKOFF: Duration = Duration::from_secs(60);

/// How often a replica reads the store's latest change number between two syncs, so that the
/// lag `/healthz` reports grows while changes wait for the next sync rather than reading 0
/// until then, and an outage is seen (and its end) within a moment. One small query.
const STORE_SEQ_EVERY: Duration = Duration::from_millis(250);

/// Follows the store's change log until shutdown: every `every`, takes the new changes into
/// the index; meanwhile reads the store's latest change number every [`STORE_SEQ_EVERY`] (the
/// lag `/healthz` reports). While the store cannot be read, `/healthz` says the server is
/// degraded, and syncs back off (doubling from `--sync-every` up to [`MAX_SYNC_BACKOFF`]) but
/// the quick probe goes on: the first probe that succeeds ends the wait, so a store back
/// from a restart is synced with at once. Nothing is lost, as each sync starts from the
/// index's own change number.
async fn follow(
    directory: Directory,
    progress: CrawlProgress,
    every: Duration,
    shutdown: Shutdown,
) {
    let mut wait = every;
    loop {
        let next_sync = tokio::time::Instant::now() + wait;
        loop {
            let now = tokio::time::Instant::now();
            if now >= next_sync {
                break;
            }
            tokio::select! {
                () = tokio::time::sleep((next_sync - now).min(STORE_SEQ_EVERY)) => {}
                () = shutdown.wait() => return,
            }
            if tokio::time::Instant::now() >= next_sync {
                break;
            }
            let was_down = progress.store_down().is_some();
            match directory.read_store_seq(&progress).await {
                Ok(()) => {
                    progress.store_reachable();
                    if was_down {
                        tracing::info!("the crawl store answers again; syncing");
                        break;
                    }
                }
                Err(error) => {
                    progress.store_unreachable(&error.to_string());
                    tracing::debug!(%error, "cannot read the store's latest change");
                }
            }
        }
        match directory.sync(Some(&progress)).await {
            Ok(()) => {
                progress.store_reachable();
                directory.store_seen(&progress).await;
                wait = every;
            }
            Err(error) => {
                progress.store_unreachable(&format!("{error:#}"));
                wait = (wait * 2).min(MAX_SYNC_BACKOFF).max(every);
                tracing::warn!(
                    error = format!("{error:#}"),
                    retry_in = ?wait,
                    "syncing the index with the store failed"
                );
            }
        }
    }
}

/// The `--crawl` worker.
struct BackgroundCrawl {
    config: CrawlConfig,
    /// A seed list added to the frontier first (`serve --seeds`).
    seeds: Option<SeedReader>,
    schedule: Schedule,
    keep_running: bool,
}

impl BackgroundCrawl {
    /// Adds the seed list, then crawls the frontier's due domains: once, or, keeping running,
    /// as they fall due until shutdown.
    async fn run(self, directory: Directory, progress: CrawlProgress, shutdown: Shutdown) {
        if let Some(seeds) = self.seeds {
            let frontier = directory.store.frontier().clone();
            let added = tokio::task::spawn_blocking(move || add_seeds(seeds, &frontier)).await;
            match added {
                Ok(Ok(stats)) => tracing::info!(
                    new = stats.added,
                    unchanged = stats.unchanged,
                    delisted = stats.delisted,
                    "seed list added to the frontier"
                ),
                Ok(Err(error)) => {
                    tracing::error!(%error, "cannot add the seed list to the frontier");
                    return;
                }
                Err(error) => {
                    tracing::error!(%error, "adding the seed list failed");
                    return;
                }
            }
        }
        let due = match directory.store.frontier().counts().await {
            Ok(counts) => usize::try_from(counts.due).unwrap_or(usize::MAX),
            Err(error) => {
                tracing::warn!(%error, "cannot count the due domains");
                0
            }
        };
        let feed = Feed {
            source: Source::Due,
            owner: worker_name(),
            lease_for: DEFAULT_LEASE,
            schedule: self.schedule,
            keep_running: self.keep_running,
        };
        let crawled = crawl_once(
            &directory,
            self.config,
            feed,
            due,
            &progress,
            shutdown.wait(),
        )
        .await;
        match crawled {
            Ok(report) => tracing::info!(
                domains = report.totals.domains,
                skills = report.totals.skills,
                added = report.totals.added,
                updated = report.totals.updated,
                removed = report.totals.removed,
                "background crawl finished"
            ),
            Err(error) => {
                tracing::error!(error = format!("{error:#}"), "background crawl failed")
            }
        }
    }
}

/// Adds a seed list to the frontier, a page at a time (known domains keep their schedule).
fn add_seeds(seeds: SeedReader, frontier: &store::Frontier) -> Result<AddStats, store::StoreError> {
    let mut stats = AddStats::default();
    let mut seeds = seeds.peekable();
    while seeds.peek().is_some() {
        let page: Vec<NewTarget> = seeds
            .by_ref()
            .take(ADD_PAGE)
            .map(|line| NewTarget {
                domain: line.target.domain().to_string(),
                target: line.target.to_string(),
                added_as: AddedAs::Seed,
                source: None,
                rank: line.rank,
            })
            .collect();
        stats.add(frontier.blocking().add(&page, AddMode::Keep)?);
    }
    Ok(stats)
}

/// Writes `serve.json` into the data directory of an embedded store (a shared store is
/// reached directly by every command).
fn write_serve_file(
    data: &Path,
    location: Option<&str>,
    listener: &TcpListener,
    state: &AppState,
) -> anyhow::Result<Option<ServeFileGuard>> {
    if location.is_some_and(|location| !location.trim().is_empty()) {
        return Ok(None);
    }
    let local = listener
        .local_addr()
        .context("the listener has no address")?;
    let url = url::Url::parse(&format!("http://{local}/")).context("the listen address")?;
    let file = ServeFile {
        pid: std::process::id(),
        url,
        admin: state.admin_enabled(),
    };
    ServeFile::write(data, &file).map(Some)
}

/// Syncs the index whenever a request changed the store (a delisting through the admin API),
/// until shutdown.
async fn sync_on_change(directory: Directory, state: AppState, shutdown: Shutdown) {
    let changed = state.on_store_change();
    loop {
        tokio::select! {
            () = changed.notified() => {
                if let Err(error) = directory.sync(Some(state.progress())).await {
                    tracing::error!(error = format!("{error:#}"), "cannot sync the index");
                }
            }
            () = shutdown.wait() => return,
        }
    }
}
