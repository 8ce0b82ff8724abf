//! The command line, declared with clap. Every doc comment here is `--help` text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// The data directory when neither `--data` nor `SKILLSCOUT_DATA` is given.
pub(crate) const DEFAULT_DATA_DIR: &str = "./data";
/// Hits shown by `search` when `--limit` is not given.
pub(crate) const DEFAULT_SEARCH_LIMIT: usize = indexer::DEFAULT_LIMIT;

/// Finds agent skills published on the web, checks them, indexes them and serves them.
#[derive(Debug, Parser)]
#[command(name = "skillscout", version, about)]
pub(crate) struct Cli {
    /// The data directory: the crawl store and the search index (`DIR/index`) live here.
    #[arg(
        long,
        global = true,
        env = "SKILLSCOUT_DATA",
        default_value = DEFAULT_DATA_DIR,
        value_name = "DIR"
    )]
    pub(crate) data: PathBuf,

    /// What to do.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Checks a skill folder, a SKILL.md, an index file or a well-known tree, and prints
    /// every problem with advice. Exits 1 when the chosen verdict finds an error.
    Validate(ValidateArgs),
    /// Searches the index built by `crawl`: prints the best matches, or with `--json`
    /// exactly the body `/v1/search` returns. Reads only the index, so it works while a
    /// server or a crawl is running.
    Search(SearchArgs),
}

/// Arguments of `skillscout validate`.
#[derive(Debug, Args)]
pub(crate) struct ValidateArgs {
    /// Skill folders, SKILL.md files, `index.json` files, skill-sharing index files, or
    /// folders holding `.well-known/` (a folder's name is taken as the site's domain).
    #[arg(required = true, value_name = "PATH")]
    pub(crate) paths: Vec<String>,

    /// Judges by what agent clients accept instead of the specification's strict rules.
    #[arg(long)]
    pub(crate) lenient: bool,

    /// Prints a JSON report instead of text.
    #[arg(long)]
    pub(crate) json: bool,

    /// Also prints notes (info-level diagnostics).
    #[arg(long, short)]
    pub(crate) verbose: bool,
}

/// Arguments of `skillscout search`.
#[derive(Debug, Args)]
pub(crate) struct SearchArgs {
    /// What to look for: words and "quoted phrases" (several arguments are joined with
    /// spaces; an empty query lists everything). Any text works, even bytes that are not
    /// UTF-8 (they are read as U+FFFD).
    #[arg(required = true, value_name = "QUERY")]
    pub(crate) query: Vec<std::ffi::OsString>,

    /// Only skills of this capability type (`skill`, `plugin`, `api`, `knowledge`, `task`);
    /// repeat or comma-separate for any of several.
    #[arg(long = "type", value_name = "T")]
    pub(crate) capability_type: Vec<String>,

    /// Only skills with this access level (`public`, `restricted`, `private`); repeatable.
    #[arg(long, value_name = "A")]
    pub(crate) access: Vec<String>,

    /// Only skills published by this domain; repeatable.
    #[arg(long, value_name = "D")]
    pub(crate) domain: Vec<String>,

    /// Only skills published in this format (`agent-skills`, `skill-sharing`); repeatable.
    #[arg(long, value_name = "F")]
    pub(crate) format: Vec<String>,

    /// Only skills with this tag; repeatable.
    #[arg(long, value_name = "TAG")]
    pub(crate) tag: Vec<String>,

    /// How many results to show (at most 100).
    #[arg(long, default_value_t = DEFAULT_SEARCH_LIMIT, value_name = "N")]
    pub(crate) limit: usize,

    /// How many results to skip, for the next page.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub(crate) offset: usize,

    /// Prints exactly the JSON body `/v1/search` returns to an anonymous caller (or, with
    /// `--private`, to an authenticated one).
    #[arg(long)]
    pub(crate) json: bool,

    /// Searches as an authenticated caller (the operator's view), private skills included.
    #[arg(long)]
    pub(crate) private: bool,
}
