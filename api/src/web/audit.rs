//! The safety audit and the copies of a skill, as its page shows them: the risk, every
//! finding with its file and line, what a static audit can and cannot promise, and the other
//! places the same content is published.

use std::collections::HashSet;

use formats::audit::{Finding, Risk, Severity};
use formats::{Skill, SkillId};
use maud::{Markup, html};

use super::html::labelled_badge;
use crate::directory::urls::{encode_path, skill_page_path};

/// Returns the badge class of a risk.
pub(crate) fn risk_class(risk: Risk) -> &'static str {
    match risk {
        Risk::None => "risk-none",
        Risk::Low => "risk-low",
        Risk::Medium => "risk-medium",
        Risk::High => "risk-high",
        Risk::Critical => "risk-critical",
    }
}

/// Returns a badge that names a risk.
pub(crate) fn risk_badge(risk: Risk) -> Markup {
    labelled_badge("risk", risk_class(risk), risk.as_str())
}

/// Returns what a risk means, in a sentence.
fn risk_reason(risk: Risk) -> &'static str {
    match risk {
        Risk::None => "the audit found nothing to report.",
        Risk::Low => "only findings that well-meant skills commonly have.",
        Risk::Medium => {
            "it reaches something sensitive or cannot be fully read; harmless skills do this too."
        }
        Risk::High => "it does what malicious skills do and well-meant ones rarely do.",
        Risk::Critical => {
            "it does what malware does: the directory does not list it by default, mirror it or serve it over MCP."
        }
    }
}

fn severity_class(severity: Severity) -> &'static str {
    match severity {
        Severity::Low => "sev-low",
        Severity::Medium => "sev-medium",
        Severity::High => "sev-high",
        Severity::Critical => "sev-critical",
    }
}

/// Returns the section of a skill's page that shows its audit: the risk, the findings (rule,
/// severity, file and line, the excerpt as text, the message), and the caveat.
pub(crate) fn section(skill: &Skill, files_path: &str, held: &HashSet<String>) -> Markup {
    html! {
        section aria-labelledby="audit" {
            h2 #audit { "Safety audit" }
            @if skill.risk == Risk::Critical {
                p.notice.bad { "The safety audit finds this skill critical: this page offers no install command for it." }
            }
            p {
                "Risk: " (risk_badge(skill.risk)) " " (risk_reason(skill.risk))
            }
            p.muted {
                "skillscout reads every file of a skill for what it would make an agent do: run code fetched from elsewhere, read secrets, send data out, hide instructions. "
                "A static audit is a linter, not a certificate: a skill without findings is not proven safe (code assembled at run time, a second stage fetched later or a payload dressed as an example can pass), "
                "and a finding is a pattern seen in context, not proof of intent. Nothing published is ever run here."
            }
            @if skill.findings.is_empty() {
                p.muted { "No findings." }
            } @else {
                (findings_table(&skill.findings, files_path, held))
            }
        }
    }
}

fn findings_table(findings: &[Finding], files_path: &str, held: &HashSet<String>) -> Markup {
    html! {
        div.table-wrap {
            table.stack.findings {
                caption { (findings.len()) " finding" @if findings.len() != 1 { "s" } ", most severe first" }
                thead { tr {
                    th scope="col" { "Severity" }
                    th scope="col" { "Rule" }
                    th scope="col" { "Where" }
                    th scope="col" { "Found" }
                } }
                tbody {
                    @for finding in findings {
                        @let place = if finding.line == 0 {
                            finding.file.clone()
                        } else {
                            format!("{}:{}", finding.file, finding.line)
                        };
                        tr {
                            td data-label="Severity" {
                                span class=(severity_class(finding.severity)) { (finding.severity.as_str()) }
                            }
                            td data-label="Rule" { code { (finding.rule.as_str()) } }
                            td data-label="Where" {
                                @if held.contains(&finding.file) {
                                    a href={ (files_path) "/" (encode_path(&finding.file)) } { code { (place) } }
                                } @else {
                                    code { (place) }
                                }
                                @if finding.line == 0 { br; span.muted { "the whole file" } }
                            }
                            td data-label="Found" {
                                pre.excerpt { code { (finding.excerpt) } }
                                (finding.message)
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Returns the section that lists the other places the same skill is published, or nothing
/// when there are none.
pub(crate) fn copies(also_at: &[SkillId]) -> Markup {
    if also_at.is_empty() {
        return html! {};
    }
    let count = also_at.len();
    html! {
        section aria-labelledby="copies" {
            h2 #copies { "Also published at " (count) " other origin" @if count != 1 { "s" } }
            p.muted {
                "The same files, line endings, trailing whitespace and frontmatter key order aside. "
                "Search shows one copy of them: the one verified over HTTPS first, then the earliest seen."
            }
            ul.items {
                @for id in also_at {
                    li { a href=(skill_page_path(id.domain(), id.slug())) { code { (id.to_string()) } } }
                }
            }
        }
    }
}
