//! Configuration: flags, `SKILLSCOUT_<FLAG>` environment variables and the `--config` file,
//! in that order of precedence, and `skillscout config` saying which won.
//! See: The front door and the operator's kit.

use std::path::PathBuf;
use std::process::{Command, Output};

use crate::serve::{Running, http, json};
use crate::util::{stderr, stdout};

/// A fresh folder for one test.
fn scratch(label: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("config-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `skillscout ARGS` in `dir` with only the given `SKILLSCOUT_` variables set.
fn run(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_skillscout"));
    command.args(args).current_dir(dir).env_remove("RUST_LOG");
    for (name, _) in std::env::vars() {
        if name.starts_with("SKILLSCOUT_") {
            command.env_remove(name);
        }
    }
    command.envs(env.iter().copied());
    command.output().expect("the skillscout binary runs")
}

/// The line of `skillscout config`'s output for `key` in `section` ("" for the top level).
fn line<'a>(output: &'a str, section: &str, key: &str) -> &'a str {
    let mut current = "";
    for line in output.lines() {
        if let Some(name) = line.strip_prefix('[') {
            current = name.trim_end_matches(']');
            continue;
        }
        if current == section && line.starts_with(&format!("{key} = ")) {
            return line;
        }
    }
    panic!("no `{key}` in [{section}]:\n{output}");
}

#[test]
fn flag_beats_environment_beats_file_beats_default() {
    let dir = scratch("precedence");
    std::fs::write(
        dir.join("skillscout.toml"),
        "# a directory\ndata = \"from-file\"\n\n[serve]\nconcurrency = 7\nhost-delay-ms = 1500\n\
         max-in-flight = 9\n\n[crawl]\nresolve = [\"a.test=127.0.0.1\"]\n",
    )
    .unwrap();
    let output = run(
        &dir,
        &[
            "--config",
            "skillscout.toml",
            "--data",
            "from-flag",
            "config",
        ],
        &[
            ("SKILLSCOUT_DATA", "from-env"),
            ("SKILLSCOUT_CONCURRENCY", "3"),
            (
                "SKILLSCOUT_STORE",
                "postgres://scout:hunter2@db.test/skills",
            ),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert_eq!(
        line(&text, "", "data"),
        "data = \"from-flag\"  # flag --data"
    );
    assert_eq!(
        line(&text, "serve", "concurrency"),
        "concurrency = 3  # environment SKILLSCOUT_CONCURRENCY"
    );
    assert_eq!(
        line(&text, "serve", "host-delay-ms"),
        "host-delay-ms = 1500  # skillscout.toml line 6"
    );
    assert_eq!(
        line(&text, "serve", "addr"),
        "addr = \"127.0.0.1:8080\"  # default"
    );
    assert_eq!(
        line(&text, "crawl", "resolve"),
        "resolve = [\"a.test=127.0.0.1\"]  # skillscout.toml line 10"
    );
    assert_eq!(
        line(&text, "crawl", "host-delay-ms"),
        "host-delay-ms = 1000  # default",
        "[serve] does not reach crawl"
    );
    assert!(
        !text.contains("hunter2"),
        "the store's password is hidden:\n{text}"
    );

    // Without the flag the environment wins, without both the file.
    let output = run(
        &dir,
        &["config"],
        &[
            ("SKILLSCOUT_CONFIG", "skillscout.toml"),
            ("SKILLSCOUT_DATA", "from-env"),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert_eq!(
        line(&text, "", "data"),
        "data = \"from-env\"  # environment SKILLSCOUT_DATA"
    );
    let output = run(&dir, &["--config", "skillscout.toml", "config"], &[]);
    let text = stdout(&output);
    assert_eq!(
        line(&text, "", "data"),
        "data = \"from-file\"  # skillscout.toml line 2"
    );
    // What `config` prints reads back as a configuration that gives the same result.
    std::fs::write(dir.join("printed.toml"), &text).unwrap();
    let again = run(&dir, &["--config", "printed.toml", "config"], &[]);
    assert!(again.status.success(), "{}", stderr(&again));
    let again = stdout(&again);
    let expected = format!(
        "host-delay-ms = 1500  # printed.toml line {}",
        line_number(&text, "serve", "host-delay-ms")
    );
    assert_eq!(line(&again, "serve", "host-delay-ms"), expected);
}

/// The line number of `key` in `section` of a printed configuration.
fn line_number(output: &str, section: &str, key: &str) -> usize {
    let wanted = line(output, section, key);
    output
        .lines()
        .position(|line| std::ptr::eq(line, wanted))
        .map(|index| index + 1)
        .unwrap()
}

#[test]
fn serve_takes_its_settings_from_the_file() {
    let dir = scratch("serve");
    std::fs::create_dir_all(dir.join("served")).unwrap();
    std::fs::write(
        dir.join("skillscout.toml"),
        format!(
            "data = \"{}\"\n[serve]\naddr = \"127.0.0.1:0\"\n",
            dir.join("served").display()
        ),
    )
    .unwrap();
    let config = dir.join("skillscout.toml");
    let server = Running::start(
        &["--config", config.to_str().unwrap(), "serve"],
        "listening on ",
    );
    assert_ne!(server.addr.port(), 8080);
    let (status, body) = http(server.addr, "/healthz", None);
    assert_eq!(status, 200, "{body}");
    assert_eq!(json(&body)["status"], "ok");
    assert!(
        dir.join("served/serve.json").is_file(),
        "the file's data directory"
    );
    assert_eq!(server.terminate(), Some(0));
}

#[test]
fn a_bad_file_is_a_usage_error_naming_the_key_and_line() {
    let dir = scratch("bad");
    std::fs::write(
        dir.join("skillscout.toml"),
        "[serve]\naddr = \"127.0.0.1:0\"\n\nmax-inflight = 10\n",
    )
    .unwrap();
    let output = run(&dir, &["--config", "skillscout.toml", "serve"], &[]);
    assert_eq!(output.status.code(), Some(2));
    let error = stderr(&output);
    assert!(
        error.contains("skillscout.toml")
            && error.contains("line 4")
            && error.contains("`max-inflight`"),
        "{error}"
    );
    assert!(!dir.join("data").exists(), "nothing ran");

    let output = run(&dir, &["--config", "missing.toml", "config"], &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("missing.toml"),
        "{}",
        stderr(&output)
    );

    // A bad environment value is named by `config` too.
    let output = run(&dir, &["config"], &[("SKILLSCOUT_ADDR", "nowhere")]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("nowhere"), "{}", stderr(&output));
}
