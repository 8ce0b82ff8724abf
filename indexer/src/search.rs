//! The read side: [`SearchIndex`] answers searches, gets records by id, and lists them.
//!
//! Every method runs *as* a [`Caller`]. For an anonymous caller a clause that admits only
//! `public` and `restricted` records is part of every query, and the collector checks the
//! access field again, so a `private` record never reaches hits, totals, facet counts,
//! [`SearchIndex::get`] or [`SearchIndex::list`].

use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crawler::{Access, Domain, Format, Skill, SkillId, Slug};
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use tantivy::collector::TopDocs;
use tantivy::query::{
    BooleanQuery, ConstScoreQuery, Occur, Query, RangeQuery, TermQuery, TermSetQuery,
};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{IndexReader, Order, ReloadPolicy, Searcher, TantivyDocument, Term};
use url::Url;

use crate::collector::{Collected, Dim, SearchCollector};
use crate::document::from_document;
use crate::error::{Error, Result};
use crate::query::{QueryBuilder, parse};
use crate::schema::{Fields, SCHEMA_VERSION, names};
use crate::snippet::Snippets;
use crate::writer::CommitPayload;

/// Hits per page when the request does not say.
pub const DEFAULT_LIMIT: usize = 20;
/// The most hits one page returns; a larger limit is lowered to it.
pub const MAX_LIMIT: usize = 100;
/// The deepest offset served; a larger offset is lowered to it.
pub const MAX_OFFSET: usize = 10_000;
/// Each facet lists at most this many values (the most frequent).
pub const MAX_FACET_VALUES: usize = 100;
/// When exact terms find fewer visible records than this, typo matching is added.
const FEW_RESULTS: u64 = 5;
/// Scales BM25 scores into the fraction part of a hit's score.
const SCORE_SCALE: f32 = 10.0;

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
}

impl Filters {
    /// Returns the filters that have values, normalised, by dimension.
    fn dims(&self) -> Vec<(Dim, Vec<String>)> {
        let mut dims = Vec::new();
        for (dim, raw) in [
            (Dim::CapabilityType, &self.capability_type),
            (Dim::Access, &self.access),
            (Dim::Domain, &self.domain),
            (Dim::Format, &self.format),
            (Dim::Tag, &self.tag),
            (Dim::License, &self.license),
        ] {
            let mut values: Vec<String> = raw
                .iter()
                .flat_map(|value| value.split(','))
                .map(|value| value.trim().to_lowercase())
                .filter(|value| !value.is_empty())
                .collect();
            values.sort();
            values.dedup();
            if !values.is_empty() {
                dims.push((dim, values));
            }
        }
        dims
    }
}

/// A search.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
        }
    }
}

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

/// A page of records in id order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// One page of a listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListPage {
    /// The records, in id order.
    pub records: Vec<Skill>,
    /// The cursor of the next page; `None` on the last one.
    pub next_cursor: Option<String>,
}

struct Inner {
    index: tantivy::Index,
    reader: IndexReader,
    fields: Fields,
}

/// A reader of the index. Cheap to clone, `Send + Sync`; every clone sees each commit.
///
/// Searches are synchronous and take a few milliseconds: async callers run them in
/// `spawn_blocking`.
#[derive(Clone)]
pub struct SearchIndex {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex")
            .field("num_docs", &self.num_docs())
            .finish_non_exhaustive()
    }
}

/// Returns true when `dir` holds an index.
pub(crate) fn has_index(dir: &Path) -> bool {
    dir.join("meta.json").is_file()
}

impl SearchIndex {
    /// Opens the index in `dir` for reading only (no lock is taken, so a writer may run in
    /// another process; its commits become visible shortly after they are made).
    pub fn open(dir: &Path) -> Result<SearchIndex> {
        if !has_index(dir) {
            return Err(Error::NoIndex {
                dir: dir.to_owned(),
            });
        }
        let index = tantivy::Index::open_in_dir(dir).map_err(Error::index("open"))?;
        let payload = index
            .load_metas()
            .map_err(Error::index("read the index metadata"))?
            .payload;
        let version = CommitPayload::read(payload.as_deref()).map(|p| p.schema_version);
        let (schema, _) = crate::schema::build();
        if index.schema() != schema || version.is_some_and(|v| v != SCHEMA_VERSION) {
            return Err(Error::IncompatibleSchema {
                dir: PathBuf::from(dir),
                found: version.unwrap_or(0),
                expected: SCHEMA_VERSION,
            });
        }
        SearchIndex::from_tantivy(index)
    }

    pub(crate) fn from_tantivy(index: tantivy::Index) -> Result<SearchIndex> {
        crate::tokenizer::register(&index);
        let (_, fields) = crate::schema::build();
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::OnCommitWithDelay)
            .try_into()
            .map_err(Error::index("open a reader"))?;
        Ok(SearchIndex {
            inner: Arc::new(Inner {
                index,
                reader,
                fields,
            }),
        })
    }

    pub(crate) fn fields(&self) -> &Fields {
        &self.inner.fields
    }

    /// Makes the latest commit visible now (readers also pick commits up on their own,
    /// shortly after they are made).
    pub fn reload(&self) -> Result<()> {
        self.inner
            .reader
            .reload()
            .map_err(Error::index("reload the reader"))
    }

    /// Returns the number of records in the index, private ones included.
    pub fn num_docs(&self) -> u64 {
        self.inner.reader.searcher().num_docs()
    }

    /// Returns the crawl store change sequence number of the last commit (0 when none).
    pub fn committed_seq(&self) -> Result<u64> {
        let metas = self
            .inner
            .index
            .load_metas()
            .map_err(Error::index("read the index metadata"))?;
        Ok(CommitPayload::read(metas.payload.as_deref()).map_or(0, |payload| payload.seq))
    }

    /// Returns the number of records `caller` may see.
    pub fn count(&self, caller: Caller) -> Result<u64> {
        let mut request = SearchRequest::new("", caller);
        request.limit = 0;
        Ok(self.search(&request)?.total)
    }

    /// Wraps `query` so that it only matches what `caller` may see.
    fn visible(&self, query: Box<dyn Query>, caller: Caller) -> Box<dyn Query> {
        match caller {
            Caller::Authenticated => query,
            Caller::Anonymous => {
                let visible =
                    TermSetQuery::new([Access::Public, Access::Restricted].map(|access| {
                        Term::from_field_text(self.fields().access, access.as_str())
                    }));
                Box::new(BooleanQuery::new(vec![
                    (Occur::Must, query),
                    (
                        Occur::Must,
                        Box::new(ConstScoreQuery::new(Box::new(visible), 0.0)),
                    ),
                ]))
            }
        }
    }

    /// Searches. User text never causes an error: an `Err` means the index itself failed.
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResults> {
        let started = Instant::now();
        let searcher = self.inner.reader.searcher();
        let parsed = parse(&request.query);
        let limit = request.limit.min(MAX_LIMIT);
        let offset = request.offset.min(MAX_OFFSET);
        let collector = SearchCollector {
            filters: request.filters.dims(),
            anonymous: request.caller == Caller::Anonymous,
            key: parsed.key.clone(),
            top_k: offset + limit,
            scored: !parsed.is_empty,
        };
        let mut builder = QueryBuilder::new(*self.fields());
        let run = |text: &dyn Query| -> Result<Collected> {
            let query = self.visible(text.box_clone(), request.caller);
            searcher
                .search(&*query, &collector)
                .map_err(Error::index("search"))
        };
        let mut text = builder.build(&parsed, false);
        let mut collected = run(&*text)?;
        if !parsed.is_empty && collected.total < FEW_RESULTS && builder.has_fuzzy_words(&parsed) {
            text = builder.build(&parsed, true);
            collected = run(&*text)?;
        }

        let snippets = if parsed.is_empty {
            Snippets::none()
        } else {
            Snippets::new(
                &searcher,
                &*text,
                self.fields().description,
                self.fields().body,
            )
        };
        let mut hits = Vec::new();
        for candidate in collected.top.iter().skip(offset) {
            let skill = self.load(&searcher, candidate.address)?;
            let score = if parsed.is_empty {
                0.0
            } else {
                let fraction = candidate.score.max(0.0) / (candidate.score.max(0.0) + SCORE_SCALE);
                f32::from(candidate.tier) + fraction.min(0.999)
            };
            hits.push(SearchHit {
                snippet: snippets.snippet(&skill.description, &skill.body),
                id: skill.id,
                domain: skill.domain,
                name: skill.name,
                title: skill.title,
                description: skill.description,
                capability_type: skill.capability_type,
                access: skill.access,
                format: skill.format,
                version: skill.version,
                source_url: skill.source_url,
                score,
            });
        }
        let [capability_type, access, domain, format, tag] = collected.facets.map(facet_counts);
        Ok(SearchResults {
            query: request.query.clone(),
            total: collected.total,
            hits,
            facets: Facets {
                capability_type,
                access,
                domain,
                format,
                tag,
            },
            took_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        })
    }

    fn load(&self, searcher: &Searcher, address: tantivy::DocAddress) -> Result<Skill> {
        let doc: TantivyDocument = searcher
            .doc(address)
            .map_err(Error::index("read a stored record"))?;
        from_document(&doc, self.fields())
    }

    /// Returns the record with `id`, or `None` when there is none or `caller` may not see
    /// it (a private record asked for anonymously is as absent as a missing one).
    pub fn get(&self, id: &str, caller: Caller) -> Result<Option<Skill>> {
        let searcher = self.inner.reader.searcher();
        let query = TermQuery::new(
            Term::from_field_text(self.fields().id, id),
            IndexRecordOption::Basic,
        );
        let query = self.visible(Box::new(query), caller);
        let top = searcher
            .search(&*query, &TopDocs::with_limit(1).order_by_score())
            .map_err(Error::index("search"))?;
        let Some((_, address)) = top.first() else {
            return Ok(None);
        };
        let skill = self.load(&searcher, *address)?;
        if caller == Caller::Anonymous && skill.access == Access::Private {
            return Ok(None);
        }
        Ok(Some(skill))
    }

    /// Lists the records `caller` may see, in id order, a page at a time: pass each page's
    /// `next_cursor` as the next request's `after`. The order is stable across commits, so
    /// a listing never repeats or skips a record that existed throughout.
    pub fn list(&self, request: &ListRequest) -> Result<ListPage> {
        let searcher = self.inner.reader.searcher();
        let fields = self.fields();
        let limit = request.limit.min(MAX_LIMIT);
        let mut clauses: Vec<(Occur, Box<dyn Query>)> =
            vec![(Occur::Must, Box::new(tantivy::query::AllQuery))];
        for (dim, values) in request.filters.dims() {
            let field = dim_field(fields, dim);
            let terms = values
                .iter()
                .map(|value| Term::from_field_text(field, value));
            clauses.push((Occur::Must, Box::new(TermSetQuery::new(terms))));
        }
        if let Some(after) = &request.after {
            clauses.push((
                Occur::Must,
                Box::new(RangeQuery::new(
                    Bound::Excluded(Term::from_field_text(fields.id, after)),
                    Bound::Unbounded,
                )),
            ));
        }
        let query = self.visible(Box::new(BooleanQuery::new(clauses)), request.caller);
        let top = searcher
            .search(
                &*query,
                &TopDocs::with_limit(limit + 1).order_by_string_fast_field(names::ID, Order::Asc),
            )
            .map_err(Error::index("list"))?;
        let mut records = Vec::new();
        for (_, address) in top.iter().take(limit) {
            let skill = self.load(&searcher, *address)?;
            if request.caller == Caller::Anonymous && skill.access == Access::Private {
                continue;
            }
            records.push(skill);
        }
        let next_cursor = if top.len() > limit {
            records.last().map(|skill| skill.id.to_string())
        } else {
            None
        };
        Ok(ListPage {
            records,
            next_cursor,
        })
    }
}

fn dim_field(fields: &Fields, dim: Dim) -> Field {
    match dim {
        Dim::CapabilityType => fields.capability_type,
        Dim::Access => fields.access,
        Dim::Domain => fields.domain,
        Dim::Format => fields.format,
        Dim::Tag => fields.tag,
        Dim::License => fields.license,
    }
}

/// Orders one facet's counts, most frequent first (then by value), and keeps the first
/// [`MAX_FACET_VALUES`].
fn facet_counts(counts: std::collections::BTreeMap<String, u64>) -> FacetCounts {
    let mut counts: Vec<(String, u64)> = counts.into_iter().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    counts.truncate(MAX_FACET_VALUES);
    FacetCounts(counts)
}
