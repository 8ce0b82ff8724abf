//! What a skill says it does against what its files reach: the network, scripts that run,
//! secrets; and `allowed-tools` broader than the description needs.
//!
//! Descriptions are short and never list everything, so a mismatch is low (network, shell)
//! or medium (secrets) and never raises a skill's risk on its own.

use std::sync::LazyLock;

use regex::Regex;

use super::render::{excerpt, render_bounded};
use super::text::{Context, Place};
use super::{AuditInput, Capability, Reach, Report, Rule, Severity, Sink};

struct Patterns {
    network_use: Regex,
    url: Regex,
    says_network: Regex,
    says_shell: Regex,
    says_secrets: Regex,
}

static PATTERNS: LazyLock<Patterns> = LazyLock::new(|| {
    let regex = |pattern: &str| Regex::new(pattern).expect("the pattern is valid");
    Patterns {
        network_use: regex(
            r"(?i)(?-u:\b)(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|aria2c)(?-u:\b)|(?-u:\b)requests\.(?:get|post|put|patch|delete|request|session)(?-u:\b)|(?-u:\b)httpx\.|(?-u:\b)urllib\.request(?-u:\b)|(?-u:\b)urlopen\s*\(|(?:^|[^.\w])fetch\s*\(|(?-u:\b)axios(?-u:\b)|(?-u:\b)http\.client(?-u:\b)|(?-u:\b)aiohttp(?-u:\b)|(?-u:\b)socket\.(?:socket|create_connection)(?-u:\b)|(?-u:\b)new\s+websocket(?-u:\b)|(?-u:\b)net/http(?-u:\b)",
        ),
        url: regex(r"(?i)https?://"),
        says_network: regex(
            r"(?i)(?-u:\b)(?:apis?|https?|urls?|web|websites?|online|internet|network\w*|fetch\w*|download\w*|upload\w*|remote|cloud|servers?|services?|endpoints?|requests?|webhooks?|sync\w*|integrat\w*|connect\w*|search\w*|brows\w*|scrap\w*|crawl\w*|rest|graphql|oauth|saas|mcp|publish\w*|deploy\w*|host\w*|platforms?|github|gitlab|slack|notion|jira|linear|sentry|stripe|aws|gcp|azure|vercel|cloudflare|supabase|firebase|openai|anthropic|email\w*|send\w*|post\w*|shar\w*|retriev\w*|lookup|look up|query|queries|account\w*|registry|package\w*|install\w*)(?-u:\b)|\w\.(?:com|io|dev|org|net|ai|app)(?-u:\b)",
        ),
        says_shell: regex(
            r"(?i)(?-u:\b)(?:commands?|cli|terminal|shell|bash|zsh|powershell|scripts?|run\w*|execut\w*|install\w*|build\w*|compil\w*|tests?|testing|git|npm|npx|pip|uv|cargo|docker|kubectl|automat\w*|deploy\w*|lint\w*|format\w*|setup|set up|configur\w*|generat\w*|convert\w*|process\w*|analy[sz]\w*|debug\w*|migrat\w*|benchmark\w*|profil\w*|manag\w*|creat\w*)(?-u:\b)",
        ),
        says_secrets: regex(
            r"(?i)(?-u:\b)(?:credential\w*|password\w*|passphrase|secrets?|tokens?|keys?|auth\w*|login|sign in|ssh|keychain|wallet\w*|certificat\w*|vault|env|environment|security|audit\w*|forensic\w*|incident\w*|cloud|aws|gcp|azure|kubernetes|kube\w*)(?-u:\b)",
        ),
    }
});

/// Notes where `text` reaches the network.
pub(crate) fn reach(text: &str, context: &Context, sink: &mut Sink) {
    let patterns = &*PATTERNS;
    if context.place == Place::Decoded {
        return;
    }
    if let Some(found) = patterns.network_use.find(text) {
        // In prose, `curl` alone is a word; with an address it is a command.
        if context.place != Place::Prose || patterns.url.is_match(text) {
            sink.reach(Capability::Network, found.start());
        }
    }
}

/// Reports capabilities the description never mentions and over-broad `allowed-tools`.
pub(crate) fn check(input: &AuditInput<'_>, reach: &Reach, report: &mut Report) {
    let patterns = &*PATTERNS;
    let said = format!(
        "{} {}",
        input.name.replace(['-', '_'], " "),
        input.description
    );
    let undeclared = [
        (
            Capability::Secrets,
            &patterns.says_secrets,
            Severity::Medium,
            "reads secrets",
        ),
        (
            Capability::Network,
            &patterns.says_network,
            Severity::Low,
            "reaches the network",
        ),
        (
            Capability::Shell,
            &patterns.says_shell,
            Severity::Low,
            "ships scripts to run",
        ),
    ];
    for (capability, says, severity, what) in undeclared {
        let Some((file, line, shown)) = reach.first.get(&capability) else {
            continue;
        };
        if says.is_match(&said) {
            continue;
        }
        report.located(
            file,
            *line,
            shown.clone(),
            Rule::CapabilityMismatch,
            severity,
            format!(
                "the skill {what}, which its description (\"{}\") never mentions",
                render_bounded(input.description.trim(), 80)
            ),
        );
    }
    broad_tools(input, &said, report);
}

/// Tools that give an unrestricted shell.
const SHELLS: &[&str] = &[
    "bash",
    "bash(*)",
    "bash(*:*)",
    "bash(:*)",
    "shell",
    "terminal",
    "powershell",
    "run_terminal_cmd",
    "execute",
    "exec",
    "computer",
];

fn broad_tools(input: &AuditInput<'_>, said: &str, report: &mut Report) {
    let tools: Vec<String> = input
        .allowed_tools
        .iter()
        .map(|tool| tool.trim().trim_matches(['"', '\'']).to_ascii_lowercase())
        .collect();
    let everything = tools.iter().any(|tool| tool == "*" || tool == "all");
    let shell = tools.iter().find(|tool| SHELLS.contains(&tool.as_str()));
    let message = if everything {
        "`allowed-tools` grants every tool, so the agent uses any of them without asking".to_owned()
    } else if let Some(shell) = shell.filter(|_| !PATTERNS.says_shell.is_match(said)) {
        format!(
            "`allowed-tools` grants an unrestricted shell (`{shell}`) to a skill whose description never says it runs commands"
        )
    } else {
        return;
    };
    let skill_md = input
        .files
        .iter()
        .find(|file| file.path.eq_ignore_ascii_case("SKILL.md"));
    let located = skill_md.and_then(|file| {
        let text = String::from_utf8_lossy(file.bytes);
        text.split('\n')
            .take(200)
            .enumerate()
            .find_map(|(index, line)| {
                let line = line.strip_suffix('\r').unwrap_or(line);
                let at = line.find("allowed-tools")?;
                Some((index, excerpt(line, at)))
            })
    });
    match located {
        Some((index, shown)) => report.located(
            "SKILL.md",
            u32::try_from(index + 1).unwrap_or(u32::MAX),
            shown,
            Rule::BroadAllowedTools,
            Severity::Medium,
            message,
        ),
        None => report.whole(
            "SKILL.md",
            Rule::BroadAllowedTools,
            Severity::Medium,
            format!("allowed-tools: {}", input.allowed_tools.join(" ")),
            message,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{AuditFile, audit};
    use super::*;

    fn rules(description: &str, tools: &[&str], files: &[(&str, &str)]) -> Vec<(Rule, Severity)> {
        let tools: Vec<String> = tools.iter().map(|tool| (*tool).to_owned()).collect();
        let files: Vec<AuditFile<'_>> = files
            .iter()
            .map(|(path, text)| AuditFile {
                path,
                bytes: text.as_bytes(),
            })
            .collect();
        let input = AuditInput {
            name: "demo",
            description,
            allowed_tools: &tools,
            files: &files,
        };
        audit(&input)
            .findings
            .into_iter()
            .filter(|finding| finding.rule.family() == super::super::Family::Capability)
            .map(|finding| (finding.rule, finding.severity))
            .collect()
    }

    #[test]
    fn undeclared_reach_is_reported() {
        let skill = "---\nname: demo\ndescription: Formats markdown tables.\n---\n```bash\ncurl -s https://stats.example/ping\n```\n";
        assert_eq!(
            rules("Formats markdown tables.", &[], &[("SKILL.md", skill)]),
            [(Rule::CapabilityMismatch, Severity::Low)]
        );
        assert_eq!(
            rules(
                "Checks a web page's links over HTTP.",
                &[],
                &[("SKILL.md", skill)]
            ),
            []
        );
    }

    #[test]
    fn broad_tools_are_reported_unless_the_skill_says_it_runs_commands() {
        let skill = "---\nname: demo\ndescription: d\nallowed-tools: Bash Read\n---\nBody\n";
        assert_eq!(
            rules(
                "Summarises meeting notes.",
                &["Bash", "Read"],
                &[("SKILL.md", skill)]
            ),
            [(Rule::BroadAllowedTools, Severity::Medium)]
        );
        assert_eq!(
            rules(
                "Runs the test suite and reports failures.",
                &["Bash", "Read"],
                &[("SKILL.md", skill)]
            ),
            []
        );
        assert_eq!(
            rules(
                "Summarises meeting notes.",
                &["Bash(git:*)", "Read"],
                &[("SKILL.md", skill)]
            ),
            []
        );
        assert_eq!(
            rules("Runs anything.", &["*"], &[("SKILL.md", skill)]),
            [(Rule::BroadAllowedTools, Severity::Medium)]
        );
    }
}
