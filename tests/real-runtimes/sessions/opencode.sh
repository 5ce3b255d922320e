#!/usr/bin/env bash
# OpenCode sessions (run.sh --sessions opencode): lib/opencode_session.sh.
OC_CLI=opencode OC_ENV=OPENCODE
. "$RT_LIB/opencode_session.sh"
ss_na statusline "msd registers no status line for OpenCode: its config (opencode.json) has no status-line command"
ss_main
