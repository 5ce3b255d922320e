//! Every hook's decision over the payload fixtures of each runtime
//! (`crates/msd-run/tests/fixtures/hooks/<runtime>/<event>.json`, shaped after the fields the
//! runtimes' packaged sources name, see [`super::event`]), malformed input included. A fixture's
//! `__PROJECT__` becomes a temporary project with a STATE.md, a planning config and an `.env`.

use std::path::Path;

use super::*;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hooks");

fn project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    fsx::create_dir_all(&p.join(".planning/research")).unwrap();
    let state = format!(
        "# Project State\n\n## Current Position\n\nPhase: 2 of 4 (API)\nPlan: 1 of 3\nStatus: Executing\n\n## Notes\n{}\n",
        "A line of accumulated context that matters.\n".repeat(60)
    );
    fsx::write_atomic(&p.join(".planning/STATE.md"), state.as_bytes(), fsx::FileMode::Regular).unwrap();
    fsx::write_atomic(&p.join(".planning/config.json"), b"{\"mode\": \"yolo\"}", fsx::FileMode::Regular).unwrap();
    fsx::write_atomic(&p.join(".env"), b"A=1\n", fsx::FileMode::Regular).unwrap();
    d
}

fn fixture(rel: &str, project: &Path) -> String {
    let text = fsx::read_to_string(&Path::new(FIXTURES).join(rel)).unwrap();
    let p = fsx::canonicalize(project).unwrap();
    text.replace("__PROJECT__", p.to_str().unwrap())
}

/// Hook directories inside `project`'s temp dir, so no test sees another's state.
fn dirs(project: &Path) -> Dirs {
    Dirs::new(project.join(".hook-state"), Some(project.join(".hook-cache")))
}

fn run_fixture(h: Hook, rel: &str, project: &Path) -> Reply {
    decide(h, event::parse(&fixture(rel, project)), &dirs(project))
}

#[derive(Debug)]
enum Want {
    Pass,
    Block(&'static str),
    Context(&'static str),
    Status(&'static str),
}

fn check(got: &Reply, want: &Want, what: &str) {
    let ok = match (got, want) {
        (Reply::Pass, Want::Pass) => true,
        (Reply::Block(m), Want::Block(s))
        | (Reply::Context(m), Want::Context(s))
        | (Reply::Status(m), Want::Status(s)) => m.contains(s),
        _ => false,
    };
    assert!(ok, "{what}: got {got:?}, want {want:?}");
}

#[test]
fn hook_fixtures_every_runtime() {
    let cases: &[(Hook, &str, Want)] = &[
        (Hook::Guard, "claude/PreToolUse-write-env.json", Want::Block(".env files hold secrets")),
        (Hook::GuardEnv, "claude/PreToolUse-write-env.json", Want::Block(".env files hold secrets")),
        (Hook::Guard, "claude/PreToolUse-write-state-shrink.json", Want::Block("lose most of a planning artifact")),
        (Hook::GuardEnv, "claude/PreToolUse-write-state-shrink.json", Want::Pass),
        (Hook::Guard, "claude/PreToolUse-edit-injection.json", Want::Block("ignore all previous instructions")),
        (Hook::Guard, "claude/PreToolUse-edit-source.json", Want::Pass),
        (Hook::SessionStart, "claude/SessionStart.json", Want::Context("phase 2 of 4 (API), plan 1 of 3, executing")),
        (Hook::Statusline, "claude/statusline.json", Want::Status("Opus │ phase 2 of 4 (API)")),
        // FileChanged output reaches no model: the announcement waits for the next tool call.
        (Hook::ConfigReload, "claude/FileChanged.json", Want::Pass),
        (Hook::ContextMonitor, "claude/PostToolUse.json", Want::Context("{\"mode\":\"yolo\"}")),
        // The statusline call above left 70% used in the session's bridge file.
        (Hook::ContextMonitor, "claude/PostToolUse.json", Want::Pass),
        (Hook::ContextMonitor, "claude/PostToolUse.json", Want::Pass),
        (Hook::Guard, "codex/PreToolUse-shell.json", Want::Pass),
        (Hook::Guard, "codex/PreToolUse-apply-patch-env.json", Want::Block(".env.local")),
        (Hook::SessionStart, "codex/SessionStart.json", Want::Context("next: /msd:execute-phase")),
        (Hook::Guard, "gemini/BeforeTool-write-env.json", Want::Block(".ENV")),
        (Hook::Guard, "gemini/BeforeTool-replace.json", Want::Pass),
        (Hook::ContextMonitor, "gemini/AfterTool.json", Want::Pass),
        (Hook::SessionStart, "gemini/SessionStart.json", Want::Context("phase 2 of 4")),
        (Hook::Guard, "qwen/PreToolUse-write-state-shrink.json", Want::Block(".planning/STATE.md")),
        (Hook::Statusline, "qwen/statusline.json", Want::Status("qwen3-coder │")),
        (Hook::SessionStart, "qwen/SessionStart.json", Want::Context("phase 2 of 4")),
        (Hook::Guard, "copilot/preToolUse-create-env.json", Want::Block(".env.production")),
        (Hook::Guard, "copilot/preToolUse-edit.json", Want::Pass),
        (Hook::SessionStart, "copilot/sessionStart.json", Want::Context("phase 2 of 4")),
        (Hook::Guard, "augment/PreToolUse-save-env.json", Want::Block(".env")),
        (Hook::SessionStart, "augment/SessionStart.json", Want::Context("phase 2 of 4")),
        (Hook::Guard, "cline/PreToolUse-write-env.json", Want::Block(".env")),
        (Hook::SessionStart, "cline/TaskStart.json", Want::Context("phase 2 of 4")),
        (Hook::Guard, "windsurf/pre_write_code-env.json", Want::Block(".env.local")),
        (Hook::Guard, "windsurf/pre_write_code-injection.json", Want::Block("<system>")),
        (Hook::Guard, "kimi-code/PreToolUse-writefile-env.json", Want::Block(".env")),
        (Hook::Guard, "codebuddy/PreToolUse-write-env.json", Want::Block(".env")),
        // Kimi CLI, shaped after kimi-cli@1.52.0's payload builder (`kimi_cli/hooks/events.py:11`)
        // and its file tools' parameters (`kimi_cli/tools/file/{write,replace,read}.py`).
        (Hook::Guard, "kimi/PreToolUse-writefile-env.json", Want::Block("refusing to write")),
        (Hook::Guard, "kimi/PreToolUse-readfile-env.json", Want::Block("refusing to read .env.local")),
        (Hook::Guard, "kimi/PreToolUse-writefile-state-shrink.json", Want::Block("lose most of a planning artifact")),
        // `mode: append` adds to the file: no shrink.
        (Hook::Guard, "kimi/PreToolUse-writefile-append-state.json", Want::Pass),
        (Hook::Guard, "kimi/PreToolUse-strreplace-injection.json", Want::Block("ignore all previous instructions")),
        (Hook::Guard, "kimi/PreToolUse-strreplace-edits-injection.json", Want::Block("<system>")),
        (Hook::Guard, "kimi/PreToolUse-strreplace-source.json", Want::Pass),
        // Hermes shell hooks, shaped after hermes-agent@0.19.0's `_serialize_payload`
        // (`agent/shell_hooks.py:536-557`) and its file tools (`tools/file_tools.py:1947-2010`).
        (Hook::Guard, "hermes/pre_tool_call-write_file-env.json", Want::Block("refusing to write")),
        (Hook::Guard, "hermes/pre_tool_call-read_file-env.json", Want::Block("refusing to read .env.production")),
        (
            Hook::Guard,
            "hermes/pre_tool_call-write_file-state-shrink.json",
            Want::Block("lose most of a planning artifact"),
        ),
        (Hook::Guard, "hermes/pre_tool_call-patch-injection.json", Want::Block("ignore previous instructions")),
        (Hook::Guard, "hermes/pre_tool_call-patch-source.json", Want::Pass),
        // Hermes' patch tool in patch mode: a V4A multi-file patch (`hermes-agent@0.19.0:
        // tools/file_tools.py:1775`), its files named by its `*** ... File:` lines.
        (Hook::Guard, "hermes/pre_tool_call-patch-v4a-env.json", Want::Block("refusing to write config/.env")),
        // `tool_name` and `tool_input` are null outside tool events.
        (Hook::SessionStart, "hermes/pre_llm_call.json", Want::Context("phase 2 of 4 (API), plan 1 of 3, executing")),
        (Hook::Guard, "hermes/pre_llm_call.json", Want::Pass),
        // OpenCode and Kilo, as msd's plugin shim sends them (recorded from opencode 1.18.33).
        (Hook::Guard, "opencode/tool.execute.before-read-env.json", Want::Block("refusing to read .env")),
        (Hook::Guard, "opencode/tool.execute.before-write-env.json", Want::Block("refusing to write")),
        // OpenCode's apply_patch names its files only in the patch text.
        (Hook::Guard, "opencode/tool.execute.before-apply-patch-env.json", Want::Block("refusing to write .env.local")),
        (Hook::Guard, "opencode/tool.execute.before-apply-patch.json", Want::Pass),
        (Hook::Guard, "opencode/tool.execute.before-write-state-shrink.json", Want::Block(".planning/STATE.md")),
        (Hook::Guard, "opencode/tool.execute.before-edit-config.json", Want::Pass),
        (Hook::Guard, "opencode/tool.execute.before-grep-outside.json", Want::Pass),
        (Hook::SessionStart, "opencode/experimental.chat.system.transform.json", Want::Context("phase 2 of 4 (API)")),
        // file.edited names no session: the message comes back at once, for the shim to hold.
        (Hook::ConfigReload, "opencode/event-file.edited-config.json", Want::Context("{\"mode\":\"yolo\"}")),
        (Hook::ConfigReload, "opencode/tool.execute.after-edit.json", Want::Pass),
        (Hook::ContextMonitor, "opencode/tool.execute.after-edit.json", Want::Pass),
        // The shim's `usage`: the last answer's tokens over the model's context limit (70%).
        (Hook::ContextMonitor, "opencode/tool.execute.after-edit-usage.json", Want::Context("30% left")),
        (Hook::ContextMonitor, "opencode/tool.execute.after-edit-usage.json", Want::Pass),
        // Cursor, shaped after @cursor/sdk@1.0.32's executor (see super::event): no `cwd` for
        // file tools, the project is the first workspace root.
        (Hook::SessionStart, "cursor/sessionStart.json", Want::Context("phase 2 of 4 (API), plan 1 of 3, executing")),
        (Hook::Guard, "cursor/preToolUse-write-env.json", Want::Block("refusing to write")),
        (Hook::GuardEnv, "cursor/preToolUse-write-env.json", Want::Block(".env files hold secrets")),
        (Hook::Guard, "cursor/preToolUse-read-env.json", Want::Block("refusing to read")),
        (Hook::Guard, "cursor/preToolUse-write-state-shrink.json", Want::Block("lose most of a planning artifact")),
        (Hook::Guard, "cursor/preToolUse-write-injection.json", Want::Block("instruction to the agents")),
        (Hook::Guard, "cursor/preToolUse-write-source.json", Want::Pass),
        (Hook::Guard, "cursor/preToolUse-shell.json", Want::Pass),
        // afterFileEdit's output reaches no model: the announcement waits for postToolUse.
        (Hook::ConfigReload, "cursor/afterFileEdit-config.json", Want::Pass),
        (Hook::ContextMonitor, "cursor/postToolUse-write-config.json", Want::Context("{\"mode\":\"yolo\"}")),
        (Hook::ContextMonitor, "cursor/postToolUse-write-config.json", Want::Pass),
    ];
    let d = project();
    for (h, rel, want) in cases {
        check(&run_fixture(*h, rel, d.path()), want, &format!("{h:?} {rel}"));
    }
}

#[test]
fn hook_fixtures_malformed_input_fails_closed_in_guards_open_elsewhere() {
    let d = project();
    for rel in [
        "malformed/not-json.txt",
        "malformed/empty.txt",
        "malformed/array.json",
        "malformed/input-string.json",
        "malformed/truncated.json",
    ] {
        for h in [Hook::Guard, Hook::GuardEnv] {
            check(&run_fixture(h, rel, d.path()), &Want::Block("could not read the hook event"), rel);
        }
        for h in [Hook::SessionStart, Hook::ContextMonitor, Hook::Statusline, Hook::ConfigReload] {
            check(&run_fixture(h, rel, d.path()), &Want::Pass, rel);
        }
    }
}

#[cfg(unix)]
#[test]
fn hook_guard_env_follows_symlinks() {
    let d = project();
    std::os::unix::fs::symlink(d.path().join(".env"), d.path().join("notes.txt")).unwrap();
    let p = fsx::canonicalize(d.path()).unwrap();
    let e =
        serde_json::json!({"cwd": p, "tool_name": "Write", "tool_input": {"file_path": "notes.txt", "content": "x"}});
    check(&decide(Hook::GuardEnv, event::parse(&e.to_string()), &dirs(d.path())), &Want::Block("a link to"), "symlink");
}

/// A linked git worktree `<dir>/wt` (its `.git` a `gitdir:` file) and a path in the main
/// checkout beside it.
fn linked_worktree(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let wt = dir.join("wt");
    fsx::create_dir_all(&wt).unwrap();
    fsx::write_atomic(&wt.join(".git"), b"gitdir: /r/.git/worktrees/wt\n", fsx::FileMode::Regular).unwrap();
    let wt = fsx::canonicalize(&wt).unwrap();
    let outside = wt.parent().unwrap().join("main/src/a.rs");
    (wt, outside)
}

#[test]
fn hook_guard_worktree_blocks_edits_outside() {
    let d = tempfile::tempdir().unwrap();
    let (wt, outside) = linked_worktree(d.path());
    let e = |f: &Path| serde_json::json!({"cwd": wt, "tool_name": "Edit", "tool_input": {"file_path": f, "new_string": "b"}});
    check(
        &decide(Hook::Guard, event::parse(&e(&outside).to_string()), &dirs(d.path())),
        &Want::Block("git worktree"),
        "outside",
    );
    check(
        &decide(Hook::Guard, event::parse(&e(&wt.join("src/a.rs")).to_string()), &dirs(d.path())),
        &Want::Pass,
        "inside",
    );
}

#[test]
fn hook_context_monitor_reads_the_statusline_bridge_once() {
    let d = project();
    let sid = "s-1";
    let p = fsx::canonicalize(d.path()).unwrap();
    let status = serde_json::json!({"session_id": sid, "cwd": p, "context_window": {"used_percentage": 70}});
    assert!(matches!(decide(Hook::Statusline, event::parse(&status.to_string()), &dirs(d.path())), Reply::Status(_)));
    let post = serde_json::json!({"session_id": sid, "cwd": p, "hook_event_name": "PostToolUse", "tool_name": "Read"});
    check(
        &decide(Hook::ContextMonitor, event::parse(&post.to_string()), &dirs(d.path())),
        &Want::Context("30% left"),
        "first",
    );
    check(&decide(Hook::ContextMonitor, event::parse(&post.to_string()), &dirs(d.path())), &Want::Pass, "second");
}

#[test]
fn hook_local_twin_only_for_a_global_helper() {
    let home = Path::new("/h");
    let exe = Path::new("/h/.claude/msd-core/bin/msd_run");
    assert_eq!(local_twin(exe, home, Path::new("/h/p")), Some("/h/p/.claude/msd-core/bin/msd_run".into()));
    assert_eq!(local_twin(Path::new("/h/p/.claude/msd-core/bin/msd_run"), home, Path::new("/h/p")), None);
    assert_eq!(local_twin(exe, home, home), None);
    assert_eq!(local_twin(Path::new("/opt/msd_run"), home, Path::new("/h/p")), None);
}

#[test]
fn hook_opencode_payload_fields() {
    let d = project();
    let e = event::parse(&fixture("opencode/tool.execute.before-edit-config.json", d.path())).unwrap();
    let p = fsx::canonicalize(d.path()).unwrap();
    assert_eq!(e.name.as_deref(), Some("tool.execute.before"));
    assert_eq!(e.cwd.as_deref(), p.to_str());
    assert_eq!(e.session.as_deref(), Some("ses_dcd5a19d5ffe1SIuazTAGFrjzS"));
    assert_eq!(e.tool.as_deref(), Some("edit"));
    assert_eq!(e.target(), Some(p.join(".planning/config.json").to_str().unwrap()));
    assert_eq!(e.written_texts(), vec!["yolo"]);
    let after = event::parse(&fixture("opencode/tool.execute.after-edit.json", d.path())).unwrap();
    assert_eq!(after.target(), e.target(), "tool.execute.after carries the args in its input");
    let edited = event::parse(&fixture("opencode/event-file.edited-config.json", d.path())).unwrap();
    assert_eq!(edited.changed.as_deref(), Some(p.join(".planning/config.json").to_str().unwrap()));
    assert_eq!(edited.session, None);
    let r = reply::render(
        &run_fixture(Hook::Guard, "opencode/tool.execute.before-read-env.json", d.path()),
        Protocol::Opencode,
        "x",
    );
    assert_eq!(r.code, reply::BLOCK);
    assert!(r.stdout.starts_with("{\"block\":\"msd: refusing to read .env"), "{}", r.stdout);
}

#[test]
fn hook_guard_reads_get_the_env_guard_only() {
    // OpenCode's shim sends every tool call to the guard: a read outside a linked worktree is
    // not an edit outside it.
    let d = tempfile::tempdir().unwrap();
    let (wt, outside) = linked_worktree(d.path());
    let e = |tool: &str, f: &Path| serde_json::json!({"directory": wt, "hook": "tool.execute.before", "input": {"tool": tool, "sessionID": "s"}, "output": {"args": {"filePath": f}}});
    check(&decide(Hook::Guard, event::parse(&e("read", &outside).to_string()), &dirs(d.path())), &Want::Pass, "read");
    // Pi's `find` (its glob) searches a directory: a read (`{pattern, path}`).
    let find = serde_json::json!({"directory": wt, "hook": "tool_call", "input": {"tool": "find", "sessionID": "s"}, "output": {"args": {"pattern": "*.rs", "path": outside}}});
    check(&decide(Hook::Guard, event::parse(&find.to_string()), &dirs(d.path())), &Want::Pass, "pi find");
    check(
        &decide(Hook::Guard, event::parse(&e("write", &outside).to_string()), &dirs(d.path())),
        &Want::Block("git worktree"),
        "write",
    );
    check(
        &decide(Hook::Guard, event::parse(&e("read", &wt.join(".env")).to_string()), &dirs(d.path())),
        &Want::Block("refusing to read"),
        "read .env",
    );
}

#[test]
fn hook_local_copy_follows_the_installers_local_helper() {
    // OpenCode: the global home is ~/.config/opencode, a local install .opencode/.
    let home = Path::new("/h");
    let exe = Path::new("/h/.config/opencode/msd-core/bin/msd_run");
    let rel = Some(".opencode/msd-core/bin/msd_run");
    assert_eq!(local_copy(exe, home, Path::new("/h/p"), rel), Some("/h/p/.opencode/msd-core/bin/msd_run".into()));
    assert_eq!(
        local_copy(exe, home, Path::new("/h/p"), None),
        Some("/h/p/.config/opencode/msd-core/bin/msd_run".into())
    );
    assert_eq!(local_copy(exe, home, home, rel), None);
    let local = Path::new("/h/p/.opencode/msd-core/bin/msd_run");
    assert_eq!(local_copy(local, home, Path::new("/h/p"), rel), None);
}

#[test]
fn hook_planning_rel_from_the_last_planning_dir() {
    assert_eq!(
        planning_rel(Path::new("/p/.planning/phases/01/PLAN.md")).as_deref(),
        Some(".planning/phases/01/PLAN.md")
    );
    assert_eq!(planning_rel(Path::new("/p/src/planning.rs")), None);
}

#[test]
fn hook_host_answers_only_inside_the_host_with_its_own_install() {
    let hosts = [HostHelpers {
        marker: "cursor_version".into(),
        helpers: vec!["~/.cursor/msd-core/bin/msd_run".into(), ".cursor/msd-core/bin/msd_run".into()],
    }];
    let fields = |f: &[&str]| f.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let cursor = fields(&["hook_event_name", "cursor_version", "workspace_roots"]);
    let claude = fields(&["hook_event_name", "session_id", "cwd"]);
    let home = Path::new("/h");
    let cwd = Path::new("/h/p/src");
    let global = |p: &Path| p == Path::new("/h/.cursor/msd-core/bin/msd_run");
    let local = |p: &Path| p == Path::new("/h/p/.cursor/msd-core/bin/msd_run");
    let none = |_: &Path| false;
    // Inside Cursor, with Cursor's global or (an ancestor's) local install: silent.
    assert!(host_answers(&cursor, &hosts, Some(home), cwd, global));
    assert!(host_answers(&cursor, &hosts, Some(home), cwd, local));
    // Inside Cursor without an msd install of its own: Claude's hook answers.
    assert!(!host_answers(&cursor, &hosts, Some(home), cwd, none));
    // In Claude Code itself (no marker), whatever is installed for Cursor.
    assert!(!host_answers(&claude, &hosts, Some(home), cwd, global));
    assert!(!host_answers(&claude, &hosts, Some(home), cwd, local));
    // No home: only the project's install counts.
    assert!(!host_answers(&cursor, &hosts, None, Path::new("/w/p"), global));
    assert!(host_answers(&cursor, &hosts, None, cwd, local));
}

#[test]
fn hook_cursor_fixtures_render_cursors_json() {
    let d = project();
    let out = |h: Hook, rel: &str| reply::render(&run_fixture(h, rel, d.path()), Protocol::Cursor, "x");
    let deny = out(Hook::Guard, "cursor/preToolUse-write-env.json");
    let v: serde_json::Value = serde_json::from_str(&deny.stdout).unwrap();
    assert_eq!((deny.code, v["permission"].as_str()), (0, Some("deny")), "{}", deny.stdout);
    assert!(v["user_message"].as_str().unwrap().contains(".env files hold secrets"));
    let pass = out(Hook::Guard, "cursor/preToolUse-write-source.json");
    assert_eq!((pass.code, pass.stdout.as_str()), (0, "{}\n"));
    let start = out(Hook::SessionStart, "cursor/sessionStart.json");
    let v: serde_json::Value = serde_json::from_str(&start.stdout).unwrap();
    assert!(v["additional_context"].as_str().unwrap().contains("phase 2 of 4"), "{}", start.stdout);
    // Malformed stdin: the guard denies in Cursor's form (its failClosed would deny too).
    for rel in ["malformed/not-json.txt", "malformed/empty.txt", "malformed/input-string.json"] {
        let r = out(Hook::Guard, rel);
        assert!(r.stdout.contains("\"permission\":\"deny\""), "{rel}: {}", r.stdout);
    }
}

#[test]
fn hook_sweep_removes_only_our_week_old_session_files() {
    let d = tempfile::tempdir().unwrap();
    let state = d.path();
    for name in ["started-old.json", "context-old.json", "warned-new.json", "mine-old.json", "context-old.txt"] {
        fsx::write_atomic(&state.join(name), b"{}", fsx::FileMode::Regular).unwrap();
    }
    // "Now" eight days after the files were written.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(8 * 86_400);
    let keep_new = fsx::read(&state.join("warned-new.json")).unwrap();
    sweep(state, later);
    let left: Vec<String> = fsx::list_dir(state).unwrap().into_iter().map(|e| e.name).collect();
    assert_eq!(left, ["context-old.txt", "mine-old.json"], "our .json session files older than a week go");
    // A day later than the write: nothing of ours is old yet.
    fsx::write_atomic(&state.join("warned-new.json"), &keep_new, fsx::FileMode::Regular).unwrap();
    sweep(state, std::time::SystemTime::now() + std::time::Duration::from_secs(86_400));
    assert!(fsx::is_file(&state.join("warned-new.json")));
    sweep(&state.join("missing"), later);
}

/// The sweep runs at the first session start of a day: a later one the same day leaves the
/// directory alone (it neither lists it nor looks at its files), one a day on sweeps again.
#[test]
#[allow(clippy::disallowed_methods, reason = "the test dates the stamp as a sweep eight days on would have")]
fn hook_sweep_runs_once_a_day_by_its_stamp() {
    let d = tempfile::tempdir().unwrap();
    let state = d.path();
    let (hour, day) = (std::time::Duration::from_secs(3600), std::time::Duration::from_secs(86_400));
    let write = |name: &str| fsx::write_atomic(&state.join(name), b"{}", fsx::FileMode::Regular).unwrap();
    let there = |name: &str| fsx::is_file(&state.join(name));
    let t0 = std::time::SystemTime::now();
    write("context-a.json");
    // Eight days after the file was written, no stamp yet: swept, and the stamp set.
    sweep_daily(state, t0 + 8 * day);
    assert!(!there("context-a.json") && there(SWEPT_STAMP));
    // The stamp dated as that sweep: twenty hours later, a week-old file stays (no sweep)...
    let stamp = std::fs::OpenOptions::new().write(true).open(state.join(SWEPT_STAMP)).unwrap();
    stamp.set_modified(t0 + 8 * day).unwrap();
    write("context-b.json");
    sweep_daily(state, t0 + 8 * day + 20 * hour);
    assert!(there("context-b.json"), "swept twice in a day");
    // ... and a day and an hour later it goes.
    sweep_daily(state, t0 + 9 * day + hour);
    assert!(!there("context-b.json"));
    assert!(fsx::list_dir(state).unwrap().iter().all(|e| !e.name.starts_with(".msd-tmp-")));
}

#[test]
fn hook_hermes_fixtures_render_hermes_json() {
    // What hermes-agent@0.19.0's `_parse_response` reads (`agent/shell_hooks.py:566-620`):
    // `action: block` with `message` for pre_tool_call, `context` for pre_llm_call, exit 0.
    let d = project();
    let out = |h: Hook, rel: &str| reply::render(&run_fixture(h, rel, d.path()), Protocol::Hermes, "x");
    let deny = out(Hook::Guard, "hermes/pre_tool_call-write_file-env.json");
    let v: serde_json::Value = serde_json::from_str(&deny.stdout).unwrap();
    assert_eq!((deny.code, v["action"].as_str()), (0, Some("block")), "{}", deny.stdout);
    assert!(v["message"].as_str().unwrap().contains(".env files hold secrets"));
    let pass = out(Hook::Guard, "hermes/pre_tool_call-patch-source.json");
    assert_eq!((pass.code, pass.stdout.as_str()), (0, ""));
    let start = out(Hook::SessionStart, "hermes/pre_llm_call.json");
    let v: serde_json::Value = serde_json::from_str(&start.stdout).unwrap();
    assert!(v["context"].as_str().unwrap().contains("phase 2 of 4"), "{}", start.stdout);
    // Malformed stdin: the guard blocks in Hermes' form.
    for rel in ["malformed/not-json.txt", "malformed/empty.txt", "malformed/input-string.json"] {
        let r = out(Hook::Guard, rel);
        assert!(r.stdout.contains("\"action\":\"block\""), "{rel}: {}", r.stdout);
    }
}
