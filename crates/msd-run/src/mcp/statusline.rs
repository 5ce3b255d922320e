//! `msd_run mcp statusline`: Codex's custom status line provider, showing the line `msd_run
//! hook statusline` prints for Claude Code and Qwen Code (one place renders it:
//! [`crate::hook::statusline`]).
//!
//! The protocol, from the skill Codex 0.171.0 bundles for writing one (`create-statusline/
//! SKILL.md` and its `statusline.d.ts`, `@openai/codex-linux-x64@0.171.0:vendor/
//! x86_64-unknown-linux-musl/bin/codex@6005548-6013500`): `tools/list` advertises a tool whose
//! `_meta["openai/ui"].entrypoints` holds exactly one `{"type": "statusline", "resourceUri"}`
//! (its `title` is the label in `/statusline`'s picker); Codex reads that URI with
//! `resources/read`, the displayed thread's state in `params._meta["com.openai/
//! codex-statusline-state"]` (`thread.model.display_name`, `thread.workspace.cwd`,
//! `thread.usage.context.{used_percentage, used_tokens, context_window_size}`), and takes one
//! `application/json` text resource holding a UI tree (a string is literal text, `null` clears
//! the footer; at most 16 KiB of leaf text). Each read has one second; Codex reads again a
//! second after each answer. The user's pick is saved as `tui.status_line_provider = { server,
//! tool }` (confirmed against 0.171.0's `config/read`: other field names are refused as
//! "Invalid `tui.status_line_provider`").

use serde_json::{Value, json};

use super::{Handler, RpcError};
use crate::hook::event::Event;
use crate::hook::reply::Reply;
use crate::hook::{Dirs, Hook};

/// The tool's name: `tui.status_line_provider.tool`.
pub(crate) const TOOL: &str = "statusline";
/// The footer resource.
pub(crate) const URI: &str = "ui://msd/statusline";
/// Where Codex puts the thread's state in a read's `_meta`.
pub(crate) const STATE_KEY: &str = "com.openai/codex-statusline-state";
/// The longest line sent (Codex takes 16 KiB of leaf text; a line is far shorter unless the
/// phase name in STATE.md is a page long).
const MAX_LINE: usize = 1024;

/// The provider.
pub(crate) struct Statusline {
    dirs: Dirs,
}

impl Statusline {
    pub(crate) fn new() -> Statusline {
        Statusline { dirs: Dirs::from_env() }
    }

    /// The line for Codex's `state` (the process's directory when it names no workspace).
    fn line(&self, state: &Value) -> String {
        let event = event_of(state);
        let line = match crate::hook::decide(Hook::Statusline, Ok(event), &self.dirs) {
            Reply::Status(s) => s,
            _ => String::new(),
        };
        clip(line, MAX_LINE)
    }
}

/// The hook event that Codex's status-line state stands for. No session id: the per-session
/// bridge file feeds a context-monitor hook, which Codex does not run, and Codex reads every
/// second.
pub(crate) fn event_of(state: &Value) -> Event {
    let thread = state.get("thread").unwrap_or(&Value::Null);
    let text = |v: Option<&Value>| v.and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
    let model = text(thread.pointer("/model/display_name")).or_else(|| text(thread.pointer("/model/id")));
    let context = thread.pointer("/usage/context").unwrap_or(&Value::Null);
    let num = |k: &str| context.get(k).and_then(Value::as_f64);
    let used_pct = num("used_percentage")
        .or_else(|| Some(num("used_tokens")? * 100.0 / num("context_window_size").filter(|s| *s > 0.0)?))
        .filter(|p| p.is_finite())
        .map(|p| p.clamp(0.0, 100.0));
    Event {
        name: Some("StatusLine".into()),
        cwd: text(thread.pointer("/workspace/cwd")),
        model,
        used_pct,
        ..Event::default()
    }
}

/// `s` cut to at most `max` bytes on a character boundary, `…` marking the cut.
fn clip(s: String, max: usize) -> String {
    if s.len() <= max {
        return s;
    }
    let end = (0..=max - '…'.len_utf8()).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
    format!("{}…", &s[..end])
}

/// The tool `tools/list` shows: the status-line entrypoint, and a call answers the line.
fn tool() -> Value {
    json!({
        "name": TOOL,
        "title": "msd status line",
        "description": "msd's project status: model, phase and plan of .planning/STATE.md, directory, context used. Codex shows it in the footer once picked in /statusline.",
        "inputSchema": {"type": "object", "properties": {}},
        "_meta": {"openai/ui": {"entrypoints": [{"type": "statusline", "resourceUri": URI}]}},
    })
}

impl Handler for Statusline {
    fn name(&self) -> &'static str {
        "msd"
    }

    fn call(&mut self, method: &str, params: &Value) -> Result<Value, RpcError> {
        match method {
            "tools/list" => Ok(json!({"tools": [tool()]})),
            "tools/call" => {
                if params.get("name").and_then(Value::as_str) != Some(TOOL) {
                    return Err(RpcError::invalid_params(format!("unknown tool; this server has `{TOOL}`")));
                }
                let line = self.line(&Value::Null);
                Ok(json!({"content": [{"type": "text", "text": line}]}))
            }
            "resources/list" => Ok(json!({
                "resources": [{"name": "statusline", "title": "msd status line", "uri": URI, "mimeType": "application/json"}]
            })),
            "resources/templates/list" => Ok(json!({"resourceTemplates": []})),
            "resources/read" => {
                if params.get("uri").and_then(Value::as_str) != Some(URI) {
                    return Err(RpcError::invalid_params(format!("unknown resource; this server has `{URI}`")));
                }
                let state = params.pointer("/_meta").and_then(|m| m.get(STATE_KEY)).unwrap_or(&Value::Null);
                let line = self.line(state);
                // An empty line clears the footer rather than showing nothing in its place.
                let tree = if line.is_empty() { Value::Null } else { Value::String(line) };
                Ok(json!({"contents": [{"uri": URI, "mimeType": "application/json", "text": tree.to_string()}]}))
            }
            _ => Err(RpcError::method_not_found(method)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use msd_core::fs::fsx;

    fn provider(state_dir: &std::path::Path) -> Statusline {
        Statusline { dirs: Dirs::new(state_dir.to_path_buf(), None) }
    }

    fn sample(cwd: &std::path::Path) -> Value {
        json!({
            "account": {"rate_limits": []},
            "app": {"cli_version": "0.171.0", "display_mode": "standard"},
            "config": {"statusline_items": []},
            "thread": {
                "id": "t1", "name": null, "agent": {"state": "ready"},
                "model": {"display_name": "gpt-5.5", "provider": "openai"},
                "workspace": {"cwd": cwd},
                "usage": {"context": {"context_window_size": 200_000, "used_tokens": 50_000}}
            }
        })
    }

    #[test]
    fn mcp_statusline_advertises_one_statusline_entrypoint() {
        let tmp = tempfile::tempdir().unwrap();
        let tools = provider(tmp.path()).call("tools/list", &Value::Null).unwrap();
        let tools = tools["tools"].as_array().unwrap();
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0]["name"], TOOL);
        assert_eq!(tools[0]["_meta"]["openai/ui"]["entrypoints"], json!([{"type": "statusline", "resourceUri": URI}]));
        let res = provider(tmp.path()).call("resources/list", &Value::Null).unwrap();
        assert_eq!(res["resources"][0]["uri"], URI);
    }

    #[test]
    fn mcp_statusline_reads_the_threads_state_into_msds_line() {
        let tmp = tempfile::tempdir().unwrap();
        let proj = tmp.path().join("shop");
        fsx::create_dir_all(&proj.join(".planning/src")).unwrap();
        fsx::write_atomic(
            &proj.join(".planning/STATE.md"),
            b"# State\n\n## Current Position\n\nPhase: 2 of 4 (API)\nStatus: Executing\n",
            fsx::FileMode::Regular,
        )
        .unwrap();
        let mut p = provider(&tmp.path().join("state"));
        // From a subdirectory of the project, as a session opened there.
        let params = json!({"uri": URI, "_meta": {STATE_KEY: sample(&proj.join(".planning/src"))}});
        let out = p.call("resources/read", &params).unwrap();
        let c = &out["contents"][0];
        assert_eq!(c["uri"], URI);
        assert_eq!(c["mimeType"], "application/json");
        let tree: Value = serde_json::from_str(c["text"].as_str().unwrap()).unwrap();
        assert_eq!(tree, json!("gpt-5.5 │ phase 2 of 4 (API) · executing │ shop │ ███░░░░░░░ 25%"));
        // The same line the hook prints for Claude Code, from the same event.
        let pos = crate::hook::session_start::position("## Current Position\nPhase: 2 of 4 (API)\nStatus: Executing\n");
        assert_eq!(tree, json!(crate::hook::statusline::render(Some("gpt-5.5"), &pos, Some("/x/shop"), Some(25.0))));
    }

    #[test]
    fn mcp_statusline_refuses_other_resources_and_tools() {
        let tmp = tempfile::tempdir().unwrap();
        let mut p = provider(tmp.path());
        let e = p.call("resources/read", &json!({"uri": "ui://other"})).unwrap_err();
        assert_eq!(e.code, -32602);
        assert_eq!(p.call("tools/call", &json!({"name": "other"})).unwrap_err().code, -32602);
        assert_eq!(p.call("prompts/list", &Value::Null).unwrap_err().code, -32601);
        let called = p.call("tools/call", &json!({"name": TOOL})).unwrap();
        assert_eq!(called["content"][0]["type"], "text");
    }

    #[test]
    fn mcp_statusline_event_takes_what_codex_sends() {
        let e = event_of(
            &json!({"thread": {"model": {"id": "m1", "display_name": ""}, "usage": {"context": {"used_percentage": 130.0}}}}),
        );
        assert_eq!(e.model.as_deref(), Some("m1"), "the id when the display name is empty");
        assert_eq!(e.used_pct, Some(100.0));
        assert_eq!(e.session, None, "no per-session bridge file for a reader polled every second");
        let none = event_of(&Value::Null);
        assert_eq!((none.model, none.cwd, none.used_pct), (None, None, None));
        let zero = event_of(&json!({"thread": {"usage": {"context": {"used_tokens": 5, "context_window_size": 0}}}}));
        assert_eq!(zero.used_pct, None);
        assert_eq!(clip("abcdef".into(), 4), "a…");
        assert_eq!(clip("ééé".into(), 5), "é…");
        assert_eq!(clip("ab".into(), 4), "ab");
    }
}
