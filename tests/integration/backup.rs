//! `skillscout backup` while `serve` runs, and `skillscout restore` into a new data
//! directory: the records, the files and the search results are the same after the round
//! trip; a directory in use or not empty is refused.
//! See: The front door and the operator's kit.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::serve::Running;
use crate::server::TestServer;
use crate::util::{repo_root, skillscout, stderr, stdout};

/// Every file below `root`, by relative path, with its bytes.
fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let relative = path.strip_prefix(root).unwrap().display().to_string();
                out.insert(relative, std::fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// What a data directory serves: its records (JSONL export), its skills' files (skills-dir
/// export, without the manifest's time) and a few searches.
fn contents(
    dir: &Path,
    data: &Path,
    label: &str,
) -> (String, BTreeMap<String, Vec<u8>>, Vec<String>) {
    let data = data.to_str().unwrap();
    let jsonl = dir.join(format!("{label}.jsonl"));
    let output = skillscout(
        dir,
        &[
            "--data",
            data,
            "export",
            "--layout",
            "jsonl",
            "--private",
            "--verdict",
            "any",
            "--out",
            jsonl.to_str().unwrap(),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let records = std::fs::read_to_string(jsonl.join("skills.jsonl")).unwrap();
    let skills = dir.join(format!("{label}-skills"));
    let output = skillscout(
        dir,
        &[
            "--data",
            data,
            "export",
            "--private",
            "--out",
            skills.to_str().unwrap(),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let mut files = tree(&skills);
    files.remove("manifest.json");
    let mut searches = Vec::new();
    for query in ["", "pdf", "extract text", "deploy"] {
        let output = skillscout(
            dir,
            &["--data", data, "search", "--json", "--private", query],
        );
        assert!(output.status.success(), "{}", stderr(&output));
        let mut body: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
        body.as_object_mut().unwrap().remove("took_ms");
        searches.push(body.to_string());
    }
    (records, files, searches)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backup_while_serving_then_restore_gives_the_same_directory() {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("backup-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let web = repo_root().join("seeds/web");
    let server = TestServer::static_tree(web.clone()).await;
    let resolve = format!("*.test=127.0.0.1:{}", server.port());
    let mut hosts: Vec<String> = std::fs::read_dir(&web)
        .unwrap()
        .map(|entry| format!("http://{}", entry.unwrap().file_name().to_string_lossy()))
        .collect();
    hosts.sort();
    let original = dir.join("original");
    let restored = dir.join("restored");
    let (original_arg, dir_for_blocking) = (original.clone(), dir.clone());
    tokio::task::spawn_blocking(move || {
        let dir = dir_for_blocking;
        let original = original_arg;
        let mut args = vec![
            "--data",
            original.to_str().unwrap(),
            "crawl",
            "--resolve",
            &resolve,
            "--prefetch-files",
            "--no-progress",
        ];
        args.extend(hosts.iter().map(String::as_str));
        let output = skillscout(&dir, &args);
        assert!(output.status.success(), "{}", stderr(&output));
        let before = contents(&dir, &original, "before");
        assert!(before.0.lines().count() >= 5, "{}", before.0);
        assert!(
            before.1.keys().any(|path| !path.ends_with("SKILL.md")),
            "files beside SKILL.md: {:?}",
            before.1.keys()
        );

        std::fs::write(dir.join("admin-tokens"), "backup-admin\n").unwrap();
        let server = Running::start(
            &[
                "--data",
                original.to_str().unwrap(),
                "serve",
                "--addr",
                "127.0.0.1:0",
                "--admin-token-file",
                dir.join("admin-tokens").to_str().unwrap(),
            ],
            "listening on ",
        );
        let archive = dir.join("directory.tar.gz");
        let output = skillscout(
            &dir,
            &[
                "--data",
                original.to_str().unwrap(),
                "backup",
                "--out",
                archive.to_str().unwrap(),
                "--admin-token-file",
                dir.join("admin-tokens").to_str().unwrap(),
            ],
        );
        assert!(output.status.success(), "{}", stderr(&output));
        assert!(
            stdout(&output).contains("through the running server"),
            "{}",
            stdout(&output)
        );
        assert!(!dir.join("directory.tar.gz.partial").exists());

        // Not over the directory the server holds, --force or not.
        let output = skillscout(
            &dir,
            &[
                "--data",
                original.to_str().unwrap(),
                "restore",
                archive.to_str().unwrap(),
                "--force",
            ],
        );
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
        assert!(stderr(&output).contains("in use"), "{}", stderr(&output));

        let output = skillscout(
            &dir,
            &[
                "--data",
                restored.to_str().unwrap(),
                "restore",
                archive.to_str().unwrap(),
            ],
        );
        assert!(output.status.success(), "{}", stderr(&output));
        assert!(
            stdout(&output).contains("index rebuilt"),
            "{}",
            stdout(&output)
        );
        assert_eq!(server.terminate(), Some(0));

        let after = contents(&dir, &restored, "after");
        assert_eq!(before.0, after.0, "the records");
        assert_eq!(before.1, after.1, "the files");
        assert_eq!(before.2, after.2, "the search results");
        let again = contents(&dir, &original, "again");
        assert_eq!(before, again, "the original is untouched");

        // A non-empty directory needs --force; a damaged archive restores nothing.
        let output = skillscout(
            &dir,
            &[
                "--data",
                restored.to_str().unwrap(),
                "restore",
                archive.to_str().unwrap(),
            ],
        );
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(stderr(&output).contains("--force"), "{}", stderr(&output));
        let bytes = std::fs::read(&archive).unwrap();
        let cut = dir.join("cut.tar.gz");
        std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
        let fresh = dir.join("fresh");
        let output = skillscout(
            &dir,
            &[
                "--data",
                fresh.to_str().unwrap(),
                "restore",
                cut.to_str().unwrap(),
            ],
        );
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
        assert!(!fresh.exists(), "a failed restore leaves nothing");
        let output = skillscout(
            &dir,
            &[
                "--data",
                restored.to_str().unwrap(),
                "restore",
                archive.to_str().unwrap(),
                "--force",
            ],
        );
        assert!(output.status.success(), "{}", stderr(&output));
        assert_eq!(contents(&dir, &restored, "forced").0, before.0);
    })
    .await
    .unwrap();
    drop(server);
}
