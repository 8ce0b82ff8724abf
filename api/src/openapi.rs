//! `GET /openapi.json`: the HTTP API as an OpenAPI 3.1 document, derived by `utoipa` from the
//! wire types (`wire`: the bodies sent and the publishers' request bodies; the error body, the
//! health and protocol answers) and the handlers' `#[utoipa::path]` declarations, so that the
//! document changes when they do. Values of the closed vocabularies (`access`, `format`,
//! `outcome`, diagnostic `code`s, …) are listed from the types themselves ([`schemas`]). The
//! admin API, `/rpc` and `/mcp` are left out: the first is the operator's, the others are
//! described by their own protocols.

use std::sync::OnceLock;

use axum::http::HeaderValue;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

use crate::routes::{changes, domains, health, mirror, publish, search, sharing, skills};

/// The document's root: the paths and the components they name.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "skillscout",
        description = "An open directory of agent skills: search, records, publishers (their \
                       status, submissions, recrawl requests and IndexNow pings), the \
                       change log, exports, the mirror and the skill-protocol endpoints. \
                       Errors are `{\"error\": {\"code\", \"message\"}}` with a 4xx or 5xx \
                       status. A bearer token from the server's token file shows private \
                       records; anonymous callers never see them.",
        license(name = "MIT")
    ),
    paths(
        search::search,
        skills::record,
        skills::file,
        sharing::descriptor,
        domains::list,
        domains::one,
        publish::submit,
        publish::recrawl,
        publish::ping_get,
        publish::ping_post,
        changes::changes,
        crate::export::http::export,
        mirror::mirror,
        sharing::index,
        sharing::registry,
        health::healthz,
        health::metrics,
        openapi_json,
    ),
    modifiers(&BearerAuth)
)]
pub(crate) struct ApiDoc;

/// Adds the bearer token scheme the API accepts.
struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// Returns the document as JSON, built once.
pub(crate) fn document() -> &'static [u8] {
    static DOCUMENT: OnceLock<Vec<u8>> = OnceLock::new();
    DOCUMENT.get_or_init(|| {
        let mut json = ApiDoc::openapi()
            .to_pretty_json()
            .map(String::into_bytes)
            .unwrap_or_else(|error| format!("{{\"error\": \"{error}\"}}").into_bytes());
        json.push(b'\n');
        json
    })
}

/// `GET /openapi.json`: this document.
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "meta",
    responses((status = 200, description = "The API as an OpenAPI 3.1 document", content_type = "application/json"))
)]
pub(crate) async fn openapi_json() -> Response {
    (
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        document(),
    )
        .into_response()
}

/// Schemas of the fields whose types belong to other crates: strings with their closed
/// vocabulary listed from the type's own values where it has one.
pub(crate) mod schemas {
    use formats::diagnostic::{Code, Severity};
    use formats::health::{ClientVerdict, Status};
    use formats::skill::{Artifact, DigestStatus};
    use formats::{Access, Format, Verdict};
    use serde::Serialize;
    use store::{FrontierState, Outcome};
    use utoipa::openapi::schema::{ArrayBuilder, Object, ObjectBuilder, SchemaType, Type};

    /// A string schema with a description.
    fn text(description: &str) -> ObjectBuilder {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(description))
    }

    /// A string that is one of `values` (as serde writes them).
    fn vocabulary<T: Serialize>(values: &[T], description: &str) -> ObjectBuilder {
        let values: Vec<serde_json::Value> = values
            .iter()
            .filter_map(|value| serde_json::to_value(value).ok())
            .collect();
        text(description).enum_values(Some(values))
    }

    /// `builder`'s schema, or `null`.
    fn nullable(builder: ObjectBuilder, values: Option<Vec<serde_json::Value>>) -> Object {
        let builder = builder.schema_type(
            [Type::String, Type::Null]
                .into_iter()
                .collect::<SchemaType>(),
        );
        match values {
            Some(mut values) => {
                values.push(serde_json::Value::Null);
                builder.enum_values(Some(values)).build()
            }
            None => builder.build(),
        }
    }

    pub(crate) fn skill_id() -> Object {
        text("A skill's id: `{domain}/{name}`").build()
    }

    pub(crate) fn domain() -> Object {
        text("A publisher's host name, with `:port` when not the default").build()
    }

    pub(crate) fn slug() -> Object {
        text("A skill's name: lowercase letters, digits and hyphens").build()
    }

    pub(crate) fn access() -> Object {
        vocabulary(&Access::ALL, "Who may install the skill").build()
    }

    pub(crate) fn format() -> Object {
        vocabulary(&Format::ALL, "The publishing format the record came from").build()
    }

    pub(crate) fn formats() -> ArrayBuilder {
        ArrayBuilder::new().items(format())
    }

    pub(crate) fn verdict() -> Object {
        vocabulary(&Verdict::ALL, "The directory's verdict on the skill").build()
    }

    pub(crate) fn artifact() -> Object {
        vocabulary(
            &[Artifact::SkillMd, Artifact::Archive, Artifact::Descriptor],
            "What the published artifact is",
        )
        .build()
    }

    pub(crate) fn digest_status() -> Object {
        vocabulary(
            &[
                DigestStatus::Verified,
                DigestStatus::Mismatch,
                DigestStatus::Absent,
                DigestStatus::Unfetched,
            ],
            "How the artifact's bytes compare with the digest its index gives",
        )
        .build()
    }

    pub(crate) fn optional_digest() -> Object {
        nullable(
            text("A SHA-256 digest: `sha256:` and 64 lowercase hex digits")
                .pattern(Some("^sha256:[0-9a-f]{64}$")),
            None,
        )
    }

    pub(crate) fn severity() -> Object {
        vocabulary(
            &[Severity::Info, Severity::Warning, Severity::Error],
            "How serious the problem is",
        )
        .build()
    }

    pub(crate) fn code() -> Object {
        vocabulary(Code::ALL, "The diagnostic's stable code").build()
    }

    pub(crate) fn outcome() -> Object {
        vocabulary(&Outcome::ALL, "How the domain's last crawl ended").build()
    }

    pub(crate) fn frontier_state() -> Object {
        let values = FrontierState::ALL
            .iter()
            .filter(|state| **state != FrontierState::Delisted)
            .map(|state| serde_json::Value::from(state.as_str()))
            .collect();
        nullable(
            text("How the domain got into the frontier (`null` when it is not there)"),
            Some(values),
        )
    }

    pub(crate) fn change_kind() -> Object {
        text("`upsert` (the record is given) or `delete` (a tombstone)")
            .enum_values(Some(["upsert", "delete"]))
            .build()
    }

    pub(crate) fn check_status() -> Object {
        let values: Vec<&str> = [
            Status::Pass,
            Status::Warn,
            Status::Fail,
            Status::NotChecked,
            Status::NotApplicable,
        ]
        .into_iter()
        .map(Status::as_str)
        .collect();
        text("The check's result").enum_values(Some(values)).build()
    }

    pub(crate) fn client_verdict() -> Object {
        let values: Vec<&str> = [
            ClientVerdict::All,
            ClientVerdict::Some,
            ClientVerdict::None,
            ClientVerdict::NotApplicable,
        ]
        .into_iter()
        .map(ClientVerdict::as_str)
        .collect();
        text("How much of the origin the client installs")
            .enum_values(Some(values))
            .build()
    }

    pub(crate) fn caching() -> Object {
        let flag = |description: &str| {
            ObjectBuilder::new()
                .schema_type(Type::Boolean)
                .description(Some(description))
        };
        ObjectBuilder::new()
            .schema_type(
                [Type::Object, Type::Null]
                    .into_iter()
                    .collect::<SchemaType>(),
            )
            .description(Some(
                "What the index answers said about caching (`null` when none was fetched)",
            ))
            .property(
                "validator",
                flag("Every answer carried `ETag` or `Last-Modified`"),
            )
            .required("validator")
            .property(
                "freshness",
                flag("Every answer said how long it stays fresh"),
            )
            .required("freshness")
            .build()
    }

    pub(crate) fn risk() -> Object {
        vocabulary(
            &[
                formats::audit::Risk::None,
                formats::audit::Risk::Low,
                formats::audit::Risk::Medium,
                formats::audit::Risk::High,
                formats::audit::Risk::Critical,
            ],
            "What the static safety audit makes of the skill (docs/audit.md)",
        )
        .build()
    }

    pub(crate) fn finding_severity() -> Object {
        vocabulary(
            &[
                formats::audit::Severity::Low,
                formats::audit::Severity::Medium,
                formats::audit::Severity::High,
                formats::audit::Severity::Critical,
            ],
            "How much one audit finding weighs",
        )
        .build()
    }

    pub(crate) fn rule() -> Object {
        vocabulary(formats::audit::Rule::ALL, "The audit rule that found it").build()
    }

    pub(crate) fn skill_ids() -> ArrayBuilder {
        ArrayBuilder::new().items(skill_id())
    }

    pub(crate) fn any_object() -> Object {
        ObjectBuilder::new().schema_type(Type::Object).build()
    }

    pub(crate) fn counts() -> Object {
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .description(Some("Values and their counts, most frequent first"))
            .additional_properties(Some(
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .minimum(Some(0)),
            ))
            .build()
    }
}
