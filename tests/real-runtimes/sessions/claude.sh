#!/usr/bin/env bash
# Claude Code sessions (run.sh --sessions claude): `claude -p` in permission mode acceptEdits
# (file edits need no prompt; shell commands only those the settings allow, as for a user who
# accepted edits), against the scripted mock on ANTHROPIC_BASE_URL. Tools: Bash, Write, and the
# agent tool (Agent, formerly Task).
set -u
. "$RT_LIB/common.sh"
. "$RT_LIB/session.sh"

export ANTHROPIC_API_KEY=sk-test CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1
export DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1

SS_SHELL='["Bash"]'
SS_WRITE='["Write"]'
SS_AGENT='["Agent", "Task"]'
ss_shell_args() { python3 -c 'import json,sys; print(json.dumps({"command": sys.argv[1], "description": "msd helper"}))' "$1"; }
ss_write_args() { python3 -c 'import json,sys; print(json.dumps({"file_path": sys.argv[1], "content": sys.argv[2]}))' "$PROJECT/$1" "$2"; }
ss_agent_args() {
  python3 -c 'import json,sys; print(json.dumps({"subagent_type": sys.argv[1], "description": "plan", "prompt": sys.argv[2]}))' "$1" "$2"
}
ss_cli() {
  (cd "$PROJECT" && ANTHROPIC_BASE_URL=$MOCK_URL rt_timeout 200 claude -p "$2" --permission-mode acceptEdits \
    --debug-file "$RT_OUT/$1.debug" --output-format json </dev/null >"$RT_OUT/$1.out" 2>"$RT_OUT/$1.err")
}
ss_planner_tools() {
  rt_frontmatter "$(rt_json "$RT_EXPECT" 'd["paths"]["agents"]["msd-planner"]')" tools | tr ',' '\n' | tr -d ' '
}
ss_statusline_cmd() {
  local f="$HOME/.claude/settings.json"
  [ "$RT_SCOPE" = local ] && f="$PROJECT/.claude/settings.local.json"
  ss_settings_value "$f" 'd.get("statusLine",{}).get("command","")'
}

ss_main
