//! The server's [`api::Prober`]: the directory reads publishers' sites (IndexNow key files)
//! through the crawler's fetch layer, with the serving process's fetch settings, so the
//! address guard, `--resolve`, robots.txt and the hosts' turns apply as they do to the crawl.

use std::sync::Arc;

use api::{KeyCheck, Prober};
use crawler::fetch::{FetchSettings, HttpCache};
use crawler::publish::KeyReader;
use futures_util::future::BoxFuture;
use url::Url;

/// Reads key files for the server.
#[derive(Debug, Clone)]
pub(crate) struct CrawlerProber {
    keys: Arc<KeyReader>,
}

impl CrawlerProber {
    /// Returns a prober over `settings` (share their `hosts` with the background crawl's);
    /// `cache` lends it the robots.txt files the crawl stored.
    pub(crate) fn new(
        settings: FetchSettings,
        cache: Option<HttpCache>,
    ) -> Result<CrawlerProber, String> {
        Ok(CrawlerProber {
            keys: Arc::new(KeyReader::new(settings, cache)?),
        })
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
}
