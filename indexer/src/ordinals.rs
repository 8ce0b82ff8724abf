//! The filter and facet columns of a segment, decoded once into plain arrays.
//!
//! The collector looks at every matching document's access, capability type, domain,
//! format, tags, licence and verdict, to filter and to count facets. Read from tantivy's
//! fast fields, each look-up of an optional column ranks the document in a block index, and
//! a broad query (`pro` as someone types it) pays that on most of the index, seven times per
//! document. Segments never change (a merge makes a new one), so their value ordinals are
//! decoded once into arrays indexed by document and kept while the segment lives, as the
//! semantic option keeps its vectors: about 4 bytes per document and dimension. The values
//! the ordinals stand for are decoded with them (a few hundred kilobytes for thousands of
//! domains), so that naming a search's facet values reads no dictionary block.

use std::sync::Arc;

use tantivy::columnar::StrColumn;
use tantivy::index::SegmentId;
use tantivy::{DocId, SegmentReader};

use crate::segment_cache::SegmentCache;

/// No value.
const NONE: u32 = u32::MAX;

/// One dimension's value ordinals in one segment (ordinals of the column's dictionary).
#[derive(Debug)]
pub(crate) enum DimOrds {
    /// The segment has no such column: no document has a value.
    Missing,
    /// At most one value per document: `ords[doc]`, or [`NONE`].
    Single(Vec<u32>),
    /// Any number: the values of `doc` are `ords[starts[doc]..starts[doc + 1]]`.
    Multi { starts: Vec<u32>, ords: Vec<u32> },
}

impl DimOrds {
    /// Decodes `column` for documents `0..max_doc`. An ordinal that does not fit in 32 bits
    /// (a dictionary of four billion values) is left out.
    fn read(column: Option<&StrColumn>, multi: bool, max_doc: DocId) -> DimOrds {
        let Some(column) = column else {
            return DimOrds::Missing;
        };
        let ords = column.ords();
        if multi {
            let mut starts = Vec::with_capacity(max_doc as usize + 1);
            let mut values = Vec::new();
            starts.push(0);
            for doc in 0..max_doc {
                values.extend(ords.values_for_doc(doc).filter_map(narrow));
                starts.push(u32::try_from(values.len()).unwrap_or(u32::MAX));
            }
            DimOrds::Multi {
                starts,
                ords: values,
            }
        } else {
            DimOrds::Single(
                (0..max_doc)
                    .map(|doc| ords.first(doc).and_then(narrow).unwrap_or(NONE))
                    .collect(),
            )
        }
    }

    /// The value ordinals of `doc`.
    #[inline]
    pub(crate) fn values(&self, doc: DocId) -> &[u32] {
        let doc = doc as usize;
        match self {
            DimOrds::Missing => &[],
            DimOrds::Single(ords) => match ords.get(doc) {
                Some(ord) if *ord != NONE => std::slice::from_ref(ord),
                _ => &[],
            },
            DimOrds::Multi { starts, ords } => match (starts.get(doc), starts.get(doc + 1)) {
                (Some(start), Some(end)) => ords.get(*start as usize..*end as usize).unwrap_or(&[]),
                _ => &[],
            },
        }
    }

    /// The first value ordinal of `doc`.
    #[inline]
    pub(crate) fn first(&self, doc: DocId) -> Option<u32> {
        self.values(doc).first().copied()
    }

    /// Adds the values of every document of `docs` to `counts` (by ordinal; an ordinal past
    /// the end of `counts` is not counted). The same as [`values`](DimOrds::values) per document, with
    /// the kind of column decided once rather than per document: a broad task query counts
    /// tens of thousands of documents, seven dimensions each.
    pub(crate) fn count(&self, docs: &[DocId], counts: &mut [u32]) {
        match self {
            DimOrds::Missing => {}
            DimOrds::Single(ords) => {
                for doc in docs {
                    if let Some(ord) = ords.get(*doc as usize)
                        && let Some(slot) = counts.get_mut(*ord as usize)
                    {
                        *slot += 1;
                    }
                }
            }
            DimOrds::Multi { .. } => {
                for doc in docs {
                    for ord in self.values(*doc) {
                        if let Some(slot) = counts.get_mut(*ord as usize) {
                            *slot += 1;
                        }
                    }
                }
            }
        }
    }
}

fn narrow(ord: u64) -> Option<u32> {
    u32::try_from(ord).ok().filter(|ord| *ord != NONE)
}

/// The values of one dimension's column in one segment, by ordinal.
#[derive(Debug, Default)]
pub(crate) struct DimValues {
    bytes: Vec<u8>,
    /// Where each value ends in `bytes`.
    ends: Vec<usize>,
}

impl DimValues {
    /// Decodes the dictionary of `column`; a failure leaves it empty, so that no value is
    /// named (the facet then lists nothing from this segment).
    fn read(column: Option<&StrColumn>) -> DimValues {
        let mut values = DimValues::default();
        let Some(column) = column else {
            return values;
        };
        let Ok(mut stream) = column.dictionary().stream() else {
            return values;
        };
        while stream.advance() {
            values.bytes.extend_from_slice(stream.key());
            values.ends.push(values.bytes.len());
        }
        if values.ends.len() != column.dictionary().num_terms() {
            return DimValues::default();
        }
        values
    }

    /// The value of `ord`, if the dictionary has it.
    pub(crate) fn get(&self, ord: usize) -> Option<&[u8]> {
        let end = *self.ends.get(ord)?;
        let start = if ord == 0 { 0 } else { self.ends[ord - 1] };
        self.bytes.get(start..end)
    }
}

/// The columns of one segment, one per dimension, in the order the collector asks for them.
#[derive(Debug)]
pub(crate) struct SegmentOrds {
    pub(crate) dims: Vec<DimOrds>,
    /// Each dimension's values, by ordinal, in the order of `dims`.
    pub(crate) values: Vec<DimValues>,
}

impl SegmentOrds {
    /// Decodes `columns` (each with whether it holds several values per document).
    fn read(reader: &SegmentReader, columns: &[(Option<&StrColumn>, bool)]) -> SegmentOrds {
        let max_doc = reader.max_doc();
        SegmentOrds {
            dims: columns
                .iter()
                .map(|(column, multi)| DimOrds::read(*column, *multi, max_doc))
                .collect(),
            values: columns
                .iter()
                .map(|(column, _)| DimValues::read(*column))
                .collect(),
        }
    }
}

/// The decoded columns of the segments searched lately.
#[derive(Debug, Default)]
pub(crate) struct OrdsCache(SegmentCache<SegmentOrds>);

impl OrdsCache {
    /// Returns the decoded `columns` of `reader`'s segment, decoding them on first use.
    pub(crate) fn segment(
        &self,
        reader: &SegmentReader,
        columns: &[(Option<&StrColumn>, bool)],
    ) -> Arc<SegmentOrds> {
        let Ok(ords) = self.0.get_or_make(
            reader.segment_id(),
            |ords| ords.dims.len() == columns.len(),
            || Ok::<_, std::convert::Infallible>(SegmentOrds::read(reader, columns)),
        );
        ords
    }

    /// Forgets the segments not in `live` (after merges and deletes).
    pub(crate) fn retain(&self, live: &[SegmentId]) {
        self.0.retain(live);
    }

    /// How many segments are decoded.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_read_per_document() {
        let single = DimOrds::Single(vec![3, NONE, 0]);
        assert_eq!(single.values(0), [3]);
        assert!(single.values(1).is_empty());
        assert_eq!(single.first(2), Some(0));
        assert!(single.values(3).is_empty(), "past the end: no value");
        let multi = DimOrds::Multi {
            starts: vec![0, 2, 2, 3],
            ords: vec![1, 4, 0],
        };
        assert_eq!(multi.values(0), [1, 4]);
        assert!(multi.values(1).is_empty());
        assert_eq!(multi.values(2), [0]);
        assert!(multi.values(3).is_empty());
        assert!(DimOrds::Missing.values(0).is_empty());
        assert_eq!(narrow(u64::from(u32::MAX)), None);
        assert_eq!(narrow(u64::MAX), None);
        assert_eq!(narrow(7), Some(7));
    }

    #[test]
    fn documents_are_counted_by_ordinal() {
        let single = DimOrds::Single(vec![1, NONE, 1, 0, 7]);
        let mut counts = vec![0; 3];
        // Document 9 is past the end, ordinal 7 past the counts, NONE no value.
        single.count(&[0, 1, 2, 3, 4, 9], &mut counts);
        assert_eq!(counts, [1, 2, 0]);
        let multi = DimOrds::Multi {
            starts: vec![0, 2, 2, 3],
            ords: vec![1, 2, 0],
        };
        let mut counts = vec![0; 3];
        multi.count(&[0, 1, 2, 0], &mut counts);
        assert_eq!(counts, [1, 2, 2]);
        let mut counts = vec![0; 3];
        DimOrds::Missing.count(&[0, 1], &mut counts);
        assert_eq!(counts, [0, 0, 0]);
    }

    #[test]
    fn values_are_read_by_ordinal() {
        let values = DimValues {
            bytes: b"a.testb.testlonger.test".to_vec(),
            ends: vec![6, 12, 23],
        };
        assert_eq!(values.get(0), Some(&b"a.test"[..]));
        assert_eq!(values.get(2), Some(&b"longer.test"[..]));
        assert_eq!(values.get(3), None);
        assert_eq!(DimValues::default().get(0), None);
    }
}
