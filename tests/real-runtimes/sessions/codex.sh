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
# Codex's status line is an MCP server (runtimes/codex cites the binary): Codex itself starts the
# server from the config a thread in the project loaded and reads the footer resource with a
# sample thread state, through its app-server (mcpServerStatus/list, mcpServer/resource/read with
# the thread's id: the calls its TUI makes for the thread it shows); `codex mcp list --json`
# (offline) must list it too. PASS when a line comes back.
ss_statusline_check() {
  local core
  core=$(rt_expect_field core)
  rt_timeout 60 codex mcp list --json </dev/null >"$RT_OUT/mcp-list.json" 2>"$RT_OUT/mcp-list.err"
  printf '%s\n' "{\"method\":\"config/read\",\"params\":{\"cwd\":\"$PROJECT\"}}" \
    '{"method":"mcpServerStatus/list","params":{"threadId":"{{thread}}","serverName":"msd-statusline"}}' |
    rpc "$RT_OUT/statusline-list.json" --thread -- codex app-server 2>"$RT_OUT/statusline-list.err"
  python3 - "$RT_OUT" "$core/bin/msd_run" "$PROJECT" <<'PY' >"$RT_OUT/statusline-read.req"
import json, sys
out, helper, project = sys.argv[1:4]
d = json.load(open(out + "/statusline-list.json"))
res = {r["method"]: r.get("result") or {} for r in d.get("responses", [])}
servers = [s for s in res.get("mcpServerStatus/list", {}).get("data", []) if s.get("name") == "msd-statusline"]
uris = [e["resourceUri"] for s in servers for t in (s.get("tools") or {}).values()
        for e in ((t.get("_meta") or {}).get("openai/ui") or {}).get("entrypoints", []) if e.get("type") == "statusline"]
state = {"thread": {"id": "t-1", "name": None, "agent": {"state": "ready"},
                    "model": {"display_name": "mock", "provider": "mock"}, "workspace": {"cwd": project},
                    "usage": {"context": {"used_percentage": 42}}}}
if uris:
    print(json.dumps({"method": "mcpServer/resource/read", "params": {"server": "msd-statusline", "uri": uris[0], "threadId": "{{thread}}",
                      "_meta": {"com.openai/codex-statusline-state": state}}}))
PY
  if [ -s "$RT_OUT/statusline-read.req" ]; then
    rpc "$RT_OUT/statusline-read.json" --thread -- codex app-server <"$RT_OUT/statusline-read.req" 2>"$RT_OUT/statusline-read.err"
  fi
  python3 - "$RT_OUT" "$core/bin/msd_run" "$RT_SCOPE" <<'PY'
import json, os, sys
out, helper, scope = sys.argv[1:4]
def load(name):
    try:
        return json.load(open(os.path.join(out, name)))
    except (OSError, ValueError):
        return None
listed = [s for s in (load("mcp-list.json") or []) if s.get("name") == "msd-statusline"]
t = (listed[0].get("transport") or {}) if listed else {}
if not listed or os.path.realpath(t.get("command") or "") != os.path.realpath(helper) or t.get("args") != ["mcp", "statusline"]:
    print("FAIL `codex mcp list --json` does not list msd-statusline running %s mcp statusline: %s" % (helper, json.dumps(listed)[:300]))
    sys.exit()
res = {r["method"]: r for r in (load("statusline-list.json") or {}).get("responses", [])}
cfg = ((res.get("config/read") or {}).get("result") or {}).get("config") or {}
if (cfg.get("features") or {}).get("tui_extensions_statusline") is not True:
    print("FAIL Codex's config has the feature tui_extensions_statusline off: %s" % json.dumps(cfg.get("features"))[:300])
    sys.exit()
provider = (cfg.get("tui") or {}).get("status_line_provider")
if scope == "global" and provider != {"server": "msd-statusline", "tool": "statusline"}:
    print("FAIL Codex's tui.status_line_provider is %s, not msd's" % json.dumps(provider))
    sys.exit()
read = [r for r in (load("statusline-read.json") or {}).get("responses", []) if r["method"] == "mcpServer/resource/read"]
if not read:
    print("FAIL Codex lists no statusline entrypoint of msd-statusline (mcpServerStatus/list)")
    sys.exit()
contents = (read[0].get("result") or {}).get("contents") or []
if not contents:
    print("FAIL mcpServer/resource/read answered %s" % json.dumps(read[0].get("error") or read[0].get("result"))[:300])
    sys.exit()
def leaves(v):
    if isinstance(v, str):
        return v
    if isinstance(v, dict):
        return "".join(leaves(c) for c in v.get("children") or [] if c is not None)
    return ""
line = leaves(json.loads(contents[0].get("text") or "null"))
if not line.strip():
    print("FAIL the footer resource holds no text: %s" % json.dumps(contents[0])[:300])
    sys.exit()
how = "provider set" if scope == "global" else "provider: the user's pick in /statusline (Codex reads no project tui)"
print("PASS printed (Codex started msd-statusline and read its footer; %s): %s" % (how, line))
PY
}
ss_main
