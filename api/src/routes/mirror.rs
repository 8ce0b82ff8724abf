//! `GET /mirror/{domain}/.well-known/agent-skills/index.json` and the artifacts it lists: a
//! publisher's verified skills re-published by the directory as an agent-skills v0.2 index,
//! from the blob store (DESIGN.md §6). An agent client pointed at
//! `http://directory/mirror/example.com` installs what the directory saw, digest-checked,
//! even when the origin is down.
//!
//! The index and the artifacts are made by the export's well-known writer
//! (`export::well_known`), so a mirror and a `well-known` export of the same skills are the
//! same bytes. The skills listed are those a search lists by default (verdict `valid` or
//! `lenient`) that the caller may see.

use axum::extract::State;
use axum::http::HeaderValue;
use axum::http::header::{CONTENT_TYPE, ETAG, X_CONTENT_TYPE_OPTIONS};
use axum::response::{IntoResponse, Response};
use formats::{Domain, Skill, Verdict};
use indexer::{Caller, Filters, ListRequest, MAX_LIMIT};

use crate::auth::Auth;
use crate::caching::etag_of;
use crate::error::ApiError;
use crate::export::well_known::{self, Unpublishable};
use crate::extract::ApiPath;
use crate::state::{AppState, parse_id};

/// `GET /mirror/{domain}/.well-known/agent-skills/{*path}`: the index, or one artifact.
pub(super) async fn mirror(
    State(state): State<AppState>,
    Auth(caller): Auth,
    ApiPath((domain, path)): ApiPath<(String, String)>,
) -> Result<Response, ApiError> {
    let domain: Domain = domain
        .parse()
        .map_err(|_| ApiError::InvalidPath(format!("invalid domain {domain:?}")))?;
    if path == "index.json" {
        return index(state, caller, domain).await;
    }
    let Some(slug) = well_known::slug_of(&path).filter(|slug| !slug.contains('/')) else {
        return Err(ApiError::NotFound(format!(
            "the mirror of {domain} has no {path:?}"
        )));
    };
    let id = parse_id(domain.as_str(), slug)?;
    let skill = state.visible_record(caller, id).await?;
    if !mirrored(&skill) {
        return Err(ApiError::NotFound(format!(
            "the mirror of {domain} does not list {}",
            skill.name
        )));
    }
    let published = state
        .blocking(
            move |state| match well_known::publish(&skill, state.blobs(), state.packs()) {
                Ok(published) if published.path == path => Ok(published),
                Ok(_) | Err(Unpublishable::NotAnAgentSkill | Unpublishable::Missing(_)) => Err(
                    ApiError::NotFound(format!("the mirror of {} has no {path:?}", skill.domain)),
                ),
                Err(Unpublishable::Failed(detail)) => Err(ApiError::Internal(detail)),
            },
        )
        .await?;
    let content_type = if published.path.ends_with(".zip") {
        "application/zip"
    } else if published.path.ends_with(".tar.gz") {
        "application/gzip"
    } else {
        "text/markdown; charset=utf-8"
    };
    let etag = HeaderValue::from_str(&format!("\"{}\"", published.entry_digest_hex()))
        .unwrap_or_else(|_| etag_of(&published.bytes));
    Ok((
        [
            (CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (ETAG, etag),
            (X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
        ],
        published.bytes,
    )
        .into_response())
}

/// True for a skill the mirror lists: one a default search lists (its content is usable).
fn mirrored(skill: &Skill) -> bool {
    matches!(skill.verdict(), Verdict::Valid | Verdict::Lenient)
}

/// The mirror's index of `domain`: 404 when it lists nothing, so a client tries elsewhere.
///
/// The index chooses the records (the domain's, as the caller may see them, a page at a time)
/// and the store has the last word: each is read again, one at a time, so that a domain of
/// thousands of large skills is never held whole.
async fn index(state: AppState, caller: Caller, domain: Domain) -> Result<Response, ApiError> {
    let json = state
        .blocking(move |state| {
            let mut entries = Vec::new();
            let mut list = ListRequest {
                caller,
                filters: Filters {
                    domain: vec![domain.to_string()],
                    ..Filters::default()
                },
                after: None,
                limit: MAX_LIMIT,
            };
            loop {
                let page = state.visible_list(&list)?;
                for listed in &page.records {
                    let Some(stored) = state.store().record(&listed.id.to_string())? else {
                        continue;
                    };
                    let skill = stored.skill;
                    if stored.removed_at.is_some()
                        || !state.may_see(caller, skill.access)
                        || !mirrored(&skill)
                    {
                        continue;
                    }
                    match well_known::entry(&skill, state.blobs(), state.packs()) {
                        Ok(entry) => entries.push(entry),
                        Err(Unpublishable::Failed(detail)) => {
                            return Err(ApiError::Internal(detail));
                        }
                        Err(_) => {}
                    }
                }
                match page.next_cursor {
                    Some(after) => list.after = Some(after),
                    None => break,
                }
            }
            if entries.is_empty() {
                return Err(ApiError::NotFound(format!(
                    "the directory has no skill of {domain} to mirror"
                )));
            }
            Ok(well_known::index_json(&entries))
        })
        .await?;
    Ok((
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        json,
    )
        .into_response())
}
