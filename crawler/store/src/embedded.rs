//! The crawl state kept in the data directory: records (with tombstones and a change
//! sequence), per-domain status, and HTTP cache entries, in one embedded redb database.
//!
//! State survives restarts, so crawls are incremental (DESIGN.md §3): a record whose content
//! did not change is not rewritten and gets no new change sequence number; a record that
//! vanished from its index becomes a tombstone with the time it was removed. Consumers (the
//! search index, `/v1/changes`) read the change log from a sequence number on, so they see
//! every upsert and delete exactly once and in order.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use url::Url;

use formats::Diagnostic;
use formats::{Digest, Domain, Format, Skill, SkillId};

/// The database file inside the data directory.
pub const STORE_FILE: &str = "crawl.redb";

/// Record id -> JSON of [`StoredRecord`].
const RECORDS: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("records");
/// Change sequence number -> record id, one entry per upsert or delete.
const CHANGES: TableDefinition<'_, u64, &str> = TableDefinition::new("changes");
/// Domain -> JSON of [`DomainStatus`].
const DOMAINS: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("domains");
/// URL -> JSON of [`CacheEntry`].
const HTTP_CACHE: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("http_cache");

/// What went wrong with the store; the caller cannot crawl without it.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The data directory cannot be created or the database cannot be opened or written.
    #[error("crawl store {path}: {message}")]
    Database {
        /// The database file.
        path: PathBuf,
        /// What the database said.
        message: String,
    },
    /// A stored value cannot be decoded: the store was written by an incompatible version.
    #[error("crawl store {path}: cannot decode {what}: {message}")]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// Which value.
        what: String,
        /// The decoding error.
        message: String,
    },
}

/// A record as stored: the normalised skill plus its place in the change log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredRecord {
    /// The record.
    pub skill: Skill,
    /// When the skill vanished from its index; `None` while it is published.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub removed_at: Option<OffsetDateTime>,
    /// The change sequence number of the record's last upsert or delete.
    pub seq: u64,
}

impl StoredRecord {
    /// Returns true when the record is a tombstone.
    pub fn is_tombstone(&self) -> bool {
        self.removed_at.is_some()
    }
}

/// How a domain's last crawl ended (DESIGN.md §5 report `outcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// At least one index was read.
    Ok,
    /// The origin answered, but publishes no index.
    NotFound,
    /// robots.txt forbids the well-known paths, or could not be read (429, 5xx, unreachable).
    Disallowed,
    /// The origin could not be reached at all.
    Unreachable,
    /// Something else went wrong (a refused destination, an index that could not be used).
    Error,
}

/// One error of a domain's crawl, as the report shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrawlErrorEntry {
    /// Stable snake_case code.
    pub code: String,
    /// What happened.
    pub message: String,
    /// The URL it happened at.
    pub url: String,
    /// The record it concerns, when it concerns one: whoever may not see the record does not
    /// see the error either. The crawl report leaves it out (see [`crate::report`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<SkillId>,
}

/// The state of one domain after its last crawl.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DomainStatus {
    /// The domain.
    pub domain: Domain,
    /// The origin crawled, e.g. `https://example.com` or `https://example.com/docs`.
    pub origin: String,
    /// How the crawl ended.
    pub outcome: Outcome,
    /// The formats found.
    pub formats: Vec<Format>,
    /// The index URLs read successfully in the last crawl.
    pub indexes: Vec<Url>,
    /// Live skills after the crawl.
    pub skills: usize,
    /// HTTP requests made, robots.txt included.
    pub requests: usize,
    /// Errors of the crawl (at most a few hundred are listed).
    pub errors: Vec<CrawlErrorEntry>,
    /// Errors past the listed ones, counted only.
    #[serde(default)]
    pub errors_omitted: usize,
    /// Index-level diagnostics.
    pub diagnostics: Vec<Diagnostic>,
    /// When the crawl of this domain finished.
    #[serde(with = "time::serde::rfc3339")]
    pub crawled_at: OffsetDateTime,
    /// When an index of this domain was last read successfully; every live record was seen
    /// then.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub last_success: Option<OffsetDateTime>,
}

/// A cached HTTP response: what is needed to decide freshness and to revalidate, and where
/// the body is kept (in the blob store, by digest), for re-use on a 304 or while fresh.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheEntry {
    /// The serialised `http_cache_semantics::CachePolicy`.
    pub policy: serde_json::Value,
    /// The response status: 200 for a stored body, 404 or 410 for a cached "not found".
    #[serde(default = "ok_status")]
    pub status: u16,
    /// The digest of the body in the blob store (`None` for a cached "not found").
    pub body: Option<Digest>,
    /// When the response was stored.
    #[serde(with = "time::serde::rfc3339")]
    pub stored_at: OffsetDateTime,
}

fn ok_status() -> u16 {
    200
}

/// What applying a domain's crawl changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApplyStats {
    /// Records that did not exist (or were tombstones) before.
    pub added: usize,
    /// Records whose content changed.
    pub updated: usize,
    /// Records that vanished from an index read in this crawl.
    pub removed: usize,
    /// Records seen again with the same content.
    pub unchanged: usize,
}

/// The crawl state in the data directory.
#[derive(Debug)]
pub struct Store {
    db: Database,
    path: PathBuf,
}

impl Store {
    /// Opens (creating if needed) the store in `data_dir`.
    pub fn open(data_dir: &Path) -> Result<Store, StoreError> {
        let path = data_dir.join(STORE_FILE);
        let database_error = |message: String| StoreError::Database {
            path: path.clone(),
            message,
        };
        std::fs::create_dir_all(data_dir).map_err(|error| {
            database_error(format!("cannot create the data directory: {error}"))
        })?;
        let db = Database::create(&path).map_err(|error| database_error(error.to_string()))?;
        let store = Store { db, path };
        // Create every table up front, so that readers never meet a missing one.
        store.write(|txn| {
            txn.open_table(RECORDS)?;
            txn.open_table(CHANGES)?;
            txn.open_table(DOMAINS)?;
            txn.open_table(HTTP_CACHE)?;
            Ok(())
        })?;
        Ok(store)
    }

    /// Returns the database file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn error(&self, error: impl Into<redb::Error>) -> StoreError {
        StoreError::Database {
            path: self.path.clone(),
            message: error.into().to_string(),
        }
    }

    fn corrupt(&self, what: &str, error: &serde_json::Error) -> StoreError {
        StoreError::Corrupt {
            path: self.path.clone(),
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

    /// Returns the stored record with `id`, tombstones included.
    pub fn record(&self, id: &str) -> Result<Option<StoredRecord>, StoreError> {
        let txn = self.db.begin_read().map_err(|e| self.error(e))?;
        let table = txn.open_table(RECORDS).map_err(|e| self.error(e))?;
        let Some(bytes) = table.get(id).map_err(|e| self.error(e))? else {
            return Ok(None);
        };
        self.decode(id, bytes.value()).map(Some)
    }

    /// Returns every record of `domain`, tombstones included, in id order.
    pub fn records_of(&self, domain: &Domain) -> Result<Vec<StoredRecord>, StoreError> {
        let txn = self.db.begin_read().map_err(|e| self.error(e))?;
        let table = txn.open_table(RECORDS).map_err(|e| self.error(e))?;
        self.read_records_of(&table, domain)
    }

    /// Returns the changes after sequence number `after`, oldest first, at most `limit`.
    pub fn changes_after(&self, after: u64, limit: usize) -> Result<Vec<StoredRecord>, StoreError> {
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

    /// Returns the highest change sequence number (0 when nothing was stored yet).
    pub fn last_seq(&self) -> Result<u64, StoreError> {
        let txn = self.db.begin_read().map_err(|e| self.error(e))?;
        let changes = txn.open_table(CHANGES).map_err(|e| self.error(e))?;
        let last = changes.last().map_err(|e| self.error(e))?;
        Ok(last.map_or(0, |(seq, _)| seq.value()))
    }

    /// Stores the result of crawling one domain, in one transaction.
    ///
    /// `fresh` holds the records built in this crawl; `status.indexes` the index URLs that
    /// were read successfully (fetched, or confirmed unchanged). A stored live record of the
    /// domain that came from one of those indexes and is not in `fresh` becomes a tombstone;
    /// records of indexes that could not be read this time are left alone.
    pub fn apply_domain(
        &self,
        status: &DomainStatus,
        fresh: Vec<Skill>,
        now: OffsetDateTime,
    ) -> Result<ApplyStats, StoreError> {
        let update = DomainUpdate {
            status: status.clone(),
            fresh,
            cache: Vec::new(),
        };
        let mut stats = self.apply(vec![update], now)?;
        Ok(stats.pop().unwrap_or_default())
    }

    /// Stores the results of crawling several domains, with their HTTP cache updates, in one
    /// transaction (one disk sync for many small domains). Each domain is applied as
    /// [`Store::apply_domain`] describes; the statistics come back in the same order.
    pub fn apply(
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
                let existing = self.read_records_of(&records, &update.status.domain)?;
                let (writes, stats) = plan_domain(&update.status, update.fresh, existing, now);
                for mut record in writes {
                    seq += 1;
                    record.seq = seq;
                    let id = record.skill.id.to_string();
                    let bytes = self.encode(&id, &record)?;
                    records
                        .insert(id.as_str(), bytes.as_slice())
                        .map_err(|e| self.error(e))?;
                    changes
                        .insert(seq, id.as_str())
                        .map_err(|e| self.error(e))?;
                }
                let encoded_status = self.encode("domain status", &update.status)?;
                domains
                    .insert(update.status.domain.as_str(), encoded_status.as_slice())
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

    fn read_records_of(
        &self,
        table: &impl ReadableTable<&'static str, &'static [u8]>,
        domain: &Domain,
    ) -> Result<Vec<StoredRecord>, StoreError> {
        let prefix = format!("{domain}/");
        // Ids sort by domain first; '0' is the character after '/', so this range holds
        // exactly the ids that start with `{domain}/`.
        let end = format!("{domain}0");
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

    /// Returns the status of `domain`, if it was ever crawled.
    pub fn domain(&self, domain: &Domain) -> Result<Option<DomainStatus>, StoreError> {
        let txn = self.db.begin_read().map_err(|e| self.error(e))?;
        let table = txn.open_table(DOMAINS).map_err(|e| self.error(e))?;
        let Some(bytes) = table.get(domain.as_str()).map_err(|e| self.error(e))? else {
            return Ok(None);
        };
        self.decode(domain.as_str(), bytes.value()).map(Some)
    }

    /// Returns the status of every domain ever crawled, in domain order.
    pub fn domains(&self) -> Result<Vec<DomainStatus>, StoreError> {
        let txn = self.db.begin_read().map_err(|e| self.error(e))?;
        let table = txn.open_table(DOMAINS).map_err(|e| self.error(e))?;
        let mut out = Vec::new();
        for entry in table.iter().map_err(|e| self.error(e))? {
            let (key, value) = entry.map_err(|e| self.error(e))?;
            out.push(self.decode(key.value(), value.value())?);
        }
        Ok(out)
    }

    /// Returns the cache entry for `url`.
    pub fn cached(&self, url: &Url) -> Result<Option<CacheEntry>, StoreError> {
        let txn = self.db.begin_read().map_err(|e| self.error(e))?;
        let table = txn.open_table(HTTP_CACHE).map_err(|e| self.error(e))?;
        let Some(bytes) = table.get(url.as_str()).map_err(|e| self.error(e))? else {
            return Ok(None);
        };
        self.decode(url.as_str(), bytes.value()).map(Some)
    }

    /// Stores (or, with `None`, forgets) the cache entry for `url`.
    pub fn set_cached(&self, url: &Url, entry: Option<&CacheEntry>) -> Result<(), StoreError> {
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
}

/// One domain's crawl, as the store takes it.
#[derive(Debug, Clone)]
pub struct DomainUpdate {
    /// The domain's status after the crawl.
    pub status: DomainStatus,
    /// The records built in this crawl.
    pub fresh: Vec<Skill>,
    /// HTTP cache entries to store (`Some`) or forget (`None`).
    pub cache: Vec<(Url, Option<CacheEntry>)>,
}

/// Decides which records of a domain to write: new and changed ones (keeping `first_seen`),
/// and tombstones for the ones that vanished from an index read in this crawl.
fn plan_domain(
    status: &DomainStatus,
    fresh: Vec<Skill>,
    existing: Vec<StoredRecord>,
    now: OffsetDateTime,
) -> (Vec<StoredRecord>, ApplyStats) {
    let read_indexes: BTreeSet<&str> = status.indexes.iter().map(Url::as_str).collect();
    let fresh_ids: BTreeSet<String> = fresh.iter().map(|skill| skill.id.to_string()).collect();
    let mut stats = ApplyStats::default();
    let mut writes: Vec<StoredRecord> = Vec::new();

    let by_id: std::collections::HashMap<&formats::SkillId, &StoredRecord> = existing
        .iter()
        .map(|record| (&record.skill.id, record))
        .collect();
    for mut skill in fresh {
        let previous = by_id.get(&skill.id).copied();
        match previous {
            Some(old) if !old.is_tombstone() && same_content(&old.skill, &skill) => {
                stats.unchanged += 1;
                continue;
            }
            Some(old) if !old.is_tombstone() => {
                skill.first_seen = old.skill.first_seen;
                skill.last_changed = now;
                stats.updated += 1;
            }
            Some(old) => {
                skill.first_seen = old.skill.first_seen;
                skill.last_changed = now;
                stats.added += 1;
            }
            None => stats.added += 1,
        }
        writes.push(StoredRecord {
            skill,
            removed_at: None,
            seq: 0,
        });
    }
    for old in existing {
        let id = old.skill.id.to_string();
        let from_read_index = read_indexes.contains(old.skill.index_url.as_str());
        if old.is_tombstone() || fresh_ids.contains(&id) || !from_read_index {
            continue;
        }
        stats.removed += 1;
        writes.push(StoredRecord {
            removed_at: Some(now),
            ..old
        });
    }
    (writes, stats)
}

/// True when two records of the same skill say the same thing; the crawl times differ on
/// every crawl and do not count.
fn same_content(old: &Skill, new: &Skill) -> bool {
    let mut aligned = new.clone();
    aligned.first_seen = old.first_seen;
    aligned.last_seen = old.last_seen;
    aligned.last_changed = old.last_changed;
    &aligned == old
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;
    use formats::index;
    use formats::normalize::{self, Fetched, Source};

    const T1: OffsetDateTime = datetime!(2026-11-01 10:00 UTC);
    const T2: OffsetDateTime = datetime!(2026-11-02 10:00 UTC);
    const T3: OffsetDateTime = datetime!(2026-11-03 10:00 UTC);

    fn index_url() -> Url {
        Url::parse("https://example.test/.well-known/skills/index.json").unwrap()
    }

    /// Builds records the way the crawler does, from a v0.1 index and SKILL.md texts.
    fn skills(entries: &[(&str, &str)], seen_at: OffsetDateTime) -> Vec<Skill> {
        let list: Vec<serde_json::Value> = entries
            .iter()
            .map(|(name, _)| serde_json::json!({"name": name, "description": "d", "files": ["SKILL.md"]}))
            .collect();
        let document = serde_json::json!({"skills": list}).to_string();
        let parsed = index::parse(document.as_bytes(), &index_url());
        let source = Source::new(index_url()).unwrap();
        let mut out = Vec::new();
        for (entry, (name, description)) in parsed.entries.iter().zip(entries) {
            let text = format!("---\nname: {name}\ndescription: {description}\n---\nbody\n");
            out.push(normalize::agent_skill(
                &source,
                entry,
                Fetched::Bytes {
                    bytes: text.as_bytes(),
                    content_type: None,
                },
                seen_at,
            ));
        }
        out
    }

    fn status(now: OffsetDateTime, indexes: Vec<Url>) -> DomainStatus {
        DomainStatus {
            domain: "example.test".parse().unwrap(),
            origin: "https://example.test".to_owned(),
            outcome: Outcome::Ok,
            formats: vec![Format::AgentSkills],
            indexes,
            skills: 0,
            requests: 3,
            errors: Vec::new(),
            errors_omitted: 0,
            diagnostics: Vec::new(),
            crawled_at: now,
            last_success: Some(now),
        }
    }

    #[test]
    fn incremental_crawls_keep_history_and_tombstones() {
        let dir = tempdir();
        let store = Store::open(&dir).unwrap();
        let domain: Domain = "example.test".parse().unwrap();

        let first = skills(&[("alpha", "First."), ("beta", "Second.")], T1);
        let stats = store
            .apply_domain(&status(T1, vec![index_url()]), first, T1)
            .unwrap();
        assert_eq!(
            (stats.added, stats.updated, stats.removed, stats.unchanged),
            (2, 0, 0, 0)
        );
        assert_eq!(store.last_seq().unwrap(), 2);

        // Same content again: nothing is rewritten, no change is logged.
        let again = skills(&[("alpha", "First."), ("beta", "Second.")], T2);
        let stats = store
            .apply_domain(&status(T2, vec![index_url()]), again, T2)
            .unwrap();
        assert_eq!(
            (stats.added, stats.updated, stats.removed, stats.unchanged),
            (0, 0, 0, 2)
        );
        assert_eq!(store.last_seq().unwrap(), 2);
        let alpha = store.record("example.test/alpha").unwrap().unwrap();
        assert_eq!(alpha.skill.last_changed, T1);

        // beta changes, alpha vanishes, gamma appears.
        let third = skills(&[("beta", "Changed."), ("gamma", "Third.")], T3);
        let stats = store
            .apply_domain(&status(T3, vec![index_url()]), third, T3)
            .unwrap();
        assert_eq!(
            (stats.added, stats.updated, stats.removed, stats.unchanged),
            (1, 1, 1, 0)
        );
        let alpha = store.record("example.test/alpha").unwrap().unwrap();
        assert_eq!(alpha.removed_at, Some(T3));
        let beta = store.record("example.test/beta").unwrap().unwrap();
        assert_eq!(beta.skill.first_seen, T1);
        assert_eq!(beta.skill.last_changed, T3);
        assert_eq!(beta.skill.description, "Changed.");

        // The change log lists each record once, at its latest change, oldest first.
        let changes = store.changes_after(0, 100).unwrap();
        let ids: Vec<(String, bool)> = changes
            .iter()
            .map(|record| (record.skill.name.to_string(), record.is_tombstone()))
            .collect();
        assert_eq!(
            ids,
            [
                ("beta".to_owned(), false),
                ("gamma".to_owned(), false),
                ("alpha".to_owned(), true)
            ]
        );
        assert_eq!(store.changes_after(4, 100).unwrap().len(), 1);
        assert_eq!(store.changes_after(0, 1).unwrap().len(), 1);
        assert_eq!(store.records_of(&domain).unwrap().len(), 3);

        // An index that could not be read this time removes nothing.
        let stats = store
            .apply_domain(&status(T3, vec![]), Vec::new(), T3)
            .unwrap();
        assert_eq!(stats, ApplyStats::default());
        assert_eq!(
            store.domain(&domain).unwrap().unwrap().indexes,
            Vec::<Url>::new()
        );

        // A tombstone that comes back is added again and keeps its first_seen.
        let back = skills(&[("alpha", "First.")], T3);
        let stats = store
            .apply_domain(&status(T3, vec![index_url()]), back, T3)
            .unwrap();
        assert_eq!(stats.added, 1);
        let alpha = store.record("example.test/alpha").unwrap().unwrap();
        assert!(!alpha.is_tombstone());
        assert_eq!(alpha.skill.first_seen, T1);
    }

    #[test]
    fn state_survives_reopening_and_domains_do_not_mix() {
        let dir = tempdir();
        {
            let store = Store::open(&dir).unwrap();
            store
                .apply_domain(
                    &status(T1, vec![index_url()]),
                    skills(&[("alpha", "A.")], T1),
                    T1,
                )
                .unwrap();
            let entry = CacheEntry {
                policy: serde_json::json!({"any": "policy"}),
                status: 200,
                body: Some(Digest::of(b"{}")),
                stored_at: T1,
            };
            store.set_cached(&index_url(), Some(&entry)).unwrap();
        }
        let store = Store::open(&dir).unwrap();
        assert!(store.record("example.test/alpha").unwrap().is_some());
        assert_eq!(store.domains().unwrap().len(), 1);
        assert_eq!(
            store.cached(&index_url()).unwrap().unwrap().body,
            Some(Digest::of(b"{}"))
        );
        store.set_cached(&index_url(), None).unwrap();
        assert!(store.cached(&index_url()).unwrap().is_none());
        // A domain that is a prefix of another does not see its records.
        let other: Domain = "example.test.evil".parse().unwrap();
        assert!(store.records_of(&other).unwrap().is_empty());
        let longer: Domain = "example.tes".parse().unwrap();
        assert!(store.records_of(&longer).unwrap().is_empty());
    }

    #[test]
    fn an_unusable_directory_is_an_error() {
        let dir = tempdir();
        let file = dir.join("not-a-dir");
        std::fs::create_dir_all(&*dir).unwrap();
        std::fs::write(&file, b"x").unwrap();
        let error = Store::open(&file).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("cannot create the data directory"),
            "{error}"
        );
    }

    /// A fresh directory, removed when the guard is dropped.
    struct TempDir(PathBuf);

    impl std::ops::Deref for TempDir {
        type Target = Path;

        fn deref(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn tempdir() -> TempDir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "skillscout-store-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        TempDir(dir)
    }
}
