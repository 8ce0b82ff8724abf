//! Relevance evaluation: judged queries, nDCG@k and MRR@k.
//!
//! `indexer/eval/queries.json` holds queries a person would type into a skill directory,
//! each with graded judgements of corpus skills (by id): 3 = exactly what was asked for,
//! 2 = a good answer, 1 = related, unlisted = not relevant. A test runs them over
//! `../shared/corpus` and fails when nDCG@10 drops below a floor; the benchmark
//! (`bench/`) reports the same figures beside a SQLite FTS5 baseline.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The cut-off of the reported metrics.
pub const K: usize = 10;
/// The lowest grade that counts as a relevant answer for MRR.
pub const RELEVANT_GRADE: u8 = 2;

/// One judged query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgedQuery {
    /// What a person types.
    pub query: String,
    /// Skill id -> grade (1-3).
    pub judgements: BTreeMap<String, u8>,
}

/// The judged queries file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Judgements {
    /// The queries.
    pub queries: Vec<JudgedQuery>,
}

impl Judgements {
    /// Parses the judged queries file.
    pub fn from_json(text: &str) -> Result<Judgements, serde_json::Error> {
        serde_json::from_str(text)
    }
}

/// Returns the discounted cumulative gain of `grades` (in rank order) over the first `k`.
fn dcg(grades: impl Iterator<Item = u8>, k: usize) -> f64 {
    grades
        .take(k)
        .enumerate()
        .map(|(rank, grade)| {
            let gain = 2f64.powi(i32::from(grade)) - 1.0;
            // usize -> f64 is exact for any realistic rank.
            gain / (rank as f64 + 2.0).log2()
        })
        .sum()
}

/// Returns nDCG@`k` of the ranked ids against the judgements (0 when nothing is relevant).
pub fn ndcg_at(k: usize, ranked: &[String], judgements: &BTreeMap<String, u8>) -> f64 {
    let grade = |id: &String| judgements.get(id).copied().unwrap_or(0);
    let mut ideal: Vec<u8> = judgements.values().copied().collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let ideal = dcg(ideal.into_iter(), k);
    if ideal == 0.0 {
        return 0.0;
    }
    dcg(ranked.iter().map(grade), k) / ideal
}

/// Returns the reciprocal rank of the first id graded at least [`RELEVANT_GRADE`] within the
/// first `k`, or 0.
pub fn mrr_at(k: usize, ranked: &[String], judgements: &BTreeMap<String, u8>) -> f64 {
    ranked
        .iter()
        .take(k)
        .position(|id| judgements.get(id).copied().unwrap_or(0) >= RELEVANT_GRADE)
        .map_or(0.0, |rank| 1.0 / (rank as f64 + 1.0))
}

/// The figures of one evaluation run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    /// Mean nDCG@[`K`].
    pub ndcg: f64,
    /// Mean MRR@[`K`].
    pub mrr: f64,
    /// Per query: (query, nDCG@K, MRR@K).
    pub per_query: Vec<(String, f64, f64)>,
}

/// Runs every judged query through `search` (which returns ranked ids) and averages.
pub fn evaluate(judgements: &Judgements, mut search: impl FnMut(&str) -> Vec<String>) -> Report {
    let mut report = Report::default();
    for judged in &judgements.queries {
        let ranked = search(&judged.query);
        let ndcg = ndcg_at(K, &ranked, &judged.judgements);
        let mrr = mrr_at(K, &ranked, &judged.judgements);
        report.ndcg += ndcg;
        report.mrr += mrr;
        report.per_query.push((judged.query.clone(), ndcg, mrr));
    }
    let n = judgements.queries.len().max(1) as f64;
    report.ndcg /= n;
    report.mrr /= n;
    report
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::{Caller, Index, IndexConfig, SearchRequest};

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|id| (*id).to_owned()).collect()
    }

    #[test]
    fn metrics_on_known_rankings() {
        let judgements: BTreeMap<String, u8> = [("a".to_owned(), 3), ("b".to_owned(), 1)]
            .into_iter()
            .collect();
        assert!((ndcg_at(10, &ids(&["a", "b"]), &judgements) - 1.0).abs() < 1e-9);
        let swapped = ndcg_at(10, &ids(&["b", "a"]), &judgements);
        assert!(swapped < 1.0 && swapped > 0.5, "{swapped}");
        assert_eq!(ndcg_at(10, &ids(&["x"]), &judgements), 0.0);
        assert_eq!(ndcg_at(10, &ids(&["a"]), &BTreeMap::new()), 0.0);
        assert_eq!(mrr_at(10, &ids(&["x", "b", "a"]), &judgements), 1.0 / 3.0);
        assert_eq!(mrr_at(2, &ids(&["x", "b", "a"]), &judgements), 0.0);
    }

    /// The judged queries shipped with the crate.
    fn judged_queries() -> Judgements {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("eval/queries.json");
        let text = std::fs::read_to_string(&path).unwrap();
        Judgements::from_json(&text).unwrap()
    }

    /// Returns the shared corpus beside the checkout, or `None` with a note.
    #[allow(clippy::print_stderr)]
    pub(crate) fn corpus_dir() -> Option<PathBuf> {
        // The crate is one level below the repository root; the corpus is beside the root.
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
        if dir.join("MANIFEST.json").is_file() {
            Some(dir)
        } else {
            assert!(
                std::env::var_os("CI").is_none(),
                "../shared/corpus is missing: under CI the corpus tests run, they do not skip"
            );
            eprintln!("skipping: ../shared/corpus not found beside the checkout");
            None
        }
    }

    #[test]
    fn the_judged_queries_are_well_formed() {
        let judgements = judged_queries();
        assert!(judgements.queries.len() >= 40);
        for judged in &judgements.queries {
            assert!(!judged.query.trim().is_empty());
            assert!(!judged.judgements.is_empty(), "{}", judged.query);
            assert!(
                judged
                    .judgements
                    .values()
                    .all(|grade| (1..=3).contains(grade)),
                "{}",
                judged.query
            );
            assert!(
                judged
                    .judgements
                    .values()
                    .any(|grade| *grade >= RELEVANT_GRADE),
                "{}",
                judged.query
            );
        }
    }

    /// The nDCG@10 this ranking must keep over the corpus: a little under the measured
    /// figure (see docs/BENCHMARKS.md), so that a ranking regression fails the build.
    const NDCG_FLOOR: f64 = 0.92;
    /// The MRR@10 floor, likewise.
    const MRR_FLOOR: f64 = 0.95;

    #[test]
    #[allow(clippy::print_stderr)]
    fn relevance_over_the_corpus_stays_above_the_floor() {
        let Some(dir) = corpus_dir() else {
            return;
        };
        let judgements = judged_queries();
        let records = crawler::local::corpus_records(&dir).unwrap();
        let Index { mut writer, search } = Index::create_in_ram(IndexConfig::default()).unwrap();
        for record in &records {
            writer.upsert(record).unwrap();
        }
        writer.commit(1).unwrap();
        // Every judged id is a real record, so a typo in the judgements cannot pass silently.
        for judged in &judgements.queries {
            for id in judged.judgements.keys() {
                assert!(
                    search.get(id, Caller::Authenticated).unwrap().is_some(),
                    "{id} (judged for {:?}) is not in the corpus",
                    judged.query
                );
            }
        }
        let report = evaluate(&judgements, |query| {
            let mut request = SearchRequest::new(query, Caller::Anonymous);
            request.limit = K;
            let results = search.search(&request).unwrap();
            results
                .hits
                .into_iter()
                .map(|hit| hit.id.to_string())
                .collect()
        });
        for (query, ndcg, mrr) in &report.per_query {
            eprintln!("{ndcg:.3} {mrr:.3} {query}");
        }
        eprintln!("nDCG@10 {:.4}  MRR@10 {:.4}", report.ndcg, report.mrr);
        assert!(
            report.ndcg >= NDCG_FLOOR,
            "nDCG@10 fell to {:.4}",
            report.ndcg
        );
        assert!(report.mrr >= MRR_FLOOR, "MRR@10 fell to {:.4}", report.mrr);
    }
}
