//! Bearer tokens: who may see `private` records.
//!
//! Tokens come from a file, one per line (`#` starts a comment, blank lines are ignored,
//! surrounding whitespace is trimmed). The file is checked for changes (modification time and
//! size) at most once per [`RELOAD_CHECK`] and re-read when it changed, so tokens can be added
//! and revoked without a restart. A file that can no longer be read revokes every token until
//! it can (fail closed).
//!
//! Only SHA-256 digests of the tokens are kept, and a presented token is compared with every
//! one of them in constant time, so neither the comparison's duration nor its early exit tells
//! how much of a token was right.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use formats::Digest;
use indexer::Caller;

use crate::error::ApiError;
use crate::state::AppState;

/// How often the token file is checked for changes, at most.
pub const RELOAD_CHECK: Duration = Duration::from_secs(1);

/// The tokens that authenticate a caller. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Tokens {
    source: Arc<Source>,
}

#[derive(Debug)]
enum Source {
    /// No token is valid.
    None,
    /// A fixed list (tests and embedding).
    List(Vec<String>),
    /// A file, re-read when it changes.
    File {
        path: PathBuf,
        state: Mutex<FileState>,
    },
}

#[derive(Debug)]
struct FileState {
    digests: Vec<String>,
    /// Modification time and size when last read; `None` when it could not be read.
    stamp: Option<(SystemTime, u64)>,
    checked: Instant,
}

impl Default for Tokens {
    fn default() -> Tokens {
        Tokens::none()
    }
}

impl Tokens {
    /// Returns a set in which no token is valid: everybody is anonymous.
    pub fn none() -> Tokens {
        Tokens {
            source: Arc::new(Source::None),
        }
    }

    /// Returns a fixed set of tokens.
    pub fn from_list<I, T>(tokens: I) -> Tokens
    where
        I: IntoIterator<Item = T>,
        T: AsRef<str>,
    {
        let digests = tokens
            .into_iter()
            .filter(|token| !token.as_ref().is_empty())
            .map(|token| Digest::of(token.as_ref().as_bytes()).hex())
            .collect();
        Tokens {
            source: Arc::new(Source::List(digests)),
        }
    }

    /// Reads the tokens in `path` (see the module docs for the format); the file is re-read
    /// whenever it changes. Fails when the file cannot be read now.
    pub fn from_file(path: &Path) -> std::io::Result<Tokens> {
        let (digests, stamp) = read_file(path)?;
        if digests.is_empty() {
            tracing::warn!(file = %path.display(), "the token file holds no token");
        }
        Ok(Tokens {
            source: Arc::new(Source::File {
                path: path.to_owned(),
                state: Mutex::new(FileState {
                    digests,
                    stamp: Some(stamp),
                    checked: Instant::now(),
                }),
            }),
        })
    }

    /// Returns the tokens in a token file's text.
    pub fn parse(text: &str) -> Vec<&str> {
        text.lines()
            .map(|line| line.split('#').next().unwrap_or("").trim())
            .filter(|line| !line.is_empty())
            .collect()
    }

    /// Returns true when `presented` is one of the tokens.
    pub fn is_valid(&self, presented: &str) -> bool {
        if presented.is_empty() {
            return false;
        }
        let presented = Digest::of(presented.as_bytes()).hex();
        match &*self.source {
            Source::None => false,
            Source::List(digests) => contains(digests, &presented),
            Source::File { path, state } => {
                let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
                if state.checked.elapsed() >= RELOAD_CHECK {
                    state.checked = Instant::now();
                    reload_if_changed(path, &mut state);
                }
                contains(&state.digests, &presented)
            }
        }
    }

    /// Returns who a request is from, given its `Authorization` header: no header is
    /// anonymous; a valid bearer token is authenticated; anything else is an error (401).
    pub fn caller(&self, authorization: Option<&[u8]>) -> Result<Caller, ApiError> {
        let Some(raw) = authorization else {
            return Ok(Caller::Anonymous);
        };
        let Ok(value) = std::str::from_utf8(raw) else {
            return Err(ApiError::Unauthorized);
        };
        let value = value.trim();
        let Some((scheme, token)) = value.split_once(' ') else {
            return Err(ApiError::Unauthorized);
        };
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(ApiError::Unauthorized);
        }
        if self.is_valid(token.trim()) {
            Ok(Caller::Authenticated)
        } else {
            Err(ApiError::Unauthorized)
        }
    }
}

/// Compares `presented` with every digest, in time independent of where (or whether) it
/// matches.
fn contains(digests: &[String], presented: &str) -> bool {
    let mut found = 0u8;
    for digest in digests {
        let mut difference = 0u8;
        for (a, b) in digest.bytes().zip(presented.bytes()) {
            difference |= a ^ b;
        }
        found |= u8::from(difference == 0);
    }
    found == 1
}

fn read_file(path: &Path) -> std::io::Result<(Vec<String>, (SystemTime, u64))> {
    let metadata = std::fs::metadata(path)?;
    let stamp = (metadata.modified()?, metadata.len());
    let text = std::fs::read_to_string(path)?;
    let digests = Tokens::parse(&text)
        .into_iter()
        .map(|token| Digest::of(token.as_bytes()).hex())
        .collect();
    Ok((digests, stamp))
}

fn reload_if_changed(path: &Path, state: &mut FileState) {
    let current = std::fs::metadata(path).and_then(|m| Ok((m.modified()?, m.len())));
    if let (Ok(current), Some(stamp)) = (&current, state.stamp)
        && *current == stamp
    {
        return;
    }
    match read_file(path) {
        Ok((digests, stamp)) => {
            tracing::info!(file = %path.display(), tokens = digests.len(), "token file reloaded");
            state.digests = digests;
            state.stamp = Some(stamp);
        }
        Err(error) => {
            if state.stamp.is_some() {
                tracing::warn!(file = %path.display(), %error, "cannot read the token file; every token is refused until it can be read");
            }
            state.digests.clear();
            state.stamp = None;
        }
    }
}

/// Who the request is from: the extractor form of [`Tokens::caller`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Auth(pub(crate) Caller);

impl FromRequestParts<AppState> for Auth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Auth, ApiError> {
        let header = parts
            .headers
            .get(AUTHORIZATION)
            .map(|value| value.as_bytes());
        state.tokens().caller(header).map(Auth)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_file_format() {
        let text = "# operators\nalpha  \n\n  beta # the CI bot\n#gamma\n";
        assert_eq!(Tokens::parse(text), ["alpha", "beta"]);
    }

    #[test]
    fn bearer_headers() {
        let tokens = Tokens::from_list(["s3cret"]);
        assert_eq!(tokens.caller(None).unwrap(), Caller::Anonymous);
        assert_eq!(
            tokens.caller(Some(b"Bearer s3cret")).unwrap(),
            Caller::Authenticated
        );
        assert_eq!(
            tokens.caller(Some(b"bearer  s3cret ")).unwrap(),
            Caller::Authenticated
        );
        for bad in [
            &b"Bearer wrong"[..],
            b"Bearer ",
            b"Bearer",
            b"Basic czNjcmV0",
            b"s3cret",
            b"Bearer s3cret\xff",
        ] {
            assert!(tokens.caller(Some(bad)).is_err(), "{bad:?}");
        }
        assert!(Tokens::none().caller(Some(b"Bearer s3cret")).is_err());
    }

    #[test]
    fn the_file_is_reread_when_it_changes_and_revokes_when_unreadable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens");
        std::fs::write(&path, "first\n").unwrap();
        let tokens = Tokens::from_file(&path).unwrap();
        assert!(tokens.is_valid("first"));
        assert!(!tokens.is_valid("second"));

        std::fs::write(&path, "second\nthird\n").unwrap();
        let deadline = Instant::now() + RELOAD_CHECK * 5;
        while !tokens.is_valid("second") && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(tokens.is_valid("second"));
        assert!(tokens.is_valid("third"));
        assert!(!tokens.is_valid("first"));

        std::fs::remove_file(&path).unwrap();
        let deadline = Instant::now() + RELOAD_CHECK * 5;
        while tokens.is_valid("second") && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(!tokens.is_valid("second"));
    }
}
