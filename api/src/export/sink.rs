//! Where an export's files go: a folder ([`DirSink`]) or a `.tar.gz` stream ([`TarSink`]);
//! and [`publish_atomically`], the one place an export on disk is built beside its target
//! and renamed into place.

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::write::GzEncoder;

use crate::directory::files::check_path;
use crate::directory::well_known::append;

/// A place files are written to, each once, by a path relative to the export's root.
pub(crate) trait Sink {
    /// Writes the file `path` with `bytes`.
    fn put(&mut self, path: &str, bytes: &[u8]) -> io::Result<()>;

    /// Writes the file `path` with the `size` bytes `reader` yields (a large file that is
    /// not held in memory).
    fn put_reader(&mut self, path: &str, size: u64, reader: &mut dyn Read) -> io::Result<()>;

    /// The file `path`, created to be written in place, where this sink can take a file
    /// whose size is not known until it is written: a folder can; an archive cannot (an
    /// entry's header holds its size), so such a file is spooled and given to
    /// [`Sink::put_reader`].
    fn in_place(&mut self, path: &str) -> Option<io::Result<fs::File>> {
        let _ = path;
        None
    }
}

/// Refuses a path that could leave the export's root.
fn checked(path: &str) -> io::Result<&str> {
    match check_path(path) {
        Ok(()) => Ok(path),
        Err(_) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("refusing to write the unsafe path {path:?}"),
        )),
    }
}

/// Files in a folder.
#[derive(Debug)]
pub(crate) struct DirSink {
    root: PathBuf,
}

impl DirSink {
    /// Writes into `root`, which exists.
    pub(crate) fn new(root: &Path) -> DirSink {
        DirSink {
            root: root.to_owned(),
        }
    }

    fn create(&self, path: &str) -> io::Result<fs::File> {
        let target = self.root.join(checked(path)?);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&target)
    }
}

impl Sink for DirSink {
    fn put(&mut self, path: &str, bytes: &[u8]) -> io::Result<()> {
        self.create(path)?.write_all(bytes)
    }

    fn put_reader(&mut self, path: &str, _size: u64, reader: &mut dyn Read) -> io::Result<()> {
        io::copy(reader, &mut self.create(path)?).map(|_| ())
    }

    fn in_place(&mut self, path: &str) -> Option<io::Result<fs::File>> {
        Some(self.create(path))
    }
}

/// Files in a `.tar.gz` written to `W` as they come (nothing is held but the compressor's
/// window).
pub(crate) struct TarSink<W: Write> {
    builder: tar::Builder<GzEncoder<W>>,
    mtime: u64,
}

impl<W: Write> TarSink<W> {
    /// Starts an archive on `out`; every entry gets `mtime` (seconds since the epoch).
    pub(crate) fn new(out: W, mtime: u64) -> TarSink<W> {
        TarSink {
            builder: tar::Builder::new(GzEncoder::new(out, Compression::default())),
            mtime,
        }
    }

    /// Ends the archive and returns the writer.
    pub(crate) fn finish(self) -> io::Result<W> {
        self.builder.into_inner()?.finish()
    }
}

impl<W: Write> Sink for TarSink<W> {
    fn put(&mut self, path: &str, bytes: &[u8]) -> io::Result<()> {
        append(&mut self.builder, checked(path)?, bytes, self.mtime)
    }

    fn put_reader(&mut self, path: &str, size: u64, reader: &mut dyn Read) -> io::Result<()> {
        let mut header = tar::Header::new_gnu();
        header.set_size(size);
        header.set_mode(0o644);
        header.set_mtime(self.mtime);
        header.set_entry_type(tar::EntryType::Regular);
        self.builder
            .append_data(&mut header, checked(path)?, reader.take(size))
    }
}

/// Why an export could not be put in place.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// The target exists and replacing it was not asked for.
    #[error("{} exists; use --force to replace it", .0.display())]
    Exists(PathBuf),
    /// A file system operation failed; nothing was left behind.
    #[error("{what} {}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// Where.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
}

/// Whether an export is a folder or one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// A folder, created empty for the builder.
    Folder,
    /// A file, which the builder creates.
    File,
}

/// Builds an export at `out` atomically: `build` writes into a temporary path beside `out`
/// (same file system), which is renamed to `out` only when it succeeded; on failure the
/// temporary path is removed, so a failed export leaves nothing. An existing `out` is refused
/// unless `force`, and then replaced only once the new export is complete. `build`'s own error
/// is returned as it is.
pub(crate) fn publish_atomically<T, E: From<PublishError>>(
    out: &Path,
    force: bool,
    target: Target,
    build: impl FnOnce(&Path) -> Result<T, E>,
) -> Result<T, E> {
    let exists = out.symlink_metadata().is_ok();
    if exists && !force {
        return Err(PublishError::Exists(out.to_owned()).into());
    }
    let name = out
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "export".to_owned());
    let parent = match out.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => PathBuf::from("."),
    };
    let io = |what, path: &Path| {
        let path = path.to_owned();
        move |source| PublishError::Io { what, path, source }
    };
    fs::create_dir_all(&parent).map_err(io("cannot create", &parent))?;
    let temporary = parent.join(format!(".{name}.partial-{}", std::process::id()));
    remove(&temporary);
    if target == Target::Folder {
        fs::create_dir(&temporary).map_err(io("cannot create", &temporary))?;
    }
    let value = match build(&temporary) {
        Ok(value) => value,
        Err(error) => {
            remove(&temporary);
            return Err(error);
        }
    };
    let old = parent.join(format!(".{name}.old-{}", std::process::id()));
    if exists && let Err(error) = fs::rename(out, &old) {
        remove(&temporary);
        return Err(io("cannot move aside", out)(error).into());
    }
    if let Err(error) = fs::rename(&temporary, out) {
        remove(&temporary);
        if exists {
            let _ = fs::rename(&old, out);
        }
        return Err(io("cannot rename into place", out)(error).into());
    }
    if exists {
        remove(&old);
    }
    Ok(value)
}

/// Removes a file or a folder, if there is one.
fn remove(path: &Path) {
    match path.symlink_metadata() {
        Ok(meta) if meta.is_dir() => {
            let _ = fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = fs::remove_file(path);
        }
        Err(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A build's own error, or the publishing's.
    #[derive(Debug)]
    enum Failed {
        Build,
        Publish(PublishError),
    }

    impl From<PublishError> for Failed {
        fn from(error: PublishError) -> Failed {
            Failed::Publish(error)
        }
    }

    fn written(result: std::io::Result<()>) -> Result<(), Failed> {
        result.map_err(|_| Failed::Build)
    }

    #[test]
    fn a_failed_build_leaves_nothing_and_an_existing_target_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let failed = publish_atomically(&out, false, Target::Folder, |tmp| {
            fs::write(tmp.join("half"), b"x").unwrap();
            Err::<(), _>(Failed::Build)
        });
        assert!(matches!(failed, Err(Failed::Build)));
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);

        publish_atomically(&out, false, Target::Folder, |tmp| {
            written(fs::write(tmp.join("a"), b"1"))
        })
        .unwrap();
        let refused = publish_atomically(&out, false, Target::Folder, |_| Ok::<(), Failed>(()));
        assert!(matches!(
            refused,
            Err(Failed::Publish(PublishError::Exists(_)))
        ));
        let failed =
            publish_atomically(&out, true, Target::Folder, |_| Err::<(), _>(Failed::Build));
        assert!(failed.is_err());
        assert_eq!(fs::read(out.join("a")).unwrap(), b"1");

        publish_atomically(&out, true, Target::Folder, |tmp| {
            written(fs::write(tmp.join("b"), b"2"))
        })
        .unwrap();
        assert!(!out.join("a").exists());
        assert_eq!(fs::read(out.join("b")).unwrap(), b"2");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn unsafe_paths_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut sink = DirSink::new(dir.path());
        assert!(sink.put("../escape", b"x").is_err());
        assert!(sink.put("/abs", b"x").is_err());
        sink.put("a/b.txt", b"x").unwrap();
    }
}
