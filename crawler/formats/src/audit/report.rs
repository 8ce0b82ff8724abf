//! The findings of a skill as the rules report them: one per rule and line, at most
//! [`MAX_FINDINGS_PER_RULE_PER_FILE`] lines per rule and file (the most severe kept), sorted,
//! and rolled up into the skill's risk.

use std::collections::{BTreeMap, BTreeSet};

use super::text::{Document, Segment};
use super::{
    Audit, Family, Finding, Hit, MAX_EXCERPT_CHARS, MAX_FINDINGS, MAX_FINDINGS_PER_RULE_PER_FILE,
    Reach, Risk, Rule, Severity, render,
};

/// The findings of a skill as they are found, with the per-rule caps.
#[derive(Debug, Default)]
pub(crate) struct Report {
    findings: BTreeMap<(String, u32, Rule), Finding>,
    /// Per file and rule: the lines kept, and how many more were left out.
    kept: BTreeMap<(String, Rule), (Vec<u32>, usize)>,
    /// Findings seen at least once outside a warning or an example: only these take part in
    /// the roll-up's combinations.
    meant: BTreeSet<(String, u32, Rule)>,
}

impl Report {
    /// Records `hit`, found at byte `col` of line `line` (0-based) of `document`.
    pub(crate) fn add(&mut self, document: &Document<'_>, line: usize, col: usize, hit: Hit) {
        self.add_found(document, line, col, hit, false);
    }

    /// Records `hit`, found in `segment` of `document`. In a segment presented as a warning or
    /// an example, a finding stays visible at medium at most and is left out of the roll-up's
    /// combinations.
    pub(crate) fn add_in(&mut self, document: &Document<'_>, segment: &Segment, hit: Hit) {
        let (line, col) = segment.locate(hit.at);
        self.add_weighed(document, line, col, hit, segment.context.cautionary);
    }

    /// Records `hit`, found at byte `col` of line `line` (0-based) of `document`, in text that
    /// is or is not presented as a warning or an example (see [`Report::add_in`]).
    pub(crate) fn add_weighed(
        &mut self,
        document: &Document<'_>,
        line: usize,
        col: usize,
        mut hit: Hit,
        example: bool,
    ) {
        if example {
            hit.severity = hit.severity.min(Severity::Medium);
        }
        self.add_found(document, line, col, hit, example);
    }

    fn add_found(
        &mut self,
        document: &Document<'_>,
        line: usize,
        col: usize,
        hit: Hit,
        example: bool,
    ) {
        let text = document.line(line);
        let finding = Finding {
            rule: hit.rule,
            severity: hit.severity,
            file: document.path.to_owned(),
            line: u32::try_from(line + 1).unwrap_or(u32::MAX),
            excerpt: render::excerpt(text, col),
            message: hit.message,
        };
        if !example {
            self.meant
                .insert((finding.file.clone(), finding.line, finding.rule));
        }
        self.insert(finding);
    }

    /// Records a finding about a whole file (line 0); `excerpt` describes what was found.
    pub(crate) fn whole(
        &mut self,
        file: &str,
        rule: Rule,
        severity: Severity,
        excerpt: String,
        message: String,
    ) {
        self.meant.insert((file.to_owned(), 0, rule));
        self.insert(Finding {
            rule,
            severity,
            file: file.to_owned(),
            line: 0,
            excerpt: render::render_bounded(&excerpt, MAX_EXCERPT_CHARS),
            message,
        });
    }

    /// Records a finding whose line and excerpt are already known.
    pub(crate) fn located(
        &mut self,
        file: &str,
        line: u32,
        excerpt: String,
        rule: Rule,
        severity: Severity,
        message: String,
    ) {
        self.meant.insert((file.to_owned(), line, rule));
        self.insert(Finding {
            rule,
            severity,
            file: file.to_owned(),
            line,
            excerpt,
            message,
        });
    }

    fn insert(&mut self, finding: Finding) {
        let key = (finding.file.clone(), finding.line, finding.rule);
        if let Some(existing) = self.findings.get_mut(&key) {
            // One finding per rule and line: the most severe reading wins.
            if finding.severity > existing.severity {
                *existing = finding;
            }
            return;
        }
        let (lines, left_out) = self
            .kept
            .entry((finding.file.clone(), finding.rule))
            .or_default();
        if lines.len() >= MAX_FINDINGS_PER_RULE_PER_FILE {
            // Keep the most severe: replace the mildest kept line when this one is worse.
            let mildest = lines
                .iter()
                .enumerate()
                .filter_map(|(i, line)| {
                    let kept = self
                        .findings
                        .get(&(finding.file.clone(), *line, finding.rule))?;
                    Some((kept.severity, std::cmp::Reverse(*line), i))
                })
                .min();
            *left_out += 1;
            let Some((severity, _, index)) = mildest else {
                return;
            };
            if severity >= finding.severity {
                return;
            }
            let old = lines.swap_remove(index);
            self.findings
                .remove(&(finding.file.clone(), old, finding.rule));
        }
        lines.push(finding.line);
        self.findings.insert(key, finding);
    }

    /// Returns the audit: the findings sorted and capped, and the risk they roll up to.
    pub(crate) fn finish(mut self, reach: &Reach) -> Audit {
        for ((file, rule), (lines, left_out)) in &self.kept {
            if *left_out == 0 {
                continue;
            }
            let Some(last) = lines.iter().max() else {
                continue;
            };
            if let Some(finding) = self.findings.get_mut(&(file.clone(), *last, *rule)) {
                finding
                    .message
                    .push_str(&format!(" ({left_out} more like this in the file)"));
            }
        }
        let mut findings: Vec<Finding> = self.findings.into_values().collect();
        findings.sort_by(|a, b| {
            b.severity
                .cmp(&a.severity)
                .then_with(|| a.file.cmp(&b.file))
                .then_with(|| a.line.cmp(&b.line))
                .then_with(|| a.rule.cmp(&b.rule))
        });
        let meant: Vec<&Finding> = findings
            .iter()
            .filter(|finding| {
                self.meant
                    .contains(&(finding.file.clone(), finding.line, finding.rule))
            })
            .collect();
        let risk = roll_up(&findings, &meant, &reach.sending_files);
        if let Some(theft) = theft(&meant, reach) {
            findings.retain(|finding| {
                (&finding.file, finding.line, finding.rule) != (&theft.file, theft.line, theft.rule)
            });
            let at = findings
                .iter()
                .position(|finding| finding.severity < theft.severity)
                .unwrap_or(findings.len());
            findings.insert(at, theft);
        }
        findings.truncate(MAX_FINDINGS);
        Audit { risk, findings }
    }
}

/// Returns true for the rules that read a secret.
fn reads_secret(rule: Rule) -> bool {
    matches!(
        rule,
        Rule::CredentialAccess
            | Rule::EnvironmentDump
            | Rule::CredentialPrompt
            | Rule::ScreenCapture
            | Rule::Keylogger
    )
}

/// Returns a finding that ties a secret read to a send elsewhere in the skill, when no finding
/// says so already: the roll-up raises the risk for the pair, and the pair must be shown.
fn theft(meant: &[&Finding], reach: &Reach) -> Option<Finding> {
    let read = meant
        .iter()
        .filter(|finding| finding.severity >= Severity::Medium)
        .find(|finding| reads_secret(finding.rule))?;
    let said = meant.iter().any(|finding| {
        matches!(finding.rule, Rule::Exfiltration | Rule::DnsExfiltration)
            && finding.severity >= Severity::High
    });
    if said {
        return None;
    }
    let (file, line, excerpt) = reach.first.get(&super::Capability::Send)?;
    let what = match read.rule {
        Rule::EnvironmentDump => "collects every environment variable",
        Rule::CredentialPrompt => "asks for a password or a recovery phrase",
        Rule::ScreenCapture => "captures the screen again and again",
        Rule::Keylogger => "records every key pressed",
        _ => read.message.as_str(),
    };
    Some(Finding {
        rule: Rule::Exfiltration,
        severity: Severity::High,
        file: file.clone(),
        line: *line,
        excerpt: excerpt.clone(),
        message: format!(
            "data is sent out here, and the skill {what} ({}:{}): together they are how secrets leave the machine",
            read.file, read.line
        ),
    })
}

/// Rolls findings up into a risk (module documentation, "Risk"). `meant` are the findings
/// outside warnings and examples, which alone combine; `sending_files` are the files that send
/// data out.
fn roll_up(findings: &[Finding], meant: &[&Finding], sending_files: &BTreeSet<String>) -> Risk {
    let mut risk = findings
        .iter()
        .map(|finding| Risk::from(finding.severity))
        .max()
        .unwrap_or(Risk::None);
    let findings = meant;
    let at_least_medium = |finding: &&&Finding| finding.severity >= Severity::Medium;
    let reads_secrets = findings
        .iter()
        .filter(at_least_medium)
        .any(|finding| reads_secret(finding.rule));
    // A secret read in one file and sent by another (a script that collects, a manifest that
    // posts) is the same theft as both in one.
    let reads_and_sends = reads_secrets && !sending_files.is_empty();
    let sends_out = findings
        .iter()
        .any(|finding| matches!(finding.rule, Rule::Exfiltration | Rule::DnsExfiltration));
    if reads_secrets && sends_out {
        risk = Risk::Critical;
    } else if reads_and_sends {
        risk = risk.max(Risk::High);
    }
    let mut serious: Vec<Rule> = findings
        .iter()
        .filter(at_least_medium)
        .filter(|finding| {
            matches!(
                finding.rule.family(),
                Family::RemoteCode
                    | Family::Secrets
                    | Family::Persistence
                    | Family::Executables
                    | Family::Destruction
            )
        })
        .map(|finding| finding.rule)
        .collect();
    serious.sort();
    serious.dedup();
    if serious.len() >= 3 {
        risk = risk.max(Risk::High);
    }
    risk
}
