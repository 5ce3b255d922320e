# shellcheck shell=bash
# The session body shared by OpenCode and Kilo (run.sh --sessions opencode|kilo): `<cli> run`
# in its default permissions (no --dangerously-skip-permissions), against the scripted mock as
# the anthropic provider (baseURL option). The caller sets OC_CLI, OC_ENV (OPENCODE | KILO).
# Tools: bash, write, task. msd's hooks are its plugin (plugin/msd.js).
set -u
. "$RT_LIB/common.sh"
. "$RT_LIB/session.sh"

export "${OC_ENV}_DISABLE_AUTOUPDATE=1" "${OC_ENV}_DISABLE_MODELS_FETCH=1"
export "${OC_ENV}_DISABLE_LSP_DOWNLOAD=1" "${OC_ENV}_DISABLE_SHARE=1" "${OC_ENV}_DISABLE_DEFAULT_PLUGINS=1"
export ANTHROPIC_API_KEY=sk-test

SS_SHELL='["bash"]'
SS_WRITE='["write"]'
SS_AGENT='["task"]'
ss_shell_args() { python3 -c 'import json,sys; print(json.dumps({"command": sys.argv[1], "description": "msd helper"}))' "$1"; }
ss_write_args() { python3 -c 'import json,sys; print(json.dumps({"filePath": sys.argv[1], "content": sys.argv[2]}))' "$PROJECT/$1" "$2"; }
ss_agent_args() {
  python3 -c 'import json,sys; print(json.dumps({"subagent_type": sys.argv[1], "description": "plan", "prompt": sys.argv[2]}))' "$1" "$2"
}
ss_cli() {
  export "${OC_ENV}_CONFIG_CONTENT={\"provider\":{\"anthropic\":{\"options\":{\"baseURL\":\"$MOCK_URL/v1\",\"apiKey\":\"sk-test\"}}},\"model\":\"anthropic/claude-sonnet-4-5\",\"small_model\":\"anthropic/claude-sonnet-4-5\"}"
  (cd "$PROJECT" && rt_timeout 200 "$OC_CLI" run --print-logs --log-level WARN "$2" </dev/null \
    >"$RT_OUT/$1.out" 2>"$RT_OUT/$1.err")
}
# The planner's tools as the agent file enables them (`tools:` map of name: true).
ss_planner_tools() {
  python3 - "$(rt_json "$RT_EXPECT" 'd["paths"]["agents"]["msd-planner"]')" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
m = re.match(r"^---\n(.*?)\n---", t, re.S)
block = re.search(r"^tools:\n((?:[ \t]+.*\n?)*)", (m.group(1) if m else "") + "\n", re.M)
for name, v in re.findall(r"^\s+([A-Za-z_-]+):\s*(\S+)", block.group(1) if block else "", re.M):
    if v == "true":
        print(name)
PY
}
ss_statusline_cmd() { :; }
