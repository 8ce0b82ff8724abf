//! Keeping the index a derived view of the crawl store's change log.
//!
//! The store numbers every upsert and delete; each index commit records the last number it
//! applied. A sync reads the changes after that number in batches, applies them (a tombstone
//! deletes, anything else upserts) and commits after each batch, so an interrupted sync
//! resumes where it stopped, and deleting the index directory rebuilds it from the store.

use crawler::store::Store;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::writer::IndexWriterHandle;

/// What a [`sync`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SyncStats {
    /// The change sequence number the index was at before.
    pub from_seq: u64,
    /// The change sequence number the index is at now.
    pub to_seq: u64,
    /// Records added or replaced.
    pub upserted: usize,
    /// Records removed (tombstones).
    pub deleted: usize,
    /// Commits made (one per batch).
    pub commits: usize,
    /// True when the index was rebuilt from the start of the change log (a new or
    /// incompatible index, or a store that is not the one the index was built from).
    pub rebuilt: bool,
}

/// Applies the crawl store's changes since the index's last commit.
///
/// Runs synchronously (tantivy work): async callers use `spawn_blocking`.
pub fn sync(store: &Store, writer: &mut IndexWriterHandle) -> Result<SyncStats> {
    let batch = writer.sync_batch.max(1);
    let store_seq = store.last_seq().map_err(Error::Store)?;
    let mut seq = writer.committed_seq();
    let mut stats = SyncStats {
        from_seq: seq,
        to_seq: seq,
        rebuilt: seq == 0,
        ..SyncStats::default()
    };
    if store_seq < seq {
        // The index is ahead of the store: it was built from another store (the data
        // directory was reset). Start again from the store's first change.
        tracing::warn!(
            index_seq = seq,
            store_seq,
            "the index is ahead of the crawl store; rebuilding it"
        );
        writer.clear()?;
        seq = 0;
        stats.rebuilt = true;
        if store_seq == 0 {
            writer.commit(0)?;
            stats.commits += 1;
            stats.to_seq = 0;
            return Ok(stats);
        }
    }
    loop {
        let changes = store.changes_after(seq, batch).map_err(Error::Store)?;
        let Some(last) = changes.last() else {
            break;
        };
        let batch_seq = last.seq;
        for change in &changes {
            if change.is_tombstone() {
                writer.delete(&change.skill.id)?;
                stats.deleted += 1;
            } else {
                writer.upsert(&change.skill)?;
                stats.upserted += 1;
            }
        }
        writer.commit(batch_seq)?;
        stats.commits += 1;
        seq = batch_seq;
        tracing::debug!(seq, changes = changes.len(), "index batch committed");
    }
    if writer.pending() > 0 {
        // Only the clear of a rebuild can be pending here.
        writer.commit(seq)?;
        stats.commits += 1;
    }
    stats.to_seq = seq;
    if stats.upserted + stats.deleted > 0 {
        tracing::info!(
            from_seq = stats.from_seq,
            to_seq = stats.to_seq,
            upserted = stats.upserted,
            deleted = stats.deleted,
            "search index synced"
        );
    }
    Ok(stats)
}
