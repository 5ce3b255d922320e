# The clock of the bench scripts (sourced by bench/install.sh and bench/hooks.sh).
#
# now_ns VAR: the wall clock in nanoseconds (microsecond resolution), into VAR. Bash 5's
# EPOCHREALTIME is read without starting a process; `$(date +%s%N)` forks and execs `date`, and
# the start-up of the second `date` of a pair lands inside the interval it times (about 1 ms on a
# 2-core machine: more than a hook's own work, and the same for every row, the floors included).
# Older bash (macOS's 3.2) has no EPOCHREALTIME: `date` then, said once on stderr.
if [ -n "${EPOCHREALTIME:-}" ]; then
  now_ns() { printf -v "$1" '%s000' "${EPOCHREALTIME//[!0-9]/}"; }
else
  echo "note: bash ${BASH_VERSION} has no EPOCHREALTIME: timed with date, whose start-up every row includes" >&2
  now_ns() { printf -v "$1" '%s' "$(date +%s%N)"; }
fi
