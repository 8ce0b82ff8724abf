//! What the index answers: search results (with facet counts and snippets) and listing pages.

use std::ops::Range;

use formats::{Access, Domain, Format, Skill, SkillId, Slug};
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use url::Url;

/// One hit, as `/v1/search` returns it (docs/api.md).
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
    /// An extract of the description or body with the matched words marked.
    pub snippet: Snippet,
    /// How many other copies of the skill (the same content published elsewhere) the caller
    /// may see: the search shows one hit per cluster of copies.
    #[serde(default)]
    pub copies: usize,
}

/// A short extract of a record's text, as plain text, with the byte ranges of the words the
/// query matched. Presenting it (HTML `<mark>`, terminal bold) is the caller's job.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snippet {
    /// The extract: whitespace runs are one space; `…` starts or ends an extract cut from a
    /// longer text.
    pub text: String,
    /// The matched words: byte ranges of `text`, in order, not overlapping, each on character
    /// boundaries.
    pub marks: Vec<Range<usize>>,
}

impl Snippet {
    /// Returns true when the snippet has no text.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Returns true when some word of the snippet matched the query.
    pub fn has_marks(&self) -> bool {
        !self.marks.is_empty()
    }

    /// Returns the text cut at the marks, each piece with `true` when it is a match; the
    /// pieces put together are the text. Ranges that are out of order, overlapping or not on
    /// character boundaries are skipped.
    pub fn segments(&self) -> Vec<(&str, bool)> {
        let mut segments = Vec::with_capacity(self.marks.len() * 2 + 1);
        let mut at = 0;
        for mark in &self.marks {
            let valid = at <= mark.start
                && mark.start < mark.end
                && self.text.get(mark.start..mark.end).is_some();
            if !valid {
                continue;
            }
            if at < mark.start {
                segments.push((&self.text[at..mark.start], false));
            }
            segments.push((&self.text[mark.start..mark.end], true));
            at = mark.end;
        }
        if at < self.text.len() {
            segments.push((&self.text[at..], false));
        }
        segments
    }
}

#[cfg(test)]
impl Snippet {
    /// Returns the text with each match in brackets, for tests.
    pub(crate) fn bracketed(&self) -> String {
        self.segments()
            .into_iter()
            .map(|(text, marked)| {
                if marked {
                    format!("[{text}]")
                } else {
                    text.to_owned()
                }
            })
            .collect()
    }
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
    /// By verdict (`valid`, `lenient`, `invalid`).
    pub verdict: FacetCounts,
    /// By licence (lowercased).
    #[serde(default)]
    pub license: FacetCounts,
    /// By risk (`none`, `low`, `medium`, `high`, `critical`).
    #[serde(default)]
    pub risk: FacetCounts,
}

/// The answer to a search. `api` turns it into the `/v1/search` body (docs/api.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResults {
    /// The query as given.
    pub query: String,
    /// Records matching the query and filters that the caller may see, a cluster of copies
    /// counting once.
    pub total: u64,
    /// The requested page of them, best first.
    pub hits: Vec<SearchHit>,
    /// Facet counts.
    pub facets: Facets,
    /// Time spent in the index, in milliseconds.
    pub took_ms: u64,
}

/// The most characters of a description or title a [`Listed`] record carries (the
/// agent-skills limit on descriptions); the record itself keeps the whole text.
pub const MAX_LISTED_CHARS: usize = 1024;

/// A record as a listing shows it: the fields of a listing entry and none of the body,
/// frontmatter or files, so that a page of listings costs kilobytes whatever the skills hold.
/// A description or title longer than [`MAX_LISTED_CHARS`] is cut, ending in `…`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Listed {
    /// `{domain}/{name}`.
    pub id: SkillId,
    /// The publishing domain.
    pub domain: Domain,
    /// The slug.
    pub name: Slug,
    /// The human name.
    pub title: String,
    /// The description (cut at [`MAX_LISTED_CHARS`]).
    pub description: String,
    /// The protocol that published it.
    pub format: Format,
    /// `skill` for agent-skills, else skill-sharing's capability type.
    pub capability_type: String,
    /// Who may see the skill.
    pub access: Access,
    /// The version, when known.
    pub version: Option<String>,
}

impl Listed {
    /// Returns the listing view of `skill`.
    pub fn of(skill: &Skill) -> Listed {
        Listed {
            id: skill.id.clone(),
            domain: skill.domain.clone(),
            name: skill.name.clone(),
            title: cut(&skill.title),
            description: cut(&skill.description),
            format: skill.format,
            capability_type: skill.capability_type.clone(),
            access: skill.access,
            version: skill.version.clone(),
        }
    }
}

/// Cuts `text` to [`MAX_LISTED_CHARS`] characters, the last being `…` when it was longer.
fn cut(text: &str) -> String {
    match text.char_indices().nth(MAX_LISTED_CHARS - 1) {
        Some((end, _)) if text[end..].chars().nth(1).is_some() => format!("{}…", &text[..end]),
        _ => text.to_owned(),
    }
}

/// One page of a listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListPage {
    /// The records, in id order, as listings show them.
    pub records: Vec<Listed>,
    /// The cursor of the next page; `None` on the last one.
    pub next_cursor: Option<String>,
}
