//! The frontier as data: `seeds add|list|remove`, `delist`, `undelist`, and the seed list
//! reader that `crawl --seeds` and `seeds add` share (a line at a time, so a list of a
//! million lines takes constant memory).
//!
//! Each command works on the store directly, or, when a running `serve` holds the embedded
//! store, through that server's admin API (`frontdoor.rs`).

use std::io::{BufRead, BufReader, Read, Write as _};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Context as _;
use formats::seeds::{SeedLine, display_domain, parse_line};
use store::{AddMode, AddStats, AddedAs, FrontierEntry, ListFilter, NewTarget};

use crate::cli::{
    DelistArgs, SeedsAddArgs, SeedsImportArgs, SeedsListArgs, SeedsRemoveArgs, UndelistArgs,
};
use crate::frontdoor::Frontdoor;
use crate::{ExitStatus, usage};

/// How many bad lines of a seed list are reported one by one; the rest are counted.
const REPORTED_BAD_LINES: u64 = 100;
/// How many targets `seeds add` adds in one transaction (or one admin request).
pub(crate) const ADD_PAGE: usize = 10_000;
/// How many rows `seeds list` reads at a time.
const LIST_PAGE: usize = 1000;

/// A seed list read a line at a time: its good lines, in order. Bad lines are reported (the
/// first [`REPORTED_BAD_LINES`] one by one, on stderr through the log) and counted; a read
/// error ends the list early, said once.
pub(crate) struct SeedReader {
    name: String,
    input: BufReader<Box<dyn Read + Send>>,
    number: usize,
    line: Vec<u8>,
    allow_private: bool,
    counts: Arc<SeedCounts>,
}

/// What a [`SeedReader`] met, shared with whoever reports it.
#[derive(Debug, Default)]
pub(crate) struct SeedCounts {
    /// Good lines.
    pub(crate) targets: AtomicU64,
    /// Bad lines, skipped.
    pub(crate) bad: AtomicU64,
    /// IP addresses and `localhost`, refused (when not allowed).
    pub(crate) not_public: AtomicU64,
}

impl SeedReader {
    /// Opens `path` (`-`: standard input). Public-site checks apply unless `allow_private`.
    pub(crate) fn open(path: &Path, allow_private: bool) -> anyhow::Result<SeedReader> {
        let (name, input): (String, Box<dyn Read + Send>) = if path == Path::new("-") {
            ("standard input".to_owned(), Box::new(std::io::stdin()))
        } else {
            let file = std::fs::File::open(path)
                .with_context(|| format!("cannot read the seed file {}", path.display()))?;
            if file.metadata().is_ok_and(|metadata| metadata.is_dir()) {
                anyhow::bail!(
                    "cannot read the seed file {}: it is a directory",
                    path.display()
                );
            }
            (path.display().to_string(), Box::new(file))
        };
        Ok(SeedReader {
            name,
            input: BufReader::with_capacity(64 * 1024, input),
            number: 0,
            line: Vec::new(),
            allow_private,
            counts: Arc::new(SeedCounts::default()),
        })
    }

    /// Returns the counts, which keep growing as the reader is read.
    pub(crate) fn counts(&self) -> Arc<SeedCounts> {
        Arc::clone(&self.counts)
    }

    fn bad(&self, message: &str) {
        let bad = self.counts.bad.fetch_add(1, Ordering::Relaxed) + 1;
        if bad <= REPORTED_BAD_LINES {
            tracing::warn!(file = %self.name, "{message}");
        } else if bad == REPORTED_BAD_LINES + 1 {
            tracing::warn!(file = %self.name, "more bad lines: only their count is reported");
        }
    }
}

impl Iterator for SeedReader {
    type Item = SeedLine;

    fn next(&mut self) -> Option<SeedLine> {
        loop {
            self.line.clear();
            match self.input.read_until(b'\n', &mut self.line) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(error) => {
                    tracing::error!(file = %self.name, line = self.number + 1, %error, "cannot read the seed list any further");
                    return None;
                }
            }
            self.number += 1;
            // A line that is not UTF-8 is read with U+FFFD in place of the bad bytes, so it
            // is reported as a bad seed rather than ending the list.
            let text = String::from_utf8_lossy(&self.line);
            let text = text.trim_end_matches(['\n', '\r']);
            match parse_line(text, self.number) {
                Ok(None) => {}
                Ok(Some(line)) => {
                    if !self.allow_private
                        && let Some(why) = line.target.not_public()
                    {
                        self.counts.not_public.fetch_add(1, Ordering::Relaxed);
                        self.bad(&format!(
                            "line {}: {} is {why} (--allow-private adds it)",
                            self.number, line.target
                        ));
                        continue;
                    }
                    self.counts.targets.fetch_add(1, Ordering::Relaxed);
                    return Some(line);
                }
                Err(error) => self.bad(&error.to_string()),
            }
        }
    }
}

/// Reads a domain argument: a domain or any target naming it, stored as its key (an
/// internationalised name in punycode).
pub(crate) fn domain_argument(raw: &str) -> anyhow::Result<String> {
    let target = formats::seeds::SeedTarget::parse(raw)
        .map_err(|message| usage(anyhow::anyhow!("{message}")))?;
    Ok(target.domain().to_string())
}

/// `skillscout seeds add`.
pub(crate) fn add(
    data: &Path,
    location: Option<&str>,
    model: Option<Arc<dyn indexer::Embed>>,
    args: &SeedsAddArgs,
) -> anyhow::Result<ExitStatus> {
    let mut reader = SeedReader::open(&args.file, args.allow_private).map_err(usage)?;
    let counts = reader.counts();
    let door = Frontdoor::open(data, location, &args.admin, model)?;
    let mut stats = AddStats::default();
    loop {
        let page: Vec<NewTarget> = reader
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
        if page.is_empty() {
            break;
        }
        stats.add(door.add(page, AddMode::Keep)?);
    }
    let bad = counts.bad.load(Ordering::Relaxed);
    let plural = if bad == 1 { "" } else { "s" };
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "{} new, {} updated, {} unchanged, {} delisted (skipped); {bad} bad line{plural} skipped",
        stats.added, stats.updated, stats.unchanged, stats.delisted,
    )
    .context("cannot write to stdout")?;
    Ok(ExitStatus::Success)
}

/// The largest page of another directory's domain list read.
const MAX_DIRECTORY_PAGE_BYTES: usize = 16 * 1024 * 1024;

/// One page of another directory's `GET /v1/domains`: what the import reads of it.
#[derive(Debug, serde::Deserialize)]
struct DirectoryPage {
    domains: Vec<DirectoryDomain>,
    #[serde(default)]
    next_cursor: Option<String>,
}

#[derive(Debug, serde::Deserialize)]
struct DirectoryDomain {
    domain: String,
    #[serde(default)]
    origin: Option<String>,
    #[serde(default)]
    state: Option<String>,
}

/// `skillscout seeds import-directory URL`: every page of another directory's domain list,
/// read through the crawler's fetch layer (the address guard, robots.txt, the host delay),
/// added as `imported` a page at a time.
pub(crate) fn import_directory(
    data: &Path,
    location: Option<&str>,
    model: Option<Arc<dyn indexer::Embed>>,
    args: &SeedsImportArgs,
) -> anyhow::Result<ExitStatus> {
    let list_url = if args
        .url
        .path()
        .trim_end_matches('/')
        .ends_with("/v1/domains")
    {
        args.url.clone()
    } else {
        let mut base = args.url.clone();
        if !base.path().ends_with('/') {
            base.set_path(&format!("{}/", base.path()));
        }
        base.join("v1/domains")
            .map_err(|error| usage(anyhow::anyhow!("{}: {error}", args.url)))?
    };
    let source = args.url.to_string();
    let settings = args.fetch.settings()?;
    let allow_private = settings.allow_private;
    let fetcher = crawler::fetch::Fetcher::new(settings, None)
        .map_err(|message| usage(anyhow::anyhow!("{message}")))?;
    let door = Frontdoor::open(data, location, &args.admin, model)?;
    let runtime = crate::serve::runtime()?;
    let mut stats = AddStats::default();
    let (mut read, mut skipped, mut pages) = (0u64, 0u64, 0usize);
    let mut cursor: Option<String> = None;
    loop {
        if pages == args.max_pages {
            tracing::warn!(
                pages,
                "--max-pages reached; the rest of the list is not read"
            );
            break;
        }
        let mut url = list_url.clone();
        url.query_pairs_mut().clear().append_pair("limit", "100");
        if let Some(cursor) = &cursor {
            url.query_pairs_mut().append_pair("cursor", cursor);
        }
        let body = runtime.block_on(async {
            let mut session = fetcher
                .session()
                .map_err(|message| anyhow::anyhow!("{message}"))?;
            let robots = session.robots(&url).await;
            if let Some(failure) = robots.failure {
                anyhow::bail!("{}", failure.message);
            }
            let path = format!("{}?{}", url.path(), url.query().unwrap_or_default());
            if !robots.policy.allows(&path) {
                anyhow::bail!(
                    "robots.txt of {} disallows {path}",
                    url.origin().ascii_serialization()
                );
            }
            session
                .get(
                    &url,
                    crawler::fetch::BodyLimit::Fail(MAX_DIRECTORY_PAGE_BYTES),
                )
                .await
                .map(|response| response.body)
                .map_err(|failure| anyhow::anyhow!("{url}: {} ({})", failure.message, failure.code))
        })?;
        let page: DirectoryPage = serde_json::from_slice(&body)
            .with_context(|| format!("{url} is not a skillscout domain list"))?;
        pages += 1;
        let mut targets = Vec::with_capacity(page.domains.len());
        for listed in &page.domains {
            read += 1;
            if listed.state.as_deref() == Some("delisted") {
                skipped += 1;
                continue;
            }
            let raw = listed.origin.as_deref().unwrap_or(&listed.domain);
            let target = match formats::seeds::SeedTarget::parse(raw) {
                Ok(target) => target,
                Err(message) => {
                    tracing::warn!(%message, "skipped a listed domain");
                    skipped += 1;
                    continue;
                }
            };
            if !allow_private && let Some(why) = target.not_public() {
                tracing::warn!(domain = %target.domain(), why, "skipped (--allow-private adds it)");
                skipped += 1;
                continue;
            }
            targets.push(NewTarget {
                domain: target.domain().to_string(),
                target: target.to_string(),
                added_as: AddedAs::Imported,
                source: Some(source.clone()),
                rank: None,
            });
        }
        if !targets.is_empty() {
            stats.add(door.add(targets, AddMode::Keep)?);
        }
        match page.next_cursor {
            Some(next) if !page.domains.is_empty() && cursor.as_deref() != Some(next.as_str()) => {
                cursor = Some(next);
            }
            _ => break,
        }
    }
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "{read} domains read in {pages} pages: {} new, {} updated, {} unchanged, {} delisted \
         (skipped); {skipped} skipped",
        stats.added, stats.updated, stats.unchanged, stats.delisted,
    )
    .context("cannot write to stdout")?;
    Ok(ExitStatus::Success)
}

/// `skillscout seeds list`.
pub(crate) fn list(
    data: &Path,
    location: Option<&str>,
    model: Option<Arc<dyn indexer::Embed>>,
    args: &SeedsListArgs,
) -> anyhow::Result<ExitStatus> {
    let door = Frontdoor::open(data, location, &args.admin, model)?;
    let filter = ListFilter {
        state: args.state,
        due: args.due,
    };
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    let mut left = args.limit.unwrap_or(usize::MAX);
    let mut after: Option<String> = None;
    let mut shown = 0usize;
    if !args.json {
        writeln!(
            stdout,
            "{:<40} {:<10} {:<20} {:>8} {:<11} reason",
            "domain", "state", "next crawl", "interval", "last"
        )
        .context("cannot write to stdout")?;
    }
    while left > 0 {
        let page = door.list(after.clone(), LIST_PAGE.min(left), filter)?;
        let full = page.len() == LIST_PAGE.min(left);
        for entry in &page {
            if args.json {
                serde_json::to_writer(&mut stdout, entry).context("cannot write to stdout")?;
                writeln!(stdout).context("cannot write to stdout")?;
            } else {
                writeln!(stdout, "{}", table_line(entry)).context("cannot write to stdout")?;
            }
        }
        shown += page.len();
        left = left.saturating_sub(page.len());
        after = page.last().map(|entry| entry.domain.clone());
        if !full {
            break;
        }
    }
    stdout.flush().context("cannot write to stdout")?;
    if shown == 0 && !args.json {
        tracing::info!("no domain matches");
    }
    Ok(ExitStatus::Success)
}

/// One line of `seeds list`.
fn table_line(entry: &FrontierEntry) -> String {
    let next = if entry.delisted.is_some() {
        "-".to_owned()
    } else {
        entry
            .next_crawl_at
            .format(&time::macros::format_description!(
                "[year]-[month]-[day] [hour]:[minute]"
            ))
            .unwrap_or_default()
    };
    let interval = entry
        .interval()
        .map_or_else(|| "-".to_owned(), store::frontier::schedule::human);
    let last = entry
        .last_outcome
        .map_or("-", store::Outcome::as_str)
        .to_owned();
    let reason = entry
        .delisted
        .as_ref()
        .map(|delisting| crate::terminal::safe(&delisting.reason))
        .unwrap_or_default();
    let domain = display_domain(&entry.domain);
    let state = entry.state().as_str();
    format!("{domain:<40} {state:<10} {next:<20} {interval:>8} {last:<11} {reason}")
}

/// `skillscout seeds remove`.
pub(crate) fn remove(
    data: &Path,
    location: Option<&str>,
    model: Option<Arc<dyn indexer::Embed>>,
    args: &SeedsRemoveArgs,
) -> anyhow::Result<ExitStatus> {
    let mut domains = Vec::new();
    for raw in &args.domains {
        domains.push(domain_argument(raw)?);
    }
    let door = Frontdoor::open(data, location, &args.admin, model)?;
    let stats = door.remove(domains)?;
    writeln!(
        std::io::stdout(),
        "{} removed, {} not in the frontier, {} delisted (kept: undelist them first)",
        stats.removed,
        stats.unknown,
        stats.delisted
    )
    .context("cannot write to stdout")?;
    Ok(ExitStatus::Success)
}

/// `skillscout delist`.
pub(crate) fn delist(
    data: &Path,
    location: Option<&str>,
    model: Option<Arc<dyn indexer::Embed>>,
    args: &DelistArgs,
) -> anyhow::Result<ExitStatus> {
    let domain = domain_argument(&args.domain)?;
    let reason = args.reason.trim();
    if reason.is_empty() {
        return Err(usage(anyhow::anyhow!(
            "--reason must say why the domain is delisted"
        )));
    }
    let door = Frontdoor::open(data, location, &args.admin, model)?;
    let delisted = door.delist(&domain, reason)?;
    let shown = display_domain(&domain);
    let again = if delisted.already {
        " (it was delisted already; the reason is replaced)"
    } else {
        ""
    };
    writeln!(
        std::io::stdout(),
        "delisted {shown}{again}: {} skill{} removed",
        delisted.records_removed,
        if delisted.records_removed == 1 {
            ""
        } else {
            "s"
        }
    )
    .context("cannot write to stdout")?;
    Ok(ExitStatus::Success)
}

/// `skillscout undelist`.
pub(crate) fn undelist(
    data: &Path,
    location: Option<&str>,
    model: Option<Arc<dyn indexer::Embed>>,
    args: &UndelistArgs,
) -> anyhow::Result<ExitStatus> {
    let domain = domain_argument(&args.domain)?;
    let door = Frontdoor::open(data, location, &args.admin, model)?;
    let shown = display_domain(&domain);
    if door.undelist(&domain)? {
        writeln!(
            std::io::stdout(),
            "{shown} is no longer delisted: it is crawled at the next crawl"
        )
        .context("cannot write to stdout")?;
        Ok(ExitStatus::Success)
    } else {
        crate::print_error(&anyhow::anyhow!("{shown} is not delisted"));
        Ok(ExitStatus::Failure)
    }
}
