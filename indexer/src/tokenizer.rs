//! Tokenizers and analyzers: words for alphabetic scripts, overlapping bigrams for CJK.
//!
//! Chinese and Japanese are written without spaces, so a word tokenizer sees `PDF 文本提取工具`
//! as two tokens and a query `文本提取` would never match. Two ways out: a dictionary segmenter
//! (jieba-rs for Chinese, lindera for Japanese) or CJK bigrams, as Lucene's and
//! Elasticsearch's `cjk` analyzer do. We use bigrams:
//!
//! - no dictionary to build or ship (lindera downloads its dictionaries in a build script,
//!   which fails offline; jieba-rs embeds a ~5 MB dictionary and covers Chinese only);
//! - one rule covers Chinese, Japanese kana and Korean alike;
//! - recall is as good as a segmenter's (every word of two or more characters is a run of
//!   bigrams), and since queries are OR-combined with a phrase boost, documents that hold the
//!   query's characters next to each other rank first.
//!
//! The cost is a slightly larger index for CJK text, which is a small share of the corpus.

use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, Stemmer, StopWordFilter, TextAnalyzer, Token,
    TokenFilter, TokenStream, Tokenizer,
};

/// The analyzer of the weighted text fields: words and CJK bigrams, lowercased, English stop
/// words removed, English-stemmed.
pub const TEXT_ANALYZER: &str = "skill_text";
/// The analyzer of the unstemmed word field used for prefix and typo matching.
pub const WORDS_ANALYZER: &str = "skill_words";
/// Tokens longer than this (in bytes) are dropped: they are hashes, base64 or junk.
const MAX_TOKEN_BYTES: usize = 40;

/// Splits text into words (runs of letters and digits) and CJK bigrams, with byte offsets
/// into the original text so that snippets can highlight them.
#[derive(Debug, Clone, Default)]
pub struct SkillTokenizer {
    token: Token,
}

/// The token stream of [`SkillTokenizer`].
#[derive(Debug)]
pub struct SkillTokenStream<'a> {
    text: &'a str,
    /// Byte offset where scanning resumes.
    cursor: usize,
    /// Inside a CJK run: the byte offset of the previous CJK character, to emit the next
    /// bigram from.
    cjk_previous: Option<usize>,
    token: &'a mut Token,
}

impl Tokenizer for SkillTokenizer {
    type TokenStream<'a> = SkillTokenStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> SkillTokenStream<'a> {
        self.token.reset();
        SkillTokenStream {
            text,
            cursor: 0,
            cjk_previous: None,
            token: &mut self.token,
        }
    }
}

/// Returns true for characters of scripts written without spaces between words: Han
/// ideographs, Hiragana, Katakana and Hangul.
pub fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30FF}'   // Hiragana, Katakana
        | '\u{31F0}'..='\u{31FF}' // Katakana phonetic extensions
        | '\u{3400}'..='\u{4DBF}' // CJK extension A
        | '\u{4E00}'..='\u{9FFF}' // CJK unified ideographs
        | '\u{AC00}'..='\u{D7AF}' // Hangul syllables
        | '\u{F900}'..='\u{FAFF}' // CJK compatibility ideographs
        | '\u{FF66}'..='\u{FF9F}' // half-width Katakana
        | '\u{20000}'..='\u{2FA1F}' // extensions B-F and compatibility supplement
    )
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() && !is_cjk(c)
}

/// Words that name .NET when `.NET` follows them: `ASP.NET`, `ML.NET`, `ADO.NET`, `VB.NET`.
const DOTNET_PREFIXES: [&str; 4] = ["asp", "ml", "ado", "vb"];

/// Languages' names written with symbols (lowercased), and the words [`language_name`] makes
/// of them (a test checks that it does).
const LANGUAGE_WORDS: [(&str, &str); 4] = [
    ("c#", "csharp"),
    ("f#", "fsharp"),
    ("c++", "cpp"),
    (".net", "dotnet"),
];

/// Returns the word a programming language's name written with symbols stands for, and the
/// bytes it covers, when the word at `start..end` of `text` is one: `C#` is `csharp`, `F#`
/// `fsharp`, `C++` `cpp`, and `.NET` (alone or after [`DOTNET_PREFIXES`]) `dotnet`, the
/// words skills also use in their names. Without this, `C#` and `C++` are the letter `c`,
/// and `.NET` the word `net`.
fn language_name(text: &str, start: usize, end: usize) -> Option<(&'static str, usize, usize)> {
    let word = &text[start..end];
    if !matches!(word.len(), 1 | 3) {
        return None;
    }
    let rest = &text[end..];
    let ends_there = |len: usize| !rest[len..].starts_with(is_word_char);
    // `C++17` is C++ and the year of its standard.
    if word.eq_ignore_ascii_case("c") && rest.starts_with("++") && !rest[2..].starts_with('+') {
        return Some(("cpp", start, end + 2));
    }
    if rest.starts_with('#') && ends_there(1) {
        if word.eq_ignore_ascii_case("c") {
            return Some(("csharp", start, end + 1));
        }
        if word.eq_ignore_ascii_case("f") {
            return Some(("fsharp", start, end + 1));
        }
    }
    if word.eq_ignore_ascii_case("net") && text[..start].ends_with('.') {
        let dot = start - 1;
        let before = &text[..dot];
        let previous_word_start = before.rfind(|c: char| !is_word_char(c)).map_or(0, |at| {
            at + before[at..].chars().next().map_or(1, char::len_utf8)
        });
        let previous = &before[previous_word_start..];
        if previous.is_empty() {
            return Some(("dotnet", dot, end));
        }
        if DOTNET_PREFIXES
            .iter()
            .any(|prefix| previous.eq_ignore_ascii_case(prefix))
        {
            return Some(("dotnet", start, end));
        }
    }
    None
}

/// Returns how the language word `term` ([`language_name`]) is written in text, lowercased:
/// `c#` for `csharp`; nothing for any other term.
pub(crate) fn language_written_as(term: &str) -> Option<&'static str> {
    LANGUAGE_WORDS
        .iter()
        .find(|(_, word)| *word == term)
        .map(|(spelling, _)| *spelling)
}

/// True when the word at `start..end` of `text` is a language's name written with symbols
/// (see [`language_name`]).
pub(crate) fn is_language_name(text: &str, start: usize, end: usize) -> bool {
    language_name(text, start, end).is_some()
}

impl SkillTokenStream<'_> {
    fn emit(&mut self, from: usize, to: usize) -> bool {
        self.emit_as(&self.text[from..to], from, to)
    }

    /// Emits `word` for the text at `from..to`.
    fn emit_as(&mut self, word: &str, from: usize, to: usize) -> bool {
        self.token.text.clear();
        self.token.text.push_str(word);
        self.token.offset_from = from;
        self.token.offset_to = to;
        self.token.position = self.token.position.wrapping_add(1);
        true
    }

    /// Continues a CJK run: emits the bigram that starts at the previous character, or ends
    /// the run.
    fn next_in_cjk_run(&mut self, previous: usize) -> Option<bool> {
        let rest = &self.text[self.cursor..];
        match rest.chars().next() {
            Some(c) if is_cjk(c) => {
                let end = self.cursor + c.len_utf8();
                self.cjk_previous = Some(self.cursor);
                self.cursor = end;
                Some(self.emit(previous, end))
            }
            _ => {
                self.cjk_previous = None;
                None
            }
        }
    }
}

impl TokenStream for SkillTokenStream<'_> {
    fn advance(&mut self) -> bool {
        if let Some(previous) = self.cjk_previous
            && let Some(emitted) = self.next_in_cjk_run(previous)
        {
            return emitted;
        }
        let text = self.text;
        while let Some(c) = text[self.cursor..].chars().next() {
            let start = self.cursor;
            if is_word_char(c) {
                let len = text[start..]
                    .find(|c: char| !is_word_char(c))
                    .unwrap_or(text.len() - start);
                self.cursor = start + len;
                if let Some((word, from, to)) = language_name(text, start, start + len) {
                    self.cursor = to;
                    return self.emit_as(word, from, to);
                }
                return self.emit(start, start + len);
            }
            self.cursor += c.len_utf8();
            if is_cjk(c) {
                // A CJK run: a lone character is a unigram, else every adjacent pair.
                match text[self.cursor..].chars().next() {
                    Some(next) if is_cjk(next) => {
                        let end = self.cursor + next.len_utf8();
                        self.cjk_previous = Some(self.cursor);
                        self.cursor = end;
                        return self.emit(start, end);
                    }
                    _ => return self.emit(start, self.cursor),
                }
            }
        }
        false
    }

    fn token(&self) -> &Token {
        self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        self.token
    }
}

/// A token filter for the plural of acronyms, which the English stemmer leaves alone
/// because they have no vowel: `pdfs` -> `pdf`, `csvs` -> `csv`, `llms` -> `llm`.
#[derive(Debug, Clone, Copy, Default)]
pub struct AcronymPlural;

impl AcronymPlural {
    fn singular(word: &mut String) {
        let Some(stem) = word.strip_suffix('s') else {
            return;
        };
        let has_vowel = stem
            .chars()
            .any(|c| matches!(c, 'a' | 'e' | 'i' | 'o' | 'u' | 'y'));
        if stem.len() >= 2 && stem.chars().all(|c| c.is_ascii_lowercase()) && !has_vowel {
            word.pop();
        }
    }
}

impl TokenFilter for AcronymPlural {
    type Tokenizer<T: Tokenizer> = AcronymPluralFilter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> AcronymPluralFilter<T> {
        AcronymPluralFilter { tokenizer }
    }
}

/// The tokenizer wrapper of [`AcronymPlural`].
#[derive(Debug, Clone)]
pub struct AcronymPluralFilter<T> {
    tokenizer: T,
}

impl<T: Tokenizer> Tokenizer for AcronymPluralFilter<T> {
    type TokenStream<'a> = AcronymPluralStream<T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        AcronymPluralStream {
            tail: self.tokenizer.token_stream(text),
        }
    }
}

/// The token stream of [`AcronymPlural`].
#[derive(Debug)]
pub struct AcronymPluralStream<T> {
    tail: T,
}

impl<T: TokenStream> TokenStream for AcronymPluralStream<T> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        AcronymPlural::singular(&mut self.tail.token_mut().text);
        true
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}

/// Returns the analyzer of the weighted text fields (see [`TEXT_ANALYZER`]).
pub fn text_analyzer() -> TextAnalyzer {
    let builder = TextAnalyzer::builder(SkillTokenizer::default())
        .filter(RemoveLongFilter::limit(MAX_TOKEN_BYTES))
        .filter(LowerCaser);
    let stemmed = |builder: tantivy::tokenizer::TextAnalyzerBuilder| {
        builder
            .filter(Stemmer::new(Language::English))
            .filter(AcronymPlural)
            .build()
    };
    match StopWordFilter::new(Language::English) {
        Some(stop_words) => stemmed(builder.filter_dynamic(stop_words)),
        None => stemmed(builder.dynamic()),
    }
}

/// Returns the analyzer of the unstemmed word field (see [`WORDS_ANALYZER`]).
pub fn words_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SkillTokenizer::default())
        .filter(RemoveLongFilter::limit(MAX_TOKEN_BYTES))
        .filter(LowerCaser)
        .build()
}

/// Registers both analyzers on `index`; tokenizers are not persisted, so every open needs it.
pub(crate) fn register(index: &tantivy::Index) {
    index.tokenizers().register(TEXT_ANALYZER, text_analyzer());
    index
        .tokenizers()
        .register(WORDS_ANALYZER, words_analyzer());
}

/// Returns the tokens `analyzer` makes of `text`.
pub(crate) fn tokens(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let mut stream = analyzer.token_stream(text);
    let mut out = Vec::new();
    while let Some(token) = stream.next() {
        out.push(token.text.clone());
    }
    out
}

/// Returns the text each token of `analyzer` comes from, lowercased: `c#` where the token is
/// `csharp`.
pub(crate) fn written_tokens(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let mut stream = analyzer.token_stream(text);
    let mut out = Vec::new();
    while let Some(token) = stream.next() {
        // Character by character, as the analyser's lowercaser does (`Σ` is always `σ`).
        let written = &text[token.offset_from..token.offset_to];
        out.push(written.chars().flat_map(char::to_lowercase).collect());
    }
    out
}

/// Returns the tokens `analyzer` makes of `text` with their positions, counted from the
/// first: a stop word the analyser drops leaves its gap (`infrastructure as code` is
/// `infrastructur` at 0 and `code` at 2), as it does in the index, so a phrase built from
/// these matches the text it was typed from.
pub(crate) fn positioned_tokens(analyzer: &mut TextAnalyzer, text: &str) -> Vec<(usize, String)> {
    let mut stream = analyzer.token_stream(text);
    let mut out: Vec<(usize, String)> = Vec::new();
    while let Some(token) = stream.next() {
        out.push((token.position, token.text.clone()));
    }
    if let Some(first) = out.first().map(|(position, _)| *position) {
        for (position, _) in &mut out {
            *position = position.saturating_sub(first);
        }
    }
    out
}

/// The longest key kept for exact and prefix name matching, in bytes.
const MAX_KEY_BYTES: usize = 200;

/// Returns the matching key of a name or title: lowercased words joined by `-`, so that
/// `PDF Tools`, `pdf_tools` and `pdf-tools` are the same key, and `C# scripts` is
/// `csharp-scripts` (a language's name written with symbols is its word, as in the text).
pub fn key(text: &str) -> String {
    let mut out = String::new();
    let mut word_start = None;
    let ends = text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')));
    for (at, c) in ends {
        if at < text.len() && c.is_alphanumeric() {
            word_start.get_or_insert(at);
            continue;
        }
        let Some(start) = word_start.take() else {
            continue;
        };
        let word = match language_name(text, start, at) {
            Some((word, _, _)) => word.to_owned(),
            None => text[start..at]
                .chars()
                .flat_map(char::to_lowercase)
                .collect(),
        };
        if out.len() + word.len() + 1 > MAX_KEY_BYTES {
            break;
        }
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(&word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw_tokens(text: &str) -> Vec<(String, usize, usize)> {
        let mut tokenizer = SkillTokenizer::default();
        let mut stream = tokenizer.token_stream(text);
        let mut out = Vec::new();
        while let Some(token) = stream.next() {
            let written = &text[token.offset_from..token.offset_to];
            if written != token.text {
                // A language's name written with symbols stands for its word.
                let written = written.to_ascii_lowercase();
                // `NET` after `ASP.` is written without its dot.
                let spelled =
                    |spelling: &str| spelling == written || spelling == format!(".{written}");
                assert!(
                    LANGUAGE_WORDS
                        .iter()
                        .any(|(spelling, word)| spelled(spelling) && *word == token.text),
                    "{written:?} became {:?}",
                    token.text
                );
            }
            out.push((token.text.clone(), token.offset_from, token.offset_to));
        }
        out
    }

    #[test]
    fn words_and_cjk_bigrams() {
        let tokens: Vec<String> = raw_tokens("PDF 文本提取工具, v2 ok")
            .into_iter()
            .map(|(text, _, _)| text)
            .collect();
        assert_eq!(
            tokens,
            ["PDF", "文本", "本提", "提取", "取工", "工具", "v2", "ok"]
        );
        let tokens: Vec<String> = raw_tokens("a字b")
            .into_iter()
            .map(|(text, _, _)| text)
            .collect();
        assert_eq!(tokens, ["a", "字", "b"]);
        // Japanese kana and kanji mixed, glued to Latin text.
        let tokens: Vec<String> = raw_tokens("PDFをテキスト")
            .into_iter()
            .map(|(text, _, _)| text)
            .collect();
        assert_eq!(tokens, ["PDF", "をテ", "テキ", "キス", "スト"]);
        assert!(raw_tokens("").is_empty());
        assert!(raw_tokens("  ((( ))) ").is_empty());
    }

    #[test]
    fn language_names_written_with_symbols_are_words() {
        let raw = raw_tokens("C# and C++17, F#; .NET 8, ASP.NET or ML.NET: example.net c#1 c+");
        let texts: Vec<&str> = raw.iter().map(|(text, _, _)| text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "csharp", "and", "cpp", "17", "fsharp", "dotnet", "8", "ASP", "dotnet", "or", "ML",
                "dotnet", "example", "net", "c", "1", "c"
            ]
        );
        // The word covers what was written, for highlighting.
        assert_eq!((raw[0].1, raw[0].2), (0, 2));
        assert_eq!((raw[2].1, raw[2].2), (7, 10));
        let written = "C# and C++17, F#; .NET 8";
        assert_eq!(&written[raw[5].1..raw[5].2], ".NET");

        let mut text = text_analyzer();
        assert_eq!(
            tokens(&mut text, "the C# SDK for .NET"),
            ["csharp", "sdk", "dotnet"]
        );
        // The table the snippets look words up in says what the tokenizer does.
        for (spelling, word) in LANGUAGE_WORDS {
            assert_eq!(tokens(&mut text, spelling), [word]);
            assert_eq!(language_written_as(word), Some(spelling));
        }
    }

    #[test]
    fn analyzers_stem_and_drop_stop_words() {
        let mut text = text_analyzer();
        assert_eq!(
            tokens(&mut text, "Extracting the Tables of PDFs"),
            ["extract", "tabl", "pdf"]
        );
        assert_eq!(tokens(&mut text, "文本提取"), ["文本", "本提", "提取"]);
        assert_eq!(
            tokens(&mut text, "CSVs URLs apis gas"),
            ["csv", "url", "api", "gas"]
        );
        let mut words = words_analyzer();
        assert_eq!(
            tokens(&mut words, "Extracting the Tables"),
            ["extracting", "the", "tables"]
        );
        let long = "x".repeat(MAX_TOKEN_BYTES + 1);
        assert!(tokens(&mut words, &long).is_empty());
    }

    #[test]
    fn keys_normalise_separators_and_case() {
        assert_eq!(key("PDF Tools"), "pdf-tools");
        assert_eq!(key("pdf_tools"), "pdf-tools");
        assert_eq!(key("  pdf--tools  "), "pdf-tools");
        assert_eq!(key("((("), "");
        assert_eq!(key("文本 提取"), "文本-提取");
        assert_eq!(key("C# scripts"), "csharp-scripts");
        assert_eq!(key(".NET tracing"), "dotnet-tracing");
        assert_eq!(key("c"), "c");
        assert!(key(&"word ".repeat(100)).len() <= MAX_KEY_BYTES);
    }

    proptest::proptest! {
        #[test]
        fn tokens_are_slices_of_the_text(text in "\\PC{0,40}") {
            // raw_tokens asserts that each token is the text between its offsets.
            let tokens = raw_tokens(&text);
            for window in tokens.windows(2) {
                proptest::prop_assert!(window[0].1 <= window[1].1);
            }
        }

        /// Text made of what languages' names are written with, so that they come up.
        #[test]
        fn language_names_never_overlap_other_tokens(
            text in "([cCfF]|\\.|#|\\+|NET|net|asp|ML|[ _é文本]){0,24}"
        ) {
            let tokens = raw_tokens(&text);
            for (_, from, to) in &tokens {
                proptest::prop_assert!(from < to && *to <= text.len());
            }
            for window in tokens.windows(2) {
                let cjk_pair = window[0].0.chars().all(is_cjk);
                // Overlapping CJK bigrams aside, a token starts where the one before ended.
                proptest::prop_assert!(cjk_pair || window[0].2 <= window[1].1, "{:?}", tokens);
            }
        }
    }
}
