#!/usr/bin/env bash
# pin: @mariozechner/pi-coding-agent@0.73.1
# node: 20
#
# Pi, offline (runtimes/pi/capability.json has the source lines behind each step):
#  1. commands: `pi --mode rpc` answers {"type":"get_commands"} with every prompt template it
#     loaded (name, source, path), from <agent dir>/prompts and <project>/.pi/prompts; each msd
#     command must be there, from the file msd wrote;
#  2. `pi -p /msd-help` against the mock model (a custom provider in <agent dir>/models.json,
#     api openai-completions, baseUrl on 127.0.0.1): Pi sends the template's body (no @-file
#     expansion), the mock answers with a `read` call of the path the body includes, written as
#     msd wrote it, and the next request must carry the workflow text;
#  3. msd's extension (<agent dir>/extensions/msd.js, or <project>/.pi/extensions/msd.js):
#     `pi -p` against the mock, which asks for a `read` of .env: the session-start line is in the
#     system prompt of the requests (before_agent_start) and the tool result the model gets is
#     msd's refusal, not the secret (tool_call returns {block, reason});
#  4. global only: PI_CODING_AGENT_DIR moves both msd-install and the CLI.
# Pi has no subagents: agents are "-".
set -u
. "$RT_LIB/common.sh"

export PI_OFFLINE=1
HOME_DIR=$(rt_expect_field home)
# The agent dir the CLI reads models.json from: ~/.pi/agent (both scopes; a local install
# writes only <project>/.pi).
AGENT_DIR=$HOME/.pi/agent

# pi_models <agent dir>: a mock provider; merged into models.json (msd owns no entry there).
pi_models() {
  mkdir -p "$1"
  python3 - "$1/models.json" "$MOCK_URL" <<'PY'
import json, os, sys
p, url = sys.argv[1:3]
d = json.load(open(p)) if os.path.exists(p) and os.path.getsize(p) else {}
d.setdefault("providers", {})["mock"] = {
    "baseUrl": url + "/v1", "api": "openai-completions", "apiKey": "sk-test",
    "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
    "models": [{"id": "mock-model"}]}
json.dump(d, open(p, "w"), indent=2)
PY
}

# pi_list <tag> [env...]: the commands the CLI loaded, as its RPC mode lists them.
pi_list() {
  local tag=$1
  shift
  (printf '%s\n' '{"id":"1","type":"get_commands"}'; sleep 4) |
    (cd "$PROJECT" && env "$@" timeout -k 5 60 pi --mode rpc --no-session) >"$RT_OUT/$tag.jsonl" 2>"$RT_OUT/$tag.err"
  python3 - "$RT_OUT/$tag.jsonl" >"$RT_OUT/$tag.tsv" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    try:
        r = json.loads(l)
    except ValueError:
        continue
    if r.get("command") == "get_commands" and r.get("success"):
        for c in r["data"]["commands"]:
            print("%s\t%s\t%s" % (c["name"], c.get("source"), (c.get("sourceInfo") or {}).get("path", "")))
PY
  [ -s "$RT_OUT/$tag.tsv" ] || rt_fail "$tag: pi --mode rpc listed no commands ($(tail -c 300 "$RT_OUT/$tag.err" | tr '\n' ' '))"
}

# 1. What the CLI loaded.
pi_list list
awk -F'\t' '$2 == "prompt" && $1 ~ /^msd-/ {print $1}' "$RT_OUT/list.tsv" >"$RT_OUT/seen-commands.txt"
rt_compare_names commands "$RT_OUT/seen-commands.txt"
# Each listed msd command comes from the file msd wrote (not a copy elsewhere).
python3 - "$RT_EXPECT" "$RT_OUT/list.tsv" >"$RT_OUT/wrong-paths.txt" <<'PY'
import json, os, sys
exp = json.load(open(sys.argv[1]))
for l in open(sys.argv[2]):
    name, src, path = l.rstrip("\n").split("\t")
    want = exp["paths"]["commands"].get(name)
    if src == "prompt" and want and os.path.realpath(path) != os.path.realpath(want):
        print("%s loaded from %s, msd wrote %s" % (name, path, want))
PY
while IFS= read -r l; do rt_fail "commands: $l"; done <"$RT_OUT/wrong-paths.txt"
rt_log_our_warnings "$RT_OUT/list.err"

# 2. A session: /msd-help expands, the model reads the workflow it includes.
help=$HOME_DIR/prompts/msd-help.md
if [ -f "$help" ]; then
  inc=$(grep -o '^@[^[:space:]]*' "$help" | head -n1)
  inc=${inc#@}
  args=$(python3 -c 'import json,sys; print(json.dumps({"path": sys.argv[1]}))' "$inc")
  MOCK_TAG=help rt_mock_start --tool-call read --tool-args "$args" || rt_fail "mock model did not start"
  pi_models "$AGENT_DIR"
  (cd "$PROJECT" && rt_timeout 120 pi --no-session --provider mock --model mock-model -p '/msd-help') \
    </dev/null >"$RT_OUT/help.out" 2>"$RT_OUT/help.err"
  rc=$?
  rt_mock_stop
  [ $rc -eq 0 ] || rt_fail "session: pi -p exited $rc ($(tail -c 300 "$RT_OUT/help.err" | tr '\n' ' '))"
  rt_mock_text "$MOCK_REC" "$RT_OUT/help.txt"
  grep -aq 'runtime_adapter' "$RT_OUT/help.txt" || rt_fail "session: the body of /msd-help did not reach the model"
  # The expanded template is the first request's user turn: Pi substituted $ARGUMENTS there
  # (the workflow read later may name $ARGUMENTS itself).
  python3 -c 'import json,sys; b=json.loads(open(sys.argv[1]).readline())["body"]; print("\n".join(m["content"] if isinstance(m["content"], str) else "".join(p.get("text", "") for p in m["content"]) for m in b["messages"] if m["role"] == "user"))' \
    "$MOCK_REC" >"$RT_OUT/help.user.txt"
  grep -aqF '$ARGUMENTS' "$RT_OUT/help.user.txt" && rt_fail "session: a literal \$ARGUMENTS reached the model in /msd-help's text"
  grep -aq 'Arguments:' "$RT_OUT/help.user.txt" || rt_fail "session: the first user turn is not /msd-help's expanded text"
  rt_check_workflow "$help" "$RT_OUT/help.txt" "$PROJECT"
  rt_log_our_warnings "$RT_OUT/help.err"
else
  rt_fail "command file $help missing"
fi

# 3. msd's extension: the session-start line and the .env guard in one session.
pi_ext=$HOME_DIR/extensions/msd.js
[ -f "$pi_ext" ] || rt_fail "hooks: msd wrote no extension at $pi_ext"
pi_secret="rt-probe-secret-$$"
printf 'API_TOKEN=%s\n' "$pi_secret" >"$PROJECT/.env"
MOCK_TAG=hook rt_mock_start --tool-call read --tool-args '{"path":".env"}' || rt_fail "mock model did not start"
pi_models "$AGENT_DIR"
(cd "$PROJECT" && rt_timeout 120 pi --no-session --provider mock --model mock-model -p 'read the .env file') \
  </dev/null >"$RT_OUT/hook.out" 2>"$RT_OUT/hook.err"
rt_mock_stop
if rt_check_hook_context "pi -p, extension before_agent_start" "$RT_OUT/mock-hook.jsonl"; then
  rt_flag hooks true
else
  rt_flag hooks false
fi
if grep -aqF -- "$pi_secret" "$RT_OUT/mock-hook.jsonl"; then
  rt_fail "guard: the model got the secret of $PROJECT/.env (msd's extension did not block the read)"
elif grep -aqF -- "msd: refusing to read .env" "$RT_OUT/mock-hook.jsonl"; then
  rt_note "guard: the .env read was refused by msd's extension (tool result: $(grep -aoF -m1 -- 'msd: refusing to read .env' "$RT_OUT/mock-hook.jsonl" | head -n1))"
else
  rt_fail "guard: no request after the .env read carries msd's refusal ($(grep -ac . "$RT_OUT/mock-hook.jsonl") requests; pi said: $(tail -c 300 "$RT_OUT/hook.err" | tr '\n' ' '))"
fi
rm -f "$PROJECT/.env"
rt_log_our_warnings "$RT_OUT/hook.err"

# 4. PI_CODING_AGENT_DIR moves both msd-install and the CLI (global only).
if [ "$RT_SCOPE" = global ]; then
  ALT=$HOME/alt-pi-agent
  mkdir -p "$ALT"
  if PI_CODING_AGENT_DIR=$ALT rt_msd_install pi global >"$RT_OUT/env-install.log" 2>&1; then
    pi_list env-list PI_CODING_AGENT_DIR="$ALT"
    n=$(awk -F'\t' -v d="$ALT/" '$2 == "prompt" && index($3, d) == 1 && $1 ~ /^msd-/' "$RT_OUT/env-list.tsv" | wc -l)
    m=$(rt_expect_names commands | wc -l)
    [ "$n" -eq "$m" ] || rt_fail "PI_CODING_AGENT_DIR=$ALT: the CLI loads $n of $m msd commands from there"
    rt_note "PI_CODING_AGENT_DIR: msd-install wrote $ALT; the CLI loaded $n/$m commands from it"
    PI_CODING_AGENT_DIR=$ALT "$MSD_INSTALL" uninstall -r pi --runtimes "$RT_REPO/runtimes" >>"$RT_OUT/env-install.log" 2>&1 || true
  else
    rt_fail "PI_CODING_AGENT_DIR: msd-install failed ($(tail -n2 "$RT_OUT/env-install.log" | tr '\n' ' '))"
  fi
fi

rt_emit
