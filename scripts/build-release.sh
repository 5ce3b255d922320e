#!/usr/bin/env bash
# The release binaries as users get them, into ${CARGO_TARGET_DIR:-target}/release: msd-install
# (dynamic) and msd_run, linked static (glibc static-pie) where the host is Linux with glibc.
# The one place that knows how: install.sh, bench/hooks.sh, bench/install.sh and the real-runtime
# tier (tests/real-runtimes/lib/common.sh) call it.
#
#   scripts/build-release.sh                 # both binaries
#   scripts/build-release.sh --helper-only   # msd_run only (bench/hooks.sh)
#   scripts/build-release.sh --quiet         # cargo's --quiet (the notes below are still said)
#   scripts/build-release.sh --require-static # fail instead of falling back to a dynamic msd_run,
#                                            # and check the static one has no program interpreter
#                                            # (CI's static-helper job)
#   MSD_STATIC_HELPER=0 scripts/build-release.sh   # msd_run dynamic, as before (to compare)
#
# Why static: msd_run starts on every hook call, and half of a dynamic start is the loader
# binding libc's and libgcc_s's symbols (docs/PERFORMANCE.md, "The helper, linked static").
# Why only msd_run: msd-install's `self-update` resolves host names (getaddrinfo) and finds the
# home directory in the password database when HOME is unset: a static glibc does both through
# NSS, which at run time needs the shared modules of the glibc version it was linked with.
# Before keeping a static msd_run, this script checks (with `nm`, where binutils is installed)
# that it links none of those functions; a change that makes msd_run call one gets the dynamic
# helper and a note saying which. GNU ld (the linker on aarch64; rust-lld on x86_64 says
# nothing) warns "Using 'getpwuid_r' / 'getaddrinfo' in statically linked applications requires
# at run time the shared libraries from the glibc version used for linking": std's one object
# file refers to them (home_dir's fallback, lookup_host), and both go with the unused code at
# the link (--gc-sections), which the check confirms. rustc shows linker warnings only with
# `-W linker-messages`.
#
# How: cargo has no per-binary rustflags, and `-C target-feature=+crt-static` in RUSTFLAGS or a
# cargo config (without --target) reaches the proc macros too, which cannot be built that way.
# `cargo rustc --bin msd_run -- FLAGS` gives the flags to that one binary; the libraries it links
# are the same compiled crates as the dynamic build's. A later plain `cargo build --release`
# links msd_run dynamic again (it works; it starts slower).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/static-helper.sh
. scripts/lib/static-helper.sh

helper_only=0
require_static=0
quiet=()
while [ $# -gt 0 ]; do
  case "$1" in
    --helper-only) helper_only=1 ;;
    --require-static) require_static=1 ;;
    -q | --quiet) quiet=(--quiet) ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

say() { echo "$@" >&2; }
out="${CARGO_TARGET_DIR:-target}/release"

if [ "$helper_only" = 0 ]; then
  cargo build --release --locked --bin msd-install "${quiet[@]+"${quiet[@]}"}"
fi

dynamic_helper() {
  if [ "$require_static" = 1 ]; then
    say "error: msd_run was not linked static, and --require-static was given"
    exit 1
  fi
  cargo build --release --locked --bin msd_run "${quiet[@]+"${quiet[@]}"}"
}

host="$(rustc -vV 2>/dev/null | sed -n 's/^host: //p')"
if [ "${MSD_STATIC_HELPER:-1}" = 0 ]; then
  say "note: msd_run linked dynamic (MSD_STATIC_HELPER=0)"
  dynamic_helper
elif [[ "$host" != *-linux-gnu* ]]; then
  # macOS and Windows have no supported static C library; musl targets are static already.
  dynamic_helper
elif ! libc_a="$(cc -print-file-name=libc.a 2>/dev/null)" || [[ "$libc_a" != /* ]]; then
  say "note: msd_run is linked dynamic: this machine has no static C library (libc.a) to link it static;"
  say "      it works, and each hook starts about 0.4 ms slower"
  say "hint: install glibc's static library ($static_helper_libc_packages)"
  say "      and run the build again for the faster helper"
  dynamic_helper
elif ! cargo rustc --release --locked -p msd-install --bin msd_run "${quiet[@]+"${quiet[@]}"}" -- \
  "${static_helper_flags[@]}"; then
  say "note: msd_run could not be linked static (cargo's error above); linking it dynamic instead,"
  say "      which works, and each hook starts about 0.4 ms slower"
  say "hint: a static link needs glibc's static library ($static_helper_libc_packages)"
  dynamic_helper
elif command -v nm >/dev/null 2>&1 \
  && found="$(static_helper_nss "$out/msd_run")" && [ -n "$found" ]; then
  say "note: msd_run now calls $found: $static_helper_nss_reason;"
  say "      msd_run is linked dynamic instead (see docs/PERFORMANCE.md)"
  dynamic_helper
elif [ "$require_static" = 1 ] && ! static_helper_is_static "$out/msd_run"; then
  say "error: $out/msd_run has a program interpreter: cargo rustc did not link it static"
  exit 1
fi
