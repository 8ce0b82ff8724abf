//! How a domain's crawl changes its stored records: the rule every backend applies in
//! [`RecordStore::apply`](crate::RecordStore::apply), written once.

use std::collections::{BTreeSet, HashMap};

use formats::{Skill, SkillId};
use time::OffsetDateTime;
use url::Url;

use crate::types::{ApplyStats, DomainStatus, StoredRecord};

/// Decides which records of a domain to write: new and changed ones (keeping `first_seen`),
/// and tombstones for the ones that vanished from an index read in this crawl.
pub(crate) fn plan_domain(
    status: &DomainStatus,
    fresh: Vec<Skill>,
    existing: Vec<StoredRecord>,
    now: OffsetDateTime,
) -> (Vec<StoredRecord>, ApplyStats) {
    let read_indexes: BTreeSet<&str> = status.indexes.iter().map(Url::as_str).collect();
    let fresh_ids: BTreeSet<String> = fresh.iter().map(|skill| skill.id.to_string()).collect();
    let mut stats = ApplyStats::default();
    let mut writes: Vec<StoredRecord> = Vec::new();

    let by_id: HashMap<&SkillId, &StoredRecord> = existing
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
