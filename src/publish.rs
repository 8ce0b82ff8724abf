//! The server's [`api::Prober`]: the directory reads publishers' sites (IndexNow key files,
//! the probe of a submitted site) through the crawler, with the serving process's fetch
//! settings, so the address guard, `--resolve`, robots.txt and the hosts' turns apply as they
//! do to the background crawl.

use std::sync::Arc;

use api::{KeyCheck, Prober};
use crawler::crawl::{CrawlConfig, CrawlObserver, Feed};
use crawler::fetch::HttpCache;
use crawler::publish::KeyReader;
use formats::seeds::SeedTarget;
use futures_util::future::BoxFuture;
use tokio::sync::Notify;
use url::Url;

use crate::crawl::worker_name;

/// Reads key files and probes submitted sites for the server.
#[derive(Clone)]
pub(crate) struct CrawlerProber {
    keys: Arc<KeyReader>,
    /// How a probe crawls (the fetch settings share the hosts' turns with the server's).
    config: CrawlConfig,
    cache: HttpCache,
    /// Woken when a probe stored records (the server syncs its index).
    stored: Arc<Notify>,
}

impl std::fmt::Debug for CrawlerProber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrawlerProber").finish_non_exhaustive()
    }
}

impl CrawlerProber {
    /// Returns a prober that crawls with `config` (its fetch settings shared with the
    /// background crawl's) into `cache`'s store and blobs, and wakes `stored` when it stored
    /// records.
    pub(crate) fn new(
        config: CrawlConfig,
        cache: HttpCache,
        stored: Arc<Notify>,
    ) -> Result<CrawlerProber, String> {
        Ok(CrawlerProber {
            keys: Arc::new(KeyReader::new(config.fetch.clone(), Some(cache.clone()))?),
            config,
            cache,
            stored,
        })
    }
}

/// A probe reports nothing but that it stored records, so that the server syncs its index
/// as they land (a submitted site's records are awaited).
struct Syncs(Arc<Notify>);

impl CrawlObserver for Syncs {
    fn stored(&self, _last_seq: u64) {
        self.0.notify_one();
    }
}

impl Prober for CrawlerProber {
    fn check_key(&self, key_url: Url, key: String) -> BoxFuture<'static, KeyCheck> {
        let keys = Arc::clone(&self.keys);
        Box::pin(async move {
            match keys.check(&key_url, &key).await {
                Ok(()) => KeyCheck::Valid,
                Err(why) => {
                    tracing::info!(%key_url, %why, "IndexNow key refused");
                    KeyCheck::Invalid(why)
                }
            }
        })
    }

    fn probe(&self, target: String) -> BoxFuture<'static, Result<(), String>> {
        let config = self.config.clone();
        let cache = self.cache.clone();
        let stored = Arc::clone(&self.stored);
        Box::pin(async move {
            let target = SeedTarget::parse(&target)?;
            let feed = Feed::targets(vec![target], worker_name());
            crawler::crawl::crawl_work(
                config,
                feed,
                cache.store,
                cache.blobs,
                Arc::new(Syncs(stored)),
                std::future::pending::<()>(),
            )
            .await
            .map(|_| ())
            .map_err(|error| error.to_string())
        })
    }

    fn allows_private(&self) -> bool {
        self.config.fetch.allow_private
    }
}
