//! The runtime that drives the connections, the connection pool, and what PostgreSQL's
//! errors mean to a caller.

use std::future::Future;
use std::ops::{Deref, DerefMut};
use std::str::FromStr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::runtime::Runtime;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_postgres::config::{Host, SslMode};
use tokio_postgres::error::SqlState;
use tokio_postgres::types::FromSql;
use tokio_postgres::{Client, NoTls, Row};

use super::{PostgresConfig, READ_ATTEMPTS, READ_RETRY_DELAY, RUNTIME_THREADS};
use crate::types::StoreError;

/// The application name the server shows for our connections (`pg_stat_activity`).
const APPLICATION_NAME: &str = "skillscout";
/// tokio-postgres's default idle time before the first TCP keepalive probe.
const DEFAULT_KEEPALIVES_IDLE: Duration = Duration::from_secs(2 * 60 * 60);
/// Ours: a dead server is noticed within a minute or so rather than hours.
const KEEPALIVES_IDLE: Duration = Duration::from_secs(30);

/// A runtime of the backend's own and the pool it drives. Shared by a store and its blobs.
#[derive(Debug)]
pub(crate) struct Engine {
    /// `None` only while dropping.
    runtime: Option<Runtime>,
    pool: Arc<Pool>,
}

impl Engine {
    /// Starts the runtime and checks that a connection can be opened.
    pub(crate) fn start(config: &PostgresConfig) -> Result<Engine, StoreError> {
        let engine = Engine::new(config)?;
        // Fail at open, not at the first call, when the server cannot be reached.
        engine.read(|pool| async move { pool.get().await.map(drop) })?;
        Ok(engine)
    }

    /// Starts the runtime; connections are opened when first needed.
    fn new(config: &PostgresConfig) -> Result<Engine, StoreError> {
        let pool = Arc::new(Pool::new(config)?);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(RUNTIME_THREADS)
            .thread_name("skillscout-postgres")
            .enable_io()
            .enable_time()
            .build()
            .map_err(|error| StoreError::Database {
                location: pool.location.clone(),
                message: format!("cannot start the client's runtime: {error}"),
            })?;
        Ok(Engine {
            runtime: Some(runtime),
            pool,
        })
    }

    /// Returns where the store is.
    pub(crate) fn location(&self) -> &str {
        &self.pool.location
    }

    /// Applies the pending migrations.
    pub(crate) fn migrate(&self) -> Result<super::Migrated, StoreError> {
        self.run(Arc::clone(&self.pool), |pool| async move {
            let mut client = pool.get().await?;
            super::migrate::apply_pending(&pool, &mut client).await
        })
    }

    /// Runs `work` on the backend's runtime and waits for its result. Safe from any thread,
    /// a runtime's worker included (it blocks that thread meanwhile, as any blocking store
    /// call does).
    pub(crate) fn run<T, F, W>(&self, pool: Arc<Pool>, work: W) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: Future<Output = Result<T, StoreError>> + Send + 'static,
        W: FnOnce(Arc<Pool>) -> F,
    {
        let Some(runtime) = &self.runtime else {
            return Err(interrupted());
        };
        let (sender, receiver) = std::sync::mpsc::sync_channel(1);
        let future = work(pool);
        runtime.spawn(async move {
            // The caller waits on the receiver; it is gone only if the caller is.
            let _ = sender.send(future.await);
        });
        receiver.recv().map_err(|_| interrupted())?
    }

    /// Runs the read `work`, trying again with backoff while the server is unavailable.
    pub(crate) fn read<T, F, W>(&self, work: W) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: Future<Output = Result<T, StoreError>> + Send + 'static,
        W: Fn(Arc<Pool>) -> F + Send + 'static,
    {
        self.run(Arc::clone(&self.pool), move |pool| async move {
            let mut delay = READ_RETRY_DELAY;
            let mut attempt = 1;
            loop {
                match work(Arc::clone(&pool)).await {
                    Err(StoreError::Unavailable { message, .. }) if attempt < READ_ATTEMPTS => {
                        tracing::warn!(
                            location = %pool.location,
                            error = %message,
                            attempt,
                            "crawl store unavailable, retrying the read"
                        );
                        tokio::time::sleep(delay).await;
                        delay = delay.saturating_mul(2);
                        attempt += 1;
                    }
                    outcome => return outcome,
                }
            }
        })
    }

    /// Runs the write `work` once: a write that fails is not retried (the caller decides).
    pub(crate) fn write<T, F, W>(&self, work: W) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: Future<Output = Result<T, StoreError>> + Send + 'static,
        W: FnOnce(Arc<Pool>) -> F,
    {
        self.run(Arc::clone(&self.pool), work)
    }
}

impl Drop for Engine {
    /// Stops the runtime without waiting: dropping a runtime in place panics inside another
    /// runtime, where the last handle may well be dropped.
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

fn interrupted() -> StoreError {
    StoreError::Interrupted {
        message: "the PostgreSQL client's runtime stopped or its task panicked".to_owned(),
    }
}

/// How connections are made: in the clear, or over TLS (`sslmode=require`).
#[derive(Clone)]
enum Tls {
    None,
    #[cfg(feature = "tls")]
    Rustls(tokio_postgres_rustls::MakeRustlsConnect),
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Tls::None => "no TLS",
            #[cfg(feature = "tls")]
            Tls::Rustls(_) => "TLS",
        })
    }
}

/// The URL parameter naming a PEM file of the CA certificates that a TLS server's certificate
/// must chain to (as libpq's `sslrootcert`); without it, the system's roots.
const SSL_ROOT_CERT: &str = "sslrootcert";

/// Takes `sslrootcert` out of `url` (tokio-postgres does not know it); returns the URL left
/// and the file named, if any.
fn split_root_cert(url: &str) -> (String, Option<String>) {
    let Ok(mut parsed) = url::Url::parse(url) else {
        // Not a URL: tokio-postgres says why.
        return (url.to_owned(), None);
    };
    let mut root_cert = None;
    let kept: Vec<(String, String)> = parsed
        .query_pairs()
        .filter_map(|(key, value)| {
            if key == SSL_ROOT_CERT {
                root_cert = Some(value.into_owned());
                None
            } else {
                Some((key.into_owned(), value.into_owned()))
            }
        })
        .collect();
    if root_cert.is_none() {
        return (url.to_owned(), None);
    }
    if kept.is_empty() {
        parsed.set_query(None);
    } else {
        parsed.query_pairs_mut().clear().extend_pairs(kept);
    }
    (parsed.to_string(), root_cert)
}

/// The TLS of `sslmode`: `require` verifies the server's certificate and name against the
/// CA certificates of `root_cert`, else the system's; `disable` and `prefer` (tokio-postgres's
/// default) connect in the clear, as libpq's `prefer` does with a server without TLS, and
/// never risk failing on a certificate nobody asked to check.
fn tls(mode: SslMode, root_cert: Option<&str>) -> Result<Tls, StoreError> {
    let invalid = |message: String| StoreError::InvalidLocation { message };
    if mode != SslMode::Require {
        if root_cert.is_some() {
            return Err(invalid(format!(
                "{SSL_ROOT_CERT} needs sslmode=require (TLS is used only then)"
            )));
        }
        return Ok(Tls::None);
    }
    rustls_tls(root_cert)
}

/// `sslmode=require` in a build without the `tls` feature.
#[cfg(not(feature = "tls"))]
fn rustls_tls(_root_cert: Option<&str>) -> Result<Tls, StoreError> {
    Err(StoreError::InvalidLocation {
        message: "sslmode=require: this build of the store has no TLS (the `tls` feature)"
            .to_owned(),
    })
}

/// The TLS of `sslmode=require`, verifying against `root_cert`'s certificates or the system's.
#[cfg(feature = "tls")]
fn rustls_tls(root_cert: Option<&str>) -> Result<Tls, StoreError> {
    let invalid = |message: String| StoreError::InvalidLocation { message };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|error| invalid(format!("cannot configure TLS: {error}")))?;
    let config = match root_cert {
        Some(path) => {
            use rustls::pki_types::CertificateDer;
            use rustls::pki_types::pem::PemObject;
            let pem = std::fs::read(path)
                .map_err(|error| invalid(format!("cannot read {SSL_ROOT_CERT} {path}: {error}")))?;
            let mut roots = rustls::RootCertStore::empty();
            for certificate in CertificateDer::pem_slice_iter(&pem) {
                let certificate = certificate.map_err(|error| {
                    invalid(format!(
                        "{SSL_ROOT_CERT} {path}: invalid PEM certificate: {error}"
                    ))
                })?;
                roots.add(certificate).map_err(|error| {
                    invalid(format!(
                        "{SSL_ROOT_CERT} {path}: unusable certificate: {error}"
                    ))
                })?;
            }
            if roots.is_empty() {
                return Err(invalid(format!(
                    "{SSL_ROOT_CERT} {path}: no PEM certificate (-----BEGIN CERTIFICATE-----)"
                )));
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        None => {
            let verifier = rustls_platform_verifier::Verifier::new(provider).map_err(|error| {
                invalid(format!("cannot use the system's CA certificates: {error}"))
            })?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(verifier))
                .with_no_client_auth()
        }
    };
    Ok(Tls::Rustls(tokio_postgres_rustls::MakeRustlsConnect::new(
        config,
    )))
}

/// At most `size` connections, opened on demand and kept while they are usable.
#[derive(Debug)]
pub(crate) struct Pool {
    config: tokio_postgres::Config,
    tls: Tls,
    statement_timeout: Duration,
    acquire_timeout: Duration,
    idle: Mutex<Vec<Client>>,
    permits: Arc<Semaphore>,
    /// User, server and database, for messages; never the password.
    pub(crate) location: String,
}

impl Pool {
    fn new(config: &PostgresConfig) -> Result<Pool, StoreError> {
        let (url, root_cert) = split_root_cert(&config.url);
        // The URL is not repeated in the message: it may hold a password.
        let mut parsed = tokio_postgres::Config::from_str(&url).map_err(|error| {
            StoreError::InvalidLocation {
                message: format!("not a usable PostgreSQL URL: {error}"),
            }
        })?;
        parsed.connect_timeout(config.connect_timeout);
        // A server that vanishes without closing the connection (a dead host, a cut link)
        // is noticed by TCP keepalives; their default first probe, after 2 h, would leave a
        // call waiting that long. A URL's own `keepalives_idle` is kept.
        if parsed.get_keepalives_idle() == DEFAULT_KEEPALIVES_IDLE {
            parsed.keepalives_idle(KEEPALIVES_IDLE);
        }
        if parsed.get_application_name().is_none() {
            parsed.application_name(APPLICATION_NAME);
        }
        let tls = tls(parsed.get_ssl_mode(), root_cert.as_deref())?;
        let size = config.pool_size.max(1);
        Ok(Pool {
            tls,
            location: describe(&parsed),
            statement_timeout: config.statement_timeout,
            // A caller waits for a free connection at most as long as the statements that
            // hold them may run, plus a connect.
            acquire_timeout: config.statement_timeout + config.connect_timeout,
            config: parsed,
            idle: Mutex::new(Vec::with_capacity(size)),
            permits: Arc::new(Semaphore::new(size)),
        })
    }

    /// Opens a connection with `tls` and drives it on this runtime until it closes.
    async fn connect<T>(&self, tls: T) -> Result<Client, StoreError>
    where
        T: tokio_postgres::tls::MakeTlsConnect<tokio_postgres::Socket>,
        T::Stream: Send + 'static,
    {
        let (client, connection) = self
            .config
            .connect(tls)
            .await
            .map_err(|error| self.error(&error))?;
        let location = self.location.clone();
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%location, %error, "crawl store connection closed");
            }
        });
        Ok(client)
    }

    /// Returns a connection: an idle one, or a new one when fewer than `size` are open.
    pub(crate) async fn get(self: &Arc<Pool>) -> Result<PooledClient, StoreError> {
        let permit = tokio::time::timeout(
            self.acquire_timeout,
            Arc::clone(&self.permits).acquire_owned(),
        )
        .await
        .map_err(|_| self.unavailable("no connection of the pool became free in time"))?
        .map_err(|_| self.unavailable("the pool is closed"))?;
        loop {
            let idle = self
                .idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .pop();
            match idle {
                Some(client) if !client.is_closed() => {
                    return Ok(self.pooled(client, permit));
                }
                Some(_closed) => continue,
                None => break,
            }
        }
        let client = match &self.tls {
            Tls::None => self.connect(NoTls).await?,
            #[cfg(feature = "tls")]
            Tls::Rustls(tls) => self.connect(tls.clone()).await?,
        };
        // A statement may run this long; a session that stalls inside a transaction (a
        // frozen process holding the change counter's lock) is ended after as long, so that
        // it cannot stop every other writer.
        let millis = self.statement_timeout.as_millis();
        client
            .batch_execute(&format!(
                "SET statement_timeout = {millis}; SET idle_in_transaction_session_timeout = {millis}"
            ))
            .await
            .map_err(|error| self.error(&error))?;
        Ok(self.pooled(client, permit))
    }

    fn pooled(self: &Arc<Pool>, client: Client, permit: OwnedSemaphorePermit) -> PooledClient {
        PooledClient {
            client: Some(client),
            pool: Arc::clone(self),
            _permit: permit,
        }
    }

    /// Returns what `error` means to the caller: [`StoreError::Unavailable`] when the server
    /// cannot be reached or the connection was lost, [`StoreError::Database`] otherwise.
    pub(crate) fn error(&self, error: &tokio_postgres::Error) -> StoreError {
        let message = error_chain(error);
        if is_unavailable(error) {
            self.unavailable(&message)
        } else {
            StoreError::Database {
                location: self.location.clone(),
                message,
            }
        }
    }

    fn unavailable(&self, message: &str) -> StoreError {
        StoreError::Unavailable {
            location: self.location.clone(),
            message: message.to_owned(),
        }
    }

    /// Returns column `index` of `row`; a column of another type than expected is a
    /// [`StoreError::Corrupt`] (tables this binary did not create), never a panic.
    pub(crate) fn column<'row, T: FromSql<'row>>(
        &self,
        row: &'row Row,
        index: usize,
    ) -> Result<T, StoreError> {
        row.try_get(index)
            .map_err(|error| self.corrupt(&format!("column {index}"), error_chain(&error)))
    }

    /// Returns the error for a stored value that does not decode.
    pub(crate) fn corrupt(&self, what: &str, message: impl ToString) -> StoreError {
        StoreError::Corrupt {
            location: self.location.clone(),
            what: what.to_owned(),
            message: message.to_string(),
        }
    }
}

/// A connection on loan from the pool; back to the pool when dropped, unless it broke.
pub(crate) struct PooledClient {
    client: Option<Client>,
    pool: Arc<Pool>,
    _permit: OwnedSemaphorePermit,
}

impl Deref for PooledClient {
    type Target = Client;

    fn deref(&self) -> &Client {
        self.client
            .as_ref()
            .expect("a pooled client holds its connection until dropped")
    }
}

impl DerefMut for PooledClient {
    fn deref_mut(&mut self) -> &mut Client {
        self.client
            .as_mut()
            .expect("a pooled client holds its connection until dropped")
    }
}

impl Drop for PooledClient {
    /// Returns a usable connection to the pool. A transaction dropped unfinished has queued
    /// its `ROLLBACK` already, so the connection is clean for the next user.
    fn drop(&mut self) {
        if let Some(client) = self.client.take()
            && !client.is_closed()
        {
            self.pool
                .idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(client);
        }
    }
}

/// True for errors after which the same call may succeed later: no connection could be made,
/// the connection broke, or the server is shutting down or starting.
fn is_unavailable(error: &tokio_postgres::Error) -> bool {
    if error.is_closed() {
        return true;
    }
    match error.code() {
        Some(code) => {
            code.code().starts_with("08")
                || [
                    SqlState::ADMIN_SHUTDOWN,
                    SqlState::CRASH_SHUTDOWN,
                    SqlState::CANNOT_CONNECT_NOW,
                    SqlState::TOO_MANY_CONNECTIONS,
                ]
                .contains(code)
        }
        // No SQLSTATE: the error is the client's, and an I/O error under it is the network.
        None => {
            let mut source = std::error::Error::source(error);
            while let Some(cause) = source {
                if cause.is::<std::io::Error>() {
                    return true;
                }
                source = cause.source();
            }
            // tokio-postgres reports a connect timeout without a source.
            error.to_string().contains("timeout")
        }
    }
}

/// Returns the error and its causes on one line (the server's message is a cause).
fn error_chain(error: &tokio_postgres::Error) -> String {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}

/// Returns `postgres://user@host:port/database` for messages: never the password.
fn describe(config: &tokio_postgres::Config) -> String {
    let user = config.get_user().unwrap_or("");
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .map(|host| match host {
            Host::Tcp(name) => name.clone(),
            #[cfg(unix)]
            Host::Unix(path) => path.display().to_string(),
        })
        .collect();
    let ports: Vec<String> = config.get_ports().iter().map(u16::to_string).collect();
    let mut location = format!("postgres://{user}@{}", hosts.join(","));
    if !ports.is_empty() {
        location.push(':');
        location.push_str(&ports.join(","));
    }
    location.push('/');
    location.push_str(config.get_dbname().unwrap_or(""));
    location
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The result of one call of test work.
    type Attempt = std::pin::Pin<Box<dyn Future<Output = Result<usize, StoreError>> + Send>>;

    /// Returns work that fails as unavailable `failures` times, then succeeds, and counts
    /// its calls in `calls`.
    fn flaky(
        failures: usize,
        calls: &Arc<std::sync::atomic::AtomicUsize>,
    ) -> impl Fn(Arc<Pool>) -> Attempt + Send + 'static {
        let calls = Arc::clone(calls);
        move |pool: Arc<Pool>| -> Attempt {
            let call = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Box::pin(async move {
                if call < failures {
                    Err(pool.unavailable("connection lost"))
                } else {
                    Ok(call)
                }
            })
        }
    }

    #[test]
    fn reads_are_retried_while_unavailable_and_writes_are_not() {
        let engine = Engine::new(&PostgresConfig::new("postgres://nobody@/nothing")).unwrap();
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let read = engine.read(flaky(2, &calls));
        assert_eq!(read.unwrap(), 2);

        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let read = engine.read(flaky(usize::MAX, &calls));
        assert!(matches!(read, Err(StoreError::Unavailable { .. })));
        assert_eq!(
            calls.load(std::sync::atomic::Ordering::SeqCst),
            READ_ATTEMPTS as usize
        );

        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let write = engine.write(flaky(1, &calls));
        assert!(matches!(write, Err(StoreError::Unavailable { .. })));
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn the_location_names_no_password() {
        let config = PostgresConfig::new("postgres://crawler:secret@db.internal:5433/skills");
        let pool = Pool::new(&config).unwrap();
        assert_eq!(pool.location, "postgres://crawler@db.internal:5433/skills");
        assert!(!format!("{pool:?}").contains("secret"));
        let config = PostgresConfig::new("postgres://crawler@/skills?host=/run/postgresql");
        assert_eq!(
            Pool::new(&config).unwrap().location,
            "postgres://crawler@/run/postgresql/skills"
        );
    }

    #[test]
    fn sslrootcert_is_taken_out_of_the_url_and_needs_sslmode_require() {
        let (url, root) =
            split_root_cert("postgres://u@db/skills?sslmode=require&sslrootcert=%2Fetc%2Fca.pem");
        assert_eq!(url, "postgres://u@db/skills?sslmode=require");
        assert_eq!(root.as_deref(), Some("/etc/ca.pem"));
        let (url, root) = split_root_cert("postgres://u@db/skills?sslrootcert=ca.pem");
        assert_eq!(
            (url.as_str(), root.as_deref()),
            ("postgres://u@db/skills", Some("ca.pem"))
        );
        let untouched = "postgres://u@/skills?host=/run/postgresql";
        assert_eq!(split_root_cert(untouched), (untouched.to_owned(), None));

        let misplaced = PostgresConfig::new("postgres://u@db/skills?sslrootcert=ca.pem");
        let error = Pool::new(&misplaced).unwrap_err();
        assert!(error.to_string().contains("sslmode=require"), "{error}");
        #[cfg(feature = "tls")]
        {
            let unreadable = PostgresConfig::new(
                "postgres://u@db/skills?sslmode=require&sslrootcert=/nonexistent.pem",
            );
            let error = Pool::new(&unreadable).unwrap_err();
            assert!(
                matches!(error, StoreError::InvalidLocation { .. }),
                "{error}"
            );
            assert!(error.to_string().contains("/nonexistent.pem"), "{error}");
            let ca = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/tls/ca.pem");
            let trusted = PostgresConfig::new(format!(
                "postgres://u@db/skills?sslmode=require&sslrootcert={ca}"
            ));
            assert_eq!(format!("{:?}", Pool::new(&trusted).unwrap().tls), "TLS");
        }
        #[cfg(not(feature = "tls"))]
        {
            let required = PostgresConfig::new("postgres://u@db/skills?sslmode=require");
            let error = Pool::new(&required).unwrap_err();
            assert!(error.to_string().contains("no TLS"), "{error}");
        }
        let clear = PostgresConfig::new("postgres://u@db/skills");
        assert_eq!(format!("{:?}", Pool::new(&clear).unwrap().tls), "no TLS");
    }

    #[test]
    fn a_bad_url_is_an_invalid_location_that_hides_the_password() {
        let config = PostgresConfig::new("postgres://crawler:secret@db/skills?sslmode=bogus");
        let error = Pool::new(&config).unwrap_err();
        assert!(
            matches!(error, StoreError::InvalidLocation { .. }),
            "{error}"
        );
        assert!(!error.to_string().contains("secret"), "{error}");
    }
}
