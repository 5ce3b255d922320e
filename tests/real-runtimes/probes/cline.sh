#!/usr/bin/env bash
# pin: cline@3.0.65
# node: 20
#
# Cline CLI, offline: `cline auth -p openai` points the openai-compatible provider at the mock
# model (base URL on 127.0.0.1, dummy key); `cline --json "<prompt>"` runs one task. What the
# first request carries proves what loaded: the `skills` tool lists the skills Cline found; a
# "/name" prompt is replaced by the workflow's (or skill's) instructions when Cline knows the
# name, and `@path` mentions in it arrive as <file_content>. msd writes workflows in both scopes
# (global <CLINE_DIR>/workflows, local .clinerules/workflows): each is run as a slash command;
# and agent configs (<CLINE_DIR>/agents, .cline/agents): each is a `subagent_<name>` tool.
set -u
. "$RT_LIB/common.sh"

cline_dir=${CLINE_DIR:-$HOME/.cline}

. "$RT_LIB/cline_hub.sh"

# cline_task <tag> <prompt> [mock args...]: one task against a fresh mock.
cline_task() {
  local tag=$1 prompt=$2 rc
  shift 2
  MOCK_TAG=$tag rt_mock_start "$@" || { rt_fail "$tag: mock did not start"; return 1; }
  rt_timeout 60 cline auth -p openai -k sk-test -m mock-model -b "$MOCK_URL/v1" </dev/null \
    >"$RT_OUT/$tag.auth" 2>&1 || rt_fail "$tag: cline auth exited $? ($(tail -c 200 "$RT_OUT/$tag.auth" | tr '\n' ' '))"
  rt_timeout 120 cline --json "$prompt" </dev/null >"$RT_OUT/$tag.out" 2>"$RT_OUT/$tag.err"
  rc=$?
  rt_mock_stop
  rt_mock_text "$MOCK_REC" "$RT_OUT/$tag.txt"
  [ $rc -eq 0 ] || rt_fail "$tag: cline exited $rc ($(tail -c 300 "$RT_OUT/$tag.err" | tr '\n' ' '))"
  [ -s "$MOCK_REC" ] || rt_fail "$tag: cline sent nothing to the mock model"
  return 0
}

# first_user <record> : the text of the first user message of the first request
first_user() {
  python3 - "$1" <<'PY'
import json, sys
try:
    b = json.loads(open(sys.argv[1]).readline())["body"]
except Exception:
    sys.exit(0)
for m in b.get("messages", []):
    if m.get("role") == "user":
        c = m.get("content")
        if isinstance(c, list):
            c = "\n".join(x.get("text", "") for x in c if isinstance(x, dict))
        print(c)
        break
PY
}

# warnings of Cline's own log that name our files
cline_log_scan() {
  local log
  for log in "$cline_dir"/data/logs/*.log; do
    [ -f "$log" ] && rt_log_our_warnings "$log" '"level":(40|50)|\b(warn|error)\b'
  done
}

# 1. A task with a plain prompt and one harmless shell call: the skills Cline offers the model
# (first request), and msd's hook as Cline runs it (below).
cline_task hi "hello there" \
  --tool-call run_commands --tool-args '{"commands":["echo cline-probe"],"requires_approval":false}'
python3 - "$RT_OUT/mock-hi.jsonl" >"$RT_OUT/seen-skills.txt" <<'PY'
import json, re, sys
b = json.loads(open(sys.argv[1]).readline())["body"]
for t in b.get("tools", []):
    f = t.get("function", t)
    if f.get("name") == "skills":
        m = re.search(r"Available skills: (.*?)\.?$", f.get("description", ""), re.S)
        if m:
            print("\n".join(x.strip() for x in m.group(1).split(",")))
PY
# Agents (global: <CLINE_DIR>/agents, local: .cline/agents) are agent configs: each one Cline
# loads is a tool `subagent_<name>` of the first request, described `Use the "<name>" subagent:`
# (@cline/core@0.0.86:dist/index.js:563, U3); a config it refuses is only logged.
python3 - "$RT_OUT/mock-hi.jsonl" >"$RT_OUT/seen-agents.txt" <<'PY'
import json, re, sys
b = json.loads(open(sys.argv[1]).readline())["body"]
for t in b.get("tools", []):
    f = t.get("function", t)
    m = re.match(r'Use the "(.*?)" subagent:', f.get("description", ""))
    if f.get("name", "").startswith("subagent_") and m:
        print(m.group(1))
PY
rt_compare_names agents "$RT_OUT/seen-agents.txt"

# msd's hook on Cline is session-start on PreToolUse (an executable `PreToolUse` in
# <CLINE_DIR>/hooks or .clinerules/hooks; runtimes/cline cites why not TaskStart: Cline runs
# TaskStart detached and ignores its output). Cline runs a PreToolUse hook blocking, before the
# tool (`iE`, @cline/cli-linux-x64@3.0.65:bin/cline@108199319), logs nothing when it succeeds
# and a `hook command failed|timed out|returned invalid JSON` warning when it does not; what it
# prints as `context` is added to the conversation before the next model request (@108201047,
# `Cp0` -> appendContext). So: Cline's log must show it discovered the hook for `tool_call`
# (`hooks.discovery_completed`), no failure of it, and the session-start line must be in the
# request after the shell call (hook_context).
python3 - "$cline_dir"/data/logs/*.log >"$RT_OUT/hook-runs.txt" <<'PY'
import json, sys
found, failed = 0, []
for f in sys.argv[1:]:
    for l in open(f, errors="replace"):
        if "hook command" in l and "msd" in l:
            failed.append(l.strip()[:300])
        if '"hooks.' not in l:
            continue
        try:
            d = json.loads(l)
        except ValueError:
            continue
        p = d.get("properties") or {}
        if d.get("event") == "hooks.discovery_completed" and p.get("hookName") == "tool_call":
            found = max(found, int(p.get("totalCount") or 0))
print(found, len(failed))
for l in failed[:3]:
    print(l)
PY
read -r hk_found hk_failed <"$RT_OUT/hook-runs.txt"
if rt_check_hook_context "cline --json, the PreToolUse hook's context before the request after the first tool call" "$RT_OUT/mock-hi.jsonl" \
  && [ "${hk_found:-0}" -ge 1 ] && [ "${hk_failed:-0}" -eq 0 ]; then
  rt_flag hooks true
  rt_note "hooks: Cline found $hk_found PreToolUse hook(s) (data/logs/cline.log hooks.discovery_completed, hookName tool_call), ran msd's blocking before the shell call, no failure logged; its context line reached the model"
else
  rt_flag hooks false
  rt_fail "hooks: msd's PreToolUse hook did not run as Cline runs it (found ${hk_found:-0} tool_call hook(s), failures logged: ${hk_failed:-0}$(sed -n 2p "$RT_OUT/hook-runs.txt" | sed 's/^/: /'))"
fi

# Workflows (global: <CLINE_DIR>/workflows, local: .clinerules/workflows) are slash commands.
# Each "/msd-<name>" must be replaced by its workflow's instructions. msd installs no skills for
# Cline: none of msd's may be offered (the `skills` tool of the first request).
if grep -q '^msd-' "$RT_OUT/seen-skills.txt"; then
  rt_fail "skills: Cline offers msd skills msd no longer writes for it: $(grep '^msd-' "$RT_OUT/seen-skills.txt" | head -n5 | tr '\n' ' ')"
fi
: >"$RT_OUT/seen-commands.txt"
MOCK_TAG=cmds MOCK_REQUESTS=400 MOCK_SECONDS=1800 rt_mock_start
rt_timeout 60 cline auth -p openai -k sk-test -m mock-model -b "$MOCK_URL/v1" </dev/null >"$RT_OUT/cmds.auth" 2>&1
while IFS= read -r name; do
  : >"$MOCK_REC"
  rt_timeout 60 cline --json "/$name probe-arg" </dev/null >"$RT_OUT/cmd-$name.out" 2>"$RT_OUT/cmd-$name.err"
  first_user "$MOCK_REC" >"$RT_OUT/cmd-$name.txt"
  file=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["paths"]["commands"][sys.argv[2]])' "$RT_EXPECT" "$name")
  line=$(awk 'NR>1 && /^---$/{on=1;next} on && NF{print; exit}' "$file")
  if [ -n "$line" ] && grep -aqF -- "$line" "$RT_OUT/cmd-$name.txt" && ! grep -aq "^/$name probe-arg" "$RT_OUT/cmd-$name.txt"; then
    echo "$name" >>"$RT_OUT/seen-commands.txt"
  fi
  [ "$name" = msd-help ] && cp "$MOCK_REC" "$RT_OUT/mock-help.jsonl"
done < <(rt_expect_names commands)
rt_mock_stop
rt_compare_names commands "$RT_OUT/seen-commands.txt"
rt_mock_text "$RT_OUT/mock-help.jsonl" "$RT_OUT/help.txt"
help_file=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["paths"]["commands"]["msd-help"])' "$RT_EXPECT")
rt_check_workflow "$help_file" "$RT_OUT/help.txt" "$PROJECT"
# $ARGUMENTS: Cline appends the text after the command name; it substitutes nothing.
if grep -aq 'Arguments: \$ARGUMENTS' "$RT_OUT/help.txt"; then
  rt_fail "arguments: Cline keeps a literal \$ARGUMENTS in the workflow text (it appends the arguments after the instructions instead)"
fi

if [ "$RT_SCOPE" = global ]; then
  # CLINE_DIR (the variable Cline reads) moves both Cline and msd-install.
  alt="$HOME/alt-cline-dir"
  if CLINE_DIR=$alt rt_msd_install cline global >"$RT_OUT/msd-install-env.log" 2>&1; then
    if [ ! -f "$alt/workflows/msd-help.md" ]; then
      rt_fail "CLINE_DIR=$alt: msd-install ignored it (installed into $(sed -n 's/.*-> //p' "$RT_OUT/msd-install-env.log" | head -n1)); Cline reads CLINE_DIR"
    else
      CLINE_DIR=$alt cline_task env "/msd-help probe-arg"
      first_user "$RT_OUT/mock-env.jsonl" >"$RT_OUT/env-first.txt"
      line=$(awk 'NR>1 && /^---$/{on=1;next} on && NF{print; exit}' "$alt/workflows/msd-help.md")
      grep -aqF -- "$line" "$RT_OUT/env-first.txt" || rt_fail "CLINE_DIR=$alt: Cline does not run the msd-help workflow installed there"
    fi
  else
    rt_fail "CLINE_DIR=$alt: msd-install failed ($(tail -n1 "$RT_OUT/msd-install-env.log"))"
  fi
fi

cline_log_scan
rt_emit
