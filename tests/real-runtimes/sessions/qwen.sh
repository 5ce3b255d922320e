#!/usr/bin/env bash
# Qwen Code sessions (run.sh --sessions qwen): `qwen -p` with --approval-mode auto-edit (edits
# need no prompt; shell commands only those permissions.allow allows), against the scripted
# mock as an OpenAI chat endpoint. Tools: run_shell_command, write_file, agent.
set -u
. "$RT_LIB/common.sh"
. "$RT_LIB/session.sh"

export OPENAI_API_KEY=sk-test OPENAI_MODEL=mock-model QWEN_TELEMETRY_ENABLED=false
# Qwen's memory extractor runs after a turn with the conversation; it is not the session.
export SS_IGNORE='["managed memory extraction subagent"]'

SS_SHELL='["run_shell_command"]'
SS_WRITE='["write_file"]'
SS_AGENT='["agent"]'
ss_shell_args() { python3 -c 'import json,sys; print(json.dumps({"command": sys.argv[1], "is_background": False}))' "$1"; }
ss_write_args() { python3 -c 'import json,sys; print(json.dumps({"file_path": sys.argv[1], "content": sys.argv[2]}))' "$PROJECT/$1" "$2"; }
ss_agent_args() {
  python3 -c 'import json,sys; print(json.dumps({"subagent_type": sys.argv[1], "description": "plan", "prompt": sys.argv[2]}))' "$1" "$2"
}
ss_cli() {
  (cd "$PROJECT" && OPENAI_BASE_URL=$MOCK_URL/v1 rt_timeout 200 qwen -p "$2" --approval-mode auto-edit \
    --output-format json </dev/null >"$RT_OUT/$1.out" 2>"$RT_OUT/$1.err")
}
ss_planner_tools() {
  rt_frontmatter "$(rt_json "$RT_EXPECT" 'd["paths"]["agents"]["msd-planner"]')" tools | tr ',' '\n' | tr -d " []'\""
}
ss_statusline_cmd() {
  local f="$HOME/.qwen/settings.json"
  [ "$RT_SCOPE" = local ] && f="$PROJECT/.qwen/settings.json"
  ss_settings_value "$f" 'd.get("ui",{}).get("statusLine",{}).get("command","")'
}

ss_main
