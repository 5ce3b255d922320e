#!/usr/bin/env bash
# Hook latency benchmark: `msd_run hook <name> < event.json` for every payload fixture of every
# runtime (crates/msd-run/tests/fixtures/hooks/<runtime>/<event>.json), in a project with a
# STATE.md and a planning config; median and worst of N runs each, in milliseconds. Exits 1 when
# a median is over the budget (50 ms: a hook runs on every tool call).
#
#   bench/hooks.sh              # release build, 21 runs each
#   bench/hooks.sh --runs 51    # more runs
#   bench/hooks.sh --bin PATH   # time a given msd_run (a debug build is an upper bound)
#
# Public tools only: a loop timed with `date +%s%N` (process start included, as a runtime sees it).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=21
bin=""
budget_ms=50
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    -h | --help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

if [ -z "$bin" ]; then
  echo "building the release msd_run..." >&2
  cargo build --release --locked --bin msd_run --quiet
  bin="${CARGO_TARGET_DIR:-$PWD/target}/release/msd_run"
fi

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

printf '%-48s %-16s %8s %8s\n' "payload" "hook" "median" "worst"
over=0
for f in crates/msd-run/tests/fixtures/hooks/*/*.json; do
  h="$(hook_for "$f")"
  [ -n "$h" ] || continue
  read -r -a proto <<< "$(protocol_for "$f")"
  event="$work/event.json"
  sed "s|__PROJECT__|$project|g" "$f" > "$event"
  times=()
  for _ in $(seq "$runs"); do
    t0=$(date +%s%N)
    (cd "$project" && HOME="$work/home" XDG_CACHE_HOME="$work/home/.cache" TMPDIR="$work" "$bin" hook "$h" "${proto[@]}" < "$event" > /dev/null 2>&1) || true
    t1=$(date +%s%N)
    times+=($(( (t1 - t0) / 1000 )))
  done
  sorted=($(printf '%s\n' "${times[@]}" | sort -n))
  median_us=${sorted[$(( runs / 2 ))]}
  worst_us=${sorted[$(( runs - 1 ))]}
  printf '%-48s %-16s %6d.%01d %6d.%01d\n' "${f#crates/msd-run/tests/fixtures/hooks/}" "$h" \
    $(( median_us / 1000 )) $(( median_us % 1000 / 100 )) $(( worst_us / 1000 )) $(( worst_us % 1000 / 100 ))
  if [ "$median_us" -gt $(( budget_ms * 1000 )) ]; then over=1; fi
done
echo "(milliseconds; $runs runs each; budget ${budget_ms} ms per median)"
exit "$over"
