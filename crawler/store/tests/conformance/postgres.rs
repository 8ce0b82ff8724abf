//! The suite against PostgreSQL, plus what only a shared database has to get right: schema
//! versions and the order of the change log under concurrent writers.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use store::{Migrated, SCHEMA_VERSION, StoreError, StoredRecord};
use tokio_postgres::NoTls;

use super::*;

/// The variable that names the test server.
const URL_VARIABLE: &str = "SKILLSCOUT_TEST_POSTGRES";

/// A schema of its own on the test server, dropped with the guard: tests run in parallel
/// and leave nothing behind.
pub(crate) struct TestSchema {
    /// The server's URL, as given.
    server: String,
    /// The URL that selects this schema.
    url: String,
    name: String,
}

impl TestSchema {
    /// Creates a fresh schema, or returns `None` (with a note) when no server is configured;
    /// under CI a missing server fails instead.
    #[allow(clippy::print_stderr)]
    pub(crate) fn create() -> Option<TestSchema> {
        let Some(server) = std::env::var(URL_VARIABLE)
            .ok()
            .filter(|url| !url.is_empty())
        else {
            assert!(
                std::env::var_os("CI").is_none(),
                "{URL_VARIABLE} is unset: under CI the PostgreSQL tests run, they do not skip \
                 (scripts/pg-throwaway.sh starts a throwaway server)"
            );
            eprintln!(
                "skipping: {URL_VARIABLE} is unset (scripts/pg-throwaway.sh starts a throwaway server)"
            );
            return None;
        };
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "skillscout_test_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        admin(
            &server,
            &format!("DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name}"),
        );
        // The schema's name is also the connections' application name, so a test can find
        // (and end) its own connections.
        let separator = if server.contains('?') { '&' } else { '?' };
        let url =
            format!("{server}{separator}options=-c%20search_path%3D{name}&application_name={name}");
        Some(TestSchema { server, url, name })
    }

    /// Runs `sql` in this schema.
    pub(crate) fn execute(&self, sql: &str) {
        admin(&self.url, sql);
    }
}

impl Drop for TestSchema {
    fn drop(&mut self) {
        admin(
            &self.server,
            &format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name),
        );
    }
}

impl Backend for TestSchema {
    fn store(&self) -> Store {
        store::open(Some(&self.url), Path::new("unused")).unwrap().0
    }

    fn blobs(&self) -> Blobs {
        store::open(Some(&self.url), Path::new("unused")).unwrap().1
    }

    fn frontier_handle(&self, _store: &Store) -> store::Frontier {
        self.store().frontier().clone()
    }
}

/// Runs `sql` on its own connection, from a thread of its own (callable anywhere, a test's
/// runtime and a `Drop` included).
fn admin(url: &str, sql: &str) {
    let (url, sql) = (url.to_owned(), sql.to_owned());
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let (client, connection) = tokio_postgres::connect(&url, NoTls).await.unwrap();
            tokio::spawn(connection);
            client.batch_execute(&sql).await.unwrap();
        });
    })
    .join()
    .unwrap();
}

conformance!(TestSchema::create());
super::frontier::frontier_conformance!(TestSchema::create());

/// A database migrated by a newer binary is refused, whether opened or migrated, and left
/// as it is.
#[tokio::test]
async fn a_newer_schema_is_refused() {
    let Some(schema) = TestSchema::create() else {
        return;
    };
    assert_eq!(
        store::migrate(&schema.url).unwrap(),
        Migrated {
            from: 0,
            to: SCHEMA_VERSION
        }
    );
    assert_eq!(
        store::migrate(&schema.url).unwrap(),
        Migrated {
            from: SCHEMA_VERSION,
            to: SCHEMA_VERSION
        }
    );
    schema.execute("INSERT INTO schema_version (version, name) VALUES (999, 'from the future')");
    for error in [
        store::open(Some(&schema.url), Path::new("unused")).unwrap_err(),
        store::migrate(&schema.url).unwrap_err(),
    ] {
        match error {
            StoreError::SchemaTooNew { found, known, .. } => {
                assert_eq!((found, known), (999, SCHEMA_VERSION));
            }
            other => panic!("expected SchemaTooNew, got {other}"),
        }
    }
}

/// Two processes starting at once on an empty database migrate it once.
#[tokio::test]
async fn concurrent_opens_migrate_once() {
    let Some(schema) = TestSchema::create() else {
        return;
    };
    let url = schema.url.clone();
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || store::migrate(&url).unwrap())
        })
        .collect();
    let mut froms: Vec<i64> = handles
        .into_iter()
        .map(|h| h.join().unwrap().from)
        .collect();
    froms.sort_unstable();
    assert_eq!(froms, [0, SCHEMA_VERSION]);
}

/// Other locations are refused with a typed error that never repeats a password.
#[test]
fn bad_locations_are_refused() {
    let error = store::open(Some("mysql://u:secret@db/x"), Path::new("unused")).unwrap_err();
    assert!(
        matches!(error, StoreError::InvalidLocation { .. }),
        "{error}"
    );
    assert!(!error.to_string().contains("secret"));
    let error = store::migrate("./data").unwrap_err();
    assert!(
        matches!(error, StoreError::InvalidLocation { .. }),
        "{error}"
    );
    // An empty location (an empty environment variable) is the embedded store.
    let dir = tempdir();
    let (store, _blobs) = store::open(Some(""), &dir).unwrap();
    assert_eq!(store.blocking().last_seq().unwrap(), 0);
    assert!(dir.join(store::STORE_FILE).is_file());
}

/// An unreachable server is an `Unavailable` error at open, after the read retries.
#[test]
fn an_unreachable_server_is_unavailable() {
    let dir = tempdir();
    std::fs::create_dir_all(&*dir).unwrap();
    let url = format!(
        "postgres://nobody@/nothing?host={}&connect_timeout=1",
        dir.display()
    );
    let error = store::open(Some(&url), Path::new("unused")).unwrap_err();
    assert!(matches!(error, StoreError::Unavailable { .. }), "{error}");
}

/// A writer that holds the change counter (it took a number and has not committed) makes
/// every other writer wait: numbers are handed out in commit order, so a reader following
/// the change log never moves past a number that commits later.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_writer_waits_for_an_earlier_one() {
    let Some(schema) = TestSchema::create() else {
        return;
    };
    let store = schema.store();

    // Writer A, by hand: locks the counter, takes number 1, writes its record, stays open.
    let (mut client, connection) = tokio_postgres::connect(&schema.url, NoTls).await.unwrap();
    tokio::spawn(connection);
    let transaction = client.transaction().await.unwrap();
    let seq: i64 = transaction
        .query_one("SELECT last_seq FROM change_counter FOR UPDATE", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(seq, 0);
    let first = StoredRecord {
        skill: skills(&[("first", "A.")], T1).remove(0),
        removed_at: None,
        seq: 1,
    };
    transaction
        .execute(
            "INSERT INTO records (id, index_url, removed, seq, record) VALUES ($1, $2, false, 1, $3)",
            &[
                &first.skill.id.to_string(),
                &first.skill.index_url.as_str(),
                &serde_json::to_vec(&first).unwrap(),
            ],
        )
        .await
        .unwrap();
    transaction
        .execute("UPDATE change_counter SET last_seq = 1", &[])
        .await
        .unwrap();

    // Writer B, through the store, starts later and must wait for A.
    let writer = {
        let store = store.clone();
        std::thread::spawn(move || {
            store
                .blocking()
                .upsert(skills(&[("second", "B.")], T1), T1)
                .unwrap()
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!writer.is_finished(), "a second writer ran past the first");
    // A reader sees neither yet.
    assert!(store.changes_after(0, 10).await.unwrap().is_empty());
    assert_eq!(store.last_seq().await.unwrap(), 0);

    transaction.commit().await.unwrap();
    assert_eq!(writer.join().unwrap().added, 1);
    let log: Vec<(String, u64)> = store
        .changes_after(0, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|record| (record.skill.name.to_string(), record.seq))
        .collect();
    assert_eq!(log, [("first".to_owned(), 1), ("second".to_owned(), 2)]);
}

/// Two writers storing at once while a reader follows the change log: the reader sees every
/// change, numbered without gaps, and never sees a number below one it already passed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_following_concurrent_writers_misses_nothing() {
    const WRITERS: usize = 2;
    const RECORDS_EACH: usize = 40;
    let Some(schema) = TestSchema::create() else {
        return;
    };
    let store = schema.store();
    let writers: Vec<_> = (0..WRITERS)
        .map(|writer| {
            // A handle of its own: a pool of its own, as another process would have.
            let store = schema.store();
            std::thread::spawn(move || {
                for index in 0..RECORDS_EACH {
                    let name = format!("w{writer}-r{index}");
                    store
                        .blocking()
                        .upsert(skills(&[(&name, "D.")], T1), T1)
                        .unwrap();
                }
            })
        })
        .collect();

    let mut seen: Vec<u64> = Vec::new();
    let mut cursor = 0;
    loop {
        // Read up to the end of the log, then stop once the writers were done before it.
        let writers_done = writers.iter().all(std::thread::JoinHandle::is_finished);
        loop {
            let page = store.blocking().changes_after(cursor, 7).unwrap();
            if page.is_empty() {
                break;
            }
            for record in page {
                assert!(record.seq > cursor, "{} came after {cursor}", record.seq);
                cursor = record.seq;
                seen.push(record.seq);
            }
        }
        if writers_done {
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    for writer in writers {
        writer.join().unwrap();
    }
    let total = (WRITERS * RECORDS_EACH) as u64;
    assert_eq!(seen, (1..=total).collect::<Vec<_>>());
    assert_eq!(store.last_seq().await.unwrap(), total);
}

/// Blobs whose bytes no longer match their digest count as absent, as on disk; a skill text
/// with a NUL character (which PostgreSQL's JSON type refuses) is stored like any other.
#[tokio::test]
async fn damaged_blobs_are_absent_and_nul_characters_are_kept() {
    let Some(schema) = TestSchema::create() else {
        return;
    };
    let blobs = schema.blobs();
    let digest = blobs.put(b"hello".to_vec()).await.unwrap();
    schema.execute("UPDATE blobs SET bytes = 'tampered'::bytea");
    assert_eq!(blobs.get(&digest).await.unwrap(), None);

    let store = schema.store();
    let mut skill = skills(&[("nul", "N.")], T1).remove(0);
    skill.description = "before\0after".to_owned();
    store.upsert(vec![skill], T1).await.unwrap();
    let stored = store.record("example.test/nul").await.unwrap().unwrap();
    assert_eq!(stored.skill.description, "before\0after");
}

/// A batch that fails part-way is stored not at all: its records, statuses and change
/// numbers vanish with the transaction, and the store goes on working.
#[tokio::test]
async fn a_failed_batch_stores_nothing() {
    let Some(schema) = TestSchema::create() else {
        return;
    };
    let store = schema.store();
    // The database refuses the status of one domain, after the batch stored another's.
    schema.execute(
        "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN RAISE EXCEPTION 'refused for the test'; END $$; \
         CREATE TRIGGER refuse BEFORE INSERT ON domains FOR EACH ROW \
         WHEN (NEW.domain = 'refused.test') EXECUTE FUNCTION refuse()",
    );
    let good = DomainUpdate {
        status: status(T1, vec![index_url()]),
        fresh: skills(&[("alpha", "A.")], T1),
        streamed: Streamed::default(),
        cache: vec![(index_url(), None)],
        withdrawn: Vec::new(),
    };
    let mut refused_status = status(T1, vec![]);
    refused_status.domain = "refused.test".parse().unwrap();
    let refused = DomainUpdate {
        status: refused_status,
        fresh: Vec::new(),
        streamed: Streamed::default(),
        cache: Vec::new(),
        withdrawn: Vec::new(),
    };
    let error = store
        .apply(vec![good.clone(), refused], T1)
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("refused for the test"),
        "{error}"
    );
    assert!(store.record("example.test/alpha").await.unwrap().is_none());
    assert!(store.domains().await.unwrap().is_empty());
    assert_eq!(store.last_seq().await.unwrap(), 0);
    // The next batch takes number 1, on the same pool.
    store.apply(vec![good], T1).await.unwrap();
    assert_eq!(
        store
            .record("example.test/alpha")
            .await
            .unwrap()
            .unwrap()
            .seq,
        1
    );
}

/// After the server ended the pool's connections, reads are answered on new ones (the pool
/// drops a connection it finds closed; a read that meets one is tried again).
#[tokio::test]
async fn a_read_survives_a_dropped_connection() {
    let Some(schema) = TestSchema::create() else {
        return;
    };
    let store = schema.store();
    store
        .apply_domain(
            &status(T1, vec![index_url()]),
            skills(&[("alpha", "A.")], T1),
            T1,
        )
        .await
        .unwrap();
    for _ in 0..3 {
        schema.execute(&format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name = '{}' AND pid <> pg_backend_pid()",
            schema.name
        ));
        assert!(store.record("example.test/alpha").await.unwrap().is_some());
        assert_eq!(store.last_seq().await.unwrap(), 1);
    }
}

/// A role that may only read (a serving replica's) opens a database already at this
/// binary's schema version: opening migrates nothing and creates nothing.
#[tokio::test]
async fn a_read_only_role_opens_a_current_database() {
    let Some(schema) = TestSchema::create() else {
        return;
    };
    let store = schema.store();
    store
        .apply_domain(
            &status(T1, vec![index_url()]),
            skills(&[("alpha", "A.")], T1),
            T1,
        )
        .await
        .unwrap();
    let role = ReaderRole::create(&schema);
    let reader = store::open(
        Some(&format!("{}&user={}", schema.url, role.name)),
        Path::new("unused"),
    )
    .unwrap()
    .0;
    assert!(reader.record("example.test/alpha").await.unwrap().is_some());
    let error = reader
        .upsert(skills(&[("beta", "B.")], T1), T1)
        .await
        .unwrap_err();
    assert!(matches!(error, StoreError::Database { .. }), "{error}");
}

/// A login role that may read the test schema, dropped with the guard.
struct ReaderRole<'a> {
    schema: &'a TestSchema,
    name: String,
}

impl ReaderRole<'_> {
    fn create(schema: &TestSchema) -> ReaderRole<'_> {
        let name = format!("{}_reader", schema.name);
        schema.execute(&format!(
            "CREATE ROLE {name} LOGIN; GRANT USAGE ON SCHEMA {schema} TO {name}; \
             GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {name}",
            schema = schema.name
        ));
        ReaderRole { schema, name }
    }
}

impl Drop for ReaderRole<'_> {
    fn drop(&mut self) {
        self.schema
            .execute(&format!("DROP OWNED BY {0}; DROP ROLE {0}", self.name));
    }
}
