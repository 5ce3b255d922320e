//! The install pipeline end to end for Claude Code: layout, rewrites, manifest, idempotency,
//! dry run, emit, upgrades that keep the user's edits.

use crate::support::{Install, World, copy_tree, files, fixture, mtimes, sha256, tree};

fn starter() -> String {
    fixture("starter").display().to_string()
}

#[test]
fn install_claude_global_layout() {
    let ran = Install::new().runtime("claude").starter().run().success();
    let files = tree(&ran.path("~/.claude"));
    let names: Vec<&str> = files.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "agents/msd-planner.md",
            "msd-core/VERSION",
            "msd-core/agents/msd-planner.md",
            "msd-core/bin/msd_run",
            "msd-core/msd-file-manifest.json",
            "msd-core/msd-install-state.json",
            "msd-core/references/rules.md",
            "msd-core/resolvers.json",
            "msd-core/runtime.json",
            "msd-core/workflows/execute.md",
            "msd-core/workflows/plan.md",
            "msd-core/workflows/plan/steps/plan-prd.md",
            "msd-core/workflows/section-manifest.json",
            "settings.json",
            "skills/msd-execute/SKILL.md",
            "skills/msd-plan/SKILL.md",
        ]
    );
    let skill = String::from_utf8(files["skills/msd-plan/SKILL.md"].clone()).unwrap();
    assert!(skill.starts_with("---\nname: \"msd-plan\"\n"), "{skill}");
    assert!(skill.contains("run /msd-execute."), "command refs are converted: {skill}");
}

#[test]
fn install_claude_local_layout() {
    let ran = Install::new()
        .runtime("claude")
        .local()
        .starter()
        .run()
        .success()
        .no_file("~/.claude")
        .file(".claude/commands/msd-plan.md")
        .file(".claude/commands/msd-execute.md")
        .file(".claude/agents/msd-planner.md")
        .file(".claude/msd-core/workflows/plan.md");
    let cmd = ran.read(".claude/commands/msd-plan.md");
    // By the project's absolute path: Claude resolves `@./...` against the launch directory.
    let core = ran.path(".claude/msd-core");
    assert!(cmd.contains(&format!("@{}/workflows/plan.md", core.display())), "{cmd}");
    assert!(cmd.contains("name: \"msd-plan\""), "{cmd}");
}

#[test]
fn install_rewrites_every_claude_path_and_strips_markers() {
    let ran = Install::new().starter().run().success();
    let home = ran.path("~/.claude");
    for (path, bytes) in tree(&home) {
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains("~/.claude"), "{path} keeps ~/.claude");
        assert!(!text.contains("msd:section"), "{path} keeps a section marker");
        assert!(!text.contains("msd:protected"), "{path} keeps a protected marker");
    }
    let plan = std::fs::read_to_string(home.join("msd-core/workflows/plan.md")).unwrap();
    assert!(plan.contains(&format!("{}/msd-core/bin/msd_run", home.display())), "{plan}");
    // CRLF content round-trips, and ./.claude/ becomes the runtime's local dir.
    let exec = std::fs::read(home.join("msd-core/workflows/execute.md")).unwrap();
    assert_eq!(exec, b"Execute each plan in wave order.\r\nSee ./.claude/settings.json for hooks.\r\n");
}

#[test]
fn install_manifest_hashes_equal_the_files() {
    let ran = Install::new().starter().run().success();
    let home = ran.path("~/.claude");
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(home.join("msd-core/msd-file-manifest.json")).unwrap()).unwrap();
    assert_eq!(m["runtime"], "claude");
    assert_eq!(m["scope"], "global");
    let files = m["files"].as_array().unwrap();
    assert_eq!(
        files.len(),
        tree(&home).len() - 3,
        "every written file but the manifest, the state and settings.json (the user's) is listed"
    );
    for f in files {
        let bytes = std::fs::read(home.join(f["path"].as_str().unwrap())).unwrap();
        assert_eq!(f["bytes"].as_u64().unwrap(), bytes.len() as u64);
        assert_eq!(f["sha256"].as_str().unwrap(), sha256(&bytes));
    }
}

#[test]
fn install_second_run_changes_nothing() {
    let ran = Install::new().starter().run().success();
    let home = ran.path("~/.claude");
    // Every file's mtime is put a day back: a file the re-run writes gets the clock's time and
    // shows, however soon after the first run it comes (no sleep between the runs).
    let day_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(86_400);
    for rel in files(&home) {
        std::fs::File::options().write(true).open(home.join(rel)).unwrap().set_modified(day_ago).unwrap();
    }
    let before = mtimes(&home);
    assert!(before.values().all(|&t| t == day_ago));
    // The first re-run takes the full path (the changed ctimes), the second the fast path.
    let mut ran = ran;
    for _ in 0..2 {
        ran = ran.then().starter().json().run().success();
        let doc = ran.json();
        let s = &doc["runtimes"][0]["summary"];
        assert_eq!((s["added"].as_u64(), s["changed"].as_u64(), s["removed"].as_u64()), (Some(0), Some(0), Some(0)));
        assert_eq!(doc["runtimes"][0]["manifest_changed"], false);
        assert_eq!(mtimes(&home), before, "no file was touched");
    }
    ran.then().starter().run().stdout_has("up to date");
}

#[test]
fn install_dry_run_writes_nothing() {
    let ran = Install::new()
        .starter()
        .dry_run()
        .run()
        .success()
        .stdout_has("add     skills/msd-plan/SKILL.md")
        .stdout_has("nothing was written")
        .no_file("~/.claude");
    let ran = ran.then().starter().dry_run().json().run();
    let doc = ran.json();
    assert_eq!(doc["dry_run"], true);
    assert_eq!(doc["runtimes"][0]["summary"]["added"], 13);
    ran.no_file("~/.claude");
}

#[test]
fn install_honours_claude_config_dir_and_config_dir_flag() {
    let w = World::new();
    let custom = w.tmp.path().join("custom-claude");
    let w = w.env("CLAUDE_CONFIG_DIR", &custom);
    Install::in_world(&w).starter().run().success();
    assert!(custom.join("skills/msd-plan/SKILL.md").exists());
    let plan = std::fs::read_to_string(custom.join("msd-core/workflows/plan.md")).unwrap();
    assert!(plan.contains(&format!("{}/msd-core/", custom.display())));
    let flag = w.tmp.path().join("flag-dir");
    Install::in_world(&w).starter().arg("--config-dir").arg(&flag).run().success();
    assert!(flag.join("skills/msd-plan/SKILL.md").exists(), "--config-dir beats the env var");
}

#[test]
fn install_upgrade_backs_up_edits_and_removes_retired_files() {
    let w = World::new();
    let content = w.tmp.path().join("content");
    copy_tree(&fixture("starter"), &content);
    Install::in_world(&w).content(&content).run().success();
    let home = w.home.join(".claude");
    // The user edits one managed file and adds a file of their own.
    std::fs::write(home.join("msd-core/references/rules.md"), "my local rules\n").unwrap();
    std::fs::create_dir_all(home.join("skills/my-skill")).unwrap();
    std::fs::write(home.join("skills/my-skill/SKILL.md"), "mine\n").unwrap();
    // The new version drops a command and changes the edited reference.
    std::fs::remove_file(content.join("commands/msd/execute.md")).unwrap();
    std::fs::write(content.join("msd-core/references/rules.md"), "# Rules v2\n").unwrap();
    // The dropped command's argument grammar leaves the generated section manifest.
    Install::in_world(&w).args(["gen", "section-manifest", "--write"]).content(&content).run().success();
    let doc = Install::in_world(&w).content(&content).json().run().success().json();
    let written = &doc["runtimes"][0]["written"];
    assert_eq!(written["backed_up"], serde_json::json!(["msd-core/references/rules.md"]));
    let backup_dir = std::path::PathBuf::from(written["backup_dir"].as_str().unwrap());
    assert!(backup_dir.starts_with(home.join("msd-local-patches")));
    assert_eq!(std::fs::read_to_string(backup_dir.join("msd-core/references/rules.md")).unwrap(), "my local rules\n");
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(backup_dir.join("backup-meta.json")).unwrap()).unwrap();
    assert_eq!(meta["from_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(std::fs::read_to_string(home.join("msd-core/references/rules.md")).unwrap(), "# Rules v2\n");
    assert!(!home.join("skills/msd-execute").exists(), "the retired skill and its directory are gone");
    assert_eq!(
        std::fs::read_to_string(home.join("skills/my-skill/SKILL.md")).unwrap(),
        "mine\n",
        "user files are never touched"
    );
}

#[test]
fn install_bad_marker_names_file_and_line_and_writes_nothing() {
    let w = World::new();
    let content = w.tmp.path().join("content");
    copy_tree(&fixture("starter"), &content);
    std::fs::write(
        content.join("msd-core/workflows/execute.md"),
        "a\n<!-- msd:section id=\"x\" when=\"flag:--nope\" -->\nb\n<!-- /msd:section -->\n",
    )
    .unwrap();
    Install::in_world(&w)
        .content(&content)
        .run()
        .code(3)
        .stderr_has("msd-core/workflows/execute.md:2: unknown_when")
        .no_file("~/.claude");
}

#[test]
fn install_bad_frontmatter_names_file_and_line() {
    let w = World::new();
    let content = w.tmp.path().join("content");
    copy_tree(&fixture("starter"), &content);
    std::fs::write(content.join("commands/msd/execute.md"), "---\nname: msd:execute\ndescription: a: b\n---\nbody\n")
        .unwrap();
    Install::in_world(&w)
        .content(&content)
        .run()
        .code(3)
        .stderr_has("commands/msd/execute.md:3: frontmatter is not valid YAML");
}

#[test]
fn install_unknown_runtime_lists_valid_ids() {
    Install::new()
        .runtime("vscode")
        .run()
        .code(2)
        .stderr_has("unknown runtime `vscode`")
        .stderr_has("claude")
        .stderr_has("zcode")
        .stderr_has("opencode");
}

#[test]
fn install_emit_writes_the_tree_alone() {
    let w = World::new();
    let out_dir = w.tmp.path().join("emitted");
    let emit = || Install::in_world(&w).arg("emit").runtime("claude").starter().arg("--out").arg(&out_dir);
    emit().run().success();
    let files = tree(&out_dir);
    assert!(files.contains_key("skills/msd-plan/SKILL.md"));
    assert!(!files.contains_key("msd-core/msd-file-manifest.json"), "emit writes no install manifest");
    assert!(!w.home.join(".claude").exists(), "emit installs nothing");
    // A non-empty output directory is refused.
    emit().run().code(2);
}

#[test]
fn install_local_from_a_subdirectory_installs_at_the_project_root() {
    let w = World::new();
    std::fs::create_dir_all(w.project.join(".git")).unwrap();
    let sub = w.project.join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    Install::in_world(&w)
        .local()
        .starter()
        .cwd(&sub)
        .run()
        .success()
        .stdout_has(&format!("project: {} (found by .git)", w.project.display()))
        .file(".claude/commands/msd-plan.md");
    assert!(!sub.join(".claude").exists() && !w.project.join("src/.claude").exists());
    // A .planning/ marks a project too, and --project names one outright.
    let other = w.tmp.path().join("other");
    std::fs::create_dir_all(other.join(".planning")).unwrap();
    std::fs::create_dir_all(other.join("a")).unwrap();
    Install::in_world(&w).local().arg("--quiet").starter().cwd(other.join("a")).run().success();
    assert!(other.join(".claude/commands/msd-plan.md").is_file());
    let named = w.tmp.path().join("named");
    std::fs::create_dir_all(&named).unwrap();
    Install::in_world(&w).arg("--project").arg(&named).arg("--quiet").starter().run().success();
    assert!(named.join(".claude/commands/msd-plan.md").is_file(), "--project implies --local");
    // Without a marker the current directory is the project, and the summary says so.
    let bare = w.tmp.path().join("bare");
    std::fs::create_dir_all(&bare).unwrap();
    Install::in_world(&w).local().starter().cwd(&bare).run().stdout_has("(found by the current directory)");
}

/// The msd skills of a Claude Code home, sorted.
fn skills(home: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(home.join("skills"))
        .map(|rd| rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    names.retain(|n| n.starts_with("msd-"));
    names.sort();
    names
}

#[test]
fn install_profiles_install_their_command_sets_and_are_remembered() {
    let w = World::new();
    let claude = w.home.join(".claude");
    let ran = Install::in_world(&w).args(["--profile", "core"]).json().run().success();
    assert_eq!(ran.json()["runtimes"][0]["profile"], "core", "{}", ran.describe());
    // The main loop, and what it requires (new-project maps the codebase, execute-phase reviews).
    let core = [
        "msd-code-review",
        "msd-discuss-phase",
        "msd-execute-phase",
        "msd-help",
        "msd-map-codebase",
        "msd-new-project",
        "msd-plan-phase",
        "msd-progress",
        "msd-settings",
        "msd-update",
        "msd-verify-work",
    ];
    assert_eq!(skills(&claude), core);
    assert!(claude.join("agents/msd-planner.md").is_file(), "plan-phase spawns the planner");
    assert!(!claude.join("msd-core/workflows/ship.md").exists(), "no workflow of a command not installed");
    assert!(claude.join("msd-core/workflows/execute-plan.md").is_file(), "workflows without a command stay");
    let state = std::fs::read_to_string(claude.join("msd-core/msd-install-state.json")).unwrap();
    assert!(state.contains("\"profile\": \"core\""), "{state}");
    // The next run without --profile keeps it.
    let again = Install::in_world(&w).json().run().json();
    assert_eq!(again["runtimes"][0]["profile"], "core");
    assert_eq!(again["runtimes"][0]["summary"]["added"], 0);
    assert_eq!(skills(&claude), core);
    // standard adds the everyday commands, not the rest.
    Install::in_world(&w).args(["--profile", "Standard", "--quiet"]).run().success();
    let standard = skills(&claude);
    assert!(standard.contains(&"msd-ship".to_string()) && standard.contains(&"msd-quick".to_string()));
    assert!(!standard.contains(&"msd-autonomous".to_string()));
    // --minimal is core without agents.
    Install::in_world(&w).args(["--minimal", "--quiet"]).run().success();
    assert_eq!(skills(&claude), core);
    let agents: Vec<_> = std::fs::read_dir(claude.join("agents")).map(|rd| rd.count()).into_iter().collect();
    assert!(agents.iter().all(|n| *n == 0), "no agent under --minimal");
    let status = Install::in_world(&w).status().json().run().json();
    assert_eq!(status["installs"][0]["profile"], "minimal");
    // A fresh target gets the default, full.
    let full = Install::new().arg("--quiet").run().success();
    assert!(skills(&full.path("~/.claude")).contains(&"msd-autonomous".to_string()));
    // An unknown profile is a usage error that names the others.
    Install::in_world(&w)
        .args(["--profile", "huge"])
        .run()
        .code(2)
        .stderr_has("profiles: core, standard, full, minimal");
}

/// `msd-install` of `w` on a pseudo-terminal.
#[cfg(unix)]
fn on_pty(w: &World, args: &[&str]) -> rexpect::session::PtySession {
    let mut cmd = w.spawnable("msd-install");
    cmd.args(args).env("TERM", "xterm").env("NO_COLOR", "1");
    rexpect::session::spawn_command(cmd, Some(30_000)).expect("spawns on a pty")
}

#[cfg(unix)]
#[test]
fn install_asks_on_a_terminal_and_never_off_it() {
    let w = World::new();
    // OpenCode's home exists: it is detected and pre-selected; Claude's is not.
    std::fs::create_dir_all(w.home.join(".config/opencode")).unwrap();
    let mut p = on_pty(&w, &["--content", &starter()]);
    p.exp_string("Runtimes to install for").unwrap();
    p.send_line("").unwrap(); // accept the pre-selection
    p.exp_string("Where").unwrap();
    p.send_line("").unwrap(); // global, the first
    p.exp_string("opencode (global)").unwrap();
    p.exp_string("Install?").unwrap();
    p.send_line("y").unwrap();
    p.exp_string("files were written").unwrap();
    p.exp_eof().unwrap();
    assert!(w.home.join(".config/opencode/msd-core/msd-file-manifest.json").is_file(), "opencode installed");
    assert!(!w.home.join(".claude").exists(), "claude was not selected");
    // Answering no writes nothing.
    let w2 = World::new();
    let mut p = on_pty(&w2, &["--content", &starter()]);
    p.exp_string("Runtimes to install for").unwrap();
    p.send_line("").unwrap(); // nothing detected: the primary runtime is pre-selected
    p.exp_string("Where").unwrap();
    p.send("\x1b[B").unwrap(); // down: local
    p.send_line("").unwrap();
    p.exp_string("claude (local)").unwrap();
    p.exp_string("Install?").unwrap();
    p.send_line("n").unwrap();
    p.exp_string("nothing was written").unwrap();
    p.exp_eof().unwrap();
    assert!(!w2.project.join(".claude").exists() && !w2.home.join(".claude").exists());
    // --yes skips the confirmation.
    let w3 = World::new();
    let mut p = on_pty(&w3, &["--content", &starter(), "--yes"]);
    p.exp_string("Runtimes to install for").unwrap();
    p.send_line("").unwrap();
    p.exp_string("Where").unwrap();
    p.send_line("").unwrap();
    p.exp_string("files were written").unwrap();
    p.exp_eof().unwrap();
    assert!(w3.home.join(".claude/msd-core/msd-file-manifest.json").is_file());
    // Off a terminal nothing is asked: the default (claude, global) stands.
    let w4 = World::new();
    std::fs::create_dir_all(w4.home.join(".config/opencode")).unwrap();
    Install::in_world(&w4).starter().run().success();
    assert!(w4.home.join(".claude/msd-core/msd-file-manifest.json").is_file());
    assert!(!w4.home.join(".config/opencode/msd-core").exists());
}

/// Issue 19: the synthetic content of the whole-install benchmark (`bench content --scale N`)
/// installs: copy `k` of a command is in its original's profile and requires the copies of what
/// the original requires (it failed with "command `add-phase-s2` is in no profile").
#[test]
fn install_bench_content_scale_installs_every_copy_in_its_profile() {
    let w = World::new();
    let dir = w.tmp.path().join("x2");
    Install::in_world(&w).args(["bench", "content", "--scale", "2", "--out"]).arg(&dir).run().success();
    Install::in_world(&w).args(["-q", "--profile", "core"]).content(&dir).run().success();
    let skills = w.home.join(".claude/skills");
    for s in ["msd-plan-phase", "msd-plan-phase-s2", "msd-new-project-s2", "msd-map-codebase-s2"] {
        assert!(skills.join(s).join("SKILL.md").is_file(), "{s} is installed");
    }
    assert!(!skills.join("msd-quick-s2").exists(), "a standard command's copy stays out of core");
}

/// One run of `args` in `w` with the fast path traced (`fast`) or turned off: its stdout, and
/// whether every target took the fast path (`Some(true)`), none did (`Some(false)`), or it
/// printed no trace (`None`).
fn run_fast(w: &World, args: &[&str], fast: bool) -> (String, Option<bool>) {
    let ran = Install::in_world(w).args(args).env("MSD_INSTALL_FAST", if fast { "trace" } else { "0" }).run().success();
    let err = ran.stderr();
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("fast path: ")).collect();
    let taken = match (lines.iter().all(|l| l.ends_with(": taken")), lines.iter().all(|l| l.ends_with(": not taken"))) {
        _ if lines.is_empty() => None,
        (true, _) => Some(true),
        (_, true) => Some(false),
        _ => panic!("the fast path is all or nothing\n{}", ran.describe()),
    };
    (String::from_utf8_lossy(&ran.out.stdout).into_owned(), taken)
}

#[test]
fn install_no_change_rerun_takes_the_fast_path_and_reports_what_the_full_run_reports() {
    let w = World::new();
    let c = starter();
    let base = ["-r", "claude", "-r", "codex", "-r", "gemini", "--content", c.as_str()];
    let with = |extra: &[&'static str]| -> Vec<&str> { base.iter().copied().chain(extra.iter().copied()).collect() };
    let (_, first) = run_fast(&w, &with(&["--quiet"]), true);
    assert_eq!(first, Some(false), "a first install has no record to go by");
    let home = w.home.join(".claude");
    let before = tree(&w.home);
    let before_mtimes = mtimes(&home);
    // Fast runs first (a run with the fast path off drops the records), then the full ones.
    let (fast_json, taken) = run_fast(&w, &with(&["--json"]), true);
    assert_eq!(taken, Some(true), "the re-run right after the install is fast");
    let (fast_text, _) = run_fast(&w, &with(&[]), true);
    let (fast_verbose, _) = run_fast(&w, &with(&["-v"]), true);
    let (full_json, taken) = run_fast(&w, &with(&["--json"]), false);
    assert_eq!(taken, None, "no trace with the fast path off");
    let (full_text, _) = run_fast(&w, &with(&[]), false);
    let (full_verbose, _) = run_fast(&w, &with(&["-v"]), false);
    assert_eq!(fast_json, full_json, "--json: same plan, ops, settings, caps and compose");
    assert_eq!(fast_text, full_text);
    assert_eq!(fast_verbose, full_verbose, "-v lists every kept file alike");
    assert!(fast_text.contains("up to date"), "{fast_text}");
    let doc: serde_json::Value = serde_json::from_str(&fast_json).unwrap();
    assert_eq!(doc["runtimes"].as_array().unwrap().len(), 3);
    assert!(doc["runtimes"][0]["ops"].as_array().unwrap().iter().all(|o| o["action"] == "keep"));
    assert_eq!(mtimes(&home), before_mtimes, "no file was touched");
    let mut after = tree(&w.home);
    let mut before = before;
    for t in [&mut after, &mut before] {
        t.retain(|p, _| !p.starts_with(".cache/"));
    }
    assert_eq!(after, before, "the fast path writes nothing in the homes");
}

#[test]
fn install_fast_path_notices_edited_deleted_and_touched_files() {
    let w = World::new();
    let c = starter();
    let args = ["--content", c.as_str(), "--json"];
    run_fast(&w, &args, true);
    let home = w.home.join(".claude");
    let rules = home.join("msd-core/references/rules.md");
    let ours = std::fs::read(&rules).unwrap();
    // An edit of the same size with the modification time put back: the status-change time
    // still tells.
    let mtime = std::fs::metadata(&rules).unwrap().modified().unwrap();
    let mut edited = ours.clone();
    edited[0] = if edited[0] == b'X' { b'Y' } else { b'X' };
    std::fs::write(&rules, &edited).unwrap();
    std::fs::File::options().write(true).open(&rules).unwrap().set_modified(mtime).unwrap();
    let (out, taken) = run_fast(&w, &args, true);
    assert_eq!(taken, Some(false), "an edited file takes the full path");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let r = &doc["runtimes"][0];
    assert_eq!(r["summary"]["changed"], 1, "{r}");
    assert_eq!(r["written"]["backed_up"], serde_json::json!(["msd-core/references/rules.md"]));
    let backup = std::path::PathBuf::from(r["written"]["backup_dir"].as_str().unwrap());
    assert_eq!(std::fs::read(backup.join("msd-core/references/rules.md")).unwrap(), edited);
    assert_eq!(std::fs::read(&rules).unwrap(), ours, "ours is back");
    assert_eq!(run_fast(&w, &args, true).1, Some(true), "and the next run is fast again");

    // A deleted file is put back.
    let skill = home.join("skills/msd-plan/SKILL.md");
    std::fs::remove_file(&skill).unwrap();
    let (out, taken) = run_fast(&w, &args, true);
    assert_eq!(taken, Some(false));
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["runtimes"][0]["summary"]["added"], 1);
    assert!(skill.is_file());

    // A touched file (same bytes, new time): the full path, which finds nothing to do. A touched
    // settings file: settings are planned for real on both paths (runtimes edit them too), so
    // the fast path reads it and finds it as the full path would.
    for (touched, fast) in [(home.join("msd-core/workflows/plan.md"), false), (home.join("settings.json"), true)] {
        assert_eq!(run_fast(&w, &args, true).1, Some(true));
        std::fs::File::options()
            .write(true)
            .open(&touched)
            .unwrap()
            .set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
            .unwrap();
        let (out, taken) = run_fast(&w, &args, true);
        assert_eq!(taken, Some(fast), "{} was touched", touched.display());
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
        let s = &doc["runtimes"][0]["summary"];
        assert_eq!((s["added"].as_u64(), s["changed"].as_u64(), s["removed"].as_u64()), (Some(0), Some(0), Some(0)));
        assert!(doc["runtimes"][0]["settings"].as_array().unwrap().iter().all(|s| s["action"] == "keep"));
    }

    // A settings file the user edited: our entry is put back.
    let settings = home.join("settings.json");
    let ours = std::fs::read_to_string(&settings).unwrap();
    assert_eq!(run_fast(&w, &args, true).1, Some(true));
    std::fs::write(&settings, "{}\n").unwrap();
    let (out, taken) = run_fast(&w, &args, true);
    assert_eq!(taken, Some(false));
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["runtimes"][0]["settings"][0]["action"], "change", "{doc}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), ours);

    // The manifest replaced by a copy of itself (another inode).
    let manifest = home.join("msd-core/msd-file-manifest.json");
    assert_eq!(run_fast(&w, &args, true).1, Some(true));
    let bytes = std::fs::read(&manifest).unwrap();
    std::fs::remove_file(&manifest).unwrap();
    std::fs::write(&manifest, &bytes).unwrap();
    assert_eq!(run_fast(&w, &args, true).1, Some(false));
}

/// What the fast path's record holds of each installed file is the stat the disk has once the run
/// is done: taken from the staged file's descriptor for a file moved in with its directory (most
/// of a fresh install), looked up after the commit for one moved alone (into a directory the user
/// already had: the move gives it a new status-change time) or linked into another tree (the
/// helper: each link does too). Every recorded stat of a fresh `--all` is compared with an
/// `lstat` of the file, and the re-run takes the fast path for every target.
#[cfg(unix)]
#[test]
fn install_fast_path_records_the_stat_every_installed_file_has_after_the_run() {
    use std::os::unix::fs::MetadataExt;
    let key = |p: &std::path::Path| -> Option<serde_json::Value> {
        let m = std::fs::symlink_metadata(p).ok()?;
        let k = [m.size() as i64, m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec(), m.ino() as i64, m.dev() as i64];
        Some(serde_json::json!([k[0], k[1], k[2], k[3], k[4], k[5], k[6], i64::from(m.mode())]))
    };
    let w = World::new();
    // The user's own agent: claude's new agents are moved into `agents/` one by one.
    let agents = w.home.join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(agents.join("mine.md"), "mine\n").unwrap();
    let doc = Install::in_world(&w).all().json().run().success().json();
    let homes: Vec<std::path::PathBuf> =
        doc["runtimes"].as_array().unwrap().iter().map(|r| r["home"].as_str().unwrap().into()).collect();
    let records: Vec<serde_json::Value> = std::fs::read_dir(w.home.join(".cache/msd/install"))
        .unwrap()
        .map(|e| serde_json::from_slice(&std::fs::read(e.unwrap().path()).unwrap()).unwrap())
        .collect();
    assert_eq!(records.len(), homes.len(), "a record per target");
    let mut alone = 0;
    for rec in &records {
        let files = rec["files"].as_array().unwrap();
        let path = |f: &serde_json::Value| f["path"].as_str().unwrap().to_string();
        // The target's home: the one that holds the first recorded file with its recorded inode.
        let home = homes
            .iter()
            .find(|h| key(&h.join(path(&files[0]))).is_some_and(|k| k[5] == files[0]["stat"][5]))
            .unwrap_or_else(|| panic!("no home holds {}", path(&files[0])));
        let differ: Vec<String> =
            files.iter().filter(|f| key(&home.join(path(f))).as_ref() != Some(&f["stat"])).map(path).collect();
        assert!(differ.is_empty(), "{}: recorded stats that are not the disk's: {differ:?}", home.display());
        alone += files.iter().filter(|f| path(f).starts_with("agents/") && home.ends_with(".claude")).count();
        // The manifest's too (found by its inode).
        let manifest =
            tree(home).into_keys().map(|p| home.join(p)).find(|p| key(p).is_some_and(|k| k[5] == rec["manifest"][5]));
        assert_eq!(manifest.and_then(|p| key(&p)).as_ref(), Some(&rec["manifest"]), "{}: the manifest", home.display());
    }
    assert!(alone > 0, "claude's agents were moved in one by one and recorded");
    let ran = Install::in_world(&w).all().env("MSD_INSTALL_FAST", "trace").run().success();
    let err = ran.stderr();
    let traced: Vec<&str> = err.lines().filter(|l| l.starts_with("fast path: ")).collect();
    assert_eq!(traced.len(), homes.len(), "{err}");
    assert!(traced.iter().all(|l| l.ends_with(": taken")), "{err}");
}

#[test]
fn install_fast_path_replans_on_another_flag_profile_content_or_environment() {
    let w = World::new();
    // The embedded content: profiles, and the fingerprint of the executable.
    assert_eq!(run_fast(&w, &["--quiet"], true).1, Some(false));
    assert_eq!(run_fast(&w, &["--quiet"], true).1, Some(true), "embedded content, default profile");
    let (out, taken) = run_fast(&w, &["--profile", "core", "--json"], true);
    assert_eq!(taken, Some(false), "another profile");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(doc["runtimes"][0]["summary"]["removed"].as_u64().unwrap() > 0, "core installs fewer commands");
    assert_eq!(run_fast(&w, &["--quiet"], true).1, Some(true), "the recorded profile, again");
    let (out, taken) = run_fast(&w, &["--portable-hooks", "--json"], true);
    assert_eq!(taken, Some(false), "another flag");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(!doc["runtimes"][0]["settings"].as_array().unwrap().iter().all(|s| s["action"] == "keep"), "{doc}");
    assert_eq!(run_fast(&w, &["--portable-hooks", "--quiet"], true).1, Some(true));
    assert_eq!(run_fast(&w, &["--quiet"], true).1, Some(false), "the flag dropped");

    // --content: the tree's bytes are the fingerprint.
    let content = w.tmp.path().join("content");
    copy_tree(&fixture("starter"), &content);
    let c = content.display().to_string();
    let args = ["--content", c.as_str(), "--json"];
    run_fast(&w, &args, true);
    assert_eq!(run_fast(&w, &args, true).1, Some(true));
    std::fs::write(content.join("msd-core/references/rules.md"), "# Rules v2\n").unwrap();
    let (out, taken) = run_fast(&w, &args, true);
    assert_eq!(taken, Some(false), "other content");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["runtimes"][0]["summary"]["changed"], 1);

    // The environment resolution reads: another home is another target.
    assert_eq!(run_fast(&w, &args, true).1, Some(true));
    let other = w.tmp.path().join("claude-elsewhere");
    Install::in_world(&w)
        .args(args)
        .env("MSD_INSTALL_FAST", "trace")
        .env("CLAUDE_CONFIG_DIR", &other)
        .run()
        .stderr_has("fast path: claude (global): not taken");
    assert!(other.join("skills/msd-plan/SKILL.md").is_file());

    // Uninstall takes the records with it.
    Install::in_world(&w).uninstall().all().arg("--quiet").run().success();
    assert!(!w.home.join(".cache/msd/install").exists(), "no record is left behind");
}
