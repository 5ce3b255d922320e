#!/usr/bin/env bash
# Hook latency benchmark: `msd_run hook <name> < event.json` for every payload fixture of every
# runtime (crates/msd-run/tests/fixtures/hooks/<runtime>/<event>.json), in a project with a
# STATE.md and a planning config; median and worst of N runs each, in milliseconds. Exits 1 when
# a median is over the budget (50 ms: a hook runs on every tool call). Then a table: one row per
# hook (the median over its payloads), against a Node process that does nothing (`node -e ''`,
# the start-up every hook written in JavaScript pays) and `true` (a process start, the floor).
#
#   bench/hooks.sh              # release build, 21 runs each
#   bench/hooks.sh --runs 51    # more runs
#   bench/hooks.sh --bin PATH   # time a given msd_run (a debug build is an upper bound)
#   bench/hooks.sh --counts     # instead of times: the instructions (valgrind's callgrind) and
#                               # system calls (strace -f -c) of one run of each payload, a row
#                               # per hook (the median over its payloads), against `true` and an
#                               # empty Rust `fn main() {}` built with the release profile's
#                               # options: figures that hold on a loaded machine, where times
#                               # do not. `--trace DIR` also keeps each payload's strace listing.
#
# Public tools only: a loop timed by bash's own clock (bench/clock.sh; process start included, as
# a runtime sees it).
set -euo pipefail
# A relative --bin is the caller's: every run starts in the bench's project directory.
caller="$PWD"
cd "$(dirname "$0")/.."
. bench/clock.sh

runs=21
bin=""
budget_ms=50
counts=0
trace=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    --counts) counts=1; shift ;;
    --trace) trace="$2"; counts=1; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

if [ -z "$bin" ]; then
  echo "building the release msd_run..." >&2
  scripts/build-release.sh --helper-only --quiet
  bin="${CARGO_TARGET_DIR:-$PWD/target}/release/msd_run"
fi
case "$bin" in /*) ;; *) bin="$caller/$bin" ;; esac
[ -x "$bin" ] || { echo "error: --bin $bin is not an executable msd_run" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
project="$work/project"
mkdir -p "$project/.planning" "$work/home"
{
  printf '# Project State\n\n## Current Position\n\nPhase: 2 of 4 (API)\nPlan: 1 of 3\nStatus: Executing\n\n## Notes\n'
  for _ in $(seq 200); do printf 'A line of accumulated context that matters for the next session.\n'; done
} > "$project/.planning/STATE.md"
printf '{"mode": "yolo"}\n' > "$project/.planning/config.json"
project="$(cd "$project" && pwd -P)"

# The hooks, in the order of the tables' rows.
hooks=(guard session-start context-monitor statusline config-reload)

# sorted_into VAR VALUES: the whitespace-separated numbers VALUES, ascending, into the array VAR.
sorted_into() { read -r -a "$1" <<< "$(printf '%s\n' $2 | sort -n | tr '\n' ' ')"; }

# The hook each fixture's event is for.
hook_for() {
  case "$(basename "$1")" in
    PreToolUse* | BeforeTool* | preToolUse* | pre_write_code* | pre_tool_call*) echo guard ;;
    # Hermes: the start line goes on pre_llm_call (its on_session_start output is not read).
    SessionStart* | sessionStart* | TaskStart* | pre_llm_call*) echo session-start ;;
    PostToolUse* | AfterTool* | postToolUse*) echo context-monitor ;;
    statusline*) echo statusline ;;
    FileChanged* | afterFileEdit*) echo config-reload ;;
    # OpenCode and Kilo: the events msd's JS plugin passes on (src/pipeline/convert/js_plugin.js).
    tool.execute.before*) echo guard ;;
    experimental.chat.system.transform*) echo session-start ;;
    tool.execute.after*) echo context-monitor ;;
    event-file.edited*) echo config-reload ;;
    *) echo "" ;;
  esac
}

# The reply protocol of the runtime a fixture was recorded from (its directory), as the
# registered command passes it; the others speak Claude's.
protocol_for() {
  case "$(basename "$(dirname "$1")")" in
    gemini | copilot | cline | opencode | cursor | hermes) echo "--protocol $(basename "$(dirname "$1")")" ;;
    *) echo "" ;;
  esac
}

# cpu_ms FILE: the user+system CPU milliseconds of a `times` snapshot (the children this shell
# has waited for: getrusage(RUSAGE_CHILDREN)). `times` is a builtin: run with a redirection it
# forks nothing, where `$(times)` would report a subshell with no children of its own.
cpu_ms() {
  awk 'function ms(t,  m, s) { m = t; sub(/m.*/, "", m); s = t; sub(/^[0-9]+m/, "", s); sub(/s$/, "", s); return (m * 60 + s) * 1000 }
    NR == 2 { printf "%d\n", ms($1) + ms($2) }' "$1"
}

# run_in_project CMD...: one run of CMD as a runtime starts a hook (in the project, stdin
# $event, output read and dropped). A hook may answer with any exit code its protocol has (2:
# blocked); 126 and up is a program that did not start or died of a signal, whose time or
# counts are not a hook's: the bench stops.
run_in_project() {
  local rc=0
  (cd "$project" && HOME="$work/home" XDG_CACHE_HOME="$work/home/.cache" TMPDIR="$work" "$@" < "$event" > /dev/null 2>&1) || rc=$?
  if [ "$rc" -ge 126 ]; then
    echo "error: $* exited $rc in $project (not started, or killed): nothing to time" >&2
    exit 2
  fi
}

# use_payload FILE: a hook payload fixture made ready to run: sets h (its hook), proto (its
# reply protocol's arguments) and name, and writes its event (the project path filled in) to
# $event. Fails for a fixture that is no hook's.
use_payload() {
  h="$(hook_for "$1")"
  [ -n "$h" ] || return 1
  read -r -a proto <<< "$(protocol_for "$1")"
  name="${1#crates/msd-run/tests/fixtures/hooks/}"
  event="$work/event.json"
  sed "s|__PROJECT__|$project|g" "$1" > "$event"
}

# time_us CMD...: the median and worst of $runs runs of CMD (stdin: $event), in microseconds,
# each timed as a runtime sees it (a process started in the project, its output read), and the
# mean CPU time of a run (user+system, microseconds; the subshell each run starts in included):
# on a loaded machine the wall times wait for a core, the CPU time does not.
time_us() {
  local t0 t1 times=() sorted c0 c1
  times > "$work/times0"
  for _ in $(seq "$runs"); do
    now_ns t0
    run_in_project "$@"
    now_ns t1
    times+=($(( (t1 - t0) / 1000 )))
  done
  times > "$work/times1"
  c0=$(cpu_ms "$work/times0")
  c1=$(cpu_ms "$work/times1")
  sorted=($(printf '%s\n' "${times[@]}" | sort -n))
  echo "${sorted[$(( runs / 2 ))]} ${sorted[$(( runs - 1 ))]} $(( (c1 - c0) * 1000 / runs ))"
}
ms() { printf '%d.%01d' $(( $1 / 1000 )) $(( $1 % 1000 / 100 )); }

# count NAME CMD...: the instructions and system calls of one run of CMD (stdin: $event, in the
# project, the environment of `time_us`), after one run unmeasured (the state directory a hook
# makes at its first call exists at every later one, as in a session). Instructions: every
# instruction valgrind runs in the process, the dynamic loader and std's start-up included.
# System calls: strace's total, the `execve` that starts the program included. With --trace,
# the plain listing of the counted run goes to DIR/NAME.strace.
count() {
  local name="$1" out="$work/count"
  shift
  run_in_project "$@"
  run_in_project valgrind --tool=callgrind --callgrind-out-file=/dev/null --log-file="$out.vg" "$@"
  run_in_project strace -f -c -o "$out.st" "$@"
  if [ -n "$trace" ]; then
    run_in_project strace -f -o "$trace/$(echo "$name" | tr '/' '_').strace" "$@"
  fi
  local ins calls
  ins=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$out.vg")
  calls=$(awk '$NF == "total" { print $4 }' "$out.st")
  echo "${ins:-0} ${calls:-0}"
}
# commas: 1234567 -> 1,234,567
commas() { printf '%s' "$1" | rev | sed 's/[0-9]\{3\}/&,/g; s/,$//' | rev; }

if [ "$counts" = 1 ]; then
  for tool in valgrind strace rustc; do
    command -v "$tool" > /dev/null || { echo "error: --counts needs $tool on PATH" >&2; exit 2; }
  done
  [ -z "$trace" ] || mkdir -p "$trace"
  printf '%-48s %-16s %12s %8s\n' "payload" "hook" "instructions" "syscalls"
  declare -A ins_of calls_of
  for f in crates/msd-run/tests/fixtures/hooks/*/*.json; do
    use_payload "$f" || continue
    read -r ins calls < <(count "$name" "$bin" hook "$h" "${proto[@]}")
    printf '%-48s %-16s %12s %8s\n' "$name" "$h" "$(commas "$ins")" "$calls"
    ins_of[$h]+="$ins "
    calls_of[$h]+="$calls "
  done
  # The floors: a process start (`true`), and a Rust program that does nothing, built with the
  # options of the release profile (Cargo.toml: opt-level 3, 4 codegen units).
  printf 'fn main() {}\n' > "$work/empty.rs"
  rustc --edition 2021 -C opt-level=3 -C codegen-units=4 -o "$work/empty" "$work/empty.rs"
  median() { printf '%s\n' $1 | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
  echo
  echo "| hook | payloads | instructions (median) | range | system calls (median) | range |"
  echo "|---|--:|--:|--:|--:|--:|"
  for h in "${hooks[@]}"; do
    [ -n "${ins_of[$h]:-}" ] || continue
    sorted_into i "${ins_of[$h]}"
    sorted_into c "${calls_of[$h]}"
    echo "| $h | ${#i[@]} | $(commas "$(median "${i[*]}")") | $(commas "${i[0]}") - $(commas "${i[-1]}") | $(median "${c[*]}") | ${c[0]} - ${c[-1]} |"
  done
  read -r ins calls < <(count empty "$work/empty")
  echo "| floor: empty Rust \`fn main() {}\` (release options) | | $(commas "$ins") | | $calls | |"
  read -r ins calls < <(count true "$(type -P true)")
  echo "| floor: \`true\` | | $(commas "$ins") | | $calls | |"
  exit 0
fi

printf '%-48s %-16s %8s %8s\n' "payload" "hook" "median" "worst"
over=0
declare -A medians worst cpus
for f in crates/msd-run/tests/fixtures/hooks/*/*.json; do
  use_payload "$f" || continue
  read -r median_us worst_us cpu_us < <(time_us "$bin" hook "$h" "${proto[@]}")
  cpus[$h]+="$cpu_us "
  printf '%-48s %-16s %8s %8s\n' "$name" "$h" "$(ms "$median_us")" "$(ms "$worst_us")"
  medians[$h]+="$median_us "
  [ "${worst[$h]:-0}" -lt "$worst_us" ] && worst[$h]=$worst_us
  if [ "$median_us" -gt $(( budget_ms * 1000 )) ]; then over=1; fi
done
echo "(milliseconds; $runs runs each; budget ${budget_ms} ms per median)"

# One row per hook: the median over its payloads' medians, their range, the worst single run;
# and the yardsticks, timed the same way with the last event on stdin: a Node process that does
# nothing (what a hook written in JavaScript pays before its first line) and `true` (the
# process start and the shell's own cost, the floor of any hook).
echo
echo "| hook | payloads | median | range of medians | worst single run | CPU per run |"
echo "|---|--:|--:|--:|--:|--:|"
for h in "${hooks[@]}"; do
  [ -n "${medians[$h]:-}" ] || continue
  sorted_into m "${medians[$h]}"
  n=${#m[@]}
  cpu=$(printf '%s\n' ${cpus[$h]} | awk '{ s += $1 } END { printf "%d", s / NR }')
  echo "| $h | $n | $(ms "${m[$(( n / 2 ))]}") ms | $(ms "${m[0]}") - $(ms "${m[$(( n - 1 ))]}") ms | $(ms "${worst[$h]}") ms | $(ms "$cpu") ms |"
done
if command -v node > /dev/null; then
  read -r median_us worst_us cpu_us < <(time_us node -e '')
  echo "| yardstick: \`node -e ''\` ($(node --version)) | | $(ms "$median_us") ms | | $(ms "$worst_us") ms | $(ms "$cpu_us") ms |"
fi
read -r median_us worst_us cpu_us < <(time_us "$(type -P true)")
echo "| floor: \`true\` | | $(ms "$median_us") ms | | $(ms "$worst_us") ms | $(ms "$cpu_us") ms |"
exit "$over"
