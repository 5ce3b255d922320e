#!/usr/bin/env bash
# pin: @openai/codex@0.171.0
# node: 20
#
# Codex, offline: `codex app-server` JSON-RPC (lib/codex_rpc.py): skills/list, hooks/list,
# config/read, then one thread with the turn "$msd-help" against the mock model (a custom
# model provider with base_url on 127.0.0.1, wire_api "responses"). The mock answers the first
# request with an exec_command reading the workflow the skill includes (Codex does not expand
# @-includes; the model reads the file with the shell), so the second request shows whether the
# workflow text reached the model. The session's notifications show deprecation notices and
# whether the SessionStart hook ran.
set -u
. "$RT_LIB/common.sh"

export OPENAI_API_KEY=sk-test CODEX_DISABLE_UPDATE_CHECK=1
cwd=$PROJECT
home=$(rt_expect_field home)
codex_home=${CODEX_HOME:-$HOME/.codex}

rpc() { # rpc <out.json> [--turn TEXT] -- extra codex args; requests on stdin
  local out=$1
  shift
  rt_timeout 150 python3 "$RT_LIB/codex_rpc.py" --out "$out" --timeout 120 --cwd "$cwd" "$@"
}
provider_args() {
  printf '%s\n' -c model_provider=mock -c 'model_providers.mock.name="mock"' \
    -c "model_providers.mock.base_url=\"$MOCK_URL/v1\"" -c 'model_providers.mock.wire_api="responses"' \
    -c 'model_providers.mock.env_key="OPENAI_API_KEY"' -c 'model="mock-model"'
}

# 1. What Codex loads: skills, hooks, config.
printf '%s\n' "{\"method\":\"skills/list\",\"params\":{\"cwds\":[\"$cwd\"],\"forceReload\":true}}" \
  "{\"method\":\"hooks/list\",\"params\":{\"cwds\":[\"$cwd\"]}}" \
  "{\"method\":\"config/read\",\"params\":{\"cwd\":\"$cwd\",\"includeLayers\":true}}" |
  rpc "$RT_OUT/list.json" -- codex app-server 2>"$RT_OUT/list.err"
[ -s "$RT_OUT/list.json" ] || rt_fail "app-server: no answer ($(tail -c 300 "$RT_OUT/list.err" | tr '\n' ' '))"
python3 - "$RT_OUT/list.json" "$RT_OUT" "$HOME" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1])); out = sys.argv[2]; home = sys.argv[3]
res = {r["method"]: r for r in d.get("responses", [])}
sk = (res.get("skills/list", {}).get("result") or {}).get("data", [])
names, paths, errors = [], [], []
for entry in sk:
    for s in entry.get("skills", []):
        names.append(s["name"]); paths.append(s.get("path", ""))
    errors += [json.dumps(e) for e in entry.get("errors", [])]
open(os.path.join(out, "seen-skills.txt"), "w").write("\n".join(names) + "\n")
open(os.path.join(out, "skill-errors.txt"), "w").write("\n".join(e for e in errors if "msd" in e))
open(os.path.join(out, "skill-paths.txt"), "w").write("\n".join(p for n, p in zip(names, paths) if n.startswith("msd-")) + "\n")
hk = (res.get("hooks/list", {}).get("result") or {}).get("data", [])
hooks = [h for e in hk for h in e.get("hooks", []) if "msd_run" in (h.get("command") or "")]
herr = [json.dumps(x) for e in hk for x in (e.get("warnings", []) + e.get("errors", [])) if "msd" in json.dumps(x)]
json.dump({"hooks": hooks, "errors": herr}, open(os.path.join(out, "hooks.json"), "w"), indent=1)
notes = [n for n in d.get("notifications", []) if n.get("method") in ("deprecationNotice", "configWarning", "warning")]
open(os.path.join(out, "list-notices.txt"), "w").write("\n".join(json.dumps(n.get("params")) for n in notes))
PY
rt_compare_names skills "$RT_OUT/seen-skills.txt"
while IFS= read -r l; do [ -n "$l" ] && rt_fail "skills/list error: ${l:0:300}"; done <"$RT_OUT/skill-errors.txt"
ndup=$(sort "$RT_OUT/seen-skills.txt" | uniq -d | grep -c '^msd' || true)
[ "$ndup" -eq 0 ] || rt_fail "skills: $ndup msd skill names listed twice by skills/list"
# The deprecated user skills root (the current one is ~/.agents/skills; evidence/codex.md).
if [ "$RT_SCOPE" = global ] && grep -q "^$codex_home/skills/" "$RT_OUT/skill-paths.txt"; then
  rt_warn "skills are loaded from $codex_home/skills, which Codex keeps for compatibility only (current user root: ~/.agents/skills)"
fi
if [ "$RT_SCOPE" = local ]; then
  # An untrusted project loads skills only (Codex says so); the install summary must say it too.
  if grep -q 'until the project is trusted' "$RT_OUT/list-notices.txt"; then
    rt_note "local: Codex loads only the skills of an untrusted project (config and hooks wait for trust)"
    grep -qiE 'trust' "$RT_OUT/msd-install.log" 2>/dev/null ||
      rt_fail "install summary: in an untrusted project Codex loads msd's skills only (no hooks, no config), but msd-install does not say so (or what to do)"
  fi
  # Trust the project as the user would, then list the hooks again.
  printf '%s\n' "$(python3 -c 'import json,sys; print(json.dumps({"method":"config/batchWrite","params":{"edits":[{"keyPath":"projects.%s.trust_level" % json.dumps(sys.argv[1]),"mergeStrategy":"upsert","value":"trusted"}]}}))' "$cwd")" |
    rpc "$RT_OUT/trust-project.json" -- codex app-server 2>"$RT_OUT/trust-project.err"
  printf '%s\n' "{\"method\":\"hooks/list\",\"params\":{\"cwds\":[\"$cwd\"]}}" |
    rpc "$RT_OUT/list2.json" -- codex app-server 2>"$RT_OUT/list2.err"
  python3 - "$RT_OUT/list2.json" "$RT_OUT/hooks.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
hk = [r for r in d.get("responses", []) if r["method"] == "hooks/list"]
hk = (hk[0].get("result") or {}).get("data", []) if hk else []
hooks = [h for e in hk for h in e.get("hooks", []) if "msd_run" in (h.get("command") or "")]
herr = [json.dumps(x) for e in hk for x in (e.get("warnings", []) + e.get("errors", [])) if "msd" in json.dumps(x)]
json.dump({"hooks": hooks, "errors": herr}, open(sys.argv[2], "w"), indent=1)
PY
fi
nh=$(rt_json "$RT_OUT/hooks.json" 'len(d["hooks"])')
rt_json "$RT_OUT/hooks.json" '"\n".join(d["errors"])' | while IFS= read -r l; do [ -n "$l" ] && rt_fail "hooks/list: ${l:0:300}"; done
nss=$(rt_json "$RT_OUT/hooks.json" 'sum(1 for h in d["hooks"] if h.get("eventName") == "sessionStart")')
ndupev=$(rt_json "$RT_OUT/hooks.json" 'len(d["hooks"]) - len({(h.get("eventName"), h.get("command")) for h in d["hooks"]})')
rt_note "hooks/list: msd hooks $(rt_json "$RT_OUT/hooks.json" '", ".join("%s:%s" % (h.get("eventName"), h.get("trustStatus")) for h in d["hooks"])')"
if [ "$nss" -eq 0 ]; then
  rt_fail "hooks/list: Codex does not list msd's SessionStart hook"
else
  [ "$nss" -eq 1 ] || rt_fail "hooks/list: msd's SessionStart hook is listed $nss times"
  [ "$ndupev" -eq 0 ] || rt_fail "hooks/list: $ndupev msd hooks are listed twice"
  rt_json "$RT_OUT/hooks.json" '"\n".join(h["key"] for h in d["hooks"] if h.get("enabled") is not True)' |
    while IFS= read -r l; do [ -n "$l" ] && rt_fail "hooks/list: msd's hook $l is not enabled"; done
  untrusted=$(rt_json "$RT_OUT/hooks.json" 'sum(1 for h in d["hooks"] if h.get("trustStatus") != "trusted")')
  if [ "$untrusted" -gt 0 ]; then
    rt_note "$untrusted of msd's $nh hooks are not trusted after install: Codex runs them only after the user reviews them"
    grep -qiE 'untrusted|review|trust' "$RT_OUT/msd-install.log" 2>/dev/null ||
      rt_fail "install summary: hooks start untrusted in Codex and run only after review, but msd-install does not say so (or what to do)"
  fi
fi

# 2. Review (trust) every msd hook as the user would, through Codex's own config API, then one
# session.
trust_req=$(python3 - "$RT_OUT/hooks.json" <<'PY'
import json, sys
hooks = json.load(open(sys.argv[1]))["hooks"]
edits = [{"keyPath": "hooks.state.%s.trusted_hash" % json.dumps(h["key"]), "mergeStrategy": "upsert",
          "value": h.get("currentHash", "")} for h in hooks]
if edits:
    print(json.dumps({"method": "config/batchWrite", "params": {"edits": edits, "reloadUserConfig": True}}))
PY
)
help_skill=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["paths"]["skills"].get("msd-help",""))' "$RT_EXPECT")
wf=$(rt_includes "$help_skill" "$cwd" | head -n1)
MOCK_TAG=turn rt_mock_start --tool-call exec_command --tool-args "$(python3 -c 'import json,sys; print(json.dumps({"cmd": "cat " + sys.argv[1]}))' "$wf")"
reqs=()
[ -n "$trust_req" ] && reqs+=("$trust_req")
mapfile -t pargs < <(provider_args)
printf '%s\n' "${reqs[@]}" | rpc "$RT_OUT/turn.json" --turn '$msd-help' -- codex app-server "${pargs[@]}" 2>"$RT_OUT/turn.err"
rt_mock_stop
rt_mock_text "$MOCK_REC" "$RT_OUT/turn.txt"
python3 - "$RT_OUT/turn.json" "$RT_OUT/hooks.json" >"$RT_OUT/turn-summary.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ours = {h.get("sourcePath") for h in json.load(open(sys.argv[2]))["hooks"]}
for r in d.get("responses", []):
    if r.get("error"):
        print("FAIL %s: %s" % (r["method"], json.dumps(r["error"])[:300]))
done = [n for n in d.get("notifications", []) if n.get("method") == "hook/completed"
        and (n["params"].get("run") or {}).get("sourcePath") in ours
        and (n["params"].get("run") or {}).get("eventName") == "sessionStart"]
bad = [n for n in done if n["params"]["run"].get("status") != "completed"]
print("HOOKS %d %d" % (len(done), len(bad)))
for n in d.get("notifications", []):
    if n.get("method") in ("deprecationNotice", "configWarning", "warning", "error"):
        s = json.dumps(n.get("params"))
        if any(k in s for k in ("msd", "hooks", "skills", "agents")):
            print("NOTICE " + s[:400])
if d.get("timed_out"):
    print("FAIL the session did not complete in time")
PY
while IFS= read -r line; do
  case $line in
    FAIL\ *) rt_fail "session: ${line#FAIL }" ;;
    NOTICE\ *) rt_fail "Codex notice about our settings: ${line#NOTICE }" ;;
    HOOKS\ *)
      read -r _ done bad <<<"$line"
      if [ "$done" -eq 1 ] && [ "$bad" -eq 0 ]; then rt_flag hooks true
      else rt_flag hooks false; rt_fail "hooks: msd's SessionStart hook completed $done times ($bad failed) in a session after review (want 1)"; fi ;;
  esac
done <"$RT_OUT/turn-summary.txt"

# 3. The workflow the skill includes reached the model (read through exec_command).
[ -s "$MOCK_REC" ] || rt_fail "session: Codex sent nothing to the mock model"
grep -aq "runtime_adapter" "$RT_OUT/turn.txt" || rt_fail "session: the msd-help skill body did not reach the model"
rt_check_workflow "$help_skill" "$RT_OUT/turn.txt" "$cwd"
# The reviewed SessionStart hook's additional context reaches the model.
rt_check_hook_context "codex app-server turn, SessionStart hookSpecificOutput.additionalContext" "$MOCK_REC"

# 4. Agents: every msd agent is an available role of spawn_agent, with the sandbox its tools need.
awk '/^Available roles:/{on=1;next} on&&/^[A-Za-z0-9_-]+: \{$/{s=$0; sub(/: \{$/,"",s); print s}' "$RT_OUT/turn.txt" | sort -u >"$RT_OUT/seen-agents.txt"
rt_compare_names agents "$RT_OUT/seen-agents.txt"
python3 - "$RT_EXPECT" "$RT_REPO/content/agents" >"$RT_OUT/agent-sandbox.txt" <<'PY'
import json, os, re, sys
exp = json.load(open(sys.argv[1])); src_dir = sys.argv[2]
write = {"Write", "Edit", "MultiEdit", "Bash"}
for name in exp["agents"]:
    toml = open(exp["paths"]["agents"][name]).read()
    m = re.search(r'^sandbox_mode\s*=\s*"([^"]+)"', toml, re.M)
    mode = m.group(1) if m else None
    src = os.path.join(src_dir, name + ".md")
    if not os.path.exists(src):
        continue
    t = re.search(r"^tools:\s*(.*)$", open(src).read(), re.M)
    tools = {x.strip() for x in t.group(1).split(",")} if t else set()
    want = "workspace-write" if tools & write else "read-only"
    if mode not in ("read-only", "workspace-write", "danger-full-access"):
        print("%s: sandbox_mode %r is not a Codex sandbox mode" % (name, mode))
    elif mode != want:
        print("%s: tools %s need %s, the role has %s" % (name, sorted(tools), want, mode))
PY
if [ -s "$RT_OUT/agent-sandbox.txt" ]; then
  rt_flag agent_tools false
  while IFS= read -r l; do rt_fail "agent tools: $l"; done <"$RT_OUT/agent-sandbox.txt"
else
  rt_flag agent_tools true
fi

# 5. Legacy settings keys msd writes.
if grep -q "^codex_hooks" "$home/config.toml" 2>/dev/null; then
  rt_fail "config.toml: msd writes [features] codex_hooks, which Codex reports as deprecated (use [features] hooks)"
fi

# 5b. msd's status line is an MCP server Codex loads (runtimes/codex): `codex mcp list --json`,
# offline, lists it running exactly the installed helper (local: from the trusted project's
# .codex/config.toml, which overrides a global install's server of the same name).
rt_timeout 60 codex mcp list --json </dev/null >"$RT_OUT/mcp-list.json" 2>"$RT_OUT/mcp-list.err"
mcp=$(python3 - "$RT_OUT/mcp-list.json" "$(rt_expect_field core)/bin/msd_run" <<'PY'
import json, os, sys
try:
    servers = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    print("FAIL `codex mcp list --json` answered no JSON (%s)" % e); sys.exit()
ours = [s for s in servers if s.get("name") == "msd-statusline"]
t = (ours[0].get("transport") or {}) if ours else {}
if not ours:
    print("FAIL `codex mcp list --json` does not list msd-statusline")
elif os.path.realpath(t.get("command") or "") != os.path.realpath(sys.argv[2]) or t.get("args") != ["mcp", "statusline"]:
    print("FAIL msd-statusline runs %s %s, not %s mcp statusline" % (t.get("command"), t.get("args"), sys.argv[2]))
elif ours[0].get("enabled") is not True:
    print("FAIL msd-statusline is listed disabled: %s" % ours[0].get("disabled_reason"))
else:
    print("OK")
PY
)
case $mcp in OK) rt_note "codex mcp list: msd-statusline runs the installed helper" ;; *) rt_fail "status line: ${mcp#FAIL }" ;; esac

# 6. CODEX_HOME moves both Codex and msd-install.
if [ "$RT_SCOPE" = global ]; then
  alt="$HOME/alt-codex-home"
  mkdir -p "$alt"
  if CODEX_HOME=$alt rt_msd_install codex global >"$RT_OUT/msd-install-env.log" 2>&1; then
    printf '%s\n' "{\"method\":\"skills/list\",\"params\":{\"cwds\":[\"$cwd\"],\"forceReload\":true}}" \
      "{\"method\":\"hooks/list\",\"params\":{\"cwds\":[\"$cwd\"]}}" |
      CODEX_HOME=$alt rpc "$RT_OUT/env.json" -- codex app-server 2>"$RT_OUT/env.err"
    n=$(python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); alt=sys.argv[2]
sk=[s for r in d["responses"] if r["method"]=="skills/list" for e in (r["result"] or {}).get("data",[]) for s in e.get("skills",[])]
print(sum(1 for s in sk if s["name"].startswith("msd-") and (alt + "/") in s.get("path","") ))' "$RT_OUT/env.json" "$alt")
    want=$(rt_expect_names skills | wc -l)
    [ "$n" -eq "$want" ] || rt_fail "CODEX_HOME=$alt: Codex lists $n of $want msd skills from the msd install there"
    grep -q "$alt/msd-core/bin/msd_run" "$RT_OUT/env.json" || rt_fail "CODEX_HOME=$alt: Codex does not list the hook msd registered there"
  else
    rt_fail "CODEX_HOME=$alt: msd-install failed ($(tail -n1 "$RT_OUT/msd-install-env.log"))"
  fi
fi

rt_emit
