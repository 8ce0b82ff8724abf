//! The command line, declared with clap. Every doc comment here is `--help` text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use crawler::crawl;

/// The data directory used when neither `--data` nor `SKILLSCOUT_DATA` is given.
pub(crate) const DEFAULT_DATA_DIR: &str = "./data";
/// The seed file crawled when no target and no `--seeds` is given.
pub(crate) const DEFAULT_SEEDS: &str = "seeds/domains.txt";
/// Hits shown by `search` when `--limit` is not given.
pub(crate) const DEFAULT_SEARCH_LIMIT: usize = indexer::DEFAULT_LIMIT;

/// Finds agent skills published on the web, checks them, indexes them and serves them.
#[derive(Debug, Parser)]
#[command(name = "skillscout", version, about)]
pub(crate) struct Cli {
    /// The data directory: crawl state, fetched files and the search index (`DIR/index`).
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
    /// Crawls sites for published skills, politely, and stores what they publish in the data
    /// directory. Exits 0 when the crawl ran to the end, whatever the sites answered (the
    /// report tells), 1 when it could not run or was interrupted.
    Crawl(CrawlArgs),
    /// Checks a skill folder, a SKILL.md, an index file, a well-known tree or a live origin
    /// (http:// or https://), and prints every problem with advice. Exits 1 when the chosen
    /// verdict finds an error.
    Validate(ValidateArgs),
    /// Searches the index built by `crawl`: prints the best matches, or with `--json`
    /// exactly the body `/v1/search` returns. Reads only the index, so it works while a
    /// server or a crawl is running.
    Search(SearchArgs),
}

/// How to fetch: politeness, limits, and how to reach hosts. Shared by `crawl` and
/// `validate URL`.
#[derive(Debug, Clone, Args)]
pub(crate) struct FetchArgs {
    /// Resolves HOST to IP (and PORT) instead of asking DNS; HOST may be `*` or `*.suffix`.
    /// Addresses given here are trusted even when private (this is how to crawl a local test
    /// server). Repeatable.
    #[arg(long, value_name = "HOST=IP[:PORT]")]
    pub(crate) resolve: Vec<String>,

    /// Allows fetching from loopback, private, link-local and other non-public addresses.
    #[arg(long)]
    pub(crate) allow_private: bool,

    /// Trusts the certificate authority in this PEM file, besides the system's.
    #[arg(long, value_name = "PEM")]
    pub(crate) ca_cert: Option<PathBuf>,

    /// The User-Agent header [default: skillscout/<version> (+<project URL>)].
    #[arg(long, value_name = "TEXT")]
    pub(crate) user_agent: Option<String>,

    /// The pause between two requests to one host, in milliseconds (a larger Crawl-delay in
    /// robots.txt wins).
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_HOST_DELAY_MS)]
    pub(crate) host_delay_ms: u64,

    /// The time allowed to connect, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_CONNECT_TIMEOUT_MS)]
    pub(crate) connect_timeout_ms: u64,

    /// The time allowed for a whole request, body included, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_REQUEST_TIMEOUT_MS)]
    pub(crate) request_timeout_ms: u64,

    /// A JSON file of per-host HTTP headers, `{"host": {"Authorization": "Bearer …"}}`, so a
    /// publisher's private skills can be seen. Headers go only to their exact host.
    #[arg(long, value_name = "FILE")]
    pub(crate) credentials: Option<PathBuf>,
}

/// The default pause between two requests to one host.
const DEFAULT_HOST_DELAY_MS: u64 = crawl::DEFAULT_HOST_DELAY.as_millis() as u64;
/// The default connect timeout.
const DEFAULT_CONNECT_TIMEOUT_MS: u64 = crawl::DEFAULT_CONNECT_TIMEOUT.as_millis() as u64;
/// The default whole-request timeout.
const DEFAULT_REQUEST_TIMEOUT_MS: u64 = crawl::DEFAULT_REQUEST_TIMEOUT.as_millis() as u64;

/// Arguments of `skillscout crawl`.
#[derive(Debug, Args)]
pub(crate) struct CrawlArgs {
    /// Sites to crawl: `example.com` (https), `http://host:port`, or an origin with a path
    /// (`https://example.com/docs`), whose well-known paths are probed under the path first.
    /// Without targets or --seeds, seeds/domains.txt is crawled.
    #[arg(value_name = "TARGET")]
    pub(crate) targets: Vec<String>,

    /// A file of targets, one per line; `#` starts a comment. Bad lines are reported with
    /// their line number and skipped.
    #[arg(long, value_name = "FILE")]
    pub(crate) seeds: Option<PathBuf>,

    /// How many hosts are crawled at once.
    #[arg(long, value_name = "N", default_value_t = crawl::DEFAULT_CONCURRENCY)]
    pub(crate) concurrency: usize,

    /// Also fetches every file a legacy (v0.1) index lists, not only SKILL.md, so that the
    /// directory can serve and export whole skills.
    #[arg(long)]
    pub(crate) prefetch_files: bool,

    /// Writes the JSON crawl report to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub(crate) report: Option<PathBuf>,

    /// Does not draw the progress bar, even on a terminal.
    #[arg(long)]
    pub(crate) no_progress: bool,

    /// Fetching options.
    #[command(flatten)]
    pub(crate) fetch: FetchArgs,
}

/// Arguments of `skillscout validate`.
#[derive(Debug, Args)]
pub(crate) struct ValidateArgs {
    /// Skill folders, SKILL.md files, `index.json` files, skill-sharing index files, folders
    /// holding `.well-known/` (a folder's name is taken as the site's domain), or origins
    /// (`https://example.com`, crawled politely, nothing stored).
    #[arg(required = true, value_name = "PATH_OR_URL")]
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

    /// Fetching options, for origins.
    #[command(flatten)]
    pub(crate) fetch: FetchArgs,
}

/// Arguments of `skillscout search`.
#[derive(Debug, Args)]
pub(crate) struct SearchArgs {
    /// What to look for: words and "quoted phrases" (several arguments are joined with
    /// spaces; an empty query lists everything).
    #[arg(required = true, value_name = "QUERY")]
    pub(crate) query: Vec<String>,

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
