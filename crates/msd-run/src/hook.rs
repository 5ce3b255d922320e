//! `msd_run hook <name>`: the hooks msd-install registers in runtime settings (Claude
//! `settings.json`, Codex `hooks.json`). Each does one small, real thing and never fails a
//! session by accident.
//!
//! Input: the hook event as JSON on stdin (the runtime's hook protocol: `cwd`, `tool_name`,
//! `tool_input`, ...); stdin is not read when it is a terminal. Output: text on stdout (added to
//! the session's context by SessionStart hooks) or a refusal on stderr with exit code 2 (the
//! hook protocol's "block this tool call").
//!
//! - `session-start`: prints the project's current position from `.planning/STATE.md` (the
//!   `## Current Position` section and the `Stopped at` / `Resume file` lines), so a fresh
//!   session knows where the work stands. Silent when there is no STATE.md.
//! - `guard-env`: refuses writes to `.env` files (`.env`, `.env.local`, `.env.production`, ...;
//!   `.env.example`, `.env.sample`, `.env.template` and `.env.dist` are allowed): they hold
//!   secrets an agent should not rewrite.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::ValueEnum;

/// The hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Hook {
    /// Print the project's current position from .planning/STATE.md.
    SessionStart,
    /// Refuse writes to .env files (exit 2).
    GuardEnv,
}

/// Exit code of the hook protocol that blocks the tool call and shows stderr to the agent.
const BLOCK: u8 = 2;

/// Runs hook `h`.
pub fn run(h: Hook, defer_to: Option<&Path>) -> ExitCode {
    let input = read_input();
    match h {
        Hook::SessionStart if defer_to.is_some_and(|d| local_install_speaks(&project_dir(&input), d)) => {
            ExitCode::SUCCESS
        }
        Hook::SessionStart => session_start(&input),
        Hook::GuardEnv => guard_env(&input),
    }
}

fn read_input() -> serde_json::Value {
    let mut stdin = std::io::stdin();
    if stdin.is_terminal() {
        return serde_json::Value::Null;
    }
    let mut s = String::new();
    if stdin.read_to_string(&mut s).is_err() {
        return serde_json::Value::Null;
    }
    serde_json::from_str(&s).unwrap_or(serde_json::Value::Null)
}

fn project_dir(input: &serde_json::Value) -> PathBuf {
    input
        .get("cwd")
        .and_then(|c| c.as_str())
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default()
}

/// Whether `project` or one of its parents holds another install at `core_dir` (its
/// `bin/msd_run`), which is not the one running: that install's own hook reports instead.
fn local_install_speaks(project: &Path, core_dir: &Path) -> bool {
    use msd_core::fs::fsx;
    let own = std::env::current_exe().ok().and_then(|e| fsx::canonicalize(&e).ok());
    project.ancestors().any(|dir| {
        let helper = dir.join(core_dir).join("bin/msd_run");
        fsx::is_file(&helper) && fsx::canonicalize(&helper).ok() != own
    })
}

fn session_start(input: &serde_json::Value) -> ExitCode {
    // The session may start in a subdirectory of the project: the nearest `.planning/` counts.
    let dir = project_dir(input);
    let Some(text) =
        dir.ancestors().find_map(|d| msd_core::fs::fsx::read_to_string(&d.join(".planning/STATE.md")).ok())
    else {
        return ExitCode::SUCCESS;
    };
    let summary = position(&text);
    if !summary.is_empty() {
        print!("msd: where this project stands (.planning/STATE.md)\n{summary}");
    }
    ExitCode::SUCCESS
}

/// The `## Current Position` section's non-blank lines, then `Stopped at:` and `Resume file:`.
pub fn position(state_md: &str) -> String {
    let mut out = String::new();
    let mut in_position = false;
    for line in state_md.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            in_position = h.trim() == "Current Position";
            continue;
        }
        if line.starts_with("# ") {
            in_position = false;
            continue;
        }
        let t = line.trim();
        if (in_position && !t.is_empty()) || t.starts_with("Stopped at:") || t.starts_with("Resume file:") {
            out.push_str(t);
            out.push('\n');
        }
    }
    out
}

/// Whether `path` names a `.env` file an agent must not write.
pub fn is_secret_env(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return false };
    if name == ".env" {
        return true;
    }
    match name.strip_prefix(".env.") {
        Some(rest) => !["example", "sample", "template", "dist"].contains(&rest),
        None => false,
    }
}

fn guard_env(input: &serde_json::Value) -> ExitCode {
    let tool_input = input.get("tool_input");
    let target = ["file_path", "path", "notebook_path"]
        .iter()
        .find_map(|k| tool_input.and_then(|t| t.get(*k)).and_then(|v| v.as_str()));
    match target {
        Some(p) if is_secret_env(Path::new(p)) => {
            eprintln!(
                "msd: refusing to write {p}: .env files hold secrets. Ask the user to edit it, or write {p}.example instead."
            );
            ExitCode::from(BLOCK)
        }
        _ => ExitCode::SUCCESS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_env_names() {
        for p in [".env", "a/.env", ".env.local", "/x/.env.production"] {
            assert!(is_secret_env(Path::new(p)), "{p}");
        }
        for p in [".env.example", "env", ".envrc", "a/.env.sample", "x.env", ".env.template"] {
            assert!(!is_secret_env(Path::new(p)), "{p}");
        }
    }

    #[test]
    fn hook_position_takes_the_section_and_continuity_lines() {
        let s = "# Project State\n\n## Current Position\n\nPhase: 2 of 4 (API)\nStatus: Executing\n\n## Performance\nPlans: 3\n\n## Session Continuity\n\nLast session: x\nStopped at: plan 2-3 task 4\nResume file: None\n";
        assert_eq!(
            position(s),
            "Phase: 2 of 4 (API)\nStatus: Executing\nStopped at: plan 2-3 task 4\nResume file: None\n"
        );
    }
}
