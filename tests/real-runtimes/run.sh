#!/usr/bin/env bash
# The real-runtime acceptance tier: installs pinned real CLIs from npm (PyPI for a `pypi:` pin)
# into a cache, installs msd into a sandbox HOME for each runtime x scope, and runs
# probes/<id>.sh, which proves the real CLI (offline, against lib/mock_model.py where a session
# is needed) loads what msd wrote.
#
#   tests/real-runtimes/run.sh [ids...] [--scope global|local|both] [--pair A,B] [--keep] [--json]
#   MSD_RT_LATEST=1 tests/real-runtimes/run.sh    # each CLI's newest version instead of its pin
#   tests/real-runtimes/run.sh --sessions [ids...] [--scope ...] [--keep]
#
# One line per runtime x scope; exit 1 on any failure. With --sessions, sessions/<id>.sh instead
# of the probe: one headless session per check against the scripted mock, one line per
# runtime x scope x check (PASS, FAIL or N/A with the CLI's reason). See README.md.
set -u
RT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib/common.sh
. "$RT_ROOT/lib/common.sh"

SCOPES=(global local)
PAIR=
KEEP=0
JSON=0
SESSIONS=0
IDS=()
PROBE_TIMEOUT=${MSD_RT_PROBE_TIMEOUT:-1800}

usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
  case $1 in
    --scope) shift; case ${1:-} in both) SCOPES=(global local) ;; global|local) SCOPES=("$1") ;;
             *) echo "--scope global|local|both" >&2; exit 2 ;; esac ;;
    --scope=*) v=${1#--scope=}; [ "$v" = both ] && SCOPES=(global local) || SCOPES=("$v") ;;
    --pair) shift; PAIR=${1:-} ;;
    --pair=*) PAIR=${1#--pair=} ;;
    --keep) KEEP=1 ;;
    --json) JSON=1 ;;
    --sessions) SESSIONS=1 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
    *) IDS+=("$1") ;;
  esac
  shift
done

if [ -n "$PAIR" ]; then
  IFS=, read -r -a IDS <<<"$PAIR"
  [ "${#IDS[@]}" -eq 2 ] || { echo "--pair takes two runtime ids: A,B" >&2; exit 2; }
fi
if [ "${#IDS[@]}" -eq 0 ]; then
  dir=probes
  [ "$SESSIONS" = 1 ] && dir=sessions
  for p in "$RT_ROOT"/$dir/*.sh; do [ -e "$p" ] && IDS+=("$(basename "$p" .sh)"); done
fi
[ "${#IDS[@]}" -gt 0 ] || { echo "no probes in $RT_ROOT/probes" >&2; exit 2; }

RUN_ID=$(date -u +%Y%m%dT%H%M%SZ)-$$
OUT_BASE=${MSD_RT_OUT:-$RT_ROOT/out}/$RUN_ID
mkdir -p "$OUT_BASE"
SB_BASE=$(mktemp -d "${TMPDIR:-/tmp}/rt-sbx.XXXXXX")
HOST_HOME=$HOME
export MSD_RT_CACHE=${MSD_RT_CACHE:-$HOST_HOME/.cache/msd-real-runtimes}

# Build msd-install once up front (unless MSD_INSTALL is given).
if [ -z "${MSD_INSTALL:-}" ]; then
  MSD_INSTALL=$(rt_msd_bin) || { echo "cargo build --release failed" >&2; exit 1; }
fi
export MSD_INSTALL
MSD_RUN_BIN=${MSD_RUN:-$(dirname "$MSD_INSTALL")/msd_run}
export MSD_RUN_BIN

# Resolve each CLI (npm install into the cache) and its node before any sandbox exists.
declare -A BIN NODE PIN PINNED MOVED_FAILED
for id in "${IDS[@]}"; do
  probe="$RT_ROOT/probes/$id.sh"
  [ -f "$probe" ] || { echo "no probe $probe" >&2; exit 2; }
  PIN[$id]=$(rt_probe_pin "$probe")
  [ -n "${PIN[$id]}" ] || { echo "$probe has no '# pin:' line" >&2; exit 2; }
  PINNED[$id]=${PIN[$id]}
  if [ "${MSD_RT_LATEST:-0}" = 1 ]; then
    # The drift run: the newest published version instead of the pin (the pin when the
    # registry cannot say).
    PIN[$id]=$(rt_latest_pin "${PIN[$id]}") || PIN[$id]=${PINNED[$id]}
    echo "real-runtimes: $id ${PINNED[$id]} -> newest ${PIN[$id]}" >&2
  fi
  BIN[$id]=$(rt_install_pkg "$id" "${PIN[$id]}" "$probe") || BIN[$id]=
  case ${PIN[$id]} in
    # A PyPI package runs on the venv's python, which BIN holds.
    pypi:*) NODE[$id]=${BIN[$id]} ;;
    *) NODE[$id]=$(rt_node_dir "$(rt_probe_node "$probe")") || NODE[$id]= ;;
  esac
done

RESULTS="$OUT_BASE/results.jsonl"
: >"$RESULTS"
FAILED=0

# verdict <id> <scope> <label> <result-json-or-empty> <reason-if-no-json>
verdict() {
  python3 - "$@" "$RESULTS" <<'PY'
import json, sys
rid, scope, label, raw, reason, results = sys.argv[1:7]
try:
    r = json.loads(raw) if raw else None
except ValueError:
    r = None
if not isinstance(r, dict):
    r = {"failures": [reason or "probe printed no result JSON"]}
def cnt(k):
    v = r.get(k)
    return "%d/%d" % (v["seen"], v["expected"]) if isinstance(v, dict) else "-"
h = r.get("hooks")
h = h.get("ran") if isinstance(h, dict) else h
hooks = {True: "ran", False: "NOT-RUN", None: "-"}[h]
def ok(k):
    return {True: "ok", False: "BAD", None: "-"}[r.get(k)]
fails = r.get("failures") or []
warns = r.get("warnings") or []
v = "FAIL" if fails else "PASS"
line = "%-9s%-7s%s commands %-6s skills %-6s agents %-6s hooks %-7s context %-3s workflow %-3s tools %-3s %s" % (
    rid, scope, (" " + label) if label else "", cnt("commands"), cnt("skills"), cnt("agents"),
    hooks, ok("hook_context"), ok("workflow_text"), ok("agent_tools"), v)
print(line)
for f in fails[:8]:
    print("    fail: " + str(f)[:400])
if len(fails) > 8:
    print("    fail: ... %d more" % (len(fails) - 8))
for w in warns[:4]:
    print("    warn: " + str(w)[:400])
r.update({"runtime": rid, "scope": scope, "label": label, "verdict": v})
open(results, "a").write(json.dumps(r) + "\n")
sys.exit(1 if fails else 0)
PY
}

# session_verdict <id> <scope> <out>: one line per check of sessions/<id>.sh (session.tsv); a
# session script that recorded nothing fails as a whole, with its result's failures.
session_verdict() {
  python3 - "$@" "$RESULTS" <<'PY'
import json, os, sys
rid, scope, out, results = sys.argv[1:5]
rows = []
try:
    for line in open(os.path.join(out, "session.tsv"), encoding="utf-8"):
        parts = line.rstrip("\n").split("\t", 2)
        if len(parts) == 3:
            rows.append(parts)
except OSError:
    pass
if not rows:
    try:
        r = json.load(open(os.path.join(out, "result.json")))
        why = "; ".join(r.get("failures") or []) or "the session script recorded no check"
    except (OSError, ValueError):
        why = "the session script recorded no check (see %s/probe.stderr)" % out
    rows = [["session", "FAIL", why]]
bad = False
for check, v, why in rows:
    print("%-9s%-7s%-11s%-5s %s" % (rid, scope, check, v, why[:300]))
    bad = bad or v == "FAIL"
    open(results, "a").write(json.dumps({"runtime": rid, "scope": scope, "check": check,
                                         "verdict": v, "reason": why}) + "\n")
sys.exit(1 if bad else 0)
PY
}

# run_probe <id> <scope> <sandbox> <out> <label>: executes probes/<id>.sh in the sandbox (the
# sandbox env is already exported by the caller's subshell).
run_probe() {
  local id=$1 scope=$2 out=$3 probe="$RT_ROOT/probes/$1.sh" rc
  [ "$SESSIONS" = 1 ] && probe="$RT_ROOT/sessions/$1.sh"
  mkdir -p "$out"
  (
    export RT_ID=$id RT_SCOPE=$scope RT_BIN_DIR=${BIN[$id]} RT_NODE_DIR=${NODE[$id]} RT_OUT=$out
    export RT_MOCK="$RT_LIB/mock_model.py" RT_EXPECT="$out/expect.json" RT_PIN=${PIN[$id]}
    export PATH="$RT_NODE_DIR:$RT_BIN_DIR:$PATH"
    rt_result_init
    cd "$PROJECT" && timeout -k 10 "$PROBE_TIMEOUT" bash "$probe" >"$out/probe.stdout" 2>"$out/probe.stderr"
  )
  rc=$?
  local last
  last=$(grep -a '^{' "$out/probe.stdout" 2>/dev/null | tail -n1)
  local reason="probe exited $rc without a result line (see $out/probe.stderr)"
  [ $rc -eq 124 ] && reason="probe timed out after ${PROBE_TIMEOUT}s"
  if [ -n "$last" ] && [ $rc -ne 0 ] && ! printf '%s' "$last" | grep -q '"failures": *\[ *"'; then
    # A probe that exits non-zero must say why; add the exit code as a failure.
    last=$(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); r.setdefault("failures",[]).append("probe exited %s" % sys.argv[2]); print(json.dumps(r))' "$last" "$rc")
  fi
  printf '%s\n' "$last" >"$out/result.json"
}

# one_case <label> <scope> <ids...>: a sandbox, msd installs for every id, then a probe per id.
one_case() {
  local label=$1 scope=$2
  shift 2
  local ids=("$@") sb="$SB_BASE/${label:-single}-${ids[*]// /-}-$scope" id out
  sb=${sb// /-}
  sb=${sb//[:+]/-}
  (
    rt_sandbox "$sb"
    for id in "${ids[@]}"; do
      out="$OUT_BASE/${id}-${scope}${label:+-${label//[:+]/-}}"
      mkdir -p "$out"
      if [ -z "${BIN[$id]}" ] || [ -z "${NODE[$id]}" ]; then
        printf '{"failures":["could not install %s or its node (see %s/%s/.install.log)"]}\n' \
          "${PIN[$id]}" "$MSD_RT_CACHE" "$id" >"$out/result.json"
        continue
      fi
      if ! rt_msd_install "$id" "$scope" >"$out/msd-install.log" 2>&1; then
        printf '{"failures":["msd-install -r %s (%s) failed: %s"]}\n' "$id" "$scope" \
          "$(tail -n3 "$out/msd-install.log" | tr '\n"\\' ' ..')" >"$out/result.json"
        continue
      fi
    done
    for id in "${ids[@]}"; do
      out="$OUT_BASE/${id}-${scope}${label:+-${label//[:+]/-}}"
      [ -s "$out/result.json" ] && continue
      if ! rt_make_expect "$id" "$scope" "$out/expect.json" 2>"$out/expect.err"; then
        printf '{"failures":["no manifest of what msd wrote: %s"]}\n' "$(tr '\n"\\' ' ..' <"$out/expect.err")" \
          >"$out/result.json"
        continue
      fi
      export RT_PAIR="${ids[*]}"
      run_probe "$id" "$scope" "$out"
    done
  )
  for id in "${ids[@]}"; do
    out="$OUT_BASE/${id}-${scope}${label:+-${label//[:+]/-}}"
    if [ "$SESSIONS" = 1 ]; then
      session_verdict "$id" "$scope" "$out" || FAILED=1
      continue
    fi
    if [ "$JSON" = 1 ]; then
      verdict "$id" "$scope" "$label" "$(cat "$out/result.json" 2>/dev/null)" "" >/dev/null || { FAILED=1; MOVED_FAILED[$id]=1; }
    else
      verdict "$id" "$scope" "$label" "$(cat "$out/result.json" 2>/dev/null)" "" || { FAILED=1; MOVED_FAILED[$id]=1; }
    fi
  done
  [ "$KEEP" = 1 ] || rm -rf "$sb"
}

if [ -n "$PAIR" ]; then
  for scope in "${SCOPES[@]}"; do one_case "pair:${IDS[0]}+${IDS[1]}" "$scope" "${IDS[@]}"; done
else
  for id in "${IDS[@]}"; do
    for scope in "${SCOPES[@]}"; do
      # A runtime without that scope (its probe's `# scopes:`): said, not run.
      case " $(rt_probe_scopes "$RT_ROOT/probes/$id.sh") " in
        *" $scope "*) one_case "" "$scope" "$id" ;;
        *) printf '%-9s%-7s skipped: %s has no %s scope\n' "$id" "$scope" "$id" "$scope" ;;
      esac
    done
  done
fi

[ "$JSON" = 1 ] && cat "$RESULTS"
# A failure of the drift run names the runtime and the version that moved (stdout, and the CI
# job summary when there is one).
if [ "${MSD_RT_LATEST:-0}" = 1 ]; then
  for id in "${!MOVED_FAILED[@]}"; do
    if [ "${PIN[$id]}" = "${PINNED[$id]}" ]; then
      line="FAILED on the newest version: $id ${PIN[$id]} (the pinned version itself)"
    else
      line="MOVED: $id ${PINNED[$id]} -> ${PIN[$id]} fails (update runtimes/$id/capability.json and probes/$id.sh, or record the break)"
    fi
    echo "$line"
    [ -n "${GITHUB_STEP_SUMMARY:-}" ] && echo "- $line" >>"$GITHUB_STEP_SUMMARY"
  done
fi
[ "$KEEP" = 1 ] && echo "sandboxes kept in $SB_BASE" >&2 || rmdir "$SB_BASE" 2>/dev/null
echo "logs: $OUT_BASE" >&2
exit $FAILED
