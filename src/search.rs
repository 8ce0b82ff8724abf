//! `skillscout search`: queries the index in the data directory and prints what it finds.
//!
//! Only the index is opened (read-only, no lock), never the crawl store, so a search works
//! while `serve` or `crawl` holds the store.

use std::fmt::Write as _;
use std::io::{IsTerminal, Write as _};
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, bail};
use indexer::{Caller, SearchIndex, SearchResults, Snippet};

use crate::ExitStatus;
use crate::cli::SearchArgs;
use crate::terminal::safe;
use crate::usage;

/// The widest one-line description, in characters.
const DESCRIPTION_CHARS: usize = 100;
/// ANSI bold on and off, for highlights on a terminal.
const BOLD: (&str, &str) = ("\x1b[1m", "\x1b[0m");

/// Runs `skillscout search`.
pub(crate) fn run(
    data: &Path,
    model: Option<Arc<dyn indexer::Embed>>,
    args: &SearchArgs,
) -> anyhow::Result<ExitStatus> {
    let dir = data.join(indexer::INDEX_DIR);
    let index = match SearchIndex::open(&dir) {
        Ok(index) => index,
        Err(indexer::Error::NoIndex { .. }) => {
            bail!(
                "no index in {}; run `skillscout crawl` first",
                data.display()
            )
        }
        Err(error @ indexer::Error::IncompatibleSchema { .. }) => {
            return Err(anyhow::Error::new(error)
                .context("run `skillscout crawl` to rebuild the index with this version"));
        }
        Err(error) => {
            return Err(error)
                .with_context(|| format!("cannot open the index in {}", dir.display()));
        }
    };
    let index = match model {
        None => index,
        Some(model) => match index.with_model(model) {
            Ok(index) => index,
            Err(error @ indexer::Error::ModelMismatch { .. }) => {
                return Err(anyhow::Error::new(error).context(
                    "run `skillscout crawl` with the same --semantic-model to give the records \
                     their vectors",
                ));
            }
            Err(error) => {
                return Err(error)
                    .with_context(|| format!("cannot open the index in {}", dir.display()));
            }
        },
    };
    let caller = if args.private {
        Caller::Authenticated
    } else {
        Caller::Anonymous
    };
    let query = args
        .query
        .iter()
        .map(|word| word.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ");
    // The query parameters `/v1/search` would get, checked and answered by the same code.
    let mut parameters = vec![("q".to_owned(), query)];
    parameters.extend(args.filters.parameters());
    parameters.push(("limit".to_owned(), args.limit.to_string()));
    parameters.push(("offset".to_owned(), args.offset.to_string()));
    let results = match api::search(&index, parameters, caller) {
        Ok(results) => results,
        Err(error) if error.status_and_code().0.is_client_error() => {
            if args.json {
                // Exactly the error body `/v1/search` sends with its 400.
                let mut json = error.to_json().to_string();
                json.push('\n');
                std::io::stdout()
                    .write_all(json.as_bytes())
                    .context("cannot write to stdout")?;
            }
            return Err(usage(error));
        }
        Err(error) => return Err(anyhow::Error::new(error).context("search failed")),
    };
    let output = if args.json {
        // Exactly the body `/v1/search` returns: the server's request check, search and wire
        // type make both.
        let body = api::wire::SearchBody::from(results);
        let mut json = serde_json::to_string(&body).context("cannot encode the results")?;
        json.push('\n');
        json
    } else {
        let highlight = crate::terminal::styled(std::io::stdout().is_terminal()).then_some(BOLD);
        render(&results, args.offset, highlight)
    };
    std::io::stdout()
        .write_all(output.as_bytes())
        .context("cannot write to stdout")?;
    Ok(ExitStatus::Success)
}

/// Renders results for people: per hit its title and id, a one-line description, the snippet
/// when it shows more than the description, and how many other places publish the same
/// skill; then a summary line.
fn render(results: &SearchResults, offset: usize, highlight: Option<(&str, &str)>) -> String {
    let mut out = String::new();
    for (rank, hit) in results.hits.iter().enumerate() {
        let _ = writeln!(
            out,
            "{}. {}  {}",
            offset + rank + 1,
            safe(&one_line(&hit.title, 80)),
            hit.id
        );
        let description = safe(&one_line(&hit.description, DESCRIPTION_CHARS)).into_owned();
        if !description.is_empty() {
            let _ = writeln!(out, "   {description}");
        }
        // The snippet is shown when it adds to the description line: a match in the body,
        // or further into a long description.
        let shown = description.trim_end_matches('…');
        if hit.snippet.has_marks() && !shown.contains(hit.snippet.text.trim_matches('…')) {
            let _ = writeln!(out, "   » {}", highlighted(&hit.snippet, highlight));
        }
        if hit.copies > 0 {
            let _ = writeln!(
                out,
                "   also published at {} other origin{}",
                hit.copies,
                if hit.copies == 1 { "" } else { "s" }
            );
        }
    }
    if results.hits.is_empty() {
        if results.total == 0 {
            let _ = writeln!(out, "no skills match {:?}", results.query);
        } else {
            let _ = writeln!(out, "no more results ({} in all)", results.total);
        }
    } else {
        let _ = writeln!(
            out,
            "\n{}-{} of {} skill{} ({} ms)",
            offset + 1,
            offset + results.hits.len(),
            results.total,
            if results.total == 1 { "" } else { "s" },
            results.took_ms
        );
    }
    out
}

/// Returns `text` on one line: whitespace runs become one space, and text longer than
/// `max` characters is cut with `…`.
fn one_line(text: &str, max: usize) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() <= max {
        return joined;
    }
    let mut cut: String = joined.chars().take(max.saturating_sub(1)).collect();
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    cut
}

/// Returns a snippet's text with each match between the two `highlight` strings (terminal
/// escapes), or as plain text when `highlight` is `None`.
fn highlighted(snippet: &Snippet, highlight: Option<(&str, &str)>) -> String {
    let Some((start, end)) = highlight else {
        return safe(&snippet.text).into_owned();
    };
    let mut out = String::with_capacity(snippet.text.len() + 8 * snippet.marks.len());
    for (text, is_match) in snippet.segments() {
        if is_match {
            out.push_str(start);
            out.push_str(&safe(text));
            out.push_str(end);
        } else {
            out.push_str(&safe(text));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_fit_one_line() {
        assert_eq!(one_line("a\n\n  b", 10), "a b");
        assert_eq!(one_line("abcdef ghij", 8), "abcdef…");
        assert_eq!(one_line("", 8), "");
    }

    #[test]
    fn snippets_become_terminal_text() {
        let snippet = Snippet {
            text: "PDF <tools> &amp; \"x\" 'y'".to_owned(),
            marks: vec![0..3, 19..20],
        };
        assert_eq!(highlighted(&snippet, None), "PDF <tools> &amp; \"x\" 'y'");
        assert_eq!(
            highlighted(&snippet, Some(("[", "]"))),
            "[PDF] <tools> &amp; \"[x]\" 'y'"
        );
    }
}
