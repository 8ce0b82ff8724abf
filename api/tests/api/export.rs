//! Exports (`api::export`, `GET /v1/export`) and the mirror (`/mirror/{domain}/…`): each
//! layout, the manifest, atomicity, access, name collisions, `since` with tombstones, the
//! round trip through a crawl, and a streamed export larger than its buffers.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use api::export::{ExportError, ExportRequest, Layout, Manifest, NoProgress, export_to_path};
use api::{AppState, ServeConfig, Tokens};
use axum::body::{Body, HttpBody};
use axum::http::{Request, StatusCode, header};
use formats::Digest;
use indexer::Caller;
use serde_json::Value;
use store::Store;
use store::blobs::Blobs;
use tower::ServiceExt;

use crate::fixture::{As, PRIVATE_ID, TOKEN, crawl_into, get, repo_root, state, state_over};

fn request(layout: Layout, caller: Caller) -> ExportRequest {
    ExportRequest {
        layout,
        caller,
        ..ExportRequest::default()
    }
}

fn export(state: &AppState, request: &ExportRequest, out: &Path, archive: bool) -> Manifest {
    export_to_path(state, request, out, archive, false, &NoProgress).unwrap()
}

/// Reads `manifest.json` of an export folder and checks it against the files: every file it
/// lists has its size and digest, and every file there is listed.
fn checked_manifest(root: &Path) -> Value {
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(root.join("manifest.json")).unwrap()).unwrap();
    let mut listed = BTreeSet::new();
    for file in manifest["files"].as_array().unwrap() {
        let path = file["path"].as_str().unwrap();
        let bytes = std::fs::read(root.join(path)).unwrap();
        assert_eq!(file["size"], bytes.len(), "{path}");
        assert_eq!(file["sha256"], Digest::of(&bytes).to_string(), "{path}");
        listed.insert(path.to_owned());
    }
    let mut present = BTreeSet::new();
    walk(root, root, &mut present);
    present.remove("manifest.json");
    assert_eq!(listed, present);
    assert_eq!(manifest["summary"]["files"], listed.len());
    manifest
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(root, &path, out);
        } else {
            let relative = path.strip_prefix(root).unwrap();
            out.insert(relative.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// Unpacks a `.tar.gz` into path → bytes.
fn untar(bytes: &[u8]) -> BTreeMap<String, Vec<u8>> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
    let mut files = BTreeMap::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = entry.path().unwrap().to_string_lossy().into_owned();
        let mut content = Vec::new();
        entry.read_to_end(&mut content).unwrap();
        files.insert(path, content);
    }
    files
}

fn seed_file(path: &str) -> Vec<u8> {
    std::fs::read(repo_root().join("seeds/web").join(path)).unwrap()
}

#[test]
fn skills_dir_holds_each_skill_with_its_files_and_a_checked_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("skills");
    let manifest = export(
        &state(),
        &request(Layout::SkillsDir, Caller::Anonymous),
        &out,
        false,
    );
    assert_eq!(
        std::fs::read(out.join("pdf-text-extraction/SKILL.md")).unwrap(),
        seed_file("pdfworks.test/.well-known/agent-skills/pdf-text-extraction/SKILL.md")
    );
    assert_eq!(
        std::fs::read(out.join("csv-cleanup/scripts/clean.py")).unwrap(),
        seed_file("legacy-tools.test/.well-known/skills/csv-cleanup/scripts/clean.py")
    );
    for skill in [
        "pdf-form-filling",
        "pdf-merge",
        "changelog-writer",
        "pdf-ocr",
    ] {
        assert!(out.join(skill).join("SKILL.md").is_file(), "{skill}");
    }
    let json = checked_manifest(&out);
    assert_eq!(json["layout"], "skills-dir");
    assert_eq!(json["caller"], "anonymous");
    assert_eq!(manifest.summary.skills, manifest.skills.len());
    // Skill-sharing services have no SKILL.md: left out, with the reason.
    let left_out: Vec<&str> = manifest
        .left_out
        .iter()
        .map(|l| l.reason.as_str())
        .collect();
    assert!(!left_out.is_empty());
    assert!(
        left_out
            .iter()
            .all(|reason| reason.contains("skill-sharing")),
        "{left_out:?}"
    );
    // Only valid and lenient skills: the invalid `Release-Notes` is not selected.
    assert!(!out.join("release-notes").exists());
    // Nothing was left beside the export.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn an_existing_target_is_refused_and_a_failed_export_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("skills");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("keep"), b"mine").unwrap();
    let refused = export_to_path(
        &state(),
        &request(Layout::SkillsDir, Caller::Anonymous),
        &out,
        false,
        false,
        &NoProgress,
    );
    assert!(
        matches!(&refused, Err(error @ ExportError::Publish(_)) if error.is_usage()),
        "{refused:?}"
    );
    assert_eq!(std::fs::read(out.join("keep")).unwrap(), b"mine");

    // A query over the index's limit fails before anything is written.
    let mut long = request(Layout::Jsonl, Caller::Anonymous);
    long.query = "x".repeat(indexer::MAX_QUERY_CHARS + 1);
    let failed = export_to_path(
        &state(),
        &long,
        &dir.path().join("other"),
        true,
        false,
        &NoProgress,
    );
    assert!(matches!(failed, Err(ExportError::Request(_))), "{failed:?}");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(names, ["skills"]);

    // --force replaces it whole.
    export_to_path(
        &state(),
        &request(Layout::SkillsDir, Caller::Anonymous),
        &out,
        false,
        true,
        &NoProgress,
    )
    .unwrap();
    assert!(!out.join("keep").exists());
    assert!(out.join("manifest.json").is_file());
}

#[test]
fn an_export_that_fails_midway_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let web = dir.path().join("web");
    let last = skill_md("zzz", "last");
    write_site(
        &web,
        "a.test",
        &[("aaa", skill_md("aaa", "first")), ("zzz", last.clone())],
    );
    let data = dir.path().join("data");
    let state = crawled(&data, &web, &["a.test"], ServeConfig::default());
    // The last skill's blob cannot be read (a folder where the file should be): the export
    // fails after it wrote the first skill.
    let hex = Digest::of(last.as_bytes()).hex();
    let blob = data.join("blobs").join(&hex[..2]).join(&hex);
    std::fs::remove_file(&blob).unwrap();
    std::fs::create_dir(&blob).unwrap();
    let exports = dir.path().join("exports");
    std::fs::create_dir(&exports).unwrap();
    for archive in [false, true] {
        let failed = export_to_path(
            &state,
            &request(Layout::SkillsDir, Caller::Anonymous),
            &exports.join("skills"),
            archive,
            false,
            &NoProgress,
        );
        assert!(
            matches!(&failed, Err(error @ ExportError::Read(_)) if !error.is_usage()),
            "{failed:?}"
        );
        assert_eq!(std::fs::read_dir(&exports).unwrap().count(), 0);
    }
}

#[test]
fn a_file_never_fetched_is_listed_missing() {
    let dir = tempfile::tempdir().unwrap();
    let web = dir.path().join("web");
    let site = repo_root().join("seeds/web/legacy-tools.test/.well-known/skills");
    let copy = web.join("legacy-tools.test/.well-known/skills");
    for file in [
        "index.json",
        "csv-cleanup/SKILL.md",
        "csv-cleanup/scripts/clean.py",
        "changelog-writer/SKILL.md",
    ] {
        std::fs::create_dir_all(copy.join(file).parent().unwrap()).unwrap();
        std::fs::copy(site.join(file), copy.join(file)).unwrap();
    }
    // Without prefetching, a legacy skill's files beside its SKILL.md are never fetched.
    let state = crawled_with(
        &dir.path().join("data"),
        &web,
        &["legacy-tools.test"],
        ServeConfig::default(),
        false,
    );
    for layout in [Layout::SkillsDir, Layout::WellKnown] {
        let out = dir.path().join(layout.as_str());
        let manifest = export(&state, &request(layout, Caller::Anonymous), &out, false);
        checked_manifest(&out);
        let missing: Vec<(String, &str, &str)> = manifest
            .missing
            .iter()
            .map(|m| (m.id.to_string(), m.path.as_str(), m.reason.as_str()))
            .collect();
        assert_eq!(missing.len(), 1, "{layout:?}: {missing:?}");
        assert_eq!(missing[0].0, "legacy-tools.test/csv-cleanup");
        assert_eq!(missing[0].1, "scripts/clean.py");
        // Why, and how to get it.
        assert!(missing[0].2.contains("never fetched"), "{}", missing[0].2);
        assert!(
            missing[0].2.contains("--no-prefetch-files"),
            "{}",
            missing[0].2
        );
        assert_eq!(manifest.summary.missing, 1);
        assert!(
            manifest
                .skills
                .iter()
                .any(|s| s.id.to_string() == "legacy-tools.test/csv-cleanup")
        );
    }
    assert!(dir.path().join("skills-dir/csv-cleanup/SKILL.md").is_file());
    assert!(!dir.path().join("skills-dir/csv-cleanup/scripts").exists());

    // See: The front door and the operator's kit (complete skills by default). The mirror
    // does not re-publish the skill as if its SKILL.md were all of it: its index leaves it
    // out, its archive is a 404 that says why, and the publisher page does not count it.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let base = "/mirror/legacy-tools.test/.well-known/agent-skills";
        let send = |uri: String| {
            let request = axum::http::Request::get(uri).body(Body::empty()).unwrap();
            crate::fixture::send_to(state.clone(), request)
        };
        let index = send(format!("{base}/index.json")).await;
        assert_eq!(index.status, StatusCode::OK, "{}", index.text());
        let names: Vec<String> = index.json()["skills"]
            .as_array()
            .unwrap()
            .iter()
            .map(|entry| entry["name"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(names, ["changelog-writer"]);
        let archive = send(format!("{base}/csv-cleanup.tar.gz")).await;
        assert_eq!(archive.status, StatusCode::NOT_FOUND);
        let message = archive.json()["error"]["message"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            message.contains("holds 1 of the 2 files of legacy-tools.test/csv-cleanup"),
            "{message}"
        );
        assert!(message.contains("\"scripts/clean.py\""), "{message}");
        assert!(message.contains("--no-prefetch-files"), "{message}");
        let page = send("/v1/skills/legacy-tools.test/csv-cleanup".to_owned()).await;
        assert_eq!(page.status, StatusCode::OK);
        let publisher = send("/domains/legacy-tools.test".to_owned()).await;
        assert!(
            publisher.text().contains("1 verified skill is"),
            "{}",
            publisher.text()
        );
    });
}

/// See: The front door and the operator's kit (complete skills by default). Crawled with its
/// files (the default), a legacy skill is mirrored whole: the archive holds every file its
/// index lists.
#[test]
fn a_legacy_skill_crawled_with_its_files_is_mirrored_whole() {
    let dir = tempfile::tempdir().unwrap();
    let state = crawled(
        &dir.path().join("data"),
        &repo_root().join("seeds/web"),
        &["legacy-tools.test"],
        ServeConfig::default(),
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let request = axum::http::Request::get(
            "/mirror/legacy-tools.test/.well-known/agent-skills/csv-cleanup.tar.gz",
        )
        .body(Body::empty())
        .unwrap();
        let archive = crate::fixture::send_to(state.clone(), request).await;
        assert_eq!(archive.status, StatusCode::OK, "{}", archive.text());
        let files = untar(&archive.body);
        assert_eq!(
            files.keys().map(String::as_str).collect::<Vec<_>>(),
            ["SKILL.md", "scripts/clean.py"]
        );
        assert_eq!(
            files["scripts/clean.py"],
            std::fs::read(repo_root().join(
                "seeds/web/legacy-tools.test/.well-known/skills/csv-cleanup/scripts/clean.py"
            ))
            .unwrap()
        );
    });
}

#[test]
fn jsonl_lines_are_the_api_records_and_an_archive_checks() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("export.tar.gz");
    let manifest = export(
        &state(),
        &request(Layout::Jsonl, Caller::Authenticated),
        &out,
        true,
    );
    let files = untar(&std::fs::read(&out).unwrap());
    assert_eq!(
        files.keys().collect::<Vec<_>>(),
        ["manifest.json", "skills.jsonl"]
    );
    let json: Value = serde_json::from_slice(&files["manifest.json"]).unwrap();
    for file in json["files"].as_array().unwrap() {
        let bytes = &files[file["path"].as_str().unwrap()];
        assert_eq!(file["sha256"], Digest::of(bytes).to_string());
        assert_eq!(file["size"], bytes.len());
    }
    assert_eq!(json["skillscout_version"], env!("CARGO_PKG_VERSION"));
    let lines: Vec<Value> = std::str::from_utf8(&files["skills.jsonl"])
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), manifest.summary.skills);
    assert!(lines.iter().any(|line| line["id"] == PRIVATE_ID));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    for line in &lines {
        let id = line["id"].as_str().unwrap();
        let record = runtime.block_on(get(&format!("/v1/skills/{id}"), As::Token));
        assert_eq!(&record.json(), line, "{id}");
    }

    // A folder gets the same lines, written in place, and a manifest that checks them.
    let folder = dir.path().join("export");
    export(
        &state(),
        &request(Layout::Jsonl, Caller::Authenticated),
        &folder,
        false,
    );
    let in_place = std::fs::read(folder.join("skills.jsonl")).unwrap();
    assert_eq!(in_place, files["skills.jsonl"]);
    let json: Value =
        serde_json::from_slice(&std::fs::read(folder.join("manifest.json")).unwrap()).unwrap();
    let listed = &json["files"].as_array().unwrap()[0];
    assert_eq!(listed["path"], "skills.jsonl");
    assert_eq!(listed["sha256"], Digest::of(&in_place).to_string());
    assert_eq!(listed["size"], in_place.len());
}

#[test]
fn anonymous_exports_and_mirrors_hold_no_private_skill() {
    let dir = tempfile::tempdir().unwrap();
    for (layout, archive) in [
        (Layout::Jsonl, false),
        (Layout::SkillsDir, true),
        (Layout::WellKnown, false),
    ] {
        let out = dir.path().join(layout.as_str());
        export(&state(), &request(layout, Caller::Anonymous), &out, archive);
        let mut everything = Vec::new();
        if archive {
            for bytes in untar(&std::fs::read(&out).unwrap()).values() {
                everything.extend_from_slice(bytes);
            }
        } else {
            let mut paths = BTreeSet::new();
            walk(&out, &out, &mut paths);
            for path in paths {
                everything.extend(std::fs::read(out.join(path)).unwrap());
            }
        }
        let text = String::from_utf8_lossy(&everything);
        assert!(!text.contains("payroll-audit"), "{layout:?}");
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let anonymous = get("/v1/export?layout=jsonl", As::Anonymous).await;
        assert_eq!(anonymous.status, StatusCode::OK);
        assert!(!anonymous.text().contains("payroll-audit"));
        let authenticated = get("/v1/export?layout=jsonl", As::Token).await;
        assert!(authenticated.text().contains(PRIVATE_ID));
        let archive = get("/v1/export?layout=skills-dir", As::Anonymous).await;
        assert_eq!(
            archive.header(header::CONTENT_TYPE),
            Some("application/gzip")
        );
        for bytes in untar(&archive.body).values() {
            assert!(!String::from_utf8_lossy(bytes).contains("payroll-audit"));
        }
        for domain in crate::fixture::DOMAINS {
            let index = get(
                &format!("/mirror/{domain}/.well-known/agent-skills/index.json"),
                As::Anonymous,
            )
            .await;
            assert!(!index.text().contains("payroll-audit"), "{domain}");
        }
    });
}

#[test]
fn bad_export_parameters_are_400s() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        for uri in [
            "/v1/export?layout=zip",
            "/v1/export?since=yesterday",
            "/v1/export?archive=maybe",
            "/v1/export?layout=skills-dir&archive=false",
            "/v1/export?layout=well-known&archive=0",
        ] {
            let reply = get(uri, As::Anonymous).await;
            assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{uri}");
            crate::fixture::assert_error_shape(&reply, "invalid_parameter");
        }
    });
}

/// Crawls `web` into a fresh data directory and returns a state over it.
fn crawled(data: &Path, web: &Path, domains: &[&str], config: ServeConfig) -> AppState {
    crawled_with(data, web, domains, config, true)
}

fn crawled_with(
    data: &Path,
    web: &Path,
    domains: &[&str],
    config: ServeConfig,
    prefetch: bool,
) -> AppState {
    let store = Arc::new(Store::open(data).unwrap());
    let blobs = Blobs::open(data).unwrap();
    crawl_into(&store, &blobs, web, domains, prefetch);
    state_over(data, store, blobs, Tokens::from_list([TOKEN]), config)
}

#[test]
fn a_well_known_export_crawls_back_to_the_same_records_and_matches_the_mirror() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("web");
    let manifest = export(
        &state(),
        &request(Layout::WellKnown, Caller::Anonymous),
        &out,
        false,
    );
    checked_manifest(&out);
    let exported: BTreeSet<String> = manifest.skills.iter().map(|s| s.id.to_string()).collect();
    assert!(exported.contains("pdfworks.test/pdf-merge"), "{exported:?}");

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut domains = Vec::new();
    for entry in std::fs::read_dir(&out).unwrap() {
        let entry = entry.unwrap();
        if !entry.path().is_dir() {
            continue;
        }
        let domain = entry.file_name().to_string_lossy().into_owned();
        let index_path = entry.path().join(".well-known/agent-skills/index.json");
        let index_bytes = std::fs::read(&index_path).unwrap();
        let index: Value = serde_json::from_slice(&index_bytes).unwrap();
        assert_eq!(
            index["$schema"],
            "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
        );
        // The mirror serves the same index and the same artifacts.
        let mirror_base = format!("/mirror/{domain}/.well-known/agent-skills");
        let mirrored = runtime.block_on(get(&format!("{mirror_base}/index.json"), As::Anonymous));
        assert_eq!(mirrored.status, StatusCode::OK, "{domain}");
        assert_eq!(mirrored.body, index_bytes, "{domain}");
        for skill in index["skills"].as_array().unwrap() {
            let url = skill["url"].as_str().unwrap();
            let bytes =
                std::fs::read(entry.path().join(".well-known/agent-skills").join(url)).unwrap();
            assert_eq!(skill["digest"], Digest::of(&bytes).to_string(), "{url}");
            let artifact = runtime.block_on(get(&format!("{mirror_base}/{url}"), As::Anonymous));
            assert_eq!(artifact.status, StatusCode::OK, "{url}");
            assert_eq!(artifact.body, bytes, "{url}");
        }
        domains.push(domain);
    }
    drop(runtime);

    // Crawl the export: the same ids, descriptions and digests.
    let data = dir.path().join("recrawled");
    let domain_refs: Vec<&str> = domains.iter().map(String::as_str).collect();
    let again = crawled(&data, &out, &domain_refs, ServeConfig::default());
    let original = state();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut recrawled = BTreeSet::new();
    for domain in &domains {
        let list = runtime.block_on(crate::fixture::send_to(
            again.clone(),
            Request::get(format!("/v1/search?domain={domain}&limit=100"))
                .body(Body::empty())
                .unwrap(),
        ));
        for hit in list.json()["hits"].as_array().unwrap() {
            let id = hit["id"].as_str().unwrap().to_owned();
            let path = format!("/v1/skills/{id}");
            let before = runtime.block_on(get(&path, As::Anonymous)).json();
            let after = runtime
                .block_on(crate::fixture::send_to(
                    again.clone(),
                    Request::get(&path).body(Body::empty()).unwrap(),
                ))
                .json();
            assert_eq!(before["description"], after["description"], "{id}");
            // A legacy skill with files beside its SKILL.md is republished as an archive
            // packed by the export, so its digest is that archive's.
            if before["files"].as_array().unwrap().len() <= 1
                || before["index_url"]
                    .as_str()
                    .unwrap()
                    .contains("agent-skills")
            {
                assert_eq!(before["digest"], after["digest"], "{id}");
            }
            recrawled.insert(id);
        }
    }
    drop(original);
    assert_eq!(recrawled, exported);
}

/// Writes a v0.2 site: `skills` are (name, SKILL.md) pairs.
fn write_site(web: &Path, domain: &str, skills: &[(&str, String)]) {
    let base = web.join(domain).join(".well-known/agent-skills");
    let _ = std::fs::remove_dir_all(&base);
    let mut entries = Vec::new();
    for (name, skill_md) in skills {
        std::fs::create_dir_all(base.join(name)).unwrap();
        std::fs::write(base.join(name).join("SKILL.md"), skill_md).unwrap();
        entries.push(serde_json::json!({
            "name": name,
            "type": "skill-md",
            "description": format!("Does {name} things. Use when {name} is asked for."),
            "url": format!("{name}/SKILL.md"),
            "digest": Digest::of(skill_md.as_bytes()).to_string(),
        }));
    }
    let index = serde_json::json!({
        "$schema": "https://schemas.agentskills.io/discovery/0.2.0/schema.json",
        "skills": entries,
    });
    std::fs::write(base.join("index.json"), serde_json::to_vec(&index).unwrap()).unwrap();
}

fn skill_md(name: &str, extra: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Does {name} things. Use when {name} is asked for.\n---\n\n# {name}\n\n{extra}\n"
    )
}

#[test]
fn two_publishers_of_one_name_get_distinct_valid_names() {
    let dir = tempfile::tempdir().unwrap();
    let web = dir.path().join("web");
    // `gamma`'s SKILL.md names it otherwise (a lenient skill): its name is set too.
    let gamma = skill_md("gamma", "alpha").replace("name: gamma", "name: gamma-tool");
    write_site(
        &web,
        "alpha.test",
        &[("pdf", skill_md("pdf", "alpha")), ("gamma", gamma)],
    );
    write_site(
        &web,
        "beta.test",
        &[
            ("pdf", skill_md("pdf", "beta")),
            ("pdf-beta-test", skill_md("pdf-beta-test", "x")),
        ],
    );
    let state = crawled(
        &dir.path().join("data"),
        &web,
        &["alpha.test", "beta.test"],
        ServeConfig::default(),
    );
    let out = dir.path().join("skills");
    let manifest = export(
        &state,
        &request(Layout::SkillsDir, Caller::Anonymous),
        &out,
        false,
    );
    checked_manifest(&out);
    let folders: BTreeMap<String, String> = manifest
        .skills
        .iter()
        .map(|skill| (skill.id.to_string(), skill.path.clone()))
        .collect();
    insta::assert_debug_snapshot!(folders, @r#"
    {
        "alpha.test/gamma": "gamma",
        "alpha.test/pdf": "pdf",
        "beta.test/pdf": "pdf-beta-test",
        "beta.test/pdf-beta-test": "pdf-beta-test-2",
    }
    "#);
    assert_eq!(manifest.summary.renamed, 3);
    let gamma = &manifest.renamed[0];
    assert_eq!(
        (gamma.from.as_str(), gamma.to.as_str()),
        ("gamma-tool", "gamma")
    );
    let fixed = std::fs::read_to_string(out.join("gamma/SKILL.md")).unwrap();
    assert!(fixed.starts_with("---\nname: gamma\n"), "{fixed}");
    let renamed = std::fs::read_to_string(out.join("pdf-beta-test/SKILL.md")).unwrap();
    assert!(
        renamed.starts_with("---\nname: pdf-beta-test\n"),
        "{renamed}"
    );
    assert!(renamed.contains("beta"));
    let kept = std::fs::read_to_string(out.join("pdf/SKILL.md")).unwrap();
    assert_eq!(kept, skill_md("pdf", "alpha"));
}

#[test]
fn since_exports_what_changed_and_lists_tombstones() {
    let dir = tempfile::tempdir().unwrap();
    let web = dir.path().join("web");
    let data = dir.path().join("data");
    write_site(
        &web,
        "site.test",
        &[
            ("one", skill_md("one", "v1")),
            ("two", skill_md("two", "v1")),
            ("same", skill_md("same", "v1")),
        ],
    );
    let store = Arc::new(Store::open(&data).unwrap());
    let blobs = Blobs::open(&data).unwrap();
    crawl_into(&store, &blobs, &web, &["site.test"], true);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let since = time::OffsetDateTime::now_utc();
    std::thread::sleep(std::time::Duration::from_millis(20));
    write_site(
        &web,
        "site.test",
        &[
            ("one", skill_md("one", "v2")),
            ("three", skill_md("three", "v1")),
            ("same", skill_md("same", "v1")),
        ],
    );
    crawl_into(&store, &blobs, &web, &["site.test"], true);
    let state = state_over(&data, store, blobs, Tokens::none(), ServeConfig::default());

    let out = dir.path().join("changes");
    let mut changed = request(Layout::SkillsDir, Caller::Anonymous);
    changed.since = Some(since);
    let manifest = export(&state, &changed, &out, false);
    let ids: Vec<String> = manifest.skills.iter().map(|s| s.id.to_string()).collect();
    assert_eq!(ids, ["site.test/one", "site.test/three"]);
    let removed: Vec<String> = manifest.removed.iter().map(|r| r.id.to_string()).collect();
    assert_eq!(removed, ["site.test/two"]);
    let json = checked_manifest(&out);
    assert_eq!(json["removed"][0]["id"], "site.test/two");
    assert!(json["since"].is_string());
    assert!(
        std::fs::read_to_string(out.join("one/SKILL.md"))
            .unwrap()
            .contains("v2")
    );
}

/// A deterministic stream of bytes that gzip cannot shrink.
fn noise(len: usize) -> Vec<u8> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_export_streams_under_the_work_limit() {
    let dir = tempfile::tempdir().unwrap();
    let web = dir.path().join("web");
    let base = web.join("big.test/.well-known/agent-skills");
    std::fs::create_dir_all(&base).unwrap();
    let big = noise(6 * 1024 * 1024);
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    for (path, bytes) in [
        ("SKILL.md", skill_md("big", "large data").into_bytes()),
        ("data/noise.bin", big.clone()),
    ] {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        builder
            .append_data(&mut header, path, bytes.as_slice())
            .unwrap();
    }
    let archive = builder.into_inner().unwrap().finish().unwrap();
    std::fs::write(base.join("big.tar.gz"), &archive).unwrap();
    let index = serde_json::json!({
        "$schema": "https://schemas.agentskills.io/discovery/0.2.0/schema.json",
        "skills": [{
            "name": "big", "type": "archive", "url": "big.tar.gz",
            "description": "Does big things. Use when big is asked for.",
            "digest": Digest::of(&archive).to_string(),
        }],
    });
    std::fs::write(base.join("index.json"), serde_json::to_vec(&index).unwrap()).unwrap();
    let data = dir.path().join("data");
    let config = ServeConfig {
        max_in_flight: 1,
        ..ServeConfig::default()
    };
    let state = tokio::task::spawn_blocking(move || crawled(&data, &web, &["big.test"], config))
        .await
        .unwrap();

    let router = api::router(state);
    let response = router
        .clone()
        .oneshot(
            Request::get("/v1/export?layout=skills-dir")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()[header::CACHE_CONTROL], "no-store");
    assert!(response.headers().get(header::CONTENT_LENGTH).is_none());
    let mut body = response.into_body();
    let first = std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx))
        .await
        .unwrap()
        .unwrap()
        .into_data()
        .unwrap();
    assert!(first.len() < 1024 * 1024);
    // The export holds the server's one work permit while it streams: other work is shed.
    let busy = router
        .clone()
        .oneshot(
            Request::get("/v1/search?q=big")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(busy.status(), StatusCode::SERVICE_UNAVAILABLE);
    let mut all = first.to_vec();
    let mut frames = 1;
    while let Some(frame) =
        std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await
    {
        all.extend_from_slice(&frame.unwrap().into_data().unwrap());
        frames += 1;
    }
    assert!(frames > 8, "{frames} frames");
    let files = untar(&all);
    assert_eq!(files["big/data/noise.bin"], big);
    let manifest: Value = serde_json::from_slice(&files["manifest.json"]).unwrap();
    assert_eq!(manifest["summary"]["skills"], 1);
    // Once the body is sent, the permit is given back.
    let mut status = StatusCode::SERVICE_UNAVAILABLE;
    for _ in 0..100 {
        let reply = router
            .clone()
            .oneshot(
                Request::get("/v1/search?q=big")
                    .body(Body::empty())
                    .unwrap(),
            )
            .await
            .unwrap();
        status = reply.status();
        if status == StatusCode::OK {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(status, StatusCode::OK);
}
