//! Logs: `--log-format json` writes one JSON object per line on stderr, and text logs are
//! coloured only on a terminal and never under `NO_COLOR`.
//! See: The front door and the operator's kit.

use std::path::PathBuf;
use std::process::{Command, Output};

use crate::util::{stderr, stdout};

/// A fresh data directory for one test.
fn scratch(label: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("logs-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn skillscout(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skillscout"))
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("SKILLSCOUT_LOG_FORMAT")
        .env_remove("NO_COLOR")
        .envs(env.iter().copied())
        .output()
        .expect("the skillscout binary runs")
}

/// A data directory whose frontier holds one domain, `unreachable.test`, which the crawls
/// below resolve to a closed loopback port: a crawl of what is due that ends at once.
fn seeded(label: &str) -> PathBuf {
    let dir = scratch(label);
    let seeds = dir.join("seeds.txt");
    std::fs::write(&seeds, "http://unreachable.test\n").unwrap();
    let data = dir.join("data");
    let output = skillscout(
        &[
            "--data",
            data.to_str().unwrap(),
            "seeds",
            "add",
            seeds.to_str().unwrap(),
        ],
        &[],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    data
}

/// The flags that make `unreachable.test` fail at once: port 9 on loopback is closed.
const UNREACHABLE: [&str; 4] = [
    "--resolve",
    "unreachable.test=127.0.0.1:9",
    "--host-delay-ms",
    "0",
];

/// Parses every stderr line as a JSON object.
fn json_lines(output: &Output) -> Vec<serde_json::Value> {
    let text = stderr(output);
    assert!(!text.trim().is_empty(), "no log lines");
    text.lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|error| panic!("not JSON ({error}): {line:?}"));
            assert!(value.is_object(), "{line}");
            value
        })
        .collect()
}

#[test]
fn json_logs_are_one_object_per_line() {
    let data = seeded("json");
    let mut args = vec![
        "--log-format",
        "json",
        "--data",
        data.to_str().unwrap(),
        "crawl",
    ];
    args.extend(UNREACHABLE);
    let output = skillscout(&args, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let lines = json_lines(&output);
    let started = lines
        .iter()
        .find(|line| line["fields"]["message"] == "crawling the frontier's due domains")
        .unwrap_or_else(|| panic!("{lines:?}"));
    assert_eq!(started["level"], "INFO");
    assert_eq!(started["target"], "skillscout::crawl");
    assert_eq!(started["fields"]["due"], 1);
    assert!(
        started["timestamp"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );
    // Results stay on stdout, as text.
    assert!(
        stdout(&output).starts_with("crawled 1 domain"),
        "{}",
        stdout(&output)
    );

    // From the environment too, and a failure is one more JSON line.
    let file = scratch("json-error").join("not-a-directory");
    std::fs::write(&file, "").unwrap();
    let output = skillscout(
        &["--data", file.to_str().unwrap(), "crawl"],
        &[("SKILLSCOUT_LOG_FORMAT", "json")],
    );
    assert_eq!(output.status.code(), Some(1));
    let lines = json_lines(&output);
    let last = lines.last().unwrap();
    assert_eq!(last["level"], "ERROR", "{last}");
    assert!(
        last["fields"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("not-a-directory")),
        "{last}"
    );
}

#[test]
fn text_logs_are_coloured_only_on_a_terminal_without_no_color() {
    // Not a terminal: plain.
    let data = seeded("text");
    let mut args = vec!["--data", data.to_str().unwrap(), "crawl"];
    args.extend(UNREACHABLE);
    let output = skillscout(&args, &[]);
    assert!(output.status.success());
    let text = stderr(&output);
    assert!(text.contains("INFO"), "{text}");
    assert!(!text.contains('\u{1b}'), "{text:?}");

    // A terminal (through `script`, which runs the command on a pseudo-terminal).
    if Command::new("script").arg("--version").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "`script` (util-linux) is missing: under CI this test runs, it does not skip"
        );
        return;
    }
    let on_terminal = |no_color: Option<&str>| {
        let data = seeded("terminal");
        let line = format!(
            "{} --data {} crawl --no-progress {}",
            env!("CARGO_BIN_EXE_skillscout"),
            data.display(),
            UNREACHABLE.join(" ")
        );
        let mut command = Command::new("script");
        command
            .args(["-qec", &line, "/dev/null"])
            .env_remove("RUST_LOG")
            .env_remove("SKILLSCOUT_LOG_FORMAT")
            .env_remove("NO_COLOR");
        if let Some(value) = no_color {
            command.env("NO_COLOR", value);
        }
        let output = command.output().unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let coloured = on_terminal(None);
    assert!(coloured.contains("\u{1b}["), "{coloured:?}");
    let plain = on_terminal(Some("1"));
    assert!(plain.contains("INFO"), "{plain:?}");
    assert!(!plain.contains('\u{1b}'), "{plain:?}");
    // An empty NO_COLOR does not count.
    assert!(on_terminal(Some("")).contains("\u{1b}["));
}
