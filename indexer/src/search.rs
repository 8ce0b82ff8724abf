//! The read side: [`SearchIndex`] answers searches, gets records by id, and lists them.
//!
//! Every method runs *as* a [`Caller`]. For an anonymous caller a clause that admits only
//! `public` and `restricted` records is part of every query, and the collector checks the
//! access field again, so a `private` record never reaches hits, totals, facet counts,
//! [`SearchIndex::get`] or [`SearchIndex::list`].

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use formats::{Access, Skill};
use tantivy::collector::TopDocs;
use tantivy::columnar::BytesColumn;
use tantivy::query::{
    BooleanQuery, ConstScoreQuery, Occur, Query, RangeQuery, TermQuery, TermSetQuery,
};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{IndexReader, Order, ReloadPolicy, Searcher, TantivyDocument, Term};

use crate::clusters::{Clusters, ClustersCache, MAX_COPIES};
use crate::collector::{Candidate, Collected, Dim, SearchCollector, TIER_TEXT};
use crate::document::from_document;
use crate::error::{Error, Result};
use crate::ordinals::OrdsCache;
use crate::query::{MAX_QUERY_CHARS, QueryBuilder, parse};
use crate::request::{
    ANY_RISK, ANY_VERDICT, Caller, ListRequest, MAX_FACET_VALUES, MAX_LIMIT, MAX_OFFSET,
    SearchRequest,
};
use crate::results::{FacetCounts, Facets, ListPage, Listed, SearchHit, SearchResults};
use crate::schema::{Fields, SCHEMA_VERSION, names};
use crate::semantic::{
    Embed, NearestQuery, RECENT_QUERIES, RecentQueries, SEMANTIC_DEPTH, VectorCache, WORDS_DEPTH,
    fuse, words_share,
};
use crate::snippet::Snippets;
use crate::writer::CommitPayload;

/// When a query finds fewer visible records than this, it is widened: matches of common body
/// words and typos are added.
const FEW_RESULTS: u64 = 5;
/// Scales BM25 scores into the fraction part of a hit's score.
const SCORE_SCALE: f32 = 10.0;

struct Inner {
    index: tantivy::Index,
    reader: IndexReader,
    fields: Fields,
    /// The records' vectors, per segment, for semantic retrieval.
    vectors: Arc<VectorCache>,
    /// The filter and facet columns, per segment, for the collector.
    ordinals: Arc<OrdsCache>,
    /// The clusters of copies of the snapshot searched last.
    clusters: ClustersCache,
}

/// A reader of the index. Cheap to clone, `Send + Sync`; every clone sees each commit.
///
/// Searches are synchronous and take a few milliseconds: async callers run them in
/// `spawn_blocking`.
#[derive(Clone)]
pub struct SearchIndex {
    inner: Arc<Inner>,
    /// The sentence-embedding model, when searches fuse the nearest records in meaning with
    /// the word ranking ([`SearchIndex::with_model`]).
    model: Option<QueryModel>,
}

/// The model a reader embeds queries with, and the vectors of its latest queries.
#[derive(Clone)]
struct QueryModel {
    embed: Arc<dyn Embed>,
    recent: Arc<RecentQueries>,
}

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex")
            .field("num_docs", &self.num_docs())
            .field(
                "model",
                &self.model.as_ref().map(|model| model.embed.model_id()),
            )
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
                vectors: Arc::default(),
                ordinals: Arc::default(),
                clusters: ClustersCache::default(),
            }),
            model: None,
        })
    }

    /// Returns this reader with semantic retrieval by `model`: each search also ranks the
    /// records by the cosine of their vectors with the query's, and fuses the two rankings
    /// ([`crate::semantic`]). Fails with [`Error::ModelMismatch`] when the index's vectors
    /// were made by another model, or by none (write it with the model first:
    /// [`IndexConfig::model`](crate::IndexConfig::model)).
    pub fn with_model(mut self, model: Arc<dyn Embed>) -> Result<SearchIndex> {
        let found = self.written_with()?;
        let expected = crate::semantic::vectors_id(model.as_ref());
        if self.num_docs() > 0 && found.as_deref() != Some(expected.as_str()) {
            return Err(Error::ModelMismatch { found, expected });
        }
        self.set_model(model);
        Ok(self)
    }

    /// Returns this reader searching by words alone, whether or not this one has a model:
    /// for a caller that wants the set of records a query's words select, not a ranking (the
    /// model ranks every record by meaning, so with it every query also selects the nearest
    /// ones, whatever they hold).
    #[must_use]
    pub fn without_model(&self) -> SearchIndex {
        SearchIndex {
            inner: Arc::clone(&self.inner),
            model: None,
        }
    }

    pub(crate) fn set_model(&mut self, model: Arc<dyn Embed>) {
        self.model = Some(QueryModel {
            embed: model,
            recent: Arc::new(RecentQueries::new(RECENT_QUERIES)),
        });
    }

    /// Returns this reader remembering the vectors of its latest `queries` distinct queries
    /// ([`RECENT_QUERIES`] unless set; 0 embeds every query), so that the next page of a
    /// search, or a query typed again, costs no transformer pass. Without a model, nothing
    /// changes. The clones of the returned reader share what it remembers.
    #[must_use]
    pub fn remembering_queries(mut self, queries: usize) -> SearchIndex {
        if let Some(model) = &mut self.model {
            model.recent = Arc::new(RecentQueries::new(queries));
        }
        self
    }

    /// Returns what made the index's vectors, as the last commit recorded it: the model's
    /// [`Embed::model_id`] and how much of a record's body it read (`…; N body characters`,
    /// N being [`BODY_CHARS`](crate::semantic::BODY_CHARS)); `None`: no model, or no commit
    /// yet.
    pub fn written_with(&self) -> Result<Option<String>> {
        let metas = self
            .inner
            .index
            .load_metas()
            .map_err(Error::index("read the index metadata"))?;
        Ok(CommitPayload::read(metas.payload.as_deref()).and_then(|payload| payload.model))
    }

    /// A searcher of the latest commit this reader has loaded.
    pub(crate) fn searcher(&self) -> tantivy::Searcher {
        self.inner.reader.searcher()
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

    /// Returns a tag of the snapshot searches and listings read now: it changes whenever
    /// their answers may (a commit, a merge, a delete), and is the same across restarts for
    /// the same index, so that a long listing can carry an entity tag without being buffered
    /// to hash it.
    pub fn snapshot_tag(&self) -> String {
        let searcher = self.inner.reader.searcher();
        searcher
            .segment_readers()
            .iter()
            .map(|segment| {
                format!(
                    "{}-{}",
                    segment.segment_id().uuid_string(),
                    segment.num_deleted_docs()
                )
            })
            .collect::<Vec<_>>()
            .join(",")
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

    /// Returns the identity of the store the last commit followed, when it recorded one.
    pub(crate) fn committed_store_identity(&self) -> Option<String> {
        let metas = self.inner.index.load_metas().ok()?;
        CommitPayload::read(metas.payload.as_deref())?.store
    }

    /// Returns the number of records `caller` may see.
    pub fn count(&self, caller: Caller) -> Result<u64> {
        let mut request = SearchRequest::new("", caller);
        request.limit = 0;
        // Every record, whatever its verdict or risk, each copy of a skill on its own: this
        // counts the index, not a listing.
        request.filters.verdict = vec![ANY_VERDICT.to_owned()];
        request.filters.risk = vec![ANY_RISK.to_owned()];
        request.fold = false;
        Ok(self.search(&request)?.total)
    }

    /// Wraps `query` so that it only matches what `caller` may see.
    fn visible(&self, query: Box<dyn Query>, caller: Caller) -> Box<dyn Query> {
        match caller {
            Caller::Authenticated => query,
            Caller::Anonymous => {
                // Every record has one access value: leaving out the private ones walks
                // their few postings, where asking for the visible ones would walk nearly
                // every record's.
                let private = TermQuery::new(
                    Term::from_field_text(self.fields().access, Access::Private.as_str()),
                    IndexRecordOption::Basic,
                );
                Box::new(BooleanQuery::new(vec![
                    (Occur::Must, query),
                    (Occur::MustNot, Box::new(private)),
                ]))
            }
        }
    }

    /// Searches. User text never causes an error: an `Err` means the index itself failed.
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResults> {
        let started = Instant::now();
        let chars = request.query.chars().count();
        if chars > MAX_QUERY_CHARS {
            return Err(Error::QueryTooLong {
                chars,
                limit: MAX_QUERY_CHARS,
            });
        }
        let searcher = self.inner.reader.searcher();
        self.forget_dropped_segments(&searcher);
        let parsed = parse(&request.query);
        let limit = request.limit.min(MAX_LIMIT);
        let offset = request.offset.min(MAX_OFFSET);
        let clusters = if request.fold {
            Some(
                self.inner
                    .clusters
                    .of(&searcher)
                    .map_err(Error::index("find the copies of skills"))?,
            )
        } else {
            None
        };
        let collector = SearchCollector {
            filters: request.filters.dims(),
            anonymous: request.caller == Caller::Anonymous,
            key: parsed.key.clone(),
            top_k: offset + limit,
            scored: !parsed.is_empty,
            max_facet_values: MAX_FACET_VALUES,
            ordinals: Arc::clone(&self.inner.ordinals),
            clusters: clusters.clone(),
        };
        // A query that is only quoted phrases asks for them: the model adds nothing to it.
        let nearest = match &self.model {
            Some(model) if !parsed.is_empty && !parsed.is_only_phrases() => {
                self.nearest(&searcher, model, &parsed.read, request, clusters.as_ref())?
            }
            _ => Vec::new(),
        };
        let collector = SearchCollector {
            top_k: if nearest.is_empty() {
                collector.top_k
            } else {
                collector.top_k.max(WORDS_DEPTH)
            },
            ..collector
        };
        let mut builder = QueryBuilder::new(*self.fields()).with_statistics(&searcher);
        let run = |text: &dyn Query| -> Result<Collected> {
            let query = self.visible(self.with_nearest(text, &nearest), request.caller);
            searcher
                .search(&*query, &collector)
                .map_err(Error::index("search"))
        };
        let mut text = builder.build(&parsed, false);
        let mut collected = run(&*text)?;
        if !parsed.is_empty && found_by_words(&collected, &nearest) < FEW_RESULTS {
            text = builder.build(&parsed, true);
            collected = run(&*text)?;
        }
        let fused = (!nearest.is_empty())
            .then(|| fuse_into(&mut collected.top, &nearest, words_share(&request.query)));

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
        for candidate in collected.top.iter().skip(offset).take(limit) {
            let skill = self.load(&searcher, candidate.address)?;
            let score = if parsed.is_empty {
                0.0
            } else {
                let fraction = match &fused {
                    Some(fused) => fused.get(&candidate.address).copied().unwrap_or(0.0),
                    None => candidate.score.max(0.0) / (candidate.score.max(0.0) + SCORE_SCALE),
                };
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
                copies: clusters.as_ref().map_or(0, |clusters| {
                    clusters.other_copies(candidate.address, request.caller == Caller::Anonymous)
                }),
            });
        }
        let [
            capability_type,
            access,
            domain,
            format,
            tag,
            verdict,
            license,
            risk,
        ] = collected.facets.map(FacetCounts);
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
                verdict,
                license,
                risk,
            },
            took_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        })
    }

    /// Forgets the decoded columns and vectors of the segments `searcher` no longer holds
    /// (merged or deleted away), once per search.
    fn forget_dropped_segments(&self, searcher: &Searcher) {
        let live: Vec<_> = searcher
            .segment_readers()
            .iter()
            .map(|segment| segment.segment_id())
            .collect();
        self.inner.ordinals.retain(&live);
        self.inner.vectors.retain(&live);
    }

    /// The [`SEMANTIC_DEPTH`] records nearest the query in meaning, under the request's
    /// filters and access policy, nearest first. `text` is the query as the words read it
    /// (`ParsedQuery::read`: a web address by its words).
    fn nearest(
        &self,
        searcher: &Searcher,
        model: &QueryModel,
        text: &str,
        request: &SearchRequest,
        clusters: Option<&Arc<Clusters>>,
    ) -> Result<Vec<Candidate>> {
        let query = NearestQuery {
            vector: model.recent.vector(text, model.embed.as_ref()),
            cache: Arc::clone(&self.inner.vectors),
        };
        let collector = SearchCollector {
            filters: request.filters.dims(),
            anonymous: request.caller == Caller::Anonymous,
            key: String::new(),
            top_k: SEMANTIC_DEPTH,
            scored: true,
            max_facet_values: 0,
            ordinals: Arc::clone(&self.inner.ordinals),
            clusters: clusters.cloned(),
        };
        let query = self.visible(Box::new(query), request.caller);
        Ok(searcher
            .search(&*query, &collector)
            .map_err(Error::index("search by meaning"))?
            .top)
    }

    /// The text query, or, with nearest records, the text query or one of those: they
    /// count in the total and the facets, and are ranked by the fusion.
    fn with_nearest(&self, text: &dyn Query, nearest: &[Candidate]) -> Box<dyn Query> {
        if nearest.is_empty() {
            return text.box_clone();
        }
        let ids = TermSetQuery::new(
            nearest
                .iter()
                .map(|candidate| Term::from_field_text(self.fields().id, &candidate.id)),
        );
        Box::new(BooleanQuery::new(vec![
            (Occur::Should, text.box_clone()),
            (
                Occur::Should,
                Box::new(ConstScoreQuery::new(Box::new(ids), 0.0)),
            ),
        ]))
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

    /// Returns the records whose content has `fingerprint` that `caller` may see, as
    /// listings show them, in canonical order (the copy a search shows first), at most
    /// [`MAX_COPIES`]: every copy of one skill, whatever its verdict or risk.
    pub fn copies(&self, fingerprint: &formats::Digest, caller: Caller) -> Result<Vec<Listed>> {
        let searcher = self.inner.reader.searcher();
        let fields = self.fields();
        let query = TermQuery::new(
            Term::from_field_text(fields.fingerprint, &fingerprint.hex()),
            IndexRecordOption::Basic,
        );
        let query = self.visible(Box::new(query), caller);
        let found = searcher
            .search(
                &*query,
                &TopDocs::with_limit(MAX_COPIES).order_by_u64_field(names::CANONICAL, Order::Asc),
            )
            .map_err(Error::index("find the copies of a skill"))?;
        let mut copies: Vec<(u64, Listed)> = Vec::with_capacity(found.len());
        let mut reader = ListedReader::default();
        for (rank, address) in found {
            let listed = reader.read(&searcher, address)?;
            if caller == Caller::Anonymous && listed.access == Access::Private {
                continue;
            }
            copies.push((rank.unwrap_or(u64::MAX), listed));
        }
        copies.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.id.cmp(&b.1.id)));
        Ok(copies.into_iter().map(|(_, listed)| listed).collect())
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
        let mut reader = ListedReader::default();
        // The id of the last document read: where the next page starts, whether or not the
        // defensive check below kept it.
        let mut last_read: Option<String> = None;
        for (_, address) in top.iter().take(limit) {
            let listed = reader.read(&searcher, *address)?;
            last_read = Some(listed.id.to_string());
            if request.caller == Caller::Anonymous && listed.access == Access::Private {
                continue;
            }
            records.push(listed);
        }
        let next_cursor = if top.len() > limit { last_read } else { None };
        Ok(ListPage {
            records,
            next_cursor,
        })
    }
}

/// Reads documents' listing views from the listing column, each segment's column opened once.
#[derive(Default)]
struct ListedReader {
    columns: HashMap<u32, BytesColumn>,
    bytes: Vec<u8>,
}

impl ListedReader {
    /// Returns the listing view of the document at `address`.
    fn read(&mut self, searcher: &Searcher, address: tantivy::DocAddress) -> Result<Listed> {
        let column = match self.columns.entry(address.segment_ord) {
            Entry::Occupied(column) => column.into_mut(),
            Entry::Vacant(vacant) => {
                let column = searcher
                    .segment_reader(address.segment_ord)
                    .fast_fields()
                    .bytes(names::LISTED)
                    .map_err(Error::index("read the listing column"))?
                    .ok_or_else(|| corrupt_listing(address.doc_id))?;
                vacant.insert(column)
            }
        };
        let ord = column
            .term_ords(address.doc_id)
            .next()
            .ok_or_else(|| corrupt_listing(address.doc_id))?;
        self.bytes.clear();
        column
            .ord_to_bytes(ord, &mut self.bytes)
            .map_err(|error| Error::index("read a listing")(tantivy::TantivyError::from(error)))?;
        serde_json::from_slice(&self.bytes).map_err(|error| Error::CorruptRecord {
            id: format!("(listing of document {})", address.doc_id),
            message: error.to_string(),
        })
    }
}

/// The error for a document without its listing view (an index this version did not write).
/// How many records the words found: the total, less the nearest records that only the
/// model found (scored 0 in the text run; when the words find few, every record found is
/// among the top).
fn found_by_words(collected: &Collected, nearest: &[Candidate]) -> u64 {
    if nearest.is_empty() {
        return collected.total;
    }
    let model_only = collected
        .top
        .iter()
        .filter(|candidate| !is_word_match(candidate))
        .count();
    collected.total.saturating_sub(model_only as u64)
}

/// True when the words matched the candidate (every text clause scores above 0).
fn is_word_match(candidate: &Candidate) -> bool {
    candidate.score > 0.0 || candidate.tier > TIER_TEXT
}

/// Orders `top` by tier, then by the fusion of the word ranking (the word matches among
/// `top`, with their scores) with `nearest`, the words weighing `words_share`, adding the
/// nearest records the words did not rank that high (the text run counted them in the total
/// and the facets, but its top holds the best word matches first); returns the fused scores.
fn fuse_into(
    top: &mut Vec<Candidate>,
    nearest: &[Candidate],
    words_share: f32,
) -> HashMap<tantivy::DocAddress, f32> {
    let words: Vec<(tantivy::DocAddress, f32)> = top
        .iter()
        .filter(|candidate| is_word_match(candidate))
        .map(|candidate| (candidate.address, candidate.score))
        .collect();
    let present: std::collections::HashSet<tantivy::DocAddress> =
        top.iter().map(|candidate| candidate.address).collect();
    for candidate in nearest {
        if !present.contains(&candidate.address) {
            top.push(Candidate {
                tier: TIER_TEXT,
                score: 0.0,
                ..candidate.clone()
            });
        }
    }
    let nearest: Vec<(tantivy::DocAddress, f32)> = nearest
        .iter()
        .map(|candidate| (candidate.address, candidate.score))
        .collect();
    let fused = fuse(&words, &nearest, words_share);
    // A stable sort: beyond both rankings' depth, the word order stands.
    top.sort_by(|a, b| {
        b.tier.cmp(&a.tier).then_with(|| {
            let score = |c: &Candidate| fused.get(&c.address).copied().unwrap_or(0.0);
            score(b).total_cmp(&score(a))
        })
    });
    fused
}

fn corrupt_listing(doc: u32) -> Error {
    Error::CorruptRecord {
        id: format!("(document {doc})"),
        message: "the document has no listing view".to_owned(),
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
        Dim::Verdict => fields.verdict,
        Dim::Risk => fields.risk,
    }
}

#[cfg(test)]
mod tests {
    use formats::Format;

    use super::*;
    use crate::document::tests::skill;
    use crate::{Filters, Index, IndexConfig};

    /// A small directory with every access level, two formats and a CJK description.
    fn fixture() -> SearchIndex {
        fixture_in_batches(usize::MAX)
    }

    /// The fixture, committed `batch` records at a time (one segment per commit).
    fn fixture_in_batches(batch: usize) -> SearchIndex {
        let mut records = Vec::new();
        let mut merge = skill(
            "a.test",
            "pdf-merge",
            "PDF Merge",
            "Merges several PDF files into one <document>.",
        );
        merge.tags = vec!["PDF".to_owned(), "documents".to_owned()];
        merge.license = Some("MIT".to_owned());
        records.push(merge);
        let mut tools = skill(
            "a.test",
            "pdf-tools",
            "PDF Tools",
            "A toolkit for PDF forms and text extraction.",
        );
        tools.tags = vec!["pdf".to_owned()];
        records.push(tools);
        records.push(skill(
            "a.test",
            "csv-cleanup",
            "CSV Cleanup",
            "Cleans messy CSV tables.",
        ));
        // Mentions the name many times, but is not it.
        records.push(skill(
            "b.test",
            "notes",
            "Notes",
            "Like pdf merge, pdf merge for notes: pdf merge, pdf merge, pdf merge.",
        ));
        records.push(skill(
            "c.test",
            "pdfplumber-guide",
            "pdfplumber guide",
            "Tables from documents with a Python library.",
        ));
        records.push(skill("c.test", "cjk", "文本工具", "PDF 文本提取工具"));
        for (name, capability, access, description, tag) in [
            (
                "payroll-audit",
                "api",
                Access::Private,
                "Audits payroll records for errors.",
                "finance",
            ),
            (
                "secret-pdf",
                "api",
                Access::Private,
                "Reads confidential PDF statements.",
                "finance",
            ),
            (
                "invoice-extract",
                "task",
                Access::Restricted,
                "Extracts invoice fields from a PDF.",
                "finance",
            ),
            (
                "style-guide",
                "knowledge",
                Access::Public,
                "The house style guide.",
                "writing",
            ),
        ] {
            let mut record = skill("s.test", name, name, description);
            record.format = Format::SkillSharing;
            record.capability_type = capability.to_owned();
            record.access = access;
            record.tags = vec![tag.to_owned()];
            records.push(record);
        }
        let Index { mut writer, search } = Index::create_in_ram(IndexConfig::default()).unwrap();
        for (n, record) in records.iter().enumerate() {
            writer.upsert(record).unwrap();
            if (n + 1) % batch == 0 {
                writer.commit(n as u64).unwrap();
            }
        }
        writer.commit(records.len() as u64).unwrap();
        search
    }

    #[test]
    fn name_and_title_prefixes_are_looked_up_in_every_segment() {
        // One record per segment: a key held by any segment counts.
        let index = fixture_in_batches(1);
        assert!(index.searcher().segment_readers().len() > 1);
        let builder = QueryBuilder::new(*index.fields()).with_statistics(&index.searcher());
        let (name, title) = (index.fields().name_key, index.fields().title_key);
        for prefix in ["pdf", "pdf-t", "pdf-tools", "csv-cl", "pdfplumber-"] {
            assert!(builder.may_start_a_term(name, prefix), "{prefix}");
        }
        assert!(builder.may_start_a_term(title, "pdfplumber-g"));
        for prefix in ["pdf-tools-for-my-invoices", "zzz", "tools"] {
            assert!(!builder.may_start_a_term(name, prefix), "{prefix}");
        }
        // Without the index, nothing can be ruled out.
        assert!(QueryBuilder::new(*index.fields()).may_start_a_term(name, "zzz"));
    }

    #[test]
    fn segments_do_not_change_the_answer() {
        let whole = fixture();
        let split = fixture_in_batches(3);
        for query in [
            "",
            "pdf",
            "pdf merge",
            "finance",
            "invoce",
            "文本提取",
            "notes",
        ] {
            for caller in [Caller::Anonymous, Caller::Authenticated] {
                let mut request = SearchRequest::new(query, caller);
                request.filters.capability_type = vec!["skill".to_owned(), "task".to_owned()];
                for request in [SearchRequest::new(query, caller), request] {
                    let a = whole.search(&request).unwrap();
                    let b = split.search(&request).unwrap();
                    assert_eq!(ids(&a), ids(&b), "{query:?}");
                    assert_eq!((a.total, &a.facets), (b.total, &b.facets), "{query:?}");
                }
            }
        }
    }

    // See: the hardening issue, defect 8: the API allowed 1,000 characters but the engine read
    // only the first 512.
    #[test]
    fn a_query_is_read_whole_up_to_the_one_limit_and_refused_past_it() {
        let index = fixture();
        let padded = format!("{}pdf", " ".repeat(MAX_QUERY_CHARS - 3));
        assert_eq!(padded.chars().count(), MAX_QUERY_CHARS);
        let whole = search(&index, &padded, Caller::Anonymous);
        assert_eq!(ids(&whole), ids(&search(&index, "pdf", Caller::Anonymous)));
        let too_long = format!("{padded}x");
        let error = index
            .search(&SearchRequest::new(&too_long, Caller::Anonymous))
            .unwrap_err();
        assert!(
            matches!(
                error,
                Error::QueryTooLong {
                    chars: 1001,
                    limit: 1000
                }
            ),
            "{error}"
        );
    }

    fn search(index: &SearchIndex, query: &str, caller: Caller) -> SearchResults {
        index.search(&SearchRequest::new(query, caller)).unwrap()
    }

    fn ids(results: &SearchResults) -> Vec<String> {
        results.hits.iter().map(|hit| hit.id.to_string()).collect()
    }

    #[test]
    fn private_records_never_reach_anonymous_callers() {
        let index = fixture();
        for query in [
            "pdf",
            "",
            "payroll",
            "audits payroll records",
            "secret-pdf",
            "finance",
        ] {
            let anonymous = search(&index, query, Caller::Anonymous);
            let everyone = search(&index, query, Caller::Authenticated);
            assert!(
                anonymous
                    .hits
                    .iter()
                    .all(|hit| hit.access != Access::Private),
                "{query:?}"
            );
            assert_eq!(anonymous.facets.access.get("private"), 0, "{query:?}");
            let private = everyone
                .hits
                .iter()
                .filter(|hit| hit.access == Access::Private)
                .count() as u64;
            assert_eq!(anonymous.total + private, everyone.total, "{query:?}");
            let tag_total: u64 = anonymous.facets.tag.0.iter().map(|(_, n)| n).sum();
            let private_tags = u64::from(query.is_empty() || query == "finance") * 2;
            let all_tags: u64 = everyone.facets.tag.0.iter().map(|(_, n)| n).sum();
            if query.is_empty() {
                assert_eq!(tag_total + private_tags, all_tags);
            }
        }
        // Filtering on private shows nothing anonymously, not even a count.
        let mut request = SearchRequest::new("", Caller::Anonymous);
        request.filters.access = vec!["private".to_owned()];
        let results = index.search(&request).unwrap();
        assert_eq!((results.total, results.hits.len()), (0, 0));
        assert_eq!(results.facets.access.get("private"), 0);
        assert_eq!(results.facets.domain.get("s.test"), 0);
        request.caller = Caller::Authenticated;
        assert_eq!(index.search(&request).unwrap().total, 2);

        assert!(
            index
                .get("s.test/payroll-audit", Caller::Anonymous)
                .unwrap()
                .is_none()
        );
        assert!(
            index
                .get("s.test/payroll-audit", Caller::Authenticated)
                .unwrap()
                .is_some()
        );
        assert!(
            index
                .get("s.test/invoice-extract", Caller::Anonymous)
                .unwrap()
                .is_some()
        );
        assert!(
            index
                .get("nowhere.test/x", Caller::Authenticated)
                .unwrap()
                .is_none()
        );
        assert_eq!(index.count(Caller::Anonymous).unwrap(), 8);
        assert_eq!(index.count(Caller::Authenticated).unwrap(), 10);
        assert_eq!(index.num_docs(), 10);

        let mut listed = Vec::new();
        let mut request = ListRequest::new(Caller::Anonymous);
        request.limit = 3;
        loop {
            let page = index.list(&request).unwrap();
            listed.extend(page.records.iter().map(|skill| skill.id.to_string()));
            match page.next_cursor {
                Some(cursor) => request.after = Some(cursor),
                None => break,
            }
        }
        assert_eq!(listed.len(), 8);
        assert!(
            !listed
                .iter()
                .any(|id| id.contains("payroll") || id.contains("secret"))
        );
        let mut sorted = listed.clone();
        sorted.sort();
        assert_eq!(listed, sorted);
    }

    #[test]
    fn filters_and_facets() {
        let index = fixture();
        let run = |filters: Filters, caller| {
            let mut request = SearchRequest::new("", caller);
            request.filters = filters;
            index.search(&request).unwrap()
        };
        // One value.
        let results = run(
            Filters {
                capability_type: vec!["API".to_owned()],
                ..Filters::default()
            },
            Caller::Authenticated,
        );
        assert_eq!(ids(&results), ["s.test/payroll-audit", "s.test/secret-pdf"]);
        // The filtered facet still counts the other values; the others count only api.
        assert_eq!(results.facets.capability_type.get("skill"), 6);
        assert_eq!(results.facets.capability_type.get("task"), 1);
        assert_eq!(results.facets.capability_type.get("api"), 2);
        assert_eq!(results.facets.domain.0, [("s.test".to_owned(), 2)]);
        assert_eq!(results.facets.format.0, [("skill-sharing".to_owned(), 2)]);

        // OR within a field (repeated or comma-separated), AND across fields.
        let results = run(
            Filters {
                capability_type: vec!["api,task".to_owned(), "knowledge".to_owned()],
                access: vec!["restricted".to_owned(), "public".to_owned()],
                ..Filters::default()
            },
            Caller::Authenticated,
        );
        assert_eq!(
            ids(&results),
            ["s.test/invoice-extract", "s.test/style-guide"]
        );
        assert_eq!(results.facets.access.get("private"), 2);
        assert_eq!(results.facets.access.get("public"), 1);

        for (filters, expected) in [
            (
                Filters {
                    domain: vec!["A.TEST".to_owned()],
                    ..Filters::default()
                },
                vec!["a.test/csv-cleanup", "a.test/pdf-merge", "a.test/pdf-tools"],
            ),
            (
                Filters {
                    format: vec!["skill-sharing".to_owned()],
                    ..Filters::default()
                },
                vec!["s.test/invoice-extract", "s.test/style-guide"],
            ),
            (
                Filters {
                    tag: vec!["pdf".to_owned()],
                    ..Filters::default()
                },
                vec!["a.test/pdf-merge", "a.test/pdf-tools"],
            ),
            (
                Filters {
                    license: vec!["mit".to_owned()],
                    ..Filters::default()
                },
                vec!["a.test/pdf-merge"],
            ),
            (
                Filters {
                    tag: vec!["no-such-tag".to_owned()],
                    ..Filters::default()
                },
                vec![],
            ),
        ] {
            let results = run(filters.clone(), Caller::Anonymous);
            assert_eq!(ids(&results), expected, "{filters:?}");
            assert_eq!(results.total, expected.len() as u64);
        }
        // Facets are sorted by count, then value.
        let results = run(Filters::default(), Caller::Anonymous);
        assert_eq!(
            results.facets.domain.0,
            [
                ("a.test".to_owned(), 3),
                ("c.test".to_owned(), 2),
                ("s.test".to_owned(), 2),
                ("b.test".to_owned(), 1),
            ]
        );
    }

    #[test]
    fn exact_names_then_prefixes_then_text() {
        let index = fixture();
        let results = search(&index, "pdf merge", Caller::Anonymous);
        let order = ids(&results);
        assert_eq!(order[0], "a.test/pdf-merge");
        assert!(results.hits[0].score >= 2.0, "{}", results.hits[0].score);
        let notes = order.iter().position(|id| id == "b.test/notes").unwrap();
        assert!(notes > 0);

        // Names that start with the query come before other text matches.
        let results = search(&index, "pdf", Caller::Anonymous);
        let order = ids(&results);
        let mut first = order[..3].to_vec();
        first.sort();
        assert_eq!(
            first,
            [
                "a.test/pdf-merge",
                "a.test/pdf-tools",
                "c.test/pdfplumber-guide"
            ]
        );
        assert!(results.hits[2].score >= 1.0 && results.hits[3].score < 1.0);
        assert!(order.contains(&"s.test/invoice-extract".to_owned()));
        for pair in results.hits.windows(2) {
            assert!(pair[0].score >= pair[1].score);
        }

        // A title counts like a name.
        let results = search(&index, "CSV cleanup", Caller::Anonymous);
        assert_eq!(ids(&results)[0], "a.test/csv-cleanup");
    }

    #[test]
    fn last_word_prefixes_and_typos() {
        let index = fixture();
        // Search as you type: the last word is a prefix.
        assert_eq!(
            ids(&search(&index, "pdfplu", Caller::Anonymous))[0],
            "c.test/pdfplumber-guide"
        );
        // Longer than the indexed prefixes: matched through the word dictionary.
        let results = search(&index, "confidentia", Caller::Authenticated);
        assert_eq!(ids(&results), ["s.test/secret-pdf"]);
        let results = search(&index, "invoice fie", Caller::Anonymous);
        assert_eq!(ids(&results)[0], "s.test/invoice-extract");
        // One typo in a long word, when exact terms find little.
        let results = search(&index, "invoce", Caller::Anonymous);
        assert_eq!(ids(&results), ["s.test/invoice-extract"]);
        let results = search(&index, "payrol audt", Caller::Authenticated);
        assert!(ids(&results).contains(&"s.test/payroll-audit".to_owned()));
        // Short words get no typo matching.
        assert!(search(&index, "pfd", Caller::Anonymous).hits.is_empty());
    }

    #[test]
    fn typos_only_add_results_when_exact_terms_find_few() {
        let Index {
            mut writer,
            search: index,
        } = Index::create_in_ram(IndexConfig::default()).unwrap();
        for n in 0..5 {
            writer
                .upsert(&skill("w.test", &format!("w{n}"), "W", "A widget maker."))
                .unwrap();
        }
        writer
            .upsert(&skill("w.test", "typo", "T", "A widgte maker."))
            .unwrap();
        writer.commit(1).unwrap();
        let exact = search(&index, "widget", Caller::Anonymous);
        assert_eq!(exact.total, 5);
        assert!(!ids(&exact).contains(&"w.test/typo".to_owned()));
        // Exact "widgte" finds one record, so the near spellings are added below it.
        let few = search(&index, "widgte", Caller::Anonymous);
        assert_eq!(few.total, 6);
        assert_eq!(ids(&few)[0], "w.test/typo");
    }

    #[test]
    fn cjk_text_is_searchable() {
        let index = fixture();
        let results = search(&index, "文本提取", Caller::Anonymous);
        assert_eq!(ids(&results)[0], "c.test/cjk");
        let snippet = results.hits[0].snippet.bracketed();
        assert!(snippet.contains("[文本提取]"), "{snippet}");
        assert_eq!(
            ids(&search(&index, "提取", Caller::Anonymous)),
            ["c.test/cjk"]
        );
    }

    #[test]
    fn snippets_mark_matches_in_plain_text() {
        let index = fixture();
        let results = search(&index, "merge documents", Caller::Anonymous);
        let hit = &results.hits[0];
        assert_eq!(hit.id.to_string(), "a.test/pdf-merge");
        insta::assert_snapshot!(
            hit.snippet.bracketed(),
            @"[Merges] several PDF files into one <[document]>."
        );
        // Without a highlight, the snippet is the start of the description.
        let browse = search(&index, "", Caller::Anonymous);
        let merge = browse
            .hits
            .iter()
            .find(|hit| hit.name.as_str() == "pdf-merge")
            .unwrap();
        assert!(!merge.snippet.has_marks());
        assert!(merge.snippet.text.contains("<document>"));
    }

    #[test]
    fn body_matches_count_when_little_else_matches_and_get_a_body_snippet() {
        let Index {
            mut writer,
            search: index,
        } = Index::create_in_ram(IndexConfig::default()).unwrap();
        let mut deep = skill("d.test", "ledger", "Ledger", "Keeps the books.");
        deep.body = format!(
            "{}The quarterly <reconciliation> happens here.\n{}",
            "filler words ".repeat(400),
            "more filler ".repeat(100)
        );
        writer.upsert(&deep).unwrap();
        writer.commit(1).unwrap();
        let results = search(&index, "reconciliation", Caller::Anonymous);
        assert_eq!(ids(&results), ["d.test/ledger"]);
        let snippet = results.hits[0].snippet.bracketed();
        assert!(snippet.starts_with('…'), "{snippet}");
        assert!(snippet.contains("<[reconciliation]>"), "{snippet}");
    }

    // See: the search issue. "is this NDA safe" found the skills named `safe…` and not the
    // contract reviewer whose body alone says NDA: body words counted only when the query
    // found fewer than five records.
    #[test]
    fn a_body_word_few_records_hold_matches_and_a_commoner_one_only_ranks() {
        let mut records: Vec<Skill> = (0..10)
            .map(|n| {
                let mut named = skill("s.test", &format!("safe-tool-{n}"), "Tool", "A tool.");
                named.body = "Nothing else here.".to_owned();
                named
            })
            .collect();
        let mut reviewer = skill("l.test", "contract-review", "Review", "Reads agreements.");
        reviewer.body = "Flags risky clauses in an NDA.".to_owned();
        records.push(reviewer);
        // "wiki" is in 3 of 14 bodies: more than the rare share, less than the common one.
        for n in 0..3 {
            let mut notes = skill("n.test", &format!("notes-{n}"), "Notes", "Keeps notes.");
            notes.body = "Meeting notes kept in the wiki.".to_owned();
            records.push(notes);
        }
        let index = index_of(&records);

        let results = search(&index, "is this NDA safe", Caller::Anonymous);
        assert_eq!(results.total, 11);
        assert!(ids(&results).contains(&"l.test/contract-review".to_owned()));

        let results = search(&index, "safe wiki", Caller::Anonymous);
        assert_eq!(results.total, 10);
        assert!(ids(&results).iter().all(|id| id.starts_with("s.test/")));
    }

    // A quoted phrase with a stop word in it ("infrastructure as code", "text to speech")
    // found nothing: the analyser drops the stop word, and the phrase was built as if the
    // words left were adjacent, where the index keeps the gap.
    #[test]
    fn a_quoted_phrase_with_a_stop_word_finds_the_text_it_quotes() {
        let index = index_of(&[
            skill(
                "a.test",
                "iac",
                "IaC",
                "Builds infrastructure as code for clouds.",
            ),
            skill(
                "b.test",
                "tts",
                "Voices",
                "Turns text to speech in many voices.",
            ),
            skill(
                "c.test",
                "near",
                "Near",
                "Infrastructure code reviews, not the same.",
            ),
        ]);
        let quoted = |query: &str| ids(&search(&index, query, Caller::Anonymous));
        assert_eq!(quoted("\"infrastructure as code\""), ["a.test/iac"]);
        assert_eq!(quoted("\"text to speech\""), ["b.test/tts"]);
        // The gap is part of the phrase: the words side by side are another text.
        assert_eq!(quoted("\"infrastructure code\""), ["c.test/near"]);
    }

    /// An index of `records`, committed.
    fn index_of(records: &[Skill]) -> SearchIndex {
        let Index {
            mut writer,
            search: index,
        } = Index::create_in_ram(IndexConfig::default()).unwrap();
        for record in records {
            writer.upsert(record).unwrap();
        }
        writer.commit(1).unwrap();
        index
    }

    // See: the search issue: three task queries with a quoted phrase returned nothing.
    #[test]
    fn a_quoted_phrase_ranks_inside_a_task_and_filters_only_alone() {
        let index = index_of(&[
            skill(
                "a.test",
                "pdf-merge",
                "PDF Merge",
                "Merges PDF files into one.",
            ),
            skill(
                "a.test",
                "seo-audit",
                "SEO audit",
                "Audits social media marketing pages.",
            ),
        ]);
        // The phrase appears nowhere: the task's other words still find the skill.
        let task = search(
            &index,
            r#"please merge these PDF files, the error says "xref table broken""#,
            Caller::Anonymous,
        );
        assert_eq!(
            ids(&task).first().map(String::as_str),
            Some("a.test/pdf-merge")
        );
        // Found as written, it lifts the record that holds it.
        let phrase = search(
            &index,
            r#"check my page for "social media marketing" and merge"#,
            Caller::Anonymous,
        );
        assert_eq!(
            ids(&phrase).first().map(String::as_str),
            Some("a.test/seo-audit")
        );
        // A query that is only the phrase asks for it.
        assert!(
            search(&index, r#""xref table broken""#, Caller::Anonymous)
                .hits
                .is_empty()
        );
        assert_eq!(
            ids(&search(&index, r#""merges pdf""#, Caller::Anonymous)),
            ["a.test/pdf-merge"]
        );
    }

    #[test]
    fn abbreviations_find_what_skill_text_spells_out() {
        let index = index_of(&[
            skill(
                "a.test",
                "cluster-ops",
                "Cluster ops",
                "Deploys workloads to Kubernetes.",
            ),
            skill(
                "a.test",
                "schema-design",
                "Schema design",
                "Designs a relational database schema.",
            ),
            skill(
                "a.test",
                "review-bot",
                "Review bot",
                "Reviews a pull request and its diff.",
            ),
        ]);
        for (query, expected) in [
            ("k8s workloads", "a.test/cluster-ops"),
            ("k8s", "a.test/cluster-ops"),
            ("my db", "a.test/schema-design"),
            ("look at my PR", "a.test/review-bot"),
        ] {
            let results = search(&index, query, Caller::Anonymous);
            assert_eq!(
                ids(&results).first().map(String::as_str),
                Some(expected),
                "{query}"
            );
        }
    }

    // `seo` also searched for `search`, `engine` and `optimization` one by one, so every
    // skill about optimising anything matched it; `pr` matched every skill about requests.
    #[test]
    fn a_synonym_of_several_words_is_searched_as_a_phrase() {
        let index = index_of(&[
            skill(
                "a.test",
                "audit",
                "Audit",
                "Search engine optimization audits of a site.",
            ),
            skill(
                "a.test",
                "tuning",
                "Tuning",
                "Optimization of slow database queries.",
            ),
            skill(
                "a.test",
                "review-bot",
                "Review bot",
                "Reviews a pull request and its diff.",
            ),
            skill("a.test", "retry", "Retry", "Retries failed HTTP requests."),
        ]);
        let found = |query: &str| ids(&search(&index, query, Caller::Anonymous));
        assert_eq!(found("seo"), ["a.test/audit"]);
        assert_eq!(found("pr"), ["a.test/review-bot"]);
    }

    // `C#` was the letter `c`: every skill saying `C-level` or `C` matched it, and no skill
    // named `csharp-…` did; `.NET` was `net`, and missed the `dotnet-…` skills.
    #[test]
    fn language_names_written_with_symbols_find_their_skills() {
        let index = index_of(&[
            skill(
                "a.test",
                "csharp-scripts",
                "C# scripts",
                "Run single-file scripts.",
            ),
            skill(
                "a.test",
                "c-level-advisor",
                "C-level advisor",
                "Advice for a CEO or a CTO.",
            ),
            skill(
                "a.test",
                "dotnet-trace",
                "Trace",
                "Collect traces of a running service.",
            ),
            skill(
                "a.test",
                "native-interop",
                "Native interop",
                "Call C++ libraries from .NET code.",
            ),
            skill("a.test", "network", "Network", "Inspect the net traffic."),
        ]);
        let found = |query: &str| ids(&search(&index, query, Caller::Anonymous));
        assert_eq!(found("C#"), ["a.test/csharp-scripts"]);
        assert_eq!(found("c++"), ["a.test/native-interop"]);
        assert_eq!(
            found(".NET"),
            ["a.test/dotnet-trace", "a.test/native-interop"]
        );
        assert_eq!(found("dotnet"), found(".NET"));
        let results = search(&index, "call c++", Caller::Anonymous);
        assert_eq!(
            results.hits[0].snippet.bracketed(),
            "[Call] [C++] libraries from .NET code."
        );
    }

    // Typed without its dot, beside a product's word, `net` still means .NET; alone it is
    // the word `net`.
    #[test]
    fn net_typed_without_its_dot_finds_dotnet_text() {
        let index = index_of(&[
            skill(
                "b.test",
                "api-hosting",
                "API hosting",
                "Host web APIs with ASP.NET Core.",
            ),
            skill("b.test", "network", "Network", "Inspect the net traffic."),
            skill(
                "b.test",
                "finance",
                "Finance",
                "Net income and core metrics.",
            ),
            skill("b.test", "upgrade", "Upgrade", "Moves services to .NET 8."),
            skill(
                "b.test",
                "php-upgrade",
                "PHP upgrade",
                "Moves services to PHP 8 and its net new features.",
            ),
        ]);
        let found = |query: &str| ids(&search(&index, query, Caller::Anonymous));
        assert_eq!(found("asp net core")[0], "b.test/api-hosting");
        assert_eq!(found("net core")[0], "b.test/api-hosting");
        // A version typed without the dot, with or without a space.
        assert_eq!(found("net8"), ["b.test/upgrade"]);
        assert_eq!(found("net 8")[0], "b.test/upgrade");
        assert_eq!(found("net 8 services")[0], "b.test/upgrade");
        // Alone, `net` is not .NET: the ASP.NET skill is not found.
        let income = found("net income");
        assert_eq!(income[0], "b.test/finance");
        assert!(
            !income.contains(&"b.test/api-hosting".to_owned()),
            "{income:?}"
        );
    }

    // A language's word found only in a body: the body's window is found by how the word is
    // written there (`C#`), not by the word searched for (`csharp`).
    #[test]
    fn a_language_name_in_a_body_is_highlighted() {
        let mut record = skill("a.test", "records", "Records", "Immutable data types.");
        record.body = format!(
            "{}\n\nUse C# records for value objects.",
            "Intro. ".repeat(200)
        );
        let index = index_of(&[record]);
        let results = search(&index, "C#", Caller::Anonymous);
        let snippet = results.hits[0].snippet.bracketed();
        assert!(
            snippet.ends_with("Use [C#] records for value objects."),
            "{snippet}"
        );
        assert_eq!(snippet.matches('[').count(), 1, "{snippet}");
    }

    // The search issue's own example ("turn this scanned contract into text"): the skill
    // that reads scans says OCR and never "scanned".
    #[test]
    fn a_scanned_document_finds_the_ocr_skill() {
        let index = index_of(&[
            skill(
                "a.test",
                "secret-scanning",
                "Secret scanning",
                "Finds leaked keys in a repository.",
            ),
            skill(
                "a.test",
                "page-reader",
                "Page reader",
                "Reads page images into plain text with OCR.",
            ),
        ]);
        let results = search(&index, "my scanned contracts", Caller::Anonymous);
        assert!(
            ids(&results).contains(&"a.test/page-reader".to_owned()),
            "{:?}",
            ids(&results)
        );
        // One way only: OCR does not bring in scans.
        let results = search(&index, "ocr", Caller::Anonymous);
        assert_eq!(ids(&results), ["a.test/page-reader"]);
    }

    #[test]
    fn task_boilerplate_does_not_change_the_answer() {
        let index = index_of(&[
            skill(
                "a.test",
                "pdf-merge",
                "PDF Merge",
                "Merges PDF files into one.",
            ),
            skill(
                "a.test",
                "helper",
                "Helper",
                "Can help you with anything you need, please ask.",
            ),
        ]);
        let plain = ids(&search(&index, "merge pdf files", Caller::Anonymous));
        let polite = ids(&search(
            &index,
            "Hi! Could you please help me, I need to merge some pdf files",
            Caller::Anonymous,
        ));
        assert_eq!(plain.first(), polite.first());
        assert_eq!(polite.first().map(String::as_str), Some("a.test/pdf-merge"));
    }

    #[test]
    fn a_web_address_in_a_task_is_read_for_its_words() {
        let index = index_of(&[
            skill(
                "a.test",
                "accessibility-audit",
                "Accessibility Audit",
                "Audits a page for screen reader users: labels, focus and contrast.",
            ),
            skill(
                "a.test",
                "examples",
                "Examples",
                "Example apps to start from.",
            ),
            skill(
                "a.test",
                "https-certificates",
                "HTTPS Certificates",
                "Issues certificates so a site serves https on the www host of a com domain.",
            ),
            skill(
                "a.test",
                "shop-checkout",
                "Checkout",
                "Adds a checkout page to a shop.",
            ),
        ]);
        let task = "a screen reader user cannot finish checkout at \
                    https://www.example.com/checkout?step=2, please audit it";
        let found = ids(&search(&index, task, Caller::Anonymous));
        assert_eq!(
            found,
            ["a.test/accessibility-audit", "a.test/shop-checkout"],
            "the scheme, www, the top-level domain and the example host are not words of the task"
        );
        // A real host's own labels are.
        let found = ids(&search(
            &index,
            "see https://shop.acme.co.uk",
            Caller::Anonymous,
        ));
        assert_eq!(found, ["a.test/shop-checkout"]);
    }

    #[test]
    fn licences_are_a_facet() {
        let mut records = Vec::new();
        for (name, license) in [
            ("a", "MIT"),
            ("b", "mit"),
            ("c", "Apache-2.0"),
            ("e", "MIT License"),
        ] {
            let mut record = skill("l.test", name, name, "A tool.");
            record.license = Some(license.to_owned());
            records.push(record);
        }
        records.push(skill("l.test", "d", "d", "A tool."));
        let index = index_of(&records);
        let results = search(&index, "tool", Caller::Anonymous);
        // Spellings of one licence are counted under one name.
        assert_eq!(
            results.facets.license.0,
            [("mit".to_owned(), 3), ("apache-2.0".to_owned(), 1)]
        );
        let mut request = SearchRequest::new("tool", Caller::Anonymous);
        request.filters.license = vec!["Apache-2.0 License".to_owned()];
        let filtered = index.search(&request).unwrap();
        assert_eq!(ids(&filtered), ["l.test/c"]);
        // A facet applies every filter but its own.
        assert_eq!(filtered.facets.license.0.len(), 2);
    }

    #[test]
    fn declared_tools_headings_and_licences_are_searched() {
        let mut service = skill("a.test", "weather-api", "Gimmee", "A service.");
        service.format = Format::SkillSharing;
        service.frontmatter.insert(
            "inputs".to_owned(),
            serde_json::json!([{"name": "forecast", "description": "Rain and temperature by city"}]),
        );
        let mut gaia = skill("b.test", "web-tools", "Web tools", "Tools for the web.");
        gaia.frontmatter.insert(
            "tools".to_owned(),
            serde_json::json!([{"name": "fetch_page", "parameters": {"max_results": {"type": "integer"}}}]),
        );
        let mut guide = skill("c.test", "guide", "Guide", "A guide.");
        guide.body = "# Reconciling ledgers\n\nText.\n".to_owned();
        guide.license = Some("Apache-2.0".to_owned());
        let index = index_of(&[service, gaia, guide]);
        for (query, expected) in [
            ("rain by city", "a.test/weather-api"),
            ("max results", "b.test/web-tools"),
            ("reconciling ledgers", "c.test/guide"),
            ("apache", "c.test/guide"),
        ] {
            let results = search(&index, query, Caller::Anonymous);
            assert_eq!(
                ids(&results).first().map(String::as_str),
                Some(expected),
                "{query}"
            );
        }
    }

    #[test]
    fn hostile_queries_are_results_or_nothing() {
        let index = fixture();
        // As long as a query may be; past that it is refused (see
        // `a_query_is_read_whole_up_to_the_one_limit_and_refused_past_it`).
        let long = "pdf ".repeat(MAX_QUERY_CHARS / 4);
        let lone_surrogate = String::from_utf16_lossy(&[0xD800, 0x0070, 0x0064, 0x0066]);
        let hostile = [
            "((((",
            "))))",
            "AND OR NOT",
            "\"unbalanced",
            "\"\"",
            "\"",
            "c++ (",
            "title:pdf",
            "*",
            "pdf*",
            "-pdf",
            "+",
            "a AND",
            "[1 TO 2]",
            "\u{0}\u{1}\u{7f}\u{1b}[2J",
            "🦀🦀🦀",
            "\u{200b}\u{feff}",
            "ſ ß Ⅸ",
            "%00%ff",
            "\\",
            "'; DROP TABLE skills; --",
            &long,
            &lone_surrogate,
        ];
        for query in hostile {
            for caller in [Caller::Anonymous, Caller::Authenticated] {
                let mut request = SearchRequest::new(query, caller);
                request.limit = usize::MAX;
                request.offset = usize::MAX;
                let results = index.search(&request).unwrap();
                assert!(results.hits.is_empty());
                request.offset = 0;
                let results = index.search(&request).unwrap();
                assert!(results.hits.len() as u64 <= results.total);
                assert!(results.hits.len() <= MAX_LIMIT);
            }
        }
        assert!(!search(&index, &long, Caller::Anonymous).hits.is_empty());
        // Operators are words (stop words here); the last one is still a prefix.
        assert_eq!(
            ids(&search(&index, "AND OR NOT", Caller::Anonymous)),
            ["b.test/notes"]
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        #[test]
        fn any_text_is_a_query(query in "\\PC{0,40}|[\"()*:+\\-~^ a-z]{0,20}", authenticated: bool) {
            let index = fixture_index();
            let caller = if authenticated { Caller::Authenticated } else { Caller::Anonymous };
            let results = index.search(&SearchRequest::new(query.clone(), caller)).unwrap();
            proptest::prop_assert_eq!(&results.query, &query);
            proptest::prop_assert!(results.hits.len() as u64 <= results.total);
            let visible = if authenticated { 10 } else { 8 };
            proptest::prop_assert!(results.total <= visible);
            for pair in results.hits.windows(2) {
                proptest::prop_assert!(pair[0].score >= pair[1].score);
            }
        }
    }

    /// Records whose text holds what the tokenizer and the synonym table read specially:
    /// languages named with symbols, `.NET` products, abbreviations, phrases.
    fn special_words_index() -> SearchIndex {
        static FIXTURE: std::sync::OnceLock<SearchIndex> = std::sync::OnceLock::new();
        FIXTURE
            .get_or_init(|| {
                let mut interop = skill(
                    "a.test",
                    "native-interop",
                    "Native interop",
                    "Call C++ libraries from .NET code; C#, F# and VB.NET alike.",
                );
                interop.body = format!(
                    "{}\n\nASP.NET Core, ML.NET, ADO.NET and .NET Framework 4.8: C# records, C++17.",
                    "Intro. ".repeat(100)
                );
                let mut pr = skill(
                    "a.test",
                    "pr-review",
                    "PR review",
                    "Review a pull request (PR) and its CI checks: OCR'd \"scanned\" files too.",
                );
                pr.body = "A net income report. Network .net domains. c# minor, c#10.".to_owned();
                index_of(&[interop, pr])
            })
            .clone()
    }

    /// What the tokenizer and the synonym table read specially, in any order and glued in
    /// any way: the strings of the property test below, which asks that every such query
    /// answers (a token's offsets past its text would panic when the snippet or the query
    /// builder slices it) with hits within the total, in order, and every snippet's marks on
    /// the snippet's character boundaries, in order and apart.
    fn special_words_query() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let words = prop::sample::select(vec![
            "C#",
            "c#",
            "F#",
            "C++",
            "c++17",
            ".NET",
            ".net",
            "ASP.NET",
            "asp",
            "net",
            "core",
            "framework",
            "sdk",
            "aspnet",
            "ML.NET",
            "VB",
            "pull",
            "request",
            "pr",
            "PR",
            "ocr",
            "scanned",
            "ci",
            "\"",
            "#",
            "+",
            ".",
            "10",
            "records",
            "Net",
            "NET",
        ]);
        let glue = prop::sample::select(vec![" ", "", ".", "-", "\""]);
        (prop::collection::vec(words, 0..12), glue).prop_map(|(words, glue)| words.join(glue))
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        #[test]
        fn special_words_make_queries_that_answer(query in special_words_query()) {
            let index = special_words_index();
            let mut request = SearchRequest::new(query, Caller::Anonymous);
            request.limit = 10;
            let results = index.search(&request).unwrap();
            proptest::prop_assert!(results.hits.len() as u64 <= results.total);
            proptest::prop_assert!(results.total <= 2);
            for pair in results.hits.windows(2) {
                proptest::prop_assert!(pair[0].score >= pair[1].score);
            }
            for hit in &results.hits {
                let snippet = &hit.snippet;
                let mut end = 0;
                for mark in &snippet.marks {
                    proptest::prop_assert!(end <= mark.start && mark.start < mark.end);
                    proptest::prop_assert!(snippet.text.is_char_boundary(mark.start));
                    proptest::prop_assert!(snippet.text.is_char_boundary(mark.end));
                    proptest::prop_assert!(mark.end <= snippet.text.len());
                    end = mark.end;
                }
            }
        }
    }

    /// The fixture, built once for the property test's many cases.
    fn fixture_index() -> SearchIndex {
        static FIXTURE: std::sync::OnceLock<SearchIndex> = std::sync::OnceLock::new();
        FIXTURE.get_or_init(fixture).clone()
    }

    #[test]
    fn pages_and_browsing() {
        let index = fixture();
        let all = search(&index, "", Caller::Anonymous);
        assert_eq!(all.total, 8);
        assert!(all.hits.iter().all(|hit| hit.score == 0.0));
        let mut sorted = ids(&all);
        sorted.sort();
        assert_eq!(ids(&all), sorted);
        let mut request = SearchRequest::new("pdf", Caller::Anonymous);
        let full = index.search(&request).unwrap();
        request.limit = 2;
        let first = index.search(&request).unwrap();
        request.offset = 2;
        let second = index.search(&request).unwrap();
        assert_eq!(first.total, full.total);
        assert_eq!([ids(&first), ids(&second)].concat(), ids(&full)[..4]);
        request.limit = 0;
        request.offset = 0;
        let counts = index.search(&request).unwrap();
        assert!(counts.hits.is_empty());
        assert_eq!(counts.total, full.total);
        assert_eq!(counts.facets, full.facets);
    }

    #[test]
    fn the_results_serialise_and_read_back() {
        let index = fixture();
        let mut request = SearchRequest::new("invoice", Caller::Anonymous);
        request.limit = 1;
        let results = index.search(&request).unwrap();
        insta::assert_json_snapshot!(
            results,
            { ".took_ms" => "[took_ms]", ".hits[].score" => "[score]" },
            @r#"
    {
      "query": "invoice",
      "total": 1,
      "hits": [
        {
          "id": "s.test/invoice-extract",
          "domain": "s.test",
          "name": "invoice-extract",
          "title": "invoice-extract",
          "description": "Extracts invoice fields from a PDF.",
          "capability_type": "task",
          "access": "restricted",
          "format": "skill-sharing",
          "version": null,
          "source_url": "https://s.test/.well-known/skills/invoice-extract/SKILL.md",
          "score": "[score]",
          "snippet": {
            "text": "Extracts invoice fields from a PDF.",
            "marks": [
              {
                "start": 9,
                "end": 16
              }
            ]
          },
          "copies": 0
        }
      ],
      "facets": {
        "capability_type": {
          "task": 1
        },
        "access": {
          "restricted": 1
        },
        "domain": {
          "s.test": 1
        },
        "format": {
          "skill-sharing": 1
        },
        "tag": {
          "finance": 1
        },
        "verdict": {
          "valid": 1
        },
        "license": {},
        "risk": {
          "none": 1
        }
      },
      "took_ms": "[took_ms]"
    }
    "#
        );
        let json = serde_json::to_value(&results).unwrap();
        let back: SearchResults = serde_json::from_value(json).unwrap();
        assert_eq!(back, results);
    }

    #[test]
    fn decoded_columns_follow_every_commit_and_forget_dropped_segments() {
        let Index {
            mut writer,
            search: index,
        } = Index::create_in_ram(IndexConfig::default()).unwrap();
        let mut first = skill("a.test", "notes", "Notes", "Takes notes.");
        first.tags = vec!["alpha".to_owned()];
        writer.upsert(&first).unwrap();
        writer.commit(1).unwrap();
        let results = search(&index, "notes", Caller::Anonymous);
        assert_eq!(results.facets.tag.get("alpha"), 1);
        assert_eq!(index.inner.ordinals.len(), 1);

        // The same record again in a new segment, with another tag and made private; and a
        // second record.
        let mut second = first.clone();
        second.tags = vec!["beta".to_owned()];
        second.access = Access::Private;
        writer.upsert(&second).unwrap();
        let mut other = skill("b.test", "notes-too", "Notes too", "More notes.");
        other.tags = vec!["alpha".to_owned()];
        writer.upsert(&other).unwrap();
        writer.commit(2).unwrap();
        let anonymous = search(&index, "notes", Caller::Anonymous);
        assert_eq!(anonymous.total, 1);
        assert_eq!(anonymous.facets.tag.0, [("alpha".to_owned(), 1)]);
        assert_eq!(anonymous.facets.access.get("private"), 0);
        let everyone = search(&index, "notes", Caller::Authenticated);
        assert_eq!(everyone.total, 2);
        assert_eq!(everyone.facets.tag.get("beta"), 1);
        assert_eq!(everyone.facets.access.get("private"), 1);
        let mut filtered = SearchRequest::new("notes", Caller::Authenticated);
        filtered.filters.tag = vec!["beta".to_owned()];
        assert_eq!(ids(&index.search(&filtered).unwrap()), ["a.test/notes"]);

        // Every record deleted: the old segments leave the cache with the searcher's.
        writer.clear().unwrap();
        writer.commit(3).unwrap();
        assert_eq!(search(&index, "notes", Caller::Authenticated).total, 0);
        let live = index.inner.reader.searcher().segment_readers().len();
        assert!(index.inner.ordinals.len() <= live, "{live} live segments");
    }

    #[test]
    fn a_reader_sees_new_commits() {
        let Index {
            mut writer,
            search: index,
        } = Index::create_in_ram(IndexConfig::default()).unwrap();
        let reader = index.clone();
        let handle = std::thread::spawn(move || reader.num_docs());
        assert_eq!(handle.join().unwrap(), 0);
        writer
            .upsert(&skill("n.test", "new", "New", "Fresh."))
            .unwrap();
        writer.commit(7).unwrap();
        assert_eq!(search(&index, "fresh", Caller::Anonymous).total, 1);
        assert_eq!(index.committed_seq().unwrap(), 7);
    }
}
