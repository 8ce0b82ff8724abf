//! Integration tests of the crawler crate: the corpus against its manifest, crawls of fixture
//! servers on loopback, hostile servers, and one tree read from disk and over HTTP alike. One
//! test binary, one module per area.

mod corpus;
mod crawl;
mod hostile;
mod mcp;
mod server;
mod site;
mod verdicts;
mod worker;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crawler::crawl::{CrawlConfig, CrawlReport, DomainReport, Quiet};
use formats::seeds::SeedTarget;
use store::Store;
use store::blobs::Blobs;

use crate::server::TestServer;

/// Returns the shared test corpus beside the checkout, or `None` (with a note) when absent.
#[allow(clippy::print_stderr)]
pub(crate) fn corpus_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
    if dir.join("MANIFEST.json").is_file() {
        Some(dir)
    } else {
        assert!(
            std::env::var_os("CI").is_none(),
            "../shared/corpus is missing: under CI the corpus tests run, they do not skip"
        );
        eprintln!("skipping: ../shared/corpus not found beside the checkout");
        None
    }
}

/// Returns the repository's fixture web (`seeds/web`).
pub(crate) fn fixture_web() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../seeds/web")
}

/// A fresh directory, removed when dropped.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn new(label: &str) -> TempDir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "skillscout-it-{label}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A crawl configuration for tests: every `*.test` host resolves to the server, no host
/// delay, short timeouts and backoffs so that hostile cases finish quickly.
pub(crate) fn test_config(server: &TestServer) -> CrawlConfig {
    let mut config = CrawlConfig::default();
    config.fetch.resolve = vec![
        format!("*.test=127.0.0.1:{}", server.port())
            .parse()
            .unwrap(),
    ];
    config.fetch.host_delay = Duration::ZERO;
    config.fetch.connect_timeout = Duration::from_secs(2);
    config.fetch.request_timeout = Duration::from_secs(2);
    config.fetch.retry_base_delay = Duration::from_millis(20);
    config.concurrency = 8;
    config
}

/// A data directory with its store, kept across crawls of one test.
pub(crate) struct Data {
    _dir: TempDir,
    pub(crate) store: Arc<Store>,
    pub(crate) blobs: Blobs,
}

impl Data {
    pub(crate) fn new() -> Data {
        let dir = TempDir::new("data");
        let store = Arc::new(Store::open(dir.path()).unwrap());
        let blobs = Blobs::open(dir.path()).unwrap();
        Data {
            _dir: dir,
            store,
            blobs,
        }
    }

    /// Crawls `hosts` (as `http://host`) with `config`.
    pub(crate) async fn crawl(&self, config: CrawlConfig, hosts: &[&str]) -> CrawlReport {
        let targets: Vec<String> = hosts.iter().map(|host| format!("http://{host}")).collect();
        let targets: Vec<&str> = targets.iter().map(String::as_str).collect();
        self.crawl_targets(config, &targets, std::future::pending())
            .await
    }

    /// Crawls seed targets with `config` until done or `shutdown`.
    pub(crate) async fn crawl_targets(
        &self,
        config: CrawlConfig,
        targets: &[&str],
        shutdown: impl std::future::Future<Output = ()>,
    ) -> CrawlReport {
        let targets: Vec<SeedTarget> = targets.iter().map(|raw| raw.parse().unwrap()).collect();
        crawler::crawl::crawl(
            config,
            targets,
            Arc::clone(&self.store),
            self.blobs.clone(),
            Arc::new(Quiet),
            shutdown,
        )
        .await
        .expect("the crawl runs")
    }
}

/// Returns the report line of `domain`.
pub(crate) fn domain<'r>(report: &'r CrawlReport, domain: &str) -> &'r DomainReport {
    report
        .domains
        .iter()
        .find(|line| line.domain.as_str() == domain)
        .unwrap_or_else(|| panic!("no report line for {domain}: {report:#?}"))
}

/// Returns the error codes of a report line.
pub(crate) fn error_codes(line: &DomainReport) -> Vec<&str> {
    line.errors
        .iter()
        .map(|error| error.code.as_str())
        .collect()
}
