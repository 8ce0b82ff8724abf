//! Safe reading of `.tar.gz` and `.zip` skill archives.
//!
//! Agent-skills discovery v0.2 ("Archive Distribution", "Archive Safety") lets a publisher ship
//! a skill directory as one archive with `SKILL.md` at its root. Archives come from servers we
//! do not trust, so [`unpack`] reads them entirely in memory (nothing is written to disk and
//! nothing is executed) and refuses, as one [`Diagnostic`], any archive that:
//!
//! - names an entry with an absolute path or a `..` component ([`Code::PathTraversal`]);
//! - holds a symlink or hard link that leads outside the skill directory, or whose target
//!   cannot be checked without following another link ([`Code::UnsafeLink`]);
//! - holds a device, fifo, socket or other special file ([`Code::SpecialFile`]);
//! - has more than [`ArchiveLimits::max_entries`] entries ([`Code::TooManyEntries`]);
//! - unpacks to more than [`ArchiveLimits::max_unpacked_bytes`], counted on the bytes actually
//!   decompressed and never on declared sizes, so decompression bombs stop early
//!   ([`Code::TooLarge`]);
//! - is corrupt, ambiguous (two entries with one path) or not what it claims to be
//!   ([`Code::InvalidArchive`], [`Code::UnsupportedArchive`]);
//! - has no `SKILL.md` at its root ([`Code::SkillMdNotAtRoot`], [`Code::MissingSkillMd`]).
//!
//! Links that stay inside the skill are not materialised: they are skipped with an
//! informational [`Code::SkippedLink`] diagnostic.

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::error::Error as StdError;
use std::io::{self, Cursor, Read};

use flate2::bufread::MultiGzDecoder;
use tar::EntryType;
use zip::result::ZipError;
use zip::{CompressionMethod, ZipArchive};

use crate::diagnostic::{Code, Diagnostic};

/// The most entries an archive may hold, of any kind, directories and links included.
pub const MAX_ARCHIVE_ENTRIES: usize = 10_000;
/// The most bytes an archive may unpack to (docs/crawl.md: unpacked archive 64 MiB).
pub const MAX_UNPACKED_BYTES: u64 = 64 * 1024 * 1024;
/// The longest entry name or link target accepted, in bytes (Linux's `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;
/// The most decompressed bytes read for the headers of one tar entry: its header block,
/// GNU long names and pax records, and the padding left by the entry before it.
pub const MAX_TAR_HEADER_BYTES: u64 = 1024 * 1024;
/// The decompressed tar bytes allowed per permitted entry on top of file contents (header
/// blocks, padding, long names, pax records) when bounding the whole tar stream.
pub const TAR_OVERHEAD_PER_ENTRY: u64 = 4096;

/// The name every skill's main file has, at the root of the skill directory.
const SKILL_MD: &str = "SKILL.md";
/// The largest buffer reserved up front from a declared entry size, which is untrusted.
const MAX_PREALLOCATION: u64 = 1024 * 1024;

// Unix file type bits, as zip archives store them in the high half of the external attributes.
const S_IFMT: u32 = 0o170_000;
const S_IFIFO: u32 = 0o010_000;
const S_IFCHR: u32 = 0o020_000;
const S_IFDIR: u32 = 0o040_000;
const S_IFBLK: u32 = 0o060_000;
const S_IFREG: u32 = 0o100_000;
const S_IFLNK: u32 = 0o120_000;
const S_IFSOCK: u32 = 0o140_000;

/// How much an archive may hold before it is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchiveLimits {
    /// The most entries of any kind, directories and links included.
    pub max_entries: usize,
    /// The most bytes the entries may unpack to, in total.
    pub max_unpacked_bytes: u64,
}

impl Default for ArchiveLimits {
    fn default() -> Self {
        ArchiveLimits {
            max_entries: MAX_ARCHIVE_ENTRIES,
            max_unpacked_bytes: MAX_UNPACKED_BYTES,
        }
    }
}

/// The archive formats the specification requires clients to support.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveFormat {
    /// A gzip-compressed tar archive (`.tar.gz`, `.tgz`).
    TarGz,
    /// A zip archive (`.zip`).
    Zip,
}

impl ArchiveFormat {
    /// Returns the format of a fetched archive, or `None` when nothing identifies one.
    ///
    /// The `Content-Type` decides first when it names an archive type (`application/gzip`,
    /// `application/x-gzip`, `application/x-tar+gzip`, `application/x-gtar`,
    /// `application/x-compressed-tar`, `application/zip`, `application/x-zip-compressed`, ...;
    /// parameters such as `; charset=` and case are ignored). When it is absent or anything
    /// else, such as `application/octet-stream`, `binary/octet-stream` or `text/plain`, which
    /// servers commonly send for archives, the URL path's extension decides (`.tar.gz`,
    /// `.tgz`, `.zip`, any case), and then the magic bytes (`1f 8b` for gzip, `PK\x03\x04` or
    /// the empty zip's `PK\x05\x06`).
    pub fn detect(content_type: Option<&str>, url_path: &str, bytes: &[u8]) -> Option<Self> {
        content_type
            .and_then(ArchiveFormat::from_content_type)
            .or_else(|| ArchiveFormat::from_extension(url_path))
            .or_else(|| ArchiveFormat::from_magic(bytes))
    }

    /// Returns the usual file extension of the format, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            ArchiveFormat::TarGz => "tar.gz",
            ArchiveFormat::Zip => "zip",
        }
    }

    fn from_content_type(content_type: &str) -> Option<Self> {
        let media_type = content_type
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        match media_type.as_str() {
            "application/gzip"
            | "application/x-gzip"
            | "application/x-tar+gzip"
            | "application/tar+gzip"
            | "application/x-gtar"
            | "application/x-compressed-tar"
            | "application/x-tgz" => Some(ArchiveFormat::TarGz),
            "application/zip" | "application/x-zip-compressed" | "application/x-zip" => {
                Some(ArchiveFormat::Zip)
            }
            _ => None,
        }
    }

    fn from_extension(url_path: &str) -> Option<Self> {
        // Tolerate a caller that passes the query or fragment along with the path.
        let path = url_path.split(['?', '#']).next().unwrap_or_default();
        let path = path.to_ascii_lowercase();
        if path.ends_with(".tar.gz") || path.ends_with(".tgz") {
            Some(ArchiveFormat::TarGz)
        } else if path.ends_with(".zip") {
            Some(ArchiveFormat::Zip)
        } else {
            None
        }
    }

    fn from_magic(bytes: &[u8]) -> Option<Self> {
        if bytes.starts_with(&[0x1f, 0x8b]) {
            Some(ArchiveFormat::TarGz)
        } else if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
            Some(ArchiveFormat::Zip)
        } else {
            None
        }
    }
}

/// One regular file read from an archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveFile {
    /// Path relative to the skill root, `/`-separated, without a leading `./`.
    pub path: String,
    /// The file's bytes.
    pub bytes: Vec<u8>,
}

/// The regular files of an archive that passed every safety check.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Unpacked {
    /// The files, sorted by path. Directories and links are not listed.
    pub files: Vec<ArchiveFile>,
    /// Notes that did not stop the archive from being used, such as skipped links.
    pub diagnostics: Vec<Diagnostic>,
}

impl Unpacked {
    /// Returns the `SKILL.md` at the root of the archive.
    pub fn skill_md(&self) -> Option<&ArchiveFile> {
        self.file(SKILL_MD)
    }

    /// Returns the file at `path`, relative to the skill root.
    pub fn file(&self, path: &str) -> Option<&ArchiveFile> {
        self.files.iter().find(|file| file.path == path)
    }
}

/// Reads every regular file of an archive, after checking it is safe to use.
///
/// Whole-archive failures are an `Err(Diagnostic)`; the archive is then not used at all.
/// Diagnostics about one entry carry the entry's name as their field.
pub fn unpack(
    bytes: &[u8],
    format: ArchiveFormat,
    limits: &ArchiveLimits,
) -> Result<Unpacked, Diagnostic> {
    match format {
        ArchiveFormat::TarGz => unpack_tar_gz(bytes, limits),
        ArchiveFormat::Zip => unpack_zip(bytes, limits),
    }
}

// ----------------------------------------------------------------------------------------------
// tar.gz

fn unpack_tar_gz(bytes: &[u8], limits: &ArchiveLimits) -> Result<Unpacked, Diagnostic> {
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Err(Diagnostic::new(
            Code::InvalidArchive,
            "the archive is not gzip data: it does not start with the gzip magic bytes 1f 8b",
        ));
    }
    let meter = Meter::new(tar_stream_budget(limits));
    let stream = Metered {
        inner: MultiGzDecoder::new(bytes),
        meter: &meter,
    };
    let mut archive = tar::Archive::new(stream);
    let mut collector = Collector::new(limits);
    let result = read_tar_entries(&mut archive, &meter, &mut collector)
        .and_then(|()| check_tar_trailer(archive.into_inner(), &meter));
    if let Err(diagnostic) = result {
        // A stream cut short by the meter surfaces as whatever read error the tar or gzip
        // reader made of it; the limit is the real reason.
        return Err(meter.overrun_diagnostic().unwrap_or(diagnostic));
    }
    collector.finish()
}

/// Bounds the whole decompressed tar stream: file contents plus a generous allowance per entry
/// for headers and padding, plus room for the end-of-archive record.
fn tar_stream_budget(limits: &ArchiveLimits) -> u64 {
    let entries = u64::try_from(limits.max_entries).unwrap_or(u64::MAX);
    limits
        .max_unpacked_bytes
        .saturating_add(
            entries
                .saturating_add(1)
                .saturating_mul(TAR_OVERHEAD_PER_ENTRY),
        )
        .saturating_add(MAX_TAR_HEADER_BYTES)
}

fn read_tar_entries<R: Read>(
    archive: &mut tar::Archive<R>,
    meter: &Meter,
    collector: &mut Collector<'_>,
) -> Result<(), Diagnostic> {
    let mut entries = archive.entries().map_err(|error| tar_error(&error))?;
    loop {
        // The tar reader consumes long names and pax records (which it reads whole into
        // memory) inside `next`, so that is where the header window applies.
        meter.expect_headers();
        let Some(next) = entries.next() else {
            return Ok(());
        };
        let mut entry = next.map_err(|error| tar_error(&error))?;
        meter.expect_content();
        collector.count_entry()?;

        let entry_type = entry.header().entry_type();
        let raw_path = entry.path_bytes().into_owned();
        match entry_type {
            // Pre-POSIX archives mark directories as regular files whose name ends in `/`.
            EntryType::Regular if raw_path.ends_with(b"/") => {
                entry_path(&raw_path, true)?;
                collector.skip_data(&mut entry)?;
            }
            EntryType::Regular | EntryType::Continuous | EntryType::GNUSparse => {
                let path = entry_path(&raw_path, false)?;
                let declared_size = entry.size();
                collector.add_file(path, declared_size, &mut entry)?;
            }
            EntryType::Directory => {
                entry_path(&raw_path, true)?;
                collector.skip_data(&mut entry)?;
            }
            EntryType::Symlink | EntryType::Link => {
                let path = entry_path(&raw_path, false)?;
                let kind = if entry_type == EntryType::Symlink {
                    LinkKind::Symbolic
                } else {
                    LinkKind::Hard
                };
                let target = entry.link_name_bytes().map(Cow::into_owned);
                collector.add_link(kind, path, target.as_deref())?;
                collector.skip_data(&mut entry)?;
            }
            // Global pax headers (`git archive` writes one with the commit id) describe the
            // archive, not a file.
            EntryType::XGlobalHeader => collector.skip_data(&mut entry)?,
            other => {
                let path = entry_path(&raw_path, false)?;
                return Err(special_file(&path, &tar_type_name(other)));
            }
        }
    }
}

/// Returns what a tar entry type is, for messages.
fn tar_type_name(entry_type: EntryType) -> String {
    match entry_type {
        EntryType::Char => "character device".to_owned(),
        EntryType::Block => "block device".to_owned(),
        EntryType::Fifo => "fifo".to_owned(),
        other => format!(
            "tar entry of type {:?}, which is not a file, directory or link",
            char::from(other.as_byte())
        ),
    }
}

/// Checks what follows the end-of-archive marker: only zero padding may, and the gzip stream
/// must end cleanly (complete, checksums right, no trailing garbage).
fn check_tar_trailer<R: Read>(mut stream: R, meter: &Meter) -> Result<(), Diagnostic> {
    meter.expect_content();
    let mut buffer = [0u8; 8192];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return Ok(()),
            Ok(read) => {
                if buffer[..read].iter().any(|byte| *byte != 0) {
                    return Err(Diagnostic::new(
                        Code::InvalidArchive,
                        "the tar archive has data after its end-of-archive marker",
                    ));
                }
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(tar_error(&error)),
        }
    }
}

fn tar_error(error: &io::Error) -> Diagnostic {
    Diagnostic::new(
        Code::InvalidArchive,
        format!("cannot read the tar.gz archive: {}", reason(error)),
    )
}

/// Counts the decompressed bytes of a tar stream against two budgets: the whole stream, and a
/// window for the headers of the entry being read.
struct Meter {
    stream_budget: u64,
    stream_left: Cell<u64>,
    window_left: Cell<u64>,
    overrun: Cell<Option<Overrun>>,
}

/// Which budget a stream ran over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Overrun {
    Stream,
    Headers,
}

impl Meter {
    fn new(stream_budget: u64) -> Meter {
        Meter {
            stream_budget,
            stream_left: Cell::new(stream_budget),
            window_left: Cell::new(u64::MAX),
            overrun: Cell::new(None),
        }
    }

    /// Starts the window for one entry's headers.
    fn expect_headers(&self) {
        self.window_left.set(MAX_TAR_HEADER_BYTES);
    }

    /// Lifts the header window: contents are bounded by the unpacked-size budget instead.
    fn expect_content(&self) {
        self.window_left.set(u64::MAX);
    }

    fn overrun_diagnostic(&self) -> Option<Diagnostic> {
        let message = match self.overrun.get()? {
            Overrun::Stream => format!(
                "the decompressed tar stream is larger than {} bytes (file contents plus headers)",
                self.stream_budget
            ),
            Overrun::Headers => format!(
                "the headers of one tar entry (long names, pax records) exceed \
                 {MAX_TAR_HEADER_BYTES} bytes"
            ),
        };
        Some(Diagnostic::new(Code::TooLarge, message))
    }
}

/// A reader that stops, with an error, where its [`Meter`] says the budget ends.
struct Metered<'m, R> {
    inner: R,
    meter: &'m Meter,
}

impl<R: Read> Read for Metered<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let stream_left = self.meter.stream_left.get();
        let window_left = self.meter.window_left.get();
        let allowed = stream_left.min(window_left);
        if allowed == 0 {
            // Probe one byte to tell a stream that ends exactly at the limit from one that
            // goes on past it.
            let mut probe = [0u8; 1];
            if self.inner.read(&mut probe)? == 0 {
                return Ok(0);
            }
            let overrun = if stream_left == 0 {
                Overrun::Stream
            } else {
                Overrun::Headers
            };
            self.meter.overrun.set(Some(overrun));
            return Err(io::Error::other("decompressed data is over the size limit"));
        }
        let len = usize::try_from(allowed).map_or(buf.len(), |allowed| allowed.min(buf.len()));
        let read = self.inner.read(&mut buf[..len])?;
        let read_u64 = len_u64(read);
        self.meter
            .stream_left
            .set(stream_left.saturating_sub(read_u64));
        self.meter
            .window_left
            .set(window_left.saturating_sub(read_u64));
        Ok(read)
    }
}

// ----------------------------------------------------------------------------------------------
// zip

fn unpack_zip(bytes: &[u8], limits: &ArchiveLimits) -> Result<Unpacked, Diagnostic> {
    // The zip reader parses the whole central directory up front; its size is bounded by the
    // archive's, and no entry is decompressed before the entry count is checked below.
    let mut archive = ZipArchive::new(Cursor::new(bytes))
        .map_err(|error| zip_error("cannot read the zip archive", &error))?;
    if archive.has_duplicate_names() {
        return Err(Diagnostic::new(
            Code::InvalidArchive,
            "the zip archive lists the same entry name more than once, so it is ambiguous \
             which copy is meant",
        ));
    }
    if archive.len() > limits.max_entries {
        return Err(too_many_entries(limits));
    }
    let mut collector = Collector::new(limits);
    for index in 0..archive.len() {
        collector.count_entry()?;
        let (raw_name, kind, encrypted, method, declared_size) = {
            let entry = archive
                .by_index_data(index)
                .map_err(|error| zip_error("cannot read the zip archive", &error))?;
            (
                entry.name_raw().to_vec(),
                zip_entry_kind(entry.unix_mode(), entry.is_dir()),
                entry.encrypted(),
                entry.compression(),
                entry.size(),
            )
        };
        let path = entry_path(&raw_name, kind == ZipKind::Directory)?;
        match kind {
            ZipKind::Directory => continue,
            ZipKind::Special(what) => return Err(special_file(&path, what)),
            ZipKind::File | ZipKind::Symlink => {}
        }
        if encrypted {
            return Err(Diagnostic::new(
                Code::InvalidArchive,
                format!("archive entry {path:?} is encrypted; publish it without a password"),
            )
            .at(path));
        }
        if !matches!(
            method,
            CompressionMethod::Stored | CompressionMethod::Deflated
        ) {
            return Err(Diagnostic::new(
                Code::UnsupportedArchive,
                format!(
                    "archive entry {path:?} uses the {method} compression method; \
                     only stored and deflate are supported"
                ),
            )
            .at(path));
        }
        let mut file = archive
            .by_index(index)
            .map_err(|error| zip_error(&format!("cannot read archive entry {path:?}"), &error))?;
        if kind == ZipKind::Symlink {
            // A zip symlink's content is its target.
            let mut target = Vec::new();
            (&mut file)
                .take(len_u64(MAX_PATH_BYTES) + 1)
                .read_to_end(&mut target)
                .map_err(|error| read_error(&path, &error))?;
            collector.add_link(LinkKind::Symbolic, path, Some(&target))?;
        } else {
            collector.add_file(path, declared_size, &mut file)?;
        }
    }
    collector.finish()
}

/// What a zip entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ZipKind {
    File,
    Directory,
    Symlink,
    Special(&'static str),
}

/// Classifies a zip entry by the Unix file type in its external attributes, when it has one,
/// and otherwise by its name (a trailing `/` marks a directory).
fn zip_entry_kind(unix_mode: Option<u32>, name_is_dir: bool) -> ZipKind {
    match unix_mode.map(|mode| mode & S_IFMT) {
        Some(S_IFLNK) => ZipKind::Symlink,
        Some(S_IFDIR) => ZipKind::Directory,
        Some(S_IFIFO) => ZipKind::Special("fifo"),
        Some(S_IFCHR) => ZipKind::Special("character device"),
        Some(S_IFBLK) => ZipKind::Special("block device"),
        Some(S_IFSOCK) => ZipKind::Special("socket"),
        Some(0 | S_IFREG) | None if name_is_dir => ZipKind::Directory,
        Some(0 | S_IFREG) | None => ZipKind::File,
        Some(_) => ZipKind::Special("special file of an unknown type"),
    }
}

fn zip_error(context: &str, error: &ZipError) -> Diagnostic {
    let code = match error {
        ZipError::UnsupportedArchive(_) | ZipError::CompressionMethodNotSupported(_) => {
            Code::UnsupportedArchive
        }
        _ => Code::InvalidArchive,
    };
    Diagnostic::new(code, format!("{context}: {}", reason(error)))
}

// ----------------------------------------------------------------------------------------------
// Entries, whatever the format

/// Whether a link is symbolic (its target is relative to the link's directory) or hard (its
/// target is another entry, relative to the archive root).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LinkKind {
    Symbolic,
    Hard,
}

impl LinkKind {
    fn as_str(self) -> &'static str {
        match self {
            LinkKind::Symbolic => "symlink",
            LinkKind::Hard => "hard link",
        }
    }
}

/// A link entry, kept until the whole archive is known so that it can be checked against the
/// other links.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Link {
    kind: LinkKind,
    path: String,
    target: String,
}

/// Gathers the entries of one archive and enforces the limits while they are read.
struct Collector<'l> {
    limits: &'l ArchiveLimits,
    entries: usize,
    unpacked_bytes: u64,
    paths: HashSet<String>,
    files: Vec<ArchiveFile>,
    links: Vec<Link>,
}

impl<'l> Collector<'l> {
    fn new(limits: &'l ArchiveLimits) -> Collector<'l> {
        Collector {
            limits,
            entries: 0,
            unpacked_bytes: 0,
            paths: HashSet::new(),
            files: Vec::new(),
            links: Vec::new(),
        }
    }

    fn count_entry(&mut self) -> Result<(), Diagnostic> {
        self.entries += 1;
        if self.entries > self.limits.max_entries {
            return Err(too_many_entries(self.limits));
        }
        Ok(())
    }

    /// Records that `path` names a file or link, refusing a second entry with the same path.
    fn claim(&mut self, path: &str) -> Result<(), Diagnostic> {
        if !self.paths.insert(path.to_owned()) {
            return Err(Diagnostic::new(
                Code::InvalidArchive,
                format!(
                    "the archive holds {path:?} more than once, so it is ambiguous which copy \
                     is meant"
                ),
            )
            .at(path));
        }
        Ok(())
    }

    fn unpacked_bytes_left(&self) -> u64 {
        self.limits
            .max_unpacked_bytes
            .saturating_sub(self.unpacked_bytes)
    }

    fn add_file(
        &mut self,
        path: String,
        declared_size: u64,
        reader: impl Read,
    ) -> Result<(), Diagnostic> {
        self.claim(&path)?;
        let left = self.unpacked_bytes_left();
        // The declared size is only a hint: the bytes actually read are what count.
        let capacity = declared_size.min(left).min(MAX_PREALLOCATION);
        let mut bytes = Vec::with_capacity(usize::try_from(capacity).unwrap_or(0));
        reader
            .take(left.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|error| read_error(&path, &error))?;
        let read = len_u64(bytes.len());
        if read > left {
            return Err(self.too_large());
        }
        self.unpacked_bytes += read;
        bytes.shrink_to_fit();
        self.files.push(ArchiveFile { path, bytes });
        Ok(())
    }

    /// Reads and discards the data of an entry that is not kept, counting it like contents
    /// so that a directory or link with a huge body cannot dodge the limit.
    fn skip_data(&mut self, reader: impl Read) -> Result<(), Diagnostic> {
        let left = self.unpacked_bytes_left();
        let skipped = io::copy(&mut reader.take(left.saturating_add(1)), &mut io::sink())
            .map_err(|error| tar_error(&error))?;
        if skipped > left {
            return Err(self.too_large());
        }
        self.unpacked_bytes += skipped;
        Ok(())
    }

    fn add_link(
        &mut self,
        kind: LinkKind,
        path: String,
        raw_target: Option<&[u8]>,
    ) -> Result<(), Diagnostic> {
        self.claim(&path)?;
        let what = kind.as_str();
        let invalid = |problem: &str| {
            Diagnostic::new(Code::InvalidArchive, format!("{what} {path:?} {problem}"))
                .at(path.as_str())
        };
        let raw_target = raw_target.unwrap_or_default();
        if raw_target.is_empty() {
            return Err(invalid("has no target"));
        }
        if raw_target.len() > MAX_PATH_BYTES {
            return Err(invalid(&format!(
                "has a target longer than {MAX_PATH_BYTES} bytes"
            )));
        }
        let Ok(target) = std::str::from_utf8(raw_target) else {
            return Err(invalid(&format!(
                "has a target that is not valid UTF-8: {:?}",
                String::from_utf8_lossy(raw_target)
            )));
        };
        if target.contains('\0') {
            return Err(invalid("has a target that contains a NUL byte"));
        }
        let link = Link {
            kind,
            path,
            target: target.to_owned(),
        };
        // Fail fast on a link that escapes on its own; links that go through other links are
        // only known once the whole archive is read, in `finish`.
        check_link(&link, &LinkTree::default())?;
        self.links.push(link);
        Ok(())
    }

    fn too_large(&self) -> Diagnostic {
        Diagnostic::new(
            Code::TooLarge,
            format!(
                "the archive unpacks to more than {} bytes",
                self.limits.max_unpacked_bytes
            ),
        )
    }

    /// Runs the checks that need every entry, and returns the files.
    fn finish(self) -> Result<Unpacked, Diagnostic> {
        let Collector {
            mut files,
            mut links,
            ..
        } = self;
        files.sort_by(|left, right| left.path.cmp(&right.path));
        links.sort_by(|left, right| left.path.cmp(&right.path));
        check_nesting(&files, &links)?;
        let tree = LinkTree::new(&links);
        for link in &links {
            check_link(link, &tree)?;
        }
        check_skill_md(&files, &links)?;
        let mut diagnostics = Vec::new();
        for link in &links {
            diagnostics.push(
                Diagnostic::new(
                    Code::SkippedLink,
                    format!(
                        "skipped {} {:?} -> {:?}; links are not followed",
                        link.kind.as_str(),
                        link.path,
                        link.target
                    ),
                )
                .at(link.path.as_str()),
            );
        }
        Ok(Unpacked { files, diagnostics })
    }
}

/// Returns the normalised path of an entry: a leading `./` stripped (and, for a directory, the
/// trailing `/`), nothing else collapsed. Directories may normalise to `""`, the root.
fn entry_path(raw: &[u8], is_dir: bool) -> Result<String, Diagnostic> {
    let Ok(name) = std::str::from_utf8(raw) else {
        let shown = String::from_utf8_lossy(raw);
        return Err(Diagnostic::new(
            Code::InvalidArchive,
            format!("archive entry name {shown:?} is not valid UTF-8"),
        )
        .at(shown));
    };
    let invalid = |problem: &str| {
        Diagnostic::new(
            Code::InvalidArchive,
            format!("archive entry {name:?} {problem}"),
        )
        .at(name)
    };
    if name.len() > MAX_PATH_BYTES {
        let start: String = name.chars().take(64).collect();
        return Err(Diagnostic::new(
            Code::InvalidArchive,
            format!("archive entry {start:?}... has a name longer than {MAX_PATH_BYTES} bytes"),
        )
        .at(start));
    }
    if name.contains('\0') {
        return Err(invalid("has a NUL byte in its name"));
    }
    let mut path = name;
    while let Some(rest) = path.strip_prefix("./") {
        path = rest;
    }
    if is_absolute(path) {
        return Err(Diagnostic::new(
            Code::PathTraversal,
            format!("archive entry {name:?} is an absolute path"),
        )
        .at(name));
    }
    if components(path).any(|component| component == "..") {
        return Err(Diagnostic::new(
            Code::PathTraversal,
            format!("archive entry {name:?} has a \"..\" component"),
        )
        .at(name));
    }
    if is_dir {
        path = path.trim_end_matches(['/', '\\']);
        if path == "." {
            path = "";
        }
        if path.is_empty() {
            return Ok(String::new());
        }
    }
    if path.is_empty() {
        return Err(invalid("has an empty path"));
    }
    if components(path).any(|component| component.is_empty() || component == ".") {
        return Err(invalid("has an empty or \".\" path component"));
    }
    Ok(path.to_owned())
}

/// Returns true for `/x`, `\x` and Windows drive forms such as `C:\x` or `C:x`.
fn is_absolute(path: &str) -> bool {
    match path.as_bytes() {
        [b'/' | b'\\', ..] => true,
        [drive, b':', ..] => drive.is_ascii_alphabetic(),
        _ => false,
    }
}

/// Splits a path on `/` and, since Windows tools extract it as one, on `\`.
fn components(path: &str) -> std::str::Split<'_, [char; 2]> {
    path.split(['/', '\\'])
}

/// Refuses an entry stored inside another file or link, such as `a/b` next to a file or link
/// `a`: extracting it would write through the link, or cannot be done at all.
fn check_nesting(files: &[ArchiveFile], links: &[Link]) -> Result<(), Diagnostic> {
    let mut entries: Vec<(Vec<&str>, &str, bool)> = Vec::with_capacity(files.len() + links.len());
    for file in files {
        entries.push((components(&file.path).collect(), &file.path, false));
    }
    for link in links {
        entries.push((components(&link.path).collect(), &link.path, true));
    }
    // In component order, whatever lies inside an entry comes right after it.
    entries.sort();
    for pair in entries.windows(2) {
        let [(outer, outer_path, outer_is_link), (inner, inner_path, _)] = pair else {
            continue;
        };
        if !inner.starts_with(outer) {
            continue;
        }
        if inner.len() == outer.len() {
            return Err(Diagnostic::new(
                Code::InvalidArchive,
                format!(
                    "archive entries {outer_path:?} and {inner_path:?} name the same file, so it \
                     is ambiguous which one is meant"
                ),
            )
            .at(*inner_path));
        }
        if *outer_is_link {
            return Err(Diagnostic::new(
                Code::UnsafeLink,
                format!("archive entry {inner_path:?} is inside {outer_path:?}, which is a link"),
            )
            .at(*inner_path));
        }
        return Err(Diagnostic::new(
            Code::InvalidArchive,
            format!("archive entry {inner_path:?} is inside {outer_path:?}, which is a file"),
        )
        .at(*inner_path));
    }
    Ok(())
}

/// The paths of an archive's links, as a tree, so that a link target can be walked one
/// component at a time and checked for other links on its way.
struct LinkTree {
    nodes: Vec<LinkNode>,
}

#[derive(Default)]
struct LinkNode {
    children: HashMap<String, usize>,
    link: Option<LinkKind>,
}

impl Default for LinkTree {
    /// Returns a tree with only the root: no links.
    fn default() -> Self {
        LinkTree {
            nodes: vec![LinkNode::default()],
        }
    }
}

impl LinkTree {
    const ROOT: usize = 0;

    fn new(links: &[Link]) -> LinkTree {
        let mut tree = LinkTree::default();
        for link in links {
            let mut node = LinkTree::ROOT;
            for component in components(&link.path) {
                let next_index = tree.nodes.len();
                let child = *tree.nodes[node]
                    .children
                    .entry(component.to_owned())
                    .or_insert(next_index);
                if child == next_index {
                    tree.nodes.push(LinkNode::default());
                }
                node = child;
            }
            tree.nodes[node].link = Some(link.kind);
        }
        tree
    }

    fn child(&self, node: Option<usize>, name: &str) -> Option<usize> {
        self.nodes.get(node?)?.children.get(name).copied()
    }

    fn link(&self, node: Option<usize>) -> Option<LinkKind> {
        self.nodes.get(node?)?.link
    }
}

/// Why a link is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
enum LinkProblem {
    Absolute,
    Escapes,
    /// The target goes through this symlink, so where it leads depends on that link.
    Through(String),
    /// A hard link to this link: extracting it copies the link, whose target then means
    /// something else in its new directory.
    ToLink(String),
}

/// Checks that a link's target stays inside the skill directory, walking it one component at
/// a time from the link's directory (a symlink) or the root (a hard link). The link's own
/// directories hold no links, which [`check_nesting`] ensures, so only the target's
/// components can meet one.
fn check_link(link: &Link, tree: &LinkTree) -> Result<(), Diagnostic> {
    let Err(problem) = walk_link(link, tree) else {
        return Ok(());
    };
    let Link { kind, path, target } = link;
    let what = kind.as_str();
    let message = match problem {
        LinkProblem::Absolute => format!("{what} {path:?} points to the absolute path {target:?}"),
        LinkProblem::Escapes => {
            format!("{what} {path:?} points to {target:?}, outside the skill directory")
        }
        LinkProblem::Through(via) => format!(
            "{what} {path:?} points to {target:?}, which goes through the link {via:?}, so \
             where it leads cannot be checked"
        ),
        LinkProblem::ToLink(other) => {
            format!("{what} {path:?} points to {other:?}, which is itself a link")
        }
    };
    Err(Diagnostic::new(Code::UnsafeLink, message).at(path.as_str()))
}

fn walk_link(link: &Link, tree: &LinkTree) -> Result<(), LinkProblem> {
    if is_absolute(&link.target) {
        return Err(LinkProblem::Absolute);
    }
    let mut names: Vec<&str> = Vec::new();
    let mut nodes: Vec<Option<usize>> = vec![Some(LinkTree::ROOT)];
    if link.kind == LinkKind::Symbolic {
        let mut directory: Vec<&str> = components(&link.path).collect();
        directory.pop();
        for name in directory {
            let node = tree.child(nodes.last().copied().flatten(), name);
            names.push(name);
            nodes.push(node);
        }
    }
    let parts: Vec<&str> = components(&link.target)
        .filter(|part| !part.is_empty() && *part != ".")
        .collect();
    for (index, part) in parts.iter().enumerate() {
        if *part == ".." {
            if names.pop().is_none() {
                return Err(LinkProblem::Escapes);
            }
            nodes.pop();
            continue;
        }
        let node = tree.child(nodes.last().copied().flatten(), part);
        names.push(part);
        nodes.push(node);
        let is_last = index + 1 == parts.len();
        match tree.link(node) {
            Some(LinkKind::Symbolic) if !is_last => {
                return Err(LinkProblem::Through(names.join("/")));
            }
            Some(_) if is_last && link.kind == LinkKind::Hard => {
                return Err(LinkProblem::ToLink(names.join("/")));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Requires `SKILL.md` at the root, and says where it is when it is somewhere else.
fn check_skill_md(files: &[ArchiveFile], links: &[Link]) -> Result<(), Diagnostic> {
    if files.iter().any(|file| file.path == SKILL_MD) {
        return Ok(());
    }
    if let Some(link) = links.iter().find(|link| link.path == SKILL_MD) {
        return Err(Diagnostic::new(
            Code::MissingSkillMd,
            format!(
                "SKILL.md at the archive root is a {} to {:?}; links are not followed, so ship \
                 the file itself",
                link.kind.as_str(),
                link.target
            ),
        )
        .at(SKILL_MD));
    }
    let nested = files
        .iter()
        .filter(|file| components(&file.path).next_back() == Some(SKILL_MD))
        .min_by_key(|file| components(&file.path).count());
    if let Some(nested) = nested {
        return Err(Diagnostic::new(
            Code::SkillMdNotAtRoot,
            format!(
                "SKILL.md is not at the archive root but at {:?}; put the skill's files at the \
                 root of the archive, not inside a wrapper folder",
                nested.path
            ),
        )
        .at(nested.path.as_str()));
    }
    if let Some(other_case) = files
        .iter()
        .find(|file| file.path.eq_ignore_ascii_case(SKILL_MD))
    {
        return Err(Diagnostic::new(
            Code::MissingSkillMd,
            format!(
                "the archive has {:?} at its root but no SKILL.md; the name is case-sensitive",
                other_case.path
            ),
        )
        .at(other_case.path.as_str()));
    }
    Err(Diagnostic::new(
        Code::MissingSkillMd,
        "the archive has no SKILL.md at its root",
    ))
}

fn special_file(path: &str, what: &str) -> Diagnostic {
    Diagnostic::new(
        Code::SpecialFile,
        format!("archive entry {path:?} is a {what}"),
    )
    .at(path)
}

fn too_many_entries(limits: &ArchiveLimits) -> Diagnostic {
    Diagnostic::new(
        Code::TooManyEntries,
        format!(
            "the archive has more than {} entries (directories and links count too)",
            limits.max_entries
        ),
    )
}

fn read_error(path: &str, error: &io::Error) -> Diagnostic {
    Diagnostic::new(
        Code::InvalidArchive,
        format!("cannot read archive entry {path:?}: {}", reason(error)),
    )
    .at(path)
}

/// Returns an error and its sources as one line, each part starting lowercase, skipping a
/// source whose text its parent already shows.
fn reason(error: &(dyn StdError + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current = Some(error);
    while let Some(error) = current {
        let text = error
            .to_string()
            .split(": ")
            .map(lowercase_first)
            .collect::<Vec<_>>()
            .join(": ");
        let shown = parts.last().is_some_and(|last| last.contains(&text));
        if !text.is_empty() && !shown {
            parts.push(text);
        }
        current = error.source();
    }
    parts.join(": ")
}

/// Lowercases the first letter of a message from a dependency, unless it starts an acronym.
fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (Some(first), second)
            if first.is_uppercase() && !second.is_some_and(char::is_uppercase) =>
        {
            first
                .to_lowercase()
                .chain(text[first.len_utf8()..].chars())
                .collect()
        }
        _ => text.to_owned(),
    }
}

fn len_u64(len: usize) -> u64 {
    u64::try_from(len).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::io::Write;
    use std::path::Path;

    use flate2::Compression;
    use flate2::write::GzEncoder;
    use proptest::prelude::*;
    use zip::ZipWriter;
    use zip::write::SimpleFileOptions;

    use super::*;
    use crate::skill::Digest;

    const SKILL: &str = "---\nname: demo\ndescription: A demo skill.\n---\n# Demo\n";
    /// A path too long for a tar header's 100-byte name field.
    const LONG_PATH: &str = "references/0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789.md";

    // ------------------------------------------------------------------------------------------
    // Builders. Names and link targets are written as given, unchecked, so that hostile
    // archives can be built.

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
        encoder.write_all(data).unwrap();
        encoder.finish().unwrap()
    }

    /// One raw tar entry.
    #[derive(Debug, Clone)]
    struct Raw {
        name: Vec<u8>,
        kind: u8,
        link: Vec<u8>,
        data: Vec<u8>,
    }

    fn raw(name: &[u8], kind: u8, link: &[u8], data: &[u8]) -> Raw {
        Raw {
            name: name.to_vec(),
            kind,
            link: link.to_vec(),
            data: data.to_vec(),
        }
    }

    fn file(name: &str, data: &str) -> Raw {
        raw(name.as_bytes(), b'0', b"", data.as_bytes())
    }

    fn skill() -> Raw {
        file("SKILL.md", SKILL)
    }

    fn dir(name: &str) -> Raw {
        raw(name.as_bytes(), b'5', b"", b"")
    }

    fn symlink(name: &str, target: &str) -> Raw {
        raw(name.as_bytes(), b'2', target.as_bytes(), b"")
    }

    fn hardlink(name: &str, target: &str) -> Raw {
        raw(name.as_bytes(), b'1', target.as_bytes(), b"")
    }

    fn typed(name: &str, kind: u8) -> Raw {
        raw(name.as_bytes(), kind, b"", b"")
    }

    /// Returns pax extended header records: `"<len> <key>=<value>\n"`, where the length
    /// counts the whole record, itself included.
    fn pax_records(records: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        for (key, value) in records {
            let body_len = key.len() + value.len() + 3; // space, '=', newline
            let mut len = body_len + 1;
            while len != body_len + len.to_string().len() {
                len = body_len + len.to_string().len();
            }
            out.extend_from_slice(format!("{len} {key}=").as_bytes());
            out.extend_from_slice(value);
            out.push(b'\n');
        }
        out
    }

    fn pax(records: &[(&str, &[u8])]) -> Raw {
        raw(b"PaxHeaders/x", b'x', b"", &pax_records(records))
    }

    fn tar_header(name: &[u8], kind: u8, link: &[u8], size: u64) -> tar::Header {
        let mut header = tar::Header::new_gnu();
        {
            let old = header.as_old_mut();
            old.name[..name.len()].copy_from_slice(name);
            old.linkname[..link.len()].copy_from_slice(link);
        }
        header.set_mode(0o644);
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(0);
        header.set_size(size);
        header.set_entry_type(EntryType::new(kind));
        header.set_cksum();
        header
    }

    fn append(out: &mut Vec<u8>, header: &tar::Header, data: &[u8]) {
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out.resize(out.len().next_multiple_of(512), 0);
    }

    /// Returns an uncompressed tar with GNU headers, using GNU long-name entries for names
    /// over 100 bytes, and the end-of-archive marker.
    fn raw_tar(entries: &[Raw]) -> Vec<u8> {
        let mut out = Vec::new();
        for entry in entries {
            let mut name = entry.name.as_slice();
            if name.len() > 100 {
                let mut long = name.to_vec();
                long.push(0);
                append(
                    &mut out,
                    &tar_header(b"././@LongLink", b'L', b"", len_u64(long.len())),
                    &long,
                );
                name = &name[..100];
            }
            let header = tar_header(name, entry.kind, &entry.link, len_u64(entry.data.len()));
            append(&mut out, &header, &entry.data);
        }
        out.extend_from_slice(&[0; 1024]);
        out
    }

    fn tar_gz(entries: &[Raw]) -> Vec<u8> {
        gzip(&raw_tar(entries))
    }

    /// One zip entry.
    #[derive(Debug, Clone, Copy)]
    enum Z {
        Stored(&'static str, &'static str),
        Deflated(&'static str, &'static str),
        Dir(&'static str),
        Symlink(&'static str, &'static str),
        /// A file with this Unix mode, file type bits included.
        Mode(&'static str, u32),
    }

    fn zip_of(items: &[Z]) -> Vec<u8> {
        let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
        let stored = SimpleFileOptions::default().compression_method(CompressionMethod::Stored);
        for item in items {
            match *item {
                Z::Stored(name, data) => {
                    writer.start_file(name, stored).unwrap();
                    writer.write_all(data.as_bytes()).unwrap();
                }
                Z::Deflated(name, data) => {
                    let deflated = stored.compression_method(CompressionMethod::Deflated);
                    writer.start_file(name, deflated).unwrap();
                    writer.write_all(data.as_bytes()).unwrap();
                }
                Z::Dir(name) => writer.add_directory(name, stored).unwrap(),
                Z::Symlink(name, target) => writer.add_symlink(name, target, stored).unwrap(),
                Z::Mode(name, mode) => {
                    writer
                        .start_file(name, stored.external_attributes(mode << 16))
                        .unwrap();
                    writer.write_all(b"x").unwrap();
                }
            }
        }
        writer.finish().unwrap().into_inner()
    }

    /// Replaces every occurrence of `from` by `to`, which has the same length.
    fn replace_all(bytes: &mut [u8], from: &[u8], to: &[u8]) {
        assert_eq!(from.len(), to.len());
        let mut at = 0;
        let mut replaced = 0;
        while at + from.len() <= bytes.len() {
            if &bytes[at..at + from.len()] == from {
                bytes[at..at + from.len()].copy_from_slice(to);
                replaced += 1;
            }
            at += 1;
        }
        assert!(replaced > 0, "{from:?} not found");
    }

    /// Applies `edit` to the flags and compression method of every local and central header.
    fn edit_zip_headers(zip: &mut [u8], edit: impl Fn(&mut u16, &mut u16)) {
        let mut at = 0;
        while at + 4 <= zip.len() {
            let (flags_at, method_at) = match &zip[at..at + 4] {
                b"PK\x03\x04" => (at + 6, at + 8),
                b"PK\x01\x02" => (at + 8, at + 10),
                _ => {
                    at += 1;
                    continue;
                }
            };
            let mut flags = u16::from_le_bytes([zip[flags_at], zip[flags_at + 1]]);
            let mut method = u16::from_le_bytes([zip[method_at], zip[method_at + 1]]);
            edit(&mut flags, &mut method);
            zip[flags_at..flags_at + 2].copy_from_slice(&flags.to_le_bytes());
            zip[method_at..method_at + 2].copy_from_slice(&method.to_le_bytes());
            at += 4;
        }
    }

    fn limits(max_entries: usize, max_unpacked_bytes: u64) -> ArchiveLimits {
        ArchiveLimits {
            max_entries,
            max_unpacked_bytes,
        }
    }

    fn paths(unpacked: &Unpacked) -> Vec<&str> {
        unpacked
            .files
            .iter()
            .map(|file| file.path.as_str())
            .collect()
    }

    /// One row of a table: what unpacking must give, as file paths or an error code.
    type Expect = Result<&'static [&'static str], Code>;

    fn check(
        case: &str,
        bytes: &[u8],
        format: ArchiveFormat,
        limits: &ArchiveLimits,
        expect: Expect,
    ) {
        let result = unpack(bytes, format, limits);
        match (&result, expect) {
            (Ok(unpacked), Ok(expected)) => {
                assert_eq!(paths(unpacked), expected, "{case}");
                for diagnostic in &unpacked.diagnostics {
                    assert_eq!(diagnostic.code, Code::SkippedLink, "{case}: {diagnostic:?}");
                }
            }
            (Err(diagnostic), Err(code)) => {
                assert_eq!(diagnostic.code, code, "{case}: {}", diagnostic.message);
                assert!(!diagnostic.message.is_empty(), "{case}");
                assert_eq!(diagnostic.severity, code.strict_severity(), "{case}");
            }
            _ => panic!("{case}: expected {expect:?}, got {result:?}"),
        }
    }

    // ------------------------------------------------------------------------------------------
    // Format detection

    #[test]
    fn detect_format() {
        use ArchiveFormat::{TarGz, Zip};
        let gz: &[u8] = &[0x1f, 0x8b, 8, 0];
        let zip: &[u8] = b"PK\x03\x04rest";
        /// Content type, URL path, first bytes, expected format.
        type Case<'a> = (Option<&'a str>, &'a str, &'a [u8], Option<ArchiveFormat>);
        let cases: &[Case<'_>] = &[
            (Some("application/gzip"), "/a", b"", Some(TarGz)),
            (Some("application/x-gzip"), "/a", b"", Some(TarGz)),
            (Some("application/x-tar+gzip"), "/a", b"", Some(TarGz)),
            (Some("application/x-gtar"), "/a", b"", Some(TarGz)),
            (Some("application/x-compressed-tar"), "/a", b"", Some(TarGz)),
            (
                Some("Application/GZIP; charset=binary"),
                "/a",
                b"",
                Some(TarGz),
            ),
            (Some("application/zip"), "/a", b"", Some(Zip)),
            (
                Some(" application/x-zip-compressed ;x=y"),
                "/a",
                b"",
                Some(Zip),
            ),
            // The content type wins over the extension and the bytes.
            (Some("application/zip"), "/a.tar.gz", gz, Some(Zip)),
            (Some("application/gzip"), "/a.zip", zip, Some(TarGz)),
            // Generic, unknown or absent types fall back to the extension...
            (
                Some("application/octet-stream"),
                "/s/a.tar.gz",
                b"",
                Some(TarGz),
            ),
            (Some("binary/octet-stream"), "/s/a.TGZ", b"", Some(TarGz)),
            (Some("text/plain"), "/s/a.Zip", b"", Some(Zip)),
            (Some("text/html"), "/s/a.zip", b"", Some(Zip)),
            (None, "/s/a.tar.gz?download=1", b"", Some(TarGz)),
            // ...and then to the magic bytes.
            (None, "/s/archive", gz, Some(TarGz)),
            (
                Some("application/octet-stream"),
                "/s/archive",
                zip,
                Some(Zip),
            ),
            (None, "/s/archive", b"PK\x05\x06", Some(Zip)),
            (None, "/s/a.gz.txt", gz, Some(TarGz)),
            // Nothing matches.
            (None, "/s/archive", b"", None),
            (
                Some("application/x-bzip2"),
                "/s/a.tar.bz2",
                b"BZh91AY",
                None,
            ),
            (None, "/s/a.tar", b"ustar", None),
            (None, "/s/a.zip.sig", b"PK", None),
        ];
        for (content_type, url_path, bytes, expected) in cases {
            assert_eq!(
                ArchiveFormat::detect(*content_type, url_path, bytes),
                *expected,
                "{content_type:?} {url_path:?} {bytes:?}"
            );
        }
    }

    // ------------------------------------------------------------------------------------------
    // tar.gz entries

    fn tar_cases() -> Vec<(&'static str, Vec<Raw>, Expect)> {
        use Code::*;
        vec![
            ("minimal", vec![skill()], Ok(&["SKILL.md"])),
            (
                "dot-slash prefixes and directory entries",
                vec![
                    dir("./"),
                    file("./SKILL.md", SKILL),
                    dir("./scripts/"),
                    file("./scripts/run.sh", "echo"),
                    file("././docs/a.md", "a"),
                ],
                Ok(&["SKILL.md", "docs/a.md", "scripts/run.sh"]),
            ),
            (
                "root directory entry without slash",
                vec![dir("."), skill()],
                Ok(&["SKILL.md"]),
            ),
            (
                "pre-posix directory as a regular entry ending in a slash",
                vec![typed("docs/", b'0'), skill(), file("docs/a.md", "a")],
                Ok(&["SKILL.md", "docs/a.md"]),
            ),
            (
                "global pax header is ignored",
                vec![
                    raw(
                        b"pax_global_header",
                        b'g',
                        b"",
                        &pax_records(&[("comment", b"abc")]),
                    ),
                    skill(),
                ],
                Ok(&["SKILL.md"]),
            ),
            (
                "gnu long name",
                vec![skill(), file(LONG_PATH, "x")],
                Ok(&["SKILL.md", LONG_PATH]),
            ),
            (
                "pax path overrides the header name",
                vec![
                    pax(&[("path", b"refs/long.md")]),
                    file("short", "x"),
                    skill(),
                ],
                Ok(&["SKILL.md", "refs/long.md"]),
            ),
            (
                "contiguous file",
                vec![raw(b"SKILL.md", b'7', b"", SKILL.as_bytes())],
                Ok(&["SKILL.md"]),
            ),
            // Path traversal.
            (
                "parent component",
                vec![skill(), file("../evil", "x")],
                Err(PathTraversal),
            ),
            (
                "inner parent component",
                vec![skill(), file("a/../../evil", "x")],
                Err(PathTraversal),
            ),
            (
                "parent component that stays inside",
                vec![file("a/../SKILL.md", SKILL)],
                Err(PathTraversal),
            ),
            (
                "absolute path",
                vec![skill(), file("/etc/passwd", "x")],
                Err(PathTraversal),
            ),
            (
                "absolute path after a dot-slash",
                vec![skill(), file(".//etc/passwd", "x")],
                Err(PathTraversal),
            ),
            (
                "windows drive path",
                vec![skill(), file("C:\\evil", "x")],
                Err(PathTraversal),
            ),
            (
                "windows drive-relative path",
                vec![skill(), file("c:evil", "x")],
                Err(PathTraversal),
            ),
            (
                "backslash root",
                vec![skill(), file("\\evil", "x")],
                Err(PathTraversal),
            ),
            (
                "backslash parent",
                vec![skill(), file("..\\evil", "x")],
                Err(PathTraversal),
            ),
            (
                "absolute directory",
                vec![skill(), dir("/tmp/")],
                Err(PathTraversal),
            ),
            (
                "parent directory",
                vec![skill(), dir("../")],
                Err(PathTraversal),
            ),
            (
                "parent component in a pax path",
                vec![skill(), pax(&[("path", b"../evil")]), file("innocent", "x")],
                Err(PathTraversal),
            ),
            (
                "parent component in a gnu long name",
                vec![skill(), file(&format!("../{LONG_PATH}"), "x")],
                Err(PathTraversal),
            ),
            (
                "parent component in a symlink name",
                vec![skill(), symlink("../l", "x")],
                Err(PathTraversal),
            ),
            // Links.
            (
                "symlink escaping",
                vec![skill(), symlink("link", "../outside")],
                Err(UnsafeLink),
            ),
            (
                "symlink to an absolute path",
                vec![skill(), symlink("link", "/etc/passwd")],
                Err(UnsafeLink),
            ),
            (
                "symlink to a windows path",
                vec![skill(), symlink("link", "C:\\Windows")],
                Err(UnsafeLink),
            ),
            (
                "nested symlink escaping",
                vec![skill(), symlink("a/b/link", "../../../x")],
                Err(UnsafeLink),
            ),
            (
                "symlink inside is skipped",
                vec![skill(), symlink("docs/readme.md", "../SKILL.md")],
                Ok(&["SKILL.md"]),
            ),
            (
                "symlink target is relative to its directory",
                vec![skill(), symlink("a/s", "../x")],
                Ok(&["SKILL.md"]),
            ),
            (
                "hard link target is relative to the root",
                vec![skill(), hardlink("a/h", "../x")],
                Err(UnsafeLink),
            ),
            (
                "hard link inside is skipped",
                vec![skill(), hardlink("copy.md", "./SKILL.md")],
                Ok(&["SKILL.md"]),
            ),
            (
                "hard link escaping",
                vec![skill(), hardlink("h", "../../etc/passwd")],
                Err(UnsafeLink),
            ),
            (
                "symlink through a symlink",
                vec![skill(), symlink("a/l", ".."), symlink("b", "a/l/../x")],
                Err(UnsafeLink),
            ),
            (
                "symlink through a symlink that comes later",
                vec![skill(), symlink("b", "a/l/x"), symlink("a/l", "..")],
                Err(UnsafeLink),
            ),
            (
                "symlink to a symlink is skipped",
                vec![skill(), symlink("a/l", "../SKILL.md"), symlink("b", "a/l")],
                Ok(&["SKILL.md"]),
            ),
            (
                "file inside a symlink",
                vec![skill(), symlink("l", "docs"), file("l/x.md", "x")],
                Err(UnsafeLink),
            ),
            (
                "hard link to a symlink",
                vec![skill(), symlink("a/l", "../SKILL.md"), hardlink("h", "a/l")],
                Err(UnsafeLink),
            ),
            (
                "symlink without a target",
                vec![skill(), symlink("l", "")],
                Err(InvalidArchive),
            ),
            (
                "symlink with a non-utf-8 target",
                vec![skill(), raw(b"l", b'2', b"\xff\xfe", b"")],
                Err(InvalidArchive),
            ),
            // Special files.
            (
                "character device",
                vec![skill(), typed("dev/null", b'3')],
                Err(SpecialFile),
            ),
            (
                "block device",
                vec![skill(), typed("dev/sda", b'4')],
                Err(SpecialFile),
            ),
            ("fifo", vec![skill(), typed("pipe", b'6')], Err(SpecialFile)),
            (
                "unknown entry type",
                vec![skill(), typed("volume", b'V')],
                Err(SpecialFile),
            ),
            // Ambiguity.
            (
                "duplicate path",
                vec![skill(), skill()],
                Err(InvalidArchive),
            ),
            (
                "duplicate path after normalising",
                vec![skill(), file("./SKILL.md", "other")],
                Err(InvalidArchive),
            ),
            (
                "file and symlink with one path",
                vec![skill(), file("a", "x"), symlink("a", "SKILL.md")],
                Err(InvalidArchive),
            ),
            (
                "same path with either separator",
                vec![skill(), file("a/b", "x"), file("a\\b", "y")],
                Err(InvalidArchive),
            ),
            (
                "file inside a file",
                vec![skill(), file("a", "x"), file("a/b", "y")],
                Err(InvalidArchive),
            ),
            // Names.
            (
                "non-utf-8 name",
                vec![skill(), raw(b"bad-\xff.md", b'0', b"", b"x")],
                Err(InvalidArchive),
            ),
            (
                "empty path component",
                vec![skill(), file("a//b.md", "x")],
                Err(InvalidArchive),
            ),
            (
                "dot path component",
                vec![skill(), file("a/./b.md", "x")],
                Err(InvalidArchive),
            ),
            (
                "file with an empty name",
                vec![skill(), file("", "x")],
                Err(InvalidArchive),
            ),
            (
                "nul byte in a pax path",
                vec![skill(), pax(&[("path", b"a\0b")]), file("x", "x")],
                Err(InvalidArchive),
            ),
            (
                "name longer than the limit",
                vec![skill(), file(&"a/".repeat(MAX_PATH_BYTES / 2 + 1), "x")],
                Err(InvalidArchive),
            ),
            // SKILL.md.
            (
                "wrapper folder",
                vec![
                    dir("my-skill/"),
                    file("my-skill/SKILL.md", SKILL),
                    file("my-skill/x.md", "x"),
                ],
                Err(SkillMdNotAtRoot),
            ),
            (
                "nested skills without a root one",
                vec![file("b/c/SKILL.md", SKILL), file("a/SKILL.md", SKILL)],
                Err(SkillMdNotAtRoot),
            ),
            (
                "no SKILL.md",
                vec![file("README.md", "x")],
                Err(MissingSkillMd),
            ),
            (
                "lowercase skill.md",
                vec![file("skill.md", SKILL)],
                Err(MissingSkillMd),
            ),
            (
                "SKILL.md is a symlink",
                vec![file("real.md", SKILL), symlink("SKILL.md", "real.md")],
                Err(MissingSkillMd),
            ),
            ("empty archive", vec![], Err(MissingSkillMd)),
        ]
    }

    #[test]
    fn tar_entries() {
        for (case, entries, expect) in tar_cases() {
            check(
                case,
                &tar_gz(&entries),
                ArchiveFormat::TarGz,
                &ArchiveLimits::default(),
                expect,
            );
        }
    }

    #[test]
    fn skipped_links_are_reported() {
        let bytes = tar_gz(&[
            skill(),
            symlink("docs/readme.md", "../SKILL.md"),
            hardlink("copy.md", "SKILL.md"),
        ]);
        let unpacked = unpack(&bytes, ArchiveFormat::TarGz, &ArchiveLimits::default()).unwrap();
        assert_eq!(paths(&unpacked), ["SKILL.md"]);
        insta::assert_json_snapshot!(unpacked.diagnostics, @r#"
        [
          {
            "severity": "info",
            "code": "skipped_link",
            "message": "skipped hard link \"copy.md\" -> \"SKILL.md\"; links are not followed",
            "field": "copy.md"
          },
          {
            "severity": "info",
            "code": "skipped_link",
            "message": "skipped symlink \"docs/readme.md\" -> \"../SKILL.md\"; links are not followed",
            "field": "docs/readme.md"
          }
        ]
        "#);
    }

    #[test]
    fn tar_limits() {
        use Code::*;
        let cases: Vec<(&str, Vec<Raw>, ArchiveLimits, Expect)> = vec![
            (
                "entries at the limit",
                vec![dir("a/"), dir("b/"), skill()],
                limits(3, MAX_UNPACKED_BYTES),
                Ok(&["SKILL.md"]),
            ),
            (
                "directories count as entries",
                vec![dir("a/"), dir("b/"), skill(), dir("c/")],
                limits(3, MAX_UNPACKED_BYTES),
                Err(TooManyEntries),
            ),
            (
                "links count as entries",
                vec![skill(), symlink("a", "SKILL.md"), symlink("b", "SKILL.md")],
                limits(2, MAX_UNPACKED_BYTES),
                Err(TooManyEntries),
            ),
            (
                "limits at their largest",
                vec![skill()],
                limits(usize::MAX, u64::MAX),
                Ok(&["SKILL.md"]),
            ),
            (
                "bytes at the limit",
                vec![file("SKILL.md", "0123456789")],
                limits(10, 10),
                Ok(&["SKILL.md"]),
            ),
            (
                "one file over the limit",
                vec![file("SKILL.md", "0123456789a")],
                limits(10, 10),
                Err(TooLarge),
            ),
            (
                "files together over the limit",
                vec![file("SKILL.md", "012345"), file("b", "012345")],
                limits(10, 10),
                Err(TooLarge),
            ),
            (
                "directory with a body over the limit",
                vec![skill(), raw(b"dir/", b'5', b"", &[b'x'; 4096])],
                limits(10, 1024),
                Err(TooLarge),
            ),
        ];
        for (case, entries, limits, expect) in cases {
            check(
                case,
                &tar_gz(&entries),
                ArchiveFormat::TarGz,
                &limits,
                expect,
            );
        }
    }

    #[test]
    fn tar_gz_streams() {
        use Code::*;
        let tar = raw_tar(&[skill(), file("b.md", "hello")]);
        let good = gzip(&tar);
        let mut truncated_gzip = good.clone();
        truncated_gzip.truncate(good.len() - 10);
        let mut trailing_garbage = good.clone();
        trailing_garbage.extend_from_slice(b"garbage");
        let mut after_end = tar.clone();
        after_end.extend_from_slice(b"garbage");
        let mut padded = tar.clone();
        padded.resize(10_240, 0);
        let (first, second) = tar.split_at(700);
        let mut multi_member = gzip(first);
        multi_member.extend_from_slice(&gzip(second));
        let mut bad_checksum = tar.clone();
        bad_checksum[0] = b'X';
        let mut bad_crc = good.clone();
        let crc_at = bad_crc.len() - 8;
        bad_crc[crc_at] ^= 0xff;
        let mut endless_padding = tar.clone();
        endless_padding.resize(8 << 20, 0);

        let cases: Vec<(&str, Vec<u8>, ArchiveLimits, Expect)> = vec![
            (
                "valid",
                good,
                ArchiveLimits::default(),
                Ok(&["SKILL.md", "b.md"]),
            ),
            (
                "zero padding after the end",
                gzip(&padded),
                ArchiveLimits::default(),
                Ok(&["SKILL.md", "b.md"]),
            ),
            (
                "concatenated gzip members",
                multi_member,
                ArchiveLimits::default(),
                Ok(&["SKILL.md", "b.md"]),
            ),
            (
                "empty input",
                Vec::new(),
                ArchiveLimits::default(),
                Err(InvalidArchive),
            ),
            (
                "not gzip",
                b"PK\x03\x04 not a tar.gz".to_vec(),
                ArchiveLimits::default(),
                Err(InvalidArchive),
            ),
            (
                "plain tar",
                tar.clone(),
                ArchiveLimits::default(),
                Err(InvalidArchive),
            ),
            (
                "gzip header only",
                vec![0x1f, 0x8b],
                ArchiveLimits::default(),
                Err(InvalidArchive),
            ),
            (
                "truncated gzip",
                truncated_gzip,
                ArchiveLimits::default(),
                Err(InvalidArchive),
            ),
            (
                "truncated tar",
                gzip(&tar[..600]),
                ArchiveLimits::default(),
                Err(InvalidArchive),
            ),
            (
                "garbage after the gzip stream",
                trailing_garbage,
                ArchiveLimits::default(),
                Err(InvalidArchive),
            ),
            (
                "garbage after the tar end",
                gzip(&after_end),
                ArchiveLimits::default(),
                Err(InvalidArchive),
            ),
            (
                "header checksum mismatch",
                gzip(&bad_checksum),
                ArchiveLimits::default(),
                Err(InvalidArchive),
            ),
            (
                "gzip crc mismatch",
                bad_crc,
                ArchiveLimits::default(),
                Err(InvalidArchive),
            ),
            (
                "endless padding after the end",
                gzip(&endless_padding),
                limits(2, 1 << 20),
                Err(TooLarge),
            ),
        ];
        for (case, bytes, limits, expect) in cases {
            check(case, &bytes, ArchiveFormat::TarGz, &limits, expect);
        }
    }

    /// Streams a tar.gz whose only entry declares `declared` bytes and holds `actual` zeros,
    /// without ever holding the zeros in memory.
    fn zeros_tar_gz(name: &[u8], kind: u8, declared: u64, actual: u64) -> Vec<u8> {
        let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
        encoder
            .write_all(tar_header(name, kind, b"", declared).as_bytes())
            .unwrap();
        let chunk = vec![0u8; 1 << 20];
        let mut left = actual;
        while left > 0 {
            let len = usize::try_from(left.min(len_u64(chunk.len()))).unwrap();
            encoder.write_all(&chunk[..len]).unwrap();
            left -= len_u64(len);
        }
        encoder.finish().unwrap()
    }

    #[test]
    fn gzip_bomb_stops_at_the_limit() {
        let gib = 1 << 30;
        let bomb = zeros_tar_gz(b"SKILL.md", b'0', gib, gib);
        assert!(
            bomb.len() < 2 << 20,
            "the bomb is {} bytes compressed",
            bomb.len()
        );
        let error = unpack(&bomb, ArchiveFormat::TarGz, &limits(10, 1 << 20)).unwrap_err();
        assert_eq!(error.code, Code::TooLarge, "{}", error.message);
        insta::assert_snapshot!(error.message, @"the archive unpacks to more than 1048576 bytes");
    }

    #[test]
    fn long_name_bomb_stops_at_the_header_limit() {
        // A GNU long name is read whole into memory by the tar reader, before the entry it
        // names; the header window bounds it.
        let bomb = zeros_tar_gz(b"././@LongLink", b'L', 64 << 20, 64 << 20);
        let error = unpack(&bomb, ArchiveFormat::TarGz, &ArchiveLimits::default()).unwrap_err();
        assert_eq!(error.code, Code::TooLarge, "{}", error.message);
        insta::assert_snapshot!(error.message, @"the headers of one tar entry (long names, pax records) exceed 1048576 bytes");
    }

    #[test]
    fn directory_body_bomb_stops_at_the_limit() {
        let bomb = zeros_tar_gz(b"dir/", b'5', 256 << 20, 256 << 20);
        let error = unpack(&bomb, ArchiveFormat::TarGz, &limits(10, 1 << 20)).unwrap_err();
        assert_eq!(error.code, Code::TooLarge, "{}", error.message);
    }

    // ------------------------------------------------------------------------------------------
    // zip

    fn zip_cases() -> Vec<(&'static str, Vec<u8>, Expect)> {
        use Code::*;
        let mut raw_duplicate = zip_of(&[Z::Stored("SKILL.md", SKILL), Z::Stored("SKILL.mx", "x")]);
        replace_all(&mut raw_duplicate, b"SKILL.mx", b"SKILL.md");
        let mut encrypted = zip_of(&[Z::Stored("SKILL.md", SKILL)]);
        edit_zip_headers(&mut encrypted, |flags, _| *flags |= 1);
        let mut bzip2 = zip_of(&[Z::Stored("SKILL.md", SKILL)]);
        edit_zip_headers(&mut bzip2, |_, method| *method = 12);
        let mut non_utf8 = zip_of(&[Z::Stored("SKILL.md", SKILL), Z::Stored("bad-X.md", "x")]);
        replace_all(&mut non_utf8, b"bad-X", b"bad-\xff");
        let mut bad_crc = zip_of(&[
            Z::Stored("SKILL.md", SKILL),
            Z::Stored("a.md", "hello world"),
        ]);
        replace_all(&mut bad_crc, b"hello world", b"hellO world");
        let good = zip_of(&[Z::Stored("SKILL.md", SKILL)]);
        let truncated = good[..good.len() - 30].to_vec();
        vec![
            (
                "stored, deflated and directories",
                zip_of(&[
                    Z::Dir("scripts/"),
                    Z::Deflated("SKILL.md", SKILL),
                    Z::Stored("scripts/run.sh", "echo"),
                    Z::Deflated("docs/a.md", "a"),
                ]),
                Ok(&["SKILL.md", "docs/a.md", "scripts/run.sh"]),
            ),
            (
                "dot-slash prefix",
                zip_of(&[Z::Stored("./SKILL.md", SKILL)]),
                Ok(&["SKILL.md"]),
            ),
            (
                "regular file mode",
                zip_of(&[Z::Mode("SKILL.md", S_IFREG | 0o644)]),
                Ok(&["SKILL.md"]),
            ),
            ("empty zip", zip_of(&[]), Err(MissingSkillMd)),
            (
                "wrapper folder",
                zip_of(&[Z::Dir("my-skill/"), Z::Stored("my-skill/SKILL.md", SKILL)]),
                Err(SkillMdNotAtRoot),
            ),
            (
                "parent component",
                zip_of(&[Z::Stored("SKILL.md", SKILL), Z::Stored("../evil", "x")]),
                Err(PathTraversal),
            ),
            (
                "absolute path",
                zip_of(&[Z::Stored("SKILL.md", SKILL), Z::Stored("/etc/evil", "x")]),
                Err(PathTraversal),
            ),
            (
                "windows drive path",
                zip_of(&[Z::Stored("SKILL.md", SKILL), Z::Stored("C:\\evil", "x")]),
                Err(PathTraversal),
            ),
            (
                "backslash parent components",
                zip_of(&[
                    Z::Stored("SKILL.md", SKILL),
                    Z::Stored("a\\..\\..\\evil", "x"),
                ]),
                Err(PathTraversal),
            ),
            (
                "parent directory",
                zip_of(&[Z::Stored("SKILL.md", SKILL), Z::Dir("../up/")]),
                Err(PathTraversal),
            ),
            (
                "symlink escaping",
                zip_of(&[
                    Z::Stored("SKILL.md", SKILL),
                    Z::Symlink("link", "../../etc/passwd"),
                ]),
                Err(UnsafeLink),
            ),
            (
                "symlink inside is skipped",
                zip_of(&[
                    Z::Stored("SKILL.md", SKILL),
                    Z::Symlink("docs/link", "../SKILL.md"),
                ]),
                Ok(&["SKILL.md"]),
            ),
            (
                "file inside a symlink",
                zip_of(&[
                    Z::Stored("SKILL.md", SKILL),
                    Z::Symlink("l", "docs"),
                    Z::Stored("l/x.md", "x"),
                ]),
                Err(UnsafeLink),
            ),
            (
                "character device",
                zip_of(&[
                    Z::Stored("SKILL.md", SKILL),
                    Z::Mode("dev/null", S_IFCHR | 0o644),
                ]),
                Err(SpecialFile),
            ),
            (
                "fifo",
                zip_of(&[
                    Z::Stored("SKILL.md", SKILL),
                    Z::Mode("pipe", S_IFIFO | 0o644),
                ]),
                Err(SpecialFile),
            ),
            (
                "socket",
                zip_of(&[
                    Z::Stored("SKILL.md", SKILL),
                    Z::Mode("socket", S_IFSOCK | 0o644),
                ]),
                Err(SpecialFile),
            ),
            (
                "duplicate after normalising",
                zip_of(&[
                    Z::Stored("SKILL.md", SKILL),
                    Z::Stored("./SKILL.md", "other"),
                ]),
                Err(InvalidArchive),
            ),
            ("duplicate raw names", raw_duplicate, Err(InvalidArchive)),
            ("encrypted entry", encrypted, Err(InvalidArchive)),
            ("bzip2 entry", bzip2, Err(UnsupportedArchive)),
            ("non-utf-8 name", non_utf8, Err(InvalidArchive)),
            ("crc mismatch", bad_crc, Err(InvalidArchive)),
            ("truncated", truncated, Err(InvalidArchive)),
            (
                "not a zip",
                b"PK\x03\x04 garbage".to_vec(),
                Err(InvalidArchive),
            ),
            ("empty input", Vec::new(), Err(InvalidArchive)),
        ]
    }

    #[test]
    fn zip_entries() {
        for (case, bytes, expect) in zip_cases() {
            check(
                case,
                &bytes,
                ArchiveFormat::Zip,
                &ArchiveLimits::default(),
                expect,
            );
        }
    }

    #[test]
    fn zip_entry_kinds() {
        let cases = [
            (None, false, ZipKind::File),
            (None, true, ZipKind::Directory),
            (Some(0o644), false, ZipKind::File),
            (Some(S_IFREG | 0o644), false, ZipKind::File),
            (Some(S_IFREG | 0o755), true, ZipKind::Directory),
            (Some(S_IFDIR | 0o755), false, ZipKind::Directory),
            (Some(S_IFLNK | 0o777), false, ZipKind::Symlink),
            (Some(S_IFIFO | 0o644), false, ZipKind::Special("fifo")),
            (
                Some(S_IFCHR | 0o644),
                false,
                ZipKind::Special("character device"),
            ),
            (
                Some(S_IFBLK | 0o644),
                false,
                ZipKind::Special("block device"),
            ),
            (Some(S_IFSOCK | 0o644), false, ZipKind::Special("socket")),
            (
                Some(0o160_000 | 0o644),
                false,
                ZipKind::Special("special file of an unknown type"),
            ),
        ];
        for (mode, name_is_dir, expected) in cases {
            assert_eq!(
                zip_entry_kind(mode, name_is_dir),
                expected,
                "{mode:?} {name_is_dir}"
            );
        }
    }

    #[test]
    fn zip_limits() {
        use Code::*;
        let three = zip_of(&[
            Z::Dir("a/"),
            Z::Dir("b/"),
            Z::Stored("SKILL.md", "0123456789"),
        ]);
        let cases: Vec<(&str, &[u8], ArchiveLimits, Expect)> = vec![
            (
                "entries at the limit",
                &three,
                limits(3, 10),
                Ok(&["SKILL.md"]),
            ),
            (
                "directories count as entries",
                &three,
                limits(2, 10),
                Err(TooManyEntries),
            ),
            ("bytes over the limit", &three, limits(3, 9), Err(TooLarge)),
        ];
        for (case, bytes, limits, expect) in cases {
            check(case, bytes, ArchiveFormat::Zip, &limits, expect);
        }
    }

    #[test]
    fn zip_bomb_stops_at_the_limit() {
        let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
        let options = SimpleFileOptions::default()
            .compression_method(CompressionMethod::Deflated)
            .large_file(true);
        writer.start_file("SKILL.md", options).unwrap();
        let chunk = vec![0u8; 1 << 20];
        for _ in 0..64 {
            writer.write_all(&chunk).unwrap();
        }
        let bomb = writer.finish().unwrap().into_inner();
        assert!(
            bomb.len() < 1 << 20,
            "the bomb is {} bytes compressed",
            bomb.len()
        );
        let error = unpack(&bomb, ArchiveFormat::Zip, &limits(10, 1 << 20)).unwrap_err();
        assert_eq!(error.code, Code::TooLarge, "{}", error.message);
    }

    #[test]
    fn refusal_messages() {
        let mut report = String::new();
        for (case, entries, expect) in tar_cases() {
            if expect.is_err() {
                let error = unpack(
                    &tar_gz(&entries),
                    ArchiveFormat::TarGz,
                    &ArchiveLimits::default(),
                )
                .unwrap_err();
                report.push_str(&format!(
                    "tar.gz {case}: {}: {}\n",
                    error.code, error.message
                ));
            }
        }
        for (case, bytes, expect) in zip_cases() {
            if expect.is_err() {
                let error =
                    unpack(&bytes, ArchiveFormat::Zip, &ArchiveLimits::default()).unwrap_err();
                report.push_str(&format!("zip {case}: {}: {}\n", error.code, error.message));
            }
        }
        insta::assert_snapshot!(report, @r#"
        tar.gz parent component: path_traversal: archive entry "../evil" has a ".." component
        tar.gz inner parent component: path_traversal: archive entry "a/../../evil" has a ".." component
        tar.gz parent component that stays inside: path_traversal: archive entry "a/../SKILL.md" has a ".." component
        tar.gz absolute path: path_traversal: archive entry "/etc/passwd" is an absolute path
        tar.gz absolute path after a dot-slash: path_traversal: archive entry ".//etc/passwd" is an absolute path
        tar.gz windows drive path: path_traversal: archive entry "C:\\evil" is an absolute path
        tar.gz windows drive-relative path: path_traversal: archive entry "c:evil" is an absolute path
        tar.gz backslash root: path_traversal: archive entry "\\evil" is an absolute path
        tar.gz backslash parent: path_traversal: archive entry "..\\evil" has a ".." component
        tar.gz absolute directory: path_traversal: archive entry "/tmp/" is an absolute path
        tar.gz parent directory: path_traversal: archive entry "../" has a ".." component
        tar.gz parent component in a pax path: path_traversal: archive entry "../evil" has a ".." component
        tar.gz parent component in a gnu long name: path_traversal: archive entry "../references/0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789.md" has a ".." component
        tar.gz parent component in a symlink name: path_traversal: archive entry "../l" has a ".." component
        tar.gz symlink escaping: unsafe_link: symlink "link" points to "../outside", outside the skill directory
        tar.gz symlink to an absolute path: unsafe_link: symlink "link" points to the absolute path "/etc/passwd"
        tar.gz symlink to a windows path: unsafe_link: symlink "link" points to the absolute path "C:\\Windows"
        tar.gz nested symlink escaping: unsafe_link: symlink "a/b/link" points to "../../../x", outside the skill directory
        tar.gz hard link target is relative to the root: unsafe_link: hard link "a/h" points to "../x", outside the skill directory
        tar.gz hard link escaping: unsafe_link: hard link "h" points to "../../etc/passwd", outside the skill directory
        tar.gz symlink through a symlink: unsafe_link: symlink "b" points to "a/l/../x", which goes through the link "a/l", so where it leads cannot be checked
        tar.gz symlink through a symlink that comes later: unsafe_link: symlink "b" points to "a/l/x", which goes through the link "a/l", so where it leads cannot be checked
        tar.gz file inside a symlink: unsafe_link: archive entry "l/x.md" is inside "l", which is a link
        tar.gz hard link to a symlink: unsafe_link: hard link "h" points to "a/l", which is itself a link
        tar.gz symlink without a target: invalid_archive: symlink "l" has no target
        tar.gz symlink with a non-utf-8 target: invalid_archive: symlink "l" has a target that is not valid UTF-8: "��"
        tar.gz character device: special_file: archive entry "dev/null" is a character device
        tar.gz block device: special_file: archive entry "dev/sda" is a block device
        tar.gz fifo: special_file: archive entry "pipe" is a fifo
        tar.gz unknown entry type: special_file: archive entry "volume" is a tar entry of type 'V', which is not a file, directory or link
        tar.gz duplicate path: invalid_archive: the archive holds "SKILL.md" more than once, so it is ambiguous which copy is meant
        tar.gz duplicate path after normalising: invalid_archive: the archive holds "SKILL.md" more than once, so it is ambiguous which copy is meant
        tar.gz file and symlink with one path: invalid_archive: the archive holds "a" more than once, so it is ambiguous which copy is meant
        tar.gz same path with either separator: invalid_archive: archive entries "a/b" and "a\\b" name the same file, so it is ambiguous which one is meant
        tar.gz file inside a file: invalid_archive: archive entry "a/b" is inside "a", which is a file
        tar.gz non-utf-8 name: invalid_archive: archive entry name "bad-�.md" is not valid UTF-8
        tar.gz empty path component: invalid_archive: archive entry "a//b.md" has an empty or "." path component
        tar.gz dot path component: invalid_archive: archive entry "a/./b.md" has an empty or "." path component
        tar.gz file with an empty name: invalid_archive: archive entry "" has an empty path
        tar.gz nul byte in a pax path: invalid_archive: archive entry "a\0b" has a NUL byte in its name
        tar.gz name longer than the limit: invalid_archive: archive entry "a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/"... has a name longer than 4096 bytes
        tar.gz wrapper folder: skill_md_not_at_root: SKILL.md is not at the archive root but at "my-skill/SKILL.md"; put the skill's files at the root of the archive, not inside a wrapper folder
        tar.gz nested skills without a root one: skill_md_not_at_root: SKILL.md is not at the archive root but at "a/SKILL.md"; put the skill's files at the root of the archive, not inside a wrapper folder
        tar.gz no SKILL.md: missing_skill_md: the archive has no SKILL.md at its root
        tar.gz lowercase skill.md: missing_skill_md: the archive has "skill.md" at its root but no SKILL.md; the name is case-sensitive
        tar.gz SKILL.md is a symlink: missing_skill_md: SKILL.md at the archive root is a symlink to "real.md"; links are not followed, so ship the file itself
        tar.gz empty archive: missing_skill_md: the archive has no SKILL.md at its root
        zip empty zip: missing_skill_md: the archive has no SKILL.md at its root
        zip wrapper folder: skill_md_not_at_root: SKILL.md is not at the archive root but at "my-skill/SKILL.md"; put the skill's files at the root of the archive, not inside a wrapper folder
        zip parent component: path_traversal: archive entry "../evil" has a ".." component
        zip absolute path: path_traversal: archive entry "/etc/evil" is an absolute path
        zip windows drive path: path_traversal: archive entry "C:\\evil" is an absolute path
        zip backslash parent components: path_traversal: archive entry "a\\..\\..\\evil" has a ".." component
        zip parent directory: path_traversal: archive entry "../up/" has a ".." component
        zip symlink escaping: unsafe_link: symlink "link" points to "../../etc/passwd", outside the skill directory
        zip file inside a symlink: unsafe_link: archive entry "l/x.md" is inside "l", which is a link
        zip character device: special_file: archive entry "dev/null" is a character device
        zip fifo: special_file: archive entry "pipe" is a fifo
        zip socket: special_file: archive entry "socket" is a socket
        zip duplicate after normalising: invalid_archive: the archive holds "SKILL.md" more than once, so it is ambiguous which copy is meant
        zip duplicate raw names: invalid_archive: the zip archive lists the same entry name more than once, so it is ambiguous which copy is meant
        zip encrypted entry: invalid_archive: archive entry "SKILL.md" is encrypted; publish it without a password
        zip bzip2 entry: unsupported_archive: archive entry "SKILL.md" uses the Bzip2 compression method; only stored and deflate are supported
        zip non-utf-8 name: invalid_archive: archive entry name "bad-�.md" is not valid UTF-8
        zip crc mismatch: invalid_archive: cannot read archive entry "a.md": invalid checksum
        zip truncated: invalid_archive: cannot read the zip archive: invalid Zip archive: could not find EOCD
        zip not a zip: invalid_archive: cannot read the zip archive: invalid Zip archive: could not find EOCD
        zip empty input: invalid_archive: cannot read the zip archive: invalid Zip archive: could not find EOCD
        "#);
    }

    // ------------------------------------------------------------------------------------------
    // Helpers

    #[test]
    fn lowercases_only_a_leading_capital() {
        let cases = [
            ("Invalid checksum", "invalid checksum"),
            ("CRC mismatch", "CRC mismatch"),
            ("already lower", "already lower"),
            ("", ""),
            ("É", "é"),
        ];
        for (input, expected) in cases {
            assert_eq!(lowercase_first(input), expected, "{input:?}");
        }
    }

    #[test]
    fn metered_reader_stops_past_the_budget() {
        /// Stream budget, header window (`None`: open), bytes in the stream, expected outcome.
        type Case = (u64, Option<u64>, usize, Result<usize, Overrun>);
        let cases: [Case; 6] = [
            (10, None, 10, Ok(10)),
            (10, None, 0, Ok(0)),
            (10, None, 11, Err(Overrun::Stream)),
            (10, Some(4), 4, Ok(4)),
            (10, Some(4), 5, Err(Overrun::Headers)),
            (3, Some(4), 5, Err(Overrun::Stream)),
        ];
        for (budget, window, len, expected) in cases {
            let meter = Meter::new(budget);
            if let Some(window) = window {
                meter.window_left.set(window);
            }
            let data = vec![7u8; len];
            let mut reader = Metered {
                inner: data.as_slice(),
                meter: &meter,
            };
            let mut out = Vec::new();
            let result = reader.read_to_end(&mut out);
            let outcome = match result {
                Ok(read) => Ok(read),
                Err(_) => Err(meter.overrun.get().unwrap()),
            };
            assert_eq!(
                outcome, expected,
                "budget {budget}, window {window:?}, {len} bytes"
            );
        }
    }

    #[test]
    fn unpacked_lookup() {
        let unpacked = Unpacked {
            files: vec![
                ArchiveFile {
                    path: "SKILL.md".to_owned(),
                    bytes: b"s".to_vec(),
                },
                ArchiveFile {
                    path: "docs/a.md".to_owned(),
                    bytes: b"a".to_vec(),
                },
            ],
            diagnostics: Vec::new(),
        };
        assert_eq!(
            unpacked.skill_md().map(|file| file.bytes.as_slice()),
            Some(&b"s"[..])
        );
        assert_eq!(
            unpacked.file("docs/a.md").map(|file| file.bytes.as_slice()),
            Some(&b"a"[..])
        );
        assert_eq!(unpacked.file("docs"), None);
        assert_eq!(Unpacked::default().skill_md(), None);
    }

    // ------------------------------------------------------------------------------------------
    // The real-world corpus

    #[test]
    #[allow(clippy::print_stderr)]
    fn corpus_archives_unpack_cleanly() {
        let corpus = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/corpus"
        ));
        if !corpus.is_dir() {
            assert!(
                std::env::var_os("CI").is_none(),
                "../shared/corpus is missing: under CI the corpus tests run, they do not skip"
            );
            eprintln!(
                "skipping: ../shared/corpus not found at {}",
                corpus.display()
            );
            return;
        }
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(corpus.join("MANIFEST.json")).unwrap()).unwrap();
        let mut expected = HashMap::new();
        for domain in manifest["domains"].as_array().unwrap() {
            for skill in domain["skills"].as_array().unwrap() {
                let key = skill["key"].as_str().unwrap().to_owned();
                let digest = skill["skill_md_sha256"].as_str().unwrap().to_owned();
                expected.insert(key, digest);
            }
        }
        let mut domains: Vec<_> = std::fs::read_dir(corpus)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        domains.sort();
        let mut checked = 0;
        for domain in domains {
            let published = domain.join(".well-known/agent-skills");
            if !published.is_dir() {
                continue;
            }
            let domain_name = domain.file_name().unwrap().to_str().unwrap();
            for entry in std::fs::read_dir(&published).unwrap() {
                let path = entry.unwrap().path();
                let file_name = path.file_name().unwrap().to_str().unwrap();
                let (skill, format) = if let Some(skill) = file_name.strip_suffix(".tar.gz") {
                    (skill, ArchiveFormat::TarGz)
                } else if let Some(skill) = file_name.strip_suffix(".zip") {
                    (skill, ArchiveFormat::Zip)
                } else {
                    continue;
                };
                let key = format!("{domain_name}/{skill}");
                let bytes = std::fs::read(&path).unwrap();
                assert_eq!(
                    ArchiveFormat::detect(None, file_name, &bytes),
                    Some(format),
                    "{key}"
                );
                let unpacked = unpack(&bytes, format, &ArchiveLimits::default())
                    .unwrap_or_else(|error| panic!("{key}: {error:?}"));
                assert_eq!(unpacked.diagnostics, [], "{key}");
                let skill_md = unpacked
                    .skill_md()
                    .unwrap_or_else(|| panic!("{key}: no SKILL.md"));
                let digest = expected
                    .get(&key)
                    .unwrap_or_else(|| panic!("{key} not in MANIFEST.json"));
                assert_eq!(&Digest::of(&skill_md.bytes).hex(), digest, "{key}");
                checked += 1;
            }
        }
        assert!(checked > 0, "no archives under {}", corpus.display());
    }

    // ------------------------------------------------------------------------------------------
    // Properties

    /// A skill tree: safe relative paths and their contents, SKILL.md included. Directory
    /// names start with `d` and file names with `f`, so no file is also a directory.
    fn skill_tree() -> impl Strategy<Value = BTreeMap<String, Vec<u8>>> {
        let path = (
            prop::collection::vec("d[a-z0-9_-]{0,6}", 0..3),
            "f[a-zA-Z0-9_.-]{0,10}",
        )
            .prop_map(|(mut parts, file)| {
                parts.push(file);
                parts.join("/")
            });
        let files =
            prop::collection::btree_map(path, prop::collection::vec(any::<u8>(), 0..300), 0..8);
        (files, prop::collection::vec(any::<u8>(), 0..300)).prop_map(|(mut files, skill_md)| {
            files.insert(SKILL_MD.to_owned(), skill_md);
            files
        })
    }

    fn build_tar_gz(tree: &BTreeMap<String, Vec<u8>>, with_dirs: bool) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        let mut dirs = std::collections::BTreeSet::new();
        for (path, bytes) in tree {
            if with_dirs {
                let mut parent = String::new();
                for part in path
                    .split('/')
                    .rev()
                    .skip(1)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                {
                    parent = format!("{parent}{part}/");
                    if dirs.insert(parent.clone()) {
                        let mut header = tar::Header::new_gnu();
                        header.set_entry_type(EntryType::Directory);
                        header.set_mode(0o755);
                        header.set_size(0);
                        builder
                            .append_data(&mut header, &parent, io::empty())
                            .unwrap();
                    }
                }
            }
            let mut header = tar::Header::new_gnu();
            header.set_mode(0o644);
            header.set_size(len_u64(bytes.len()));
            builder
                .append_data(&mut header, path, bytes.as_slice())
                .unwrap();
        }
        gzip(&builder.into_inner().unwrap())
    }

    fn build_zip(tree: &BTreeMap<String, Vec<u8>>, deflate: bool) -> Vec<u8> {
        let method = if deflate {
            CompressionMethod::Deflated
        } else {
            CompressionMethod::Stored
        };
        let options = SimpleFileOptions::default().compression_method(method);
        let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
        for (path, bytes) in tree {
            writer.start_file(path.as_str(), options).unwrap();
            writer.write_all(bytes).unwrap();
        }
        writer.finish().unwrap().into_inner()
    }

    fn expected_files(tree: &BTreeMap<String, Vec<u8>>) -> Vec<ArchiveFile> {
        tree.iter()
            .map(|(path, bytes)| ArchiveFile {
                path: path.clone(),
                bytes: bytes.clone(),
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
            let limits = ArchiveLimits::default();
            let _ = unpack(&bytes, ArchiveFormat::TarGz, &limits);
            let _ = unpack(&bytes, ArchiveFormat::Zip, &limits);
            // Behind a valid gzip layer the tar reader sees the arbitrary bytes.
            let _ = unpack(&gzip(&bytes), ArchiveFormat::TarGz, &limits);
        }

        #[test]
        fn corrupted_archives_never_panic(
            tree in skill_tree(),
            edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..16),
        ) {
            let limits = ArchiveLimits::default();
            let mut tar = raw_tar(&[skill(), symlink("docs/l", "../SKILL.md"), dir("d/")]);
            let mut zip = build_zip(&tree, true);
            for (index, byte) in &edits {
                let at = index.index(tar.len());
                tar[at] = *byte;
                let at = index.index(zip.len());
                zip[at] = *byte;
            }
            let _ = unpack(&gzip(&tar), ArchiveFormat::TarGz, &limits);
            let _ = unpack(&zip, ArchiveFormat::Zip, &limits);
        }

        #[test]
        fn valid_archives_round_trip(tree in skill_tree(), with_dirs in any::<bool>(), deflate in any::<bool>()) {
            let expected = expected_files(&tree);
            let limits = ArchiveLimits::default();

            let unpacked = unpack(&build_tar_gz(&tree, with_dirs), ArchiveFormat::TarGz, &limits);
            prop_assert_eq!(unpacked, Ok(Unpacked { files: expected.clone(), diagnostics: Vec::new() }));

            let unpacked = unpack(&build_zip(&tree, deflate), ArchiveFormat::Zip, &limits);
            prop_assert_eq!(unpacked, Ok(Unpacked { files: expected, diagnostics: Vec::new() }));
        }
    }
}
