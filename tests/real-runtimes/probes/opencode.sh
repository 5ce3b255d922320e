#!/usr/bin/env bash
# pin: opencode-ai@1.18.33
# node: 20
#
# OpenCode, offline: `opencode debug config` / `debug skill` and one `opencode run --command
# msd-help` against the mock model. The body is lib/opencode_like.sh (shared with Kilo).
OC_CLI=opencode OC_ENV=OPENCODE OC_NAME=opencode
OC_BINARY="$RT_BIN_DIR/../opencode-linux-x64/bin/opencode"
. "$RT_LIB/opencode_like.sh"
