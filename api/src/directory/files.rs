//! A record's files: which paths name one, and their bytes from the blob store.
//!
//! Paths are confined to the skill (the RPC spec's "Restrict path to the skill's directory"):
//! an absolute path, a `..` or `.` segment, a backslash, an empty segment or a control
//! character is refused before anything is looked up, and only paths the record lists in
//! `files` can be read. Bytes come only from the blob store, where the crawl kept them; the
//! server never fetches anything.

use formats::Skill;
use store::BlobStore;

/// The longest file path accepted, in bytes.
pub(crate) const MAX_PATH_BYTES: usize = 1024;

/// Why a file cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FileError {
    /// The path could never name a file of a skill.
    InvalidPath(String),
    /// The skill has no file at that path.
    NotFound(String),
    /// The skill lists the file, but its bytes were not kept by the crawl.
    Unavailable(String),
    /// Reading the blob store failed.
    Internal(String),
}

/// Checks that `path` is a relative path inside a skill folder.
pub(crate) fn check_path(path: &str) -> Result<(), FileError> {
    let invalid = |why: &str| Err(FileError::InvalidPath(format!("invalid file path: {why}")));
    if path.is_empty() {
        return invalid("it is empty");
    }
    if path.len() > MAX_PATH_BYTES {
        return invalid("it is too long");
    }
    if path.starts_with('/') || path.contains('\\') || path.contains(':') && looks_like_drive(path)
    {
        return invalid("it must be relative to the skill folder");
    }
    if path.chars().any(char::is_control) {
        return invalid("it contains a control character");
    }
    for segment in path.split('/') {
        match segment {
            "" => return invalid("it has an empty segment"),
            "." | ".." => return invalid("it leaves or names the skill folder"),
            _ => {}
        }
    }
    Ok(())
}

/// True for `C:...`, a Windows drive prefix.
fn looks_like_drive(path: &str) -> bool {
    let bytes = path.as_bytes();
    bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

/// The bytes of one file of a skill.
#[derive(Debug, Clone)]
pub(crate) struct FileBytes {
    /// The file's content.
    pub(crate) bytes: Vec<u8>,
    /// The `Content-Type` to serve it with.
    pub(crate) content_type: &'static str,
}

/// Returns the bytes of `path` in `skill` (blocking: reads the blob store).
pub(crate) fn read(
    blobs: &dyn BlobStore,
    skill: &Skill,
    path: &str,
) -> Result<FileBytes, FileError> {
    check_path(path)?;
    let Some(entry) = skill.file(path) else {
        return Err(FileError::NotFound(format!(
            "skill {} has no file {path:?}",
            skill.id
        )));
    };
    let unavailable = || {
        FileError::Unavailable(format!(
            "the directory did not keep the bytes of {path:?} of skill {}",
            skill.id
        ))
    };
    let Some(digest) = entry.sha256 else {
        return Err(unavailable());
    };
    match blobs.get(&digest) {
        Ok(Some(bytes)) => Ok(FileBytes {
            bytes,
            content_type: content_type(path),
        }),
        Ok(None) => Err(unavailable()),
        Err(error) => Err(FileError::Internal(format!(
            "cannot read blob {digest}: {error}"
        ))),
    }
}

/// Returns the `Content-Type` for a file path. Never `text/html` or another type a browser
/// would run: the files are the publishers' content, served from this origin.
pub(crate) fn content_type(path: &str) -> &'static str {
    let extension = path
        .rsplit_once('.')
        .map(|(_, extension)| extension.to_ascii_lowercase())
        .unwrap_or_default();
    match extension.as_str() {
        "md" | "markdown" => "text/markdown; charset=utf-8",
        "json" => "application/json",
        "txt" | "py" | "sh" | "js" | "ts" | "rb" | "go" | "rs" | "toml" | "yaml" | "yml"
        | "csv" | "tsv" | "ini" | "cfg" | "sql" | "r" | "java" | "c" | "h" | "cpp" => {
            "text/plain; charset=utf-8"
        }
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "pdf" => "application/pdf",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside_the_skill() {
        for good in [
            "SKILL.md",
            "scripts/clean.py",
            "a/b/c.txt",
            "weird name.md",
            "x..y",
        ] {
            assert!(check_path(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "../secret",
            "a/../../b",
            "a/./b",
            "./SKILL.md",
            "a//b",
            "a/",
            "..",
            "C:/Windows",
            "a\\..\\b",
            "a\u{0}b",
            "a\nb",
        ] {
            assert!(check_path(bad).is_err(), "{bad:?}");
        }
        assert!(check_path(&"a".repeat(MAX_PATH_BYTES + 1)).is_err());
    }

    #[test]
    fn no_active_content_types() {
        for path in ["x.html", "x.svg", "x.htm", "x.xhtml", "noext"] {
            assert_eq!(content_type(path), "application/octet-stream", "{path}");
        }
        assert_eq!(content_type("SKILL.md"), "text/markdown; charset=utf-8");
    }
}
