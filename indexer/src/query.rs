//! From user text to tantivy queries. Any text is a valid query: nothing here can fail.
//!
//! The grammar is deliberately small, so that nothing a person types is a syntax error:
//! words, and `"quoted phrases"` that must appear. There are no operators (`AND`, `OR`,
//! `NOT` are words, and English stop words at that); an unbalanced quote is ignored. Words
//! are OR-combined and ranked by BM25 over weighted fields, because requiring every word
//! finds nothing for task-style queries ("turn my spreadsheet into a chart").
//!
//! What matches, and what only ranks:
//!
//! - A record matches through its name, title, tags, description, declared tools or
//!   headings: a stemmed word, a word as the prefix of a longer one (and the last word as
//!   typed), or its name or title key being or starting with the query's. A word found
//!   anywhere in the record (the body included) also makes it match when few records hold
//!   it (`nda`, `heic`); a more common one only adds to the score, and one most records
//!   hold is left out.
//! - When that finds fewer than five records the caller widens the query: every body word
//!   matches on its own and long words match with one typo. Prefix, typo and key clauses
//!   score low and flat, so they rank below real text matches; the relevance tiers
//!   themselves are applied by the collector.

use std::borrow::Cow;
use std::collections::BTreeSet;

use tantivy::Term;
use tantivy::query::{
    AllQuery, BooleanQuery, BoostQuery, ConstScoreQuery, DisjunctionMaxQuery, EmptyQuery,
    FuzzyTermQuery, Occur, PhraseQuery, Query, TermQuery,
};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::tokenizer::TextAnalyzer;

use crate::address;
use crate::schema::Fields;
use crate::synonyms::{self, SYNONYM_WEIGHT};
use crate::tokenizer::{self, key, text_analyzer, words_analyzer};

/// The longest query, in characters: room for a task described in a paragraph. The one
/// limit of every way in (the API, the web page, `skillscout search`): [`SearchIndex::search`]
/// refuses a longer query with [`Error::QueryTooLong`](crate::Error::QueryTooLong), so
/// nothing is ever read in part.
///
/// [`SearchIndex::search`]: crate::SearchIndex::search
pub const MAX_QUERY_CHARS: usize = 1_000;
/// At most this many distinct terms are searched for.
pub(crate) const MAX_TERMS: usize = 32;
/// Words of at least this many characters match with one typo.
pub(crate) const MIN_FUZZY_CHARS: usize = 5;
/// At most this many words get typo matching.
const MAX_FUZZY_WORDS: usize = 8;
/// The last word is matched as a prefix when it has at least this many characters.
pub(crate) const MIN_PREFIX_CHARS: usize = 2;
/// Word prefixes up to this many characters are indexed (the `prefixes` field), so that
/// matching them is one term lookup; a longer last word is matched with an automaton over
/// the word dictionary, which is cheap for long prefixes.
pub(crate) const MAX_INDEXED_PREFIX_CHARS: usize = 10;

/// The weight of each field in the BM25 score, chosen on the regression set and the
/// development set (never on the held-out sets; the git history of docs/BENCHMARKS.md).
/// Baselines that compare with this ranking use the same weights (the benchmark's FTS5
/// table does).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FieldWeights {
    /// The slug, as words.
    pub name: f32,
    /// The human name.
    pub title: f32,
    /// The description.
    pub description: f32,
    /// Tags and licence.
    pub tags: f32,
    /// Declared tools and inputs (names, descriptions, parameters).
    pub tools: f32,
    /// SKILL.md headings.
    pub headings: f32,
    /// The SKILL.md body together with every field above: the one field whose word statistics
    /// are the whole record's.
    pub body: f32,
}

/// The field weights of the ranking.
pub const FIELD_WEIGHTS: FieldWeights = FieldWeights {
    name: 3.5,
    title: 2.5,
    description: 2.0,
    tags: 2.0,
    tools: 1.0,
    headings: 1.0,
    body: 2.0,
};
const BODY_WEIGHT: f32 = FIELD_WEIGHTS.body;
/// How much a quoted phrase found as written adds, inside a longer query, over its words.
const PHRASE_BOOST: f32 = 1.0;
/// How much the other fields count beside the best-matching one, for each term.
const TIE_BREAKER: f32 = 0.3;
/// A term held by more than this share of bodies is not scored in bodies (its idf is
/// nearly zero anyway).
const COMMON_IN_BODIES: f64 = 0.25;
/// A term held by at most this share of bodies makes a record match through its body
/// alone: a rare word of the query ("is this NDA safe") finds the skills that mention it
/// even when other words match names. Above it, body matches only add to the score: letting
/// terms of up to [`COMMON_IN_BODIES`] match too ranked every relevance set the same and
/// cost 8 % at p99 (the git history of docs/BENCHMARKS.md).
const RARE_IN_BODIES: f64 = 0.10;
/// Weight of a query word matched as the prefix of a word.
const PREFIX_WEIGHT: f32 = 0.5;
/// Words (other than the last) match as prefixes when they have at least this many
/// characters; shorter ones would match too much.
const MIN_WORD_PREFIX_CHARS: usize = 4;
/// Flat scores of the match-only clauses: low, so they order below real text matches.
const FUZZY_SCORE: f32 = 0.2;
const KEY_SCORE: f32 = 0.5;

/// Words that say nothing about what is wanted in a task-style query ("how do I ..."). They
/// are dropped when the query has other words.
const NOISE_WORDS: &[&str] = &[
    "how",
    "do",
    "doe",
    "i",
    "my",
    "me",
    "we",
    "our",
    "you",
    "your",
    "can",
    "want",
    "need",
    "help",
    "use",
    "using",
    "some",
    "someth",
    "make",
    "get",
    "what",
    "which",
    "should",
    "would",
    "could",
    "from",
    "all",
    "any",
    "about",
    "pleas",
    "thank",
    "hi",
    "hello",
    "hey",
    "kind",
    "kindli",
    "assist",
    "provid",
    "tell",
    "give",
    "show",
    "let",
    "also",
    "just",
    "realli",
    "like",
    "look",
    "know",
    "abl",
    "tri",
    "there",
    "here",
    "someon",
    "anyon",
    "anyth",
    "find",
    "recommend",
    "suggest",
    "tool",
    "specif",
    "interest",
    "current",
    "latest",
    "good",
    "best",
    "new",
];

/// Returns the words of user text that say what is wanted, lowercased and unstemmed, as
/// written (`c#`, not the `csharp` this ranking searches for): English stop words and task
/// boilerplate ("how do I", "help me") left out, unless nothing else is left, and a web
/// address read for its words (`https://github.com/acme` as `github acme`). For baselines
/// that should read a query as this ranking does.
pub fn informative_words(text: &str) -> Vec<String> {
    let mut stemmed = text_analyzer();
    let mut words = words_analyzer();
    let all = tokenizer::written_tokens(&mut words, &sanitize(text));
    let kept: Vec<String> = all
        .iter()
        .filter(|word| {
            let stems = tokenizer::tokens(&mut stemmed, word);
            !stems.is_empty()
                && !stems
                    .iter()
                    .all(|stem| NOISE_WORDS.contains(&stem.as_str()))
        })
        .cloned()
        .collect();
    if kept.is_empty() { all } else { kept }
}

/// A query as the user wrote it, taken apart.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ParsedQuery {
    /// The whole text as the ranking reads it ([`sanitize`]: a web address as its words), for
    /// the model.
    pub(crate) read: String,
    /// The text outside quotes.
    pub(crate) loose: String,
    /// The quoted phrases.
    pub(crate) phrases: Vec<String>,
    /// The last word, when the query ends in it (search as you type), lowercased.
    pub(crate) last_word: Option<String>,
    /// The key of the whole query, for the exact and prefix name tiers.
    pub(crate) key: String,
    /// True when the query holds no text at all: the caller browses.
    pub(crate) is_empty: bool,
}

impl ParsedQuery {
    /// True when the query is nothing but quoted phrases, which it then asks for.
    pub(crate) fn is_only_phrases(&self) -> bool {
        !self.phrases.is_empty() && !self.loose.chars().any(char::is_alphanumeric)
    }
}

/// Cleans user text: turns control characters into spaces and a web address into the words
/// of it that say something ([`address`](crate::address)). Its length was checked against
/// [`MAX_QUERY_CHARS`] before.
pub(crate) fn sanitize(raw: &str) -> String {
    let text: String = raw
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    match address::words_of_addresses(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(read) => read,
    }
}

/// Takes user text apart. Never fails.
pub(crate) fn parse(raw: &str) -> ParsedQuery {
    let read = sanitize(raw);
    let text = read.replace(['\u{201C}', '\u{201D}', '\u{201E}'], "\"");
    let mut loose = String::new();
    let mut phrases = Vec::new();
    let mut rest = text.as_str();
    while let Some(open) = rest.find('"') {
        loose.push_str(&rest[..open]);
        loose.push(' ');
        let after = &rest[open + 1..];
        match after.find('"') {
            Some(close) => {
                phrases.push(after[..close].to_owned());
                rest = &after[close + 1..];
            }
            None => {
                // An unbalanced quote is ignored.
                rest = after;
            }
        }
    }
    loose.push_str(rest);
    let last_word = if text.ends_with(|c: char| c.is_alphanumeric()) {
        let word = loose
            .rsplit(|c: char| !c.is_alphanumeric())
            .next()
            .unwrap_or_default();
        // `.NET` is a whole word (`dotnet`), not the start of `network`.
        let is_language =
            tokenizer::is_language_name(&loose, loose.len() - word.len(), loose.len());
        (word.chars().count() >= MIN_PREFIX_CHARS && !is_language).then(|| word.to_lowercase())
    } else {
        None
    };
    let key = key(&text);
    ParsedQuery {
        read,
        is_empty: text.trim().is_empty(),
        loose,
        phrases,
        last_word,
        key,
    }
}

/// Builds tantivy queries for parsed user text.
pub(crate) struct QueryBuilder {
    fields: Fields,
    /// The index searched, for its word statistics and dictionaries; `None` when unknown.
    index: Option<tantivy::Searcher>,
    text: TextAnalyzer,
    words: TextAnalyzer,
}

impl QueryBuilder {
    pub(crate) fn new(fields: Fields) -> QueryBuilder {
        QueryBuilder {
            fields,
            index: None,
            text: text_analyzer(),
            words: words_analyzer(),
        }
    }

    fn weighted_fields(&self) -> [(Field, f32); 6] {
        let f = &self.fields;
        let w = FIELD_WEIGHTS;
        [
            (f.name, w.name),
            (f.title, w.title),
            (f.tags, w.tags),
            (f.description, w.description),
            (f.tools, w.tools),
            (f.headings, w.headings),
        ]
    }

    /// The fields indexed with positions, where phrases can match.
    fn phrase_fields(&self) -> [(Field, f32); 6] {
        self.weighted_fields()
    }

    /// One term in any weighted field but the body, scored by the best field plus a share of
    /// the others.
    fn term_clause(&self, term: &str) -> Box<dyn Query> {
        let per_field: Vec<Box<dyn Query>> = self
            .weighted_fields()
            .into_iter()
            .map(|(field, weight)| -> Box<dyn Query> {
                Box::new(BoostQuery::new(
                    Box::new(TermQuery::new(
                        Term::from_field_text(field, term),
                        IndexRecordOption::WithFreqs,
                    )),
                    weight,
                ))
            })
            .collect();
        Box::new(DisjunctionMaxQuery::with_tie_breaker(
            per_field,
            TIE_BREAKER,
        ))
    }

    /// The terms at their positions ([`tokenizer::positioned_tokens`]), in any phrase field.
    fn phrase_clause(&self, terms: &[(usize, String)], weight: f32) -> Box<dyn Query> {
        let per_field: Vec<(Occur, Box<dyn Query>)> = self
            .phrase_fields()
            .into_iter()
            .map(|(field, field_weight)| -> (Occur, Box<dyn Query>) {
                let phrase = PhraseQuery::new_with_offset(
                    terms
                        .iter()
                        .map(|(position, term)| (*position, Term::from_field_text(field, term)))
                        .collect(),
                );
                (
                    Occur::Should,
                    Box::new(BoostQuery::new(Box::new(phrase), weight * field_weight)),
                )
            })
            .collect();
        Box::new(BooleanQuery::new(per_field))
    }

    /// Lets the builder leave out clauses that cost more than they can give: body clauses of
    /// terms that most bodies hold (their BM25 weight is close to nothing, and scoring them
    /// visits most of the index), and name and title prefix clauses that no key starts with.
    pub(crate) fn with_statistics(mut self, searcher: &tantivy::Searcher) -> QueryBuilder {
        self.index = Some(searcher.clone());
        self
    }

    /// False when no term of `field` in the index starts with `prefix`; true when one does
    /// or when that is unknown.
    pub(crate) fn may_start_a_term(&self, field: Field, prefix: &str) -> bool {
        let Some(searcher) = &self.index else {
            return true;
        };
        searcher.segment_readers().iter().any(|reader| {
            let Ok(inverted) = reader.inverted_index(field) else {
                return true;
            };
            let Ok(mut terms) = inverted.terms().range().ge(prefix.as_bytes()).into_stream() else {
                return true;
            };
            terms.advance() && terms.key().starts_with(prefix.as_bytes())
        })
    }

    /// The share of records whose body (the whole record) holds `term`; 0 when unknown.
    fn share_of_bodies(&self, term: &str) -> f64 {
        let Some(searcher) = &self.index else {
            return 0.0;
        };
        let records = searcher.num_docs();
        if records == 0 {
            return 0.0;
        }
        let holding = searcher
            .doc_freq(&Term::from_field_text(self.fields.body, term))
            .unwrap_or(0);
        holding as f64 / records as f64
    }

    fn is_common_in_bodies(&self, term: &str) -> bool {
        self.share_of_bodies(term) > COMMON_IN_BODIES
    }

    /// One term in the body: scored on its own, so that a body match ranks a record higher
    /// without letting every record that mentions a common word in passing match.
    fn body_clause(&self, term: &str) -> Box<dyn Query> {
        Box::new(BoostQuery::new(
            Box::new(TermQuery::new(
                Term::from_field_text(self.fields.body, term),
                IndexRecordOption::WithFreqs,
            )),
            BODY_WEIGHT,
        ))
    }

    /// Returns the query for `parsed`: the text clauses only (filters and the access
    /// policy are added by the caller).
    ///
    /// A record matches through its name, title, tags, description, tools or headings (the
    /// words, the last-word prefix, the name keys) or through a word few bodies hold
    /// ([`RARE_IN_BODIES`]); other body matches only add to the score. `widen`, which the
    /// caller asks for when that finds few records, lets every body word match on its own
    /// and words of [`MIN_FUZZY_CHARS`] or more match with one typo.
    pub(crate) fn build(&mut self, parsed: &ParsedQuery, widen: bool) -> Box<dyn Query> {
        if parsed.is_empty {
            return Box::new(AllQuery);
        }
        // What makes a record match.
        let mut matching: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        // What only adds to the score of a match, or must hold besides.
        let mut outer: Vec<(Occur, Box<dyn Query>)> = Vec::new();

        // A query that is nothing but quoted phrases asks for them; inside a longer query a
        // phrase ranks (its words count as loose words too) and never filters: a task that
        // quotes an error message or a keyword must not come back empty.
        let phrases_filter = parsed.is_only_phrases();

        // Loose words: BM25 over the weighted fields, OR-combined.
        let terms = self.loose_terms(parsed, !phrases_filter);
        for term in &terms {
            matching.push((Occur::Should, self.term_clause(term)));
            let share = self.share_of_bodies(term);
            if widen || share <= RARE_IN_BODIES {
                matching.push((Occur::Should, self.body_clause(term)));
            } else if share <= COMMON_IN_BODIES {
                outer.push((Occur::Should, self.body_clause(term)));
            }
        }
        // Abbreviations and close synonyms of the words typed. One of several words
        // (`pull request` for `pr`) is a phrase: its words alone (`request`) mean something
        // else. The body has no positions, so there it must hold every word.
        for synonym in self.synonyms(parsed, &terms) {
            let (matched, body): (Box<dyn Query>, Option<Box<dyn Query>>) = match &synonym[..] {
                [(_, term)] => (
                    self.term_clause(term),
                    (!self.is_common_in_bodies(term)).then(|| self.body_clause(term)),
                ),
                _ => (
                    self.phrase_clause(&synonym, 1.0),
                    Some(Box::new(BooleanQuery::new(
                        synonym
                            .iter()
                            .map(|(_, term)| (Occur::Must, self.body_clause(term)))
                            .collect(),
                    ))),
                ),
            };
            matching.push((
                Occur::Should,
                Box::new(BoostQuery::new(matched, SYNONYM_WEIGHT)),
            ));
            if let Some(body) = body {
                outer.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(body, SYNONYM_WEIGHT)),
                ));
            }
        }
        // Quoted phrases must appear.
        for phrase in &parsed.phrases {
            let phrase_terms: Vec<(usize, String)> =
                tokenizer::positioned_tokens(&mut self.text, phrase)
                    .into_iter()
                    .take(MAX_TERMS)
                    .collect();
            if !phrases_filter {
                if phrase_terms.len() > 1 {
                    outer.push((
                        Occur::Should,
                        self.phrase_clause(&phrase_terms, PHRASE_BOOST),
                    ));
                }
                continue;
            }
            let required = match phrase_terms.as_slice() {
                [] => continue,
                [(_, term)] if widen => Box::new(BooleanQuery::new(vec![
                    (Occur::Should, self.term_clause(term)),
                    (Occur::Should, self.body_clause(term)),
                ])),
                [(_, term)] => self.term_clause(term),
                _ => self.phrase_clause(&phrase_terms, 1.0),
            };
            outer.push((Occur::Must, required));
        }

        // Words as prefixes of longer words: `postgres` finds `postgresql`, and the last word
        // of a query being typed finds the words it starts. Scored by BM25 over the indexed
        // prefixes, so a rare prefix counts more than a common one.
        for word in self.prefix_words(parsed) {
            matching.push((Occur::Should, self.prefix_clause(&word)));
        }

        // Names and titles equal to or starting with the query: the top tiers (ranked by
        // the collector), matched here so that they are found at all.
        if !parsed.key.is_empty() {
            for field in [self.fields.name_key, self.fields.title_key] {
                let exact = TermQuery::new(
                    Term::from_field_text(field, &parsed.key),
                    IndexRecordOption::Basic,
                );
                matching.push((
                    Occur::Should,
                    Box::new(ConstScoreQuery::new(Box::new(exact), KEY_SCORE)),
                ));
                // An automaton over the keys marks its matches in a set as large as the
                // index: not worth it for a task's key, which no name starts with.
                if self.may_start_a_term(field, &parsed.key) {
                    let prefix = FuzzyTermQuery::new_prefix(
                        Term::from_field_text(field, &parsed.key),
                        0,
                        false,
                    );
                    matching.push((
                        Occur::Should,
                        Box::new(ConstScoreQuery::new(Box::new(prefix), KEY_SCORE)),
                    ));
                }
            }
        }

        // One typo per long word.
        if widen {
            let words = tokenizer::tokens(&mut self.words, &parsed.loose);
            let mut fuzzy_words = BTreeSet::new();
            for word in words {
                if word.chars().count() >= MIN_FUZZY_CHARS && fuzzy_words.len() < MAX_FUZZY_WORDS {
                    fuzzy_words.insert(word);
                }
            }
            for word in fuzzy_words {
                let typo =
                    FuzzyTermQuery::new(Term::from_field_text(self.fields.words, &word), 1, true);
                matching.push((
                    Occur::Should,
                    Box::new(ConstScoreQuery::new(Box::new(typo), FUZZY_SCORE)),
                ));
            }
        }

        let has_required = outer.iter().any(|(occur, _)| *occur == Occur::Must);
        if matching.is_empty() && !has_required {
            return Box::new(EmptyQuery);
        }
        if !matching.is_empty() {
            // Without a required phrase, a record must match one of these; with one, they
            // only rank.
            let occur = if has_required {
                Occur::Should
            } else {
                Occur::Must
            };
            outer.push((occur, Box::new(BooleanQuery::new(matching))));
        }
        Box::new(BooleanQuery::new(outer))
    }

    /// Returns the words to match as prefixes: each loose word of at least
    /// [`MIN_WORD_PREFIX_CHARS`] that is not a stop or noise word, and the last word as typed.
    fn prefix_words(&mut self, parsed: &ParsedQuery) -> Vec<String> {
        let mut words: Vec<String> = Vec::new();
        for word in tokenizer::tokens(&mut self.words, &parsed.loose) {
            if words.len() >= MAX_TERMS {
                break;
            }
            let chars = word.chars().count();
            if !(MIN_WORD_PREFIX_CHARS..=MAX_INDEXED_PREFIX_CHARS).contains(&chars)
                || words.contains(&word)
            {
                continue;
            }
            let stems = tokenizer::tokens(&mut self.text, &word);
            if stems
                .iter()
                .all(|stem| NOISE_WORDS.contains(&stem.as_str()))
            {
                continue;
            }
            words.push(word);
        }
        if let Some(last) = &parsed.last_word
            && !words.contains(last)
        {
            words.push(last.clone());
        }
        words
    }

    /// Returns the clause that matches `word` as the prefix of a word.
    fn prefix_clause(&self, word: &str) -> Box<dyn Query> {
        if word.chars().count() <= MAX_INDEXED_PREFIX_CHARS {
            Box::new(BoostQuery::new(
                Box::new(TermQuery::new(
                    Term::from_field_text(self.fields.prefixes, word),
                    IndexRecordOption::Basic,
                )),
                PREFIX_WEIGHT,
            ))
        } else {
            let automaton = FuzzyTermQuery::new_prefix(
                Term::from_field_text(self.fields.words, word),
                0,
                false,
            );
            Box::new(ConstScoreQuery::new(Box::new(automaton), PREFIX_WEIGHT))
        }
    }

    /// Returns the synonyms of the query's words ([`crate::synonyms`]), each analysed into
    /// its terms at their positions; a one-word synonym already among `terms` is left out.
    /// At most [`MAX_TERMS`] terms in all.
    fn synonyms(&mut self, parsed: &ParsedQuery, terms: &[String]) -> Vec<Vec<(usize, String)>> {
        let mut text = parsed.loose.clone();
        for phrase in &parsed.phrases {
            text.push(' ');
            text.push_str(phrase);
        }
        let words = tokenizer::tokens(&mut self.words, &text);
        let mut out: Vec<Vec<(usize, String)>> = Vec::new();
        let mut counted = 0;
        for synonym in synonyms::expansions(&words) {
            let analysed = tokenizer::positioned_tokens(&mut self.text, synonym);
            let typed = matches!(&analysed[..], [(_, term)] if terms.contains(term));
            if analysed.is_empty() || typed || out.contains(&analysed) {
                continue;
            }
            counted += analysed.len();
            if counted > MAX_TERMS {
                break;
            }
            out.push(analysed);
        }
        out
    }

    /// Returns the distinct analysed terms of the loose words (with the quoted phrases' words
    /// when `with_phrases`; at most [`MAX_TERMS`]), without the noise words unless nothing
    /// else is left.
    fn loose_terms(&mut self, parsed: &ParsedQuery, with_phrases: bool) -> Vec<String> {
        let mut seen = BTreeSet::new();
        let mut terms: Vec<String> = Vec::new();
        let mut text = parsed.loose.clone();
        if with_phrases {
            for phrase in &parsed.phrases {
                text.push(' ');
                text.push_str(phrase);
            }
        }
        for term in tokenizer::tokens(&mut self.text, &text) {
            if terms.len() >= MAX_TERMS {
                break;
            }
            if seen.insert(term.clone()) {
                terms.push(term);
            }
        }
        let meaningful: Vec<String> = terms
            .iter()
            .filter(|term| !NOISE_WORDS.contains(&term.as_str()))
            .cloned()
            .collect();
        if meaningful.is_empty() {
            terms
        } else {
            meaningful
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsing_never_fails_and_ignores_syntax() {
        let parsed = parse(r#"merge "pdf files" fast"#);
        assert_eq!(parsed.phrases, ["pdf files"]);
        assert_eq!(
            parsed.loose.split_whitespace().collect::<Vec<_>>(),
            ["merge", "fast"]
        );
        assert_eq!(parsed.last_word.as_deref(), Some("fast"));
        assert_eq!(parsed.key, "merge-pdf-files-fast");

        let unbalanced = parse(r#""unbalanced"#);
        assert!(unbalanced.phrases.is_empty());
        assert_eq!(unbalanced.loose.trim(), "unbalanced");

        assert!(parse("").is_empty);
        assert!(parse(" \t\n ").is_empty);
        assert!(!parse("((((").is_empty);
        assert_eq!(parse("((((").key, "");
        assert_eq!(parse("pdf ").last_word, None);
        assert_eq!(parse("a").last_word, None);
        assert_eq!(parse("PdfPlu").last_word.as_deref(), Some("pdfplu"));
    }

    #[test]
    fn control_characters_are_tamed() {
        assert_eq!(sanitize("a\u{0}b\u{1b}[31m"), "a b [31m");
    }

    #[test]
    fn informative_words_are_as_written() {
        assert_eq!(
            informative_words("How do I fix nullable warnings in C#?"),
            ["fix", "nullable", "warnings", "c#"]
        );
    }

    #[test]
    fn noise_words_go_only_when_something_else_is_left() {
        let (_, fields) = crate::schema::build();
        let mut builder = QueryBuilder::new(fields);
        let query = format!("{:?}", builder.build(&parse("how do I merge pdfs"), false));
        assert!(query.contains("merg"), "{query}");
        assert!(!query.contains("\"how\""), "{query}");
        let query = format!("{:?}", builder.build(&parse("how"), false));
        assert!(query.contains("how"), "{query}");
    }
}
