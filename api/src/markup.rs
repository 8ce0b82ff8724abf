//! HTML made outside templates: the one escaper, and search snippets with their matches in
//! `<mark>` elements (the JSON `snippet` field and the pages show the same HTML). It escapes
//! the same characters as the page templates (maud) plus `'`; a test in `web` pins that they
//! agree.

use std::fmt::Write as _;

use indexer::Snippet;

/// Escapes text for HTML element content and quoted attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Returns a snippet as HTML: its text escaped, each match in a `<mark>` element.
pub(crate) fn marked(snippet: &Snippet) -> String {
    let mut out = String::with_capacity(snippet.text.len() + 16 * snippet.marks.len());
    for (text, is_match) in snippet.segments() {
        if is_match {
            let _ = write!(out, "<mark>{}</mark>", escape(text));
        } else {
            out.push_str(&escape(text));
        }
    }
    out
}
