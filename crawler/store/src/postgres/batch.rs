//! A batch of domains' crawls applied in a fixed number of statements, whatever the number of
//! domains: every read and every write of the batch is one statement over arrays
//! (`unnest`), so storing the 256 domains a writer gathers costs about ten round trips rather
//! than a few per domain. The rule is the same as everywhere ([`crate::apply`]); only the
//! I/O is grouped.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use time::OffsetDateTime;
use tokio_postgres::Transaction;
use tokio_postgres::types::Type;

use super::pool::Pool;
use super::records::{ChangeLog, decode, domain_range, encode};
use crate::apply::{RecordWrite, Tombstones, carry_over, plan_record, tombstone};
use crate::types::{ApplyStats, CacheEntry, DomainStatus, DomainUpdate, StoreError, StoredRecord};

/// True when the batch can be applied in grouped statements: no domain appears twice (one
/// statement may not write a row twice).
pub(super) fn groupable(updates: &[DomainUpdate]) -> bool {
    let mut seen = HashSet::new();
    updates
        .iter()
        .all(|update| seen.insert(update.status.domain.as_str()))
}

/// Applies `updates` inside `transaction`, which holds the change counter's lock.
pub(super) async fn apply(
    pool: &Arc<Pool>,
    transaction: &Transaction<'_>,
    log: &mut ChangeLog,
    updates: Vec<DomainUpdate>,
    now: OffsetDateTime,
) -> Result<Vec<ApplyStats>, StoreError> {
    let domains: Vec<String> = updates
        .iter()
        .map(|update| update.status.domain.to_string())
        .collect();
    // A crawl that was running when its domain was delisted stores nothing.
    let delisted: HashSet<String> = {
        let rows = transaction
            .query_typed(
                "SELECT domain FROM frontier WHERE domain = ANY($1) AND delisted_at IS NOT NULL",
                &[(&domains, Type::TEXT_ARRAY)],
            )
            .await
            .map_err(|error| pool.error(&error))?;
        let mut out = HashSet::new();
        for row in &rows {
            out.insert(pool.column::<String>(row, 0)?);
        }
        out
    };
    let applied: Vec<bool> = domains
        .iter()
        .map(|domain| !delisted.contains(domain))
        .collect();

    // The stored versions of every fresh record.
    let fresh_ids: Vec<String> = updates
        .iter()
        .zip(&applied)
        .filter(|(_, applied)| **applied)
        .flat_map(|(update, _)| update.fresh.iter().map(|skill| skill.id.to_string()))
        .collect();
    let mut stored = read_records(pool, transaction, &fresh_ids).await?;

    // The live records of each domain that its crawl may remove: ids and index URLs only.
    let rules: Vec<Tombstones> = updates.iter().map(Tombstones::of).collect();
    let (lows, highs): (Vec<String>, Vec<String>) = updates
        .iter()
        .map(|update| domain_range(&update.status.domain))
        .unzip();
    let live = transaction
        .query_typed(
            "SELECT d.n, r.id, r.index_url \
             FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS d(lo, hi, n) \
             JOIN records r ON r.id > d.lo AND r.id < d.hi \
             WHERE NOT r.removed",
            &[(&lows, Type::TEXT_ARRAY), (&highs, Type::TEXT_ARRAY)],
        )
        .await
        .map_err(|error| pool.error(&error))?;
    let mut vanished: Vec<Vec<String>> = vec![Vec::new(); updates.len()];
    for row in &live {
        let position: i64 = pool.column(row, 0)?;
        let Some(at) = usize::try_from(position - 1)
            .ok()
            .filter(|at| *at < updates.len())
        else {
            continue;
        };
        if !applied[at] {
            continue;
        }
        let id: String = pool.column(row, 1)?;
        let index_url: &str = pool.column(row, 2)?;
        let skill_id = id.parse().map_err(|error| pool.corrupt(&id, error))?;
        if rules[at].removes_live(&skill_id, index_url) {
            vanished[at].push(id);
        }
    }
    let vanished_ids: Vec<String> = vanished.iter().flatten().cloned().collect();
    let mut gone = read_records(pool, transaction, &vanished_ids).await?;

    // The previous statuses, where this crawl heard nothing about caching.
    let quiet: Vec<String> = updates
        .iter()
        .zip(&applied)
        .filter(|(update, applied)| **applied && update.status.caching.is_none())
        .map(|(update, _)| update.status.domain.to_string())
        .collect();
    let mut previous: HashMap<String, DomainStatus> = HashMap::new();
    if !quiet.is_empty() {
        let rows = transaction
            .query_typed(
                "SELECT domain, status FROM domains WHERE domain = ANY($1)",
                &[(&quiet, Type::TEXT_ARRAY)],
            )
            .await
            .map_err(|error| pool.error(&error))?;
        for row in &rows {
            let domain: String = pool.column(row, 0)?;
            let status = decode(pool, &domain, pool.column(row, 1)?)?;
            previous.insert(domain, status);
        }
    }

    // Decide every write, in order, numbering changes as they come.
    let mut writes = Writes::default();
    let mut statuses: Vec<(String, Vec<u8>)> = Vec::new();
    let mut cache: HashMap<String, Option<CacheEntry>> = HashMap::new();
    let mut all_stats = Vec::with_capacity(updates.len());
    for (at, update) in updates.into_iter().enumerate() {
        if !applied[at] {
            all_stats.push(ApplyStats::default());
            continue;
        }
        let mut stats = update.streamed.stats;
        for skill in update.fresh {
            let previous = stored.remove(&skill.id.to_string());
            let write = plan_record(previous, skill, now, &mut stats);
            writes.push(pool, log, write)?;
        }
        for id in &vanished[at] {
            if let Some(old) = gone.remove(id) {
                let tombstone = tombstone(old, now, &mut stats);
                writes.push(pool, log, RecordWrite::Change(tombstone))?;
            }
        }
        let mut status = update.status;
        let domain = status.domain.to_string();
        carry_over(&mut status, previous.get(&domain));
        statuses.push((domain.clone(), encode(pool, &domain, &status)?));
        for (url, entry) in update.cache {
            cache.insert(url.to_string(), entry);
        }
        all_stats.push(stats);
    }
    writes.store(pool, transaction).await?;
    store_statuses(pool, transaction, statuses).await?;
    store_cache(pool, transaction, cache).await?;
    Ok(all_stats)
}

/// Reads the stored records with `ids`, by id.
async fn read_records(
    pool: &Arc<Pool>,
    transaction: &Transaction<'_>,
    ids: &[String],
) -> Result<HashMap<String, StoredRecord>, StoreError> {
    let mut out = HashMap::with_capacity(ids.len());
    if ids.is_empty() {
        return Ok(out);
    }
    let rows = transaction
        .query_typed(
            "SELECT id, record FROM records WHERE id = ANY($1)",
            &[(&ids, Type::TEXT_ARRAY)],
        )
        .await
        .map_err(|error| pool.error(&error))?;
    for row in &rows {
        let id: String = pool.column(row, 0)?;
        let record = decode(pool, &id, pool.column(row, 1)?)?;
        out.insert(id, record);
    }
    Ok(out)
}

/// The record rows a batch writes, column by column.
#[derive(Default)]
struct Writes {
    ids: Vec<String>,
    index_urls: Vec<String>,
    removed: Vec<bool>,
    seqs: Vec<i64>,
    records: Vec<Vec<u8>>,
}

impl Writes {
    /// Adds what [`plan_record`] (or a tombstone) decided; a change gets the next number.
    fn push(
        &mut self,
        pool: &Pool,
        log: &mut ChangeLog,
        write: RecordWrite,
    ) -> Result<(), StoreError> {
        let record = match write {
            RecordWrite::Nothing => return Ok(()),
            RecordWrite::Seen(record) => record,
            RecordWrite::Change(mut record) => {
                record.seq = u64::try_from(log.next())
                    .map_err(|error| pool.corrupt("change counter", error))?;
                record
            }
        };
        let id = record.skill.id.to_string();
        self.seqs
            .push(i64::try_from(record.seq).map_err(|error| pool.corrupt("change number", error))?);
        self.index_urls.push(record.skill.index_url.to_string());
        self.removed.push(record.is_tombstone());
        self.records.push(encode(pool, &id, &record)?);
        self.ids.push(id);
        Ok(())
    }

    /// Writes every row in one statement.
    async fn store(self, pool: &Pool, transaction: &Transaction<'_>) -> Result<(), StoreError> {
        if self.ids.is_empty() {
            return Ok(());
        }
        transaction
            .execute_typed(
                "INSERT INTO records (id, index_url, removed, seq, record) \
                 SELECT * FROM unnest($1::text[], $2::text[], $3::bool[], $4::int8[], $5::bytea[]) \
                 ON CONFLICT (id) DO UPDATE SET index_url = excluded.index_url, \
                 removed = excluded.removed, seq = excluded.seq, record = excluded.record",
                &[
                    (&self.ids, Type::TEXT_ARRAY),
                    (&self.index_urls, Type::TEXT_ARRAY),
                    (&self.removed, Type::BOOL_ARRAY),
                    (&self.seqs, Type::INT8_ARRAY),
                    (&self.records, Type::BYTEA_ARRAY),
                ],
            )
            .await
            .map_err(|error| pool.error(&error))?;
        Ok(())
    }
}

/// Writes the domains' statuses in one statement.
async fn store_statuses(
    pool: &Pool,
    transaction: &Transaction<'_>,
    statuses: Vec<(String, Vec<u8>)>,
) -> Result<(), StoreError> {
    if statuses.is_empty() {
        return Ok(());
    }
    let (domains, encoded): (Vec<String>, Vec<Vec<u8>>) = statuses.into_iter().unzip();
    transaction
        .execute_typed(
            "INSERT INTO domains (domain, status) SELECT * FROM unnest($1::text[], $2::bytea[]) \
             ON CONFLICT (domain) DO UPDATE SET status = excluded.status",
            &[(&domains, Type::TEXT_ARRAY), (&encoded, Type::BYTEA_ARRAY)],
        )
        .await
        .map_err(|error| pool.error(&error))?;
    Ok(())
}

/// Writes (or forgets) the batch's cache entries, one statement for each.
async fn store_cache(
    pool: &Pool,
    transaction: &Transaction<'_>,
    cache: HashMap<String, Option<CacheEntry>>,
) -> Result<(), StoreError> {
    let mut kept_urls = Vec::new();
    let mut kept = Vec::new();
    let mut forgotten = Vec::new();
    for (url, entry) in cache {
        match entry {
            Some(entry) => {
                kept.push(encode(pool, &url, &entry)?);
                kept_urls.push(url);
            }
            None => forgotten.push(url),
        }
    }
    if !kept_urls.is_empty() {
        transaction
            .execute_typed(
                "INSERT INTO http_cache (url, entry) SELECT * FROM unnest($1::text[], $2::bytea[]) \
                 ON CONFLICT (url) DO UPDATE SET entry = excluded.entry",
                &[(&kept_urls, Type::TEXT_ARRAY), (&kept, Type::BYTEA_ARRAY)],
            )
            .await
            .map_err(|error| pool.error(&error))?;
    }
    if !forgotten.is_empty() {
        transaction
            .execute_typed(
                "DELETE FROM http_cache WHERE url = ANY($1)",
                &[(&forgotten, Type::TEXT_ARRAY)],
            )
            .await
            .map_err(|error| pool.error(&error))?;
    }
    Ok(())
}
