//! The command lines themselves: help texts, versions, exit codes.

use crate::support::{Install, World};

#[test]
fn cli_help_teaches_and_documents_exit_codes() {
    let mut r = Install::new().arg("--help").run().success();
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
        r = r.stdout_has(needle);
    }
}

#[test]
fn cli_msd_run_answers_version_and_help() {
    let w = World::new();
    Install::in_world(&w).helper().arg("--version").run().success().stdout_has(env!("CARGO_PKG_VERSION"));
    Install::in_world(&w).helper().arg("--help").run().success();
}

#[test]
fn cli_usage_errors_exit_two() {
    Install::new().args(["--local", "--global"]).run().code(2);
}

#[test]
fn cli_version_names_the_commit_and_date_it_was_built_from() {
    let w = World::new();
    let text = Install::in_world(&w).arg("--version").run().success().stdout();
    let rest =
        text.strip_prefix(&format!("msd-install {} (", env!("CARGO_PKG_VERSION"))).unwrap_or_else(|| panic!("{text}"));
    let (commit, date) = rest.trim_end().trim_end_matches(')').split_once(' ').unwrap_or_else(|| panic!("{text}"));
    assert!(commit.len() >= 7 && commit.chars().all(|c| c.is_ascii_hexdigit()), "{text}");
    assert!(date.len() == 10 && date.as_bytes()[4] == b'-' && date.as_bytes()[7] == b'-', "{text}");
    let doc = Install::in_world(&w).arg("--version").json().run().json();
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(doc["commit"], commit);
    assert_eq!(doc["date"], date);
    assert_ne!(env!("CARGO_PKG_VERSION"), "0.1.0", "the version moves with user-visible changes");
    let changelog = std::fs::read_to_string(crate::support::repo().join("CHANGELOG.md")).unwrap();
    assert!(changelog.contains(&format!("## [{}] - ", env!("CARGO_PKG_VERSION"))), "CHANGELOG.md has this version");
}

#[test]
fn cli_runtime_ids_are_case_insensitive_and_a_typo_gets_a_suggestion() {
    let w = World::new();
    let r = Install::in_world(&w).args(["-r", "Claud"]).dry_run().run().code(2).stderr_has("did you mean `claude`?");
    let err = r.stderr();
    let hint = err.lines().find(|l| l.starts_with("hint:")).unwrap();
    assert!(hint.contains("opencode, pi, qwen"), "the rest on one line: {err}");
    Install::in_world(&w).args(["-r", "zzzz"]).dry_run().run().stderr_lacks("did you mean");
    let doc = Install::in_world(&w).args(["-r", "CLAUDE"]).dry_run().json().run().success().json();
    assert_eq!(doc["runtimes"][0]["runtime"], "claude");
    // verify knows the id too (not installed is drift)
    Install::in_world(&w).verify().args(["-r", "Opencode"]).run().code(1);
}

#[test]
fn cli_completions_parse_in_bash_and_the_man_page_renders() {
    let w = World::new();
    let r = Install::in_world(&w).args(["completions", "bash"]).run().success();
    let script = w.tmp.path().join("msd-install.bash");
    std::fs::write(&script, &r.out.stdout).unwrap();
    let bash = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("set -e; source {}; complete -p msd-install", script.display()))
        .output()
        .unwrap();
    assert!(bash.status.success(), "bash sources it: {}", String::from_utf8_lossy(&bash.stderr));
    assert!(String::from_utf8_lossy(&bash.stdout).contains("msd-install"));
    for shell in ["zsh", "fish", "powershell", "elvish"] {
        Install::in_world(&w).args(["completions", shell]).run().success().stdout_has("msd-install");
    }
    let man = Install::in_world(&w).arg("man").run().success().stdout();
    assert!(man.starts_with(".ie") || man.contains(".TH msd-install"), "{}", &man[..200.min(man.len())]);
}

/// Issue 37: `uninstall` (with `verify` and `recover`) and `migrate` share one struct of where and
/// how the homes are read, so their options say the same thing in the same words; but migrate
/// reads two homes, and `--config-dir` names one: it is refused there and not offered.
#[test]
fn cli_uninstall_and_migrate_describe_their_shared_options_alike() {
    let w = World::new();
    let options = |sub: &str, hidden: &[&str]| -> Vec<String> {
        let help = Install::in_world(&w).env("COLUMNS", "1000").args([sub, "-h"]).run().success().stdout();
        let wanted: Vec<&str> = ["--global", "--local", "--config-dir", "--project", "--runtimes", "--allow-symlinks"]
            .into_iter()
            .filter(|f| !hidden.contains(f))
            .collect();
        let lines: Vec<String> = help
            .lines()
            .filter(|l| wanted.iter().any(|f| l.split_whitespace().any(|w| w.trim_end_matches(',') == *f)))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        assert_eq!(lines.len(), wanted.len(), "{sub} has every shared option:\n{help}");
        lines
    };
    let uninstall = options("uninstall", &[]);
    let shown: Vec<String> = uninstall.iter().filter(|l| !l.contains("--config-dir")).cloned().collect();
    assert_eq!(options("migrate", &["--config-dir"]), shown);
    assert_eq!(options("verify", &[]), uninstall);
}

#[test]
fn cli_help_lists_maintainer_commands_apart() {
    let help = Install::new().arg("--help").run().stdout();
    let commands = &help[help.find("Commands:").unwrap()..help.find("Options:").unwrap()];
    for user in ["install", "status", "diff", "uninstall", "verify", "completions"] {
        assert!(commands.contains(&format!("  {user} ")), "{user} among the user's commands:\n{commands}");
    }
    for dev in ["gen", "check", "bench", "attribution", "inventory"] {
        assert!(!commands.contains(&format!("\n  {dev} ")), "{dev} is not among the user's commands:\n{commands}");
        let after = &help[help.find("Maintainer commands").unwrap()..];
        assert!(after.contains(&format!("  {dev} ")), "{dev} is listed apart:\n{help}");
    }
}

#[test]
fn cli_maintainer_writes_refuse_outside_the_repository() {
    let w = World::new();
    for args in [&["gen", "golden", "--write"][..], &["bench", "tokens", "--write"][..]] {
        Install::in_world(&w).args(args).run().code(2).stderr_has("is not the msd-install repository");
        assert!(crate::support::tree(&w.project).is_empty(), "{args:?} wrote nothing here");
    }
    // A directory with a content/ but another project's Cargo.toml is not it either.
    std::fs::create_dir_all(w.project.join("content")).unwrap();
    std::fs::write(w.project.join("Cargo.toml"), "[package]\nname = \"other\"\n").unwrap();
    Install::in_world(&w).args(["gen", "golden", "--write"]).run().code(2).no_file("tests");
}

#[test]
fn cli_every_json_schema_is_published() {
    let w = World::new();
    for kind in
        ["capability", "version", "status", "runtimes", "install-result", "verify", "uninstall", "recover", "check"]
    {
        let r = Install::in_world(&w).args(["schema", "--kind", kind]).run().success();
        let schema = r.json();
        assert!(schema.is_object(), "{kind}");
        if kind != "capability" {
            insta::assert_snapshot!(format!("schema-{kind}"), r.stdout());
            let required: Vec<&str> =
                schema["required"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
            assert!(required.contains(&"schema_version"), "{kind} requires schema_version");
        }
    }
    // The hand-written schemas name exactly the top-level keys of the real documents.
    let doc = Install::in_world(&w).json().dry_run().starter().run().json();
    let schema = Install::in_world(&w).args(["schema", "--kind", "install-result"]).run().json();
    let props = schema["properties"].as_object().unwrap();
    for k in doc.as_object().unwrap().keys() {
        assert!(props.contains_key(k), "install-result schema lacks {k}");
    }
    let item = &schema["properties"]["runtimes"]["items"]["properties"];
    for k in doc["runtimes"][0].as_object().unwrap().keys() {
        assert!(item.get(k).is_some(), "install-result schema lacks runtimes[].{k}");
    }
}

#[test]
fn cli_install_sh_dry_run_leaves_the_bin_dir_untouched() {
    let w = World::new();
    let sh = crate::support::repo().join("install.sh");
    let help = std::process::Command::new("bash").arg(&sh).arg("--help").output().unwrap();
    assert!(help.status.success());
    let help = String::from_utf8(help.stdout).unwrap();
    assert!(help.contains("--dry-run") && help.contains("--bin-dir") && help.contains("--from-source"), "{help}");
    // With no binary at hand, the dry run only says what it would do.
    let mut cmd = w.spawnable("msd-install");
    let mut sh_cmd = std::process::Command::new("bash");
    sh_cmd.arg(&sh).arg("--dry-run").env("PATH", "/usr/bin:/bin");
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => sh_cmd.env(k, v),
            None => sh_cmd.env_remove(k),
        };
    }
    sh_cmd.env_remove("MSD_BIN_DIR").env("CARGO_TARGET_DIR", w.tmp.path().join("no-target"));
    let _ = &mut cmd;
    let out = sh_cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("would put msd-install and msd_run into"), "{err}");
    assert!(!w.home.join(".local/bin").exists(), "no bin dir was created: {err}");
    // With binaries in place, they stay byte for byte and the plan comes from them.
    let bin = w.home.join(".local/bin");
    std::fs::create_dir_all(&bin).unwrap();
    crate::support::copy_executable(&assert_cmd::cargo::cargo_bin("msd-install"), &bin.join("msd-install"));
    std::fs::write(bin.join("msd_run"), "old\n").unwrap();
    let before = crate::support::tree(&bin);
    let out = sh_cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(crate::support::tree(&bin), before, "the binaries were not replaced");
    assert!(String::from_utf8_lossy(&out.stdout).contains("dry run: nothing was written"));
    assert!(!w.home.join(".claude").exists());
}

/// Issue 15, item 12: a reader that goes away (`msd-install schema | head -1`) is no error:
/// every command, of both binaries, exits with the code it has with a reader, and says nothing
/// (no panic, no "Broken pipe").
#[test]
fn cli_every_command_exits_quietly_on_a_closed_stdout() {
    let w = World::new();
    Install::in_world(&w).arg("-q").run().success();
    let core = w.home.join(".claude/msd-core");
    let install: &[&[&str]] = &[
        &["--json"],
        &["--version"],
        &["--version", "--json"],
        &["--dry-run"],
        &["schema"],
        &["schema", "--kind", "status"],
        &["runtimes"],
        &["runtimes", "--json"],
        &["status"],
        &["status", "--json"],
        &["verify"],
        &["verify", "--json"],
        &["diff"],
        &["completions", "bash"],
        &["man"],
        &["uninstall", "--dry-run", "--json"],
        &["recover", "--json"],
    ];
    let helper: &[&[&str]] = &[
        &["query", "update-check"],
        &["query", "agent-skills", "msd-executor"],
        &["query", "context-predicates", "--class", "RULE"],
        &["query", "init.progress"],
    ];
    let cases = install.iter().map(|a| (false, *a)).chain(helper.iter().map(|a| (true, *a)));
    for (is_helper, args) in cases {
        let cmd = |w: &World| {
            let mut c = w.spawnable(if is_helper { "msd_run" } else { "msd-install" });
            c.env("MSD_CORE_DIR", &core).args(args);
            c
        };
        let with_reader = cmd(&w).output().unwrap();
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let closed = cmd(&w).stdout(writer).stderr(std::process::Stdio::piped()).output().unwrap();
        let stderr = String::from_utf8_lossy(&closed.stderr);
        assert_eq!(closed.status.code(), with_reader.status.code(), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked") && !stderr.contains("Broken pipe"), "{args:?}: {stderr}");
    }
}
