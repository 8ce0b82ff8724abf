//! Semantic retrieval, an option: a sentence-embedding model reads every record and every
//! query, and the records nearest the query in meaning are fused with the word ranking.
//!
//! - [`Embed`]: what a model must do (the crate's model is [`crate::embed::Embedder`];
//!   tests use small stand-ins).
//! - [`record_text`]: what the model reads of a record.
//! - Vectors are stored in the index, one per record, quantised to 8 bits, in a bytes fast
//!   field, with a digest of the text they were made from, so that a record written again
//!   with the same text keeps its vector (`stored`). A searcher reads a segment's vectors
//!   once into memory (`VectorCache`) and scores every record of it against the query
//!   (`NearestQuery`), under the same filters and access policy as the words.
//! - `fuse`: a weighted sum of the two rankings' scores, each scaled to 0–1 first.
//! - `RecentQueries`: the vectors of the latest queries, so that the next page of a search
//!   is not embedded again.
//!
//! The model, what it reads and the fusion were measured on every relevance set
//! (docs/BENCHMARKS.md): they lift the development set and the blind sets, and cost a
//! transformer pass per record and per query.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use formats::Skill;
use tantivy::index::SegmentId;
use tantivy::query::{EnableScoring, Explanation, Query, Scorer, Weight};
use tantivy::{DocId, DocSet, Score, SegmentReader, TERMINATED};

use crate::schema::names;
use crate::segment_cache::SegmentCache;

mod stored;

use stored::decode;
pub(crate) use stored::{Source, encode, reusable, stored_vector, stored_vectors};

/// A sentence-embedding model: text in, a unit vector out. `Send + Sync`: one model serves
/// every search thread.
pub trait Embed: Send + Sync {
    /// The vector of `text`, L2-normalised; always [`Embed::dimensions`] long.
    fn embed(&self, text: &str) -> Vec<f32>;
    /// The length of every vector.
    fn dimensions(&self) -> usize;
    /// Names the model and its version: an index whose vectors another model made is
    /// rebuilt rather than searched with this one.
    fn model_id(&self) -> String;
}

impl Embed for crate::embed::Embedder {
    fn embed(&self, text: &str) -> Vec<f32> {
        crate::embed::Embedder::embed(self, text)
    }

    fn dimensions(&self) -> usize {
        crate::embed::Embedder::dimensions(self)
    }

    fn model_id(&self) -> String {
        self.id().to_owned()
    }
}

/// How many characters of the body the model reads (after code blocks and Markdown
/// punctuation are taken out), after the title, description, declared inputs and tags.
/// 600 rather than 1,000: a record's vector costs a third less, and the relevance
/// sets moved within their noise (measured then; the git history of docs/BENCHMARKS.md).
pub const BODY_CHARS: usize = 600;

/// Names what an index's vectors are: the model, and how much of a record it read. An index
/// whose vectors were made otherwise is rebuilt (or refused by a reader) rather than mixed.
pub(crate) fn vectors_id(model: &dyn Embed) -> String {
    format!("{}; {BODY_CHARS} body characters", model.model_id())
}

/// How many of the nearest records take part in the fusion.
pub const SEMANTIC_DEPTH: usize = 100;
/// How many of the word ranking's best take part in the fusion.
pub const WORDS_DEPTH: usize = 100;
/// The words' share of a fused score; the model's is the rest. Chosen on the tuning sets
/// (0.4–0.7 tried; the git history of docs/BENCHMARKS.md).
pub const WORDS_SHARE: f32 = 0.5;
/// The words' share for a query of at most [`SHORT_QUERY_WORDS`] informative words: one or
/// two words mostly name what is wanted, and the words then count more. Chosen on the
/// tuning sets (0.7 and 0.8, for queries of up to one, two, three or four words), then
/// checked on the blind sets (the git history of docs/BENCHMARKS.md).
pub const SHORT_QUERY_WORDS_SHARE: f32 = 0.7;
/// The most informative words of a query that fuses with [`SHORT_QUERY_WORDS_SHARE`].
pub const SHORT_QUERY_WORDS: usize = 2;

/// The words' share of the fused score for a query (see [`WORDS_SHARE`]): by how many
/// informative words it holds, as [`informative_words`](crate::informative_words) reads it.
pub fn words_share(query: &str) -> f32 {
    if crate::informative_words(query).len() <= SHORT_QUERY_WORDS {
        SHORT_QUERY_WORDS_SHARE
    } else {
        WORDS_SHARE
    }
}

/// Returns what the model reads of `skill`: title, description, declared inputs (their
/// descriptions), tags, and the first [`BODY_CHARS`] characters of the body with fenced
/// code blocks and Markdown punctuation taken out; the parts joined by `". "`.
pub fn record_text(skill: &Skill) -> String {
    let mut parts: Vec<String> = vec![skill.title.clone(), skill.description.clone()];
    if let Some(inputs) = skill
        .frontmatter
        .get("inputs")
        .and_then(serde_json::Value::as_array)
    {
        for input in inputs {
            if let Some(description) = input.get("description").and_then(|d| d.as_str())
                && description != skill.description
            {
                parts.push(description.to_owned());
            }
        }
    }
    parts.push(skill.tags.join(", "));
    parts.push(body_text(&skill.body));
    parts
        .iter()
        .map(|part| part.trim())
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(". ")
}

/// The start of a body as the model reads it: fenced code blocks out, runs of Markdown
/// punctuation and of whitespace made one space, at most [`BODY_CHARS`] characters.
fn body_text(body: &str) -> String {
    let mut prose = String::with_capacity(body.len().min(4 * BODY_CHARS));
    let mut rest = body;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        let Some(close) = after.find("```") else {
            break;
        };
        prose.push_str(&rest[..open]);
        prose.push(' ');
        rest = &after[close + 3..];
    }
    prose.push_str(rest);
    let mut out = String::new();
    let mut chars = 0;
    let mut in_gap = false;
    for c in prose.chars() {
        if chars >= BODY_CHARS {
            break;
        }
        if c.is_whitespace() || matches!(c, '#' | '*' | '`' | '>' | '|' | '_' | '-') {
            if !in_gap {
                out.push(' ');
                chars += 1;
                in_gap = true;
            }
            continue;
        }
        in_gap = false;
        out.push(c);
        chars += 1;
    }
    out
}

/// One segment's vectors, in memory: document `d` has components
/// `data[d * dims..(d + 1) * dims]` times `scales[d]`; a scale of 0 marks a document
/// without a vector.
#[derive(Debug)]
pub(crate) struct SegmentVectors {
    dimensions: usize,
    scales: Vec<f32>,
    data: Vec<i8>,
}

impl SegmentVectors {
    /// Reads the vectors of `reader`'s documents that have `dimensions` components.
    fn read(reader: &SegmentReader, dimensions: usize) -> tantivy::Result<SegmentVectors> {
        let max_doc = reader.max_doc() as usize;
        let mut vectors = SegmentVectors {
            dimensions,
            scales: vec![0.0; max_doc],
            data: vec![0; max_doc * dimensions],
        };
        let Some(column) = reader.fast_fields().bytes(names::VECTOR)? else {
            return Ok(vectors);
        };
        let mut bytes = Vec::new();
        for doc in 0..reader.max_doc() {
            let Some(ord) = column.term_ords(doc).next() else {
                continue;
            };
            bytes.clear();
            if !column.ord_to_bytes(ord, &mut bytes)? {
                continue;
            }
            if let Some((scale, components)) = decode(&bytes, dimensions) {
                let at = doc as usize;
                vectors.scales[at] = scale;
                for (slot, component) in vectors.data[at * dimensions..(at + 1) * dimensions]
                    .iter_mut()
                    .zip(components)
                {
                    *slot = component;
                }
            }
        }
        Ok(vectors)
    }

    /// True when document `doc` has a vector.
    fn has(&self, doc: DocId) -> bool {
        self.scales
            .get(doc as usize)
            .is_some_and(|scale| *scale != 0.0)
    }

    /// The cosine of document `doc` with `query`, or `None` when the document has no
    /// vector. Integer arithmetic, which the compiler turns into vector instructions.
    fn similarity(&self, doc: DocId, query: &QueryVector) -> Option<f32> {
        if !self.has(doc) || query.components.len() != self.dimensions {
            return None;
        }
        let at = doc as usize;
        let components = &self.data[at * self.dimensions..(at + 1) * self.dimensions];
        Some(dot(components, &query.components) as f32 * self.scales[at] * query.scale)
    }
}

/// How many products [`dot`] sums side by side.
const LANES: usize = 32;

/// The dot product of a stored vector and a query's. The products are summed in [`LANES`]
/// running sums, one per position in a block of that many components, so that the
/// compiler keeps them in vector registers and multiplies whole blocks at once (a search
/// with the model takes 0.7–0.8 times as long as with one running sum; measured then, the
/// git history of docs/BENCHMARKS.md). No sum can overflow: each is part of a sum of
/// absolute products that [`QueryVector::new`] keeps within 32 bits.
fn dot(stored: &[i8], query: &[i16]) -> i32 {
    let mut sums = [0i32; LANES];
    let blocks = stored.chunks_exact(LANES).zip(query.chunks_exact(LANES));
    for (stored, query) in blocks {
        for ((sum, component), q) in sums.iter_mut().zip(stored).zip(query) {
            *sum += i32::from(i16::from(*component)) * i32::from(*q);
        }
    }
    let whole = stored.len() / LANES * LANES;
    let rest: i32 = stored[whole..]
        .iter()
        .zip(query.get(whole..).unwrap_or_default())
        .map(|(component, q)| i32::from(*component) * i32::from(*q))
        .sum();
    sums.iter().sum::<i32>() + rest
}

/// A query's vector in 16-bit integers, scaled so that a dot product with a stored vector
/// cannot overflow 32 bits.
#[derive(Debug)]
pub(crate) struct QueryVector {
    components: Vec<i16>,
    scale: f32,
}

impl QueryVector {
    pub(crate) fn new(vector: &[f32]) -> QueryVector {
        let largest = vector.iter().fold(0f32, |max, x| max.max(x.abs()));
        // |stored| ≤ 127, so |dot| ≤ 127 · top · dimensions.
        let top = (i32::MAX as f32 / (127.0 * vector.len().max(1) as f32)).min(f32::from(i16::MAX));
        let scale = if largest > 0.0 { largest / top } else { 1.0 };
        QueryVector {
            components: vector.iter().map(|x| (x / scale).round() as i16).collect(),
            scale,
        }
    }
}

/// How many query vectors a reader remembers by default
/// ([`SearchIndex::remembering_queries`](crate::SearchIndex::remembering_queries)).
pub const RECENT_QUERIES: usize = 256;

/// The vectors of the latest distinct queries, by their text: the next page of a search, or
/// a query many people type, is not embedded again (a query's transformer pass is 11 ms and
/// more, about half of a search with the model at 100,000 records; docs/BENCHMARKS.md). At
/// most `capacity` entries (a query is at most [`MAX_QUERY_CHARS`](crate::MAX_QUERY_CHARS)
/// characters); the least recently used goes first. Shared by the clones of a reader.
#[derive(Debug)]
pub(crate) struct RecentQueries {
    capacity: usize,
    entries: Mutex<RecentEntries>,
}

#[derive(Debug, Default)]
struct RecentEntries {
    /// Counts uses; an entry's stamp is the count at its last use.
    clock: u64,
    by_text: HashMap<String, (u64, Arc<QueryVector>)>,
}

impl RecentEntries {
    /// Counts a use and returns its stamp.
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }
}

impl RecentQueries {
    pub(crate) fn new(capacity: usize) -> RecentQueries {
        RecentQueries {
            capacity,
            entries: Mutex::default(),
        }
    }

    /// The vector of `text`: remembered, or embedded by `model` (outside the lock, so that
    /// other searches are not held up) and remembered.
    pub(crate) fn vector(&self, text: &str, model: &dyn Embed) -> Arc<QueryVector> {
        if self.capacity == 0 {
            return Arc::new(QueryVector::new(&model.embed(text)));
        }
        {
            let mut entries = self.lock();
            let clock = entries.tick();
            if let Some((stamp, vector)) = entries.by_text.get_mut(text) {
                *stamp = clock;
                return Arc::clone(vector);
            }
        }
        let vector = Arc::new(QueryVector::new(&model.embed(text)));
        let mut entries = self.lock();
        if entries.by_text.len() >= self.capacity && !entries.by_text.contains_key(text) {
            let oldest = entries
                .by_text
                .iter()
                .min_by_key(|(_, (stamp, _))| *stamp)
                .map(|(text, _)| text.clone());
            if let Some(oldest) = oldest {
                entries.by_text.remove(&oldest);
            }
        }
        let clock = entries.tick();
        entries
            .by_text
            .insert(text.to_owned(), (clock, Arc::clone(&vector)));
        vector
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, RecentEntries> {
        // The entries are whole after any panic elsewhere: a poisoned lock is still usable.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The vectors of the segments searched lately, read once per segment (segments never
/// change; a merge makes a new one).
#[derive(Debug, Default)]
pub(crate) struct VectorCache(SegmentCache<SegmentVectors>);

impl VectorCache {
    /// Returns the vectors of `reader`'s segment, reading them on first use.
    fn segment(
        &self,
        reader: &SegmentReader,
        dimensions: usize,
    ) -> tantivy::Result<Arc<SegmentVectors>> {
        self.0.get_or_make(
            reader.segment_id(),
            |vectors| vectors.dimensions == dimensions,
            || SegmentVectors::read(reader, dimensions),
        )
    }

    /// Forgets the segments not in `live` (after merges and deletes).
    pub(crate) fn retain(&self, live: &[SegmentId]) {
        self.0.retain(live);
    }
}

/// Matches every record that has a vector, scored by its cosine with the query's vector
/// (shifted to be positive: `1 + cosine`).
#[derive(Clone)]
pub(crate) struct NearestQuery {
    pub(crate) vector: Arc<QueryVector>,
    pub(crate) cache: Arc<VectorCache>,
}

impl std::fmt::Debug for NearestQuery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NearestQuery")
            .field("dimensions", &self.vector.components.len())
            .finish_non_exhaustive()
    }
}

impl Query for NearestQuery {
    fn weight(&self, _: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        Ok(Box::new(self.clone()))
    }
}

impl Weight for NearestQuery {
    fn scorer(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        let vectors = self.cache.segment(reader, self.vector.components.len())?;
        let mut scorer = NearestScorer {
            vectors,
            query: Arc::clone(&self.vector),
            boost,
            doc: 0,
        };
        scorer.settle();
        Ok(Box::new(scorer))
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        let vectors = self.cache.segment(reader, self.vector.components.len())?;
        match vectors.similarity(doc, &self.vector) {
            Some(similarity) => Ok(Explanation::new("1 + cosine", 1.0 + similarity)),
            None => Err(tantivy::TantivyError::InvalidArgument(format!(
                "document {doc} has no vector"
            ))),
        }
    }
}

/// Walks the documents of a segment that have a vector.
struct NearestScorer {
    vectors: Arc<SegmentVectors>,
    query: Arc<QueryVector>,
    boost: Score,
    doc: DocId,
}

impl NearestScorer {
    /// Moves to the first document from `self.doc` on that has a vector.
    fn settle(&mut self) {
        let max_doc = self.vectors.scales.len() as DocId;
        while self.doc < max_doc {
            if self.vectors.has(self.doc) {
                return;
            }
            self.doc += 1;
        }
        self.doc = TERMINATED;
    }
}

impl DocSet for NearestScorer {
    fn advance(&mut self) -> DocId {
        if self.doc != TERMINATED {
            self.doc += 1;
            self.settle();
        }
        self.doc
    }

    fn seek(&mut self, target: DocId) -> DocId {
        if self.doc != TERMINATED && target > self.doc {
            self.doc = target;
            self.settle();
        }
        self.doc
    }

    fn doc(&self) -> DocId {
        self.doc
    }

    fn size_hint(&self) -> u32 {
        self.vectors.scales.len() as u32
    }
}

impl Scorer for NearestScorer {
    fn score(&mut self) -> Score {
        let similarity = self
            .vectors
            .similarity(self.doc, &self.query)
            .unwrap_or(-1.0);
        (1.0 + similarity) * self.boost
    }
}

/// Fuses two rankings, each given best first with its scores: a record's fused score is
/// `words_share` (see [`words_share`]) times its word score divided by the best word score,
/// plus the rest times its model score scaled by min-max over the model's ranking (the best
/// 1, the last 0). A record missing from a ranking has 0 there, so fused scores lie in 0–1,
/// and 1 is first in both. Scores rather than ranks: a record far ahead in one ranking keeps its lead, where
/// reciprocal rank fusion would rank it as if just ahead (measured: this ranks better on
/// every tuning set; the git history of docs/BENCHMARKS.md). At most [`WORDS_DEPTH`] and
/// [`SEMANTIC_DEPTH`] of each ranking count.
pub(crate) fn fuse<K: std::hash::Hash + Eq + Clone>(
    words: &[(K, f32)],
    nearest: &[(K, f32)],
    words_share: f32,
) -> HashMap<K, f32> {
    let words = &words[..words.len().min(WORDS_DEPTH)];
    let nearest = &nearest[..nearest.len().min(SEMANTIC_DEPTH)];
    let mut scores: HashMap<K, f32> = HashMap::new();
    let best_words = words.iter().map(|(_, score)| *score).fold(0.0, f32::max);
    if best_words > 0.0 {
        for (key, score) in words {
            *scores.entry(key.clone()).or_default() +=
                words_share * (score / best_words).clamp(0.0, 1.0);
        }
    }
    let (low, high) = nearest.iter().fold(
        (f32::INFINITY, f32::NEG_INFINITY),
        |(low, high), (_, score)| (low.min(*score), high.max(*score)),
    );
    for (key, score) in nearest {
        let scaled = if high > low {
            (score - low) / (high - low)
        } else {
            1.0
        };
        *scores.entry(key.clone()).or_default() += (1.0 - words_share) * scaled;
    }
    scores
}

#[cfg(test)]
pub(crate) mod tests {
    use formats::Access;

    use super::*;
    use crate::document::tests::skill;
    use crate::{Caller, Error, Filters, Index, IndexConfig, SearchIndex, SearchRequest};

    /// A stand-in model: one dimension per concept, a text's vector counts the concept words
    /// it holds (so "sign in with the work account" and "SSO over OIDC" are near, with no
    /// word in common).
    pub(crate) struct Concepts(pub(crate) &'static str);

    const CONCEPTS: [&[&str]; 4] = [
        &["sso", "oidc", "login", "sign", "account"],
        &["invoice", "receipt", "bill"],
        &["docker", "container", "image"],
        &["weather", "rain", "forecast"],
    ];

    impl Embed for Concepts {
        fn embed(&self, text: &str) -> Vec<f32> {
            let text = text.to_lowercase();
            let mut vector: Vec<f32> = CONCEPTS
                .iter()
                .map(|words| words.iter().filter(|word| text.contains(*word)).count() as f32)
                .collect();
            // Every text is a little of everything, so that none is the zero vector.
            vector.push(0.1);
            let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
            vector.iter().map(|x| x / norm).collect()
        }

        fn dimensions(&self) -> usize {
            CONCEPTS.len() + 1
        }

        fn model_id(&self) -> String {
            self.0.to_owned()
        }
    }

    fn records() -> Vec<formats::Skill> {
        let sso = skill(
            "a.test",
            "oidc-setup",
            "OIDC Setup",
            "Configures SSO over OIDC for a web application.",
        );
        let mut private = skill(
            "b.test",
            "account-sso-private",
            "Internal SSO",
            "SSO login for the internal account system.",
        );
        private.access = Access::Private;
        let mut api = skill(
            "c.test",
            "login-api",
            "Login API",
            "An API that signs users in to their account.",
        );
        api.capability_type = "api".to_owned();
        vec![
            sso,
            private,
            api,
            skill(
                "d.test",
                "invoice-extract",
                "Invoice Extract",
                "Reads totals from bills.",
            ),
            skill(
                "e.test",
                "forecast",
                "Forecast",
                "Tells whether it will rain.",
            ),
        ]
    }

    fn index(model: Option<Arc<dyn Embed>>) -> Index {
        let mut index = Index::create_in_ram(IndexConfig {
            model,
            ..IndexConfig::default()
        })
        .unwrap();
        for record in records() {
            index.writer.upsert(&record).unwrap();
        }
        index.writer.commit(1).unwrap();
        index
    }

    fn ids(search: &SearchIndex, request: &SearchRequest) -> (Vec<String>, u64) {
        let results = search.search(request).unwrap();
        let ids = results.hits.iter().map(|hit| hit.id.to_string()).collect();
        (ids, results.total)
    }

    #[test]
    fn the_model_finds_what_the_words_miss_under_the_same_filters_and_access() {
        // "Work" and "colleagues" are in no record: the words find nothing.
        let query = "let colleagues sign in with their work account";
        let words = index(None);
        let (found, total) = ids(
            &words.search,
            &SearchRequest::new("colleagues work", Caller::Anonymous),
        );
        assert!(found.is_empty() && total == 0, "{found:?}");

        let semantic = index(Some(Arc::new(Concepts("concepts 1"))));
        let results = semantic
            .search
            .search(&SearchRequest::new(query, Caller::Anonymous))
            .unwrap();
        let found: Vec<String> = results.hits.iter().map(|hit| hit.id.to_string()).collect();
        // The login skills first (nearest in meaning), never the private one.
        assert_eq!(found[..2].len(), 2);
        assert!(
            found[..2].contains(&"a.test/oidc-setup".to_owned()),
            "{found:?}"
        );
        assert!(
            found[..2].contains(&"c.test/login-api".to_owned()),
            "{found:?}"
        );
        assert!(
            !found.iter().any(|id| id.starts_with("b.test")),
            "{found:?}"
        );
        // The total and the facets count what the model found, as the caller may see it.
        assert_eq!(results.total, found.len() as u64);
        assert!(
            !results
                .facets
                .access
                .0
                .iter()
                .any(|(access, _)| access == "private")
        );
        // Scores stay sorted, below 1 for text matches (no name tier here).
        assert!(results.hits.windows(2).all(|w| w[0].score >= w[1].score));
        assert!(results.hits.iter().all(|hit| hit.score < 1.0));

        // The operator sees the private record too.
        let (found, _) = ids(
            &semantic.search,
            &SearchRequest::new(query, Caller::Authenticated),
        );
        assert!(
            found.contains(&"b.test/account-sso-private".to_owned()),
            "{found:?}"
        );

        // Filters hold for what the model finds.
        let mut request = SearchRequest::new(query, Caller::Anonymous);
        request.filters = Filters {
            capability_type: vec!["api".to_owned()],
            ..Filters::default()
        };
        let (found, total) = ids(&semantic.search, &request);
        assert_eq!(found, ["c.test/login-api"]);
        assert_eq!(total, 1);
    }

    #[test]
    fn what_only_the_model_finds_is_ranked_when_the_words_match_hundreds() {
        let mut index = index(Some(Arc::new(Concepts("concepts 1"))));
        for n in 0..250 {
            let name = format!("work-item-{n}");
            let record = skill("w.test", &name, &format!("Work item {n}"), "Tracks work.");
            index.writer.upsert(&record).unwrap();
        }
        index.writer.commit(2).unwrap();
        let mut request = SearchRequest::new("sign in with the work account", Caller::Anonymous);
        request.limit = 100;
        let results = index.search.search(&request).unwrap();
        let found: Vec<String> = results.hits.iter().map(|hit| hit.id.to_string()).collect();
        // "Work" matches 250 records, and "sign"/"account" the login API; the OIDC skill
        // matches no word, yet the model ranks it nearest, so the fusion lifts it into the
        // first hundred, and the total counts it.
        assert!(found.contains(&"a.test/oidc-setup".to_owned()), "{found:?}");
        assert!(found.contains(&"c.test/login-api".to_owned()), "{found:?}");
        assert!(results.total > 251, "{}", results.total);
    }

    #[test]
    fn a_query_of_quoted_phrases_still_asks_for_them() {
        let semantic = index(Some(Arc::new(Concepts("concepts 1"))));
        let (found, total) = ids(
            &semantic.search,
            &SearchRequest::new("\"web application\"", Caller::Anonymous),
        );
        assert_eq!(found, ["a.test/oidc-setup"]);
        assert_eq!(total, 1);
        // Beside other words, the phrase ranks and the model adds what it finds.
        let (found, _) = ids(
            &semantic.search,
            &SearchRequest::new("sign in \"web application\"", Caller::Anonymous),
        );
        assert!(found.contains(&"c.test/login-api".to_owned()), "{found:?}");
    }

    #[test]
    fn an_exact_name_stays_first_and_pages_do_not_overlap() {
        let semantic = index(Some(Arc::new(Concepts("concepts 1"))));
        let (found, _) = ids(
            &semantic.search,
            &SearchRequest::new("forecast", Caller::Anonymous),
        );
        assert_eq!(found[0], "e.test/forecast");
        let query = "sign in to my account";
        let (all, total) = ids(
            &semantic.search,
            &SearchRequest::new(query, Caller::Anonymous),
        );
        let mut pages = Vec::new();
        for offset in 0..all.len() {
            let mut request = SearchRequest::new(query, Caller::Anonymous);
            request.offset = offset;
            request.limit = 1;
            let (page, page_total) = ids(&semantic.search, &request);
            assert_eq!(page_total, total);
            pages.extend(page);
        }
        assert_eq!(pages, all);
    }

    /// [`Concepts`], noting every text it embeds.
    struct Counting {
        model: Concepts,
        texts: Mutex<Vec<String>>,
    }

    impl Counting {
        fn new() -> Arc<Counting> {
            Arc::new(Counting {
                model: Concepts("concepts 1"),
                texts: Mutex::default(),
            })
        }

        fn taken(&self) -> Vec<String> {
            std::mem::take(&mut *self.texts.lock().unwrap())
        }
    }

    impl Embed for Counting {
        fn embed(&self, text: &str) -> Vec<f32> {
            self.texts.lock().unwrap().push(text.to_owned());
            self.model.embed(text)
        }

        fn dimensions(&self) -> usize {
            self.model.dimensions()
        }

        fn model_id(&self) -> String {
            self.model.model_id()
        }
    }

    #[test]
    fn the_model_reads_a_web_address_as_the_words_do() {
        let counting = Counting::new();
        let index = index(Some(Arc::clone(&counting) as Arc<dyn Embed>));
        counting.taken();
        let request = SearchRequest::new(
            "sign in fails at https://www.example.com/account?next=1",
            Caller::Anonymous,
        );
        index.search.search(&request).unwrap();
        let taken = counting.taken();
        assert_eq!(taken.len(), 1, "{taken:?}");
        let words: Vec<&str> = taken[0].split_whitespace().collect();
        assert_eq!(words, ["sign", "in", "fails", "at", "/account"]);
    }

    #[test]
    fn the_next_page_and_a_repeated_query_are_not_embedded_again() {
        let counting = Counting::new();
        let index = index(Some(Arc::clone(&counting) as Arc<dyn Embed>));
        assert_eq!(
            counting.taken().len(),
            records().len(),
            "one pass per record"
        );
        let query = "sign in to my account";
        let page = |search: &SearchIndex, offset: usize, caller: Caller| {
            let mut request = SearchRequest::new(query, caller);
            request.offset = offset;
            request.limit = 2;
            ids(search, &request)
        };
        let first = page(&index.search, 0, Caller::Anonymous);
        let second = page(&index.search, 2, Caller::Anonymous);
        let signed_in = page(&index.search, 0, Caller::Authenticated);
        assert_eq!(
            counting.taken(),
            [query],
            "pages and callers share the vector"
        );

        // A reader that remembers nothing answers the same, embedding every time.
        let forgetful = index.search.clone().remembering_queries(0);
        assert_eq!(page(&forgetful, 0, Caller::Anonymous), first);
        assert_eq!(page(&forgetful, 2, Caller::Anonymous), second);
        assert_eq!(page(&forgetful, 0, Caller::Authenticated), signed_in);
        assert_eq!(counting.taken(), [query, query, query]);

        // Two entries: the least recently used goes first.
        let two = index.search.remembering_queries(2);
        for text in [
            "invoice", "docker", "invoice", "weather", "invoice", "docker",
        ] {
            two.search(&SearchRequest::new(text, Caller::Anonymous))
                .unwrap();
        }
        assert_eq!(counting.taken(), ["invoice", "docker", "weather", "docker"]);
    }

    #[test]
    fn an_index_is_searched_only_with_the_model_that_wrote_it() {
        let words = index(None);
        let error = words
            .search
            .with_model(Arc::new(Concepts("concepts 1")))
            .unwrap_err();
        assert!(
            matches!(&error, Error::ModelMismatch { found: None, expected }
                if *expected == format!("concepts 1; {BODY_CHARS} body characters")),
            "{error}"
        );
        let semantic = index(Some(Arc::new(Concepts("concepts 1"))));
        assert_eq!(
            semantic.search.written_with().unwrap(),
            Some(format!("concepts 1; {BODY_CHARS} body characters"))
        );
        assert!(
            semantic
                .search
                .clone()
                .with_model(Arc::new(Concepts("concepts 1")))
                .is_ok()
        );
        let error = semantic
            .search
            .with_model(Arc::new(Concepts("concepts 2")))
            .unwrap_err();
        assert!(error.to_string().contains("concepts 1"), "{error}");
    }

    #[test]
    fn switching_the_model_rebuilds_the_index() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index");
        let open = |model: Option<&'static str>| {
            Index::open_or_create(
                &path,
                IndexConfig {
                    model: model.map(|id| Arc::new(Concepts(id)) as Arc<dyn Embed>),
                    ..IndexConfig::default()
                },
            )
            .unwrap()
        };
        {
            let mut index = open(Some("concepts 1"));
            for record in records() {
                index.writer.upsert(&record).unwrap();
            }
            index.writer.commit(9).unwrap();
        }
        // The same model: kept.
        assert_eq!(open(Some("concepts 1")).writer.committed_seq(), 9);
        // Another model: rebuilt from the store (empty, from change 0).
        {
            let mut other = open(Some("concepts 2"));
            assert_eq!(
                (other.writer.committed_seq(), other.search.num_docs()),
                (0, 0)
            );
            other.writer.upsert(&records()[0]).unwrap();
            other.writer.commit(3).unwrap();
        }
        // No model: rebuilt too, so that no record lacks a vector when a model comes back.
        {
            let none = open(None);
            assert_eq!(
                (none.writer.committed_seq(), none.search.num_docs()),
                (0, 0)
            );
        }
        // The same model, but vectors that read another share of the body (an earlier
        // release named only the model): rebuilt, and refused by a reader until then.
        {
            let mut index = open(Some("concepts 1"));
            index.writer.upsert(&records()[0]).unwrap();
            index.writer.commit(4).unwrap();
        }
        crate::writer::overwrite_payload(
            &path,
            &format!(
                r#"{{"schema_version":{},"seq":4,"model":"concepts 1"}}"#,
                crate::schema::SCHEMA_VERSION
            ),
        );
        let error = crate::SearchIndex::open(&path)
            .unwrap()
            .with_model(Arc::new(Concepts("concepts 1")))
            .unwrap_err();
        assert!(
            matches!(&error, Error::ModelMismatch { found: Some(found), .. } if found == "concepts 1"),
            "{error}"
        );
        let reopened = open(Some("concepts 1"));
        assert_eq!(
            (reopened.writer.committed_seq(), reopened.search.num_docs()),
            (0, 0)
        );
    }

    proptest::proptest! {
        // Blocks of `LANES` and what is left after them: the same as one running sum.
        #[test]
        fn the_dot_product_in_lanes_is_the_plain_sum(
            pairs in proptest::collection::vec((proptest::num::i8::ANY, proptest::num::i16::ANY), 0..400)
        ) {
            let (stored, query): (Vec<i8>, Vec<i16>) = pairs.into_iter().unzip();
            let plain: i64 = stored
                .iter()
                .zip(&query)
                .map(|(a, b)| i64::from(*a) * i64::from(*b))
                .sum();
            proptest::prop_assert_eq!(i64::from(dot(&stored, &query)), plain);
        }
    }

    #[test]
    fn integer_similarity_is_the_cosine_to_within_the_rounding() {
        let unit = |seed: f32| {
            let v: Vec<f32> = (0..384).map(|i| ((i as f32) * seed).sin()).collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.iter().map(|x| x / norm).collect::<Vec<f32>>()
        };
        let (doc, query) = (unit(0.37), unit(0.41));
        let exact: f32 = doc.iter().zip(&query).map(|(a, b)| a * b).sum();
        let stored = encode(&doc, Source::of("doc"));
        let (scale, components) = decode(&stored, 384).unwrap();
        let vectors = SegmentVectors {
            dimensions: 384,
            scales: vec![0.0, scale],
            data: std::iter::repeat_n(0, 384).chain(components).collect(),
        };
        let query = QueryVector::new(&query);
        let approximate = vectors.similarity(1, &query).unwrap();
        assert!(
            (approximate - exact).abs() < 0.01,
            "{approximate} vs {exact}"
        );
        // Document 0 has no vector; a vector of other dimensions is no match.
        assert_eq!(vectors.similarity(0, &query), None);
        assert_eq!(vectors.similarity(1, &QueryVector::new(&[1.0; 3])), None);
        // The extremes cannot overflow.
        let ones = QueryVector::new(&[1.0; 384]);
        let full = SegmentVectors {
            dimensions: 384,
            scales: vec![1.0],
            data: vec![127; 384],
        };
        assert!(full.similarity(0, &ones).unwrap() > 0.0);
        let negative = SegmentVectors {
            dimensions: 384,
            scales: vec![1.0],
            data: vec![-127; 384],
        };
        assert!(negative.similarity(0, &ones).unwrap() < 0.0);
    }

    #[test]
    fn the_body_is_read_without_code_and_markdown_up_to_its_limit() {
        let body =
            "# Title\n\nUse `tool` like **this**:\n\n```sh\nrm -rf /\n```\n\n| a | b |\n> quoted";
        assert_eq!(body_text(body), " Title Use tool like this : a b quoted");
        let unclosed = "before ```never closed";
        assert_eq!(body_text(unclosed), "before never closed");
        assert_eq!(body_text("a - b\n\n- c"), "a b c");
        let long = "word ".repeat(1_000);
        assert_eq!(body_text(&long).chars().count(), BODY_CHARS);
        let accents = "é".repeat(2 * BODY_CHARS);
        assert_eq!(body_text(&accents).chars().count(), BODY_CHARS);
    }

    #[test]
    fn fusion_adds_the_two_rankings_scaled_scores() {
        let words = [("a", 8.0), ("b", 4.0), ("c", 2.0)];
        let nearest = [("c", 1.9), ("d", 1.5), ("e", 1.1)];
        let fused = fuse(&words, &nearest, WORDS_SHARE);
        let close = |key: &str, expected: f32| {
            assert!(
                (fused[key] - expected).abs() < 1e-6,
                "{key}: {} against {expected}",
                fused[key]
            );
        };
        close("a", 0.5);
        close("b", 0.25);
        close("c", 0.5 * 0.25 + 0.5);
        close("d", 0.5 * 0.5);
        close("e", 0.0);
        assert!(fused.values().all(|score| (0.0..=1.0).contains(score)));
        // First in both is 1; one nearest record alone is the model's best.
        let best = fuse(&[("x", 3.0)], &[("x", 0.2)], WORDS_SHARE);
        assert!((best["x"] - 1.0).abs() < 1e-6);
        // Either ranking may be empty.
        assert_eq!(fuse::<&str>(&[], &[], WORDS_SHARE).len(), 0);
        assert!((fuse(&[], &[("y", 1.0), ("z", 0.5)], WORDS_SHARE)["y"] - 0.5).abs() < 1e-6);
        assert!((fuse(&[("y", 2.0)], &[], WORDS_SHARE)["y"] - 0.5).abs() < 1e-6);
        // Another share weighs the two rankings so.
        let short = fuse(&words, &nearest, 0.7);
        assert!((short["a"] - 0.7).abs() < 1e-6);
        assert!((short["d"] - 0.3 * 0.5).abs() < 1e-6);
    }

    #[test]
    fn a_query_of_one_or_two_informative_words_leans_on_the_words() {
        for query in ["pdf", "merge pdf", "how do I merge a pdf?", "\"pdf\""] {
            assert_eq!(words_share(query), SHORT_QUERY_WORDS_SHARE, "{query}");
        }
        for query in ["merge pdf files", "turn this scanned contract into text"] {
            assert_eq!(words_share(query), WORDS_SHARE, "{query}");
        }
    }

    #[test]
    fn fusion_reads_no_deeper_than_its_depths() {
        let words: Vec<(usize, f32)> = (0..WORDS_DEPTH + 5)
            .map(|rank| (rank, 1000.0 - rank as f32))
            .collect();
        let nearest: Vec<(usize, f32)> = (0..SEMANTIC_DEPTH + 5)
            .map(|rank| (10_000 + rank, 2.0 - rank as f32 / 1000.0))
            .collect();
        let fused = fuse(&words, &nearest, WORDS_SHARE);
        assert_eq!(fused.len(), WORDS_DEPTH + SEMANTIC_DEPTH);
        assert!(!fused.contains_key(&WORDS_DEPTH));
        assert!(!fused.contains_key(&(10_000 + SEMANTIC_DEPTH)));
    }
}
