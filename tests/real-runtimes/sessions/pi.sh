#!/usr/bin/env bash
# Pi sessions (run.sh --sessions pi): `pi -p` (print mode, one prompt, no session file) against
# the scripted mock as a custom provider in ~/.pi/agent/models.json (api openai-completions, as
# probes/pi.sh does). Pi has no approval mode and no permission prompts (README.md:474, "No
# permission popups"): its normal mode runs every tool call. Tools: bash, write.
#
# msd's hooks in Pi are an extension msd writes (<agent dir>/extensions/msd.js, or
# <project>/.pi/extensions/msd.js; loaded by dist/core/extensions/loader.js:459-464): its
# tool_call handler runs the guard and blocks with msd's reason (dist/core/extensions/
# runner.js:593), its before_agent_start handler appends the session's line to the system prompt
# (:700). Guard and context are checked as for every runtime.
#
# What msd cannot check in Pi, and why (@mariozechner/pi-coding-agent@0.73.1, packaged source):
#  - no subagents (README.md:472, "No sub-agents"; runtimes/pi has no agents artifact);
#  - the footer's status line shows only what extensions set with setStatus
#    (dist/modes/interactive/components/footer.js:188-196), no command.
set -u
. "$RT_LIB/common.sh"
. "$RT_LIB/session.sh"

export PI_OFFLINE=1
PI_PKG=@mariozechner/pi-coding-agent@0.73.1

# The mock as a provider of the agent dir (both scopes read ~/.pi/agent/models.json; msd owns
# no entry there).
pi_models() {
  mkdir -p "$HOME/.pi/agent"
  python3 - "$HOME/.pi/agent/models.json" "$MOCK_URL" <<'PY'
import json, os, sys
p, url = sys.argv[1:3]
d = json.load(open(p)) if os.path.exists(p) and os.path.getsize(p) else {}
d.setdefault("providers", {})["mock"] = {
    "baseUrl": url + "/v1", "api": "openai-completions", "apiKey": "sk-test",
    "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
    "models": [{"id": "mock-model"}]}
json.dump(d, open(p, "w"), indent=2)
PY
}

SS_SHELL='["bash"]'
SS_WRITE='["write"]'
SS_AGENT='[]'
ss_shell_args() { python3 -c 'import json,sys; print(json.dumps({"command": sys.argv[1]}))' "$1"; }
ss_write_args() { python3 -c 'import json,sys; print(json.dumps({"path": sys.argv[1], "content": sys.argv[2]}))' "$PROJECT/$1" "$2"; }
ss_agent_args() { echo '{}'; }
ss_cli() {
  pi_models
  (cd "$PROJECT" && rt_timeout 200 pi --no-session --provider mock --model mock-model -p "$2" \
    </dev/null >"$RT_OUT/$1.out" 2>"$RT_OUT/$1.err")
}
ss_planner_tools() { :; }
ss_statusline_cmd() { :; }

ss_na subagent "Pi has no subagents ($PI_PKG:README.md:472, \"No sub-agents\"); msd installs no agents for Pi (runtimes/pi has no agents artifact)"
ss_na statusline "Pi has no status-line command: no settings key for one ($PI_PKG:dist/core/settings-manager.d.ts:57-94); the footer shows only texts extensions set with setStatus (dist/modes/interactive/components/footer.js:188-196)"
ss_main
