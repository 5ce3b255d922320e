//! `msd_run mcp <server>`: a Model Context Protocol server on stdio, for a runtime that takes a
//! feature only from one. Codex's custom status line is such a feature: a stdio MCP server whose
//! tool advertises a `statusline` entrypoint, read with `resources/read` (the bundled skill
//! `create-statusline/SKILL.md` of `@openai/codex-linux-x64@0.171.0:vendor/
//! x86_64-unknown-linux-musl/bin/codex@6005548`); [`statusline`] is that server.
//!
//! The transport is MCP's stdio one: one JSON-RPC 2.0 message per line, in both directions,
//! nothing else on stdout. A request gets one answer line; a notification (no `id`) none; a line
//! that is no JSON is a parse error (`-32700`), one that is no request an invalid request
//! (`-32600`), an unknown method `-32601`, bad parameters `-32602`. The server ends at the end
//! of its input (the runtime closed the pipe), with status 0.
//!
//! No MCP crate: the few methods a provider answers (`initialize`, `ping`, `tools/list`,
//! `tools/call`, `resources/list`, `resources/templates/list`, `resources/read`) are plain JSON,
//! and msd_run stays small and quick to start.

use std::io::{BufRead, Write};
use std::process::ExitCode;

use clap::ValueEnum;
use serde_json::{Value, json};

pub(crate) mod statusline;

/// The servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Server {
    /// Codex's custom status line (`tui.status_line_provider`): model, phase, directory,
    /// context usage, the line `msd_run hook statusline` prints for the other runtimes.
    Statusline,
}

/// `msd_run mcp` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct McpArgs {
    /// Which server.
    #[arg(value_enum)]
    pub server: Server,
}

/// The MCP protocol versions this server speaks; it answers a client's own when it is one of
/// them, else the newest.
const PROTOCOL_VERSIONS: [&str; 3] = ["2025-06-18", "2025-03-26", "2024-11-05"];

/// A failed request: the JSON-RPC error code and its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RpcError {
    pub code: i64,
    pub message: String,
}

impl RpcError {
    pub(crate) fn method_not_found(method: &str) -> RpcError {
        RpcError { code: -32601, message: format!("Method not found: {method}") }
    }

    pub(crate) fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError { code: -32602, message: message.into() }
    }
}

/// What one server answers: its name and the methods past `initialize` and `ping`.
pub(crate) trait Handler {
    /// The server's name in `initialize`'s `serverInfo`.
    fn name(&self) -> &'static str;
    /// The result of `method` with `params`.
    fn call(&mut self, method: &str, params: &Value) -> Result<Value, RpcError>;
}

/// The answer line to one input line, `None` for a notification (or a blank line).
pub(crate) fn respond(line: &[u8], handler: &mut dyn Handler) -> Option<Value> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let reply = |id: Value, r: Result<Value, RpcError>| match r {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(e) => json!({"jsonrpc": "2.0", "id": id, "error": {"code": e.code, "message": e.message}}),
    };
    let Ok(msg) = serde_json::from_slice::<Value>(line) else {
        return Some(reply(Value::Null, Err(RpcError { code: -32700, message: "Parse error".into() })));
    };
    let invalid = || Some(reply(Value::Null, Err(RpcError { code: -32600, message: "Invalid request".into() })));
    let Some(obj) = msg.as_object() else { return invalid() };
    let Some(method) = obj.get("method").and_then(Value::as_str) else {
        // A response to a request of ours (this server sends none) or garbage: answer only
        // what claims to be a request.
        return if obj.contains_key("id") && !obj.contains_key("result") && !obj.contains_key("error") {
            invalid()
        } else {
            None
        };
    };
    let id = obj.get("id")?.clone();
    if !(id.is_string() || id.is_number()) {
        return invalid();
    }
    let params = obj.get("params").cloned().unwrap_or(Value::Null);
    let result = match method {
        "initialize" => Ok(initialize(&params, handler.name())),
        "ping" => Ok(json!({})),
        _ => handler.call(method, &params),
    };
    Some(reply(id, result))
}

fn initialize(params: &Value, name: &str) -> Value {
    let asked = params.get("protocolVersion").and_then(Value::as_str);
    let version = asked.filter(|v| PROTOCOL_VERSIONS.contains(v)).unwrap_or(PROTOCOL_VERSIONS[0]);
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {}, "resources": {}},
        "serverInfo": {"name": name, "version": env!("CARGO_PKG_VERSION")},
    })
}

/// Serves `handler` over `input` and `output` until the input ends.
pub(crate) fn serve(input: impl BufRead, mut output: impl Write, handler: &mut dyn Handler) -> std::io::Result<()> {
    for line in input.split(b'\n') {
        if let Some(answer) = respond(&line?, handler) {
            let mut text = serde_json::to_vec(&answer).map_err(std::io::Error::other)?;
            text.push(b'\n');
            output.write_all(&text)?;
            output.flush()?;
        }
    }
    Ok(())
}

/// Runs a server on this process's stdin and stdout.
pub(crate) fn run(a: &McpArgs) -> ExitCode {
    let mut handler = match a.server {
        Server::Statusline => statusline::Statusline::new(),
    };
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    match serve(stdin, stdout, &mut handler) {
        Ok(()) => ExitCode::SUCCESS,
        // The runtime went away mid-answer (a closed pipe): nothing left to tell anyone.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("msd_run mcp: {e}");
            crate::RunExit::Io.into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Echo;
    impl Handler for Echo {
        fn name(&self) -> &'static str {
            "echo"
        }
        fn call(&mut self, method: &str, params: &Value) -> Result<Value, RpcError> {
            match method {
                "echo" => Ok(params.clone()),
                "bad" => Err(RpcError::invalid_params("no")),
                _ => Err(RpcError::method_not_found(method)),
            }
        }
    }

    fn one(line: &str) -> Option<Value> {
        respond(line.as_bytes(), &mut Echo)
    }

    #[test]
    fn mcp_answers_requests_and_keeps_quiet_on_notifications() {
        let init =
            one(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}"#).unwrap();
        assert_eq!(init["id"], 1);
        assert_eq!(init["result"]["protocolVersion"], "2025-03-26", "the client's version when known");
        assert_eq!(init["result"]["serverInfo"]["name"], "echo");
        let newest =
            one(r#"{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"2099-01-01"}}"#)
                .unwrap();
        assert_eq!(newest["result"]["protocolVersion"], PROTOCOL_VERSIONS[0]);
        assert_eq!(newest["id"], "a");
        assert_eq!(one(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#), None);
        assert_eq!(one("  \r"), None);
        assert_eq!(one(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#).unwrap()["result"], json!({}));
        assert_eq!(
            one(r#"{"jsonrpc":"2.0","id":3,"method":"echo","params":{"x":1}}"#).unwrap()["result"],
            json!({"x":1})
        );
        // A response to nothing we asked is not answered.
        assert_eq!(one(r#"{"jsonrpc":"2.0","id":9,"result":{}}"#), None);
    }

    #[test]
    fn mcp_errors_have_their_json_rpc_codes() {
        let code = |l: &str| one(l).unwrap()["error"]["code"].as_i64().unwrap();
        assert_eq!(code("{not json"), -32700);
        assert_eq!(one("{not json").unwrap()["id"], Value::Null);
        assert_eq!(code("[1,2]"), -32600);
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#), -32600);
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":4}"#), -32600);
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":5,"method":"nope"}"#), -32601);
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":6,"method":"bad"}"#), -32602);
    }

    #[test]
    fn mcp_serves_line_by_line_until_the_input_ends() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"echo\",\"params\":[\"\xc3\xa9\"]}";
        let mut out = Vec::new();
        serve(&input[..], &mut out, &mut Echo).unwrap();
        let lines: Vec<Value> =
            String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(lines[0]["id"], 1);
        assert_eq!(lines[1]["result"], json!(["é"]), "the last line needs no newline");
    }
}
