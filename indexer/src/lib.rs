//! The search index over canonical skill records, built with tantivy.
//!
//! The index is a derived view of the crawl store: [`sync`] applies the store's change log to
//! it, and deleting the index directory rebuilds it. It answers searches in relevance tiers
//! (exact name, then name or title prefix, then BM25 over weighted fields), with filters,
//! facet counts, snippets and pagination, and it enforces the access policy itself: a
//! `private` record never reaches an anonymous [`Caller`], not in hits, totals, facet counts,
//! [`SearchIndex::get`] or [`SearchIndex::list`].
//!
//! # Usage
//!
//! ```no_run
//! # fn main() -> indexer::Result<()> {
//! use indexer::{Caller, Index, IndexConfig, SearchRequest};
//!
//! let Index { mut writer, search } =
//!     Index::open_or_create("data/index".as_ref(), IndexConfig::default())?;
//! // After each crawl: indexer::sync(&store, &mut writer)?;
//! let results = search.search(&SearchRequest::new("extract text from pdf", Caller::Anonymous))?;
//! println!("{}", serde_json::to_string(&results).unwrap());
//! # Ok(()) }
//! ```
//!
//! Everything here is synchronous: async callers run it in `spawn_blocking`.
//!
//! # Layout
//!
//! - [`tokenizer`]: words and CJK bigrams; the stemmed and unstemmed analyzers; name keys.
//! - `schema`: the fields and [`SCHEMA_VERSION`].
//! - `document`: [`Skill`](formats::Skill) to index document and back (the record is stored
//!   whole, as JSON).
//! - `writer`: [`IndexWriterHandle`], the one writer: upsert, delete, commit with the store's
//!   change sequence number.
//! - `sync`: [`sync`], the store's change log into the index.
//! - `query`: user text to a parsed query and to tantivy queries; never an error.
//! - `collector`: one pass that ranks by tier and score, counts, and computes facets, one
//!   hit per cluster of copies.
//! - `clusters`: the copies of each skill (records with the same content fingerprint) in an
//!   index snapshot, and which copy each cluster shows.
//! - `ordinals`: the filter and facet columns of each segment, decoded once for it.
//! - `segment_cache`: what searches decode from a segment once and keep while it lives.
//! - `snippet`: snippets: plain text extracts and the ranges of the matched words.
//! - `request`: what a caller asks: [`SearchRequest`], [`Filters`], [`ListRequest`],
//!   [`Caller`].
//! - `results`: what the index answers: [`SearchResults`], [`Snippet`], [`ListPage`].
//! - `search`: [`SearchIndex`]: search, get, list.
//! - [`eval`]: relevance metrics (nDCG, MRR) and the judged queries format.
//!
//! # Invariants
//!
//! - No network I/O, and nothing here knows about HTTP.
//! - No presentation: a snippet is plain text and the ranges of its matches; HTML and
//!   terminal highlighting are made by the callers.
//! - Exactly one [`IndexWriterHandle`] exists per index directory (tantivy's lock enforces it
//!   across processes); readers are [`SearchIndex`] clones.
//! - Any user text is a valid query: search errors only on internal failures.
//! - A `private` record is visible to [`Caller::Authenticated`] only.
//! - A search shows one hit per cluster of copies, and its total and facets count clusters:
//!   a facet value's count is the total that choosing it gives.

mod address;
mod clusters;
mod collector;
mod document;
pub mod embed;
mod error;
pub mod eval;
mod ordinals;
mod query;
mod request;
mod results;
mod schema;
mod search;
mod segment_cache;
pub mod semantic;
mod snippet;
mod sync;
mod synonyms;
pub mod tokenizer;
mod writer;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

pub use clusters::MAX_COPIES;
pub use error::{Error, Result};
pub use query::{FIELD_WEIGHTS, FieldWeights, MAX_QUERY_CHARS, informative_words};
pub use request::{
    ANY_RISK, ANY_VERDICT, Caller, DEFAULT_LIMIT, DEFAULT_RISKS, DEFAULT_VERDICTS, Filters,
    ListRequest, MAX_FACET_VALUES, MAX_LIMIT, MAX_OFFSET, SearchRequest,
};
pub use results::{
    FacetCounts, Facets, ListPage, Listed, MAX_LISTED_CHARS, SearchHit, SearchResults, Snippet,
};
pub use schema::SCHEMA_VERSION;
pub use search::SearchIndex;
pub use semantic::{Embed, record_text};
pub use sync::{SyncProgress, SyncStats, sync, sync_observed};
pub use writer::IndexWriterHandle;

use crate::writer::CommitPayload;

/// The index directory inside the data directory.
pub const INDEX_DIR: &str = "index";
/// The writer's default memory budget.
pub const DEFAULT_WRITER_MEMORY_BYTES: usize = 64 * 1024 * 1024;
/// How many store changes a sync applies per commit by default.
pub const DEFAULT_SYNC_BATCH: usize = 5_000;

/// How to open the index for writing.
#[derive(Clone)]
pub struct IndexConfig {
    /// The writer's memory budget, split among its threads (tantivy needs at least 15 MB per
    /// thread).
    pub writer_memory_bytes: usize,
    /// Indexing threads; `None` lets tantivy choose (one per core, at most 8).
    pub writer_threads: Option<usize>,
    /// How many store changes [`sync`] applies per commit.
    pub sync_batch: usize,
    /// The sentence-embedding model of semantic retrieval ([`semantic`]): every record
    /// written gets its vector, and the reader of the [`Index`] fuses the nearest records in
    /// meaning with the word ranking. An index written with another model, or without one,
    /// is rebuilt. `None` (the default): words alone.
    pub model: Option<Arc<dyn Embed>>,
}

impl std::fmt::Debug for IndexConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexConfig")
            .field("writer_memory_bytes", &self.writer_memory_bytes)
            .field("writer_threads", &self.writer_threads)
            .field("sync_batch", &self.sync_batch)
            .field("model", &self.model.as_ref().map(|model| model.model_id()))
            .finish()
    }
}

impl Default for IndexConfig {
    fn default() -> IndexConfig {
        IndexConfig {
            writer_memory_bytes: DEFAULT_WRITER_MEMORY_BYTES,
            writer_threads: None,
            sync_batch: DEFAULT_SYNC_BATCH,
            model: None,
        }
    }
}

/// An index opened for writing: its one writer and a reader that sees every commit.
#[derive(Debug)]
pub struct Index {
    /// The writer; keep exactly one.
    pub writer: IndexWriterHandle,
    /// A reader; clone it freely (it is `Send + Sync` and cheap to clone).
    pub search: SearchIndex,
}

impl Index {
    /// Opens the index in `dir`, creating it (and `dir`) when there is none.
    ///
    /// An index written with another [`SCHEMA_VERSION`] (or another schema), or with another
    /// model than [`IndexConfig::model`] (or with one when it is `None`, or without one when
    /// it is not), is deleted and created anew, empty; the next [`sync`] rebuilds it from the
    /// crawl store. When only the schema differs, the old index's vectors are read first and
    /// the rebuild stores them again for records whose text is unchanged. Fails with
    /// [`Error::Locked`] when another writer holds the index.
    pub fn open_or_create(dir: &Path, config: IndexConfig) -> Result<Index> {
        let io_error = |source: std::io::Error| Error::Index {
            operation: "create the index directory",
            source: tantivy::TantivyError::from(source),
        };
        std::fs::create_dir_all(dir).map_err(io_error)?;
        let (schema, _) = schema::build();
        let (index, carried) = if search::has_index(dir) {
            let existing = tantivy::Index::open_in_dir(dir).map_err(Error::index("open"))?;
            let payload = existing
                .load_metas()
                .map_err(Error::index("read the index metadata"))?
                .payload;
            let payload = CommitPayload::read(payload.as_deref());
            let version = payload.as_ref().map(|p| p.schema_version);
            let written_with = payload.and_then(|p| p.model);
            let model = config.model.as_deref().map(crate::semantic::vectors_id);
            let same_schema =
                existing.schema() == schema && version.is_none_or(|v| v == SCHEMA_VERSION);
            // A new index has no payload; any other was written with a model or without.
            let same_model = version.is_none() || written_with == model;
            if same_schema && same_model {
                (Some(existing), HashMap::new())
            } else {
                // Another schema, the same model: the vectors are still good for the
                // records whose text is unchanged.
                let carried = if same_model && model.is_some() {
                    carry_vectors(&existing)
                } else {
                    HashMap::new()
                };
                if same_schema {
                    tracing::warn!(
                        dir = %dir.display(),
                        found = written_with.as_deref().unwrap_or("no model"),
                        expected = model.as_deref().unwrap_or("no model"),
                        "the index's vectors were made by another model; rebuilding it"
                    );
                } else {
                    tracing::warn!(
                        dir = %dir.display(),
                        found = version.unwrap_or(0),
                        expected = SCHEMA_VERSION,
                        "the index was written with another schema; rebuilding it"
                    );
                }
                drop(existing);
                std::fs::remove_dir_all(dir).map_err(io_error)?;
                std::fs::create_dir_all(dir).map_err(io_error)?;
                (None, carried)
            }
        } else {
            (None, HashMap::new())
        };

        let index = match index {
            Some(index) => index,
            None => tantivy::Index::create_in_dir(dir, schema).map_err(Error::index("create"))?,
        };
        Index::from_tantivy(index, config, Some(dir), carried)
    }

    /// Creates an empty index in memory, for tests and tools.
    pub fn create_in_ram(config: IndexConfig) -> Result<Index> {
        let (schema, _) = schema::build();
        Index::from_tantivy(
            tantivy::Index::create_in_ram(schema),
            config,
            None,
            HashMap::new(),
        )
    }

    fn from_tantivy(
        index: tantivy::Index,
        config: IndexConfig,
        dir: Option<&Path>,
        carried: HashMap<String, Vec<u8>>,
    ) -> Result<Index> {
        let mut search = SearchIndex::from_tantivy(index.clone())?;
        let writer = match config.writer_threads {
            Some(threads) => {
                index.writer_with_num_threads(threads.max(1), config.writer_memory_bytes)
            }
            None => index.writer(config.writer_memory_bytes),
        }
        .map_err(|error| match error {
            tantivy::TantivyError::LockFailure(..) => Error::Locked {
                dir: dir.map(Path::to_owned).unwrap_or_default(),
            },
            source => Error::Index {
                operation: "open the writer",
                source,
            },
        })?;
        let committed_seq = search.committed_seq()?;
        if let Some(model) = &config.model {
            // The index is new, rebuilt, or was written with this model.
            search.set_model(Arc::clone(model));
        }
        Ok(Index {
            writer: IndexWriterHandle::new(
                writer,
                search.clone(),
                committed_seq,
                config.sync_batch,
                config.model,
                carried,
            ),
            search,
        })
    }
}

/// The vectors of an index about to be rebuilt for another schema, by record id (see
/// [`IndexWriterHandle`]'s reuse of vectors). An index that cannot be read carries nothing
/// over: the rebuild then runs the model on every record, as it would anyway.
fn carry_vectors(index: &tantivy::Index) -> HashMap<String, Vec<u8>> {
    let searcher = match index.reader() {
        Ok(reader) => reader.searcher(),
        Err(error) => {
            tracing::warn!(%error, "the old index cannot be read; its vectors are made again");
            return HashMap::new();
        }
    };
    match semantic::stored_vectors(&searcher) {
        Ok(vectors) => {
            tracing::info!(
                vectors = vectors.len(),
                "vectors carried over to the rebuilt index"
            );
            vectors
        }
        Err(error) => {
            tracing::warn!(%error, "the old index's vectors cannot be read; they are made again");
            HashMap::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::tests::skill;

    #[test]
    fn an_index_reopens_with_its_records_and_sequence() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index");
        assert!(matches!(
            SearchIndex::open(&path),
            Err(Error::NoIndex { .. })
        ));
        {
            let Index { mut writer, .. } =
                Index::open_or_create(&path, IndexConfig::default()).unwrap();
            writer
                .upsert(&skill("a.test", "one", "One", "First."))
                .unwrap();
            writer.commit(42).unwrap();
            // One writer at a time.
            let second = Index::open_or_create(&path, IndexConfig::default());
            assert!(matches!(second, Err(Error::Locked { .. })), "{second:?}");
            // Readers need no lock.
            let reader = SearchIndex::open(&path).unwrap();
            assert_eq!(reader.num_docs(), 1);
        }
        let Index { writer, search } =
            Index::open_or_create(&path, IndexConfig::default()).unwrap();
        assert_eq!(writer.committed_seq(), 42);
        assert_eq!(search.num_docs(), 1);
        assert_eq!(
            SearchIndex::open(&path).unwrap().committed_seq().unwrap(),
            42
        );
    }

    #[test]
    fn an_index_of_another_schema_version_is_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index");
        {
            let Index { mut writer, .. } =
                Index::open_or_create(&path, IndexConfig::default()).unwrap();
            writer
                .upsert(&skill("a.test", "one", "One", "First."))
                .unwrap();
            writer.commit(5).unwrap();
        }
        // Pretend a future version wrote it.
        crate::writer::overwrite_payload(&path, r#"{"schema_version":999,"seq":5}"#);
        let error = SearchIndex::open(&path).unwrap_err();
        assert!(
            matches!(error, Error::IncompatibleSchema { found: 999, .. }),
            "{error}"
        );
        let Index { writer, search } =
            Index::open_or_create(&path, IndexConfig::default()).unwrap();
        assert_eq!((writer.committed_seq(), search.num_docs()), (0, 0));
    }

    #[test]
    fn handles_are_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<SearchIndex>();
        assert_send_sync::<IndexWriterHandle>();
    }
}
