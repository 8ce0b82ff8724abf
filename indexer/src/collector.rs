//! One pass over the documents a query matches: the top hits by relevance tier and score,
//! the total, and every facet's counts.
//!
//! The query the collector runs under holds the text clauses and the access policy; the
//! user's filters are applied here, per document, from fast fields. That way one pass gives
//! both the hits (documents that pass every filter) and each facet's counts (documents that
//! pass every filter *except that facet's own*, the usual drill-down semantics), and all of
//! them only ever see documents the caller may see. The access policy is checked a second
//! time here, so a private record cannot leak even if a query were built wrongly.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap};
use std::ops::{Bound, Range};

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::StrColumn;
use tantivy::{DocAddress, DocId, Score, SegmentOrdinal, SegmentReader};

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
}

impl Dim {
    /// The dimensions that have facet counts, in output order.
    pub(crate) const FACETS: [Dim; 5] = [
        Dim::CapabilityType,
        Dim::Access,
        Dim::Domain,
        Dim::Format,
        Dim::Tag,
    ];

    fn field_name(self) -> &'static str {
        match self {
            Dim::CapabilityType => names::CAPABILITY_TYPE,
            Dim::Access => names::ACCESS,
            Dim::Domain => names::DOMAIN,
            Dim::Format => names::FORMAT,
            Dim::Tag => names::TAG,
            Dim::License => names::LICENSE,
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
    /// Documents that pass every filter.
    pub(crate) total: u64,
    /// The best `top_k` of them, best first.
    pub(crate) top: Vec<Candidate>,
    /// Per facet dimension (in [`Dim::FACETS`] order): value -> count.
    pub(crate) facets: [BTreeMap<String, u64>; 5],
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

/// A filter resolved against one segment's dictionary.
struct SegmentFilter {
    dim: Dim,
    column: Option<StrColumn>,
    /// The ordinals of the wanted values present in this segment, sorted.
    ords: Vec<u64>,
}

impl SegmentFilter {
    fn matches(&self, doc: DocId) -> bool {
        match &self.column {
            Some(column) => column
                .term_ords(doc)
                .any(|ord| self.ords.binary_search(&ord).is_ok()),
            None => false,
        }
    }
}

/// Name or title key matching for the tiers, in one segment.
struct SegmentTier {
    column: Option<StrColumn>,
    exact: Option<u64>,
    prefix: Range<u64>,
}

impl SegmentTier {
    fn new(column: Option<StrColumn>, key: &str) -> tantivy::Result<SegmentTier> {
        let (mut exact, mut prefix) = (None, 0..0);
        if let Some(column) = &column
            && !key.is_empty()
        {
            let dictionary = column.dictionary();
            exact = dictionary.term_ord(key)?;
            // 0xFF never occurs in UTF-8, so every key that starts with `key` sorts below it.
            let mut upper = key.as_bytes().to_vec();
            upper.push(0xFF);
            let (low, high) = dictionary
                .term_bounds_to_ord(Bound::Included(key.as_bytes()), Bound::Excluded(&upper[..]))?;
            let start = match low {
                Bound::Included(ord) => ord,
                Bound::Excluded(ord) => ord.saturating_add(1),
                Bound::Unbounded => 0,
            };
            let end = match high {
                Bound::Included(ord) => ord.saturating_add(1),
                Bound::Excluded(ord) => ord,
                Bound::Unbounded => u64::MAX,
            };
            prefix = start..end.max(start);
        }
        Ok(SegmentTier {
            column,
            exact,
            prefix,
        })
    }

    fn tier(&self, doc: DocId) -> Tier {
        let Some(column) = &self.column else {
            return TIER_TEXT;
        };
        let mut tier = TIER_TEXT;
        for ord in column.term_ords(doc) {
            if Some(ord) == self.exact {
                return TIER_EXACT;
            }
            if self.prefix.contains(&ord) {
                tier = TIER_PREFIX;
            }
        }
        tier
    }
}

/// The collector of one segment.
pub(crate) struct SearchSegmentCollector {
    segment: SegmentOrdinal,
    filters: Vec<SegmentFilter>,
    access: Option<StrColumn>,
    private_ord: Option<u64>,
    name_tier: SegmentTier,
    title_tier: SegmentTier,
    ids: Option<StrColumn>,
    facet_columns: Vec<Option<StrColumn>>,
    facet_counts: Vec<Vec<u32>>,
    total: u64,
    top_k: usize,
    scored: bool,
    heap: BinaryHeap<Entry>,
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
        let mut filters = Vec::new();
        for (dim, values) in &self.filters {
            let column = column(reader, dim.field_name())?;
            let mut ords = Vec::new();
            if let Some(column) = &column {
                for value in values {
                    if let Some(ord) = column.dictionary().term_ord(value)? {
                        ords.push(ord);
                    }
                }
            }
            ords.sort_unstable();
            filters.push(SegmentFilter {
                dim: *dim,
                column,
                ords,
            });
        }
        let access = column(reader, names::ACCESS)?;
        // Only an anonymous caller has a private value to skip.
        let private_ord = match &access {
            Some(column) if self.anonymous => column
                .dictionary()
                .term_ord(crawler::Access::Private.as_str())?,
            _ => None,
        };
        let mut facet_columns = Vec::new();
        let mut facet_counts = Vec::new();
        for dim in Dim::FACETS {
            let column = column(reader, dim.field_name())?;
            facet_counts.push(vec![
                0;
                column
                    .as_ref()
                    .map_or(0, |column| column.dictionary().num_terms())
            ]);
            facet_columns.push(column);
        }
        let key = if self.scored { self.key.as_str() } else { "" };
        Ok(SearchSegmentCollector {
            segment,
            filters,
            access,
            private_ord,
            name_tier: SegmentTier::new(column(reader, names::NAME_KEY)?, key)?,
            title_tier: SegmentTier::new(column(reader, names::TITLE_KEY)?, key)?,
            ids: column(reader, names::ID)?,
            facet_columns,
            facet_counts,
            total: 0,
            top_k: self.top_k,
            scored: self.scored,
            heap: BinaryHeap::with_capacity(self.top_k.min(1024) + 1),
        })
    }

    fn requires_scoring(&self) -> bool {
        self.scored
    }

    fn merge_fruits(&self, fruits: Vec<Collected>) -> tantivy::Result<Collected> {
        let mut merged = Collected::default();
        for fruit in fruits {
            merged.total += fruit.total;
            merged.top.extend(fruit.top);
            for (into, from) in merged.facets.iter_mut().zip(fruit.facets) {
                for (value, count) in from {
                    *into.entry(value).or_insert(0) += count;
                }
            }
        }
        merged.top.sort_by(rank);
        merged.top.truncate(self.top_k);
        Ok(merged)
    }
}

impl SearchSegmentCollector {
    fn count_facet(&mut self, index: usize, doc: DocId) {
        if let Some(column) = &self.facet_columns[index] {
            for ord in column.term_ords(doc) {
                if let Some(count) = usize::try_from(ord)
                    .ok()
                    .and_then(|ord| self.facet_counts[index].get_mut(ord))
                {
                    *count += 1;
                }
            }
        }
    }

    fn is_private(&self, doc: DocId) -> bool {
        match (&self.access, self.private_ord) {
            (Some(column), Some(private)) => column.term_ords(doc).any(|ord| ord == private),
            _ => false,
        }
    }

    fn offer(&mut self, doc: DocId, score: Score) {
        if self.top_k == 0 {
            return;
        }
        let tier = if self.scored {
            self.name_tier.tier(doc).max(self.title_tier.tier(doc))
        } else {
            TIER_TEXT
        };
        let id_ord = self
            .ids
            .as_ref()
            .and_then(|ids| ids.term_ords(doc).next())
            .unwrap_or(u64::MAX);
        let entry = Entry {
            tier,
            score: if self.scored { score } else { 0.0 },
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
    type Fruit = Collected;

    fn collect(&mut self, doc: DocId, score: Score) {
        if self.anonymous_guard(doc) {
            return;
        }
        let mut failed: Option<Dim> = None;
        for filter in &self.filters {
            if !filter.matches(doc) {
                if failed.is_some() {
                    // Fails two filters: counts for nothing.
                    return;
                }
                failed = Some(filter.dim);
            }
        }
        match failed {
            None => {
                self.total += 1;
                self.offer(doc, score);
                for index in 0..Dim::FACETS.len() {
                    self.count_facet(index, doc);
                }
            }
            Some(dim) => {
                if let Some(index) = dim.facet_index() {
                    self.count_facet(index, doc);
                }
            }
        }
    }

    fn harvest(self) -> Collected {
        let mut collected = Collected {
            total: self.total,
            ..Collected::default()
        };
        let mut text = String::new();
        for entry in self.heap.into_vec() {
            text.clear();
            if let Some(ids) = &self.ids {
                // A failed lookup leaves the id empty; it only affects tie-breaking.
                let _ = ids.ord_to_str(entry.id_ord, &mut text);
            }
            collected.top.push(Candidate {
                tier: entry.tier,
                score: entry.score,
                id: text.clone(),
                address: DocAddress::new(self.segment, entry.doc),
            });
        }
        collected.top.sort_by(rank);
        for (index, counts) in self.facet_counts.iter().enumerate() {
            let Some(column) = &self.facet_columns[index] else {
                continue;
            };
            // Look the values up in one sorted pass over the dictionary: one lookup per
            // value would decode a dictionary block each time.
            let ords: Vec<u64> = (0..counts.len() as u64)
                .filter(|ord| counts[*ord as usize] > 0)
                .collect();
            let mut values = Vec::with_capacity(ords.len());
            let looked_up = column.dictionary().sorted_ords_to_term_cb(&ords, |bytes| {
                values.push(String::from_utf8_lossy(bytes).into_owned());
            });
            if looked_up.is_ok() {
                for (ord, value) in ords.iter().zip(values) {
                    collected.facets[index].insert(value, u64::from(counts[*ord as usize]));
                }
            }
        }
        collected
    }
}

impl SearchSegmentCollector {
    /// Returns true when `doc` must not be seen by this caller (`private_ord` is only set for
    /// anonymous callers).
    fn anonymous_guard(&self, doc: DocId) -> bool {
        self.private_ord.is_some() && self.is_private(doc)
    }
}
