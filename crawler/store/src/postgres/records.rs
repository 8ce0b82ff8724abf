//! Records, the change log, domain statuses and HTTP cache entries in PostgreSQL.
//!
//! Every statement goes out with its parameters' types (`query_typed`): one round trip,
//! where a statement prepared on the fly takes three (prepare, execute, close).
//!
//! Each value is stored as the same JSON the embedded store keeps (`BYTEA`, not `JSONB`: a
//! skill's text may hold a `\u0000` escape, which `JSONB` refuses, and one odd skill must not
//! fail a whole batch). The columns beside it repeat what queries select on.

use std::sync::Arc;

use formats::{Domain, Skill, SkillId};
use serde::Serialize;
use serde::de::DeserializeOwned;
use time::OffsetDateTime;
use tokio_postgres::Transaction;
use tokio_postgres::types::Type;
use url::Url;

use super::PostgresStore;
use super::pool::Pool;
use crate::apply::{RecordWrite, Tombstones, carry_over, plan_record, tombstone};
use crate::types::{ApplyStats, CacheEntry, DomainStatus, DomainUpdate, StoreError, StoredRecord};
use crate::{HttpCacheStore, RecordStore};

/// How many records one page of [`RecordStore::visit_records_of`] reads: a bound on memory
/// (records may be large) that still makes few round trips.
const RECORD_PAGE: i64 = 64;

impl RecordStore for PostgresStore {
    fn record(&self, id: &str) -> Result<Option<StoredRecord>, StoreError> {
        self.point_read("SELECT record FROM records WHERE id = $1", id)
    }

    fn records_of(&self, domain: &Domain) -> Result<Vec<StoredRecord>, StoreError> {
        let mut out = Vec::new();
        self.visit_records_of(domain, &mut |record| out.push(record))?;
        Ok(out)
    }

    /// Reads the domain's records page by page (`RECORD_PAGE` at a time, in id order), so
    /// memory stays bounded. Each page is its own snapshot: a record written by another
    /// process while the visit runs is seen in its state at the time its page is read.
    fn visit_records_of(
        &self,
        domain: &Domain,
        visit: &mut dyn FnMut(StoredRecord),
    ) -> Result<(), StoreError> {
        let (mut after, end) = domain_range(domain);
        loop {
            let (from, to) = (after.clone(), end.clone());
            let page = self.engine.read(move |pool| {
                let (from, to) = (from.clone(), to.clone());
                async move {
                    let client = pool.get().await?;
                    let rows = client
                        .query_typed(
                            "SELECT id, record FROM records WHERE id > $1 AND id < $2 \
                             ORDER BY id LIMIT $3",
                            &[
                                (&from, Type::TEXT),
                                (&to, Type::TEXT),
                                (&RECORD_PAGE, Type::INT8),
                            ],
                        )
                        .await
                        .map_err(|error| pool.error(&error))?;
                    let mut page = Vec::with_capacity(rows.len());
                    for row in rows {
                        let id: String = pool.column(&row, 0)?;
                        let record: StoredRecord = decode(&pool, &id, pool.column(&row, 1)?)?;
                        page.push((id, record));
                    }
                    Ok(page)
                }
            })?;
            let full = page.len() as i64 == RECORD_PAGE;
            for (id, record) in page {
                after = id;
                visit(record);
            }
            if !full {
                return Ok(());
            }
        }
    }

    /// Each record appears once, at its latest change: the change log is the records'
    /// `seq` column (see the module docs for why its order is the commit order).
    fn changes_after(&self, after: u64, limit: usize) -> Result<Vec<StoredRecord>, StoreError> {
        let Ok(after) = i64::try_from(after) else {
            return Ok(Vec::new());
        };
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.engine.read(move |pool| async move {
            let client = pool.get().await?;
            let rows = client
                .query_typed(
                    "SELECT id, record FROM records WHERE seq > $1 ORDER BY seq LIMIT $2",
                    &[(&after, Type::INT8), (&limit, Type::INT8)],
                )
                .await
                .map_err(|error| pool.error(&error))?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                let id: &str = pool.column(&row, 0)?;
                out.push(decode(&pool, id, pool.column(&row, 1)?)?);
            }
            Ok(out)
        })
    }

    fn identity(&self) -> Result<String, StoreError> {
        self.engine.read(|pool| async move {
            let client = pool.get().await?;
            let row = client
                .query_typed_one(
                    "SELECT id || ':' || 'change_counter'::regclass::oid::text FROM store_identity",
                    &[],
                )
                .await
                .map_err(|error| pool.error(&error))?;
            pool.column(&row, 0)
        })
    }

    fn last_seq(&self) -> Result<u64, StoreError> {
        self.engine.read(|pool| async move {
            let client = pool.get().await?;
            let row = client
                .query_typed_one("SELECT last_seq FROM change_counter", &[])
                .await
                .map_err(|error| pool.error(&error))?;
            let last: i64 = pool.column(&row, 0)?;
            u64::try_from(last).map_err(|error| pool.corrupt("change counter", error))
        })
    }

    /// One transaction for the whole batch, holding the change counter's lock from its start
    /// (see the module docs); a failure rolls everything back.
    fn apply(
        &self,
        updates: Vec<DomainUpdate>,
        now: OffsetDateTime,
    ) -> Result<Vec<ApplyStats>, StoreError> {
        self.engine.write(move |pool| async move {
            let mut client = pool.get().await?;
            let transaction = client
                .transaction()
                .await
                .map_err(|error| pool.error(&error))?;
            let mut log = ChangeLog::lock(&pool, &transaction).await?;
            let all_stats = if super::batch::groupable(&updates) {
                super::batch::apply(&pool, &transaction, &mut log, updates, now).await?
            } else {
                // A domain twice in one batch: one after the other, each seeing the last.
                let mut all_stats = Vec::with_capacity(updates.len());
                for update in updates {
                    all_stats.push(apply_one(&pool, &transaction, &mut log, update, now).await?);
                }
                all_stats
            };
            log.save(&pool, &transaction).await?;
            transaction
                .commit()
                .await
                .map_err(|error| pool.error(&error))?;
            Ok(all_stats)
        })
    }

    fn upsert(&self, fresh: Vec<Skill>, now: OffsetDateTime) -> Result<ApplyStats, StoreError> {
        self.engine.write(move |pool| async move {
            let mut client = pool.get().await?;
            let transaction = client
                .transaction()
                .await
                .map_err(|error| pool.error(&error))?;
            let mut log = ChangeLog::lock(&pool, &transaction).await?;
            let mut stats = ApplyStats::default();
            for skill in fresh {
                if is_delisted(&pool, &transaction, skill.domain.as_str()).await? {
                    continue;
                }
                let previous = read_record(&pool, &transaction, &skill.id.to_string()).await?;
                let write = plan_record(previous, skill, now, &mut stats);
                write_record(&pool, &transaction, &mut log, write).await?;
            }
            log.save(&pool, &transaction).await?;
            transaction
                .commit()
                .await
                .map_err(|error| pool.error(&error))?;
            Ok(stats)
        })
    }

    fn domain(&self, domain: &Domain) -> Result<Option<DomainStatus>, StoreError> {
        self.point_read(
            "SELECT status FROM domains WHERE domain = $1",
            domain.as_str(),
        )
    }

    fn domains_after(
        &self,
        after: Option<&Domain>,
        limit: usize,
    ) -> Result<Vec<DomainStatus>, StoreError> {
        let after = after.map(Domain::to_string);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.engine.read(move |pool| {
            let after = after.clone();
            async move {
                let client = pool.get().await?;
                let rows = match &after {
                    Some(after) => {
                        client
                            .query_typed(
                                "SELECT domain, status FROM domains WHERE domain > $1 \
                                 ORDER BY domain LIMIT $2",
                                &[(after, Type::TEXT), (&limit, Type::INT8)],
                            )
                            .await
                    }
                    None => {
                        client
                            .query_typed(
                                "SELECT domain, status FROM domains ORDER BY domain LIMIT $1",
                                &[(&limit, Type::INT8)],
                            )
                            .await
                    }
                }
                .map_err(|error| pool.error(&error))?;
                let mut out = Vec::with_capacity(rows.len());
                for row in rows {
                    let domain: &str = pool.column(&row, 0)?;
                    out.push(decode(&pool, domain, pool.column(&row, 1)?)?);
                }
                Ok(out)
            }
        })
    }
}

impl HttpCacheStore for PostgresStore {
    fn cached(&self, url: &Url) -> Result<Option<CacheEntry>, StoreError> {
        self.point_read("SELECT entry FROM http_cache WHERE url = $1", url.as_str())
    }

    fn cached_of_origin(&self, origin: &Url) -> Result<Vec<(String, CacheEntry)>, StoreError> {
        let (start, end) = crate::origin_range(origin);
        self.engine.read(move |pool| {
            let (start, end) = (start.clone(), end.clone());
            async move { cached_of_origin(&pool, &start, &end).await }
        })
    }

    fn set_cached(&self, url: &Url, entry: Option<&CacheEntry>) -> Result<(), StoreError> {
        let url = url.to_string();
        let entry = entry.cloned();
        self.engine.write(move |pool| async move {
            let client = pool.get().await?;
            set_cache_entry(&pool, &*client, &url, entry.as_ref()).await
        })
    }

    fn mark_stale(&self, urls: &[String]) -> Result<usize, StoreError> {
        let urls = urls.to_vec();
        self.engine.write(move |pool| async move {
            let mut client = pool.get().await?;
            let transaction = client
                .transaction()
                .await
                .map_err(|error| pool.error(&error))?;
            // Locked as read, so a crawl storing an entry meanwhile is not undone.
            let rows = transaction
                .query_typed(
                    "SELECT url, entry FROM http_cache WHERE url = ANY($1) FOR UPDATE",
                    &[(&urls, Type::TEXT_ARRAY)],
                )
                .await
                .map_err(|error| pool.error(&error))?;
            let mut marked = 0;
            for row in &rows {
                let url: String = pool.column(row, 0)?;
                let mut entry: CacheEntry = decode(&pool, &url, pool.column(row, 1)?)?;
                if entry.revalidate {
                    continue;
                }
                entry.revalidate = true;
                set_cache_entry(&pool, &transaction, &url, Some(&entry)).await?;
                marked += 1;
            }
            transaction
                .commit()
                .await
                .map_err(|error| pool.error(&error))?;
            Ok(marked)
        })
    }
}

/// Reads the cache entries whose URLs lie in `[start, end)`.
pub(super) async fn cached_of_origin(
    pool: &Arc<Pool>,
    start: &str,
    end: &str,
) -> Result<Vec<(String, CacheEntry)>, StoreError> {
    let client = pool.get().await?;
    let rows = client
        .query_typed(
            "SELECT url, entry FROM http_cache WHERE url >= $1 AND url < $2",
            &[(&start, Type::TEXT), (&end, Type::TEXT)],
        )
        .await
        .map_err(|error| pool.error(&error))?;
    let mut out = Vec::with_capacity(rows.len());
    for row in &rows {
        let url: String = pool.column(row, 0)?;
        let entry = decode(pool, &url, pool.column(row, 1)?)?;
        out.push((url, entry));
    }
    Ok(out)
}

/// The change counter of one writing transaction: locked when read, saved before commit.
pub(super) struct ChangeLog {
    /// The last change number handed out, in this transaction included.
    seq: i64,
    /// The number stored when the lock was taken.
    stored: i64,
}

impl ChangeLog {
    /// Locks the counter row until the transaction ends, and reads it. Every write takes
    /// this lock first, so writers commit in the order of their change numbers.
    pub(super) async fn lock(
        pool: &Pool,
        transaction: &Transaction<'_>,
    ) -> Result<ChangeLog, StoreError> {
        let row = transaction
            .query_typed_one("SELECT last_seq FROM change_counter FOR UPDATE", &[])
            .await
            .map_err(|error| pool.error(&error))?;
        let seq: i64 = pool.column(&row, 0)?;
        Ok(ChangeLog { seq, stored: seq })
    }

    /// Returns the next change number.
    pub(super) fn next(&mut self) -> i64 {
        self.seq += 1;
        self.seq
    }

    /// Stores the counter, when this transaction logged a change.
    pub(super) async fn save(
        &self,
        pool: &Pool,
        transaction: &Transaction<'_>,
    ) -> Result<(), StoreError> {
        if self.seq == self.stored {
            return Ok(());
        }
        transaction
            .execute_typed(
                "UPDATE change_counter SET last_seq = $1",
                &[(&self.seq, Type::INT8)],
            )
            .await
            .map_err(|error| pool.error(&error))?;
        Ok(())
    }
}

/// Applies one domain's crawl inside the batch's transaction, by the rule of
/// [`RecordStore::apply`].
async fn apply_one(
    pool: &Pool,
    transaction: &Transaction<'_>,
    log: &mut ChangeLog,
    update: DomainUpdate,
    now: OffsetDateTime,
) -> Result<ApplyStats, StoreError> {
    // A crawl that was running when its domain was delisted stores nothing.
    if is_delisted(pool, transaction, update.status.domain.as_str()).await? {
        return Ok(ApplyStats::default());
    }
    let rule = Tombstones::of(&update);
    let mut stats = update.streamed.stats;
    for skill in update.fresh {
        let previous = read_record(pool, transaction, &skill.id.to_string()).await?;
        let write = plan_record(previous, skill, now, &mut stats);
        write_record(pool, transaction, log, write).await?;
    }
    for id in vanished(pool, transaction, &update.status.domain, &rule).await? {
        if let Some(old) = read_record(pool, transaction, &id).await? {
            let gone = tombstone(old, now, &mut stats);
            write_record(pool, transaction, log, RecordWrite::Change(gone)).await?;
        }
    }
    let mut status = update.status;
    let domain = status.domain.to_string();
    if status.caching.is_none() {
        let previous = transaction
            .query_typed_opt(
                "SELECT status FROM domains WHERE domain = $1",
                &[(&domain, Type::TEXT)],
            )
            .await
            .map_err(|error| pool.error(&error))?
            .map(|row| decode::<DomainStatus>(pool, &domain, pool.column(&row, 0)?))
            .transpose()?;
        carry_over(&mut status, previous.as_ref());
    }
    let encoded = encode(pool, &domain, &status)?;
    transaction
        .execute_typed(
            "INSERT INTO domains (domain, status) VALUES ($1, $2) \
             ON CONFLICT (domain) DO UPDATE SET status = excluded.status",
            &[(&domain, Type::TEXT), (&encoded, Type::BYTEA)],
        )
        .await
        .map_err(|error| pool.error(&error))?;
    for (url, entry) in &update.cache {
        set_cache_entry(pool, transaction, url.as_str(), entry.as_ref()).await?;
    }
    Ok(stats)
}

/// True when `domain` is delisted: a crawl stores nothing for it.
async fn is_delisted(
    pool: &Pool,
    transaction: &Transaction<'_>,
    domain: &str,
) -> Result<bool, StoreError> {
    let row = transaction
        .query_typed_opt(
            "SELECT 1 FROM frontier WHERE domain = $1 AND delisted_at IS NOT NULL",
            &[(&domain, Type::TEXT)],
        )
        .await
        .map_err(|error| pool.error(&error))?;
    Ok(row.is_some())
}

/// Returns the ids of `domain`'s live records that `rule` removes. Reads ids and index URLs
/// only, never the records.
async fn vanished(
    pool: &Pool,
    transaction: &Transaction<'_>,
    domain: &Domain,
    rule: &Tombstones,
) -> Result<Vec<String>, StoreError> {
    let (start, end) = domain_range(domain);
    let rows = transaction
        .query_typed(
            "SELECT id, index_url FROM records WHERE id > $1 AND id < $2 AND NOT removed \
             ORDER BY id",
            &[(&start, Type::TEXT), (&end, Type::TEXT)],
        )
        .await
        .map_err(|error| pool.error(&error))?;
    let mut out = Vec::new();
    for row in rows {
        let id: String = pool.column(&row, 0)?;
        let index_url: &str = pool.column(&row, 1)?;
        let skill_id: SkillId = id.parse().map_err(|error| pool.corrupt(&id, error))?;
        if rule.removes_live(&skill_id, index_url) {
            out.push(id);
        }
    }
    Ok(out)
}

pub(super) async fn read_record(
    pool: &Pool,
    transaction: &Transaction<'_>,
    id: &str,
) -> Result<Option<StoredRecord>, StoreError> {
    transaction
        .query_typed_opt(
            "SELECT record FROM records WHERE id = $1",
            &[(&id, Type::TEXT)],
        )
        .await
        .map_err(|error| pool.error(&error))?
        .map(|row| decode(pool, id, pool.column(&row, 0)?))
        .transpose()
}

/// Writes what [`plan_record`] decided; a change gets the next change number.
pub(super) async fn write_record(
    pool: &Pool,
    transaction: &Transaction<'_>,
    log: &mut ChangeLog,
    write: RecordWrite,
) -> Result<(), StoreError> {
    let record = match write {
        RecordWrite::Nothing => return Ok(()),
        RecordWrite::Seen(record) => record,
        RecordWrite::Change(mut record) => {
            record.seq =
                u64::try_from(log.next()).map_err(|error| pool.corrupt("change counter", error))?;
            record
        }
    };
    let seq = i64::try_from(record.seq).map_err(|error| pool.corrupt("change number", error))?;
    let id = record.skill.id.to_string();
    let bytes = encode(pool, &id, &record)?;
    transaction
        .execute_typed(
            "INSERT INTO records (id, index_url, removed, seq, record) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (id) DO UPDATE SET index_url = excluded.index_url, \
             removed = excluded.removed, seq = excluded.seq, record = excluded.record",
            &[
                (&id, Type::TEXT),
                (&record.skill.index_url.as_str(), Type::TEXT),
                (&record.is_tombstone(), Type::BOOL),
                (&seq, Type::INT8),
                (&bytes, Type::BYTEA),
            ],
        )
        .await
        .map_err(|error| pool.error(&error))?;
    Ok(())
}

/// Stores (or, with `None`, forgets) the cache entry for `url`.
async fn set_cache_entry(
    pool: &Pool,
    client: &impl tokio_postgres::GenericClient,
    url: &str,
    entry: Option<&CacheEntry>,
) -> Result<(), StoreError> {
    let result = match entry {
        Some(entry) => {
            let bytes = encode(pool, url, entry)?;
            client
                .execute_typed(
                    "INSERT INTO http_cache (url, entry) VALUES ($1, $2) \
                     ON CONFLICT (url) DO UPDATE SET entry = excluded.entry",
                    &[(&url, Type::TEXT), (&bytes, Type::BYTEA)],
                )
                .await
        }
        None => {
            client
                .execute_typed(
                    "DELETE FROM http_cache WHERE url = $1",
                    &[(&url, Type::TEXT)],
                )
                .await
        }
    };
    result.map_err(|error| pool.error(&error))?;
    Ok(())
}

impl PostgresStore {
    /// Reads the one JSON value `sql` selects for the text key `$1` (retried like every read),
    /// or `None` when there is no row.
    fn point_read<T: DeserializeOwned + Send + 'static>(
        &self,
        sql: &'static str,
        key: &str,
    ) -> Result<Option<T>, StoreError> {
        let key = key.to_owned();
        self.engine.read(move |pool| {
            let key = key.clone();
            async move {
                let client = pool.get().await?;
                let row = client
                    .query_typed_opt(sql, &[(&key, Type::TEXT)])
                    .await
                    .map_err(|error| pool.error(&error))?;
                row.map(|row| decode(&pool, &key, pool.column(&row, 0)?))
                    .transpose()
            }
        })
    }
}

pub(super) fn decode<T: DeserializeOwned>(
    pool: &Pool,
    what: &str,
    bytes: &[u8],
) -> Result<T, StoreError> {
    serde_json::from_slice(bytes).map_err(|error| pool.corrupt(what, error))
}

pub(super) fn encode<T: Serialize>(
    pool: &Pool,
    what: &str,
    value: &T,
) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec(value).map_err(|error| pool.corrupt(what, error))
}

/// The id range of `domain`'s records, both ends excluded: ids sort bytewise (collation
/// "C"), no id is `{domain}/` itself (a slug is never empty), and '0' follows '/'.
pub(super) fn domain_range(domain: &Domain) -> (String, String) {
    (format!("{domain}/"), format!("{domain}0"))
}
