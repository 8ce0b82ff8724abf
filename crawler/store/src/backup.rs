//! Backups of an embedded data directory: one `.tar.gz` holding a consistent snapshot of the
//! crawl store (one read transaction, taken while writers go on), every blob, and last a
//! manifest. The search index is left out: it is a view of the store, rebuilt from it on restore.
//!
//! Blobs are immutable once stored and are written before the records that name them, so
//! every blob a snapshot's records name is on disk when the blobs are listed after it; blobs
//! stored later are harmless extras.

use std::io::{Read, Write};
use std::path::Path;

use formats::Digest;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::Backend;
use crate::blobs::{BLOBS_DIR, BlobStore, FileBlobs, MAX_BLOB_BYTES};
use crate::embedded::STORE_FILE;

/// The manifest's name in the archive; it comes last.
pub const MANIFEST: &str = "skillscout-backup.json";
/// The archive format this skillscout writes and reads.
pub const FORMAT: u32 = 1;

/// What a backup holds, as its manifest says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The archive format ([`FORMAT`]).
    pub format: u32,
    /// The skillscout version that wrote it.
    pub version: String,
    /// When the store's snapshot was taken.
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// Records in the store, tombstones included.
    pub records: u64,
    /// Blobs in the archive.
    pub blobs: u64,
}

/// Why a backup or a restore failed.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    /// The store could not be snapshotted.
    #[error(transparent)]
    Store(#[from] crate::StoreError),
    /// Reading or writing failed.
    #[error("{context}: {error}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        error: std::io::Error,
    },
    /// The archive is not a backup this skillscout can restore.
    #[error("not a usable skillscout backup: {0}")]
    Invalid(String),
}

fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> BackupError {
    let context = context.into();
    move |error| BackupError::Io { context, error }
}

/// Writes a backup of `store` and `blobs` to `out` as a `.tar.gz`; the store's snapshot is
/// spooled in `spool` (a folder) first. Returns its manifest.
pub fn write(
    store: &dyn Backend,
    blobs: &dyn BlobStore,
    spool: &Path,
    version: &str,
    out: impl Write,
) -> Result<Manifest, BackupError> {
    let folder = tempfile_in(spool)?;
    let snapshot = folder.path().join(STORE_FILE);
    let created_at = OffsetDateTime::now_utc();
    let records = store.snapshot(&snapshot)?;
    let digests = blobs.digests().map_err(io("cannot list the blobs"))?;
    let mut archive = tar::Builder::new(flate2::write::GzEncoder::new(
        out,
        flate2::Compression::default(),
    ));
    let mtime = u64::try_from(created_at.unix_timestamp()).unwrap_or(0);
    // Streamed from the spooled file: the store may be larger than memory.
    let file = std::fs::File::open(&snapshot).map_err(io("cannot read the store's snapshot"))?;
    let size = file
        .metadata()
        .map_err(io("cannot read the store's snapshot"))?
        .len();
    let mut header = tar::Header::new_gnu();
    header.set_size(size);
    header.set_mode(0o644);
    header.set_mtime(mtime);
    header.set_entry_type(tar::EntryType::Regular);
    archive
        .append_data(&mut header, STORE_FILE, file)
        .map_err(io("cannot write the backup"))?;
    let mut written = 0u64;
    for digest in &digests {
        let Some(bytes) = blobs
            .get(digest)
            .map_err(io(format!("cannot read blob {}", digest.hex())))?
        else {
            // Damaged on disk (it fails its digest): a cache entry the next crawl fetches
            // again, not worth failing the backup for.
            tracing::warn!(blob = %digest.hex(), "a damaged blob is left out of the backup");
            continue;
        };
        let hex = digest.hex();
        append(
            &mut archive,
            &format!("{BLOBS_DIR}/{}/{hex}", &hex[..2]),
            &bytes,
            mtime,
        )?;
        written += 1;
    }
    // Last, so that it counts exactly what the archive holds; a restore checks it.
    let manifest = Manifest {
        format: FORMAT,
        version: version.to_owned(),
        created_at,
        records,
        blobs: written,
    };
    let manifest_bytes =
        serde_json::to_vec_pretty(&manifest).map_err(|e| BackupError::Invalid(e.to_string()))?;
    append(&mut archive, MANIFEST, &manifest_bytes, mtime)?;
    let encoder = archive
        .into_inner()
        .map_err(io("cannot write the backup"))?;
    encoder.finish().map_err(io("cannot write the backup"))?;
    Ok(manifest)
}

fn append<W: Write>(
    archive: &mut tar::Builder<W>,
    path: &str,
    bytes: &[u8],
    mtime: u64,
) -> Result<(), BackupError> {
    let mut header = tar::Header::new_gnu();
    header.set_size(bytes.len() as u64);
    header.set_mode(0o644);
    header.set_mtime(mtime);
    header.set_entry_type(tar::EntryType::Regular);
    archive
        .append_data(&mut header, path, bytes)
        .map_err(io("cannot write the backup"))
}

/// A temporary folder inside `parent`, removed when dropped.
struct TempFolder(std::path::PathBuf);

impl TempFolder {
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tempfile_in(parent: &Path) -> Result<TempFolder, BackupError> {
    let nanos = OffsetDateTime::now_utc().unix_timestamp_nanos();
    let path = parent.join(format!(".backup-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&path).map_err(io(format!("cannot create {}", path.display())))?;
    Ok(TempFolder(path))
}

/// Restores the backup read from `archive` into `data_dir`, which should be new or empty:
/// the store file and the blobs (each checked against its digest). Returns the manifest; the
/// caller rebuilds the search index from the restored store.
pub fn restore(archive: impl Read, data_dir: &Path) -> Result<Manifest, BackupError> {
    std::fs::create_dir_all(data_dir)
        .map_err(io(format!("cannot create {}", data_dir.display())))?;
    let blobs = FileBlobs::open(data_dir).map_err(io("cannot create the blob store"))?;
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(archive));
    let mut manifest: Option<Manifest> = None;
    let mut store_restored = false;
    let mut blob_count = 0u64;
    for entry in archive.entries().map_err(io("cannot read the backup"))? {
        let mut entry = entry.map_err(io("cannot read the backup"))?;
        let path = entry
            .path()
            .map_err(io("cannot read the backup"))?
            .to_string_lossy()
            .into_owned();
        let size = entry.size();
        if path == MANIFEST {
            let mut bytes = Vec::new();
            entry
                .by_ref()
                .take(1024 * 1024)
                .read_to_end(&mut bytes)
                .map_err(io("cannot read the manifest"))?;
            let read: Manifest = serde_json::from_slice(&bytes)
                .map_err(|error| BackupError::Invalid(format!("its manifest: {error}")))?;
            manifest = Some(read);
        } else if path == STORE_FILE {
            let target = data_dir.join(STORE_FILE);
            let mut file = std::fs::File::create(&target)
                .map_err(io(format!("cannot create {}", target.display())))?;
            std::io::copy(&mut entry, &mut file)
                .map_err(io(format!("cannot write {}", target.display())))?;
            file.sync_all()
                .map_err(io(format!("cannot write {}", target.display())))?;
            store_restored = true;
        } else if let Some(hex) = blob_name(&path) {
            if size > MAX_BLOB_BYTES as u64 {
                return Err(BackupError::Invalid(format!(
                    "{path} is over the blob size limit"
                )));
            }
            let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
            entry
                .read_to_end(&mut bytes)
                .map_err(io(format!("cannot read {path}")))?;
            let digest = blobs
                .put(&bytes)
                .map_err(io(format!("cannot write {path}")))?;
            if digest.hex() != hex {
                return Err(BackupError::Invalid(format!(
                    "{path} does not match its digest (the archive is damaged)"
                )));
            }
            blob_count += 1;
        } else {
            return Err(BackupError::Invalid(format!("unexpected entry {path:?}")));
        }
    }
    // The manifest comes last: without it the archive was cut short.
    let manifest = manifest.ok_or_else(|| {
        BackupError::Invalid(format!("it has no {MANIFEST} (the archive is cut short?)"))
    })?;
    if manifest.format != FORMAT {
        return Err(BackupError::Invalid(format!(
            "format {} (this skillscout restores format {FORMAT})",
            manifest.format
        )));
    }
    if !store_restored {
        return Err(BackupError::Invalid(format!("it holds no {STORE_FILE}")));
    }
    if blob_count != manifest.blobs {
        return Err(BackupError::Invalid(format!(
            "it holds {blob_count} blobs where its manifest says {} (the archive is cut short?)",
            manifest.blobs
        )));
    }
    Ok(manifest)
}

/// Returns the hex digest of a blob's path in the archive (`blobs/ab/abcdef…`), if it is one.
fn blob_name(path: &str) -> Option<&str> {
    let rest = path.strip_prefix(BLOBS_DIR)?.strip_prefix('/')?;
    let (folder, hex) = rest.split_once('/')?;
    let digest = Digest::from_hex(hex)?;
    (folder.len() == 2 && hex.starts_with(folder) && digest.hex() == hex).then_some(hex)
}
