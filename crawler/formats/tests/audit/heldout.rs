//! The audit over the first held-out set (`tests/audit-heldout/`): skills written independently
//! of the audit, labelled malicious or benign. A skill counts as flagged when its risk is
//! `high` or above, as the targets count it (at least 90% of the malicious skills, at
//! most 5% of the benign ones). Measured once with the rules frozen: 42 of 76 malicious
//! (55.3%) and 3 of 146 benign (2.1%). Its misses have been read since, so it is a regression
//! set now, held to what that measurement found; a fresh set measures quality
//! (docs/BENCHMARKS.md).

use std::path::{Path, PathBuf};

use formats::audit::{AuditFile, AuditInput, Risk, allowed_tools, audit};
use formats::skill_md;
use serde_json::Value;

fn heldout_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/audit-heldout")
}

/// Every file under `dir`, as paths relative to it, in a stable order.
fn files_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(folder) = pending.pop() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&folder)
            .unwrap_or_else(|error| panic!("{}: {error}", folder.display()))
            .map(|entry| entry.expect("a readable folder").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                pending.push(path);
            } else {
                let relative = path
                    .strip_prefix(dir)
                    .expect("under the skill folder")
                    .to_string_lossy()
                    .replace('\\', "/");
                let bytes = std::fs::read(&path).expect("a readable file");
                out.push((relative, bytes));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
#[allow(clippy::print_stderr)]
fn the_held_out_set_is_caught_and_its_benign_skills_pass() {
    let dir = heldout_dir();
    let labels: Vec<Value> = serde_json::from_slice(
        &std::fs::read(dir.join("labels.json")).expect("labels.json is there"),
    )
    .expect("labels.json is JSON");
    let (mut malicious, mut caught, mut benign, mut flagged) = (0usize, 0usize, 0usize, 0usize);
    let mut misses = Vec::new();
    for label in &labels {
        let path = label["path"].as_str().expect("every label has a path");
        let is_malicious = label["label"] == "malicious";
        let folder = dir.join(path);
        let name = folder
            .file_name()
            .and_then(|name| name.to_str())
            .expect("a folder name")
            .to_owned();
        let files = files_of(&folder);
        let parsed = files
            .iter()
            .find(|(file, _)| file == "SKILL.md")
            .map(|(_, bytes)| skill_md::parse(bytes, Some(&name)))
            .unwrap_or_default();
        let tools = allowed_tools(&parsed.frontmatter);
        let description = parsed.description.unwrap_or_default();
        let audit_files: Vec<AuditFile<'_>> = files
            .iter()
            .map(|(path, bytes)| AuditFile { path, bytes })
            .collect();
        let result = audit(&AuditInput {
            name: &name,
            description: &description,
            allowed_tools: &tools,
            files: &audit_files,
        });
        let high = result.risk >= Risk::High;
        if is_malicious {
            malicious += 1;
            if high {
                caught += 1;
            } else {
                misses.push(format!(
                    "missed {path} ({}): {}",
                    result.risk,
                    label["technique"].as_str().unwrap_or_default()
                ));
            }
        } else {
            benign += 1;
            if high {
                flagged += 1;
                let rules: Vec<&str> = result
                    .findings
                    .iter()
                    .filter(|finding| Risk::from(finding.severity) >= Risk::High)
                    .map(|finding| finding.rule.as_str())
                    .collect();
                misses.push(format!(
                    "flagged {path} ({}): {}",
                    result.risk,
                    rules.join(", ")
                ));
            }
        }
    }
    eprintln!(
        "held-out: {caught} of {malicious} malicious skills at high or above ({:.1}%), \
         {flagged} of {benign} benign ({:.1}%)",
        caught as f64 * 100.0 / malicious.max(1) as f64,
        flagged as f64 * 100.0 / benign.max(1) as f64
    );
    for miss in &misses {
        eprintln!("    {miss}");
    }
    assert!(malicious > 0 && benign > 0, "the set has both labels");
    // The floor as the counts measured, so that rounding cannot move it: 42 of 76.
    let (floor_caught, floor_of) = (42, 76);
    assert!(
        caught * floor_of >= floor_caught * malicious,
        "no fewer malicious skills at high or above than when first measured (42 of 76)"
    );
    assert!(
        flagged * 100 <= benign * 5,
        "at most 5% of the benign skills are high or above"
    );
}
