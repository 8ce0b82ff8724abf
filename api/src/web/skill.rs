//! `GET /skill/{domain}/{name}`: one record, as its publisher and the directory see it.

use std::collections::HashSet;

use axum::extract::State;
use formats::audit::Risk;
use formats::skill::{Artifact, DigestStatus};
use formats::{Diagnostic, Format, Severity, Skill, Verdict, VerdictKind};
use maud::{Markup, html};
use serde_json::Value;

use super::html::{self, badge, labelled_badge};
use super::search::verdict_name;
use super::{Page, WebError, audit, layout, markdown};
use crate::auth::Auth;
use crate::directory::SkillPage;
use crate::directory::urls::{
    Urls, descriptor_path, domain_page_path, encode_path, file_path, mirror_path, parse_id,
    record_path,
};
use crate::error::{ApiError, shorten};
use crate::extract::ApiPath;
use crate::state::AppState;

/// `GET /skill/{domain}/{name}`: one record.
pub(crate) async fn skill(
    State(state): State<AppState>,
    auth: Result<Auth, ApiError>,
    path: Result<ApiPath<(String, String)>, ApiError>,
) -> Result<Page, WebError> {
    let (Auth(caller), ApiPath((domain, name))) = (auth?, path?);
    let id = parse_id(&domain, &name)?;
    let directory = state.directory();
    let page = directory
        .ask(move |directory| directory.skill_page(caller, &id))
        .await?;
    let body = skill_body(directory.urls(), &page);
    Ok(Page::ok(html::page(
        &layout(&state, &page.skill.title, ""),
        body,
    )))
}

/// Returns the name of a digest status.
pub(crate) fn digest_status_name(status: DigestStatus) -> &'static str {
    match status {
        DigestStatus::Verified => "verified",
        DigestStatus::Mismatch => "mismatch",
        DigestStatus::Absent => "absent",
        DigestStatus::Unfetched => "unfetched",
    }
}

fn digest_status_text(status: DigestStatus) -> &'static str {
    match status {
        DigestStatus::Verified => "the fetched bytes match the digest the index publishes",
        DigestStatus::Mismatch => {
            "the fetched bytes differ from the published digest; the content was not used"
        }
        DigestStatus::Absent => {
            "the index publishes no digest, so the content could not be checked"
        }
        DigestStatus::Unfetched => "the artifact was never fetched",
    }
}

fn severity_name(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "info",
    }
}

/// Returns the origin (with its path, for a docs site) an agent client installs from: the
/// index URL without its `/.well-known/…` part.
pub(crate) fn install_origin(skill: &Skill) -> String {
    let index = skill.index_url.as_str();
    match index.find("/.well-known/") {
        Some(at) => index[..at].to_owned(),
        None => skill.index_url.origin().ascii_serialization(),
    }
}

/// Quotes a word for a POSIX shell: publisher text pasted into a terminal must stay one word.
fn shell_quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@%+=".contains(c))
    {
        return text.to_owned();
    }
    format!("'{}'", text.replace('\'', "'\\''"))
}

fn skill_body(urls: &Urls, page: &SkillPage) -> Markup {
    let (skill, held) = (&page.skill, &page.held);
    let record = record_path(&skill.domain, &skill.name);
    let files_path = format!("{record}/files");
    let verdict = skill.verdict();
    html! {
        div.card {
            div.id { (skill.id.to_string()) }
            h1 { (skill.title) }
            p.lead { (skill.description) }
            div.badges {
                (labelled_badge("type", "", &skill.capability_type))
                (labelled_badge("access", skill.access.as_str(), skill.access.as_str()))
                (labelled_badge("verdict", verdict_name(verdict), verdict_name(verdict)))
                (audit::risk_badge(skill.risk))
                (labelled_badge("format", "", skill.format.as_str()))
                @if let Some(version) = &skill.version { (badge("", &format!("v{}", shorten(version, 30)))) }
            }
            p.muted {
                "Published by " a href=(domain_page_path(&skill.domain)) { (skill.domain.as_str()) }
                " · " a href=(skill.source_url.as_str()) rel="nofollow noopener noreferrer" { "source" }
                " · " a href=(record) { "JSON record" }
            }
        }
        @if verdict == Verdict::Invalid {
            p.notice.bad { "Agent clients will not install this skill as published: see the diagnostics below." }
        }
        // A skill the audit flags shows why before how to install it.
        @if skill.risk >= Risk::High {
            (audit::section(skill, &files_path, held))
        }
        (install(urls, page))
        (details_table(skill))
        (audit::copies(&page.also_at))
        (verdicts(skill))
        @if skill.risk < Risk::High {
            (audit::section(skill, &files_path, held))
        }
        @if skill.format == Format::SkillSharing {
            (descriptor(skill))
        }
        @if !skill.body.trim().is_empty() {
            section aria-labelledby="skill-md" {
                h2 #skill-md { "SKILL.md" }
                div.markdown {
                    (html::trusted(markdown::render(&skill.body, &markdown::Links { files_path: &files_path, files: held, source: &skill.source_url })))
                }
                details {
                    summary { "Markdown source" }
                    pre { code { (skill.body) } }
                }
            }
        }
        (files(skill, &files_path, held))
    }
}

fn install(urls: &Urls, page: &SkillPage) -> Markup {
    let (skill, held) = (&page.skill, &page.held);
    if skill.format == Format::SkillSharing {
        return html! {};
    }
    // What malware does is not offered as a command to paste: the page says why, and where
    // the findings are (shown above the install section for high risks and worse).
    if skill.risk == Risk::Critical {
        return html! {
            section aria-labelledby="install" {
                h2 #install { "Install" }
                p.notice.bad {
                    "No install command: the safety audit rates this skill critical, as it does what malware does. "
                    "Its findings, with the file and line of each, are in " a href="#audit" { "Safety audit" } " above."
                }
            }
        };
    }
    // The publisher's index and the mirror serve only what came from a well-known index.
    let well_known = skill.format == Format::AgentSkills;
    let name = skill.name.as_str();
    let origin = install_origin(skill);
    let mirrored = page.mirrored;
    let over_mcp = page.mcp_uri.clone();
    let mirror = urls.url(&mirror_path(&skill.domain));
    let folder = format!(".agents/skills/{name}");
    let mut copy = Vec::new();
    for file in &skill.files {
        if held.contains(&file.path) {
            let url = urls.url(&file_path(&skill.domain, &skill.name, &file.path));
            copy.push(format!(
                "curl -fsSL --create-dirs -o {} {}",
                shell_quote(&format!("{folder}/{}", file.path)),
                shell_quote(&url)
            ));
        }
    }
    let mcp_note = format!(
        "what an agent connected to this directory's MCP server ({}) loads with skills/get, \
         every file verified against its digest",
        urls.url("/mcp")
    );
    let snippets: Vec<(&str, String, &str)> = [
        well_known.then(|| {
            (
                "From its publisher",
                format!("npx skills add {} --skill {}", shell_quote(&origin), shell_quote(name)),
                "the vercel skills CLI reads the publisher's index",
            )
        }),
        mirrored.then(|| {
            (
                "Through this directory's mirror",
                format!("npx skills add {} --skill {}", shell_quote(&mirror), shell_quote(name)),
                "the verified copy this directory holds; works while the origin is down or its index is refused",
            )
        }),
        over_mcp.map(|uri| ("Over MCP", uri, mcp_note.as_str())),
        (!copy.is_empty()).then(|| {
            (
                "Copy the folder",
                copy.join("\n"),
                "into .agents/skills/, where agent clients look for project skills",
            )
        }),
    ]
    .into_iter()
    .flatten()
    .collect();
    html! {
        section aria-labelledby="install" {
            h2 #install { "Install" }
            @for (index, (label, command, note)) in snippets.iter().enumerate() {
                @let id = format!("install-{index}");
                h3 { (label) }
                div.snippet {
                    pre { code id=(id) { (command) } }
                    button.copy type="button" data-copy=(id) data-pending aria-label={ "Copy: " (label) } { "Copy" }
                }
                p.muted { (note) }
            }
        }
    }
}

fn details_table(skill: &Skill) -> Markup {
    let frontmatter_text = |key: &str| -> Option<String> {
        match skill.frontmatter.get(key)? {
            Value::String(text) => Some(text.clone()),
            Value::Null => None,
            other => Some(other.to_string()),
        }
    };
    let artifact = match skill.artifact {
        Artifact::SkillMd => "SKILL.md",
        Artifact::Archive => "archive",
        Artifact::Descriptor => "skill-sharing descriptor",
    };
    html! {
        section aria-labelledby="details" {
            h2 #details { "Details" }
            div.table-wrap {
                table.meta {
                    tr { th scope="row" { "Publisher" } td { a href=(domain_page_path(&skill.domain)) { (skill.domain.as_str()) } } }
                    tr { th scope="row" { "Name" } td { code { (skill.name.as_str()) } } }
                    tr { th scope="row" { "Version" } td { (skill.version.as_deref().unwrap_or("—")) } }
                    tr { th scope="row" { "License" } td { (skill.license.as_deref().unwrap_or("—")) } }
                    tr { th scope="row" { "Tags" } td {
                        @if skill.tags.is_empty() { "—" }
                        @for tag in &skill.tags { (badge("", tag)) " " }
                    } }
                    @if let Some(compatibility) = frontmatter_text("compatibility") {
                        tr { th scope="row" { "Compatibility" } td { (compatibility) } }
                    }
                    @if let Some(tools) = frontmatter_text("allowed-tools") {
                        tr { th scope="row" { "Allowed tools" } td { code { (tools) } } }
                    }
                    tr { th scope="row" { "Published as" } td { (artifact) ", listed in an " (skill.format.as_str()) " index" } }
                    tr { th scope="row" { "Source" } td { a href=(skill.source_url.as_str()) rel="nofollow noopener noreferrer" { (skill.source_url.as_str()) } } }
                    tr { th scope="row" { "Index" } td { a href=(skill.index_url.as_str()) rel="nofollow noopener noreferrer" { (skill.index_url.as_str()) } } }
                    tr { th scope="row" { "Digest" } td {
                        (badge(digest_status_name(skill.digest_status), digest_status_name(skill.digest_status)))
                        " " (digest_status_text(skill.digest_status))
                        @if let Some(digest) = &skill.digest { br; code { (digest.to_string()) } }
                    } }
                    tr { th scope="row" { "First seen" } td { (html::time(skill.first_seen)) } }
                    tr { th scope="row" { "Last seen" } td { (html::time(skill.last_seen)) } }
                    tr { th scope="row" { "Last changed" } td { (html::time(skill.last_changed)) } }
                }
            }
        }
    }
}

/// Returns why a skill has its verdict, in a sentence.
fn verdict_reason(skill: &Skill) -> &'static str {
    let judged = skill.judgement();
    match (judged.verdict, skill.digest_status) {
        (Verdict::Valid, _) => "it passes the strict check; agent clients can load it.",
        (Verdict::Lenient, _) => "agent clients can load it, though it fails the strict check.",
        (Verdict::Invalid, DigestStatus::Mismatch) => {
            "the fetched bytes differ from the published digest, so its content was not used."
        }
        (Verdict::Invalid, DigestStatus::Unfetched) => "its artifact was never fetched.",
        (Verdict::Invalid, _)
            if judged
                .reasons
                .iter()
                .any(|d| d.code == formats::Code::InvalidName) =>
        {
            "its name breaks the naming rule, and agent clients refuse such names."
        }
        (Verdict::Invalid, _) => "it has errors that agent clients do not accept.",
    }
}

fn verdicts(skill: &Skill) -> Markup {
    let judged = skill.judgement();
    let verdict = judged.verdict;
    let passes = |kind| {
        if judged.passes(kind) {
            ("pass", "passes")
        } else {
            ("fail", "fails")
        }
    };
    let (strict_class, strict) = passes(VerdictKind::Strict);
    let (lenient_class, lenient) = passes(VerdictKind::Lenient);
    html! {
        section aria-labelledby="verdicts" {
            h2 #verdicts { "Verdicts and diagnostics" }
            div.grid2 {
                div.card {
                    (badge(strict_class, strict)) " " strong { "strict" }
                    p.muted { "The specifications' rules, as the reference validator applies them." }
                }
                div.card {
                    (badge(lenient_class, lenient)) " " strong { "lenient" }
                    p.muted { "What agent clients accept: unknown fields are ignored, a name mismatch is a warning." }
                }
            }
            p {
                "Directory verdict: " (badge(verdict_name(verdict), verdict_name(verdict))) " "
                (verdict_reason(skill))
            }
            @if skill.diagnostics.is_empty() {
                p.muted { "No diagnostics: the skill follows the specifications." }
            } @else {
                (diagnostics_table(&skill.diagnostics))
            }
        }
    }
}

/// Returns a table of diagnostics: strict and lenient severity, code, field, message, fix.
pub(crate) fn diagnostics_table(diagnostics: &[Diagnostic]) -> Markup {
    html! {
        div.table-wrap {
            table.stack {
                thead { tr { th scope="col" { "Strict" } th scope="col" { "Lenient" } th scope="col" { "Problem" } th scope="col" { "Fix" } } }
                tbody {
                    @for diagnostic in diagnostics {
                        @let strict = severity_name(diagnostic.severity_for(VerdictKind::Strict));
                        @let lenient = severity_name(diagnostic.severity_for(VerdictKind::Lenient));
                        tr {
                            td data-label="Strict" { span class={ "sev-" (strict) } { (strict) } }
                            td data-label="Lenient" { span class={ "sev-" (lenient) } { (lenient) } }
                            td data-label="Problem" {
                                code { (diagnostic.code.as_str()) }
                                @if let Some(field) = &diagnostic.field { " at " code { (field) } }
                                br;
                                (html::prose(&diagnostic.message))
                            }
                            td data-label="Fix" { (html::prose(diagnostic.code.hint())) }
                        }
                    }
                }
            }
        }
    }
}

fn descriptor(skill: &Skill) -> Markup {
    let fields = &skill.frontmatter;
    let text = |value: Option<&Value>| -> String {
        match value {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Null) | None => "—".to_owned(),
            Some(other) => other.to_string(),
        }
    };
    let endpoint = fields.get("endpoint");
    let auth = fields.get("auth");
    let inputs = fields.get("inputs").and_then(Value::as_array);
    html! {
        section aria-labelledby="descriptor" {
            h2 #descriptor { "Service" }
            div.table-wrap {
                table.meta {
                    tr { th scope="row" { "Endpoint" } td { code { (text(endpoint.and_then(|e| e.get("url")))) } } }
                    tr { th scope="row" { "Method" } td { (text(endpoint.and_then(|e| e.get("method")))) } }
                    tr { th scope="row" { "Auth" } td { (text(auth.and_then(|a| a.get("type")))) } }
                    tr { th scope="row" { "Output" } td { (text(fields.get("output").and_then(|o| o.get("type")))) } }
                }
            }
            @if let Some(inputs) = inputs {
                div.table-wrap {
                    table {
                        caption { "Inputs" }
                        thead { tr { th scope="col" { "Name" } th scope="col" { "Type" } th scope="col" { "Required" } th scope="col" { "Description" } } }
                        tbody {
                            @for input in inputs {
                                tr {
                                    td { code { (text(input.get("name"))) } }
                                    td { (text(input.get("type"))) }
                                    td { @if input.get("required").and_then(Value::as_bool) == Some(true) { "yes" } @else { "no" } }
                                    td { (text(input.get("description"))) }
                                }
                            }
                        }
                    }
                }
            }
            p.muted { a href=(descriptor_path(&skill.domain, &skill.name)) { "The descriptor as JSON" } }
        }
    }
}

fn files(skill: &Skill, files_path: &str, held: &HashSet<String>) -> Markup {
    if skill.files.is_empty() {
        return html! {};
    }
    html! {
        section aria-labelledby="files" {
            h2 #files { "Files" }
            div.table-wrap {
                table {
                    thead { tr { th scope="col" { "Path" } th scope="col" { "Size" } th scope="col" { "SHA-256" } } }
                    tbody {
                        @for file in &skill.files {
                            tr {
                                td {
                                    @if held.contains(&file.path) {
                                        a href={ (files_path) "/" (encode_path(&file.path)) } { (file.path) }
                                    } @else {
                                        (file.path) " " span.muted { "(not kept)" }
                                    }
                                }
                                td { @match file.size { Some(size) => { (size) " B" }, None => "—" } }
                                td { code { @match file.sha256 { Some(digest) => (shorten(&digest.hex(), 16)), None => "—" } } }
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_stay_words() {
        assert_eq!(shell_quote("https://a.test/x"), "https://a.test/x");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("$(rm -rf ~)'x"), "'$(rm -rf ~)'\\''x'");
        assert_eq!(shell_quote(""), "''");
    }
}
