//! The hook event, read once from whatever a runtime sends: Claude, Codex, Qwen, Auggie and
//! Copilot's compatible payload use Claude's snake_case names (`cwd`, `tool_name`,
//! `tool_input`, `session_id`); Gemini the same names with its own tool names; Copilot's own
//! payload camelCase (`toolName`, `toolArgs` as a JSON string); Cline nests the tool under
//! `preToolUse` / `postToolUse` with `parameters`; Auggie names the workspace
//! `workspace_roots`; Windsurf wraps the tool in `tool_info` under `agent_action_name`
//! (<https://docs.windsurf.com/windsurf/cascade/hooks>); OpenCode and Kilo (through msd's plugin
//! shim, `src/pipeline/convert/js_plugin.js`) send `{hook, directory, worktree, input, output,
//! event}`: the plugin hook's name, the session's directory, the hook's own `input`
//! (`{tool, sessionID, callID}`, `opencode-linux-x64@1.18.33:bin/opencode@96772725`), the tool's
//! arguments as `output.args`, and a bus event (`file.edited` with `properties.file`,
//! `@104431410`). Cursor sends snake_case with its own step names (`hook_event_name:
//! "preToolUse"`), `conversation_id` (and `session_id`, the same), `workspace_roots` and a
//! `cursor_version` on every event (`@cursor/sdk@1.0.32:dist/cjs/342.js@832168`), its file tools
//! as `tool_name: "Write"` with `tool_input: {file_path, content}` (the whole new text, `@890143`)
//! and `"Read"` with `{file_path}` (`@879651`), no `cwd` but for shell tools (`@864922`), and
//! `afterFileEdit` with a top-level `file_path` (`@891565`). Pi (through msd's extension shim,
//! `src/pipeline/convert/pi_extension.js`) sends OpenCode's shape: its `tool_call` event's
//! `toolName` as `input.tool` and its `input` as `output.args`. Sources:
//! `tests/real-runtimes/evidence/hooks.md` of the acceptance tier
//! (`@anthropic-ai/claude-code@2.1.332:claude@331043646`, `@google/gemini-cli@0.61.0:
//! bundle/chunk-JDPZ4CE3.js:364049`, `@github/copilot@1.0.102:prebuilds/linux-x64/
//! runtime.node@9705600`, `@cline/shared@0.0.86:dist/hooks/events.d.ts:110`,
//! `@augmentcode/auggie@0.36.0:augment.mjs:5785`).
//!
//! Pure: text in, [`Event`] out. Input that is not a JSON object is [`Malformed`]; guards fail
//! closed on it, advisory hooks stay silent.

use serde_json::Value;

/// What the hooks need of one event, whichever runtime sent it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Event {
    /// The event's name as the runtime spelled it (`PreToolUse`, `BeforeTool`, ...).
    pub name: Option<String>,
    /// The project (the session's working directory or first workspace root).
    pub cwd: Option<String>,
    /// The session (or conversation, or task) id.
    pub session: Option<String>,
    /// The tool about to run or just run.
    pub tool: Option<String>,
    /// The tool's arguments.
    pub input: Value,
    /// The model's name.
    pub model: Option<String>,
    /// Percentage of the context window used, when the runtime reports it.
    pub used_pct: Option<f64>,
    /// The changed file of a file-changed event.
    pub changed: Option<String>,
    /// The payload's top-level field names (a host that runs another runtime's hooks names
    /// itself by one: Cursor's `cursor_version`).
    pub fields: Vec<String>,
}

/// Stdin that is not one JSON object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Malformed(pub String);

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter().try_fold(v, |v, k| v.get(k)).and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn num_at(v: &Value, path: &[&str]) -> Option<f64> {
    path.iter().try_fold(v, |v, k| v.get(k)).and_then(Value::as_f64)
}

fn first_str(v: &Value, paths: &[&[&str]]) -> Option<String> {
    paths.iter().find_map(|p| str_at(v, p)).map(str::to_string)
}

/// Reads an event from stdin's text.
pub(crate) fn parse(text: &str) -> Result<Event, Malformed> {
    if text.trim().is_empty() {
        return Err(Malformed("no event on stdin".into()));
    }
    let v: Value = serde_json::from_str(text).map_err(|e| Malformed(format!("the event is not JSON ({e})")))?;
    if !v.is_object() {
        return Err(Malformed("the event is not a JSON object".into()));
    }
    let nested = ["preToolUse", "postToolUse"].iter().find_map(|k| v.get(*k)).cloned().unwrap_or(Value::Null);
    // OpenCode's plugin shim: the tool's arguments are the hook's `output.args`.
    let opencode_args = ["output", "input"].iter().find_map(|k| v.get(*k).and_then(|o| o.get("args")));
    let input = match (
        v.get("tool_input").or_else(|| v.get("tool_info")).or(opencode_args),
        v.get("toolArgs"),
        nested.get("parameters"),
    ) {
        (Some(i), _, _) => i.clone(),
        // Copilot's camelCase payload carries the arguments as a JSON string.
        (None, Some(Value::String(s)), _) => serde_json::from_str(s).unwrap_or(Value::Null),
        (None, Some(a), _) => a.clone(),
        (None, None, Some(p)) => p.clone(),
        _ => Value::Null,
    };
    if !(input.is_object() || input.is_null()) {
        return Err(Malformed("the tool input is not a JSON object".into()));
    }
    let roots = ["workspace_roots", "workspaceRoots"]
        .iter()
        .find_map(|k| v.get(*k).and_then(Value::as_array).and_then(|a| a.first()).and_then(Value::as_str))
        .map(str::to_string);
    let used_pct = num_at(&v, &["context_window", "used_percentage"])
        .or_else(|| num_at(&v, &["context_window", "remaining_percentage"]).map(|r| 100.0 - r))
        .or_else(|| {
            let used = num_at(&v, &["context_window", "total_input_tokens"])?;
            let size = num_at(&v, &["context_window", "context_window_size"]).filter(|s| *s > 0.0)?;
            Some(used * 100.0 / size)
        })
        .or_else(|| {
            // OpenCode's plugin shim: the last answer's token counts and the model's context
            // limit (`message.updated` `info.tokens`, `model.limit.context`).
            let t = v.get("usage")?.get("tokens")?;
            let limit = num_at(&v, &["usage", "limit"]).filter(|l| *l > 0.0)?;
            let n = |p: &[&str]| num_at(t, p).unwrap_or(0.0);
            Some((n(&["input"]) + n(&["output"]) + n(&["cache", "read"]) + n(&["cache", "write"])) * 100.0 / limit)
        })
        .filter(|p| p.is_finite())
        .map(|p| p.clamp(0.0, 100.0));
    Ok(Event {
        name: first_str(
            &v,
            &[&["hook_event_name"], &["hookName"], &["hookEventName"], &["agent_action_name"], &["hook"]],
        ),
        cwd: first_str(&v, &[&["cwd"], &["workspace", "current_dir"], &["directory"]]).or(roots),
        session: first_str(
            &v,
            &[
                &["session_id"],
                &["sessionId"],
                &["conversation_id"],
                &["taskId"],
                &["trajectory_id"],
                &["input", "sessionID"],
                &["event", "properties", "sessionID"],
            ],
        ),
        tool: first_str(&v, &[&["tool_name"], &["toolName"], &["input", "tool"]])
            .or_else(|| str_at(&nested, &["toolName"]).map(str::to_string)),
        input,
        model: first_str(&v, &[&["model", "display_name"], &["model", "id"], &["model"]]),
        used_pct,
        changed: first_str(&v, &[&["file_path"], &["file"], &["event", "properties", "file"]]),
        fields: v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default(),
    })
}

impl Event {
    /// The file a tool writes or edits, from the argument names the runtimes use.
    pub(crate) fn target(&self) -> Option<&str> {
        ["file_path", "path", "notebook_path", "absolute_path", "filePath", "target_file"]
            .iter()
            .find_map(|k| self.input.get(*k).and_then(Value::as_str))
            .filter(|s| !s.is_empty())
    }

    /// Every file the tool writes or reads: the one it names ([`Event::target`]), and each file a
    /// patch adds, updates, deletes or moves to. OpenCode's and Kilo's `apply_patch` names no
    /// path but its `patchText`, whose `*** Add File: <path>`, `*** Update File: <path>`,
    /// `*** Delete File: <path>` and `*** Move to: <path>` lines name them
    /// (`opencode-linux-x64@1.18.33:bin/opencode@96909308`, the argument `@96909975`). Codex's
    /// `apply_patch` hands its hook the patch as `tool_input.command` (the payload Codex 0.171.0
    /// sent in the session tier); a `command` or `input` is read as a patch only when it is one
    /// (starts with `*** Begin Patch`), so a shell command is never taken for one.
    pub(crate) fn targets(&self) -> Vec<&str> {
        const HEADERS: [&str; 4] = ["*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "];
        let mut out: Vec<&str> = self.target().into_iter().collect();
        for k in ["patchText", "patch", "command", "input"] {
            let Some(text) = self.input.get(k).and_then(Value::as_str) else { continue };
            if matches!(k, "command" | "input") && !text.trim_start().starts_with("*** Begin Patch") {
                continue;
            }
            for line in text.lines() {
                let line = line.trim_end_matches('\r');
                if let Some(p) =
                    HEADERS.iter().find_map(|h| line.strip_prefix(h)).map(str::trim).filter(|p| !p.is_empty())
                {
                    out.push(p);
                }
            }
        }
        out
    }

    /// The whole new text of a whole-file write (`Write`, Gemini `write_file`, Cline
    /// `write_to_file`, Copilot `create`), when this is one.
    pub(crate) fn whole_file(&self) -> Option<&str> {
        let tool = self.tool.as_deref()?;
        let whole = ["Write", "write_file", "write_to_file", "create", "WriteFile", "save-file"];
        if !whole.iter().any(|t| t.eq_ignore_ascii_case(tool)) {
            return None;
        }
        // Kimi's `WriteFile` appends with `mode: "append"` (`kimi-cli@1.52.0:
        // kimi_cli/tools/file/write.py:30`): the content is added, not the whole file.
        if self.input.get("mode").and_then(Value::as_str) == Some("append") {
            return None;
        }
        ["content", "file_content", "file_text", "text"].iter().find_map(|k| self.input.get(*k).and_then(Value::as_str))
    }

    /// Whether the tool only reads or searches the path it names (OpenCode's `read`, `glob`,
    /// `grep`, `list`; Gemini's `read_file`; Copilot's `view`): the runtimes whose guard hook
    /// sees every tool call (OpenCode and Kilo) get only the `.env` guard for these.
    pub(crate) fn reads_only(&self) -> bool {
        // Pi's `find` is its glob (`@mariozechner/pi-coding-agent@0.73.1:dist/core/tools/find.js:16`).
        let reads =
            ["read", "read_file", "view", "ReadFile", "read_many_files", "glob", "grep", "list", "ls", "lsp", "find"];
        self.tool.as_deref().is_some_and(|t| reads.iter().any(|r| r.eq_ignore_ascii_case(t)))
    }

    /// Every text the tool writes (a whole file, an edit's new string, each of a multi-edit's).
    pub(crate) fn written_texts(&self) -> Vec<&str> {
        let mut out = Vec::new();
        for k in [
            "content",
            "file_content",
            "file_text",
            "new_string",
            "new_str",
            "newText",
            "newString",
            "diff",
            "patchText",
        ] {
            if let Some(s) = self.input.get(k).and_then(Value::as_str) {
                out.push(s);
            }
        }
        // `edits: [{new_string}]` (Claude's MultiEdit; Pi's `edit` takes `edits: [{oldText,
        // newText}]`, `@mariozechner/pi-coding-agent@0.73.1:dist/core/tools/edit.js:11-22`); Kimi's
        // `StrReplaceFile` takes `edit`, one `{old, new}` or a list of them
        // (`kimi-cli@1.52.0:kimi_cli/tools/file/replace.py:22-35`).
        for k in ["edits", "edit"] {
            let edits = match self.input.get(k) {
                Some(Value::Array(a)) => a.iter().collect::<Vec<_>>(),
                Some(e @ Value::Object(_)) => vec![e],
                _ => Vec::new(),
            };
            for e in edits {
                if let Some(s) =
                    ["new_string", "newString", "newText", "new"].iter().find_map(|k| e.get(*k).and_then(Value::as_str))
                {
                    out.push(s);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_event_malformed_input_is_refused() {
        for bad in ["", "  \n", "not json", "[1,2]", "\"x\"", r#"{"tool_input": "rm -rf"}"#, "{\"cwd\":"] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn hook_event_copilot_camel_case_args_are_a_json_string() {
        let e = parse(r#"{"toolName":"create","toolArgs":"{\"path\":\"/p/.env\",\"file_text\":\"A=1\"}","cwd":"/p"}"#)
            .unwrap();
        assert_eq!(e.tool.as_deref(), Some("create"));
        assert_eq!(e.target(), Some("/p/.env"));
        assert_eq!(e.whole_file(), Some("A=1"));
    }

    #[test]
    fn hook_event_cursor_payload() {
        let e = parse(r#"{"conversation_id":"c-1","generation_id":"g","model":"m","tool_name":"Write","tool_input":{"file_path":"/p/.env","content":"A=1"},"tool_use_id":"t","session_id":"c-1","hook_event_name":"preToolUse","cursor_version":"1.0.0","workspace_roots":["/p"],"user_email":null,"transcript_path":null}"#).unwrap();
        assert_eq!(e.name.as_deref(), Some("preToolUse"));
        assert_eq!(
            (e.cwd.as_deref(), e.session.as_deref(), e.tool.as_deref()),
            (Some("/p"), Some("c-1"), Some("Write"))
        );
        assert_eq!((e.target(), e.whole_file()), (Some("/p/.env"), Some("A=1")));
        assert!(e.fields.iter().any(|f| f == "cursor_version"));
    }

    #[test]
    fn hook_event_patch_names_every_file_it_touches() {
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** Update File: src/app.py\r\n*** Move to: .env\n@@\n-a\n+b\n*** Delete File: old.txt\n*** End Patch\n";
        let e = parse(&serde_json::json!({"hook": "tool.execute.before", "input": {"tool": "apply_patch"}, "output": {"args": {"patchText": patch}}}).to_string()).unwrap();
        assert_eq!(e.targets(), ["a.txt", "src/app.py", ".env", "old.txt"]);
        let e = parse(r#"{"tool_name":"Write","tool_input":{"file_path":"/p/x"}}"#).unwrap();
        assert_eq!(e.targets(), ["/p/x"]);
        // Codex's apply_patch: the patch is `tool_input.command`; a shell command is no patch.
        let codex = serde_json::json!({"hook_event_name": "PreToolUse", "tool_name": "apply_patch", "tool_input": {"command": patch}});
        assert_eq!(parse(&codex.to_string()).unwrap().targets(), ["a.txt", "src/app.py", ".env", "old.txt"]);
        let shell =
            serde_json::json!({"tool_name": "Bash", "tool_input": {"command": "printf '*** Add File: .env\\n'"}});
        assert!(parse(&shell.to_string()).unwrap().targets().is_empty());
    }

    #[test]
    fn hook_event_pi_edit_new_text_is_written() {
        let e = parse(r#"{"hook":"tool_call","input":{"tool":"edit"},"output":{"args":{"path":".planning/STATE.md","edits":[{"oldText":"a","newText":"b"},{"oldText":"c","newText":"d"}]}}}"#).unwrap();
        assert_eq!((e.tool.as_deref(), e.target()), (Some("edit"), Some(".planning/STATE.md")));
        assert_eq!(e.written_texts(), ["b", "d"]);
    }

    #[test]
    fn hook_event_context_usage_from_remaining_or_tokens() {
        let e = parse(r#"{"context_window":{"remaining_percentage":30}}"#).unwrap();
        assert_eq!(e.used_pct, Some(70.0));
        let e = parse(r#"{"context_window":{"total_input_tokens":50000,"context_window_size":200000}}"#).unwrap();
        assert_eq!(e.used_pct, Some(25.0));
    }
}
