//! Discovery: origins named in what a crawl reads (`formats::discover`) become `discovered`
//! candidates in the frontier, due at once, so a crawl that keeps running probes them in the
//! same run, after what was due before them (the frontier leases the oldest due first). A
//! crawl adds at most its budget of candidates; delisted domains stay delisted, known ones
//! keep their schedule. Whether a probed candidate publishes, and when it is visited next, is
//! the frontier's schedule, as for any domain.

use std::collections::HashSet;

use formats::discover::NamedOrigins;
use formats::seeds::SeedTarget;
use store::{AddMode, AddedAs, Frontier, NewTarget, Outcome, StoreError};

/// The default most candidates one crawl adds (`--discover-budget`): enough to follow what a
/// few thousand sites name, too few for one link farm to fill a crawl.
pub const DEFAULT_DISCOVER_BUDGET: usize = 1000;

/// What discovery did in one crawl.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiscoveryStats {
    /// Candidates added to the frontier.
    pub discovered: usize,
    /// Candidates named after the budget was spent, left out.
    pub over_budget: usize,
    /// Candidates of this crawl that it went on to crawl.
    pub probed: usize,
    /// Probed candidates that publish (an index was read).
    pub publishing: usize,
}

/// One crawl's discovery.
#[derive(Debug)]
pub(crate) struct Discovery {
    budget: usize,
    allow_private: bool,
    /// Domains named so far (within the budget), and those added as new candidates.
    named: HashSet<String>,
    added: HashSet<String>,
    pub(crate) stats: DiscoveryStats,
}

impl Discovery {
    /// A discovery of at most `budget` candidates (0: none); `allow_private` lets IP
    /// addresses and `localhost` be candidates.
    pub(crate) fn new(budget: usize, allow_private: bool) -> Discovery {
        Discovery {
            budget,
            allow_private,
            named: HashSet::new(),
            added: HashSet::new(),
            stats: DiscoveryStats::default(),
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
    /// `Link` headers, its records), within the budget.
    pub(crate) fn candidates(&mut self, source: &str, origins: &NamedOrigins) -> Vec<NewTarget> {
        if self.budget == 0 {
            return Vec::new();
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
            if self.named.len() >= self.budget {
                self.stats.over_budget += 1;
                continue;
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

    /// Adds `candidates` to the frontier (known and delisted domains are left as they are).
    pub(crate) async fn add(
        &mut self,
        frontier: &Frontier,
        candidates: Vec<NewTarget>,
    ) -> Result<(), StoreError> {
        if candidates.is_empty() {
            return Ok(());
        }
        let domains: Vec<String> = candidates.iter().map(|c| c.domain.clone()).collect();
        // Which are new: asked before adding, since `add` counts but does not name them.
        let mut new = Vec::new();
        for domain in domains {
            if frontier.entry(&domain).await?.is_none() {
                new.push(domain);
            }
        }
        frontier.add(candidates, AddMode::Keep).await?;
        self.stats.discovered += new.len();
        for domain in new {
            tracing::debug!(%domain, "discovered");
            self.added.insert(domain);
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

    #[test]
    fn candidates_leave_out_the_source_private_addresses_and_what_is_over_budget() {
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
        assert_eq!(domains, ["a.test", "b.test"]);
        assert!(candidates.iter().all(|candidate| {
            candidate.added_as == AddedAs::Discovered
                && candidate.source.as_deref() == Some("pub.test")
        }));
        assert_eq!(discovery.stats.over_budget, 1);
        // Named again by another site: already counted, not a candidate twice.
        assert!(discovery.candidates("other.test", &origins).is_empty());

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
}
