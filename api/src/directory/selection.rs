//! What an export holds: the index chooses the records (query and filters), the crawl store
//! has the last word (each record is read again when it is written, [`Directory::load`]), and
//! `since` narrows them to what the change log shows changed, with the tombstones of what was
//! removed.

use std::collections::HashSet;

use formats::audit::Risk;
use formats::{Skill, SkillId, Verdict};
use indexer::{
    ANY_RISK, ANY_VERDICT, Caller, DEFAULT_RISKS, DEFAULT_VERDICTS, Filters, ListRequest,
    MAX_LIMIT, MAX_OFFSET, SearchRequest,
};
use time::OffsetDateTime;

use super::Directory;
use super::changes::{changed_at, first_after};
use crate::error::ApiError;
use crate::extract::RISKS;

/// How many store changes one read of the change log takes.
const CHANGES_PAGE: usize = 1000;

/// What to select.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Selection<'a> {
    /// Search text; empty selects every record the filters select.
    pub(crate) query: &'a str,
    /// Exact filters, as for searches.
    pub(crate) filters: &'a Filters,
    /// Only what changed at or after this time; removals are listed as tombstones.
    pub(crate) since: Option<OffsetDateTime>,
    /// Who the selection is for.
    pub(crate) caller: Caller,
    /// True when skills the safety audit finds `critical` are written; otherwise they are
    /// selected only to be listed as left out, with the reason.
    pub(crate) include_risky: bool,
}

/// What an export is made of, before anything is written.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    /// The records to write, in id order (domain, then name).
    pub(crate) ids: Vec<SkillId>,
    /// With `since`: the records removed from their index since then that the caller may see
    /// and the filters select, and when.
    pub(crate) removed: Vec<(SkillId, OffsetDateTime)>,
    /// Anything the reader of the manifest should know about the selection.
    pub(crate) notes: Vec<String>,
}

/// A selected record, read again to be written.
#[derive(Debug)]
pub(crate) enum Loaded {
    /// The record, still visible and of a wanted verdict and risk.
    Skill(Box<Skill>),
    /// Left out for this reason (gone, removed, of another verdict or risk now, critical).
    LeftOut(String),
    /// The caller may no longer see it: not even its id is shown.
    Hidden,
}

impl Directory {
    /// Chooses the records of `selection` (blocking: reads the index and the store).
    pub(crate) fn plan(&self, selection: &Selection<'_>) -> Result<Plan, ApiError> {
        // Without a risk named, critical skills are selected too: the manifest lists them as
        // left out, with the reason, unless they are to be written.
        let filters = with_every_risk(selection.filters);
        let selection = &Selection {
            filters: &filters,
            ..*selection
        };
        let mut plan = Plan::default();
        let mut ids = if selection.query.is_empty() {
            listed(self, selection)?
        } else {
            searched(self, selection, &mut plan.notes)?
        };
        if let Some(since) = selection.since {
            let selected: HashSet<String> = ids.iter().map(ToString::to_string).collect();
            ids = changed_since(self, selection, since, &selected, &mut plan.removed)?;
        }
        ids.sort();
        ids.dedup();
        plan.ids = ids;
        Ok(plan)
    }

    /// Reads a selected record again, to write it: the store has the last word on whether it
    /// is still there, visible and of a wanted verdict and risk; a critical one is written
    /// only with `include_risky` (blocking).
    pub(crate) fn load(&self, selection: &Selection<'_>, id: &SkillId) -> Result<Loaded, ApiError> {
        let stored = self.store().record(&id.to_string())?;
        Ok(match stored {
            None => Loaded::LeftOut("it is no longer in the crawl store".to_owned()),
            Some(stored) if stored.is_tombstone() => {
                Loaded::LeftOut("it was removed from its index after it was selected".to_owned())
            }
            Some(stored) if !self.may_see(selection.caller, stored.skill.access) => Loaded::Hidden,
            Some(stored) => {
                let skill = stored.skill;
                let verdict = skill.verdict();
                let filters = with_every_risk(selection.filters);
                if !wanted_verdicts(&filters).contains(&verdict) {
                    Loaded::LeftOut(format!("its verdict is now {verdict}"))
                } else if !wanted_risks(&filters).contains(&skill.risk) {
                    Loaded::LeftOut(format!("its risk is now {}", skill.risk))
                } else if skill.risk == Risk::Critical && !selection.include_risky {
                    Loaded::LeftOut(format!(
                        "the safety audit finds it critical ({} finding{}, on its page); it is \
                         exported only when risky skills are asked for (--include-risky)",
                        skill.findings.len(),
                        if skill.findings.len() == 1 { "" } else { "s" }
                    ))
                } else {
                    Loaded::Skill(Box::new(skill))
                }
            }
        })
    }

    /// Returns the verified bytes the blob store holds under `digest` (blocking).
    pub(crate) fn blob(&self, digest: &formats::Digest) -> Result<Option<Vec<u8>>, ApiError> {
        self.blobs()
            .get(digest)
            .map_err(|error| ApiError::Internal(format!("cannot read blob {digest}: {error}")))
    }
}

/// Every record the filters select, read from the index page by page in id order.
fn listed(directory: &Directory, request: &Selection<'_>) -> Result<Vec<SkillId>, ApiError> {
    let mut ids = Vec::new();
    let mut list = ListRequest {
        caller: request.caller,
        filters: request.filters.clone(),
        after: None,
        limit: MAX_LIMIT,
    };
    loop {
        let page = directory.index().list(&list)?;
        ids.extend(page.records.iter().map(|record| record.id.clone()));
        match page.next_cursor {
            Some(cursor) => list.after = Some(cursor),
            None => return Ok(ids),
        }
    }
}

/// The records a search selects, as deep as the index pages searches
/// ([`MAX_OFFSET`] + [`MAX_LIMIT`] hits); a note says when the query matched more. By words
/// alone, with the semantic option too: an export is a set (written in id order), and the
/// model only ranks; with it every query would also select the records nearest in meaning,
/// whatever they hold.
fn searched(
    directory: &Directory,
    request: &Selection<'_>,
    notes: &mut Vec<String>,
) -> Result<Vec<SkillId>, ApiError> {
    let mut ids = Vec::new();
    let mut search = SearchRequest {
        query: request.query.to_owned(),
        filters: request.filters.clone(),
        limit: MAX_LIMIT,
        offset: 0,
        caller: request.caller,
        // An export is a set of records, as without a query: each copy of a skill is its
        // publisher's, and a well-known export holds every one.
        fold: false,
    };
    let index = directory.index().without_model();
    loop {
        let results = index.search(&search)?;
        let found = results.hits.len();
        ids.extend(results.hits.into_iter().map(|hit| hit.id));
        if found < MAX_LIMIT {
            return Ok(ids);
        }
        if search.offset + MAX_LIMIT > MAX_OFFSET {
            notes.push(format!(
                "the query matched {} skills; the export holds the best {}",
                results.total,
                ids.len()
            ));
            return Ok(ids);
        }
        search.offset += MAX_LIMIT;
    }
}

/// The selected records changed at or after `since`, and the tombstones of that time.
fn changed_since(
    directory: &Directory,
    request: &Selection<'_>,
    since: OffsetDateTime,
    selected: &HashSet<String>,
    removed: &mut Vec<(SkillId, OffsetDateTime)>,
) -> Result<Vec<SkillId>, ApiError> {
    let store = directory.store();
    let last = store.last_seq()?;
    let mut position = first_after(store, since, last)?;
    let mut ids = Vec::new();
    loop {
        let batch = store.changes_after(position, CHANGES_PAGE)?;
        let batch_len = batch.len();
        for record in batch {
            position = record.seq;
            if changed_at(&record) < since {
                continue;
            }
            if record.is_tombstone() {
                if directory.may_see(request.caller, record.skill.access)
                    && matches_filters(request.filters, &record.skill)
                {
                    removed.push((record.skill.id.clone(), changed_at(&record)));
                }
            } else if selected.contains(&record.skill.id.to_string()) {
                ids.push(record.skill.id);
            }
        }
        if batch_len < CHANGES_PAGE {
            return Ok(ids);
        }
    }
}

/// Returns the verdicts `filters` ask for (none named: `valid` and `lenient`).
pub(crate) fn wanted_verdicts(filters: &Filters) -> Vec<Verdict> {
    let named: Vec<String> = filters
        .verdict
        .iter()
        .flat_map(|value| value.split(','))
        .map(|value| value.trim().to_lowercase())
        .filter(|value| !value.is_empty())
        .collect();
    if named.iter().any(|value| value == ANY_VERDICT) {
        return Verdict::ALL.to_vec();
    }
    let named = if named.is_empty() {
        DEFAULT_VERDICTS.map(str::to_owned).to_vec()
    } else {
        named
    };
    Verdict::ALL
        .into_iter()
        .filter(|verdict| named.iter().any(|value| value == verdict.as_str()))
        .collect()
}

/// Returns `filters` with every risk asked for when none is named (an export decides about
/// critical skills itself, see [`Directory::load`]).
fn with_every_risk(filters: &Filters) -> Filters {
    let mut filters = filters.clone();
    if values(&filters.risk).is_empty() {
        filters.risk = vec![ANY_RISK.to_owned()];
    }
    filters
}

/// Returns the risks `filters` ask for (none named: every risk but `critical`).
pub(crate) fn wanted_risks(filters: &Filters) -> Vec<Risk> {
    let named = values(&filters.risk);
    if named.iter().any(|value| value == ANY_RISK) {
        return RISKS.to_vec();
    }
    let named = if named.is_empty() {
        DEFAULT_RISKS.map(str::to_owned).to_vec()
    } else {
        named
    };
    RISKS
        .into_iter()
        .filter(|risk| named.iter().any(|value| value == risk.as_str()))
        .collect()
}

/// True when the exact filters select `skill`, compared as the index compares them
/// (case-insensitively). Only tombstones are matched here: they are no longer in the index,
/// and the search text cannot be asked of them.
pub(crate) fn matches_filters(filters: &Filters, skill: &Skill) -> bool {
    let one = |wanted: &[String], value: &str| {
        let wanted = values(wanted);
        wanted.is_empty() || wanted.contains(&value.to_lowercase())
    };
    let any = |wanted: &[String], have: &[String]| {
        let wanted = values(wanted);
        wanted.is_empty()
            || have
                .iter()
                .any(|value| wanted.contains(&value.to_lowercase()))
    };
    one(&filters.capability_type, &skill.capability_type)
        && one(&filters.access, skill.access.as_str())
        && one(&filters.domain, skill.domain.as_str())
        && one(&filters.format, skill.format.as_str())
        && any(&filters.tag, &skill.tags)
        && licensed(&filters.license, skill.license.as_deref())
        && wanted_verdicts(filters).contains(&skill.verdict())
        && wanted_risks(filters).contains(&skill.risk)
}

/// True when no licence is asked for, or the skill's is one of them, compared under the name
/// a licence is counted under ([`formats::license::key`]), as the index compares them.
fn licensed(wanted: &[String], license: Option<&str>) -> bool {
    let wanted = values(wanted);
    wanted.is_empty()
        || license.is_some_and(|license| {
            let key = formats::license::key(license);
            wanted
                .iter()
                .any(|value| formats::license::key(value) == key)
        })
}

fn values(raw: &[String]) -> Vec<String> {
    raw.iter()
        .flat_map(|value| value.split(','))
        .map(|value| value.trim().to_lowercase())
        .filter(|value| !value.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_default_to_usable_ones() {
        let mut filters = Filters::default();
        assert_eq!(
            wanted_verdicts(&filters),
            [Verdict::Valid, Verdict::Lenient]
        );
        filters.verdict = vec!["ANY".to_owned()];
        assert_eq!(wanted_verdicts(&filters), Verdict::ALL);
        filters.verdict = vec!["invalid,valid".to_owned()];
        assert_eq!(
            wanted_verdicts(&filters),
            [Verdict::Valid, Verdict::Invalid]
        );
    }

    #[test]
    fn risks_default_to_all_but_critical_and_an_export_selects_them_all() {
        let mut filters = Filters::default();
        assert_eq!(
            wanted_risks(&filters),
            [Risk::None, Risk::Low, Risk::Medium, Risk::High]
        );
        assert_eq!(wanted_risks(&with_every_risk(&filters)), RISKS);
        filters.risk = vec!["High, critical".to_owned()];
        assert_eq!(wanted_risks(&filters), [Risk::High, Risk::Critical]);
        assert_eq!(with_every_risk(&filters).risk, filters.risk);
    }
}
