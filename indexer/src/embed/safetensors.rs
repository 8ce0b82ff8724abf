//! The weights file, read with the `safetensors` crate (an 8-byte header length, a JSON header
//! naming each tensor's `dtype`, `shape` and `data_offsets`, then the data), its errors said
//! as this model's errors: which file, which tensor, what is wrong.

use std::path::Path;

use safetensors::SafeTensorError;
use safetensors::tensor::{Dtype, SafeTensors as Parsed};

use super::{EmbedError, WEIGHTS_FILE};

/// Bytes of one `F32` number.
const F32_BYTES: usize = 4;

/// A parsed safetensors file: its header, checked against the data's length, and the data.
pub(crate) struct SafeTensors<'a> {
    path: &'a Path,
    parsed: Parsed<'a>,
}

impl<'a> SafeTensors<'a> {
    /// Parses the header of `bytes` and checks that every tensor lies inside the data.
    pub(crate) fn parse(path: &'a Path, bytes: &'a [u8]) -> Result<SafeTensors<'a>, EmbedError> {
        let parsed = Parsed::deserialize(bytes).map_err(|error| EmbedError::Malformed {
            path: path.to_owned(),
            file: WEIGHTS_FILE.to_owned(),
            reason: reason(&error, bytes.len()),
        })?;
        Ok(SafeTensors { path, parsed })
    }

    /// The `F32` tensor `name` of exactly `shape`, as numbers in row-major order.
    pub(crate) fn f32_tensor(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, EmbedError> {
        let wrong = |problem: String| EmbedError::WrongTensor {
            path: self.path.to_owned(),
            tensor: name.to_owned(),
            problem,
        };
        let tensor = self
            .parsed
            .tensor(name)
            .map_err(|_| wrong("is missing".to_owned()))?;
        if tensor.dtype() != Dtype::F32 {
            return Err(wrong(format!(
                "has type {:?}, expected F32",
                tensor.dtype()
            )));
        }
        if tensor.shape() != shape {
            return Err(wrong(format!(
                "has shape {:?}, expected {shape:?}",
                tensor.shape()
            )));
        }
        // The crate checks that the data covers the shape of its type.
        Ok(tensor
            .data()
            .chunks_exact(F32_BYTES)
            .map(|chunk| f32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]))
            .collect())
    }

    /// The model path the file belongs to.
    pub(crate) fn path(&self) -> &Path {
        self.path
    }

    /// The shape of tensor `name`, if there is one.
    pub(crate) fn shape(&self, name: &str) -> Option<Vec<usize>> {
        self.parsed
            .tensor(name)
            .ok()
            .map(|tensor| tensor.shape().to_vec())
    }
}

/// Says what is wrong with a file the crate refused, naming a short file as truncated.
fn reason(error: &SafeTensorError, file_bytes: usize) -> String {
    match error {
        SafeTensorError::HeaderTooSmall
        | SafeTensorError::InvalidHeaderLength
        | SafeTensorError::MetadataIncompleteBuffer => {
            format!(
                "truncated: {file_bytes} bytes do not hold what the header declares ({error:?})"
            )
        }
        SafeTensorError::InvalidHeader
        | SafeTensorError::InvalidHeaderStart
        | SafeTensorError::InvalidHeaderDeserialization
        | SafeTensorError::JsonError(_) => format!("the header is not a JSON object ({error:?})"),
        other => format!("{other:?}"),
    }
}
