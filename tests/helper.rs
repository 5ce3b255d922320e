//! The installer puts `msd_run` into every install at `<home>/msd-core/bin/msd_run`: executable,
//! recorded in the file manifest, and called by the content through its rewritten installed path
//! in every runtime and scope. And what the helper answers survives the harness: a long answer
//! spills to a private `@file:` file (ADR-1671's pointer-passing channel).

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::{
    Install, NO_NATIVE_AGENTS, Ran, World, assert_no_native_agents, copy_tree, fixture, json, sha256,
};

fn built_msd_run() -> Vec<u8> {
    std::fs::read(assert_cmd::cargo::cargo_bin("msd_run")).unwrap()
}

#[test]
fn helper_is_installed_executable_and_recorded() {
    let w = World::new();
    Install::in_world(&w).content(fixture("seams")).run().success();
    let core = w.home.join(".claude/msd-core");
    let bytes = std::fs::read(core.join("bin/msd_run")).unwrap();
    assert_eq!(bytes, built_msd_run(), "the msd_run built beside this msd-install");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(core.join("bin/msd_run")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
    }
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(core.join("msd-file-manifest.json")).unwrap()).unwrap();
    let entry = manifest["files"].as_array().unwrap().iter().find(|e| e["path"] == "msd-core/bin/msd_run").unwrap();
    assert_eq!(entry["mode"], "executable");
    assert_eq!(entry["sha256"], sha256(&bytes));
    assert_eq!(entry["bytes"], bytes.len() as u64);
    assert!(manifest["files"].as_array().unwrap().iter().any(|e| e["path"] == "msd-core/resolvers.json"));
    // A second run keeps it.
    let ran = Install::in_world(&w).arg("--content").arg(fixture("seams")).json().run();
    assert_eq!(ran.json()["runtimes"][0]["summary"]["added"], 0);
}

#[test]
fn helper_missing_binary_is_a_clear_error() {
    let w = World::new();
    let missing = w.tmp.path().join("no-msd_run");
    let w = w.env("MSD_RUN_BIN", &missing);
    Install::in_world(&w)
        .arg("--content")
        .arg(fixture("seams"))
        .run()
        .code(4)
        .stderr_has(&format!("cannot read the msd_run binary to install at {}: no such file", missing.display()))
        .stderr_has("MSD_RUN_BIN");
    assert!(!w.home.join(".claude").exists(), "nothing is written");
    // A directory is named as what it is.
    let dir = w.tmp.path().to_path_buf();
    let w = w.env("MSD_RUN_BIN", &dir);
    Install::in_world(&w).arg("--content").arg(fixture("seams")).run().code(4).stderr_has("is not a regular file");
    // The override installs whatever file it names.
    let other = w.tmp.path().join("msd_run-copy");
    std::fs::write(&other, b"#!/bin/sh\necho stand-in\n").unwrap();
    let w = World::new().env("MSD_RUN_BIN", &other);
    Install::in_world(&w).content(fixture("seams")).run().success();
    assert_eq!(std::fs::read(w.home.join(".claude/msd-core/bin/msd_run")).unwrap(), b"#!/bin/sh\necho stand-in\n");
}

/// A full run hashes the helper on a second thread while the content loads (issue 37): what
/// the run reports is still what it reported before, a content error before a missing helper,
/// for every runtime at once too, and nothing is written.
#[test]
fn helper_missing_is_reported_after_a_content_error() {
    let w = World::new();
    let content = w.tmp.path().join("content");
    copy_tree(&fixture("seams"), &content);
    std::fs::write(content.join("stray.txt"), "not content\n").unwrap();
    let missing = w.tmp.path().join("no-msd_run");
    let w = w.env("MSD_RUN_BIN", &missing);
    let home_before = listing(&w.home);
    for all in [false, true] {
        let install = Install::in_world(&w).content(&content);
        let install = if all { install.arg("--all") } else { install };
        let ran = install.run().failure().stderr_has("unexpected file in the content tree").stderr_has("stray.txt");
        assert!(!ran.stderr().contains("msd_run"), "the content's error, not the helper's: {}", ran.stderr());
    }
    // The content fixed, the missing helper is the error, as before.
    std::fs::remove_file(content.join("stray.txt")).unwrap();
    Install::in_world(&w)
        .content(&content)
        .arg("--all")
        .run()
        .code(4)
        .stderr_has(&format!("cannot read the msd_run binary to install at {}: no such file", missing.display()));
    assert_eq!(listing(&w.home), home_before, "nothing is written");
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// The installed path the content's init call was rewritten to, in `workflow`.
fn rewritten_helper(workflow: &Path) -> String {
    let text = std::fs::read_to_string(workflow).unwrap();
    let line = text.lines().find(|l| l.contains(" query init.plan-phase")).expect("the init call");
    line.split(" query ").next().unwrap().trim().to_string()
}

#[test]
fn helper_is_called_by_its_installed_path_in_other_runtimes_and_scopes() {
    let w = World::new();
    std::fs::create_dir_all(w.project.join(".planning")).unwrap();
    std::fs::write(w.project.join(".planning/ROADMAP.md"), "### Phase 1: Setup\n").unwrap();
    // opencode, global: an absolute path under its XDG home.
    Install::in_world(&w).runtime("opencode").content(fixture("seams")).run().success();
    let core = w.home.join(".config/opencode/msd-core");
    let helper = rewritten_helper(&core.join("workflows/plan-phase.md"));
    assert_eq!(Path::new(&helper), core.join("bin/msd_run"));
    let out = std::process::Command::new(&helper)
        .args(["query", "init.plan-phase", "1", "--research"])
        .current_dir(&w.project)
        .env_remove("MSD_CORE_DIR")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(json(&out)["section_manifest"]["included"], serde_json::json!(["plan-research"]));
    // claude, local: the project's absolute path (Claude starts Bash in the launch directory,
    // which may be a subdirectory), so it works from anywhere in the project.
    Install::in_world(&w).runtime("claude").local().content(fixture("seams")).run().success();
    let helper = rewritten_helper(&w.project.join(".claude/msd-core/workflows/plan-phase.md"));
    assert_eq!(Path::new(&helper), w.project.join(".claude/msd-core/bin/msd_run"));
    std::fs::create_dir_all(w.project.join("src")).unwrap();
    let out = std::process::Command::new(&helper)
        .args(["query", "init.plan-phase", "1"])
        .current_dir(w.project.join("src"))
        .env_remove("MSD_CORE_DIR")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(json(&out)["phase"]["name"], "Setup");
    // cline, local: the project root is the home and the core dir is .cline/msd-core; the
    // steps paths init returns are the ones that exist there.
    Install::in_world(&w).runtime("cline").local().content(fixture("seams")).run().success();
    let helper = rewritten_helper(&w.project.join(".cline/msd-core/workflows/plan-phase.md"));
    assert_eq!(helper, "./.cline/msd-core/bin/msd_run");
    let out = std::process::Command::new(w.project.join(&helper))
        .args(["query", "init.plan-phase", "1", "--research"])
        .current_dir(&w.project)
        .env_remove("MSD_CORE_DIR")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let read = json(&out)["section_manifest"]["read"].clone();
    assert_eq!(read, serde_json::json!(["./.cline/msd-core/workflows/plan-phase/steps/plan-research.md"]));
    assert!(w.project.join(read[0].as_str().unwrap()).is_file());
}

/// The shipped content installed for claude, with a project; msd_run pointed at its core.
fn shipped() -> (World, PathBuf) {
    let w = World::new();
    Install::in_world(&w).arg("-q").run().success();
    let core = w.home.join(".claude/msd-core");
    std::fs::create_dir_all(w.project.join(".planning")).unwrap();
    std::fs::write(w.project.join(".planning/ROADMAP.md"), "### Phase 1: Setup\n").unwrap();
    let w = w.env("MSD_CORE_DIR", &core);
    (w, core)
}

/// Every answering command, one per query and subcommand that prints.
const ANSWERS: &[&[&str]] = &[
    &["query", "agent-skills", "msd-executor"],
    &["query", "agent-skills", "msd-executor", "--json"],
    &["query", "context-predicates", "--class", "RULE"],
    &["query", "init.plan-phase", "1", "--research"],
    &["query", "init.progress"],
    &["config-get", "mode", "--default", "interactive"],
];

fn spawn(w: &World, args: &[&str], spill: Option<&str>) -> Output {
    let mut cmd = Install::in_world(w).helper();
    if let Some(n) = spill {
        cmd = cmd.env("MSD_RUN_SPILL_BYTES", n);
    }
    cmd.args(args).run().success().out
}

/// The spill file an `@file:` answer names, checked: one line, absolute, private, in this
/// world's per-user spill directory, named by the sha256 of its bytes.
fn spilled(w: &World, out: &Output) -> PathBuf {
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    let path = text.strip_prefix("@file:").and_then(|p| p.strip_suffix('\n')).unwrap_or_else(|| panic!("{text}"));
    assert!(!path.contains('\n'), "exactly one line: {text:?}");
    let path = PathBuf::from(path);
    assert!(path.is_absolute(), "{}", path.display());
    let dir = path.parent().unwrap();
    assert_eq!(dir.parent().unwrap(), w.tmp_dir(), "under TMPDIR");
    assert!(dir.file_name().unwrap().to_str().unwrap().starts_with("msd_run-"), "{}", dir.display());
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(path.file_name().unwrap().to_str().unwrap(), format!("{}.txt", sha256(&bytes)));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::metadata(dir).unwrap().permissions().mode() & 0o777, 0o700);
    }
    path
}

#[test]
fn helper_spill_at_zero_every_answer_is_a_file_of_the_same_bytes() {
    let (w, _) = shipped();
    for args in ANSWERS {
        let plain = spawn(&w, args, None);
        assert!(!plain.stdout.starts_with(b"@file:"), "{args:?} is short enough to print");
        let out = spawn(&w, args, Some("0"));
        assert_eq!(std::fs::read(spilled(&w, &out)).unwrap(), plain.stdout, "{args:?}");
    }
    // A threshold at the answer's length prints it; one byte less spills it.
    let args = ANSWERS[2];
    let len = spawn(&w, args, None).stdout.len();
    assert!(!spawn(&w, args, Some(&len.to_string())).stdout.starts_with(b"@file:"));
    spilled(&w, &spawn(&w, args, Some(&(len - 1).to_string())));
    // A threshold that is not a number is a usage error, and nothing is printed.
    Install::in_world(&w)
        .helper()
        .env("MSD_RUN_SPILL_BYTES", "50k")
        .args(args)
        .run()
        .code(2)
        .stdout_empty()
        .stderr_has("MSD_RUN_SPILL_BYTES");
}

#[test]
fn helper_spill_a_52_kb_answer_spills_by_default() {
    // A runtime without agent files: its payload carries the planner's whole body (52 KB).
    let w = World::new();
    let core = install_core(&w, NO_NATIVE_AGENTS);
    assert_no_native_agents(&core);
    std::fs::create_dir_all(w.project.join(".planning")).unwrap();
    let w = w.env("MSD_CORE_DIR", &core);
    let args = ["query", "agent-skills", "msd-planner"];
    let out = spawn(&w, &args, None);
    let path = spilled(&w, &out);
    let bytes = std::fs::read(&path).unwrap();
    assert!(bytes.len() > 50 * 1024, "{} bytes", bytes.len());
    // The same answer again reuses the one file.
    assert_eq!(spawn(&w, &args, None).stdout, out.stdout);
    assert_eq!(std::fs::read_dir(path.parent().unwrap()).unwrap().count(), 1);
    // Raised above its length, it prints whole.
    assert_eq!(spawn(&w, &args, Some("1000000")).stdout, bytes);
}

#[test]
fn helper_spill_concurrent_calls_share_one_file() {
    let (w, _) = shipped();
    let args = ["query", "context-predicates", "--class", "RULE"];
    let expected = spawn(&w, &args, None).stdout;
    let children: Vec<_> = (0..8)
        .map(|_| {
            let mut cmd = w.spawnable("msd_run");
            cmd.env("MSD_RUN_SPILL_BYTES", "0").args(args).stdout(std::process::Stdio::piped());
            cmd.spawn().unwrap()
        })
        .collect();
    let outs: Vec<Output> = children.into_iter().map(|c| c.wait_with_output().unwrap()).collect();
    for out in &outs {
        assert!(out.status.success());
        assert_eq!(out.stdout, outs[0].stdout, "one name for one answer");
    }
    let path = spilled(&w, &outs[0]);
    assert_eq!(std::fs::read(&path).unwrap(), expected);
    let names: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 1, "no second copy and no temp file left: {names:?}");
}

#[test]
fn helper_spill_files_older_than_a_day_are_swept() {
    let (w, _) = shipped();
    let args = ["query", "init.progress"];
    let path = spilled(&w, &spawn(&w, &args, Some("0")));
    let dir = path.parent().unwrap();
    let stale = dir.join(format!("{}.txt", "a".repeat(64)));
    let fresh = dir.join(format!("{}.txt", "b".repeat(64)));
    let foreign = dir.join("notes.txt");
    for p in [&stale, &fresh, &foreign] {
        std::fs::write(p, "x").unwrap();
    }
    let two_days = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 24 * 3600);
    for p in [&stale, &foreign] {
        std::fs::File::options().write(true).open(p).unwrap().set_modified(two_days).unwrap();
    }
    // The next call, even one that prints, sweeps; a reused answer's file gets a fresh mtime.
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(two_days).unwrap();
    spawn(&w, &args, Some("0"));
    assert!(!stale.exists(), "a day-old spill file is removed");
    assert!(fresh.exists() && foreign.exists(), "young files and names msd_run never makes stay");
    assert!(path.exists());
    assert!(std::fs::metadata(&path).unwrap().modified().unwrap() > two_days);
}

#[test]
fn helper_spill_that_cannot_be_written_exits_nine() {
    let (w, core) = shipped();
    let args = ["query", "init.progress"];
    // A read-only temporary directory. Root writes anyway, so then the helper runs as nobody.
    let ro = w.tmp.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let mut cmd = w.spawnable("msd_run");
    cmd.env("TMPDIR", &ro).env("MSD_RUN_SPILL_BYTES", "0").args(args);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        use std::os::unix::process::CommandExt;
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
        if std::fs::write(ro.join("probe"), "").is_ok() {
            std::fs::remove_file(ro.join("probe")).unwrap();
            // nobody must reach the binary, the core and the project, and only TMPDIR is closed.
            for d in [w.tmp.path(), &w.home, &w.home.join(".claude"), &core, &w.project] {
                let m = std::fs::metadata(d).unwrap().permissions().mode();
                std::fs::set_permissions(d, std::fs::Permissions::from_mode(m | 0o755)).unwrap();
            }
            cmd.uid(65534).gid(65534);
        }
    }
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(9), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty(), "no cut answer on stdout");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot spill the answer to") && err.contains(&ro.display().to_string()), "{err}");
    assert!(err.contains("hint:") && err.contains("MSD_RUN_SPILL_BYTES"), "{err}");

    // A spill directory someone else could enter is refused, never written into.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let path = spilled(&w, &spawn(&w, &args, Some("0")));
        let dir = path.parent().unwrap();
        std::fs::remove_file(&path).unwrap();
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        Install::in_world(&w)
            .helper()
            .env("MSD_RUN_SPILL_BYTES", "0")
            .args(args)
            .run()
            .code(9)
            .stderr_has("lets other users in");
        assert!(!path.exists());
    }
}

#[cfg(unix)]
#[test]
fn helper_is_one_file_per_filesystem_and_one_uninstall_leaves_the_others() {
    use std::os::unix::fs::MetadataExt;
    let w = World::new();
    let runtimes = ["claude", "opencode", "codex"];
    let mut args = vec!["--content".to_string(), fixture("seams").display().to_string()];
    for r in runtimes {
        args.extend(["--runtime".into(), r.into()]);
    }
    Install::in_world(&w).args(&args).run().success();
    let helpers = [
        w.home.join(".claude/msd-core/bin/msd_run"),
        w.home.join(".config/opencode/msd-core/bin/msd_run"),
        w.home.join(".codex/msd-core/bin/msd_run"),
    ];
    let ids: Vec<(u64, u64, u64)> = helpers
        .iter()
        .map(|h| {
            let m = std::fs::metadata(h).unwrap();
            (m.dev(), m.ino(), m.nlink())
        })
        .collect();
    assert!(ids.iter().all(|i| (i.0, i.1) == (ids[0].0, ids[0].1)), "one file, linked: {ids:?}");
    assert_eq!(ids[0].2, 3, "three names for one inode");
    assert_eq!(std::fs::read(&helpers[0]).unwrap(), built_msd_run());
    // Uninstalling one runtime removes its name only; the others still run and verify clean.
    Install::in_world(&w).uninstall().runtime("claude").run().success();
    assert!(!helpers[0].exists());
    assert_eq!(std::fs::metadata(&helpers[1]).unwrap().nlink(), 2);
    for (h, r) in helpers[1..].iter().zip(&runtimes[1..]) {
        let out = std::process::Command::new(h).arg("--version").output().unwrap();
        assert!(out.status.success());
        Install::in_world(&w).verify().runtime(r).run().success();
    }
    // Reinstalling it (a new process) puts a whole file back and leaves the others untouched.
    Install::in_world(&w).runtime("claude").content(fixture("seams")).run().success();
    assert_eq!(std::fs::read(&helpers[0]).unwrap(), built_msd_run());
    Install::in_world(&w).verify().runtime("opencode").run().success();
}

/// A global install of `id` and its core dir.
fn install_core(w: &World, id: &str) -> std::path::PathBuf {
    let ran = Install::in_world(w).runtime(id).json().run().success();
    std::path::PathBuf::from(ran.json()["runtimes"][0]["home"].as_str().unwrap()).join("msd-core")
}

fn helper<'w>(w: &'w World, core: &Path, dir: &Path, args: &[&str]) -> Ran<'w> {
    Install::in_world(w).helper().env("MSD_CORE_DIR", core).cwd(dir).args(args).run()
}

#[test]
fn helper_hints_name_commands_in_each_runtimes_own_syntax() {
    // Outside a project, config-get and config-set point at new-project as the user types it.
    for (id, command) in [("claude", "/msd-new-project"), ("gemini", "/msd:new-project"), ("codex", "$msd-new-project")]
    {
        let w = World::new();
        let core = install_core(&w, id);
        // Outside a project config-get is a project error.
        helper(&w, &core, &w.project, &["config-get", "mode"])
            .code(4)
            .stderr_has(&format!("({command} creates one)"))
            .stderr_lacks("{cmd:");
        helper(&w, &core, &w.project, &["config-set", "mode", "yolo"]).code(4).stderr_has(command);
        // With --default there is nothing to fail: the fallback is printed.
        helper(&w, &core, &w.project, &["config-get", "mode", "--default", "x"]).stdout_is("x\n");
    }
}

#[test]
fn helper_finds_the_project_root_from_a_subdirectory() {
    let w = World::new();
    let core = install_core(&w, "claude");
    std::fs::create_dir_all(w.project.join(".planning")).unwrap();
    std::fs::write(w.project.join(".planning/ROADMAP.md"), "# Roadmap\n\n### Phase 1: Start\n**Goal:** a\n").unwrap();
    let sub = w.project.join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    let v = helper(&w, &core, &sub, &["query", "init.plan-phase", "1"]).code(0).json();
    assert_eq!(v["exists"]["planning"], true, "{v}");
    assert_eq!(v["exists"]["roadmap"], true);
    assert_eq!(v["phase"]["name"], "Start");
    assert_eq!(
        std::path::Path::new(v["root"].as_str().unwrap()).canonicalize().unwrap(),
        w.project.canonicalize().unwrap()
    );
    // config-set from the subdirectory writes the root's config, and config-get reads it back.
    helper(&w, &core, &sub, &["config-set", "mode", "yolo"]).code(0);
    assert!(std::fs::read_to_string(w.project.join(".planning/config.json")).unwrap().contains("yolo"));
    assert!(!sub.join(".planning").exists());
    helper(&w, &core, &sub, &["config-get", "mode"]).stdout_is("yolo\n");
}

#[test]
fn helper_init_rejects_the_invalid_config_config_get_rejects() {
    let w = World::new();
    let core = install_core(&w, "gemini");
    std::fs::create_dir_all(w.project.join(".planning")).unwrap();
    std::fs::write(w.project.join(".planning/config.json"), r#"{"workflow": {"research": "yes"}}"#).unwrap();
    helper(&w, &core, &w.project, &["config-get", "workflow.research", "--default", "true"]).code(4);
    // Init passes no invalid config through; the hint is in Gemini's syntax.
    helper(&w, &core, &w.project, &["query", "init.plan-phase", "1"])
        .code(4)
        .stderr_has("workflow.research")
        .stderr_has("/msd:health");
}

/// `/msd:update` asks the helper, which compares versions as numbers: the installed one (its
/// own) against what `msd-install --version` printed and the installer's update cache.
#[test]
fn helper_update_check_compares_the_installed_version_numerically() {
    let (w, _core) = shipped();
    let own = env!("CARGO_PKG_VERSION");
    let check = |available: &str| -> serde_json::Value {
        let out = spawn(&w, &["query", "update-check", "--available", available], None);
        serde_json::from_slice(&out.stdout).unwrap()
    };
    // What the installer on the PATH prints, taken as is.
    let line = Install::in_world(&w).arg("--version").run().stdout();
    let v = check(line.trim());
    assert_eq!((v["installed"].as_str(), v["status"].as_str()), (Some(own), Some("current")), "{v}");
    let (maj, _) = own.split_once('.').unwrap();
    let next_major = format!("{}.0.0", maj.parse::<u64>().unwrap() + 1);
    assert_eq!(check(&format!("msd-install {next_major} (abc1234 2027-01-01)"))["status"], "update_available");
    // An older installer on the PATH (and no newer one in the cache) would downgrade.
    let v = Install::in_world(&w)
        .helper()
        .env("XDG_CACHE_HOME", w.tmp_dir())
        .args(["query", "update-check", "--available", "0.0.1"])
        .run()
        .json();
    assert_eq!(v["status"], "installed_is_newer", "{v}");
    // Without --available, the installer's note in the update cache (written by the install).
    let out = spawn(&w, &["query", "update-check"], None);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["available_from"], "update_cache", "the install wrote the cache: {v}");
    assert_eq!(v["available"].as_str(), Some(own));
    // A text without a version is a usage error.
    Install::in_world(&w).helper().args(["query", "update-check", "--available", "unknown"]).run().code(2);
}

/// Every JSON answer of the helper uses snake_case keys, like msd-install's `--json`
/// (prompt-budget's metadata file is the one documented exception, CONTENT-CONVENTIONS 3).
#[test]
fn helper_json_answers_use_snake_case_keys() {
    fn keys(v: &serde_json::Value, out: &mut Vec<String>, skip: &[&str]) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    out.push(k.clone());
                    // User data (the project's config, the parsed flags) keeps the user's keys.
                    if !skip.contains(&k.as_str()) {
                        keys(x, out, skip);
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| keys(x, out, skip)),
            _ => {}
        }
    }
    let (w, _core) = shipped();
    for args in [
        &["query", "agent-skills", "msd-executor", "--json"][..],
        &["query", "context-predicates", "--class", "RULE"],
        &["query", "init.plan-phase", "1", "--research"],
        &["query", "update-check", "--available", "9.9.9"],
    ] {
        let out = spawn(&w, args, None);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut all = Vec::new();
        keys(&v, &mut all, &["config", "flags", "args"]);
        let bad: Vec<&String> = all
            .iter()
            .filter(|k| !k.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
            .collect();
        assert!(bad.is_empty(), "{args:?}: keys not in snake_case: {bad:?}");
    }
}

/// The helper is copied from its file, never held in memory: the install compares the installed
/// one by its hash, backs up a helper the user replaced (its own bytes) and puts the built one
/// back, keeps one left as it was, and takes the helper `MSD_RUN_BIN` names.
#[test]
fn helper_copied_from_its_file_is_compared_backed_up_and_restored_by_hash() {
    let w = World::new();
    let seams = fixture("seams");
    Install::in_world(&w).runtime("claude").content(&seams).run().success();
    let helper = w.home.join(".claude/msd-core/bin/msd_run");
    // Unchanged: kept, not written again.
    let doc = Install::in_world(&w)
        .runtime("claude")
        .content(&seams)
        .json()
        .env("MSD_INSTALL_FAST", "0")
        .run()
        .success()
        .json();
    let ops = doc["runtimes"][0]["ops"].as_array().unwrap();
    let op = ops.iter().find(|o| o["path"] == "msd-core/bin/msd_run").expect("an op for the helper");
    assert_eq!(op["action"], "keep", "{op}");
    // Replaced by the user with a file of the same length: found by its hash, backed up, restored.
    let built = built_msd_run();
    let mut theirs = built.clone();
    let last = theirs.len() - 1;
    theirs[last] ^= 0xff;
    std::fs::remove_file(&helper).unwrap();
    std::fs::write(&helper, &theirs).unwrap();
    let doc = Install::in_world(&w).runtime("claude").content(&seams).json().run().success().json();
    let written = &doc["runtimes"][0]["written"];
    assert_eq!(written["backed_up"], serde_json::json!(["msd-core/bin/msd_run"]), "{written}");
    let backup = std::path::PathBuf::from(written["backup_dir"].as_str().unwrap());
    assert_eq!(std::fs::read(backup.join("msd-core/bin/msd_run")).unwrap(), theirs);
    assert_eq!(std::fs::read(&helper).unwrap(), built);
    // The helper to install can be named: its bytes are what lands.
    let other = w.tmp.path().join("other_msd_run");
    std::fs::write(&other, b"#!/bin/sh\necho other\n").unwrap();
    Install::in_world(&w).runtime("claude").content(&seams).env("MSD_RUN_BIN", &other).run().success();
    assert_eq!(std::fs::read(&helper).unwrap(), b"#!/bin/sh\necho other\n");
    Install::in_world(&w).verify().runtime("claude").env("MSD_RUN_BIN", &other).run().success();
}

/// `msd_run ARGS` in `w`, killed after 10 s (a read of a FIFO would wait forever): what it
/// printed, and how long it took.
fn bounded(w: &World, args: &[&str]) -> (Output, std::time::Duration) {
    let mut cmd = assert_cmd::Command::from_std(w.spawnable("msd_run"));
    cmd.args(args).timeout(std::time::Duration::from_secs(10));
    let started = std::time::Instant::now();
    let out = cmd.output().unwrap();
    (out, started.elapsed())
}

fn mkfifo(p: &Path) {
    assert!(std::process::Command::new("mkfifo").arg(p).status().unwrap().success(), "mkfifo {}", p.display());
}

fn is_link(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
}

/// Issue 31, section 3.1: a `.planning/` path that is a symlink out of the project (git stores
/// symlinks) is neither read nor written: config-set used to rewrite the linked file, and
/// config-get and init printed it, tokens included. Exit 4, the link and its target named. A
/// link that stays inside the project is followed as before.
#[test]
fn helper_never_follows_a_project_symlink_out_of_the_project() {
    use std::os::unix::fs::symlink;
    let (w, _core) = shipped();
    let secret = w.home.join(".docker/config.json");
    std::fs::create_dir_all(secret.parent().unwrap()).unwrap();
    let secret_bytes: &[u8] = br#"{"mode": "yolo", "auths": {"registry": {"auth": "SECRET-TOKEN"}}}"#;
    std::fs::write(&secret, secret_bytes).unwrap();
    let config = w.project.join(".planning/config.json");
    symlink(&secret, &config).unwrap();
    let named = format!(".planning/config.json is a symlink to {}, outside the project", secret.display());
    let run = |args: &[&str]| Install::in_world(&w).helper().args(args).run();
    run(&["config-set", "mode", "interactive"]).code(4).stderr_has(&named).stdout_empty();
    assert_eq!(std::fs::read(&secret).unwrap(), secret_bytes, "the linked file is untouched");
    assert!(is_link(&config), "the link stays");
    run(&["config-get", "mode"]).code(4).stderr_has(&named).stdout_empty();
    run(&["config-get", "mode", "--default", "interactive"]).code(4).stdout_empty();
    run(&["query", "init.plan-phase", "1"]).code(4).stderr_has(&named).stdout_lacks("SECRET-TOKEN");

    // A plan file and a prompt-budget input linked out: refused too, and nothing is written.
    let plan_dir = w.project.join(".planning/phases/01-setup");
    std::fs::create_dir_all(&plan_dir).unwrap();
    symlink(&secret, plan_dir.join("01-01-PLAN.md")).unwrap();
    run(&["task", "resolve-content", "--plan", ".planning/phases/01-setup/01-01-PLAN.md", "--task-id", "01-01-T1"])
        .code(4)
        .stderr_has("01-01-PLAN.md is a symlink to");
    let review = w.tmp.path().join("review");
    std::fs::create_dir_all(&review).unwrap();
    std::fs::write(review.join("instructions.md"), "Review.\n").unwrap();
    let out = review.join("prompt.md");
    let budget = |roadmap: &str, prompt: &str| {
        let instructions = review.join("instructions.md").display().to_string();
        let meta = review.join("meta.json").display().to_string();
        run(&[
            "query",
            "prompt-budget",
            "--budget",
            "4000",
            "--instructions-file",
            &instructions,
            "--roadmap-file",
            roadmap,
            "--output-prompt",
            prompt,
            "--output-metadata",
            &meta,
        ])
    };
    std::fs::remove_file(w.project.join(".planning/ROADMAP.md")).unwrap();
    symlink(&secret, w.project.join(".planning/ROADMAP.md")).unwrap();
    budget(".planning/ROADMAP.md", &out.display().to_string())
        .code(4)
        .stderr_has(".planning/ROADMAP.md is a symlink to");
    assert!(!out.exists() && !review.join("meta.json").exists(), "nothing written");
    // An output into a directory linked out of the project: refused before anything is written.
    std::fs::remove_file(w.project.join(".planning/ROADMAP.md")).unwrap();
    std::fs::write(w.project.join(".planning/ROADMAP.md"), "### Phase 1: Setup\n").unwrap();
    let outside = w.tmp.path().join("outside-out");
    std::fs::create_dir_all(&outside).unwrap();
    symlink(&outside, w.project.join(".planning/out")).unwrap();
    budget(".planning/ROADMAP.md", ".planning/out/prompt.md").code(4).stderr_has(".planning/out is a symlink to");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0, "nothing written through the link");

    // `.planning` itself a link out of a project.
    let elsewhere = w.tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("ROADMAP.md"), "### Phase 1: Not-This-Project\n").unwrap();
    let p2 = w.tmp.path().join("p2");
    std::fs::create_dir_all(&p2).unwrap();
    symlink(&elsewhere, p2.join(".planning")).unwrap();
    let run2 = |args: &[&str]| Install::in_world(&w).helper().cwd(&p2).args(args).run();
    let planning = format!(".planning is a symlink to {}", elsewhere.display());
    run2(&["query", "init.plan-phase", "1"]).code(4).stderr_has(&planning).stdout_lacks("Not-This-Project");
    run2(&["config-set", "mode", "yolo"]).code(4).stderr_has(&planning);
    assert!(!elsewhere.join("config.json").exists(), "nothing written through the link");

    // A link that stays inside the project is followed, and stays a link.
    std::fs::remove_file(&config).unwrap();
    std::fs::create_dir_all(w.project.join("shared")).unwrap();
    std::fs::write(w.project.join("shared/config.json"), "{\"mode\": \"yolo\"}\n").unwrap();
    symlink("../shared/config.json", &config).unwrap();
    run(&["config-set", "mode", "interactive"]).code(0);
    assert!(is_link(&config));
    assert!(std::fs::read_to_string(w.project.join("shared/config.json")).unwrap().contains("interactive"));
    run(&["config-get", "mode"]).code(0).stdout_is("interactive\n");
}

/// Issue 31, section 3.2: a FIFO (or a device) under `.planning/` hung config-get, config-set
/// and init forever. It is refused at once (exit 4, what it is named), never opened for a read.
#[test]
fn helper_a_fifo_under_planning_is_refused_at_once() {
    let (w, _core) = shipped();
    let config = w.project.join(".planning/config.json");
    mkfifo(&config);
    let calls: &[&[&str]] = &[
        &["config-get", "mode", "--default", "x"],
        &["config-set", "mode", "yolo"],
        &["query", "init.plan-phase", "1"],
    ];
    for args in calls {
        let (out, took) = bounded(&w, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{args:?} (killed after {took:?} when None): {stderr}");
        assert!(stderr.contains(".planning/config.json: is a FIFO, not a regular file"), "{args:?}: {stderr}");
        assert!(took < std::time::Duration::from_secs(5), "{args:?} took {took:?}");
    }
    // A ROADMAP.md and a plan that are FIFOs too.
    std::fs::remove_file(&config).unwrap();
    let roadmap = w.project.join(".planning/ROADMAP.md");
    std::fs::remove_file(&roadmap).unwrap();
    mkfifo(&roadmap);
    let (out, took) = bounded(&w, &["query", "init.plan-phase", "1"]);
    assert_eq!(out.status.code(), Some(4), "killed after {took:?} when None");
    assert!(String::from_utf8_lossy(&out.stderr).contains("ROADMAP.md: is a FIFO"));
    let plan_dir = w.project.join(".planning/phases/01-setup");
    std::fs::create_dir_all(&plan_dir).unwrap();
    mkfifo(&plan_dir.join("01-01-PLAN.md"));
    let plan = ".planning/phases/01-setup/01-01-PLAN.md";
    let (out, took) = bounded(&w, &["task", "resolve-content", "--plan", plan, "--task-id", "01-01-T1"]);
    assert_eq!(out.status.code(), Some(4), "killed after {took:?} when None");
    assert!(String::from_utf8_lossy(&out.stderr).contains("01-01-PLAN.md: is a FIFO"));
}

/// `config-set` and prompt-budget's outputs write a file of the user's project the way install
/// writes a user's file (`fsx::write_in_place`): a `0600` config stays `0600` (and another user's
/// stays theirs when root runs the helper), a config that is a symlink inside the project stays a
/// link and the file it points to keeps its mode; an output file the workflow writes again keeps
/// its mode and its link. Before, `config-set` wrote `0644` root-owned files (through the link) and
/// prompt-budget replaced a linked output with a regular file.
#[cfg(unix)]
#[test]
fn helper_writes_keep_the_users_mode_owner_and_link() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
    let is_root = std::fs::metadata("/proc/self").map(|m| m.uid() == 0).unwrap_or(false);
    let meta = |p: &Path| {
        let m = std::fs::metadata(p).unwrap();
        (m.permissions().mode() & 0o7777, m.uid(), m.gid())
    };
    let (w, _core) = shipped();
    let run = |args: &[&str]| Install::in_world(&w).helper().args(args).run();
    let config = w.project.join(".planning/config.json");
    for linked in [false, true] {
        let _ = std::fs::remove_file(&config);
        let real = if linked { w.project.join("shared/config.json") } else { config.clone() };
        std::fs::create_dir_all(real.parent().unwrap()).unwrap();
        std::fs::write(&real, "{\"mode\": \"yolo\"}\n").unwrap();
        if linked {
            symlink("../shared/config.json", &config).unwrap();
        }
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
        let want = if is_root {
            std::os::unix::fs::chown(&real, Some(4242), Some(4343)).unwrap();
            (0o600, 4242, 4343)
        } else {
            meta(&real)
        };
        run(&["config-set", "mode", "interactive"]).code(0);
        assert!(std::fs::read_to_string(&real).unwrap().contains("interactive"), "linked: {linked}");
        assert_eq!(meta(&real), want, "config-set (linked: {linked}): mode, uid, gid");
        assert_eq!(is_link(&config), linked, "a link stays a link, a file a file");
        run(&["config-get", "mode"]).code(0).stdout_is("interactive\n");
    }
    // A new config is the user's project file as msd makes one: 0644.
    std::fs::remove_file(&config).unwrap();
    run(&["config-set", "mode", "yolo"]).code(0);
    assert_eq!(meta(&config).0, 0o644);

    // prompt-budget's outputs, written again over a private prompt and a linked metadata file.
    let review = w.project.join(".planning/review");
    std::fs::create_dir_all(review.join("kept")).unwrap();
    std::fs::write(review.join("instructions.md"), "Review.\n").unwrap();
    std::fs::write(review.join("prompt.md"), "old\n").unwrap();
    std::fs::set_permissions(review.join("prompt.md"), std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(review.join("kept/meta.json"), "{}").unwrap();
    std::fs::set_permissions(review.join("kept/meta.json"), std::fs::Permissions::from_mode(0o640)).unwrap();
    symlink("kept/meta.json", review.join("meta.json")).unwrap();
    run(&[
        "query",
        "prompt-budget",
        "--budget",
        "4000",
        "--instructions-file",
        ".planning/review/instructions.md",
        "--roadmap-file",
        ".planning/ROADMAP.md",
        "--output-prompt",
        ".planning/review/prompt.md",
        "--output-metadata",
        ".planning/review/meta.json",
    ])
    .code(0);
    assert!(std::fs::read_to_string(review.join("prompt.md")).unwrap().contains("Review."));
    assert_eq!(meta(&review.join("prompt.md")).0, 0o600, "the prompt keeps its mode");
    assert!(is_link(&review.join("meta.json")), "the metadata link stays a link");
    assert!(std::fs::read_to_string(review.join("kept/meta.json")).unwrap().contains("budget"));
    assert_eq!(meta(&review.join("kept/meta.json")).0, 0o640, "the linked metadata keeps its mode");
}
