//! The content fingerprint: one digest of all of a skill's files, the same for two copies of a
//! skill that differ only in how their text was saved (docs/record.md `also_at`).
//!
//! Publishers copy skills from one another, and a directory that lists every copy buries the
//! skill under its own duplicates. Two copies are the same skill when their files are the
//! same bytes, or the same once line endings (CRLF, CR), trailing whitespace (at the end of
//! a line and blank lines at the end of a file) and the order of the top-level keys of
//! SKILL.md's frontmatter are set aside. Every file counts, with its path: a fork that adds a
//! script, renames a file or changes one byte of a binary is another skill.
//!
//! The frontmatter is compared as text, key block by key block (a top-level `key:` line and
//! the lines indented below it), not as parsed YAML, so that nothing beyond the order of the
//! keys is forgiven. Files that are not UTF-8 are compared byte for byte.

use std::collections::BTreeMap;

use sha2::{Digest as _, Sha256};

use crate::skill::Digest;

/// What a fingerprint is made of, written first: a change of the rules makes other digests.
const VERSION: &[u8] = b"skillscout content fingerprint 1\n";
/// The file whose frontmatter keys may come in any order.
const SKILL_MD: &str = "SKILL.md";

/// Returns the fingerprint of a skill's files, given as (path relative to the skill's root,
/// bytes), in any order. A path given twice counts once, with its last bytes.
pub fn fingerprint<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Digest {
    let sorted: BTreeMap<&str, &[u8]> = files.into_iter().collect();
    let mut hasher = Sha256::new();
    hasher.update(VERSION);
    for (path, bytes) in sorted {
        let content = normalized(path, bytes);
        hasher.update(path.as_bytes());
        hasher.update([0]);
        hasher.update(
            u64::try_from(content.len())
                .unwrap_or(u64::MAX)
                .to_le_bytes(),
        );
        hasher.update(&content);
    }
    let digest: [u8; 32] = hasher.finalize().into();
    Digest::from_sha256(digest)
}

/// Returns what of a file the fingerprint reads: text with its line endings, trailing
/// whitespace and (for SKILL.md) frontmatter key order set aside, or the bytes of anything
/// that is not UTF-8. A marker byte keeps the two kinds apart.
fn normalized(path: &str, bytes: &[u8]) -> Vec<u8> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        let mut raw = Vec::with_capacity(bytes.len() + 1);
        raw.push(b'B');
        raw.extend_from_slice(bytes);
        return raw;
    };
    let unified;
    let text = if text.contains('\r') {
        // CRLF first, so that one line ending is not read as two.
        unified = text.replace("\r\n", "\n").replace('\r', "\n");
        unified.as_str()
    } else {
        text
    };
    let lines = lines(text);
    let mut out = Vec::with_capacity(text.len() + 1);
    out.push(b'T');
    let lines = if path == SKILL_MD {
        sorted_frontmatter(lines)
    } else {
        lines
    };
    for line in lines {
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    out
}

/// Splits text at every line ending (LF, CRLF or CR), trims each line's trailing whitespace
/// and leaves out the blank lines at the end.
fn lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.split('\n').map(str::trim_end).collect();
    while lines.last().is_some_and(|line| line.is_empty()) {
        lines.pop();
    }
    lines
}

/// Returns SKILL.md's lines with the top-level key blocks of its frontmatter in sorted order;
/// text without a frontmatter (no `---` first line, or no closing one) is left as it is.
fn sorted_frontmatter(lines: Vec<&str>) -> Vec<&str> {
    if lines.first() != Some(&"---") {
        return lines;
    }
    let Some(close) = lines.iter().skip(1).position(|line| *line == "---") else {
        return lines;
    };
    let close = close + 1;
    // Lines before the first key (comments) stay first; each key line starts a block that
    // holds the lines below it up to the next key line.
    let mut prelude: Vec<&str> = Vec::new();
    let mut blocks: Vec<Vec<&str>> = Vec::new();
    for line in &lines[1..close] {
        if starts_key(line) {
            blocks.push(vec![line]);
        } else if let Some(block) = blocks.last_mut() {
            block.push(line);
        } else {
            prelude.push(line);
        }
    }
    blocks.sort();
    let mut out = Vec::with_capacity(lines.len());
    out.push(lines[0]);
    out.extend(prelude);
    out.extend(blocks.into_iter().flatten());
    out.extend_from_slice(&lines[close..]);
    out
}

/// True for a line that starts a top-level YAML key (`name: …`, `"quoted key": …`): not
/// indented, not a comment, not a list item, with a colon.
fn starts_key(line: &str) -> bool {
    match line.chars().next() {
        None | Some(' ' | '\t' | '#' | '-') => false,
        Some(_) => line.contains(':'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SKILL: &str = "---\nname: pdf-tools\ndescription: Reads PDFs.\nmetadata:\n  version: \"1\"\n---\n# PDF\n\nRun it.\n";

    fn one(path: &str, text: &str) -> Digest {
        fingerprint([(path, text.as_bytes())])
    }

    #[test]
    fn line_endings_trailing_whitespace_and_key_order_are_set_aside() {
        let base = one("SKILL.md", SKILL);
        let crlf = SKILL.replace('\n', "\r\n");
        assert_eq!(one("SKILL.md", &crlf), base);
        let cr = SKILL.replace('\n', "\r");
        assert_eq!(one("SKILL.md", &cr), base);
        let trailing = SKILL
            .replace("Run it.", "Run it.  \t")
            .replace("# PDF", "# PDF ")
            + "\n\n";
        assert_eq!(one("SKILL.md", &trailing), base);
        let no_final_newline = SKILL.trim_end();
        assert_eq!(one("SKILL.md", no_final_newline), base);
        let reordered = "---\nmetadata:\n  version: \"1\"\ndescription: Reads PDFs.\nname: pdf-tools\n---\n# PDF\n\nRun it.\n";
        assert_eq!(one("SKILL.md", reordered), base);
    }

    #[test]
    fn anything_else_is_another_skill() {
        let base = one("SKILL.md", SKILL);
        // A word, a blank line inside the text, an indentation, a nested key's value.
        for other in [
            SKILL.replace("Run it.", "Run it now."),
            SKILL.replace("# PDF\n", "# PDF\n\n"),
            SKILL.replace("Run it.", "  Run it."),
            SKILL.replace("version: \"1\"", "version: \"2\""),
            // Key order matters outside SKILL.md's frontmatter.
            SKILL.replace("---\nname", "---\n\nname"),
        ] {
            assert_ne!(one("SKILL.md", &other), base, "{other:?}");
        }
        // Key order is forgiven in SKILL.md only.
        let data = "a: 1\nb: 2\n";
        assert_ne!(one("config.yaml", data), one("config.yaml", "b: 2\na: 1\n"));
        // The same text under another path.
        assert_ne!(one("skill.md", SKILL), base);
    }

    #[test]
    fn every_file_counts_with_its_path() {
        let skill = SKILL.as_bytes();
        let alone = fingerprint([("SKILL.md", skill)]);
        let fork = fingerprint([
            ("SKILL.md", skill),
            ("scripts/run.sh", b"echo hi\n".as_slice()),
        ]);
        assert_ne!(alone, fork);
        let renamed = fingerprint([
            ("SKILL.md", skill),
            ("scripts/go.sh", b"echo hi\n".as_slice()),
        ]);
        assert_ne!(fork, renamed);
        // Order does not matter; line endings of the other files are set aside too.
        let again = fingerprint([
            ("scripts/run.sh", b"echo hi\r\n".as_slice()),
            ("SKILL.md", skill),
        ]);
        assert_eq!(fork, again);
        // Binary files are compared byte for byte.
        let binary = fingerprint([
            ("SKILL.md", skill),
            ("a.bin", [0xff, 0x0d, 0x0a].as_slice()),
        ]);
        let other = fingerprint([("SKILL.md", skill), ("a.bin", [0xff, 0x0a].as_slice())]);
        assert_ne!(binary, other);
    }

    #[test]
    fn frontmatter_without_a_closing_fence_is_plain_text() {
        let open = "---\nname: a\ndescription: b\n# body";
        let swapped = "---\ndescription: b\nname: a\n# body";
        assert_ne!(one("SKILL.md", open), one("SKILL.md", swapped));
    }
}
