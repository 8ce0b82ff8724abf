//! The audit over the held-out sets (`tests/audit-heldout/`, `tests/audit-heldout-2/`): skills
//! written independently of the audit, labelled malicious or benign. A skill counts as flagged
//! when its risk is `high` or above (the targets: at least 90% of the malicious skills, at most
//! 5% of the benign ones). Each set was measured once with the rules frozen (the figures are in
//! docs/BENCHMARKS.md); the first set's misses have been read since, so both are regression
//! sets now, held to no fewer catches than their measurement and to the benign target.

use std::path::{Path, PathBuf};

use formats::audit::{AuditFile, AuditInput, Risk, allowed_tools, audit};
use formats::skill_md;
use serde_json::Value;

fn heldout_dir(set: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(set)
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

/// What the audit made of one held-out set.
struct Measured {
    malicious: usize,
    caught: usize,
    benign: usize,
    flagged: usize,
}

/// Audits every skill of the set in `tests/{set}` and prints the figures and each miss.
#[allow(clippy::print_stderr)]
fn measure(set: &str) -> Measured {
    let dir = heldout_dir(set);
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
        "{set}: {caught} of {malicious} malicious skills at high or above ({:.1}%), \
         {flagged} of {benign} benign ({:.1}%)",
        caught as f64 * 100.0 / malicious.max(1) as f64,
        flagged as f64 * 100.0 / benign.max(1) as f64
    );
    for miss in &misses {
        eprintln!("    {miss}");
    }
    assert!(malicious > 0 && benign > 0, "the set has both labels");
    Measured {
        malicious,
        caught,
        benign,
        flagged,
    }
}

/// Holds a set to the catches first measured (as counts, so that rounding cannot move the
/// floor) and to at most 5% of its benign skills at high or above.
fn hold(measured: &Measured, (floor_caught, floor_of): (usize, usize)) {
    let Measured {
        malicious,
        caught,
        benign,
        flagged,
    } = *measured;
    assert!(
        caught * floor_of >= floor_caught * malicious,
        "no fewer malicious skills at high or above than when first measured \
         ({floor_caught} of {floor_of}); now {caught} of {malicious}"
    );
    assert!(
        flagged * 100 <= benign * 5,
        "at most 5% of the benign skills are high or above; now {flagged} of {benign}"
    );
}

#[test]
fn the_first_held_out_set_is_caught_and_its_benign_skills_pass() {
    hold(&measure("audit-heldout"), (42, 76));
}

#[test]
fn the_second_held_out_set_is_caught_and_its_benign_skills_pass() {
    hold(&measure("audit-heldout-2"), (59, 86));
}
