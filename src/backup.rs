//! `skillscout backup` and `skillscout restore`: a data directory with the embedded store as
//! one `.tar.gz` (a consistent snapshot of the crawl store, the blobs and a manifest; see
//! `store::backup`), taken directly or, while `serve` holds the directory, through its admin
//! API; and back into a new data directory, whose search index is rebuilt from the store.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use store::blobs::Blobs;
use store::{Store, StoreError};

use crate::cli::{BackupArgs, RestoreArgs};
use crate::frontdoor::Frontdoor;
use crate::{ExitStatus, usage};

/// Runs `skillscout backup`.
pub(crate) fn backup(
    data: &Path,
    location: Option<&str>,
    args: &BackupArgs,
) -> anyhow::Result<ExitStatus> {
    if location.is_some_and(|location| !location.trim().is_empty()) {
        return Err(usage(anyhow!(
            "a PostgreSQL store (--store) is backed up with pg_dump, not skillscout backup: see \
             docs/operate.md"
        )));
    }
    if args.out.exists() && !args.force {
        return Err(usage(anyhow!(
            "{} exists: choose another --out, or pass --force to replace it",
            args.out.display()
        )));
    }
    let partial = partial_path(&args.out);
    let written = write_backup(data, args, &partial);
    match written {
        Ok(summary) => {
            std::fs::rename(&partial, &args.out).with_context(|| {
                format!(
                    "cannot move the backup into place at {}",
                    args.out.display()
                )
            })?;
            crate::serve::announce(&format!("{summary} to {}", args.out.display()))?;
            Ok(ExitStatus::Success)
        }
        Err(error) => {
            let _ = std::fs::remove_file(&partial);
            Err(error)
        }
    }
}

/// Writes the backup into `partial`; returns the summary line.
fn write_backup(data: &Path, args: &BackupArgs, partial: &Path) -> anyhow::Result<String> {
    let mut file = std::fs::File::create(partial)
        .with_context(|| format!("cannot create {}", partial.display()))?;
    let summary = match Frontdoor::open(data, None, &args.admin, None)? {
        Frontdoor::Store { store, data, .. } => {
            let blobs = Blobs::open(&data)
                .with_context(|| format!("cannot open the blob store in {}", data.display()))?;
            let manifest = store::backup::write(
                store.blocking(),
                blobs.blocking(),
                &data,
                env!("CARGO_PKG_VERSION"),
                std::io::BufWriter::new(&mut file),
            )
            .context("the backup failed")?;
            format!(
                "backed up {} records and {} blobs",
                manifest.records, manifest.blobs
            )
        }
        Frontdoor::Admin { client, runtime } => {
            let mut out = std::io::BufWriter::new(&mut file);
            let bytes = runtime
                .block_on(client.backup(&mut out))
                .context("the backup through the server's admin API failed")?;
            out.flush().context("cannot write the backup")?;
            drop(out);
            // The manifest comes last: reading it back checks the archive is whole.
            let manifest = read_manifest(partial)?;
            format!(
                "backed up {} records and {} blobs ({bytes} bytes, through the running server)",
                manifest.records, manifest.blobs
            )
        }
    };
    file.sync_all().context("cannot write the backup")?;
    Ok(summary)
}

/// Reads the manifest of a backup file, checking the archive is whole.
fn read_manifest(path: &Path) -> anyhow::Result<store::backup::Manifest> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut manifest = None;
    for entry in archive.entries().context("the backup is damaged")? {
        let mut entry = entry.context("the backup is damaged")?;
        let is_manifest = entry
            .path()
            .is_ok_and(|p| p == Path::new(store::backup::MANIFEST));
        if is_manifest {
            manifest = Some(
                serde_json::from_reader(&mut entry).context("the backup's manifest is damaged")?,
            );
        } else {
            std::io::copy(&mut entry, &mut std::io::sink()).context("the backup is damaged")?;
        }
    }
    manifest.ok_or_else(|| anyhow!("the backup has no manifest: it was cut short"))
}

/// Runs `skillscout restore`.
pub(crate) fn restore(
    data: &Path,
    model: Option<std::sync::Arc<dyn indexer::Embed>>,
    args: &RestoreArgs,
    bar: &crate::progress::ActiveBar,
) -> anyhow::Result<ExitStatus> {
    let archive = std::fs::File::open(&args.file)
        .with_context(|| format!("cannot open {}", args.file.display()))
        .map_err(usage)?;
    let occupied = std::fs::read_dir(data).is_ok_and(|mut entries| entries.next().is_some());
    if occupied {
        // Never under a running process, --force or not.
        match Store::open(data) {
            Err(StoreError::InUse { .. }) => {
                return Err(anyhow!(
                    "the data directory {} is in use by a running skillscout: stop it first, \
                     and restore into a new directory",
                    data.display()
                ));
            }
            Ok(store) => drop(store),
            Err(_) => {}
        }
        if !args.force {
            return Err(usage(anyhow!(
                "the data directory {} is not empty: restore into a new directory (--data \
                 NEW_DIR), or pass --force to replace what it holds",
                data.display()
            )));
        }
    }
    let staging = sibling(data, "restoring")?;
    let _ = std::fs::remove_dir_all(&staging);
    let restored = restore_into(&staging, archive, model, bar);
    let (manifest, indexed) = match restored {
        Ok(restored) => restored,
        Err(error) => {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(error);
        }
    };
    // Swap the restored directory into place; what it replaces goes only once it is there.
    let replaced = if data.exists() {
        let aside = sibling(data, "replaced")?;
        std::fs::rename(data, &aside)
            .with_context(|| format!("cannot move {} aside", data.display()))?;
        Some(aside)
    } else {
        None
    };
    if let Err(error) = std::fs::rename(&staging, data) {
        if let Some(aside) = &replaced {
            let _ = std::fs::rename(aside, data);
        }
        return Err(anyhow::Error::new(error).context(format!(
            "cannot move the restored directory to {}",
            data.display()
        )));
    }
    if let Some(aside) = replaced {
        let _ = std::fs::remove_dir_all(aside);
    }
    let taken = manifest
        .created_at
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    crate::serve::announce(&format!(
        "restored {} records and {} blobs (backed up {taken}) into {}; index rebuilt: \
         {indexed} records",
        manifest.records,
        manifest.blobs,
        data.display()
    ))?;
    Ok(ExitStatus::Success)
}

/// Restores into `staging` and rebuilds its index; returns the manifest and the records the
/// index got.
fn restore_into(
    staging: &Path,
    archive: std::fs::File,
    model: Option<std::sync::Arc<dyn indexer::Embed>>,
    bar: &crate::progress::ActiveBar,
) -> anyhow::Result<(store::backup::Manifest, u64)> {
    let manifest = store::backup::restore(std::io::BufReader::new(archive), staging)
        .context("the restore failed")?;
    let store = Store::open(staging).context("the restored store does not open")?;
    let stats = crate::crawl::rebuild_index(staging, &store, model, bar)?;
    Ok((manifest, stats.upserted as u64))
}

/// Returns `PATH.what-PID` beside `path`.
fn sibling(path: &Path, what: &str) -> anyhow::Result<PathBuf> {
    let name = path
        .file_name()
        .ok_or_else(|| usage(anyhow!("--data {} names no directory", path.display())))?;
    let mut sibling = name.to_os_string();
    sibling.push(format!(".{what}-{}", std::process::id()));
    Ok(path.with_file_name(sibling))
}

/// Returns `FILE.partial` beside `out`.
fn partial_path(out: &Path) -> PathBuf {
    let mut name = out.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    out.with_file_name(name)
}
