//! One pass over the documents a query matches: the top hits by relevance tier and score,
//! the total, and every facet's counts.
//!
//! The query the collector runs under holds the text clauses and the access policy; the
//! user's filters are applied here, per document, from fast fields. That way one pass gives
//! both the hits (documents that pass every filter) and each facet's counts (documents that
//! pass every filter *except that facet's own*, the usual drill-down semantics), and all of
//! them only ever see documents the caller may see. The access policy is checked a second
//! time here, so a private record cannot leak even if a query were built wrongly. The
//! per-document values come from the segment's decoded columns (`ordinals`), the value
//! names from the columns' dictionaries.
//!
//! Copies of one skill (`clusters`) are folded here too: a document with copies does not
//! enter the top or the counts on its own. Its segment hands on, per cluster, the best rank
//! and the most canonical member among the copies that passed, and, per facet, which
//! clusters have a copy with each value; the merge makes one hit per cluster (ranked by its
//! best copy, showing its most canonical one) and counts each cluster once in the total and
//! once per facet value, so that a value's count is the total that choosing it gives.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::Arc;

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::StrColumn;
use tantivy::schema::IndexRecordOption;
use tantivy::{
    BitSet, DocAddress, DocId, DocSet, Score, SegmentOrdinal, SegmentReader, TERMINATED,
};

use crate::clusters::{Clusters, NO_CLUSTER, Slot};
use crate::ordinals::{OrdsCache, SegmentOrds};
use crate::schema::names;

/// A field that can be filtered on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Dim {
    CapabilityType,
    Access,
    Domain,
    Format,
    Tag,
    License,
    Verdict,
    Risk,
}

/// How many dimensions there are (each has facet counts).
pub(crate) const DIMS: usize = 8;

impl Dim {
    /// The dimensions that have facet counts, in output order.
    pub(crate) const FACETS: [Dim; DIMS] = [
        Dim::CapabilityType,
        Dim::Access,
        Dim::Domain,
        Dim::Format,
        Dim::Tag,
        Dim::Verdict,
        Dim::License,
        Dim::Risk,
    ];

    /// Every dimension, in the order of [`Dim::index`].
    pub(crate) const ALL: [Dim; DIMS] = [
        Dim::CapabilityType,
        Dim::Access,
        Dim::Domain,
        Dim::Format,
        Dim::Tag,
        Dim::License,
        Dim::Verdict,
        Dim::Risk,
    ];

    /// Returns the dimension's position in [`Dim::ALL`].
    fn index(self) -> usize {
        self as usize
    }

    fn field_name(self) -> &'static str {
        match self {
            Dim::CapabilityType => names::CAPABILITY_TYPE,
            Dim::Access => names::ACCESS,
            Dim::Domain => names::DOMAIN,
            Dim::Format => names::FORMAT,
            Dim::Tag => names::TAG,
            Dim::License => names::LICENSE,
            Dim::Verdict => names::VERDICT,
            Dim::Risk => names::RISK,
        }
    }

    fn facet_index(self) -> Option<usize> {
        Dim::FACETS.iter().position(|dim| *dim == self)
    }
}

/// The relevance tier: which beats any score.
pub(crate) type Tier = u8;
/// The name or title equals the query.
pub(crate) const TIER_EXACT: Tier = 2;
/// The name or title starts with the query.
pub(crate) const TIER_PREFIX: Tier = 1;
/// Text relevance only.
pub(crate) const TIER_TEXT: Tier = 0;

/// What to collect.
#[derive(Debug, Clone)]
pub(crate) struct SearchCollector {
    /// Filters with at least one value: OR within a dimension, AND across.
    pub(crate) filters: Vec<(Dim, Vec<String>)>,
    /// True when private records must be skipped.
    pub(crate) anonymous: bool,
    /// The query's name key; empty when there is no text (no tiers then).
    pub(crate) key: String,
    /// How many of the best hits to keep (offset + limit).
    pub(crate) top_k: usize,
    /// False for browsing, where every score is the same and the order is by id.
    pub(crate) scored: bool,
    /// How many values each facet keeps; 0 counts no facet at all.
    pub(crate) max_facet_values: usize,
    /// The decoded filter and facet columns of the index's segments.
    pub(crate) ordinals: Arc<OrdsCache>,
    /// The clusters of copies of the snapshot searched, when copies are folded.
    pub(crate) clusters: Option<Arc<Clusters>>,
}

/// One of the best hits.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Candidate {
    pub(crate) tier: Tier,
    pub(crate) score: Score,
    pub(crate) id: String,
    pub(crate) address: DocAddress,
}

/// Best first: higher tier, higher score, then the smaller id.
fn rank(a: &Candidate, b: &Candidate) -> Ordering {
    b.tier
        .cmp(&a.tier)
        .then_with(|| b.score.total_cmp(&a.score))
        .then_with(|| a.id.cmp(&b.id))
}

/// What the collector found.
#[derive(Debug, Clone, Default)]
pub(crate) struct Collected {
    /// Documents that pass every filter (a cluster of copies counting once).
    pub(crate) total: u64,
    /// The best `top_k` of them, best first.
    pub(crate) top: Vec<Candidate>,
    /// Per facet dimension (in [`Dim::FACETS`] order): the most frequent values (at most
    /// `max_facet_values`), most frequent first, then by value.
    pub(crate) facets: [Vec<(String, u64)>; DIMS],
}

/// One facet's counts in one segment, sorted by value (the dictionary's order). The values
/// share one buffer, so that a facet with thousands of values (domains) costs no allocation
/// per value.
#[derive(Debug, Clone, Default)]
pub(crate) struct SegmentFacet {
    bytes: Vec<u8>,
    /// (end of the value in `bytes`, count), in value order.
    entries: Vec<(usize, u64)>,
}

impl SegmentFacet {
    fn value(&self, index: usize) -> &[u8] {
        let start = if index == 0 {
            0
        } else {
            self.entries[index - 1].0
        };
        &self.bytes[start..self.entries[index].0]
    }
}

/// What one segment found.
#[derive(Debug, Clone, Default)]
pub(crate) struct SegmentCollected {
    /// Documents without copies that pass every filter.
    total: u64,
    top: Vec<Candidate>,
    facets: [SegmentFacet; DIMS],
    /// Per cluster with a copy here that passed: its best rank and most canonical copy here.
    clusters: Vec<ClusterHit>,
    /// Per facet: which clusters have a copy here with which value (each pair once).
    cluster_facets: [ClusterFacet; DIMS],
}

/// The copies of one cluster that passed in one segment.
#[derive(Debug, Clone, Copy)]
struct ClusterHit {
    cluster: u32,
    /// The best tier and score among them.
    tier: Tier,
    score: Score,
    /// The most canonical of them: its place among the cluster's members.
    position: u32,
}

/// One facet's values in one segment and the clusters with a copy that has each: the
/// values share one buffer, as in [`SegmentFacet`].
#[derive(Debug, Clone, Default)]
struct ClusterFacet {
    bytes: Vec<u8>,
    /// (end of the value in `bytes`, cluster), in value order.
    entries: Vec<(usize, u32)>,
}

/// A document with copies, as the segment collects it: counted at harvest with the others.
#[derive(Debug, Clone, Copy)]
struct Copy {
    slot: Slot,
    doc: DocId,
    score: Score,
    /// The one filter (dimension index) it fails, if any: it then counts for that facet only.
    failed: Option<usize>,
}

/// Merges the segments' sorted counts of one facet and keeps the `keep` most frequent.
fn merge_facet(segments: &[&SegmentFacet], keep: usize) -> Vec<(String, u64)> {
    // A k-way merge of sorted lists: (value, segment, position), smallest value first.
    let mut heap: BinaryHeap<std::cmp::Reverse<(&[u8], usize, usize)>> = segments
        .iter()
        .enumerate()
        .filter(|(_, facet)| !facet.entries.is_empty())
        .map(|(segment, facet)| std::cmp::Reverse((facet.value(0), segment, 0)))
        .collect();
    let mut merged: Vec<(&[u8], u64)> = Vec::new();
    while let Some(std::cmp::Reverse((value, segment, position))) = heap.pop() {
        let facet = segments[segment];
        let count = facet.entries[position].1;
        match merged.last_mut() {
            Some((last, total)) if *last == value => *total += count,
            _ => merged.push((value, count)),
        }
        if position + 1 < facet.entries.len() {
            heap.push(std::cmp::Reverse((
                facet.value(position + 1),
                segment,
                position + 1,
            )));
        }
    }
    let order = |a: &(&[u8], u64), b: &(&[u8], u64)| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0));
    if merged.len() > keep && keep > 0 {
        merged.select_nth_unstable_by(keep - 1, order);
    }
    merged.truncate(keep);
    merged.sort_by(order);
    merged
        .into_iter()
        .map(|(value, count)| (String::from_utf8_lossy(value).into_owned(), count))
        .collect()
}

/// Makes one hit of each cluster that passed in some segment: ranked by its best copy,
/// showing its most canonical one.
fn merge_clusters(clusters: &Clusters, fruits: &[SegmentCollected]) -> Vec<Candidate> {
    let mut hits: Vec<ClusterHit> = fruits
        .iter()
        .flat_map(|fruit| fruit.clusters.iter().copied())
        .collect();
    hits.sort_unstable_by_key(|hit| hit.cluster);
    let mut candidates = Vec::new();
    for same in hits.chunk_by(|a, b| a.cluster == b.cluster) {
        let mut best = same[0];
        for hit in &same[1..] {
            if hit
                .tier
                .cmp(&best.tier)
                .then_with(|| hit.score.total_cmp(&best.score))
                .is_gt()
            {
                best.tier = hit.tier;
                best.score = hit.score;
            }
            best.position = best.position.min(hit.position);
        }
        let Some(shown) = clusters.members(best.cluster).get(best.position as usize) else {
            continue;
        };
        candidates.push(Candidate {
            tier: best.tier,
            score: best.score,
            id: shown.id.clone(),
            address: shown.address,
        });
    }
    candidates
}

/// Counts, per value of one facet, the clusters that have a copy with it in some segment:
/// each cluster once, as one facet list sorted by value.
fn count_clusters<'a>(segments: impl Iterator<Item = &'a ClusterFacet>) -> SegmentFacet {
    let mut pairs: Vec<(&[u8], u32)> = Vec::new();
    for facet in segments {
        // Entries of one value share its end; a value starts where the one before it ended.
        let (mut start, mut end) = (0, 0);
        for (value_end, cluster) in &facet.entries {
            if *value_end != end {
                start = end;
                end = *value_end;
            }
            if let Some(value) = facet.bytes.get(start..end) {
                pairs.push((value, *cluster));
            }
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    let mut counted = SegmentFacet::default();
    for same in pairs.chunk_by(|a, b| a.0 == b.0) {
        counted.bytes.extend_from_slice(same[0].0);
        counted
            .entries
            .push((counted.bytes.len(), same.len() as u64));
    }
    counted
}

/// A heap entry within one segment, where id ordinals order like ids.
#[derive(Debug, Clone, Copy)]
struct Entry {
    tier: Tier,
    score: Score,
    id_ord: u64,
    doc: DocId,
}

impl Entry {
    /// Greater is better.
    fn cmp_rank(&self, other: &Entry) -> Ordering {
        self.tier
            .cmp(&other.tier)
            .then_with(|| self.score.total_cmp(&other.score))
            .then_with(|| other.id_ord.cmp(&self.id_ord))
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Entry) -> bool {
        self.cmp_rank(other) == Ordering::Equal
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Entry) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    /// Reversed, so that the `BinaryHeap` keeps the worst entry on top.
    fn cmp(&self, other: &Entry) -> Ordering {
        other.cmp_rank(self)
    }
}

/// The fast-field column of one dimension in one segment: its dictionary names the values.
struct DimColumn {
    column: Option<StrColumn>,
    /// Tags: several values per document. The other dimensions have at most one.
    multi: bool,
}

/// The documents whose name or title key equals the query key, or starts with it, in one
/// segment: read from the key fields' term dictionaries, so that ranking a document costs
/// two bit lookups.
struct SegmentTiers {
    exact: BitSet,
    prefix: BitSet,
}

impl SegmentTiers {
    fn new(reader: &SegmentReader, key: &str) -> tantivy::Result<Option<SegmentTiers>> {
        if key.is_empty() {
            return Ok(None);
        }
        let max_doc = reader.max_doc();
        let mut tiers = SegmentTiers {
            exact: BitSet::with_max_value(max_doc),
            prefix: BitSet::with_max_value(max_doc),
        };
        // 0xFF never occurs in UTF-8, so every key that starts with `key` sorts below it.
        let mut upper = key.as_bytes().to_vec();
        upper.push(0xFF);
        for name in [names::NAME_KEY, names::TITLE_KEY] {
            let field = reader.schema().get_field(name)?;
            let inverted = reader.inverted_index(field)?;
            let mut terms = inverted
                .terms()
                .range()
                .ge(key.as_bytes())
                .lt(&upper)
                .into_stream()?;
            while terms.advance() {
                let set = if terms.key() == key.as_bytes() {
                    &mut tiers.exact
                } else {
                    &mut tiers.prefix
                };
                let mut postings = inverted
                    .read_postings_from_terminfo(terms.value(), IndexRecordOption::Basic)?;
                let mut doc = postings.doc();
                while doc != TERMINATED {
                    set.insert(doc);
                    doc = postings.advance();
                }
            }
        }
        Ok(Some(tiers))
    }

    fn tier(&self, doc: DocId) -> Tier {
        if self.exact.contains(doc) {
            TIER_EXACT
        } else if self.prefix.contains(doc) {
            TIER_PREFIX
        } else {
            TIER_TEXT
        }
    }
}

/// The collector of one segment.
pub(crate) struct SearchSegmentCollector {
    segment: SegmentOrdinal,
    /// Every dimension's values per document, in [`Dim::ALL`] order.
    ords: Arc<SegmentOrds>,
    /// The filters: dimension index and the wanted values' ordinals in this segment, sorted.
    filters: Vec<(usize, Vec<u32>)>,
    /// The ordinal of `private` in the access column, set only for anonymous callers.
    private_ord: Option<u32>,
    tiers: Option<SegmentTiers>,
    ids: Option<StrColumn>,
    /// False when the caller wants no facets (the semantic run).
    count_facets: bool,
    facet_counts: Vec<Vec<u32>>,
    /// The documents that pass every filter, whose facets are counted at harvest: one facet
    /// at a time over all of them is cheaper than seven per document as they come.
    passed: Vec<DocId>,
    total: u64,
    top_k: usize,
    scored: bool,
    heap: BinaryHeap<Entry>,
    /// The clusters, when this segment holds copies and copies are folded.
    clusters: Option<Arc<Clusters>>,
    /// The documents with copies that passed, or failed one filter.
    copies: Vec<Copy>,
}

fn column(reader: &SegmentReader, dim_field: &str) -> tantivy::Result<Option<StrColumn>> {
    reader.fast_fields().str(dim_field)
}

impl Collector for SearchCollector {
    type Fruit = Collected;
    type Child = SearchSegmentCollector;

    fn for_segment(
        &self,
        segment: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<SearchSegmentCollector> {
        let mut dims = Vec::new();
        for dim in Dim::ALL {
            dims.push(DimColumn {
                column: column(reader, dim.field_name())?,
                multi: dim == Dim::Tag,
            });
        }
        let mut filters = Vec::new();
        for (dim, values) in &self.filters {
            let index = dim.index();
            let mut ords = Vec::new();
            if let Some(column) = &dims[index].column {
                for value in values {
                    if let Some(ord) = column.dictionary().term_ord(value)?
                        && let Ok(ord) = u32::try_from(ord)
                    {
                        ords.push(ord);
                    }
                }
            }
            ords.sort_unstable();
            filters.push((index, ords));
        }
        // Only an anonymous caller has a private value to skip.
        let private_ord = match &dims[Dim::Access.index()].column {
            Some(column) if self.anonymous => column
                .dictionary()
                .term_ord(formats::Access::Private.as_str())?
                .and_then(|ord| u32::try_from(ord).ok()),
            _ => None,
        };
        let facet_counts = Dim::FACETS
            .iter()
            .map(|dim| {
                let terms = dims[dim.index()]
                    .column
                    .as_ref()
                    .map_or(0, |column| column.dictionary().num_terms());
                vec![0u32; terms]
            })
            .collect();
        let tiers = if self.scored {
            SegmentTiers::new(reader, &self.key)?
        } else {
            None
        };
        let columns: Vec<(Option<&StrColumn>, bool)> = dims
            .iter()
            .map(|dim| (dim.column.as_ref(), dim.multi))
            .collect();
        let ords = self.ordinals.segment(reader, &columns);
        Ok(SearchSegmentCollector {
            segment,
            ords,
            filters,
            private_ord,
            tiers,
            ids: column(reader, names::ID)?,
            count_facets: self.max_facet_values > 0,
            facet_counts,
            passed: Vec::new(),
            total: 0,
            top_k: self.top_k,
            scored: self.scored,
            heap: BinaryHeap::with_capacity(self.top_k.min(1024) + 1),
            clusters: self
                .clusters
                .as_ref()
                .filter(|clusters| clusters.has_copies(segment))
                .map(Arc::clone),
            copies: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        self.scored
    }

    fn merge_fruits(&self, fruits: Vec<SegmentCollected>) -> tantivy::Result<Collected> {
        let mut merged = Collected::default();
        for fruit in &fruits {
            merged.total += fruit.total;
            merged.top.extend(fruit.top.iter().cloned());
        }
        if let Some(clusters) = &self.clusters {
            let hits = merge_clusters(clusters, &fruits);
            merged.total += hits.len() as u64;
            merged.top.extend(hits);
        }
        merged.top.sort_by(rank);
        merged.top.truncate(self.top_k);
        for (index, facet) in merged.facets.iter_mut().enumerate() {
            let folded = count_clusters(fruits.iter().map(|fruit| &fruit.cluster_facets[index]));
            let segments: Vec<&SegmentFacet> = fruits
                .iter()
                .map(|fruit| &fruit.facets[index])
                .chain([&folded])
                .collect();
            *facet = merge_facet(&segments, self.max_facet_values);
        }
        Ok(merged)
    }
}

impl SearchSegmentCollector {
    /// Returns the tier and score a document is ranked by.
    fn tier_and_score(&self, doc: DocId, score: Score) -> (Tier, Score) {
        if !self.scored {
            return (TIER_TEXT, 0.0);
        }
        let tier = self
            .tiers
            .as_ref()
            .map_or(TIER_TEXT, |tiers| tiers.tier(doc));
        (tier, score)
    }

    /// Hands on what the documents with copies found: per cluster, the best rank and the
    /// most canonical copy that passed; per facet, each (value, cluster) pair once.
    fn harvest_copies(&mut self, collected: &mut SegmentCollected) {
        if self.copies.is_empty() {
            return;
        }
        let mut copies = std::mem::take(&mut self.copies);
        copies.sort_unstable_by_key(|copy| copy.slot.cluster);
        for same in copies.chunk_by(|a, b| a.slot.cluster == b.slot.cluster) {
            let mut hit: Option<ClusterHit> = None;
            for copy in same.iter().filter(|copy| copy.failed.is_none()) {
                let (tier, score) = self.tier_and_score(copy.doc, copy.score);
                let better = hit.as_ref().is_none_or(|best| {
                    tier.cmp(&best.tier)
                        .then_with(|| score.total_cmp(&best.score))
                        .is_gt()
                });
                let best = hit.get_or_insert(ClusterHit {
                    cluster: copy.slot.cluster,
                    tier,
                    score,
                    position: copy.slot.position,
                });
                if better {
                    best.tier = tier;
                    best.score = score;
                }
                best.position = best.position.min(copy.slot.position);
            }
            collected.clusters.extend(hit);
        }
        if !self.count_facets {
            return;
        }
        let mut pairs: Vec<u64> = Vec::new();
        for (index, dim) in Dim::FACETS.iter().enumerate() {
            let dim_index = dim.index();
            pairs.clear();
            for copy in &copies {
                if copy.failed.is_some_and(|failed| failed != dim_index) {
                    continue;
                }
                for ord in self.ords.dims[dim_index].values(copy.doc) {
                    pairs.push((u64::from(*ord) << 32) | u64::from(copy.slot.cluster));
                }
            }
            pairs.sort_unstable();
            pairs.dedup();
            let values = &self.ords.values[dim_index];
            let facet = &mut collected.cluster_facets[index];
            let mut last_ord = None;
            for pair in &pairs {
                let (ord, cluster) = ((pair >> 32) as usize, (pair & 0xffff_ffff) as u32);
                let Some(value) = values.get(ord) else {
                    continue;
                };
                if last_ord != Some(ord) {
                    facet.bytes.extend_from_slice(value);
                    last_ord = Some(ord);
                }
                facet.entries.push((facet.bytes.len(), cluster));
            }
        }
    }

    /// Counts the values of every facet of the documents that passed the filters.
    fn count_passed(&mut self) {
        for (index, dim) in Dim::FACETS.iter().enumerate() {
            self.ords.dims[dim.index()].count(&self.passed, &mut self.facet_counts[index]);
        }
    }

    /// Counts `doc`'s values of the facet `index` (in [`Dim::FACETS`] order).
    fn count_facet(&mut self, index: usize, doc: DocId) {
        self.ords.dims[Dim::FACETS[index].index()]
            .count(std::slice::from_ref(&doc), &mut self.facet_counts[index]);
    }

    /// True when `doc` has a value of dimension `index` among `ords` (sorted).
    fn has_any(&self, index: usize, doc: DocId, ords: &[u32]) -> bool {
        self.ords.dims[index]
            .values(doc)
            .iter()
            .any(|ord| ords.binary_search(ord).is_ok())
    }

    fn offer(&mut self, doc: DocId, score: Score) {
        if self.top_k == 0 {
            return;
        }
        let tier = match &self.tiers {
            Some(tiers) if self.scored => tiers.tier(doc),
            _ => TIER_TEXT,
        };
        let score = if self.scored { score } else { 0.0 };
        if self.heap.len() >= self.top_k
            && let Some(worst) = self.heap.peek()
        {
            // Most documents lose to the worst kept one on tier and score alone; only a
            // tie needs the id.
            let by_rank = tier
                .cmp(&worst.tier)
                .then_with(|| score.total_cmp(&worst.score));
            if by_rank == Ordering::Less {
                return;
            }
        }
        let id_ord = self
            .ids
            .as_ref()
            .and_then(|ids| ids.ords().first(doc))
            .unwrap_or(u64::MAX);
        let entry = Entry {
            tier,
            score,
            id_ord,
            doc,
        };
        if self.heap.len() < self.top_k {
            self.heap.push(entry);
        } else if let Some(worst) = self.heap.peek()
            && entry.cmp_rank(worst) == Ordering::Greater
        {
            self.heap.pop();
            self.heap.push(entry);
        }
    }
}

impl SegmentCollector for SearchSegmentCollector {
    type Fruit = SegmentCollected;

    fn collect(&mut self, doc: DocId, score: Score) {
        if let Some(private) = self.private_ord
            && self.ords.dims[Dim::Access.index()].first(doc) == Some(private)
        {
            // Never seen by an anonymous caller (the query excludes it too).
            return;
        }
        let mut failed: Option<usize> = None;
        for (index, ords) in &self.filters {
            if !self.has_any(*index, doc, ords) {
                if failed.is_some() {
                    // Fails two filters: counts for nothing.
                    return;
                }
                failed = Some(*index);
            }
        }
        if let Some(clusters) = &self.clusters {
            let slot = clusters.slot(self.segment, doc);
            if slot.cluster != NO_CLUSTER {
                if failed.is_none() || self.count_facets {
                    self.copies.push(Copy {
                        slot,
                        doc,
                        score,
                        failed,
                    });
                }
                return;
            }
        }
        match failed {
            None => {
                self.total += 1;
                self.offer(doc, score);
                if self.count_facets {
                    self.passed.push(doc);
                }
            }
            Some(dim_index) => {
                if self.count_facets
                    && let Some(index) = Dim::ALL[dim_index].facet_index()
                {
                    self.count_facet(index, doc);
                }
            }
        }
    }

    fn harvest(mut self) -> SegmentCollected {
        self.count_passed();
        let mut collected = SegmentCollected {
            total: self.total,
            ..SegmentCollected::default()
        };
        self.harvest_copies(&mut collected);
        let mut entries = self.heap.into_vec();
        // The ids in one pass over the dictionary, in its order: looked up one by one, each
        // would decode its block from the start.
        entries.sort_by_key(|entry| entry.id_ord);
        let mut ids = Vec::with_capacity(entries.len());
        if let Some(column) = &self.ids {
            let ords: Vec<u64> = entries.iter().map(|entry| entry.id_ord).collect();
            let looked_up = column.dictionary().sorted_ords_to_term_cb(&ords, |bytes| {
                ids.push(String::from_utf8_lossy(bytes).into_owned());
            });
            if !matches!(looked_up, Ok(true)) {
                // A failed lookup leaves the ids empty; they only break ties.
                ids.clear();
            }
        }
        ids.resize(entries.len(), String::new());
        for (entry, id) in entries.into_iter().zip(ids) {
            collected.top.push(Candidate {
                tier: entry.tier,
                score: entry.score,
                id,
                address: DocAddress::new(self.segment, entry.doc),
            });
        }
        collected.top.sort_by(rank);
        for (index, counts) in self.facet_counts.iter().enumerate() {
            // The values were decoded with the segment's ordinals: naming them reads no
            // dictionary block.
            let values = &self.ords.values[Dim::FACETS[index].index()];
            let facet = &mut collected.facets[index];
            for (ord, count) in counts.iter().enumerate() {
                if *count == 0 {
                    continue;
                }
                let Some(value) = values.get(ord) else {
                    *facet = SegmentFacet::default();
                    break;
                };
                facet.bytes.extend_from_slice(value);
                facet.entries.push((facet.bytes.len(), u64::from(*count)));
            }
        }
        collected
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facet(values: &[(&str, u64)]) -> SegmentFacet {
        let mut facet = SegmentFacet::default();
        for (value, count) in values {
            facet.bytes.extend_from_slice(value.as_bytes());
            facet.entries.push((facet.bytes.len(), *count));
        }
        facet
    }

    #[test]
    fn facets_merge_across_segments_and_keep_the_most_frequent() {
        let first = facet(&[("a.test", 2), ("c.test", 1), ("d.test", 5)]);
        let second = facet(&[("b.test", 1), ("c.test", 4)]);
        let empty = facet(&[]);
        let merged = merge_facet(&[&first, &empty, &second], 10);
        let expected = [("c.test", 5), ("d.test", 5), ("a.test", 2), ("b.test", 1)];
        assert_eq!(
            merged,
            expected.map(|(value, count)| (value.to_owned(), count))
        );
        let top = merge_facet(&[&first, &second], 2);
        assert_eq!(top, [("c.test".to_owned(), 5), ("d.test".to_owned(), 5)]);
        assert!(merge_facet(&[&first], 0).is_empty());
        assert!(merge_facet(&[], 5).is_empty());
    }

    #[test]
    fn entries_rank_by_tier_then_score_then_id() {
        let entry = |tier, score, id_ord| Entry {
            tier,
            score,
            id_ord,
            doc: 0,
        };
        assert_eq!(
            entry(1, 0.1, 5).cmp_rank(&entry(0, 9.0, 0)),
            Ordering::Greater
        );
        assert_eq!(
            entry(0, 2.0, 5).cmp_rank(&entry(0, 1.0, 0)),
            Ordering::Greater
        );
        assert_eq!(
            entry(0, 1.0, 1).cmp_rank(&entry(0, 1.0, 2)),
            Ordering::Greater
        );
        // The heap keeps the worst on top.
        let mut heap = BinaryHeap::new();
        heap.push(entry(0, 1.0, 0));
        heap.push(entry(2, 0.0, 0));
        assert_eq!(heap.peek().map(|e| e.tier), Some(0));
    }
}
