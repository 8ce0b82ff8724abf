//! Licence names as published (`MIT`, `MIT License`, `Apache-2.0 license`) and the one name
//! each is counted and filtered under: the published text without a trailing "License" or
//! "Licence", spaces collapsed, lower-cased, and the common spellings of a few licences read
//! as their SPDX identifier (`Apache License 2.0` → `apache-2.0`). Records keep the licence as
//! published; the index keeps this key.

/// Spellings of well-known licences, after the suffix is cut and the text lower-cased, and the
/// SPDX identifier (lower-cased) they stand for.
const ALIASES: [(&str, &str); 10] = [
    ("apache 2.0", "apache-2.0"),
    ("apache 2", "apache-2.0"),
    ("apache-2", "apache-2.0"),
    ("apache license 2.0", "apache-2.0"),
    ("apache license, version 2.0", "apache-2.0"),
    ("3-clause bsd", "bsd-3-clause"),
    ("bsd 3-clause", "bsd-3-clause"),
    ("2-clause bsd", "bsd-2-clause"),
    ("bsd 2-clause", "bsd-2-clause"),
    ("the unlicense", "unlicense"),
];

/// Returns the name a published licence is counted and filtered under.
pub fn key(published: &str) -> String {
    let collapsed = published.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut text = collapsed.to_lowercase();
    for suffix in [" license", " licence"] {
        if let Some(cut) = text.strip_suffix(suffix)
            && !cut.is_empty()
        {
            text = cut.to_owned();
            break;
        }
    }
    let text = text.trim_end_matches(['.', ',', ';']).trim().to_owned();
    match ALIASES.iter().find(|(spelling, _)| *spelling == text) {
        Some((_, spdx)) => (*spdx).to_owned(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_of_one_licence_share_a_key() {
        for published in ["MIT", "mit", "MIT License", "MIT license", " MIT  Licence "] {
            assert_eq!(key(published), "mit", "{published:?}");
        }
        for published in ["Apache-2.0", "Apache-2.0 license", "Apache License 2.0"] {
            assert_eq!(key(published), "apache-2.0", "{published:?}");
        }
        assert_eq!(key("BSD-3-Clause license"), "bsd-3-clause");
        assert_eq!(key("3-clause BSD license"), "bsd-3-clause");
        // What is not a licence name stays as it is, lower-cased.
        assert_eq!(
            key("Complete terms in LICENSE.txt"),
            "complete terms in license.txt"
        );
        assert_eq!(key("License"), "license");
    }
}
