#!/usr/bin/env bash
# The Claude Code plugin channel against the real Claude Code (the pin of probes/claude.sh, npm
# into the tier's cache), offline, in a sandbox HOME:
#
#   tests/real-runtimes/plugin.sh MARKETPLACE_DIR     (written by `msd-install emit --plugin`)
#
# 1. `claude plugin validate` passes for the marketplace and for the plugin;
# 2. `claude plugin marketplace add DIR` and `claude plugin install msd-core@msd-core` succeed,
#    and the installed copy (installed_plugins.json's installPath) names no path of DIR;
# 3. a `claude -p` session against lib/mock_model.py (a dummy key, no network) lists every skill
#    and agent of the plugin, runs its SessionStart hooks with status 0, and a Bash command of the
#    model finds the helper as "${CLAUDE_PLUGIN_ROOT}/msd-core/bin/msd_run";
# 4. /msd-core:msd-help sends the text of the workflow it includes.
# One PASS/FAIL line per check; exit 1 on any failure.
set -u
RT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export RT_LIB="$RT_ROOT/lib"
# shellcheck source=lib/common.sh
. "$RT_LIB/common.sh"

market=$(cd "${1:?usage: plugin.sh MARKETPLACE_DIR}" && pwd) || exit 2
plugin="$market/plugins/msd-core"
probe="$RT_ROOT/probes/claude.sh"
bin=$(rt_install_pkg claude "$(rt_probe_pin "$probe")" "$probe") || exit 1
node=$(rt_node_dir "$(rt_probe_node "$probe")") || exit 1
sb=$(mktemp -d "${TMPDIR:-/tmp}/rt-plugin.XXXXXX")
[ "${MSD_RT_KEEP:-0}" = 1 ] || trap 'rm -rf "$sb"' EXIT
export RT_OUT="$sb/out"
mkdir -p "$RT_OUT" "$sb/home" "$sb/project"
for v in "${RT_HOME_VARS[@]}"; do unset "$v"; done
export HOME="$sb/home" PATH="$bin:$node:$PATH"
export ANTHROPIC_API_KEY=sk-test CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1
export DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1
failed=0
check() { # <what> <ok 0/1> [why]
  if [ "$2" = 0 ]; then echo "PASS  plugin: $1"; else echo "FAIL  plugin: $1${3:+ ($3)}"; failed=1; fi
}
run() { # <log> <cmd...>: 0/1 and the log kept
  local log=$1; shift
  rt_timeout 120 "$@" </dev/null >"$RT_OUT/$log" 2>&1
}

# 1. claude plugin validate
run validate-market.log claude plugin validate "$market"
check "claude plugin validate $market" $? "$(tail -n3 "$RT_OUT/validate-market.log" | tr '\n' ' ')"
run validate-plugin.log claude plugin validate "$plugin"
check "claude plugin validate $plugin" $? "$(tail -n3 "$RT_OUT/validate-plugin.log" | tr '\n' ' ')"

# 2. marketplace add, install; the installed copy names no path of the marketplace directory.
run market-add.log claude plugin marketplace add "$market"
check "claude plugin marketplace add" $? "$(tail -n2 "$RT_OUT/market-add.log" | tr '\n' ' ')"
run install.log claude plugin install msd-core@msd-core
check "claude plugin install msd-core@msd-core" $? "$(tail -n2 "$RT_OUT/install.log" | tr '\n' ' ')"
installed=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["plugins"]["msd-core@msd-core"][0]["installPath"])' \
  "$HOME/.claude/plugins/installed_plugins.json" 2>/dev/null)
if [ -n "$installed" ] && [ -d "$installed" ]; then
  n=$(grep -rlF -- "$market" "$installed" | wc -l)
  check "the installed copy ($installed) names no path of $market" "$([ "$n" -eq 0 ] && echo 0 || echo 1)" "$n files do"
else
  check "installed_plugins.json names an installPath" 1 "none"
fi

# 3. A session: listings, hooks, the helper from a Bash command of the model.
tool_args='{"command":"\"${CLAUDE_PLUGIN_ROOT}/msd-core/bin/msd_run\" --version","description":"msd_run version"}'
MOCK_TAG=hi rt_mock_start --tool-call Bash --tool-args "$tool_args" || exit 1
(cd "$sb/project" && ANTHROPIC_BASE_URL=$MOCK_URL rt_timeout 120 claude -p "hi" --allowedTools Bash \
  --debug-file "$RT_OUT/hi.debug" --output-format json </dev/null >"$RT_OUT/hi.out" 2>"$RT_OUT/hi.err")
rc=$?
rt_mock_stop
rt_mock_text "$MOCK_REC" "$RT_OUT/hi.txt"
check "claude -p exits 0 against the mock model" $rc "$(tail -c 300 "$RT_OUT/hi.err" | tr '\n' ' ')"
listing() { # <text> <heading>: names of "- name: ..." lines after the heading's first occurrence
  awk -v h="$2" 'index($0,h)==1{on=1;next} on&&/^$/{if(n)exit;next} on&&/^- /{n++; s=substr($0,3); sub(/:[^:]*$/,"",s); sub(/: .*/,"",s); print s}' "$1" | sort -u
}
names() { # <dir> <kind>: msd-core:<name> of each skill dir / agent file
  if [ "$2" = skills ]; then ls "$1/skills"; else ls "$1/agents" | sed 's/\.md$//'; fi | sed 's/^/msd-core:/' | sort -u
}
for kind in skills agents; do
  heading="The following skills are available"
  [ $kind = agents ] && heading="Available agent types"
  listing "$RT_OUT/hi.txt" "$heading" >"$RT_OUT/seen-$kind.txt"
  names "$plugin" $kind >"$RT_OUT/want-$kind.txt"
  missing=$(comm -23 "$RT_OUT/want-$kind.txt" "$RT_OUT/seen-$kind.txt" | tr '\n' ' ')
  check "every $kind of the plugin listed to the model ($(wc -l <"$RT_OUT/want-$kind.txt"))" \
    "$([ -z "$missing" ] && echo 0 || echo 1)" "missing: ${missing:0:300}"
done
runs=$(grep -acE 'Hooks: SessionStart(:[a-z]+)? .*msd_run.* \(plugin msd-core@msd-core\) finished with status 0' "$RT_OUT/hi.debug")
check "the SessionStart hook (msd_run hook session-start) ran once, status 0" "$([ "$runs" -eq 1 ] && echo 0 || echo 1)" "ran $runs times"
envs=$(grep -acE 'Hooks: SessionStart(:[a-z]+)? .*CLAUDE_ENV_FILE.* \(plugin msd-core@msd-core\) finished with status 0' "$RT_OUT/hi.debug")
check "the SessionStart hook exporting CLAUDE_PLUGIN_ROOT ran, status 0" "$([ "$envs" -eq 1 ] && echo 0 || echo 1)" "ran $envs times"
want=$("$plugin/msd-core/bin/msd_run" --version)
python3 - "$MOCK_REC" "$want" <<'PY'
import json, sys
want = sys.argv[2]
results = []
for line in open(sys.argv[1]):
    body = json.loads(line).get("body") or {}
    for m in body.get("messages", []):
        for c in m.get("content", []) if isinstance(m.get("content"), list) else []:
            if c.get("type") == "tool_result":
                results.append(json.dumps(c.get("content")))
sys.exit(0 if any(want in r for r in results) else 1)
PY
check "a Bash command of the model runs \"\${CLAUDE_PLUGIN_ROOT}/msd-core/bin/msd_run\" ($want)" $? \
  "no tool result holds it: $(grep -ao 'tool_result.\{0,200\}' "$RT_OUT/mock-hi.jsonl" | tail -n1)"

# 4. /msd-core:msd-help: the workflow it includes reaches the model.
MOCK_TAG=help rt_mock_start || exit 1
(cd "$sb/project" && ANTHROPIC_BASE_URL=$MOCK_URL rt_timeout 120 claude -p "/msd-core:msd-help" \
  --debug-file "$RT_OUT/help.debug" --output-format json </dev/null >"$RT_OUT/help.out" 2>"$RT_OUT/help.err")
rc=$?
rt_mock_stop
rt_mock_text "$MOCK_REC" "$RT_OUT/help.txt"
why=$(rt_text_has_file "$RT_OUT/help.txt" "$plugin/msd-core/workflows/help.md")
check "/msd-core:msd-help sends its workflow (@\${CLAUDE_PLUGIN_ROOT}/msd-core/workflows/help.md)" \
  "$([ $rc -eq 0 ] && [ -z "$why" ] && echo 0 || echo 1)" "claude exited $rc; $why"
grep -aE '\[(WARN|ERROR)\]' "$RT_OUT/hi.debug" "$RT_OUT/help.debug" | grep -a 'msd' | grep -av 'delisted' >"$RT_OUT/warnings.txt"
check "no load warning or error names msd" "$([ -s "$RT_OUT/warnings.txt" ] && echo 1 || echo 0)" \
  "$(head -n2 "$RT_OUT/warnings.txt" | cut -c1-300 | tr '\n' ' ')"
[ "$failed" = 0 ] || echo "plugin: the sandbox's logs are in $RT_OUT (MSD_RT_KEEP=1 keeps them)"
exit "$failed"
