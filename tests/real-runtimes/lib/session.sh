# shellcheck shell=bash
# The session tier (run.sh --sessions): one headless session of the real CLI, in its normal
# approval mode, against the scripted mock model (lib/mock_model.py --script), per check.
#
# A sessions/<id>.sh sources common.sh and this file, sets
#   SS_SHELL  SS_WRITE  SS_AGENT     the CLI's tool names (a JSON list of candidates each)
#   SS_IGNORE (exported, optional)   JSON list of texts marking the CLI's own side agents' requests
#   SS_AGENT_WAIT (exported, optional) a turn after the agent call (Codex: wait for the agent)
#   SS_ENV_FILE (optional)           the secrets file the guard check writes (default .env; a CLI
#                                    that refuses `.env` itself is given `.env.local`, which msd's
#                                    guard refuses too, so that msd's refusal is what is checked)
#   ss_shell_args <command>          -> JSON arguments of a shell call
#   ss_write_args <path> <text>      -> JSON arguments of a whole-file write
#   ss_agent_args <agent> <prompt>   -> JSON arguments of a subagent call
#   ss_cli <tag> <prompt>            -> runs the CLI once in $PROJECT against $MOCK_URL (rc)
#   ss_planner_tools                 -> the planner's tools under the CLI's names, one a line
#   ss_statusline_cmd                -> the status-line command msd registered ("" when none)
#   ss_statusline_check (optional)   -> the statusline check's verdict line (`PASS ...`), for a
#                                       CLI whose status line is no command (Codex: an MCP server)
# and calls ss_main, which records one line per check in $RT_OUT/session.tsv:
#   <check> TAB PASS|FAIL|N/A TAB <reason>
# Checks: helper, guard, context, subagent, statusline (issue 33). A sessions/<id>.sh may call
# ss_na <check> <reason> before ss_main to say why a check does not apply (the CLI's own limit);
# ss_main then skips it.

ss_check() { printf '%s\t%s\t%s\n' "$1" "$2" "$(printf '%s' "$3" | tr '\t\n' '  ')" >>"$RT_OUT/session.tsv"; }
ss_na() { SS_NA="${SS_NA:-} $1"; ss_check "$1" N/A "$2"; }
ss_is_na() { case " ${SS_NA:-} " in *" $1 "*) return 0 ;; esac; return 1; }

# ss_verdict <check> <line from session_check.py>
ss_verdict() {
  local v=${2%% *} why=${2#* }
  case $v in PASS|FAIL|N/A) ss_check "$1" "$v" "$why" ;; *) ss_check "$1" FAIL "checker said: $2" ;; esac
}

# The helper line an installed workflow tells the model to run, as the file has it: the
# `<helper> query init.workstreams` line of workflows/workstreams.md (no arguments to fill).
ss_helper_line() {
  local core
  core=$(rt_expect_field core)
  grep -ahoE '[^` ]*msd_run query init\.workstreams' "$core/workflows/workstreams.md" | head -n1
}

# A line of the planner's installed prompt that names it: what the subagent's first request
# must carry (the mock answers requests holding it as the subagent's).
ss_planner_marker() {
  local f
  f=$(rt_json "$RT_EXPECT" 'd["paths"]["agents"].get("msd-planner","")')
  [ -f "$f" ] || return 1
  # The first body line of some length: after the frontmatter (Markdown), or inside the
  # developer_instructions string (a Codex role, TOML).
  case $f in
    *.toml) awk '/^developer_instructions = """/{on=1;next} on&&length($0)>40&&$0!~/^[#<`-]/{print;exit}' "$f" ;;
    *) awk 'NR==1&&/^---/{fm=1;next} fm&&/^---/{fm=0;next} !fm&&length($0)>40&&$0!~/^[#<`-]/{print;exit}' "$f" ;;
  esac | cut -c1-60
}

# ss_session <tag> <script-json> <prompt>: the mock plays the script while the CLI runs once.
ss_session() {
  local tag=$1 script=$2 prompt=$3 rc
  printf '%s\n' "$script" >"$RT_OUT/script-$tag.json"
  MOCK_TAG=$tag MOCK_SECONDS=${SS_SECONDS:-240} rt_mock_start --script "$RT_OUT/script-$tag.json" ||
    return 1
  ss_cli "$tag" "$prompt"
  rc=$?
  rt_mock_stop
  echo "$tag: the CLI exited $rc" >>"$RT_OUT/session.log"
  return 0
}

ss_main() {
  local helper marker rec
  helper=$(ss_helper_line)
  local envf=${SS_ENV_FILE:-.env}
  rm -f "$PROJECT/$envf" "$PROJECT/notes.txt" "$PROJECT/start.txt"
  if [ -z "$helper" ]; then
    ss_is_na helper || ss_check helper FAIL "no helper line in the installed workflows/workstreams.md"
  fi
  # Session 1: the helper line, a .env write, an ordinary write.
  local script
  # A CLI that cannot run the helper here (helper N/A) writes a plain file first instead, so the
  # .env write stays the second tool call.
  local first_tool=$SS_SHELL first_args
  first_args=$(ss_shell_args "$helper")
  if ss_is_na helper; then first_tool=$SS_WRITE first_args=$(ss_write_args start.txt 'start'); fi
  script=$(python3 - "$first_tool" "$first_args" "$SS_WRITE" \
    "$(ss_write_args "$envf" 'SECRET=1')" "$(ss_write_args notes.txt 'notes')" <<'PY'
import json, sys
sh, sha, wr, e, n = sys.argv[1:6]
import os
print(json.dumps({"turns": [
    {"tool": json.loads(sh), "args": json.loads(sha)},
    {"tool": json.loads(wr), "args": json.loads(e)},
    {"tool": json.loads(wr), "args": json.loads(n)},
    {"text": "SESSION-DONE"}], "ignore_markers": json.loads(os.environ.get("SS_IGNORE") or "[]")}))
PY
)
  ss_session work "$script" "Run the helper, then write $envf and notes.txt."
  rec="$RT_OUT/mock-work.jsonl"
  ss_is_na helper || [ -z "$helper" ] || ss_verdict helper "$(python3 "$RT_LIB/session_check.py" helper "$rec")"
  ss_is_na guard || ss_verdict guard "$(python3 "$RT_LIB/session_check.py" guard "$rec" "$PROJECT" "$envf")"
  ss_is_na context || ss_verdict context "$(python3 "$RT_LIB/session_check.py" context "$rec" "$RT_HOOK_LINE")"
  # Session 2: the planner as a subagent.
  if ! ss_is_na subagent; then
    marker=$(ss_planner_marker)
    if [ -z "$marker" ]; then
      ss_check subagent FAIL "no msd-planner installed (expect.json)"
    else
      script=$(python3 - "$SS_AGENT" "$(ss_agent_args msd-planner 'Plan phase 7.')" "$marker" <<'PY'
import json, sys
ag, args, marker = sys.argv[1:4]
import os
turns = [{"tool": json.loads(ag), "args": json.loads(args)}]
if os.environ.get("SS_AGENT_WAIT"):
    turns.append(json.loads(os.environ["SS_AGENT_WAIT"]))
print(json.dumps({"turns": turns + [{"text": "SESSION-DONE"}],
                  "sub_marker": marker, "sub_reply": "PLANNER-DONE",
                  "ignore_markers": json.loads(os.environ.get("SS_IGNORE") or "[]")}))
PY
)
      ss_session agent "$script" "Start the msd-planner agent."
      # shellcheck disable=SC2046 # one tool name a word
      ss_verdict subagent "$(python3 "$RT_LIB/session_check.py" subagent "$RT_OUT/mock-agent.jsonl" $(ss_planner_tools))"
    fi
  fi
  # The status line: the registered command prints a line for a sample event.
  if ! ss_is_na statusline; then
    local cmd out
    cmd=$(ss_statusline_cmd)
    if declare -F ss_statusline_check >/dev/null; then
      ss_verdict statusline "$(ss_statusline_check)"
    elif [ -z "$cmd" ]; then
      ss_check statusline FAIL "no status-line command in the settings"
    else
      local event=${SS_STATUS_EVENT:-}
      [ -n "$event" ] || event=$(python3 -c 'import json,sys; p=sys.argv[1]; print(json.dumps({"session_id": "s-1", "cwd": p, "model": {"display_name": "mock"}, "workspace": {"current_dir": p}, "context_window": {"used_percentage": 42}}))' "$PROJECT")
      out=$(cd "$PROJECT" && printf '%s' "$event" | rt_timeout 20 sh -c "$cmd" 2>"$RT_OUT/statusline.err" | head -n1)
      if [ -n "$out" ]; then ss_check statusline PASS "printed: $out"; else
        ss_check statusline FAIL "printed nothing ($(head -c 200 "$RT_OUT/statusline.err"))"
      fi
    fi
  fi
}

# ss_settings_value <file> <python-expr over d>: a value of a JSON settings file, or "".
ss_settings_value() { [ -f "$1" ] && rt_json "$1" "$2" 2>/dev/null || true; }
