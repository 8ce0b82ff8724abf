//! The safetensors format, read by hand: an 8-byte little-endian header length, a JSON header
//! naming each tensor's `dtype`, `shape` and `data_offsets` (relative to the end of the
//! header), then the data.

use std::collections::HashMap;
use std::path::Path;

use super::{EmbedError, WEIGHTS_FILE};

/// The largest JSON header accepted (safetensors itself caps it at 100 MB).
pub(crate) const MAX_HEADER_BYTES: u64 = 100 * 1024 * 1024;
/// Bytes of the header length at the start of the file.
const LENGTH_BYTES: usize = 8;
/// Bytes of one `F32` number.
const F32_BYTES: usize = 4;

/// Where one tensor lies in the data, and what it is.
struct TensorInfo {
    dtype: String,
    shape: Vec<usize>,
    start: usize,
    end: usize,
}

/// A parsed safetensors file: its header, checked against the data's length, and the data.
pub(crate) struct SafeTensors<'a> {
    path: &'a Path,
    tensors: HashMap<String, TensorInfo>,
    data: &'a [u8],
}

impl<'a> SafeTensors<'a> {
    /// Parses the header of `bytes` and checks that every tensor lies inside the data.
    pub(crate) fn parse(path: &'a Path, bytes: &'a [u8]) -> Result<SafeTensors<'a>, EmbedError> {
        let malformed = |reason: String| EmbedError::Malformed {
            path: path.to_owned(),
            file: WEIGHTS_FILE.to_owned(),
            reason,
        };
        let Some((length, rest)) = bytes.split_first_chunk::<LENGTH_BYTES>() else {
            return Err(malformed(format!(
                "truncated: {} bytes, shorter than the {LENGTH_BYTES}-byte header length",
                bytes.len()
            )));
        };
        let length = u64::from_le_bytes(*length);
        if length > MAX_HEADER_BYTES {
            return Err(malformed(format!(
                "the header length {length} is over the limit of {MAX_HEADER_BYTES} bytes"
            )));
        }
        let length = usize::try_from(length).unwrap_or(usize::MAX);
        if length > rest.len() {
            return Err(malformed(format!(
                "truncated: the header is {length} bytes, but only {} follow",
                rest.len()
            )));
        }
        let (header, data) = rest.split_at(length);
        let header: serde_json::Value = serde_json::from_slice(header)
            .map_err(|error| malformed(format!("the header is not JSON: {error}")))?;
        let serde_json::Value::Object(entries) = header else {
            return Err(malformed("the header is not a JSON object".to_owned()));
        };
        let mut tensors = HashMap::with_capacity(entries.len());
        for (name, entry) in entries {
            if name == "__metadata__" {
                continue;
            }
            let info = tensor_info(&entry)
                .ok_or_else(|| malformed(format!("the header entry of {name} is not a tensor")))?;
            if info.start > info.end || info.end > data.len() {
                return Err(malformed(format!(
                    "truncated: tensor {name} lies at bytes {}..{} of data, which has {} bytes",
                    info.start,
                    info.end,
                    data.len()
                )));
            }
            tensors.insert(name, info);
        }
        Ok(SafeTensors {
            path,
            tensors,
            data,
        })
    }

    /// The `F32` tensor `name` of exactly `shape`, as numbers in row-major order.
    pub(crate) fn f32_tensor(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, EmbedError> {
        let wrong = |problem: String| EmbedError::WrongTensor {
            path: self.path.to_owned(),
            tensor: name.to_owned(),
            problem,
        };
        let info = self
            .tensors
            .get(name)
            .ok_or_else(|| wrong("is missing".to_owned()))?;
        if info.dtype != "F32" {
            return Err(wrong(format!("has type {}, expected F32", info.dtype)));
        }
        if info.shape != shape {
            return Err(wrong(format!(
                "has shape {:?}, expected {shape:?}",
                info.shape
            )));
        }
        let count = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
        let bytes = &self.data[info.start..info.end];
        if count.and_then(|n| n.checked_mul(F32_BYTES)) != Some(bytes.len()) {
            return Err(wrong(format!(
                "holds {} bytes, not the {} of its shape",
                bytes.len(),
                count.map_or_else(
                    || "overflowing size".to_owned(),
                    |n| (n * F32_BYTES).to_string()
                )
            )));
        }
        Ok(bytes
            .chunks_exact(F32_BYTES)
            .map(|chunk| f32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]))
            .collect())
    }

    /// The model path the file belongs to.
    pub(crate) fn path(&self) -> &Path {
        self.path
    }

    /// The shape of tensor `name`, if there is one.
    pub(crate) fn shape(&self, name: &str) -> Option<&[usize]> {
        self.tensors.get(name).map(|info| info.shape.as_slice())
    }
}

fn tensor_info(entry: &serde_json::Value) -> Option<TensorInfo> {
    let dtype = entry.get("dtype")?.as_str()?.to_owned();
    let shape = entry
        .get("shape")?
        .as_array()?
        .iter()
        .map(|d| d.as_u64().and_then(|d| usize::try_from(d).ok()))
        .collect::<Option<Vec<usize>>>()?;
    let offsets = entry.get("data_offsets")?.as_array()?;
    let [start, end] = offsets.as_slice() else {
        return None;
    };
    Some(TensorInfo {
        dtype,
        shape,
        start: usize::try_from(start.as_u64()?).ok()?,
        end: usize::try_from(end.as_u64()?).ok()?,
    })
}
