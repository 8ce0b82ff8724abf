//! How a domain's crawl changes its stored records: the rule every backend applies in
//! [`RecordStore::apply`](crate::RecordStore::apply), written once.

use std::collections::{BTreeSet, HashMap};

use formats::{Skill, SkillId};
use time::OffsetDateTime;
use url::Url;

use crate::types::{ApplyStats, DomainStatus, StoredRecord};

/// What applying a domain's crawl writes.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    /// New and changed records and new tombstones: each gets the next change number.
    pub(crate) changes: Vec<StoredRecord>,
    /// Records seen again unchanged: rewritten with the new `last_seen` (DESIGN.md §2: the
    /// latest crawl that saw it, changed or not) but keeping their change number, so readers
    /// of the change log are not told of a change that did not happen.
    pub(crate) seen: Vec<StoredRecord>,
    /// What changed, counted.
    pub(crate) stats: ApplyStats,
}

/// Decides which records of a domain to write: new and changed ones (keeping `first_seen`),
/// unchanged ones with their new `last_seen`, and tombstones for the ones that vanished from
/// an index read in this crawl.
pub(crate) fn plan_domain(
    status: &DomainStatus,
    fresh: Vec<Skill>,
    existing: Vec<StoredRecord>,
    now: OffsetDateTime,
) -> Plan {
    let read_indexes: BTreeSet<&str> = status.indexes.iter().map(Url::as_str).collect();
    let fresh_ids: BTreeSet<String> = fresh.iter().map(|skill| skill.id.to_string()).collect();
    let mut stats = ApplyStats::default();
    let mut writes: Vec<StoredRecord> = Vec::new();
    let mut seen: Vec<StoredRecord> = Vec::new();

    let by_id: HashMap<&SkillId, &StoredRecord> = existing
        .iter()
        .map(|record| (&record.skill.id, record))
        .collect();
    for mut skill in fresh {
        let previous = by_id.get(&skill.id).copied();
        match previous {
            Some(old) if !old.is_tombstone() && same_content(&old.skill, &skill) => {
                stats.unchanged += 1;
                if skill.last_seen > old.skill.last_seen {
                    let mut again = old.clone();
                    again.skill.last_seen = skill.last_seen;
                    seen.push(again);
                }
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
    Plan {
        changes: writes,
        seen,
        stats,
    }
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
