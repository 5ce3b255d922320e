#!/usr/bin/env bash
# pin: @qwen-code/qwen-code@0.24.4
# node: 22
#
# Qwen Code, offline, `qwen -p` against the mock model as an OpenAI-compatible endpoint
# (OPENAI_BASE_URL, dummy OPENAI_API_KEY, OPENAI_MODEL); evidence/qwen.md has the source lines.
#  1. a plain session: the skill listing (<skill><name>..</name>..<location>user|project) and the
#     agent tool's "Available agent types" listing in the first request; --debug writes
#     <qwen home>/debug/<session>.txt with the skill manager's load lines (errors, duplicates);
#  2. msd's nested skills: Qwen lists only top-level skills; a nested skill counts as seen when
#     its group is listed and the group's table names its SKILL.md, which exists;
#  3. workflow text: the mock calls `skill` for a group, then `read_file` on a nested skill's
#     included workflow: the tool results must carry the text (not a denial);
#  4. per agent, the mock calls `agent` (subagent_type=<name>, --approval-mode yolo): the
#     subagent's own request lists the tools it got, compared with what msd declared;
#  5. global only: QWEN_HOME moves both msd-install and the CLI.
# "hooks": msd's SessionStart hook ran (its line reached the mock model).
set -u
. "$RT_LIB/common.sh"

QWEN_PKG=$(cd "$RT_BIN_DIR/../@qwen-code/qwen-code" && pwd)
export OPENAI_API_KEY=sk-test OPENAI_MODEL=mock-model QWEN_CODE_SUPPRESS_YOLO_WARNING=1
export QWEN_TELEMETRY_ENABLED=false
QHOME=$HOME/.qwen

# Lines of a log that are warnings/errors naming msd's files; the CLI cache path holds
# "msd-real-runtimes", so it is masked first.
our_warnings() {
  local log=$1 masked="$RT_OUT/$(basename "$1").masked"
  [ -f "$log" ] || return 0
  sed "s#$MSD_RT_CACHE#<cache>#g" "$log" | grep -av '\[DEBUG\]' >"$masked"
  rt_log_our_warnings "$masked"
}

# qwen_run <tag> <prompt> [--yolo] [mock args...]
qwen_run() {
  local tag=$1 prompt=$2 mode=() rc
  shift 2
  # Without --approval-mode the CLI's own headless default applies (it reads ~/.qwen/msd-core
  # without asking; an explicit "default" declines every read outside the workspace).
  if [ "${1:-}" = --yolo ]; then mode=(--approval-mode yolo); shift; fi
  # --strict: the interactive default ("ask" is declined headless), as a user without yolo has
  if [ "${1:-}" = --strict ]; then mode=(--approval-mode default); shift; fi
  MOCK_TAG=$tag rt_mock_start "$@" || { rt_fail "$tag: mock model did not start"; return 1; }
  OPENAI_BASE_URL=$MOCK_URL/v1 rt_timeout 120 qwen -p "$prompt" "${mode[@]}" --debug \
    --output-format json </dev/null >"$RT_OUT/$tag.out" 2>"$RT_OUT/$tag.err"
  rc=$?
  rt_mock_stop
  rt_mock_text "$MOCK_REC" "$RT_OUT/$tag.txt"
  [ $rc -eq 0 ] || rt_fail "$tag: qwen -p exited $rc ($(tail -c 300 "$RT_OUT/$tag.err" | tr '\n' ' '))"
  [ -s "$MOCK_REC" ] || rt_fail "$tag: qwen sent nothing to the mock model"
  # the session's debug log
  local dbg
  dbg=$(ls -t "${QWEN_HOME:-$QHOME}"/debug/*.txt 2>/dev/null | head -n1)
  [ -n "$dbg" ] && cp "$dbg" "$RT_OUT/$tag.debug"
  return 0
}

# tool_results <record.jsonl>: the text of every tool result the CLI sent back, to stdout
tool_results() {
  python3 - "$1" <<'PY'
import json, sys
seen = set()
for l in open(sys.argv[1]):
    b = json.loads(l)["body"]
    for m in b.get("messages", []):
        if m.get("role") != "tool":
            continue
        c = m.get("content")
        t = c if isinstance(c, str) else "".join(p.get("text", "") for p in c if isinstance(p, dict))
        if t not in seen:
            seen.add(t)
            print(t)
PY
}

# listings <record.jsonl> <skills-out> <agents-out> <locations-out>
listings() {
  python3 - "$@" <<'PY'
import json, re, sys
b = json.loads(open(sys.argv[1]).readline())["body"]
text = json.dumps(b)
text = json.loads(json.dumps(text))  # plain
s = "\n".join(
    (m["content"] if isinstance(m["content"], str) else "".join(p.get("text", "") for p in m["content"] if isinstance(p, dict)))
    for m in b.get("messages", []) if m.get("content"))
for t in b.get("tools", []):
    s += "\n" + (t.get("function") or {}).get("description", "")
skills = re.findall(r"<skill>\s*<name>\s*(.*?)\s*</name>.*?<location>\s*(.*?)\s*</location>", s, re.S)
open(sys.argv[2], "w").write("".join(n + "\n" for n, _ in skills))
open(sys.argv[4], "w").write("".join("%s\t%s\n" % (n, loc) for n, loc in skills))
agents = re.findall(r"^- \*\*([^*]+)\*\*:", s, re.M)
open(sys.argv[3], "w").write("".join(a + "\n" for a in agents))
PY
}

# No usage statistics (the CLI would try to reach its telemetry host).
q_settings() {
  mkdir -p "$1"
  python3 - "$1/settings.json" <<'PY'
import json, os, sys
p = sys.argv[1]
d = json.load(open(p)) if os.path.exists(p) and os.path.getsize(p) else {}
d.setdefault("privacy", {})["usageStatisticsEnabled"] = False
json.dump(d, open(p, "w"), indent=2)
PY
}
q_settings "$QHOME"

# 1. A plain session.
qwen_run hi "hi"
listings "$MOCK_REC" "$RT_OUT/seen-top-skills.txt" "$RT_OUT/seen-agents.txt" "$RT_OUT/skill-locations.tsv"
[ -f "$RT_OUT/hi.debug" ] || rt_warn "qwen --debug wrote no debug log under $QHOME/debug"
our_warnings "$RT_OUT/hi.debug"
our_warnings "$RT_OUT/hi.err"
want_loc=user
[ "$RT_SCOPE" = local ] && want_loc=project
bad_loc=$(awk -F'\t' -v w="$want_loc" '$1 ~ /^msd-/ && $2 != w {print $1 "(" $2 ")"}' "$RT_OUT/skill-locations.tsv" | tr '\n' ' ')
[ -z "$bad_loc" ] || rt_fail "skills listed at the wrong level (want $want_loc): $bad_loc"
dups=$(grep -E '^msd-' "$RT_OUT/seen-top-skills.txt" | sort | uniq -d | tr '\n' ' ')
[ -z "$dups" ] || rt_fail "skills listed twice: $dups"

# 2. Nested skills: reachable through a listed group's table.
python3 - "$RT_EXPECT" "$RT_OUT/seen-top-skills.txt" >"$RT_OUT/seen-skills.txt" 2>"$RT_OUT/nested.txt" <<'PY'
import json, os, re, sys
exp = json.load(open(sys.argv[1]))
top = set(l.strip() for l in open(sys.argv[2]) if l.strip())
paths = exp["paths"]["skills"]
for n in exp["skills"]:
    p = paths[n]
    parts = p.split(os.sep)
    # <home>/skills/<group>/skills/<name>/SKILL.md
    if len(parts) >= 5 and parts[-3] == "skills" and parts[-5] == "skills":
        group = parts[-4]
        gfile = os.sep.join(parts[:-3] + ["SKILL.md"])
        rel = "skills/%s/SKILL.md" % n
        ok = group in top and os.path.exists(gfile) and rel in open(gfile).read() and os.path.exists(p)
        print(n) if ok else None
        print("%s: nested in %s, %s" % (n, group, "reachable" if ok else "NOT reachable"), file=sys.stderr)
    elif n in top:
        print(n)
PY
rt_compare_names skills "$RT_OUT/seen-skills.txt"
rt_compare_names agents "$RT_OUT/seen-agents.txt"
# msd-* skills listed that msd did not write as top-level Qwen skills: another runtime's install
# seen through ~/.agents/skills or .agents/skills (or a nested skill listed on its own).
foreign=$(python3 - "$RT_EXPECT" "$RT_OUT/skill-locations.tsv" <<'PY'
import json, os, sys
exp = json.load(open(sys.argv[1]))
top = set()
for n in exp["skills"]:
    parts = exp["paths"]["skills"][n].split(os.sep)
    if not (len(parts) >= 5 and parts[-3] == "skills" and parts[-5] == "skills"):
        top.add(n)
seen = [l.rstrip("\n").split("\t") for l in open(sys.argv[2]) if l.startswith("msd-")]
print(" ".join("%s(%s)" % (n, loc) for n, loc in seen if n not in top))
PY
)
[ -z "$foreign" ] || rt_fail "Qwen lists msd skills msd did not write for Qwen (another runtime's install?): $foreign"
rt_note "Qwen lists top-level skills only: $(grep -c '^msd-' "$RT_OUT/seen-top-skills.txt") msd groups listed; nested skills counted when their group lists them (nested.txt)"

# 3. Workflow text: invoke a group skill, then read a nested skill's included workflow.
group=$(python3 - "$RT_EXPECT" <<'PY'
import json, os, sys
exp = json.load(open(sys.argv[1]))
for n in exp["skills"]:
    parts = exp["paths"]["skills"][n].split(os.sep)
    if len(parts) >= 5 and parts[-3] == "skills" and parts[-5] == "skills":
        print(parts[-4] + "\t" + n + "\t" + exp["paths"]["skills"][n])
        break
PY
)
if [ -n "$group" ]; then
  IFS=$'\t' read -r gname sname sfile <<<"$group"
  # the skill tool asks for permission in headless mode: approve it as a user would (yolo)
  qwen_run skill "use the $gname skill" --yolo --tool-call skill --tool-args "{\"skill\":\"$gname\"}"
  tool_results "$MOCK_REC" >"$RT_OUT/skill.results.txt"
  gfile=$(dirname "$(dirname "$(dirname "$sfile")")")/SKILL.md
  python3 - "$gfile" "$RT_OUT/skill.results.txt" <<'PY' ||
import sys
body = open(sys.argv[1]).read().split("\n---", 2)[-1]
lines = [l.strip() for l in body.split("\n") if len(l.strip()) >= 30][:3]
text = open(sys.argv[2]).read()
sys.exit(0 if lines and all(l in text for l in lines) else 1)
PY
    rt_fail "skill $gname: invoking it did not bring its SKILL.md body to the model ($(head -c 200 "$RT_OUT/skill.results.txt" | tr '\n' ' '))"
  inc=$(rt_includes "$sfile" "$PROJECT" | head -n1)
  if [ -n "$inc" ]; then
    # In the strict default mode: a read that would ask the user is declined, so the text only
    # arrives when msd-core is inside the workspace (local) or in context.includeDirectories.
    qwen_run read "read the workflow" --strict --tool-call read_file --tool-args "{\"file_path\":\"$inc\"}"
    tool_results "$MOCK_REC" >"$RT_OUT/read.results.txt"
    if why=$(rt_text_has_file "$RT_OUT/read.results.txt" "$inc"); then
      rt_flag workflow_text true
    else
      rt_flag workflow_text false
      rt_fail "workflow: read_file of $inc (included by $sname) did not return its text: $why; tool said: $(head -c 200 "$RT_OUT/read.results.txt" | tr '\n' ' ')"
    fi
  else
    rt_fail "skill $sname includes no workflow file (nothing to check)"
  fi
fi

# 4. Each agent's tools, as the subagent gets them.
# Qwen's own tool names (var ToolNames = {...} of its bundle).
TOOLNAMES=$(python3 - "$QWEN_PKG/chunks" <<'PY'
import glob, re, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.js")):
    t = open(f, encoding="utf-8", errors="replace").read()
    m = re.search(r"^var ToolNames = \{(.*?)^\};", t, re.S | re.M)
    if m:
        print(",".join(sorted(set(re.findall(r':\s*"([a-z_]+)"', m.group(1))))))
        break
PY
)
[ -n "$TOOLNAMES" ] || rt_warn "could not read Qwen's ToolNames from its bundle"
tools_ok=true
n_agents=0
while IFS= read -r name; do
  [ -n "$name" ] || continue
  n_agents=$((n_agents + 1))
  f=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["paths"]["agents"][sys.argv[2]])' "$RT_EXPECT" "$name")
  declared=$(rt_frontmatter "$f" tools)
  MOCK_REQUESTS=12 qwen_run "agent-$name" "delegate to $name" --yolo --tool-call agent \
    --tool-args "{\"description\":\"probe\",\"prompt\":\"probe: reply done\",\"subagent_type\":\"$name\"}"
  verdict=$(python3 - "$MOCK_REC" "$f" "$declared" "$TOOLNAMES" <<'PY'
import json, re, sys
rec, f, declared, known = sys.argv[1:5]
body = open(f).read().split("\n---", 2)[-1]
probe = [l.strip() for l in body.split("\n") if len(l.strip()) >= 30][:1]
main_tools, sub = set(), None
for l in open(rec):
    b = json.loads(l)["body"]
    names = [(t.get("function") or {}).get("name") for t in b.get("tools", [])]
    sysmsg = "".join(m["content"] if isinstance(m["content"], str) else "" for m in b.get("messages", []) if m.get("role") == "system")
    if probe and probe[0] in sysmsg:
        sub = names
        break
    if "agent" in names:
        main_tools |= set(names)
if sub is None:
    print("FAIL\tthe subagent never reached the model")
    sys.exit()
known = set(k for k in known.split(",") if k)
decl = [t for t in declared.split(",") if t]
missing = [t for t in decl if t not in sub and (t in main_tools or t not in known)]
unavail = [t for t in decl if t not in sub and t in known and t not in main_tools]
out = "OK" if not missing else "FAIL"
print("%s\tdeclared=%s got=%s missing=%s not-in-session=%s" % (out, decl, sub, missing, unavail))
PY
  )
  printf '%s\t%s\n' "$name" "$verdict" >>"$RT_OUT/agent-tools.tsv"
  case $verdict in
    OK*) ;;
    *) tools_ok=false
       why=$(grep -ao 'Background agent failed: .*' "$RT_OUT/agent-$name.debug" 2>/dev/null | grep -v 'failed: msd-' | head -n1)
       rt_fail "agent $name: ${verdict#FAIL	}${why:+ ($why)}" ;;
  esac
done < <(rt_expect_names agents)
[ $n_agents -gt 0 ] && rt_flag agent_tools "$tools_ok"
grep -q 'not-in-session=\[.\+\]' "$RT_OUT/agent-tools.tsv" 2>/dev/null &&
  rt_note "some declared tools are Qwen tools this offline session does not register (e.g. web_search without a provider): see agent-tools.tsv"

# msd's SessionStart hook (registered in the settings this install wrote) ran in the real
# CLI: its line about the project's .planning/STATE.md is in a request the mock recorded.
if rt_check_hook_context "qwen -p, SessionStart hookSpecificOutput.additionalContext" "$RT_OUT"/mock-*.jsonl; then rt_flag hooks true; else rt_flag hooks false; fi

# 5. QWEN_HOME moves msd-install and the CLI (global only).
if [ "$RT_SCOPE" = global ]; then
  ALT=$HOME/alt-qwen-home
  q_settings "$ALT"
  if QWEN_HOME=$ALT rt_msd_install qwen global >"$RT_OUT/env-install.log" 2>&1 &&
    [ -f "$ALT/msd-core/msd-file-manifest.json" ]; then
    mv "$QHOME/skills" "$QHOME/skills.off"
    QWEN_HOME=$ALT qwen_run env "hi"
    mv "$QHOME/skills.off" "$QHOME/skills"
    listings "$MOCK_REC" "$RT_OUT/env-skills.txt" "$RT_OUT/env-agents.txt" "$RT_OUT/env-loc.tsv"
    n=$(grep -c '^msd-' "$RT_OUT/env-skills.txt")
    m=$(grep -c '^msd-' "$RT_OUT/seen-top-skills.txt")
    [ "$n" -gt 0 ] && [ "$n" = "$m" ] ||
      rt_fail "QWEN_HOME=$ALT: the CLI lists $n msd skills from there (the default home listed $m)"
    rt_note "QWEN_HOME: msd-install wrote $ALT (its msd-core, skills, agents); the CLI listed $n msd skills from it"
  else
    rt_fail "QWEN_HOME=$ALT: msd-install did not write into $ALT ($(tail -n2 "$RT_OUT/env-install.log" | tr '\n' ' '))"
  fi
  QWEN_HOME=$ALT "$MSD_INSTALL" uninstall -r qwen --runtimes "$RT_REPO/runtimes" >>"$RT_OUT/env-install.log" 2>&1 || true
fi

rt_emit
