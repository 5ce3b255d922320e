#!/usr/bin/env bash
# pin: @kilocode/cli@7.7.7
# node: 20
#
# Kilo, offline: `kilo debug config` / `debug skill` and one `kilo run --command msd-help` against
# the mock model. 7.7.7 is the newest version whose @kilocode/cli-linux-x64 platform package is
# published (7.8.1's is not). The body is lib/opencode_like.sh (Kilo is an OpenCode fork).
OC_CLI=kilo OC_ENV=KILO OC_NAME=kilo
OC_BINARY="$RT_BIN_DIR/../@kilocode/cli-linux-x64/bin/kilo"
. "$RT_LIB/opencode_like.sh"
