#!/usr/bin/env bash
# GitHub Copilot CLI sessions (run.sh --sessions copilot): `copilot -p --allow-tool write` (file
# edits need no prompt, like Claude's acceptEdits; no --allow-all-tools, so shell commands need
# the user's approval, which `-p` cannot ask for: the helper runs because msd's preToolUse guard,
# registered with --allow-helper bash, answers `allow` for it), the openai provider pointed at the scripted mock
# (COPILOT_PROVIDER_BASE_URL). Local: the folder trusted for the session, as msd's note says.
# Tools: bash, create, task.
set -u
. "$RT_LIB/common.sh"
. "$RT_LIB/session.sh"

export COPILOT_PKG_CACHE_HOME=$MSD_RT_CACHE/copilot/pkg-cache COPILOT_AUTO_UPDATE=false
export COPILOT_OFFLINE=true COPILOT_MODEL=gpt-4.1 COPILOT_PROVIDER_API_KEY=sk-test
export COPILOT_PROVIDER_TYPE=openai NO_COLOR=1

SS_SHELL='["bash", "shell"]'
SS_WRITE='["create", "write"]'
SS_AGENT='["task"]'
ss_shell_args() { python3 -c 'import json,sys; print(json.dumps({"command": sys.argv[1], "description": "msd helper", "mode": "sync", "initial_wait": 30}))' "$1"; }
ss_write_args() { python3 -c 'import json,sys; print(json.dumps({"path": sys.argv[1], "file_text": sys.argv[2]}))' "$PROJECT/$1" "$2"; }
ss_agent_args() {
  python3 -c 'import json,sys; print(json.dumps({"agent_type": sys.argv[1], "name": "planner", "description": "plan", "prompt": sys.argv[2]}))' "$1" "$2"
}
ss_cli() {
  local trust=()
  [ "$RT_SCOPE" = local ] && trust=(--trust-folder)
  (cd "$PROJECT" && COPILOT_PROVIDER_BASE_URL=$MOCK_URL/v1 rt_timeout 200 copilot -p "$2" --allow-tool write "${trust[@]}" \
    --log-dir "$RT_OUT/log-$1" --log-level debug </dev/null >"$RT_OUT/$1.out" 2>"$RT_OUT/$1.err")
}
# The planner declares Copilot's tool aliases (runtimes/copilot: read, edit, execute, search);
# the subagent is offered the tools they stand for (evidence/copilot.md).
ss_planner_tools() {
  rt_frontmatter "$(rt_json "$RT_EXPECT" 'd["paths"]["agents"]["msd-planner"]')" tools | tr ',' '\n' | tr -d " []'\"" |
    sed 's/^read$/view/; s/^execute$/bash/; s/^search$/grep\nglob/'
}
ss_statusline_cmd() {
  [ "$RT_SCOPE" = local ] && return 0
  ss_settings_value "$HOME/.copilot/settings.json" 'd.get("statusLine",{}).get("command","")'
}
[ "$RT_SCOPE" = local ] && ss_na statusline "msd registers Copilot's status line in the user's settings only (runtimes/copilot: statusline is a global entry)"
ss_main
