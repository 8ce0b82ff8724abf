//! Publisher text made safe for an operator's terminal.
//!
//! Names, descriptions, snippets and diagnostic messages come from publishers, and a terminal
//! obeys what it is sent: an escape sequence can recolour, move the cursor, rewrite earlier
//! lines, set the window title or, on some terminals, write files; a carriage return can hide
//! the start of a line; a bidi override can make text read differently from what it is. Human
//! output passes every piece of publisher text through [`safe`]; `--json` output stays exact
//! (JSON escapes control characters itself, and its readers are programs).

use std::borrow::Cow;
use std::fmt::Write;

/// Whether output to a stream may be styled (colour, bold): only on a terminal, and not when
/// `NO_COLOR` is set to anything but the empty string (no-color.org).
pub(crate) fn styled(is_terminal: bool) -> bool {
    is_terminal && !no_color(std::env::var_os("NO_COLOR").as_deref())
}

/// Whether a `NO_COLOR` value asks for no colour: present and not empty.
fn no_color(value: Option<&std::ffi::OsStr>) -> bool {
    value.is_some_and(|value| !value.is_empty())
}

/// Returns `text` with every character a terminal would act on shown as a visible escape:
/// C0 and C1 controls (ESC, CR, BEL, backspace, …; tab and newline too, since every piece of
/// publisher text is printed on one line), DEL, and the bidi controls (LRE, RLE, PDF, LRO,
/// RLO, LRI, RLI, FSI, PDI, LRM, RLM, ALM). Borrows when there is nothing to change.
pub(crate) fn safe(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for character in text.chars() {
        if is_unsafe(character) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(character));
        } else {
            out.push(character);
        }
    }
    Cow::Owned(out)
}

fn is_unsafe(character: char) -> bool {
    character.is_control()
        || matches!(
            character,
            '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_set_and_not_empty_turns_styles_off() {
        assert!(!no_color(None));
        assert!(!no_color(Some(std::ffi::OsStr::new(""))));
        assert!(no_color(Some(std::ffi::OsStr::new("1"))));
        assert!(!styled(false));
    }

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        let text = "PDF 文本提取 — extract tables (v2)";
        assert!(matches!(safe(text), Cow::Borrowed(_)));
        assert_eq!(safe(text), text);
    }

    #[test]
    fn controls_and_bidi_overrides_become_visible_escapes() {
        assert_eq!(
            safe("ok\u{1b}[2J\u{1b}]0;pwned\u{7}"),
            "ok\\u{1b}[2J\\u{1b}]0;pwned\\u{7}"
        );
        assert_eq!(safe("safe\rEVIL"), "safe\\u{d}EVIL");
        assert_eq!(safe("a\nb\tc"), "a\\u{a}b\\u{9}c");
        assert_eq!(safe("\u{202e}gnp.exe"), "\\u{202e}gnp.exe");
        assert_eq!(safe("x\u{2066}y\u{2069}"), "x\\u{2066}y\\u{2069}");
        assert_eq!(safe("c1\u{9b}31m"), "c1\\u{9b}31m");
        assert_eq!(safe("del\u{7f}"), "del\\u{7f}");
    }
}
