//! Search results as a caller may see them: the index applies the access policy inside the
//! query (totals and facet counts are not records), and every hit is asked about again.

use std::collections::HashMap;

use formats::Skill;
use indexer::{SearchIndex, SearchRequest, SearchResults};

use super::Directory;
use crate::access::Policy;
use crate::error::ApiError;

impl Directory {
    /// Searches as the request's caller (blocking).
    pub(crate) fn search(&self, request: &SearchRequest) -> Result<SearchResults, ApiError> {
        visible_search(self.index(), &self.inner.policy, request)
    }

    /// Searches as the request's caller, with the records of the hits (a point read each, at
    /// most one page of them): what the hits do not carry, such as the verdict and the
    /// licence, for a page that shows them (blocking).
    pub(crate) fn search_with_records(
        &self,
        request: &SearchRequest,
    ) -> Result<(SearchResults, HashMap<String, Skill>), ApiError> {
        let results = self.search(request)?;
        let mut records = HashMap::new();
        for hit in &results.hits {
            let id = hit.id.to_string();
            if let Some(stored) = self.store().record(&id)?
                && !stored.is_tombstone()
                && self.may_see(request.caller, stored.skill.access)
            {
                records.insert(id, stored.skill);
            }
        }
        Ok((results, records))
    }
}

/// Searches `index` as the request's caller, keeping only the hits `policy` lets the caller
/// see (blocking): the directory's search, also what `skillscout search` runs over the index
/// alone. The index applies the same rule inside the query, so that totals and facet counts
/// leave out what the caller may not see.
pub(crate) fn visible_search(
    index: &SearchIndex,
    policy: &Policy,
    request: &SearchRequest,
) -> Result<SearchResults, ApiError> {
    let mut results = index.search(request)?;
    let found = results.hits.len();
    results
        .hits
        .retain(|hit| policy.allows(request.caller, hit.access));
    if results.hits.len() != found {
        tracing::error!(
            refused = found - results.hits.len(),
            "the index returned hits the access policy refuses"
        );
    }
    Ok(results)
}
