//! The change feed: the crawl store's change log as a caller may see it, so that another
//! directory can mirror this one (`GET /v1/changes`), and what changed since a time (exports
//! with `since`).
//!
//! Changes come oldest first, each record once at its latest change: an `upsert` with the
//! whole record, or a `delete` (a tombstone: the skill vanished from its index). An anonymous
//! caller sees neither upserts nor deletes of private records.

use indexer::{Caller, MAX_LIMIT};
use store::{RecordStore, StoredRecord};
use time::OffsetDateTime;

use super::Directory;
use crate::cursor;
use crate::error::ApiError;
use crate::wire::{ChangeView, ChangesPage};

/// The most store changes one page reads, visible or not, so that a caller who may see few of
/// them still gets a bounded amount of work per request (and a cursor to go on).
const MAX_SCAN: usize = 20 * MAX_LIMIT;

/// Where a page of changes starts.
#[derive(Debug, Clone)]
pub(crate) enum ChangesFrom {
    /// At the start of the log.
    Start,
    /// Where a page's `next_cursor` left off.
    Cursor(String),
    /// At the first change at or after this time.
    Since(OffsetDateTime),
}

impl Directory {
    /// Returns a page of at most `limit` changes `caller` may see (blocking).
    pub(crate) fn changes(
        &self,
        caller: Caller,
        from: ChangesFrom,
        limit: usize,
    ) -> Result<ChangesPage, ApiError> {
        let store = self.store();
        let last = store.last_seq()?;
        let start = match from {
            ChangesFrom::Cursor(raw) => {
                let position = cursor::decode("changes", &raw)?;
                match position.parse::<u64>() {
                    Ok(seq) if seq <= last => seq,
                    _ => {
                        return Err(ApiError::InvalidCursor(
                            "the cursor points past the end of the change log".to_owned(),
                        ));
                    }
                }
            }
            ChangesFrom::Since(since) => first_after(store, since, last)?,
            ChangesFrom::Start => 0,
        };
        self.read_page(caller, start, limit)
    }
}

/// When a stored record last changed.
pub(crate) fn changed_at(record: &StoredRecord) -> OffsetDateTime {
    record.removed_at.unwrap_or(record.skill.last_changed)
}

/// Returns the sequence number to list after so that every change at or after `since` is
/// listed: a binary search over the log, whose times grow with the sequence numbers.
pub(crate) fn first_after(
    store: &dyn RecordStore,
    since: OffsetDateTime,
    last: u64,
) -> Result<u64, ApiError> {
    let (mut low, mut high) = (0, last);
    while low < high {
        let middle = low + (high - low) / 2;
        let next = store.changes_after(middle, 1)?;
        let at_or_after = next
            .first()
            .is_none_or(|record| changed_at(record) >= since);
        if at_or_after {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    Ok(low)
}

impl Directory {
    /// Reads the changes after `start` that the access policy lets `caller` see, upserts and
    /// deletes alike (blocking).
    fn read_page(&self, caller: Caller, start: u64, limit: usize) -> Result<ChangesPage, ApiError> {
        let mut changes = Vec::new();
        let mut position = start;
        let mut scanned = 0;
        let mut at_end = false;
        'scan: while scanned < MAX_SCAN {
            let batch = self.store().changes_after(position, limit)?;
            let batch_len = batch.len();
            for record in batch {
                position = record.seq;
                scanned += 1;
                if !self.may_see(caller, record.skill.access) {
                    continue;
                }
                changes.push(self.to_change(caller, record)?);
                if changes.len() == limit {
                    break 'scan;
                }
            }
            if batch_len < limit {
                at_end = true;
                break;
            }
        }
        let next_cursor = (!at_end).then(|| cursor::encode("changes", &position.to_string()));
        Ok(ChangesPage {
            changes,
            next_cursor,
        })
    }
}

impl Directory {
    /// Returns a change as the feed shows it: an upsert carries the record, with the copies
    /// of it the caller may see now (blocking).
    fn to_change(&self, caller: Caller, record: StoredRecord) -> Result<ChangeView, ApiError> {
        let at = changed_at(&record);
        Ok(if record.is_tombstone() {
            ChangeView {
                id: record.skill.id,
                change: "delete",
                at,
                record: None,
            }
        } else {
            ChangeView {
                id: record.skill.id.clone(),
                change: "upsert",
                at,
                record: Some(self.record_view(caller, record.skill)?),
            }
        })
    }
}
