//! The static safety audit: what a skill would make an agent do, read before anyone installs it.
//!
//! [`audit`] reads every file of a skill (offline, deterministic, no model) and reports each
//! finding with its [`Rule`], [`Severity`], file, line and a safe excerpt, rolled up into a
//! [`Risk`]. It is a linter, not a certificate: docs/audit.md says what it cannot see.
//!
//! # How a file is read
//!
//! A text file is split into segments (see `text`): prose paragraphs, commands of code blocks
//! with their continuation lines, hidden comments, frontmatter lines, each with its context.
//! Every rule family scans each segment; blobs that decode to text (base64, hex, character
//! codes) are scanned again as text, two levels deep. Context weighs a match: a command in a
//! code block is an instruction to run it, a phrase in quotes is a mention, a heading or a
//! comment that calls the text an attack makes it an example, and a documented installer from
//! a well-known host is not a paste site. Binary files are checked for executable headers and
//! encrypted archives only.
//!
//! # Lines
//!
//! `line` is 1-based and points at the line the finding's excerpt comes from. It is 0 for
//! findings about a whole file (an executable header, bytes past the limits, the frontmatter's
//! `allowed-tools` when SKILL.md is not among the files), whose excerpt is then a description.
//!
//! # Risk
//!
//! The risk is the highest severity found, raised by combinations that only malware makes:
//! a credential read (at medium or above) and data sent to a suspicious place in the same skill
//! is `critical`; a credential read and any outbound send of data anywhere in the skill is at
//! least `high` (and shown as a finding at the send); three or more rules at medium or above
//! across code, secrets, persistence and
//! executables are at least `high`. Findings in text presented as a warning or an example of
//! an attack stay visible (at medium at most) but take no part in these combinations.
//! Otherwise a single medium finding never makes a skill `high`.
//!
//! # Cost
//!
//! At most [`MAX_FILE_BYTES`] are read of a file and [`MAX_SKILL_BYTES`] of a skill (the rest is
//! an `unaudited_content` finding); every pattern runs in linear time (the `regex` crate does
//! not backtrack); a rule reports at most [`MAX_FINDINGS_PER_RULE_PER_FILE`] lines of a file and
//! a skill at most [`MAX_FINDINGS`] findings, the most severe kept.

mod agent;
mod binary;
mod capability;
mod dependencies;
mod download;
mod execution;
mod exfiltration;
mod hidden;
mod hosts;
mod injection;
mod memo;
mod pattern_list;
mod rebuilt;
mod render;
mod report;
mod rule;
mod sabotage;
mod secrets;
mod surveillance;
mod system;
mod text;
mod unicode;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use memo::{audit_remembered, forget_remembered};
pub use rule::{Family, Rule};

use report::Report;
use text::{Context, Document, Place};

/// The most bytes read of one file.
pub const MAX_FILE_BYTES: usize = 1024 * 1024;
/// The most bytes read of one skill, over all its files.
pub const MAX_SKILL_BYTES: usize = 16 * 1024 * 1024;
/// The most lines one rule reports in one file; the rest are counted in the last message.
pub const MAX_FINDINGS_PER_RULE_PER_FILE: usize = 10;
/// The most findings reported for one skill, the most severe kept.
pub const MAX_FINDINGS: usize = 500;
/// The most characters of an excerpt.
pub const MAX_EXCERPT_CHARS: usize = render::MAX_EXCERPT_CHARS;
/// How many times decoded text is decoded again (base64 inside base64).
const MAX_DECODE_DEPTH: usize = 2;

/// How serious one finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth a look; common in well-meant skills.
    Low,
    /// Reaches something sensitive, or cannot be reviewed; harmless skills do it too.
    Medium,
    /// What malicious skills do, and well-meant ones rarely.
    High,
    /// Malware's own moves: hidden instructions, code fetched from paste sites, secrets sent out.
    Critical,
}

impl Severity {
    /// Returns the lowercase name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }

    /// Returns the next severity down (low stays low).
    fn lower(self) -> Severity {
        match self {
            Severity::Critical => Severity::High,
            Severity::High => Severity::Medium,
            Severity::Medium | Severity::Low => Severity::Low,
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How risky a whole skill is: the roll-up of its findings' severities.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// Nothing found.
    #[default]
    None,
    /// Only low findings.
    Low,
    /// At most medium findings, none of the combinations that raise them.
    Medium,
    /// A high finding, or a combination of medium ones.
    High,
    /// A critical finding, or secrets read and sent out.
    Critical,
}

impl Risk {
    /// Returns the lowercase name used in JSON and the API's `risk=` filter.
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::None => "none",
            Risk::Low => "low",
            Risk::Medium => "medium",
            Risk::High => "high",
            Risk::Critical => "critical",
        }
    }
}

impl From<Severity> for Risk {
    fn from(severity: Severity) -> Risk {
        match severity {
            Severity::Low => Risk::Low,
            Severity::Medium => Risk::Medium,
            Severity::High => Risk::High,
            Severity::Critical => Risk::Critical,
        }
    }
}

impl fmt::Display for Risk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One thing the audit found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// What the finding is about.
    pub rule: Rule,
    /// How serious it is here, context considered.
    pub severity: Severity,
    /// The path of the file, relative to the skill's root.
    pub file: String,
    /// The 1-based line the excerpt comes from; 0 for a finding about the whole file.
    pub line: u32,
    /// The line (or, for line 0, a description), cut to [`MAX_EXCERPT_CHARS`], with every
    /// invisible or control character written as `<U+XXXX>`.
    pub excerpt: String,
    /// What was found and why it matters, in one or two sentences.
    pub message: String,
}

/// The audit of one skill.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Audit {
    /// The roll-up of the findings (module documentation, "Risk").
    pub risk: Risk,
    /// The findings, most severe first, then by file, line and rule.
    pub findings: Vec<Finding>,
}

/// One file of a skill, as fetched or unpacked.
#[derive(Debug, Clone, Copy)]
pub struct AuditFile<'a> {
    /// The path relative to the skill's root, `/`-separated (`SKILL.md`, `scripts/run.sh`).
    pub path: &'a str,
    /// The file's bytes.
    pub bytes: &'a [u8],
}

/// What the audit reads of a skill.
#[derive(Debug, Clone, Copy)]
pub struct AuditInput<'a> {
    /// The skill's name, read with the description for what the skill says it does.
    pub name: &'a str,
    /// The frontmatter `description`.
    pub description: &'a str,
    /// The frontmatter `allowed-tools`, one tool per item ([`allowed_tools`] reads them).
    pub allowed_tools: &'a [String],
    /// Every file of the skill, SKILL.md included, binary files too.
    pub files: &'a [AuditFile<'a>],
}

/// Returns the tools a frontmatter's `allowed-tools` grants: a list of strings, or one string
/// of tools separated by spaces or commas (`Bash(git:*) Read`, `Read, Grep`), with spaces and
/// commas inside parentheses kept.
pub fn allowed_tools(frontmatter: &Map<String, Value>) -> Vec<String> {
    let mut tools = Vec::new();
    match frontmatter.get("allowed-tools") {
        Some(Value::String(text)) => split_tools(text, &mut tools),
        Some(Value::Array(items)) => {
            for item in items.iter().filter_map(Value::as_str) {
                split_tools(item, &mut tools);
            }
        }
        _ => {}
    }
    tools
}

fn split_tools(text: &str, tools: &mut Vec<String>) {
    let mut depth = 0usize;
    let mut current = String::new();
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth == 0 && (c == ',' || c.is_whitespace()) {
            if !current.is_empty() {
                tools.push(std::mem::take(&mut current));
            }
        } else {
            current.push(c);
        }
    }
    if !current.is_empty() {
        tools.push(current);
    }
}

/// Audits a skill: every file, then what the description says against what the files reach.
pub fn audit(input: &AuditInput<'_>) -> Audit {
    let mut files: Vec<&AuditFile<'_>> = input.files.iter().collect();
    files.sort_by(|a, b| a.path.cmp(b.path));
    let mut report = Report::default();
    let mut reach = Reach::default();
    let mut budget = MAX_SKILL_BYTES;
    for file in files {
        binary::check(file.path, file.bytes, &mut report);
        let readable = file.bytes.len().min(MAX_FILE_BYTES).min(budget);
        if readable < file.bytes.len() {
            let unread = file.bytes.len() - readable;
            let why = if readable == MAX_FILE_BYTES {
                format!("the file is larger than the {MAX_FILE_BYTES} bytes the audit reads")
            } else {
                format!("the skill is larger than the {MAX_SKILL_BYTES} bytes the audit reads")
            };
            report.whole(
                file.path,
                Rule::UnauditedContent,
                Severity::Low,
                format!("{unread} bytes not read"),
                format!("{why}; its last {unread} bytes were not audited"),
            );
        }
        budget -= readable;
        if readable == 0 {
            continue;
        }
        let bytes = &file.bytes[..readable];
        if let Some(document) = Document::read(file.path, bytes) {
            audit_document(&document, &mut report, &mut reach);
        } else if let Some(from) = binary::appended_text(file.path, bytes) {
            report.whole(
                file.path,
                Rule::PolyglotFile,
                Severity::High,
                format!("{} bytes of text after the end of the file's format", bytes.len() - from),
                "text is appended after the end of a media file, where no viewer shows it: a script hidden in an image is read here as a script".to_owned(),
            );
            let document = Document::appended(file.path, bytes, from);
            audit_document(&document, &mut report, &mut reach);
        }
    }
    capability::check(input, &reach, &mut report);
    report.finish(&reach)
}

/// What a rule found in a segment, before it is placed in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hit {
    pub rule: Rule,
    pub severity: Severity,
    /// Byte offset of the match in the scanned text.
    pub at: usize,
    pub message: String,
}

/// What a skill's files reach besides what the rules report, for the capability check and
/// the roll-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Capability {
    /// A request over the network.
    Network,
    /// A shell command or a script.
    Shell,
    /// A secret store or the environment.
    Secrets,
    /// Data sent out (a POST, an upload), to a host other than this machine.
    Send,
}

/// What the rules found in one piece of text.
#[derive(Debug, Default)]
pub(crate) struct Sink {
    pub hits: Vec<Hit>,
    pub reaches: Vec<(Capability, usize)>,
}

impl Sink {
    /// Records a finding at byte `at` of the scanned text.
    pub(crate) fn hit(&mut self, rule: Rule, severity: Severity, at: usize, message: String) {
        debug_assert!(severity <= rule.max_severity(), "{rule:?} {severity:?}");
        self.hits.push(Hit {
            rule,
            severity: severity.min(rule.max_severity()),
            at,
            message,
        });
    }

    /// Records that the text reaches `capability` at byte `at`.
    pub(crate) fn reach(&mut self, capability: Capability, at: usize) {
        self.reaches.push((capability, at));
    }
}

/// The words each family of rules cannot do without, in the order `detect` runs the families:
/// a piece of text without any of a family's words is not shown to it. (One `RegexSet` of
/// them all costs more than these searches, most of which a literal prefilter cuts short.)
static GATES: LazyLock<[regex::Regex; 7]> = LazyLock::new(|| {
    [
        injection::GATE,
        execution::GATE,
        secrets::GATE,
        system::GATE,
        agent::GATE,
        dependencies::GATE,
        sabotage::GATE,
    ]
    .map(|gate| regex::Regex::new(gate).expect("the pattern is valid"))
});

/// Runs every content rule over `text` (a segment, or text decoded from one).
pub(crate) fn detect(text: &str, context: &Context, depth: usize, sink: &mut Sink) {
    let [
        injection,
        execution,
        secrets,
        system,
        agent,
        dependencies,
        sabotage,
    ] = &*GATES;
    if injection.is_match(text) {
        injection::detect(text, context, sink);
    }
    if execution.is_match(text) {
        execution::detect(text, context, sink);
    }
    if secrets.is_match(text) {
        secrets::detect(text, context, sink);
    }
    if system.is_match(text) {
        system::detect(text, context, sink);
    }
    if agent.is_match(text) {
        agent::detect(text, context, sink);
    }
    if dependencies.is_match(text) {
        dependencies::detect(text, sink);
    }
    if sabotage.is_match(text) {
        sabotage::detect(text, sink);
    }
    capability::reach(text, context, sink);
    if depth < MAX_DECODE_DEPTH {
        hidden::encoded(text, context, depth, sink);
        rebuilt::rebuilt(text, depth, sink);
    }
}

/// Where each capability was first reached (file, 1-based line and excerpt), and which files
/// send data out.
#[derive(Debug, Default)]
pub(crate) struct Reach {
    pub first: BTreeMap<Capability, (String, u32, String)>,
    pub sending_files: BTreeSet<String>,
}

fn audit_document(document: &Document<'_>, report: &mut Report, reach: &mut Reach) {
    for (line, col, hit) in unicode::check(document) {
        report.add(document, line, col, hit);
    }
    if document.kind == text::FileKind::Script {
        reach.note(Capability::Shell, document, document.first_line(), 0);
    }
    let segments = document.segments();
    let mut sends = false;
    for segment in &segments {
        let mut sink = Sink::default();
        detect(&segment.text, &segment.context, 0, &mut sink);
        if segment.context.place == Place::Comment {
            hidden::comment(&segment.text, &mut sink);
        }
        for hit in sink.hits {
            report.add_in(document, segment, hit);
        }
        // What an example or a warning shows is not what the skill does.
        if segment.context.cautionary {
            continue;
        }
        for (capability, at) in sink.reaches {
            sends |= capability == Capability::Send;
            let (line, col) = segment.locate(at);
            reach.note(capability, document, line, col);
        }
    }
    let later = download::downloads(&segments)
        .into_iter()
        .chain(download::paste_lures(&segments))
        .chain(execution::evaluations(&segments));
    for (index, hit) in later {
        if let Some(segment) = segments.get(index) {
            report.add_in(document, segment, hit);
        }
    }
    if document.kind == text::FileKind::Script {
        for (line, col, hit) in binary::script(document) {
            report.add(document, line, col, hit);
        }
    }
    // Constructs judged over the whole file, whose pieces sit on different lines.
    let whole = [
        system::document(document),
        agent::other_skills(document),
        sabotage::logic_bomb(document),
        surveillance::clipboard(document),
        surveillance::screen(document, sends),
        surveillance::keys(document, sends),
        execution::reverse_shell_lines(document),
        text::is_requirements(document.path)
            .then(|| dependencies::requirements(document))
            .flatten(),
    ];
    for (line, col, hit) in whole.into_iter().flatten() {
        // A construct shown under a warning ("dangerous code patterns") is an example there too.
        let example = segments.iter().any(|segment| {
            segment.context.cautionary && segment.pieces.iter().any(|piece| piece.line == line)
        });
        report.add_weighed(document, line, col, hit, example);
    }
}

impl Reach {
    fn note(&mut self, capability: Capability, document: &Document<'_>, line: usize, col: usize) {
        if capability == Capability::Send {
            self.sending_files.insert(document.path.to_owned());
        }
        self.first.entry(capability).or_insert_with(|| {
            let number = u32::try_from(line + 1).unwrap_or(u32::MAX);
            let excerpt = render::excerpt(document.line(line), col);
            (document.path.to_owned(), number, excerpt)
        });
    }
}

#[cfg(test)]
mod tests;
