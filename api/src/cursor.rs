//! Opaque pagination cursors.
//!
//! A cursor is the hex of `{kind}:{position}` followed by 12 hex characters of a checksum
//! (SHA-256 over a fixed label and the payload). It is not a secret and grants nothing: a
//! cursor only says where a listing resumes, and every page is filtered for the caller
//! anyway. The checksum makes a cursor that was typed, truncated or edited by hand a clear
//! 400 (`invalid_cursor`) instead of a silently different page, and cursors of one listing
//! cannot be used with another (`kind`).

use formats::Digest;

use crate::error::ApiError;

/// The longest cursor accepted, in characters.
pub(crate) const MAX_CURSOR_CHARS: usize = 1024;
/// Mixed into the checksum, so cursors of another program do not pass by accident.
const LABEL: &str = "skillscout-cursor-v1";
/// Hex characters of checksum appended to the payload.
const CHECK_CHARS: usize = 12;

/// Returns the cursor for resuming listing `kind` at `position`.
pub(crate) fn encode(kind: &str, position: &str) -> String {
    let payload = format!("{kind}:{position}");
    let mut cursor = hex(payload.as_bytes());
    cursor.push_str(&check(&payload));
    cursor
}

/// Returns the position in a cursor of listing `kind`.
pub(crate) fn decode(kind: &str, cursor: &str) -> Result<String, ApiError> {
    let invalid = |why: &str| ApiError::InvalidCursor(why.to_owned());
    if cursor.len() > MAX_CURSOR_CHARS || !cursor.is_ascii() {
        return Err(invalid("not a cursor issued by this server"));
    }
    if cursor.len() < CHECK_CHARS || !(cursor.len() - CHECK_CHARS).is_multiple_of(2) {
        return Err(invalid("not a cursor issued by this server"));
    }
    let (body, checksum) = cursor.split_at(cursor.len() - CHECK_CHARS);
    let payload = unhex(body)
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or_else(|| invalid("not a cursor issued by this server"))?;
    if check(&payload) != checksum {
        return Err(invalid("the cursor was altered"));
    }
    match payload.split_once(':') {
        Some((found, position)) if found == kind => Ok(position.to_owned()),
        _ => Err(invalid("the cursor belongs to another listing")),
    }
}

fn check(payload: &str) -> String {
    let mut hex = Digest::of(format!("{LABEL}\n{payload}").as_bytes()).hex();
    hex.truncate(CHECK_CHARS);
    hex
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    out
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    text.as_bytes()
        .chunks_exact(2)
        .map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_forgeries() {
        let cursor = encode("changes", "42");
        assert_eq!(decode("changes", &cursor).unwrap(), "42");
        assert!(decode("skills", &cursor).is_err(), "another listing");
        let forged = encode("changes", "43").replace(&check("changes:43"), &check("changes:42"));
        assert!(decode("changes", &forged).is_err());
        for bad in [
            "",
            "AAAA",
            "zz",
            "6368616e6765733a3432",
            &"a".repeat(5000),
            "é",
        ] {
            assert!(decode("changes", bad).is_err(), "{bad:?}");
        }
        let mut flipped = cursor.into_bytes();
        flipped[3] = if flipped[3] == b'0' { b'1' } else { b'0' };
        assert!(decode("changes", &String::from_utf8(flipped).unwrap()).is_err());
    }
}
