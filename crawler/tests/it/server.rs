//! A scriptable HTTP/1.1 server on 127.0.0.1:0 for crawl tests.
//!
//! Each request is answered by a route function that sees the Host, the path and the headers
//! and returns a [`Reply`]: an ordinary response, or a hostile script (hang, drip bytes, lie
//! about the length, close mid-body, reset the connection). The server records every request with server-side
//! timestamps, so tests can count hits per host and check the spacing between requests.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A connection the server answers on: plain TCP or TLS over it.
pub(crate) trait Connection: AsyncRead + AsyncWrite + Unpin + Send + 'static {
    /// Makes closing the connection send a reset (RST) instead of a FIN.
    fn reset_on_close(&self) -> std::io::Result<()>;
}

impl Connection for TcpStream {
    fn reset_on_close(&self) -> std::io::Result<()> {
        self.set_zero_linger()
    }
}

impl Connection for tokio_rustls::server::TlsStream<TcpStream> {
    fn reset_on_close(&self) -> std::io::Result<()> {
        self.get_ref().0.set_zero_linger()
    }
}

/// One request the server saw.
#[derive(Debug, Clone)]
pub(crate) struct Hit {
    pub(crate) host: String,
    pub(crate) path: String,
    pub(crate) headers: HashMap<String, String>,
    /// The status sent (0 when none was).
    pub(crate) status: u16,
    /// When the request head arrived.
    pub(crate) started: Instant,
    /// When the server began to send its answer: no client can have had the answer sooner,
    /// so a client's pause after this request starts at this moment or later.
    pub(crate) replied: Instant,
    /// When the server finished answering (for hangs: when it gave up).
    pub(crate) finished: Instant,
}

/// What to do with a request.
#[derive(Debug, Clone)]
pub(crate) enum Reply {
    /// A complete response with a Content-Length.
    Full {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// Send the head, then the body one byte at a time with a pause between bytes.
    Drip { body: Vec<u8>, pause: Duration },
    /// Declare `declared` bytes, send `body`, then close the connection.
    LyingLength { declared: usize, body: Vec<u8> },
    /// A chunked body of `total` bytes of `fill`, produced as it is sent.
    Chunked {
        headers: Vec<(String, String)>,
        total: usize,
        fill: u8,
    },
    /// Accept the request and never answer.
    Hang,
    /// Read the request and reset the connection (a TCP RST, no response).
    Reset,
    /// Read the request and close the connection cleanly (a FIN, no response).
    Close,
}

impl Reply {
    pub(crate) fn status(status: u16) -> Reply {
        Reply::Full {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    pub(crate) fn ok(body: impl Into<Vec<u8>>) -> Reply {
        Reply::Full {
            status: 200,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    pub(crate) fn json(body: impl Into<Vec<u8>>) -> Reply {
        Reply::ok(body).header("Content-Type", "application/json")
    }

    pub(crate) fn redirect(location: &str) -> Reply {
        Reply::status(302).header("Location", location)
    }

    pub(crate) fn not_found() -> Reply {
        Reply::status(404)
    }

    pub(crate) fn header(mut self, name: &str, value: &str) -> Reply {
        if let Reply::Full { headers, .. } | Reply::Chunked { headers, .. } = &mut self {
            headers.push((name.to_owned(), value.to_owned()));
        }
        self
    }
}

/// The request as a route sees it.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) host: String,
    pub(crate) path: String,
    pub(crate) headers: HashMap<String, String>,
}

type Route = dyn Fn(&Request) -> Reply + Send + Sync;

/// A running server; dropped, it stops.
pub(crate) struct TestServer {
    pub(crate) addr: SocketAddr,
    hits: Arc<Mutex<Vec<Hit>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl TestServer {
    /// Starts a server whose every request goes to `route`.
    pub(crate) async fn start(
        route: impl Fn(&Request) -> Reply + Send + Sync + 'static,
    ) -> TestServer {
        TestServer::start_on("127.0.0.1:0", route).await
    }

    /// Starts a server on `bind` (e.g. `[::1]:0`).
    pub(crate) async fn start_on(
        bind: &str,
        route: impl Fn(&Request) -> Reply + Send + Sync + 'static,
    ) -> TestServer {
        let listener = TcpListener::bind(bind).await.expect("bind a loopback port");
        // Without TCP_NODELAY a response written in two parts waits out the client's delayed
        // ACK (40 ms a request on Linux).
        TestServer::spawn(listener, route, |stream| async move {
            stream.set_nodelay(true)?;
            Ok(stream)
        })
    }

    /// Serves `listener`, turning each accepted connection into a stream with `accept`
    /// (plain TCP, or a TLS handshake).
    fn spawn<S, F, Fut>(
        listener: TcpListener,
        route: impl Fn(&Request) -> Reply + Send + Sync + 'static,
        accept: F,
    ) -> TestServer
    where
        S: Connection,
        F: Fn(TcpStream) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = std::io::Result<S>> + Send + 'static,
    {
        let addr = listener.local_addr().unwrap();
        let hits = Arc::new(Mutex::new(Vec::new()));
        let route: Arc<Route> = Arc::new(route);
        let task = {
            let hits = Arc::clone(&hits);
            tokio::spawn(async move {
                loop {
                    let Ok((stream, _)) = listener.accept().await else {
                        continue;
                    };
                    let (hits, route) = (Arc::clone(&hits), Arc::clone(&route));
                    let accepted = accept(stream);
                    tokio::spawn(async move {
                        if let Ok(stream) = accepted.await {
                            let _ = serve_connection(stream, route, hits).await;
                        }
                    });
                }
            })
        };
        TestServer { addr, hits, task }
    }

    /// Starts an HTTPS server on 127.0.0.1:0 with this certificate chain and key (PEM).
    #[allow(dead_code)]
    pub(crate) async fn start_tls(
        cert_pem: &[u8],
        key_pem: &[u8],
        route: impl Fn(&Request) -> Reply + Send + Sync + 'static,
    ) -> TestServer {
        use tokio_rustls::rustls;
        use tokio_rustls::rustls::pki_types::pem::PemObject;
        use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert_pem)
            .collect::<Result<_, _>>()
            .expect("a PEM certificate chain");
        let key = PrivateKeyDer::from_pem_slice(key_pem).expect("a PEM private key");
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .expect("a usable certificate");
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        TestServer::spawn(listener, route, move |stream| {
            let _ = stream.set_nodelay(true);
            acceptor.clone().accept(stream)
        })
    }

    /// Serves files below `root/<host>/` for each Host, 404 for the rest.
    pub(crate) async fn static_tree(root: PathBuf) -> TestServer {
        TestServer::start(move |request| serve_file(&root, request)).await
    }

    /// Returns every request seen so far.
    pub(crate) fn hits(&self) -> Vec<Hit> {
        self.hits.lock().unwrap().clone()
    }

    /// Forgets the requests seen so far.
    pub(crate) fn clear_hits(&self) {
        self.hits.lock().unwrap().clear();
    }

    /// Returns the requests seen for `host`.
    pub(crate) fn hits_for(&self, host: &str) -> Vec<Hit> {
        self.hits()
            .into_iter()
            .filter(|hit| hit.host == host)
            .collect()
    }

    /// Returns the port.
    pub(crate) fn port(&self) -> u16 {
        self.addr.port()
    }
}

/// Maps `root/<host>/<path>` to a response.
pub(crate) fn serve_file(root: &std::path::Path, request: &Request) -> Reply {
    let path = request.path.split('?').next().unwrap_or("/");
    let mut file = root.join(&request.host);
    for segment in path.split('/').filter(|s| !s.is_empty()) {
        let decoded = percent_decode(segment);
        if decoded == ".." || decoded.contains('/') {
            return Reply::not_found();
        }
        file.push(decoded);
    }
    match std::fs::read(&file) {
        Ok(bytes) if file.is_file() => {
            let content_type = if path.ends_with(".json") || path.ends_with("/skill-sharing") {
                "application/json"
            } else if path.ends_with(".md") {
                "text/markdown"
            } else if path.ends_with(".tar.gz") {
                "application/gzip"
            } else if path.ends_with(".zip") {
                "application/zip"
            } else {
                "application/octet-stream"
            };
            Reply::ok(bytes).header("Content-Type", content_type)
        }
        _ => Reply::not_found(),
    }
}

fn percent_decode(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%'
            && let Some(hex) = bytes.get(index + 1..index + 3)
            && let Ok(value) = u8::from_str_radix(std::str::from_utf8(hex).unwrap_or("zz"), 16)
        {
            out.push(value);
            index += 3;
            continue;
        }
        out.push(bytes[index]);
        index += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

async fn serve_connection<S: Connection>(
    mut stream: S,
    route: Arc<Route>,
    hits: Arc<Mutex<Vec<Hit>>>,
) -> std::io::Result<()> {
    let mut buffer = Vec::new();
    loop {
        // Read one request head (GET only: no bodies).
        let head_end = loop {
            if let Some(end) = find_head_end(&buffer) {
                break end;
            }
            let mut chunk = [0u8; 4096];
            let read = stream.read(&mut chunk).await?;
            if read == 0 {
                return Ok(());
            }
            buffer.extend_from_slice(&chunk[..read]);
        };
        let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
        buffer.drain(..head_end + 4);
        let started = Instant::now();
        let request = parse_head(&head);
        let reply = route(&request);
        // Recorded on arrival, so that a request never answered still counts.
        let position = {
            let mut hits = hits.lock().unwrap();
            hits.push(Hit {
                host: request.host.clone(),
                path: request.path.clone(),
                headers: request.headers.clone(),
                status: match &reply {
                    Reply::Full { status, .. } => *status,
                    Reply::Drip { .. } | Reply::LyingLength { .. } | Reply::Chunked { .. } => 200,
                    Reply::Hang | Reply::Reset | Reply::Close => 0,
                },
                started,
                replied: started,
                finished: started,
            });
            hits.len() - 1
        };
        if let Reply::Reset = reply {
            // Dropping the stream with a zero linger resets the connection.
            return stream.reset_on_close();
        }
        if let Reply::Close = reply {
            return stream.shutdown().await;
        }
        hits.lock().unwrap()[position].replied = Instant::now();
        let written = write_reply(&mut stream, &reply).await;
        hits.lock().unwrap()[position].finished = Instant::now();
        let keep_open = written?;
        if !keep_open {
            return Ok(());
        }
    }
}

fn find_head_end(buffer: &[u8]) -> Option<usize> {
    buffer.windows(4).position(|window| window == b"\r\n\r\n")
}

fn parse_head(head: &str) -> Request {
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or("");
    let path = request_line.split(' ').nth(1).unwrap_or("/").to_owned();
    let mut headers = HashMap::new();
    for line in lines {
        if let Some((name, value)) = line.split_once(':') {
            headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
        }
    }
    let host = headers
        .get("host")
        .map(|host| host.rsplit_once(':').map_or(host.as_str(), |(h, _)| h))
        .unwrap_or("")
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    Request {
        host,
        path,
        headers,
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// Writes the reply; returns whether the connection may serve another request.
async fn write_reply<S: AsyncWrite + Unpin>(
    stream: &mut S,
    reply: &Reply,
) -> std::io::Result<bool> {
    match reply {
        Reply::Full {
            status,
            headers,
            body,
        } => {
            let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(*status));
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(body).await?;
            Ok(true)
        }
        Reply::Drip { body, pause } => {
            let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
            stream.write_all(head.as_bytes()).await?;
            for byte in body {
                stream.write_all(&[*byte]).await?;
                stream.flush().await?;
                tokio::time::sleep(*pause).await;
            }
            Ok(true)
        }
        Reply::LyingLength { declared, body } => {
            let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {declared}\r\n\r\n");
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(body).await?;
            stream.shutdown().await?;
            Ok(false)
        }
        Reply::Chunked {
            headers,
            total,
            fill,
        } => {
            let mut head = String::from("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n");
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            stream.write_all(head.as_bytes()).await?;
            let chunk = vec![*fill; 64 * 1024];
            let mut sent = 0;
            while sent < *total {
                let size = chunk.len().min(total - sent);
                stream.write_all(format!("{size:x}\r\n").as_bytes()).await?;
                stream.write_all(&chunk[..size]).await?;
                stream.write_all(b"\r\n").await?;
                sent += size;
            }
            stream.write_all(b"0\r\n\r\n").await?;
            Ok(true)
        }
        Reply::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(false)
        }
        Reply::Reset | Reply::Close => Ok(false),
    }
}
