//! The embedded backend: records (with tombstones and a change sequence), per-domain status
//! and HTTP cache entries in one redb database file inside the data directory.
//!
//! redb allows one writer at a time and one process per file, which is what a single-machine
//! directory needs; every call is a short transaction, run by the [`Store`](crate::Store)
//! handle on the blocking pool.

mod frontier;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use formats::{Domain, Skill};
use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use url::Url;

use crate::apply::{RecordHead, RecordWrite, Tombstones, carry_over, plan_record, tombstone};
use crate::types::{ApplyStats, CacheEntry, DomainStatus, DomainUpdate, StoreError, StoredRecord};
use crate::{HttpCacheStore, RecordStore};

/// The database file inside the data directory.
pub const STORE_FILE: &str = "crawl.redb";
/// redb's page cache. Its default, 1 GiB, is a ceiling that a crawl of many hosts fills with
/// pages it never reads again (each domain's status and records are written once per crawl),
/// so the process's memory grew with the number of hosts; the interior pages that lookups
/// re-read fit in far less.
const CACHE_BYTES: usize = 4 * 1024 * 1024;

/// Record id -> JSON of [`StoredRecord`].
const RECORDS: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("records");
/// Change sequence number -> record id, one entry per upsert or delete.
const CHANGES: TableDefinition<'_, u64, &str> = TableDefinition::new("changes");
/// Domain -> JSON of [`DomainStatus`].
const DOMAINS: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("domains");
/// URL -> JSON of [`CacheEntry`].
const HTTP_CACHE: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("http_cache");
/// Facts about the store itself: its identity.
const META: TableDefinition<'_, &str, &str> = TableDefinition::new("meta");
/// The key of the store's identity in [`META`].
const IDENTITY: &str = "identity";

/// Copies every entry of `table` from a read transaction into a write transaction.
fn copy_table<K: redb::Key + 'static, V: redb::Value + 'static>(
    read: &redb::ReadTransaction,
    write: &redb::WriteTransaction,
    table: TableDefinition<'_, K, V>,
) -> Result<(), redb::Error> {
    let source = read.open_table(table)?;
    let mut target = write.open_table(table)?;
    for entry in source.iter()? {
        let (key, value) = entry?;
        target.insert(key.value(), value.value())?;
    }
    Ok(())
}

/// The store's clock: what "now" is for the frontier's schedule (a test sets its own).
pub type Clock = Arc<dyn Fn() -> OffsetDateTime + Send + Sync>;

/// The crawl state in one redb file in the data directory.
pub struct EmbeddedStore {
    db: Database,
    path: PathBuf,
    clock: Clock,
    /// The frontier's leases, by domain (see the `frontier` module).
    leases: Mutex<frontier::Leases>,
}

impl std::fmt::Debug for EmbeddedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl EmbeddedStore {
    /// Opens (creating if needed) the store in `data_dir`.
    pub fn open(data_dir: &Path) -> Result<EmbeddedStore, StoreError> {
        EmbeddedStore::open_with_clock(data_dir, Arc::new(OffsetDateTime::now_utc))
    }

    /// Opens the store in `data_dir` with `clock` as its idea of now (for tests of the
    /// frontier's schedule).
    pub fn open_with_clock(data_dir: &Path, clock: Clock) -> Result<EmbeddedStore, StoreError> {
        let path = data_dir.join(STORE_FILE);
        let database_error = |message: String| StoreError::Database {
            location: path.display().to_string(),
            message,
        };
        std::fs::create_dir_all(data_dir).map_err(|error| {
            database_error(format!("cannot create the data directory: {error}"))
        })?;
        let db = match redb::Builder::new()
            .set_cache_size(CACHE_BYTES)
            .create(&path)
        {
            Ok(db) => db,
            Err(redb::DatabaseError::DatabaseAlreadyOpen) => {
                return Err(StoreError::InUse {
                    location: path.display().to_string(),
                });
            }
            Err(error) => return Err(database_error(error.to_string())),
        };
        let store = EmbeddedStore {
            db,
            path,
            clock,
            leases: Mutex::new(frontier::Leases::new()),
        };
        // Create every table up front, so that readers never meet a missing one.
        store.write(|txn| {
            txn.open_table(RECORDS)?;
            txn.open_table(CHANGES)?;
            txn.open_table(DOMAINS)?;
            txn.open_table(HTTP_CACHE)?;
            EmbeddedStore::create_frontier_tables(txn)?;
            let mut meta = txn.open_table(META)?;
            if meta.get(IDENTITY)?.is_none() {
                meta.insert(IDENTITY, new_identity().as_str())?;
            }
            Ok(())
        })?;
        Ok(store)
    }

    /// Writes a consistent copy of the whole store, as of one read transaction (writers go on
    /// meanwhile), into a new database file at `dest`; returns the number of records (and
    /// tombstones) it holds.
    pub fn snapshot(&self, dest: &Path) -> Result<u64, StoreError> {
        let database_error = |message: String| StoreError::Database {
            location: dest.display().to_string(),
            message,
        };
        let copy = redb::Builder::new()
            .set_cache_size(CACHE_BYTES)
            .create(dest)
            .map_err(|error| database_error(error.to_string()))?;
        let read = self.db.begin_read().map_err(|e| self.error(e))?;
        let write = copy
            .begin_write()
            .map_err(|error| database_error(error.to_string()))?;
        let records = (|| -> Result<u64, redb::Error> {
            copy_table(&read, &write, RECORDS)?;
            copy_table(&read, &write, CHANGES)?;
            copy_table(&read, &write, DOMAINS)?;
            copy_table(&read, &write, HTTP_CACHE)?;
            copy_table(&read, &write, META)?;
            copy_table(&read, &write, frontier::FRONTIER)?;
            copy_table(&read, &write, frontier::DUE)?;
            copy_table(&read, &write, frontier::LAST)?;
            copy_table(&read, &write, frontier::DELISTED)?;
            Ok(read.open_table(RECORDS)?.len()?)
        })()
        .map_err(|error| database_error(error.to_string()))?;
        write
            .commit()
            .map_err(|error| database_error(error.to_string()))?;
        Ok(records)
    }

    /// Returns the database file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn error(&self, error: impl Into<redb::Error>) -> StoreError {
        StoreError::Database {
            location: self.path.display().to_string(),
            message: error.into().to_string(),
        }
    }

    fn corrupt(&self, what: &str, error: &serde_json::Error) -> StoreError {
        StoreError::Corrupt {
            location: self.path.display().to_string(),
            what: what.to_owned(),
            message: error.to_string(),
        }
    }

    fn write<T>(
        &self,
        body: impl FnOnce(&redb::WriteTransaction) -> Result<T, redb::Error>,
    ) -> Result<T, StoreError> {
        let txn = self.db.begin_write().map_err(|e| self.error(e))?;
        let value = body(&txn).map_err(|e| self.error(e))?;
        txn.commit().map_err(|e| self.error(e))?;
        Ok(value)
    }

    fn decode<T: for<'de> Deserialize<'de>>(
        &self,
        what: &str,
        bytes: &[u8],
    ) -> Result<T, StoreError> {
        serde_json::from_slice(bytes).map_err(|error| self.corrupt(what, &error))
    }

    fn encode<T: Serialize>(&self, what: &str, value: &T) -> Result<Vec<u8>, StoreError> {
        serde_json::to_vec(value).map_err(|error| self.corrupt(what, &error))
    }

    fn read_record(
        &self,
        table: &impl ReadableTable<&'static str, &'static [u8]>,
        id: &str,
    ) -> Result<Option<StoredRecord>, StoreError> {
        let Some(bytes) = table.get(id).map_err(|e| self.error(e))? else {
            return Ok(None);
        };
        self.decode(id, bytes.value()).map(Some)
    }

    /// Writes what [`plan_record`] decided; a change gets the next change number.
    fn write_record(
        &self,
        records: &mut redb::Table<'_, &'static str, &'static [u8]>,
        changes: &mut redb::Table<'_, u64, &'static str>,
        seq: &mut u64,
        write: RecordWrite,
    ) -> Result<(), StoreError> {
        let (mut record, logged) = match write {
            RecordWrite::Nothing => return Ok(()),
            RecordWrite::Seen(record) => (record, false),
            RecordWrite::Change(record) => (record, true),
        };
        if logged {
            *seq += 1;
            record.seq = *seq;
        }
        let id = record.skill.id.to_string();
        let bytes = self.encode(&id, &record)?;
        records
            .insert(id.as_str(), bytes.as_slice())
            .map_err(|e| self.error(e))?;
        if logged {
            changes
                .insert(*seq, id.as_str())
                .map_err(|e| self.error(e))?;
        }
        Ok(())
    }

    /// Returns the ids of `domain`'s stored records that `rule` removes, reading one record
    /// head at a time.
    fn vanished(
        &self,
        table: &impl ReadableTable<&'static str, &'static [u8]>,
        domain: &Domain,
        rule: &Tombstones,
    ) -> Result<Vec<String>, StoreError> {
        let mut out = Vec::new();
        let (start, end) = domain_range(domain);
        for entry in table
            .range(start.as_str()..end.as_str())
            .map_err(|e| self.error(e))?
        {
            let (key, value) = entry.map_err(|e| self.error(e))?;
            let head: RecordHead = self.decode(key.value(), value.value())?;
            if rule.removes(&head) {
                out.push(key.value().to_owned());
            }
        }
        Ok(out)
    }

    fn read_records_of(
        &self,
        table: &impl ReadableTable<&'static str, &'static [u8]>,
        domain: &Domain,
    ) -> Result<Vec<StoredRecord>, StoreError> {
        let (prefix, end) = domain_range(domain);
        let mut out = Vec::new();
        for entry in table
            .range(prefix.as_str()..end.as_str())
            .map_err(|e| self.error(e))?
        {
            let (key, value) = entry.map_err(|e| self.error(e))?;
            out.push(self.decode(key.value(), value.value())?);
        }
        Ok(out)
    }
}

impl RecordStore for EmbeddedStore {
    fn snapshot(&self, dest: &Path) -> Result<u64, StoreError> {
        EmbeddedStore::snapshot(self, dest)
    }

    /// Returns the stored record with `id`, tombstones included.
    fn record(&self, id: &str) -> Result<Option<StoredRecord>, StoreError> {
        let txn = self.db.begin_read().map_err(|e| self.error(e))?;
        let table = txn.open_table(RECORDS).map_err(|e| self.error(e))?;
        self.read_record(&table, id)
    }

    /// Returns every record of `domain`, tombstones included, in id order.
    fn records_of(&self, domain: &Domain) -> Result<Vec<StoredRecord>, StoreError> {
        let txn = self.db.begin_read().map_err(|e| self.error(e))?;
        let table = txn.open_table(RECORDS).map_err(|e| self.error(e))?;
        self.read_records_of(&table, domain)
    }

    /// Hands every record of `domain` to `visit`, one at a time, in id order.
    fn visit_records_of(
        &self,
        domain: &Domain,
        visit: &mut dyn FnMut(StoredRecord),
    ) -> Result<(), StoreError> {
        let txn = self.db.begin_read().map_err(|e| self.error(e))?;
        let table = txn.open_table(RECORDS).map_err(|e| self.error(e))?;
        let (start, end) = domain_range(domain);
        for entry in table
            .range(start.as_str()..end.as_str())
            .map_err(|e| self.error(e))?
        {
            let (key, value) = entry.map_err(|e| self.error(e))?;
            visit(self.decode(key.value(), value.value())?);
        }
        Ok(())
    }

    /// Returns the changes after sequence number `after`, oldest first, at most `limit`.
    fn changes_after(&self, after: u64, limit: usize) -> Result<Vec<StoredRecord>, StoreError> {
        let txn = self.db.begin_read().map_err(|e| self.error(e))?;
        let changes = txn.open_table(CHANGES).map_err(|e| self.error(e))?;
        let records = txn.open_table(RECORDS).map_err(|e| self.error(e))?;
        let mut out = Vec::new();
        for entry in changes
            .range(after.saturating_add(1)..)
            .map_err(|e| self.error(e))?
        {
            if out.len() >= limit {
                break;
            }
            let (seq, id) = entry.map_err(|e| self.error(e))?;
            let Some(bytes) = records.get(id.value()).map_err(|e| self.error(e))? else {
                continue;
            };
            let record: StoredRecord = self.decode(id.value(), bytes.value())?;
            // A record changed again later appears once, at its latest sequence number.
            if record.seq == seq.value() {
                out.push(record);
            }
        }
        Ok(out)
    }

    fn identity(&self) -> Result<String, StoreError> {
        let txn = self.db.begin_read().map_err(|e| self.error(e))?;
        let meta = txn.open_table(META).map_err(|e| self.error(e))?;
        Ok(meta
            .get(IDENTITY)
            .map_err(|e| self.error(e))?
            .map(|value| value.value().to_owned())
            .unwrap_or_default())
    }

    /// Returns the highest change sequence number (0 when nothing was stored yet).
    fn last_seq(&self) -> Result<u64, StoreError> {
        let txn = self.db.begin_read().map_err(|e| self.error(e))?;
        let changes = txn.open_table(CHANGES).map_err(|e| self.error(e))?;
        let last = changes.last().map_err(|e| self.error(e))?;
        Ok(last.map_or(0, |(seq, _)| seq.value()))
    }

    /// Stores the results of crawling several domains, with their HTTP cache updates, in one
    /// transaction (one disk sync for many small domains). Each domain is applied as
    /// [`RecordStore::apply`] describes; the statistics come back in the same order.
    fn apply(
        &self,
        updates: Vec<DomainUpdate>,
        now: OffsetDateTime,
    ) -> Result<Vec<ApplyStats>, StoreError> {
        let txn = self.db.begin_write().map_err(|e| self.error(e))?;
        let mut all_stats = Vec::with_capacity(updates.len());
        {
            let mut changes = txn.open_table(CHANGES).map_err(|e| self.error(e))?;
            let mut records = txn.open_table(RECORDS).map_err(|e| self.error(e))?;
            let mut domains = txn.open_table(DOMAINS).map_err(|e| self.error(e))?;
            let mut cache = txn.open_table(HTTP_CACHE).map_err(|e| self.error(e))?;
            let last = changes.last().map_err(|e| self.error(e))?;
            let mut seq = last.map_or(0, |(seq, _)| seq.value());

            for update in updates {
                // A crawl that was running when its domain was delisted stores nothing.
                if self.is_delisted_in(&txn, update.status.domain.as_str())? {
                    all_stats.push(ApplyStats::default());
                    continue;
                }
                let rule = Tombstones::of(&update);
                let mut stats = update.streamed.stats;
                for skill in update.fresh {
                    let previous = self.read_record(&records, &skill.id.to_string())?;
                    let write = plan_record(previous, skill, now, &mut stats);
                    self.write_record(&mut records, &mut changes, &mut seq, write)?;
                }
                for id in self.vanished(&records, &update.status.domain, &rule)? {
                    if let Some(old) = self.read_record(&records, &id)? {
                        let gone = tombstone(old, now, &mut stats);
                        self.write_record(
                            &mut records,
                            &mut changes,
                            &mut seq,
                            RecordWrite::Change(gone),
                        )?;
                    }
                }
                let mut status = update.status;
                if status.caching.is_none() {
                    let previous = domains
                        .get(status.domain.as_str())
                        .map_err(|e| self.error(e))?
                        .map(|bytes| self.decode::<DomainStatus>("domain status", bytes.value()))
                        .transpose()?;
                    carry_over(&mut status, previous.as_ref());
                }
                let encoded_status = self.encode("domain status", &status)?;
                domains
                    .insert(status.domain.as_str(), encoded_status.as_slice())
                    .map_err(|e| self.error(e))?;
                for (url, entry) in &update.cache {
                    match entry {
                        Some(entry) => {
                            let bytes = self.encode(url.as_str(), entry)?;
                            cache
                                .insert(url.as_str(), bytes.as_slice())
                                .map_err(|e| self.error(e))?;
                        }
                        None => {
                            cache.remove(url.as_str()).map_err(|e| self.error(e))?;
                        }
                    }
                }
                all_stats.push(stats);
            }
        }
        // Dropping the transaction on an error above aborts it: a batch is stored whole or
        // not at all.
        txn.commit().map_err(|e| self.error(e))?;
        Ok(all_stats)
    }

    /// Stores records of a domain whose crawl is still running, in one transaction.
    fn upsert(&self, fresh: Vec<Skill>, now: OffsetDateTime) -> Result<ApplyStats, StoreError> {
        let txn = self.db.begin_write().map_err(|e| self.error(e))?;
        let mut stats = ApplyStats::default();
        {
            let mut changes = txn.open_table(CHANGES).map_err(|e| self.error(e))?;
            let mut records = txn.open_table(RECORDS).map_err(|e| self.error(e))?;
            let last = changes.last().map_err(|e| self.error(e))?;
            let mut seq = last.map_or(0, |(seq, _)| seq.value());
            for skill in fresh {
                if self.is_delisted_in(&txn, skill.domain.as_str())? {
                    continue;
                }
                let previous = self.read_record(&records, &skill.id.to_string())?;
                let write = plan_record(previous, skill, now, &mut stats);
                self.write_record(&mut records, &mut changes, &mut seq, write)?;
            }
        }
        txn.commit().map_err(|e| self.error(e))?;
        Ok(stats)
    }

    /// Returns the status of `domain`, if it was ever crawled.
    fn domain(&self, domain: &Domain) -> Result<Option<DomainStatus>, StoreError> {
        let txn = self.db.begin_read().map_err(|e| self.error(e))?;
        let table = txn.open_table(DOMAINS).map_err(|e| self.error(e))?;
        let Some(bytes) = table.get(domain.as_str()).map_err(|e| self.error(e))? else {
            return Ok(None);
        };
        self.decode(domain.as_str(), bytes.value()).map(Some)
    }

    fn domains_after(
        &self,
        after: Option<&Domain>,
        limit: usize,
    ) -> Result<Vec<DomainStatus>, StoreError> {
        let txn = self.db.begin_read().map_err(|e| self.error(e))?;
        let table = txn.open_table(DOMAINS).map_err(|e| self.error(e))?;
        let range = match after {
            Some(after) => table.range::<&str>((
                std::ops::Bound::Excluded(after.as_str()),
                std::ops::Bound::Unbounded,
            )),
            None => table.range::<&str>(..),
        };
        let mut out = Vec::new();
        for entry in range.map_err(|e| self.error(e))? {
            if out.len() >= limit {
                break;
            }
            let (key, value) = entry.map_err(|e| self.error(e))?;
            out.push(self.decode(key.value(), value.value())?);
        }
        Ok(out)
    }
}

impl HttpCacheStore for EmbeddedStore {
    /// Returns the cache entry for `url`.
    fn cached(&self, url: &Url) -> Result<Option<CacheEntry>, StoreError> {
        let txn = self.db.begin_read().map_err(|e| self.error(e))?;
        let table = txn.open_table(HTTP_CACHE).map_err(|e| self.error(e))?;
        let Some(bytes) = table.get(url.as_str()).map_err(|e| self.error(e))? else {
            return Ok(None);
        };
        self.decode(url.as_str(), bytes.value()).map(Some)
    }

    fn cached_of_origin(&self, origin: &Url) -> Result<Vec<(String, CacheEntry)>, StoreError> {
        let txn = self.db.begin_read().map_err(|e| self.error(e))?;
        let table = txn.open_table(HTTP_CACHE).map_err(|e| self.error(e))?;
        let (start, end) = crate::origin_range(origin);
        let mut out = Vec::new();
        for entry in table
            .range(start.as_str()..end.as_str())
            .map_err(|e| self.error(e))?
        {
            let (key, value) = entry.map_err(|e| self.error(e))?;
            out.push((
                key.value().to_owned(),
                self.decode(key.value(), value.value())?,
            ));
        }
        Ok(out)
    }

    /// Stores (or, with `None`, forgets) the cache entry for `url`.
    fn set_cached(&self, url: &Url, entry: Option<&CacheEntry>) -> Result<(), StoreError> {
        let encoded = match entry {
            Some(entry) => Some(self.encode(url.as_str(), entry)?),
            None => None,
        };
        self.write(|txn| {
            let mut table = txn.open_table(HTTP_CACHE)?;
            match &encoded {
                Some(bytes) => {
                    table.insert(url.as_str(), bytes.as_slice())?;
                }
                None => {
                    table.remove(url.as_str())?;
                }
            }
            Ok(())
        })
    }

    fn mark_stale(&self, urls: &[String]) -> Result<usize, StoreError> {
        // Read and rewritten in the write transaction, so a crawl storing an entry meanwhile
        // is not undone.
        let txn = self.db.begin_write().map_err(|e| self.error(e))?;
        let mut marked = 0;
        {
            let mut table = txn.open_table(HTTP_CACHE).map_err(|e| self.error(e))?;
            for url in urls {
                let stored = table
                    .get(url.as_str())
                    .map_err(|e| self.error(e))?
                    .map(|value| value.value().to_vec());
                let Some(bytes) = stored else { continue };
                let mut entry: CacheEntry = self.decode(url, &bytes)?;
                if entry.revalidate {
                    continue;
                }
                entry.revalidate = true;
                let bytes = self.encode(url, &entry)?;
                table
                    .insert(url.as_str(), bytes.as_slice())
                    .map_err(|e| self.error(e))?;
                marked += 1;
            }
        }
        txn.commit().map_err(|e| self.error(e))?;
        Ok(marked)
    }
}

/// A new store identity: 128 bits that no other store has, from the process's random hash
/// keys (seeded by the operating system), the time and the process id.
fn new_identity() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut out = String::with_capacity(32);
    for part in 0..2u8 {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u8(part);
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|since| since.as_nanos())
                .unwrap_or_default(),
        );
        hasher.write_u32(std::process::id());
        out.push_str(&format!("{:016x}", hasher.finish()));
    }
    out
}

/// The key range of `domain`'s record ids. Ids sort by domain first; '0' is the character
/// after '/', so the range holds exactly the ids that start with `{domain}/`.
fn domain_range(domain: &Domain) -> (String, String) {
    (format!("{domain}/"), format!("{domain}0"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unusable_directory_is_an_error() {
        let dir = std::env::temp_dir().join(format!("skillscout-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("not-a-dir");
        std::fs::write(&file, b"x").unwrap();
        let error = EmbeddedStore::open(&file).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("cannot create the data directory"),
            "{error}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
