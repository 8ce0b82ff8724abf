//! The directory in the skill-sharing protocol (`specs/skill-sharing-discovery.md`), its
//! entries and descriptors made by the read model (`directory::sharing`):
//!
//! - `GET /.well-known/skill-sharing[?type=]`: this directory's own Skill Index, listing the
//!   skills of every domain (§5.2), filtered by capability type (§5.6) and by access (§5.5:
//!   `private` skills only for authenticated callers);
//! - `GET /skills[?type=&limit=&cursor=]`: registry discovery (§5.4), the same entries a page
//!   at a time;
//! - `GET /v1/skills/{domain}/{name}/descriptor`: the Skill Descriptor each entry's
//!   `descriptor_url` points at.

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::HeaderValue;
use axum::http::header::{CONTENT_TYPE, ETAG};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use futures_util::StreamExt;
use indexer::{Caller, MAX_LIMIT};
use serde::Serialize;
use serde_json::{Value, json};

use crate::auth::Auth;
use crate::caching::etag_of;
use crate::cursor;
use crate::directory::sharing::{IndexEntry, MAX_INDEX_SKILLS, PROTOCOL_VERSION, type_filter};
use crate::directory::urls::parse_id;
use crate::error::ApiError;
use crate::extract::{ApiPath, Params};
use crate::state::{AppState, WorkPermit};

/// The `/skills` body.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct RegistryPage {
    /// Skill Index entries, as the skill-sharing protocol defines them.
    #[schema(value_type = Vec<Object>)]
    skills: Vec<IndexEntry>,
    next_cursor: Option<String>,
}

/// `GET /.well-known/skill-sharing[?type=]`: streamed a page of entries at a time, so that an
/// index of [`MAX_INDEX_SKILLS`] skills costs the server one page of memory, and counted
/// against the work limit until it is sent. Its entity tag names what the body is made of
/// (the index snapshot, the filter, the caller), so it is known before the body is written.
#[utoipa::path(
    get,
    path = "/.well-known/skill-sharing",
    tag = "skill-sharing",
    params(("type" = Option<String>, Query, description = "Capability types")),
    responses(
        (status = 200, description = "This directory's Skill Index (skill-sharing protocol)", body = Object),
        (status = 400, description = "A parameter is invalid", body = crate::error::ErrorBody),
        (status = 401, description = "The bearer token is wrong", body = crate::error::ErrorBody),
        (status = 503, description = "Overloaded: try again after `Retry-After`", body = crate::error::ErrorBody)
    ),
    security((), ("bearer" = []))
)]
pub(crate) async fn index(
    State(state): State<AppState>,
    Auth(caller): Auth,
    permit: Option<Extension<WorkPermit>>,
    params: Params,
) -> Result<Response, ApiError> {
    let filter = type_filter(params.all("type")?);
    let head = format!(
        r#"{{"protocol":{},"provider":{},"skills":["#,
        json!({ "version": PROTOCOL_VERSION }),
        json!({ "name": state.config().name, "url": state.directory().urls().url("/") }),
    );
    // Everything the body is made of: the index snapshot, the filter, the caller, and the
    // directory's name and URL (in the provider and every descriptor URL).
    let etag = etag_of(
        format!(
            "skill-sharing\n{}\n{filter:?}\n{caller:?}\n{}\n{}",
            state.directory().snapshot_tag(),
            state.config().name,
            state.directory().urls().url("/"),
        )
        .as_bytes(),
    );
    let pages = IndexPages {
        state,
        caller,
        filter,
        after: None,
        sent: 0,
        _permit: permit.map(|Extension(permit)| permit),
    };
    let head = futures_util::stream::once(async move { Ok(Bytes::from(head)) });
    let entries = futures_util::stream::unfold(pages, IndexPages::next);
    let tail = futures_util::stream::once(async { Ok(Bytes::from_static(b"]}")) });
    let body = Body::from_stream(head.chain(entries).chain(tail));
    Ok((
        [
            (CONTENT_TYPE, HeaderValue::from_static("application/json")),
            (ETAG, etag),
        ],
        body,
    )
        .into_response())
}

/// How many entries one chunk of the streamed index holds.
const INDEX_PAGE: usize = 100;

/// The streamed well-known index: what is left to send.
struct IndexPages {
    state: AppState,
    caller: Caller,
    /// `None` when no record can match the filter.
    filter: Option<Vec<String>>,
    after: Option<String>,
    sent: usize,
    _permit: Option<WorkPermit>,
}

impl IndexPages {
    /// Returns the next chunk of entries (each preceded by a comma but the first), or `None`
    /// when all are sent. A store or index failure ends the body early, which the client sees
    /// as a broken response rather than a short, valid-looking index.
    async fn next(mut self) -> Option<(Result<Bytes, std::io::Error>, IndexPages)> {
        let filter = self.filter.clone()?;
        let max = MAX_INDEX_SKILLS.checked_sub(self.sent)?.min(INDEX_PAGE);
        if max == 0 {
            tracing::warn!(
                max = MAX_INDEX_SKILLS,
                "the well-known skill-sharing index is truncated; /skills lists every skill"
            );
            return None;
        }
        let (caller, after) = (self.caller, self.after.take());
        let page = self
            .state
            .directory()
            .ask(move |directory| directory.sharing_entries(caller, filter, after, max))
            .await;
        let (entries, more) = match page {
            Ok(page) => page,
            Err(error) => {
                tracing::error!(error = %error, "the well-known skill-sharing index stopped early");
                return Some((Err(std::io::Error::other("listing failed")), self));
            }
        };
        let mut chunk = Vec::new();
        for entry in &entries {
            if self.sent > 0 {
                chunk.push(b',');
            }
            if let Err(error) = serde_json::to_writer(&mut chunk, entry) {
                // Strings and an enum: it does not happen; if it did, the body must break.
                tracing::error!(%error, "the well-known skill-sharing index stopped early");
                return Some((Err(std::io::Error::other("serialising failed")), self));
            }
            self.sent += 1;
        }
        match more {
            Some(after) => self.after = Some(after),
            None => self.filter = None,
        }
        Some((Ok(Bytes::from(chunk)), self))
    }
}

/// `GET /skills[?type=&limit=&cursor=]`: registry discovery.
#[utoipa::path(
    get,
    path = "/skills",
    tag = "skill-sharing",
    params(
        ("type" = Option<String>, Query, description = "Capability types"),
        ("limit" = Option<u32>, Query, description = "Entries per page (1 to 100)"),
        ("cursor" = Option<String>, Query, description = "The `next_cursor` of the previous page"),
    ),
    responses(
        (status = 200, description = "A page of Skill Index entries (registry discovery)", body = RegistryPage),
        (status = 400, description = "A parameter is invalid", body = crate::error::ErrorBody),
        (status = 401, description = "The bearer token is wrong", body = crate::error::ErrorBody),
        (status = 503, description = "Overloaded: try again after `Retry-After`", body = crate::error::ErrorBody)
    ),
    security((), ("bearer" = []))
)]
pub(crate) async fn registry(
    State(state): State<AppState>,
    Auth(caller): Auth,
    params: Params,
) -> Result<Json<RegistryPage>, ApiError> {
    let limit = params.limit(MAX_LIMIT)?;
    let filter = type_filter(params.all("type")?);
    let after = match params.one("cursor")? {
        Some(raw) => Some(cursor::decode("registry", raw)?),
        None => None,
    };
    let Some(filter) = filter else {
        return Ok(Json(RegistryPage {
            skills: Vec::new(),
            next_cursor: None,
        }));
    };
    let (skills, next) = state
        .directory()
        .ask(move |directory| directory.sharing_entries(caller, filter, after, limit))
        .await?;
    Ok(Json(RegistryPage {
        skills,
        next_cursor: next.map(|after| cursor::encode("registry", &after)),
    }))
}

/// `GET /v1/skills/{domain}/{name}/descriptor`: the Skill Descriptor of a record.
#[utoipa::path(
    get,
    path = "/v1/skills/{domain}/{name}/descriptor",
    tag = "skill-sharing",
    params(
        ("domain" = String, Path, description = "The publisher's domain"),
        ("name" = String, Path, description = "The skill's name"),
    ),
    responses(
        (status = 200, description = "The skill's Skill Descriptor (skill-sharing protocol)", body = Object),
        (status = 404, description = "No such skill", body = crate::error::ErrorBody),
        (status = 400, description = "A parameter is invalid", body = crate::error::ErrorBody),
        (status = 401, description = "The bearer token is wrong", body = crate::error::ErrorBody),
        (status = 503, description = "Overloaded: try again after `Retry-After`", body = crate::error::ErrorBody)
    ),
    security((), ("bearer" = []))
)]
pub(crate) async fn descriptor(
    State(state): State<AppState>,
    Auth(caller): Auth,
    ApiPath((domain, name)): ApiPath<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let id = parse_id(&domain, &name)?;
    let directory = state.directory();
    let skill = directory.visible_record(caller, id).await?;
    Ok(Json(crate::directory::sharing::descriptor_of(
        directory.urls(),
        &skill,
    )))
}

#[cfg(test)]
mod tests {
    use axum::http::{Request, StatusCode};
    use formats::Access;
    use store::blobs::Blobs;
    use tower::ServiceExt;

    use formats::Skill;

    use super::*;
    use crate::directory::urls::parse_sharing_id;
    use crate::state::MAX_STREAM_HOLD;
    use crate::testing;

    /// A directory of 250 public skills of `many.test` (three pages of the streamed index);
    /// `s007` has a 5,000-character description and a 1 MiB body.
    fn many(dir: &std::path::Path) -> AppState {
        let mut records: Vec<Skill> = (0..250)
            .map(|n| testing::record(&format!("many.test/s{n:03}"), Access::Public))
            .collect();
        records[7].description = "é".repeat(5000);
        records[7].body = "b".repeat(1 << 20);
        let status = testing::status_of(&records);
        testing::directory(dir, &status, records, Blobs::open(dir).unwrap())
    }

    /// Takes every work permit but one, as requests in flight would.
    fn all_permits_but_one(state: &AppState) -> Vec<tokio::sync::OwnedSemaphorePermit> {
        let mut held = Vec::new();
        while let Some(permit) = state.try_start_work() {
            held.push(permit);
        }
        held.pop();
        held
    }

    async fn get(state: &AppState, uri: &str, etag: Option<&str>) -> Response {
        let mut request = Request::builder().uri(uri);
        if let Some(etag) = etag {
            request = request.header("if-none-match", etag);
        }
        let request = request.body(Body::empty()).unwrap();
        crate::router(state.clone()).oneshot(request).await.unwrap()
    }

    // See: the hardening issue: listings must not load every full record, and memory per
    // request is bounded; the index is streamed from compact listing views.
    #[tokio::test]
    async fn the_well_known_index_is_streamed_whole_from_listing_views() {
        let dir = tempfile::tempdir().unwrap();
        let state = many(dir.path());
        let response = get(&state, "/.well-known/skill-sharing", None).await;
        assert_eq!(response.status(), StatusCode::OK);
        let etag = response.headers()[ETAG].to_str().unwrap().to_owned();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        let index: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(index["protocol"]["version"], PROTOCOL_VERSION);
        let skills = index["skills"].as_array().unwrap();
        let ids: Vec<&str> = skills.iter().map(|s| s["id"].as_str().unwrap()).collect();
        let expected: Vec<String> = (0..250).map(|n| format!("s{n:03}@many.test")).collect();
        assert_eq!(ids, expected);
        // A listing carries at most MAX_LISTED_CHARS of a description; the descriptor has all.
        let long = skills[7]["description"].as_str().unwrap();
        assert_eq!(long.chars().count(), indexer::MAX_LISTED_CHARS);
        assert!(long.ends_with('…'));
        let descriptor = get(&state, "/v1/skills/many.test/s007/descriptor", None).await;
        let bytes = axum::body::to_bytes(descriptor.into_body(), usize::MAX)
            .await
            .unwrap();
        let descriptor: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            descriptor["description"].as_str().unwrap().chars().count(),
            5000
        );

        // The entity tag is known before the body: a client that has the index gets a 304.
        let again = get(&state, "/.well-known/skill-sharing", Some(&etag)).await;
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
        // Another filter is another body, with another tag.
        let other = get(&state, "/.well-known/skill-sharing?type=api", Some(&etag)).await;
        assert_eq!(other.status(), StatusCode::OK);
        assert_ne!(other.headers()[ETAG].to_str().unwrap(), etag);
        let bytes = axum::body::to_bytes(other.into_body(), usize::MAX)
            .await
            .unwrap();
        let empty: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(empty["skills"], json!([]));
    }

    // A streamed body counts against the work limit until it is sent, not only until the
    // handler returns.
    #[tokio::test]
    async fn a_streamed_index_holds_its_work_permit_until_it_is_sent() {
        let dir = tempfile::tempdir().unwrap();
        let state = many(dir.path());
        let _held = all_permits_but_one(&state);
        let response = get(&state, "/.well-known/skill-sharing", None).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert!(
            state.try_start_work().is_none(),
            "the stream gave its permit back early"
        );
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        assert!(bytes.ends_with(b"]}"));
        assert!(state.try_start_work().is_some());
    }

    // A client that never reads cannot hold a permit for ever.
    #[tokio::test]
    async fn a_stream_nobody_reads_gives_its_permit_back_after_the_hold() {
        let dir = tempfile::tempdir().unwrap();
        let state = many(dir.path());
        let _held = all_permits_but_one(&state);
        let response = get(&state, "/.well-known/skill-sharing", None).await;
        assert!(state.try_start_work().is_none());
        // Let the hold's timer start, then let the hold pass.
        tokio::task::yield_now().await;
        tokio::time::pause();
        tokio::time::advance(MAX_STREAM_HOLD + std::time::Duration::from_secs(1)).await;
        for _ in 0..3 {
            tokio::task::yield_now().await;
        }
        assert!(
            state.try_start_work().is_some(),
            "the permit outlived the hold"
        );
        drop(response);
    }

    #[test]
    fn sharing_ids_split_at_the_last_at_sign() {
        let id = parse_sharing_id("pdf-merge@pdfworks.test").unwrap();
        assert_eq!(id.to_string(), "pdfworks.test/pdf-merge");
        let id = parse_sharing_id("a@b@localhost:8080").unwrap();
        assert_eq!(id.to_string(), "localhost:8080/a@b");
        assert!(parse_sharing_id("no-at-sign").is_none());
        assert!(parse_sharing_id("x@not a domain").is_none());
    }

    #[test]
    fn type_filters() {
        assert_eq!(type_filter(vec![]), Some(vec![]));
        assert_eq!(type_filter(vec!["skill".into()]), None);
        assert_eq!(
            type_filter(vec!["Knowledge".into()]),
            Some(vec!["knowledge".into(), "skill".into()])
        );
        assert_eq!(type_filter(vec!["api".into()]), Some(vec!["api".into()]));
    }
}
