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

Every other option goes to msd-install, checked here first (a mistyped one stops before any
build); on a terminal, what the install will change, settings and hooks included, is shown and
asked about first (-y skips the question). For example:
  ./install.sh --local              install into ./.claude of this project
  ./install.sh -r opencode -r codex install for two runtimes
  ./install.sh --all --dry-run      show what every runtime would get, write nothing

Environment:
  MSD_BIN_DIR               default of --bin-dir
  MSD_INSTALL_RELEASE_URL   where release archives are downloaded from
                            (default: the GitHub releases of the repository in Cargo.toml)
USAGE
}

say() { echo "$@" >&2; }
usage_error() {
  say "error: $1"
  say "hint: $2"
  say "(./install.sh --help lists the options)"
  exit 2
}

# The options msd-install itself accepts, so a mistyped one stops here, before any build or
# download (tests/cli.rs checks this list against `msd-install install --help`). The second list
# takes a value.
MSD_FLAGS=" --adopt --all --allow-downgrade --allow-symlinks --dry-run --force-statusline --json --minimal
  --portable-hooks -g --global -l --local -q --quiet -v --verbose -y --yes "
MSD_VALUED=" --color --content --profile --project --runtimes -c --config-dir -r --runtime "
MSD_SUBCOMMANDS=" install uninstall verify status diff recover runtimes emit schema completions man
  self-update init-project gen check bench attribution inventory doctor migrate "

dry_run=0
from_source=0
yes=0
bindir="${MSD_BIN_DIR:-$HOME/.local/bin}"
pass=()
subcommand=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    -n | --dry-run) dry_run=1; pass+=(--dry-run) ;;
    --from-source) from_source=1 ;;
    --bin-dir)
      if [ $# -lt 2 ] || [ -z "$2" ] || [[ "$2" == -* ]]; then
        usage_error "--bin-dir needs a directory" "./install.sh --bin-dir ~/.local/bin"
      fi
      bindir="$2"; shift ;;
    --bin-dir=*)
      bindir="${1#--bin-dir=}"
      [ -n "$bindir" ] || usage_error "--bin-dir needs a directory" "./install.sh --bin-dir=~/.local/bin"
      ;;
    --) shift; pass+=("$@"); break ;;
    *)
      a="$1"
      if [ -n "$subcommand" ]; then
        pass+=("$a") # the subcommand's own options: msd-install checks them
      elif [[ "$MSD_SUBCOMMANDS" == *" $a "* ]]; then
        subcommand="$a"; pass+=("$a")
      elif [[ "$MSD_VALUED" == *" ${a%%=*} "* ]]; then
        pass+=("$a")
        if [[ "$a" != *=* ]]; then
          [ $# -ge 2 ] || usage_error "$a needs a value" "msd-install --help explains $a"
          pass+=("$2"); shift
        fi
      elif [[ "$a" =~ ^-[rc].+ ]]; then
        pass+=("$a") # -rcodex, -c/dir
      elif [[ "$MSD_FLAGS" == *" $a "* ]]; then
        if [ "$a" = -y ] || [ "$a" = --yes ]; then yes=1; fi
        pass+=("$a")
      elif [[ "$a" =~ ^-[a-zA-Z]{2,}$ ]] && [[ ! "${a#-}" =~ [^glqvy] ]]; then
        pass+=("$a") # bundled short flags (-qy)
        if [[ "$a" == *y* ]]; then yes=1; fi
      else
        usage_error "unknown option \`$a\` (nothing was built, downloaded or written)" \
          "msd-install's options are in \`msd-install --help\`; this script's own are in ./install.sh --help"
      fi
      ;;
  esac
  shift
done

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
    say "would build msd-install and msd_run from source (scripts/build-release.sh: cargo build --release --locked, msd_run linked static on Linux with glibc)"
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
  say "building msd-install and msd_run from source (cargo build --release): usually 3 to 6 minutes"
  say "on 4 cores, and up to 15 on 2 (the first build compiles every dependency); cargo's progress follows"
  # msd_run linked static where the host has glibc's static library, else dynamic with a note.
  scripts/build-release.sh
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

# On a terminal, an install first shows what it will change (the runtime's settings: hooks,
# status line, permissions) and asks; off a terminal it writes and says what, as msd-install does.
if [ -z "$subcommand" ] || [ "$subcommand" = install ]; then
  if [ "$yes" = 0 ] && [ -t 0 ] && [ -t 2 ]; then
    say "what msd-install will change (nothing is written yet):"
    "$bindir/msd-install" "${choose_runtime[@]+"${choose_runtime[@]}"}" "${pass[@]+"${pass[@]}"}" --dry-run --yes >&2
    printf 'write these files and settings, hooks included? [y/N] ' >&2
    read -r answer || answer=""
    case "$answer" in
      y | Y | yes | YES) ;;
      *) say "nothing was written; run ./install.sh again, or msd-install yourself, when you want it"; exit 0 ;;
    esac
    pass+=(--yes)
  fi
fi

exec "$bindir/msd-install" "${choose_runtime[@]+"${choose_runtime[@]}"}" "${pass[@]+"${pass[@]}"}"
