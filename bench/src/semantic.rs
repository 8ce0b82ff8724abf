//! Semantic retrieval in the benchmark (`--semantic-model PATH`): its relevance on every set
//! beside the words alone and the fair baseline, what a vector costs per record and per query,
//! and the search latency at scale.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indexer::eval::{self, K};
use indexer::{Caller, Embed, Index, IndexConfig, SearchIndex, SearchRequest};

use crate::{Baseline, PREVIOUS_WEIGHTS, RelevanceSet, Result, fts_create, fts_insert, fts_search};

/// The real model, with every vector it made kept (the corpus sets share their records) and
/// the time each took, per kind of text.
pub(crate) struct Timed {
    model: Arc<dyn Embed>,
    cache: Mutex<HashMap<String, Vec<f32>>>,
    /// True while records are written; false while queries are searched.
    pub(crate) indexing: AtomicBool,
    records: Mutex<Vec<Duration>>,
    /// Each query's length in words, and its time.
    queries: Mutex<Vec<(usize, Duration)>>,
}

impl Timed {
    pub(crate) fn new(model: Arc<dyn Embed>) -> Timed {
        Timed {
            model,
            cache: Mutex::default(),
            indexing: AtomicBool::new(true),
            records: Mutex::default(),
            queries: Mutex::default(),
        }
    }

    /// The model itself: every call a transformer pass, nothing kept.
    pub(crate) fn uncached(&self) -> Arc<dyn Embed> {
        Arc::clone(&self.model)
    }
}

impl Embed for Timed {
    fn embed(&self, text: &str) -> Vec<f32> {
        if let Some(vector) = self.cache.lock().expect("cache").get(text) {
            return vector.clone();
        }
        let started = Instant::now();
        let vector = self.model.embed(text);
        let took = started.elapsed();
        if self.indexing.load(Ordering::Relaxed) {
            self.records.lock().expect("times").push(took);
        } else {
            let words = text.split_whitespace().count();
            self.queries.lock().expect("times").push((words, took));
        }
        self.cache
            .lock()
            .expect("cache")
            .insert(text.to_owned(), vector.clone());
        vector
    }

    fn dimensions(&self) -> usize {
        self.model.dimensions()
    }

    fn model_id(&self) -> String {
        self.model.model_id()
    }
}

/// Median and 99th percentile of `times`.
fn percentiles(times: &[Duration]) -> (Duration, Duration) {
    let mut sorted = times.to_vec();
    sorted.sort();
    (
        crate::percentile(&sorted, 0.5),
        crate::percentile(&sorted, 0.99),
    )
}

/// nDCG@10 and MRR@10 of every set with the model, beside the words alone and the stronger
/// fair baseline; then what the model cost per record and per query.
pub(crate) fn relevance(
    sets: &[&RelevanceSet<'_>],
    model: &Arc<Timed>,
    report: &mut String,
) -> Result<()> {
    report.push_str(&format!(
        "### Relevance with semantic retrieval (`--semantic-model`: {})\n\n",
        model.model_id()
    ));
    report.push_str(
        "| set | words nDCG@10 | with the model nDCG@10 | MRR@10 | stronger fair FTS5 nDCG@10 | ratio |\n\
         | --- | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for set in sets {
        let evaluate = |config: IndexConfig| -> Result<eval::Report> {
            let Index { mut writer, search } = Index::create_in_ram(config)?;
            model.indexing.store(true, Ordering::Relaxed);
            for record in set.records {
                writer.upsert(record)?;
            }
            writer.commit(1)?;
            model.indexing.store(false, Ordering::Relaxed);
            Ok(eval::evaluate(set.judgements, |query| {
                let mut request = SearchRequest::new(query, Caller::Anonymous);
                request.limit = K;
                search
                    .search(&request)
                    .expect("search never fails on user text")
                    .hits
                    .iter()
                    .map(|hit| hit.id.to_string())
                    .collect()
            }))
        };
        let words = evaluate(IndexConfig::default())?;
        let fused = evaluate(IndexConfig {
            model: Some(Arc::clone(model) as Arc<dyn Embed>),
            ..IndexConfig::default()
        })?;
        let fts = rusqlite::Connection::open_in_memory()?;
        fts_create(&fts)?;
        fts_insert(&fts, set.records.iter().cloned())?;
        let fair = [indexer::FIELD_WEIGHTS, PREVIOUS_WEIGHTS]
            .map(|weights| {
                eval::evaluate(set.judgements, |query| {
                    fts_search(&fts, query, K, Baseline::Fair(weights)).expect("fts5 query")
                })
                .ndcg
            })
            .into_iter()
            .fold(0.0, f64::max);
        report.push_str(&format!(
            "| {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.2}× |\n",
            set.name,
            words.ndcg,
            fused.ndcg,
            fused.mrr,
            fair,
            fused.ndcg / fair
        ));
    }
    let (record_p50, record_p99) = percentiles(&model.records.lock().expect("times"));
    let timed_queries = model.queries.lock().expect("times").clone();
    let query_times: Vec<Duration> = timed_queries.iter().map(|(_, took)| *took).collect();
    let (query_p50, query_p99) = percentiles(&query_times);
    let records = model.records.lock().expect("times").len();
    report.push_str(&format!(
        "\nThe model's cost on one thread: {records} records, median {} (p99 {}): about {:.0} \
         records/s per core; {} queries, median {} (p99 {}).\n\n",
        crate::ms(record_p50),
        crate::ms(record_p99),
        1.0 / record_p50.as_secs_f64().max(1e-9),
        query_times.len(),
        crate::ms(query_p50),
        crate::ms(query_p99),
    ));
    report.push_str(
        "A query's vector by the query's length in words:\n\n\
         | words | queries | median | p99 |\n| --- | ---: | ---: | ---: |\n",
    );
    for (low, high) in [(1, 3), (4, 6), (7, 9), (10, 20), (21, 40), (41, usize::MAX)] {
        let times: Vec<Duration> = timed_queries
            .iter()
            .filter(|(words, _)| (low..=high).contains(words))
            .map(|(_, took)| *took)
            .collect();
        if times.is_empty() {
            continue;
        }
        let (p50, p99) = percentiles(&times);
        let words = if high == usize::MAX {
            format!("{low} or more")
        } else {
            format!("{low}–{high}")
        };
        report.push_str(&format!(
            "| {words} | {} | {} | {} |\n",
            times.len(),
            crate::ms(p50),
            crate::ms(p99)
        ));
    }
    report.push('\n');
    Ok(())
}

/// A stand-in model for the records of the scale run: a unit vector per text from its hash
/// (a transformer pass for each of 100,000 records would take most of an hour here; what a
/// search costs does not depend on the vectors' values). It answers to the real model's
/// name, and hands queries to the real model once `real` is set.
pub(crate) struct StandIn {
    real: Arc<dyn Embed>,
    pub(crate) queries_real: AtomicBool,
}

impl StandIn {
    pub(crate) fn new(real: Arc<dyn Embed>) -> StandIn {
        StandIn {
            real,
            queries_real: AtomicBool::new(false),
        }
    }
}

impl Embed for StandIn {
    fn embed(&self, text: &str) -> Vec<f32> {
        if self.queries_real.load(Ordering::Relaxed) {
            return self.real.embed(text);
        }
        // FNV-1a, then xorshift: a fixed vector per text.
        let mut state = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        }) | 1;
        let mut vector: Vec<f32> = (0..self.real.dimensions())
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state % 2001) as f32 / 1000.0 - 1.0
            })
            .collect();
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-9);
        for x in &mut vector {
            *x /= norm;
        }
        vector
    }

    fn dimensions(&self) -> usize {
        self.real.dimensions()
    }

    fn model_id(&self) -> String {
        self.real.model_id()
    }
}

/// One client's latency over the same index, words alone and with the model.
pub(crate) fn latency(
    index_dir: &std::path::Path,
    stand_in: &Arc<StandIn>,
    queries: &[String],
    rounds: usize,
    page: usize,
    report: &mut String,
) -> Result<()> {
    stand_in.queries_real.store(true, Ordering::Relaxed);
    let words = SearchIndex::open(index_dir)?;
    let with_model =
        SearchIndex::open(index_dir)?.with_model(Arc::clone(stand_in) as Arc<dyn Embed>)?;
    // The timed rounds repeat the queries: a reader that remembered their vectors would
    // measure the next page of a search, not a new query. Both are shown.
    let semantic = with_model.clone().remembering_queries(0);
    // Room for every query of the set, so that the rounds after the warm-up find each one.
    let remembering = with_model
        .clone()
        .remembering_queries(queries.len().max(indexer::semantic::RECENT_QUERIES));
    report.push_str(
        "| search | clients | p50 | p99 | mean | queries/s | CPU time p50 | CPU time p99 |\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for (name, search) in [
        ("words alone", &words),
        ("with the model", &semantic),
        ("with the model, the query's vector remembered", &remembering),
    ] {
        let stats = crate::measure(1, rounds, queries, || {
            let search = search.clone();
            move |query: &str| {
                let mut request = SearchRequest::new(query, Caller::Anonymous);
                request.limit = page;
                search
                    .search(&request)
                    .expect("search never fails on user text");
            }
        });
        report.push_str(&format!(
            "| {name} | 1 | {} | {} | {} | {:.0} | {} | {} |\n",
            crate::ms(stats.p50),
            crate::ms(stats.p99),
            crate::ms(stats.mean),
            stats.qps,
            crate::ms(stats.cpu_p50),
            crate::ms(stats.cpu_p99)
        ));
    }
    report.push('\n');
    Ok(())
}
