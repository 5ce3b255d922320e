#!/usr/bin/env bash
# Kilo sessions (run.sh --sessions kilo): lib/opencode_session.sh (Kilo is a fork of OpenCode).
OC_CLI=kilo OC_ENV=KILO
. "$RT_LIB/opencode_session.sh"
ss_na statusline "msd registers no status line for Kilo: its config (kilo.json) has no status-line command"
ss_main
