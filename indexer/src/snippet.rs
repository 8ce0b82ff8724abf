//! Snippets: a short extract of a record's text with the matched words highlighted.
//!
//! The format is HTML-safe text, ready to put in a web page as it is: every `&`, `<`, `>`, `"`
//! and `'` of the record's text is escaped as an entity, runs of whitespace (newlines
//! included) and control characters become one space, and each matched word is wrapped in
//! [`SNIPPET_MARK_START`] and [`SNIPPET_MARK_END`] (`<mark>` and `</mark>`), the only tags
//! a snippet ever holds. An extract cut from a longer text starts or ends with `…`. A client
//! that wants plain text removes the two tags and unescapes the five entities.

use std::ops::Range;

use tantivy::Searcher;
use tantivy::query::Query;
use tantivy::schema::Field;
use tantivy::snippet::SnippetGenerator;

/// Opens a highlighted word in a snippet.
pub const SNIPPET_MARK_START: &str = "<mark>";
/// Closes a highlighted word in a snippet.
pub const SNIPPET_MARK_END: &str = "</mark>";
/// The longest extract, in bytes of the original text.
const MAX_SNIPPET_BYTES: usize = 200;
/// A body is analysed (tokenized and stemmed, the largest cost of snippets) only in a window
/// of this many bytes around the first place a query term appears in it.
const BODY_WINDOW_BYTES: usize = 600;

/// Builds snippets for the hits of one query.
pub(crate) struct Snippets {
    description: Option<SnippetGenerator>,
    body: Option<SnippetGenerator>,
    /// The query's body terms (stems), lowercase, to find where a body matches.
    body_terms: Vec<String>,
}

impl Snippets {
    /// Prepares highlighting of `query`'s terms in the description and body fields. A
    /// failure only means no highlights.
    pub(crate) fn new(
        searcher: &Searcher,
        query: &dyn Query,
        description: Field,
        body: Field,
    ) -> Snippets {
        let generator = |field| {
            // Prefix and typo clauses report no terms: without a term there is nothing to
            // highlight, and no reason to analyse the text.
            let mut has_terms = false;
            query.query_terms(&mut |term, _| has_terms |= term.field() == field);
            if !has_terms {
                return None;
            }
            SnippetGenerator::create(searcher, query, field)
                .ok()
                .map(|mut generator| {
                    generator.set_max_num_chars(MAX_SNIPPET_BYTES);
                    generator
                })
        };
        let mut body_terms = Vec::new();
        query.query_terms(&mut |term, _| {
            if term.field() == body
                && let Some(text) = term.value().as_str()
                && !body_terms.iter().any(|known| known == text)
            {
                body_terms.push(text.to_owned());
            }
        });
        Snippets {
            description: generator(description),
            body: generator(body),
            body_terms,
        }
    }

    /// Returns no highlighting: the start of the description.
    pub(crate) fn none() -> Snippets {
        Snippets {
            description: None,
            body: None,
            body_terms: Vec::new(),
        }
    }

    /// Returns the snippet of a record: the best highlighted extract of its description,
    /// else of its body, else the start of its description.
    pub(crate) fn snippet(&self, description: &str, body: &str) -> String {
        if let Some(snippet) =
            highlighted(self.description.as_ref(), description, 0..description.len())
        {
            return snippet;
        }
        if let Some(window) = self.body_window(body)
            && let Some(snippet) = highlighted(self.body.as_ref(), body, window)
        {
            return snippet;
        }
        let start = truncate(description, MAX_SNIPPET_BYTES);
        render(description, 0..start.len(), &[])
    }
}

impl Snippets {
    /// Returns a window of the body around the first occurrence of a query term (stems are
    /// almost always a prefix of the words they come from), or `None` when none occurs.
    fn body_window(&self, body: &str) -> Option<Range<usize>> {
        if self.body.is_none() || self.body_terms.is_empty() {
            return None;
        }
        // ASCII lowercasing keeps byte offsets, which full Unicode lowercasing does not.
        let lower = body.to_ascii_lowercase();
        let first = self
            .body_terms
            .iter()
            .filter_map(|term| lower.find(term.as_str()))
            .min()?;
        let mut start = first.saturating_sub(BODY_WINDOW_BYTES / 4);
        while !body.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (start + BODY_WINDOW_BYTES).min(body.len());
        while !body.is_char_boundary(end) {
            end -= 1;
        }
        Some(start..end)
    }
}

/// Returns the best highlighted extract of `text[window]`, rendered against the whole text
/// (so that a cut is marked with `…`), or `None` when nothing in the window matches.
fn highlighted(
    generator: Option<&SnippetGenerator>,
    text: &str,
    window: Range<usize>,
) -> Option<String> {
    let snippet = generator?.snippet(&text[window.clone()]);
    if snippet.highlighted().is_empty() {
        return None;
    }
    let fragment = snippet.fragment_range();
    let offset = window.start + fragment.start;
    let mut range = window.start + fragment.start..window.start + fragment.end;
    // Keep the punctuation that ends or starts the text rather than cutting it off.
    if !text[range.end..].chars().any(char::is_alphanumeric) {
        range.end = text.len();
    }
    if !text[..range.start].chars().any(char::is_alphanumeric) {
        range.start = 0;
    }
    let marks: Vec<Range<usize>> = snippet
        .highlighted()
        .iter()
        .map(|mark| mark.start + offset..mark.end + offset)
        .collect();
    Some(render(text, range, &marks))
}

/// Returns the longest prefix of `text` of at most `max` bytes that ends on a character
/// boundary.
fn truncate(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Renders `text[range]` with `marks` (byte ranges into `text`) highlighted, in the snippet
/// format described in the module docs.
pub(crate) fn render(text: &str, range: Range<usize>, marks: &[Range<usize>]) -> String {
    let mut marks: Vec<Range<usize>> = marks
        .iter()
        .filter(|mark| mark.start < mark.end && mark.end <= text.len())
        .cloned()
        .collect();
    marks.sort_by_key(|mark| (mark.start, mark.end));
    let mut merged: Vec<Range<usize>> = Vec::new();
    for mark in marks {
        match merged.last_mut() {
            Some(last) if mark.start <= last.end => last.end = last.end.max(mark.end),
            _ => merged.push(mark),
        }
    }
    let range = range.start.min(text.len())..range.end.min(text.len());
    let mut out = String::new();
    if !text[..range.start].trim().is_empty() {
        out.push('…');
    }
    let mut open = false;
    let mut last_was_space = out.is_empty();
    for (offset, c) in text[range.clone()].char_indices() {
        let at = range.start + offset;
        if open && merged.iter().any(|mark| mark.end == at) {
            out.push_str(SNIPPET_MARK_END);
            open = false;
        }
        if !open && merged.iter().any(|mark| mark.start == at) {
            out.push_str(SNIPPET_MARK_START);
            open = true;
        }
        if c.is_whitespace() || c.is_control() {
            if !last_was_space {
                out.push(' ');
                last_was_space = true;
            }
            continue;
        }
        last_was_space = false;
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    if open {
        out.push_str(SNIPPET_MARK_END);
    }
    let trimmed_len = out.trim_end().len();
    out.truncate(trimmed_len);
    if !text[range.end..].trim().is_empty() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_escape_and_mark() {
        let text = "Use <b>&\"pdf'\" tools\n\nfor PDF files";
        let start = text.find("pdf").unwrap();
        let second = text.find("PDF").unwrap();
        insta::assert_snapshot!(
            render(text, 0..text.len(), &[start..start + 3, second..second + 3]),
            @"Use &lt;b&gt;&amp;&quot;<mark>pdf</mark>&#39;&quot; tools for <mark>PDF</mark> files"
        );
    }

    #[test]
    fn extracts_say_they_are_cut_and_marks_merge() {
        let text = "one two 文本提取工具 three";
        let at = text.find('文').unwrap();
        // Overlapping bigram marks become one.
        let marks = [at..at + 6, at + 3..at + 9, at + 6..at + 12];
        insta::assert_snapshot!(
            render(text, 4..text.len() - 6, &marks),
            @"…two <mark>文本提取</mark>工具…"
        );
        assert_eq!(render("", 0..0, &[]), "");
        // Marks and ranges past the end of the text are ignored.
        assert_eq!(render("abc", 0..10, &[1..2, 5..9]), "a<mark>b</mark>c");
    }

    #[test]
    fn truncation_respects_characters() {
        assert_eq!(truncate("ab文", 3), "ab");
        assert_eq!(truncate("ab", 3), "ab");
    }
}
