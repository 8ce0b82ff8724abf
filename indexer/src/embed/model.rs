//! The BERT encoder of all-MiniLM-L6-v2 and its configuration check.
//!
//! The forward pass, for the `n` word pieces of one text: word + position + token type 0
//! embeddings, LayerNorm; then per layer: self-attention (12 heads of 32), output projection,
//! residual, LayerNorm, feed-forward (384 → 1536, GELU with the exact erf, → 384), residual,
//! LayerNorm; then the mean over the `n` token vectors, L2-normalised. There is no padding, so
//! no attention mask. Matrix products run in `ndarray` (its `matrixmultiply` kernels pick
//! AVX2/FMA at run time), on the calling thread.

use std::f32::consts::FRAC_1_SQRT_2;
use std::path::Path;

use ndarray::linalg::general_mat_mul;
use ndarray::{Array1, Array2, ArrayView1, Axis, Slice};
use serde_json::Value;

use super::safetensors::SafeTensors;
use super::{CONFIG_FILE, EmbedError, MAX_PIECES};

/// The hidden size (the vector's dimensions).
pub(crate) const HIDDEN: usize = 384;
/// Encoder layers.
pub(crate) const LAYERS: usize = 6;
/// Attention heads per layer.
pub(crate) const HEADS: usize = 12;
/// The feed-forward layer's inner size.
pub(crate) const INTERMEDIATE: usize = 1536;
/// Learned positions.
pub(crate) const MAX_POSITIONS: usize = 512;
/// The LayerNorm epsilon.
pub(crate) const LAYER_NORM_EPS: f32 = 1e-12;
/// Each head's width.
const HEAD_WIDTH: usize = HIDDEN / HEADS;

const _: () = assert!(
    MAX_PIECES <= MAX_POSITIONS,
    "a text must fit the learned positions"
);

/// What `config.json` says, once checked against what is implemented.
pub(crate) struct Config {
    /// Rows of the word embeddings.
    pub(crate) vocab_size: usize,
    /// Rows of the token type embeddings.
    type_vocab_size: usize,
}

impl Config {
    /// Reads `config.json`; refuses any architecture but the one implemented here.
    pub(crate) fn parse(path: &Path, bytes: &[u8]) -> Result<Config, EmbedError> {
        let json: Value = serde_json::from_slice(bytes).map_err(|error| EmbedError::Malformed {
            path: path.to_owned(),
            file: CONFIG_FILE.to_owned(),
            reason: format!("not JSON: {error}"),
        })?;
        let unsupported = |reason: String| EmbedError::Unsupported {
            path: path.to_owned(),
            file: CONFIG_FILE.to_owned(),
            reason,
        };
        let number = |name: &str| -> Result<usize, EmbedError> {
            json.get(name)
                .and_then(Value::as_u64)
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| EmbedError::Malformed {
                    path: path.to_owned(),
                    file: CONFIG_FILE.to_owned(),
                    reason: format!("{name} is missing or not a whole number"),
                })
        };
        for (name, expected) in [
            ("hidden_size", HIDDEN),
            ("num_hidden_layers", LAYERS),
            ("num_attention_heads", HEADS),
            ("intermediate_size", INTERMEDIATE),
            ("max_position_embeddings", MAX_POSITIONS),
        ] {
            let found = number(name)?;
            if found != expected {
                return Err(unsupported(format!(
                    "{name} is {found}; only {expected} is implemented"
                )));
            }
        }
        for (name, expected) in [
            ("model_type", "bert"),
            ("hidden_act", "gelu"),
            ("position_embedding_type", "absolute"),
        ] {
            match json.get(name) {
                None => {}
                Some(Value::String(found)) if found == expected => {}
                Some(found) => {
                    return Err(unsupported(format!(
                        "{name} is {found}; only \"{expected}\" is implemented"
                    )));
                }
            }
        }
        if let Some(eps) = json.get("layer_norm_eps") {
            let close = eps
                .as_f64()
                .is_some_and(|eps| (eps - f64::from(LAYER_NORM_EPS)).abs() <= 1e-15);
            if !close {
                return Err(unsupported(format!(
                    "layer_norm_eps is {eps}; only {LAYER_NORM_EPS:e} is implemented"
                )));
            }
        }
        let vocab_size = number("vocab_size")?;
        let type_vocab_size = match json.get("type_vocab_size") {
            None => 2,
            Some(_) => number("type_vocab_size")?,
        };
        if vocab_size == 0 || type_vocab_size == 0 {
            return Err(unsupported(
                "vocab_size and type_vocab_size must be at least 1".to_owned(),
            ));
        }
        Ok(Config {
            vocab_size,
            type_vocab_size,
        })
    }
}

/// A linear layer: `x · weightᵀ + bias`, the weight as stored (outputs × inputs).
struct Dense {
    weight: Array2<f32>,
    bias: Array1<f32>,
}

impl Dense {
    fn forward(&self, x: &Array2<f32>) -> Array2<f32> {
        let mut out = Array2::zeros((x.nrows(), self.bias.len()));
        for mut row in out.rows_mut() {
            row.assign(&self.bias);
        }
        general_mat_mul(1.0, x, &self.weight.t(), 1.0, &mut out);
        out
    }
}

/// A LayerNorm's gain and bias.
struct Norm {
    gain: Array1<f32>,
    bias: Array1<f32>,
}

impl Norm {
    /// Normalises every row of `x` in place.
    fn apply(&self, x: &mut Array2<f32>) {
        let width = x.ncols() as f32;
        for mut row in x.rows_mut() {
            let mean = row.sum() / width;
            let variance = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / width;
            let scale = 1.0 / (variance + LAYER_NORM_EPS).sqrt();
            for ((v, g), b) in row.iter_mut().zip(&self.gain).zip(&self.bias) {
                *v = (*v - mean) * scale * g + b;
            }
        }
    }
}

/// One encoder layer.
struct Layer {
    /// Query, key and value projections in one (3 × 384 outputs).
    qkv: Dense,
    attention_output: Dense,
    attention_norm: Norm,
    intermediate: Dense,
    output: Dense,
    output_norm: Norm,
}

/// The encoder's weights.
pub(crate) struct Model {
    word_embeddings: Array2<f32>,
    position_embeddings: Array2<f32>,
    token_type_embedding: Array1<f32>,
    embeddings_norm: Norm,
    layers: Vec<Layer>,
}

/// Reads the tensors out of a parsed safetensors file, checking names, types and shapes.
struct Loader<'a> {
    tensors: SafeTensors<'a>,
    /// `""` or `"bert."`, whichever the file's names start with.
    prefix: &'static str,
}

impl Loader<'_> {
    fn matrix(&self, name: &str, rows: usize, cols: usize) -> Result<Array2<f32>, EmbedError> {
        let name = format!("{}{name}", self.prefix);
        let data = self.tensors.f32_tensor(&name, &[rows, cols])?;
        Array2::from_shape_vec((rows, cols), data).map_err(|error| self.shape_error(&name, &error))
    }

    fn vector(&self, name: &str, len: usize) -> Result<Array1<f32>, EmbedError> {
        let name = format!("{}{name}", self.prefix);
        Ok(Array1::from_vec(self.tensors.f32_tensor(&name, &[len])?))
    }

    fn dense(&self, name: &str, outputs: usize, inputs: usize) -> Result<Dense, EmbedError> {
        Ok(Dense {
            weight: self.matrix(&format!("{name}.weight"), outputs, inputs)?,
            bias: self.vector(&format!("{name}.bias"), outputs)?,
        })
    }

    fn norm(&self, name: &str) -> Result<Norm, EmbedError> {
        Ok(Norm {
            gain: self.vector(&format!("{name}.weight"), HIDDEN)?,
            bias: self.vector(&format!("{name}.bias"), HIDDEN)?,
        })
    }

    fn shape_error(&self, name: &str, error: &ndarray::ShapeError) -> EmbedError {
        EmbedError::WrongTensor {
            path: self.tensors.path().to_owned(),
            tensor: name.to_owned(),
            problem: format!("cannot be shaped: {error}"),
        }
    }
}

impl Model {
    /// Reads the weights of the configured model out of a safetensors file.
    pub(crate) fn from_safetensors(
        path: &Path,
        config: &Config,
        bytes: &[u8],
    ) -> Result<Model, EmbedError> {
        let tensors = SafeTensors::parse(path, bytes)?;
        let first = "embeddings.word_embeddings.weight";
        let prefix = if tensors.shape(first).is_none()
            && tensors.shape(&format!("bert.{first}")).is_some()
        {
            "bert."
        } else {
            ""
        };
        let loader = Loader { tensors, prefix };
        let token_types = loader.matrix(
            "embeddings.token_type_embeddings.weight",
            config.type_vocab_size,
            HIDDEN,
        )?;
        let mut layers = Vec::with_capacity(LAYERS);
        for layer in 0..LAYERS {
            let p = format!("encoder.layer.{layer}.");
            let attention =
                |part: &str| loader.dense(&format!("{p}attention.self.{part}"), HIDDEN, HIDDEN);
            let (query, key, value) = (attention("query")?, attention("key")?, attention("value")?);
            let qkv_weight = ndarray::concatenate(
                Axis(0),
                &[query.weight.view(), key.weight.view(), value.weight.view()],
            )
            .map_err(|error| loader.shape_error(&format!("{p}attention.self"), &error))?;
            let qkv_bias = ndarray::concatenate(
                Axis(0),
                &[query.bias.view(), key.bias.view(), value.bias.view()],
            )
            .map_err(|error| loader.shape_error(&format!("{p}attention.self"), &error))?;
            layers.push(Layer {
                qkv: Dense {
                    weight: qkv_weight,
                    bias: qkv_bias,
                },
                attention_output: loader.dense(
                    &format!("{p}attention.output.dense"),
                    HIDDEN,
                    HIDDEN,
                )?,
                attention_norm: loader.norm(&format!("{p}attention.output.LayerNorm"))?,
                intermediate: loader.dense(
                    &format!("{p}intermediate.dense"),
                    INTERMEDIATE,
                    HIDDEN,
                )?,
                output: loader.dense(&format!("{p}output.dense"), HIDDEN, INTERMEDIATE)?,
                output_norm: loader.norm(&format!("{p}output.LayerNorm"))?,
            });
        }
        Ok(Model {
            word_embeddings: loader.matrix(
                "embeddings.word_embeddings.weight",
                config.vocab_size,
                HIDDEN,
            )?,
            position_embeddings: loader.matrix(
                "embeddings.position_embeddings.weight",
                MAX_POSITIONS,
                HIDDEN,
            )?,
            token_type_embedding: token_types.row(0).to_owned(),
            embeddings_norm: loader.norm("embeddings.LayerNorm")?,
            layers,
        })
    }

    /// The vector's dimensions.
    pub(crate) fn dimensions(&self) -> usize {
        HIDDEN
    }

    /// The L2-normalised mean of the encoder's output for word-piece `ids`. Ids outside the
    /// vocabulary are read as `[PAD]` (0); pieces past [`MAX_POSITIONS`] are ignored (the
    /// tokenizer produces neither).
    pub(crate) fn embed(&self, ids: &[usize]) -> Vec<f32> {
        let n = ids.len().min(MAX_POSITIONS);
        if n == 0 {
            return vec![0.0; HIDDEN];
        }
        let mut x = Array2::<f32>::zeros((n, HIDDEN));
        for (i, (mut row, &id)) in x.rows_mut().into_iter().zip(ids).enumerate() {
            let id = if id < self.word_embeddings.nrows() {
                id
            } else {
                0
            };
            let word: ArrayView1<'_, f32> = self.word_embeddings.row(id);
            let position = self.position_embeddings.row(i);
            for (((v, w), p), t) in row
                .iter_mut()
                .zip(word)
                .zip(position)
                .zip(&self.token_type_embedding)
            {
                *v = w + p + t;
            }
        }
        self.embeddings_norm.apply(&mut x);

        let scale = 1.0 / (HEAD_WIDTH as f32).sqrt();
        let mut scores = Array2::<f32>::zeros((n, n));
        let mut context = Array2::<f32>::zeros((n, HIDDEN));
        for layer in &self.layers {
            let qkv = layer.qkv.forward(&x);
            for head in 0..HEADS {
                let lo = head * HEAD_WIDTH;
                let hi = lo + HEAD_WIDTH;
                let columns = |from: usize| Slice::from(from + lo..from + hi);
                let query = qkv.slice_axis(Axis(1), columns(0));
                let key = qkv.slice_axis(Axis(1), columns(HIDDEN));
                let value = qkv.slice_axis(Axis(1), columns(2 * HIDDEN));
                general_mat_mul(scale, &query, &key.t(), 0.0, &mut scores);
                for mut row in scores.rows_mut() {
                    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                    let mut sum = 0.0;
                    for v in row.iter_mut() {
                        *v = (*v - max).exp();
                        sum += *v;
                    }
                    row.mapv_inplace(|v| v / sum);
                }
                general_mat_mul(
                    1.0,
                    &scores,
                    &value,
                    0.0,
                    &mut context.slice_axis_mut(Axis(1), columns(0)),
                );
            }
            let mut attended = layer.attention_output.forward(&context);
            attended += &x;
            layer.attention_norm.apply(&mut attended);
            x = attended;

            let mut hidden = layer.intermediate.forward(&x);
            hidden.mapv_inplace(|v| 0.5 * v * (1.0 + libm::erff(v * FRAC_1_SQRT_2)));
            let mut out = layer.output.forward(&hidden);
            out += &x;
            layer.output_norm.apply(&mut out);
            x = out;
        }

        let pooled = x
            .mean_axis(Axis(0))
            .unwrap_or_else(|| Array1::zeros(HIDDEN));
        let norm = pooled.iter().map(|v| v * v).sum::<f32>().sqrt();
        if norm > 0.0 {
            pooled.iter().map(|v| v / norm).collect()
        } else {
            pooled.to_vec()
        }
    }
}
