//! The audit over `../shared/corpus`: 399 skills from reputable publishers, read the way a
//! crawl reads them (v0.2 archives and SKILL.md files, legacy v0.1 file lists). At most 2% may
//! come out at `high` or above; the test prints the distribution, the skills at `high` and
//! above with their findings, the rules that fire below that, and the time the audit took.
//!
//! The corpus lives beside the checkout and is never copied into it. Where it is absent the
//! test says so and passes, except under CI, where it must be there.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use formats::archive::{ArchiveFormat, ArchiveLimits, unpack};
use formats::audit::{Audit, AuditFile, AuditInput, Risk, Severity, allowed_tools, audit};
use formats::skill_md;
use serde_json::Value;

/// A skill of the corpus, with every file it publishes.
struct CorpusSkill {
    key: String,
    name: String,
    description: String,
    allowed_tools: Vec<String>,
    files: Vec<(String, Vec<u8>)>,
}

fn corpus_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "../shared/corpus is missing: under CI the corpus tests run, they do not skip"
    );
    #[allow(clippy::print_stderr)]
    {
        eprintln!("skipping: ../shared/corpus not found beside the checkout");
    }
    None
}

/// Reads every skill of the corpus; a skill listed by both indexes of its domain is read once,
/// from the v0.2 index.
fn read_corpus(dir: &Path) -> Vec<CorpusSkill> {
    let mut domains: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the corpus directory is readable")
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.join(".well-known").is_dir())
        .collect();
    domains.sort();
    let mut skills = Vec::new();
    for domain in domains {
        let domain_name = domain
            .file_name()
            .and_then(|name| name.to_str())
            .expect("domain folders have UTF-8 names")
            .to_owned();
        let mut seen = HashSet::new();
        for index in ["agent-skills", "skills"] {
            let index_path = domain.join(".well-known").join(index).join("index.json");
            let Ok(bytes) = std::fs::read(&index_path) else {
                continue;
            };
            let index_json: Value =
                serde_json::from_slice(&bytes).expect("corpus indexes are JSON");
            let entries = index_json["skills"].as_array().cloned().unwrap_or_default();
            for entry in entries {
                let name = entry["name"]
                    .as_str()
                    .expect("entries have names")
                    .to_owned();
                if !seen.insert(name.clone()) {
                    continue;
                }
                let files = entry_files(&domain, index, &name, &entry);
                skills.push(skill(format!("{domain_name}/{name}"), name, files));
            }
        }
    }
    skills
}

/// Reads the files an index entry publishes.
fn entry_files(domain: &Path, index: &str, name: &str, entry: &Value) -> Vec<(String, Vec<u8>)> {
    let read = |path: &Path| {
        std::fs::read(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
    };
    match entry["type"].as_str() {
        Some(kind) => {
            let url = entry["url"].as_str().expect("v0.2 entries have a url");
            let bytes = read(&domain.join(url.trim_start_matches('/')));
            if kind == "skill-md" {
                return vec![("SKILL.md".to_owned(), bytes)];
            }
            let format =
                ArchiveFormat::detect(None, url, &bytes).expect("corpus archives are archives");
            let unpacked = unpack(&bytes, format, &ArchiveLimits::default())
                .unwrap_or_else(|error| panic!("{url}: {error:?}"));
            unpacked
                .files
                .into_iter()
                .map(|file| (file.path, file.bytes))
                .collect()
        }
        None => {
            let folder = domain.join(".well-known").join(index).join(name);
            entry["files"]
                .as_array()
                .expect("v0.1 entries list files")
                .iter()
                .filter_map(Value::as_str)
                .map(|file| (file.to_owned(), read(&folder.join(file))))
                .collect()
        }
    }
}

fn skill(key: String, name: String, files: Vec<(String, Vec<u8>)>) -> CorpusSkill {
    let parsed = files
        .iter()
        .find(|(path, _)| path == "SKILL.md")
        .map(|(_, bytes)| skill_md::parse(bytes, Some(&name)))
        .unwrap_or_default();
    CorpusSkill {
        key,
        name,
        description: parsed.description.unwrap_or_default(),
        allowed_tools: allowed_tools(&parsed.frontmatter),
        files,
    }
}

fn run(skill: &CorpusSkill) -> (Audit, Duration) {
    let files: Vec<AuditFile<'_>> = skill
        .files
        .iter()
        .map(|(path, bytes)| AuditFile { path, bytes })
        .collect();
    let input = AuditInput {
        name: &skill.name,
        description: &skill.description,
        allowed_tools: &skill.allowed_tools,
        files: &files,
    };
    let started = Instant::now();
    let audit = audit(&input);
    (audit, started.elapsed())
}

#[test]
#[allow(clippy::print_stderr)]
fn at_most_two_percent_of_the_corpus_is_high_risk() {
    let Some(dir) = corpus_dir() else {
        return;
    };
    let skills = read_corpus(&dir);
    assert_eq!(skills.len(), 399, "the corpus has 399 skills");
    let bytes: usize = skills
        .iter()
        .flat_map(|skill| skill.files.iter().map(|(_, bytes)| bytes.len()))
        .sum();
    let mut distribution: BTreeMap<Risk, usize> = BTreeMap::new();
    let mut below_high: BTreeMap<(Severity, &'static str), usize> = BTreeMap::new();
    let mut high = Vec::new();
    let mut elapsed = Duration::ZERO;
    for skill in &skills {
        let (audit, took) = run(skill);
        elapsed += took;
        *distribution.entry(audit.risk).or_default() += 1;
        for finding in &audit.findings {
            if finding.severity < Severity::High {
                *below_high
                    .entry((finding.severity, finding.rule.as_str()))
                    .or_default() += 1;
            }
        }
        if audit.risk >= Risk::High {
            high.push((skill.key.clone(), audit));
        }
    }
    eprintln!(
        "audited {} skills ({} files, {bytes} bytes) in {elapsed:?}",
        skills.len(),
        skills.iter().map(|skill| skill.files.len()).sum::<usize>()
    );
    eprintln!("risk distribution: {distribution:?}");
    for (key, audit) in &high {
        eprintln!("{key}: {}", audit.risk);
        for finding in audit
            .findings
            .iter()
            .filter(|finding| finding.severity >= Severity::Medium)
        {
            eprintln!(
                "    {} {} {}:{} {} | {}",
                finding.severity.as_str(),
                finding.rule.as_str(),
                finding.file,
                finding.line,
                finding.message,
                finding.excerpt
            );
        }
    }
    let mut counts: Vec<_> = below_high.into_iter().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    eprintln!("findings below high, by severity and rule:");
    for ((severity, rule), count) in counts {
        eprintln!("    {count:5} {} {rule}", severity.as_str());
    }
    assert!(
        high.len() * 100 <= skills.len() * 2,
        "{} of {} skills at high or above",
        high.len(),
        skills.len()
    );
}
