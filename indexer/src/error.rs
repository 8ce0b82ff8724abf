//! The crate's error type. User text never causes one: searches treat any query as valid.

use std::path::PathBuf;

use store::StoreError;

/// What went wrong, phrased as what the caller can do about it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The query is longer than [`MAX_QUERY_CHARS`](crate::MAX_QUERY_CHARS): the caller
    /// should shorten it (it is refused rather than read in part).
    #[error("the query is {chars} characters long, more than {limit}")]
    QueryTooLong {
        /// The query's length in characters.
        chars: usize,
        /// The limit.
        limit: usize,
    },
    /// There is no index in the directory: build one (`skillscout crawl`) first.
    #[error("no index in {dir}")]
    NoIndex {
        /// The index directory.
        dir: PathBuf,
    },
    /// Another writer (in this or another process) holds the index; only one may exist.
    #[error("the index in {dir} is locked by another writer")]
    Locked {
        /// The index directory.
        dir: PathBuf,
    },
    /// The index was written by another version of skillscout and must be rebuilt from the
    /// crawl store (opening it for writing does that).
    #[error("the index in {dir} has schema version {found}, this build needs {expected}")]
    IncompatibleSchema {
        /// The index directory.
        dir: PathBuf,
        /// The version found (0 when none could be read).
        found: u32,
        /// [`SCHEMA_VERSION`](crate::SCHEMA_VERSION).
        expected: u32,
    },
    /// The index's vectors were made by another sentence-embedding model than the one a
    /// search would use, or by none: write the index with the model first (opening it for
    /// writing with the model rebuilds it).
    #[error(
        "the index's vectors were made by {}, not by {expected}",
        found.as_deref().unwrap_or("no model")
    )]
    ModelMismatch {
        /// What made the index's vectors (the model and how much of a record it read), if
        /// anything did.
        found: Option<String>,
        /// The same, for the search's model.
        expected: String,
    },
    /// The crawl store could not be read while syncing; the sync can be retried.
    #[error("cannot read the crawl store")]
    Store(#[source] StoreError),
    /// A stored record cannot be decoded: the index is damaged and should be rebuilt.
    #[error("stored record {id:?} cannot be decoded: {message}")]
    CorruptRecord {
        /// The record's id, or the document address when the id is unknown.
        id: String,
        /// What failed.
        message: String,
    },
    /// Reading or writing the index failed (I/O, a damaged file); the operation can be
    /// retried, and a damaged index rebuilt.
    #[error("index {operation} failed")]
    Index {
        /// What was being done.
        operation: &'static str,
        /// What tantivy said.
        #[source]
        source: tantivy::TantivyError,
    },
}

impl Error {
    /// Returns a closure that wraps a tantivy error for `operation`.
    pub(crate) fn index(operation: &'static str) -> impl FnOnce(tantivy::TantivyError) -> Error {
        move |source| Error::Index { operation, source }
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
