//! Publisher text never reaches the operator's terminal as control characters: escape
//! sequences, carriage returns, bells and bidi overrides in a skill's name, description,
//! body or frontmatter keys are shown as visible escapes by `validate` and `search`, while
//! `--json` output stays exact. See: the hardening issue, defect 5.

use std::path::Path;

use crate::util::{skillscout, stderr, stdout, store_and_index_sites};

/// What a terminal would act on: ESC (CSI and OSC sequences), CSI as one C1 byte, BEL,
/// carriage return, backspace and the bidi overrides.
const DANGEROUS: [char; 7] = [
    '\u{1b}', '\u{9b}', '\u{7}', '\r', '\u{8}', '\u{202e}', '\u{2066}',
];

/// A SKILL.md whose frontmatter and body carry terminal escapes. YAML double-quoted strings
/// spell ESC `\e`, BEL `\a` and CR `\r`.
const HOSTILE_SKILL_MD: &str = "---\n\
name: evil-skill\n\
description: \"Converts PDF files\\e[2J\\e]0;pwned\\a to text\\rHIDDEN \\u202Etxt.exe\"\n\
\"x\\e[31mkey\": 1\n\
---\n\
# Steps\n\nConvert the PDF\u{1b}[8m secretly\u{9b}2J.\n";

fn assert_terminal_safe(text: &str) {
    for character in DANGEROUS {
        assert!(
            !text.contains(character),
            "U+{:04X} reached the terminal in:\n{text:?}",
            u32::from(character)
        );
    }
}

/// Writes a one-skill well-known tree for `hostile.test` under `root`.
fn hostile_site(root: &Path) -> std::path::PathBuf {
    let site = root.join("hostile.test");
    let skill = site.join(".well-known/skills/evil-skill");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(skill.join("SKILL.md"), HOSTILE_SKILL_MD).unwrap();
    std::fs::write(
        site.join(".well-known/skills/index.json"),
        r#"{"skills": [{"name": "evil-skill", "description": "PDF\u001b[2J tools", "files": ["SKILL.md"]}]}"#,
    )
    .unwrap();
    site
}

#[test]
fn validate_shows_control_characters_as_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let site = hostile_site(dir.path());
    let output = skillscout(
        dir.path(),
        &["validate", "--verbose", site.to_str().unwrap()],
    );
    let shown = stdout(&output);
    assert!(shown.contains("evil-skill"), "{shown}{}", stderr(&output));
    assert_terminal_safe(&shown);
    assert_terminal_safe(&stderr(&output));
    // The key with the escape is named, visibly.
    assert!(shown.contains("\\u{1b}[31mkey"), "{shown}");
}

#[test]
fn search_shows_control_characters_as_escapes_and_json_stays_exact() {
    let dir = tempfile::tempdir().unwrap();
    let site = hostile_site(dir.path());
    let data = dir.path().join("data");
    let stats = store_and_index_sites(&data, &[site]);
    assert_eq!(stats.upserted, 1);

    let data_arg = data.to_str().unwrap();
    // "secretly" is only in the body, so the snippet line is printed too.
    for query in ["pdf", "secretly"] {
        let output = skillscout(dir.path(), &["search", "--data", data_arg, query]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let shown = stdout(&output);
        assert!(shown.contains("hostile.test/evil-skill"), "{shown}");
        assert_terminal_safe(&shown);
        assert!(shown.contains("\\u{1b}"), "{shown}");
    }

    let output = skillscout(dir.path(), &["search", "--data", data_arg, "--json", "pdf"]);
    let body: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let description = body["hits"][0]["description"].as_str().unwrap();
    assert!(description.contains("\u{1b}[2J\u{1b}]0;pwned\u{7} to text\rHIDDEN \u{202e}"));
}
