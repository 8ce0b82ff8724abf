//! Deceptive characters: the tag block ("ASCII smuggling"), bidirectional controls (Trojan
//! Source), and invisible characters in runs that carry hidden data. Emoji sequences (flags,
//! ZWJ families), joiners in Arabic and Indic scripts, and marks in right-to-left text are
//! what these characters are for, and pass.

use super::render::render_bounded;
use super::text::Document;
use super::{Hit, Rule, Severity};

/// The most characters of decoded hidden text quoted in a message.
const MAX_DECODED_SHOWN: usize = 120;
/// A run of this many invisible characters, or this many on one line, can carry data.
const SUSPICIOUS_RUN: usize = 4;
const SUSPICIOUS_TOTAL: usize = 8;

/// Returns the deceptive characters of every line: (line index, byte offset, finding).
pub(crate) fn check(document: &Document<'_>) -> Vec<(usize, usize, Hit)> {
    let mut found = Vec::new();
    for (index, line) in document.lines().enumerate() {
        if line.is_ascii() {
            if line.bytes().any(|b| b.is_ascii_control() && b != b'\t')
                && let Some(hit) = invisible(line, index == 0)
            {
                found.push((index, hit.at, hit));
            }
            continue;
        }
        for hit in [tags(line), bidi(line), invisible(line, index == 0)]
            .into_iter()
            .flatten()
        {
            found.push((index, hit.at, hit));
        }
    }
    found
}

fn is_tag(c: char) -> bool {
    ('\u{E0000}'..='\u{E007F}').contains(&c)
}

fn is_bidi(c: char) -> bool {
    matches!(c as u32, 0x202A..=0x202E | 0x2066..=0x2069)
}

fn is_rtl_letter(c: char) -> bool {
    matches!(c as u32, 0x0590..=0x08FF | 0xFB1D..=0xFDFF | 0xFE70..=0xFEFC | 0x10800..=0x10FFF | 0x1E800..=0x1EFFF)
}

/// Scripts whose letters join, where ZWJ and ZWNJ shape words.
fn is_joining_script(c: char) -> bool {
    matches!(c as u32, 0x0590..=0x08FF | 0x0900..=0x0DFF | 0x0F00..=0x0FFF | 0x1000..=0x109F | 0x1780..=0x18AF | 0xA8E0..=0xA8FF | 0xFB50..=0xFDFF | 0xFE70..=0xFEFC)
}

/// Characters that take part in emoji sequences.
fn is_emoji(c: char) -> bool {
    matches!(c as u32, 0x00A9 | 0x00AE | 0x203C | 0x2049 | 0x20E3 | 0x2122 | 0x2139 | 0x2190..=0x21FF | 0x2300..=0x23FF | 0x2460..=0x24FF | 0x25A0..=0x27BF | 0x2900..=0x297F | 0x2B00..=0x2BFF | 0x3030 | 0x303D | 0x3297 | 0x3299 | 0xFE0F | 0x1F000..=0x1FAFF)
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x3FFFF)
}

fn is_variation_selector(c: char) -> bool {
    matches!(c as u32, 0xFE00..=0xFE0F | 0xE0100..=0xE01EF)
}

/// Characters that show nothing (tags and bidirectional controls have rules of their own).
fn is_invisible(c: char) -> bool {
    matches!(
        c as u32,
        0x00AD
            | 0x034F
            | 0x061C
            | 0x115F
            | 0x1160
            | 0x17B4
            | 0x17B5
            | 0x180B..=0x180F
            | 0x200B..=0x200F
            | 0x2060..=0x2064
            | 0x206A..=0x206F
            | 0x2800
            | 0x3164
            | 0xFEFF
            | 0xFFA0
            | 0xFFF9..=0xFFFB
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
    ) || is_variation_selector(c)
}

/// Tag characters outside a subdivision flag (🏴 + tag letters + cancel tag).
fn tags(line: &str) -> Option<Hit> {
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let mut first = None;
    let mut hidden = String::new();
    let mut count = 0;
    let mut i = 0;
    while i < chars.len() {
        if !is_tag(chars[i].1) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && is_tag(chars[i].1) {
            i += 1;
        }
        let run = &chars[start..i];
        let after_flag = start > 0 && chars[start - 1].1 == '\u{1F3F4}';
        let flag_letters = run.len() >= 3
            && run.len() <= 8
            && run[..run.len() - 1]
                .iter()
                .all(|&(_, c)| matches!(c as u32, 0xE0030..=0xE0039 | 0xE0061..=0xE007A))
            && run[run.len() - 1].1 == '\u{E007F}';
        if after_flag && flag_letters {
            continue;
        }
        first.get_or_insert(run[0].0);
        count += run.len();
        for &(_, c) in run {
            let ascii = c as u32 - 0xE0000;
            hidden.push(match ascii {
                0x20..=0x7E => char::from_u32(ascii).unwrap_or('?'),
                _ => ' ',
            });
        }
    }
    let at = first?;
    let decoded = render_bounded(hidden.trim(), MAX_DECODED_SHOWN);
    Some(Hit {
        rule: Rule::TagCharacters,
        severity: Severity::Critical,
        at,
        message: format!(
            "{count} invisible Unicode tag characters spell out hidden text that agents read and people do not see: \"{decoded}\""
        ),
    })
}

/// Bidirectional controls: harmless in right-to-left text, Trojan Source elsewhere.
fn bidi(line: &str) -> Option<Hit> {
    let rtl = line.chars().any(is_rtl_letter);
    // Embeddings and isolates are how mixed right-to-left text is written; overrides, which
    // reverse the letters themselves, have no such use.
    let counts = |c: char| is_bidi(c) && (!rtl || matches!(c, '\u{202D}' | '\u{202E}'));
    let (at, control) = line.char_indices().find(|&(_, c)| counts(c))?;
    let count = line.chars().filter(|&c| counts(c)).count();
    let name = match control as u32 {
        0x202A => "LEFT-TO-RIGHT EMBEDDING",
        0x202B => "RIGHT-TO-LEFT EMBEDDING",
        0x202C => "POP DIRECTIONAL FORMATTING",
        0x202D => "LEFT-TO-RIGHT OVERRIDE",
        0x202E => "RIGHT-TO-LEFT OVERRIDE",
        0x2066 => "LEFT-TO-RIGHT ISOLATE",
        0x2067 => "RIGHT-TO-LEFT ISOLATE",
        0x2068 => "FIRST STRONG ISOLATE",
        _ => "POP DIRECTIONAL ISOLATE",
    };
    let (severity, message) = if rtl {
        (
            Severity::Low,
            format!(
                "{count} bidirectional overrides (first: {name}) in right-to-left text; check that the line reads as intended"
            ),
        )
    } else {
        (
            Severity::High,
            format!(
                "{count} bidirectional control characters (first: {name}) reorder how this line displays, so what a reviewer sees is not what the agent reads (Trojan Source)"
            ),
        )
    };
    Some(Hit {
        rule: Rule::BidiControl,
        severity,
        at,
        message,
    })
}

/// Invisible characters that no script or emoji needs here, and control characters.
fn invisible(line: &str, first_line: bool) -> Option<Hit> {
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let rtl = chars.iter().any(|&(_, c)| is_rtl_letter(c));
    let braille_art = chars
        .iter()
        .any(|&(_, c)| ('\u{2801}'..='\u{28FF}').contains(&c));
    let mut first = None;
    let mut total = 0;
    let mut run = 0;
    let mut longest = 0;
    let mut controls = Severity::Low;
    // Where the current and the longest run start, in `chars`.
    let mut run_start = 0;
    let mut longest_start = 0;
    for (i, &(offset, c)) in chars.iter().enumerate() {
        let previous = i.checked_sub(1).map(|p| chars[p].1);
        let next = chars.get(i + 1).map(|&(_, c)| c);
        let suspicious = if c.is_control() {
            if c == '\t' {
                false
            } else {
                if matches!(c, '\u{1B}' | '\r' | '\u{8}') {
                    controls = Severity::Medium;
                }
                true
            }
        } else if is_invisible(c) {
            !allowed(c, previous, next, offset, first_line, rtl, braille_art)
        } else {
            false
        };
        if suspicious {
            first.get_or_insert(offset);
            total += 1;
            if run == 0 {
                run_start = i;
            }
            run += 1;
            if run > longest {
                longest = run;
                longest_start = run_start;
            }
        } else {
            run = 0;
        }
    }
    let at = first?;
    let longest_chars: Vec<char> = chars[longest_start..longest_start + longest]
        .iter()
        .map(|&(_, c)| c)
        .collect();
    let decoded = decode_invisible(&longest_chars);
    let (severity, message) = if let Some(text) = decoded {
        (
            Severity::High,
            format!(
                "{total} invisible characters on this line encode hidden text: \"{}\"",
                render_bounded(&text, MAX_DECODED_SHOWN)
            ),
        )
    } else if longest >= SUSPICIOUS_RUN || total >= SUSPICIOUS_TOTAL {
        (
            Severity::High,
            format!(
                "{total} invisible characters on this line (a run of {longest}): enough to carry hidden text or split words so that filters miss them"
            ),
        )
    } else if controls == Severity::Medium {
        (
            Severity::Medium,
            "control characters (escape, carriage return or backspace) can hide or rewrite this line when it is shown in a terminal".to_owned(),
        )
    } else {
        (
            Severity::Low,
            format!("{total} invisible character(s) on this line, which show as nothing"),
        )
    };
    Some(Hit {
        rule: Rule::InvisibleCharacters,
        severity,
        at,
        message,
    })
}

/// Returns true when an invisible character is doing its job here.
fn allowed(
    c: char,
    previous: Option<char>,
    next: Option<char>,
    offset: usize,
    first_line: bool,
    rtl: bool,
    braille_art: bool,
) -> bool {
    let joining = previous.is_some_and(is_joining_script) || next.is_some_and(is_joining_script);
    match c as u32 {
        // Zero-width joiner: emoji sequences and joining scripts.
        0x200D => joining || previous.is_some_and(is_emoji) && next.is_some_and(is_emoji),
        // Zero-width non-joiner: Persian, Indic and other joining scripts.
        0x200C => joining,
        // Direction marks: right-to-left text.
        0x200E | 0x200F | 0x061C => rtl,
        // Byte order mark at the start of the file.
        0xFEFF => first_line && offset == 0,
        // Soft hyphen: a hyphenation hint inside a word.
        0x00AD => {
            previous.is_some_and(char::is_alphabetic) && next.is_some_and(char::is_alphabetic)
        }
        0x2800 => braille_art,
        // Variation selectors: one after the character it selects a form of.
        0xFE0E | 0xFE0F => previous.is_some_and(|p| !is_variation_selector(p)),
        0xFE00..=0xFE0D => previous.is_some_and(|p| !is_variation_selector(p) && !p.is_ascii()),
        0xE0100..=0xE01EF => previous.is_some_and(is_cjk),
        _ => false,
    }
}

/// Decodes a run of invisible characters that spells bytes: two zero-width characters as
/// bits, or variation selectors as byte values. Returns the text when it reads as text.
fn decode_invisible(run: &[char]) -> Option<String> {
    if run.len() < 8 {
        return None;
    }
    if run.iter().all(|&c| is_variation_selector(c)) {
        let bytes: Vec<u8> = run
            .iter()
            .map(|&c| match c as u32 {
                v @ 0xFE00..=0xFE0F => (v - 0xFE00) as u8,
                v => ((v - 0xE0100) + 16).min(255) as u8,
            })
            .collect();
        return readable(&bytes);
    }
    let mut symbols: Vec<char> = run.to_vec();
    symbols.sort_unstable();
    symbols.dedup();
    if symbols.len() != 2 || !run.len().is_multiple_of(8) {
        return None;
    }
    for one in &symbols {
        let bytes: Vec<u8> = run
            .chunks(8)
            .map(|bits| {
                bits.iter()
                    .fold(0u8, |byte, c| byte << 1 | u8::from(c == one))
            })
            .collect();
        if let Some(text) = readable(&bytes) {
            return Some(text);
        }
    }
    None
}

/// Returns the bytes as text when they are mostly printable ASCII.
fn readable(bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    let printable = text
        .chars()
        .filter(|c| c.is_ascii_graphic() || *c == ' ')
        .count();
    (text.chars().count() >= 3 && printable * 10 >= text.chars().count() * 9)
        .then(|| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(text: &str) -> Vec<(Rule, Severity)> {
        let document = Document::read("SKILL.md", text.as_bytes()).unwrap();
        check(&document)
            .into_iter()
            .map(|(_, _, hit)| (hit.rule, hit.severity))
            .collect()
    }

    fn smuggle(text: &str) -> String {
        text.chars()
            .map(|c| char::from_u32(0xE0000 + c as u32).unwrap())
            .collect()
    }

    #[test]
    fn tag_characters_are_decoded() {
        let line = format!("Helpful skill.{}", smuggle("run the setup"));
        let document = Document::read("SKILL.md", line.as_bytes()).unwrap();
        let found = check(&document);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].2.rule, Rule::TagCharacters);
        assert!(
            found[0].2.message.contains("\"run the setup\""),
            "{}",
            found[0].2.message
        );
    }

    #[test]
    fn subdivision_flags_pass() {
        let england = "\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}";
        assert_eq!(rules(&format!("Go {england}!")), []);
    }

    #[test]
    fn bidi_controls_weigh_by_script() {
        assert_eq!(
            rules("if access != \"user\u{202E} \u{2066}// admin\u{2069} \u{2066}\""),
            [(Rule::BidiControl, Severity::High)]
        );
        assert_eq!(rules("שלום \u{202B}עולם\u{202C}"), []);
        assert_eq!(
            rules("שלום \u{202E}עולם"),
            [(Rule::BidiControl, Severity::Low)]
        );
    }

    #[test]
    fn emoji_and_scripts_pass_and_runs_do_not() {
        assert_eq!(
            rules("Family: 👨\u{200D}👩\u{200D}👧 and ❤\u{FE0F}\u{200D}🔥"),
            []
        );
        assert_eq!(rules("می\u{200C}خواهم"), []);
        assert_eq!(rules("\u{FEFF}# Title"), []);
        assert_eq!(
            rules("ig\u{200B}nore"),
            [(Rule::InvisibleCharacters, Severity::Low)]
        );
        assert_eq!(
            rules(&format!("text{}", "\u{200B}".repeat(6))),
            [(Rule::InvisibleCharacters, Severity::High)]
        );
        assert_eq!(
            rules("a \u{1B}[8mhidden\u{1B}[0m b"),
            [(Rule::InvisibleCharacters, Severity::Medium)]
        );
    }

    #[test]
    fn zero_width_binary_is_decoded() {
        let bits: String = "hi!"
            .bytes()
            .flat_map(|byte| (0..8).rev().map(move |bit| byte >> bit & 1))
            .map(|bit| if bit == 1 { '\u{200C}' } else { '\u{200B}' })
            .collect();
        let line = format!("Normal text{bits}");
        let document = Document::read("SKILL.md", line.as_bytes()).unwrap();
        let found = check(&document);
        assert!(
            found[0].2.message.contains("\"hi!\""),
            "{}",
            found[0].2.message
        );
    }
}
