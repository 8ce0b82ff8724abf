//! `skillscout validate`: checks local input and prints what is wrong, like a compiler, with
//! what the static safety audit finds in each skill's files.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;
use crawler::check::{Checked, SiteLabel};
use crawler::crawl::{Reading, crawl_domain};
use crawler::fetch::Fetcher;
use crawler::local;
use formats::audit::{Finding, Risk, Severity as FindingSeverity};
use formats::diagnostic::passes;
use formats::health::{Health, Status};
use formats::seeds::SeedTarget;
use formats::site::WELL_KNOWN_INDEXES;
use formats::verdict::judges_the_skill;
use formats::{Code, Diagnostic, Severity, Verdict, VerdictKind};
use serde::Serialize;
use store::Outcome;
use time::OffsetDateTime;

use crate::cli::{FetchArgs, ValidateArgs};
use crate::terminal::safe;
use crate::{ExitStatus, UsageResult, usage};

/// Runs `skillscout validate`.
pub(crate) fn run(args: &ValidateArgs) -> anyhow::Result<ExitStatus> {
    let seen_at = OffsetDateTime::now_utc();
    let mut checked = Checked::default();
    let mut origins = Vec::new();
    for raw in &args.paths {
        if raw.starts_with("http://") || raw.starts_with("https://") || raw.starts_with("mcp+") {
            origins.push(SeedTarget::parse(raw).map_err(anyhow::Error::msg).usage()?);
            continue;
        }
        let path = Path::new(raw);
        if !path.exists()
            && let Some(origin) = meant_origin(raw)
        {
            return Err(usage(anyhow::anyhow!(
                "cannot validate {raw}: there is no file or folder of that name here; to \
                 validate a site, give its URL: `skillscout validate {origin}`"
            )));
        }
        let mut found = local::check(path, seen_at)
            .with_context(|| format!("cannot validate {}", path.display()))
            .usage()?;
        checked.indexes.append(&mut found.indexes);
        checked.skills.append(&mut found.skills);
        checked.sites.append(&mut found.sites);
    }
    if !origins.is_empty() {
        let mut found = check_origins(&args.fetch, origins)?;
        checked.indexes.append(&mut found.indexes);
        checked.skills.append(&mut found.skills);
        checked.sites.append(&mut found.sites);
    }
    let verdict = if args.lenient {
        VerdictKind::Lenient
    } else {
        VerdictKind::Strict
    };
    let advice = Advice {
        allow_private: args.fetch.allow_private,
    };
    let report = Report::new(&checked, verdict, advice);
    let output = if args.json {
        let mut json = serde_json::to_string_pretty(&report).context("cannot encode the report")?;
        json.push('\n');
        json
    } else {
        render(&report, args.verbose)
    };
    std::io::stdout()
        .write_all(output.as_bytes())
        .context("cannot write to stdout")?;
    Ok(if report.ok {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}

/// Returns the origin `raw` likely names when it reads as a host name (`obra.test`,
/// `example.com:8443`) rather than a path: no `/`, and a dot inside a valid domain.
fn meant_origin(raw: &str) -> Option<String> {
    if raw.contains(['/', '\\']) || !raw.contains('.') {
        return None;
    }
    let host = raw.rsplit_once(':').map_or(raw, |(host, port)| {
        if port.parse::<u16>().is_ok() {
            host
        } else {
            raw
        }
    });
    // A file name such as `SKILL.md` or `index.json` is not taken for a host.
    let last = host.rsplit('.').next().unwrap_or_default();
    if matches!(
        last.to_ascii_lowercase().as_str(),
        "md" | "json" | "zip" | "gz" | "tgz" | "tar" | "txt" | "yaml" | "yml"
    ) {
        return None;
    }
    let origin = format!("https://{raw}");
    SeedTarget::parse(&origin).ok().map(|_| origin)
}

/// How to advise on a diagnostic in this run: the fix printed after `help:` and given as
/// `help` in `--json`.
#[derive(Debug, Clone, Copy)]
struct Advice {
    /// Whether `--allow-private` was given.
    allow_private: bool,
}

impl Advice {
    /// The fix for `diagnostic`: its code's hint, except where what `validate` can do differs
    /// from what the directory does.
    fn help(self, diagnostic: &Diagnostic) -> &'static str {
        match diagnostic.code {
            // The directory never fetches a private address; a publisher checking a server
            // on their own machine before publishing can have validate fetch it.
            Code::RefusedDestination if !self.allow_private => {
                "the directory only fetches public addresses: publish the skills at a public \
                 address to be listed. To check a server on this machine or network before \
                 publishing, run validate again with --allow-private"
            }
            code => code.hint(),
        }
    }
}

/// A diagnostic as `validate --json` gives it: with the fix the terminal prints.
#[derive(Debug, Serialize)]
struct DiagnosticReport<'a> {
    #[serde(flatten)]
    diagnostic: &'a Diagnostic,
    /// What to do about it.
    help: &'static str,
}

impl<'a> DiagnosticReport<'a> {
    fn all(diagnostics: &'a [Diagnostic], advice: Advice) -> Vec<DiagnosticReport<'a>> {
        diagnostics
            .iter()
            .map(|diagnostic| DiagnosticReport {
                diagnostic,
                help: advice.help(diagnostic),
            })
            .collect()
    }
}

/// Crawls each origin once, politely and without storing anything, and returns what was
/// found as a local check would: fetch failures (robots.txt, index probes) become diagnostics
/// of the origin.
fn check_origins(fetch: &FetchArgs, origins: Vec<SeedTarget>) -> anyhow::Result<Checked> {
    let settings = fetch.settings()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let fetcher = Fetcher::new(settings, None).map_err(anyhow::Error::msg)?;
    let mut checked = Checked::default();
    for target in origins {
        let crawled = runtime.block_on(crawl_domain(
            &fetcher,
            &target,
            Reading::EVERY_FILE,
            None,
            None,
        ));
        let mut none_found = Vec::new();
        if crawled.status.outcome == Outcome::NotFound {
            none_found.push(Diagnostic::new(
                Code::NotFound,
                format!(
                    "{target} publishes no skill index: none of {} answered",
                    WELL_KNOWN_INDEXES
                        .iter()
                        .map(|(path, _)| *path)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        // What the directory's publisher page shows for this crawl: the same function over
        // the same status and records.
        let health = api::health_of(&crawled.status, &crawled.found.records);
        let label = SiteLabel {
            path: PathBuf::from(target.to_string()),
            url: target.origin().clone(),
        };
        checked.add_site(label, crawled.found, none_found, health, |url| {
            Some(PathBuf::from(url.as_str()))
        });
    }
    Ok(checked)
}

/// The machine-readable result of `validate --json`.
#[derive(Debug, Serialize)]
pub(crate) struct Report<'a> {
    /// Which verdict decided `ok`.
    verdict: VerdictKind,
    /// True when nothing failed the verdict.
    ok: bool,
    /// The indexes read.
    indexes: Vec<IndexReport<'a>>,
    /// The skills checked.
    skills: Vec<SkillReport<'a>>,
    /// The sites read, each with the health report the directory's publisher page shows.
    origins: Vec<OriginReport<'a>>,
    /// Counts.
    summary: Summary,
}

#[derive(Debug, Serialize)]
struct OriginReport<'a> {
    origin: &'a str,
    health: api::wire::HealthView,
    #[serde(skip)]
    report: &'a Health,
}

#[derive(Debug, Serialize)]
struct IndexReport<'a> {
    path: PathBuf,
    url: &'a str,
    format: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<formats::index::IndexVersion>,
    passes: bool,
    diagnostics: Vec<DiagnosticReport<'a>>,
}

#[derive(Debug, Serialize)]
struct SkillReport<'a> {
    label: &'a str,
    path: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    digest_status: Option<formats::DigestStatus>,
    /// The directory's verdict, which `passes` follows.
    verdict: Verdict,
    passes: Passes,
    diagnostics: Vec<DiagnosticReport<'a>>,
    /// What the static safety audit makes of the skill's files; it does not decide `passes`.
    risk: Risk,
    findings: &'a [Finding],
}

#[derive(Debug, Serialize)]
struct Passes {
    strict: bool,
    lenient: bool,
}

#[derive(Debug, Default, Serialize)]
struct Summary {
    indexes: usize,
    skills: usize,
    passed: usize,
    failed: usize,
    errors: usize,
    warnings: usize,
    notes: usize,
    /// Audit findings, every severity.
    findings: usize,
    /// Skills the audit finds `critical` (the directory does not list them by default).
    critical: usize,
}

impl<'a> Report<'a> {
    fn new(checked: &'a Checked, verdict: VerdictKind, advice: Advice) -> Report<'a> {
        let mut summary = Summary::default();
        let mut count = |diagnostics: &[Diagnostic]| {
            for diagnostic in diagnostics {
                match diagnostic.severity_for(verdict) {
                    Severity::Error => summary.errors += 1,
                    Severity::Warning => summary.warnings += 1,
                    Severity::Info => summary.notes += 1,
                }
            }
        };
        let indexes: Vec<IndexReport<'a>> = checked
            .indexes
            .iter()
            .map(|index| {
                count(&index.diagnostics);
                // The problems of its entries are the index's, though shown with their skill.
                let entries: Vec<Diagnostic> = checked
                    .records()
                    .filter(|record| record.index_url == index.url)
                    .flat_map(|record| record.diagnostics.iter())
                    .filter(|diagnostic| !judges_the_skill(diagnostic))
                    .cloned()
                    .collect();
                IndexReport {
                    path: display_path(&index.path),
                    url: index.url.as_str(),
                    format: index.format.as_str(),
                    version: index.version,
                    passes: passes(&index.diagnostics, verdict) && passes(&entries, verdict),
                    diagnostics: DiagnosticReport::all(&index.diagnostics, advice),
                }
            })
            .collect();
        let skills: Vec<SkillReport<'a>> = checked
            .skills
            .iter()
            .map(|skill| {
                count(&skill.diagnostics);
                let judged = skill.judgement();
                SkillReport {
                    label: &skill.label,
                    path: display_path(&skill.path),
                    digest_status: skill.record.as_ref().map(|record| record.digest_status),
                    verdict: judged.verdict,
                    passes: Passes {
                        strict: judged.passes(VerdictKind::Strict),
                        lenient: judged.passes(VerdictKind::Lenient),
                    },
                    diagnostics: DiagnosticReport::all(&skill.diagnostics, advice),
                    risk: skill.risk,
                    findings: &skill.findings,
                }
            })
            .collect();
        let passed_verdict = |skill: &SkillReport<'_>| match verdict {
            VerdictKind::Strict => skill.passes.strict,
            VerdictKind::Lenient => skill.passes.lenient,
        };
        summary.indexes = indexes.len();
        summary.skills = skills.len();
        summary.passed = skills.iter().filter(|skill| passed_verdict(skill)).count();
        summary.failed = summary.skills - summary.passed;
        summary.findings = skills.iter().map(|skill| skill.findings.len()).sum();
        summary.critical = skills
            .iter()
            .filter(|skill| skill.risk == Risk::Critical)
            .count();
        let ok = summary.failed == 0 && indexes.iter().all(|index| index.passes);
        let origins = checked
            .sites
            .iter()
            .map(|site| OriginReport {
                origin: site.url.as_str(),
                health: api::wire::HealthView::from(&site.health),
                report: &site.health,
            })
            .collect();
        Report {
            verdict,
            ok,
            indexes,
            skills,
            origins,
            summary,
        }
    }
}

/// Shows paths relative to the working directory when they are below it.
fn display_path(path: &Path) -> PathBuf {
    let Ok(current) = std::env::current_dir() else {
        return path.to_owned();
    };
    let absolute = path.canonicalize().unwrap_or_else(|_| path.to_owned());
    let current = current.canonicalize().unwrap_or(current);
    match absolute.strip_prefix(&current) {
        Ok(relative) if !relative.as_os_str().is_empty() => relative.to_owned(),
        _ => path.to_owned(),
    }
}

/// Renders the report for people: one block per index and per skill that has something to
/// say, then one summary line.
fn render(report: &Report<'_>, verbose: bool) -> String {
    let verdict = report.verdict;
    let mut out = String::new();
    let mut hidden_notes = 0;
    let mut hidden_findings = 0;
    for index in &report.indexes {
        let status = if index.passes { "ok" } else { "FAIL" };
        let version = index
            .version
            .map(|version| match version {
                formats::index::IndexVersion::V0_2 => " v0.2",
                formats::index::IndexVersion::V0_1 => " v0.1",
            })
            .unwrap_or("");
        let _ = writeln!(
            out,
            "{status:<4} index {} ({}{version})",
            safe(&index.path.display().to_string()),
            index.format
        );
        hidden_notes += render_diagnostics(&mut out, &index.diagnostics, verdict, verbose);
    }
    for skill in &report.skills {
        let (passed, other_name, other) = match verdict {
            VerdictKind::Strict => (skill.passes.strict, "lenient", skill.passes.lenient),
            VerdictKind::Lenient => (skill.passes.lenient, "strict", skill.passes.strict),
        };
        let status = if passed { "ok" } else { "FAIL" };
        let other_word = if other { "passes" } else { "fails" };
        let risk = match skill.risk {
            Risk::None => String::new(),
            risk => format!("; risk {risk}"),
        };
        let _ = writeln!(
            out,
            "{status:<4} {}  {} ({other_word} {other_name}{risk})",
            safe(skill.label),
            safe(&skill.path.display().to_string())
        );
        hidden_notes += render_diagnostics(&mut out, &skill.diagnostics, verdict, verbose);
        hidden_findings += render_findings(&mut out, skill.findings, verbose);
    }
    for origin in &report.origins {
        render_health(&mut out, origin);
    }
    let summary = &report.summary;
    let verdict_name = match verdict {
        VerdictKind::Strict => "strict",
        VerdictKind::Lenient => "lenient",
    };
    let _ = writeln!(
        out,
        "\n{} skill{} checked ({verdict_name}): {} passed, {} failed; {} error{}, {} warning{}",
        summary.skills,
        plural(summary.skills),
        summary.passed,
        summary.failed,
        summary.errors,
        plural(summary.errors),
        summary.warnings,
        plural(summary.warnings),
    );
    if summary.findings > 0 {
        let _ = writeln!(
            out,
            "safety audit: {} finding{}; {} skill{} critical (a static audit is a linter, not a certificate)",
            summary.findings,
            plural(summary.findings),
            summary.critical,
            plural(summary.critical),
        );
    }
    let hidden = match (hidden_notes, hidden_findings) {
        (0, 0) => None,
        (notes, 0) => Some(format!("{notes} note{}", plural(notes))),
        (0, low) => Some(format!("{low} low finding{}", plural(low))),
        (notes, low) => Some(format!(
            "{notes} note{} and {low} low finding{}",
            plural(notes),
            plural(low)
        )),
    };
    if let Some(hidden) = hidden {
        let _ = writeln!(out, "{hidden} hidden; --verbose shows them");
    }
    out
}

/// Writes each audit finding as `severity[rule] file:line: message` and its excerpt; returns
/// how many low ones were left out (shown with `verbose`).
fn render_findings(out: &mut String, findings: &[Finding], verbose: bool) -> usize {
    let mut hidden = 0;
    for finding in findings {
        if finding.severity == FindingSeverity::Low && !verbose {
            hidden += 1;
            continue;
        }
        let place = if finding.line == 0 {
            finding.file.clone()
        } else {
            format!("{}:{}", finding.file, finding.line)
        };
        let _ = writeln!(
            out,
            "     {}[{}] {}: {}",
            finding.severity,
            finding.rule.as_str(),
            safe(&place),
            safe(&finding.message)
        );
        let _ = writeln!(out, "       | {}", safe(&finding.excerpt));
    }
    hidden
}

/// Writes each diagnostic as `severity[code] field: message` plus advice; returns how many
/// notes were left out.
fn render_diagnostics(
    out: &mut String,
    diagnostics: &[DiagnosticReport<'_>],
    verdict: VerdictKind,
    verbose: bool,
) -> usize {
    let mut hidden = 0;
    let mut sorted: Vec<&DiagnosticReport<'_>> = diagnostics.iter().collect();
    sorted.sort_by_key(|report| std::cmp::Reverse(report.diagnostic.severity_for(verdict)));
    for report in sorted {
        let diagnostic = report.diagnostic;
        let severity = diagnostic.severity_for(verdict);
        if severity == Severity::Info && !verbose {
            hidden += 1;
            continue;
        }
        let at = diagnostic
            .field
            .as_deref()
            .map(|field| format!(" {}:", safe(field)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "     {severity}[{}]{at} {}",
            diagnostic.code,
            safe(&diagnostic.message)
        );
        if severity > Severity::Info {
            let _ = writeln!(out, "       help: {}", report.help);
        }
    }
    hidden
}

/// Writes a site's health report as the publisher page shows it: the score, each check that
/// did not pass with what to do, and what each agent client makes of the origin.
fn render_health(out: &mut String, origin: &OriginReport<'_>) {
    let health = origin.report;
    let _ = writeln!(
        out,
        "\nhealth {}: {}/100",
        safe(origin.origin),
        health.score
    );
    for check in &health.checks {
        // What passed, and what could not be checked here (HTTP-only checks of a tree on
        // disk), is in the JSON report.
        if matches!(
            check.status,
            Status::Pass | Status::NotChecked | Status::NotApplicable
        ) {
            continue;
        }
        let _ = writeln!(
            out,
            "     {:<14} {}: {}",
            check.status.as_str(),
            check.name.replace('`', ""),
            safe(&check.detail)
        );
        for item in &check.items {
            let _ = writeln!(out, "       - {}", safe(item));
        }
        if let Some(fix) = &check.fix {
            let _ = writeln!(out, "       help: {}", safe(fix));
        }
    }
    let risks: Vec<String> = health
        .risk
        .skills
        .iter()
        .filter(|(risk, count)| **risk != Risk::None && **count > 0)
        .map(|(risk, count)| format!("{count} skill{} at {risk} risk", plural(*count)))
        .collect();
    if !risks.is_empty() {
        let _ = writeln!(out, "     safety audit (not scored): {}", risks.join(", "));
        for flagged in &health.risk.flagged {
            let _ = writeln!(
                out,
                "       - {} {}: {} finding{}",
                flagged.id,
                flagged.risk,
                flagged.findings,
                plural(flagged.findings)
            );
        }
    }
    for client in &health.clients {
        let _ = writeln!(
            out,
            "     {}: {} ({})",
            client.name,
            safe(&client.summary),
            client.verdict.as_str()
        );
        for refusal in &client.refused {
            let _ = writeln!(
                out,
                "       refuses {}: {}",
                safe(&refusal.entry),
                safe(&refusal.reason)
            );
        }
    }
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}
