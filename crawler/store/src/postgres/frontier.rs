//! [`FrontierStore`] for [`PostgresStore`]: the `frontier` table (migrations 2 and 3).
//!
//! A lease picks its rows with `SELECT … FOR UPDATE SKIP LOCKED` and marks them in the same
//! statement: two workers that lease at once lock disjoint rows, and a row locked by one is
//! skipped, not waited for, by the other. A row being marked by one worker is re-checked by
//! PostgreSQL against the `WHERE` clause before another may take it, so a row is never handed
//! to two. Times are the server's `now()`; durations travel as seconds. Delisting writes the
//! frontier row and the domain's tombstones in one transaction that holds the change log's
//! lock, like every record write.

use std::time::Duration;

use formats::Domain;
use formats::seeds::SeedTarget;
use time::OffsetDateTime;
use tokio_postgres::Row;
use tokio_postgres::types::Type;

use super::PostgresStore;
use super::pool::Pool;
use super::records::{ChangeLog, domain_range, read_record, write_record};
use crate::apply::{RecordWrite, tombstone};
use crate::frontier::{
    AddMode, AddStats, AddedAs, Crawled, Delisted, Delisting, FrontierCounts, FrontierEntry,
    FrontierState, FrontierStore, FrontierTarget, ListFilter, NamedLeases, NewTarget, Observation,
    RemoveStats, Schedule,
};
use crate::types::{ApplyStats, Outcome, StoreError};

/// The columns of a row, in the order [`entry_of`] reads them.
const COLUMNS: &str = "domain, target, added_as, source, rank, added_at, next_crawl_at, \
     interval_secs, last_crawled_at, last_outcome, last_changed_at, crawls, last_crawled_by, \
     delisted_reason, delisted_at, requested_at";

/// Adds targets; a known domain keeps its schedule (or, with `$6`, becomes due now and asked
/// for) and takes the new target; a delisted one is left alone. Returns whether each row
/// written is new.
const ADD: &str = "INSERT INTO frontier (domain, target, added_as, source, rank, requested_at) \
     SELECT d.*, CASE WHEN $6 THEN now() END \
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int8[]) AS d \
     ON CONFLICT (domain) DO UPDATE SET target = EXCLUDED.target, \
         rank = coalesce(frontier.rank, EXCLUDED.rank), \
         next_crawl_at = CASE WHEN $6 AND frontier.next_crawl_at > now() \
             AND NOT coalesce(frontier.last_crawled_at > now(), false) \
             THEN now() ELSE frontier.next_crawl_at END, \
         requested_at = CASE WHEN $6 THEN now() ELSE frontier.requested_at END \
     WHERE frontier.delisted_at IS NULL \
         AND (frontier.target IS DISTINCT FROM EXCLUDED.target \
             OR (frontier.rank IS NULL AND EXCLUDED.rank IS NOT NULL) \
             OR $6) \
     RETURNING (xmax = 0)";

/// Counts the delisted domains among some.
const COUNT_DELISTED: &str =
    "SELECT count(*) FROM frontier WHERE domain = ANY($1) AND delisted_at IS NOT NULL";

/// Leases due rows nobody holds (or whose lease expired), oldest due first; then rows whose
/// last crawl lies in the future (the clock was set back), which are due too.
const LEASE: &str = "WITH by_time AS ( \
         SELECT domain FROM frontier \
         WHERE delisted_at IS NULL AND next_crawl_at <= now() \
             AND (lease_until IS NULL OR lease_until < now()) \
         ORDER BY next_crawl_at, domain \
         LIMIT $2 \
         FOR UPDATE SKIP LOCKED), \
     set_back AS ( \
         SELECT domain FROM frontier \
         WHERE delisted_at IS NULL AND last_crawled_at > now() AND next_crawl_at > now() \
             AND (lease_until IS NULL OR lease_until < now()) \
         LIMIT $2 \
         FOR UPDATE SKIP LOCKED), \
     picked AS ( \
         SELECT domain FROM (SELECT domain FROM by_time UNION SELECT domain FROM set_back) AS d \
         LIMIT $2) \
     UPDATE frontier SET lease_owner = $1, leased_at = now(), \
         lease_until = now() + $3 * interval '1 second' \
     FROM picked WHERE frontier.domain = picked.domain \
     RETURNING frontier.domain, frontier.target, frontier.requested_at IS NOT NULL";

/// Leases the named rows that are not delisted, not held by another worker and not crawled
/// since the crawl began (`$4`).
const LEASE_NAMED: &str = "UPDATE frontier SET lease_owner = $1, leased_at = now(), \
         lease_until = now() + $3 * interval '1 second' \
     WHERE domain = ANY($2) AND delisted_at IS NULL \
         AND (last_crawled_at IS NULL OR last_crawled_at < $4) \
         AND (lease_until IS NULL OR lease_until < now() OR lease_owner = $1) \
     RETURNING domain, target, requested_at IS NOT NULL";

/// Extends the caller's leases. A lease that expired but that nobody took is still the
/// caller's (taking it would have changed its owner), so it may be extended too.
const RENEW: &str = "UPDATE frontier SET lease_until = now() + $3 * interval '1 second' \
     WHERE lease_owner = $1 AND domain = ANY($2) \
     RETURNING domain";

/// Reads the intervals of the caller's crawled rows, locking them until the finish.
const FINISH_READ: &str = "SELECT domain, interval_secs FROM frontier \
     WHERE lease_owner = $1 AND domain = ANY($2) FOR UPDATE";

/// Releases the caller's leases of crawled domains and schedules their next crawl; one asked
/// for since its lease was taken stays due and asked for.
const FINISH: &str = "UPDATE frontier AS f SET lease_owner = NULL, lease_until = NULL, \
         leased_at = NULL, interval_secs = u.interval_secs, \
         next_crawl_at = CASE WHEN f.requested_at >= f.leased_at THEN now() \
             ELSE now() + u.wait * interval '1 second' END, \
         requested_at = CASE WHEN f.requested_at >= f.leased_at THEN f.requested_at END, \
         last_crawled_at = now(), last_crawled_by = $1, crawls = f.crawls + 1, \
         last_outcome = u.outcome, \
         last_changed_at = CASE WHEN u.changed THEN now() ELSE f.last_changed_at END \
     FROM unnest($2::text[], $3::int8[], $4::float8[], $5::text[], $6::bool[]) \
         AS u(domain, interval_secs, wait, outcome, changed) \
     WHERE f.domain = u.domain AND f.lease_owner = $1 \
     RETURNING f.domain";

/// Says why named rows were not leased: delisted, crawled since `$2`, or held.
const NOT_LEASED: &str = "SELECT domain, delisted_at IS NOT NULL, \
         coalesce(last_crawled_at >= $2, false) \
     FROM frontier WHERE domain = ANY($1)";

/// Gives leases back without a crawl.
const RELEASE: &str = "UPDATE frontier SET lease_owner = NULL, lease_until = NULL, \
         leased_at = NULL, \
         next_crawl_at = now() + $3 * interval '1 second' \
     WHERE lease_owner = $1 AND domain = ANY($2)";

/// Counts due, leased, all and delisted rows, and finds the next due time.
const COUNTS: &str = "SELECT \
         count(*) FILTER (WHERE delisted_at IS NULL \
             AND (next_crawl_at <= now() OR last_crawled_at > now()) \
             AND (lease_until IS NULL OR lease_until < now())), \
         count(*) FILTER (WHERE lease_until >= now()), \
         count(*), \
         count(*) FILTER (WHERE delisted_at IS NOT NULL), \
         min(next_crawl_at) FILTER (WHERE delisted_at IS NULL AND next_crawl_at > now()) \
     FROM frontier";

impl FrontierStore for PostgresStore {
    fn add(&self, targets: &[NewTarget], mode: AddMode) -> Result<AddStats, StoreError> {
        let mut seen = std::collections::HashSet::new();
        let mut domains: Vec<String> = Vec::with_capacity(targets.len());
        let mut lines: Vec<String> = Vec::with_capacity(targets.len());
        let mut added_as: Vec<String> = Vec::with_capacity(targets.len());
        let mut sources: Vec<Option<String>> = Vec::with_capacity(targets.len());
        let mut ranks: Vec<Option<i64>> = Vec::with_capacity(targets.len());
        for target in targets {
            // One statement may not touch a row twice: the first target of a domain is kept.
            if seen.insert(target.domain.as_str()) {
                domains.push(target.domain.clone());
                lines.push(target.target.clone());
                added_as.push(target.added_as.as_str().to_owned());
                sources.push(target.source.clone());
                ranks.push(target.rank.and_then(|rank| i64::try_from(rank).ok()));
            }
        }
        let now = mode == AddMode::CrawlNow;
        let given = targets.len();
        self.engine.write(move |pool| async move {
            let mut client = pool.get().await?;
            let transaction = client
                .transaction()
                .await
                .map_err(|error| pool.error(&error))?;
            let rows = transaction
                .query_typed(
                    ADD,
                    &[
                        (&domains, Type::TEXT_ARRAY),
                        (&lines, Type::TEXT_ARRAY),
                        (&added_as, Type::TEXT_ARRAY),
                        (&sources, Type::TEXT_ARRAY),
                        (&ranks, Type::INT8_ARRAY),
                        (&now, Type::BOOL),
                    ],
                )
                .await
                .map_err(|error| pool.error(&error))?;
            let delisted_row = transaction
                .query_typed_one(COUNT_DELISTED, &[(&domains, Type::TEXT_ARRAY)])
                .await
                .map_err(|error| pool.error(&error))?;
            transaction
                .commit()
                .await
                .map_err(|error| pool.error(&error))?;
            let mut stats = AddStats::default();
            for row in &rows {
                let inserted: bool = pool.column(row, 0)?;
                if inserted {
                    stats.added += 1;
                } else {
                    stats.updated += 1;
                }
            }
            stats.delisted = count(&pool, &delisted_row, 0)?;
            // A domain named twice in one list counts once as written, then as unchanged.
            stats.unchanged =
                (given as u64).saturating_sub(stats.added + stats.updated + stats.delisted);
            Ok(stats)
        })
    }

    fn lease(
        &self,
        owner: &str,
        max: usize,
        lease_for: Duration,
    ) -> Result<Vec<FrontierTarget>, StoreError> {
        if max == 0 {
            return Ok(Vec::new());
        }
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
            targets_of(&pool, &rows)
        })
    }

    fn lease_named(
        &self,
        owner: &str,
        domains: &[String],
        lease_for: Duration,
        since: OffsetDateTime,
    ) -> Result<NamedLeases, StoreError> {
        if domains.is_empty() {
            return Ok(NamedLeases::default());
        }
        let owner = owner.to_owned();
        let domains = domains.to_vec();
        let seconds = lease_for.as_secs_f64();
        self.engine.write(move |pool| async move {
            let client = pool.get().await?;
            let rows = client
                .query_typed(
                    LEASE_NAMED,
                    &[
                        (&owner, Type::TEXT),
                        (&domains, Type::TEXT_ARRAY),
                        (&seconds, Type::FLOAT8),
                        (&since, Type::TIMESTAMPTZ),
                    ],
                )
                .await
                .map_err(|error| pool.error(&error))?;
            let mut out = NamedLeases {
                leased: targets_of(&pool, &rows)?,
                ..NamedLeases::default()
            };
            let leased: std::collections::HashSet<&str> = out
                .leased
                .iter()
                .map(|target| target.domain.as_str())
                .collect();
            // A domain named twice counts once; the second time it is "crawled".
            let mut rest: Vec<String> = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for domain in &domains {
                if !seen.insert(domain.as_str()) {
                    out.crawled.push(domain.clone());
                } else if !leased.contains(domain.as_str()) {
                    rest.push(domain.clone());
                }
            }
            if rest.is_empty() {
                return Ok(out);
            }
            let rows = client
                .query_typed(
                    NOT_LEASED,
                    &[(&rest, Type::TEXT_ARRAY), (&since, Type::TIMESTAMPTZ)],
                )
                .await
                .map_err(|error| pool.error(&error))?;
            let mut known = std::collections::HashSet::new();
            for row in &rows {
                let domain: String = pool.column(row, 0)?;
                let delisted: bool = pool.column(row, 1)?;
                let crawled: bool = pool.column(row, 2)?;
                known.insert(domain.clone());
                if delisted {
                    out.delisted.push(domain);
                } else if crawled {
                    out.crawled.push(domain);
                } else {
                    out.held.push(domain);
                }
            }
            out.unknown = rest
                .into_iter()
                .filter(|domain| !known.contains(domain))
                .collect();
            Ok(out)
        })
    }

    fn now(&self) -> Result<OffsetDateTime, StoreError> {
        self.engine.read(|pool| async move {
            let client = pool.get().await?;
            let row = client
                .query_typed_one("SELECT now()", &[])
                .await
                .map_err(|error| pool.error(&error))?;
            pool.column(&row, 0)
        })
    }

    fn renew(
        &self,
        owner: &str,
        domains: &[String],
        lease_for: Duration,
    ) -> Result<Vec<String>, StoreError> {
        if domains.is_empty() {
            return Ok(Vec::new());
        }
        let owner = owner.to_owned();
        let domains = domains.to_vec();
        let seconds = lease_for.as_secs_f64();
        self.engine.write(move |pool| async move {
            let client = pool.get().await?;
            let rows = client
                .query_typed(
                    RENEW,
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

    fn finish(
        &self,
        owner: &str,
        crawled: &[Crawled],
        schedule: &Schedule,
    ) -> Result<Vec<String>, StoreError> {
        if crawled.is_empty() {
            return Ok(Vec::new());
        }
        let owner = owner.to_owned();
        let crawled = crawled.to_vec();
        let schedule = *schedule;
        self.engine.write(move |pool| async move {
            let mut client = pool.get().await?;
            let transaction = client
                .transaction()
                .await
                .map_err(|error| pool.error(&error))?;
            let names: Vec<String> = crawled.iter().map(|crawl| crawl.domain.clone()).collect();
            let rows = transaction
                .query_typed(
                    FINISH_READ,
                    &[(&owner, Type::TEXT), (&names, Type::TEXT_ARRAY)],
                )
                .await
                .map_err(|error| pool.error(&error))?;
            let mut intervals = std::collections::HashMap::new();
            for row in &rows {
                let domain: String = pool.column(row, 0)?;
                let interval: Option<i64> = pool.column(row, 1)?;
                intervals.insert(domain, interval);
            }
            let (mut domains, mut seconds, mut waits, mut outcomes, mut changed) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for crawl in &crawled {
                let Some(previous) = intervals.get(&crawl.domain) else {
                    continue;
                };
                let previous =
                    previous.map(|seconds| Duration::from_secs(seconds.max(0).unsigned_abs()));
                let observed = Observation::of(crawl.outcome, crawl.changed);
                let interval = schedule.next_interval(previous, observed);
                domains.push(crawl.domain.clone());
                seconds.push(i64::try_from(interval.as_secs()).unwrap_or(i64::MAX));
                waits.push(Schedule::wait(interval, crawl.not_before).as_secs_f64());
                outcomes.push(crawl.outcome.as_str().to_owned());
                changed.push(crawl.changed);
            }
            let rows = transaction
                .query_typed(
                    FINISH,
                    &[
                        (&owner, Type::TEXT),
                        (&domains, Type::TEXT_ARRAY),
                        (&seconds, Type::INT8_ARRAY),
                        (&waits, Type::FLOAT8_ARRAY),
                        (&outcomes, Type::TEXT_ARRAY),
                        (&changed, Type::BOOL_ARRAY),
                    ],
                )
                .await
                .map_err(|error| pool.error(&error))?;
            transaction
                .commit()
                .await
                .map_err(|error| pool.error(&error))?;
            let mut released = Vec::with_capacity(rows.len());
            for row in rows {
                released.push(pool.column(&row, 0)?);
            }
            Ok(released)
        })
    }

    fn release(&self, owner: &str, domains: &[String], after: Duration) -> Result<(), StoreError> {
        if domains.is_empty() {
            return Ok(());
        }
        let owner = owner.to_owned();
        let domains = domains.to_vec();
        let seconds = after.as_secs_f64();
        self.engine.write(move |pool| async move {
            let client = pool.get().await?;
            client
                .execute_typed(
                    RELEASE,
                    &[
                        (&owner, Type::TEXT),
                        (&domains, Type::TEXT_ARRAY),
                        (&seconds, Type::FLOAT8),
                    ],
                )
                .await
                .map_err(|error| pool.error(&error))?;
            Ok(())
        })
    }

    fn counts(&self) -> Result<FrontierCounts, StoreError> {
        self.engine.read(|pool| async move {
            let client = pool.get().await?;
            let row = client
                .query_typed_one(COUNTS, &[])
                .await
                .map_err(|error| pool.error(&error))?;
            Ok(FrontierCounts {
                due: count(&pool, &row, 0)?,
                leased: count(&pool, &row, 1)?,
                total: count(&pool, &row, 2)?,
                delisted: count(&pool, &row, 3)?,
                next_due: pool.column(&row, 4)?,
            })
        })
    }

    fn entry(&self, domain: &str) -> Result<Option<FrontierEntry>, StoreError> {
        let domain = domain.to_owned();
        self.engine.read(move |pool| {
            let domain = domain.clone();
            async move {
                let client = pool.get().await?;
                let sql = format!("SELECT {COLUMNS} FROM frontier WHERE domain = $1");
                let row = client
                    .query_typed_opt(&sql, &[(&domain, Type::TEXT)])
                    .await
                    .map_err(|error| pool.error(&error))?;
                row.map(|row| entry_of(&pool, &row)).transpose()
            }
        })
    }

    fn list(
        &self,
        after: Option<&str>,
        limit: usize,
        filter: ListFilter,
    ) -> Result<Vec<FrontierEntry>, StoreError> {
        let after = after.unwrap_or_default().to_owned();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let (delisted, added_as): (Option<bool>, Option<String>) = match filter.state {
            None => (None, None),
            Some(FrontierState::Delisted) => (Some(true), None),
            Some(state) => (Some(false), Some(state.as_str().to_owned())),
        };
        let due = filter.due;
        self.engine.read(move |pool| {
            let (after, added_as) = (after.clone(), added_as.clone());
            async move {
                let client = pool.get().await?;
                let sql = format!(
                    "SELECT {COLUMNS} FROM frontier WHERE domain > $1 \
                     AND ($2::bool IS NULL OR (delisted_at IS NOT NULL) = $2) \
                     AND ($3::text IS NULL OR added_as = $3) \
                     AND (NOT $4 OR (delisted_at IS NULL \
                         AND (next_crawl_at <= now() OR last_crawled_at > now()))) \
                     ORDER BY domain LIMIT $5"
                );
                let rows = client
                    .query_typed(
                        &sql,
                        &[
                            (&after, Type::TEXT),
                            (&delisted, Type::BOOL),
                            (&added_as, Type::TEXT),
                            (&due, Type::BOOL),
                            (&limit, Type::INT8),
                        ],
                    )
                    .await
                    .map_err(|error| pool.error(&error))?;
                let mut out = Vec::with_capacity(rows.len());
                for row in &rows {
                    out.push(entry_of(&pool, row)?);
                }
                Ok(out)
            }
        })
    }

    fn remove(&self, domains: &[String]) -> Result<RemoveStats, StoreError> {
        let domains = domains.to_vec();
        self.engine.write(move |pool| async move {
            let mut client = pool.get().await?;
            let transaction = client
                .transaction()
                .await
                .map_err(|error| pool.error(&error))?;
            let removed = transaction
                .execute_typed(
                    "DELETE FROM frontier WHERE domain = ANY($1) AND delisted_at IS NULL",
                    &[(&domains, Type::TEXT_ARRAY)],
                )
                .await
                .map_err(|error| pool.error(&error))?;
            let delisted = transaction
                .query_typed_one(COUNT_DELISTED, &[(&domains, Type::TEXT_ARRAY)])
                .await
                .map_err(|error| pool.error(&error))?;
            transaction
                .commit()
                .await
                .map_err(|error| pool.error(&error))?;
            let unique: std::collections::HashSet<&String> = domains.iter().collect();
            let delisted = count(&pool, &delisted, 0)?;
            Ok(RemoveStats {
                removed,
                delisted,
                unknown: (unique.len() as u64).saturating_sub(removed + delisted),
            })
        })
    }

    fn delist(&self, domain: &str, reason: &str) -> Result<Delisted, StoreError> {
        let key: Domain = domain.parse().map_err(|error| StoreError::InvalidInput {
            message: format!("cannot delist {domain:?}: {error}"),
        })?;
        let target = SeedTarget::parse(domain)
            .map_or_else(|_| format!("https://{domain}"), |target| target.to_string());
        let reason = reason.to_owned();
        self.engine.write(move |pool| async move {
            let mut client = pool.get().await?;
            let transaction = client
                .transaction()
                .await
                .map_err(|error| pool.error(&error))?;
            let mut log = ChangeLog::lock(&pool, &transaction).await?;
            let domain = key.to_string();
            let before = transaction
                .query_typed_opt(
                    "SELECT delisted_at IS NOT NULL FROM frontier WHERE domain = $1 \
                         FOR UPDATE",
                    &[(&domain, Type::TEXT)],
                )
                .await
                .map_err(|error| pool.error(&error))?;
            let already = match &before {
                Some(row) => pool.column::<bool>(row, 0)?,
                None => false,
            };
            transaction
                .execute_typed(
                    "INSERT INTO frontier (domain, target, delisted_reason, delisted_at) \
                         VALUES ($1, $2, $3, now()) \
                         ON CONFLICT (domain) DO UPDATE SET delisted_reason = $3, \
                             delisted_at = now(), lease_owner = NULL, lease_until = NULL",
                    &[
                        (&domain, Type::TEXT),
                        (&target, Type::TEXT),
                        (&reason, Type::TEXT),
                    ],
                )
                .await
                .map_err(|error| pool.error(&error))?;
            let now = server_now(&pool, &transaction).await?;
            let (start, end) = domain_range(&key);
            let live = transaction
                .query_typed(
                    "SELECT id FROM records WHERE id > $1 AND id < $2 AND NOT removed \
                         ORDER BY id",
                    &[(&start, Type::TEXT), (&end, Type::TEXT)],
                )
                .await
                .map_err(|error| pool.error(&error))?;
            let mut stats = ApplyStats::default();
            for row in &live {
                let id: &str = pool.column(row, 0)?;
                if let Some(old) = read_record(&pool, &transaction, id).await? {
                    let gone = tombstone(old, now, &mut stats);
                    write_record(&pool, &transaction, &mut log, RecordWrite::Change(gone)).await?;
                }
            }
            log.save(&pool, &transaction).await?;
            transaction
                .execute_typed(
                    "DELETE FROM domains WHERE domain = $1",
                    &[(&domain, Type::TEXT)],
                )
                .await
                .map_err(|error| pool.error(&error))?;
            for scheme in ["http", "https"] {
                let from = format!("{scheme}://{domain}/");
                let to = format!("{scheme}://{domain}0");
                transaction
                    .execute_typed(
                        "DELETE FROM http_cache WHERE url >= $1 AND url < $2",
                        &[(&from, Type::TEXT), (&to, Type::TEXT)],
                    )
                    .await
                    .map_err(|error| pool.error(&error))?;
            }
            transaction
                .commit()
                .await
                .map_err(|error| pool.error(&error))?;
            Ok(Delisted {
                already,
                records_removed: stats.removed as u64,
            })
        })
    }

    fn undelist(&self, domain: &str) -> Result<bool, StoreError> {
        let domain = domain.to_owned();
        self.engine.write(move |pool| async move {
            let client = pool.get().await?;
            let changed = client
                .execute_typed(
                    "UPDATE frontier SET delisted_reason = NULL, delisted_at = NULL, \
                         next_crawl_at = now() \
                     WHERE domain = $1 AND delisted_at IS NOT NULL",
                    &[(&domain, Type::TEXT)],
                )
                .await
                .map_err(|error| pool.error(&error))?;
            Ok(changed > 0)
        })
    }
}

/// Reads the server's clock inside a transaction (the time tombstones carry).
async fn server_now(
    pool: &Pool,
    transaction: &tokio_postgres::Transaction<'_>,
) -> Result<OffsetDateTime, StoreError> {
    let row = transaction
        .query_typed_one("SELECT now()", &[])
        .await
        .map_err(|error| pool.error(&error))?;
    pool.column(&row, 0)
}

/// Reads a count column.
fn count(pool: &Pool, row: &Row, index: usize) -> Result<u64, StoreError> {
    let value: i64 = pool.column(row, index)?;
    u64::try_from(value).map_err(|error| pool.corrupt("frontier count", error))
}

/// Reads `(domain, target, requested)` rows.
fn targets_of(pool: &Pool, rows: &[Row]) -> Result<Vec<FrontierTarget>, StoreError> {
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        out.push(FrontierTarget {
            domain: pool.column(row, 0)?,
            target: pool.column(row, 1)?,
            requested: pool.column(row, 2)?,
        });
    }
    Ok(out)
}

/// Reads a row selected with [`COLUMNS`].
fn entry_of(pool: &Pool, row: &Row) -> Result<FrontierEntry, StoreError> {
    let added_as: &str = pool.column(row, 2)?;
    let added_as = AddedAs::ALL
        .into_iter()
        .find(|value| value.as_str() == added_as)
        .ok_or_else(|| pool.corrupt("frontier row", format!("unknown added_as {added_as:?}")))?;
    let rank: Option<i64> = pool.column(row, 4)?;
    let interval: Option<i64> = pool.column(row, 7)?;
    let outcome: Option<&str> = pool.column(row, 9)?;
    let crawls: i64 = pool.column(row, 11)?;
    let reason: Option<String> = pool.column(row, 13)?;
    let delisted_at: Option<OffsetDateTime> = pool.column(row, 14)?;
    Ok(FrontierEntry {
        domain: pool.column(row, 0)?,
        target: pool.column(row, 1)?,
        added_as,
        source: pool.column(row, 3)?,
        rank: rank.and_then(|rank| u64::try_from(rank).ok()),
        added_at: pool.column(row, 5)?,
        next_crawl_at: pool.column(row, 6)?,
        interval_secs: interval.and_then(|seconds| u64::try_from(seconds).ok()),
        last_crawled_at: pool.column(row, 8)?,
        last_outcome: outcome.and_then(Outcome::from_name),
        last_changed_at: pool.column(row, 10)?,
        crawls: u64::try_from(crawls).unwrap_or_default(),
        last_crawled_by: pool.column(row, 12)?,
        delisted: reason
            .zip(delisted_at)
            .map(|(reason, at)| Delisting { reason, at }),
        requested_at: pool.column(row, 15)?,
    })
}
