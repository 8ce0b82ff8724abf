//! The crawl's one store writer: finished domains applied in batches, each domain released on
//! the frontier with what its crawl saw once it is stored, never before.
//!
//! A batch is what arrives within [`BATCH_WINDOW`] of its first domain (or [`MAX_BATCH`]
//! domains), so that thousands of small domains cost a few disk syncs rather than one each.
//! A crawl killed between storing and releasing has its domains crawled again: nothing is
//! lost. A store that is briefly unavailable (a PostgreSQL restart) is waited out.

use std::time::Duration;

use store::{ApplyStats, Crawled, DomainUpdate, Store, StoreError};
use time::OffsetDateTime;

use super::feed::{Leases, retry_unavailable};
use super::{CrawlObserver, CrawlReport, DomainReport};

/// The most domains applied to the store in one transaction.
const MAX_BATCH: usize = 256;
/// How long the store writer gathers finished domains before it commits them.
const BATCH_WINDOW: Duration = Duration::from_millis(250);

/// A domain's crawl, handed to the store writer.
pub(crate) struct Finished {
    /// Its target's position in the crawl.
    pub(crate) position: usize,
    pub(crate) update: DomainUpdate,
    /// How long its host asked to be left alone, past what the crawl waited.
    pub(crate) not_before: Option<Duration>,
}

/// Applies finished domains to the store in batches and releases them on the frontier;
/// returns the report (each domain's line by position, when `keep_lines`).
pub(crate) fn write_batches(
    store: &Store,
    mut receiver: tokio::sync::mpsc::Receiver<Finished>,
    observer: &dyn CrawlObserver,
    runtime: &tokio::runtime::Handle,
    keep_lines: bool,
    leases: &Leases,
) -> Result<CrawlReport, StoreError> {
    let mut report = CrawlReport::default();
    let mut kept: Vec<(usize, DomainReport)> = Vec::new();
    while let Some(first) = receiver.blocking_recv() {
        let deadline = tokio::time::Instant::now() + BATCH_WINDOW;
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match runtime.block_on(tokio::time::timeout_at(deadline, receiver.recv())) {
                Ok(Some(finished)) => batch.push(finished),
                // The crawl is over, or the window has passed.
                Ok(None) | Err(_) => break,
            }
        }
        let mut positions = Vec::with_capacity(batch.len());
        let mut waits = Vec::with_capacity(batch.len());
        let mut updates = Vec::with_capacity(batch.len());
        for finished in batch {
            positions.push(finished.position);
            waits.push(finished.not_before);
            updates.push(finished.update);
        }
        let lines: Vec<DomainReport> = updates
            .iter()
            .map(|update| DomainReport::new(&update.status, ApplyStats::default()))
            .collect();
        let outcomes: Vec<_> = updates
            .iter()
            .map(|update| (update.status.domain.to_string(), update.status.outcome))
            .collect();
        let now = OffsetDateTime::now_utc();
        // A crawl outlives a short outage of a shared store (a PostgreSQL restart): the batch
        // is tried again, so it keeps a copy for that.
        let stats = retry_unavailable("storing crawled domains", || {
            store.blocking().apply(updates.clone(), now)
        })?;
        let crawled: Vec<Crawled> = outcomes
            .into_iter()
            .zip(&stats)
            .zip(waits)
            .map(|(((domain, outcome), stats), not_before)| Crawled {
                domain,
                outcome,
                changed: stats.added + stats.updated + stats.removed > 0,
                not_before,
            })
            .collect();
        leases.finish(crawled)?;
        let last_seq = retry_unavailable("reading the change log", || store.blocking().last_seq())?;
        observer.stored(last_seq);
        for ((position, line), changes) in positions.into_iter().zip(lines).zip(stats) {
            let line = DomainReport { changes, ..line };
            observer.domain_stored(&line);
            if keep_lines {
                kept.push((position, line.clone()));
            }
            report.add(line, false);
        }
    }
    // Kept lines go in the order the targets were given, whatever order they finished in.
    kept.sort_by_key(|(position, _)| *position);
    report.domains = kept.into_iter().map(|(_, line)| line).collect();
    Ok(report)
}
