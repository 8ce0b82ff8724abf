//! [`FrontierStore`] for [`EmbeddedStore`]: the frontier in the same redb file as the records,
//! so that delisting a domain and tombstoning its records is one transaction.
//!
//! Rows are JSON by domain. Two indexes keep leasing cheap at any size: due times
//! (`(next_crawl_at, domain)`, for undelisted rows) and last crawl times (`(last_crawled_at,
//! domain)`, to find rows a clock set back would strand). Delisted domains have a table of
//! their own, so that counting and listing them reads only them. Leases live in memory: one
//! process opens a redb file at a time, and a lease must not outlive it.

use std::collections::HashMap;
use std::ops::Bound;
use std::time::{Duration, Instant};

use formats::Domain;
use formats::seeds::SeedTarget;
use redb::{ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};
use time::OffsetDateTime;

use super::{CHANGES, DOMAINS, EmbeddedStore, HTTP_CACHE, RECORDS, domain_range};
use crate::apply::{RecordHead, RecordWrite, tombstone};
use crate::frontier::{
    AddMode, AddStats, Crawled, Delisted, Delisting, FrontierCounts, FrontierEntry, FrontierState,
    FrontierStore, FrontierTarget, ListFilter, NamedLeases, NewTarget, Observation, RemoveStats,
    Schedule,
};
use crate::types::{ApplyStats, StoreError};

/// Domain -> JSON of [`FrontierEntry`].
pub(super) const FRONTIER: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("frontier");
/// (next crawl, unix milliseconds; domain) -> target, for every row not delisted.
pub(super) const DUE: TableDefinition<'_, (i64, &str), &str> = TableDefinition::new("frontier_due");
/// (last crawl, unix milliseconds; domain) -> (), for every row crawled once.
pub(super) const LAST: TableDefinition<'_, (i64, &str), ()> = TableDefinition::new("frontier_last");
/// Domain -> () for every delisted row.
pub(super) const DELISTED: TableDefinition<'_, &str, ()> = TableDefinition::new("delisted");

/// A crawl's hold on a domain.
#[derive(Debug, Clone)]
pub(super) struct Lease {
    owner: String,
    until: Instant,
    /// When it was taken, by the store's clock: a request later than this one is not
    /// answered by the crawl that holds it.
    since: OffsetDateTime,
}

/// The leases held, by domain.
pub(super) type Leases = HashMap<String, Lease>;

/// Milliseconds since the epoch, the key of the time indexes.
fn millis(at: OffsetDateTime) -> i64 {
    i64::try_from(at.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX)
}

impl EmbeddedStore {
    /// Creates the frontier's tables.
    pub(super) fn create_frontier_tables(txn: &redb::WriteTransaction) -> Result<(), redb::Error> {
        txn.open_table(FRONTIER)?;
        txn.open_table(DUE)?;
        txn.open_table(LAST)?;
        txn.open_table(DELISTED)?;
        Ok(())
    }

    fn leases(&self) -> std::sync::MutexGuard<'_, Leases> {
        self.leases
            .lock()
            .unwrap_or_else(|error| error.into_inner())
    }

    fn read_entry(
        &self,
        table: &impl ReadableTable<&'static str, &'static [u8]>,
        domain: &str,
    ) -> Result<Option<FrontierEntry>, StoreError> {
        match table.get(domain).map_err(|e| self.error(e))? {
            Some(bytes) => self.decode("frontier row", bytes.value()).map(Some),
            None => Ok(None),
        }
    }

    /// Writes `entry` and its index keys, removing those of `previous`.
    fn write_entry(
        &self,
        tables: &mut FrontierTables<'_>,
        previous: Option<&FrontierEntry>,
        entry: &FrontierEntry,
    ) -> Result<(), StoreError> {
        if let Some(previous) = previous {
            if previous.delisted.is_none() {
                tables
                    .due
                    .remove((millis(previous.next_crawl_at), previous.domain.as_str()))
                    .map_err(|e| self.error(e))?;
            }
            if let Some(last) = previous.last_crawled_at {
                tables
                    .last
                    .remove((millis(last), previous.domain.as_str()))
                    .map_err(|e| self.error(e))?;
            }
        }
        let bytes = self.encode("frontier row", entry)?;
        tables
            .rows
            .insert(entry.domain.as_str(), bytes.as_slice())
            .map_err(|e| self.error(e))?;
        if entry.delisted.is_none() {
            tables
                .due
                .insert(
                    (millis(entry.next_crawl_at), entry.domain.as_str()),
                    entry.target.as_str(),
                )
                .map_err(|e| self.error(e))?;
            tables
                .delisted
                .remove(entry.domain.as_str())
                .map_err(|e| self.error(e))?;
        } else {
            tables
                .delisted
                .insert(entry.domain.as_str(), ())
                .map_err(|e| self.error(e))?;
        }
        if let Some(last) = entry.last_crawled_at {
            tables
                .last
                .insert((millis(last), entry.domain.as_str()), ())
                .map_err(|e| self.error(e))?;
        }
        Ok(())
    }

    /// Runs `body` over the frontier's tables in one write transaction.
    fn frontier_write<T>(
        &self,
        durability: redb::Durability,
        body: impl FnOnce(&mut FrontierTables<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut txn = self.db.begin_write().map_err(|e| self.error(e))?;
        txn.set_durability(durability).map_err(|e| self.error(e))?;
        let value = {
            let mut tables = FrontierTables {
                rows: txn.open_table(FRONTIER).map_err(|e| self.error(e))?,
                due: txn.open_table(DUE).map_err(|e| self.error(e))?,
                last: txn.open_table(LAST).map_err(|e| self.error(e))?,
                delisted: txn.open_table(DELISTED).map_err(|e| self.error(e))?,
            };
            body(&mut tables)?
        };
        txn.commit().map_err(|e| self.error(e))?;
        Ok(value)
    }

    /// True when `domain` is held by a lease of someone other than `owner` that has not
    /// expired.
    fn held_by_other(leases: &Leases, domain: &str, owner: &str, now: Instant) -> bool {
        leases
            .get(domain)
            .is_some_and(|lease| lease.owner != owner && lease.until > now)
    }

    /// Returns the due candidates in order: rows due by time, then rows whose last crawl lies
    /// in the future (a clock set back), skipping those leased.
    fn due_candidates(
        &self,
        limit: usize,
        skip: impl Fn(&str) -> bool,
    ) -> Result<Vec<FrontierTarget>, StoreError> {
        let now = millis((self.clock)());
        let txn = self.db.begin_read().map_err(|e| self.error(e))?;
        let due = txn.open_table(DUE).map_err(|e| self.error(e))?;
        let rows = txn.open_table(FRONTIER).map_err(|e| self.error(e))?;
        let mut out = Vec::new();
        let upper = now.saturating_add(1);
        for entry in due
            .range::<(i64, &str)>((Bound::Unbounded, Bound::Excluded((upper, ""))))
            .map_err(|e| self.error(e))?
        {
            if out.len() >= limit {
                return Ok(out);
            }
            let (key, target) = entry.map_err(|e| self.error(e))?;
            let (_, domain) = key.value();
            if !skip(domain) {
                let requested = self
                    .read_entry(&rows, domain)?
                    .is_some_and(|row| row.requested_at.is_some());
                out.push(FrontierTarget {
                    domain: domain.to_owned(),
                    target: target.value().to_owned(),
                    requested,
                });
            }
        }
        let last = txn.open_table(LAST).map_err(|e| self.error(e))?;
        for entry in last
            .range::<(i64, &str)>((Bound::Included((upper, "")), Bound::Unbounded))
            .map_err(|e| self.error(e))?
        {
            if out.len() >= limit {
                break;
            }
            let (key, _) = entry.map_err(|e| self.error(e))?;
            let (_, domain) = key.value();
            if skip(domain) || out.iter().any(|target| target.domain == domain) {
                continue;
            }
            if let Some(row) = self.read_entry(&rows, domain)?
                && row.delisted.is_none()
            {
                out.push(FrontierTarget {
                    requested: row.requested_at.is_some(),
                    domain: row.domain,
                    target: row.target,
                });
            }
        }
        Ok(out)
    }

    /// Tombstones every live record of `domain`, logging each change; returns how many.
    fn tombstone_domain(
        &self,
        txn: &redb::WriteTransaction,
        domain: &Domain,
        now: OffsetDateTime,
    ) -> Result<u64, StoreError> {
        let mut changes = txn.open_table(CHANGES).map_err(|e| self.error(e))?;
        let mut records = txn.open_table(RECORDS).map_err(|e| self.error(e))?;
        let mut seq = changes
            .last()
            .map_err(|e| self.error(e))?
            .map_or(0, |(seq, _)| seq.value());
        let (start, end) = domain_range(domain);
        let mut live = Vec::new();
        for entry in records
            .range(start.as_str()..end.as_str())
            .map_err(|e| self.error(e))?
        {
            let (key, value) = entry.map_err(|e| self.error(e))?;
            let head: RecordHead = self.decode(key.value(), value.value())?;
            if head.removed_at.is_none() {
                live.push(key.value().to_owned());
            }
        }
        let mut stats = ApplyStats::default();
        for id in &live {
            if let Some(old) = self.read_record(&records, id)? {
                let gone = tombstone(old, now, &mut stats);
                self.write_record(
                    &mut records,
                    &mut changes,
                    &mut seq,
                    RecordWrite::Change(gone),
                )?;
            }
        }
        Ok(stats.removed as u64)
    }

    /// Forgets the cached responses of `domain`'s origins (http and https).
    fn forget_cache_of(
        &self,
        txn: &redb::WriteTransaction,
        domain: &str,
    ) -> Result<(), StoreError> {
        let mut cache = txn.open_table(HTTP_CACHE).map_err(|e| self.error(e))?;
        for scheme in ["http", "https"] {
            let start = format!("{scheme}://{domain}/");
            let end = format!("{scheme}://{domain}0");
            let keys: Vec<String> = cache
                .range(start.as_str()..end.as_str())
                .map_err(|e| self.error(e))?
                .map(|entry| entry.map(|(key, _)| key.value().to_owned()))
                .collect::<Result<_, _>>()
                .map_err(|e| self.error(e))?;
            for key in keys {
                cache.remove(key.as_str()).map_err(|e| self.error(e))?;
            }
        }
        Ok(())
    }

    /// True when `domain` is delisted (read inside a write transaction).
    pub(super) fn is_delisted_in(
        &self,
        txn: &redb::WriteTransaction,
        domain: &str,
    ) -> Result<bool, StoreError> {
        let table = txn.open_table(DELISTED).map_err(|e| self.error(e))?;
        Ok(table.get(domain).map_err(|e| self.error(e))?.is_some())
    }
}

/// The frontier's tables, open in one write transaction.
struct FrontierTables<'t> {
    rows: redb::Table<'t, &'static str, &'static [u8]>,
    due: redb::Table<'t, (i64, &'static str), &'static str>,
    last: redb::Table<'t, (i64, &'static str), ()>,
    delisted: redb::Table<'t, &'static str, ()>,
}

impl FrontierStore for EmbeddedStore {
    fn add(&self, targets: &[NewTarget], mode: AddMode) -> Result<AddStats, StoreError> {
        let now = (self.clock)();
        self.frontier_write(redb::Durability::Immediate, |tables| {
            let mut stats = AddStats::default();
            let mut seen = std::collections::HashSet::new();
            for target in targets {
                if !seen.insert(target.domain.as_str()) {
                    // Named twice in one list: the first target counts.
                    stats.unchanged += 1;
                    continue;
                }
                let previous = self.read_entry(&tables.rows, &target.domain)?;
                let Some(previous) = previous else {
                    let entry = FrontierEntry {
                        domain: target.domain.clone(),
                        target: target.target.clone(),
                        added_as: target.added_as,
                        source: target.source.clone(),
                        rank: target.rank,
                        added_at: now,
                        next_crawl_at: now,
                        interval_secs: None,
                        last_crawled_at: None,
                        last_outcome: None,
                        last_changed_at: None,
                        crawls: 0,
                        last_crawled_by: None,
                        delisted: None,
                        requested_at: (mode == AddMode::CrawlNow).then_some(now),
                    };
                    self.write_entry(tables, None, &entry)?;
                    stats.added += 1;
                    continue;
                };
                if previous.delisted.is_some() {
                    stats.delisted += 1;
                    continue;
                }
                let mut entry = previous.clone();
                entry.target.clone_from(&target.target);
                if entry.rank.is_none() {
                    entry.rank = target.rank;
                }
                if mode == AddMode::CrawlNow {
                    if !entry.is_due(now) {
                        entry.next_crawl_at = now;
                    }
                    entry.requested_at = Some(now);
                }
                if entry == previous {
                    stats.unchanged += 1;
                } else {
                    self.write_entry(tables, Some(&previous), &entry)?;
                    stats.updated += 1;
                }
            }
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
        let now = Instant::now();
        let since = (self.clock)();
        let mut leases = self.leases();
        let picked = self.due_candidates(max, |domain| {
            leases.get(domain).is_some_and(|lease| lease.until > now)
        })?;
        for target in &picked {
            leases.insert(
                target.domain.clone(),
                Lease {
                    owner: owner.to_owned(),
                    until: now + lease_for,
                    since,
                },
            );
        }
        Ok(picked)
    }

    fn lease_named(
        &self,
        owner: &str,
        domains: &[String],
        lease_for: Duration,
        since: OffsetDateTime,
    ) -> Result<NamedLeases, StoreError> {
        let now = Instant::now();
        let txn = self.db.begin_read().map_err(|e| self.error(e))?;
        let rows = txn.open_table(FRONTIER).map_err(|e| self.error(e))?;
        let mut leases = self.leases();
        let mut out = NamedLeases::default();
        for domain in domains {
            let Some(row) = self.read_entry(&rows, domain)? else {
                out.unknown.push(domain.clone());
                continue;
            };
            if row.delisted.is_some() {
                out.delisted.push(domain.clone());
            } else if row.last_crawled_at.is_some_and(|last| last >= since)
                || out.leased.iter().any(|target| &target.domain == domain)
            {
                out.crawled.push(domain.clone());
            } else if Self::held_by_other(&leases, domain, owner, now) {
                out.held.push(domain.clone());
            } else {
                leases.insert(
                    domain.clone(),
                    Lease {
                        owner: owner.to_owned(),
                        until: now + lease_for,
                        since: (self.clock)(),
                    },
                );
                out.leased.push(FrontierTarget {
                    requested: row.requested_at.is_some(),
                    domain: row.domain,
                    target: row.target,
                });
            }
        }
        Ok(out)
    }

    fn now(&self) -> Result<OffsetDateTime, StoreError> {
        Ok((self.clock)())
    }

    fn renew(
        &self,
        owner: &str,
        domains: &[String],
        lease_for: Duration,
    ) -> Result<Vec<String>, StoreError> {
        let now = Instant::now();
        let mut leases = self.leases();
        let mut renewed = Vec::new();
        for domain in domains {
            if let Some(lease) = leases.get_mut(domain)
                && lease.owner == owner
            {
                lease.until = now + lease_for;
                renewed.push(domain.clone());
            }
        }
        Ok(renewed)
    }

    fn finish(
        &self,
        owner: &str,
        crawled: &[Crawled],
        schedule: &Schedule,
    ) -> Result<Vec<String>, StoreError> {
        let now = (self.clock)();
        let mine: Vec<(&Crawled, OffsetDateTime)> = {
            let leases = self.leases();
            crawled
                .iter()
                .filter_map(|crawl| {
                    leases
                        .get(&crawl.domain)
                        .filter(|lease| lease.owner == owner)
                        .map(|lease| (crawl, lease.since))
                })
                .collect()
        };
        // Not durable on its own: the store writer's next batch (durable) carries it to disk,
        // and a crash before then only means the domains are crawled again.
        let released = self.frontier_write(redb::Durability::None, |tables| {
            let mut released = Vec::new();
            for &(crawl, since) in &mine {
                let Some(previous) = self.read_entry(&tables.rows, &crawl.domain)? else {
                    released.push(crawl.domain.clone());
                    continue;
                };
                let mut entry = previous.clone();
                let observed = Observation::of(crawl.outcome, crawl.changed);
                let interval = schedule.next_interval(previous.interval(), observed);
                entry.interval_secs = Some(interval.as_secs());
                let wait = Schedule::wait(interval, crawl.not_before);
                // Asked for since the crawl began: it may have read the site before the
                // change, so the domain stays due (and asked for).
                if entry.requested_at.is_some_and(|at| at >= since) {
                    entry.next_crawl_at = now;
                } else {
                    entry.next_crawl_at = now + wait;
                    entry.requested_at = None;
                }
                entry.last_crawled_at = Some(now);
                entry.last_outcome = Some(crawl.outcome);
                entry.last_crawled_by = Some(owner.to_owned());
                entry.crawls += 1;
                if crawl.changed {
                    entry.last_changed_at = Some(now);
                }
                self.write_entry(tables, Some(&previous), &entry)?;
                released.push(crawl.domain.clone());
            }
            Ok(released)
        })?;
        let mut leases = self.leases();
        for domain in &released {
            if leases.get(domain).is_some_and(|lease| lease.owner == owner) {
                leases.remove(domain);
            }
        }
        Ok(released)
    }

    fn release(&self, owner: &str, domains: &[String], after: Duration) -> Result<(), StoreError> {
        let now = (self.clock)();
        self.frontier_write(redb::Durability::None, |tables| {
            for domain in domains {
                if let Some(previous) = self.read_entry(&tables.rows, domain)? {
                    let mut entry = previous.clone();
                    entry.next_crawl_at = now + after;
                    self.write_entry(tables, Some(&previous), &entry)?;
                }
            }
            Ok(())
        })?;
        let mut leases = self.leases();
        for domain in domains {
            if leases.get(domain).is_some_and(|lease| lease.owner == owner) {
                leases.remove(domain);
            }
        }
        Ok(())
    }

    fn counts(&self) -> Result<FrontierCounts, StoreError> {
        let now = Instant::now();
        let leased: Vec<String> = self
            .leases()
            .iter()
            .filter(|(_, lease)| lease.until > now)
            .map(|(domain, _)| domain.clone())
            .collect();
        let txn = self.db.begin_read().map_err(|e| self.error(e))?;
        let rows = txn.open_table(FRONTIER).map_err(|e| self.error(e))?;
        let delisted = txn.open_table(DELISTED).map_err(|e| self.error(e))?;
        let due_index = txn.open_table(DUE).map_err(|e| self.error(e))?;
        let upper = millis((self.clock)()).saturating_add(1);
        let next_due = due_index
            .range::<(i64, &str)>((Bound::Included((upper, "")), Bound::Unbounded))
            .map_err(|e| self.error(e))?
            .next()
            .transpose()
            .map_err(|e| self.error(e))?
            .and_then(|(key, _)| {
                let (at, _) = key.value();
                OffsetDateTime::from_unix_timestamp_nanos(i128::from(at) * 1_000_000).ok()
            });
        // Counted, not collected: a census frontier holds a million due rows.
        let mut due = 0u64;
        for entry in due_index
            .range::<(i64, &str)>((Bound::Unbounded, Bound::Excluded((upper, ""))))
            .map_err(|e| self.error(e))?
        {
            let (key, _) = entry.map_err(|e| self.error(e))?;
            let (_, domain) = key.value();
            if !leased.iter().any(|held| held == domain) {
                due += 1;
            }
        }
        let last = txn.open_table(LAST).map_err(|e| self.error(e))?;
        for entry in last
            .range::<(i64, &str)>((Bound::Included((upper, "")), Bound::Unbounded))
            .map_err(|e| self.error(e))?
        {
            let (key, _) = entry.map_err(|e| self.error(e))?;
            let (_, domain) = key.value();
            if let Some(row) = self.read_entry(&rows, domain)?
                && row.delisted.is_none()
                && row.next_crawl_at > (self.clock)()
                && !leased.iter().any(|held| held == domain)
            {
                due += 1;
            }
        }
        Ok(FrontierCounts {
            due,
            leased: leased.len() as u64,
            total: rows.len().map_err(|e| self.error(e))?,
            delisted: delisted.len().map_err(|e| self.error(e))?,
            next_due,
        })
    }

    fn entry(&self, domain: &str) -> Result<Option<FrontierEntry>, StoreError> {
        let txn = self.db.begin_read().map_err(|e| self.error(e))?;
        let rows = txn.open_table(FRONTIER).map_err(|e| self.error(e))?;
        self.read_entry(&rows, domain)
    }

    fn list(
        &self,
        after: Option<&str>,
        limit: usize,
        filter: ListFilter,
    ) -> Result<Vec<FrontierEntry>, StoreError> {
        let now = (self.clock)();
        let txn = self.db.begin_read().map_err(|e| self.error(e))?;
        let rows = txn.open_table(FRONTIER).map_err(|e| self.error(e))?;
        let start = match after {
            Some(after) => Bound::Excluded(after),
            None => Bound::Unbounded,
        };
        let mut out = Vec::new();
        let keep = |entry: &FrontierEntry| {
            filter.state.is_none_or(|state| entry.state() == state)
                && (!filter.due || entry.is_due(now))
        };
        if filter.state == Some(FrontierState::Delisted) {
            // Read only the delisted rows.
            let delisted = txn.open_table(DELISTED).map_err(|e| self.error(e))?;
            for key in delisted
                .range::<&str>((start, Bound::Unbounded))
                .map_err(|e| self.error(e))?
            {
                if out.len() >= limit {
                    break;
                }
                let (key, _) = key.map_err(|e| self.error(e))?;
                if let Some(entry) = self.read_entry(&rows, key.value())?
                    && keep(&entry)
                {
                    out.push(entry);
                }
            }
            return Ok(out);
        }
        for row in rows
            .range::<&str>((start, Bound::Unbounded))
            .map_err(|e| self.error(e))?
        {
            if out.len() >= limit {
                break;
            }
            let (_, value) = row.map_err(|e| self.error(e))?;
            let entry: FrontierEntry = self.decode("frontier row", value.value())?;
            if keep(&entry) {
                out.push(entry);
            }
        }
        Ok(out)
    }

    fn remove(&self, domains: &[String]) -> Result<RemoveStats, StoreError> {
        let removed = self.frontier_write(redb::Durability::Immediate, |tables| {
            let mut stats = RemoveStats::default();
            for domain in domains {
                let Some(previous) = self.read_entry(&tables.rows, domain)? else {
                    stats.unknown += 1;
                    continue;
                };
                if previous.delisted.is_some() {
                    stats.delisted += 1;
                    continue;
                }
                tables
                    .due
                    .remove((millis(previous.next_crawl_at), domain.as_str()))
                    .map_err(|e| self.error(e))?;
                if let Some(last) = previous.last_crawled_at {
                    tables
                        .last
                        .remove((millis(last), domain.as_str()))
                        .map_err(|e| self.error(e))?;
                }
                tables
                    .rows
                    .remove(domain.as_str())
                    .map_err(|e| self.error(e))?;
                stats.removed += 1;
            }
            Ok(stats)
        })?;
        let mut leases = self.leases();
        for domain in domains {
            leases.remove(domain);
        }
        Ok(removed)
    }

    fn delist(&self, domain: &str, reason: &str) -> Result<Delisted, StoreError> {
        let key: Domain = domain.parse().map_err(|error| StoreError::InvalidInput {
            message: format!("cannot delist {domain:?}: {error}"),
        })?;
        let now = (self.clock)();
        let txn = self.db.begin_write().map_err(|e| self.error(e))?;
        let result = {
            let mut tables = FrontierTables {
                rows: txn.open_table(FRONTIER).map_err(|e| self.error(e))?,
                due: txn.open_table(DUE).map_err(|e| self.error(e))?,
                last: txn.open_table(LAST).map_err(|e| self.error(e))?,
                delisted: txn.open_table(DELISTED).map_err(|e| self.error(e))?,
            };
            let previous = self.read_entry(&tables.rows, domain)?;
            let already = previous
                .as_ref()
                .is_some_and(|entry| entry.delisted.is_some());
            let mut entry = previous.clone().unwrap_or_else(|| FrontierEntry {
                domain: domain.to_owned(),
                target: SeedTarget::parse(domain)
                    .map_or_else(|_| format!("https://{domain}"), |target| target.to_string()),
                added_as: crate::frontier::AddedAs::Seed,
                source: None,
                rank: None,
                added_at: now,
                next_crawl_at: now,
                interval_secs: None,
                last_crawled_at: None,
                last_outcome: None,
                last_changed_at: None,
                crawls: 0,
                last_crawled_by: None,
                delisted: None,
                requested_at: None,
            });
            entry.delisted = Some(Delisting {
                reason: reason.to_owned(),
                at: now,
            });
            self.write_entry(&mut tables, previous.as_ref(), &entry)?;
            drop(tables);
            let records_removed = self.tombstone_domain(&txn, &key, now)?;
            let mut statuses = txn.open_table(DOMAINS).map_err(|e| self.error(e))?;
            statuses.remove(domain).map_err(|e| self.error(e))?;
            drop(statuses);
            self.forget_cache_of(&txn, domain)?;
            Delisted {
                already,
                records_removed,
            }
        };
        txn.commit().map_err(|e| self.error(e))?;
        self.leases().remove(domain);
        Ok(result)
    }

    fn undelist(&self, domain: &str) -> Result<bool, StoreError> {
        let now = (self.clock)();
        self.frontier_write(redb::Durability::Immediate, |tables| {
            let Some(previous) = self.read_entry(&tables.rows, domain)? else {
                return Ok(false);
            };
            if previous.delisted.is_none() {
                return Ok(false);
            }
            let mut entry = previous.clone();
            entry.delisted = None;
            entry.next_crawl_at = now;
            self.write_entry(tables, Some(&previous), &entry)?;
            Ok(true)
        })
    }
}
