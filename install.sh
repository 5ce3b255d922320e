#!/usr/bin/env bash
# Fresh machine -> built binaries -> msd-core installed.
#
# Builds msd-install and msd_run in release mode, puts them in ~/.local/bin (or $MSD_BIN_DIR),
# then runs `msd-install --runtime claude` with any arguments you pass (`./install.sh --local`,
# `./install.sh --dry-run`). Pass --runtime/-r or --all to choose other runtimes instead.
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v cargo >/dev/null 2>&1; then
  echo "error: cargo was not found" >&2
  echo "hint: install Rust with https://rustup.rs, then run ./install.sh again" >&2
  exit 1
fi

echo "building msd-install and msd_run (release)..." >&2
cargo build --release --locked --bins --quiet

bindir="${MSD_BIN_DIR:-$HOME/.local/bin}"
mkdir -p "$bindir"
for bin in msd-install msd_run; do
  cp target/release/"$bin" "$bindir/.$bin.tmp"
  chmod 0755 "$bindir/.$bin.tmp"
  mv -f "$bindir/.$bin.tmp" "$bindir/$bin"
done
echo "installed $bindir/msd-install and $bindir/msd_run" >&2
case ":$PATH:" in
  *":$bindir:"*) ;;
  *) echo "note: $bindir is not on your PATH; add it to run msd-install directly" >&2 ;;
esac

choose_runtime=(--runtime claude)
for arg in "$@"; do
  case "$arg" in
    -r | --runtime | --runtime=* | --all | -h | --help | -V | --version) choose_runtime=() ;;
  esac
done
exec "$bindir/msd-install" "${choose_runtime[@]}" "$@"
