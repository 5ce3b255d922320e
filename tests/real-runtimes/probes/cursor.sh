#!/usr/bin/env bash
# pin: @cursor/sdk@1.0.32
# node: 22
#
# Cursor, offline, through Cursor's own hook engine (evidence/cursor.md has the source lines):
#  - Cursor's editor and CLI are not on npm; its TypeScript SDK is, and its local agent runs
#    Cursor's hooks loader and executor. lib/cursor_hooks.mjs imports them from the SDK's bundle
#    (no model, no key), loads the sandbox's ~/.cursor/hooks.json and .cursor/hooks.json (and
#    Claude's settings files, which Cursor runs too) and runs sessionStart, preToolUse (Write
#    .env, Read .env, Write README.md), afterFileEdit and postToolUse through what msd wrote;
#  - then installs the other scope too (both hooks files): each answer must come once;
#  - then installs Claude beside Cursor (Cursor runs Claude's hooks, "third-party hooks"):
#    each answer must still come once, from Cursor's msd hooks;
#  - skills, commands and agents are not counted: the SDK lists none without a model.
# "hooks": Cursor's executor ran msd's sessionStart hook and parsed its additional_context.
set -u
. "$RT_LIB/common.sh"

SDK=$(dirname "$RT_BIN_DIR")/@cursor/sdk
[ -f "$SDK/package.json" ] || { rt_fail "no @cursor/sdk in $(dirname "$RT_BIN_DIR")"; rt_emit; exit 1; }
printf '{"mode": "yolo"}\n' >"$PROJECT/.planning/config.json"

# drive <tag>: Cursor's loader and executor over the sandbox; the result in $RT_OUT/<tag>.json.
drive() {
  rt_timeout 180 node "$RT_LIB/cursor_hooks.mjs" "$SDK" "$PROJECT" "$RT_OUT/$1.json" \
    >"$RT_OUT/$1.out" 2>"$RT_OUT/$1.err"
  local rc=$?
  [ $rc -eq 0 ] && [ -s "$RT_OUT/$1.json" ] || {
    rt_fail "$1: the driver exited $rc ($(tail -c 300 "$RT_OUT/$1.err" | tr '\n' ' '))"
    return 1
  }
}

# check <tag> <file-key>: what Cursor loaded and what its executor parsed from msd's answers.
check() {
  python3 - "$RT_OUT/$1.json" "$1" "$2" "$RT_HOOK_LINE" >"$RT_OUT/$1.verdict" <<'PY'
import json, sys
path, tag, key, line = sys.argv[1:5]
d = json.load(open(path))
out = []
def fail(m): out.append("fail\t%s: %s" % (tag, m))
def note(m): out.append("note\t%s: %s" % (tag, m))
if d.get("fatal"):
    fail(d["fatal"])
for e in d.get("errors") or []:
    fail("Cursor's loader: %s" % json.dumps(e)[:300])
src = d.get("sources", {})
ours = {step: [h["command"] for h in hs if "msd_run" in h.get("command", "")] for step, hs in src.get(key, {}).items()}
want = {"sessionStart": "session-start", "preToolUse": "guard", "postToolUse": "context-monitor", "afterFileEdit": "config-reload"}
for step, hook in want.items():
    got = ours.get(step, [])
    if len(got) != 1 or (" hook %s " % hook) not in got[0] + " ":
        fail("%s: %s holds %r, want one `msd_run hook %s`" % (key, step, got, hook))
extra = sorted(set(ours) - set(want))
if extra:
    fail("%s: msd entries on steps %s" % (key, extra))
guard = [h for h in src.get(key, {}).get("preToolUse", []) if "msd_run" in h.get("command", "")]
if guard and guard[0].get("failClosed") is not True:
    fail("the guard is not failClosed: %r" % guard[0])
c = d.get("cases", {})
ctx = (c.get("sessionStart") or {}).get("additional_context") or ""
n = ctx.count(line)
print("hooks\t%s" % ("true" if n >= 1 else "false"))
if n != 1:
    fail("sessionStart additional_context holds msd's line %d times (want 1): %r" % (n, ctx[:300]))
if "hookSpecificOutput" in (c.get("sessionStart") or {}):
    fail("sessionStart: a Claude-protocol answer reached Cursor too: %r" % c["sessionStart"]["hookSpecificOutput"])
for case, verb in (("write-env", "refusing to write"), ("read-env", "refusing to read")):
    r = c.get(case) or {}
    m = r.get("user_message") or ""
    if r.get("permission") != "deny":
        fail("%s: Cursor did not deny (%r)" % (case, r))
    elif m.count(verb) != 1:
        fail("%s: the deny message holds msd's refusal %d times (want 1): %r" % (case, m.count(verb), m[:400]))
if (c.get("write-source") or {}).get("permission") == "deny":
    fail("write-source: README.md was denied: %r" % c["write-source"])
post = (c.get("post-edit") or {}).get("additional_context") or ""
if post.count(".planning/config.json changed") != 1:
    fail("postToolUse after afterFileEdit: the config announcement came %d times: %r" % (post.count(".planning/config.json changed"), post[:300]))
note("Cursor parsed: sessionStart %r; write-env %r" % (ctx[:120], (c.get("write-env") or {}).get("permission")))
print("\n".join(out))
PY
  if [ "$1" = single ]; then rt_verdict "$RT_OUT/$1.verdict"; else rt_verdict "$RT_OUT/$1.verdict" nohooks; fi
}

other=local
key=userHooks
if [ "$RT_SCOPE" = local ]; then other=global key=projectHooks; fi

# 1. The scope msd installed, alone.
drive single && check single "$key"

# 2. Both scopes: Cursor loads both files; the global helper defers to the project's.
if rt_msd_install cursor "$other" >"$RT_OUT/msd-install-$other.log" 2>&1; then
  drive both && check both "$key"
else
  rt_fail "msd-install -r cursor ($other) failed: $(tail -n3 "$RT_OUT/msd-install-$other.log" | tr '\n' ' ')"
fi

# 3. Claude beside Cursor (this scope): Cursor runs Claude's msd hooks too; they stay silent.
if rt_msd_install claude "$RT_SCOPE" >"$RT_OUT/msd-install-claude.log" 2>&1; then
  drive claude && check claude "$key"
  ckey=claudeUserHooks
  [ "$RT_SCOPE" = local ] && ckey=claudeProjectLocalHooks
  n=$(rt_json "$RT_OUT/claude.json" "sum(1 for hs in d.get('sources', {}).get('$ckey', {}).values() for h in hs if 'msd_run' in h.get('command', ''))")
  if [ "${n:-0}" -gt 0 ]; then
    rt_note "claude: Cursor loaded $n msd hooks of Claude's ($ckey) and ran them beside its own"
  else
    rt_fail "claude: Cursor loaded no msd hook of Claude's ($ckey): nothing was checked"
  fi
else
  rt_fail "msd-install -r claude ($RT_SCOPE) failed: $(tail -n3 "$RT_OUT/msd-install-claude.log" | tr '\n' ' ')"
fi

rt_emit
