//! skillscout's crawl state: records with tombstones and a change log, per-domain status,
//! HTTP cache entries, and content-addressed blobs.
//!
//! # Layout
//!
//! - [`embedded`]: the embedded backend, one redb database in the data directory.
//! - [`report`]: the crawl report (`skillscout crawl --report`), built from domain statuses.
//! - [`blobs`]: content-addressed bytes in the data directory (artifacts, skill files, cached
//!   bodies).
//!
//! # Invariants
//!
//! - Only this crate touches the crawl database and the blob files.
//! - Every upsert and delete of a record gets the next number of one change log, so readers
//!   (the search index, `/v1/changes`) see every change exactly once and in order.

pub mod blobs;
pub mod embedded;
pub mod report;

pub use blobs::Blobs;
pub use embedded::{
    ApplyStats, CacheEntry, CrawlErrorEntry, DomainStatus, DomainUpdate, Outcome, STORE_FILE,
    Store, StoreError, StoredRecord,
};
pub use report::{CrawlReport, DomainReport, Totals};
