//! Copies of one skill: records whose content fingerprint is the same (`formats::fingerprint`),
//! found once per index snapshot, so that a search shows one hit per cluster of copies.
//!
//! A cluster's members are in canonical order: a copy whose digest was verified over HTTPS
//! first, then the earliest seen, then the smallest id ([`canonical_rank`]). A search shows,
//! for each cluster, the first member that passes its filters and access check, where the
//! cluster's best-ranked passing member would have been. What a cluster is does not depend on
//! the query, so it is worked out when the index changes, not per search: finding the copies
//! reads a fast field of every document, about a millisecond per hundred thousand, and the
//! documents in a cluster (few, in a directory) are read whole. Most documents have no copy;
//! the collector sees that from one array look-up.

use std::sync::{Arc, Mutex, MutexGuard};

use formats::{Access, Digest, DigestStatus, Skill};
use tantivy::columnar::StrColumn;
use tantivy::index::SegmentId;
use tantivy::{DocAddress, DocId, Searcher, SegmentOrdinal};

use crate::schema::names;

/// The most copies of a record listed in its `also_at` (a popular skill may be copied to
/// thousands of sites; the count of hits covers them all).
pub const MAX_COPIES: usize = 1000;

/// No cluster: the document has no copy in the index.
pub(crate) const NO_CLUSTER: u32 = u32::MAX;

/// Returns the cluster key of a fingerprint: its first 8 bytes, as a number. Two fingerprints
/// that share it are told apart when the clusters are made.
pub(crate) fn cluster_key(fingerprint: &Digest) -> u64 {
    let bytes = fingerprint.as_bytes();
    u64::from_be_bytes([
        bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
    ])
}

/// Returns where a record comes in its cluster, lowest first: a copy whose digest was
/// verified and whose content came over HTTPS before any other, then the earliest
/// `first_seen` (ties go to the smaller id).
pub(crate) fn canonical_rank(skill: &Skill) -> u64 {
    let trusted =
        skill.digest_status == DigestStatus::Verified && skill.source_url.scheme() == "https";
    let seen = u64::try_from(skill.first_seen.unix_timestamp()).unwrap_or(0);
    (u64::from(!trusted) << 63) | seen.min((1 << 63) - 1)
}

/// A document's place in its cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot {
    /// The cluster, or [`NO_CLUSTER`].
    pub(crate) cluster: u32,
    /// Its place among the cluster's members: 0 is the canonical copy.
    pub(crate) position: u32,
}

const UNCLUSTERED: Slot = Slot {
    cluster: NO_CLUSTER,
    position: 0,
};

/// One copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Member {
    /// Where it is in the snapshot.
    pub(crate) address: DocAddress,
    /// Its record id.
    pub(crate) id: String,
    /// True when only an authenticated caller may see it.
    pub(crate) private: bool,
}

/// The clusters of one index snapshot.
#[derive(Debug, Default)]
pub(crate) struct Clusters {
    /// The snapshot: each segment and how many of its documents were deleted.
    snapshot: Vec<(SegmentId, u32)>,
    /// Per segment (by its ordinal in the snapshot's searcher): each document's slot; empty
    /// for a segment without a copy.
    slots: Vec<Vec<Slot>>,
    /// Per cluster: its members, in canonical order.
    members: Vec<Vec<Member>>,
}

impl Clusters {
    /// Returns the slot of a document (unclustered when it has no copy).
    #[inline]
    pub(crate) fn slot(&self, segment: SegmentOrdinal, doc: DocId) -> Slot {
        self.slots
            .get(segment as usize)
            .and_then(|slots| slots.get(doc as usize))
            .copied()
            .unwrap_or(UNCLUSTERED)
    }

    /// True when the segment holds a copy of some skill.
    pub(crate) fn has_copies(&self, segment: SegmentOrdinal) -> bool {
        self.slots
            .get(segment as usize)
            .is_some_and(|slots| !slots.is_empty())
    }

    /// Returns the members of a cluster, in canonical order.
    pub(crate) fn members(&self, cluster: u32) -> &[Member] {
        self.members
            .get(cluster as usize)
            .map_or(&[], Vec::as_slice)
    }

    /// Returns how many other copies of the document at `address` a caller sees (`anonymous`:
    /// the private ones left out).
    pub(crate) fn other_copies(&self, address: DocAddress, anonymous: bool) -> usize {
        let slot = self.slot(address.segment_ord, address.doc_id);
        self.members(slot.cluster)
            .iter()
            .filter(|member| member.address != address && !(anonymous && member.private))
            .count()
    }
}

/// The clusters of the snapshot searched last, made again when the snapshot changes.
#[derive(Debug, Default)]
pub(crate) struct ClustersCache(Mutex<Option<Arc<Clusters>>>);

impl ClustersCache {
    /// Returns the clusters of `searcher`'s snapshot. Searches that meet a new snapshot
    /// together wait for one of them to make its clusters.
    pub(crate) fn of(&self, searcher: &Searcher) -> tantivy::Result<Arc<Clusters>> {
        let snapshot = snapshot_of(searcher);
        let mut kept = lock(&self.0);
        if let Some(clusters) = kept.as_ref()
            && clusters.snapshot == snapshot
        {
            return Ok(Arc::clone(clusters));
        }
        let made = Arc::new(make(searcher, snapshot)?);
        *kept = Some(Arc::clone(&made));
        Ok(made)
    }
}

fn lock<V>(mutex: &Mutex<V>) -> MutexGuard<'_, V> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

fn snapshot_of(searcher: &Searcher) -> Vec<(SegmentId, u32)> {
    searcher
        .segment_readers()
        .iter()
        .map(|segment| (segment.segment_id(), segment.num_deleted_docs()))
        .collect()
}

/// A live document with a fingerprint, as the clusters are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Keyed {
    key: u64,
    segment: u32,
    doc: DocId,
}

/// What is read of a document that has a copy.
struct Candidate {
    fingerprint: Vec<u8>,
    rank: u64,
    member: Member,
}

fn make(searcher: &Searcher, snapshot: Vec<(SegmentId, u32)>) -> tantivy::Result<Clusters> {
    let readers = searcher.segment_readers();
    let mut keyed = Vec::new();
    for (segment, reader) in readers.iter().enumerate() {
        let Some(column) = reader.fast_fields().column_opt::<u64>(names::CLUSTER_KEY)? else {
            continue;
        };
        let alive = reader.alive_bitset();
        let segment = u32::try_from(segment).unwrap_or(u32::MAX);
        for doc in 0..reader.max_doc() {
            if alive.is_some_and(|alive| !alive.is_alive(doc)) {
                continue;
            }
            if let Some(key) = column.first(doc) {
                keyed.push(Keyed { key, segment, doc });
            }
        }
    }
    keyed.sort_unstable();
    // Runs of one key: the documents that may have copies (most keys are alone).
    let mut runs: Vec<&[Keyed]> = Vec::new();
    let mut start = 0;
    while start < keyed.len() {
        let end = keyed[start..]
            .iter()
            .position(|entry| entry.key != keyed[start].key)
            .map_or(keyed.len(), |length| start + length);
        if end - start > 1 {
            runs.push(&keyed[start..end]);
        }
        start = end;
    }
    let mut clusters = Clusters {
        snapshot,
        slots: vec![Vec::new(); readers.len()],
        members: Vec::new(),
    };
    if runs.is_empty() {
        return Ok(clusters);
    }
    let mut read = read_candidates(searcher, &runs)?;
    for run in runs {
        let mut group: Vec<Candidate> = run
            .iter()
            .filter_map(|entry| read.remove(&(entry.segment, entry.doc)))
            .collect();
        // One key, and (almost always) one fingerprint; the whole fingerprint decides.
        group.sort_by(|a, b| {
            a.fingerprint
                .cmp(&b.fingerprint)
                .then(a.rank.cmp(&b.rank))
                .then_with(|| a.member.id.cmp(&b.member.id))
        });
        for same in group.chunk_by(|a, b| a.fingerprint == b.fingerprint) {
            if same.len() < 2 {
                continue;
            }
            let cluster = u32::try_from(clusters.members.len()).unwrap_or(NO_CLUSTER);
            if cluster == NO_CLUSTER {
                break;
            }
            for (position, candidate) in same.iter().enumerate() {
                let address = candidate.member.address;
                let slots = &mut clusters.slots[address.segment_ord as usize];
                if slots.is_empty() {
                    let max_doc = readers[address.segment_ord as usize].max_doc();
                    slots.resize(max_doc as usize, UNCLUSTERED);
                }
                if let Some(slot) = slots.get_mut(address.doc_id as usize) {
                    *slot = Slot {
                        cluster,
                        position: u32::try_from(position).unwrap_or(u32::MAX),
                    };
                }
            }
            clusters.members.push(
                same.iter()
                    .map(|candidate| candidate.member.clone())
                    .collect(),
            );
        }
    }
    Ok(clusters)
}

/// Reads the fingerprint, canonical rank, id and access of every document of `runs`, a
/// segment at a time (the terms of each column looked up in one ordered pass).
fn read_candidates(
    searcher: &Searcher,
    runs: &[&[Keyed]],
) -> tantivy::Result<std::collections::HashMap<(u32, DocId), Candidate>> {
    let mut by_segment: Vec<Vec<DocId>> = vec![Vec::new(); searcher.segment_readers().len()];
    for entry in runs.iter().flat_map(|run| run.iter()) {
        by_segment[entry.segment as usize].push(entry.doc);
    }
    let mut read = std::collections::HashMap::new();
    for (segment, docs) in by_segment.iter_mut().enumerate() {
        if docs.is_empty() {
            continue;
        }
        docs.sort_unstable();
        let reader = searcher.segment_reader(u32::try_from(segment).unwrap_or(u32::MAX));
        let fast = reader.fast_fields();
        let fingerprints = terms_of(fast.str(names::FINGERPRINT)?.as_ref(), docs)?;
        let ids = terms_of(fast.str(names::ID)?.as_ref(), docs)?;
        let access = terms_of(fast.str(names::ACCESS)?.as_ref(), docs)?;
        let ranks = fast.column_opt::<u64>(names::CANONICAL)?;
        for (at, doc) in docs.iter().enumerate() {
            let (Some(fingerprint), Some(id)) = (fingerprints[at].clone(), ids[at].clone()) else {
                continue;
            };
            let segment = u32::try_from(segment).unwrap_or(u32::MAX);
            read.insert(
                (segment, *doc),
                Candidate {
                    fingerprint,
                    rank: ranks
                        .as_ref()
                        .and_then(|ranks| ranks.first(*doc))
                        .unwrap_or(u64::MAX),
                    member: Member {
                        address: DocAddress::new(segment, *doc),
                        id: String::from_utf8_lossy(&id).into_owned(),
                        // Unknown access counts as private: nothing leaks.
                        private: access[at].as_deref() != Some(Access::Public.as_str().as_bytes())
                            && access[at].as_deref()
                                != Some(Access::Restricted.as_str().as_bytes()),
                    },
                },
            );
        }
    }
    Ok(read)
}

/// Returns the term of each of `docs` (sorted) in a single-valued string column.
fn terms_of(column: Option<&StrColumn>, docs: &[DocId]) -> tantivy::Result<Vec<Option<Vec<u8>>>> {
    let Some(column) = column else {
        return Ok(vec![None; docs.len()]);
    };
    let ords: Vec<Option<u64>> = docs.iter().map(|doc| column.ords().first(*doc)).collect();
    let mut sorted: Vec<u64> = ords.iter().flatten().copied().collect();
    sorted.sort_unstable();
    sorted.dedup();
    let mut terms = Vec::with_capacity(sorted.len());
    column
        .dictionary()
        .sorted_ords_to_term_cb(&sorted, |bytes| terms.push(bytes.to_vec()))?;
    Ok(ords
        .into_iter()
        .map(|ord| {
            let ord = ord?;
            let at = sorted.binary_search(&ord).ok()?;
            terms.get(at).cloned()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use formats::audit::Risk;
    use formats::{Access, SkillId};
    use time::OffsetDateTime;

    use super::*;
    use crate::document::tests::skill;
    use crate::{Caller, Filters, Index, IndexConfig, SearchIndex, SearchRequest, SearchResults};

    const SAME: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
    /// Another fingerprint with the same first 8 bytes: told apart, not folded.
    const LOOKALIKE: &str =
        "sha256:1111111111111111222222222222222222222222222222222222222222222222";
    const FORK: &str = "sha256:3333333333333333333333333333333333333333333333333333333333333333";

    fn copy(domain: &str, name: &str, fingerprint: &str, seen: i64) -> Skill {
        let mut record = skill(domain, name, "PDF tools", "Extracts text from PDF files.");
        record.digest_status = DigestStatus::Verified;
        record.fingerprint = Some(fingerprint.parse().unwrap());
        record.first_seen = OffsetDateTime::from_unix_timestamp(seen).unwrap();
        record
    }

    /// Two copies of one skill (b.test seen first, a.test's over HTTPS and verified), a copy of
    /// it on d.test only its publisher's token shows, a fork on c.test, a record whose
    /// fingerprint shares the copies' first 8 bytes, and an unrelated record; committed
    /// `batch` records at a time.
    fn directory(batch: usize) -> SearchIndex {
        let mut plain_http = copy("b.test", "pdf-tools", SAME, 100);
        plain_http.source_url = "http://b.test/pdf-tools/SKILL.md".parse().unwrap();
        let mut hidden = copy("d.test", "pdf-tools", SAME, 50);
        hidden.source_url = "http://d.test/pdf-tools/SKILL.md".parse().unwrap();
        hidden.access = Access::Private;
        let records = [
            copy("a.test", "pdf-kit", SAME, 200),
            plain_http,
            hidden,
            copy("c.test", "pdf-tools", FORK, 10),
            copy("e.test", "pdf-tools", LOOKALIKE, 10),
            skill("f.test", "csv", "CSV", "Cleans CSV tables."),
        ];
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

    fn run(index: &SearchIndex, query: &str, caller: Caller, filters: Filters) -> SearchResults {
        let mut request = SearchRequest::new(query, caller);
        request.filters = filters;
        index.search(&request).unwrap()
    }

    fn hits(results: &SearchResults) -> Vec<(String, usize)> {
        results
            .hits
            .iter()
            .map(|hit| (hit.id.to_string(), hit.copies))
            .collect()
    }

    #[test]
    fn a_search_shows_one_hit_per_cluster_of_copies() {
        for batch in [usize::MAX, 1, 2] {
            let index = directory(batch);
            let found = run(&index, "pdf", Caller::Anonymous, Filters::default());
            let mut shown = hits(&found);
            shown.sort();
            // The canonical copy, with the other copy an anonymous caller sees; the fork and
            // the lookalike stand alone.
            assert_eq!(
                shown,
                [
                    ("a.test/pdf-kit".to_owned(), 1),
                    ("c.test/pdf-tools".to_owned(), 0),
                    ("e.test/pdf-tools".to_owned(), 0)
                ],
                "batch {batch}"
            );
            assert_eq!(found.total, 3);
            // A facet value counts the clusters with a copy that has it: choosing it gives
            // that many.
            for domain in ["a.test", "b.test", "c.test"] {
                assert_eq!(found.facets.domain.get(domain), 1, "{domain}");
                let chosen = Filters {
                    domain: vec![domain.to_owned()],
                    ..Filters::default()
                };
                let narrowed = run(&index, "pdf", Caller::Anonymous, chosen);
                assert_eq!(narrowed.total, 1, "{domain}");
                assert_eq!(narrowed.hits[0].domain.as_str(), domain);
            }
            assert_eq!(found.facets.format.get("agent-skills"), 3);
            // The operator sees the private copy, which was seen first but is not over HTTPS.
            let everyone = run(&index, "pdf", Caller::Authenticated, Filters::default());
            assert!(hits(&everyone).contains(&("a.test/pdf-kit".to_owned(), 2)));
            assert_eq!(everyone.total, 3);
            // Browsing folds too, and a count of the index counts every record.
            assert_eq!(
                run(&index, "", Caller::Anonymous, Filters::default()).total,
                4
            );
            assert_eq!(index.count(Caller::Anonymous).unwrap(), 5);
            let mut unfolded = SearchRequest::new("pdf", Caller::Anonymous);
            unfolded.fold = false;
            assert_eq!(index.search(&unfolded).unwrap().total, 4);
        }
    }

    #[test]
    fn a_cluster_ranks_where_its_best_copy_would() {
        let index = directory(usize::MAX);
        // `pdf-tools` is b.test's copy's exact name; the cluster shows a.test's copy there.
        let found = run(&index, "pdf-tools", Caller::Anonymous, Filters::default());
        assert_eq!(found.hits[0].id.to_string(), "a.test/pdf-kit");
        assert!(found.hits[0].score >= 2.0, "{}", found.hits[0].score);
    }

    #[test]
    fn copies_are_listed_canonical_first_as_the_caller_may_see_them() {
        let index = directory(2);
        let same: Digest = SAME.parse().unwrap();
        let ids = |caller| -> Vec<String> {
            index
                .copies(&same, caller)
                .unwrap()
                .iter()
                .map(|copy| copy.id.to_string())
                .collect()
        };
        assert_eq!(
            ids(Caller::Anonymous),
            ["a.test/pdf-kit", "b.test/pdf-tools"]
        );
        // d.test's copy was seen before b.test's; neither came over HTTPS.
        assert_eq!(
            ids(Caller::Authenticated),
            ["a.test/pdf-kit", "d.test/pdf-tools", "b.test/pdf-tools"]
        );
    }

    #[test]
    fn a_removed_copy_leaves_its_cluster() {
        let Index { mut writer, search } = Index::create_in_ram(IndexConfig::default()).unwrap();
        for record in [
            copy("a.test", "pdf", SAME, 2),
            copy("b.test", "pdf", SAME, 1),
        ] {
            writer.upsert(&record).unwrap();
        }
        writer.commit(1).unwrap();
        // Both verified over HTTPS: the one seen first is shown.
        let found = run(&search, "", Caller::Anonymous, Filters::default());
        assert_eq!(hits(&found), [("b.test/pdf".to_owned(), 1)]);
        writer
            .delete(&"b.test/pdf".parse::<SkillId>().unwrap())
            .unwrap();
        writer.commit(2).unwrap();
        search.reload().unwrap();
        let found = run(&search, "", Caller::Anonymous, Filters::default());
        assert_eq!(hits(&found), [("a.test/pdf".to_owned(), 0)]);
    }

    #[test]
    fn critical_skills_are_listed_only_when_asked_for() {
        let Index { mut writer, search } = Index::create_in_ram(IndexConfig::default()).unwrap();
        let mut flagged = skill("a.test", "helper", "Helper", "Helps.");
        flagged.risk = Risk::Critical;
        let mut noted = skill("a.test", "notes", "Notes", "Takes notes.");
        noted.risk = Risk::Low;
        for record in [flagged, noted] {
            writer.upsert(&record).unwrap();
        }
        writer.commit(1).unwrap();
        let found = run(&search, "", Caller::Anonymous, Filters::default());
        assert_eq!(hits(&found), [("a.test/notes".to_owned(), 0)]);
        // The facet counts what choosing each value gives.
        assert_eq!(found.facets.risk.get("critical"), 1);
        assert_eq!(found.facets.risk.get("low"), 1);
        for (risk, expected) in [("any", 2), ("critical", 1), ("low,critical", 2)] {
            let chosen = Filters {
                risk: vec![risk.to_owned()],
                ..Filters::default()
            };
            assert_eq!(
                run(&search, "", Caller::Anonymous, chosen).total,
                expected,
                "{risk}"
            );
        }
    }

    #[test]
    fn a_verified_https_copy_comes_first_then_the_earliest_seen() {
        let at = |seconds| OffsetDateTime::from_unix_timestamp(seconds).unwrap();
        let mut verified_https = skill("a.test", "pdf", "PDF", "Reads PDFs.");
        verified_https.digest_status = DigestStatus::Verified;
        verified_https.first_seen = at(2_000);
        let mut verified_http = verified_https.clone();
        verified_http.source_url = "http://b.test/pdf/SKILL.md".parse().unwrap();
        verified_http.first_seen = at(1_000);
        let mut absent_earlier = verified_https.clone();
        absent_earlier.digest_status = DigestStatus::Absent;
        absent_earlier.first_seen = at(500);
        let ranks = [&verified_https, &absent_earlier, &verified_http].map(canonical_rank);
        assert!(ranks[0] < ranks[1] && ranks[1] < ranks[2], "{ranks:?}");
        // Times before 1970 are the earliest there are.
        let mut ancient = absent_earlier;
        ancient.first_seen = at(-5);
        assert!(canonical_rank(&ancient) < ranks[1]);
    }
}
