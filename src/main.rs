//! The `skillscout` command: finds agent skills published on the web, checks them, indexes
//! them and serves them. See `skillscout --help`.

mod backup;
mod cli;
mod config;
mod crawl;
mod demo;
mod export;
mod fetch_args;
mod frontdoor;
mod progress;
mod publish;
mod report;
mod search;
mod seeds;
mod serve;
mod signals;
mod static_site;
mod terminal;
mod validate;

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::FromArgMatches;
use clap::parser::ValueSource;
use tracing_subscriber::EnvFilter;

use crate::cli::{Cli, Command, LogFormat, SeedsCommand};
use crate::progress::ActiveBar;

/// The log filter used when `RUST_LOG` is not set.
const DEFAULT_LOG_FILTER: &str =
    "skillscout=info,crawler=info,indexer=info,api=info,tower_http=info";

/// How a run ended, as the process exit code (docs/crawl.md: 0 on success, 1 on failure, 2 on
/// bad usage).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExitStatus {
    /// Everything worked and nothing failed a check.
    Success,
    /// The command ran and what it checked failed (e.g. `validate` found errors), or it could
    /// not run for a reason other than how it was called (a data directory in use, a port
    /// taken, no index yet).
    Failure,
    /// The command was called wrongly: a bad flag value, an input it cannot use.
    Usage,
    /// Ctrl-C (SIGINT) cut the command short; what it finished is kept.
    Interrupted,
    /// SIGTERM cut the command short; what it finished is kept.
    Terminated,
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> ExitCode {
        match status {
            ExitStatus::Success => ExitCode::SUCCESS,
            ExitStatus::Failure => ExitCode::from(1),
            ExitStatus::Usage => ExitCode::from(2),
            ExitStatus::Interrupted => ExitCode::from(130),
            ExitStatus::Terminated => ExitCode::from(143),
        }
    }
}

/// An error in how the command was called; the process exits 2. Every other error is a
/// runtime failure and exits 1.
#[derive(Debug)]
pub(crate) struct Usage(anyhow::Error);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

impl std::error::Error for Usage {}

/// Marks an error as bad usage.
pub(crate) fn usage(error: impl Into<anyhow::Error>) -> anyhow::Error {
    anyhow::Error::new(Usage(error.into()))
}

/// Marks the error of a result as bad usage.
pub(crate) trait UsageResult<T> {
    /// Returns the result with its error marked as bad usage.
    fn usage(self) -> anyhow::Result<T>;
}

impl<T, E: Into<anyhow::Error>> UsageResult<T> for Result<T, E> {
    fn usage(self) -> anyhow::Result<T> {
        self.map_err(usage)
    }
}

/// Loads the model of `--semantic-model`, if given; a path that holds no usable model is bad
/// usage.
fn semantic_model(path: Option<&Path>) -> anyhow::Result<Option<Arc<dyn indexer::Embed>>> {
    let Some(path) = path else {
        return Ok(None);
    };
    let model = indexer::embed::Embedder::load(path)
        .with_context(|| format!("--semantic-model {}", path.display()))
        .usage()?;
    Ok(Some(Arc::new(model)))
}

/// How log lines are written, once the command line is read.
static LOG_FORMAT: std::sync::OnceLock<LogFormat> = std::sync::OnceLock::new();

/// Prints why a command failed on stderr (stdout carries only results): `error: …`, or with
/// `--log-format json` one more JSON log line.
pub(crate) fn print_error(error: &anyhow::Error) {
    match LOG_FORMAT.get() {
        Some(LogFormat::Json) => tracing::error!("{error:#}"),
        _ => {
            let _ = writeln!(std::io::stderr(), "error: {error:#}");
        }
    }
}

/// Refuses a data directory that names something other than a directory (a file, say), with
/// what to do; `source` says where the path came from. The command cannot run (exit 1, as
/// for any bad data directory). A path that does not exist yet is each command's to judge
/// (`crawl` creates it, `search` has nothing to search).
fn check_data_dir(data: &Path, source: &str) -> anyhow::Result<()> {
    match std::fs::metadata(data) {
        Ok(metadata) if !metadata.is_dir() => Err(anyhow::anyhow!(
            "cannot open the data directory {} ({source}): it is a file, not a directory; give \
             --data (or SKILLSCOUT_DATA) a directory, such as a new one for a first crawl",
            data.display()
        )),
        _ => Ok(()),
    }
}

fn main() -> ExitCode {
    let (command, config_file) = match config::command() {
        Ok(loaded) => loaded,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "error: {error:#}");
            return ExitStatus::Usage.into();
        }
    };
    let matches = command.clone().get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    };
    // `demo` uses a temporary data directory unless one was asked for.
    let data_given = !matches!(
        matches.value_source("data"),
        Some(ValueSource::DefaultValue) | None
    );
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_LOG_FILTER));
    // Logs go to stderr, lifting the progress bar out of the way while a line is written.
    let bar = ActiveBar::default();
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(bar.clone());
    let _ = LOG_FORMAT.set(cli.log_format);
    match cli.log_format {
        // Colours only for a person at a terminal, not in log files and pipes, nor under
        // NO_COLOR.
        LogFormat::Text => logs
            .with_ansi(terminal::styled(std::io::stderr().is_terminal()))
            .init(),
        LogFormat::Json => logs.json().init(),
    }

    let data_source = match matches.value_source("data") {
        Some(ValueSource::EnvVariable) => "SKILLSCOUT_DATA",
        Some(ValueSource::CommandLine) => "--data",
        _ => "the default data directory",
    };
    let uses_data = match &cli.command {
        Command::Validate(_) | Command::Migrate | Command::Config => false,
        Command::Demo(_) => data_given,
        _ => true,
    };
    let checked = if uses_data {
        check_data_dir(&cli.data, data_source)
    } else {
        Ok(())
    };
    let result = checked.and_then(|()| match &cli.command {
        Command::Crawl(args) => semantic_model(cli.semantic_model.as_deref())
            .and_then(|model| crawl::run(&cli.data, cli.store.as_deref(), model, args, &bar)),
        Command::Validate(args) => validate::run(args),
        Command::Search(args) => semantic_model(cli.semantic_model.as_deref())
            .and_then(|model| search::run(&cli.data, model, args)),
        Command::Serve(args) => semantic_model(cli.semantic_model.as_deref())
            .and_then(|model| serve::run(&cli.data, cli.store.as_deref(), model, args)),
        Command::Export(args) => export::run(&cli.data, cli.store.as_deref(), args, &bar),
        Command::Demo(args) => demo::run(data_given.then_some(cli.data.as_path()), args),
        Command::Migrate => crawl::migrate(cli.store.as_deref()),
        Command::Seeds(command) => {
            let store = cli.store.as_deref();
            match command {
                SeedsCommand::Add(args) => seeds::add(&cli.data, store, None, args),
                SeedsCommand::List(args) => seeds::list(&cli.data, store, None, args),
                SeedsCommand::Remove(args) => seeds::remove(&cli.data, store, None, args),
                SeedsCommand::ImportDirectory(args) => {
                    seeds::import_directory(&cli.data, store, None, args)
                }
            }
        }
        Command::Delist(args) => semantic_model(cli.semantic_model.as_deref())
            .and_then(|model| seeds::delist(&cli.data, cli.store.as_deref(), model, args)),
        Command::Undelist(args) => seeds::undelist(&cli.data, cli.store.as_deref(), None, args),
        Command::Backup(args) => backup::backup(&cli.data, cli.store.as_deref(), args),
        Command::Restore(args) => semantic_model(cli.semantic_model.as_deref())
            .and_then(|model| backup::restore(&cli.data, model, args, &bar)),
        Command::Config => config::run(&command, config_file.as_ref(), &matches),
    });
    match result {
        Ok(status) => status.into(),
        Err(error) => {
            print_error(&error);
            if error.downcast_ref::<Usage>().is_some() {
                ExitStatus::Usage.into()
            } else {
                ExitStatus::Failure.into()
            }
        }
    }
}
