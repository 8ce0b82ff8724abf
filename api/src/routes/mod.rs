//! The route table: every endpoint of DESIGN.md §6 and the layers around them.

pub(crate) mod changes;
pub(crate) mod domains;
mod export;
mod health;
mod mirror;
mod rpc;
pub(crate) mod search;
pub(crate) mod sharing;
mod skills;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request};
use axum::http::header::{AUTHORIZATION, ETAG, IF_NONE_MATCH};
use axum::http::{Method, Uri};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tokio::sync::OwnedSemaphorePermit;
use tower_http::cors::{Any, CorsLayer};
use tower_http::trace::TraceLayer;

use crate::error::ApiError;
use crate::state::AppState;
use crate::{caching, metrics, web};

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
        .route("/v1/domains", get(domains::list))
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
        .route("/", get(web::home))
        .route("/skill/{domain}/{name}", get(web::skill))
        .route("/domains", get(web::domains))
        .route("/domains/{domain}", get(web::domain))
        // Before the layers: it replaces each route's 405 fallback, which the layers wrap
        // (CORS answers preflight requests there).
        .method_not_allowed_fallback(method_not_allowed)
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            caching::conditional,
        ))
        .layer(cors.clone());
    // Streamed bodies: no entity tag (the caching middleware would read the body whole to
    // hash it), and `no-store`, set by the handler.
    let streams = Router::new()
        .route("/v1/export", get(export::export))
        .method_not_allowed_fallback(method_not_allowed)
        .layer(cors);
    let rpc = Router::new()
        .route("/rpc", post(rpc::rpc))
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(state.config().max_body_bytes));

    reads
        .merge(streams)
        .merge(rpc)
        .fallback(fallback)
        .layer(middleware::from_fn_with_state(
            state.clone(),
            caching::timeout,
        ))
        .layer(middleware::from_fn_with_state(state.clone(), shed_load))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            metrics::track,
        ))
        .layer(
            TraceLayer::new_for_http().make_span_with(|request: &Request| {
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
            }),
        )
        .with_state(state)
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
        return ApiError::Overloaded.into_response();
    };
    let mut request = request;
    let permit = WorkPermit(Arc::new(Mutex::new(Some(permit))));
    request.extensions_mut().insert(permit.clone());
    // Dropped here unless a handler took the permit to keep it while its body streams.
    next.run(request).await
}

/// The work permit of a request, which a handler whose body is streamed after it returns
/// (an export) takes, so the work counts against the limit until its last byte.
#[derive(Clone)]
pub(crate) struct WorkPermit(Arc<Mutex<Option<OwnedSemaphorePermit>>>);

impl WorkPermit {
    /// Takes the permit (once).
    pub(crate) fn take(&self) -> Option<OwnedSemaphorePermit> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// Unknown paths: the web directory's 404 page for its own paths, the JSON error elsewhere.
async fn fallback(uri: Uri) -> Response {
    let path = uri.path();
    if path.starts_with("/skill/") || path.starts_with("/domains/") {
        return web::not_found_page();
    }
    ApiError::NotFound(format!("no route for {}", web::shorten(path, 200))).into_response()
}

async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}
