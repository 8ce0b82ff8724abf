//! Which records an export holds: the index chooses them (query and filters), the crawl store
//! has the last word (each record is read again when it is written), and `--since` narrows
//! them to what the change log shows changed, with the tombstones of what was removed.

use std::collections::HashSet;

use formats::{Skill, SkillId, Verdict};
use indexer::SearchRequest;
use indexer::{ANY_VERDICT, DEFAULT_VERDICTS, Filters, ListRequest, MAX_LIMIT, MAX_OFFSET};
use store::StoredRecord;
use time::OffsetDateTime;

use super::ExportRequest;
use super::manifest::Removed;
use crate::error::ApiError;
use crate::routes::changes::{changed_at, first_after};
use crate::state::AppState;

/// How many store changes one read of the change log takes.
const CHANGES_PAGE: usize = 1000;

/// What an export is made of, before anything is written.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    /// The records to write, in id order (domain, then name).
    pub(crate) ids: Vec<SkillId>,
    /// With `since`: the records removed from their index since then that the caller may see
    /// and the filters select.
    pub(crate) removed: Vec<Removed>,
    /// Anything the reader of the manifest should know about the selection.
    pub(crate) notes: Vec<String>,
}

/// Chooses the records of `request` (blocking: reads the index and the store).
pub(crate) fn plan(state: &AppState, request: &ExportRequest) -> Result<Plan, ApiError> {
    let mut plan = Plan::default();
    let mut ids = if request.query.is_empty() {
        listed(state, request)?
    } else {
        searched(state, request, &mut plan.notes)?
    };
    if let Some(since) = request.since {
        let selected: HashSet<String> = ids.iter().map(ToString::to_string).collect();
        ids = changed_since(state, request, since, &selected, &mut plan.removed)?;
    }
    ids.sort();
    ids.dedup();
    plan.ids = ids;
    Ok(plan)
}

/// Every record the filters select, read from the index page by page in id order.
fn listed(state: &AppState, request: &ExportRequest) -> Result<Vec<SkillId>, ApiError> {
    let mut ids = Vec::new();
    let mut list = ListRequest {
        caller: request.caller,
        filters: request.filters.clone(),
        after: None,
        limit: MAX_LIMIT,
    };
    loop {
        let page = state.index().list(&list)?;
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
    state: &AppState,
    request: &ExportRequest,
    notes: &mut Vec<String>,
) -> Result<Vec<SkillId>, ApiError> {
    let mut ids = Vec::new();
    let mut search = SearchRequest {
        query: request.query.clone(),
        filters: request.filters.clone(),
        limit: MAX_LIMIT,
        offset: 0,
        caller: request.caller,
    };
    let index = state.index().without_model();
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
    state: &AppState,
    request: &ExportRequest,
    since: OffsetDateTime,
    selected: &HashSet<String>,
    removed: &mut Vec<Removed>,
) -> Result<Vec<SkillId>, ApiError> {
    let store = state.store();
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
                if state.may_see(request.caller, record.skill.access)
                    && matches_filters(&request.filters, &record.skill)
                {
                    removed.push(tombstone(&record));
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

fn tombstone(record: &StoredRecord) -> Removed {
    Removed {
        id: record.skill.id.clone(),
        at: changed_at(record),
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
        && any(
            &filters.license,
            &skill.license.iter().cloned().collect::<Vec<_>>(),
        )
        && wanted_verdicts(filters).contains(&skill.verdict())
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
}
