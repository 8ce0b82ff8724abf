//! The web directory: server-rendered pages over the same data and access rules as the API.
//!
//! - `GET /?q=&type=&access=&domain=&format=&tag=&limit=&offset=`: search (empty `q` browses),
//!   with facets as links that add or remove a filter, and pages.
//! - `GET /skill/{domain}/{name}`: a record: metadata, files, diagnostics, SKILL.md.
//! - `GET /domains`, `GET /domains/{domain}`: crawl status per domain.
//!
//! Pages are plain HTML with an inline style sheet and no script.

pub(crate) mod html;

use std::fmt::Write as _;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use formats::{Domain, Skill};
use indexer::{FacetCounts, Filters, SearchRequest, SearchResults};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use url::form_urlencoded;

use crate::auth::Auth;
use crate::error::ApiError;
use crate::extract::{ApiPath, Params};
use crate::routes::domains::{domain_detail, domain_page};
use crate::routes::search;
use crate::state::{AppState, parse_id};
use html::{badge, escape, page};

/// An error shown as a page rather than as JSON.
#[derive(Debug)]
pub(crate) struct WebError(ApiError);

impl From<ApiError> for WebError {
    fn from(error: ApiError) -> WebError {
        WebError(error)
    }
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        let (status, code) = self.0.status_and_code();
        let message = self.0.public_message();
        let title = if status == StatusCode::NOT_FOUND {
            "Not found"
        } else {
            "Cannot show this page"
        };
        let body = format!(
            "<div class=\"card\"><h1>{}</h1><p class=\"lead\">{}</p><p class=\"muted\">{} · <code>{}</code></p><p><a href=\"/\">Back to the directory</a></p></div>",
            escape(title),
            escape(&message),
            status.as_u16(),
            escape(code)
        );
        let mut response = (status, Html(page("skillscout", title, "", &body))).into_response();
        if matches!(self.0, ApiError::Unauthorized) {
            response.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static(crate::error::BEARER_CHALLENGE),
            );
        }
        response
    }
}

/// The 404 page for unknown web paths.
pub(crate) fn not_found_page() -> Response {
    WebError(ApiError::NotFound("there is no page here".to_owned())).into_response()
}

/// Returns `text` cut to `max` characters, with `…` when it was cut.
pub(crate) fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// The bytes a path segment keeps percent-encoded: everything but RFC 3986 unreserved
/// characters, `:` and `@` (which are `pchar`s).
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b':')
    .remove(b'@');

/// Percent-encodes one URL path segment.
pub(crate) fn encode_segment(segment: &str) -> String {
    utf8_percent_encode(segment, SEGMENT).to_string()
}

/// Percent-encodes a relative path, segment by segment.
pub(crate) fn encode_path(path: &str) -> String {
    path.split('/')
        .map(encode_segment)
        .collect::<Vec<_>>()
        .join("/")
}

/// Returns the path of a record's page.
pub(crate) fn skill_page_path(skill: &Skill) -> String {
    format!(
        "/skill/{}/{}",
        encode_segment(skill.domain.as_str()),
        encode_segment(skill.name.as_str())
    )
}

fn site(state: &AppState) -> &str {
    &state.config().name
}

/// `GET /`: the search page.
pub(crate) async fn home(
    State(state): State<AppState>,
    auth: Result<Auth, ApiError>,
    params: Result<Params, ApiError>,
) -> Result<Html<String>, WebError> {
    let (Auth(caller), params) = (auth?, params?);
    let request = params.search_request(caller)?;
    let results = search::run(&state, request.clone()).await?;
    let body = search_body(&params, &request, &results);
    let title = if request.query.is_empty() {
        "Agent skills".to_owned()
    } else {
        format!("{} – search", shorten(&request.query, 60))
    };
    Ok(Html(page(site(&state), &title, &request.query, &body)))
}

/// Returns `/?…` with the current parameters, `name=value` toggled, and the offset reset.
fn toggle_link(params: &Params, name: &str, value: &str) -> String {
    let mut serializer = form_urlencoded::Serializer::new(String::new());
    let mut present = false;
    for (key, current) in params.pairs() {
        if key == "offset" {
            continue;
        }
        if key == name {
            let kept: Vec<&str> = current
                .split(',')
                .map(str::trim)
                .filter(|part| {
                    let same = part.eq_ignore_ascii_case(value);
                    present |= same;
                    !same && !part.is_empty()
                })
                .collect();
            if !kept.is_empty() {
                serializer.append_pair(key, &kept.join(","));
            }
            continue;
        }
        serializer.append_pair(key, current);
    }
    if !present {
        serializer.append_pair(name, value);
    }
    format!("/?{}", serializer.finish())
}

/// Returns `/?…` with the current parameters and another offset.
fn offset_link(params: &Params, offset: usize) -> String {
    let mut serializer = form_urlencoded::Serializer::new(String::new());
    for (key, value) in params.pairs() {
        if key != "offset" {
            serializer.append_pair(key, value);
        }
    }
    serializer.append_pair("offset", &offset.to_string());
    format!("/?{}", serializer.finish())
}

fn active(filters: &Filters, name: &str) -> Vec<String> {
    let values = match name {
        "type" => &filters.capability_type,
        "access" => &filters.access,
        "domain" => &filters.domain,
        "format" => &filters.format,
        "tag" => &filters.tag,
        _ => &filters.license,
    };
    values
        .iter()
        .flat_map(|value| value.split(','))
        .map(|value| value.trim().to_lowercase())
        .filter(|value| !value.is_empty())
        .collect()
}

fn search_body(params: &Params, request: &SearchRequest, results: &SearchResults) -> String {
    let mut out = String::new();
    out.push_str("<div class=\"layout\"><aside>");
    let facets = [
        ("Type", "type", &results.facets.capability_type),
        ("Access", "access", &results.facets.access),
        ("Format", "format", &results.facets.format),
        ("Domain", "domain", &results.facets.domain),
        ("Tag", "tag", &results.facets.tag),
    ];
    for (label, name, counts) in facets {
        facet(&mut out, params, &request.filters, label, name, counts);
    }
    out.push_str("</aside><section>");

    let mut chips = String::new();
    for (_, name, _) in facets {
        for value in active(&request.filters, name) {
            let _ = write!(
                chips,
                "<a class=\"chip\" href=\"{}\" title=\"remove this filter\">{}: {} ✕</a>",
                escape(&toggle_link(params, name, &value)),
                escape(name),
                escape(&value)
            );
        }
    }
    if !chips.is_empty() {
        let _ = write!(out, "<div class=\"chips\">{chips}</div>");
    }
    let first = request.offset + 1;
    let last = request.offset + results.hits.len();
    let _ = write!(
        out,
        "<div class=\"summary\">{} skill{}{}</div>",
        results.total,
        if results.total == 1 { "" } else { "s" },
        if results.hits.is_empty() {
            String::new()
        } else {
            format!(" · showing {first}–{last}")
        }
    );
    if results.hits.is_empty() {
        out.push_str("<div class=\"card\"><p>No skill matches. Try fewer words or remove a filter.</p></div>");
    }
    for hit in &results.hits {
        let href = format!(
            "/skill/{}/{}",
            encode_segment(hit.domain.as_str()),
            encode_segment(hit.name.as_str())
        );
        let text = if hit.snippet.is_empty() {
            escape(&shorten(&hit.description, 300))
        } else {
            html::marked(&hit.snippet)
        };
        let _ = write!(
            out,
            "<article class=\"hit\"><h2><a href=\"{}\">{}</a></h2><div class=\"id\">{}</div>\
             <p>{text}</p><p>{}{}{}{}</p></article>",
            escape(&href),
            escape(&hit.title),
            escape(&hit.id.to_string()),
            badge("", &hit.capability_type),
            badge(hit.access.as_str(), hit.access.as_str()),
            badge("", hit.format.as_str()),
            hit.version
                .as_deref()
                .map(|version| badge("", &format!("v{version}")))
                .unwrap_or_default(),
        );
    }
    out.push_str("<div class=\"pages\">");
    if request.offset > 0 {
        let previous = request.offset.saturating_sub(request.limit);
        let _ = write!(
            out,
            "<a href=\"{}\">← Previous</a>",
            escape(&offset_link(params, previous))
        );
    }
    if (request.offset + results.hits.len()) < results.total as usize
        && request.offset + request.limit <= indexer::MAX_OFFSET
    {
        let _ = write!(
            out,
            "<a href=\"{}\">Next →</a>",
            escape(&offset_link(params, request.offset + request.limit))
        );
    }
    out.push_str("</div></section></div>");
    out
}

fn facet(
    out: &mut String,
    params: &Params,
    filters: &Filters,
    label: &str,
    name: &str,
    counts: &FacetCounts,
) {
    if counts.0.is_empty() {
        return;
    }
    let on = active(filters, name);
    let _ = write!(out, "<h3>{}</h3><ul>", escape(label));
    for (value, count) in counts.0.iter().take(20) {
        let class = if on.contains(value) {
            " class=\"on\""
        } else {
            ""
        };
        let _ = write!(
            out,
            "<li{class}><a href=\"{}\">{}</a><span class=\"count\">{count}</span></li>",
            escape(&toggle_link(params, name, value)),
            escape(value)
        );
    }
    out.push_str("</ul>");
}

/// `GET /skill/{domain}/{name}`: one record.
pub(crate) async fn skill(
    State(state): State<AppState>,
    auth: Result<Auth, ApiError>,
    path: Result<ApiPath<(String, String)>, ApiError>,
) -> Result<Html<String>, WebError> {
    let (Auth(caller), ApiPath((domain, name))) = (auth?, path?);
    let id = parse_id(&domain, &name)?;
    let skill = state.visible_record(caller, id).await?;
    let body = skill_body(&state, &skill);
    Ok(Html(page(site(&state), &skill.title, "", &body)))
}

fn skill_body(state: &AppState, skill: &Skill) -> String {
    let record = crate::routes::sharing::record_path(&skill.domain, &skill.name);
    let mut out = String::new();
    let _ = write!(
        out,
        "<div class=\"card\"><div class=\"id\">{}</div><h1>{}</h1><p class=\"lead\">{}</p><p>{}{}{}{}</p>\
         <p class=\"muted\"><a href=\"{record}\">JSON record</a> · <a href=\"{record}/descriptor\">skill-sharing descriptor</a></p></div>",
        escape(&skill.id.to_string()),
        escape(&skill.title),
        escape(&skill.description),
        badge("", &skill.capability_type),
        badge(skill.access.as_str(), skill.access.as_str()),
        badge("", skill.format.as_str()),
        skill
            .version
            .as_deref()
            .map(|v| badge("", &format!("v{v}")))
            .unwrap_or_default(),
        record = escape(&record),
    );

    out.push_str("<h2>Details</h2><table>");
    let domain_link = format!(
        "<a href=\"/domains/{}\">{}</a>",
        escape(&encode_segment(skill.domain.as_str())),
        escape(skill.domain.as_str())
    );
    let digest = match &skill.digest {
        Some(digest) => format!(
            "<code>{}</code> ({})",
            escape(&digest.to_string()),
            escape(&format!("{:?}", skill.digest_status).to_lowercase())
        ),
        None => escape(&format!("{:?}", skill.digest_status).to_lowercase()),
    };
    let rows = [
        ("Domain", domain_link),
        ("Name", escape(skill.name.as_str())),
        ("License", escape(skill.license.as_deref().unwrap_or("—"))),
        (
            "Tags",
            if skill.tags.is_empty() {
                "—".to_owned()
            } else {
                skill.tags.iter().map(|t| badge("", t)).collect()
            },
        ),
        ("Source", link(skill.source_url.as_str())),
        ("Index", link(skill.index_url.as_str())),
        ("Digest", digest),
        ("First seen", escape(&rfc3339(skill.first_seen))),
        ("Last seen", escape(&rfc3339(skill.last_seen))),
        ("Last changed", escape(&rfc3339(skill.last_changed))),
    ];
    for (name, value) in rows {
        let _ = write!(out, "<tr><th>{name}</th><td>{value}</td></tr>");
    }
    out.push_str("</table>");

    if !skill.files.is_empty() {
        out.push_str("<h2>Files</h2><table><tr><th>Path</th><th>Size</th><th>SHA-256</th></tr>");
        for file in &skill.files {
            let path = if file.sha256.is_some()
                && state
                    .blobs()
                    .contains(&file.sha256.unwrap_or_else(|| formats::Digest::of(b"")))
            {
                format!(
                    "<a href=\"{}\">{}</a>",
                    escape(&format!("{record}/files/{}", encode_path(&file.path))),
                    escape(&file.path)
                )
            } else {
                format!(
                    "{} <span class=\"muted\">(not kept)</span>",
                    escape(&file.path)
                )
            };
            let _ = write!(
                out,
                "<tr><td>{path}</td><td>{}</td><td><code>{}</code></td></tr>",
                file.size.map_or("—".to_owned(), |size| format!("{size} B")),
                file.sha256
                    .map_or("—".to_owned(), |d| escape(&shorten(&d.hex(), 16)))
            );
        }
        out.push_str("</table>");
    }

    out.push_str("<h2>Diagnostics</h2>");
    if skill.diagnostics.is_empty() {
        out.push_str("<p class=\"muted\">None: the skill follows the specifications.</p>");
    }
    for diagnostic in &skill.diagnostics {
        let severity = format!("{:?}", diagnostic.severity).to_lowercase();
        let _ = write!(
            out,
            "<div class=\"diag\"><span class=\"sev-{severity}\">{severity}[{}]</span> {}{}</div>",
            escape(diagnostic.code.as_str()),
            diagnostic
                .field
                .as_deref()
                .map(|field| format!("<code>{}</code>: ", escape(field)))
                .unwrap_or_default(),
            escape(&diagnostic.message)
        );
    }
    if !skill.frontmatter.is_empty() {
        let label = if skill.format == formats::Format::SkillSharing {
            "Descriptor"
        } else {
            "Frontmatter"
        };
        let json = serde_json::to_string_pretty(&skill.frontmatter).unwrap_or_default();
        let _ = write!(out, "<h2>{label}</h2><pre>{}</pre>", escape(&json));
    }
    if !skill.body.is_empty() {
        let _ = write!(out, "<h2>SKILL.md</h2><pre>{}</pre>", escape(&skill.body));
    }
    out
}

fn link(url: &str) -> String {
    format!(
        "<a href=\"{0}\" rel=\"nofollow noopener\">{0}</a>",
        escape(url)
    )
}

fn rfc3339(time: time::OffsetDateTime) -> String {
    time.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// `GET /domains`: every crawled domain.
pub(crate) async fn domains(
    State(state): State<AppState>,
    auth: Result<Auth, ApiError>,
    params: Result<Params, ApiError>,
) -> Result<Html<String>, WebError> {
    let (Auth(caller), params) = (auth?, params?);
    let after = match params.one("cursor")? {
        Some(raw) => Some(crate::cursor::decode("domains", raw)?),
        None => None,
    };
    let list = state
        .blocking(move |state| domain_page(state, caller, after.as_deref(), indexer::MAX_LIMIT))
        .await?;
    let mut out = String::from("<h1>Domains</h1>");
    let crawl = &list.crawl;
    out.push_str("<div class=\"card\">");
    match (&crawl.current, &crawl.last) {
        (Some(run), _) => {
            let _ = write!(out, "<p><b>Crawling:</b> {} of {} domains done (started {}).</p>", run.domains_done, run.domains_total, escape(&rfc3339(run.started_at)));
        }
        (None, Some(run)) => {
            let totals = run.totals.unwrap_or_default();
            let _ = write!(out, "<p><b>Last crawl:</b> {} domains, {} skills ({} added, {} updated, {} removed), {} requests, {} errors; finished {}.</p>",
                totals.domains, totals.skills, totals.added, totals.updated, totals.removed, totals.requests, totals.errors,
                escape(&run.finished_at.map(rfc3339).unwrap_or_default()));
        }
        (None, None) => out.push_str(if crawl.enabled { "<p>No crawl has finished yet.</p>" } else { "<p class=\"muted\">This server does not crawl; it serves what <code>skillscout crawl</code> stored.</p>" }),
    }
    if let Some(next) = crawl.next_crawl_at {
        let _ = write!(
            out,
            "<p class=\"muted\">Next crawl: {}</p>",
            escape(&rfc3339(next))
        );
    }
    out.push_str("</div><table><tr><th>Domain</th><th>Outcome</th><th>Formats</th><th>Skills</th><th>Requests</th><th>Errors</th><th>Crawled</th></tr>");
    for domain in &list.domains {
        let outcome = serde_json::to_value(domain.outcome)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let _ = write!(
            out,
            "<tr><td><a href=\"/domains/{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&encode_segment(domain.domain.as_str())),
            escape(domain.domain.as_str()),
            badge(&outcome, &outcome),
            escape(
                &domain
                    .formats
                    .iter()
                    .map(|f| f.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            domain.skills,
            domain.requests,
            domain.errors,
            escape(&rfc3339(domain.crawled_at)),
        );
    }
    out.push_str("</table>");
    if list.domains.is_empty() {
        out.push_str("<p class=\"muted\">No domain was crawled yet.</p>");
    }
    if let Some(next) = &list.next_cursor {
        let _ = write!(
            out,
            "<div class=\"pages\"><a href=\"/domains?cursor={}\">Next →</a></div>",
            escape(next)
        );
    }
    Ok(Html(page(site(&state), "Domains", "", &out)))
}

/// `GET /domains/{domain}`: one domain's crawl status and its skills.
pub(crate) async fn domain(
    State(state): State<AppState>,
    auth: Result<Auth, ApiError>,
    path: Result<ApiPath<String>, ApiError>,
) -> Result<Html<String>, WebError> {
    let (Auth(caller), ApiPath(domain)) = (auth?, path?);
    let domain: Domain = domain
        .parse()
        .map_err(|_| ApiError::NotFound(format!("no domain {}", shorten(&domain, 100))))?;
    let (detail, results) = state
        .blocking(move |state| {
            let detail = domain_detail(state, caller, &domain)?;
            let mut request = SearchRequest::new("", caller);
            request.filters.domain = vec![domain.to_string()];
            // The publisher's page lists its invalid skills too, with their reasons.
            request.filters.verdict = vec![indexer::ANY_VERDICT.to_owned()];
            request.limit = indexer::MAX_LIMIT;
            Ok((detail, search::visible_results(state, &request)?))
        })
        .await?;
    let outcome = serde_json::to_value(detail.outcome)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let mut out = String::new();
    let _ = write!(
        out,
        "<div class=\"card\"><h1>{}</h1><p>{} <span class=\"muted\">crawled {} from <code>{}</code></span></p><p class=\"muted\"><a href=\"/v1/domains/{}\">JSON status</a> · <a href=\"/?domain={}\">search this domain</a></p></div>",
        escape(detail.domain.as_str()),
        badge(&outcome, &outcome),
        escape(&rfc3339(detail.crawled_at)),
        escape(&detail.origin),
        escape(&encode_segment(detail.domain.as_str())),
        escape(
            &form_urlencoded::byte_serialize(detail.domain.as_str().as_bytes()).collect::<String>()
        ),
    );
    let _ = write!(out, "<h2>Skills ({})</h2>", detail.skills);
    if results.hits.is_empty() {
        out.push_str("<p class=\"muted\">None you may see.</p>");
    }
    out.push_str("<table>");
    for hit in &results.hits {
        let _ = write!(
            out,
            "<tr><td><a href=\"/skill/{}/{}\">{}</a><div class=\"id\">{}</div></td><td>{}</td><td>{}</td></tr>",
            escape(&encode_segment(hit.domain.as_str())),
            escape(&encode_segment(hit.name.as_str())),
            escape(&hit.title),
            escape(hit.name.as_str()),
            badge(hit.access.as_str(), hit.access.as_str()),
            escape(&shorten(&hit.description, 160)),
        );
    }
    out.push_str("</table>");
    if !detail.indexes.is_empty() {
        out.push_str("<h2>Indexes read</h2><ul>");
        for index in &detail.indexes {
            let _ = write!(out, "<li>{}</li>", link(index.as_str()));
        }
        out.push_str("</ul>");
    }
    let _ = write!(
        out,
        "<h2>Errors ({})</h2>",
        detail.errors.len() + detail.errors_omitted
    );
    if !detail.errors.is_empty() {
        out.push_str("<table><tr><th>Code</th><th>Message</th><th>URL</th></tr>");
        for error in &detail.errors {
            let _ = write!(
                out,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                escape(&error.code),
                escape(&error.message),
                escape(&error.url)
            );
        }
        out.push_str("</table>");
    }
    if !detail.diagnostics.is_empty() {
        out.push_str("<h2>Index diagnostics</h2>");
        for diagnostic in &detail.diagnostics {
            let severity = format!("{:?}", diagnostic.severity).to_lowercase();
            let _ = write!(
                out,
                "<div class=\"diag\"><span class=\"sev-{severity}\">{severity}[{}]</span> {}</div>",
                escape(diagnostic.code.as_str()),
                escape(&diagnostic.message)
            );
        }
    }
    Ok(Html(page(site(&state), detail.domain.as_str(), "", &out)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facet_links_toggle_values_and_reset_the_offset() {
        let params = Params::parse("q=pdf&type=api,task&offset=20").unwrap();
        assert_eq!(toggle_link(&params, "type", "api"), "/?q=pdf&type=task");
        assert_eq!(
            toggle_link(&params, "type", "plugin"),
            "/?q=pdf&type=api%2Ctask&type=plugin"
        );
        assert_eq!(
            toggle_link(&params, "access", "public"),
            "/?q=pdf&type=api%2Ctask&access=public"
        );
        assert_eq!(
            offset_link(&params, 40),
            "/?q=pdf&type=api%2Ctask&offset=40"
        );
    }

    #[test]
    fn escaping() {
        assert_eq!(encode_segment("a b/c%"), "a%20b%2Fc%25");
        assert_eq!(encode_segment("localhost:8080"), "localhost:8080");
        assert_eq!(encode_segment("a-._~:@!é"), "a-._~:@%21%C3%A9");
        assert_eq!(encode_path("scripts/clean me.py"), "scripts/clean%20me.py");
        assert_eq!(shorten("héllo", 2), "hé…");
        let snippet = indexer::Snippet {
            text: "a b <script>x</script> & 'c'".to_owned(),
            marks: vec![2..3, 26..27],
        };
        assert_eq!(
            html::marked(&snippet),
            "a <mark>b</mark> &lt;script&gt;x&lt;/script&gt; &amp; &#39;<mark>c</mark>&#39;"
        );
        assert_eq!(escape("<a href='x'>&"), "&lt;a href=&#39;x&#39;&gt;&amp;");
    }
}
