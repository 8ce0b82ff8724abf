//! The crawl frontier, on every backend: leases, renewals, finishing and its schedule,
//! expiry, many workers leasing at once, states and the deny list, targets named twice, and a
//! clock set back (the embedded store, whose clock a test can set).

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use store::frontier::schedule::BACKOFF_CAP;
use store::{
    AddMode, AddedAs, Crawled, EmbeddedStore, Frontier, FrontierState, FrontierTarget, ListFilter,
    NewTarget, Outcome, Schedule, StoredRecord,
};

use super::*;

fn seeds(domains: &[&str]) -> Vec<NewTarget> {
    domains
        .iter()
        .map(|domain| NewTarget {
            domain: (*domain).to_owned(),
            target: format!("http://{domain}"),
            added_as: AddedAs::Seed,
            source: None,
            rank: None,
        })
        .collect()
}

fn domains(leased: &[FrontierTarget]) -> Vec<String> {
    let mut domains: Vec<String> = leased.iter().map(|t| t.domain.clone()).collect();
    domains.sort();
    domains
}

fn crawled(domains: &[String], outcome: Outcome, changed: bool) -> Vec<Crawled> {
    domains
        .iter()
        .map(|domain| Crawled {
            domain: domain.clone(),
            outcome,
            changed,
            not_before: None,
        })
        .collect()
}

const LONG: Duration = Duration::from_secs(600);
const HOUR: Duration = Duration::from_secs(3600);
const DAY: Duration = Duration::from_secs(86_400);

/// A schedule whose every interval is `interval`.
fn every(interval: Duration) -> Schedule {
    Schedule {
        min_interval: interval,
        max_interval: interval,
        initial_interval: interval,
    }
}

/// A domain is leased to one worker at a time; only its holder renews or finishes it; a
/// finished domain is not due until its next crawl; adding it again changes nothing.
pub(crate) async fn leases_renewals_and_finishing(store: Store) {
    let frontier = store.frontier();
    let added = frontier
        .add(seeds(&["a.test", "b.test", "c.test"]), AddMode::Keep)
        .await
        .unwrap();
    assert_eq!((added.added, added.unchanged), (3, 0));
    let counts = frontier.counts().await.unwrap();
    assert_eq!((counts.due, counts.leased, counts.total), (3, 0, 3));

    let first = frontier.lease("one", 2, LONG).await.unwrap();
    assert_eq!(first.len(), 2);
    assert_eq!(first[0].target, format!("http://{}", first[0].domain));
    let second = frontier.lease("two", 10, LONG).await.unwrap();
    assert_eq!(second.len(), 1);
    assert!(frontier.lease("three", 10, LONG).await.unwrap().is_empty());
    let mut all = domains(&first);
    all.extend(domains(&second));
    all.sort();
    assert_eq!(all, ["a.test", "b.test", "c.test"]);
    let counts = frontier.counts().await.unwrap();
    assert_eq!((counts.due, counts.leased, counts.total), (0, 3, 3));

    // Renewing names only what the caller holds.
    let mine = domains(&first);
    let mut asked = mine.clone();
    asked.push(second[0].domain.clone());
    let mut renewed = frontier.renew("one", asked, LONG).await.unwrap();
    renewed.sort();
    assert_eq!(renewed, mine);

    // Another worker cannot finish a domain it does not hold.
    let schedule = every(HOUR);
    assert!(
        frontier
            .finish("two", crawled(&mine[..1], Outcome::Ok, false), schedule)
            .await
            .unwrap()
            .is_empty()
    );
    let finished = frontier
        .finish("one", crawled(&mine, Outcome::Ok, false), schedule)
        .await
        .unwrap();
    assert_eq!(finished.len(), 2);
    // Finished twice is finished once.
    assert!(
        frontier
            .finish("one", crawled(&mine, Outcome::Ok, false), schedule)
            .await
            .unwrap()
            .is_empty()
    );
    let counts = frontier.counts().await.unwrap();
    assert_eq!((counts.due, counts.leased, counts.total), (0, 1, 3));
    assert!(counts.next_due.is_some());
    let entry = frontier.entry(&mine[0]).await.unwrap().unwrap();
    assert_eq!(entry.crawls, 1);
    assert_eq!(entry.interval(), Some(HOUR));
    assert_eq!(entry.last_outcome, Some(Outcome::Ok));

    // Adding the same targets (a worker started a moment later) does not make them due; a
    // domain given twice in one call keeps its first target.
    let mut again = seeds(&["a.test", "b.test", "c.test", "d.test"]);
    again.push(NewTarget {
        target: "https://d.test/docs".to_owned(),
        ..again[3].clone()
    });
    let added = frontier.add(again, AddMode::Keep).await.unwrap();
    assert_eq!(
        (added.added, added.unchanged),
        (1, 4),
        "the second d.test counts as unchanged"
    );
    let later = frontier.lease("three", 10, LONG).await.unwrap();
    assert_eq!(domains(&later), ["d.test"]);
    assert_eq!(later[0].target, "http://d.test");

    // Released without a crawl and no wait, a domain is due again at once.
    frontier
        .release("three", vec!["d.test".to_owned()], Duration::ZERO)
        .await
        .unwrap();
    assert_eq!(
        domains(&frontier.lease("one", 10, LONG).await.unwrap()),
        ["d.test"]
    );

    // Targets to crawl now make known domains due now.
    let now = frontier
        .add(seeds(&["a.test"]), AddMode::CrawlNow)
        .await
        .unwrap();
    assert_eq!(now.updated, 1);
    assert_eq!(
        domains(&frontier.lease("two", 10, LONG).await.unwrap()),
        ["a.test"]
    );
}

/// A request (a ping, a recrawl) that lands while its domain is being crawled is not lost: the
/// crawl may have read the site before the change, so finishing it leaves the domain due and
/// asked for; the next crawl, leased after the request, answers it.
pub(crate) async fn a_request_during_a_crawl_is_not_lost(store: Store) {
    let frontier = store.frontier();
    frontier
        .add(seeds(&["a.test"]), AddMode::Keep)
        .await
        .unwrap();
    let leased = frontier.lease("w", 10, LONG).await.unwrap();
    assert_eq!(domains(&leased), ["a.test"]);
    assert!(!leased[0].requested, "nobody asked for the first crawl");

    // Asked for mid-crawl.
    frontier
        .add(seeds(&["a.test"]), AddMode::CrawlNow)
        .await
        .unwrap();
    let asked = frontier.entry("a.test").await.unwrap().unwrap();
    assert!(asked.requested_at.is_some());
    let done = vec!["a.test".to_owned()];
    frontier
        .finish("w", crawled(&done, Outcome::Ok, false), every(HOUR))
        .await
        .unwrap();
    let after = frontier.entry("a.test").await.unwrap().unwrap();
    assert!(after.requested_at.is_some(), "still asked for");
    assert_eq!(frontier.counts().await.unwrap().due, 1, "due again at once");

    // The next crawl is leased after the request: it answers it.
    let leased = frontier.lease("w", 10, LONG).await.unwrap();
    assert_eq!(domains(&leased), ["a.test"]);
    assert!(leased[0].requested, "the crawl knows it is awaited");
    frontier
        .finish("w", crawled(&done, Outcome::Ok, false), every(HOUR))
        .await
        .unwrap();
    let answered = frontier.entry("a.test").await.unwrap().unwrap();
    assert_eq!(answered.requested_at, None);
    assert_eq!(frontier.counts().await.unwrap().due, 0);
    assert!(frontier.lease("w", 10, LONG).await.unwrap().is_empty());

    // A new domain asked for (a submission) is awaited by its first crawl, and by name too.
    frontier
        .add(seeds(&["b.test"]), AddMode::CrawlNow)
        .await
        .unwrap();
    let since = frontier.now().await.unwrap();
    let named = frontier
        .lease_named("v", vec!["b.test".to_owned()], LONG, since)
        .await
        .unwrap();
    assert_eq!(domains(&named.leased), ["b.test"]);
    assert!(named.leased[0].requested);
    let done = vec!["b.test".to_owned()];
    frontier
        .finish("v", crawled(&done, Outcome::Ok, true), every(HOUR))
        .await
        .unwrap();
    assert_eq!(
        frontier
            .entry("b.test")
            .await
            .unwrap()
            .unwrap()
            .requested_at,
        None
    );
    assert_eq!(frontier.counts().await.unwrap().due, 0);
}

/// A lease that is not renewed expires, and another worker takes the domain over; the first
/// holder can then neither renew nor finish it.
pub(crate) async fn an_expired_lease_is_taken_over(store: Store) {
    let frontier = store.frontier();
    frontier
        .add(seeds(&["x.test"]), AddMode::Keep)
        .await
        .unwrap();
    let short = Duration::from_millis(300);
    assert_eq!(frontier.lease("dead", 10, short).await.unwrap().len(), 1);
    assert!(frontier.lease("alive", 10, LONG).await.unwrap().is_empty());
    assert!(!frontier.counts().await.unwrap().idle());

    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(frontier.counts().await.unwrap().due, 1);
    let taken = frontier.lease("alive", 10, LONG).await.unwrap();
    assert_eq!(domains(&taken), ["x.test"]);
    let lost = vec!["x.test".to_owned()];
    assert!(
        frontier
            .renew("dead", lost.clone(), LONG)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        frontier
            .finish("dead", crawled(&lost, Outcome::Ok, false), every(HOUR))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        frontier
            .finish("alive", crawled(&lost, Outcome::Ok, false), every(HOUR))
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(frontier.counts().await.unwrap().idle());
}

/// Workers leasing at once (from their own connections, as processes would) share the
/// frontier between them: every domain is handed out exactly once.
pub(crate) async fn concurrent_workers_never_get_the_same_domain(open: impl Fn() -> Frontier) {
    const DOMAINS: usize = 300;
    const WORKERS: usize = 4;
    let names: Vec<String> = (0..DOMAINS).map(|i| format!("h{i:03}.test")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    open().add(seeds(&refs), AddMode::Keep).await.unwrap();

    let workers: Vec<_> = (0..WORKERS)
        .map(|worker| {
            let frontier = open();
            std::thread::spawn(move || {
                let owner = format!("worker-{worker}");
                let mut got = Vec::new();
                loop {
                    let leased = frontier.blocking().lease(&owner, 7, LONG).unwrap();
                    if leased.is_empty() {
                        return got;
                    }
                    got.extend(leased.into_iter().map(|t| t.domain));
                }
            })
        })
        .collect();
    let mut seen = HashSet::new();
    let mut total = 0;
    for worker in workers {
        let got = worker.join().unwrap();
        total += got.len();
        seen.extend(got);
    }
    assert_eq!(total, DOMAINS, "a domain was leased twice");
    assert_eq!(seen.len(), DOMAINS);
    let counts = open().counts().await.unwrap();
    assert_eq!((counts.due, counts.leased), (0, DOMAINS as u64));
}

/// A domain that changes is revisited sooner than one that does not; one that publishes
/// nothing backs off further, up to 30 days; a host's `Retry-After` over the cap is waited out.
pub(crate) async fn revisits_adapt_to_what_a_crawl_saw(store: Store) {
    let frontier = store.frontier();
    let names = ["changing.test", "steady.test", "empty.test", "busy.test"];
    frontier.add(seeds(&names), AddMode::Keep).await.unwrap();
    let schedule = Schedule {
        min_interval: HOUR,
        max_interval: 7 * DAY,
        initial_interval: DAY,
    };
    // Round after round, each domain sees the same thing.
    for round in 0..6 {
        let since = frontier.now().await.unwrap();
        let leased = frontier
            .lease_named(
                &format!("round-{round}"),
                names.iter().map(|n| (*n).to_owned()).collect(),
                LONG,
                since,
            )
            .await
            .unwrap();
        assert_eq!(leased.leased.len(), names.len(), "round {round}");
        let results = vec![
            Crawled {
                domain: "changing.test".to_owned(),
                outcome: Outcome::Ok,
                changed: true,
                not_before: None,
            },
            Crawled {
                domain: "steady.test".to_owned(),
                outcome: Outcome::Ok,
                changed: false,
                not_before: None,
            },
            Crawled {
                domain: "empty.test".to_owned(),
                outcome: Outcome::NotFound,
                changed: false,
                not_before: None,
            },
            Crawled {
                domain: "busy.test".to_owned(),
                outcome: Outcome::Ok,
                changed: false,
                not_before: Some(3 * 7 * DAY),
            },
        ];
        let released = frontier
            .finish(&format!("round-{round}"), results, schedule)
            .await
            .unwrap();
        assert_eq!(released.len(), names.len());
    }
    let interval = |domain: &str| {
        let frontier = frontier.clone();
        let domain = domain.to_owned();
        async move { frontier.entry(&domain).await.unwrap().unwrap() }
    };
    let changing = interval("changing.test").await;
    let steady = interval("steady.test").await;
    let empty = interval("empty.test").await;
    let busy = interval("busy.test").await;
    assert!(changing.interval().unwrap() < DAY, "{changing:?}");
    assert!(steady.interval().unwrap() > DAY, "{steady:?}");
    assert!(steady.interval().unwrap() <= 7 * DAY);
    assert!(empty.interval().unwrap() > steady.interval().unwrap());
    assert_eq!(empty.interval(), Some(BACKOFF_CAP));
    assert!(changing.next_crawl_at < steady.next_crawl_at);
    assert!(steady.next_crawl_at < empty.next_crawl_at);
    assert!(changing.last_changed_at.is_some() && steady.last_changed_at.is_none());
    // The host asked for three weeks, longer than its interval: it is left that long.
    let left = busy.next_crawl_at - busy.last_crawled_at.unwrap();
    assert!(
        left >= time::Duration::days(21) - time::Duration::seconds(5),
        "{left}"
    );
    assert_eq!(empty.last_outcome, Some(Outcome::NotFound));
}

/// A delisted domain: its live records become tombstones (logged as changes), its status goes,
/// no seed list re-adds it, no crawl leases it or stores anything for it, it is listed with
/// its reason; `remove` keeps it, `undelist` brings it back due.
pub(crate) async fn the_deny_list_holds(store: Store) {
    let frontier = store.frontier();
    let domain: Domain = "example.test".parse().unwrap();
    frontier
        .add(seeds(&["example.test", "other.test"]), AddMode::Keep)
        .await
        .unwrap();
    let stats = store
        .apply_domain(
            &status(T1, vec![index_url()]),
            skills(&[("alpha", "First."), ("beta", "Second.")], T1),
            T1,
        )
        .await
        .unwrap();
    assert_eq!(stats.added, 2);
    let before = store.last_seq().await.unwrap();
    // A crawl of the domain is running when it is delisted.
    let since = frontier.now().await.unwrap();
    let running = frontier
        .lease_named("crawl", vec!["example.test".to_owned()], LONG, since)
        .await
        .unwrap();
    assert_eq!(running.leased.len(), 1);

    let delisted = frontier
        .delist("example.test", "spam, see ticket 12")
        .await
        .unwrap();
    assert_eq!((delisted.already, delisted.records_removed), (false, 2));
    assert_eq!(store.last_seq().await.unwrap(), before + 2);
    let tombstones = store.changes_after(before, 10).await.unwrap();
    assert!(tombstones.iter().all(StoredRecord::is_tombstone));
    assert!(store.domain(&domain).await.unwrap().is_none());

    // What the running crawl stores now is dropped.
    let after = store
        .apply_domain(
            &status(T2, vec![index_url()]),
            skills(&[("alpha", "First.")], T2),
            T2,
        )
        .await
        .unwrap();
    assert_eq!(after, ApplyStats::default());
    let upserted = store
        .upsert(skills(&[("gamma", "Third.")], T2), T2)
        .await
        .unwrap();
    assert_eq!(upserted, ApplyStats::default());
    assert!(store.record("example.test/gamma").await.unwrap().is_none());
    assert!(store.domain(&domain).await.unwrap().is_none());

    // No seed list, submission or crawl-now brings it back.
    for added_as in [AddedAs::Seed, AddedAs::Submitted, AddedAs::Discovered] {
        let mut again = seeds(&["example.test"]);
        again[0].added_as = added_as;
        let stats = frontier.add(again, AddMode::CrawlNow).await.unwrap();
        assert_eq!(stats.delisted, 1);
    }
    let refused = frontier
        .lease_named("crawl-2", vec!["example.test".to_owned()], LONG, since)
        .await
        .unwrap();
    assert!(refused.leased.is_empty());
    assert_eq!(refused.delisted, ["example.test"]);
    let leased = frontier.lease("crawl-3", 10, LONG).await.unwrap();
    assert_eq!(domains(&leased), ["other.test"]);

    let listed = frontier
        .list(
            None,
            10,
            ListFilter {
                state: Some(FrontierState::Delisted),
                due: false,
            },
        )
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].state(), FrontierState::Delisted);
    assert_eq!(
        listed[0].delisted.as_ref().unwrap().reason,
        "spam, see ticket 12"
    );
    let seeds_only = frontier
        .list(
            None,
            10,
            ListFilter {
                state: Some(FrontierState::Seed),
                due: false,
            },
        )
        .await
        .unwrap();
    assert_eq!(seeds_only.len(), 1);
    let counts = frontier.counts().await.unwrap();
    assert_eq!((counts.total, counts.delisted), (2, 1));

    // Removing does not forget the deny list; an unknown domain is said to be unknown.
    let removed = frontier
        .remove(vec!["example.test".to_owned(), "nowhere.test".to_owned()])
        .await
        .unwrap();
    assert_eq!(
        (removed.removed, removed.delisted, removed.unknown),
        (0, 1, 1)
    );
    // Delisting again keeps it delisted, with the new reason.
    let again = frontier.delist("example.test", "still spam").await.unwrap();
    assert_eq!((again.already, again.records_removed), (true, 0));

    assert!(frontier.undelist("example.test").await.unwrap());
    assert!(!frontier.undelist("example.test").await.unwrap());
    let entry = frontier.entry("example.test").await.unwrap().unwrap();
    assert_eq!(entry.state(), FrontierState::Seed);
    assert!(entry.delisted.is_none());
    let back = frontier.lease("crawl-4", 10, LONG).await.unwrap();
    assert_eq!(domains(&back), ["example.test"]);

    // A domain the frontier never held can be delisted too: the deny list comes first.
    let unknown = frontier
        .delist("never.test", "asked to be left out")
        .await
        .unwrap();
    assert_eq!(unknown.records_removed, 0);
    let stats = frontier
        .add(seeds(&["never.test"]), AddMode::Keep)
        .await
        .unwrap();
    assert_eq!(stats.delisted, 1);
}

/// A target named twice in one crawl is crawled once, and so is one given to several crawls
/// that started before it was crawled; a crawl that starts later crawls it again; one held by
/// another crawl is not handed out.
pub(crate) async fn named_targets_are_leased_once_per_crawl(store: Store) {
    let frontier = store.frontier();
    frontier
        .add(seeds(&["a.test", "b.test"]), AddMode::Keep)
        .await
        .unwrap();
    let since = frontier.now().await.unwrap();
    let first = frontier
        .lease_named(
            "crawl-1",
            vec![
                "a.test".to_owned(),
                "a.test".to_owned(),
                "nowhere.test".to_owned(),
            ],
            LONG,
            since,
        )
        .await
        .unwrap();
    assert_eq!(domains(&first.leased), ["a.test"]);
    assert_eq!(first.crawled, ["a.test"], "named twice");
    assert_eq!(first.unknown, ["nowhere.test"]);
    let held = frontier
        .lease_named("crawl-2", vec!["a.test".to_owned()], LONG, since)
        .await
        .unwrap();
    assert!(held.leased.is_empty());
    assert_eq!(held.held, ["a.test"], "held by crawl-1");
    frontier
        .finish(
            "crawl-1",
            crawled(&["a.test".to_owned()], Outcome::Ok, true),
            every(HOUR),
        )
        .await
        .unwrap();
    for owner in ["crawl-1", "crawl-2"] {
        let again = frontier
            .lease_named(owner, vec!["a.test".to_owned()], LONG, since)
            .await
            .unwrap();
        assert!(again.leased.is_empty());
        assert_eq!(again.crawled, ["a.test"], "{owner}: crawled since it began");
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    let later = frontier.now().await.unwrap();
    let other = frontier
        .lease_named("crawl-3", vec!["a.test".to_owned()], LONG, later)
        .await
        .unwrap();
    assert_eq!(domains(&other.leased), ["a.test"], "not due, but named");
}

/// Lists come in pages in domain order, and the due filter holds.
pub(crate) async fn the_frontier_lists_in_pages(store: Store) {
    let frontier = store.frontier();
    let names: Vec<String> = (0..25).map(|i| format!("p{i:02}.test")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut targets = seeds(&refs);
    targets[3].added_as = AddedAs::Imported;
    targets[3].source = Some("https://other.directory.test/".to_owned());
    targets[4].rank = Some(17);
    frontier.add(targets, AddMode::Keep).await.unwrap();
    let mut listed = Vec::new();
    let mut after = None;
    loop {
        let page = frontier
            .list(after.clone(), 10, ListFilter::default())
            .await
            .unwrap();
        let done = page.len() < 10;
        after = page.last().map(|entry| entry.domain.clone());
        listed.extend(page);
        if done {
            break;
        }
    }
    let listed_names: Vec<&str> = listed.iter().map(|entry| entry.domain.as_str()).collect();
    assert_eq!(listed_names, refs);
    assert_eq!(listed[3].state(), FrontierState::Imported);
    assert_eq!(
        listed[3].source.as_deref(),
        Some("https://other.directory.test/")
    );
    assert_eq!(listed[4].rank, Some(17));
    let leased = frontier.lease("one", 5, LONG).await.unwrap();
    frontier
        .finish(
            "one",
            crawled(&domains(&leased), Outcome::Ok, false),
            every(DAY),
        )
        .await
        .unwrap();
    let due = frontier
        .list(
            None,
            100,
            ListFilter {
                state: None,
                due: true,
            },
        )
        .await
        .unwrap();
    assert_eq!(due.len(), 20);
}

macro_rules! frontier_conformance {
    ($open:expr) => {
        #[tokio::test]
        async fn leases_renewals_and_finishing() {
            let Some(backend) = $open else { return };
            super::frontier::leases_renewals_and_finishing(backend.store()).await;
        }

        #[tokio::test]
        async fn a_request_during_a_crawl_is_not_lost() {
            let Some(backend) = $open else { return };
            super::frontier::a_request_during_a_crawl_is_not_lost(backend.store()).await;
        }

        #[tokio::test]
        async fn an_expired_lease_is_taken_over() {
            let Some(backend) = $open else { return };
            super::frontier::an_expired_lease_is_taken_over(backend.store()).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn concurrent_workers_never_get_the_same_domain() {
            let Some(backend) = $open else { return };
            let store = backend.store();
            super::frontier::concurrent_workers_never_get_the_same_domain(|| {
                backend.frontier_handle(&store)
            })
            .await;
        }

        #[tokio::test]
        async fn revisits_adapt_to_what_a_crawl_saw() {
            let Some(backend) = $open else { return };
            super::frontier::revisits_adapt_to_what_a_crawl_saw(backend.store()).await;
        }

        #[tokio::test]
        async fn the_deny_list_holds() {
            let Some(backend) = $open else { return };
            super::frontier::the_deny_list_holds(backend.store()).await;
        }

        #[tokio::test]
        async fn named_targets_are_leased_once_per_crawl() {
            let Some(backend) = $open else { return };
            super::frontier::named_targets_are_leased_once_per_crawl(backend.store()).await;
        }

        #[tokio::test]
        async fn the_frontier_lists_in_pages() {
            let Some(backend) = $open else { return };
            super::frontier::the_frontier_lists_in_pages(backend.store()).await;
        }
    };
}
pub(crate) use frontier_conformance;

/// A clock a test moves by hand, in seconds since the epoch.
fn test_clock(start: i64) -> (Arc<AtomicI64>, store::embedded::Clock) {
    let now = Arc::new(AtomicI64::new(start));
    let read = Arc::clone(&now);
    let clock: store::embedded::Clock = Arc::new(move || {
        time::OffsetDateTime::from_unix_timestamp(read.load(Ordering::SeqCst))
            .expect("a valid time")
    });
    (now, clock)
}

/// With the store's clock moved by hand: a domain whose skills change is visited again sooner
/// than one that does not, and a clock set back (a domain's last crawl in the future) makes
/// the domain due at once instead of stranding it.
#[tokio::test]
async fn a_simulated_clock_drives_the_schedule_and_survives_being_set_back() {
    let dir = tempdir();
    let start = 1_800_000_000;
    let (now, clock) = test_clock(start);
    let store = Store::from_backend(Arc::new(
        EmbeddedStore::open_with_clock(&dir, clock).unwrap(),
    ));
    let frontier = store.frontier();
    frontier
        .add(seeds(&["changes.test", "steady.test"]), AddMode::Keep)
        .await
        .unwrap();
    let schedule = Schedule::default();
    let mut visits = std::collections::BTreeMap::<String, usize>::new();
    // Ten simulated days, an hour at a time: crawl whatever is due.
    for hour in 0..240 {
        now.store(start + hour * 3600, Ordering::SeqCst);
        let leased = frontier.lease("sim", 10, LONG).await.unwrap();
        let results: Vec<Crawled> = leased
            .iter()
            .map(|target| Crawled {
                domain: target.domain.clone(),
                outcome: Outcome::Ok,
                changed: target.domain == "changes.test",
                not_before: None,
            })
            .collect();
        for result in &results {
            *visits.entry(result.domain.clone()).or_default() += 1;
        }
        frontier.finish("sim", results, schedule).await.unwrap();
    }
    assert!(
        visits["changes.test"] > 2 * visits["steady.test"],
        "{visits:?}"
    );

    // The clock goes back nine days, before both domains' last crawls: their schedules say
    // days ahead of the new "now" plus the jump; they are due at once instead.
    now.store(start + 238 * 3600 - 9 * 86_400, Ordering::SeqCst);
    let leased = frontier.lease("after-jump", 10, LONG).await.unwrap();
    assert_eq!(domains(&leased), ["changes.test", "steady.test"]);
}
