#!/usr/bin/env bash
# Codex sessions (run.sh --sessions codex): `codex app-server` (lib/codex_rpc.py), a thread with
# one turn against the scripted mock (a custom provider, wire_api "responses"), as a user who
# accepted edits in the workspace works (sandbox workspace-write, approvals on request); an
# approval request is declined (no one to ask). Before it, as a user
# would: the project trusted (local) and msd's hooks reviewed (/hooks), through Codex's own
# config API. Tools: exec_command, apply_patch, spawn_agent.
set -u
. "$RT_LIB/common.sh"
. "$RT_LIB/session.sh"

export OPENAI_API_KEY=sk-test CODEX_DISABLE_UPDATE_CHECK=1
rpc() { local out=$1; shift; rt_timeout 230 python3 "$RT_LIB/codex_rpc.py" --out "$out" --timeout 200 --cwd "$PROJECT" "$@"; }
if [ "$RT_SCOPE" = local ]; then
  python3 -c 'import json,sys; print(json.dumps({"method":"config/batchWrite","params":{"edits":[{"keyPath":"projects.%s.trust_level" % json.dumps(sys.argv[1]),"mergeStrategy":"upsert","value":"trusted"}]}}))' "$PROJECT" |
    rpc "$RT_OUT/trust-project.json" -- codex app-server 2>"$RT_OUT/trust-project.err"
fi
printf '%s\n' "{\"method\":\"hooks/list\",\"params\":{\"cwds\":[\"$PROJECT\"]}}" |
  rpc "$RT_OUT/hooks.json" -- codex app-server 2>"$RT_OUT/hooks.err"
python3 - "$RT_OUT/hooks.json" <<'PY' | rpc "$RT_OUT/trust-hooks.json" -- codex app-server 2>"$RT_OUT/trust-hooks.err"
import json, sys
d = json.load(open(sys.argv[1]))
hk = [r for r in d.get("responses", []) if r["method"] == "hooks/list"]
hk = (hk[0].get("result") or {}).get("data", []) if hk else []
edits = [{"keyPath": "hooks.state.%s.trusted_hash" % json.dumps(h["key"]), "mergeStrategy": "upsert",
          "value": h.get("currentHash", "")} for e in hk for h in e.get("hooks", []) if "msd_run" in (h.get("command") or "")]
print(json.dumps({"method": "config/batchWrite", "params": {"edits": edits, "reloadUserConfig": True}}))
PY

# Codex offers apply_patch, its file-writing tool, only to a model its bundled catalog knows (the
# model's apply_patch_tool_type, "freeform" for every model of 0.171.0's catalog:
# @openai/codex-linux-x64@0.171.0:vendor/x86_64-unknown-linux-musl/bin/codex@4942716); so the
# session names a catalog model (the provider is still the mock) and the mock answers apply_patch
# with a freeform call (Responses `custom_tool_call`, its text the patch).
SS_CODEX_MODEL=${SS_CODEX_MODEL:-gpt-5.5}
SS_SHELL='["exec_command", "shell"]'
SS_WRITE='["apply_patch"]'
SS_AGENT='["spawn_agent"]'
ss_shell_args() { python3 -c 'import json,sys; print(json.dumps({"cmd": sys.argv[1]}))' "$1"; }
ss_write_args() {
  python3 -c 'import json,sys; print(json.dumps({"input": "*** Begin Patch\n*** Add File: %s\n+%s\n*** End Patch\n" % (sys.argv[1], sys.argv[2])}))' "$1" "$2"
}
# spawn_agent returns at once; the subagent runs while the parent waits for it.
export SS_AGENT_WAIT='{"tool": ["wait_agent"], "args": {"targets": ["{{last.agent_id}}"], "timeout_ms": 60000}}'
ss_agent_args() { python3 -c 'import json,sys; print(json.dumps({"agent_type": sys.argv[1], "message": sys.argv[2]}))' "$1" "$2"; }
ss_cli() {
  # The file-writing session names a catalog model (apply_patch, above); the subagent session the
  # mock's own name: 0.171.0 offers spawn_agent to a custom model and not to gpt-5.5 (observed).
  local model=mock-model
  [ "$1" = work ] && model=$SS_CODEX_MODEL
  rpc "$RT_OUT/$1.json" --sandbox workspace-write --approval on-request --turn "$2" -- codex app-server -c model_provider=mock -c 'model_providers.mock.name="mock"' \
    -c "model_providers.mock.base_url=\"$MOCK_URL/v1\"" -c 'model_providers.mock.wire_api="responses"' \
    -c 'model_providers.mock.env_key="OPENAI_API_KEY"' -c "model=\"$model\"" </dev/null 2>"$RT_OUT/$1.err"
}
# Codex agents are roles (TOML, no tool list): the planner must get the tools of the session.
ss_planner_tools() { echo exec_command; }
ss_statusline_cmd() { :; }
ss_na statusline "msd registers no status line for Codex (runtimes/codex has no statusline entry); whether Codex 0.171.0's tui.status_line_provider (@openai/codex-linux-x64@0.171.0:vendor/x86_64-unknown-linux-musl/bin/codex@934128) can run a command is not established here"
ss_main
