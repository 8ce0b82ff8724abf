//! The BERT tokenizer that `tokenizer.json` describes, as the `tokenizers` library runs it:
//!
//! 1. Added tokens (`[CLS]`, `[SEP]`, `[MASK]`, ...) are found in the raw text and kept whole.
//! 2. `BertNormalizer`: clean the text (drop U+0000, U+FFFD and control characters, turn
//!    whitespace into spaces), put spaces around CJK ideographs, strip accents (NFD, then drop
//!    the nonspacing marks), lowercase.
//! 3. `BertPreTokenizer`: split on whitespace; every punctuation character is a word of its
//!    own.
//! 4. `WordPiece`: greedy longest match first, continuation pieces prefixed with `##`; a word
//!    with a part outside the vocabulary, or longer than `max_input_chars_per_word`, is
//!    `[UNK]`.
//! 5. `[CLS]` before, `[SEP]` after.
//!
//! Character classes come from Unicode 16 (`unicode-general-category`). The `tokenizers`
//! library uses older tables (U+2E43, punctuation since Unicode 9, is a letter to it), so a
//! character assigned since then that is punctuation, a nonspacing mark or a format
//! character is split off, stripped or dropped here where `tokenizers` keeps it in its word
//! (which then usually becomes `[UNK]`). The parity fixtures hold no such character.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;
use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

use super::{EmbedError, TOKENIZER_FILE};

/// The token before the text.
const CLS: &str = "[CLS]";
/// The token after the text.
const SEP: &str = "[SEP]";

/// The tokenizer: the normalizer's switches, the WordPiece vocabulary, the added tokens.
pub(crate) struct Tokenizer {
    clean_text: bool,
    handle_chinese_chars: bool,
    strip_accents: bool,
    lowercase: bool,
    vocab: HashMap<String, usize>,
    unk: usize,
    cls: usize,
    sep: usize,
    prefix: String,
    max_input_chars_per_word: usize,
    /// The added tokens matched in the raw text, longest first.
    added: Vec<(String, usize)>,
    largest_id: usize,
}

/// A stretch of the input: an added token or text to tokenize.
enum Segment<'t> {
    Added(usize),
    Text(&'t str),
}

impl Tokenizer {
    /// Reads `tokenizer.json`, refusing normalizers, pre-tokenizers and models other than
    /// BERT's.
    pub(crate) fn parse(path: &Path, bytes: &[u8]) -> Result<Tokenizer, EmbedError> {
        let malformed = |reason: String| EmbedError::Malformed {
            path: path.to_owned(),
            file: TOKENIZER_FILE.to_owned(),
            reason,
        };
        let unsupported = |reason: String| EmbedError::Unsupported {
            path: path.to_owned(),
            file: TOKENIZER_FILE.to_owned(),
            reason,
        };
        let json: Value = serde_json::from_slice(bytes)
            .map_err(|error| malformed(format!("not JSON: {error}")))?;
        let kind = |section: &str| {
            json.get(section)
                .and_then(|s| s.get("type"))
                .and_then(Value::as_str)
        };

        if kind("normalizer") != Some("BertNormalizer") {
            return Err(unsupported(format!(
                "normalizer {:?}, only BertNormalizer is implemented",
                kind("normalizer")
            )));
        }
        let normalizer = &json["normalizer"];
        let flag = |name: &str, default: bool| match normalizer.get(name) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Bool(value)) => Ok(*value),
            Some(other) => Err(malformed(format!(
                "normalizer.{name} is {other}, not a boolean"
            ))),
        };
        let lowercase = flag("lowercase", true)?;
        let strip_accents = match normalizer.get("strip_accents") {
            None | Some(Value::Null) => lowercase,
            Some(Value::Bool(value)) => *value,
            Some(other) => {
                return Err(malformed(format!(
                    "normalizer.strip_accents is {other}, not a boolean"
                )));
            }
        };
        if kind("pre_tokenizer") != Some("BertPreTokenizer") {
            return Err(unsupported(format!(
                "pre_tokenizer {:?}, only BertPreTokenizer is implemented",
                kind("pre_tokenizer")
            )));
        }
        if kind("model") != Some("WordPiece") {
            return Err(unsupported(format!(
                "model {:?}, only WordPiece is implemented",
                kind("model")
            )));
        }
        let model = &json["model"];
        let Some(entries) = model.get("vocab").and_then(Value::as_object) else {
            return Err(malformed("model.vocab is not an object".to_owned()));
        };
        let mut vocab = HashMap::with_capacity(entries.len());
        for (piece, id) in entries {
            let id = id
                .as_u64()
                .and_then(|id| usize::try_from(id).ok())
                .ok_or_else(|| malformed(format!("the id of {piece:?} is {id}, not a number")))?;
            vocab.insert(piece.clone(), id);
        }
        let string = |name: &str, default: &str| match model.get(name) {
            None | Some(Value::Null) => Ok(default.to_owned()),
            Some(Value::String(value)) => Ok(value.clone()),
            Some(other) => Err(malformed(format!("model.{name} is {other}, not a string"))),
        };
        let unk_token = string("unk_token", "[UNK]")?;
        let prefix = string("continuing_subword_prefix", "##")?;
        let max_input_chars_per_word = match model.get("max_input_chars_per_word") {
            None | Some(Value::Null) => 100,
            Some(value) => value
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| {
                    malformed(format!(
                        "model.max_input_chars_per_word is {value}, not a number"
                    ))
                })?,
        };
        let id_of = |token: &str| {
            vocab
                .get(token)
                .copied()
                .ok_or_else(|| malformed(format!("the vocabulary has no {token}")))
        };
        let (unk, cls, sep) = (id_of(&unk_token)?, id_of(CLS)?, id_of(SEP)?);

        let mut added = Vec::new();
        if let Some(tokens) = json.get("added_tokens").and_then(Value::as_array) {
            for token in tokens {
                let content = token.get("content").and_then(Value::as_str);
                let id = token
                    .get("id")
                    .and_then(Value::as_u64)
                    .and_then(|id| usize::try_from(id).ok());
                let (Some(content), Some(id)) = (content, id) else {
                    return Err(malformed(format!(
                        "added token {token} has no content or id"
                    )));
                };
                let on = |name: &str| token.get(name).and_then(Value::as_bool).unwrap_or(false);
                if on("normalized") || on("single_word") || on("lstrip") || on("rstrip") {
                    return Err(unsupported(format!(
                        "added token {content:?}: only tokens matched as they are (not normalized, \
                         not single_word, no lstrip or rstrip) are implemented"
                    )));
                }
                if !content.is_empty() {
                    added.push((content.to_owned(), id));
                }
            }
        }
        added.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        let largest_id = vocab
            .values()
            .chain(added.iter().map(|(_, id)| id))
            .copied()
            .max()
            .unwrap_or(0);
        Ok(Tokenizer {
            clean_text: flag("clean_text", true)?,
            handle_chinese_chars: flag("handle_chinese_chars", true)?,
            strip_accents,
            lowercase,
            vocab,
            unk,
            cls,
            sep,
            prefix,
            max_input_chars_per_word,
            added,
            largest_id,
        })
    }

    /// How many pieces the vocabulary holds.
    pub(crate) fn vocabulary_size(&self) -> usize {
        self.vocab.len()
    }

    /// The largest id the tokenizer can produce.
    pub(crate) fn largest_id(&self) -> usize {
        self.largest_id
    }

    /// The ids of `text`: `[CLS]`, its word pieces (as many as fit), `[SEP]`; at most
    /// `max_pieces` in all (and at least the two special tokens).
    pub(crate) fn encode(&self, text: &str, max_pieces: usize) -> Vec<usize> {
        let budget = max_pieces.saturating_sub(2);
        let mut ids = vec![self.cls];
        let mut word = String::new();
        for segment in self.split_added(text) {
            if ids.len() > budget {
                break;
            }
            match segment {
                Segment::Added(id) => ids.push(id),
                Segment::Text(text) => {
                    let normalized = self.normalize(text);
                    for c in normalized.chars() {
                        if ids.len() > budget {
                            break;
                        }
                        if c.is_whitespace() {
                            self.word_pieces(&word, &mut ids);
                            word.clear();
                        } else if is_punctuation(c) {
                            self.word_pieces(&word, &mut ids);
                            word.clear();
                            word.push(c);
                            self.word_pieces(&word, &mut ids);
                            word.clear();
                        } else {
                            word.push(c);
                        }
                    }
                    self.word_pieces(&word, &mut ids);
                    word.clear();
                }
            }
        }
        ids.truncate(budget + 1);
        ids.push(self.sep);
        ids
    }

    /// `text` cut at the added tokens (leftmost, then longest match).
    fn split_added<'t>(&self, text: &'t str) -> Vec<Segment<'t>> {
        let mut segments = Vec::new();
        let mut start = 0;
        let mut at = 0;
        while at < text.len() {
            let rest = &text[at..];
            if let Some((content, id)) = self
                .added
                .iter()
                .find(|(content, _)| rest.starts_with(content.as_str()))
            {
                if start < at {
                    segments.push(Segment::Text(&text[start..at]));
                }
                segments.push(Segment::Added(*id));
                at += content.len();
                start = at;
            } else {
                at += rest.chars().next().map_or(1, char::len_utf8);
            }
        }
        if start < text.len() {
            segments.push(Segment::Text(&text[start..]));
        }
        segments
    }

    /// BertNormalizer: clean, space out CJK ideographs, strip accents, lowercase.
    fn normalize(&self, text: &str) -> String {
        let mut cleaned = String::with_capacity(text.len());
        for c in text.chars() {
            if self.clean_text {
                if c == '\0' || c == '\u{fffd}' || is_control(c) {
                    continue;
                }
                if is_bert_whitespace(c) {
                    cleaned.push(' ');
                    continue;
                }
            }
            if self.handle_chinese_chars && is_chinese_char(c) {
                cleaned.push(' ');
                cleaned.push(c);
                cleaned.push(' ');
            } else {
                cleaned.push(c);
            }
        }
        let stripped = if self.strip_accents {
            cleaned
                .nfd()
                .filter(|&c| get_general_category(c) != GeneralCategory::NonspacingMark)
                .collect()
        } else {
            cleaned
        };
        if self.lowercase {
            stripped.chars().flat_map(char::to_lowercase).collect()
        } else {
            stripped
        }
    }

    /// WordPiece: appends the pieces of `word` to `ids`, or `[UNK]` when it cannot be cut
    /// into vocabulary pieces or is too long.
    fn word_pieces(&self, word: &str, ids: &mut Vec<usize>) {
        if word.is_empty() {
            return;
        }
        if word.chars().count() > self.max_input_chars_per_word {
            ids.push(self.unk);
            return;
        }
        let first = ids.len();
        let mut key = String::new();
        let mut start = 0;
        while start < word.len() {
            let mut end = word.len();
            let mut found = None;
            while start < end {
                key.clear();
                if start > 0 {
                    key.push_str(&self.prefix);
                }
                key.push_str(&word[start..end]);
                if let Some(&id) = self.vocab.get(&key) {
                    found = Some(id);
                    break;
                }
                end = word[..end]
                    .char_indices()
                    .next_back()
                    .map_or(start, |(i, _)| i);
            }
            let Some(id) = found else {
                ids.truncate(first);
                ids.push(self.unk);
                return;
            };
            ids.push(id);
            start = end;
        }
    }
}

/// BERT's whitespace: tab, newline, carriage return and Unicode whitespace.
fn is_bert_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

/// BERT's control characters (dropped): control, format and private-use characters, except
/// tab, newline and carriage return.
fn is_control(c: char) -> bool {
    if matches!(c, '\t' | '\n' | '\r') {
        return false;
    }
    matches!(
        get_general_category(c),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::PrivateUse
            | GeneralCategory::Surrogate
    )
}

/// BERT's punctuation: ASCII punctuation and symbols (33-47, 58-64, 91-96, 123-126) and the
/// Unicode punctuation categories.
fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation()
        || matches!(
            get_general_category(c),
            GeneralCategory::ConnectorPunctuation
                | GeneralCategory::DashPunctuation
                | GeneralCategory::OpenPunctuation
                | GeneralCategory::ClosePunctuation
                | GeneralCategory::InitialPunctuation
                | GeneralCategory::FinalPunctuation
                | GeneralCategory::OtherPunctuation
        )
}

/// The CJK ideograph blocks BERT spaces out.
fn is_chinese_char(c: char) -> bool {
    matches!(
        u32::from(c),
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B920..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}
