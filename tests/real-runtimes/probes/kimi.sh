#!/usr/bin/env bash
# pin: pypi:kimi-cli==1.52.0
# pip-flags: --no-deps --ignore-requires-python
# pip: pydantic==2.12.5 tomlkit==0.14.0 loguru==0.7.3
# scopes: global
#
# Kimi CLI, offline, through Kimi's own hook code (evidence/kimi.md has the source lines):
#  - kimi-cli needs Python 3.12 and this tier's python may be older: the wheel is installed
#    without its dependencies (it is not run as a CLI), and lib/kimi_hooks.py uses its hook model
#    (HookDef), payload builders and runner, unchanged, with the engine's matching rule, over
#    the ~/.kimi/config.toml msd wrote: PreToolUse WriteFile .env, ReadFile .env, an injection
#    into .planning/, WriteFile README.md, Shell;
#  - global only (`# scopes:`): Kimi CLI has no project config and msd no local Kimi install;
#  - skills and agents are not counted: no session runs.
# "hooks": Kimi's runner ran msd's guard and read its block (exit 2, the reason on stderr).
set -u
. "$RT_LIB/common.sh"

py="$RT_BIN_DIR/python"
src=$("$py" -c 'import os, kimi_cli; print(os.path.dirname(os.path.dirname(kimi_cli.__file__)))') ||
  { rt_fail "no kimi_cli in $RT_BIN_DIR"; rt_emit; exit 1; }
printf 'TBD\n' >"$PROJECT/.planning/NOTES.md"
rt_timeout 120 "$py" "$RT_LIB/kimi_hooks.py" "$src" "$HOME/.kimi/config.toml" "$PROJECT" "$RT_OUT/kimi.json" \
  >"$RT_OUT/kimi.out" 2>"$RT_OUT/kimi.err" ||
  { rt_fail "the driver failed: $(tail -c 300 "$RT_OUT/kimi.err" | tr '\n' ' ')"; rt_emit; exit 1; }

python3 - "$RT_OUT/kimi.json" >"$RT_OUT/kimi.verdict" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
out = []
def fail(m): out.append("fail\t" + m)
ours = [h for h in d["hooks"] if "msd_run" in h["command"]]
if len(ours) != 1 or ours[0]["event"] != "PreToolUse" or not ours[0]["command"].endswith(" hook guard"):
    fail("config.toml holds %r, want one PreToolUse `msd_run hook guard`" % ours)
if d["session_start_hooks"] or d["post_tool_hooks"]:
    fail("SessionStart/PostToolUse hooks registered: their output reaches no model")
c = d["cases"]
for case, verb in (("write-env", "refusing to write"), ("read-env", "refusing to read"), ("edit-injection", "instruction to the agents")):
    r = c[case]
    if r["action"] != "block" or r["reason"].count(verb) != 1:
        fail("%s: Kimi's runner got %r, want a block saying %r once" % (case, r, verb))
for case in ("write-source", "shell", "read-media"):
    if c[case]["action"] != "allow":
        fail("%s: blocked: %r" % (case, c[case]))
if c["shell"]["hooks"] or c["read-media"]["hooks"]:
    fail("the guard's matcher matched Shell or ReadMediaFile")
print("hooks\t%s" % ("true" if c["write-env"]["action"] == "block" else "false"))
out.append("note\tKimi's runner: write-env %s (exit %s)" % (c["write-env"]["action"], c["write-env"]["exit_codes"]))
print("\n".join(out))
PY
rt_verdict "$RT_OUT/kimi.verdict"
rt_emit
