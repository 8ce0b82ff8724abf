//! Content-addressed bytes in PostgreSQL: the `blobs` table, keyed by the SHA-256 in hex.

use std::sync::Arc;

use formats::Digest;
use tokio_postgres::types::Type;

use super::pool::Engine;
use crate::blobs::{BlobStore, check_size};
use crate::types::StoreError;

/// The blobs in a PostgreSQL database, beside the crawl state ([`super::PostgresStore::blobs`]).
#[derive(Debug, Clone)]
pub struct PostgresBlobs {
    engine: Arc<Engine>,
}

impl PostgresBlobs {
    pub(super) fn new(engine: Arc<Engine>) -> PostgresBlobs {
        PostgresBlobs { engine }
    }
}

impl BlobStore for PostgresBlobs {
    /// Returns false, with a warning, when the database cannot answer: the caller then
    /// fetches the bytes again, which is what it does for any absent blob.
    fn contains(&self, digest: &Digest) -> bool {
        let hex = digest.hex();
        let found = self.engine.read(move |pool| {
            let hex = hex.clone();
            async move {
                let client = pool.get().await?;
                let row = client
                    .query_typed_opt(
                        "SELECT 1 FROM blobs WHERE digest = $1",
                        &[(&hex, Type::TEXT)],
                    )
                    .await
                    .map_err(|error| pool.error(&error))?;
                Ok(row.is_some())
            }
        });
        found.unwrap_or_else(|error| {
            tracing::warn!(%digest, %error, "cannot look up a blob");
            false
        })
    }

    /// Bytes that no longer match their digest are treated as absent, as on disk.
    fn get(&self, digest: &Digest) -> std::io::Result<Option<Vec<u8>>> {
        let hex = digest.hex();
        let bytes = self
            .engine
            .read(move |pool| {
                let hex = hex.clone();
                async move {
                    let client = pool.get().await?;
                    let row = client
                        .query_typed_opt(
                            "SELECT bytes FROM blobs WHERE digest = $1",
                            &[(&hex, Type::TEXT)],
                        )
                        .await
                        .map_err(|error| pool.error(&error))?;
                    row.map(|row| pool.column::<Vec<u8>>(&row, 0)).transpose()
                }
            })
            .map_err(std::io::Error::other)?;
        Ok(bytes.filter(|bytes| Digest::of(bytes) == *digest))
    }

    /// Sends the bytes only when the digest is not stored yet.
    fn put(&self, bytes: &[u8]) -> std::io::Result<Digest> {
        check_size(bytes)?;
        let digest = Digest::of(bytes);
        if self.contains(&digest) {
            return Ok(digest);
        }
        let hex = digest.hex();
        let bytes = bytes.to_vec();
        self.engine
            .write(move |pool| async move {
                let client = pool.get().await?;
                client
                    .execute_typed(
                        "INSERT INTO blobs (digest, bytes) VALUES ($1, $2) \
                         ON CONFLICT (digest) DO NOTHING",
                        &[(&hex, Type::TEXT), (&bytes, Type::BYTEA)],
                    )
                    .await
                    .map_err(|error| pool.error(&error))?;
                Ok::<_, StoreError>(())
            })
            .map_err(std::io::Error::other)?;
        Ok(digest)
    }
}
