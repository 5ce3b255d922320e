# shellcheck shell=bash
# The probe body shared by OpenCode and Kilo (Kilo is a fork of OpenCode with the same loader and
# the same debug subcommands). The caller sets:
#   OC_CLI    the executable (opencode | kilo)
#   OC_ENV    the env prefix (OPENCODE | KILO)
#   OC_NAME   the XDG config dir name (opencode | kilo)
#   OC_BINARY the platform binary (for tool names, evidence/<id>.md)
# Offline: `<cli> debug config` (resolved commands and agents, with what the loader kept of their
# frontmatter), `<cli> debug skill --print-logs` (skills and the loader's warnings), one
# `<cli> run --command msd-help` against the mock model (anthropic provider, baseURL option), and
# one `<cli> run` in which the mock asks to read `.env`: msd's plugin must put the session-start
# line into the request and refuse the read.
set -u
. "$RT_LIB/common.sh"

export "${OC_ENV}_DISABLE_AUTOUPDATE=1" "${OC_ENV}_DISABLE_MODELS_FETCH=1"
export "${OC_ENV}_DISABLE_LSP_DOWNLOAD=1" "${OC_ENV}_DISABLE_SHARE=1" "${OC_ENV}_DISABLE_DEFAULT_PLUGINS=1"
export ANTHROPIC_API_KEY=sk-test

oc() { rt_timeout 90 "$OC_CLI" "$@" </dev/null; }

# oc_config <tag> : debug config (JSON) + logs
oc_config() {
  oc debug config --print-logs --log-level WARN >"$RT_OUT/$1-config.json" 2>"$RT_OUT/$1-config.log" ||
    rt_fail "$1: $OC_CLI debug config exited $? ($(tail -c 300 "$RT_OUT/$1-config.log" | tr '\n' ' '))"
}
oc_skills() {
  oc debug skill --print-logs --log-level WARN >"$RT_OUT/$1-skill.json" 2>"$RT_OUT/$1-skill.log" ||
    rt_fail "$1: $OC_CLI debug skill exited $? ($(tail -c 300 "$RT_OUT/$1-skill.log" | tr '\n' ' '))"
}

# 1. Commands and agents as the loader resolved them.
oc_config main
python3 - "$RT_OUT/main-config.json" "$RT_EXPECT" "$RT_OUT" "$OC_BINARY" <<'PY'
import json, os, re, sys
cfg_path, exp_path, out, binary = sys.argv[1:5]
try:
    cfg = json.load(open(cfg_path))
except ValueError:
    cfg = {}
exp = json.load(open(exp_path))
open(os.path.join(out, "seen-commands.txt"), "w").write("\n".join(cfg.get("command", {})) + "\n")
open(os.path.join(out, "seen-agents.txt"), "w").write("\n".join(cfg.get("agent", {})) + "\n")
# Tool names the CLI has, from its binary (evidence/<id>.md cites the list).
blob = open(binary, "rb").read() if os.path.exists(binary) else b""
real = set()
for m in re.finditer(rb'\["bash","read","edit","glob","grep","webfetch","task","todowrite"[^\]]*\]', blob):
    real |= set(json.loads(m.group(0)))
real |= {"write", "list", "patch", "multiedit", "question", "skill", "lsp", "codesearch", "apply_patch"}
fm_re = re.compile(r"^---\n(.*?)\n---", re.S)
dropped, bad_tools = [], []
def fm_keys(path):
    m = fm_re.match(open(path).read())
    return re.findall(r"^([A-Za-z_-]+):", m.group(1), re.M) if m else []
def fm_tools(path):
    m = fm_re.match(open(path).read())
    if not m:
        return {}
    t = re.search(r"^tools:\n((?:[ \t]+.*\n?)*)", m.group(1) + "\n", re.M)
    return dict(re.findall(r"^\s+([A-Za-z_*-]+):\s*(\S+)", t.group(1), re.M)) if t else {}
for name in exp["commands"]:
    keys = fm_keys(exp["paths"]["commands"][name])
    got = cfg.get("command", {}).get(name)
    if got is None:
        continue
    lost = [k for k in keys if k not in got and k not in ("name",)]
    if lost:
        dropped.append("%s: %s" % (name, ",".join(lost)))
for name in exp["agents"]:
    declared = fm_tools(exp["paths"]["agents"][name])
    got = cfg.get("agent", {}).get(name)
    if got is None:
        continue
    have = got.get("tools") or {}
    if declared and sorted(have) != sorted(declared):
        bad_tools.append("%s: file declares %s, loader kept %s" % (name, sorted(declared), sorted(have)))
    unknown = [t for t in have if t not in real and "*" not in t]
    if unknown:
        bad_tools.append("%s: not tool names of this CLI: %s" % (name, unknown))
json.dump({"dropped": dropped, "bad_tools": bad_tools}, open(os.path.join(out, "config-check.json"), "w"))
PY
rt_compare_names commands "$RT_OUT/seen-commands.txt"
rt_compare_names agents "$RT_OUT/seen-agents.txt"
ndrop=$(rt_json "$RT_OUT/config-check.json" 'len(d["dropped"])')
if [ "$ndrop" -gt 0 ]; then
  rt_fail "commands: the loader drops frontmatter keys we write in $ndrop commands (e.g. $(rt_json "$RT_OUT/config-check.json" 'd["dropped"][0]')): do not emit keys $OC_CLI ignores"
fi
nbad=$(rt_json "$RT_OUT/config-check.json" 'len(d["bad_tools"])')
if [ "$nbad" -gt 0 ]; then
  rt_flag agent_tools false
  rt_json "$RT_OUT/config-check.json" '"\n".join(d["bad_tools"][:6])' | while IFS= read -r l; do rt_fail "agent tools: $l"; done
else
  rt_flag agent_tools true
fi
grep -av 'duplicate skill name' "$RT_OUT/main-config.log" >"$RT_OUT/main-config.other.log" || true
rt_log_our_warnings "$RT_OUT/main-config.other.log"

# 2. Skills, and the loader's warnings (duplicate skill names when another runtime's copy is
#    in a directory this CLI also scans: ~/.claude/skills, ~/.agents/skills).
oc_skills main
python3 -c 'import json,sys
try: d=json.load(open(sys.argv[1]))
except ValueError: d=[]
print("\n".join(x.get("name","") for x in d))' "$RT_OUT/main-skill.json" >"$RT_OUT/seen-skills.txt"
rt_compare_names skills "$RT_OUT/seen-skills.txt"
ndup=$(grep -ac 'duplicate skill name.*msd-' "$RT_OUT/main-skill.log" || true)
[ "$ndup" -eq 0 ] || rt_fail "skills: $OC_CLI logs $ndup 'duplicate skill name' warnings for msd skills (e.g. $(grep -a -m1 'duplicate skill name.*msd-' "$RT_OUT/main-skill.log" | cut -c1-300))"
grep -av 'duplicate skill name' "$RT_OUT/main-skill.log" >"$RT_OUT/main-skill.other.log" || true
rt_log_our_warnings "$RT_OUT/main-skill.other.log"
ndupname=$(sort "$RT_OUT/seen-skills.txt" | uniq -d | grep -c '^msd' || true)
[ "$ndupname" -eq 0 ] || rt_fail "skills: $ndupname msd skill names listed twice"

# 3. A session: /msd-help's included workflow text and the instructions block reach the model.
MOCK_TAG=help rt_mock_start
export "${OC_ENV}_CONFIG_CONTENT={\"provider\":{\"anthropic\":{\"options\":{\"baseURL\":\"$MOCK_URL/v1\",\"apiKey\":\"sk-test\"}}},\"model\":\"anthropic/claude-sonnet-4-5\",\"small_model\":\"anthropic/claude-sonnet-4-5\"}"
oc run --print-logs --log-level WARN --command msd-help >"$RT_OUT/help.out" 2>"$RT_OUT/help.log" ||
  rt_fail "session: $OC_CLI run --command msd-help exited $? ($(tail -c 300 "$RT_OUT/help.log" | tr '\n' ' '))"
unset "${OC_ENV}_CONFIG_CONTENT"
rt_mock_stop
rt_mock_text "$MOCK_REC" "$RT_OUT/help.txt"
[ -s "$MOCK_REC" ] || rt_fail "session: $OC_CLI sent nothing to the mock model"
help_file=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["paths"]["commands"].get("msd-help",""))' "$RT_EXPECT")
if [ -n "$help_file" ]; then
  rt_check_workflow "$help_file" "$RT_OUT/help.txt" "$PROJECT"
else
  rt_fail "session: msd wrote no msd-help command"
fi
# Every msd agent is offered to the model as a subagent (the task tool lists them).
miss=0
while IFS= read -r a; do grep -aq -- "- $a:" "$RT_OUT/help.txt" || miss=$((miss + 1)); done < <(rt_expect_names agents)
[ "$miss" -eq 0 ] || rt_fail "session: $miss msd agents are not offered to the model as subagents"
grep -av 'duplicate skill name' "$RT_OUT/help.log" >"$RT_OUT/help.other.log" || true
rt_log_our_warnings "$RT_OUT/help.other.log"

# 3b. A file the workflow tells the model to read (required_reading under msd-core) is readable
#     by the CLI's read tool without a permission prompt (`external_directory` defaults to ask,
#     and `run` auto-rejects what would ask).
wf_file=$(rt_includes "$help_file" "$PROJECT" | head -n1)
req=$(python3 -c 'import re,sys
core, wf = sys.argv[1], sys.argv[2]
try: t = open(wf).read()
except OSError: sys.exit(0)
for m in re.finditer(re.escape(core) + r"/[A-Za-z0-9_./-]+\.md", t):
    if m.group(0) != wf:
        print(m.group(0)); break' "$(rt_expect_field core)" "$wf_file")
if [ -n "$req" ] && [ -f "$req" ]; then
  MOCK_TAG=read rt_mock_start --tool-call read --tool-args "{\"filePath\":\"$req\"}"
  export "${OC_ENV}_CONFIG_CONTENT={\"provider\":{\"anthropic\":{\"options\":{\"baseURL\":\"$MOCK_URL/v1\",\"apiKey\":\"sk-test\"}}},\"model\":\"anthropic/claude-sonnet-4-5\",\"small_model\":\"anthropic/claude-sonnet-4-5\"}"
  oc run --print-logs --log-level WARN --command msd-help >"$RT_OUT/read.out" 2>"$RT_OUT/read.log"
  unset "${OC_ENV}_CONFIG_CONTENT"
  rt_mock_stop
  rt_mock_text "$MOCK_REC" "$RT_OUT/read.txt"
  if ! why=$(rt_text_has_file "$RT_OUT/read.txt" "$req"); then
    rt_fail "read: the model cannot read $req that the workflow requires ($(grep -aoE 'permission requested: [^;]*; [a-z-]+' "$RT_OUT/read.out" "$RT_OUT/read.log" | head -n1 | cut -d: -f2-)): msd-core is outside every directory $OC_CLI allows without asking"
  fi
else
  rt_note "read: the msd-help workflow names no other msd-core file"
fi

# 3c. msd's plugin (plugin/msd.js, which spawns `msd_run hook ...`): the session-start line is
#     in the system text of the requests the CLI sends (experimental.chat.system.transform), and
#     the guard refuses a `.env` read the mock model asks for (tool.execute.before throws): the
#     tool result the model gets is msd's refusal, not the secret.
oc_plugin=$( [ "$RT_SCOPE" = local ] && echo "$PROJECT/.$OC_NAME/plugin/msd.js" || echo "${XDG_CONFIG_HOME:-$HOME/.config}/$OC_NAME/plugin/msd.js")
[ -f "$oc_plugin" ] || rt_fail "hooks: msd wrote no plugin at $oc_plugin"
oc_secret="rt-probe-secret-$$"
printf 'API_TOKEN=%s\n' "$oc_secret" >"$PROJECT/.env"
# oc_hook_run <tag> [mock args]: one `run` against the mock model, its requests in mock-<tag>.jsonl
oc_hook_run() {
  local tag=$1
  shift
  MOCK_TAG=$tag rt_mock_start "$@"
  export "${OC_ENV}_CONFIG_CONTENT={\"provider\":{\"anthropic\":{\"options\":{\"baseURL\":\"$MOCK_URL/v1\",\"apiKey\":\"sk-test\"}}},\"model\":\"anthropic/claude-sonnet-4-5\",\"small_model\":\"anthropic/claude-sonnet-4-5\"}"
  oc run --print-logs --log-level WARN "read the .env file" >"$RT_OUT/$tag.out" 2>"$RT_OUT/$tag.log"
  unset "${OC_ENV}_CONFIG_CONTENT"
  rt_mock_stop
}
oc_hook_run hook --tool-call read --tool-args '{"filePath":".env"}'
if rt_check_hook_context "$OC_CLI run, plugin experimental.chat.system.transform" "$RT_OUT/mock-hook.jsonl"; then
  rt_flag hooks true
else
  rt_flag hooks false
fi
if grep -aqF -- "$oc_secret" "$RT_OUT/mock-hook.jsonl"; then
  rt_fail "guard: the model got the secret of $PROJECT/.env (msd's guard did not block the read)"
elif grep -aqF -- "msd: refusing to read .env" "$RT_OUT/mock-hook.jsonl"; then
  rt_note "guard: the .env read was refused by msd's plugin (tool result: $(grep -aoF -m1 -- 'msd: refusing to read .env' "$RT_OUT/mock-hook.jsonl" | head -n1))"
else
  rt_fail "guard: no request after the .env read carries msd's refusal ($(grep -ac . "$RT_OUT/mock-hook.jsonl") requests; did the mock drive the read?)"
fi
# Global and local together (both plugins load in one session): the line once per request.
if [ "$RT_SCOPE" = global ]; then
  if rt_msd_install "$RT_ID" local >"$RT_OUT/msd-install-local.log" 2>&1; then
    oc_hook_run both
    lines=$(head -n1 "$RT_OUT/mock-both.jsonl" | grep -aoF -- "$RT_HOOK_LINE" | wc -l)
    [ "$lines" -eq 1 ] ||
      rt_fail "global+local: msd's session-start line is in the first request $lines times (want 1)"
    rt_note "global+local: the first request carries the session-start line $lines time(s)"
    (cd "$PROJECT" && "$(rt_msd_bin)" uninstall -r "$RT_ID" --local --runtimes "$RT_REPO/runtimes") \
      >>"$RT_OUT/msd-install-local.log" 2>&1 || rt_fail "global+local: msd-install uninstall --local failed"
  else
    rt_fail "global+local: msd-install -r $RT_ID --local failed: $(tail -n2 "$RT_OUT/msd-install-local.log")"
  fi
fi
rm -f "$PROJECT/.env"

# 4. The env overrides the CLI reads move msd-install and the CLI to the same place.
if [ "$RT_SCOPE" = global ]; then
  env_check() { # env_check <VAR> <value> <dir msd should use>
    local var=$1 val=$2 dir=$3 n
    if ! env "$var=$val" bash -c '. "$RT_LIB/common.sh"; rt_msd_install "$RT_ID" global' >"$RT_OUT/env-$var.log" 2>&1; then
      rt_fail "$var: msd-install failed ($(tail -n1 "$RT_OUT/env-$var.log"))"; return
    fi
    if ! grep -rqs . "$dir/msd-core/msd-file-manifest.json"; then
      rt_fail "$var=$val: msd-install did not install into $dir"; return
    fi
    env "$var=$val" "$OC_CLI" debug config >"$RT_OUT/env-$var.json" 2>"$RT_OUT/env-$var.err" </dev/null
    n=$(python3 -c 'import json,sys
try: d=json.load(open(sys.argv[1]))
except ValueError: d={}
import os
print(sum(1 for k, v in d.get("command",{}).items() if k.startswith("msd-") and (sys.argv[2] + "/") in json.dumps(v)))' "$RT_OUT/env-$var.json" "$dir")
    local want
    want=$(rt_expect_names commands | wc -l)
    [ "$n" -eq "$want" ] || rt_fail "$var=$val: msd-install wrote into $dir but $OC_CLI resolves $n of $want msd commands from it"
  }
  env_check "${OC_ENV}_CONFIG_DIR" "$HOME/alt-$OC_NAME-dir" "$HOME/alt-$OC_NAME-dir"
  mkdir -p "$HOME/alt-$OC_NAME-file"
  printf '{}\n' >"$HOME/alt-$OC_NAME-file/$OC_NAME.json"
  # A config *file*: the CLI does not scan its directory for commands (evidence/opencode.md), so
  # msd-install stays in the default dir and the CLI still resolves the commands there.
  env_check "${OC_ENV}_CONFIG" "$HOME/alt-$OC_NAME-file/$OC_NAME.json" "${XDG_CONFIG_HOME:-$HOME/.config}/$OC_NAME"
  mkdir -p "$HOME/alt-xdg"
  env_check XDG_CONFIG_HOME "$HOME/alt-xdg" "$HOME/alt-xdg/$OC_NAME"
fi

rt_emit
