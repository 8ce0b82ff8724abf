//! Keeping the index a derived view of the crawl store's change log.
//!
//! The store numbers every upsert and delete; each index commit records the last number it
//! applied. A sync reads the changes after that number a page at a time, applies them (a
//! tombstone deletes, anything else upserts) and commits once a batch's worth of changes or
//! of text is waiting, so an interrupted sync resumes where it stopped, deleting the index
//! directory rebuilds it from the store, and what a sync holds in memory is bounded whatever
//! the number of records (the records of a page, the documents since the last commit).

use serde::Serialize;
use store::Store;

use crate::error::{Error, Result};
use crate::writer::IndexWriterHandle;

/// The most changes read from the store at once.
const PAGE: usize = 256;
/// The most record text (bodies and descriptions, roughly) written between two commits: the
/// index writer holds every document until its commit.
pub(crate) const SYNC_BATCH_BYTES: usize = 2 * 1024 * 1024;

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
    let store_seq = store.blocking().last_seq().map_err(Error::Store)?;
    let identity = store.blocking().identity().map_err(Error::Store)?;
    let mut seq = writer.committed_seq();
    let mut stats = SyncStats {
        from_seq: seq,
        to_seq: seq,
        rebuilt: seq == 0,
        ..SyncStats::default()
    };
    let another_store = writer
        .store_identity()
        .is_some_and(|followed| followed != identity);
    writer.set_store_identity(identity);
    if another_store && seq > 0 {
        // The store is not the one the index was built from (reset, or restored from a dump):
        // its change numbers tell another history. Start again from its first change.
        tracing::warn!(
            index_seq = seq,
            store_seq,
            "the crawl store is not the one the index followed; rebuilding the index"
        );
        writer.clear()?;
        seq = 0;
        stats.rebuilt = true;
    } else if store_seq < seq {
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
            writer.drop_carried_vectors();
            writer.commit(0)?;
            stats.commits += 1;
            stats.to_seq = 0;
            return Ok(stats);
        }
    }
    // Changes applied and text written since the last commit.
    let (mut waiting, mut waiting_bytes) = (0usize, 0usize);
    loop {
        let changes = store
            .blocking()
            .changes_after(seq, batch.min(PAGE))
            .map_err(Error::Store)?;
        let Some(last) = changes.last() else {
            break;
        };
        let page_seq = last.seq;
        // With a model, the page's vectors are computed first, on every core.
        let upserts: Vec<&formats::Skill> = changes
            .iter()
            .filter(|change| !change.is_tombstone())
            .map(|change| &change.skill)
            .collect();
        let mut vectors = writer.vectors(&upserts)?.into_iter();
        for change in &changes {
            if change.is_tombstone() {
                writer.delete(&change.skill.id)?;
                stats.deleted += 1;
            } else {
                writer.upsert_with(&change.skill, vectors.next().flatten())?;
                stats.upserted += 1;
                waiting_bytes += change.skill.body.len() + change.skill.description.len();
            }
        }
        waiting += changes.len();
        seq = page_seq;
        if waiting >= batch || waiting_bytes >= SYNC_BATCH_BYTES {
            writer.commit(seq)?;
            stats.commits += 1;
            tracing::debug!(seq, changes = waiting, "index batch committed");
            (waiting, waiting_bytes) = (0, 0);
        }
    }
    if waiting > 0 {
        writer.commit(seq)?;
        stats.commits += 1;
        tracing::debug!(seq, changes = waiting, "index batch committed");
    }
    if writer.pending() > 0 {
        // Only the clear of a rebuild can be pending here.
        writer.commit(seq)?;
        stats.commits += 1;
    }
    writer.drop_carried_vectors();
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

#[cfg(test)]
mod tests {
    use formats::Skill;
    use store::DomainStatus;
    use time::OffsetDateTime;
    use time::macros::datetime;
    use url::Url;

    use super::*;
    use crate::document::tests::skill;
    use crate::{Caller, Index, IndexConfig};

    const T1: OffsetDateTime = datetime!(2026-11-01 10:00 UTC);
    const T2: OffsetDateTime = datetime!(2026-11-02 10:00 UTC);

    fn status(now: OffsetDateTime) -> DomainStatus {
        DomainStatus {
            requests: 1,
            ..DomainStatus::read_ok(
                "a.test".parse().unwrap(),
                "https://a.test".to_owned(),
                vec![formats::Format::AgentSkills],
                vec![Url::parse("https://a.test/.well-known/skills/index.json").unwrap()],
                0,
                now,
            )
        }
    }

    fn records(names: &[&str], description: &str) -> Vec<Skill> {
        names
            .iter()
            .map(|name| skill("a.test", name, name, description))
            .collect()
    }

    #[test]
    fn the_index_follows_the_change_log() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let config = IndexConfig {
            sync_batch: 2,
            ..IndexConfig::default()
        };
        let Index { mut writer, search } =
            Index::open_or_create(&dir.path().join("index"), config.clone()).unwrap();

        // Nothing to do on an empty store.
        let stats = sync(&store, &mut writer).unwrap();
        assert_eq!((stats.upserted, stats.deleted, stats.commits), (0, 0, 0));

        store
            .blocking()
            .apply_domain(
                &status(T1),
                records(&["alpha", "beta", "gamma"], "First."),
                T1,
            )
            .unwrap();
        let stats = sync(&store, &mut writer).unwrap();
        assert_eq!(
            stats,
            SyncStats {
                from_seq: 0,
                to_seq: 3,
                upserted: 3,
                deleted: 0,
                commits: 2,
                rebuilt: true,
            }
        );
        assert_eq!(search.num_docs(), 3);

        // beta changes, gamma vanishes (a tombstone).
        store
            .blocking()
            .apply_domain(&status(T2), records(&["alpha", "beta"], "Second."), T2)
            .unwrap();
        let stats = sync(&store, &mut writer).unwrap();
        assert_eq!((stats.from_seq, stats.to_seq), (3, 6));
        assert_eq!(
            (stats.upserted, stats.deleted, stats.rebuilt),
            (2, 1, false)
        );
        assert_eq!(search.num_docs(), 2);
        assert!(
            search
                .get("a.test/gamma", Caller::Authenticated)
                .unwrap()
                .is_none()
        );
        let beta = search
            .get("a.test/beta", Caller::Anonymous)
            .unwrap()
            .unwrap();
        assert_eq!(
            beta,
            store
                .blocking()
                .record("a.test/beta")
                .unwrap()
                .unwrap()
                .skill
        );

        // Up to date: no commit.
        let stats = sync(&store, &mut writer).unwrap();
        assert_eq!((stats.commits, stats.from_seq, stats.to_seq), (0, 6, 6));

        // The sequence number survives a restart.
        drop(writer);
        let Index { mut writer, .. } =
            Index::open_or_create(&dir.path().join("index"), config).unwrap();
        assert_eq!(writer.committed_seq(), 6);
        assert_eq!(sync(&store, &mut writer).unwrap().commits, 0);
    }

    /// An index follows one store: given another one (a store reset, or restored from a dump
    /// whose change numbers tell another history), it starts again from its first change
    /// rather than take the other history's later changes for the rest of its own.
    // See: the frontier issue, "a replica that was down while the store was restored from a
    // dump syncs only the change numbers it has not seen".
    #[test]
    fn an_index_built_from_another_store_is_rebuilt() {
        let first = tempfile::tempdir().unwrap();
        let second = tempfile::tempdir().unwrap();
        let index_dir = tempfile::tempdir().unwrap();
        let store = Store::open(first.path()).unwrap();
        store
            .blocking()
            .apply_domain(
                &status(T1),
                records(&["alpha", "beta", "gamma"], "First."),
                T1,
            )
            .unwrap();
        let Index { mut writer, search } =
            Index::open_or_create(index_dir.path(), IndexConfig::default()).unwrap();
        sync(&store, &mut writer).unwrap();
        assert_eq!(search.num_docs(), 3);
        assert_eq!(writer.committed_seq(), 3);

        // Another store, whose change log is longer and holds other records.
        let other = Store::open(second.path()).unwrap();
        other
            .blocking()
            .apply_domain(
                &status(T2),
                records(&["delta", "epsilon", "zeta", "eta"], "Other."),
                T2,
            )
            .unwrap();
        let stats = sync(&other, &mut writer).unwrap();
        assert!(stats.rebuilt);
        assert_eq!((stats.from_seq, stats.to_seq, stats.upserted), (3, 4, 4));
        assert_eq!(search.num_docs(), 4);
        assert!(
            search
                .get("a.test/alpha", Caller::Authenticated)
                .unwrap()
                .is_none()
        );

        // The same store again: nothing to do.
        let stats = sync(&other, &mut writer).unwrap();
        assert!(!stats.rebuilt);
        assert_eq!(stats.commits, 0);
    }

    /// Counts the texts it embeds.
    struct Counting(crate::semantic::tests::Concepts, std::sync::Mutex<usize>);

    impl crate::Embed for Counting {
        fn embed(&self, text: &str) -> Vec<f32> {
            *self.1.lock().unwrap() += 1;
            self.0.embed(text)
        }
        fn dimensions(&self) -> usize {
            self.0.dimensions()
        }
        fn model_id(&self) -> String {
            self.0.model_id()
        }
    }

    #[test]
    fn with_a_model_every_record_synced_gets_its_vector_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let model = std::sync::Arc::new(Counting(
            crate::semantic::tests::Concepts("concepts"),
            std::sync::Mutex::new(0),
        ));
        let config = IndexConfig {
            sync_batch: 2,
            model: Some(model.clone()),
            ..IndexConfig::default()
        };
        let Index { mut writer, search } =
            Index::open_or_create(&dir.path().join("index"), config).unwrap();
        store
            .blocking()
            .apply_domain(
                &status(T1),
                records(&["alpha", "beta", "gamma"], "Bills and receipts."),
                T1,
            )
            .unwrap();
        let first = sync(&store, &mut writer).unwrap();
        assert_eq!((first.upserted, *model.1.lock().unwrap()), (3, 3));
        // gamma vanishes (a tombstone); only records the store changed are embedded again.
        store
            .blocking()
            .apply_domain(
                &status(T2),
                records(&["alpha", "beta"], "Bills and receipts."),
                T2,
            )
            .unwrap();
        let second = sync(&store, &mut writer).unwrap();
        assert_eq!(second.deleted, 1);
        assert_eq!(*model.1.lock().unwrap(), 3 + second.upserted);
        // No word of the query is in a record; every record left is found by its vector.
        let request = crate::SearchRequest::new("my invoice pile", Caller::Anonymous);
        let results = search.search(&request).unwrap();
        let mut found: Vec<String> = results.hits.iter().map(|hit| hit.id.to_string()).collect();
        found.sort();
        assert_eq!(found, ["a.test/alpha", "a.test/beta"]);
        assert_eq!(
            search.written_with().unwrap(),
            Some(format!(
                "concepts; {} body characters",
                crate::semantic::BODY_CHARS
            ))
        );
    }

    /// Finds by meaning alone (no word of the query is in any record).
    fn found_by_vector(search: &crate::SearchIndex) -> Vec<String> {
        let request = crate::SearchRequest::new("my invoice pile", Caller::Anonymous);
        let mut found: Vec<String> = search
            .search(&request)
            .unwrap()
            .hits
            .iter()
            .map(|hit| hit.id.to_string())
            .collect();
        found.sort();
        found
    }

    #[test]
    fn a_record_written_again_with_the_same_text_keeps_its_vector() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index");
        let store = Store::open(dir.path()).unwrap();
        let model = std::sync::Arc::new(Counting(
            crate::semantic::tests::Concepts("concepts"),
            std::sync::Mutex::new(0),
        ));
        // One change per commit: a rebuild's later batches no longer see the old records
        // in the index, so what they reuse must have been carried over.
        let config = IndexConfig {
            sync_batch: 1,
            model: Some(model.clone()),
            ..IndexConfig::default()
        };
        // Texts the model read (records, and the queries of `found_by_vector`).
        let embedded = || *model.1.lock().unwrap();
        let Index { mut writer, search } = Index::open_or_create(&path, config.clone()).unwrap();
        store
            .blocking()
            .apply_domain(
                &status(T1),
                records(&["alpha", "beta"], "Bills and receipts."),
                T1,
            )
            .unwrap();
        sync(&store, &mut writer).unwrap();
        assert_eq!(embedded(), 2);

        // alpha changes where the model does not read (its version), beta where it does.
        let mut changed = records(&["alpha", "beta"], "Bills and receipts.");
        changed[0].version = Some("2.0.0".to_owned());
        changed[1].description = "Bills, receipts and invoices.".to_owned();
        store
            .blocking()
            .apply_domain(&status(T2), changed, T2)
            .unwrap();
        let stats = sync(&store, &mut writer).unwrap();
        assert_eq!(
            (stats.upserted, embedded()),
            (2, 3),
            "only beta is read again"
        );
        assert_eq!(found_by_vector(&search), ["a.test/alpha", "a.test/beta"]);

        // Rebuilt for another schema with the same model: every vector is carried over.
        drop((writer, search));
        crate::writer::overwrite_payload(
            &path,
            &format!(
                r#"{{"schema_version":999,"seq":4,"model":"concepts; {} body characters"}}"#,
                crate::semantic::BODY_CHARS
            ),
        );
        let Index { mut writer, search } = Index::open_or_create(&path, config.clone()).unwrap();
        assert_eq!(search.num_docs(), 0, "rebuilt");
        let before = embedded();
        let stats = sync(&store, &mut writer).unwrap();
        assert_eq!((stats.upserted, embedded() - before), (2, 0));
        assert_eq!(found_by_vector(&search), ["a.test/alpha", "a.test/beta"]);

        // The store starts again (the index is ahead of it): cleared, and the records that
        // come back unchanged keep their vectors; a new one is read.
        let again = Store::open(&dir.path().join("again")).unwrap();
        // gamma first: alpha comes in a later batch, after the clear is committed.
        let mut back = records(&["gamma", "alpha"], "Bills and receipts.");
        back[1].version = Some("2.0.0".to_owned());
        again
            .blocking()
            .apply_domain(&status(T2), back, T2)
            .unwrap();
        let before = embedded();
        let stats = sync(&again, &mut writer).unwrap();
        assert!(stats.rebuilt);
        assert_eq!(
            (stats.upserted, embedded() - before),
            (2, 1),
            "only gamma is read"
        );
        assert_eq!(found_by_vector(&search), ["a.test/alpha", "a.test/gamma"]);

        // Another model: nothing is carried over.
        drop((writer, search));
        let other = std::sync::Arc::new(Counting(
            crate::semantic::tests::Concepts("other concepts"),
            std::sync::Mutex::new(0),
        ));
        let Index { mut writer, .. } = Index::open_or_create(
            &path,
            IndexConfig {
                model: Some(other.clone()),
                ..config
            },
        )
        .unwrap();
        sync(&again, &mut writer).unwrap();
        assert_eq!(*other.1.lock().unwrap(), 2);
    }

    #[test]
    fn a_store_behind_the_index_means_a_rebuild() {
        let dir = tempfile::tempdir().unwrap();
        let Index { mut writer, search } =
            Index::open_or_create(&dir.path().join("index"), IndexConfig::default()).unwrap();
        let old = Store::open(&dir.path().join("old")).unwrap();
        old.blocking()
            .apply_domain(&status(T1), records(&["a", "b", "c"], "Old."), T1)
            .unwrap();
        sync(&old, &mut writer).unwrap();
        assert_eq!(search.num_docs(), 3);

        // A new, shorter store: the index is rebuilt from it.
        let new = Store::open(&dir.path().join("new")).unwrap();
        new.blocking()
            .apply_domain(&status(T2), records(&["z"], "New."), T2)
            .unwrap();
        let stats = sync(&new, &mut writer).unwrap();
        assert!(stats.rebuilt);
        assert_eq!((stats.to_seq, stats.upserted), (1, 1));
        assert_eq!(search.num_docs(), 1);
        assert!(search.get("a.test/z", Caller::Anonymous).unwrap().is_some());

        // An empty store empties the index.
        let empty = Store::open(&dir.path().join("empty")).unwrap();
        let stats = sync(&empty, &mut writer).unwrap();
        assert!(stats.rebuilt);
        assert_eq!(search.num_docs(), 0);
        assert_eq!(writer.committed_seq(), 0);
    }
}
