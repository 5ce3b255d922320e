//! What a hook answers, and how each runtime's hook protocol wants it written.
//!
//! A hook decides a [`Reply`]; [`render`] turns it into stdout, stderr and an exit code for a
//! [`Protocol`], chosen by the command line the manifest registers (`--protocol`):
//! - `claude` (Claude, Codex, Qwen, Auggie): block with exit 2 and the reason on stderr
//!   (`@anthropic-ai/claude-code@2.1.332:claude@170831656`, `@qwen-code/qwen-code@0.24.4:
//!   chunks/chunk-DPEB6S2R.js:147030`, `@augmentcode/auggie@0.36.0:augment.mjs:5785`), add
//!   context as `hookSpecificOutput.additionalContext` JSON on stdout (`claude@170291945`), and
//!   `decision: block` on stdout too, which Codex reads;
//! - `gemini`: exit 2 with JSON `decision: deny` (`@google/gemini-cli@0.61.0:
//!   bundle/chunk-JDPZ4CE3.js:335295`), context as `hookSpecificOutput.additionalContext`;
//! - `copilot`: JSON `permissionDecision: deny` (`@github/copilot@1.0.102:prebuilds/linux-x64/
//!   runtime.node@16862331`), context as `additionalContext`, and `permissionDecision: allow`
//!   to run a call unasked (the guard's `--allow-helper`, for the helper's own line only);
//! - `cline`: JSON `cancel: true` with `errorMessage`, context as `contextModification`
//!   (`@cline/core@0.0.86:dist/hooks/subprocess.d.ts:16`);
//! - `opencode` (OpenCode, Kilo, and Pi: the JS plugin or extension shim msd-install writes,
//!   which spawns the helper; Pi's shim returns the block as `{block: true, reason}`):
//!   JSON `context` for the shim to add (to the system prompt, or after a tool's output), JSON
//!   `block` with exit 2 for it to throw in `tool.execute.before`, which fails the tool call
//!   (`opencode-linux-x64@1.18.33:bin/opencode@96772725`: the hook is awaited before `execute`);
//! - `cursor`: JSON on stdout, exit 0, for every event: `permission: deny` with `user_message`
//!   (what the agent's rejected tool call says) and `agent_message` to block a `preToolUse`
//!   (`@cursor/sdk@1.0.32:dist/cjs/342.js@29664`, the validator; `@856810`, the deny), context as
//!   `additional_context` (sessionStart, postToolUse: `@28002`, `@30415`), and `{}` to let a
//!   call run: the guards are registered `failClosed`, under which empty stdout blocks
//!   (`@838801`), and `{}` is no `permission: allow` (which would approve the call unasked);
//! - `hermes` (Hermes shell hooks, `hooks:` in `~/.hermes/config.yaml`): JSON on stdout, exit 0
//!   (another exit is logged as a failure, its stdout still read): `action: block` with
//!   `message` refuses a `pre_tool_call`, `context` adds text to a `pre_llm_call`'s user message
//!   (`hermes-agent@0.19.0:agent/shell_hooks.py:566-620`, `agent/turn_context.py:692-742`);
//! - the status line is plain text on stdout whatever the protocol.

use clap::ValueEnum;

/// A hook's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reply {
    /// Nothing to say; let the tool call run.
    Pass,
    /// Text for the model's context.
    Context(String),
    /// Refuse the tool call, saying why.
    Block(String),
    /// Let the tool call run without the runtime's approval prompt, saying why. Only Copilot's
    /// protocol can say so; every other protocol renders it as [`Reply::Pass`].
    Allow(String),
    /// A line for the runtime's status bar.
    Status(String),
    /// Text for the context (possibly empty) and files the runtime should watch (Claude's
    /// SessionStart `watchPaths`: `@anthropic-ai/claude-code@2.1.332:claude@338276959`).
    Watch(String, Vec<String>),
}

/// `r` with `path` to watch added.
pub(crate) fn watching(r: Reply, path: String) -> Reply {
    match r {
        Reply::Context(c) => Reply::Watch(c, vec![path]),
        Reply::Watch(c, mut w) => {
            w.push(path);
            Reply::Watch(c, w)
        }
        Reply::Pass => Reply::Watch(String::new(), vec![path]),
        other => other,
    }
}

/// A runtime's hook protocol.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum Protocol {
    /// Claude Code and the runtimes that follow it (Codex, Qwen Code, Auggie).
    #[default]
    Claude,
    /// Gemini CLI.
    Gemini,
    /// GitHub Copilot CLI.
    Copilot,
    /// Cline: JSON `cancel` blocks, `contextModification` adds context
    /// (`@cline/core@0.0.86:dist/hooks/subprocess.d.ts:16`).
    Cline,
    /// OpenCode and Kilo (and Pi), through msd's JS shims: JSON `context`, or `block` and exit 2.
    Opencode,
    /// Cursor: JSON `permission: deny` blocks, `additional_context` adds context, `{}` passes
    /// (`@cursor/sdk@1.0.32:dist/cjs/342.js@29664`).
    Cursor,
    /// Hermes shell hooks: JSON `action: block` with `message` refuses, `context` adds context,
    /// exit 0 (`hermes-agent@0.19.0:agent/shell_hooks.py:566-620`).
    Hermes,
}

/// What the process writes and exits with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rendered {
    /// Stdout.
    pub stdout: String,
    /// Stderr.
    pub stderr: String,
    /// Exit code.
    pub code: u8,
}

/// Exit code of the hook protocols that blocks the tool call.
pub(crate) const BLOCK: u8 = 2;

/// Renders `reply` to event `event` (the name the runtime sent, else the hook's own) in `p`.
pub(crate) fn render(reply: &Reply, p: Protocol, event: &str) -> Rendered {
    let ok = |stdout: String| Rendered { stdout, stderr: String::new(), code: 0 };
    match (reply, p) {
        // A fail-closed Cursor hook that prints nothing blocks (`@cursor/sdk@1.0.32:
        // dist/cjs/342.js@838801`): pass with an empty object.
        (Reply::Pass, Protocol::Cursor) => ok(line(&serde_json::json!({}))),
        (Reply::Pass, _) => ok(String::new()),
        (Reply::Allow(r), Protocol::Copilot) => ok(line(&serde_json::json!({
            "permissionDecision": "allow", "permissionDecisionReason": r
        }))),
        (Reply::Allow(_), p) => render(&Reply::Pass, p, event),
        (Reply::Context(c) | Reply::Watch(c, _), Protocol::Cursor) => {
            ok(line(&serde_json::json!({"additional_context": c})))
        }
        (Reply::Block(r), Protocol::Cursor) => {
            ok(line(&serde_json::json!({"permission": "deny", "user_message": r, "agent_message": r})))
        }
        (Reply::Status(s), _) => ok(format!("{s}\n")),
        // Hermes reads a non-empty `context` string; an empty one is nothing to add.
        (Reply::Context(c) | Reply::Watch(c, _), Protocol::Hermes) if c.is_empty() => ok(String::new()),
        (Reply::Context(c) | Reply::Watch(c, _), Protocol::Hermes) => ok(line(&serde_json::json!({"context": c}))),
        (Reply::Block(r), Protocol::Hermes) => ok(line(&serde_json::json!({"action": "block", "message": r}))),
        (Reply::Context(c), Protocol::Claude | Protocol::Gemini) => ok(line(&serde_json::json!({
            "hookSpecificOutput": {"hookEventName": event, "additionalContext": c}
        }))),
        (Reply::Context(c), Protocol::Copilot) => ok(line(&serde_json::json!({"additionalContext": c}))),
        (Reply::Context(c), Protocol::Cline) => {
            ok(line(&serde_json::json!({"cancel": false, "contextModification": c})))
        }
        (Reply::Context(c), Protocol::Opencode) => ok(line(&serde_json::json!({"context": c}))),
        (Reply::Block(r), Protocol::Opencode) => {
            Rendered { stdout: line(&serde_json::json!({"block": r})), stderr: format!("{r}\n"), code: BLOCK }
        }
        (Reply::Block(r), Protocol::Cline) => ok(line(&serde_json::json!({"cancel": true, "errorMessage": r}))),
        (Reply::Watch(c, w), _) => {
            let mut out = serde_json::json!({"hookEventName": event, "watchPaths": w});
            if !c.is_empty() {
                out["additionalContext"] = c.clone().into();
            }
            ok(line(&serde_json::json!({"hookSpecificOutput": out})))
        }
        // Claude reads stderr on exit 2; Codex reads `decision: block` from stdout
        // (`@openai/codex@0.171.0-linux-x64:vendor/x86_64-unknown-linux-musl/bin/codex@4555165`).
        (Reply::Block(r), Protocol::Claude) => Rendered {
            stdout: line(&serde_json::json!({"decision": "block", "reason": r})),
            stderr: format!("{r}\n"),
            code: BLOCK,
        },
        (Reply::Block(r), Protocol::Gemini) => Rendered {
            stdout: line(&serde_json::json!({"decision": "deny", "reason": r})),
            stderr: format!("{r}\n"),
            code: BLOCK,
        },
        (Reply::Block(r), Protocol::Copilot) => ok(line(&serde_json::json!({
            "permissionDecision": "deny", "permissionDecisionReason": r
        }))),
    }
}

fn line(v: &serde_json::Value) -> String {
    format!("{v}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_reply_block_per_protocol() {
        let b = Reply::Block("no".into());
        assert_eq!(render(&b, Protocol::Claude, "PreToolUse").code, BLOCK);
        let g = render(&b, Protocol::Gemini, "BeforeTool");
        assert_eq!((g.code, g.stdout.as_str()), (BLOCK, "{\"decision\":\"deny\",\"reason\":\"no\"}\n"));
        let c = render(&b, Protocol::Copilot, "preToolUse");
        assert_eq!(c.code, 0);
        assert!(c.stdout.contains("\"permissionDecision\":\"deny\""));
        let ctx = render(&Reply::Context("hi".into()), Protocol::Claude, "SessionStart");
        assert!(ctx.stdout.contains("\"hookEventName\":\"SessionStart\""));
        assert_eq!(render(&Reply::Pass, Protocol::Gemini, "x").stdout, "");
        let a = render(&Reply::Allow("helper".into()), Protocol::Copilot, "preToolUse");
        assert!(a.stdout.contains("\"permissionDecision\":\"allow\""), "{}", a.stdout);
        assert_eq!(render(&Reply::Allow("helper".into()), Protocol::Claude, "PreToolUse").stdout, "");
        let cl = render(&b, Protocol::Cline, "PreToolUse");
        assert_eq!((cl.code, cl.stdout.as_str()), (0, "{\"cancel\":true,\"errorMessage\":\"no\"}\n"));
        let oc = render(&b, Protocol::Opencode, "tool.execute.before");
        assert_eq!((oc.code, oc.stdout.as_str()), (BLOCK, "{\"block\":\"no\"}\n"));
        let oc = render(&Reply::Context("hi".into()), Protocol::Opencode, "experimental.chat.system.transform");
        assert_eq!((oc.code, oc.stdout.as_str()), (0, "{\"context\":\"hi\"}\n"));
    }

    #[test]
    fn hook_reply_hermes_json_on_stdout_exit_0() {
        let b = render(&Reply::Block("no".into()), Protocol::Hermes, "pre_tool_call");
        assert_eq!(
            (b.code, b.stdout.as_str(), b.stderr.as_str()),
            (0, "{\"action\":\"block\",\"message\":\"no\"}\n", "")
        );
        let c = render(&Reply::Context("hi".into()), Protocol::Hermes, "pre_llm_call");
        assert_eq!(c.stdout, "{\"context\":\"hi\"}\n");
        assert_eq!(render(&Reply::Pass, Protocol::Hermes, "pre_tool_call").stdout, "");
        assert_eq!(render(&Reply::Watch(String::new(), vec!["/p".into()]), Protocol::Hermes, "x").stdout, "");
    }

    #[test]
    fn hook_reply_cursor_json_on_stdout_exit_0() {
        let cu = render(&Reply::Block("no".into()), Protocol::Cursor, "preToolUse");
        assert_eq!(
            (cu.code, cu.stdout.as_str(), cu.stderr.as_str()),
            (0, "{\"permission\":\"deny\",\"user_message\":\"no\",\"agent_message\":\"no\"}\n", "")
        );
        let ctx = render(&Reply::Context("hi".into()), Protocol::Cursor, "sessionStart");
        assert_eq!(ctx.stdout, "{\"additional_context\":\"hi\"}\n");
        // Passing prints a valid empty answer: a fail-closed hook's empty stdout would block.
        assert_eq!(render(&Reply::Pass, Protocol::Cursor, "preToolUse").stdout, "{}\n");
        let w = render(&Reply::Watch("hi".into(), vec!["/p/.planning/config.json".into()]), Protocol::Cursor, "x");
        assert_eq!(w.stdout, "{\"additional_context\":\"hi\"}\n");
    }
}
