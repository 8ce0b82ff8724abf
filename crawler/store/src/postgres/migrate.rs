//! The database schema, in versioned migrations applied at open.
//!
//! Each migration is a SQL file in the crate's `migrations/` folder, embedded in the binary.
//! The table `schema_version` lists the versions applied. At open, a database at this
//! binary's version is used as it is; otherwise, in one transaction that first takes an
//! advisory lock (so that two processes starting at once migrate once), the versions the
//! database lacks are applied in order. A database whose version is newer than
//! the binary's is refused: an older binary must not write tables whose meaning it does not
//! know.

use std::sync::Arc;

use super::pool::{Pool, PooledClient};
use crate::types::StoreError;

/// One migration: its version, a name for `schema_version`, and its SQL.
struct Migration {
    version: i64,
    name: &'static str,
    sql: &'static str,
}

/// Every migration, oldest first; versions count up from 1 with no gap.
const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "initial",
        sql: include_str!("../../migrations/0001_initial.sql"),
    },
    Migration {
        version: 2,
        name: "frontier",
        sql: include_str!("../../migrations/0002_frontier.sql"),
    },
    Migration {
        version: 3,
        name: "frontier_for_all",
        sql: include_str!("../../migrations/0003_frontier_for_all.sql"),
    },
    Migration {
        version: 4,
        name: "identity",
        sql: include_str!("../../migrations/0004_identity.sql"),
    },
    Migration {
        version: 5,
        name: "requested",
        sql: include_str!("../../migrations/0005_requested.sql"),
    },
];

/// The schema version this binary writes: the last migration's.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The advisory lock key that serialises migrations ("skillsco" in ASCII). Advisory locks
/// are per database: stores in two schemas of one database migrate one after the other.
const MIGRATION_LOCK: i64 = 0x736b_696c_6c73_636f;

/// Reads the schema version of the database (0 for none yet).
const FOUND_VERSION: &str = "SELECT coalesce(max(version), 0)::bigint FROM schema_version";

/// What a migration did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migrated {
    /// The schema version found (0 for an empty database).
    pub from: i64,
    /// The schema version now.
    pub to: i64,
}

/// Applies the migrations the database lacks; see the module docs.
pub(crate) async fn apply_pending(
    pool: &Arc<Pool>,
    client: &mut PooledClient,
) -> Result<Migrated, StoreError> {
    let error = |error: tokio_postgres::Error| pool.error(&error);
    // The common case, a database already at this version, needs neither the lock nor the
    // right to create tables (a serving replica may connect with a role that may only read).
    let row = client
        .query_one("SELECT to_regclass('schema_version') IS NOT NULL", &[])
        .await
        .map_err(error)?;
    let exists: bool = pool.column(&row, 0)?;
    if exists {
        let row = client.query_one(FOUND_VERSION, &[]).await.map_err(error)?;
        let found: i64 = pool.column(&row, 0)?;
        refuse_newer(pool, found)?;
        if found == SCHEMA_VERSION {
            return Ok(Migrated {
                from: found,
                to: found,
            });
        }
    }
    let transaction = client.transaction().await.map_err(error)?;
    transaction
        .execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(error)?;
    transaction
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS schema_version (
                version bigint PRIMARY KEY,
                name text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )",
        )
        .await
        .map_err(error)?;
    let row = transaction
        .query_one(FOUND_VERSION, &[])
        .await
        .map_err(error)?;
    let found: i64 = pool.column(&row, 0)?;
    // Checked again under the lock: another process may have migrated meanwhile. On an
    // error, dropping the transaction rolls it back: nothing is touched.
    refuse_newer(pool, found)?;
    for migration in MIGRATIONS.iter().filter(|m| m.version > found) {
        transaction
            .batch_execute(migration.sql)
            .await
            .map_err(error)?;
        transaction
            .execute(
                "INSERT INTO schema_version (version, name) VALUES ($1, $2)",
                &[&migration.version, &migration.name],
            )
            .await
            .map_err(error)?;
        tracing::info!(
            location = %pool.location,
            version = migration.version,
            name = migration.name,
            "crawl store migrated"
        );
    }
    transaction.commit().await.map_err(error)?;
    Ok(Migrated {
        from: found,
        to: SCHEMA_VERSION,
    })
}

/// Refuses a schema newer than this binary's.
fn refuse_newer(pool: &Pool, found: i64) -> Result<(), StoreError> {
    if found > SCHEMA_VERSION {
        return Err(StoreError::SchemaTooNew {
            location: pool.location.clone(),
            found,
            known: SCHEMA_VERSION,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_count_up_from_one() {
        for (index, migration) in MIGRATIONS.iter().enumerate() {
            assert_eq!(migration.version, index as i64 + 1, "{}", migration.name);
        }
    }
}
