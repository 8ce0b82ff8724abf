//! The one writer of the index: upserts by id, deletes, and commits that record how far the
//! crawl store's change log has been applied.

use std::collections::HashMap;
use std::sync::Arc;

use formats::{Skill, SkillId};
use serde::{Deserialize, Serialize};
use tantivy::{IndexWriter, TantivyDocument, Term};

use crate::document::to_document;
use crate::error::{Error, Result};
use crate::schema::SCHEMA_VERSION;
use crate::search::SearchIndex;
use crate::semantic::{
    Embed, Source, encode, record_text, reusable, stored_vector, stored_vectors,
};

/// What each commit records in tantivy's commit payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CommitPayload {
    /// The schema version the index was written with.
    pub(crate) schema_version: u32,
    /// The crawl store's change sequence number the index is up to date with.
    pub(crate) seq: u64,
    /// What made the records' vectors: the model and how much of a record it read
    /// ([`crate::semantic::vectors_id`]); `None` when the index holds none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) model: Option<String>,
    /// The identity of the crawl store whose change log the index follows; `None` for an
    /// index written before stores had one (it takes the store's at its next commit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) store: Option<String>,
}

impl CommitPayload {
    /// Reads the payload of an index's last commit; `None` when there is none or it is not
    /// ours.
    pub(crate) fn read(payload: Option<&str>) -> Option<CommitPayload> {
        serde_json::from_str(payload?).ok()
    }
}

/// The index's only writer. Changes become visible to searches at [`commit`](Self::commit);
/// changes not committed when the handle is dropped are discarded.
///
/// tantivy work is synchronous: async callers run these methods in `spawn_blocking`.
pub struct IndexWriterHandle {
    writer: IndexWriter<TantivyDocument>,
    search: SearchIndex,
    committed_seq: u64,
    /// The identity of the store the index follows (see [`CommitPayload::store`]).
    store_identity: Option<String>,
    pending: usize,
    pub(crate) sync_batch: usize,
    /// The unstemmed words analyzer, for the word prefixes of each document.
    words: tantivy::tokenizer::TextAnalyzer,
    /// The model that gives each record its vector, if any.
    model: Option<Arc<dyn Embed>>,
    /// Vectors kept from before the index was cleared or rebuilt, by record id: a record
    /// written again with the same text takes its vector from here, once.
    carried: HashMap<String, Vec<u8>>,
}

impl std::fmt::Debug for IndexWriterHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexWriterHandle")
            .field("committed_seq", &self.committed_seq)
            .field("pending", &self.pending)
            .finish_non_exhaustive()
    }
}

impl IndexWriterHandle {
    pub(crate) fn new(
        writer: IndexWriter<TantivyDocument>,
        search: SearchIndex,
        committed_seq: u64,
        sync_batch: usize,
        model: Option<Arc<dyn Embed>>,
        carried: HashMap<String, Vec<u8>>,
    ) -> IndexWriterHandle {
        let store_identity = search.committed_store_identity();
        IndexWriterHandle {
            writer,
            search,
            committed_seq,
            store_identity,
            pending: 0,
            sync_batch,
            words: crate::tokenizer::words_analyzer(),
            model,
            carried,
        }
    }

    /// Adds `skill`, replacing any record with the same id. With a model, the record's
    /// vector is computed here (a transformer pass: tens of milliseconds), unless the index
    /// holds one made from the same text.
    pub fn upsert(&mut self, skill: &Skill) -> Result<()> {
        let vector = self.vectors(&[skill])?.pop().flatten();
        self.upsert_with(skill, vector)
    }

    /// The stored vectors of `skills`, in order; `None` each without a model. A record
    /// whose stored vector (in the last commit, or carried over from before a rebuild) was
    /// made from the text the model would read now keeps it; the others are computed, on
    /// every core.
    pub(crate) fn vectors(&mut self, skills: &[&Skill]) -> Result<Vec<Option<Vec<u8>>>> {
        let Some(model) = self.model.clone() else {
            return Ok(vec![None; skills.len()]);
        };
        let searcher = self.search.searcher();
        let id_field = self.search.fields().id;
        let mut vectors = Vec::with_capacity(skills.len());
        // The texts the model has to read, with their place in `vectors`.
        let mut to_embed: Vec<(usize, String, Source)> = Vec::new();
        for (at, skill) in skills.iter().enumerate() {
            let text = record_text(skill);
            let source = Source::of(&text);
            let id = skill.id.to_string();
            let stored = match self.carried.remove(&id) {
                Some(bytes) => Some(bytes),
                None => stored_vector(&searcher, id_field, &id)
                    .map_err(Error::index("read a stored vector"))?,
            };
            let kept = stored.and_then(|bytes| reusable(bytes, source, model.dimensions()));
            if kept.is_none() {
                to_embed.push((at, text, source));
            }
            vectors.push(kept);
        }
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let chunk = to_embed.len().div_ceil(threads).max(1);
        let model = &*model;
        let embedded: Vec<(usize, Vec<u8>)> = std::thread::scope(|scope| {
            let parts: Vec<_> = to_embed
                .chunks(chunk)
                .map(|part| {
                    scope.spawn(move || {
                        part.iter()
                            .map(|(at, text, source)| (*at, encode(&model.embed(text), *source)))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            parts
                .into_iter()
                .flat_map(|part| {
                    part.join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        });
        for (at, bytes) in embedded {
            vectors[at] = Some(bytes);
        }
        Ok(vectors)
    }

    /// Forgets the vectors carried over from before a rebuild that no record took back (the
    /// records are gone, or their text changed).
    pub(crate) fn drop_carried_vectors(&mut self) {
        self.carried = HashMap::new();
    }

    /// Adds `skill` with its stored vector, if any (see [`Self::vectors`]).
    pub(crate) fn upsert_with(&mut self, skill: &Skill, vector: Option<Vec<u8>>) -> Result<()> {
        let fields = self.search.fields();
        let mut doc = to_document(skill, fields, &mut self.words)?;
        if let Some(vector) = vector {
            doc.add_bytes(fields.vector, &vector);
        }
        self.writer
            .delete_term(Term::from_field_text(fields.id, &skill.id.to_string()));
        self.writer
            .add_document(doc)
            .map_err(Error::index("add a document"))?;
        self.pending += 1;
        Ok(())
    }

    /// Removes the record with `id`, if there is one.
    pub fn delete(&mut self, id: &SkillId) -> Result<()> {
        let fields = self.search.fields();
        self.writer
            .delete_term(Term::from_field_text(fields.id, &id.to_string()));
        self.pending += 1;
        Ok(())
    }

    /// Removes every record (before a rebuild from the change log).
    pub fn clear(&mut self) -> Result<()> {
        if self.model.is_some() {
            // The records come back with the next sync: those whose text is unchanged keep
            // their vectors.
            self.carried = stored_vectors(&self.search.searcher())
                .map_err(Error::index("read the stored vectors"))?;
        }
        self.writer
            .delete_all_documents()
            .map_err(Error::index("delete all documents"))?;
        self.pending += 1;
        Ok(())
    }

    /// Commits the changes made since the last commit, recording that the index is up to
    /// date with the crawl store's change `seq`, and makes them visible to every
    /// [`SearchIndex`] of this index.
    pub fn commit(&mut self, seq: u64) -> Result<()> {
        let payload = serde_json::to_string(&CommitPayload {
            schema_version: SCHEMA_VERSION,
            seq,
            model: self.model.as_deref().map(crate::semantic::vectors_id),
            store: self.store_identity.clone(),
        })
        .map_err(|error| Error::CorruptRecord {
            id: "commit payload".to_owned(),
            message: error.to_string(),
        })?;
        let mut prepared = self
            .writer
            .prepare_commit()
            .map_err(Error::index("prepare a commit"))?;
        prepared.set_payload(&payload);
        prepared.commit().map_err(Error::index("commit"))?;
        self.committed_seq = seq;
        self.pending = 0;
        self.search.reload()?;
        Ok(())
    }

    /// Returns the change sequence number of the last commit (0 for a new index).
    pub fn committed_seq(&self) -> u64 {
        self.committed_seq
    }

    /// Returns the identity of the store the index follows, as its last commit recorded it.
    pub fn store_identity(&self) -> Option<&str> {
        self.store_identity.as_deref()
    }

    /// Records the identity of the store the index follows, from the next commit on.
    pub fn set_store_identity(&mut self, identity: String) {
        self.store_identity = Some(identity);
    }

    /// Returns how many upserts and deletes wait for the next commit.
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// Discards uncommitted changes, waits for the background segment merges to finish and
    /// releases the writer lock. Dropping the handle also releases the lock, without
    /// waiting for merges.
    pub fn finish(self) -> Result<()> {
        self.writer
            .wait_merging_threads()
            .map_err(Error::index("finish merging"))
    }

    /// Returns a reader of this index; it sees each commit as soon as it is made.
    pub fn search_index(&self) -> SearchIndex {
        self.search.clone()
    }
}

/// Commits `payload` as the index's last commit payload, as another release could have
/// written it (tests of what opening such an index does).
#[cfg(test)]
pub(crate) fn overwrite_payload(path: &std::path::Path, payload: &str) {
    let index = tantivy::Index::open_in_dir(path).unwrap();
    let mut writer: tantivy::IndexWriter = index.writer(15_000_000).unwrap();
    let mut commit = writer.prepare_commit().unwrap();
    commit.set_payload(payload);
    commit.commit().unwrap();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::tests::skill;
    use crate::{Caller, Index, IndexConfig};

    #[test]
    fn upsert_replaces_and_delete_removes() {
        let Index { mut writer, search } = Index::create_in_ram(IndexConfig::default()).unwrap();
        assert_eq!(writer.committed_seq(), 0);
        let mut first = skill("a.test", "pdf", "PDF", "First text.");
        writer.upsert(&first).unwrap();
        writer
            .upsert(&skill("a.test", "csv", "CSV", "Tables."))
            .unwrap();
        assert_eq!(writer.pending(), 2);
        // Nothing is visible before the commit.
        assert_eq!(search.num_docs(), 0);
        writer.commit(2).unwrap();
        assert_eq!(search.num_docs(), 2);
        assert_eq!(search.committed_seq().unwrap(), 2);

        first.description = "Second text.".to_owned();
        writer.upsert(&first).unwrap();
        writer.commit(3).unwrap();
        assert_eq!(search.num_docs(), 2);
        let got = search
            .get("a.test/pdf", Caller::Anonymous)
            .unwrap()
            .unwrap();
        assert_eq!(got, first);

        writer.delete(&first.id).unwrap();
        writer.commit(4).unwrap();
        assert_eq!(search.num_docs(), 1);
        assert!(
            search
                .get("a.test/pdf", Caller::Anonymous)
                .unwrap()
                .is_none()
        );
        assert_eq!(writer.committed_seq(), 4);

        writer.clear().unwrap();
        writer.commit(5).unwrap();
        assert_eq!(search.num_docs(), 0);
    }

    #[test]
    fn payloads_that_are_not_ours_read_as_none() {
        assert_eq!(CommitPayload::read(None), None);
        assert_eq!(CommitPayload::read(Some("garbage")), None);
        assert_eq!(
            CommitPayload::read(Some(r#"{"schema_version":1,"seq":7}"#)),
            Some(CommitPayload {
                schema_version: 1,
                seq: 7,
                model: None,
                store: None,
            })
        );
        assert_eq!(
            CommitPayload::read(Some(r#"{"schema_version":5,"seq":7,"model":"m"}"#))
                .and_then(|payload| payload.model),
            Some("m".to_owned())
        );
    }
}
