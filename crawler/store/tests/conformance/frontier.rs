//! The crawl frontier that the workers of a shared store lease domains from (PostgreSQL
//! only: the embedded store has none). Leases, renewals, finishing, expiry, and many workers
//! leasing at once.

use std::collections::HashSet;
use std::time::Duration;

use store::{Frontier, FrontierCounts, FrontierTarget};

use super::postgres::TestSchema;
use super::*;

fn targets(domains: &[&str]) -> Vec<FrontierTarget> {
    domains
        .iter()
        .map(|domain| FrontierTarget {
            domain: (*domain).to_owned(),
            target: format!("http://{domain}"),
        })
        .collect()
}

fn frontier(schema: &TestSchema) -> Frontier {
    schema
        .store()
        .frontier()
        .cloned()
        .expect("a PostgreSQL store has a frontier")
}

fn domains(leased: &[FrontierTarget]) -> Vec<String> {
    let mut domains: Vec<String> = leased.iter().map(|t| t.domain.clone()).collect();
    domains.sort();
    domains
}

const LONG: Duration = Duration::from_secs(600);
const HOUR: Duration = Duration::from_secs(3600);

/// The embedded store has no frontier: its crawls take their targets as given.
#[test]
fn the_embedded_store_has_no_frontier() {
    let dir = tempdir();
    let (store, _blobs) = store::open(None, &dir).unwrap();
    assert!(store.frontier().is_none());
}

/// A domain is leased to one worker at a time; only its holder renews or finishes it; a
/// finished domain is not due until its next crawl; adding it again changes nothing.
#[tokio::test]
async fn leases_renewals_and_finishing() {
    let Some(schema) = TestSchema::create() else {
        return;
    };
    let frontier = frontier(&schema);
    frontier
        .add(targets(&["a.test", "b.test", "c.test"]))
        .await
        .unwrap();
    assert_eq!(
        frontier.counts().await.unwrap(),
        FrontierCounts {
            due: 3,
            leased: 0,
            total: 3
        }
    );

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
    assert_eq!(
        frontier.counts().await.unwrap(),
        FrontierCounts {
            due: 0,
            leased: 3,
            total: 3
        }
    );

    // Renewing names only what the caller holds.
    let mine = domains(&first);
    let mut asked = mine.clone();
    asked.push(second[0].domain.clone());
    let mut renewed = frontier.renew("one", asked, LONG).await.unwrap();
    renewed.sort();
    assert_eq!(renewed, mine);

    // Another worker cannot finish a domain it does not hold.
    assert!(
        frontier
            .finish("two", vec![mine[0].clone()], HOUR)
            .await
            .unwrap()
            .is_empty()
    );
    let finished = frontier.finish("one", mine.clone(), HOUR).await.unwrap();
    assert_eq!(finished.len(), 2);
    // Finished twice is finished once.
    assert!(frontier.finish("one", mine, HOUR).await.unwrap().is_empty());
    assert_eq!(
        frontier.counts().await.unwrap(),
        FrontierCounts {
            due: 0,
            leased: 1,
            total: 3
        }
    );

    // Adding the same targets (a worker started a moment later) does not make them due; a
    // domain given twice in one call keeps its first target.
    let mut again = targets(&["a.test", "b.test", "c.test", "d.test"]);
    again.push(FrontierTarget {
        domain: "d.test".to_owned(),
        target: "https://d.test/docs".to_owned(),
    });
    frontier.add(again).await.unwrap();
    let later = frontier.lease("three", 10, LONG).await.unwrap();
    assert_eq!(domains(&later), ["d.test"]);
    assert_eq!(later[0].target, "http://d.test");

    // A domain finished with no wait is due again at once.
    frontier
        .finish("three", vec!["d.test".to_owned()], Duration::ZERO)
        .await
        .unwrap();
    assert_eq!(
        domains(&frontier.lease("one", 10, LONG).await.unwrap()),
        ["d.test"]
    );
}

/// A lease that is not renewed expires, and another worker takes the domain over; the first
/// holder can then neither renew nor finish it.
#[tokio::test]
async fn an_expired_lease_is_taken_over() {
    let Some(schema) = TestSchema::create() else {
        return;
    };
    let frontier = frontier(&schema);
    frontier.add(targets(&["x.test"])).await.unwrap();
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
            .finish("dead", lost.clone(), HOUR)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(frontier.finish("alive", lost, HOUR).await.unwrap().len(), 1);
    assert!(frontier.counts().await.unwrap().idle());
}

/// Workers leasing at once from their own connections (as processes would) share the
/// frontier between them: every domain is handed out exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_workers_never_get_the_same_domain() {
    const DOMAINS: usize = 300;
    const WORKERS: usize = 4;
    let Some(schema) = TestSchema::create() else {
        return;
    };
    let names: Vec<String> = (0..DOMAINS).map(|i| format!("h{i:03}.test")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    frontier(&schema).add(targets(&refs)).await.unwrap();

    let workers: Vec<_> = (0..WORKERS)
        .map(|worker| {
            let frontier = frontier(&schema);
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
    let mut busy_workers = 0;
    for worker in workers {
        let got = worker.join().unwrap();
        total += got.len();
        busy_workers += usize::from(!got.is_empty());
        seen.extend(got);
    }
    assert_eq!(total, DOMAINS, "a domain was leased twice");
    assert_eq!(seen.len(), DOMAINS);
    assert!(busy_workers >= 2, "only {busy_workers} worker leased");
    let counts = frontier(&schema).counts().await.unwrap();
    assert_eq!((counts.due, counts.leased), (0, DOMAINS as u64));
}
