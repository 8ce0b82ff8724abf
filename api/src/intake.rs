//! Where requests that change what the directory crawls go: the admin API's seeds, removals
//! and delistings, and the publishers' recrawl requests and IndexNow pings. The read model
//! (`directory`) only reads; this is the one place in `api` that writes, and it writes only
//! the frontier (delisting tombstones a domain's records in the same store transaction) and
//! the marks that say a domain's cached copies are out of date. Whoever owns the index writer
//! hears of each change, so a delisted domain leaves search at once.
//!
//! `api` never fetches: what must be read from a publisher's site (an IndexNow key file) is
//! read by a [`Prober`] the binary hands over, which goes through the crawler's fetch layer.

pub(crate) mod budget;
pub(crate) mod indexnow;

use std::net::IpAddr;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use formats::seeds::SeedTarget;
use futures_util::future::BoxFuture;
use store::{
    AddMode, AddStats, AddedAs, Delisted, Frontier, FrontierEntry, ListFilter, NewTarget,
    RemoveStats, Store, StoreError,
};
use time::OffsetDateTime;
use tokio::sync::Notify;
use url::Url;

use crate::error::ApiError;
use budget::{BudgetConfig, Budgets};
use indexnow::{Keys, Known, Ping};

/// How long an IndexNow ping waits for its key file to be read before it is answered 202
/// (the protocol's "key validation pending"); the read goes on, and a key it verifies makes
/// the ping count.
pub const KEY_CHECK_WAIT: Duration = Duration::from_secs(5);

/// What reading an IndexNow key file said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyCheck {
    /// The file's body is the key.
    Valid,
    /// It is not, or it could not be read (why, for the caller).
    Invalid(String),
}

/// What the directory reads from publishers' sites, through the crawler's fetch layer (the
/// address guard, robots.txt, the host's turn): the binary provides it.
pub trait Prober: Send + Sync + std::fmt::Debug {
    /// Reads the IndexNow key file at `key_url` and says whether its body is `key`.
    fn check_key(&self, key_url: Url, key: String) -> BoxFuture<'static, KeyCheck>;

    /// Crawls `target` (a seed line the frontier holds) once, now, storing what it finds as
    /// any crawl does; the error says why it could not run.
    fn probe(&self, target: String) -> BoxFuture<'static, Result<(), String>>;

    /// True when the fetch layer may reach private and reserved addresses
    /// (`--allow-private`): then IP addresses and `localhost` may be submitted.
    fn allows_private(&self) -> bool;
}

/// How long a submission waits for its probe before it is answered without the report (the
/// probe goes on; the domain's page shows the report once it lands). Under the server's
/// request timeout.
pub(crate) const PROBE_WAIT: Duration = Duration::from_secs(8);

/// What a submission came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Submitted {
    /// The probe ran: the domain's status is stored (its report is the answer); `kept` is
    /// false when it publishes nothing and left the frontier.
    Probed {
        /// The domain.
        domain: String,
        /// Whether the frontier keeps it.
        kept: bool,
    },
    /// The probe runs on past [`PROBE_WAIT`].
    Probing(String),
    /// The domain is delisted: accepted, nothing crawled.
    Delisted(String),
}

/// What an accepted recrawl request or ping did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refresh {
    /// The domain is due now.
    Due {
        /// The domain.
        domain: String,
        /// When it became due (the store's clock).
        at: OffsetDateTime,
        /// True when the frontier did not hold it: added as `submitted`.
        added: bool,
    },
    /// The domain is delisted: nothing is crawled.
    Delisted(String),
}

/// What a ping came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PingOutcome {
    /// The key is verified: 200, with what it made due (nothing when no URL names skills).
    Accepted(Vec<Refresh>),
    /// The key file is still being read: 202.
    Pending,
}

/// Which of a domain's cached copies a request makes out of date.
#[derive(Debug, Clone, Copy)]
enum Stale<'a> {
    /// All of them: a recrawl request, a submission.
    Everything,
    /// Those an IndexNow ping names ([`indexnow::stale_copies`]).
    Named(&'a [Url]),
}

/// The frontier's writes, and who to tell of them.
#[derive(Debug, Clone)]
pub(crate) struct Intake {
    frontier: Frontier,
    store: Arc<Store>,
    changed: Arc<Notify>,
    budgets: Arc<Budgets>,
    keys: Arc<Keys>,
    prober: Arc<OnceLock<Arc<dyn Prober>>>,
}

impl Intake {
    /// Returns the intake over `store`'s frontier.
    pub(crate) fn new(store: Arc<Store>, budgets: BudgetConfig) -> Intake {
        Intake {
            frontier: store.frontier().clone(),
            store,
            changed: Arc::new(Notify::new()),
            budgets: Arc::new(Budgets::new(budgets)),
            keys: Arc::new(Keys::default()),
            prober: Arc::new(OnceLock::new()),
        }
    }

    /// Sets what reads publishers' sites; false when it was set already.
    pub(crate) fn set_prober(&self, prober: Arc<dyn Prober>) -> bool {
        self.prober.set(prober).is_ok()
    }

    /// A publisher's recrawl request: `domain` (which the frontier must hold, or 404) becomes
    /// due now and its cached copies are revalidated; at most one per domain per period and
    /// within the caller's budget (429).
    pub(crate) async fn recrawl(&self, client: IpAddr, domain: &str) -> Result<Refresh, ApiError> {
        let entry = self.frontier.entry(domain).await?.ok_or_else(|| {
            ApiError::NotFound(format!(
                "{domain} is not in this directory's frontier; submit it with POST /v1/domains"
            ))
        })?;
        if entry.delisted.is_some() {
            // Said as it is, and nothing spent: nothing will be crawled.
            return Ok(Refresh::Delisted(entry.domain));
        }
        self.budgets.client_request(client)?;
        self.budgets.recrawl(&entry.domain)?;
        self.refresh(&entry.domain, Some(entry.clone()), None, Stale::Everything)
            .await
    }

    /// Makes `domain` due now and marks `stale` of its cached copies out of date; a domain
    /// the frontier does not hold is added, as `submitted`, with `target`.
    async fn refresh(
        &self,
        domain: &str,
        entry: Option<FrontierEntry>,
        target: Option<&SeedTarget>,
        stale: Stale<'_>,
    ) -> Result<Refresh, ApiError> {
        let (new, added) = match (&entry, target) {
            (Some(entry), _) => (
                NewTarget {
                    domain: entry.domain.clone(),
                    target: entry.target.clone(),
                    added_as: entry.added_as,
                    source: entry.source.clone(),
                    rank: entry.rank,
                },
                false,
            ),
            (None, Some(target)) => (
                NewTarget {
                    domain: domain.to_owned(),
                    target: target.to_string(),
                    added_as: AddedAs::Submitted,
                    source: None,
                    rank: None,
                },
                true,
            ),
            (None, None) => {
                return Err(ApiError::NotFound(format!(
                    "{domain} is not in the frontier"
                )));
            }
        };
        // The copies are marked before the domain is due: a crawl that starts at once reads
        // its cache entries when it starts, and must find them marked.
        if let Ok(target) = SeedTarget::parse(&new.target) {
            // Both schemes: a site's copies are kept under the scheme it was read over.
            let origins = ["https", "http"].into_iter().filter_map(|scheme| {
                let mut origin = target.origin().clone();
                origin.set_scheme(scheme).is_ok().then_some(origin)
            });
            match stale {
                Stale::Everything => {
                    for origin in origins {
                        self.store.mark_stale(&origin).await?;
                    }
                }
                Stale::Named(urls) => {
                    let mut cached = Vec::new();
                    for origin in origins {
                        cached.extend(
                            self.store
                                .cached_of_origin(&origin)
                                .await?
                                .into_iter()
                                .filter(|(_, entry)| !entry.revalidate)
                                .map(|(url, _)| url),
                        );
                    }
                    let marked = indexnow::stale_copies(urls, &cached)
                        .iter()
                        .filter_map(|url| Url::parse(url).ok())
                        .collect();
                    self.store.mark_urls_stale(marked).await?;
                }
            }
        }
        let stats = self.frontier.add(vec![new], AddMode::CrawlNow).await?;
        if stats.delisted > 0 {
            return Ok(Refresh::Delisted(domain.to_owned()));
        }
        let at = self.frontier.now().await?;
        tracing::info!(%domain, added, "domain due now at its publisher's request");
        Ok(Refresh::Due {
            domain: domain.to_owned(),
            at,
            added,
        })
    }

    /// A submission (`POST /v1/domains`, the "Add your site" form): `raw` must name a public
    /// site by its DNS name (an IP address or `localhost` only with `--allow-private`; where
    /// a name resolves, the fetch layer checks). It is added to the frontier as `submitted`,
    /// probed at once, and kept only if the probe read an index. A domain the frontier holds
    /// is probed again, under its recrawl budget. The caller's budget is the recrawls'.
    pub(crate) async fn submit(&self, client: IpAddr, raw: &str) -> Result<Submitted, ApiError> {
        let raw = raw.trim();
        if raw.is_empty() {
            return Err(ApiError::InvalidBody("domain: missing".to_owned()));
        }
        let with_scheme = if raw.contains("://") {
            raw.to_owned()
        } else {
            format!("https://{raw}")
        };
        let target = SeedTarget::parse(&with_scheme).map_err(ApiError::InvalidBody)?;
        if target.mcp_endpoint().is_some() {
            return Err(ApiError::InvalidBody(
                "domain: submit a site; an MCP endpoint is added by the directory's operator"
                    .to_owned(),
            ));
        }
        let Some(prober) = self.prober.get().cloned() else {
            return Err(ApiError::Internal(
                "no prober: this server cannot probe sites".to_owned(),
            ));
        };
        if let Some(why) = target.not_public()
            && !prober.allows_private()
        {
            return Err(ApiError::Unprocessable(format!(
                "{}: {why}; submit a site by its domain name",
                target.domain()
            )));
        }
        let domain = target.domain().to_string();
        let entry = self.frontier.entry(&domain).await?;
        if entry.as_ref().is_some_and(|entry| entry.delisted.is_some()) {
            tracing::info!(%domain, "submission of a delisted domain: nothing crawled");
            return Ok(Submitted::Delisted(domain));
        }
        self.budgets.client_request(client)?;
        let crawl = match &entry {
            Some(entry) => {
                self.budgets.recrawl(&domain)?;
                entry.target.clone()
            }
            None => target.to_string(),
        };
        let known = entry.is_some();
        if let Refresh::Delisted(_) = self
            .refresh(&domain, entry, Some(&target), Stale::Everything)
            .await?
        {
            return Ok(Submitted::Delisted(domain));
        }
        let intake = self.clone();
        let task_domain = domain.clone();
        let probe = tokio::spawn(async move {
            let probed = prober.probe(crawl).await;
            intake.changed.notify_one();
            if let Err(why) = probed {
                tracing::warn!(domain = %task_domain, %why, "the probe of a submission failed");
            }
            intake.keep_if_publishing(&task_domain, known).await
        });
        match tokio::time::timeout(PROBE_WAIT, probe).await {
            Ok(Ok(kept)) => Ok(Submitted::Probed {
                domain,
                kept: kept?,
            }),
            Ok(Err(error)) => Err(ApiError::Internal(format!("the probe failed: {error}"))),
            Err(_) => Ok(Submitted::Probing(domain)),
        }
    }

    /// After a submission's probe: a new domain that publishes nothing (no index read)
    /// leaves the frontier (its status stays, for its report); returns whether it is kept.
    async fn keep_if_publishing(&self, domain: &str, known: bool) -> Result<bool, ApiError> {
        if known {
            return Ok(true);
        }
        let parsed: formats::Domain = domain.parse().map_err(|_| {
            ApiError::Internal(format!("a stored domain {domain:?} does not parse"))
        })?;
        let publishes = self
            .store
            .domain(&parsed)
            .await?
            .is_some_and(|status| status.outcome == store::Outcome::Ok);
        if !publishes {
            self.frontier.remove(vec![domain.to_owned()]).await?;
            tracing::info!(%domain, "submitted domain publishes nothing: not kept");
        }
        Ok(publishes)
    }

    /// An IndexNow ping, read already: spends the budgets, checks the key (read once per
    /// host and key, then remembered) and, once it is verified, makes due the domain whose
    /// skills the URLs name.
    pub(crate) async fn ping(&self, client: IpAddr, ping: Ping) -> Result<PingOutcome, ApiError> {
        self.budgets.ping(client, &ping.host)?;
        match self.keys.claim(&ping, Instant::now()) {
            Some(Known::Verified) => return Ok(PingOutcome::Accepted(self.accept(&ping).await?)),
            Some(Known::Refused) => return Err(refused(&ping, None)),
            Some(Known::Pending) => return Ok(PingOutcome::Pending),
            None => {}
        }
        let Some(prober) = self.prober.get().cloned() else {
            self.keys.settle(&ping, false, Instant::now());
            return Err(ApiError::Internal(
                "no prober: this server cannot read key files".to_owned(),
            ));
        };
        // The read goes on in its own task, so a ping answered 202 still counts once the
        // key is verified.
        let intake = self.clone();
        let check = tokio::spawn(async move {
            let checked = prober
                .check_key(ping.key_url.clone(), ping.key.clone())
                .await;
            intake
                .keys
                .settle(&ping, checked == KeyCheck::Valid, Instant::now());
            match checked {
                KeyCheck::Valid => intake.accept(&ping).await.map(PingOutcome::Accepted),
                KeyCheck::Invalid(why) => Err(refused(&ping, Some(&why))),
            }
        });
        match tokio::time::timeout(KEY_CHECK_WAIT, check).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(error)) => Err(ApiError::Internal(format!("the key check failed: {error}"))),
            Err(_) => Ok(PingOutcome::Pending),
        }
    }

    /// Makes due the domains whose skills a verified ping's URLs name.
    async fn accept(&self, ping: &Ping) -> Result<Vec<Refresh>, ApiError> {
        let Some(first) = ping.urls.first() else {
            return Ok(Vec::new());
        };
        let Ok(target) = SeedTarget::parse(first.origin().ascii_serialization().as_str()) else {
            return Ok(Vec::new());
        };
        let domain = target.domain().to_string();
        let entry = self.frontier.entry(&domain).await?;
        let crawled = entry
            .as_ref()
            .and_then(|entry| SeedTarget::parse(&entry.target).ok());
        if !ping
            .urls
            .iter()
            .any(|url| indexnow::names_skills(url, crawled.as_ref()))
        {
            return Ok(Vec::new());
        }
        if entry.as_ref().is_some_and(|entry| entry.delisted.is_some()) {
            return Ok(vec![Refresh::Delisted(domain)]);
        }
        Ok(vec![
            self.refresh(&domain, entry, Some(&target), Stale::Named(&ping.urls))
                .await?,
        ])
    }

    /// Returns what is woken after a change to the records (a delisting).
    pub(crate) fn on_change(&self) -> Arc<Notify> {
        Arc::clone(&self.changed)
    }

    /// Adds targets to the frontier.
    pub(crate) async fn add(
        &self,
        targets: Vec<NewTarget>,
        mode: AddMode,
    ) -> Result<AddStats, StoreError> {
        self.frontier.add(targets, mode).await
    }

    /// Returns a page of the frontier.
    pub(crate) async fn list(
        &self,
        after: Option<String>,
        limit: usize,
        filter: ListFilter,
    ) -> Result<Vec<FrontierEntry>, StoreError> {
        self.frontier.list(after, limit, filter).await
    }

    /// Removes domains from the frontier (delisted ones stay).
    pub(crate) async fn remove(&self, domains: Vec<String>) -> Result<RemoveStats, StoreError> {
        self.frontier.remove(domains).await
    }

    /// Delists a domain and says so to the index's owner.
    pub(crate) async fn delist(&self, domain: &str, reason: &str) -> Result<Delisted, StoreError> {
        let delisted = self.frontier.delist(domain, reason).await?;
        tracing::info!(%domain, records = delisted.records_removed, "domain delisted");
        self.changed.notify_one();
        Ok(delisted)
    }

    /// Takes a domain off the deny list.
    pub(crate) async fn undelist(&self, domain: &str) -> Result<bool, StoreError> {
        let undelisted = self.frontier.undelist(domain).await?;
        if undelisted {
            tracing::info!(%domain, "domain undelisted");
        }
        Ok(undelisted)
    }
}

/// The 403 of a key whose file does not hold it.
fn refused(ping: &Ping, why: Option<&str>) -> ApiError {
    let why = why.map(|why| format!(": {why}")).unwrap_or_default();
    ApiError::Forbidden(format!(
        "the key is not valid for {}: {} must hold exactly the key{why}",
        ping.host, ping.key_url
    ))
}
