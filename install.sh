#!/usr/bin/env bash
# Fresh machine -> msd-install and msd_run on your PATH -> msd-core installed.
#
# Prefers a prebuilt release binary that matches this machine and this version; builds from
# source (cargo) otherwise. Then runs `msd-install --runtime claude` with the msd-install
# options you pass. Run `./install.sh --help` for the options.
set -euo pipefail
cd "$(dirname "$0")"

usage() {
  cat <<'USAGE'
Usage: ./install.sh [OPTIONS] [-- MSD-INSTALL OPTIONS...]

Puts msd-install and msd_run into a bin directory, then runs msd-install with the options given
(default: --runtime claude into its global home).

Options of this script:
  -h, --help        show this help (`msd-install --help` explains the installer's own options)
  -n, --dry-run     install nothing, not even the binaries: say what would happen, and show the
                    plan of `msd-install --dry-run` when a binary is already at hand
      --from-source always build with cargo, never use a prebuilt binary
      --bin-dir DIR where the binaries go (default: $MSD_BIN_DIR, else ~/.local/bin)

Every other option goes to msd-install, for example:
  ./install.sh --local              install into ./.claude of this project
  ./install.sh -r opencode -r codex install for two runtimes
  ./install.sh --all --dry-run      show what every runtime would get, write nothing

Environment:
  MSD_BIN_DIR               default of --bin-dir
  MSD_INSTALL_RELEASE_URL   where release archives are downloaded from
                            (default: the GitHub releases of the repository in Cargo.toml)
USAGE
}

dry_run=0
from_source=0
bindir="${MSD_BIN_DIR:-$HOME/.local/bin}"
pass=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    -n | --dry-run) dry_run=1; pass+=(--dry-run) ;;
    --from-source) from_source=1 ;;
    --bin-dir) bindir="$2"; shift ;;
    --bin-dir=*) bindir="${1#--bin-dir=}" ;;
    --) shift; pass+=("$@"); break ;;
    *) pass+=("$1") ;;
  esac
  shift
done

say() { echo "$@" >&2; }

version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)"
repo_url="$(sed -n 's/^repository = "\(.*\)"/\1/p' Cargo.toml | head -n 1)"
release_url="${MSD_INSTALL_RELEASE_URL:-$repo_url/releases/download/v$version}"

# The target triple of a prebuilt archive for this machine (as cargo-dist names them), or empty.
triple() {
  local os arch
  os="$(uname -s)"
  arch="$(uname -m)"
  case "$arch" in
    x86_64 | amd64) arch=x86_64 ;;
    aarch64 | arm64) arch=aarch64 ;;
    *) return 0 ;;
  esac
  case "$os" in
    Linux) echo "$arch-unknown-linux-gnu" ;;
    Darwin) echo "$arch-apple-darwin" ;;
  esac
}

choose_runtime=(--runtime claude)
for arg in "${pass[@]+"${pass[@]}"}"; do
  case "$arg" in
    -r | --runtime | --runtime=* | -r* | --all | -h | --help | -V | --version | install | uninstall | verify | \
      status | diff | recover | runtimes | emit | schema | completions | man | gen | check | bench | attribution | inventory)
      choose_runtime=()
      ;;
  esac
done

t="$(triple)"
archive="msd-install-$t.tar.gz"

if [ "$dry_run" = 1 ]; then
  say "dry run: nothing is built, downloaded or copied"
  if [ "$from_source" = 0 ] && [ -n "$t" ] && command -v curl >/dev/null 2>&1; then
    say "would download $release_url/$archive if it exists, else build from source with cargo"
  else
    say "would build msd-install and msd_run from source (cargo build --release --locked --bins)"
  fi
  say "would put msd-install and msd_run into $bindir"
  say "would run: msd-install ${choose_runtime[*]+${choose_runtime[*]}} ${pass[*]+${pass[*]}}"
  # Show the installer's own plan with a binary already at hand (never the one in $bindir is replaced).
  for b in "$bindir/msd-install" target/release/msd-install; do
    if [ -x "$b" ]; then
      say "the plan, from $b:"
      exec "$b" "${choose_runtime[@]+"${choose_runtime[@]}"}" "${pass[@]+"${pass[@]}"}"
    fi
  done
  exit 0
fi

src=""
if [ "$from_source" = 0 ] && [ -n "$t" ] && command -v curl >/dev/null 2>&1 && command -v tar >/dev/null 2>&1; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  if curl -fsSL "$release_url/$archive" -o "$tmp/$archive" 2>/dev/null; then
    tar -xzf "$tmp/$archive" -C "$tmp"
    dir="$(dirname "$(find "$tmp" -name msd-install -type f | head -n 1)")"
    if [ -x "$dir/msd-install" ] && [ -x "$dir/msd_run" ]; then
      say "using the prebuilt $archive ($version)"
      src="$dir"
    fi
  else
    say "no prebuilt binary for $t at $release_url; building from source"
  fi
fi

if [ -z "$src" ]; then
  if ! command -v cargo >/dev/null 2>&1; then
    say "error: cargo was not found, and no prebuilt binary matched this machine"
    say "hint: install Rust with https://rustup.rs, then run ./install.sh again"
    exit 1
  fi
  say "building msd-install and msd_run (release)..."
  cargo build --release --locked --bins --quiet
  src="${CARGO_TARGET_DIR:-target}/release"
fi

mkdir -p "$bindir"
for bin in msd-install msd_run; do
  cp "$src/$bin" "$bindir/.$bin.tmp"
  chmod 0755 "$bindir/.$bin.tmp"
  mv -f "$bindir/.$bin.tmp" "$bindir/$bin"
done
say "installed $bindir/msd-install and $bindir/msd_run"
case ":$PATH:" in
  *":$bindir:"*) ;;
  *) say "note: $bindir is not on your PATH; add it to run msd-install directly" ;;
esac

exec "$bindir/msd-install" "${choose_runtime[@]+"${choose_runtime[@]}"}" "${pass[@]+"${pass[@]}"}"
