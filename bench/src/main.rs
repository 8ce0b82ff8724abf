//! Search benchmark: relevance (nDCG@10, MRR@10) over the shared corpus and build time and
//! query latency at scale, for the indexer and for a SQLite FTS5 baseline, in one run.
//!
//! ```sh
//! cargo run --release --manifest-path bench/Cargo.toml -- [--corpus ../shared/corpus]
//!     [--records 100000] [--rounds 3]
//! cargo run --release --manifest-path bench/Cargo.toml -- --relevance-only [--tuning] [-v]
//! EXPLAIN="make my container image smaller" cargo run --release --manifest-path bench/Cargo.toml -- --relevance-only --tuning
//! ```
//!
//! `--dump-rankings DIR` also writes, per relevance set, the records' searchable text, the
//! judgements, the indexer's and the fair baseline's top 100 for every query
//! (`DIR/<set>.json`): the input of
//! `bench/semantic.py`, which measures a sentence-embedding model fused with the ranking.
//!
//! `EXPLAIN=query` also prints the indexer's and the fair baseline's top ten for that query
//! over the corpus (over the development set's services with `EXPLAIN_SET=dev`).
//!
//! Relevance runs fourteen sets, each against the same two FTS5 baselines: the regression set
//! (`indexer/eval/queries.json`), twelve held-out sets written blind
//! (`indexer/eval/heldout.json`, since tuned on; `heldout-2.json` to `heldout-12.json`, never
//! tuned on: `--tuning` leaves these eleven out) and `../shared/relevance-dev`.
//!
//! Prints a Markdown report (the "Search" section of docs/BENCHMARKS.md).

mod semantic;

use std::error::Error;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use formats::site::{Body, FetchFailure, Reply, Request, SiteCrawl, SiteOptions};
use formats::{Code, Skill, SkillId, Slug};
use indexer::eval::{self, Judgements, K};
use indexer::{Caller, Embed as _, FieldWeights, Index, IndexConfig, SearchIndex, SearchRequest};
use rusqlite::Connection;
use time::OffsetDateTime;
use url::Url;

type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// The held-out sets written blind and never tuned on (`--tuning` leaves them out), by
/// number: `indexer/eval/heldout-N.json`.
const BLIND_SETS: std::ops::RangeInclusive<usize> = 2..=12;

/// The first held-out set, since tuned on (`--heldout` puts another file in its place).
const HELDOUT: &str = "indexer/eval/heldout.json";

/// Concurrent clients of the second latency run.
const CLIENTS: usize = 8;

struct Args {
    corpus: PathBuf,
    queries: PathBuf,
    heldout: PathBuf,
    dev: PathBuf,
    /// Only the relevance part (for tuning).
    relevance_only: bool,
    /// Print every query's figures.
    verbose: bool,
    /// Leaves the blind held-out sets ([`BLIND_SETS`]) out: while tuning, they must not steer the
    /// ranking.
    tuning: bool,
    records: usize,
    rounds: usize,
    /// Hits per query in the latency runs (the API's default page is 20).
    page: usize,
    /// Skips the relevance part.
    skip_relevance: bool,
    /// Skips the baseline's build and latency runs (for profiling the indexer alone).
    skip_baseline: bool,
    /// Where to write each set's records, judgements and rankings (`--dump-rankings`).
    dump: Option<PathBuf>,
    /// The sentence-embedding model to measure (`--semantic-model PATH`).
    semantic: Option<Arc<semantic::Timed>>,
}

fn args() -> Result<Args> {
    let mut args = Args {
        corpus: PathBuf::from("../shared/corpus"),
        queries: PathBuf::from("indexer/eval/queries.json"),
        heldout: PathBuf::from(HELDOUT),
        dev: PathBuf::from("../shared/relevance-dev"),
        relevance_only: false,
        verbose: false,
        tuning: false,
        records: 100_000,
        rounds: 3,
        page: 20,
        skip_relevance: false,
        skip_baseline: false,
        dump: None,
        semantic: None,
    };
    let mut raw = std::env::args().skip(1);
    while let Some(flag) = raw.next() {
        if flag == "--skip-relevance" {
            args.skip_relevance = true;
            continue;
        }
        if flag == "--skip-baseline" {
            args.skip_baseline = true;
            continue;
        }
        if flag == "--relevance-only" {
            args.relevance_only = true;
            continue;
        }
        if flag == "-v" {
            args.verbose = true;
            continue;
        }
        if flag == "--tuning" {
            args.tuning = true;
            continue;
        }
        let value = raw.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--corpus" => args.corpus = PathBuf::from(value),
            "--queries" => args.queries = PathBuf::from(value),
            "--heldout" => args.heldout = PathBuf::from(value),
            "--dev" => args.dev = PathBuf::from(value),
            "--records" => args.records = value.parse()?,
            "--rounds" => args.rounds = value.parse()?,
            "--page" => args.page = value.parse()?,
            "--dump-rankings" => args.dump = Some(PathBuf::from(value)),
            "--semantic-model" => {
                let model = indexer::embed::Embedder::load(value.as_ref())
                    .map_err(|error| format!("--semantic-model {value}: {error}"))?;
                args.semantic = Some(Arc::new(semantic::Timed::new(Arc::new(model))));
            }
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    Ok(args)
}

fn main() -> Result<()> {
    let args = args()?;
    let corpus = corpus_records(&args.corpus)?;
    let judgements = Judgements::from_json(&std::fs::read_to_string(&args.queries)?)?;
    let mut report = String::new();
    let machine = format!(
        "{} cores, {}",
        std::thread::available_parallelism().map_or(0, usize::from),
        std::env::consts::ARCH
    );
    report.push_str(&format!(
        "Corpus: {} records from `{}`; {} judged queries; machine: {machine}.\n\n",
        corpus.len(),
        args.corpus.display(),
        judgements.queries.len()
    ));

    // The first held-out set: judged in the relevance run, and its task descriptions are in
    // the latency workload.
    let heldout = Judgements::from_json(&std::fs::read_to_string(&args.heldout)?)?;
    if !args.skip_relevance {
        let blind = if args.tuning {
            Vec::new()
        } else {
            BLIND_SETS
                .map(|number| {
                    let path = format!("indexer/eval/heldout-{number}.json");
                    let judgements = Judgements::from_json(&std::fs::read_to_string(&path)?)?;
                    let name = format!("held-out {number} ({path}, frozen, never tuned on)");
                    Ok((format!("held-out-{number}"), name, judgements))
                })
                .collect::<Result<Vec<_>>>()?
        };
        let dev_records = corpus_records(&args.dev.join("web"))?;
        let dev = dev_judgements(&args.dev.join("qrels.json"))?;
        let mut sets = vec![
            RelevanceSet {
                key: "regression".to_owned(),
                name: "regression (indexer/eval/queries.json, tuned on)".to_owned(),
                records: &corpus,
                judgements: &judgements,
            },
            if args.heldout.ends_with(HELDOUT) {
                RelevanceSet {
                    key: "held-out".to_owned(),
                    name: "held-out (indexer/eval/heldout.json, frozen, since tuned on)".to_owned(),
                    records: &corpus,
                    judgements: &heldout,
                }
            } else {
                // Another file in the first held-out set's place: named, and dumped, as itself.
                let stem = args.heldout.file_stem().unwrap_or_default().to_string_lossy();
                RelevanceSet {
                    key: format!("given-{stem}"),
                    name: format!("held-out ({}, given with --heldout)", args.heldout.display()),
                    records: &corpus,
                    judgements: &heldout,
                }
            },
        ];
        sets.extend(blind.iter().map(|(key, name, judgements)| RelevanceSet {
            key: key.clone(),
            name: name.clone(),
            records: &corpus,
            judgements,
        }));
        sets.push(RelevanceSet {
            key: "dev".to_owned(),
            name: "relevance-dev (MetaTool, skill-sharing services, tuned on)".to_owned(),
            records: &dev_records,
            judgements: &dev,
        });
        let sets: Vec<&RelevanceSet<'_>> = sets.iter().collect();
        if let Ok(query) = std::env::var("EXPLAIN") {
            let over_dev = std::env::var("EXPLAIN_SET").is_ok_and(|set| set == "dev");
            explain(if over_dev { &dev_records } else { &corpus }, &query)?;
        }
        relevance(&sets, args.verbose, &mut report)?;
        if let Some(model) = &args.semantic {
            semantic::relevance(&sets, model, &mut report)?;
        }
        if let Some(dir) = &args.dump {
            for set in &sets {
                dump_rankings(set, dir)?;
            }
        }
    }
    if !args.relevance_only {
        scale(&args, &corpus, &judgements, &heldout, &mut report)?;
    }
    #[allow(clippy::print_stdout)]
    {
        println!("{report}");
    }
    Ok(())
}

/// Reads every domain of the corpus (`<dir>/<domain>/.well-known/...`, in domain order)
/// through the site pipeline a crawl runs ([`formats::site`]), answering each URL with the
/// file it names below the domain's folder: the records a crawl of the corpus would build.
fn corpus_records(dir: &Path) -> Result<Vec<Skill>> {
    let mut domains: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.join(".well-known").is_dir())
        .collect();
    domains.sort();
    let options = SiteOptions {
        seen_at: OffsetDateTime::UNIX_EPOCH,
        prefetch_files: true,
        audit: true,
    };
    let mut records = Vec::new();
    for root in domains {
        let name = root
            .file_name()
            .and_then(|name| name.to_str())
            .ok_or_else(|| format!("{} is not a domain name", root.display()))?;
        let base = Url::parse(&format!("https://{}/", name.to_ascii_lowercase()))?;
        let site = SiteCrawl::probe(vec![base.clone()], options);
        records.extend(site.run(|request| read_file(&root, &base, request)).records);
    }
    Ok(records)
}

/// Answers a request of the site pipeline with the file below `root` that its URL names:
/// only URLs on the site's host, never a path out of `root`, at most the request's limit.
fn read_file(root: &Path, base: &Url, request: &Request) -> Reply {
    let url = &request.url;
    if url.host_str() != base.host_str() {
        return Err(FetchFailure::new(Code::Unfetched, url, "not in the corpus"));
    }
    let mut file = root.to_path_buf();
    for segment in url.path_segments().into_iter().flatten() {
        match formats::site::decode_path_segment(segment) {
            Some(segment)
                if !matches!(segment.as_str(), "" | "." | "..")
                    && !segment.contains(['/', '\\']) =>
            {
                file.push(segment);
            }
            _ => {
                return Err(FetchFailure::new(
                    Code::NotFound,
                    url,
                    "not a file of the corpus",
                ));
            }
        }
    }
    match std::fs::read(&file) {
        Ok(bytes) if bytes.len() <= request.limit => Ok(Body {
            url: url.clone(),
            bytes,
            content_type: None,
            link_header: None,
        }),
        Ok(_) => Err(FetchFailure::new(
            Code::TooLarge,
            url,
            "over the size limit",
        )),
        Err(error) => Err(FetchFailure::new(Code::NotFound, url, error.to_string())),
    }
}

/// One relevance set: the records searched and the judged queries.
struct RelevanceSet<'a> {
    /// The file name of the set's dump (`--dump-rankings`).
    key: String,
    name: String,
    records: &'a [Skill],
    judgements: &'a Judgements,
}

/// How many of the indexer's hits a dump keeps per query.
const DUMP_DEPTH: usize = 100;

/// Writes `dir/<set>.json`: every record's searchable text (title, description, tags, declared
/// inputs, body), and per query its judgements and the indexer's (`ranked`) and the fair
/// baseline's (`fair`) top [`DUMP_DEPTH`] ids.
fn dump_rankings(set: &RelevanceSet<'_>, dir: &Path) -> Result<()> {
    let Index { mut writer, search } = Index::create_in_ram(IndexConfig::default())?;
    for record in set.records {
        writer.upsert(record)?;
    }
    writer.commit(1)?;
    let fts = Connection::open_in_memory()?;
    fts_create(&fts)?;
    fts_insert(&fts, set.records.iter().cloned())?;
    let mut queries = Vec::new();
    for judged in &set.judgements.queries {
        let mut request = SearchRequest::new(&judged.query, Caller::Anonymous);
        request.limit = DUMP_DEPTH;
        let ranked: Vec<String> = search
            .search(&request)?
            .hits
            .iter()
            .map(|hit| hit.id.to_string())
            .collect();
        queries.push(serde_json::json!({
            "query": judged.query,
            "judgements": judged.judgements,
            "ranked": ranked,
            "fair": fts_search(&fts, &judged.query, DUMP_DEPTH, Baseline::Fair(indexer::FIELD_WEIGHTS))?,
        }));
    }
    let records: Vec<serde_json::Value> = set
        .records
        .iter()
        .map(|record| {
            let inputs: Vec<&serde_json::Value> = record
                .frontmatter
                .get("inputs")
                .and_then(serde_json::Value::as_array)
                .map(|inputs| {
                    inputs
                        .iter()
                        .filter_map(|input| input.get("description"))
                        .collect()
                })
                .unwrap_or_default();
            serde_json::json!({
                "id": record.id.to_string(),
                "title": record.title,
                "description": record.description,
                "tags": record.tags,
                "inputs": inputs,
                "body": record.body,
            })
        })
        .collect();
    std::fs::create_dir_all(dir)?;
    let document = serde_json::json!({"set": set.name, "records": records, "queries": queries});
    std::fs::write(
        dir.join(format!("{}.json", set.key)),
        serde_json::to_vec(&document)?,
    )?;
    Ok(())
}

/// Reads `../shared/relevance-dev/qrels.json` as judged queries.
fn dev_judgements(path: &Path) -> Result<Judgements> {
    let qrels: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let mut queries = Vec::new();
    for query in qrels["queries"]
        .as_array()
        .ok_or("qrels.json has no queries")?
    {
        let judgements = query["relevant"]
            .as_array()
            .ok_or("a query without judgements")?
            .iter()
            .filter_map(|judged| {
                Some((
                    judged["key"].as_str()?.to_owned(),
                    u8::try_from(judged["grade"].as_u64()?).ok()?,
                ))
            })
            .collect();
        queries.push(eval::JudgedQuery {
            query: query["query"]
                .as_str()
                .ok_or("a query without text")?
                .to_owned(),
            judgements,
        });
    }
    Ok(Judgements { queries })
}

/// nDCG@10 and MRR@10 of the indexer and the baselines over each set, in one run.
fn relevance(sets: &[&RelevanceSet<'_>], verbose: bool, report: &mut String) -> Result<()> {
    report.push_str("### Relevance (same run, same queries)\n\n");
    report.push_str(
        "| set | queries | indexer nDCG@10 | MRR@10 | fair FTS5 nDCG@10 | MRR@10 | fair FTS5, previous weights | ratio | plain FTS5 nDCG@10 |\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    let mut weakest = String::new();
    let mut by_length = String::new();
    for set in sets {
        let Index { mut writer, search } = Index::create_in_ram(IndexConfig::default())?;
        for record in set.records {
            writer.upsert(record)?;
        }
        writer.commit(1)?;
        let ours = eval::evaluate(set.judgements, |query| {
            let mut request = SearchRequest::new(query, Caller::Anonymous);
            request.limit = K;
            let results = search
                .search(&request)
                .expect("search never fails on user text");
            results.hits.iter().map(|hit| hit.id.to_string()).collect()
        });
        let fts = Connection::open_in_memory()?;
        fts_create(&fts)?;
        fts_insert(&fts, set.records.iter().cloned())?;
        let fair = eval::evaluate(set.judgements, |query| {
            fts_search(&fts, query, K, Baseline::Fair(indexer::FIELD_WEIGHTS)).expect("fts5 query")
        });
        let previous = eval::evaluate(set.judgements, |query| {
            fts_search(&fts, query, K, Baseline::Fair(PREVIOUS_WEIGHTS)).expect("fts5 query")
        });
        let stronger = fair.ndcg.max(previous.ndcg);
        let plain = eval::evaluate(set.judgements, |query| {
            fts_search(&fts, query, K, Baseline::Plain).expect("fts5 query")
        });
        report.push_str(&format!(
            "| {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.2}× | {:.3} |\n",
            set.name,
            set.judgements.queries.len(),
            ours.ndcg,
            ours.mrr,
            fair.ndcg,
            fair.mrr,
            previous.ndcg,
            ours.ndcg / stronger,
            plain.ndcg
        ));
        by_length.push_str(&length_bands(&set.name, &ours, &fair, &previous));
        let mut worst: Vec<_> = ours.per_query.iter().zip(&fair.per_query).collect();
        worst.sort_by(|a, b| a.0.1.total_cmp(&b.0.1));
        let listed: Vec<String> = worst
            .iter()
            .take(if verbose { worst.len() } else { 5 })
            .map(|((query, ndcg, _), (_, baseline, _))| {
                format!("`{query}` {ndcg:.2} (baseline {baseline:.2})")
            })
            .collect();
        weakest.push_str(&format!(
            "- {}: {}\n",
            set.name,
            listed.join(if verbose { "\n  " } else { ", " })
        ));
    }
    report.push_str(
        "\nFair FTS5: SQLite FTS5 (`porter unicode61`) over the same fields with the indexer's \
         field weights (`indexer::FIELD_WEIGHTS`), the query's informative words \
         (`indexer::informative_words`: stop words and task boilerplate removed) OR-combined, \
         the last word also as a prefix, ranked by bm25; also run with the indexer's previous \
         weights (name 3, tools 1.5, body 1), and the ratio is to the stronger of the two. \
         Plain FTS5: every query word, equal weights.\n\nWeakest queries for the indexer (nDCG@10):\n\n",
    );
    report.push_str(&weakest);
    report.push_str(&format!(
        "\nBy the length of the query as typed (nDCG@10; the baseline the stronger of the two fair \
         ones over the same queries):\n\n\
         | set | queries of 1–{SHORT_WORDS} words | indexer | fair FTS5 | queries of {} words or more | indexer | fair FTS5 |\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n",
        SHORT_WORDS + 1
    ));
    report.push_str(&by_length);
    report.push('\n');
    Ok(())
}

/// The longest query, in words as typed, that counts as short in the report by length.
const SHORT_WORDS: usize = 9;

/// One row of the report by query length: the set's short and long queries, each with the
/// indexer's mean nDCG@10 and the stronger fair baseline's over the same queries.
fn length_bands(
    name: &str,
    ours: &eval::Report,
    fair: &eval::Report,
    previous: &eval::Report,
) -> String {
    let band = |long: bool| -> (usize, f64, f64) {
        let picked: Vec<usize> = (0..ours.per_query.len())
            .filter(|&i| (ours.per_query[i].0.split_whitespace().count() > SHORT_WORDS) == long)
            .collect();
        let mean = |report: &eval::Report| {
            picked.iter().map(|&i| report.per_query[i].1).sum::<f64>() / picked.len().max(1) as f64
        };
        (picked.len(), mean(ours), mean(fair).max(mean(previous)))
    };
    let cells = |(count, ours, baseline): (usize, f64, f64)| {
        if count == 0 {
            "0 | – | –".to_owned()
        } else {
            format!("{count} | {ours:.3} | {baseline:.3}")
        }
    };
    format!(
        "| {name} | {} | {} |\n",
        cells(band(false)),
        cells(band(true))
    )
}

/// Prints the top ten of the indexer and the fair baseline for one query (`EXPLAIN=…`).
#[allow(clippy::print_stdout)]
fn explain(records: &[Skill], query: &str) -> Result<()> {
    let Index { mut writer, search } = Index::create_in_ram(IndexConfig::default())?;
    for record in records {
        writer.upsert(record)?;
    }
    writer.commit(1)?;
    let mut request = SearchRequest::new(query, Caller::Anonymous);
    request.limit = K;
    for hit in search.search(&request)?.hits {
        println!("ours {:.3} {}", hit.score, hit.id);
    }
    let fts = Connection::open_in_memory()?;
    fts_create(&fts)?;
    fts_insert(&fts, records.iter().cloned())?;
    for id in fts_search(&fts, query, K, Baseline::Fair(indexer::FIELD_WEIGHTS))? {
        println!("fts  {id}");
    }
    Ok(())
}

/// Build time and query latency at scale.
fn scale(
    args: &Args,
    corpus: &[Skill],
    judgements: &Judgements,
    tasks: &Judgements,
    report: &mut String,
) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let records = args.records;
    let index_dir = dir.path().join("index");
    let (ours_build, ours_build_merged) = write_variants(&index_dir, corpus, records, None)?;
    let search = SearchIndex::open(&index_dir)?;
    assert_eq!(search.num_docs(), records as u64);

    let started = Instant::now();
    let fts_path = dir.path().join("fts.sqlite");
    if !args.skip_baseline {
        let fts = Connection::open(&fts_path)?;
        fts.pragma_update(None, "journal_mode", "WAL")?;
        fts.pragma_update(None, "synchronous", "NORMAL")?;
        fts_create(&fts)?;
        fts_insert(&fts, variants(corpus, records))?;
        fts.execute("INSERT INTO skills(skills) VALUES('optimize')", [])?;
    }
    let fts_build = started.elapsed();

    report.push_str(&format!(
        "### Index build, {records} records (the corpus's {} records and synthesised variants)\n\n",
        corpus.len()
    ));
    report.push_str("| engine | build | records/s |\n| --- | ---: | ---: |\n");
    report.push_str(&format!(
        "| indexer (commit every {} records, then merges finished) | {:.1} s ({:.1} s before merges) | {:.0} |\n",
        indexer::DEFAULT_SYNC_BATCH,
        ours_build_merged.as_secs_f64(),
        ours_build.as_secs_f64(),
        records as f64 / ours_build_merged.as_secs_f64()
    ));
    if !args.skip_baseline {
        report.push_str(&format!(
            "| SQLite FTS5 (one transaction, then optimize) | {:.1} s | {:.0} |\n",
            fts_build.as_secs_f64(),
            records as f64 / fts_build.as_secs_f64()
        ));
    }
    report.push('\n');

    // Query latency at scale.
    let queries = latency_queries(judgements, tasks);
    report.push_str(&format!(
        "### Query latency, {records} records, {} queries × {} rounds per client\n\n",
        queries.len(),
        args.rounds
    ));
    report.push_str(
        "The indexer's figure is a whole `/v1/search` answer: top 20 by tier and BM25, total, \
         five facets and snippets, as an anonymous caller. The baseline's is top 20 by bm25 \
         with a snippet, nothing else.\n\n",
    );
    let load_before = load_average().unwrap_or_else(|| "unknown".to_owned());
    report.push_str(
        "| engine | clients | p50 | p99 | mean | queries/s | CPU time p50 | CPU time p99 |\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    let mut summary = Vec::new();
    for clients in [1, CLIENTS] {
        let ours = measure(clients, args.rounds, &queries, || {
            let search = search.clone();
            move |query: &str| {
                let mut request = SearchRequest::new(query, Caller::Anonymous);
                request.limit = args.page;
                search
                    .search(&request)
                    .expect("search never fails on user text");
            }
        });
        if args.skip_baseline {
            report.push_str(&format!(
                "| indexer | {clients} | {} | {} | {} | {:.0} | {} | {} |\n",
                ms(ours.p50),
                ms(ours.p99),
                ms(ours.mean),
                ours.qps,
                ms(ours.cpu_p50),
                ms(ours.cpu_p99)
            ));
            summary.push((clients, ours, None));
            continue;
        }
        let fts = measure(clients, args.rounds, &queries, || {
            let connection = Connection::open(&fts_path).expect("open the fts5 database");
            move |query: &str| {
                fts_search(
                    &connection,
                    query,
                    args.page,
                    Baseline::Fair(indexer::FIELD_WEIGHTS),
                )
                .expect("fts5 query");
            }
        });
        for (name, stats) in [("indexer", &ours), ("SQLite FTS5", &fts)] {
            report.push_str(&format!(
                "| {name} | {clients} | {} | {} | {} | {:.0} | {} | {} |\n",
                ms(stats.p50),
                ms(stats.p99),
                ms(stats.mean),
                stats.qps,
                ms(stats.cpu_p50),
                ms(stats.cpu_p99)
            ));
        }
        summary.push((clients, ours, Some(fts)));
    }
    report.push_str(&format!(
        "\nLoad average (1 min) before and after the latency runs: {load_before} and {}. The \
         CPU time columns are each query's own time on a core (from \
         `CLOCK_THREAD_CPUTIME_ID`), which other work on the machine does not inflate.\n\n",
        load_average().unwrap_or_else(|| "unknown".to_owned())
    ));
    if let Some((_, ours, _)) = summary.first() {
        report.push_str(&format!(
            "Slowest queries for the indexer (1 client): {}.\n\n",
            ours.slowest.join(", ")
        ));
    }
    for (clients, ours, fts) in &summary {
        report.push_str(&format!(
            "- indexer, {clients} client{}, {}.\n",
            if *clients == 1 { "" } else { "s" },
            by_length(ours)
        ));
        if let Some(fts) = fts {
            report.push_str(&format!(
                "- SQLite FTS5, {clients} client{}, {}.\n",
                if *clients == 1 { "" } else { "s" },
                by_length(fts)
            ));
        }
    }
    report.push('\n');
    for (clients, ours, fts) in summary {
        let Some(fts) = fts else { continue };
        report.push_str(&format!(
            "- {clients} client{}: p99 {} vs {} ({}), p50 {} vs {} ({}), throughput {:.1}× the baseline's.\n",
            if clients == 1 { "" } else { "s" },
            ms(ours.p99),
            ms(fts.p99),
            compare(ours.p99, fts.p99),
            ms(ours.p50),
            ms(fts.p50),
            compare(ours.p50, fts.p50),
            ours.qps / fts.qps
        ));
    }
    if let Some(model) = &args.semantic {
        semantic_scale(
            &dir.path().join("semantic"),
            args,
            corpus,
            model,
            &queries,
            report,
        )?;
    }
    Ok(())
}

/// Writes `records` variants of the corpus to an index in `dir` (with `model`'s vectors, if
/// given), committing every sync batch as a sync does; returns the time until the last
/// commit and until the merges finished.
fn write_variants(
    dir: &Path,
    corpus: &[Skill],
    records: usize,
    model: Option<Arc<dyn indexer::Embed>>,
) -> Result<(Duration, Duration)> {
    let started = Instant::now();
    let Index { mut writer, .. } = Index::open_or_create(
        dir,
        IndexConfig {
            writer_memory_bytes: 256 * 1024 * 1024,
            model,
            ..IndexConfig::default()
        },
    )?;
    let mut seq = 0;
    for record in variants(corpus, records) {
        writer.upsert(&record)?;
        seq += 1;
        if seq % indexer::DEFAULT_SYNC_BATCH as u64 == 0 {
            writer.commit(seq)?;
        }
    }
    writer.commit(seq)?;
    let committed = started.elapsed();
    writer.finish()?;
    Ok((committed, started.elapsed()))
}

/// Search latency at scale with semantic retrieval: the same records, each with a vector
/// (from [`semantic::StandIn`]), searched with words alone and with the model.
fn semantic_scale(
    dir: &Path,
    args: &Args,
    corpus: &[Skill],
    model: &Arc<semantic::Timed>,
    queries: &[String],
    report: &mut String,
) -> Result<()> {
    let records = args.records;
    // The model itself, not its timed cache: the timed rounds repeat every query, and a
    // kept vector would leave the query's transformer pass out of the search it belongs to.
    let stand_in = Arc::new(semantic::StandIn::new(model.uncached()));
    write_variants(
        dir,
        corpus,
        records,
        Some(Arc::clone(&stand_in) as Arc<dyn indexer::Embed>),
    )?;
    report.push_str(&format!(
        "### Semantic retrieval at {records} records, {} queries × {} rounds, one client\n\n\
         Every record has a {}-dimension vector (from a stand-in: the search's cost does not \
         depend on the values); each query is embedded by the model, in the search.\n\n",
        queries.len(),
        args.rounds,
        model.dimensions()
    ));
    semantic::latency(dir, &stand_in, queries, args.rounds, args.page, report)
}

/// Returns `count` records: the corpus, then variants of it on other domains, each with a
/// few extra description words so that no two are identical; one variant in ten keeps its
/// record's content fingerprint (a copy: searches fold it into its record's cluster).
fn variants(corpus: &[Skill], count: usize) -> impl Iterator<Item = Skill> + '_ {
    let vocabulary: Vec<&str> = corpus
        .iter()
        .flat_map(|skill| skill.description.split_whitespace())
        .filter(|word| word.len() > 3 && word.chars().all(char::is_alphabetic))
        .collect();
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    (0..count).map(move |n| {
        let base = &corpus[n % corpus.len()];
        let copy = n / corpus.len();
        let mut skill = base.clone();
        if copy == 0 {
            return skill;
        }
        let domain: formats::Domain = format!("m{copy}.{}", base.domain)
            .parse()
            .expect("a subdomain of a valid domain is valid");
        let slug: Slug = format!("{}-{copy}", base.name)
            .parse()
            .expect("a suffixed slug is valid");
        skill.id = SkillId::new(domain.clone(), slug.clone());
        skill.domain = domain;
        skill.name = slug;
        // One variant in ten is a copy of its record published elsewhere (the same content,
        // so the search folds it into its record's cluster); the others are other skills.
        if copy % 10 != 0 {
            skill.fingerprint = skill
                .fingerprint
                .map(|fingerprint| formats::Digest::of(format!("{fingerprint} {copy}").as_bytes()));
        }
        for _ in 0..3 {
            // xorshift: a fixed, cheap sequence, so every run indexes the same text.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            if !vocabulary.is_empty() {
                skill.description.push(' ');
                skill
                    .description
                    .push_str(vocabulary[(state % vocabulary.len() as u64) as usize]);
            }
        }
        skill
    })
}

/// The FTS5 columns after `id`, in order: the indexer's fields.
const FTS_COLUMNS: [&str; 7] = [
    "name",
    "title",
    "description",
    "tags",
    "tools",
    "headings",
    "body",
];

fn fts_create(connection: &Connection) -> Result<()> {
    connection.execute(
        &format!(
            "CREATE VIRTUAL TABLE skills USING fts5(id UNINDEXED, {}, tokenize = 'porter unicode61')",
            FTS_COLUMNS.join(", ")
        ),
        [],
    )?;
    Ok(())
}

fn fts_insert(connection: &Connection, records: impl Iterator<Item = Skill>) -> Result<()> {
    connection.execute_batch("BEGIN")?;
    {
        let mut insert = connection.prepare(
            "INSERT INTO skills(id, name, title, description, tags, tools, headings, body) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?;
        for skill in records {
            let text = skill.search_text();
            let mut tags = skill.tags.join(" ");
            if let Some(license) = &skill.license {
                tags.push(' ');
                tags.push_str(license);
            }
            insert.execute((
                skill.id.to_string(),
                skill.name.as_str().replace('-', " "),
                &skill.title,
                &skill.description,
                tags,
                text.tools.join("\n"),
                text.headings.join("\n"),
                &skill.body,
            ))?;
        }
    }
    connection.execute_batch("COMMIT")?;
    Ok(())
}

/// How the baseline reads a query.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Baseline {
    /// Every word, OR-combined, equal column weights.
    Plain,
    /// The informative words, OR-combined, the last also as a prefix, these column weights
    /// (the indexer's, or [`PREVIOUS_WEIGHTS`]).
    Fair(FieldWeights),
}

/// The indexer's field weights before the last change to them. The fair baseline runs with
/// these as well as with the current ones, and a ratio is taken against the stronger of the
/// two, so that a change of weights cannot flatter the ratio by weakening the baseline (FTS5's
/// `body` column holds the body alone, where the indexer's body field holds the whole record:
/// the same weight does not mean the same thing to both).
const PREVIOUS_WEIGHTS: FieldWeights = FieldWeights {
    name: 3.0,
    title: 2.5,
    description: 2.0,
    tags: 2.0,
    tools: 1.5,
    headings: 1.0,
    body: 1.0,
};

/// The baseline: query words, quoted, OR-combined, ranked by bm25.
fn fts_search(
    connection: &Connection,
    query: &str,
    limit: usize,
    baseline: Baseline,
) -> Result<Vec<String>> {
    let mut words: Vec<String> = match baseline {
        Baseline::Plain => query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|word| !word.is_empty())
            .map(str::to_lowercase)
            .collect(),
        Baseline::Fair(_) => indexer::informative_words(query),
    };
    words.retain(|word| !word.contains('"'));
    let Some(last) = words.last().cloned() else {
        return Ok(Vec::new());
    };
    let mut terms: Vec<String> = words.iter().map(|word| format!("\"{word}\"")).collect();
    let ends_in_word = query.ends_with(|c: char| c.is_alphanumeric());
    if matches!(baseline, Baseline::Fair(_)) && ends_in_word && last.chars().count() >= 2 {
        terms.push(format!("\"{last}\"*"));
    }
    let weights: Vec<f32> = match baseline {
        Baseline::Plain => vec![1.0; FTS_COLUMNS.len()],
        Baseline::Fair(w) => vec![
            w.name,
            w.title,
            w.description,
            w.tags,
            w.tools,
            w.headings,
            w.body,
        ],
    };
    let weights: Vec<String> = weights.iter().map(|weight| weight.to_string()).collect();
    let sql = format!(
        "SELECT id, snippet(skills, 3, '<mark>', '</mark>', '…', 24) FROM skills \
         WHERE skills MATCH ?1 ORDER BY bm25(skills, 0.0, {}) LIMIT ?2",
        weights.join(", ")
    );
    let mut statement = connection.prepare_cached(&sql)?;
    let rows = statement.query_map((terms.join(" OR "), limit as i64), |row| {
        row.get::<_, String>(0)
    })?;
    let mut ids = Vec::new();
    for row in rows {
        ids.push(row?);
    }
    Ok(ids)
}

/// A query of at least this many words is a task description: the latency report gives
/// these their own percentiles.
const TASK_WORDS: usize = 10;

/// The latency workload: the judged queries, what a person types on the way to the first
/// word of each (search as you type), and the queries of `tasks` (the first held-out set,
/// most of them task descriptions of 10 to 40 words).
fn latency_queries(judgements: &Judgements, tasks: &Judgements) -> Vec<String> {
    let mut queries = Vec::new();
    for judged in &judgements.queries {
        queries.push(judged.query.clone());
        if let Some(first) = judged.query.split_whitespace().next() {
            let chars: Vec<char> = first.chars().collect();
            for end in (3..chars.len()).step_by(2) {
                queries.push(chars[..end].iter().collect());
            }
        }
    }
    queries.extend(tasks.queries.iter().map(|judged| judged.query.clone()));
    queries
}

/// The percentiles of the queries typed and of the task descriptions, for the report.
fn by_length(stats: &Stats) -> String {
    let (typed_p50, typed_p99, typed) = stats.typed;
    let (tasks_p50, tasks_p99, tasks) = stats.tasks;
    format!(
        "queries of fewer than {TASK_WORDS} words ({typed} requests): p50 {}, p99 {}; \
         task descriptions of {TASK_WORDS} words or more ({tasks} requests): p50 {}, p99 {}",
        ms(typed_p50),
        ms(typed_p99),
        ms(tasks_p50),
        ms(tasks_p99)
    )
}

/// True when `query` is a task description ([`TASK_WORDS`] words or more).
fn is_task(query: &str) -> bool {
    query.split_whitespace().count() >= TASK_WORDS
}

struct Stats {
    p50: Duration,
    p99: Duration,
    mean: Duration,
    qps: f64,
    /// The slowest queries and their worst latency.
    slowest: Vec<String>,
    /// On-CPU time per query (what a query costs, apart from waiting for a core).
    cpu_p50: Duration,
    cpu_p99: Duration,
    /// p50 and p99 over the queries typed (fewer than [`TASK_WORDS`] words) and over the
    /// task descriptions, with how many requests each.
    typed: (Duration, Duration, usize),
    tasks: (Duration, Duration, usize),
}

/// Runs every query `rounds` times in each of `clients` threads, each with its own searcher
/// made by `make`, and returns latency percentiles over all requests.
fn measure<F, S>(clients: usize, rounds: usize, queries: &[String], make: F) -> Stats
where
    F: Fn() -> S,
    S: FnMut(&str) + Send,
{
    // Warm up: one pass, so that the page cache and lazy structures are loaded.
    let mut warm = make();
    for query in queries {
        warm(query);
    }
    let started = Instant::now();
    let mut timed: Vec<(Duration, usize, Duration)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..clients)
            .map(|client| {
                let mut search = make();
                scope.spawn(move || {
                    let mut latencies = Vec::with_capacity(rounds * queries.len());
                    for round in 0..rounds {
                        // Each client walks the queries from a different place.
                        for index in 0..queries.len() {
                            let query = &queries[(index + client * 7 + round) % queries.len()];
                            let cpu = thread_cpu_time();
                            let at = Instant::now();
                            search(query);
                            let elapsed = at.elapsed();
                            let cpu = match (cpu, thread_cpu_time()) {
                                (Some(before), Some(after)) => after.saturating_sub(before),
                                _ => Duration::ZERO,
                            };
                            latencies.push((
                                elapsed,
                                (index + client * 7 + round) % queries.len(),
                                cpu,
                            ));
                        }
                    }
                    latencies
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().expect("client thread"))
            .collect()
    });
    let wall = started.elapsed();
    timed.sort();
    // The slowest queries, by their worst time.
    let mut slowest: Vec<(Duration, &str)> = Vec::new();
    for (duration, index, _) in timed.iter().rev() {
        if slowest.len() == 5 {
            break;
        }
        if !slowest.iter().any(|(_, query)| *query == queries[*index]) {
            slowest.push((*duration, &queries[*index]));
        }
    }
    let latencies: Vec<Duration> = timed.iter().map(|(duration, _, _)| *duration).collect();
    // `timed` is sorted, so each class's latencies are too.
    let class = |tasks: bool| {
        let class: Vec<Duration> = timed
            .iter()
            .filter(|(_, index, _)| is_task(&queries[*index]) == tasks)
            .map(|(duration, _, _)| *duration)
            .collect();
        (
            percentile(&class, 0.50),
            percentile(&class, 0.99),
            class.len(),
        )
    };
    let mut cpu: Vec<Duration> = timed.iter().map(|(_, _, cpu)| *cpu).collect();
    cpu.sort();
    let total: Duration = latencies.iter().sum();
    Stats {
        p50: percentile(&latencies, 0.50),
        p99: percentile(&latencies, 0.99),
        mean: total / latencies.len() as u32,
        qps: latencies.len() as f64 / wall.as_secs_f64(),
        cpu_p50: percentile(&cpu, 0.50),
        cpu_p99: percentile(&cpu, 0.99),
        typed: class(false),
        tasks: class(true),
        slowest: slowest
            .into_iter()
            .map(|(duration, query)| format!("`{query}` {}", ms(duration)))
            .collect(),
    }
}

/// The latency at quantile `q` of `sorted` (nearest rank); zero when there is none.
fn percentile(sorted: &[Duration], q: f64) -> Duration {
    let last = sorted.len().saturating_sub(1);
    sorted
        .get((last as f64 * q).round() as usize)
        .copied()
        .unwrap_or_default()
}

/// Returns the time the calling thread has spent on a CPU. On a shared machine this shows a
/// query's own cost apart from the time it waited for a core.
fn thread_cpu_time() -> Option<Duration> {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec for the duration of the call.
    #[allow(unsafe_code)]
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    if status != 0 {
        return None;
    }
    Some(Duration::new(
        u64::try_from(now.tv_sec).ok()?,
        u32::try_from(now.tv_nsec).ok()?,
    ))
}

/// Returns the 1-minute load average (Linux; `None` elsewhere).
fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next().map(str::to_owned)
}

/// Says how the indexer's time compares with the baseline's.
fn compare(ours: Duration, baseline: Duration) -> String {
    let (ours, baseline) = (ours.as_secs_f64(), baseline.as_secs_f64());
    if ours <= baseline {
        format!("the indexer {:.1}× lower", baseline / ours)
    } else {
        format!("the baseline {:.1}× lower", ours / baseline)
    }
}

fn ms(duration: Duration) -> String {
    format!("{:.2} ms", duration.as_secs_f64() * 1000.0)
}
