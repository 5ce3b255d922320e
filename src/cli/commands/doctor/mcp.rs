//! The MCP servers msd registered (settings entries `mcp:<name>`, Codex's `msd-statusline`),
//! started the way the runtime starts them: the command and arguments the settings file holds
//! now, no shell, one JSON-RPC message a line on stdin. Each must answer `initialize` and
//! `tools/list`; a tool with a status-line entrypoint (`_meta["openai/ui"].entrypoints`, Codex's
//! custom status line) must give a line when its resource is read with a sample thread state.

use std::process::Command;

use msd_core::fs::fsx;
use msd_core::manifest::capability::Capability;
use msd_core::manifest::surfaces::SurfaceFormat;
use serde_json::{Value, json};

use super::call::call;
use super::{Finding, Level, Run, finding};
use crate::apply::state::InstallState;
use crate::pipeline::target::Target;

/// Where Codex puts the thread's state in a status-line read's `_meta`.
const STATE_KEY: &str = "com.openai/codex-statusline-state";

/// The value at `at` of a settings file's text, as JSON.
fn value_at(format: SurfaceFormat, text: &str, at: &[String]) -> Option<Value> {
    match format {
        SurfaceFormat::Toml => {
            let doc: toml_edit::DocumentMut = text.parse().ok()?;
            let mut item = doc.as_item();
            for k in at {
                item = item.as_table_like()?.get(k)?;
            }
            // A TOML table as JSON: its command and args are all that is read.
            let t = item.as_table_like()?;
            let command = t.get("command")?.as_str()?;
            let args: Vec<Value> = t
                .get("args")
                .and_then(|a| a.as_array())
                .map(|a| a.iter().filter_map(|v| v.as_str().map(|s| Value::String(s.into()))).collect())
                .unwrap_or_default();
            Some(json!({"command": command, "args": args}))
        }
        SurfaceFormat::Json => {
            let v: Value = serde_json::from_str(text).ok()?;
            at.iter().try_fold(&v, |v, k| v.get(k)).cloned()
        }
        _ => None,
    }
}

/// One exchange with the server: `requests` (each one line), then the end of input; the
/// answers by id.
fn exchange(command: &str, args: &[String], requests: &[Value], run: &Run<'_>) -> Result<Vec<Value>, String> {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "msd-install-doctor", "version": env!("CARGO_PKG_VERSION")}}});
    let mut stdin = format!("{init}\n{}\n", json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    for r in requests {
        stdin.push_str(&format!("{r}\n"));
    }
    let mut c = Command::new(command);
    c.args(args).current_dir(run.project).env("HOME", &run.env.home);
    let out = call(&mut c, &stdin, None, super::HOOK_TIMEOUT.min(run.timeout))?;
    let answers: Vec<Value> = out.stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    if answers.iter().all(|a| a["id"] != 0 || a.get("result").is_none()) {
        let code = out.code.map_or_else(|| "no exit code".to_string(), |c| format!("exit {c}"));
        return Err(format!("no answer to `initialize` ({code}){}", super::tail_of(&out.stderr)));
    }
    Ok(answers)
}

fn answer(answers: &[Value], id: u64) -> Option<&Value> {
    answers.iter().find(|a| a["id"] == id)
}

/// The status-line resources a `tools/list` result advertises.
fn statusline_uris(tools: &Value) -> Vec<String> {
    let Some(tools) = tools["tools"].as_array() else { return Vec::new() };
    tools
        .iter()
        .flat_map(|t| t.pointer("/_meta/openai~1ui/entrypoints").and_then(Value::as_array).into_iter().flatten())
        .filter(|e| e["type"] == "statusline")
        .filter_map(|e| e["resourceUri"].as_str().map(str::to_string))
        .collect()
}

/// The text of a UI tree (a string, or an element whose children are trees).
fn leaves(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Object(o) => {
            o.get("children").and_then(Value::as_array).map_or(String::new(), |c| c.iter().map(leaves).collect())
        }
        _ => String::new(),
    }
}

/// What is wrong with one server, `None` when it works.
fn check_one(command: &str, args: &[String], run: &Run<'_>) -> Option<String> {
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    let answers = match exchange(command, args, &[list], run) {
        Ok(a) => a,
        Err(e) => return Some(e),
    };
    let Some(tools) = answer(&answers, 1).and_then(|a| a.get("result")) else {
        return Some("no answer to `tools/list`".into());
    };
    if tools["tools"].as_array().is_none_or(Vec::is_empty) {
        return Some("it lists no tool".into());
    }
    let state = json!({"thread": {"id": "msd-doctor", "name": null, "agent": {"state": "ready"},
        "model": {"display_name": "doctor", "provider": "msd"}, "workspace": {"cwd": run.project},
        "usage": {"context": {"used_percentage": 10}}}});
    for uri in statusline_uris(tools) {
        let read = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": uri, "_meta": {STATE_KEY: state}}});
        let answers = match exchange(command, args, &[read], run) {
            Ok(a) => a,
            Err(e) => return Some(e),
        };
        let text = answer(&answers, 2).and_then(|a| a.pointer("/result/contents/0/text")).and_then(Value::as_str);
        let line = text.and_then(|t| serde_json::from_str::<Value>(t).ok()).map(|t| leaves(&t)).unwrap_or_default();
        if line.trim().is_empty() {
            let got = answer(&answers, 2).map_or_else(|| "nothing".to_string(), Value::to_string);
            return Some(format!("its status line `{uri}` read with a sample state gave no text ({got})"));
        }
    }
    None
}

/// Every `mcp:` entry msd registered in the settings files of `t`, as the file holds it now.
pub(super) fn check(cap: &Capability, t: &Target, run: &Run<'_>, reinstall: &str, findings: &mut Vec<Finding>) {
    let Ok(Some(state)) = InstallState::read(&t.home, cap, t.scope) else { return };
    for (file, ledger) in &state.settings {
        let path = t.home.join(file.as_str());
        let text = fsx::read_to_string(&path).ok();
        for (id, entry) in ledger.entries.iter().filter(|(id, _)| id.starts_with("mcp:")) {
            let name = entry.at.last().map_or(id.as_str(), String::as_str);
            let now = text.as_deref().and_then(|t| value_at(ledger.format, t, &entry.at));
            let Some(server) = now else {
                findings.push(finding(
                    Level::Problem,
                    "mcp",
                    format!("msd's MCP server `{name}` is no longer in {}", path.display()),
                    reinstall.to_string(),
                ));
                continue;
            };
            let command = server["command"].as_str().unwrap_or_default();
            let args: Vec<String> = server["args"]
                .as_array()
                .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
                .unwrap_or_default();
            if cfg!(windows) {
                findings.push(finding(
                    Level::NotChecked,
                    "mcp",
                    format!("MCP server `{name}` was not started (doctor runs them on Unix only)"),
                    "nothing to do",
                ));
                continue;
            }
            if let Some(wrong) = check_one(command, &args, run) {
                findings.push(finding(
                    Level::Problem,
                    "mcp",
                    format!("msd's MCP server `{name}` ({}: `{command} {}`): {wrong}", path.display(), args.join(" ")),
                    reinstall.to_string(),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doctor_mcp_reads_the_server_table_and_its_status_line_uris() {
        let at = vec!["mcp_servers".to_string(), "msd-statusline".to_string()];
        let toml = "[mcp_servers.msd-statusline]\ncommand = \"/h/msd_run\"\nargs = [\"mcp\", \"statusline\"]\n";
        assert_eq!(
            value_at(SurfaceFormat::Toml, toml, &at),
            Some(json!({"command": "/h/msd_run", "args": ["mcp", "statusline"]}))
        );
        let inline = "mcp_servers = { msd-statusline = { command = \"/x\" } }\n";
        assert_eq!(value_at(SurfaceFormat::Toml, inline, &at), Some(json!({"command": "/x", "args": []})));
        assert_eq!(value_at(SurfaceFormat::Toml, "[mcp_servers]\n", &at), None);
        let tools = json!({"tools": [{"name": "a"}, {"name": "s", "_meta": {"openai/ui": {"entrypoints": [{"type": "statusline", "resourceUri": "ui://x"}, {"type": "other", "resourceUri": "ui://y"}]}}}]});
        assert_eq!(statusline_uris(&tools), ["ui://x"]);
        assert_eq!(leaves(&json!({"type": "row", "children": ["a", null, {"type": "bold", "children": ["b"]}]})), "ab");
    }
}
