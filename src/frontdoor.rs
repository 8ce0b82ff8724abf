//! How a command that changes the frontier reaches it: the store itself, or, when a running
//! `serve` holds the embedded store (redb lets one process at a time open it), that server's
//! admin API, found through the `serve.json` it writes in the data directory.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use crawler::fetch::admin::AdminClient;
use serde::{Deserialize, Serialize};
use store::{
    AddMode, AddStats, Delisted, FrontierEntry, ListFilter, NewTarget, RemoveStats, Store,
    StoreError,
};
use url::Url;

use crate::cli::AdminArgs;

/// The file a server writes in its data directory: how to reach it.
pub(crate) const SERVE_FILE: &str = "serve.json";

/// What `serve.json` says.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct ServeFile {
    /// The server's process id.
    pub(crate) pid: u32,
    /// Where it listens (its address, not a public URL behind a proxy).
    pub(crate) url: Url,
    /// Whether its admin API is on (`--admin-token-file`).
    pub(crate) admin: bool,
}

impl ServeFile {
    /// Writes the file into `data`; the returned guard removes it when dropped.
    pub(crate) fn write(data: &Path, file: &ServeFile) -> anyhow::Result<ServeFileGuard> {
        let path = data.join(SERVE_FILE);
        let text = serde_json::to_vec_pretty(file).context("cannot encode serve.json")?;
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(ServeFileGuard(path))
    }

    /// Reads the file in `data`, if there is one.
    fn read(data: &Path) -> Option<ServeFile> {
        let text = std::fs::read(data.join(SERVE_FILE)).ok()?;
        serde_json::from_slice(&text).ok()
    }
}

/// Removes `serve.json` when the server stops.
pub(crate) struct ServeFileGuard(PathBuf);

impl Drop for ServeFileGuard {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The frontier, reached one way or the other.
pub(crate) enum Frontdoor {
    /// The store, opened here; `data` is where its index lives.
    Store {
        /// The store.
        store: Arc<Store>,
        /// The data directory.
        data: PathBuf,
        /// The semantic model, for the index sync after a delisting.
        model: Option<Arc<dyn indexer::Embed>>,
    },
    /// A running server's admin API.
    Admin {
        /// The client.
        client: AdminClient,
        /// The runtime its calls run on.
        runtime: tokio::runtime::Runtime,
    },
}

impl Frontdoor {
    /// Opens the store at `location` (the embedded one in `data` by default), or, given
    /// `--admin-url` or when a server holds the embedded store, that server's admin API.
    pub(crate) fn open(
        data: &Path,
        location: Option<&str>,
        admin: &AdminArgs,
        model: Option<Arc<dyn indexer::Embed>>,
    ) -> anyhow::Result<Frontdoor> {
        if let Some(url) = &admin.admin_url {
            return Frontdoor::admin(url.clone(), admin);
        }
        let embedded = location.is_none_or(|location| location.trim().is_empty());
        match store::open(location, data) {
            Ok((store, _blobs)) => Ok(Frontdoor::Store {
                store: Arc::new(store),
                data: data.to_owned(),
                model,
            }),
            Err(StoreError::InUse { .. }) if embedded => {
                let Some(server) = ServeFile::read(data) else {
                    anyhow::bail!(
                        "the data directory {} is in use by another skillscout process (a \
                         crawl?): wait for it to end, or pass --admin-url and \
                         --admin-token-file to go through a server's admin API",
                        data.display()
                    );
                };
                if !server.admin {
                    anyhow::bail!(
                        "the data directory {} is held by skillscout serve (pid {}, {}), whose \
                         admin API is off: restart it with --admin-token-file FILE, then pass \
                         the same --admin-token-file here",
                        data.display(),
                        server.pid,
                        server.url
                    );
                }
                if admin.admin_token_file.is_none() {
                    anyhow::bail!(
                        "the data directory {} is held by skillscout serve (pid {}, {}): pass \
                         --admin-token-file FILE (a file with one of its admin tokens) to go \
                         through its admin API",
                        data.display(),
                        server.pid,
                        server.url
                    );
                }
                tracing::info!(server = %server.url, pid = server.pid, "the data directory is held by a server: going through its admin API");
                Frontdoor::admin(server.url, admin)
            }
            Err(error) => Err(anyhow::Error::new(error).context(if embedded {
                format!("cannot open the data directory {}", data.display())
            } else {
                "cannot open the store given by --store".to_owned()
            })),
        }
    }

    fn admin(url: Url, admin: &AdminArgs) -> anyhow::Result<Frontdoor> {
        let Some(path) = &admin.admin_token_file else {
            anyhow::bail!(
                "--admin-url needs --admin-token-file FILE (one of the server's admin tokens)"
            );
        };
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read --admin-token-file {}", path.display()))?;
        let token = text
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty() && !line.starts_with('#'))
            .with_context(|| format!("--admin-token-file {} holds no token", path.display()))?
            .to_owned();
        let client = AdminClient::new(url, token)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the async runtime")?;
        Ok(Frontdoor::Admin { client, runtime })
    }

    /// Adds targets.
    pub(crate) fn add(&self, targets: Vec<NewTarget>, mode: AddMode) -> anyhow::Result<AddStats> {
        match self {
            Frontdoor::Store { store, .. } => {
                Ok(store.frontier().blocking().add(&targets, mode)?)
            }
            Frontdoor::Admin { client, runtime } => {
                Ok(runtime.block_on(client.add(&targets, mode))?)
            }
        }
    }

    /// Lists a page.
    pub(crate) fn list(
        &self,
        after: Option<String>,
        limit: usize,
        filter: ListFilter,
    ) -> anyhow::Result<Vec<FrontierEntry>> {
        match self {
            Frontdoor::Store { store, .. } => {
                Ok(store
                    .frontier()
                    .blocking()
                    .list(after.as_deref(), limit, filter)?)
            }
            Frontdoor::Admin { client, runtime } => {
                Ok(runtime.block_on(client.list(after.as_deref(), limit, filter))?)
            }
        }
    }

    /// Removes domains.
    pub(crate) fn remove(&self, domains: Vec<String>) -> anyhow::Result<RemoveStats> {
        match self {
            Frontdoor::Store { store, .. } => Ok(store.frontier().blocking().remove(&domains)?),
            Frontdoor::Admin { client, runtime } => Ok(runtime.block_on(client.remove(&domains))?),
        }
    }

    /// Delists a domain; with the store at hand, the search index follows at once.
    pub(crate) fn delist(&self, domain: &str, reason: &str) -> anyhow::Result<Delisted> {
        match self {
            Frontdoor::Store { store, data, model } => {
                let delisted = store.frontier().blocking().delist(domain, reason)?;
                sync_if_indexed(data, store, model.clone())?;
                Ok(delisted)
            }
            Frontdoor::Admin { client, runtime } => {
                Ok(runtime.block_on(client.delist(domain, reason))?)
            }
        }
    }

    /// Takes a domain off the deny list.
    pub(crate) fn undelist(&self, domain: &str) -> anyhow::Result<bool> {
        match self {
            Frontdoor::Store { store, .. } => Ok(store.frontier().blocking().undelist(domain)?),
            Frontdoor::Admin { client, runtime } => Ok(runtime.block_on(client.undelist(domain))?),
        }
    }
}

/// Brings the search index in `data` up to date with the store, when there is one: a
/// delisted domain's skills leave search at once, not at the next crawl.
fn sync_if_indexed(
    data: &Path,
    store: &Store,
    model: Option<Arc<dyn indexer::Embed>>,
) -> anyhow::Result<()> {
    if !data.join(indexer::INDEX_DIR).exists() {
        return Ok(());
    }
    crate::crawl::sync_index(data, store, model).map(drop)
}
