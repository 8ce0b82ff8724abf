//! `api::serve` on a real socket: it answers, a search sees a new index commit without a
//! restart, and it stops gracefully when told to.

use std::sync::Arc;
use std::time::Duration;

use api::{AppState, ServeConfig, Tokens};
use indexer::{Index, IndexConfig};
use store::Store;
use store::blobs::Blobs;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Sends one HTTP/1.1 GET and returns the status code and body.
async fn http_get(addr: std::net::SocketAddr, path: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, body)| body)
        .to_owned();
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_on_a_socket_sees_new_commits_and_shuts_down_gracefully() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_owned();
    // An empty directory first: the index gets the crawl later, while serving.
    let store = Arc::new(Store::open(&data.join("empty")).unwrap());
    let blobs = Blobs::open(&data).unwrap();
    let Index { mut writer, search } =
        Index::open_or_create(&data.join("index"), IndexConfig::default()).unwrap();
    let state = AppState::new(
        search.clone(),
        store,
        blobs,
        Tokens::none(),
        ServeConfig::default(),
    );

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(api::serve(listener, state, async {
        let _ = stopped.await;
    }));

    let (status, body) = http_get(addr, "/healthz").await;
    assert_eq!(status, 200, "{body}");
    let (_, body) = http_get(addr, "/v1/search?q=pdf").await;
    assert!(body.contains("\"total\":0"), "{body}");

    // Fill another store with the fixture web and sync it into the served index.
    let fixture = data.join("fixture");
    let (fixture_store, _) =
        tokio::task::spawn_blocking(move || crate::fixture::crawl_fixture_web(&fixture))
            .await
            .unwrap();
    tokio::task::spawn_blocking(move || {
        indexer::sync(&fixture_store, &mut writer).unwrap();
        search.reload().unwrap();
    })
    .await
    .unwrap();
    let (status, body) = http_get(addr, "/v1/search?q=merge").await;
    assert_eq!(status, 200);
    assert!(body.contains("pdfworks.test/pdf-merge"), "{body}");

    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .expect("the server stops")
        .unwrap()
        .unwrap();
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "nothing listens any more"
    );
}
