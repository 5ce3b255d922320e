#!/usr/bin/env bash
# pin: @google/gemini-cli@0.61.0
# node: 20
#
# Gemini CLI, offline (evidence/gemini.md has the source lines behind each step):
#  1. commands: the CLI's own FileCommandLoader and loadAgentsFromDirectory, imported from its
#     bundle, list what loads from ~/.gemini (or GEMINI_CLI_HOME) and the project, and every
#     load error they raise (coreEvents "user-feedback");
#  2. `gemini -p /msd:<cmd>` against the mock model (GOOGLE_GEMINI_BASE_URL, dummy
#     GEMINI_API_KEY, security.auth.selectedType=gemini-api-key, a fixed model so the router's
#     JSON classifier call is skipped): the expanded prompt must carry the included workflow
#     text, not the literal @{...} placeholder; the system prompt lists the registered agents;
#  3. per agent, the mock answers with an invoke_agent call: the subagent's own first request
#     lists the tools it really got, compared with the (mapped) tools msd declared;
#  4. global only: GEMINI_CLI_HOME moves both msd-install and the CLI;
#  5. an agent declaring a Claude MCP name (mcp__server__tool), installed from a copy of the
#     content: does Gemini's agent schema accept what msd wrote?
# "hooks": msd's SessionStart hook ran (its line reached the mock model).
set -u
. "$RT_LIB/common.sh"

GEM_PKG=$(cd "$RT_BIN_DIR/../@google/gemini-cli" && pwd)
GEM_BUNDLE=$GEM_PKG/bundle
GEM_COMMANDS=${MSD_RT_GEMINI_COMMANDS:-help plan-phase}
export GEMINI_API_KEY=sk-test GEMINI_CLI_TRUST_WORKSPACE=true
export GEMINI_TELEMETRY_ENABLED=false GEMINI_CLI_NO_RELAUNCH=true
GEM_MODEL=gemini-2.5-flash

# The user settings file the CLI reads: <homedir()>/.gemini/settings.json, homedir() being
# GEMINI_CLI_HOME or os.homedir(). Merge the auth selection in (msd may own entries there too).
gem_auth_settings() {
  local home=${1:-$HOME}
  mkdir -p "$home/.gemini"
  python3 - "$home/.gemini/settings.json" <<'PY'
import json, os, sys
p = sys.argv[1]
d = json.load(open(p)) if os.path.exists(p) and os.path.getsize(p) else {}
d.setdefault("security", {}).setdefault("auth", {})["selectedType"] = "gemini-api-key"
d.setdefault("general", {})["disableAutoUpdate"] = True
d.setdefault("privacy", {})["usageStatisticsEnabled"] = False
json.dump(d, open(p, "w"), indent=2)
PY
}

# The loader script: imports the two chunks of the installed bundle that define the loaders.
cat >"$RT_OUT/gem-load.mjs" <<'JS'
import fs from "node:fs";
import path from "node:path";
const bundle = process.argv[2];
const entry = fs.readFileSync(path.join(bundle, "gemini.js"), "utf8");
const main = entry.match(/import\("\.\/(gemini-[A-Z0-9]+\.js)"\)/)[1];
const chunks = [...fs.readFileSync(path.join(bundle, main), "utf8").matchAll(/from "\.\/(chunk-[A-Z0-9]+\.js)"/g)].map(m => m[1]);
const find = (re) => chunks.find(c => re.test(fs.readFileSync(path.join(bundle, c), "utf8")));
const cliChunk = find(/^var FileCommandLoader = class/m);
const coreChunk = find(/^async function loadAgentsFromDirectory\(/m);
const cli = await import(path.join(bundle, cliChunk));
const core = await import(path.join(bundle, coreChunk));
const feedback = [];
core.coreEvents.on("user-feedback", (p) => feedback.push(`${p.severity}: ${p.message} ${p.error ? JSON.stringify(p.error) : ""}`));
const cmds = await new cli.FileCommandLoader(null).loadCommands(new AbortController().signal);
const agents = [];
const agentErrors = [];
const dirs = [core.Storage.getUserAgentsDir(), new core.Storage(process.cwd()).getProjectAgentsDir()];
for (const d of [...new Set(dirs)]) {
  const r = await core.loadAgentsFromDirectory(d);
  for (const a of r.agents) agents.push({ name: a.name, dir: d, tools: a.toolConfig?.tools ?? null });
  for (const e of r.errors) agentErrors.push(`${d}: ${e.message}`);
}
console.log(JSON.stringify({ cliChunk, coreChunk, commands: cmds.map(c => c.name), agents, agentErrors, feedback }));
process.exit(0);
JS

# gem_load <tag> [env...]: run the loaders from PROJECT; leaves $RT_OUT/<tag>.json
gem_load() {
  local tag=$1
  shift
  (cd "$PROJECT" && env "$@" timeout -k 5 60 node "$RT_OUT/gem-load.mjs" "$GEM_BUNDLE") \
    >"$RT_OUT/$tag.json" 2>"$RT_OUT/$tag.err" || rt_fail "$tag: the loader script failed ($(tail -c 300 "$RT_OUT/$tag.err" | tr '\n' ' '))"
}

# gem_run <tag> <prompt> [mock args...]: one headless session; leaves <tag>.out/.err/.txt and
# mock-<tag>.jsonl
gem_run() {
  local tag=$1 prompt=$2 rc
  shift 2
  MOCK_TAG=$tag rt_mock_start "$@" || { rt_fail "$tag: mock model did not start"; return 1; }
  GOOGLE_GEMINI_BASE_URL=$MOCK_URL rt_timeout 120 gemini -m "$GEM_MODEL" --approval-mode yolo \
    -p "$prompt" --output-format json </dev/null >"$RT_OUT/$tag.out" 2>"$RT_OUT/$tag.err"
  rc=$?
  rt_mock_stop
  rt_mock_text "$MOCK_REC" "$RT_OUT/$tag.txt"
  [ $rc -eq 0 ] || rt_fail "$tag: gemini -p exited $rc ($(tail -c 300 "$RT_OUT/$tag.err" | tr '\n' ' '))"
  [ -s "$MOCK_REC" ] || rt_fail "$tag: gemini sent nothing to the mock model"
  return 0
}

# The system prompt's subagent listing: "- <name> -> <description>" lines.
agent_listing() {
  python3 - "$1" <<'PY'
import json, re, sys
b = json.loads(open(sys.argv[1]).readline())["body"]
t = "".join(p.get("text", "") for p in (b.get("systemInstruction") or {}).get("parts", []))
for m in re.finditer(r"^- ([A-Za-z0-9_.-]+) -> ", t, re.M):
    print(m.group(1))
PY
}
# Lines of a log that are warnings/errors naming msd's files; the CLI cache path holds
# "msd-real-runtimes", so it is masked first.
our_warnings() {
  local log=$1 masked="$RT_OUT/$(basename "$1").masked"
  [ -f "$log" ] || return 0
  sed "s#$MSD_RT_CACHE#<cache>#g" "$log" >"$masked"
  rt_log_our_warnings "$masked" "${2:-}"
}

gem_auth_settings "$HOME"
HOME_DIR=$(rt_expect_field home)
BASE=$PROJECT

# 1. What the CLI's loaders see.
gem_load load
# Files under commands/msd/ are named msd:<stem>; RT_EXPECT names them by <stem>.
rt_json "$RT_OUT/load.json" '"\n".join(c[4:] for c in d["commands"] if c.startswith("msd:"))' >"$RT_OUT/seen-commands.txt"
rt_compare_names commands "$RT_OUT/seen-commands.txt"
rt_json "$RT_OUT/load.json" '"\n".join(d["agentErrors"] + d["feedback"])' >"$RT_OUT/load-errors.txt"
our_warnings "$RT_OUT/load-errors.txt" '.'

# 2. Sessions: the expanded command prompts and the agent listing of the system prompt.
# Without .planning/STATE.md first (msd's session-start hook then adds nothing); step 2b runs a
# command in a project msd knows.
mv "$PROJECT/.planning/STATE.md" "$PROJECT/.planning/STATE.md.off"
first=1
for c in $GEM_COMMANDS; do
  f="$HOME_DIR/commands/msd/$c.toml"
  [ -f "$f" ] || { rt_fail "command file $f missing"; continue; }
  gem_run "cmd-$c" "/msd:$c"
  our_warnings "$RT_OUT/cmd-$c.err"
  # Only the user turn: the CLI's own text cannot hide a placeholder there.
  python3 - "$MOCK_REC" >"$RT_OUT/cmd-$c.user.txt" <<'PY'
import json, sys
rec = [json.loads(l) for l in open(sys.argv[1])]
for r in rec[:1]:
    for c in r["body"].get("contents", []):
        if c.get("role") == "user":
            for p in c.get("parts", []):
                if isinstance(p.get("text"), str):
                    print(p["text"])
PY
  rt_check_workflow "$f" "$RT_OUT/cmd-$c.user.txt" "$BASE"
  if [ $first = 1 ]; then
    first=0
    agent_listing "$MOCK_REC" >"$RT_OUT/seen-agents-first.txt"
  fi
done
mv "$PROJECT/.planning/STATE.md.off" "$PROJECT/.planning/STATE.md"

# 2b. The same command in a project msd knows. A SessionStart hook's additionalContext would be
# put in front of the -p text (`<hook_context>...</hook_context>\n\n/msd:help`,
# @google/gemini-cli@0.61.0:bundle/gemini-3HFX2LNT.js:17590) and the command would not run, so
# msd's session-start is on BeforeAgent (added after the request, chunk-JDPZ4CE3.js:346756).
c=${GEM_COMMANDS%% *}
gem_run "hookcmd-$c" "/msd:$c"
python3 -c 'import json,sys; b=json.loads(open(sys.argv[1]).readline())["body"]; print("\n".join(p.get("text","") for c in b.get("contents",[]) if c.get("role")=="user" for p in c.get("parts",[])))' \
  "$MOCK_REC" >"$RT_OUT/hookcmd-$c.user.txt"
inc=$(rt_includes "$HOME_DIR/commands/msd/$c.toml" "$BASE" | head -n1)
if ! rt_text_has_file "$RT_OUT/hookcmd-$c.user.txt" "$inc" >/dev/null; then
  rt_fail "hook + command: with .planning/STATE.md, headless gemini -p /msd:$c is not run as a command (is msd's session-start on SessionStart again? Gemini prepends that context to the -p text, gemini-3HFX2LNT.js:17590)"
fi

if [ "$RT_SCOPE" = global ] && grep -q '"workflow_text", "false"' "$RT_OUT/.result.jsonl"; then
  # Diagnose: does listing msd-core in context.includeDirectories make the include resolve?
  cp "$HOME/.gemini/settings.json" "$RT_OUT/settings.before-diagnose.json"
  python3 - "$HOME/.gemini/settings.json" "$(rt_expect_field core)" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
inc = d.setdefault("context", {}).setdefault("includeDirectories", [])
if sys.argv[2] not in inc:
    inc.append(sys.argv[2])
json.dump(d, open(sys.argv[1], "w"), indent=2)
PY
  c=${GEM_COMMANDS%% *}
  gem_run "diag-$c" "/msd:$c"
  python3 -c 'import json,sys; b=json.loads(open(sys.argv[1]).readline())["body"]; print("\n".join(p.get("text","") for c in b.get("contents",[]) if c.get("role")=="user" for p in c.get("parts",[])))' \
    "$MOCK_REC" >"$RT_OUT/diag-$c.user.txt"
  inc=$(rt_includes "$HOME_DIR/commands/msd/$c.toml" "$BASE" | head -n1)
  if rt_text_has_file "$RT_OUT/diag-$c.user.txt" "$inc" >/dev/null && ! grep -q '@{' "$RT_OUT/diag-$c.user.txt"; then
    rt_note "diagnosis: with context.includeDirectories=[$(rt_expect_field core)] in ~/.gemini/settings.json the workflow text of /msd:$c arrives (msd does not write that entry today)"
  else
    rt_note "diagnosis: even with context.includeDirectories the workflow text of /msd:$c did not arrive"
  fi
  cp "$RT_OUT/settings.before-diagnose.json" "$HOME/.gemini/settings.json"
fi

if [ "$RT_SCOPE" = local ]; then
  # Project agents register only once acknowledged (an interactive dialog stores
  # {projectRoot: {name: sha256(file)}} in ~/.gemini/acknowledgments/agents.json); headless
  # never asks. Record what a first session saw, then acknowledge as the user would.
  pre=$(grep -c '^msd-' "$RT_OUT/seen-agents-first.txt" 2>/dev/null)
  python3 - "$RT_EXPECT" "$HOME/.gemini/acknowledgments/agents.json" "$PROJECT" <<'PY'
import hashlib, json, os, sys
exp, out, proj = sys.argv[1:4]
d = json.load(open(out)) if os.path.exists(out) else {}
for n in json.load(open(exp))["agents"]:
    p = json.load(open(exp))["paths"]["agents"][n]
    d.setdefault(proj, {})[n] = hashlib.sha256(open(p, "rb").read()).hexdigest()
os.makedirs(os.path.dirname(out), exist_ok=True)
json.dump(d, open(out, "w"), indent=2)
PY
  rt_warn "local agents: Gemini registers project agents only after the user acknowledges them in an interactive session ($pre/$(rt_expect_names agents | wc -l) listed before); the probe wrote that acknowledgement to count them"
fi
gem_run hi "hi"
agent_listing "$MOCK_REC" >"$RT_OUT/seen-agents.txt"
rt_compare_names agents "$RT_OUT/seen-agents.txt"
our_warnings "$RT_OUT/hi.err"

# 3. Each agent's tools, as the subagent receives them.
python3 - "$RT_EXPECT" "$RT_OUT/load.json" >"$RT_OUT/agents-declared.tsv" <<'PY'
import json, re, sys
exp = json.load(open(sys.argv[1]))
for n in exp["agents"]:
    text = open(exp["paths"]["agents"][n]).read()
    fm = re.match(r"^---\n(.*?)\n---", text, re.S).group(1)
    tools, on = [], False
    for l in fm.split("\n"):
        if re.match(r"^tools:\s*$", l):
            on = True
            continue
        m = re.match(r"^\s+-\s*(.*)$", l)
        if on and m:
            tools.append(m.group(1).strip().strip("\"'"))
        elif on:
            on = False
    print(n + "\t" + ",".join(tools))
PY
tools_ok=true
ran=0
while IFS=$'\t' read -r name declared; do
  [ -n "$name" ] || continue
  ran=$((ran + 1))
  MOCK_REQUESTS=8 gem_run "agent-$name" "probe: delegate to $name" --tool-call invoke_agent \
    --tool-args "{\"agent_name\":\"$name\",\"prompt\":\"probe: reply done\"}"
  got=$(python3 - "$MOCK_REC" "$name" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    b = json.loads(l)["body"]
    si = "".join(p.get("text", "") for p in (b.get("systemInstruction") or {}).get("parts", []))
    if "invoke_agent" in json.dumps(b.get("tools", [])):
        continue  # the main session
    names = [d["name"] for t in b.get("tools", []) for d in t.get("functionDeclarations", [])]
    print(",".join(names))
    break
PY
  )
  if [ -z "$got" ]; then
    tools_ok=false
    why=$(grep -a "Subagent '$name' failed" "$RT_OUT/agent-$name.err" | head -n1)
    rt_fail "agent $name: the subagent never reached the model${why:+: ${why:0:300}}"
    continue
  fi
  # Gemini resolves legacy aliases (TOOL_LEGACY_ALIASES: search_file_content -> grep_search).
  miss=$(python3 -c '
import sys
alias = {"search_file_content": "grep_search"}
decl = [alias.get(t, t) for t in sys.argv[1].split(",") if t]
got = set(sys.argv[2].split(","))
print(",".join(t for t in decl if t not in got))' "$declared" "$got")
  if [ -n "$miss" ]; then
    tools_ok=false
    rt_fail "agent $name: declared tools not given to the subagent: $miss (got: $got)"
  fi
  printf '%s\tdeclared=%s\tgot=%s\n' "$name" "$declared" "$got" >>"$RT_OUT/agent-tools.tsv"
done <"$RT_OUT/agents-declared.tsv"
if [ $ran -gt 0 ]; then rt_flag agent_tools "$tools_ok"; fi

# Gemini also loads skills from ~/.agents/skills and .agents/skills: msd writes no Gemini
# skills, so any msd-* skill it offers comes from another runtime's install (Codex, Kimi).
python3 - $(ls "$RT_OUT"/mock-agent-*.jsonl 2>/dev/null | head -n1) <<'PY' >"$RT_OUT/foreign-skills.txt" 2>/dev/null
import json, sys
names = set()
for f in sys.argv[1:2]:
    b = json.loads(open(f).readline())["body"]
    for t in b.get("tools", []):
        for d in t.get("functionDeclarations", []):
            if d.get("name") == "activate_skill":
                names |= set(d.get("parametersJsonSchema", {}).get("properties", {}).get("name", {}).get("enum", []))
print("\n".join(sorted(n for n in names if n.startswith("msd-"))))
PY
if grep -q '^msd-' "$RT_OUT/foreign-skills.txt" 2>/dev/null; then
  rt_fail "Gemini offers $(grep -c '^msd-' "$RT_OUT/foreign-skills.txt") msd skills written for another runtime (~/.agents/skills or .agents/skills): $(head -n5 "$RT_OUT/foreign-skills.txt" | tr '\n' ' ')"
fi

# msd's SessionStart hook (registered in the settings this install wrote) ran in the real
# CLI: its line about the project's .planning/STATE.md is in a request the mock recorded.
if rt_check_hook_context "gemini -p, BeforeAgent hookSpecificOutput.additionalContext" "$RT_OUT"/mock-*.jsonl; then rt_flag hooks true; else rt_flag hooks false; fi

# 4. GEMINI_CLI_HOME moves both msd-install and the CLI (global only).
if [ "$RT_SCOPE" = global ]; then
  ALT=$HOME/alt-gemini-home
  mkdir -p "$ALT"
  if GEMINI_CLI_HOME=$ALT rt_msd_install gemini global >"$RT_OUT/env-install.log" 2>&1; then
    if [ -f "$ALT/.gemini/msd-core/msd-file-manifest.json" ]; then
      gem_load env-load GEMINI_CLI_HOME="$ALT"
      n=$(rt_json "$RT_OUT/env-load.json" 'sum(1 for c in d["commands"] if c.startswith("msd:"))')
      a=$(rt_json "$RT_OUT/env-load.json" 'sum(1 for a in d["agents"] if "/alt-gemini-home/" in a["dir"])')
      m=$(rt_expect_names commands | wc -l)
      [ "$n" = "$m" ] || rt_fail "GEMINI_CLI_HOME=$ALT: the CLI loads $n of $m msd commands from there"
      ae=$(rt_expect_names agents | wc -l)
      [ "$a" = "$ae" ] || rt_fail "GEMINI_CLI_HOME=$ALT: the CLI loads $a of $ae msd agents from there"
      rt_note "GEMINI_CLI_HOME: msd-install wrote $ALT/.gemini; the CLI loaded $n/$m commands and $a/$ae agents from it"
    else
      rt_fail "GEMINI_CLI_HOME=$ALT: msd-install did not write into $ALT/.gemini ($(tail -n2 "$RT_OUT/env-install.log" | tr '\n' ' '))"
    fi
    GEMINI_CLI_HOME=$ALT "$MSD_INSTALL" uninstall -r gemini --runtimes "$RT_REPO/runtimes" >>"$RT_OUT/env-install.log" 2>&1 || true
  else
    rt_fail "GEMINI_CLI_HOME: msd-install failed ($(tail -n2 "$RT_OUT/env-install.log" | tr '\n' ' '))"
  fi
fi

# 5. An MCP tool in Claude's spelling in an agent's tools: what does Gemini make of it?
if [ "$RT_SCOPE" = global ] && [ -d "$RT_REPO/content/agents" ]; then
  MC=$RT_OUT/mcp-content
  rm -rf "$MC" && cp -r "$RT_REPO/content" "$MC"
  # An agent the workflows spawn (only those are installed), its tools replaced in place.
  src=$(ls "$MC/agents"/*.md | head -n1)
  MCP_AGENT=$(basename "$src" .md)
  python3 - "$src" "$src" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
t = re.sub(r"^tools: (.*)$", r"tools: Read, mcp__context7__resolve-library-id", t, count=1, flags=re.M)
open(sys.argv[2], "w").write(t)
PY
  python3 - "$MC/tiers.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
json.dump(d, open(sys.argv[1], "w"), indent=2)
PY
  ALT=$HOME/alt-gemini-mcp
  mkdir -p "$ALT"
  if GEMINI_CLI_HOME=$ALT "$MSD_INSTALL" -r gemini --runtimes "$RT_REPO/runtimes" --content "$MC" >"$RT_OUT/mcp-install.log" 2>&1; then
    f=$ALT/.gemini/agents/$MCP_AGENT.md
    written=$(rt_frontmatter "$f" tools 2>/dev/null)
    gem_load mcp-load GEMINI_CLI_HOME="$ALT"
    err=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("; ".join(e for e in d["agentErrors"] if sys.argv[2] in e))' "$RT_OUT/mcp-load.json" "$MCP_AGENT")
    if [ -n "$err" ]; then
      rt_fail "MCP tool names: an agent declaring mcp__context7__resolve-library-id is written with tools [$written] and Gemini rejects the whole agent: ${err:0:300}"
    else
      rt_note "MCP tool names: written as [$written]; Gemini loads the agent"
    fi
    GEMINI_CLI_HOME=$ALT "$MSD_INSTALL" uninstall -r gemini --runtimes "$RT_REPO/runtimes" >>"$RT_OUT/mcp-install.log" 2>&1 || true
  else
    rt_warn "MCP probe: msd-install --content failed ($(tail -n2 "$RT_OUT/mcp-install.log" | tr '\n' ' '))"
  fi
fi

rt_emit
