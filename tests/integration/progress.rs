//! Progress on a bulk index sync: without a terminal, progress log lines (each tenth of the
//! work, with the rate and the time left) instead of a bar.
//! See: The front door and the operator's kit.

use std::path::PathBuf;

use crate::util::{skillscout, stderr, stdout, store_sites};

/// Skills of the generated site: more than the least sync that shows progress.
const SKILLS: usize = 300;

#[test]
fn a_rebuild_without_a_terminal_logs_its_progress() {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("progress-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let site = dir.join("bulk.test");
    let skills = site.join(".well-known/skills");
    let mut entries = Vec::new();
    for index in 0..SKILLS {
        let name = format!("bulk-tool-{index:03}");
        std::fs::create_dir_all(skills.join(&name)).unwrap();
        let description = format!("Bulk tool number {index} for the progress test.");
        std::fs::write(
            skills.join(&name).join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n\nUse it.\n"),
        )
        .unwrap();
        entries.push(
            serde_json::json!({"name": name, "description": description, "files": ["SKILL.md"]}),
        );
    }
    std::fs::write(
        skills.join("index.json"),
        serde_json::json!({ "skills": entries }).to_string(),
    )
    .unwrap();
    let data = dir.join("data");
    drop(store_sites(&data, &[site]));
    assert!(!data.join(indexer::INDEX_DIR).exists());

    // A crawl with nothing due brings the missing index up to date: a rebuild.
    let output = skillscout(&dir, &["--data", data.to_str().unwrap(), "crawl"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let log = stderr(&output);
    assert!(!log.contains('\r'), "no bar drawn: {log:?}");
    let lines: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("indexed ") && line.contains(" changes"))
        .collect();
    assert!(lines.len() >= 5, "periodic lines:\n{log}");
    assert!(
        lines
            .last()
            .unwrap()
            .contains(&format!("indexed {SKILLS} of {SKILLS} changes")),
        "{log}"
    );
    assert!(
        lines
            .iter()
            .all(|line| line.contains("per_second=") && line.contains("eta_seconds=")),
        "{log}"
    );
    let search = skillscout(
        &dir,
        &[
            "--data",
            data.to_str().unwrap(),
            "search",
            "--json",
            "bulk tool",
        ],
    );
    let body: serde_json::Value = serde_json::from_str(&stdout(&search)).unwrap();
    assert_eq!(body["total"], SKILLS, "the index is whole");

    // A sync of a few changes stays quiet.
    let output = skillscout(&dir, &["--data", data.to_str().unwrap(), "crawl"]);
    assert!(!stderr(&output).contains("indexed "), "{}", stderr(&output));
}
