//! A record's vector as the index stores it, and what lets the writer reuse one instead of
//! running the model again.
//!
//! A stored vector names the text it was made from (the first bytes of the SHA-256 of
//! [`record_text`](super::record_text)'s output). When a record is written again with the
//! same text (its verdict or version changed, or the whole index is rebuilt for a new
//! schema), the writer finds its stored vector by the record's id and keeps it: no
//! transformer pass, which is tens of milliseconds per record.

use std::collections::HashMap;

use sha2::{Digest as _, Sha256};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocSet, Searcher, SegmentReader, TERMINATED, Term};

use crate::schema::names;

/// The format of the vectors written now: the header names the source text.
const VECTOR_FORMAT: u8 = 2;
/// The first format, still read: no source text.
const VECTOR_FORMAT_1: u8 = 1;
/// How many bytes of the source text's SHA-256 a stored vector keeps.
const SOURCE_BYTES: usize = 8;
/// Bytes before a format-1 vector's components: format, dimensions (u16), scale (f32).
const HEADER_1: usize = 1 + 2 + 4;
/// Bytes before a format-2 vector's components: format 1's, then the source digest.
pub(super) const VECTOR_HEADER: usize = HEADER_1 + SOURCE_BYTES;

/// Names the text a vector was made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Source([u8; SOURCE_BYTES]);

impl Source {
    /// The source of a vector made from `text`.
    pub(crate) fn of(text: &str) -> Source {
        let digest = Sha256::digest(text.as_bytes());
        let mut bytes = [0; SOURCE_BYTES];
        bytes.copy_from_slice(&digest[..SOURCE_BYTES]);
        Source(bytes)
    }
}

/// Stores a unit vector made from the text `source` names, in `VECTOR_HEADER + dimensions`
/// bytes: each component scaled to -127..=127 by the largest magnitude. Cosine rankings
/// keep their order to within the rounding (about 0.4 % of the largest component).
pub(crate) fn encode(vector: &[f32], source: Source) -> Vec<u8> {
    let largest = vector.iter().fold(0f32, |max, x| max.max(x.abs()));
    let scale = if largest > 0.0 { largest / 127.0 } else { 1.0 };
    let dims = u16::try_from(vector.len()).unwrap_or(u16::MAX);
    let mut bytes = Vec::with_capacity(VECTOR_HEADER + vector.len());
    bytes.push(VECTOR_FORMAT);
    bytes.extend_from_slice(&dims.to_le_bytes());
    bytes.extend_from_slice(&scale.to_le_bytes());
    bytes.extend_from_slice(&source.0);
    for x in vector.iter().take(usize::from(dims)) {
        // In range by construction; `as` saturates anyway.
        bytes.push((x / scale).round() as i8 as u8);
    }
    bytes
}

/// The length of a stored vector's header, by its format; `None` for an unknown format.
fn header_len(bytes: &[u8]) -> Option<usize> {
    match *bytes.first()? {
        VECTOR_FORMAT => Some(VECTOR_HEADER),
        VECTOR_FORMAT_1 => Some(HEADER_1),
        _ => None,
    }
}

/// Reads a stored vector (either format): its scale and components, or `None` when it is
/// not one of `dimensions` components.
pub(super) fn decode(
    bytes: &[u8],
    dimensions: usize,
) -> Option<(f32, impl Iterator<Item = i8> + '_)> {
    let header = header_len(bytes)?;
    if bytes.len() != header + dimensions {
        return None;
    }
    let dims = u16::from_le_bytes([bytes[1], bytes[2]]);
    if usize::from(dims) != dimensions {
        return None;
    }
    let scale = f32::from_le_bytes([bytes[3], bytes[4], bytes[5], bytes[6]]);
    if !scale.is_finite() {
        return None;
    }
    Some((scale, bytes[header..].iter().map(|byte| *byte as i8)))
}

/// The stored vector `bytes` when it was made from the text `source` names and has
/// `dimensions` components: what a writer may store again without running the model.
pub(crate) fn reusable(bytes: Vec<u8>, source: Source, dimensions: usize) -> Option<Vec<u8>> {
    let made_from = bytes.get(HEADER_1..VECTOR_HEADER)?;
    (bytes[0] == VECTOR_FORMAT && made_from == source.0 && decode(&bytes, dimensions).is_some())
        .then_some(bytes)
}

/// The stored vector of the record `id` in the index `searcher` reads, if it has one.
pub(crate) fn stored_vector(
    searcher: &Searcher,
    id_field: Field,
    id: &str,
) -> tantivy::Result<Option<Vec<u8>>> {
    let term = Term::from_field_text(id_field, id);
    for segment in searcher.segment_readers() {
        let Some(mut postings) = segment
            .inverted_index(id_field)?
            .read_postings(&term, IndexRecordOption::Basic)?
        else {
            continue;
        };
        let mut doc = postings.doc();
        while doc != TERMINATED {
            if !segment.is_deleted(doc) {
                return vector_bytes(segment, doc);
            }
            doc = postings.advance();
        }
    }
    Ok(None)
}

/// Every stored vector that names its source text, by record id: what a rebuild carries
/// over (about 400 bytes a record with the crate's model).
pub(crate) fn stored_vectors(searcher: &Searcher) -> tantivy::Result<HashMap<String, Vec<u8>>> {
    let mut out = HashMap::new();
    for segment in searcher.segment_readers() {
        let fast = segment.fast_fields();
        let (Some(ids), Some(vectors)) = (fast.str(names::ID)?, fast.bytes(names::VECTOR)?) else {
            continue;
        };
        let mut id = String::new();
        let mut bytes = Vec::new();
        for doc in segment.doc_ids_alive() {
            let (Some(id_ord), Some(vector_ord)) =
                (ids.term_ords(doc).next(), vectors.term_ords(doc).next())
            else {
                continue;
            };
            if !ids.ord_to_str(id_ord, &mut id)? || !vectors.ord_to_bytes(vector_ord, &mut bytes)? {
                continue;
            }
            if bytes.first() == Some(&VECTOR_FORMAT) {
                out.insert(id.clone(), bytes.clone());
            }
        }
    }
    Ok(out)
}

/// The bytes of document `doc`'s stored vector.
fn vector_bytes(segment: &SegmentReader, doc: u32) -> tantivy::Result<Option<Vec<u8>>> {
    let Some(column) = segment.fast_fields().bytes(names::VECTOR)? else {
        return Ok(None);
    };
    let Some(ord) = column.term_ords(doc).next() else {
        return Ok(None);
    };
    let mut bytes = Vec::new();
    Ok(column.ord_to_bytes(ord, &mut bytes)?.then_some(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(seed: f32) -> Vec<f32> {
        let vector: Vec<f32> = (0..384).map(|i| ((i as f32) * seed).sin()).collect();
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        vector.iter().map(|x| x / norm).collect()
    }

    #[test]
    fn vectors_round_trip_within_the_rounding() {
        let unit = unit(0.37);
        let bytes = encode(&unit, Source::of("text"));
        assert_eq!(bytes.len(), VECTOR_HEADER + 384);
        let (scale, components) = decode(&bytes, 384).unwrap();
        for (x, c) in unit.iter().zip(components) {
            assert!((x - f32::from(c) * scale).abs() <= scale / 2.0 + 1e-6);
        }
        // The wrong length, format or dimensions is no vector.
        assert!(decode(&bytes, 383).is_none());
        assert!(decode(&bytes[..100], 384).is_none());
        let mut other = bytes.clone();
        other[0] = 9;
        assert!(decode(&other, 384).is_none());
        // A zero vector encodes without dividing by zero.
        let zero = encode(&[0.0; 4], Source::of(""));
        let (scale, mut components) = decode(&zero, 4).unwrap();
        assert_eq!(scale, 1.0);
        assert!(components.all(|c| c == 0));
    }

    #[test]
    fn the_first_format_is_still_read() {
        let unit = unit(0.41);
        let current = encode(&unit, Source::of("text"));
        // Format 1: the same without the source digest.
        let mut first = vec![VECTOR_FORMAT_1];
        first.extend_from_slice(&current[1..HEADER_1]);
        first.extend_from_slice(&current[VECTOR_HEADER..]);
        let (scale, components) = decode(&first, 384).unwrap();
        let (expected_scale, expected) = decode(&current, 384).unwrap();
        assert_eq!(scale, expected_scale);
        assert!(components.eq(expected));
        // It names no source, so it is never reused.
        assert_eq!(reusable(first, Source::of("text"), 384), None);
    }

    #[test]
    fn a_vector_is_reusable_only_for_the_text_it_was_made_from() {
        let bytes = encode(&unit(0.37), Source::of("PDF tools. Reads PDFs"));
        assert_eq!(
            reusable(bytes.clone(), Source::of("PDF tools. Reads PDFs"), 384),
            Some(bytes.clone())
        );
        assert_eq!(
            reusable(bytes.clone(), Source::of("PDF tools. Reads PDF files"), 384),
            None
        );
        assert_eq!(
            reusable(bytes.clone(), Source::of("PDF tools. Reads PDFs"), 256),
            None
        );
        assert_eq!(
            reusable(
                bytes[..10].to_vec(),
                Source::of("PDF tools. Reads PDFs"),
                384
            ),
            None
        );
    }
}
