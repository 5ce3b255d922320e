#!/usr/bin/env bash
# Cline sessions (run.sh --sessions cline): `cline --json "<prompt>"` (one task, Cline's own
# default approvals), the openai-compatible provider pointed at the scripted mock by
# `cline auth`. Tools: run_commands, write_to_file, and each agent config as a tool
# `subagent_<name>` (`msd-planner` -> `subagent_msd_planner`, argument `prompt`:
# @cline/core@0.0.86:dist/index.js:563, Zj and U3). msd installs no status line for Cline, and
# registers no guard there (a Cline hook can only stop the whole task).
set -u
. "$RT_LIB/common.sh"
. "$RT_LIB/session.sh"
. "$RT_LIB/cline_hub.sh"

SS_SHELL='["run_commands", "execute_command"]'
SS_WRITE='["write_to_file", "editor"]'
SS_AGENT='["subagent_msd_planner"]'
ss_shell_args() { python3 -c 'import json,sys; print(json.dumps({"commands": [sys.argv[1]], "command": sys.argv[1], "requires_approval": False}))' "$1"; }
ss_write_args() { python3 -c 'import json,sys; print(json.dumps({"path": sys.argv[1], "absolutePath": sys.argv[2], "content": sys.argv[3]}))' "$1" "$PROJECT/$1" "$2"; }
ss_agent_args() { python3 -c 'import json,sys; print(json.dumps({"prompt": sys.argv[1]}))' "$2"; }
ss_cli() {
  rt_timeout 60 cline auth -p openai -k sk-test -m mock-model -b "$MOCK_URL/v1" </dev/null >"$RT_OUT/$1.auth" 2>&1
  (cd "$PROJECT" && rt_timeout 200 cline --json "$2" </dev/null >"$RT_OUT/$1.out" 2>"$RT_OUT/$1.err")
}
ss_planner_tools() {
  rt_frontmatter "$(rt_json "$RT_EXPECT" 'd["paths"]["agents"]["msd-planner"]')" tools | tr ',' '\n' | tr -d " []'\""
}
ss_statusline_cmd() { :; }

ss_na guard "Cline 3.0.65 cannot refuse one tool call from a hook (cancel: true stops the whole task: @cline/cli-linux-x64@3.0.65:bin/cline@108201047), so msd registers no guard on Cline and its install note says so"
ss_na statusline "msd registers no status line for Cline: the Cline CLI has no status-line command (nothing in @cline/cli-linux-x64@3.0.65:bin/cline reads one; its only statusLine, @120341577, is Claude Code's settings schema bundled for its Claude Code provider)"
ss_main
