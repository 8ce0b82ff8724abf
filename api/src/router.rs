//! The route table: every endpoint of docs/api.md, from every front end (the JSON routes,
//! the web pages, MCP, JSON-RPC), and the layers around them. Mounting the front ends is all
//! it does with them; they meet only in the read model (`directory`).

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request};
use axum::http::header::{AUTHORIZATION, ETAG, IF_NONE_MATCH};
use axum::http::{Method, Uri};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tower_http::cors::{Any, CorsLayer};
use tower_http::trace::TraceLayer;

use crate::error::{ApiError, shorten};
use crate::intake::indexnow;
use crate::routes::{admin, changes, domains, health, mirror, publish, search, sharing, skills};
use crate::state::{AppState, MAX_STREAM_HOLD, WorkPermit};
use crate::{caching, export, mcp, metrics, ratelimit, rpc, web};

/// The largest body the admin API takes: a page of seeds.
const ADMIN_BODY_BYTES: usize = 16 * 1024 * 1024;

/// Builds the router.
pub(crate) fn router(state: AppState) -> Router {
    // Reads: CORS (browsers and agents call them cross-origin) and caching headers.
    let cors = CorsLayer::new()
        .allow_origin(Any)
        .allow_methods([Method::GET, Method::HEAD])
        .allow_headers([AUTHORIZATION, IF_NONE_MATCH])
        .expose_headers([ETAG])
        .max_age(Duration::from_secs(3600));
    let reads = Router::new()
        .route("/v1/search", get(search::search))
        .route("/v1/skills/{domain}/{name}", get(skills::record))
        .route(
            "/v1/skills/{domain}/{name}/descriptor",
            get(sharing::descriptor),
        )
        .route(
            "/v1/skills/{domain}/{name}/files/{*path}",
            get(skills::file),
        )
        .route("/v1/domains", get(domains::list).post(publish::submit))
        .route("/v1/domains/{domain}", get(domains::one))
        .route("/v1/changes", get(changes::changes))
        .route(
            "/mirror/{domain}/.well-known/agent-skills/{*path}",
            get(mirror::mirror),
        )
        .route("/.well-known/skill-sharing", get(sharing::index))
        .route("/skills", get(sharing::registry))
        .route("/healthz", get(health::healthz))
        .route("/metrics", get(health::metrics))
        .route("/openapi.json", get(crate::openapi::openapi_json))
        .route("/", get(web::home))
        .route("/search", get(web::search_redirect))
        .route("/skill/{domain}/{name}", get(web::skill))
        .route("/domains", get(web::domains).post(web::submit_form))
        .route("/domains/{domain}", get(web::domain))
        .route("/assets/{file}", get(web::asset))
        // Before the layers: it replaces each route's 405 fallback, which the layers wrap
        // (CORS answers preflight requests there).
        .method_not_allowed_fallback(method_not_allowed)
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            caching::conditional,
        ))
        // The submissions (`POST /v1/domains`, the "Add your site" form) are the only bodies
        // read here: capped as `/rpc`'s are.
        .layer(DefaultBodyLimit::max(state.config().max_body_bytes))
        .layer(cors.clone());
    // Streamed bodies: no entity tag (the caching middleware would read the body whole to
    // hash it), and `no-store`, set by the handler.
    let streams = Router::new()
        .route("/v1/export", get(export::http::export))
        .method_not_allowed_fallback(method_not_allowed)
        .layer(cors);
    let rpc = Router::new()
        .route("/rpc", post(rpc::rpc))
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(state.config().max_body_bytes));

    // MCP: the transport answers POST (and refuses other methods) itself; the caller comes
    // from the bearer token before it reads anything.
    let mcp = Router::new()
        .route_service("/mcp", mcp::service(&state))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            mcp::caller_layer,
        ));

    // The operator's API: tokens of its own, no CORS (browsers have no business calling it),
    // bodies up to a page of 10,000 seeds.
    let admin = Router::new()
        .route("/admin/v1/seeds", get(admin::list).post(admin::add))
        .route("/admin/v1/seeds/remove", post(admin::remove))
        .route("/admin/v1/delist", post(admin::delist))
        .route("/admin/v1/undelist", post(admin::undelist))
        .route("/admin/v1/backup", get(admin::backup))
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(ADMIN_BODY_BYTES));

    // The publishers' writes: anonymous, budgeted; CORS so that a publisher's own tooling in
    // a browser can ping; IndexNow bodies up to 10,000 URLs.
    let publishers = Router::new()
        .route("/v1/domains/{domain}/recrawl", post(publish::recrawl))
        .route("/domains/{domain}/recrawl", post(web::recrawl_form))
        .route("/indexnow", get(publish::ping_get).post(publish::ping_post))
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(indexnow::MAX_BODY_BYTES))
        .layer(
            CorsLayer::new()
                .allow_origin(Any)
                .allow_methods([Method::GET, Method::POST])
                .allow_headers([axum::http::header::CONTENT_TYPE]),
        );

    reads
        .merge(streams)
        .merge(publishers)
        .merge(rpc)
        .merge(admin)
        .merge(mcp)
        .fallback(fallback)
        .layer(middleware::from_fn_with_state(
            state.clone(),
            caching::timeout,
        ))
        .layer(middleware::from_fn_with_state(state.clone(), shed_load))
        // Outside the work limit: a client over its budget is refused without taking a
        // permit.
        .layer(middleware::from_fn_with_state(
            state.clone(),
            ratelimit::limit,
        ))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            metrics::track,
        ))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(|request: &Request| {
                    let matched_path = request
                        .extensions()
                        .get::<MatchedPath>()
                        .map(MatchedPath::as_str);
                    tracing::info_span!(
                        "request",
                        method = %request.method(),
                        uri = %request.uri(),
                        matched_path,
                    )
                })
                .on_failure(log_failure),
        )
        .with_state(state)
}

/// Logs a failed answer: a 503 (load shed past `--max-in-flight`, or a store out of reach)
/// as a warning, since the server meant it and `/metrics` and `/healthz` count it; any other
/// server error as an error.
fn log_failure(
    class: tower_http::classify::ServerErrorsFailureClass,
    latency: std::time::Duration,
    _span: &tracing::Span,
) {
    let latency_ms = latency.as_millis();
    match class {
        tower_http::classify::ServerErrorsFailureClass::StatusCode(status)
            if status == axum::http::StatusCode::SERVICE_UNAVAILABLE =>
        {
            tracing::warn!(%status, latency_ms, "response failed");
        }
        class => tracing::error!(classification = %class, latency_ms, "response failed"),
    }
}

/// Serves a request only when the server is under its work limit; past it, answers at once
/// with a 503 `overloaded` and `Retry-After`, so that a burst costs a fast refusal instead of a
/// queue whose every entry waits and holds memory. `/healthz` and `/metrics` are always
/// answered: they are how an operator or a load balancer sees the overload.
async fn shed_load(
    axum::extract::State(state): axum::extract::State<AppState>,
    request: Request,
    next: middleware::Next,
) -> Response {
    if matches!(request.uri().path(), "/healthz" | "/metrics") {
        return next.run(request).await;
    }
    let Some(permit) = state.try_start_work() else {
        if web::is_page_path(request.uri().path()) {
            return web::overloaded_page();
        }
        return ApiError::Overloaded.into_response();
    };
    // Held here until the handler has answered (a handler's extractors drop the request's
    // extensions before its body runs), and by a streamed body until it is sent.
    let permit = WorkPermit(Arc::new(std::sync::Mutex::new(Some(permit))));
    let mut request = request;
    request.extensions_mut().insert(permit.clone());
    let response = next.run(request).await;
    // A body still streaming holds a clone: it counts for at most `MAX_STREAM_HOLD` more, so
    // that clients reading slowly (or not at all) cannot hold every permit.
    if Arc::strong_count(&permit.0) > 1 {
        let streaming = Arc::downgrade(&permit.0);
        tokio::spawn(async move {
            tokio::time::sleep(MAX_STREAM_HOLD).await;
            if let Some(permit) = streaming.upgrade() {
                WorkPermit(permit).release();
            }
        });
    }
    drop(permit);
    response
}

/// Unknown paths: the web directory's 404 page for its own paths, the JSON error elsewhere.
async fn fallback(uri: Uri) -> Response {
    let path = uri.path();
    if web::is_page_path(path) {
        return web::not_found_page();
    }
    ApiError::NotFound(format!("no route for {}", shorten(path, 200))).into_response()
}

async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::extract::State;
    use store::blobs::Blobs;
    use tower::ServiceExt;

    use super::*;
    use crate::testing;

    /// Records the level of every event.
    #[derive(Default)]
    struct Levels(std::sync::Mutex<Vec<tracing::Level>>);

    impl tracing::Subscriber for Levels {
        fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
            tracing::span::Id::from_u64(1)
        }
        fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
        fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
        fn event(&self, event: &tracing::Event<'_>) {
            self.0.lock().unwrap().push(*event.metadata().level());
        }
        fn enter(&self, _: &tracing::span::Id) {}
        fn exit(&self, _: &tracing::span::Id) {}
    }

    // A 503 the server means (load shed, a store out of reach) is a warning; other server
    // errors stay errors.
    #[test]
    fn a_shed_request_is_a_warning_and_a_server_error_an_error() {
        use tower_http::classify::ServerErrorsFailureClass;
        let levels = std::sync::Arc::new(Levels::default());
        tracing::subscriber::with_default(std::sync::Arc::clone(&levels), || {
            let span = tracing::Span::none();
            for status in [
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            ] {
                log_failure(
                    ServerErrorsFailureClass::StatusCode(status),
                    std::time::Duration::ZERO,
                    &span,
                );
            }
        });
        assert_eq!(
            *levels.0.lock().unwrap(),
            [tracing::Level::WARN, tracing::Level::ERROR]
        );
    }

    // A handler's extractors drop the request's extensions before its body runs: the permit
    // must not live only there, or the work limit counts nothing but extraction.
    #[tokio::test]
    async fn a_request_holds_its_work_permit_until_its_handler_answers() {
        let dir = tempfile::tempdir().unwrap();
        let records = vec![testing::record("a.test/alpha", formats::Access::Public)];
        let status = testing::status_of(&records);
        let state = testing::directory(
            dir.path(),
            &status,
            records,
            Blobs::open(dir.path()).unwrap(),
        );
        let app = Router::new()
            .route(
                "/work",
                get(|State(state): State<AppState>| async move {
                    tokio::task::yield_now().await;
                    state.available_work().to_string()
                }),
            )
            .layer(middleware::from_fn_with_state(state.clone(), shed_load))
            // Outside the work limit: a client over its budget is refused without taking a
            // permit.
            .layer(middleware::from_fn_with_state(
                state.clone(),
                ratelimit::limit,
            ))
            .with_state(state.clone());
        let response = app
            .oneshot(Request::builder().uri("/work").body(Body::empty()).unwrap())
            .await
            .unwrap();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        let free_while_working: usize = std::str::from_utf8(&bytes).unwrap().parse().unwrap();
        assert_eq!(free_while_working, crate::DEFAULT_MAX_IN_FLIGHT - 1);
        assert_eq!(state.available_work(), crate::DEFAULT_MAX_IN_FLIGHT);
    }
}
