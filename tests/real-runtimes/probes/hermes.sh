#!/usr/bin/env bash
# pin: pypi:hermes-agent==0.19.0
#
# Hermes, offline, through Hermes' own shell-hook engine (evidence/hermes.md has the source
# lines): lib/hermes_hooks.py loads the sandbox's ~/.hermes/config.yaml with Hermes'
# load_config, registers its shell hooks with register_from_config (first as a non-interactive
# run without consent: none may register; then with accept_hooks, as --accept-hooks does) and
# fires them as the agent does: pre_llm_call twice in one session (the session line once),
# pre_tool_call for write_file .env, read_file .env, a patch injecting into .planning/,
# write_file README.md and terminal.
#  - local: Hermes has no project hooks file; msd registers none, and the probe checks that.
#  - skills are not counted: no session runs.
# "hooks": Hermes' engine ran msd's session-start hook and passed its context on.
set -u
. "$RT_LIB/common.sh"

py="$RT_BIN_DIR/python"
printf 'TBD\n' >"$PROJECT/.planning/NOTES.md"
# The helper's per-session state (the once-per-session marker) stays in the sandbox.
mkdir -p "$HOME/.tmp"
TMPDIR="$HOME/.tmp" rt_timeout 300 "$py" "$RT_LIB/hermes_hooks.py" "$PROJECT" "$RT_OUT/hermes.json" \
  </dev/null >"$RT_OUT/hermes.out" 2>"$RT_OUT/hermes.err" ||
  { rt_fail "the driver failed: $(tail -c 300 "$RT_OUT/hermes.err" | tr '\n' ' ')"; rt_emit; exit 1; }

python3 - "$RT_OUT/hermes.json" "$RT_SCOPE" "$RT_HOOK_LINE" >"$RT_OUT/hermes.verdict" <<'PY'
import json, sys
path, scope, line = sys.argv[1:4]
d = json.load(open(path))
out = []
def fail(m): out.append("fail\t" + m)
ours = sorted((h["event"], h["command"].split(" hook ")[-1].split()[0]) for h in d["configured"] if "msd_run" in h["command"])
c = d["cases"]
if scope == "local":
    if ours:
        fail("a local install registered %r in ~/.hermes/config.yaml" % ours)
    if d["registered"]:
        fail("Hermes registered hooks without an msd global install: %r" % d["registered"])
    out.append("note\tlocal: no hooks (Hermes reads shell hooks from $HERMES_HOME/config.yaml only)")
    print("\n".join(out))
    sys.exit(0)
if ours != [("pre_llm_call", "session-start"), ("pre_tool_call", "guard")]:
    fail("config.yaml holds msd hooks %r, want pre_llm_call session-start and pre_tool_call guard" % ours)
if d["registered_without_consent"]:
    fail("%d hooks registered without consent in a non-interactive run" % d["registered_without_consent"])
if sorted(d["registered"]) != ["pre_llm_call", "pre_tool_call"]:
    fail("registered with consent: %r" % d["registered"])
first = [r.get("context", "") for r in c["pre_llm_call-first"] if isinstance(r, dict)]
n = sum(x.count(line) for x in first)
print("hooks\t%s" % ("true" if n >= 1 else "false"))
if n != 1:
    fail("pre_llm_call: the session line came %d times (want 1): %r" % (n, first))
if c["pre_llm_call-second"]:
    fail("pre_llm_call again in the session: %r (want nothing)" % c["pre_llm_call-second"])
for case, verb in (("write-env", "refusing to write"), ("read-env", "refusing to read"), ("patch-injection", "instruction to the agents")):
    m = c[case] or ""
    if m.count(verb) != 1:
        fail("%s: Hermes' block message %r, want msd's refusal %r once" % (case, m, verb))
for case in ("write-source", "terminal"):
    if c[case] is not None:
        fail("%s: blocked: %r" % (case, c[case]))
out.append("note\tHermes' engine: pre_llm_call context %r" % (first[:1],))
print("\n".join(out))
PY
rt_verdict "$RT_OUT/hermes.verdict"
rt_emit
