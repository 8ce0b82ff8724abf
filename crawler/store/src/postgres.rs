//! The PostgreSQL backend: records, the change log, domain statuses, HTTP cache entries and
//! blobs in one PostgreSQL database, so that several processes (crawl workers, serving
//! replicas), on one machine or many, share one directory.
//!
//! # Reaching PostgreSQL from blocking traits
//!
//! The store's traits are blocking, and some callers invoke them from inside a tokio runtime
//! (the crawler's in-place cache lookup, tests), where `Handle::block_on` and the `postgres`
//! crate's blocking client panic. So the backend owns a small runtime of its own
//! ([`RUNTIME_THREADS`] threads) that drives `tokio-postgres`: a trait method hands its work to
//! that runtime and waits for the answer on a plain channel, which is allowed on any thread.
//! The runtime is shut down in the background when the last handle is dropped.
//!
//! Connections come from a small pool ([`PostgresConfig::pool_size`]), each opened with a
//! connect timeout and a `statement_timeout`. A read that meets a lost connection or an
//! unreachable server is retried a few times with backoff ([`READ_ATTEMPTS`]); a write is
//! one transaction and fails whole, with [`StoreError::Unavailable`].
//!
//! # The change log's order
//!
//! Readers follow the change log by sequence number ([`RecordStore::changes_after`]): a
//! reader that has seen change `n` asks for what follows `n`. A sequence such as `bigserial`
//! hands out numbers when a transaction asks, not when it commits: a writer that took 5 and
//! commits after a writer that took 6 would let a reader see 6, move its cursor past 5, and
//! never see 5. So change numbers come from one counter row (`change_counter`) that every
//! writing transaction locks (`SELECT … FOR UPDATE`) before it reads anything, and keeps
//! locked until it commits. Writers therefore commit one after the other, each numbering its
//! changes after the last committed one; PostgreSQL makes a commit visible before it releases
//! its locks, so a snapshot that sees change `n` sees every change below `n`.
//!
//! A row lock rather than a transaction-level advisory lock: the counter lives with the
//! tables, in the schema the URL selects (advisory locks are per database, so two stores in
//! two schemas of one database would wait for each other), and the row holds the number as
//! well as the lock. The price is that writes to one store are serial, as in the embedded
//! store (redb has one writer). Taking the lock before reading also makes the read-decide-
//! write of [`RecordStore::apply`] safe against a concurrent writer of the same records.
//!
//! # Layout
//!
//! - `pool`: the runtime, the connection pool and the mapping of errors.
//! - `migrate`: the versioned schema ([`SCHEMA_VERSION`], [`migrate`]).
//! - `records`: [`RecordStore`] and [`HttpCacheStore`] for [`PostgresStore`]; `batch` a
//!   batch of domains' crawls stored in a fixed number of statements.
//! - `blobs`: [`BlobStore`](crate::BlobStore) for [`PostgresBlobs`].
//! - `frontier`: [`FrontierStore`](crate::FrontierStore), the crawl workers' shared frontier.

mod batch;
mod blobs;
mod frontier;
mod migrate;
mod pool;
mod records;

use std::sync::Arc;
use std::time::Duration;

pub use blobs::PostgresBlobs;
pub use migrate::{Migrated, SCHEMA_VERSION};

use crate::types::StoreError;
#[cfg(doc)]
use crate::{HttpCacheStore, RecordStore};
use pool::Engine;

/// Connections kept by one store: crawl writes are serial (see the module docs), so a few
/// cover a writer, the index sync and the readers of a server.
pub const DEFAULT_POOL_SIZE: usize = 4;
/// How long opening a connection may take.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one statement may run; a 32 MiB blob on a slow link fits well inside.
pub const DEFAULT_STATEMENT_TIMEOUT: Duration = Duration::from_secs(60);
/// Threads of the runtime that drives the connections: the work is waiting on sockets.
pub const RUNTIME_THREADS: usize = 1;
/// How many times a read is tried when the connection is lost or the server unreachable.
pub const READ_ATTEMPTS: u32 = 4;
/// The wait before a read's second try; each further try waits twice as long.
pub const READ_RETRY_DELAY: Duration = Duration::from_millis(100);

pub use crate::is_postgres_url;

/// How to reach the database, and the pool's limits.
#[derive(Clone)]
pub struct PostgresConfig {
    /// The connection URL, e.g. `postgres://user@db.internal/skillscout` or, over a unix
    /// socket, `postgres://user@/skillscout?host=/run/postgresql`. Connection parameters
    /// such as `options=-c search_path=…` select a schema.
    pub url: String,
    /// How many connections the pool keeps at most.
    pub pool_size: usize,
    /// How long opening a connection may take.
    pub connect_timeout: Duration,
    /// How long one statement may run before the server cancels it.
    pub statement_timeout: Duration,
}

impl PostgresConfig {
    /// Returns the configuration for `url` with the default limits.
    pub fn new(url: impl Into<String>) -> PostgresConfig {
        PostgresConfig {
            url: url.into(),
            pool_size: DEFAULT_POOL_SIZE,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            statement_timeout: DEFAULT_STATEMENT_TIMEOUT,
        }
    }
}

impl std::fmt::Debug for PostgresConfig {
    /// Leaves the URL out: it may hold a password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresConfig")
            .field("pool_size", &self.pool_size)
            .field("connect_timeout", &self.connect_timeout)
            .field("statement_timeout", &self.statement_timeout)
            .finish_non_exhaustive()
    }
}

/// The crawl state in a PostgreSQL database. Cheap to clone: clones share the pool.
#[derive(Debug, Clone)]
pub struct PostgresStore {
    engine: Arc<Engine>,
}

impl PostgresStore {
    /// Connects to the database and applies the migrations it lacks (see [`migrate`]);
    /// refuses, with [`StoreError::SchemaTooNew`], a database migrated by a newer binary.
    pub fn connect(config: &PostgresConfig) -> Result<PostgresStore, StoreError> {
        let engine = Arc::new(Engine::start(config)?);
        engine.migrate()?;
        Ok(PostgresStore { engine })
    }

    /// Returns the blob store in the same database, sharing this store's pool.
    pub fn blobs(&self) -> PostgresBlobs {
        PostgresBlobs::new(Arc::clone(&self.engine))
    }

    /// Returns where the store is: user, server and database, never a password.
    pub fn location(&self) -> &str {
        self.engine.location()
    }
}

/// Applies the migrations the database at `config.url` lacks, in one transaction under a
/// lock, so that two processes starting at once do not both migrate; returns the versions
/// before and after. A database migrated by a newer binary is refused with
/// [`StoreError::SchemaTooNew`] and left untouched. This is what every open does first; it
/// is exposed for an explicit migration step.
pub fn migrate(config: &PostgresConfig) -> Result<Migrated, StoreError> {
    Engine::start(config)?.migrate()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_urls_are_recognised_by_scheme() {
        assert!(is_postgres_url("postgres://db/skillscout"));
        assert!(is_postgres_url("PostgreSQL://db/skillscout"));
        assert!(is_postgres_url("postgres://"));
        assert!(!is_postgres_url("postgres:/db"));
        assert!(!is_postgres_url("mysql://db"));
        assert!(!is_postgres_url("./data"));
        assert!(!is_postgres_url("pö"));
    }

    #[test]
    fn the_config_never_prints_its_url() {
        let config = PostgresConfig::new("postgres://user:secret@db/skillscout");
        assert!(!format!("{config:?}").contains("secret"));
    }
}
