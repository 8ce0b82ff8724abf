//! Snippets: a short extract of a record's text with the matched words marked.
//!
//! A [`Snippet`] is plain text plus the byte ranges of the matched words in it; making HTML
//! (`<mark>`) or terminal highlights of it is the presenter's job (`api`, the binary), never
//! the index's. In the text, runs of whitespace (newlines included) and control characters
//! become one space, and an extract cut from a longer text starts or ends with `…`.

use std::ops::Range;

use tantivy::Searcher;
use tantivy::query::Query;
use tantivy::schema::Field;
use tantivy::snippet::SnippetGenerator;

use crate::results::Snippet;
use crate::tokenizer;

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
    pub(crate) fn snippet(&self, description: &str, body: &str) -> Snippet {
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
    /// almost always a prefix of the words they come from; a language's word is looked for as
    /// it is written, `c#` for `csharp`), or `None` when none occurs.
    fn body_window(&self, body: &str) -> Option<Range<usize>> {
        if self.body.is_none() || self.body_terms.is_empty() {
            return None;
        }
        // ASCII lowercasing keeps byte offsets, which full Unicode lowercasing does not.
        let lower = body.to_ascii_lowercase();
        let first = self
            .body_terms
            .iter()
            .flat_map(|term| {
                std::iter::once(term.as_str()).chain(tokenizer::language_written_as(term))
            })
            .filter_map(|text| lower.find(text))
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

/// Returns the best highlighted extract of `text[window]`, made against the whole text (so
/// that a cut is marked with `…`), or `None` when nothing in the window matches.
fn highlighted(
    generator: Option<&SnippetGenerator>,
    text: &str,
    window: Range<usize>,
) -> Option<Snippet> {
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

/// Returns `text[range]` as a snippet with `marks` (byte ranges into `text`) highlighted, in
/// the form described in the module docs.
pub(crate) fn render(text: &str, range: Range<usize>, marks: &[Range<usize>]) -> Snippet {
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
    // The highlights in `out`, as they are found; `open` is the start of the current one.
    let mut highlights: Vec<Range<usize>> = Vec::new();
    let mut open: Option<usize> = None;
    let mut last_was_space = out.is_empty();
    for (offset, c) in text[range.clone()].char_indices() {
        let at = range.start + offset;
        if let Some(start) = open
            && merged.iter().any(|mark| mark.end == at)
        {
            highlights.push(start..out.len());
            open = None;
        }
        if open.is_none() && merged.iter().any(|mark| mark.start == at) {
            open = Some(out.len());
        }
        if c.is_whitespace() || c.is_control() {
            if !last_was_space {
                out.push(' ');
                last_was_space = true;
            }
            continue;
        }
        last_was_space = false;
        out.push(c);
    }
    if let Some(start) = open {
        highlights.push(start..out.len());
    }
    let trimmed_len = out.trim_end().len();
    out.truncate(trimmed_len);
    for highlight in &mut highlights {
        highlight.end = highlight.end.min(trimmed_len);
    }
    highlights.retain(|highlight| highlight.start < highlight.end);
    if !text[range.end..].trim().is_empty() {
        out.push('…');
    }
    Snippet {
        text: out,
        marks: highlights,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_are_plain_text_with_marks() {
        let text = "Use <b>&\"pdf'\" tools\n\nfor PDF files";
        let start = text.find("pdf").unwrap();
        let second = text.find("PDF").unwrap();
        let snippet = render(text, 0..text.len(), &[start..start + 3, second..second + 3]);
        assert_eq!(snippet.text, "Use <b>&\"pdf'\" tools for PDF files");
        insta::assert_snapshot!(
            snippet.bracketed(),
            @r#"Use <b>&"[pdf]'" tools for [PDF] files"#
        );
    }

    #[test]
    fn extracts_say_they_are_cut_and_marks_merge() {
        let text = "one two 文本提取工具 three";
        let at = text.find('文').unwrap();
        // Overlapping bigram marks become one.
        let marks = [at..at + 6, at + 3..at + 9, at + 6..at + 12];
        let snippet = render(text, 4..text.len() - 6, &marks);
        insta::assert_snapshot!(snippet.bracketed(), @"…two [文本提取]工具…");
        assert_eq!(snippet.marks.len(), 1);
        assert_eq!(render("", 0..0, &[]), Snippet::default());
        // Marks and ranges past the end of the text are ignored.
        assert_eq!(render("abc", 0..10, &[1..2, 5..9]).bracketed(), "a[b]c");
        // A mark never covers the whitespace trimmed from the end.
        let snippet = render("ab  ", 0..4, &[0..1, 1..4]);
        assert_eq!(snippet.text, "ab");
        assert_eq!(snippet.bracketed(), "[ab]");
    }

    #[test]
    fn truncation_respects_characters() {
        assert_eq!(truncate("ab文", 3), "ab");
        assert_eq!(truncate("ab", 3), "ab");
    }
}
