//! Folder names for the `skills-dir` layout, where every skill is `<name>/SKILL.md` in one
//! folder and agents require the frontmatter `name` to equal the folder's name.
//!
//! The rule, applied to the records in id order (domain, then name), so the same selection
//! always gets the same names:
//!
//! 1. A skill's folder is its name when the name follows the naming rule (1-64 of `a-z`,
//!    `0-9`, single inner hyphens); otherwise the name made to follow it (lowercased, every
//!    run of other characters one hyphen, cut to 64 characters; `skill` if nothing is left).
//! 2. When several publishers have a skill of that name, the publisher whose domain sorts
//!    first keeps it; each other one becomes `<name>-<domain>`, the domain written the same
//!    way (`example.com:8080` → `example-com-8080`), the name cut so the whole fits 64
//!    characters.
//! 3. A folder name still taken gets `-2`, `-3`, … (cut the same way).
//!
//! A skill whose folder is not its name is reported as renamed, and its SKILL.md is written
//! with the new `name`.

use std::collections::HashSet;

use formats::skill::MAX_NAME_LEN;
use formats::{SkillId, SkillName};

/// Returns the folder of each id (given in id order), by the rule above.
pub(crate) fn folders(ids: &[SkillId]) -> Vec<String> {
    let bases: Vec<String> = ids
        .iter()
        .map(|id| follow_rule(id.slug().as_str()))
        .collect();
    let mut taken: HashSet<String> = HashSet::new();
    let mut claimed: HashSet<&str> = HashSet::new();
    let mut out = Vec::with_capacity(ids.len());
    for (id, base) in ids.iter().zip(&bases) {
        let mut name = if claimed.insert(base.as_str()) {
            base.clone()
        } else {
            joined(base, &follow_rule(id.domain().as_str()))
        };
        let mut counter = 2;
        while taken.contains(&name) {
            name = joined(base, &counter.to_string());
            counter += 1;
        }
        taken.insert(name.clone());
        out.push(name);
    }
    out
}

/// Returns `raw` made to follow the naming rule (unchanged when it does).
pub(crate) fn follow_rule(raw: &str) -> String {
    if SkillName::problem(raw).is_none() {
        return raw.to_owned();
    }
    let mut name = String::new();
    for c in raw.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            name.push(c);
        } else if !name.is_empty() && !name.ends_with('-') {
            name.push('-');
        }
    }
    let name = cut(&name, MAX_NAME_LEN);
    if name.is_empty() {
        "skill".to_owned()
    } else {
        name
    }
}

/// `<base>-<suffix>`, with `base` cut so the whole is at most 64 characters.
fn joined(base: &str, suffix: &str) -> String {
    let suffix = cut(suffix, MAX_NAME_LEN / 2);
    let room = MAX_NAME_LEN - suffix.len() - 1;
    format!("{}-{suffix}", cut(base, room))
}

/// The first `max` characters of an ASCII name, without a trailing hyphen.
fn cut(name: &str, max: usize) -> String {
    let cut: String = name.chars().take(max).collect();
    cut.trim_end_matches('-').to_owned()
}

/// Returns SKILL.md with its frontmatter `name` set to `name`: the top-level `name:` line is
/// replaced (or, if there is none, added after the opening fence); the rest of the bytes are
/// kept as they are.
pub(crate) fn with_name(skill_md: &[u8], name: &str) -> Vec<u8> {
    let text = String::from_utf8_lossy(skill_md);
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let bom = text.starts_with('\u{feff}');
    let body = text.trim_start_matches('\u{feff}');
    let mut lines: Vec<&str> = body.split_inclusive('\n').collect();
    let is_fence = |line: &str| line.trim_end() == "---";
    let line = format!("name: {name}{newline}");
    let mut out = String::with_capacity(text.len() + line.len());
    if bom {
        out.push('\u{feff}');
    }
    if lines.first().is_none_or(|first| !is_fence(first)) {
        // No frontmatter: give it one holding the name.
        out.push_str(&format!("---{newline}{line}---{newline}"));
        out.push_str(body);
        return out.into_bytes();
    }
    let end = lines
        .iter()
        .skip(1)
        .position(|line| is_fence(line))
        .map(|index| index + 1);
    let found = end.and_then(|end| {
        (1..end).find(|&index| {
            let candidate = lines[index];
            candidate.starts_with("name:") || candidate.starts_with("\"name\":")
        })
    });
    match found {
        Some(index) => lines[index] = &line,
        None => lines.insert(1, &line),
    }
    for line in lines {
        out.push_str(line);
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(raw: &[&str]) -> Vec<SkillId> {
        let mut ids: Vec<SkillId> = raw.iter().map(|id| id.parse().unwrap()).collect();
        ids.sort();
        ids
    }

    #[test]
    fn the_first_domain_keeps_a_shared_name() {
        let ids = ids(&[
            "b.test/pdf",
            "a.test/pdf",
            "c.test:8080/pdf",
            "a.test/Release_Notes",
            "b.test/pdf-b-test",
        ]);
        let names = folders(&ids);
        let pairs: Vec<(String, &str)> = ids
            .iter()
            .map(ToString::to_string)
            .zip(names.iter().map(String::as_str))
            .collect();
        insta::assert_debug_snapshot!(pairs, @r#"
        [
            (
                "a.test/Release_Notes",
                "release-notes",
            ),
            (
                "a.test/pdf",
                "pdf",
            ),
            (
                "b.test/pdf",
                "pdf-b-test",
            ),
            (
                "b.test/pdf-b-test",
                "pdf-b-test-2",
            ),
            (
                "c.test:8080/pdf",
                "pdf-c-test-8080",
            ),
        ]
        "#);
        for name in names {
            assert!(SkillName::problem(&name).is_none(), "{name}");
        }
    }

    #[test]
    fn long_names_stay_within_the_limit() {
        let long = "a".repeat(64);
        let ids = ids(&[
            &format!("x.test/{long}"),
            &format!("a-very-long-domain-name-for-testing.example.com/{long}"),
        ]);
        for name in folders(&ids) {
            assert!(SkillName::problem(&name).is_none(), "{name}");
        }
        assert_eq!(follow_rule("---"), "skill");
    }

    #[test]
    fn the_name_line_is_replaced() {
        let md = b"---\nname: pdf\ndescription: x\n---\nbody\n";
        assert_eq!(
            String::from_utf8(with_name(md, "pdf-b-test")).unwrap(),
            "---\nname: pdf-b-test\ndescription: x\n---\nbody\n"
        );
        let crlf = b"---\r\ndescription: x\r\n---\r\nbody";
        assert_eq!(
            String::from_utf8(with_name(crlf, "n")).unwrap(),
            "---\r\nname: n\r\ndescription: x\r\n---\r\nbody"
        );
    }
}
