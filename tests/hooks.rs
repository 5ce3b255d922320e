//! The hooks msd-install registers: each installed command is a real `msd_run hook <name>` that
//! does its small job.

use std::io::Write;
use std::process::Stdio;

use crate::lifecycle::{content_copy, s};
use crate::support::World;

fn hook(w: &World, name: &str, stdin: &str) -> std::process::Output {
    let mut cmd = w.spawnable("msd_run");
    cmd.args(["hook", name]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn hooks_session_start_prints_the_current_position() {
    let w = World::new();
    let planning = w.project.join(".planning");
    std::fs::create_dir_all(&planning).unwrap();
    std::fs::write(
        planning.join("STATE.md"),
        "# Project State\n\n## Current Position\n\nPhase: 2 of 5 (Auth)\nPlan: 1 of 3\nStatus: Executing\n\n## Performance\n\nPlans completed: 4\n\n## Session Continuity\n\nLast session: 2026-01-02 10:00\nStopped at: task 3 of plan 2-1\nResume file: .planning/phases/02/2-1-PLAN.md\n",
    )
    .unwrap();
    let input = serde_json::json!({"hook_event_name": "SessionStart", "cwd": w.project, "source": "startup"});
    let out = hook(&w, "session-start", &input.to_string());
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "msd: where this project stands (.planning/STATE.md)\nPhase: 2 of 5 (Auth)\nPlan: 1 of 3\nStatus: Executing\nStopped at: task 3 of plan 2-1\nResume file: .planning/phases/02/2-1-PLAN.md\n"
    );
    // No STATE.md: silent success.
    let elsewhere = serde_json::json!({"cwd": w.home});
    let out = hook(&w, "session-start", &elsewhere.to_string());
    assert!(out.status.success() && out.stdout.is_empty());
}

#[test]
fn hooks_guard_env_blocks_writes_to_env_files() {
    let w = World::new();
    for (path, blocked) in
        [(".env", true), ("app/.env.production", true), (".env.example", false), ("src/main.rs", false)]
    {
        let input = serde_json::json!({"tool_name": "Write", "tool_input": {"file_path": path, "content": "X=1"}});
        let out = hook(&w, "guard-env", &input.to_string());
        if blocked {
            assert_eq!(out.status.code(), Some(2), "{path}");
            assert!(String::from_utf8_lossy(&out.stderr).contains("refusing to write"), "{path}");
        } else {
            assert!(out.status.success(), "{path}");
        }
    }
    // Unreadable input never blocks.
    assert!(hook(&w, "guard-env", "not json").status.success());
}

#[test]
fn hooks_installed_commands_run_the_installed_msd_run() {
    let w = World::new();
    let c = content_copy(&w, "content");
    w.install().args(["--content", &s(&c)]).assert().success();
    let home = w.home.join(".claude");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(home.join("settings.json")).unwrap()).unwrap();
    let mut names = Vec::new();
    for event in ["SessionStart", "PreToolUse"] {
        for group in v["hooks"][event].as_array().unwrap() {
            for h in group["hooks"].as_array().unwrap() {
                let cmd = h["command"].as_str().unwrap();
                let prefix = format!("{}/msd-core/bin/msd_run hook ", home.display());
                let name = cmd.strip_prefix(&prefix).unwrap_or_else(|| panic!("{cmd}"));
                names.push(name.to_string());
            }
        }
    }
    assert_eq!(names, ["session-start", "guard-env"]);
    // Run the commands exactly as the runtime would: through the shell, event JSON on stdin,
    // the installed msd_run.
    std::fs::create_dir_all(w.project.join(".planning")).unwrap();
    std::fs::write(w.project.join(".planning/STATE.md"), "## Current Position\n\nPhase: 3 of 3\n").unwrap();
    let run = |cmd: &str, stdin: &str| {
        let mut sh = std::process::Command::new("sh");
        sh.arg("-c")
            .arg(cmd)
            .current_dir(&w.project)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = sh.spawn().unwrap();
        child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    };
    let start = v["hooks"]["SessionStart"][0]["hooks"][0]["command"].as_str().unwrap();
    let out = run(start, &serde_json::json!({"cwd": w.project}).to_string());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Phase: 3 of 3"));
    let guard = v["hooks"]["PreToolUse"][0]["hooks"][0]["command"].as_str().unwrap();
    let out = run(guard, r#"{"tool_name":"Edit","tool_input":{"file_path":".env"}}"#);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    // Local scope: the project-relative form Claude expands.
    w.install().args(["--content", &s(&c), "--local"]).assert().success();
    let local = std::fs::read_to_string(w.project.join(".claude/settings.local.json")).unwrap();
    assert!(local.contains(r#""\"$CLAUDE_PROJECT_DIR\"/.claude/msd-core/bin/msd_run hook session-start""#), "{local}");
    assert!(local.contains(r#""Bash(./.claude/msd-core/bin/msd_run:*)""#), "{local}");
}
