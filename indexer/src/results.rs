//! What the index answers: search results in the `/v1/search` shape, and listing pages.

use formats::{Access, Domain, Format, Skill, SkillId, Slug};
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use url::Url;

/// One hit, as `/v1/search` returns it (DESIGN.md §6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    /// `{domain}/{name}`.
    pub id: SkillId,
    /// The publishing domain.
    pub domain: Domain,
    /// The slug.
    pub name: Slug,
    /// The human name.
    pub title: String,
    /// The description.
    pub description: String,
    /// `skill` for agent-skills, else skill-sharing's capability type.
    pub capability_type: String,
    /// Who may see the skill.
    pub access: Access,
    /// The protocol that published it.
    pub format: Format,
    /// The version, when known.
    pub version: Option<String>,
    /// Where the content came from.
    pub source_url: Url,
    /// Relevance: the tier (2 = the name or title is the query, 1 = it starts with the
    /// query, 0 = text match) plus a fraction in `[0, 1)` from BM25. Hits are sorted by it,
    /// highest first; browsing (empty query) gives every hit 0 and sorts by id.
    pub score: f32,
    /// An HTML-safe extract with the matched words in `<mark>` tags (see the README).
    pub snippet: String,
}

/// Facet values and their counts, most frequent first; serialised as a JSON object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FacetCounts(pub Vec<(String, u64)>);

impl FacetCounts {
    /// Returns the count of `value` (0 when absent).
    pub fn get(&self, value: &str) -> u64 {
        self.0
            .iter()
            .find(|(name, _)| name == value)
            .map_or(0, |(_, count)| *count)
    }
}

impl Serialize for FacetCounts {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (value, count) in &self.0 {
            map.serialize_entry(value, count)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for FacetCounts {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CountsVisitor;
        impl<'de> Visitor<'de> for CountsVisitor {
            type Value = FacetCounts;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of counts")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FacetCounts, A::Error> {
                let mut counts = Vec::new();
                while let Some(entry) = map.next_entry::<String, u64>()? {
                    counts.push(entry);
                }
                Ok(FacetCounts(counts))
            }
        }
        deserializer.deserialize_map(CountsVisitor)
    }
}

/// Counts per facet value. Each facet applies every filter except its own, so it shows
/// what choosing another value would give.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Facets {
    /// By capability type.
    pub capability_type: FacetCounts,
    /// By access level.
    pub access: FacetCounts,
    /// By domain.
    pub domain: FacetCounts,
    /// By format.
    pub format: FacetCounts,
    /// By tag (lowercased).
    pub tag: FacetCounts,
}

/// The answer to a search: exactly the `/v1/search` body (DESIGN.md §6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResults {
    /// The query as given.
    pub query: String,
    /// Records matching the query and filters that the caller may see.
    pub total: u64,
    /// The requested page of them, best first.
    pub hits: Vec<SearchHit>,
    /// Facet counts.
    pub facets: Facets,
    /// Time spent in the index, in milliseconds.
    pub took_ms: u64,
}

/// One page of a listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListPage {
    /// The records, in id order.
    pub records: Vec<Skill>,
    /// The cursor of the next page; `None` on the last one.
    pub next_cursor: Option<String>,
}
