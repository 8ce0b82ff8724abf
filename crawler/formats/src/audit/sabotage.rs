//! Harm done to the machine itself: the home folder or the user's documents deleted (worst of
//! all when a server's answer decides it, a logic bomb), disks wiped, and the machine's power
//! spent mining cryptocurrency for someone else.
//!
//! Clearing caches, `node_modules` and build output is what cleanup skills do, and passes:
//! what they delete sits below the folders the rules name.

use std::sync::LazyLock;

use regex::Regex;

use super::text::Document;
use super::{Hit, Rule, Severity, Sink};

/// Words this family's patterns cannot do without: `audit::detect` runs the family only on text that has one.
pub(crate) const GATE: &str = r"rm -|rm  -|rmtree|rmSync|rimraf|[Rr]emove-[Ii]tem|rd /[sS]|RD /[sS]|mkfs|wipefs|of=/dev/|diskutil|stratum|[Mm]iner|donate-level|algo|pool|xmr";

struct Patterns {
    /// `rm` of the home folder, the folders that hold the user's work, or the root; the first
    /// group is the flags.
    remove: Regex,
    /// The same in Python and PowerShell, and disks wiped.
    remove_other: Regex,
    /// A fetch in the same command: the deletion waits on what a server says.
    fetch: Regex,
    /// A mining pool's address, a miner run against a pool, a miner's tell-tale flags.
    miner: Regex,
}

static PATTERNS: LazyLock<Patterns> = LazyLock::new(|| {
    let regex = |pattern: &str| Regex::new(pattern).expect("the pattern is valid");
    let folders = r"(?:documents|desktop|pictures|photos|music|movies|videos|code|projects|src|work|dev|git|repos|library|onedrive|dropbox)";
    Patterns {
        remove: regex(&format!(
            r#"(?i)(?-u:\b)rm\s+((?:-[a-z]+\s+|--no-preserve-root\s+|--recursive\s+|--force\s+)+)(?:--\s+)?["']?(?:(?:~|\$home|\$\{{home(?::[?=-][^}}]*)?\}}|/users/[^/\s"']+|/home/[^/\s"']+)["']?(?:/\*?|/{folders}["']?(?:/\*)?)?|/\*?|/(?:users|home)(?:/\*)?)(?:["'\s;&|)]|$)"#
        )),
        remove_other: regex(&format!(
            r#"(?i)(?-u:\b)shutil\.rmtree\(\s*(?:str\s*\(\s*)?(?:path\.home\(\)|os\.path\.expanduser\(\s*["']~/?{folders}?["']\s*\)|os\.environ\[\s*["']home["']\s*\])(?:\s*/\s*["']{folders}["'])?\s*[,)]|(?-u:\b)remove-item(?-u:\b)[^;\n]*-recurse[^;\n]*?(?:\$env:userprofile|\$home|~)(?:\\{folders})?(?:["'\s;]|$)|(?-u:\b)remove-item(?-u:\b)[^;\n]*?(?:\$env:userprofile|\$home|~)(?:\\{folders})?["']?\s[^;\n]*-recurse|(?-u:\b)(?:rmsync|rmdirsync|rimraf(?:\.sync)?)\s*\(\s*(?:os\.homedir\(\)|path\.join\(\s*os\.homedir\(\)\s*,\s*["']{folders}["']\s*\))|(?-u:\b)rd\s+/s\s+/q\s+["']?%userprofile%(?:\\{folders})?["']?(?:\s|$)|(?-u:\b)(?:mkfs(?:\.\w+)?|wipefs)\s+[^;\n]*?/dev/(?:sd|nvme|disk|hd|vd)|(?-u:\b)dd\s+[^;\n]*of=/dev/(?:sd|nvme|disk|hd|vd|rdisk)|(?-u:\b)diskutil\s+(?:erasedisk|zerodisk|secureerase)(?-u:\b)"#
        )),
        fetch: regex(
            r"(?i)(?-u:\b)(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|urlopen|requests\.get|fetch)(?-u:\b)",
        ),
        miner: regex(
            r"(?i)stratum\d?\+(?:tcp|ssl|tls|udp)://[a-z0-9.-]+|(?-u:\b)(?:xmrig|xmr-stak|cpuminer|cgminer|bfgminer|ethminer|nbminer|lolminer|phoenixminer|gminer|nanominer|teamredminer|srbminer(?:-multi)?|minerd|ccminer)(?-u:\b)[^;\n]*?\s(?:-o|--url|--pool|-u|--user)\s|--donate-level(?-u:\b)|[\x22']donate-level[\x22']\s*:|--algo\s+(?:rx/0|randomx|cn/|cryptonight|kawpow|ethash|etchash|autolykos|kheavyhash)(?-u:\b)|[\x22']algo[\x22']\s*:\s*[\x22'](?:rx/0|randomx|cn/|cryptonight|kawpow|ethash|etchash|autolykos|kheavyhash)|(?-u:\b)(?:supportxmr\.com|hashvault\.pro|moneroocean\.stream|nanopool\.org|2miners\.com|f2pool\.com|minexmr\.com|herominers\.com|unmineable\.com|nicehash\.com|c3pool\.com|xmrpool\.eu|ethermine\.org|minergate\.com)(?-u:\b)",
        ),
    }
});

/// Scans `text` for deletions of the user's files and for cryptominers.
pub(crate) fn detect(text: &str, sink: &mut Sink) {
    let patterns = &*PATTERNS;
    let removed = patterns
        .remove
        .captures_iter(text)
        .find(|captures| {
            captures.get(1).is_some_and(|flags| {
                flags.as_str().split_whitespace().any(|flag| {
                    flag.eq_ignore_ascii_case("--recursive")
                        || !flag.starts_with("--") && flag.to_ascii_lowercase().contains('r')
                })
            })
        })
        .and_then(|captures| captures.get(0))
        .or_else(|| patterns.remove_other.find(text));
    if let Some(found) = removed {
        let (severity, message) = if patterns.fetch.is_match(text) {
            (
                Severity::Critical,
                "the user's files are deleted on what a server answers: a remote switch that wipes the home folder",
            )
        } else {
            (
                Severity::High,
                "the home folder, the folders that hold the user's work, or a disk are deleted: nothing a skill should do",
            )
        };
        sink.hit(
            Rule::DestructiveCommand,
            severity,
            found.start(),
            message.to_owned(),
        );
    }
    if let Some(found) = patterns.miner.find(text) {
        sink.hit(
            Rule::Cryptominer,
            Severity::High,
            found.start(),
            "a cryptocurrency miner: the machine's power goes to someone else's wallet".to_owned(),
        );
    }
}

/// A deletion of the user's files a few lines after a fetch, as a condition on its answer
/// (`if [ "$(curl …)" = revoked ]; then rm -rf ~/Documents …`). Returns (line index, byte
/// offset, finding).
pub(crate) fn logic_bomb(document: &Document<'_>) -> Option<(usize, usize, Hit)> {
    const SPAN: usize = 3;
    static CONDITION: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)(?-u:\b)(?:if|elif|while|until|when)(?-u:\b)[^\n]*(?-u:\b)(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|urlopen|requests\.get|fetch)(?-u:\b)|(?-u:\b)(?:curl|wget)(?-u:\b)[^\n]*(?:&&|\|\|)\s*$")
            .expect("the pattern is valid")
    });
    let patterns = &*PATTERNS;
    let text = &document.text;
    static FAMILY: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(GATE).expect("the pattern is valid"));
    let deletes_anything = FAMILY.is_match(text)
        && (patterns.remove.is_match(text) || patterns.remove_other.is_match(text));
    if !deletes_anything || !CONDITION.is_match(text) {
        return None;
    }
    let deletes = |line: &str| {
        let mut sink = Sink::default();
        detect(line, &mut sink);
        sink.hits
            .into_iter()
            .find(|hit| hit.rule == Rule::DestructiveCommand)
    };
    let lines: Vec<&str> = document.lines().collect();
    for (index, line) in lines.iter().enumerate() {
        if !CONDITION.is_match(line) {
            continue;
        }
        for (later, text) in lines.iter().enumerate().skip(index + 1).take(SPAN) {
            if let Some(hit) = deletes(text) {
                return Some((
                    later,
                    hit.at,
                    Hit {
                        rule: Rule::DestructiveCommand,
                        severity: Severity::Critical,
                        at: hit.at,
                        message: "the user's files are deleted on what a server answers: a remote switch that wipes the home folder".to_owned(),
                    },
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<(Rule, Severity)> {
        let mut sink = Sink::default();
        detect(text, &mut sink);
        sink.hits
            .into_iter()
            .map(|hit| (hit.rule, hit.severity))
            .collect()
    }

    #[test]
    fn deletions_of_the_users_files_are_found() {
        for text in [
            "rm -rf \"$HOME\"/Documents \"$HOME\"/code >/dev/null 2>&1 &",
            "rm -rf ~",
            "sudo rm -rf --no-preserve-root /",
            "shutil.rmtree(Path.home() / \"Documents\")",
            "Remove-Item -Recurse -Force $env:USERPROFILE\\Documents",
            "Remove-Item -Path $HOME -Recurse -Force",
            "shutil.rmtree(str(Path.home()))",
            "fs.rmSync(os.homedir(), { recursive: true })",
            "rm -rf \"${HOME:?}\"/*",
        ] {
            assert_eq!(
                found(text),
                [(Rule::DestructiveCommand, Severity::High)],
                "{text}"
            );
        }
        for text in [
            "rm -rf ~/Library/Caches/*",
            "rm -rf ~/.cache/pip node_modules dist",
            "rm -rf \"$HOME/code/old-project\"",
            "rm ~/Documents/draft.txt",
            "find ~/code -type d -name node_modules -prune -exec rm -rf {} +",
        ] {
            assert_eq!(found(text), [], "{text}");
        }
    }

    #[test]
    fn a_deletion_that_waits_on_a_server_is_a_logic_bomb() {
        let script = "if [ \"$(curl -fsS https://lic.example/status)\" = revoked ]; then\n  rm -rf \"$HOME\"/Documents &\nfi\n";
        let document = Document::read("cleanup.sh", script.as_bytes()).unwrap();
        let (line, _, hit) = logic_bomb(&document).unwrap();
        assert_eq!((line, hit.severity), (1, Severity::Critical));
    }

    #[test]
    fn miners_are_found() {
        assert_eq!(
            found("nohup ./.gstress --algo rx/0 -o stratum+tcp://pool.example:3333 -u 4Aexample &"),
            [(Rule::Cryptominer, Severity::High)]
        );
        assert_eq!(
            found("{\"url\": \"pool.supportxmr.com:443\", \"user\": \"44AF\"}"),
            [(Rule::Cryptominer, Severity::High)]
        );
        for text in [
            "$miner = \"stratum+tcp://\" ascii nocase",
            "The miner protocol is called Stratum.",
        ] {
            assert_eq!(found(text), [], "{text}");
        }
    }
}
