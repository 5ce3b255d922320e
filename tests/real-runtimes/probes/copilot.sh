#!/usr/bin/env bash
# pin: @github/copilot@1.0.102
# node: 20
#
# GitHub Copilot CLI, offline (evidence/copilot.md has the source lines):
#  - the npm package is a loader; the platform binary extracts its JS package into a package
#    cache on first run (COPILOT_PKG_CACHE_HOME/pkg, shared in the tier's cache dir);
#  - `copilot skill list` lists Personal (~/.copilot/skills, ~/.agents/skills) and Project
#    (.github/skills, .agents/skills, .claude/skills) skills without a model;
#  - `copilot -p` runs against the mock model through BYOK: COPILOT_OFFLINE=true,
#    COPILOT_PROVIDER_BASE_URL, a dummy COPILOT_PROVIDER_API_KEY, COPILOT_MODEL; the first
#    request's task tool lists the custom agents (agent_type enum);
#  - workflow text: the mock calls `skill` (the skill context must arrive), then `view` on the
#    skill's included workflow (Copilot does not expand @path in skills; the model reads it);
#  - per agent, the mock calls `task` (agent_type=<name>): the subagent's request lists the
#    tools it got; Copilot's agent tool aliases (read, edit, execute, search, agent, web, todo)
#    are checked against the concrete tools offered;
#  - global only: COPILOT_HOME moves both msd-install and the CLI.
# "hooks": msd's SessionStart hook ran (its line reached the mock model).
set -u
. "$RT_LIB/common.sh"

export COPILOT_PKG_CACHE_HOME=$MSD_RT_CACHE/copilot/pkg-cache COPILOT_AUTO_UPDATE=false
export COPILOT_OFFLINE=true COPILOT_MODEL=gpt-4.1 COPILOT_PROVIDER_API_KEY=sk-test
export COPILOT_PROVIDER_TYPE=openai NO_COLOR=1
CHOME=$HOME/.copilot

# Copilot's --log-dir logs hold whole request payloads at DEBUG level: only the lines logged at
# WARNING or ERROR count there.
our_warnings() {
  local log=$1 masked="$RT_OUT/$(basename "$1").masked"
  [ -f "$log" ] || return 0
  case $log in
    *.log) sed "s#$MSD_RT_CACHE#<cache>#g" "$log" | grep -aE '^[0-9T:.Z-]+ \[(WARNING|ERROR)\]' >"$masked" ;;
    *) sed "s#$MSD_RT_CACHE#<cache>#g" "$log" >"$masked" ;;
  esac
  rt_log_our_warnings "$masked" "${2:-}"
}

# cp_run <tag> <prompt> [mock args...]
cp_run() {
  local tag=$1 prompt=$2 rc
  shift 2
  MOCK_TAG=$tag rt_mock_start "$@" || { rt_fail "$tag: mock model did not start"; return 1; }
  # Local: a repository's hooks load only in a trusted folder (msd-install's note says so);
  # trust it for this session as the user would.
  local trust=()
  [ "$RT_SCOPE" = local ] && trust=(--trust-folder)
  COPILOT_PROVIDER_BASE_URL=$MOCK_URL/v1 rt_timeout 120 copilot -p "$prompt" --allow-all-tools "${trust[@]}" \
    --log-dir "$RT_OUT/log-$tag" --log-level debug </dev/null >"$RT_OUT/$tag.out" 2>"$RT_OUT/$tag.err"
  rc=$?
  rt_mock_stop
  rt_mock_text "$MOCK_REC" "$RT_OUT/$tag.txt"
  [ $rc -eq 0 ] || rt_fail "$tag: copilot -p exited $rc ($(tail -c 300 "$RT_OUT/$tag.err" | tr '\n' ' '))"
  [ -s "$MOCK_REC" ] || rt_fail "$tag: copilot sent nothing to the mock model"
  cat "$RT_OUT/log-$tag"/*.log >"$RT_OUT/$tag.log" 2>/dev/null
  return 0
}

# tool_results <record.jsonl>: tool results and skill-context user turns, to stdout
tool_results() {
  python3 - "$1" <<'PY'
import json, sys
seen = set()
for l in open(sys.argv[1]):
    b = json.loads(l)["body"]
    for m in b.get("messages", []):
        c = m.get("content")
        t = c if isinstance(c, str) else "".join(p.get("text", "") for p in (c or []) if isinstance(p, dict))
        if m.get("role") == "tool" or "<skill-context" in t:
            if t not in seen:
                seen.add(t)
                print(t)
PY
}

# 1. skill list (no model).
rt_timeout 60 copilot skill list >"$RT_OUT/skill-list.out" 2>"$RT_OUT/skill-list.err" ||
  rt_fail "copilot skill list exited $? ($(tail -c 200 "$RT_OUT/skill-list.err"))"
want=Personal
[ "$RT_SCOPE" = local ] && want=Project
awk -v w="$want" '/^[A-Z][a-z]+ skills:/{sec=$1; next} /^  [^ ]/{n=$1; if (sec==w) print n}' \
  "$RT_OUT/skill-list.out" >"$RT_OUT/seen-skills.txt"
rt_compare_names skills "$RT_OUT/seen-skills.txt"
awk '/^  [^ ]/{print $1}' "$RT_OUT/skill-list.out" | grep '^msd-' | sort | uniq -d >"$RT_OUT/dup-skills.txt"
[ -s "$RT_OUT/dup-skills.txt" ] && rt_fail "skills listed twice: $(tr '\n' ' ' <"$RT_OUT/dup-skills.txt")"
awk -v w="$want" '/^[A-Z][a-z]+ skills:/{sec=$1; next} /^  msd-/{if (sec!=w) print $1 "(" sec ")"}' \
  "$RT_OUT/skill-list.out" >"$RT_OUT/foreign-skills.txt"
[ -s "$RT_OUT/foreign-skills.txt" ] &&
  rt_fail "copilot lists msd skills from outside this install (another runtime's ~/.agents/skills, .claude/skills, ...): $(head -n6 "$RT_OUT/foreign-skills.txt" | tr '\n' ' ')"
our_warnings "$RT_OUT/skill-list.err" '.'

# 2. A plain session: the agents of the task tool.
cp_run hi "hi"
python3 - "$MOCK_REC" >"$RT_OUT/seen-agents.txt" <<'PY'
import json, sys
b = json.loads(open(sys.argv[1]).readline())["body"]
for t in b.get("tools", []):
    f = t.get("function") or {}
    if f.get("name") == "task":
        for n in f.get("parameters", {}).get("properties", {}).get("agent_type", {}).get("enum", []):
            print(n)
PY
rt_compare_names agents "$RT_OUT/seen-agents.txt"
our_warnings "$RT_OUT/hi.log"
our_warnings "$RT_OUT/hi.err"

# 3. Workflow text: the skill context, then the included workflow read with `view`.
SK=$(rt_expect_names skills | grep -x 'msd-help' || rt_expect_names skills | head -n1)
if [ -n "$SK" ]; then
  sfile=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["paths"]["skills"][sys.argv[2]])' "$RT_EXPECT" "$SK")
  cp_run skill "use $SK" --tool-call skill --tool-args "{\"skill\":\"$SK\"}"
  tool_results "$MOCK_REC" >"$RT_OUT/skill.results.txt"
  grep -q "<skill-context name=\"$SK\">" "$RT_OUT/skill.results.txt" ||
    rt_fail "skill $SK: invoking it did not bring its skill context to the model ($(head -c 200 "$RT_OUT/skill.results.txt" | tr '\n' ' '))"
  inc=$(rt_includes "$sfile" "$PROJECT" | head -n1)
  if [ -z "$inc" ]; then
    rt_fail "skill $SK includes no workflow file (nothing to check)"
  else
    grep -qE '^@[.~/]' "$RT_OUT/skill.results.txt" &&
      rt_note "Copilot passes a skill's @path include line through unexpanded; the model reads the file (checked with view)"
    cp_run view "read it" --tool-call view --tool-args "{\"path\":\"$inc\"}"
    tool_results "$MOCK_REC" >"$RT_OUT/view.results.txt"
    if why=$(rt_text_has_file "$RT_OUT/view.results.txt" "$inc"); then
      rt_flag workflow_text true
    else
      rt_flag workflow_text false
      rt_fail "workflow: view of $inc (included by $SK) did not return its text: $why ($(head -c 200 "$RT_OUT/view.results.txt" | tr '\n' ' '))"
    fi
  fi
fi

# 4. Each agent's tools as its subagent gets them. Copilot's agent tool names are aliases of
# concrete tools (seen with this CLI: read->view, edit->create/edit, execute->bash..., search->
# grep/glob, agent->task); web (web_fetch) is off with COPILOT_OFFLINE.
cat >"$RT_OUT/agent-verdict.py" <<'PY'
import json, sys
rec, f, declared = sys.argv[1:4]
body = open(f).read().split("\n---", 2)[-1]
probe = [l.strip() for l in body.split("\n") if len(l.strip()) >= 30][:1]
alias = {"read": {"view"}, "edit": {"edit", "create"}, "execute": {"bash", "powershell"},
         "search": {"grep", "glob"}, "agent": {"task"}, "web": {"web_fetch", "web_search"},
         "todo": {"update_todo", "todo"}}
offline_off = {"web"}
sub = None
for l in open(rec):
    b = json.loads(l)["body"]
    names = [(t.get("function") or {}).get("name") for t in b.get("tools", [])]
    sysmsg = "".join(m["content"] if isinstance(m.get("content"), str) else "" for m in b.get("messages", []) if m.get("role") == "system")
    if probe and probe[0] in sysmsg:
        sub = set(names)
        break
if sub is None:
    print("FAIL\tthe subagent never reached the model")
    sys.exit()
decl = [t for t in declared.split(",") if t]
missing, off = [], []
for t in decl:
    if t in sub or (alias.get(t, set()) & sub):
        continue
    (off if t in offline_off else missing).append(t)
print("%s\tdeclared=%s got=%s missing=%s offline-disabled=%s" % ("FAIL" if missing else "OK", decl, sorted(sub), missing, off))
PY
tools_ok=true
n=0
while IFS= read -r name; do
  [ -n "$name" ] || continue
  n=$((n + 1))
  f=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["paths"]["agents"][sys.argv[2]])' "$RT_EXPECT" "$name")
  declared=$(rt_frontmatter "$f" tools)
  MOCK_REQUESTS=12 cp_run "agent-$name" "delegate to $name" --tool-call task \
    --tool-args "{\"description\":\"probe\",\"prompt\":\"probe: reply done\",\"agent_type\":\"$name\",\"name\":\"probe\"}"
  verdict=$(python3 "$RT_OUT/agent-verdict.py" "$MOCK_REC" "$f" "$declared")
  printf '%s\t%s\n' "$name" "$verdict" >>"$RT_OUT/agent-tools.tsv"
  case $verdict in OK*) ;; *) tools_ok=false; rt_fail "agent $name: ${verdict#FAIL	}" ;; esac
done < <(rt_expect_names agents)
[ $n -gt 0 ] && rt_flag agent_tools "$tools_ok"

# msd's SessionStart hook (registered in the settings this install wrote) ran in the real
# CLI: its line about the project's .planning/STATE.md is in a request the mock recorded.
if rt_check_hook_context "copilot -p, sessionStart additionalContext" "$RT_OUT"/mock-*.jsonl; then rt_flag hooks true; else rt_flag hooks false; fi

# 5. COPILOT_HOME moves msd-install and the CLI (global only).
if [ "$RT_SCOPE" = global ]; then
  ALT=$HOME/alt-copilot-home
  mkdir -p "$ALT"
  if COPILOT_HOME=$ALT rt_msd_install copilot global >"$RT_OUT/env-install.log" 2>&1; then
    if [ -f "$ALT/msd-core/msd-file-manifest.json" ]; then
      COPILOT_HOME=$ALT rt_timeout 60 copilot skill list >"$RT_OUT/env-skill-list.out" 2>&1
      k=$(awk '/^Personal skills:/{on=1;next} /^[A-Z]/{on=0} on && /^  msd-/' "$RT_OUT/env-skill-list.out" | wc -l)
      m=$(rt_expect_names skills | wc -l)
      [ "$k" = "$m" ] || rt_fail "COPILOT_HOME=$ALT: copilot lists $k of $m msd skills from there"
      rt_note "COPILOT_HOME: msd-install wrote $ALT; copilot skill list showed $k/$m msd skills from it"
    else
      where=$(ls -d "$HOME"/.copilot/msd-core 2>/dev/null)
      rt_fail "COPILOT_HOME=$ALT: msd-install did not write into $ALT${where:+ (it wrote $where: the manifest override is not what Copilot reads)}"
    fi
    COPILOT_HOME=$ALT "$MSD_INSTALL" uninstall -r copilot --runtimes "$RT_REPO/runtimes" >>"$RT_OUT/env-install.log" 2>&1 || true
  else
    rt_fail "COPILOT_HOME: msd-install failed ($(tail -n2 "$RT_OUT/env-install.log" | tr '\n' ' '))"
  fi
fi

# 6. An MCP tool in Claude's spelling (mcp__server__tool) in an agent's tools, with a real
# (stub, stdio) MCP server configured: does the subagent get the tool? (global only)
if [ "$RT_SCOPE" = global ] && [ -d "$RT_REPO/content/agents" ]; then
  cat >"$RT_OUT/mcp_stub.py" <<'PY'
import json, sys, time
# Minimal MCP stdio server "context7" with one tool; ends on EOF or after 120 s.
start = time.time()
def send(o):
    sys.stdout.write(json.dumps(o) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    if time.time() - start > 120:
        break
    try:
        m = json.loads(line)
    except ValueError:
        continue
    mid, meth = m.get("id"), m.get("method")
    if meth == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": m.get("params", {}).get("protocolVersion", "2024-11-05"),
              "capabilities": {"tools": {}}, "serverInfo": {"name": "context7", "version": "0.0.1"}}})
    elif meth == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [{"name": "resolve-library-id", "description": "probe tool",
              "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}}]}})
    elif mid is not None:
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
PY
  MC=$RT_OUT/mcp-content
  rm -rf "$MC" && cp -r "$RT_REPO/content" "$MC"
  # An agent the workflows spawn (only those are installed), its tools replaced in place.
  src=$(ls "$MC/agents"/*.md | head -n1)
  MCP_AGENT=$(basename "$src" .md)
  python3 - "$src" "$src" "$MC/tiers.json" <<'PY'
import json, re, sys
t = open(sys.argv[1]).read()
t = re.sub(r"^tools: (.*)$", "tools: Read, mcp__context7__resolve-library-id", t, count=1, flags=re.M)
open(sys.argv[2], "w").write(t)
d = json.load(open(sys.argv[3]))
json.dump(d, open(sys.argv[3], "w"), indent=2)
PY
  ALT=$HOME/alt-copilot-mcp
  mkdir -p "$ALT"
  if COPILOT_HOME=$ALT "$MSD_INSTALL" -r copilot --runtimes "$RT_REPO/runtimes" --content "$MC" >"$RT_OUT/mcp-install.log" 2>&1; then
    written=$(rt_frontmatter "$ALT/agents/$MCP_AGENT.agent.md" tools)
    printf '{"mcpServers":{"context7":{"type":"local","command":"python3","args":["%s"],"tools":["*"]}}}\n' \
      "$RT_OUT/mcp_stub.py" >"$ALT/mcp-config.json"
    probe_line=$(python3 -c 'import sys; b=open(sys.argv[1]).read().split("\n---",2)[-1]; print([l.strip() for l in b.split("\n") if len(l.strip())>=30][0])' "$ALT/agents/$MCP_AGENT.agent.md")
    COPILOT_HOME=$ALT MOCK_REQUESTS=12 cp_run mcp "delegate" --tool-call task \
      --tool-args "{\"description\":\"probe\",\"prompt\":\"probe\",\"agent_type\":\"$MCP_AGENT\",\"name\":\"probe\"}"
    res=$(python3 - "$MOCK_REC" "$probe_line" <<'PY'
import json, sys
main, sub = set(), None
for l in open(sys.argv[1]):
    b = json.loads(l)["body"]
    names = [(t.get("function") or {}).get("name") for t in b.get("tools", [])]
    sysmsg = "".join(m["content"] if isinstance(m.get("content"), str) else "" for m in b.get("messages", []) if m.get("role") == "system")
    if sys.argv[2] in sysmsg:
        sub = names
        break
    main |= set(names)
mcp = sorted(n for n in main if "resolve-library-id" in n)
print("main_mcp=%s sub=%s" % (mcp, sub))
print("OK" if sub is not None and any(n in (sub or []) for n in mcp) else "MISSING")
PY
    )
    case $res in
      *OK) rt_note "MCP tool names: written as [$written]; the subagent got the MCP tool ($(echo "$res" | head -n1))" ;;
      *) rt_fail "MCP tool names: an agent declaring mcp__context7__resolve-library-id is written with tools [$written]; Copilot silently drops it (the subagent lacks the tool; $(echo "$res" | head -n1)); Copilot grants it as context7/resolve-library-id" ;;
    esac
    COPILOT_HOME=$ALT "$MSD_INSTALL" uninstall -r copilot --runtimes "$RT_REPO/runtimes" >>"$RT_OUT/mcp-install.log" 2>&1 || true
  else
    rt_warn "MCP probe: msd-install --content failed ($(tail -n2 "$RT_OUT/mcp-install.log" | tr '\n' ' '))"
  fi
fi

rt_emit
