//! `skillscout export` end to end: a data directory filled by a crawl of the fixture web on
//! loopback, then exported in each layout; exit statuses for bad usage.

use std::path::{Path, PathBuf};

use crate::server::{TestServer, serve_file};
use crate::util::{repo_root, skillscout, stderr, stdout};

/// Crawls the fixture web into a fresh data directory under the target directory.
async fn crawled_data_dir(label: &str) -> PathBuf {
    crawled_data_dir_with(label, "--prefetch-files").await
}

/// Crawls the fixture web with one more flag (`prefetch`: `--no-prefetch-files`, say).
async fn crawled_data_dir_with(label: &str, prefetch: &str) -> PathBuf {
    let web = repo_root().join("seeds/web");
    let server = TestServer::start(move |request| serve_file(&web, request)).await;
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("export-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let data = dir.join("data");
    let resolve = format!("*.test=127.0.0.1:{}", server.port());
    let args: Vec<String> = [
        "crawl",
        "--data",
        data.to_str().unwrap(),
        "--resolve",
        &resolve,
        "--host-delay-ms",
        "0",
        prefetch,
        "http://pdfworks.test",
        "http://legacy-tools.test",
        "http://services.test",
        "http://sloppy.test",
    ]
    .iter()
    .map(|arg| (*arg).to_owned())
    .collect();
    let output = run(&dir, args).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    dir
}

async fn run(dir: &Path, args: Vec<String>) -> std::process::Output {
    let dir = dir.to_owned();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        skillscout(&dir, &args)
    })
    .await
    .unwrap()
}

fn export(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["export", "--data", "data"];
    all.extend_from_slice(args);
    skillscout(dir, &all)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_writes_each_layout_and_refuses_bad_usage() {
    let dir = crawled_data_dir("layouts").await;

    let output = export(&dir, &["--out", "skills"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    insta::assert_snapshot!(stdout(&output).trim(), @"exported to skills: 6 skills, 9 files, 3443 bytes, 0 renamed, 0 missing, 4 left out, 0 removed");
    assert!(dir.join("skills/pdf-text-extraction/SKILL.md").is_file());
    assert!(dir.join("skills/manifest.json").is_file());

    // An existing --out is bad usage, and is left alone.
    let again = export(&dir, &["--out", "skills"]);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("exists; use --force"),
        "{}",
        stderr(&again)
    );
    let forced = export(
        &dir,
        &["--out", "skills", "--force", "--domain", "pdfworks.test"],
    );
    assert_eq!(forced.status.code(), Some(0), "{}", stderr(&forced));
    assert!(!dir.join("skills/csv-cleanup").exists());

    let well_known = export(
        &dir,
        &["--out", "web.tar.gz", "--layout", "well-known", "--archive"],
    );
    assert_eq!(well_known.status.code(), Some(0), "{}", stderr(&well_known));
    assert!(dir.join("web.tar.gz").is_file());

    let jsonl = export(
        &dir,
        &["--out", "records", "--layout", "jsonl", "--query", "pdf"],
    );
    assert_eq!(jsonl.status.code(), Some(0), "{}", stderr(&jsonl));
    let lines = std::fs::read_to_string(dir.join("records/skills.jsonl")).unwrap();
    assert!(lines.lines().count() >= 3, "{lines}");
    assert!(
        lines
            .lines()
            .all(|line| line.to_lowercase().contains("pdf"))
    );

    for (bad, message) in [
        (vec!["--out", "x", "--since", "yesterday"], "invalid time"),
        (vec!["--out", "x", "--layout", "zip"], "unknown layout"),
    ] {
        let output = export(&dir, &bad);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{bad:?}: {}",
            stderr(&output)
        );
        assert!(stderr(&output).contains(message), "{}", stderr(&output));
        assert!(!dir.join("x").exists());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// See: The front door and the operator's kit (complete skills by default). An export that
/// misses a legacy skill's files (crawled with --no-prefetch-files) says so, why, and how to
/// get them; crawled the default way, nothing is missing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_missing_files_says_why_and_how_to_get_them() {
    let dir = crawled_data_dir_with("missing", "--no-prefetch-files").await;
    let output = export(&dir, &["--out", "skills", "--layout", "skills-dir"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stdout(&output).contains("1 missing"), "{}", stdout(&output));
    let warning = stderr(&output);
    assert!(
        warning.contains("1 file of 1 skill (legacy-tools.test/csv-cleanup) could not be exported"),
        "{warning}"
    );
    assert!(
        warning.contains("scripts/clean.py: it was never fetched"),
        "{warning}"
    );
    assert!(warning.contains("without --no-prefetch-files"), "{warning}");

    // The default (no prefetch flag at all).
    let dir = crawled_data_dir_with("whole", "--no-progress").await;
    let output = export(&dir, &["--out", "skills", "--layout", "skills-dir"]);
    assert!(stdout(&output).contains("0 missing"), "{}", stdout(&output));
    assert!(!stderr(&output).contains("could not be exported"));
    assert!(dir.join("skills/csv-cleanup/scripts/clean.py").is_file());
}
