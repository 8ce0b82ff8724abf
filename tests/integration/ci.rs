//! `.ci/run`'s checks that stop a run before it starts.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use crate::util::{repo_root, stderr, stdout};

/// `.ci/run` with a `df` that reports `available_kib` free first on the PATH, and a `cargo`
/// that fails at once with status 97: a run the check let through stops at its first cargo
/// command instead of running the whole suite (this test included).
fn ci_run_with_free_disk(available_kib: u64) -> std::process::Output {
    let shims = tempfile::tempdir().unwrap();
    let shim = |name: &str, script: String| {
        let path = shims.path().join(name);
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    shim(
        "df",
        format!(
            "#!/bin/sh\necho 'Filesystem 1024-blocks Used Available Capacity Mounted on'\n\
             echo '/dev/test 100000000 0 {available_kib} 1% /'\n"
        ),
    );
    shim("cargo", "#!/bin/sh\nexit 97\n".to_owned());
    let path = format!(
        "{}:{}",
        shims.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("bash")
        .arg(repo_root().join(".ci/run"))
        .env("PATH", path)
        .output()
        .unwrap()
}

#[test]
fn ci_refuses_to_start_with_less_than_5_gib_free_and_says_why() {
    let output = ci_run_with_free_disk(2 * 1024 * 1024);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(
        stderr(&output).trim(),
        "error: 2048 MiB free on this disk; a run needs about 3.5 GB, and .ci/run asks for 5 GiB"
    );
    // Refused before anything ran.
    assert_eq!(stdout(&output), "");

    // One KiB under the limit is refused too.
    let output = ci_run_with_free_disk(5 * 1024 * 1024 - 1);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("asks for 5 GiB"));

    // At the limit the check lets the run go on, to its first cargo command.
    let output = ci_run_with_free_disk(5 * 1024 * 1024);
    assert_eq!(output.status.code(), Some(97), "{}", stderr(&output));
}
