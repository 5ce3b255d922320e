#!/usr/bin/env bash
# Gemini CLI sessions (run.sh --sessions gemini): `gemini -p` with --approval-mode auto_edit
# (edits need no prompt; shell commands only those a policy allows), against the scripted mock
# on GOOGLE_GEMINI_BASE_URL. Tools: run_shell_command, write_file, invoke_agent.
set -u
. "$RT_LIB/common.sh"
. "$RT_LIB/session.sh"

export GEMINI_API_KEY=sk-test GEMINI_CLI_TRUST_WORKSPACE=true
export GEMINI_TELEMETRY_ENABLED=false GEMINI_CLI_NO_RELAUNCH=true
mkdir -p "$HOME/.gemini"
python3 - "$HOME/.gemini/settings.json" <<'PY'
import json, os, sys
p = sys.argv[1]
d = json.load(open(p)) if os.path.exists(p) and os.path.getsize(p) else {}
d.setdefault("security", {}).setdefault("auth", {})["selectedType"] = "gemini-api-key"
d.setdefault("general", {})["disableAutoUpdate"] = True
d.setdefault("privacy", {})["usageStatisticsEnabled"] = False
json.dump(d, open(p, "w"), indent=2)
PY

SS_SHELL='["run_shell_command"]'
SS_WRITE='["write_file"]'
SS_AGENT='["invoke_agent"]'
ss_shell_args() { python3 -c 'import json,sys; print(json.dumps({"command": sys.argv[1]}))' "$1"; }
ss_write_args() { python3 -c 'import json,sys; print(json.dumps({"file_path": sys.argv[1], "content": sys.argv[2]}))' "$PROJECT/$1" "$2"; }
ss_agent_args() { python3 -c 'import json,sys; print(json.dumps({"agent_name": sys.argv[1], "prompt": sys.argv[2]}))' "$1" "$2"; }
ss_cli() {
  (cd "$PROJECT" && GOOGLE_GEMINI_BASE_URL=$MOCK_URL rt_timeout 200 gemini -m gemini-2.5-flash \
    --approval-mode auto_edit -p "$2" --output-format json </dev/null >"$RT_OUT/$1.out" 2>"$RT_OUT/$1.err")
}
ss_planner_tools() {
  rt_frontmatter "$(rt_json "$RT_EXPECT" 'd["paths"]["agents"]["msd-planner"]')" tools | tr ',' '\n' | tr -d " []'\""
}
ss_statusline_cmd() { :; }

if [ "$RT_SCOPE" = local ]; then
  export SS_WITHHELD=run_shell_command
  ss_na helper "Gemini CLI 0.61.0 loads no project policies (disableWorkspacePolicies = true, @google/gemini-cli@0.61.0:bundle/gemini-3HFX2LNT.js:7880), so headless auto_edit offers no shell tool in a local-only install; msd's install note says so (a global install's policy covers every project)"
  # The user acknowledges the project's agents once (Gemini registers a project agent only then:
  # bundle/chunk-JDPZ4CE3.js:340859, ~/.gemini/acknowledgments/agents.json keyed by sha256).
  python3 - "$HOME/.gemini/acknowledgments/agents.json" "$PROJECT" "$PROJECT/.gemini/agents" <<'PY'
import hashlib, json, os, sys
out, proj, d = sys.argv[1:4]
acks = {}
for f in sorted(os.listdir(d)):
    if f.endswith(".md") and not f.startswith("_"):
        acks[f[:-3]] = hashlib.sha256(open(os.path.join(d, f), "rb").read()).hexdigest()
os.makedirs(os.path.dirname(out), exist_ok=True)
json.dump({proj: acks, os.path.realpath(proj): acks}, open(out, "w"), indent=2)
PY
fi
# Gemini refuses `.env` itself: a path with a segment `.env` (exactly, or its 8.3 short name),
# `.git` or `node_modules` is never "within the workspace" (hasBlockedPathSegment,
# @google/gemini-cli@0.61.0:bundle/chunk-JDPZ4CE3.js:252373-252377, from isPathWithinWorkspace
# :348327-348340), reported as "Path not in workspace". `.env.local` is not blocked there, and
# msd's guard refuses it: the guard check writes that, so msd's refusal is what is checked.
SS_ENV_FILE=.env.local
ss_na statusline "Gemini CLI has no status-line command (its footer is built in; the settings schema has ui.footer toggles and no statusLine: @google/gemini-cli@0.61.0:bundle/chunk-2YTYPKEZ.js:12875)"
ss_main
