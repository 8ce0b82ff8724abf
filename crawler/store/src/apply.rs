//! How a domain's crawl changes its stored records: the rule every backend applies in
//! [`RecordStore::apply`](crate::RecordStore::apply) and
//! [`RecordStore::upsert`](crate::RecordStore::upsert), written once.
//!
//! The rule works record by record, so that a backend never needs a domain's records in
//! memory at once: [`plan_record`] decides the write for one fresh record given the stored
//! one (a point read), and [`Tombstones`] decides, from a stored record's id, index and state
//! alone, whether it vanished. Backends read a domain's stored records one at a time for the
//! second step (a domain may hold thousands of large skills).

use std::collections::BTreeSet;

use formats::{Skill, SkillId};
use serde::Deserialize;
use time::OffsetDateTime;
use url::Url;

use crate::types::{ApplyStats, DomainStatus, DomainUpdate, StoredRecord};

/// What to write for one fresh record.
#[derive(Debug)]
pub(crate) enum RecordWrite {
    /// A new or changed record, or one back from a tombstone: it gets the next change number.
    Change(StoredRecord),
    /// A record seen again unchanged: rewritten with the new `last_seen` (docs/record.md: the
    /// latest crawl that saw it, changed or not) but keeping its change number, so readers of
    /// the change log are not told of a change that did not happen.
    Seen(StoredRecord),
    /// Nothing to write (seen again, and not later than the stored `last_seen`).
    Nothing,
}

/// Decides the write for one fresh record, given its stored version; counts it in `stats`.
/// A changed record keeps its `first_seen`.
pub(crate) fn plan_record(
    previous: Option<StoredRecord>,
    mut skill: Skill,
    now: OffsetDateTime,
    stats: &mut ApplyStats,
) -> RecordWrite {
    match previous {
        Some(old) if !old.is_tombstone() && same_content(&old.skill, &skill) => {
            stats.unchanged += 1;
            if skill.last_seen <= old.skill.last_seen {
                return RecordWrite::Nothing;
            }
            let mut again = old;
            again.skill.last_seen = skill.last_seen;
            return RecordWrite::Seen(again);
        }
        Some(old) => {
            skill.first_seen = old.skill.first_seen;
            skill.last_changed = now;
            if old.is_tombstone() {
                stats.added += 1;
            } else {
                stats.updated += 1;
            }
        }
        None => stats.added += 1,
    }
    RecordWrite::Change(StoredRecord {
        skill,
        removed_at: None,
        seq: 0,
    })
}

/// Which stored records of a domain its crawl removes: a live record that came from an index
/// read in this crawl and that the crawl did not produce (neither in `fresh` nor streamed),
/// and every live record of an index the publisher withdrew (410 Gone, or refused by
/// robots.txt). Records of indexes that could not be read this time for another reason (a
/// timeout, a 5xx, a 404 that may be a mistake) are left alone.
#[derive(Debug)]
pub(crate) struct Tombstones {
    read_indexes: BTreeSet<String>,
    withdrawn: BTreeSet<String>,
    kept: BTreeSet<SkillId>,
}

impl Tombstones {
    /// The rule for `update` (call it before `update.fresh` is consumed).
    pub(crate) fn of(update: &DomainUpdate) -> Tombstones {
        let mut kept = update.streamed.ids.clone();
        kept.extend(update.fresh.iter().map(|skill| skill.id.clone()));
        Tombstones {
            read_indexes: update
                .status
                .indexes
                .iter()
                .map(|url| url.as_str().to_owned())
                .collect(),
            withdrawn: update
                .withdrawn
                .iter()
                .map(|url| url.as_str().to_owned())
                .collect(),
            kept,
        }
    }

    /// True when the stored record `head` describes becomes a tombstone.
    pub(crate) fn removes(&self, head: &RecordHead) -> bool {
        head.removed_at.is_none()
            && self.removes_live(&head.skill.id, head.skill.index_url.as_str())
    }

    /// True when the live stored record `id`, which came from `index_url`, becomes a
    /// tombstone (for backends that keep a record's id and index beside its JSON).
    pub(crate) fn removes_live(&self, id: &SkillId, index_url: &str) -> bool {
        self.withdrawn.contains(index_url)
            || (self.read_indexes.contains(index_url) && !self.kept.contains(id))
    }
}

/// The parts of a stored record the removal rule reads; decoding only these skips the body.
#[derive(Debug, Deserialize)]
pub(crate) struct RecordHead {
    pub(crate) skill: SkillHead,
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub(crate) removed_at: Option<OffsetDateTime>,
}

/// See [`RecordHead`].
#[derive(Debug, Deserialize)]
pub(crate) struct SkillHead {
    pub(crate) id: SkillId,
    pub(crate) index_url: Url,
}

/// Turns a live record into its tombstone, counting it.
pub(crate) fn tombstone(
    old: StoredRecord,
    now: OffsetDateTime,
    stats: &mut ApplyStats,
) -> StoredRecord {
    stats.removed += 1;
    StoredRecord {
        removed_at: Some(now),
        ..old
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

/// Keeps what the previous crawl learnt that this one did not hear again: a crawl answered
/// from its own fresh cache says nothing new about the origin's caching headers.
pub(crate) fn carry_over(status: &mut DomainStatus, previous: Option<&DomainStatus>) {
    if status.caching.is_none() {
        status.caching = previous.and_then(|previous| previous.caching);
    }
}
