//! Per-client rate limits: a client under its budget is served, a flood gets 429s with
//! `Retry-After` and the `RateLimit` headers, token holders have budgets of their own,
//! `X-Forwarded-For` counts only from a trusted proxy, and the limit can be turned off.
//! See: The front door and the operator's kit.

use std::net::SocketAddr;
use std::sync::Arc;

use api::{AppState, RATELIMIT, RATELIMIT_POLICY, RateLimit, ServeConfig, Tokens, TrustedProxy};
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode, header};
use store::Store;
use store::blobs::Blobs;

use crate::fixture::{Reply, send_to, state_over};

/// A server over an empty directory with `limit` and the token `holder-token`.
fn server(limit: Option<&str>, trusted: &[&str]) -> (AppState, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(&dir.path().join("store")).unwrap());
    let blobs = Blobs::open(dir.path()).unwrap();
    let config = ServeConfig {
        rate_limit: limit.and_then(|limit| RateLimit::parse(limit).unwrap()),
        trusted_proxies: trusted
            .iter()
            .map(|proxy| TrustedProxy::parse(proxy).unwrap())
            .collect(),
        ..ServeConfig::default()
    };
    let state = state_over(
        dir.path(),
        store,
        blobs,
        Tokens::from_list(["holder-token", "other-token"]),
        config,
    );
    (state, dir)
}

/// `GET /v1/search` from `peer`, with the given extra headers.
async fn search_from(state: &AppState, peer: &str, headers: &[(&str, &str)]) -> Reply {
    let peer: SocketAddr = format!("{peer}:40000").parse().unwrap();
    let mut request = Request::get("/v1/search?q=pdf").extension(ConnectInfo(peer));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    send_to(state.clone(), request.body(Body::empty()).unwrap()).await
}

/// Sends requests from `peer` until one is refused; returns how many were served first.
async fn exhaust(state: &AppState, peer: &str, headers: &[(&str, &str)]) -> (usize, Reply) {
    for served in 0..1000 {
        let reply = search_from(state, peer, headers).await;
        if reply.status == StatusCode::TOO_MANY_REQUESTS {
            return (served, reply);
        }
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    }
    panic!("never refused");
}

#[tokio::test]
async fn under_budget_every_request_is_served_and_told_what_is_left() {
    let (state, _dir) = server(Some("5/s,burst=10"), &[]);
    let mut left = Vec::new();
    for _ in 0..8 {
        let reply = search_from(&state, "192.0.2.1", &[]).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
        assert_eq!(reply.header(RATELIMIT_POLICY), Some("\"client\";q=10;w=2"));
        let field = reply.header(RATELIMIT).unwrap().to_owned();
        assert!(field.starts_with("\"client\";r="), "{field}");
        left.push(field);
    }
    assert!(left[0].starts_with("\"client\";r=9;"), "{left:?}");
    assert!(left[7].starts_with("\"client\";r=2;"), "{left:?}");

    // The default budget (100/s, bursts of 1,000) lets a script page through results.
    let (state, _dir) = server(Some(&RateLimit::DEFAULT.to_string()), &[]);
    for _ in 0..300 {
        let reply = search_from(&state, "192.0.2.1", &[]).await;
        assert_eq!(reply.status, StatusCode::OK);
    }
}

#[tokio::test]
async fn a_flood_gets_429_with_retry_after_and_ratelimit_headers() {
    let (state, _dir) = server(Some("1/s,burst=3"), &[]);
    let (served, refused) = exhaust(&state, "192.0.2.1", &[]).await;
    assert!((3..=4).contains(&served), "{served}");
    assert_eq!(refused.json()["error"]["code"], "rate_limited");
    let retry: u64 = refused
        .header(header::RETRY_AFTER)
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=2).contains(&retry), "{retry}");
    assert_eq!(refused.header(RATELIMIT_POLICY), Some("\"client\";q=3;w=3"));
    assert_eq!(
        refused.header(RATELIMIT),
        Some(format!("\"client\";r=0;t={retry}").as_str())
    );
    // Another client is not affected; the health check is never counted.
    assert_eq!(
        search_from(&state, "192.0.2.2", &[]).await.status,
        StatusCode::OK
    );
    let peer: SocketAddr = "192.0.2.1:1".parse().unwrap();
    let health = send_to(
        state.clone(),
        Request::get("/healthz")
            .extension(ConnectInfo(peer))
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(health.status, StatusCode::OK);
}

#[tokio::test]
async fn token_holders_have_budgets_of_their_own() {
    let (state, _dir) = server(Some("1/s,burst=3"), &[]);
    let holder = [("authorization", "Bearer holder-token")];
    let other = [("authorization", "Bearer other-token")];
    exhaust(&state, "192.0.2.1", &[]).await;
    // The address is spent; its token holder is not.
    let (served, refused) = exhaust(&state, "192.0.2.1", &holder).await;
    assert!(served >= 3, "{served}");
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
    // The same token from another address shares its budget; another token has its own.
    assert_eq!(
        search_from(&state, "198.51.100.1", &holder).await.status,
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(
        search_from(&state, "192.0.2.1", &other).await.status,
        StatusCode::OK
    );
    // A wrong token is no way around the address's budget.
    let wrong = [("authorization", "Bearer guessed")];
    assert_eq!(
        search_from(&state, "192.0.2.1", &wrong).await.status,
        StatusCode::TOO_MANY_REQUESTS
    );
}

#[tokio::test]
async fn forwarded_for_counts_only_from_a_trusted_proxy() {
    let (state, _dir) = server(Some("1/s,burst=3"), &["10.0.0.0/8"]);
    let first = [("x-forwarded-for", "203.0.113.1")];
    exhaust(&state, "10.0.0.1", &first).await;
    // Behind the proxy, another client has its own budget, whatever it claims further left.
    let second = [("x-forwarded-for", "203.0.113.1, 203.0.113.2")];
    assert_eq!(
        search_from(&state, "10.0.0.1", &second).await.status,
        StatusCode::OK
    );
    assert_eq!(
        search_from(&state, "10.0.0.2", &first).await.status,
        StatusCode::TOO_MANY_REQUESTS,
        "the same client through another proxy of the network"
    );
    // From an untrusted peer the header changes nothing: a new claim each time still floods.
    for (served, n) in (0..10).enumerate() {
        let claim = format!("203.0.113.{}", 100 + n);
        let reply = search_from(&state, "198.51.100.7", &[("x-forwarded-for", &claim)]).await;
        if served >= 4 {
            assert_eq!(reply.status, StatusCode::TOO_MANY_REQUESTS, "{served}");
        }
    }
}

#[tokio::test]
async fn off_means_no_limit_and_no_headers() {
    let (state, _dir) = server(None, &[]);
    for _ in 0..50 {
        let reply = search_from(&state, "192.0.2.1", &[]).await;
        assert_eq!(reply.status, StatusCode::OK);
        assert_eq!(reply.header(RATELIMIT), None);
        assert_eq!(reply.header(RATELIMIT_POLICY), None);
    }
}

/// `api::serve` gives the limiter each connection's peer address.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_socket_the_peer_address_is_the_client() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (state, _dir) = server(Some("1/s,burst=2"), &[]);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(api::serve(listener, state, async {
        let _ = stopped.await;
    }));
    let mut statuses = Vec::new();
    for _ in 0..6 {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let request =
            format!("GET /v1/search HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut response = Vec::new();
        stream.read_to_end(&mut response).await.unwrap();
        let text = String::from_utf8_lossy(&response).into_owned();
        statuses.push(text.split(' ').nth(1).unwrap_or_default().to_owned());
    }
    assert_eq!(&statuses[..2], ["200", "200"], "{statuses:?}");
    assert!(
        statuses.iter().any(|status| status == "429"),
        "{statuses:?}"
    );
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}

/// The publishers' budgets (recrawl requests, submissions, pings) count the same client as
/// the rate limit does: behind a trusted proxy, the address in `X-Forwarded-For`, not the
/// proxy's; with the rate limit off too.
#[tokio::test]
async fn publishers_budgets_count_the_client_behind_a_trusted_proxy() {
    use store::{AddMode, AddedAs, NewTarget};
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(&dir.path().join("store")).unwrap());
    let blobs = Blobs::open(dir.path()).unwrap();
    let domains = ["a.test", "b.test", "c.test", "d.test"];
    store
        .frontier()
        .add(
            domains
                .iter()
                .map(|domain| NewTarget {
                    domain: (*domain).to_owned(),
                    target: format!("http://{domain}"),
                    added_as: AddedAs::Seed,
                    source: None,
                    rank: None,
                })
                .collect(),
            AddMode::Keep,
        )
        .await
        .unwrap();
    let config = ServeConfig {
        rate_limit: None,
        trusted_proxies: vec![TrustedProxy::parse("10.0.0.0/8").unwrap()],
        budgets: api::BudgetConfig {
            client_requests_per_hour: std::num::NonZeroU32::new(2).unwrap(),
            ..api::BudgetConfig::default()
        },
        ..ServeConfig::default()
    };
    let state = state_over(dir.path(), store, blobs, Tokens::none(), config);
    let recrawl = |domain: &str, client: &str| {
        let peer: SocketAddr = "10.0.0.1:40000".parse().unwrap();
        let request = Request::post(format!("/v1/domains/{domain}/recrawl"))
            .extension(ConnectInfo(peer))
            .header("x-forwarded-for", client)
            .body(Body::empty())
            .unwrap();
        send_to(state.clone(), request)
    };
    // One client, through the proxy: two requests, then its budget is spent.
    assert_eq!(
        recrawl("a.test", "203.0.113.1").await.status,
        StatusCode::ACCEPTED
    );
    assert_eq!(
        recrawl("b.test", "203.0.113.1").await.status,
        StatusCode::ACCEPTED
    );
    let refused = recrawl("c.test", "203.0.113.1").await;
    assert_eq!(
        refused.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        refused.text()
    );
    assert!(refused.header(header::RETRY_AFTER).is_some());
    // Another client through the same proxy has its own budget.
    assert_eq!(
        recrawl("d.test", "203.0.113.2").await.status,
        StatusCode::ACCEPTED
    );
}
