//! Helpers shared by the end-to-end tests.

use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};

use indexer::{Index, IndexConfig, SyncStats};
use store::{DomainStatus, Store};
use time::OffsetDateTime;

/// Returns the repository root (the binary package's directory).
pub(crate) fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Returns the shared test corpus beside the checkout, or `None` (with a note) when absent.
#[allow(clippy::print_stderr)]
pub(crate) fn corpus_dir() -> Option<PathBuf> {
    let dir = repo_root().join("../shared/corpus");
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

/// Runs `skillscout ARGS` in `dir` and returns its output.
pub(crate) fn skillscout(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skillscout"))
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .output()
        .expect("the skillscout binary runs")
}

/// A child process that is killed and reaped when its guard drops, so that a test that fails
/// while the process runs leaves nothing running. Every process a test starts and does not
/// wait for at once is held in one.
pub(crate) struct KillOnDrop(Option<Child>);

impl KillOnDrop {
    /// Starts `command`.
    pub(crate) fn spawn(command: &mut Command) -> KillOnDrop {
        KillOnDrop(Some(command.spawn().expect("the process starts")))
    }

    /// Waits for the process to exit and returns what it printed.
    pub(crate) fn wait_with_output(mut self) -> Output {
        self.0
            .take()
            .expect("the guard holds its process until it is waited for")
            .wait_with_output()
            .expect("the process is waited for")
    }
}

impl Deref for KillOnDrop {
    type Target = Child;

    fn deref(&self) -> &Child {
        self.0
            .as_ref()
            .expect("the guard holds its process until it is waited for")
    }
}

impl DerefMut for KillOnDrop {
    fn deref_mut(&mut self) -> &mut Child {
        self.0
            .as_mut()
            .expect("the guard holds its process until it is waited for")
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            // An error here means the process has exited already.
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Returns stdout as text.
pub(crate) fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

/// Returns stderr as text.
pub(crate) fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("stderr is UTF-8")
}

/// Fills the data directory `data` the way a crawl would, from well-known trees on disk: each
/// site's records in the crawl store with an `ok` status, then synced into the search index.
pub(crate) fn store_and_index_sites(data: &Path, sites: &[PathBuf]) -> SyncStats {
    let store = store_sites(data, sites);
    let Index { mut writer, .. } =
        Index::open_or_create(&data.join(indexer::INDEX_DIR), IndexConfig::default()).unwrap();
    indexer::sync(&store, &mut writer).unwrap()
}

/// Fills the crawl store of `data` as [`store_and_index_sites`] does, leaving the index out.
pub(crate) fn store_sites(data: &Path, sites: &[PathBuf]) -> Store {
    let now = OffsetDateTime::now_utc();
    let store = Store::open(data).unwrap();
    for site in sites {
        let checked = crawler::local::check_tree(site, now).unwrap();
        let records: Vec<_> = checked.records().cloned().collect();
        let Some(first) = records.first() else {
            continue;
        };
        let status = DomainStatus::read_ok(
            first.domain.clone(),
            format!("https://{}", first.domain),
            checked.indexes.iter().map(|index| index.format).collect(),
            checked
                .indexes
                .iter()
                .map(|index| index.url.clone())
                .collect(),
            records.len(),
            now,
        );
        store
            .blocking()
            .apply_domain(&status, records, now)
            .unwrap();
    }
    store
}
