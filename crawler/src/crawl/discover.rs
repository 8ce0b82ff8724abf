//! Discovery: origins named in what a crawl reads (`formats::discover`) become `discovered`
//! candidates in the frontier, due at once, so a crawl that keeps running probes them in the
//! same run, after what was due before them (the frontier leases the oldest due first). A
//! crawl adds at most its budget of new domains (renewed each round of a crawl that keeps
//! running, and at least daily); known and delisted domains are left as they are.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use formats::discover::NamedOrigins;
use formats::seeds::SeedTarget;
use store::{AddMode, AddedAs, Frontier, NewTarget, Outcome, StoreError};

/// The default most new domains one crawl adds (`--discover-budget`): enough to follow what a
/// few thousand sites name, too few for one link farm to fill a crawl.
pub const DEFAULT_DISCOVER_BUDGET: usize = 1000;
/// How long a crawl that keeps running, and never runs out of due domains, spends one budget.
pub const BUDGET_PERIOD: Duration = Duration::from_secs(24 * 3600);
/// The most domains remembered as named in one budget's period (each is looked up in the
/// frontier once while remembered); past it they are forgotten and looked up again.
const NAMED_MEMORY: usize = 100_000;

/// What discovery did in one crawl.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiscoveryStats {
    /// Candidates added to the frontier.
    pub discovered: usize,
    /// New domains named after the budget was spent, left out.
    pub over_budget: usize,
    /// Candidates of this crawl that it went on to crawl.
    pub probed: usize,
    /// Probed candidates that publish (an index was read).
    pub publishing: usize,
}

impl DiscoveryStats {
    /// What was counted since `before`, counts of the same crawl.
    pub fn since(&self, before: &DiscoveryStats) -> DiscoveryStats {
        DiscoveryStats {
            discovered: self.discovered.saturating_sub(before.discovered),
            over_budget: self.over_budget.saturating_sub(before.over_budget),
            probed: self.probed.saturating_sub(before.probed),
            publishing: self.publishing.saturating_sub(before.publishing),
        }
    }
}

/// One crawl's discovery.
#[derive(Debug)]
pub(crate) struct Discovery {
    budget: usize,
    allow_private: bool,
    /// Domains named since the budget was renewed, at most [`NAMED_MEMORY`].
    named: HashSet<String>,
    /// New domains added since the budget was renewed.
    spent: usize,
    /// When the budget was renewed.
    renewed: Instant,
    /// Domains added as candidates and not crawled yet.
    added: HashSet<String>,
    pub(crate) stats: DiscoveryStats,
}

impl Discovery {
    /// A discovery of at most `budget` new domains (0: none); `allow_private` lets IP
    /// addresses and `localhost` be candidates.
    pub(crate) fn new(budget: usize, allow_private: bool) -> Discovery {
        Discovery {
            budget,
            allow_private,
            named: HashSet::new(),
            spent: 0,
            renewed: Instant::now(),
            added: HashSet::new(),
            stats: DiscoveryStats::default(),
        }
    }

    /// A new round of a crawl that keeps running: the budget is whole again.
    pub(crate) fn renew(&mut self) {
        self.named.clear();
        self.spent = 0;
        self.renewed = Instant::now();
        // Candidates are due at once, so they are crawled in the round that found them; any
        // left (removed meanwhile) are not counted forever.
        if self.added.len() > self.budget {
            self.added.clear();
        }
    }

    /// Counts `domain`'s crawl, when this crawl discovered it.
    pub(crate) fn crawled(&mut self, domain: &str, outcome: Outcome) {
        if self.added.remove(domain) {
            self.stats.probed += 1;
            if outcome == Outcome::Ok {
                self.stats.publishing += 1;
            }
        }
    }

    /// Returns the candidates among the origins `source` named (its documents, their
    /// `Link` headers, its records) that this budget's period has not met yet; [`Discovery::add`]
    /// keeps the new ones within the budget.
    pub(crate) fn candidates(&mut self, source: &str, origins: &NamedOrigins) -> Vec<NewTarget> {
        if self.budget == 0 {
            return Vec::new();
        }
        if self.renewed.elapsed() >= BUDGET_PERIOD {
            self.renew();
        }
        if origins.left_out() > 0 {
            tracing::debug!(domain = %source, left_out = origins.left_out(), "the site named more origins than one site's crawl keeps");
        }
        let mut out = Vec::new();
        for origin in origins {
            let Ok(target) = SeedTarget::parse(origin.as_str()) else {
                continue;
            };
            let domain = target.domain().to_string();
            if domain == source
                || (!self.allow_private && target.not_public().is_some())
                || self.named.contains(&domain)
            {
                continue;
            }
            if self.named.len() >= NAMED_MEMORY {
                self.named.clear();
            }
            self.named.insert(domain.clone());
            out.push(NewTarget {
                domain,
                target: target.to_string(),
                added_as: AddedAs::Discovered,
                source: Some(source.to_owned()),
                rank: None,
            });
        }
        out
    }

    /// Adds to the frontier those `candidates` it does not hold, while the budget lasts
    /// (known domains keep their target and schedule; delisted ones stay delisted). Once the
    /// budget is spent, candidates are counted as left out without being looked up.
    pub(crate) async fn add(
        &mut self,
        frontier: &Frontier,
        candidates: Vec<NewTarget>,
    ) -> Result<(), StoreError> {
        let mut new = Vec::new();
        for candidate in candidates {
            if self.spent >= self.budget {
                self.stats.over_budget += 1;
                continue;
            }
            if frontier.entry(&candidate.domain).await?.is_none() {
                self.spent += 1;
                new.push(candidate);
            }
        }
        if new.is_empty() {
            return Ok(());
        }
        frontier.add(new.clone(), AddMode::Keep).await?;
        self.stats.discovered += new.len();
        for candidate in new {
            tracing::debug!(domain = %candidate.domain, "discovered");
            self.added.insert(candidate.domain);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use url::Url;

    use super::*;

    fn named(urls: &[&str]) -> NamedOrigins {
        let mut named = NamedOrigins::default();
        named.extend(urls.iter().map(|url| Url::parse(url).unwrap()));
        named
    }

    fn frontier() -> (tempfile::TempDir, store::Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = store::Store::open(dir.path()).unwrap();
        (dir, store)
    }

    #[test]
    fn candidates_leave_out_the_source_private_addresses_and_what_was_named() {
        let mut discovery = Discovery::new(2, false);
        let origins = named(&[
            "https://pub.test/",
            "http://127.0.0.1:8080/",
            "http://localhost/",
            "https://a.test/",
            "https://b.test/",
            "https://c.test/",
        ]);
        let candidates = discovery.candidates("pub.test", &origins);
        let domains: Vec<&str> = candidates.iter().map(|c| c.domain.as_str()).collect();
        assert_eq!(domains, ["a.test", "b.test", "c.test"]);
        assert!(candidates.iter().all(|candidate| {
            candidate.added_as == AddedAs::Discovered
                && candidate.source.as_deref() == Some("pub.test")
        }));
        // Named again by another site: met already, not a candidate twice (the first site
        // is one for the other).
        let again = discovery.candidates("other.test", &origins);
        let domains: Vec<&str> = again.iter().map(|c| c.domain.as_str()).collect();
        assert_eq!(domains, ["pub.test"]);

        let mut private = Discovery::new(10, true);
        let domains: Vec<String> = private
            .candidates("pub.test", &origins)
            .into_iter()
            .map(|candidate| candidate.domain)
            .collect();
        assert_eq!(
            domains,
            ["127.0.0.1:8080", "localhost", "a.test", "b.test", "c.test"]
        );
        assert!(
            Discovery::new(0, true)
                .candidates("pub.test", &origins)
                .is_empty()
        );
    }

    /// The budget counts new domains only: known ones neither spend it nor change (a seed's
    /// https target is not replaced by an http link to it); past it, new ones are left out,
    /// until a new round renews it.
    #[tokio::test]
    async fn the_budget_counts_new_domains_and_is_renewed_each_round() {
        let (_dir, store) = frontier();
        let frontier = store.frontier();
        frontier
            .add(
                vec![NewTarget {
                    domain: "known.test".to_owned(),
                    target: "https://known.test".to_owned(),
                    added_as: AddedAs::Seed,
                    source: None,
                    rank: None,
                }],
                AddMode::Keep,
            )
            .await
            .unwrap();
        let mut discovery = Discovery::new(2, false);
        let origins = named(&[
            "http://known.test/",
            "https://a.test/",
            "https://b.test/",
            "https://c.test/",
        ]);
        let candidates = discovery.candidates("pub.test", &origins);
        discovery.add(frontier, candidates).await.unwrap();
        assert_eq!(discovery.stats.discovered, 2);
        assert_eq!(discovery.stats.over_budget, 1);
        let known = frontier.entry("known.test").await.unwrap().unwrap();
        assert_eq!(known.target, "https://known.test");
        assert_eq!(known.added_as, AddedAs::Seed);
        assert!(frontier.entry("a.test").await.unwrap().is_some());
        assert!(frontier.entry("c.test").await.unwrap().is_none());

        // The next round: the budget is whole again, and c.test, named again, is added.
        discovery.renew();
        let candidates = discovery.candidates("pub.test", &origins);
        discovery.add(frontier, candidates).await.unwrap();
        assert_eq!(discovery.stats.discovered, 3);
        assert!(frontier.entry("c.test").await.unwrap().is_some());
    }
}
