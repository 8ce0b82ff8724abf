//! `GET /v1/changes?since=&cursor=&limit=`: the crawl store's change log, so that another
//! directory can mirror this one (the model is the MCP registry's `updated_since` with deleted
//! entries).
//!
//! Changes come oldest first, each record once at its latest change: an `upsert` with the
//! whole record, or a `delete` (a tombstone: the skill vanished from its index). Follow
//! `next_cursor` until it is `null`; to poll later, pass `since` = the `at` of the last change
//! applied (changes at exactly that instant come again, and applying one twice is harmless).
//!
//! An anonymous caller sees neither upserts nor deletes of private records. A mirror of the
//! anonymous view therefore keeps a record that later became private; a mirror that must
//! follow such changes authenticates.

use axum::Json;
use axum::extract::State;
use indexer::{Caller, MAX_LIMIT};
use store::{RecordStore, StoredRecord};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::auth::Auth;
use crate::cursor;
use crate::error::ApiError;
use crate::extract::Params;
use crate::state::AppState;
use crate::wire::{ChangeView, ChangesPage, RecordView};

/// The most store changes one page reads, visible or not, so that a caller who may see few of
/// them still gets a bounded amount of work per request (and a cursor to go on).
const MAX_SCAN: usize = 20 * MAX_LIMIT;

/// `GET /v1/changes`.
pub(super) async fn changes(
    State(state): State<AppState>,
    Auth(caller): Auth,
    params: Params,
) -> Result<Json<ChangesPage>, ApiError> {
    let limit = params.limit(MAX_LIMIT)?;
    let cursor = params.one("cursor")?.map(str::to_owned);
    let since = match params.one("since")? {
        Some(raw) => Some(OffsetDateTime::parse(raw.trim(), &Rfc3339).map_err(|_| {
            ApiError::parameter(
                "since",
                format!("since must be an RFC 3339 time such as 2026-01-31T12:00:00Z, not {raw:?}"),
            )
        })?),
        None => None,
    };
    let page = state
        .blocking(move |state| {
            let store = state.store();
            let last = store.last_seq()?;
            let start = match (cursor, since) {
                (Some(raw), _) => {
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
                (None, Some(since)) => first_after(store, since, last)?,
                (None, None) => 0,
            };
            read_page(state, caller, start, limit)
        })
        .await?;
    Ok(Json(page))
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

/// Reads the changes after `start` that the access policy lets `caller` see, upserts and
/// deletes alike (blocking).
fn read_page(
    state: &AppState,
    caller: Caller,
    start: u64,
    limit: usize,
) -> Result<ChangesPage, ApiError> {
    let mut changes = Vec::new();
    let mut position = start;
    let mut scanned = 0;
    let mut at_end = false;
    'scan: while scanned < MAX_SCAN {
        let batch = state.store().changes_after(position, limit)?;
        let batch_len = batch.len();
        for record in batch {
            position = record.seq;
            scanned += 1;
            if !state.may_see(caller, record.skill.access) {
                continue;
            }
            changes.push(to_change(record));
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

fn to_change(record: StoredRecord) -> ChangeView {
    let at = changed_at(&record);
    if record.is_tombstone() {
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
            record: Some(RecordView::from(record.skill)),
        }
    }
}
