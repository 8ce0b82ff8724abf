//! Content-addressed file storage in the data directory: `blobs/ab/abcdef…` holds the bytes
//! whose SHA-256 is `abcdef…`.
//!
//! The crawler keeps here every artifact and skill file it fetched (SKILL.md, archives, the
//! files of unpacked archives, prefetched `files[]`, cached index bodies), so that
//! - a v0.2 entry whose published digest is already here is not downloaded again (the
//!   specification's "use digests for caching");
//! - a `304 Not Modified` or a fresh cache entry can be answered from disk;
//! - the directory server and exports can hand out a skill's files without fetching anything.
//!
//! Writes go to a temporary file that is renamed into place, so a reader never sees half a
//! blob, and reads check the digest, so a damaged blob is never served. The same bytes are
//! stored once.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use formats::Digest;

/// The folder inside the data directory.
pub const BLOBS_DIR: &str = "blobs";

/// The largest blob any backend stores: the largest thing the crawler keeps, an archive's
/// unpacked files (each is at most their total) or the archive itself.
pub const MAX_BLOB_BYTES: usize = {
    let unpacked = formats::archive::MAX_UNPACKED_BYTES as usize;
    let archive = formats::normalize::MAX_ARCHIVE_BYTES;
    if unpacked > archive {
        unpacked
    } else {
        archive
    }
};

/// Refuses bytes over [`MAX_BLOB_BYTES`], as every backend does.
pub(crate) fn check_size(bytes: &[u8]) -> std::io::Result<()> {
    if bytes.len() > MAX_BLOB_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "a blob of {} bytes is over the limit of {MAX_BLOB_BYTES} bytes",
                bytes.len()
            ),
        ));
    }
    Ok(())
}

/// A content-addressed store of byte strings. Blocking; async code goes through [`Blobs`].
pub trait BlobStore: Send + Sync + std::fmt::Debug {
    /// Returns the digest of every stored blob, in no order (`skillscout backup`). Only the
    /// file store lists; another backend is backed up with its own tools.
    fn digests(&self) -> std::io::Result<Vec<Digest>> {
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "this blob store is not listed: back it up with its database's tools",
        ))
    }

    /// Returns true when the bytes with `digest` are stored.
    fn contains(&self, digest: &Digest) -> bool;

    /// Returns the bytes with `digest`, if stored and intact: bytes that no longer match
    /// their digest (disk corruption, a hand edit) are treated as absent.
    fn get(&self, digest: &Digest) -> std::io::Result<Option<Vec<u8>>>;

    /// Stores `bytes` and returns their digest. Storing bytes already present is cheap.
    /// Bytes over [`MAX_BLOB_BYTES`] are refused (`InvalidInput`).
    fn put(&self, bytes: &[u8]) -> std::io::Result<Digest>;
}

/// The blobs: a cheap-to-clone handle on a [`BlobStore`] whose `async` methods run on the
/// blocking pool (hashing and writing a 32 MiB archive must not hold an async worker).
#[derive(Debug, Clone)]
pub struct Blobs {
    backend: Arc<dyn BlobStore>,
}

impl Blobs {
    /// Opens (creating it if needed) the file blob store inside `data_dir`.
    pub fn open(data_dir: &Path) -> std::io::Result<Blobs> {
        Ok(Blobs::from_backend(Arc::new(FileBlobs::open(data_dir)?)))
    }

    /// Returns a handle on `backend`.
    pub fn from_backend(backend: Arc<dyn BlobStore>) -> Blobs {
        Blobs { backend }
    }

    /// Returns the backend, for code that runs on a blocking thread already.
    pub fn blocking(&self) -> &dyn BlobStore {
        self.backend.as_ref()
    }

    /// Returns true when the bytes with `digest` are stored.
    pub async fn contains(&self, digest: &Digest) -> bool {
        let (backend, digest) = (Arc::clone(&self.backend), *digest);
        tokio::task::spawn_blocking(move || backend.contains(&digest))
            .await
            .unwrap_or(false)
    }

    /// Returns the bytes with `digest`, if stored and intact.
    pub async fn get(&self, digest: &Digest) -> std::io::Result<Option<Vec<u8>>> {
        let (backend, digest) = (Arc::clone(&self.backend), *digest);
        tokio::task::spawn_blocking(move || backend.get(&digest))
            .await
            .map_err(std::io::Error::other)?
    }

    /// Stores `bytes` and returns their digest.
    pub async fn put(&self, bytes: Vec<u8>) -> std::io::Result<Digest> {
        let backend = Arc::clone(&self.backend);
        tokio::task::spawn_blocking(move || backend.put(&bytes))
            .await
            .map_err(std::io::Error::other)?
    }
}

/// Blobs as files: `blobs/ab/abcdef…` in the data directory.
#[derive(Debug, Clone)]
pub struct FileBlobs {
    root: PathBuf,
}

impl FileBlobs {
    /// Opens (creating it if needed) the store inside `data_dir`.
    pub fn open(data_dir: &Path) -> std::io::Result<FileBlobs> {
        let root = data_dir.join(BLOBS_DIR);
        fs::create_dir_all(&root)?;
        Ok(FileBlobs { root })
    }

    fn path(&self, digest: &Digest) -> PathBuf {
        let hex = digest.hex();
        self.root.join(&hex[..2]).join(hex)
    }
}

impl BlobStore for FileBlobs {
    fn digests(&self) -> std::io::Result<Vec<Digest>> {
        let mut digests = Vec::new();
        for folder in fs::read_dir(&self.root)? {
            let folder = folder?;
            if !folder.file_type()?.is_dir() {
                continue;
            }
            for file in fs::read_dir(folder.path())? {
                let file = file?;
                // Temporary files of writes in progress are not blobs yet.
                if let Some(digest) = file.file_name().to_str().and_then(Digest::from_hex) {
                    digests.push(digest);
                }
            }
        }
        Ok(digests)
    }

    fn contains(&self, digest: &Digest) -> bool {
        self.path(digest).is_file()
    }

    fn get(&self, digest: &Digest) -> std::io::Result<Option<Vec<u8>>> {
        match fs::read(self.path(digest)) {
            Ok(bytes) if Digest::of(&bytes) == *digest => Ok(Some(bytes)),
            Ok(_) => Ok(None),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error),
        }
    }

    fn put(&self, bytes: &[u8]) -> std::io::Result<Digest> {
        check_size(bytes)?;
        let digest = Digest::of(bytes);
        let path = self.path(&digest);
        if path.is_file() {
            return Ok(digest);
        }
        let folder = path.parent().unwrap_or(&self.root);
        fs::create_dir_all(folder)?;
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let temporary = folder.join(format!(
            ".tmp-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        // No fsync: a blob torn by a power loss fails the digest check in `get` and counts as
        // absent, so it is fetched again; every blob is a cache of something published.
        let written = fs::File::create(&temporary).and_then(|mut file| file.write_all(bytes));
        if let Err(error) = written.and_then(|()| fs::rename(&temporary, &path)) {
            let _ = fs::remove_file(&temporary);
            return Err(error);
        }
        Ok(digest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_by_digest_and_detects_corruption() {
        let dir = std::env::temp_dir().join(format!("skillscout-blobs-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let blobs = FileBlobs::open(&dir).unwrap();
        let digest = blobs.put(b"hello").unwrap();
        assert_eq!(digest, Digest::of(b"hello"));
        assert!(blobs.contains(&digest));
        assert_eq!(blobs.get(&digest).unwrap().as_deref(), Some(&b"hello"[..]));
        assert_eq!(blobs.put(b"hello").unwrap(), digest);
        assert_eq!(blobs.get(&Digest::of(b"other")).unwrap(), None);
        fs::write(blobs.path(&digest), b"tampered").unwrap();
        assert_eq!(blobs.get(&digest).unwrap(), None);
        let _ = fs::remove_dir_all(&dir);
    }
}
