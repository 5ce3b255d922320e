//! The command lines themselves: help texts, versions, exit codes.

use crate::support::World;

#[test]
fn cli_help_teaches_and_documents_exit_codes() {
    let w = World::new();
    let out = w.install().arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "--runtime",
        "--local",
        "--dry-run",
        "--json",
        "--config-dir",
        "Examples:",
        "Exit codes:",
        "  3  invalid input",
        "  5  another msd-install run holds",
        "uninstall",
        "verify",
    ] {
        assert!(help.contains(needle), "help lacks {needle}:\n{help}");
    }
}

#[test]
fn cli_msd_run_answers_version_and_help() {
    let w = World::new();
    let out = w.run().arg("--version").output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains(env!("CARGO_PKG_VERSION")));
    assert!(w.run().arg("--help").output().unwrap().status.success());
}

#[test]
fn cli_usage_errors_exit_two() {
    let w = World::new();
    let out = w.install().args(["--local", "--global"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
