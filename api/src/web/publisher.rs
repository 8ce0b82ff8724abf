//! `GET /domains/{domain}`: a publisher's health report — the checks with what to do, the
//! score and its weights, which agent clients install from the origin, what the safety audit
//! found, the skills (invalid ones with their reasons), the indexes read and the crawl's errors — as the read model
//! answers it (`Directory::domain`).

use axum::extract::State;
use formats::Domain;
use formats::audit::Risk;
use formats::health::{ClientReport, ClientVerdict, RiskCounts, Status};
use formats::{Skill, Verdict};
use maud::{Markup, html};

use super::html::{self, badge};
use super::search::verdict_name;
use super::skill::diagnostics_table;
use super::{Page, WebError, audit, layout};
use crate::auth::Auth;
use crate::directory::DomainAnswer;
use crate::directory::urls::{Urls, domain_status_path, mirror_path, skill_page_path};
use crate::error::{ApiError, shorten};
use crate::extract::ApiPath;
use crate::state::AppState;

/// Returns the section that counts what the safety audit found in the publisher's skills,
/// beside the score (not in it), and names the flagged ones.
fn audit_counts(counts: &RiskCounts) -> Markup {
    let flagged = counts.skills_at(Risk::High) + counts.skills_at(Risk::Critical);
    html! {
        section aria-labelledby="audit" {
            h2 #audit { "Safety audit" }
            p.muted {
                "What the static audit of every skill's files found: not part of the score. "
                "A static audit is a linter, not a certificate; each skill's page shows its findings with their lines."
            }
            div.table-wrap {
                table.stack.risks {
                    thead { tr { th scope="col" { "Risk" } th scope="col" { "Skills" } } }
                    tbody {
                        @for (risk, count) in &counts.skills {
                            tr {
                                td data-label="Risk" { (audit::risk_badge(*risk)) }
                                td data-label="Skills" { (count) }
                            }
                        }
                    }
                }
            }
            p.muted {
                "Findings by severity: "
                @for (index, (severity, count)) in counts.findings.iter().enumerate() {
                    @if index > 0 { ", " }
                    (count) " " (severity.as_str())
                }
                "."
            }
            @if flagged > 0 {
                h3 { "Skills at high or critical risk" }
                ul.items {
                    @for skill in &counts.flagged {
                        li {
                            a href=(skill_page_path(skill.id.domain(), skill.id.slug())) { code { (skill.id.to_string()) } }
                            " " (audit::risk_badge(skill.risk)) " "
                            (skill.findings) " finding" @if skill.findings != 1 { "s" }
                        }
                    }
                    @if flagged > counts.flagged.len() {
                        li { "and " (flagged - counts.flagged.len()) " more" }
                    }
                }
            }
        }
    }
}

/// Returns the name of a crawl outcome, as the API spells it.
pub(crate) fn outcome_name(outcome: store::Outcome) -> &'static str {
    match outcome {
        store::Outcome::Ok => "ok",
        store::Outcome::NotFound => "not_found",
        store::Outcome::Disallowed => "disallowed",
        store::Outcome::Unreachable => "unreachable",
        store::Outcome::Error => "error",
    }
}

/// `GET /domains/{domain}`: one publisher's health report.
pub(crate) async fn domain(
    State(state): State<AppState>,
    auth: Result<Auth, ApiError>,
    path: Result<ApiPath<String>, ApiError>,
    params: Result<crate::extract::Params, ApiError>,
) -> Result<Page, WebError> {
    let (Auth(caller), ApiPath(domain), params) = (auth?, path?, params?);
    let notice = super::publish::notice(params.one("recrawl")?, params.one("submitted")?);
    let domain: Domain = domain
        .parse()
        .map_err(|_| ApiError::NotFound(format!("no domain {}", shorten(&domain, 100))))?;
    let directory = state.directory();
    let answer = directory
        .ask(move |directory| directory.domain(caller, &domain))
        .await?;
    let body = html! {
        @if let Some(notice) = notice {
            p.notice role="status" { (notice) }
        }
        (report(directory.urls(), &answer))
    };
    Ok(Page::ok(html::page(
        &layout(&state, answer.detail.domain.as_str(), "domains"),
        body,
    )))
}

/// Returns the badge class and text of a client's verdict.
fn client_badge(verdict: ClientVerdict) -> (&'static str, &'static str) {
    match verdict {
        ClientVerdict::All => ("pass", "installs"),
        ClientVerdict::Some => ("warn", "installs some"),
        ClientVerdict::None => ("fail", "refuses"),
        ClientVerdict::NotApplicable => ("not-checked", "n/a"),
    }
}

/// Returns the badge class of a check's status.
fn status_class(status: Status) -> &'static str {
    match status {
        Status::Pass => "pass",
        Status::Warn => "warn",
        Status::Fail => "fail",
        Status::NotChecked => "not-checked",
        Status::NotApplicable => "n/a",
    }
}

fn report(urls: &Urls, answer: &DomainAnswer) -> Markup {
    let (detail, skills, health) = (&answer.detail, &answer.skills, &answer.health);
    let checks = &health.checks;
    let score = health.score;
    let domain = detail.domain.as_str();
    let search = format!(
        "/?domain={}&verdict=any",
        url::form_urlencoded::byte_serialize(domain.as_bytes()).collect::<String>()
    );
    let outcome = outcome_name(detail.outcome);
    let mirrored = answer.mirrored;
    let mirror = urls.url(&mirror_path(&detail.domain));
    let invalid: Vec<&Skill> = skills
        .iter()
        .filter(|skill| skill.verdict() == Verdict::Invalid)
        .collect();
    html! {
        div.card {
            h1 { (domain) }
            p {
                (badge(outcome, outcome)) " "
                span.muted { "crawled " (html::time(detail.crawled_at)) " from " code { (detail.origin) } }
            }
            p.score { (score) small { " / 100 health score" } }
            p.muted {
                (detail.skills) " skills · "
                a href=(search) { "search them" } " · "
                a href=(domain_status_path(&detail.domain)) { "JSON status" }
            }
            @if detail.frontier.state.is_some() {
                (super::publish::recrawl_button(&detail.domain, detail.crawled_at))
            }
            @if let Some(state) = detail.frontier.state {
                p.muted.schedule {
                    "In the directory as " (state)
                    @if let Some(next) = detail.frontier.next_crawl_at {
                        " · next crawl " (html::time(next))
                    }
                    @if let Some(interval) = detail.frontier.interval {
                        " · revisited every " (store::frontier::schedule::human(std::time::Duration::from_secs(interval)))
                        " (sooner while its skills change)"
                    }
                }
            }
        }
        section aria-labelledby="checks" {
            h2 #checks { "Health checks" }
            div.table-wrap {
                table.checks.stack {
                    thead { tr { th scope="col" { "Check" } th scope="col" { "Result" } th scope="col" { "Found" } th scope="col" { "What to do" } th scope="col" { "Weight" } } }
                    tbody {
                        @for check in checks {
                            tr {
                                th scope="row" { (html::prose(check.name)) }
                                td data-label="Result" { (badge(status_class(check.status), status_text(check.status))) }
                                td data-label="Found" {
                                    (html::prose(&check.detail))
                                    @if !check.items.is_empty() {
                                        ul.items { @for item in &check.items { li { (html::prose(item)) } } }
                                    }
                                }
                                td data-label="What to do" { (html::prose(check.fix.as_deref().unwrap_or("—"))) }
                                td data-label="Weight" { (check.weight) }
                            }
                        }
                    }
                }
            }
            p.muted {
                "The score is the sum of the weights of the checks that pass, half the weight of those that warn, "
                "over the weights of the checks made (those not checked or not applicable are left out), out of 100."
            }
        }
        section aria-labelledby="clients" {
            h2 #clients { "Which agent clients can install from this origin" }
            div.table-wrap {
                table.stack {
                    thead { tr { th scope="col" { "Client" } th scope="col" { "Result" } th scope="col" { "Why" } } }
                    tbody {
                        @for client in &health.clients {
                            tr {
                                th scope="row" { (client_name(client)) br; code { "npx skills add " (detail.origin) } }
                                td data-label="Result" { @let (class, text) = client_badge(client.verdict); (badge(class, text)) }
                                td data-label="Why" { (html::prose(&client.summary)) }
                            }
                        }
                        @if mirrored > 0 {
                            tr {
                                th scope="row" { "Any client, through this directory's mirror" br; code { "npx skills add " (mirror) } }
                                td data-label="Result" { (badge("pass", "installs")) }
                                td data-label="Why" {
                                    (mirrored) @if mirrored == 1 { " verified skill is" } @else { " verified skills are" }
                                    " re-published in a v0.2 index this directory serves, so installing through the mirror works meanwhile."
                                }
                            }
                        }
                    }
                }
            }
            @for client in health.clients.iter().filter(|client| !client.refused.is_empty()) {
                div.table-wrap {
                    table.stack {
                        caption {
                            @if client.client == formats::health::clients::SKILLS_CLI { "Entries the skills CLI refuses, and the fix" }
                            @else { "Entries the " (client.name) " refuses, and the fix" }
                        }
                        thead { tr { th scope="col" { "Entry" } th scope="col" { "Why" } th scope="col" { "Fix" } } }
                        tbody {
                            @for refusal in &client.refused {
                                tr { td data-label="Entry" { code { (refusal.entry) } } td data-label="Why" { (html::prose(&refusal.reason)) } td data-label="Fix" { (html::prose(&refusal.fix)) } }
                            }
                        }
                    }
                }
            }
        }
        (audit_counts(&health.risk))
        section aria-labelledby="skills" {
            h2 #skills { "Skills (" (skills.len()) ")" }
            @if skills.is_empty() { p.muted { "None you may see." } }
            @else {
                div.table-wrap {
                    table.stack {
                        thead { tr { th scope="col" { "Skill" } th scope="col" { "Verdict" } th scope="col" { "Description" } } }
                        tbody {
                            @for skill in skills {
                                @let verdict = verdict_name(skill.verdict());
                                tr {
                                    td { a href=(skill_page_path(&skill.domain, &skill.name)) { (skill.title) } div.id { (skill.name.as_str()) } }
                                    td data-label="Verdict" {
                                        (badge(verdict, verdict)) " " (badge(skill.access.as_str(), skill.access.as_str()))
                                        @if skill.risk != Risk::None { " " (audit::risk_badge(skill.risk)) }
                                    }
                                    td { (shorten(&skill.description, 160)) }
                                }
                            }
                        }
                    }
                }
            }
        }
        @if !invalid.is_empty() {
            section aria-labelledby="invalid" {
                h2 #invalid { "Invalid skills and why" }
                @for skill in &invalid {
                    h3 { a href=(skill_page_path(&skill.domain, &skill.name)) { (skill.title) } " " span.id { (skill.name.as_str()) } }
                    @let errors: Vec<formats::Diagnostic> = skill.judgement().reasons.into_iter().cloned().collect();
                    @if errors.is_empty() {
                        p { "The artifact was " (super::skill::digest_status_name(skill.digest_status)) "." }
                    } @else {
                        (diagnostics_table(&errors))
                    }
                }
            }
        }
        @if !detail.diagnostics.is_empty() {
            section aria-labelledby="index-diagnostics" {
                h2 #index-diagnostics { "Index diagnostics" }
                div.table-wrap {
                    table.stack {
                        thead { tr { th scope="col" { "Severity" } th scope="col" { "Problem" } th scope="col" { "Fix" } } }
                        tbody {
                            @for diagnostic in &detail.diagnostics {
                                @let severity = format!("{:?}", diagnostic.severity).to_lowercase();
                                tr {
                                    td data-label="Severity" { span class={ "sev-" (severity) } { (severity) } }
                                    td data-label="Problem" { code { (diagnostic.code.as_str()) } @if let Some(field) = &diagnostic.field { " at " code { (field) } } br; (html::prose(&diagnostic.message)) }
                                    td data-label="Fix" { (html::prose(diagnostic.code.hint())) }
                                }
                            }
                        }
                    }
                }
            }
        }
        @if !detail.errors.is_empty() {
            section aria-labelledby="errors" {
                h2 #errors { "Crawl errors (" (detail.errors.len() + detail.errors_omitted) ")" }
                div.table-wrap {
                    table {
                        thead { tr { th scope="col" { "Code" } th scope="col" { "Message" } th scope="col" { "URL" } } }
                        tbody {
                            @for error in &detail.errors {
                                tr { td { code { (error.code) } } td { (error.message) } td { code { (error.url) } } }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Returns how a client is named in the table: the vercel `skills` CLI with its name in code.
fn client_name(client: &ClientReport) -> Markup {
    match client.client {
        formats::health::clients::SKILLS_CLI => html! { "vercel " code { "skills" } " CLI 1.7" },
        _ => html! { (client.name) },
    }
}

fn status_text(status: Status) -> &'static str {
    match status {
        Status::Pass => "pass",
        Status::Warn => "warn",
        Status::Fail => "fail",
        Status::NotChecked => "not checked",
        Status::NotApplicable => "n/a",
    }
}
