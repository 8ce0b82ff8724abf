//! One domain's crawl over the network: robots.txt, then the site pipeline
//! ([`formats::site`]) driven over HTTP (or, for an `mcp+` target, the MCP endpoint read
//! through its Skills Extension, `domain/mcp.rs`), turned into records and a status.
//!
//! The result is applied in one transaction by the crawl's writer (or printed, by `validate
//! URL`); records are stored while the domain runs ([`Store::upsert`]) only when they outgrow
//! [`STREAM_BYTES`] or [`STREAM_RECORDS`], or when someone awaits them ([`Streaming::awaited`]).

mod mcp;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use time::OffsetDateTime;
use url::Url;

use crate::fetch::{BodyLimit, FetchFailure, Fetcher, Session};
use crate::politeness::CrawlSlot;
use formats::diagnostic::{Code, Diagnostic, Severity};
use formats::seeds::SeedTarget;
use formats::site::{
    Body, NormalizeJob, Reply, Request, RequestKind, SiteCrawl, SiteFindings, SiteOptions, Step,
};
use formats::skill::{Format, Skill};
use store::blobs::Blobs;
use store::{CacheEntry, CachingHeaders, CrawlErrorEntry, DomainStatus, Outcome, Store, Streamed};

pub use formats::site::{IndexRead, MAX_PREFETCH_FILE_BYTES, MAX_PREFETCH_SKILL_BYTES};
/// The most errors listed per domain in the report; the rest are counted.
pub const MAX_LISTED_ERRORS: usize = 200;
/// When a crawl streams, the most bytes of finished records (text fields, roughly) a domain
/// holds before storing them: with the record being built (a SKILL.md is at most 1 MiB, an
/// archive 64 MiB while it is unpacked), what one domain holds is bounded whatever it lists.
pub const STREAM_BYTES: usize = 8 * 1024 * 1024;
/// When a crawl streams, the most finished records a domain holds before storing them.
pub const STREAM_RECORDS: usize = 256;

/// Where a domain's finished records go while it is crawled.
#[derive(Clone, Copy)]
pub struct Streaming<'a> {
    /// The store.
    pub store: &'a Store,
    /// Someone awaits this domain's results (it was asked for: a ping, a recrawl request, a
    /// submission): the records read so far are stored before each request that goes to the
    /// network, so that a change is searchable without waiting for the host's next turns.
    pub awaited: bool,
    /// Told after records were stored while the domain runs (the index's owner syncs).
    pub stored: &'a (dyn Fn() + Send + Sync),
}

impl std::fmt::Debug for Streaming<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Streaming")
            .field("awaited", &self.awaited)
            .finish_non_exhaustive()
    }
}

/// Everything one domain's crawl produced.
#[derive(Debug, Clone)]
pub struct DomainCrawl {
    /// The domain's status (outcome, errors, request count, …).
    pub status: DomainStatus,
    /// What the site pipeline found: indexes, the records not stored yet, failed requests
    /// (robots.txt and index probes) and notes.
    pub found: SiteFindings,
    /// The records already stored while the domain was crawled.
    pub streamed: Streamed,
    /// HTTP cache updates to store with the records.
    pub cache: Vec<(Url, Option<CacheEntry>)>,
}

/// What a domain's crawl reads, and what it makes of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    /// Also fetch every file a v0.1 `files[]` lists (exports and `validate` need them).
    pub prefetch_files: bool,
    /// Audit and fingerprint every record's content (docs/audit.md). Always true but for the
    /// crawl benchmark, which crawls the same sites without it to measure what it costs.
    pub audit: bool,
}

impl Reading {
    /// The index, its entries' artifacts, and the audit of each.
    pub const ARTIFACTS: Reading = Reading {
        prefetch_files: false,
        audit: true,
    };
    /// [`Reading::ARTIFACTS`], and every file a legacy entry lists.
    pub const EVERY_FILE: Reading = Reading {
        prefetch_files: true,
        audit: true,
    };
}

/// Crawls one target to the end. Never fails: every problem is in the status. With
/// `stream_to`, finished records past [`STREAM_BYTES`] or [`STREAM_RECORDS`] (or, when they
/// are awaited, before each request) are stored as the crawl goes (see
/// [`DomainCrawl::streamed`]); without it, every record is returned.
#[tracing::instrument(skip_all, fields(origin = %target))]
pub async fn crawl_domain(
    fetcher: &Fetcher,
    target: &SeedTarget,
    reading: Reading,
    slot: Option<CrawlSlot>,
    stream_to: Option<Streaming<'_>>,
) -> DomainCrawl {
    let mut kept = Kept::new(stream_to);
    let options = SiteOptions {
        seen_at: OffsetDateTime::now_utc(),
        prefetch_files: reading.prefetch_files,
        audit: reading.audit,
    };
    let mut session = match fetcher.session() {
        Ok(session) => session.with_slot(slot),
        Err(message) => {
            let found = SiteFindings {
                failures: vec![FetchFailure::new(
                    Code::Unreachable,
                    target.origin(),
                    message,
                )],
                ..SiteFindings::default()
            };
            return finish(target, options.seen_at, found, 0, Vec::new(), kept);
        }
    };

    session.preload(target.origin()).await;
    let robots = session.robots(target.origin()).await;
    let found = match robots.failure {
        Some(failure) => SiteFindings {
            failures: vec![failure],
            ..SiteFindings::default()
        },
        None => match target.mcp_endpoint() {
            Some(endpoint) => {
                mcp::crawl_endpoint(&mut session, fetcher, endpoint, options.seen_at, &mut kept)
                    .await
            }
            None => {
                let site = SiteCrawl::probe(target.probe_bases(), options);
                drive(site, &mut session, fetcher, &mut kept).await
            }
        },
    };
    let requests = session.requests();
    let cache = session.take_cache_updates();
    drop(session);
    fetcher.forget_robots(target.origin());
    finish(target, options.seen_at, found, requests, cache, kept)
}

/// Runs the site pipeline over HTTP: every request through the session (robots.txt, the
/// host's turn, the cache), normalising on the blocking pool, bytes kept in the blob store,
/// finished records streamed to the store when they outgrow the budget.
async fn drive(
    mut site: SiteCrawl,
    session: &mut Session<'_>,
    fetcher: &Fetcher,
    kept: &mut Kept<'_>,
) -> SiteFindings {
    loop {
        match site.next_step() {
            Step::Fetch(request) => {
                if kept.awaits_records() && goes_to_network(session, fetcher, &request).await {
                    kept.flush().await;
                }
                let lost = Arc::clone(&kept.blobs_lost);
                let reply = fetch(session, fetcher, &request, &mut kept.caching, &lost).await;
                site.answer(reply);
            }
            Step::Normalize(job) => {
                normalize(&mut site, fetcher, job, Arc::clone(&kept.blobs_lost)).await;
            }
            Step::Done => return site.finish(),
        }
        kept.stream_if_full(&mut site).await;
    }
}

/// What a domain's crawl did with its finished records: the ones stored while it ran, and the
/// report errors and count of every record, stored or not.
struct Kept<'s> {
    /// Where records go while the crawl runs; `None` keeps them all (and after a store
    /// error, so that the crawl's final apply meets it and nothing is lost).
    store: Option<&'s Store>,
    /// Whether records are awaited, and whom to tell once some are stored.
    awaited: Option<&'s (dyn Fn() + Send + Sync)>,
    streamed: Streamed,
    /// Finished records not stored yet, in index order, and their [`weight`].
    held: Vec<Skill>,
    held_weight: usize,
    /// How many records were taken from the pipeline.
    taken: usize,
    /// The report errors of the records taken, at most [`MAX_LISTED_ERRORS`].
    errors: Vec<CrawlErrorEntry>,
    /// How many errors of those records were not listed.
    errors_omitted: usize,
    /// What the index answers said about caching.
    caching: Option<CachingHeaders>,
    /// Set when fetched bytes could not be kept in the blob store (a shared store that
    /// stayed unavailable): the records would name files the directory does not hold, so
    /// none is stored, and the domain is crawled again.
    blobs_lost: Arc<AtomicBool>,
}

impl<'s> Kept<'s> {
    fn new(stream_to: Option<Streaming<'s>>) -> Kept<'s> {
        Kept {
            store: stream_to.map(|streaming| streaming.store),
            awaited: stream_to
                .filter(|streaming| streaming.awaited)
                .map(|streaming| streaming.stored),
            streamed: Streamed::default(),
            held: Vec::new(),
            held_weight: 0,
            taken: 0,
            errors: Vec::new(),
            errors_omitted: 0,
            caching: None,
            blobs_lost: Arc::new(AtomicBool::new(false)),
        }
    }

    /// True once bytes could not be kept in the blob store.
    fn blobs_lost(&self) -> bool {
        self.blobs_lost.load(Ordering::SeqCst)
    }

    /// Takes the pipeline's finished records and stores those held once they outgrow the
    /// budget. Each record is counted and weighed once, when it is taken.
    async fn stream_if_full(&mut self, site: &mut SiteCrawl) {
        self.hold(site.take_records());
        self.flush_if_full().await;
    }

    /// Stores the records held once they outgrow the budget (not after a blob was lost:
    /// what is held is then dropped at the end).
    async fn flush_if_full(&mut self) {
        if self.held.len() < STREAM_RECORDS && self.held_weight < STREAM_BYTES {
            return;
        }
        self.flush().await;
    }

    /// True when records are held that someone awaits, and can be stored.
    fn awaits_records(&self) -> bool {
        self.awaited.is_some() && self.store.is_some() && !self.held.is_empty()
    }

    /// Stores the records held (not after a blob was lost: what is held is then dropped at
    /// the end); says so to whoever awaits them.
    async fn flush(&mut self) {
        let Some(store) = self.store else { return };
        if self.blobs_lost() || self.held.is_empty() {
            return;
        }
        let records = std::mem::take(&mut self.held);
        self.held_weight = 0;
        let ids: Vec<_> = records.iter().map(|record| record.id.clone()).collect();
        // A copy, so that a store error loses nothing: the records go back to be held.
        match store
            .upsert(records.clone(), OffsetDateTime::now_utc())
            .await
        {
            Ok(stats) => {
                self.streamed.ids.extend(ids);
                self.streamed.stats.add(stats);
                if let Some(stored) = self.awaited {
                    stored();
                }
            }
            Err(error) => {
                tracing::error!(%error, "cannot store records while crawling; keeping them");
                self.store = None;
                self.hold_again(records);
            }
        }
    }

    /// Holds records newly taken from the pipeline, noting their report errors.
    fn hold(&mut self, records: Vec<Skill>) {
        self.taken += records.len();
        for entry in records.iter().flat_map(record_errors) {
            if self.errors.len() < MAX_LISTED_ERRORS {
                self.errors.push(entry);
            } else {
                self.errors_omitted += 1;
            }
        }
        self.held_weight += records.iter().map(weight).sum::<usize>();
        self.held.extend(records);
    }

    /// Puts back records the store refused, ahead of those held since (index order).
    fn hold_again(&mut self, mut records: Vec<Skill>) {
        self.held_weight += records.iter().map(weight).sum::<usize>();
        records.append(&mut self.held);
        self.held = records;
    }
}

/// Roughly how many bytes a record holds: its text, its frontmatter's text, its file list.
fn weight(record: &Skill) -> usize {
    fn text_of(value: &serde_json::Value) -> usize {
        match value {
            serde_json::Value::String(text) => text.len(),
            serde_json::Value::Array(items) => items.iter().map(text_of).sum(),
            serde_json::Value::Object(fields) => fields
                .iter()
                .map(|(key, value)| key.len() + text_of(value))
                .sum(),
            _ => 8,
        }
    }
    record.body.len()
        + record.description.len()
        + record.title.len()
        + record
            .frontmatter
            .iter()
            .map(|(key, value)| key.len() + text_of(value))
            .sum::<usize>()
        + record
            .files
            .iter()
            .map(|file| file.path.len() + 64)
            .sum::<usize>()
        + record
            .diagnostics
            .iter()
            .map(|diagnostic| diagnostic.message.len() + 64)
            .sum::<usize>()
}

/// Gets what the pipeline asked for. The specification's change detection: an artifact whose
/// published digest we already hold is not downloaded again. What an index's answer says
/// about caching joins `caching`.
async fn fetch(
    session: &mut Session<'_>,
    fetcher: &Fetcher,
    request: &Request,
    caching: &mut Option<CachingHeaders>,
    blobs_lost: &AtomicBool,
) -> Reply {
    let known = match (request.digest, fetcher.blobs()) {
        (Some(digest), Some(blobs)) => blobs.get(&digest).await.ok().flatten(),
        _ => None,
    };
    if let Some(bytes) = known {
        return Ok(Body {
            url: request.url.clone(),
            bytes,
            content_type: None,
            link_header: None,
        });
    }
    let response = session
        .get(&request.url, BodyLimit::Fail(request.limit))
        .await?;
    if let (RequestKind::Index(_), Some(said)) = (request.kind, response.caching) {
        *caching = Some(caching.map_or(said, |before| before.and(said)));
    }
    if request.keeps_body() {
        keep_blob_async(fetcher.blobs(), &response.body, blobs_lost).await;
    }
    Ok(Body {
        url: response.url,
        bytes: response.body,
        content_type: response.content_type,
        link_header: response.link_header,
    })
}

/// True when fetching `request` asks the network: neither its bytes (by digest) nor a fresh
/// copy are kept.
async fn goes_to_network(session: &Session<'_>, fetcher: &Fetcher, request: &Request) -> bool {
    if let (Some(digest), Some(blobs)) = (request.digest, fetcher.blobs())
        && blobs.contains(&digest).await
    {
        return false;
    }
    !session.answers_from_cache(&request.url)
}

/// Unpacking an archive (up to 64 MiB) and parsing YAML are CPU work: they run on the
/// blocking pool so the other domains' requests keep flowing.
async fn normalize(
    site: &mut SiteCrawl,
    fetcher: &Fetcher,
    job: Box<NormalizeJob>,
    blobs_lost: Arc<AtomicBool>,
) {
    let url = job.url().clone();
    let blobs = fetcher.blobs().cloned();
    let normalised = tokio::task::spawn_blocking(move || {
        let normalized = job.run();
        for bytes in normalized.bytes_to_keep() {
            keep_blob(blobs.as_ref(), bytes, &blobs_lost);
        }
        normalized
    })
    .await;
    match normalised {
        Ok(normalized) => site.normalized(normalized),
        Err(error) => {
            tracing::error!(%error, %url, "normalising an artifact failed");
            site.normalize_failed();
        }
    }
}

/// Turns what the site pipeline found into the domain's result.
fn finish(
    target: &SeedTarget,
    seen_at: OffsetDateTime,
    mut found: SiteFindings,
    requests: usize,
    cache: Vec<(Url, Option<CacheEntry>)>,
    mut kept: Kept<'_>,
) -> DomainCrawl {
    // The records not streamed stay with the findings.
    kept.hold(std::mem::take(&mut found.records));
    found.records = std::mem::take(&mut kept.held);
    if kept.blobs_lost() {
        // Files the records name could not be stored: nothing of this crawl is kept as the
        // domain's content (its stored records stay as they were), and it is crawled again.
        found.records.clear();
        found.indexes.clear();
        found.withdrawn.clear();
    }

    let outcome = if kept.blobs_lost() {
        Outcome::Error
    } else {
        outcome(&found)
    };
    let usable: Vec<&IndexRead> = found.indexes.iter().filter(|index| index.usable).collect();
    let mut formats: Vec<Format> = usable.iter().map(|index| index.format).collect();
    formats.dedup();
    // The indexes whose vanished records become tombstones: those read whole.
    let indexes: Vec<Url> = usable
        .iter()
        .filter(|index| index.complete)
        .map(|index| index.url.clone())
        .collect();

    let mut errors = site_errors(&found);
    if kept.blobs_lost() {
        errors.push(CrawlErrorEntry {
            code: STORE_UNAVAILABLE.to_owned(),
            message: "the store could not keep the skills' files; nothing of this crawl is \
                      kept, and the domain is crawled again"
                .to_owned(),
            url: target.to_string(),
            record: None,
        });
    }
    errors.append(&mut kept.errors);
    let errors_omitted = errors.len().saturating_sub(MAX_LISTED_ERRORS) + kept.errors_omitted;
    errors.truncate(MAX_LISTED_ERRORS);

    let mut diagnostics = found.notes.clone();
    for index in &found.indexes {
        diagnostics.extend(index.diagnostics.iter().cloned());
    }
    let finished = OffsetDateTime::now_utc();
    let status = DomainStatus {
        domain: target.domain(),
        origin: target.to_string(),
        outcome,
        formats,
        indexes,
        skills: kept.taken,
        requests,
        errors,
        errors_omitted,
        diagnostics,
        crawled_at: finished,
        last_success: (outcome == Outcome::Ok).then_some(seen_at),
        caching: kept.caching,
    };
    DomainCrawl {
        status,
        found,
        streamed: kept.streamed,
        cache,
    }
}

/// Returns the domain's outcome (docs/crawl.md): `ok` as soon as one index was read (whatever
/// became of its entries); `unreachable` only when no connection could be made at all (every
/// failure is `unreachable`: DNS, refused, connect timeout); a host that answered and then
/// timed out is `error`.
fn outcome(found: &SiteFindings) -> Outcome {
    let failures = &found.failures;
    if found.indexes.iter().any(|index| index.usable) {
        Outcome::Ok
    } else if found.disallowed
        || failures.iter().any(|failure| {
            matches!(
                failure.code,
                Code::RobotsUnavailable | Code::RobotsDisallowed
            )
        })
    {
        Outcome::Disallowed
    } else if found.indexes.is_empty()
        && !failures.is_empty()
        && failures
            .iter()
            .all(|failure| failure.code == Code::Unreachable)
    {
        Outcome::Unreachable
    } else if found.indexes.is_empty() && failures.is_empty() {
        Outcome::NotFound
    } else {
        Outcome::Error
    }
}

/// The report's errors of the site: every failed request and every index error (the records'
/// come from [`record_errors`]).
fn site_errors(found: &SiteFindings) -> Vec<CrawlErrorEntry> {
    let mut errors: Vec<CrawlErrorEntry> = found
        .failures
        .iter()
        .map(|failure| CrawlErrorEntry {
            code: failure.code.as_str().to_owned(),
            message: failure.message.clone(),
            url: failure.url.to_string(),
            record: None,
        })
        .collect();
    for index in &found.indexes {
        for diagnostic in &index.diagnostics {
            if diagnostic.severity == Severity::Error {
                errors.push(entry_of(diagnostic, &index.url));
            }
        }
    }
    errors
}

/// The report's errors of a record: every diagnostic that agent clients would also reject
/// (the lenient verdict); its strict-only findings stay on the record, where `validate` and
/// the API show them.
fn record_errors(record: &Skill) -> impl Iterator<Item = CrawlErrorEntry> + '_ {
    record
        .diagnostics
        .iter()
        .filter(|diagnostic| formats::verdict::reported(diagnostic))
        .map(|diagnostic| {
            let mut entry = entry_of(diagnostic, &record.source_url);
            entry.record = Some(record.id.clone());
            entry
        })
}

fn entry_of(diagnostic: &Diagnostic, url: &Url) -> CrawlErrorEntry {
    let message = match &diagnostic.field {
        Some(field) => format!("{field}: {}", diagnostic.message),
        None => diagnostic.message.clone(),
    };
    CrawlErrorEntry {
        code: diagnostic.code.as_str().to_owned(),
        message,
        url: url.to_string(),
        record: diagnostic.record.clone(),
    }
}

/// The code of the error a domain ends with when its files could not be stored.
const STORE_UNAVAILABLE: &str = "store_unavailable";

/// True when a blob write failed because a shared store is unavailable for a while (a
/// PostgreSQL restart): worth waiting out, as record writes are.
fn is_unavailable(error: &std::io::Error) -> bool {
    error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<store::StoreError>())
        .is_some_and(|inner| matches!(inner, store::StoreError::Unavailable { .. }))
}

/// Keeps fetched bytes in the blob store from async code, on the blocking pool, waiting out
/// a store that is unavailable for a while; sets `lost` when they could not be kept.
async fn keep_blob_async(blobs: Option<&Blobs>, bytes: &[u8], lost: &AtomicBool) {
    let Some(blobs) = blobs else { return };
    let mut attempt = 0;
    loop {
        match blobs.put(bytes.to_vec()).await {
            Ok(_) => return,
            Err(error) if is_unavailable(&error) && attempt < super::feed::STORE_RETRIES => {
                let wait = super::feed::store_retry_wait(attempt);
                tracing::warn!(%error, retry_in = ?wait, "storing a file failed; retrying");
                tokio::time::sleep(wait).await;
                attempt += 1;
            }
            Err(error) => {
                tracing::warn!(%error, "cannot write to the blob store");
                lost.store(true, Ordering::SeqCst);
                return;
            }
        }
    }
}

/// Keeps fetched bytes in the blob store, for code on the blocking pool, waiting out a store
/// that is unavailable for a while; sets `lost` when they could not be kept.
fn keep_blob(blobs: Option<&Blobs>, bytes: &[u8], lost: &AtomicBool) {
    let Some(blobs) = blobs else { return };
    let mut attempt = 0;
    loop {
        match blobs.blocking().put(bytes) {
            Ok(_) => return,
            Err(error) if is_unavailable(&error) && attempt < super::feed::STORE_RETRIES => {
                let wait = super::feed::store_retry_wait(attempt);
                tracing::warn!(%error, retry_in = ?wait, "storing a file failed; retrying");
                std::thread::sleep(wait);
                attempt += 1;
            }
            Err(error) => {
                tracing::warn!(%error, "cannot write to the blob store");
                lost.store(true, Ordering::SeqCst);
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use formats::index;
    use formats::normalize::{self, Fetched, Source};

    use super::*;

    /// Records of `count` skills whose SKILL.md bodies are `body_bytes` long.
    fn records(count: usize, body_bytes: usize) -> Vec<Skill> {
        let index_url = Url::parse("https://big.test/.well-known/skills/index.json").unwrap();
        let names: Vec<String> = (0..count).map(|n| format!("s{n}")).collect();
        let list: Vec<serde_json::Value> = names
            .iter()
            .map(
                |name| serde_json::json!({"name": name, "description": "d", "files": ["SKILL.md"]}),
            )
            .collect();
        let document = serde_json::json!({ "skills": list }).to_string();
        let parsed = index::parse(document.as_bytes(), &index_url);
        let source = Source::new(index_url).unwrap();
        parsed
            .entries
            .iter()
            .zip(&names)
            .map(|(entry, name)| {
                let text = format!(
                    "---\nname: {name}\ndescription: d\n---\n{}",
                    "x".repeat(body_bytes)
                );
                let bytes = Fetched::Bytes {
                    bytes: text.as_bytes(),
                    content_type: None,
                };
                normalize::agent_skill(&source, entry, bytes, OffsetDateTime::now_utc())
            })
            .collect()
    }

    // The byte budget: records of 512 KiB are stored once 8 MiB are held, whatever their
    // count; what is held after stays under the budget.
    #[tokio::test]
    async fn held_records_go_to_the_store_past_the_byte_budget() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut kept = Kept::new(Some(Streaming {
            store: &store,
            awaited: false,
            stored: &|| {},
        }));
        let per_record = 512 * 1024;
        let mut stored_once = 0;
        for record in records(STREAM_BYTES / per_record + 3, per_record) {
            kept.hold(vec![record]);
            kept.flush_if_full().await;
            assert!(
                kept.held_weight < STREAM_BYTES + per_record,
                "{}",
                kept.held_weight
            );
            if stored_once == 0 && !kept.streamed.ids.is_empty() {
                stored_once = kept.streamed.ids.len();
            }
        }
        assert_eq!(
            stored_once,
            STREAM_BYTES / per_record,
            "stored at the budget"
        );
        assert_eq!(kept.held.len(), 3);
        assert_eq!(kept.taken, STREAM_BYTES / per_record + 3);
        assert!(store.record("big.test/s0").await.unwrap().is_some());
        assert!(
            store
                .record(&format!("big.test/s{}", STREAM_BYTES / per_record))
                .await
                .unwrap()
                .is_none()
        );
    }

    // Without a store (`validate`), everything is held.
    #[tokio::test]
    async fn without_a_store_every_record_is_held() {
        let mut kept = Kept::new(None);
        kept.hold(records(STREAM_RECORDS + 1, 10));
        kept.flush_if_full().await;
        assert_eq!(kept.held.len(), STREAM_RECORDS + 1);
        assert!(kept.streamed.ids.is_empty());
    }
}
