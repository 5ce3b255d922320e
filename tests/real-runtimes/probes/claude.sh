#!/usr/bin/env bash
# pin: @anthropic-ai/claude-code@2.1.332
# node: 22
#
# Claude Code, offline: `claude -p` against the mock model (ANTHROPIC_BASE_URL + a dummy key).
# What the first request carries proves what loaded: the "skills available" listing (skills and
# commands), the "Available agent types" listing with each agent's tools, the included workflow
# text of /msd-help; the --debug-file log shows which dirs were scanned, load warnings and each
# hook's run with its exit status.
set -u
. "$RT_LIB/common.sh"

export ANTHROPIC_API_KEY=sk-test CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1
export DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1

# claude_run <tag> <prompt> [cwd]: one print-mode session; leaves $RT_OUT/<tag>.{out,debug,txt}.
claude_run() {
  local tag=$1 prompt=$2 cwd=${3:-$PROJECT} rc
  MOCK_TAG=$tag rt_mock_start || { rt_fail "$tag: mock model did not start"; return 1; }
  (cd "$cwd" && ANTHROPIC_BASE_URL=$MOCK_URL rt_timeout 120 claude -p "$prompt" \
    --debug-file "$RT_OUT/$tag.debug" --output-format json </dev/null >"$RT_OUT/$tag.out" 2>"$RT_OUT/$tag.err")
  rc=$?
  rt_mock_stop
  rt_mock_text "$MOCK_REC" "$RT_OUT/$tag.txt"
  [ $rc -eq 0 ] || rt_fail "$tag: claude -p exited $rc ($(tail -c 300 "$RT_OUT/$tag.err" | tr '\n' ' '))"
  [ -s "$MOCK_REC" ] || rt_fail "$tag: claude sent nothing to the mock model"
  return $rc
}

# listing <text> <heading> : names of "- name: ..." lines after a heading line, up to a blank line
listing() {
  awk -v h="$2" 'index($0,h)==1{on=1;next} on&&/^$/{if(n)exit;next} on&&/^- /{n++; s=substr($0,3); sub(/:.*/,"",s); print s}' "$1"
}

# hook_runs <debug> <event> : how many times a hook command of msd ran for an event, with status 0
hook_runs() { grep -aE "Hooks: $2(:[a-z]+)? .*msd_run.* finished with status 0" "$1" | wc -l; }

# 1. A session with a plain prompt: listings of skills/commands and agents.
claude_run hi "hi"
listing "$RT_OUT/hi.txt" "The following skills are available" >"$RT_OUT/seen-skills.txt"
listing "$RT_OUT/hi.txt" "Available agent types" >"$RT_OUT/seen-agents.txt"
if [ "$RT_SCOPE" = global ]; then
  rt_compare_names skills "$RT_OUT/seen-skills.txt"
else
  rt_compare_names commands "$RT_OUT/seen-skills.txt"
fi
rt_compare_names agents "$RT_OUT/seen-agents.txt"

# 2. Each agent's declared tools arrive as real tool names (the listing says "(Tools: ...)").
python3 - "$RT_OUT/hi.txt" "$RT_OUT/mock-hi.jsonl" "$RT_EXPECT" >"$RT_OUT/agent-tools.txt" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
body = json.loads(open(sys.argv[2]).readline())["body"]
offered = {t.get("name") for t in body.get("tools", [])}
m = re.search(r"deferred tools are now available.*?:\n(.*?)\n\n", text, re.S)
if m:
    offered |= {l.strip() for l in m.group(1).split("\n") if l.strip()}
real = set(offered)
# Claude's own tool names, as the binary lists them (evidence/claude.md).
import glob, os
for b in glob.glob(os.path.join(os.environ["RT_BIN_DIR"], "..", "@anthropic-ai", "claude-code-linux-x64*", "claude")):
    blob = open(b, "rb").read()
    mm = re.search(rb'\["Agent","Artifact","AskUserQuestion","Bash"[^\]]*\]', blob)
    if mm:
        real |= set(json.loads(mm.group(0)))
exp = json.load(open(sys.argv[3]))
bad = []
for name in exp["agents"]:
    src = open(exp["paths"]["agents"][name]).read()
    fm = re.search(r"^tools:\s*(.*)$", src, re.M)
    declared = [t.strip() for t in fm.group(1).split(",")] if fm else []
    lm = re.search(r"^- %s: .*\(Tools: (.*)\)$" % re.escape(name), text, re.M)
    got = [t.strip() for t in lm.group(1).split(",")] if lm else None
    if got is None:
        bad.append("%s: not in the agent listing" % name)
        continue
    if declared and sorted(got) != sorted(declared):
        bad.append("%s: declared %s, Claude lists %s" % (name, declared, got))
    unknown = [t for t in got if t not in real and not t.startswith("mcp__")]
    if unknown:
        bad.append("%s: tools no Claude tool is called: %s" % (name, unknown))
if bad:
    print("\n".join(bad))
notin = sorted({t for n in exp["agents"] for t in re.findall(r"[A-Za-z_]+", (re.search(r"^tools:\s*(.*)$", open(exp["paths"]["agents"][n]).read(), re.M) or re.match("", "")).group(1) if re.search(r"^tools:", open(exp["paths"]["agents"][n]).read(), re.M) else "")} - offered)
open(os.path.join(os.environ["RT_OUT"], "agent-tools-not-offered.txt"), "w").write(" ".join(notin))
PY
[ -s "$RT_OUT/agent-tools-not-offered.txt" ] && rt_note "agent tools Claude knows but this session does not offer: $(cat "$RT_OUT/agent-tools-not-offered.txt")"
if [ -s "$RT_OUT/agent-tools.txt" ]; then
  rt_flag agent_tools false
  while IFS= read -r l; do rt_fail "agent tools: $l"; done <"$RT_OUT/agent-tools.txt"
else
  rt_flag agent_tools true
fi

# 3. Our settings loaded and the SessionStart hook ran (exit 0), exactly once.
runs=$(hook_runs "$RT_OUT/hi.debug" SessionStart)
if [ "$runs" -eq 1 ]; then rt_flag hooks true
else rt_flag hooks false; rt_fail "hooks: msd SessionStart hook ran $runs times (want 1)"; fi
grep -aE "Hooks: .*msd_run.* finished with status [1-9]" "$RT_OUT/hi.debug" | head -3 |
  while IFS= read -r l; do rt_fail "hooks: ${l:0:300}"; done
# Its additionalContext (the project's position) reaches the model.
rt_check_hook_context "claude -p, SessionStart hookSpecificOutput.additionalContext" "$RT_OUT/mock-hi.jsonl"

# 4. No load warning/error naming our files.
grep -aE "\[(WARN|ERROR)\]" "$RT_OUT/hi.debug" >"$RT_OUT/hi.warnings" || true
rt_log_our_warnings "$RT_OUT/hi.warnings" '.'

# 5. /msd-help: the included workflow text reaches the model.
if [ "$RT_SCOPE" = global ]; then
  cmd_file=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["paths"]["skills"]["msd-help"])' "$RT_EXPECT")
else
  cmd_file=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["paths"]["commands"]["msd-help"])' "$RT_EXPECT")
fi
claude_run help "/msd-help"
rt_check_workflow "$cmd_file" "$RT_OUT/help.txt" "$PROJECT"

home=$(rt_expect_field home)
if [ "$RT_SCOPE" = local ]; then
  # 6. From a subdirectory of the project: the hook still runs and the workflow still arrives.
  mkdir -p "$PROJECT/src/deep"
  claude_run sub "/msd-help" "$PROJECT/src/deep"
  [ "$(hook_runs "$RT_OUT/sub.debug" SessionStart)" -eq 1 ] ||
    rt_fail "subdir: the msd SessionStart hook did not run once from $PROJECT/src/deep"
  grep -aqF -- "$RT_HOOK_LINE" "$RT_OUT/mock-sub.jsonl" ||
    rt_fail "subdir: the session-start line did not reach the model from $PROJECT/src/deep"
  if ! why=$(rt_text_has_file "$RT_OUT/sub.txt" "$(rt_includes "$cmd_file" "$PROJECT" | head -n1)"); then
    rt_fail "subdir: /msd-help from src/deep: $why"
  fi
  # Content and the permission rule must not use cwd-relative ./.claude/ paths.
  n=$(grep -rlE '(^|[^A-Za-z0-9_}])\./\.claude/msd-core/bin/msd_run' "$home/commands" "$home/agents" "$home/msd-core/workflows" "$home/settings.local.json" 2>/dev/null | wc -l)
  [ "$n" -eq 0 ] || rt_fail "subdir: $n files call ./.claude/msd-core/bin/msd_run relative to the shell's cwd (breaks outside the project root)"

  # 7. Global and local together: the hook runs once per session, not twice.
  if HOME=$HOME rt_msd_install claude global >"$RT_OUT/msd-install-global.log" 2>&1; then
    claude_run both "hi"
    # Claude merges user and local settings, so both registrations run; the global helper
    # stays silent in a project with its own install: the model gets the line once.
    both=$(hook_runs "$RT_OUT/both.debug" SessionStart)
    lines=$(head -n1 "$RT_OUT/mock-both.jsonl" | grep -aoF -- "$RT_HOOK_LINE" | wc -l)
    [ "$lines" -eq 1 ] ||
      rt_fail "global+local: msd's session-start line reached the model $lines times in one session (want 1; the hook ran $both times)"
    rt_note "global+local: SessionStart ran $both msd hook commands, the model got the line $lines time(s)"
    # Leave the sandbox as the driver made it (other probes of a --pair run share it).
    (cd "$PROJECT" && "$(rt_msd_bin)" uninstall -r claude --runtimes "$RT_REPO/runtimes") \
      >>"$RT_OUT/msd-install-global.log" 2>&1 || rt_fail "global+local: msd-install uninstall -r claude (global) failed"
  else
    rt_fail "global+local: msd-install -r claude (global) failed: $(tail -n2 "$RT_OUT/msd-install-global.log")"
  fi
else
  # 6. CLAUDE_CONFIG_DIR moves both Claude and msd-install.
  alt="$HOME/alt-claude-home"
  if CLAUDE_CONFIG_DIR=$alt rt_msd_install claude global >"$RT_OUT/msd-install-env.log" 2>&1 &&
    [ -f "$alt/skills/msd-help/SKILL.md" ]; then
    CLAUDE_CONFIG_DIR=$alt claude_run env "hi"
    grep -aq "user=$alt/skills" "$RT_OUT/env.debug" || rt_fail "CLAUDE_CONFIG_DIR: claude did not scan $alt/skills"
    listing "$RT_OUT/env.txt" "The following skills are available" | grep -qx msd-help ||
      rt_fail "CLAUDE_CONFIG_DIR: msd-help not listed from $alt"
    [ "$(hook_runs "$RT_OUT/env.debug" SessionStart)" -ge 1 ] ||
      rt_fail "CLAUDE_CONFIG_DIR: the hook in $alt/settings.json did not run"
  else
    rt_fail "CLAUDE_CONFIG_DIR=$alt: msd-install did not install there"
  fi
fi

# Pair mode: the other runtime's files must not make Claude warn or list duplicates.
dups=$(sort "$RT_OUT/seen-skills.txt" | uniq -d | grep -c '^msd' || true)
[ "$dups" -eq 0 ] || rt_fail "duplicates: $dups msd names listed twice in the skills listing"

rt_emit
