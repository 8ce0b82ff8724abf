//! The safety audit and the copies of a skill at the command line: `search --risk`, one hit
//! per cluster of copies, and `export --include-risky`, over the sites of
//! `tests/fixtures/audit-web` (inert skills the audit flags, one skill at two origins and a
//! fork of it).

use std::path::Path;

use crate::server::{TestServer, serve_file};
use crate::util::{repo_root, skillscout, stderr, stdout, store_and_index_sites};

/// Fills `data` with a crawl store and an index of every site of the audit fixture.
fn build_data_dir(data: &Path) {
    let web = repo_root().join("tests/fixtures/audit-web");
    let sites: Vec<_> = [
        "flagged.test",
        "fork.test",
        "origin-a.test",
        "origin-b.test",
    ]
    .iter()
    .map(|site| web.join(site))
    .collect();
    store_and_index_sites(data, &sites);
}

fn run(data: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec![args[0], "--data", data.to_str().unwrap()];
    all.extend_from_slice(&args[1..]);
    skillscout(&repo_root(), &all)
}

#[test]
fn search_takes_a_risk_and_folds_copies() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    build_data_dir(&data);

    let ids = |args: &[&str]| -> Vec<String> {
        let output = run(&data, args);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let body: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
        let mut ids: Vec<String> = body["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|hit| hit["id"].as_str().unwrap().to_owned())
            .collect();
        ids.sort();
        ids
    };
    // Critical skills are listed only when asked for.
    assert_eq!(
        ids(&["search", "--json", "setup"]),
        ["flagged.test/toolchain-setup"]
    );
    assert_eq!(
        ids(&["search", "--json", "--risk", "critical", "setup"]),
        ["flagged.test/quick-setup"]
    );
    assert_eq!(
        ids(&["search", "--json", "--risk", "any", "setup"]).len(),
        2
    );
    let refused = run(&data, &["search", "--risk", "severe", "setup"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("risk is one of"),
        "{}",
        stderr(&refused)
    );

    // The two copies are one hit (the tree's records were seen at the same time: the smaller
    // id is shown); the fork is another.
    assert_eq!(
        ids(&["search", "--json", "pdf tables"]),
        ["fork.test/pdf-tables", "origin-a.test/pdf-tables"]
    );
    let text = stdout(&run(&data, &["search", "pdf tables"]));
    assert!(text.contains("also published at 1 other origin"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_leaves_critical_skills_out_unless_asked() {
    // A crawl, so that the files' bytes are held to be exported.
    let web = repo_root().join("tests/fixtures/audit-web");
    let server = TestServer::start(move |request| serve_file(&web, request)).await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let resolve = format!("*.test=127.0.0.1:{}", server.port());
    let crawl = {
        let data = data.clone();
        tokio::task::spawn_blocking(move || {
            run(
                &data,
                &[
                    "crawl",
                    "--resolve",
                    &resolve,
                    "--host-delay-ms",
                    "0",
                    "http://flagged.test",
                ],
            )
        })
        .await
        .unwrap()
    };
    assert_eq!(crawl.status.code(), Some(0), "{}", stderr(&crawl));
    let out = dir.path().join("safe");
    let output = run(
        &data,
        &[
            "export",
            "--out",
            out.to_str().unwrap(),
            "--domain",
            "flagged.test",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).contains(": 1 skills, "),
        "{}",
        stdout(&output)
    );
    assert!(
        stdout(&output).contains(", 1 left out,"),
        "{}",
        stdout(&output)
    );
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["left_out"][0]["id"], "flagged.test/quick-setup");
    let reason = manifest["left_out"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("critical"), "{reason}");
    assert!(!out.join("quick-setup").exists());

    let out = dir.path().join("all");
    let output = run(
        &data,
        &[
            "export",
            "--out",
            out.to_str().unwrap(),
            "--domain",
            "flagged.test",
            "--include-risky",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).contains(", 0 left out,"),
        "{}",
        stdout(&output)
    );
    assert!(out.join("quick-setup/SKILL.md").is_file());
}
