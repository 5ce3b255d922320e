# Sourced by probes/cline.sh and sessions/cline.sh (after common.sh; $PROJECT set): the Cline
# hub daemon of this sandbox. Cline starts one for the project (`cline --cline-hub-daemon --cwd
# <project>`) and leaves it running when a task ends. On exit (a failed check, or run.sh's
# timeout, included) the ones of this sandbox are ended: SIGTERM, then SIGKILL for any still
# there after 5 s.
cline_stop_hub() {
  local pids i
  pids=$(pgrep -f -- "--cline-hub-daemon --cwd $PROJECT( |\$)") || return 0
  kill $pids 2>/dev/null
  for i in 1 2 3 4 5 6 7 8 9 10; do
    pids=$(pgrep -f -- "--cline-hub-daemon --cwd $PROJECT( |\$)") || return 0
    sleep 0.5
  done
  kill -9 $pids 2>/dev/null
  return 0
}
trap cline_stop_hub EXIT
# The hub listens on one fixed port (25463, `CLINE_HUB_PORT` names another): a hub another run
# left running there would take this sandbox's tasks (its project gone, they hang until killed).
# This sandbox's hub gets a free port of its own.
CLINE_HUB_PORT=${CLINE_HUB_PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
export CLINE_HUB_PORT
