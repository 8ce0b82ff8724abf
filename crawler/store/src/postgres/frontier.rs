//! [`FrontierStore`] for [`PostgresStore`]: the `frontier` table (migration 2).
//!
//! Each operation is one statement, so one transaction. A lease picks its rows with
//! `SELECT … FOR UPDATE SKIP LOCKED` and marks them in the same statement: two workers that
//! lease at once lock disjoint rows, and a row locked by one is skipped, not waited for, by
//! the other. A row that is being marked by one worker is re-checked by PostgreSQL against the
//! `WHERE` clause before another may take it, so a row is never handed to two. Times are the
//! server's `now()`; durations travel as seconds.

use std::time::Duration;

use tokio_postgres::types::Type;

use super::PostgresStore;
use crate::frontier::{FrontierCounts, FrontierStore, FrontierTarget};
use crate::types::StoreError;

/// Adds targets; a known domain keeps its schedule and lease, and takes the new target.
const ADD: &str = "INSERT INTO frontier (domain, target) \
     SELECT * FROM unnest($1::text[], $2::text[]) \
     ON CONFLICT (domain) DO UPDATE SET target = EXCLUDED.target \
     WHERE frontier.target IS DISTINCT FROM EXCLUDED.target";

/// Leases due rows nobody holds (or whose lease expired), oldest due first.
const LEASE: &str = "WITH picked AS ( \
         SELECT domain FROM frontier \
         WHERE next_crawl_at <= now() AND (lease_until IS NULL OR lease_until < now()) \
         ORDER BY next_crawl_at, domain \
         LIMIT $2 \
         FOR UPDATE SKIP LOCKED) \
     UPDATE frontier SET lease_owner = $1, \
         lease_until = now() + $3 * interval '1 second' \
     FROM picked WHERE frontier.domain = picked.domain \
     RETURNING frontier.domain, frontier.target";

/// Extends the caller's leases. A lease that expired but that nobody took is still the
/// caller's (taking it would have changed its owner), so it may be extended too.
const RENEW: &str = "UPDATE frontier SET lease_until = now() + $3 * interval '1 second' \
     WHERE lease_owner = $1 AND domain = ANY($2) \
     RETURNING domain";

/// Releases the caller's leases of crawled domains and schedules their next crawl.
const FINISH: &str = "UPDATE frontier SET lease_owner = NULL, lease_until = NULL, \
         next_crawl_at = now() + $3 * interval '1 second', \
         last_crawled_at = now(), last_crawled_by = $1, crawls = crawls + 1 \
     WHERE lease_owner = $1 AND domain = ANY($2) \
     RETURNING domain";

/// Counts due, leased and all rows.
const COUNTS: &str = "SELECT \
         count(*) FILTER (WHERE next_crawl_at <= now() \
             AND (lease_until IS NULL OR lease_until < now())), \
         count(*) FILTER (WHERE lease_until >= now()), \
         count(*) \
     FROM frontier";

impl FrontierStore for PostgresStore {
    /// A domain given twice keeps its first target: one statement may not touch a row twice.
    fn add(&self, targets: &[FrontierTarget]) -> Result<(), StoreError> {
        let mut seen = std::collections::HashSet::new();
        let mut domains: Vec<String> = Vec::with_capacity(targets.len());
        let mut lines: Vec<String> = Vec::with_capacity(targets.len());
        for target in targets {
            if seen.insert(target.domain.as_str()) {
                domains.push(target.domain.clone());
                lines.push(target.target.clone());
            }
        }
        self.engine.write(move |pool| async move {
            let client = pool.get().await?;
            client
                .query_typed(
                    ADD,
                    &[(&domains, Type::TEXT_ARRAY), (&lines, Type::TEXT_ARRAY)],
                )
                .await
                .map_err(|error| pool.error(&error))?;
            Ok(())
        })
    }

    fn lease(
        &self,
        owner: &str,
        max: usize,
        lease_for: Duration,
    ) -> Result<Vec<FrontierTarget>, StoreError> {
        let owner = owner.to_owned();
        let max = i64::try_from(max).unwrap_or(i64::MAX);
        let seconds = lease_for.as_secs_f64();
        self.engine.write(move |pool| async move {
            let client = pool.get().await?;
            let rows = client
                .query_typed(
                    LEASE,
                    &[
                        (&owner, Type::TEXT),
                        (&max, Type::INT8),
                        (&seconds, Type::FLOAT8),
                    ],
                )
                .await
                .map_err(|error| pool.error(&error))?;
            let mut leased = Vec::with_capacity(rows.len());
            for row in rows {
                leased.push(FrontierTarget {
                    domain: pool.column(&row, 0)?,
                    target: pool.column(&row, 1)?,
                });
            }
            Ok(leased)
        })
    }

    fn renew(
        &self,
        owner: &str,
        domains: &[String],
        lease_for: Duration,
    ) -> Result<Vec<String>, StoreError> {
        self.update_leases(RENEW, owner, domains, lease_for)
    }

    fn finish(
        &self,
        owner: &str,
        domains: &[String],
        next_after: Duration,
    ) -> Result<Vec<String>, StoreError> {
        self.update_leases(FINISH, owner, domains, next_after)
    }

    fn counts(&self) -> Result<FrontierCounts, StoreError> {
        self.engine.read(|pool| async move {
            let client = pool.get().await?;
            let row = client
                .query_typed_one(COUNTS, &[])
                .await
                .map_err(|error| pool.error(&error))?;
            let count = |index: usize| -> Result<u64, StoreError> {
                let value: i64 = pool.column(&row, index)?;
                u64::try_from(value).map_err(|error| pool.corrupt("frontier count", error))
            };
            Ok(FrontierCounts {
                due: count(0)?,
                leased: count(1)?,
                total: count(2)?,
            })
        })
    }
}

impl PostgresStore {
    /// Runs `sql` (renew or finish) over `owner`'s leases of `domains` with `seconds`;
    /// returns the domains it touched.
    fn update_leases(
        &self,
        sql: &'static str,
        owner: &str,
        domains: &[String],
        duration: Duration,
    ) -> Result<Vec<String>, StoreError> {
        if domains.is_empty() {
            return Ok(Vec::new());
        }
        let owner = owner.to_owned();
        let domains = domains.to_vec();
        let seconds = duration.as_secs_f64();
        self.engine.write(move |pool| async move {
            let client = pool.get().await?;
            let rows = client
                .query_typed(
                    sql,
                    &[
                        (&owner, Type::TEXT),
                        (&domains, Type::TEXT_ARRAY),
                        (&seconds, Type::FLOAT8),
                    ],
                )
                .await
                .map_err(|error| pool.error(&error))?;
            let mut touched = Vec::with_capacity(rows.len());
            for row in rows {
                touched.push(pool.column(&row, 0)?);
            }
            Ok(touched)
        })
    }
}
