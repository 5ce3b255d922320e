#!/usr/bin/env bash
# pin: @augmentcode/auggie@0.36.0
# node: 20
#
# Auggie (Augment CLI), offline (evidence/augment.md has the source lines):
#  - `auggie command list` lists custom commands with their source, (user) or (workspace),
#    without a model;
#  - `auggie -p hi` with AUGMENT_SESSION_AUTH naming the mock as tenantURL: Auggie speaks
#    Augment's own API (/get-models, /chat-stream, ...), which the mock does not implement, so
#    the turn fails; but the first /chat-stream request already carries every loaded skill
#    (name, location, source) and is recorded;
#  - agents reach the model only through a sub-agent tool the Augment backend enables
#    (feature flags of /get-models), and the expanded command text only in a later turn: both
#    are reported as null with the reason;
#  - Auggie has no home override but HOME (no AUGMENT_CONFIG_DIR); msd registers no Augment
#    hooks.
set -u
. "$RT_LIB/common.sh"

export AUGMENT_DISABLE_AUTO_UPDATE=1 NO_COLOR=1

# Auggie's log has a level per line ([verbose] [debug] [info] [warn] [error]): warn/error lines
# only (the indexer's verbose lines name every file it skips).
our_warnings() {
  local log=$1 masked="$RT_OUT/$(basename "$1").masked"
  [ -f "$log" ] || return 0
  sed "s#$MSD_RT_CACHE#<cache>#g" "$log" | grep -avE '^[0-9-]+ [0-9:.]+ \[(verbose|debug|info)\]' >"$masked"
  rt_log_our_warnings "$masked" "${2:-}"
}

want=user
[ "$RT_SCOPE" = local ] && want=workspace

# 1. Commands, offline.
rt_timeout 60 auggie command list --log-file "$RT_OUT/command-list.log" --log-level debug \
  >"$RT_OUT/command-list.out" 2>"$RT_OUT/command-list.err"
rc=$?
[ $rc -eq 0 ] || rt_fail "auggie command list exited $rc ($(tail -c 200 "$RT_OUT/command-list.err" | tr '\n' ' '))"
python3 - "$RT_OUT/command-list.out" "$want" >"$RT_OUT/seen-commands.txt" 2>"$RT_OUT/command-sources.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
want = sys.argv[2]
# "  <name> [args...]   <description wrapped over lines> (user|workspace)"
blocks = re.split(r"\n(?=  [A-Za-z0-9][^\s]* \[args\.\.\.\])", text)
for b in blocks:
    m = re.match(r"\s*([A-Za-z0-9][^\s]*) \[args\.\.\.\]\s+(.*)", b, re.S)
    if not m:
        continue
    name, rest = m.group(1), " ".join(m.group(2).split())
    src = re.search(r"\((user|workspace)\)", rest)
    src = src.group(1) if src else "?"
    print("%s\t%s" % (name, src), file=sys.stderr)
    if src == want:
        print(name)
PY
rt_compare_names commands "$RT_OUT/seen-commands.txt"
other=$(awk -F'\t' -v w="$want" '$1 ~ /^msd-/ && $2 != w' "$RT_OUT/command-sources.txt" | tr '\n' ' ')
[ -z "$other" ] || rt_fail "commands listed from the other scope or twice: $other"
our_warnings "$RT_OUT/command-list.err" '.'
our_warnings "$RT_OUT/command-list.log"

# 2. Skills, from the first /chat-stream request of a session against the mock.
MOCK_TAG=hi MOCK_REQUESTS=40 MOCK_SECONDS=60 rt_mock_start || rt_fail "mock model did not start"
AUGMENT_SESSION_AUTH="{\"accessToken\":\"sk-test\",\"tenantURL\":\"$MOCK_URL/\",\"scopes\":[\"email\"]}" \
  rt_timeout 60 auggie -p "hi" --log-file "$RT_OUT/hi.log" --log-level debug </dev/null \
  >"$RT_OUT/hi.out" 2>"$RT_OUT/hi.err"
rt_mock_stop
python3 - "$MOCK_REC" "$RT_OUT/skills.tsv" >"$RT_OUT/seen-skills.txt" <<'PY'
import json, sys
out = open(sys.argv[2], "w")
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d.get("path", "").rstrip("/").endswith("/chat-stream") and isinstance(d.get("body"), dict):
        for s in d["body"].get("skills") or []:
            print(s.get("name"))
            out.write("%s\t%s\t%s\n" % (s.get("name"), s.get("source"), s.get("location")))
        break
PY
if [ ! -s "$RT_OUT/skills.tsv" ] && ! grep -q chat-stream "$MOCK_REC" 2>/dev/null; then
  rt_fail "auggie sent no /chat-stream request to the mock ($(tail -c 200 "$RT_OUT/hi.err" | tr '\n' ' '))"
fi
rt_compare_names skills "$RT_OUT/seen-skills.txt"
bad=$(awk -F'\t' -v w="$want" '$1 ~ /^msd-/ && $2 != w {print $1 "(" $2 ")"}' "$RT_OUT/skills.tsv" | tr '\n' ' ')
[ -z "$bad" ] || rt_fail "skills loaded from the wrong source (want $want): $bad"
dups=$(cut -f1 "$RT_OUT/skills.tsv" | grep '^msd-' | sort | uniq -d | tr '\n' ' ')
[ -z "$dups" ] || rt_fail "skills loaded twice: $dups"
home=$(rt_expect_field home)
foreign=$(awk -F'\t' -v h="$home/" '$1 ~ /^msd-/ && index($3, h) != 1 {print $1 "(" $3 ")"}' "$RT_OUT/skills.tsv" | head -n6 | tr '\n' ' ')
[ -z "$foreign" ] || rt_fail "Auggie loads msd skills from outside this install (.claude or .agents dirs of another runtime): $foreign"
our_warnings "$RT_OUT/hi.log"
# the turn itself fails against the mock (Augment's API is not implemented there): expected
grep -q "API Error" "$RT_OUT/hi.out" "$RT_OUT/hi.err" 2>/dev/null &&
  rt_note "the session's turn failed against the mock as expected (Augment API); its first /chat-stream request was recorded"

# 3. What cannot be observed offline.
rt_flag workflow_text null
rt_warn "workflow text: not observable offline (Auggie passes a command's body with its @path lines as written; the expanded turn needs Augment's /chat-stream protocol)"
rt_flag agent_tools null
rt_warn "agents: not observable offline (subagents reach the model only through a sub-agent tool enabled by the Augment backend's feature flags)"
n_agents=$(rt_expect_names agents | wc -l)
present=0
while IFS= read -r a; do
  f=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["paths"]["agents"][sys.argv[2]])' "$RT_EXPECT" "$a")
  [ -f "$f" ] && present=$((present + 1))
done < <(rt_expect_names agents)
rt_note "agents: $present/$n_agents agent files are where Auggie looks ($( [ "$RT_SCOPE" = local ] && echo ./.augment/agents || echo ~/.augment/agents)); their loading is not checked"
# msd's SessionStart hook (registered in the settings this install wrote) ran in the real
# CLI: its line about the project's .planning/STATE.md is in a request the mock recorded.
# Auggie runs hooks only when its backend turns on the enableHooks flag (the mock's /get-models
# does, augment.mjs:867, :7049). Its log shows the run and where the output went
# ("Hook message to agent (SessionStart): <text>"); the first /chat-stream request, the only
# one observable offline, does not carry it, so the context is checked in the log (null in
# the verdict when it is routed to the agent but not yet sent).
if grep -aqF -- "$RT_HOOK_LINE" "$RT_OUT"/mock-*.jsonl 2>/dev/null; then
  rt_check_hook_context "auggie --print, first /chat-stream request" "$RT_OUT"/mock-*.jsonl
  rt_flag hooks true
elif grep -aqF -- "Hook message to agent (SessionStart): $RT_HOOK_LINE" "$RT_OUT/hi.log"; then
  rt_flag hooks true
  rt_note "hooks: Auggie ran msd's SessionStart hook and routed its line to the agent (hi.log line $(grep -anF -- "Hook message to agent (SessionStart): $RT_HOOK_LINE" "$RT_OUT/hi.log" | head -n1 | cut -d: -f1)); the first /chat-stream request does not carry it"
else
  rt_flag hooks false
  rt_fail "hooks: Auggie's log shows no successful run of msd's SessionStart hook ($(grep -a "HookExecutor" "$RT_OUT/hi.log" | grep -aiE "fail|error|timed out" | head -n1 | cut -c1-200))"
fi
rt_note "home override: Auggie reads only HOME (no AUGMENT_CONFIG_DIR); the manifest lists none"

rt_emit
