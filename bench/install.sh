#!/usr/bin/env bash
# Whole-install benchmark: `msd-install --all` (global) into a fresh HOME versus `cp -r` of the
# tree it emits into a fresh directory, same machine, same run; medians and their ratio. On tmpfs
# (no disk noise) and on the disk, where the copy pays a `sync` too: msd-install's install is
# durable (it flushes its staged tree before it commits), so the fair floor is `cp -r && sync`.
#
#   bench/install.sh               # tmpfs and disk, content x1 / x4 / x8, 5 runs each
#   bench/install.sh --runs 7      # more runs
#   bench/install.sh --scale 4     # content x1 and x4 only
#   bench/install.sh --fs tmpfs    # one filesystem only (tmpfs or disk)
#
# Content xN is `msd-install bench content --scale N` (N distinct copies of every command,
# workflow, agent, reference and template: a large third-party-shaped tree); x1 is the shipped
# content itself. It also times a no-change re-run of `--all` and reports the peak memory of an
# install against the largest single runtime tree it emits.
#
# Public tools only: a loop timed with `date +%s%N` (`/usr/bin/time` resolution is 10 ms, too
# coarse for sub-second runs; hyperfine cannot alternate two commands run for run). The table is
# Markdown for the README.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=5
scale=8
fss="tmpfs disk"
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --scale) scale="$2"; shift 2 ;;
    --fs) fss="$2"; shift 2 ;;
    -h | --help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

echo "building release binaries..." >&2
cargo build --release --locked --bins --quiet
bin="${CARGO_TARGET_DIR:-$PWD/target}/release/msd-install"

# The work directories: tmpfs is /dev/shm, the disk is the one holding the repository.
declare -A root
root[tmpfs]="$(mktemp -d /dev/shm/msd-bench.XXXXXX)"
root[disk]="$(mktemp -d "$PWD/target/msd-bench.XXXXXX" 2>/dev/null || mktemp -d)"
trap 'rm -rf "${root[tmpfs]}" "${root[disk]}"' EXIT
for fs in $fss; do
  case "$fs" in tmpfs | disk) ;; *) echo "error: --fs is tmpfs or disk, not $fs" >&2; exit 2 ;; esac
done
if [ "$(stat -f -c %T "${root[tmpfs]}")" != tmpfs ]; then
  echo "error: /dev/shm is not a tmpfs here" >&2
  exit 2
fi

# Median of the numbers on stdin (nanoseconds), printed in milliseconds.
median_ms() { sort -n | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.0f", m / 1e6}'; }

# bench_content FS CONTENT_ARGS: prints "install_ms copy_ms files bytes rerun_ms". Install and
# copy runs alternate (install, copy, install, copy, ...) so both see the same machine state:
# page cache, writeback and whatever else runs. Each timed command starts with nothing dirty.
bench_content() {
  local fs="$1" args="$2" work="${root[$1]}" i t0 t1
  rm -rf "$work/ref" && mkdir -p "$work/ref"
  HOME="$work/ref" XDG_CONFIG_HOME="$work/ref/.config" "$bin" --all -q $args
  local files bytes
  files=$(find "$work/ref" -type f | wc -l)
  bytes=$(du -sb "$work/ref" | cut -f1)
  : > "$work/install.ns"
  : > "$work/copy.ns"
  : > "$work/rerun.ns"
  for i in $(seq "$runs"); do
    rm -rf "$work/h" && mkdir -p "$work/h" && sync
    t0=$(date +%s%N)
    HOME="$work/h" XDG_CONFIG_HOME="$work/h/.config" "$bin" --all -q $args
    t1=$(date +%s%N)
    echo $((t1 - t0)) >> "$work/install.ns"
    # A no-change re-run of the same install.
    t0=$(date +%s%N)
    HOME="$work/h" XDG_CONFIG_HOME="$work/h/.config" "$bin" --all -q $args
    t1=$(date +%s%N)
    echo $((t1 - t0)) >> "$work/rerun.ns"
    rm -rf "$work/c" && sync
    t0=$(date +%s%N)
    cp -r "$work/ref" "$work/c" && sync
    t1=$(date +%s%N)
    echo $((t1 - t0)) >> "$work/copy.ns"
  done
  echo "$(median_ms < "$work/install.ns") $(median_ms < "$work/copy.ns") $files $bytes $(median_ms < "$work/rerun.ns")"
}

# peak_memory: "peak_kib largest_tree_kib" of an install of the shipped content on tmpfs.
peak_memory() {
  local work="${root[tmpfs]}" peak largest
  rm -rf "$work/m" && mkdir -p "$work/m"
  peak=$(HOME="$work/m" XDG_CONFIG_HOME="$work/m/.config" /usr/bin/time -f %M "$bin" --all -q 2>&1 >/dev/null | tail -1)
  largest=$(for d in "$work/m"/.[!.]* "$work/m"/.config/*; do
    [ -d "$d/msd-core" ] && du -sk "$d" | cut -f1
  done | sort -n | tail -1)
  echo "$peak $largest"
}

machine="$(nproc) cores, $(uname -sm), $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//')"
echo "machine: $machine; disk: $(stat -f -c %T "${root[disk]}"); runs: $runs of each, alternating"
echo
echo "| fs | content | files | MiB | install | floor | install / floor | x / x1 | no-change re-run |"
echo "|---|---|--:|--:|--:|--:|--:|--:|--:|"
for fs in $fss; do
  floor="cp -r"
  [ "$fs" = disk ] && floor="cp -r && sync"
  base=""
  for n in 1 4 8; do
    [ "$n" -gt "$scale" ] && continue
    args=""
    if [ "$n" -gt 1 ]; then
      dir="${root[tmpfs]}/content-x$n"
      [ -d "$dir" ] || "$bin" bench content --scale "$n" --out "$dir" 2>/dev/null
      args="--content $dir"
    fi
    read -r inst copy files bytes rerun < <(bench_content "$fs" "$args")
    [ -z "$base" ] && base="$inst"
    growth=$(awk -v a="$inst" -v b="$base" 'BEGIN {printf "%.2f", a / b}')
    r=$(awk -v a="$inst" -v b="$copy" 'BEGIN {printf "%.2f", a / b}')
    echo "| $fs | x$n | $files | $((bytes / 1024 / 1024)) | $inst ms | $copy ms ($floor) | $r | $growth | $rerun ms |"
  done
done
read -r peak largest < <(peak_memory)
echo
echo "peak memory of --all (shipped content): $((peak / 1024)) MiB; largest single runtime tree: $((largest / 1024)) MiB"
