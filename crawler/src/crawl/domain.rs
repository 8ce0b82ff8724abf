//! One domain's crawl over the network: robots.txt, then the site pipeline
//! ([`formats::site`]) driven over HTTP, turned into records and a status. Nothing here
//! writes to the store; the result is applied in one transaction by the crawl's writer (or
//! printed, by `validate URL`).

use time::OffsetDateTime;
use url::Url;

use crate::fetch::{BodyLimit, FetchFailure, Fetcher, Session};
use crate::politeness::CrawlSlot;
use formats::diagnostic::{Code, Diagnostic, Severity, VerdictKind};
use formats::seeds::SeedTarget;
use formats::site::{
    Body, NormalizeJob, Reply, Request, SiteCrawl, SiteFindings, SiteOptions, Step,
};
use formats::skill::{Digest, Format};
use store::blobs::Blobs;
use store::{CacheEntry, CrawlErrorEntry, DomainStatus, Outcome};

pub use formats::site::{IndexRead, MAX_PREFETCH_FILE_BYTES, MAX_PREFETCH_SKILL_BYTES};
/// The most errors listed per domain in the report; the rest are counted.
pub const MAX_LISTED_ERRORS: usize = 200;

/// Everything one domain's crawl produced.
#[derive(Debug, Clone)]
pub struct DomainCrawl {
    /// The domain's status (outcome, errors, request count, …).
    pub status: DomainStatus,
    /// What the site pipeline found: indexes, records, failed requests (robots.txt and index
    /// probes) and notes.
    pub found: SiteFindings,
    /// HTTP cache updates to store with the records.
    pub cache: Vec<(Url, Option<CacheEntry>)>,
}

/// Crawls one target to the end. Never fails: every problem is in the status.
#[tracing::instrument(skip_all, fields(origin = %target))]
pub async fn crawl_domain(
    fetcher: &Fetcher,
    target: &SeedTarget,
    prefetch_files: bool,
    slot: Option<CrawlSlot>,
) -> DomainCrawl {
    let options = SiteOptions {
        seen_at: OffsetDateTime::now_utc(),
        prefetch_files,
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
            return finish(target, options.seen_at, found, 0, Vec::new());
        }
    };

    let robots = session.robots(target.origin()).await;
    let found = match robots.failure {
        Some(failure) => SiteFindings {
            failures: vec![failure],
            ..SiteFindings::default()
        },
        None => {
            let site = SiteCrawl::probe(target.probe_bases(), options);
            drive(site, &mut session, fetcher).await
        }
    };
    let requests = session.requests();
    let cache = session.take_cache_updates();
    drop(session);
    fetcher.forget_robots(target.origin());
    finish(target, options.seen_at, found, requests, cache)
}

/// Runs the site pipeline over HTTP: every request through the session (robots.txt, the
/// host's turn, the cache), normalising on the blocking pool, bytes kept in the blob store.
async fn drive(mut site: SiteCrawl, session: &mut Session<'_>, fetcher: &Fetcher) -> SiteFindings {
    loop {
        match site.next_step() {
            Step::Fetch(request) => {
                let reply = fetch(session, fetcher, &request).await;
                site.answer(reply);
            }
            Step::Normalize(job) => normalize(&mut site, fetcher, job).await,
            Step::Done => return site.finish(),
        }
    }
}

/// Gets what the pipeline asked for. The specification's change detection: an artifact whose
/// published digest we already hold is not downloaded again.
async fn fetch(session: &mut Session<'_>, fetcher: &Fetcher, request: &Request) -> Reply {
    let known = match (request.digest, fetcher.blobs()) {
        (Some(digest), Some(blobs)) => blobs.get(&digest).await.ok().flatten(),
        _ => None,
    };
    if let Some(bytes) = known {
        return Ok(Body {
            url: request.url.clone(),
            bytes,
            content_type: None,
        });
    }
    let response = session
        .get(&request.url, BodyLimit::Fail(request.limit))
        .await?;
    if request.keeps_body() {
        keep_blob_async(fetcher.blobs(), &response.body).await;
    }
    Ok(Body {
        url: response.url,
        bytes: response.body,
        content_type: response.content_type,
    })
}

/// Unpacking an archive (up to 64 MiB) and parsing YAML are CPU work: they run on the
/// blocking pool so the other domains' requests keep flowing.
async fn normalize(site: &mut SiteCrawl, fetcher: &Fetcher, job: Box<NormalizeJob>) {
    let url = job.url().clone();
    let blobs = fetcher.blobs().cloned();
    let normalised = tokio::task::spawn_blocking(move || {
        let normalized = job.run();
        for bytes in normalized.bytes_to_keep() {
            keep_blob(blobs.as_ref(), bytes);
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
    found: SiteFindings,
    requests: usize,
    cache: Vec<(Url, Option<CacheEntry>)>,
) -> DomainCrawl {
    let outcome = outcome(&found);
    let usable: Vec<&IndexRead> = found.indexes.iter().filter(|index| index.usable).collect();
    let mut formats: Vec<Format> = usable.iter().map(|index| index.format).collect();
    formats.dedup();
    let indexes: Vec<Url> = usable.iter().map(|index| index.url.clone()).collect();

    let mut errors = report_errors(&found);
    let errors_omitted = errors.len().saturating_sub(MAX_LISTED_ERRORS);
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
        skills: found.records.len(),
        requests,
        errors,
        errors_omitted,
        diagnostics,
        crawled_at: finished,
        last_success: (outcome == Outcome::Ok).then_some(seen_at),
    };
    DomainCrawl {
        status,
        found,
        cache,
    }
}

/// Returns the domain's outcome (DESIGN.md §5): `ok` as soon as one index was read (whatever
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

/// The report's errors: every failed request, every index error, and every record diagnostic
/// that agent clients would also reject (the lenient verdict); a record's strict-only findings
/// stay on the record, where `validate` and the API show them.
fn report_errors(found: &SiteFindings) -> Vec<CrawlErrorEntry> {
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
    for record in &found.records {
        for diagnostic in &record.diagnostics {
            if diagnostic.severity_for(VerdictKind::Lenient) == Severity::Error {
                let mut entry = entry_of(diagnostic, &record.source_url);
                entry.record = Some(record.id.clone());
                errors.push(entry);
            }
        }
    }
    errors
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

/// Keeps fetched bytes in the blob store from async code, on the blocking pool.
async fn keep_blob_async(blobs: Option<&Blobs>, bytes: &[u8]) -> Option<Digest> {
    match blobs?.put(bytes.to_vec()).await {
        Ok(digest) => Some(digest),
        Err(error) => {
            tracing::warn!(%error, "cannot write to the blob store");
            None
        }
    }
}

/// Keeps fetched bytes in the blob store, when the crawl keeps anything; for code on the
/// blocking pool. A failure to write is logged and otherwise ignored: the blob store is a
/// cache.
fn keep_blob(blobs: Option<&Blobs>, bytes: &[u8]) -> Option<Digest> {
    let blobs = blobs?;
    match blobs.blocking().put(bytes) {
        Ok(digest) => Some(digest),
        Err(error) => {
            tracing::warn!(%error, "cannot write to the blob store");
            None
        }
    }
}
