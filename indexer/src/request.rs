//! What a caller asks of the index: who they are, the query, filters and pagination.

use serde::{Deserialize, Serialize};

use crate::collector::Dim;

/// The verdicts listed when a request names none: a skill whose content was never had, or
/// cannot be used, is a ghost listing.
pub const DEFAULT_VERDICTS: [&str; 2] = ["lenient", "valid"];
/// The verdict filter value that lists every verdict.
pub const ANY_VERDICT: &str = "any";
/// The risks listed when a request names none: a skill the static audit finds `critical`
/// (malware's own moves) is listed only when asked for, as an invalid one is.
pub const DEFAULT_RISKS: [&str; 4] = ["high", "low", "medium", "none"];
/// The risk filter value that lists every risk.
pub const ANY_RISK: &str = "any";

/// Hits per page when the request does not say.
pub const DEFAULT_LIMIT: usize = 20;
/// The most hits one page returns; a larger limit is lowered to it.
pub const MAX_LIMIT: usize = 100;
/// The deepest offset served; a larger offset is lowered to it.
pub const MAX_OFFSET: usize = 10_000;
/// Each facet lists at most this many values (the most frequent).
pub const MAX_FACET_VALUES: usize = 100;

/// Who a search runs as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Caller {
    /// No credentials: never sees `private` records.
    #[default]
    Anonymous,
    /// A caller with a valid token (or the operator): sees everything.
    Authenticated,
}

/// Exact filters: values OR-combined within a field, fields AND-combined. Values are
/// compared case-insensitively (every indexed value is lowercase), and a value holding
/// commas is split into several.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Filters {
    /// `capability_type` values: `skill`, `plugin`, `api`, `knowledge`, `task`, ...
    pub capability_type: Vec<String>,
    /// `access` values: `public`, `restricted`, `private`.
    pub access: Vec<String>,
    /// Domains, e.g. `example.com` or `example.com:8080`.
    pub domain: Vec<String>,
    /// `agent-skills` or `skill-sharing`.
    pub format: Vec<String>,
    /// Tags.
    pub tag: Vec<String>,
    /// Licences, e.g. `mit`.
    pub license: Vec<String>,
    /// Verdicts: `valid`, `lenient`, `invalid`, or `any`. Empty means `valid` and `lenient`:
    /// a skill whose content was never had is not listed unless asked for (docs/api.md).
    pub verdict: Vec<String>,
    /// Risks: `none`, `low`, `medium`, `high`, `critical`, or `any`. Empty means every risk
    /// but `critical` ([`DEFAULT_RISKS`]).
    pub risk: Vec<String>,
}

impl Filters {
    /// Returns the filters that have values, normalised, by dimension.
    pub(crate) fn dims(&self) -> Vec<(Dim, Vec<String>)> {
        let mut dims = Vec::new();
        for (dim, raw) in [
            (Dim::CapabilityType, &self.capability_type),
            (Dim::Access, &self.access),
            (Dim::Domain, &self.domain),
            (Dim::Format, &self.format),
            (Dim::Tag, &self.tag),
            (Dim::License, &self.license),
            (Dim::Verdict, &self.verdict),
            (Dim::Risk, &self.risk),
        ] {
            let mut values: Vec<String> = raw
                .iter()
                .flat_map(|value| value.split(','))
                .map(|value| value.trim().to_lowercase())
                .filter(|value| !value.is_empty())
                // A licence is filtered under the name it is counted under.
                .map(|value| match dim {
                    Dim::License => formats::license::key(&value),
                    _ => value,
                })
                .collect();
            values.sort();
            values.dedup();
            let defaults: &[&str] = match dim {
                Dim::Verdict => &DEFAULT_VERDICTS,
                Dim::Risk => &DEFAULT_RISKS,
                _ => &[],
            };
            if !defaults.is_empty() {
                // `any` (the same word for both) lifts the filter; none named, the default.
                if values.iter().any(|value| value == ANY_VERDICT) {
                    continue;
                }
                if values.is_empty() {
                    values = defaults.iter().map(|value| (*value).to_owned()).collect();
                }
            }
            if !values.is_empty() {
                dims.push((dim, values));
            }
        }
        dims
    }
}

/// A search. Missing fields deserialise to their defaults: an empty query (browse), no
/// filters, [`DEFAULT_LIMIT`] hits from the first, as an anonymous caller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SearchRequest {
    /// What the user typed; any text is valid, and empty text browses every record.
    pub query: String,
    /// Exact filters.
    pub filters: Filters,
    /// Hits per page (at most [`MAX_LIMIT`]).
    pub limit: usize,
    /// Hits to skip (at most [`MAX_OFFSET`]).
    pub offset: usize,
    /// Who is asking.
    pub caller: Caller,
    /// One hit per cluster of copies (records whose content fingerprint is the same), the
    /// canonical copy shown, as docs/api.md asks: the default. `false` counts and lists
    /// every record (a publisher's count of its own skills).
    pub fold: bool,
}

impl Default for SearchRequest {
    fn default() -> SearchRequest {
        SearchRequest::new("", Caller::Anonymous)
    }
}

impl SearchRequest {
    /// Returns a request for the first page of `query`, without filters.
    pub fn new(query: impl Into<String>, caller: Caller) -> SearchRequest {
        SearchRequest {
            query: query.into(),
            filters: Filters::default(),
            limit: DEFAULT_LIMIT,
            offset: 0,
            caller,
            fold: true,
        }
    }
}

/// A page of records in id order. Missing fields deserialise to their defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ListRequest {
    /// Who is asking.
    pub caller: Caller,
    /// Exact filters, as for searches.
    pub filters: Filters,
    /// The cursor of the previous page (its `next_cursor`); `None` for the first page.
    pub after: Option<String>,
    /// Records per page (at most [`MAX_LIMIT`]).
    pub limit: usize,
}

impl Default for ListRequest {
    fn default() -> ListRequest {
        ListRequest::new(Caller::Anonymous)
    }
}

impl ListRequest {
    /// Returns a request for the first page, without filters.
    pub fn new(caller: Caller) -> ListRequest {
        ListRequest {
            caller,
            filters: Filters::default(),
            after: None,
            limit: DEFAULT_LIMIT,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_default_to_an_anonymous_first_page() {
        let request: SearchRequest = serde_json::from_str(r#"{"query": "pdf"}"#).unwrap();
        assert_eq!(request, SearchRequest::new("pdf", Caller::Anonymous));
        let list: ListRequest = serde_json::from_str("{}").unwrap();
        assert_eq!(list, ListRequest::new(Caller::Anonymous));
    }

    #[test]
    fn filter_values_are_normalised() {
        let filters = Filters {
            domain: vec![
                " A.test , b.test".to_owned(),
                "a.test".to_owned(),
                String::new(),
            ],
            tag: vec![",,".to_owned()],
            ..Filters::default()
        };
        let default_verdicts = (Dim::Verdict, DEFAULT_VERDICTS.map(str::to_owned).to_vec());
        let default_risks = (Dim::Risk, DEFAULT_RISKS.map(str::to_owned).to_vec());
        assert_eq!(
            filters.dims(),
            [
                (Dim::Domain, vec!["a.test".to_owned(), "b.test".to_owned()]),
                default_verdicts.clone(),
                default_risks.clone(),
            ]
        );
        // `any` lifts the verdict filter; named verdicts replace the default.
        let any = Filters {
            verdict: vec!["ANY".to_owned()],
            ..Filters::default()
        };
        assert_eq!(any.dims(), std::slice::from_ref(&default_risks));
        let invalid = Filters {
            verdict: vec!["invalid".to_owned()],
            ..Filters::default()
        };
        assert_eq!(
            invalid.dims(),
            [(Dim::Verdict, vec!["invalid".to_owned()]), default_risks]
        );
        // The same for risks: `critical` is listed only when asked for.
        let risky = Filters {
            risk: vec!["Critical".to_owned()],
            verdict: vec!["any".to_owned()],
            ..Filters::default()
        };
        assert_eq!(risky.dims(), [(Dim::Risk, vec!["critical".to_owned()])]);
        let every = Filters {
            risk: vec!["any".to_owned()],
            ..Filters::default()
        };
        assert_eq!(every.dims(), [default_verdicts]);
    }
}
