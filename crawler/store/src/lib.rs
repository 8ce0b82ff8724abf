//! skillscout's crawl state: records with tombstones and a change log, per-domain status,
//! HTTP cache entries, and content-addressed blobs.
//!
//! Callers hold two handles, [`Store`] and [`Blobs`]. Behind each is a backend trait —
//! [`RecordStore`] and [`HttpCacheStore`] for the store, [`BlobStore`] for the blobs — with
//! two implementations: the embedded ones, the default ([`EmbeddedStore`], one redb file,
//! and [`FileBlobs`], one file per blob, in the data directory), and PostgreSQL
//! ([`PostgresStore`] and [`PostgresBlobs`], one database that several processes share).
//! [`open`] picks the backend from the store location (`--store`, docs/crawl.md); callers
//! hold the same handles whichever it is.
//!
//! The traits are blocking on purpose: redb is, the crawl's store writer and the index sync
//! run on blocking threads already, and the PostgreSQL backend drives its async client on a
//! small runtime of its own, so its blocking calls work from any thread (see [`postgres`]).
//! Async code goes through the handles' `async` methods, which run each call on the blocking
//! pool, so no database write, blob or large read holds an async worker. Code that is already on a blocking thread uses
//! [`Store::blocking`] and [`Blobs::blocking`]. One exception, measured: the crawler's lookup
//! of an HTTP cache entry (a point read of a few hundred bytes, served from redb's page cache)
//! is made in place, because handing each of thousands of lookups a second to the blocking
//! pool cost more than the read (0.71× against 0.83× of a plain HTTP client's throughput at
//! 20,000 hosts, docs/BENCHMARKS.md). With PostgreSQL that lookup is a network round trip
//! that holds the async worker meanwhile; it works, but is not measured yet.
//!
//! # Layout
//!
//! - [`types`]: the values stored ([`StoredRecord`], [`DomainStatus`], [`CacheEntry`], …).
//! - `apply`: which records a domain's crawl adds, updates and removes (every backend applies
//!   the same rule).
//! - [`embedded`]: the redb backend.
//! - [`postgres`]: the PostgreSQL backend, its pool and its migrations.
//! - [`frontier`]: the crawl frontier every crawl leases its domains from ([`Frontier`]):
//!   states, adaptive revisits ([`frontier::schedule`]), the deny list of delisted domains.
//! - [`blobs`]: content-addressed bytes ([`Blobs`], [`FileBlobs`]).
//! - [`report`]: the crawl report (`skillscout crawl --report`), built from domain statuses.
//!
//! # Invariants
//!
//! - Only this crate touches the crawl database (redb file or PostgreSQL) and the blobs.
//! - Every upsert and delete of a record gets the next number of one change log, so readers
//!   (the search index, `/v1/changes`) see every change exactly once and in order.
//! - Writes come in batches ([`RecordStore::apply`] takes many domains), and reads that can
//!   grow with the web come in pages ([`RecordStore::changes_after`],
//!   [`RecordStore::domains_after`]); no write reads a domain's records all at once, and a
//!   crawl streams a large domain's records in several [`RecordStore::upsert`] calls. A
//!   reader that needs part of every record of a domain visits them one at a time
//!   ([`RecordStore::visit_records_of`]).
//! - No backend type (redb's or another) appears in a signature of this crate.

mod apply;
pub mod backup;
pub mod blobs;
pub mod embedded;
pub mod frontier;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod report;
pub mod types;

use std::fmt::Debug;
use std::path::Path;
use std::sync::Arc;

use formats::Domain;
use time::OffsetDateTime;
use url::Url;

pub use blobs::{BLOBS_DIR, BlobStore, Blobs, FileBlobs, MAX_BLOB_BYTES};
pub use embedded::{EmbeddedStore, STORE_FILE};
pub use frontier::{
    AddMode, AddStats, AddedAs, Crawled, Delisted, Delisting, Frontier, FrontierCounts,
    FrontierEntry, FrontierState, FrontierStore, FrontierTarget, ListFilter, NamedLeases,
    NewTarget, RemoveStats, Schedule,
};
#[cfg(feature = "postgres")]
pub use postgres::{Migrated, PostgresBlobs, PostgresConfig, PostgresStore, SCHEMA_VERSION};
pub use report::{CrawlReport, DomainReport, Totals};
pub use types::{
    ApplyStats, CacheEntry, CachingHeaders, CrawlErrorEntry, DomainStatus, DomainUpdate, Outcome,
    StoreError, StoredRecord, Streamed,
};

/// How many domain statuses one page of [`Store::domains`] reads.
const DOMAIN_PAGE: usize = 1024;

/// The key range of the cache entries of `origin`: URLs from `{origin}/` up to `{origin}0`
/// ('0' follows '/'), so the range holds exactly that origin's URLs.
pub(crate) fn origin_range(origin: &Url) -> (String, String) {
    let origin = origin.origin().ascii_serialization();
    (format!("{origin}/"), format!("{origin}0"))
}

/// Opens the crawl state at `location` (the `--store` setting, docs/crawl.md): with `None`
/// (or an empty string, as an empty environment variable gives), the embedded store and the
/// file blobs inside `data_dir`, as always; with a `postgres://`
/// or `postgresql://` URL, the PostgreSQL store and its blobs (one pool for both), after
/// applying the migrations the database lacks. Any other location is
/// [`StoreError::InvalidLocation`]; a database migrated by a newer binary is
/// [`StoreError::SchemaTooNew`].
pub fn open(location: Option<&str>, data_dir: &Path) -> Result<(Store, Blobs), StoreError> {
    let Some(location) = location.filter(|location| !location.trim().is_empty()) else {
        let store = Store::open(data_dir)?;
        let blobs = Blobs::open(data_dir).map_err(|error| StoreError::Database {
            location: data_dir.join(BLOBS_DIR).display().to_string(),
            message: format!("cannot create the blob store: {error}"),
        })?;
        return Ok((store, blobs));
    };
    if !is_postgres_url(location) {
        return Err(StoreError::InvalidLocation {
            message: "expected a postgres:// or postgresql:// URL (without one, the store is \
                      the embedded one in the data directory)"
                .to_owned(),
        });
    }
    open_postgres(location)
}

/// Returns true when `location` names a PostgreSQL database (`postgres://…` or
/// `postgresql://…`).
pub fn is_postgres_url(location: &str) -> bool {
    let lower = location.get(..13).unwrap_or(location).to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://")
}

/// Opens the PostgreSQL store at `location`.
#[cfg(feature = "postgres")]
fn open_postgres(location: &str) -> Result<(Store, Blobs), StoreError> {
    let backend = PostgresStore::connect(&PostgresConfig::new(location))?;
    let blobs = Blobs::from_backend(Arc::new(backend.blobs()));
    Ok((Store::from_backend(Arc::new(backend)), blobs))
}

/// A build without the PostgreSQL backend says so.
#[cfg(not(feature = "postgres"))]
fn open_postgres(_location: &str) -> Result<(Store, Blobs), StoreError> {
    Err(no_postgres())
}

#[cfg(not(feature = "postgres"))]
fn no_postgres() -> StoreError {
    StoreError::InvalidLocation {
        message: "this build has no PostgreSQL support (the store crate's `postgres` feature)"
            .to_owned(),
    }
}

/// Applies the migrations that the PostgreSQL database at `url` lacks, and returns the schema
/// versions before and after (for an explicit migration step; [`open`] migrates too).
#[cfg(feature = "postgres")]
pub fn migrate(url: &str) -> Result<Migrated, StoreError> {
    if !is_postgres_url(url) {
        return Err(StoreError::InvalidLocation {
            message: "only a PostgreSQL store (postgres:// or postgresql://) has migrations"
                .to_owned(),
        });
    }
    postgres::migrate(&PostgresConfig::new(url))
}

/// Records, their change log and per-domain status. Blocking; see the crate docs.
pub trait RecordStore: Send + Sync + Debug {
    /// Writes a consistent copy of the whole store into a new embedded database file at
    /// `dest` (`skillscout backup`); returns the number of records, tombstones included. Only
    /// the embedded store can: a PostgreSQL store is backed up with PostgreSQL's tools.
    fn snapshot(&self, dest: &std::path::Path) -> Result<u64, StoreError> {
        Err(StoreError::Database {
            location: dest.display().to_string(),
            message: "only the embedded store is backed up by skillscout backup; back up a \
                      PostgreSQL store with pg_dump"
                .to_owned(),
        })
    }

    /// Returns the stored record with `id`, tombstones included.
    fn record(&self, id: &str) -> Result<Option<StoredRecord>, StoreError>;

    /// Returns every record of `domain`, tombstones included, in id order.
    fn records_of(&self, domain: &Domain) -> Result<Vec<StoredRecord>, StoreError>;

    /// Hands every record of `domain`, tombstones included, to `visit` in id order, one at a
    /// time: for readers that keep only part of each (a domain may hold thousands of large
    /// skills, which [`RecordStore::records_of`] would hold all at once).
    fn visit_records_of(
        &self,
        domain: &Domain,
        visit: &mut dyn FnMut(StoredRecord),
    ) -> Result<(), StoreError>;

    /// Returns the changes after sequence number `after`, oldest first, at most `limit`. A
    /// record changed several times appears once, at its latest change.
    fn changes_after(&self, after: u64, limit: usize) -> Result<Vec<StoredRecord>, StoreError>;

    /// Returns the highest change sequence number (0 when nothing was stored yet).
    fn last_seq(&self) -> Result<u64, StoreError>;

    /// Returns the store's identity: readers that follow its change log (the search index)
    /// remember it, and start again from the first change when it is another (a store reset,
    /// or restored from a dump), rather than take another history for theirs.
    fn identity(&self) -> Result<String, StoreError>;

    /// Stores the results of crawling several domains, with their HTTP cache updates, in one
    /// transaction: a batch is stored whole or not at all. For each domain, `fresh` holds
    /// the records built in this crawl and not yet stored, `streamed` the ids of those stored
    /// during the crawl ([`RecordStore::upsert`]), and `status.indexes` the index URLs read
    /// successfully; a stored live record of the domain that came from one of those indexes
    /// and is in neither becomes a tombstone, and records of indexes that could not be read
    /// this time are left alone. The statistics (the streamed counts included) come back in
    /// the order of `updates`.
    ///
    /// A backend reads the domain's stored records one at a time (or their ids and indexes
    /// only), never all at once: a domain may hold thousands of large skills. A status whose
    /// `caching` is `None` (nothing heard in this crawl) keeps the stored status's.
    fn apply(
        &self,
        updates: Vec<DomainUpdate>,
        now: OffsetDateTime,
    ) -> Result<Vec<ApplyStats>, StoreError>;

    /// Stores the result of crawling one domain: [`RecordStore::apply`] with a batch of one.
    fn apply_domain(
        &self,
        status: &DomainStatus,
        fresh: Vec<formats::Skill>,
        now: OffsetDateTime,
    ) -> Result<ApplyStats, StoreError> {
        let update = DomainUpdate {
            status: status.clone(),
            fresh,
            streamed: Streamed::default(),
            cache: Vec::new(),
            withdrawn: Vec::new(),
        };
        let mut stats = self.apply(vec![update], now)?;
        Ok(stats.pop().unwrap_or_default())
    }

    /// Stores records of a domain whose crawl is still running, in one transaction: each new
    /// or changed record gets the next change number and an unchanged one its new
    /// `last_seen`, by the same rule as [`RecordStore::apply`]; nothing is removed and the
    /// domain's status is untouched. The crawl names these records in the
    /// [`DomainUpdate::streamed`] of its final `apply`, which removes what vanished. If the
    /// crawl never ends (interrupted), the records stay stored and nothing is removed.
    fn upsert(
        &self,
        fresh: Vec<formats::Skill>,
        now: OffsetDateTime,
    ) -> Result<ApplyStats, StoreError>;

    /// Returns the status of `domain`, if it was ever crawled.
    fn domain(&self, domain: &Domain) -> Result<Option<DomainStatus>, StoreError>;

    /// Returns at most `limit` domain statuses in domain order, starting after `after`.
    fn domains_after(
        &self,
        after: Option<&Domain>,
        limit: usize,
    ) -> Result<Vec<DomainStatus>, StoreError>;

    /// Returns the status of every domain ever crawled, in domain order, read page by page.
    fn domains(&self) -> Result<Vec<DomainStatus>, StoreError> {
        let mut all: Vec<DomainStatus> = Vec::new();
        loop {
            let after = all.last().map(|status| status.domain.clone());
            let page = self.domains_after(after.as_ref(), DOMAIN_PAGE)?;
            let done = page.len() < DOMAIN_PAGE;
            all.extend(page);
            if done {
                return Ok(all);
            }
        }
    }
}

/// HTTP cache entries by URL. Blocking; see the crate docs.
pub trait HttpCacheStore: Send + Sync + Debug {
    /// Returns the cache entry for `url`.
    fn cached(&self, url: &Url) -> Result<Option<CacheEntry>, StoreError>;

    /// Returns every cache entry of `origin` (`scheme://host[:port]/`): what a domain's crawl
    /// reads once, at its start, instead of asking for each URL (one read, not one per
    /// request; none at all for a domain never crawled).
    fn cached_of_origin(&self, origin: &Url) -> Result<Vec<(String, CacheEntry)>, StoreError>;

    /// Stores (or, with `None`, forgets) the cache entry for `url`.
    fn set_cached(&self, url: &Url, entry: Option<&CacheEntry>) -> Result<(), StoreError>;

    /// Marks the cache entries of `urls` out of date ([`CacheEntry::revalidate`]), in one
    /// transaction; URLs without an entry, or marked already, are left. Returns how many it
    /// marked.
    fn mark_stale(&self, urls: &[String]) -> Result<usize, StoreError>;
}

/// A backend that keeps records, cache entries and the frontier.
pub trait Backend: RecordStore + HttpCacheStore + FrontierStore {}

impl<T: RecordStore + HttpCacheStore + FrontierStore> Backend for T {}

/// Runs `call` on `backend` on the blocking pool: the async handles' one way into the
/// blocking traits. A call that panicked or was cancelled is [`StoreError::Interrupted`].
pub(crate) async fn on_blocking_pool<B, T>(
    backend: Arc<B>,
    call: impl FnOnce(&B) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError>
where
    B: ?Sized + Send + Sync + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(move || call(backend.as_ref()))
        .await
        .map_err(|error| StoreError::Interrupted {
            message: error.to_string(),
        })?
}

/// The crawl state: a cheap-to-clone handle on a [`Backend`].
#[derive(Debug, Clone)]
pub struct Store {
    backend: Arc<dyn Backend>,
    /// The frontier, on the same backend.
    frontier: Frontier,
}

impl Store {
    /// Opens (creating if needed) the embedded store in `data_dir`.
    pub fn open(data_dir: &Path) -> Result<Store, StoreError> {
        Ok(Store::from_backend(Arc::new(EmbeddedStore::open(
            data_dir,
        )?)))
    }

    /// Returns a handle on `backend`.
    pub fn from_backend(backend: Arc<dyn Backend>) -> Store {
        let frontier = Frontier::from_backend(Arc::clone(&backend) as Arc<dyn FrontierStore>);
        Store { backend, frontier }
    }

    /// Returns the crawl frontier: the domains the directory crawls, their schedules and the
    /// deny list.
    pub fn frontier(&self) -> &Frontier {
        &self.frontier
    }

    /// Returns the backend, for code that runs on a blocking thread already.
    pub fn blocking(&self) -> &dyn Backend {
        self.backend.as_ref()
    }

    /// Runs `call` on the backend on the blocking pool.
    async fn run<T: Send + 'static>(
        &self,
        call: impl FnOnce(&dyn Backend) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        on_blocking_pool(Arc::clone(&self.backend), |backend| call(backend)).await
    }

    /// Returns the stored record with `id`, tombstones included.
    pub async fn record(&self, id: &str) -> Result<Option<StoredRecord>, StoreError> {
        let id = id.to_owned();
        self.run(move |backend| backend.record(&id)).await
    }

    /// Returns every record of `domain`, tombstones included, in id order.
    pub async fn records_of(&self, domain: &Domain) -> Result<Vec<StoredRecord>, StoreError> {
        let domain = domain.clone();
        self.run(move |backend| backend.records_of(&domain)).await
    }

    /// Returns the changes after sequence number `after`, oldest first, at most `limit`.
    pub async fn changes_after(
        &self,
        after: u64,
        limit: usize,
    ) -> Result<Vec<StoredRecord>, StoreError> {
        self.run(move |backend| backend.changes_after(after, limit))
            .await
    }

    /// Returns the highest change sequence number (0 when nothing was stored yet).
    pub async fn last_seq(&self) -> Result<u64, StoreError> {
        self.run(|backend| backend.last_seq()).await
    }

    /// Stores a batch of domains' crawls (see [`RecordStore::apply`]).
    pub async fn apply(
        &self,
        updates: Vec<DomainUpdate>,
        now: OffsetDateTime,
    ) -> Result<Vec<ApplyStats>, StoreError> {
        self.run(move |backend| backend.apply(updates, now)).await
    }

    /// Stores the result of crawling one domain (a batch of one).
    pub async fn apply_domain(
        &self,
        status: &DomainStatus,
        fresh: Vec<formats::Skill>,
        now: OffsetDateTime,
    ) -> Result<ApplyStats, StoreError> {
        let status = status.clone();
        self.run(move |backend| backend.apply_domain(&status, fresh, now))
            .await
    }

    /// Stores records of a domain whose crawl is still running (see [`RecordStore::upsert`]).
    pub async fn upsert(
        &self,
        fresh: Vec<formats::Skill>,
        now: OffsetDateTime,
    ) -> Result<ApplyStats, StoreError> {
        self.run(move |backend| backend.upsert(fresh, now)).await
    }

    /// Returns the status of `domain`, if it was ever crawled.
    pub async fn domain(&self, domain: &Domain) -> Result<Option<DomainStatus>, StoreError> {
        let domain = domain.clone();
        self.run(move |backend| backend.domain(&domain)).await
    }

    /// Returns a page of domain statuses (see [`RecordStore::domains_after`]).
    pub async fn domains_after(
        &self,
        after: Option<&Domain>,
        limit: usize,
    ) -> Result<Vec<DomainStatus>, StoreError> {
        let after = after.cloned();
        self.run(move |backend| backend.domains_after(after.as_ref(), limit))
            .await
    }

    /// Returns the status of every domain ever crawled, in domain order, read page by page.
    pub async fn domains(&self) -> Result<Vec<DomainStatus>, StoreError> {
        self.run(|backend| backend.domains()).await
    }

    /// Returns every cache entry of `origin` (see [`HttpCacheStore::cached_of_origin`]).
    pub async fn cached_of_origin(
        &self,
        origin: &Url,
    ) -> Result<Vec<(String, CacheEntry)>, StoreError> {
        let origin = origin.clone();
        self.run(move |backend| backend.cached_of_origin(&origin))
            .await
    }

    /// Returns the cache entry for `url`.
    pub async fn cached(&self, url: &Url) -> Result<Option<CacheEntry>, StoreError> {
        let url = url.clone();
        self.run(move |backend| backend.cached(&url)).await
    }

    /// Marks every cache entry of `origin` as out of date (see [`CacheEntry::revalidate`]), so
    /// that its next crawl asks the origin again for each; returns how many entries it marked.
    pub async fn mark_stale(&self, origin: &Url) -> Result<usize, StoreError> {
        let origin = origin.clone();
        self.run(move |backend| {
            let urls: Vec<String> = backend
                .cached_of_origin(&origin)?
                .into_iter()
                .filter(|(_, entry)| !entry.revalidate)
                .map(|(url, _)| url)
                .collect();
            if urls.is_empty() {
                return Ok(0);
            }
            backend.mark_stale(&urls)
        })
        .await
    }

    /// Marks the cache entries of `urls` as out of date (see [`CacheEntry::revalidate`]), in
    /// one transaction; returns how many entries it marked (URLs never fetched have none).
    pub async fn mark_urls_stale(&self, urls: Vec<Url>) -> Result<usize, StoreError> {
        if urls.is_empty() {
            return Ok(0);
        }
        let urls: Vec<String> = urls.into_iter().map(String::from).collect();
        self.run(move |backend| backend.mark_stale(&urls)).await
    }

    /// Stores (or, with `None`, forgets) the cache entry for `url`.
    pub async fn set_cached(&self, url: &Url, entry: Option<CacheEntry>) -> Result<(), StoreError> {
        let url = url.clone();
        self.run(move |backend| backend.set_cached(&url, entry.as_ref()))
            .await
    }
}
