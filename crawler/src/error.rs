//! The crate's error type, for failures that are not about published content (those are
//! [`Diagnostic`](formats::Diagnostic)s).

use std::path::PathBuf;

/// What went wrong, phrased as what the caller can do about it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A local path could not be read; the caller should check the path and permissions.
    #[error("cannot read {path}")]
    Read {
        /// The path that could not be read.
        path: PathBuf,
        /// The I/O failure.
        #[source]
        source: std::io::Error,
    },
    /// A local path is not something `validate` understands.
    #[error("{path} is not a skill folder, a SKILL.md, an index file or a well-known tree")]
    UnrecognisedInput {
        /// The path that was given.
        path: PathBuf,
    },
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
