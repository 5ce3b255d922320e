#!/usr/bin/env bash
# Whole-install benchmark: `msd-install --all` (global) into a fresh HOME versus `cp -r` of the
# tree it emits into a fresh directory, same machine, same run; medians and their ratio.
#
#   bench/install.sh               # the shipped content, 7 runs each
#   bench/install.sh --runs 11     # more runs
#   bench/install.sh --scale 8     # also content x1, x4, x8 (distinct files, same shape):
#                                  # how install time grows with content size
#
# Public tools only: a loop timed with `date +%s%N` (`/usr/bin/time` resolution is 10 ms, too
# coarse for sub-second runs; hyperfine cannot alternate two commands run for run).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=7
scale=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --scale) scale="$2"; shift 2 ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

echo "building release binaries..." >&2
cargo build --release --locked --bins --quiet
bin="$PWD/target/release/msd-install"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Median of the numbers on stdin (nanoseconds), printed in milliseconds.
median_ms() { sort -n | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.1f", m / 1e6}'; }

# bench_content CONTENT_ARGS: prints "install_ms copy_ms files bytes". Install and copy runs
# alternate (install, copy, install, copy, ...) so both see the same machine state: page cache,
# writeback and whatever else runs.
bench_content() {
  local args="$1" i t0 t1
  # One install to learn the emitted tree, used as the source of the copies.
  rm -rf "$work/ref" && mkdir -p "$work/ref"
  HOME="$work/ref" XDG_CONFIG_HOME="$work/ref/.config" "$bin" --all -q $args
  local files bytes
  files=$(find "$work/ref" -type f | wc -l)
  bytes=$(du -sb "$work/ref" | cut -f1)
  : > "$work/install.ns"
  : > "$work/copy.ns"
  for i in $(seq "$runs"); do
    # Each timed command starts with nothing dirty: msd-install flushes its staged files before
    # it commits, and must not pay for the previous copy's writeback.
    rm -rf "$work/h" && mkdir -p "$work/h" && sync
    t0=$(date +%s%N)
    HOME="$work/h" XDG_CONFIG_HOME="$work/h/.config" "$bin" --all -q $args
    t1=$(date +%s%N)
    echo $((t1 - t0)) >> "$work/install.ns"
    rm -rf "$work/c" && sync
    t0=$(date +%s%N)
    cp -r "$work/ref" "$work/c"
    t1=$(date +%s%N)
    echo $((t1 - t0)) >> "$work/copy.ns"
  done
  echo "$(median_ms < "$work/install.ns") $(median_ms < "$work/copy.ns") $files $bytes"
}

machine="$(nproc) cores, $(uname -sm), $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//')"
echo "machine: $machine"
echo "runs: $runs of each, alternating install and copy"
read -r inst copy files bytes < <(bench_content "")
ratio=$(awk -v a="$inst" -v b="$copy" 'BEGIN {printf "%.2f", a / b}')
echo
echo "| what | median |"
echo "|---|--:|"
echo "| msd-install --all (18 runtimes, $files files, $((bytes / 1024 / 1024)) MiB) | $inst ms |"
echo "| cp -r of the same tree | $copy ms |"
echo "| ratio install / copy | $ratio |"

if [ -n "$scale" ]; then
  echo
  echo "| content | files installed | install | cp -r | install / copy | install / x1 install |"
  echo "|---|--:|--:|--:|--:|--:|"
  base=""
  for n in 1 4 "$scale"; do
    [ "$n" -gt "$scale" ] && continue
    dir="$work/content-x$n"
    "$bin" bench content --scale "$n" --out "$dir" 2>/dev/null
    read -r inst copy files bytes < <(bench_content "--content $dir")
    [ -z "$base" ] && base="$inst"
    growth=$(awk -v a="$inst" -v b="$base" 'BEGIN {printf "%.2f", a / b}')
    r=$(awk -v a="$inst" -v b="$copy" 'BEGIN {printf "%.2f", a / b}')
    echo "| x$n | $files | $inst ms | $copy ms | $r | $growth |"
    [ "$n" = "$scale" ] && break
  done
fi
