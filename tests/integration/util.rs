//! Helpers shared by the end-to-end tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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

/// Returns stdout as text.
pub(crate) fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

/// Returns stderr as text.
pub(crate) fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("stderr is UTF-8")
}
