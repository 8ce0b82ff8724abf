//! One domain's crawl: robots.txt, the well-known indexes, and every artifact they list,
//! turned into records and a status. Nothing here writes to the store; the result is applied
//! in one transaction by the crawl's writer (or printed, by `validate URL`).

use std::collections::BTreeSet;

use time::OffsetDateTime;
use url::Url;

use crate::fetch::{BodyLimit, FetchFailure, Fetcher, Response, Session};
use crate::local::WELL_KNOWN_INDEXES;
use formats::diagnostic::{Code, Diagnostic, Severity, VerdictKind};
use formats::index::{self, EntryKind, IndexEntry, IndexVersion, SKILL_MD};
use formats::normalize::{
    self, Fetched, MAX_ARCHIVE_BYTES, MAX_DESCRIPTOR_BYTES, MAX_SKILL_MD_BYTES, Source,
};
use formats::seeds::SeedTarget;
use formats::sharing;
use formats::skill::{Digest, Format, Skill, SkillId, Slug};
use store::blobs::Blobs;
use store::{CacheEntry, CrawlErrorEntry, DomainStatus, Outcome};

/// The largest file of a v0.1 skill fetched with `--prefetch-files`.
pub const MAX_PREFETCH_FILE_BYTES: usize = 16 * 1024 * 1024;
/// The most bytes of files fetched for one v0.1 skill with `--prefetch-files`.
pub const MAX_PREFETCH_SKILL_BYTES: u64 = 64 * 1024 * 1024;
/// The most errors listed per domain in the report; the rest are counted.
pub const MAX_LISTED_ERRORS: usize = 200;

/// An index that was fetched, as `validate URL` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexRead {
    /// The index URL (as probed, before redirects).
    pub url: Url,
    /// Its protocol.
    pub format: Format,
    /// For agent-skills indexes, the version it was read as.
    pub version: Option<IndexVersion>,
    /// Problems with the index as a whole and with entries that were skipped.
    pub diagnostics: Vec<Diagnostic>,
    /// False when the index could not be used at all (not JSON, wrong shape, too large);
    /// records of an unusable index are kept as they were, not tombstoned.
    pub usable: bool,
}

/// Everything one domain's crawl produced.
#[derive(Debug, Clone)]
pub struct DomainCrawl {
    /// The domain's status (outcome, errors, request count, …).
    pub status: DomainStatus,
    /// The indexes fetched.
    pub indexes: Vec<IndexRead>,
    /// The records built.
    pub records: Vec<Skill>,
    /// Requests that failed outside any record: robots.txt, index probes.
    pub failures: Vec<FetchFailure>,
    /// HTTP cache updates to store with the records.
    pub cache: Vec<(Url, Option<CacheEntry>)>,
}

/// Crawls one target to the end. Never fails: every problem is in the status.
#[tracing::instrument(skip_all, fields(origin = %target))]
pub async fn crawl_domain(
    fetcher: &Fetcher,
    target: &SeedTarget,
    prefetch_files: bool,
) -> DomainCrawl {
    let seen_at = OffsetDateTime::now_utc();
    let mut run = DomainRun {
        target,
        seen_at,
        prefetch_files,
        errors: Vec::new(),
        indexes: Vec::new(),
        records: Vec::new(),
        record_ids: BTreeSet::new(),
        domain_diagnostics: Vec::new(),
        disallowed: false,
    };
    let mut session = match fetcher.session() {
        Ok(session) => session,
        Err(message) => {
            run.errors.push(FetchFailure {
                code: Code::Unreachable,
                message,
                url: target.origin().clone(),
            });
            return run.finish(0, Vec::new());
        }
    };

    let robots = session.robots(target.origin()).await;
    if let Some(failure) = robots.failure {
        run.errors.push(failure);
    } else {
        run.read_indexes(&mut session, fetcher).await;
    }
    let requests = session.requests();
    let cache = session.take_cache_updates();
    drop(session);
    fetcher.forget_robots(target.origin());
    run.finish(requests, cache)
}

/// The state of one domain's crawl while it runs.
struct DomainRun<'t> {
    target: &'t SeedTarget,
    seen_at: OffsetDateTime,
    prefetch_files: bool,
    errors: Vec<FetchFailure>,
    indexes: Vec<IndexRead>,
    records: Vec<Skill>,
    record_ids: BTreeSet<String>,
    domain_diagnostics: Vec<Diagnostic>,
    disallowed: bool,
}

impl DomainRun<'_> {
    async fn read_indexes(&mut self, session: &mut Session<'_>, fetcher: &Fetcher) {
        for (path, format) in WELL_KNOWN_INDEXES {
            for base in self.target.probe_bases() {
                let Ok(url) = base.join(path.trim_start_matches('/')) else {
                    continue;
                };
                let limit = match format {
                    Format::AgentSkills => index::MAX_INDEX_BYTES,
                    Format::SkillSharing => sharing::MAX_INDEX_BYTES,
                };
                match session.get(&url, BodyLimit::Fail(limit)).await {
                    Ok(response) if is_soft_not_found(&response) => continue,
                    Ok(response) => {
                        self.read_index(session, fetcher, &url, format, response)
                            .await;
                        break;
                    }
                    Err(failure) if failure.code == Code::NotFound => continue,
                    Err(failure) => {
                        if failure.code == Code::RobotsDisallowed {
                            self.disallowed = true;
                        }
                        self.errors.push(failure);
                        break;
                    }
                }
            }
        }
    }

    async fn read_index(
        &mut self,
        session: &mut Session<'_>,
        fetcher: &Fetcher,
        url: &Url,
        format: Format,
        response: Response,
    ) {
        let Ok(source) = Source::new(url.clone()) else {
            return;
        };
        match format {
            Format::AgentSkills => {
                let parsed = index::parse(&response.body, &response.url);
                let usable = !parsed.entries.is_empty() || !has_error(&parsed.diagnostics);
                self.indexes.push(IndexRead {
                    url: url.clone(),
                    format,
                    version: Some(parsed.version),
                    diagnostics: parsed.diagnostics,
                    usable,
                });
                for entry in &parsed.entries {
                    if self.is_duplicate(&source, &entry.slug, url) {
                        continue;
                    }
                    let record = self.agent_skill(session, fetcher, &source, entry).await;
                    self.records.push(record);
                }
            }
            Format::SkillSharing => {
                let parsed = sharing::parse_index(&response.body, &response.url);
                let usable = !parsed.entries.is_empty() || !has_error(&parsed.diagnostics);
                self.indexes.push(IndexRead {
                    url: url.clone(),
                    format,
                    version: None,
                    diagnostics: parsed.diagnostics,
                    usable,
                });
                for entry in &parsed.entries {
                    if self.is_duplicate(&source, &entry.slug, url) {
                        continue;
                    }
                    let fetched = match &entry.descriptor_url {
                        Some(descriptor_url) => {
                            session
                                .get(descriptor_url, BodyLimit::Fail(MAX_DESCRIPTOR_BYTES))
                                .await
                        }
                        None => Err(FetchFailure {
                            code: Code::Unfetched,
                            message: "no usable `descriptor_url`; the descriptor was not read"
                                .to_owned(),
                            url: url.clone(),
                        }),
                    };
                    let record = match &fetched {
                        Ok(response) => {
                            keep_blob(fetcher.blobs(), &response.body);
                            normalize::shared_skill(
                                &source,
                                entry,
                                Fetched::Bytes {
                                    bytes: &response.body,
                                    content_type: response.content_type.as_deref(),
                                },
                                self.seen_at,
                            )
                        }
                        Err(failure) => normalize::shared_skill(
                            &source,
                            entry,
                            Fetched::Failed(&failure.to_diagnostic()),
                            self.seen_at,
                        ),
                    };
                    self.records.push(record);
                }
            }
        }
    }

    /// True (with a note) when an earlier index of the domain already produced this id: the
    /// current v0.2 index wins over the legacy one, and both over skill-sharing.
    fn is_duplicate(&mut self, source: &Source, slug: &Slug, index_url: &Url) -> bool {
        let id = SkillId::new(source.domain().clone(), slug.clone());
        if self.record_ids.insert(id.to_string()) {
            return false;
        }
        self.domain_diagnostics.push(Diagnostic::new(
            Code::DuplicateName,
            format!("{id} is also listed by {index_url}; the entry of the index probed first is used"),
        )
        .as_warning()
        .about(id));
        true
    }

    async fn agent_skill(
        &mut self,
        session: &mut Session<'_>,
        fetcher: &Fetcher,
        source: &Source,
        entry: &IndexEntry,
    ) -> Skill {
        let limit = match entry.kind {
            EntryKind::SkillMd => MAX_SKILL_MD_BYTES,
            EntryKind::Archive => MAX_ARCHIVE_BYTES,
        };
        // The specification's change detection: an artifact whose published digest we already
        // hold is not downloaded again.
        let known = entry
            .digest
            .and_then(|digest| fetcher.blobs()?.get(&digest).ok().flatten());
        let fetched: Result<(Vec<u8>, Option<String>), FetchFailure> = match known {
            Some(bytes) => Ok((bytes, None)),
            None => session
                .get(&entry.url, BodyLimit::Fail(limit))
                .await
                .map(|response| (response.body, response.content_type)),
        };
        let mut record = match fetched {
            Ok((bytes, content_type)) => {
                // Unpacking an archive (up to 64 MiB) and parsing YAML are CPU work: they run
                // on the blocking pool so the other domains' requests keep flowing.
                let (owned_source, owned_entry) = (source.clone(), entry.clone());
                let blobs = fetcher.blobs().cloned();
                let seen_at = self.seen_at;
                let normalised = tokio::task::spawn_blocking(move || {
                    let (record, files) = normalize::agent_skill_and_files(
                        &owned_source,
                        &owned_entry,
                        Fetched::Bytes {
                            bytes: &bytes,
                            content_type: content_type.as_deref(),
                        },
                        seen_at,
                    );
                    // Keep what was verified (or had nothing to verify against).
                    if record.digest_status != formats::skill::DigestStatus::Mismatch {
                        keep_blob(blobs.as_ref(), &bytes);
                    }
                    for file in &files {
                        keep_blob(blobs.as_ref(), &file.bytes);
                    }
                    record
                })
                .await;
                match normalised {
                    Ok(record) => record,
                    Err(error) => {
                        tracing::error!(%error, url = %entry.url, "normalising an artifact failed");
                        let failure = Diagnostic::new(
                            Code::InvalidArchive,
                            format!("{}: the artifact could not be read", entry.url),
                        );
                        normalize::agent_skill(
                            source,
                            entry,
                            Fetched::Failed(&failure),
                            self.seen_at,
                        )
                    }
                }
            }
            Err(failure) => normalize::agent_skill(
                source,
                entry,
                Fetched::Failed(&failure.to_diagnostic()),
                self.seen_at,
            ),
        };
        if self.prefetch_files && record.digest_status != formats::skill::DigestStatus::Unfetched {
            self.prefetch(session, fetcher, entry, &mut record).await;
        }
        record
    }

    /// Fetches the other files a v0.1 entry lists (`--prefetch-files`), recording their size
    /// and digest and keeping their bytes.
    async fn prefetch(
        &mut self,
        session: &mut Session<'_>,
        fetcher: &Fetcher,
        entry: &IndexEntry,
        record: &mut Skill,
    ) {
        let Some(base) = &entry.base_url else {
            return;
        };
        let mut total: u64 = 0;
        for path in &entry.files {
            if path == SKILL_MD {
                continue;
            }
            if total > MAX_PREFETCH_SKILL_BYTES {
                record.diagnostics.push(
                    Diagnostic::new(
                        Code::TooLarge,
                        format!(
                            "the skill's files are larger than the {MAX_PREFETCH_SKILL_BYTES} bytes fetched; {path:?} and later files were not"
                        ),
                    )
                    .at(format!("skills[{}].files", entry.position)),
                );
                return;
            }
            let Ok(url) = base.join(path) else {
                continue;
            };
            match session
                .get(&url, BodyLimit::Fail(MAX_PREFETCH_FILE_BYTES))
                .await
            {
                Ok(response) => {
                    total += response.body.len() as u64;
                    keep_blob(fetcher.blobs(), &response.body);
                    normalize::record_file(record, path, &response.body);
                }
                Err(failure) => record.diagnostics.push(
                    failure
                        .to_diagnostic()
                        .at(format!("skills[{}].files", entry.position)),
                ),
            }
        }
    }

    /// Turns the run into the domain's result.
    fn finish(self, requests: usize, cache: Vec<(Url, Option<CacheEntry>)>) -> DomainCrawl {
        let usable: Vec<&IndexRead> = self.indexes.iter().filter(|index| index.usable).collect();
        let outcome = if !usable.is_empty() {
            Outcome::Ok
        } else if self.errors.iter().any(|failure| {
            matches!(
                failure.code,
                Code::RobotsUnavailable | Code::RobotsDisallowed
            )
        }) || self.disallowed
        {
            Outcome::Disallowed
        } else if self.indexes.is_empty()
            && !self.errors.is_empty()
            && self
                .errors
                .iter()
                .all(|failure| matches!(failure.code, Code::Unreachable | Code::Timeout))
        {
            Outcome::Unreachable
        } else if self.indexes.is_empty() && self.errors.is_empty() {
            Outcome::NotFound
        } else {
            Outcome::Error
        };

        let mut formats: Vec<Format> = usable.iter().map(|index| index.format).collect();
        formats.dedup();
        let indexes: Vec<Url> = usable.iter().map(|index| index.url.clone()).collect();

        // The report's errors: every failed request, every index error, and every record
        // diagnostic that agent clients would also reject (the lenient verdict); a record's
        // strict-only findings stay on the record, where `validate` and the API show them.
        let mut errors: Vec<CrawlErrorEntry> = self
            .errors
            .iter()
            .map(|failure| CrawlErrorEntry {
                code: failure.code.as_str().to_owned(),
                message: failure.message.clone(),
                url: failure.url.to_string(),
                record: None,
            })
            .collect();
        for index in &self.indexes {
            for diagnostic in &index.diagnostics {
                if diagnostic.severity == Severity::Error {
                    errors.push(entry_of(diagnostic, &index.url));
                }
            }
        }
        for record in &self.records {
            for diagnostic in &record.diagnostics {
                if diagnostic.severity_for(VerdictKind::Lenient) == Severity::Error {
                    let mut entry = entry_of(diagnostic, &record.source_url);
                    entry.record = Some(record.id.clone());
                    errors.push(entry);
                }
            }
        }
        let errors_omitted = errors.len().saturating_sub(MAX_LISTED_ERRORS);
        errors.truncate(MAX_LISTED_ERRORS);

        let mut diagnostics = self.domain_diagnostics;
        for index in &self.indexes {
            diagnostics.extend(index.diagnostics.iter().cloned());
        }
        let finished = OffsetDateTime::now_utc();
        let status = DomainStatus {
            domain: self.target.domain(),
            origin: self.target.to_string(),
            outcome,
            formats,
            indexes,
            skills: self.records.len(),
            requests,
            errors,
            errors_omitted,
            diagnostics,
            crawled_at: finished,
            last_success: (outcome == Outcome::Ok).then_some(self.seen_at),
        };
        DomainCrawl {
            status,
            indexes: self.indexes,
            records: self.records,
            failures: self.errors,
            cache,
        }
    }
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

fn has_error(diagnostics: &[Diagnostic]) -> bool {
    diagnostics
        .iter()
        .any(|diagnostic| diagnostic.severity == Severity::Error)
}

/// Many sites answer every path with their HTML home page and status 200; such a page at a
/// well-known index path means "no index", not "a broken index".
fn is_soft_not_found(response: &Response) -> bool {
    let html = response
        .content_type
        .as_deref()
        .is_some_and(|content_type| content_type.trim_start().starts_with("text/html"));
    let first = response
        .body
        .iter()
        .find(|byte| !byte.is_ascii_whitespace());
    html && first == Some(&b'<')
}

/// Keeps fetched bytes in the blob store, when the crawl keeps anything. A failure to write
/// is logged and otherwise ignored: the blob store is a cache.
fn keep_blob(blobs: Option<&Blobs>, bytes: &[u8]) -> Option<Digest> {
    let blobs = blobs?;
    match blobs.put(bytes) {
        Ok(digest) => Some(digest),
        Err(error) => {
            tracing::warn!(%error, "cannot write to the blob store");
            None
        }
    }
}
