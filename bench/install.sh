#!/usr/bin/env bash
# Whole-install benchmark: `msd-install --all` (global) into a fresh HOME versus `cp -r` of the
# tree it emits into a fresh directory, same machine, same run; medians and their ratio. On tmpfs
# (/dev/shm: no disk noise) and on the disk, where the copy pays a `sync` too: the install is
# durable (it flushes its staged tree before it commits), so the fair floor there is
# `cp -r && sync`, not a copy that never flushes.
#
#   bench/install.sh               # tmpfs and disk; shipped content, generated x1 / x4 / x8
#   bench/install.sh --runs 7      # more runs (default 5)
#   bench/install.sh --scale 4     # generated x1 and x4 only
#   bench/install.sh --fs tmpfs    # one filesystem only (tmpfs or disk)
#   bench/install.sh --bin DIR     # binaries already built there (default: a release build)
#   bench/install.sh --reference DIR  # also the reference installer, side by side (below)
#
# Generated xN is `msd-install bench content --scale N`: N distinct copies of every command,
# workflow, agent, reference and template, a large third-party-shaped tree loaded from a
# directory (`--content DIR`); `x / x1` compares it with generated x1 (same shape, same loading).
# `install / floor` is the ratio of the two medians; `paired` the median of each install's ratio
# to the copy run right after it, which holds when the disk changes speed within a row.
# `install CPU` and `floor CPU` are the medians of the user+system CPU milliseconds each run spent
# (every thread of it): stable where wall times are not on a loaded machine, and they show what
# the install computes that the copy does not (hashing, composing, converting).
# Also timed: a no-change re-run of the same `--all` (the fast path: see src/apply/fast.rs), and
# the peak memory (max RSS, and the peak heap where heaptrack is installed) of `--all`, of
# `-r claude` and of `--all` over the largest generated content against the largest single
# runtime tree, and of the no-change re-run with and without the fast path (MSD_INSTALL_FAST=0).
#
# With `--reference DIR` (a built checkout of the reference, open-gsd/gsd-core at 636ec92: see
# docs/PERFORMANCE.md for the three commands that build it) a last table sets `node
# DIR/bin/install.js --all --global` (18 runtimes, its own content) against `msd-install --all`
# over the shipped content, over generated x2 (about the reference's number of files) and over
# the reference's own content ported to msd's conventions (`msd-install bench port`: the same
# Markdown files in, written to a temporary tree for this run only), runs alternating on tmpfs,
# each into a fresh HOME: medians, CPU, and reference / msd-install paired, of wall time and of
# CPU (each reference run over the msd-install run right after it).
#
# Public tools only: a loop timed by bash's own clock (bench/clock.sh; `/usr/bin/time` resolution
# is 10 ms, too coarse for sub-second runs; hyperfine cannot alternate two commands run for
# run); GNU time for the peak memory. The tables are Markdown for the README.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/clock.sh

runs=5
scale=8
fss="tmpfs disk"
bindir=""
refdir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --scale) scale="$2"; shift 2 ;;
    --fs) fss="$2"; shift 2 ;;
    --bin) bindir="$2"; shift 2 ;;
    --reference) refdir="$(cd "$2" && pwd)"; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for fs in $fss; do
  case "$fs" in tmpfs | disk) ;; *) echo "error: --fs is tmpfs or disk, not $fs" >&2; exit 2 ;; esac
done

if [ -z "$bindir" ]; then
  echo "building release binaries..." >&2
  scripts/build-release.sh --quiet
  bindir="${CARGO_TARGET_DIR:-$PWD/target}/release"
fi
bin="$bindir/msd-install"

# The work directories: tmpfs is /dev/shm, the disk is the one holding the repository.
declare -A root
root[tmpfs]="$(mktemp -d /dev/shm/msd-bench.XXXXXX)"
mkdir -p target
root[disk]="$(mktemp -d "$PWD/target/msd-bench.XXXXXX")"
trap 'rm -rf "${root[tmpfs]}" "${root[disk]}"' EXIT
if [ "$(stat -f -c %T "${root[tmpfs]}")" != tmpfs ]; then
  echo "error: /dev/shm is not a tmpfs here" >&2
  exit 2
fi

# snap_cpu FILE: the CPU time (user and system, in ms) of every child this shell has waited for so
# far, written to FILE. `times` is a builtin and its redirection forks nothing, so between two
# snapshots only the commands run in between are counted (getrusage(RUSAGE_CHILDREN): the install
# and every thread it ran; a copy's `cp`).
snap_cpu() {
  times > "$1"
}
# cpu_between A B: "user_ms sys_ms" spent between two snap_cpu snapshots.
cpu_between() {
  awk 'function ms(t,  m, s) { m = t; sub(/m.*/, "", m); s = t; sub(/^[0-9]+m/, "", s); sub(/s$/, "", s); return (m * 60 + s) * 1000 }
    FNR == 2 { u[FILENAME == ARGV[1]] = ms($1); k[FILENAME == ARGV[1]] = ms($2) }
    END { printf "%d %d\n", u[0] - u[1], k[0] - k[1] }' "$1" "$2"
}

# Median of the numbers on stdin, printed with FORMAT after dividing by SCALE.
median() { sort -n | awk -v f="$1" -v s="$2" '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf f, m / s}'; }
# Median of the numbers on stdin (nanoseconds), printed in milliseconds.
median_ms() { median %.0f 1e6; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
# paired_ratio A B: the median of line-by-line ratios of two files of timings. Each install is
# set against the copy run right after it: when the disk changes speed within a row (it does on
# this machine's virtual disk, by 10x within a minute), the ratio of the two medians can set an
# install in the fast state against copies in the slow one; adjacent pairs share a state.
paired_ratio() {
  paste "$1" "$2" | awk '{printf "%.6f\n", $1 / $2}' | median %.2f 1
}
thousands() { printf "%'d" "$1" 2>/dev/null || printf "%d" "$1"; }

install_into() { HOME="$1" XDG_CONFIG_HOME="$1/.config" XDG_CACHE_HOME="$1/.cache" "$bin" --all -q $2; }

# bench_content FS CONTENT_ARGS: prints "install_ms floor_ms files bytes rerun_ms paired". Install and
# copy runs alternate (install, re-run, copy, install, ...) so both see the same machine state:
# page cache, writeback and whatever else runs. Each timed command starts with nothing dirty.
bench_content() {
  local fs="$1" args="$2" work="${root[$1]}" i t0 t1 flush=""
  [ "$fs" = disk ] && flush=1
  # One install to learn the emitted tree, the source of the copies.
  rm -rf "$work/ref" && mkdir -p "$work/ref"
  install_into "$work/ref" "$args"
  local files bytes
  files=$(find "$work/ref" -type f | wc -l)
  bytes=$(du -sb "$work/ref" | cut -f1)
  : > "$work/install.ns"
  : > "$work/copy.ns"
  : > "$work/rerun.ns"
  : > "$work/install.cpu"
  : > "$work/copy.cpu"
  for i in $(seq "$runs"); do
    rm -rf "$work/h" && mkdir -p "$work/h" && sync
    now_ns t0
    snap_cpu "$work/c0"
    install_into "$work/h" "$args"
    snap_cpu "$work/c1"
    now_ns t1
    echo $((t1 - t0)) >> "$work/install.ns"
    cpu_between "$work/c0" "$work/c1" >> "$work/install.cpu"
    sync
    now_ns t0
    install_into "$work/h" "$args"
    now_ns t1
    echo $((t1 - t0)) >> "$work/rerun.ns"
    rm -rf "$work/c" && sync
    now_ns t0
    snap_cpu "$work/c0"
    cp -r "$work/ref" "$work/c"
    [ -n "$flush" ] && sync
    snap_cpu "$work/c1"
    now_ns t1
    echo $((t1 - t0)) >> "$work/copy.ns"
    cpu_between "$work/c0" "$work/c1" >> "$work/copy.cpu"
  done
  rm -rf "$work/h" "$work/c"
  echo "$(median_ms < "$work/install.ns") $(median_ms < "$work/copy.ns") $files $bytes $(median_ms < "$work/rerun.ns") $(paired_ratio "$work/install.ns" "$work/copy.ns") $(cpu_cell "$work/install.cpu") $(cpu_cell "$work/copy.cpu")"
}

# cpu_cell FILE: the medians of a file of "user_ms sys_ms" lines, as one table cell "U+S".
cpu_cell() {
  echo "$(cut -d' ' -f1 "$1" | median %.0f 1)+$(cut -d' ' -f2 "$1" | median %.0f 1)"
}

# peak_kib ARGS...: max RSS of one install on tmpfs into a fresh HOME.
peak_kib() {
  local work="${root[tmpfs]}/m"
  rm -rf "$work" && mkdir -p "$work"
  rerun_kib "$@"
}

# rerun_kib ARGS...: max RSS of one install into the HOME of the last peak_kib (a no-change
# re-run after it; MSD_INSTALL_FAST=0 in the environment measures the full path).
rerun_kib() {
  local work="${root[tmpfs]}/m"
  HOME="$work" XDG_CONFIG_HOME="$work/.config" XDG_CACHE_HOME="$work/.cache" \
    /usr/bin/time -f %M -o "${root[tmpfs]}/rss" "$bin" -q "$@" >/dev/null
  cat "${root[tmpfs]}/rss"
}

# heap_kb ARGS...: peak heap in KB (heaptrack; "n/a" where it is not installed) of one install
# into a fresh HOME on tmpfs.
heap_kb() {
  command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null || { echo n/a; return; }
  local work="${root[tmpfs]}/m"
  rm -rf "$work" "${root[tmpfs]}/heap.zst" && mkdir -p "$work"
  HOME="$work" XDG_CONFIG_HOME="$work/.config" XDG_CACHE_HOME="$work/.cache" \
    heaptrack -o "${root[tmpfs]}/heap" "$bin" -q "$@" >/dev/null 2>&1
  heaptrack_print -f "${root[tmpfs]}/heap.zst" 2>/dev/null |
    awk '/^peak heap memory consumption:/ { v = $5; u = substr(v, length(v)); n = substr(v, 1, length(v) - 1);
      f = (u == "G") ? 1e6 : (u == "M") ? 1e3 : (u == "K") ? 1 : 1e-3; printf "%d\n", n * f }'
}

# heap_mb KB: KB as MB with one decimal.
heap_mb() {
  [ "$1" = n/a ] && { echo n/a; return; }
  awk -v h="$1" 'BEGIN { printf "%.1f", h / 1000 }'
}

# heap_ratio KB KIB: a heap peak in KB against a tree in KiB.
heap_ratio() {
  [ "$1" = n/a ] && { echo n/a; return; }
  awk -v h="$1" -v t="$2" 'BEGIN { printf "%.2f", (h * 1000) / (t * 1024) }'
}

# largest_tree_kib: the largest runtime home of the last `--all` of peak_kib (helper included).
largest_tree_kib() {
  local work="${root[tmpfs]}/m"
  for d in "$work"/.[!.]* "$work"/.config/*; do
    [ -d "$d" ] && [ "$(basename "$d")" != .config ] && [ "$(basename "$d")" != .cache ] && du -sk "$d" | cut -f1
  done | sort -n | tail -1
}

machine="$(nproc) cores, $(uname -sm), $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//')"
echo "machine: $machine; disk: $(stat -f -c %T "${root[disk]}"); load before: $(cut -d' ' -f1-3 /proc/loadavg); runs: $runs of each, alternating"
for n in 1 4 8; do
  [ "$n" -gt "$scale" ] && continue
  [ -d "${root[tmpfs]}/content-x$n" ] || "$bin" bench content --scale "$n" --out "${root[tmpfs]}/content-x$n" >/dev/null 2>&1
done
echo
echo "| fs | content | files | MiB | install | install CPU | floor | floor CPU | install / floor | paired | x / x1 | no-change re-run |"
echo "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
for fs in $fss; do
  floor="cp -r"
  [ "$fs" = disk ] && floor="cp -r && sync"
  read -r inst copy files bytes rerun paired icpu ccpu < <(bench_content "$fs" "")
  echo "| $fs | shipped | $(thousands "$files") | $((bytes / 1024 / 1024)) | $inst ms | $icpu ms | $copy ms ($floor) | $ccpu ms | $(ratio "$inst" "$copy") | $paired | | $rerun ms |"
  base=""
  for n in 1 4 8; do
    [ "$n" -gt "$scale" ] && continue
    read -r inst copy files bytes rerun paired icpu ccpu < <(bench_content "$fs" "--content ${root[tmpfs]}/content-x$n")
    [ -z "$base" ] && base="$inst"
    echo "| $fs | generated x$n | $(thousands "$files") | $((bytes / 1024 / 1024)) | $inst ms | $icpu ms | $copy ms ($floor) | $ccpu ms | $(ratio "$inst" "$copy") | $paired | $(ratio "$inst" "$base") | $rerun ms |"
  done
done

# reference_vs CONTENT_ARGS: prints "ref_ms msd_ms ref_files ref_bytes msd_files msd_bytes paired
# ref_cpu msd_cpu cpu_paired": the reference's `--all --global` and msd-install's `--all`
# alternating on tmpfs, each into a fresh HOME; paired is the median of each reference run over
# the msd run right after it (wall time; cpu_paired the same of user+system CPU).
reference_vs() {
  local work="${root[tmpfs]}" args="$1" i t0 t1
  : > "$work/ref.ns"; : > "$work/msd.ns"; : > "$work/ref.cpu"; : > "$work/msd.cpu"
  for i in $(seq "$runs"); do
    rm -rf "$work/r" && mkdir -p "$work/r"
    now_ns t0
    snap_cpu "$work/c0"
    HOME="$work/r" XDG_CONFIG_HOME="$work/r/.config" XDG_CACHE_HOME="$work/r/.cache" \
      node "$refdir/bin/install.js" --all --global > /dev/null 2>&1
    snap_cpu "$work/c1"
    now_ns t1
    echo $((t1 - t0)) >> "$work/ref.ns"
    cpu_between "$work/c0" "$work/c1" >> "$work/ref.cpu"
    rm -rf "$work/h" && mkdir -p "$work/h"
    now_ns t0
    snap_cpu "$work/c0"
    install_into "$work/h" "$args"
    snap_cpu "$work/c1"
    now_ns t1
    echo $((t1 - t0)) >> "$work/msd.ns"
    cpu_between "$work/c0" "$work/c1" >> "$work/msd.cpu"
  done
  awk '{print $1 + $2}' "$work/ref.cpu" > "$work/ref.cpusum"
  awk '{print ($1 + $2 > 0) ? $1 + $2 : 1}' "$work/msd.cpu" > "$work/msd.cpusum"
  echo "$(median_ms < "$work/ref.ns") $(median_ms < "$work/msd.ns") $(find "$work/r" -type f | wc -l) $(du -sb "$work/r" | cut -f1) $(find "$work/h" -type f | wc -l) $(du -sb "$work/h" | cut -f1) $(paired_ratio "$work/ref.ns" "$work/msd.ns") $(cpu_cell "$work/ref.cpu") $(cpu_cell "$work/msd.cpu") $(paired_ratio "$work/ref.cpusum" "$work/msd.cpusum")"
  rm -rf "$work/r" "$work/h"
}

if [ -n "$refdir" ]; then
  [ -d "${root[tmpfs]}/content-x2" ] || "$bin" bench content --scale 2 --out "${root[tmpfs]}/content-x2" >/dev/null 2>&1
  # The reference's own Markdown in msd's conventions, for this run only (never committed).
  "$bin" bench port --reference "$refdir" --out "${root[tmpfs]}/content-ref" 2> "${root[tmpfs]}/port.log" ||
    { cat "${root[tmpfs]}/port.log" >&2; exit 1; }
  echo
  echo "| tmpfs, every runtime (18; msd-install 19) | reference files | MiB | reference | reference CPU | msd-install content | files | MiB | msd-install | msd-install CPU | reference / msd-install | paired | CPU paired |"
  echo "|---|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|"
  for c in shipped x2 ported; do
    case "$c" in
      shipped) args=""; label="shipped" ;;
      x2) args="--content ${root[tmpfs]}/content-x2"; label="generated x2" ;;
      ported) args="--content ${root[tmpfs]}/content-ref"; label="**the reference's, ported**" ;;
    esac
    read -r rms mms rf rb mf mb paired rcpu mcpu cpaired < <(reference_vs "$args")
    echo "| \`node bin/install.js --all --global\` vs \`msd-install --all\` | $(thousands "$rf") | $((rb / 1024 / 1024)) | $rms ms | $rcpu ms | $label | $(thousands "$mf") | $((mb / 1024 / 1024)) | $mms ms | $mcpu ms | $(ratio "$rms" "$mms") | $paired | $cpaired |"
  done
  echo
  echo "ported (\`msd-install bench port --reference DIR --out OUT\`): $(head -1 "${root[tmpfs]}/port.log" | sed "s|$refdir|DIR|; s|${root[tmpfs]}/content-ref|OUT|")"
fi

base=$(peak_kib --version)
one=$(peak_kib -r claude)
one_tree=$(du -sk "${root[tmpfs]}/m/.claude" | cut -f1)
all=$(peak_kib --all)
largest=$(largest_tree_kib)
one_heap=$(heap_kb -r claude)
all_heap=$(heap_kb --all)
# The largest generated content: the memory of an install must follow its largest tree, not the
# sum of its trees, and only a large tree shows which (the executable's own pages are most of a
# small one's RSS).
big_n=1
for n in 4 8; do [ "$n" -le "$scale" ] && big_n=$n; done
big_dir="${root[tmpfs]}/content-x$big_n"
big=$(peak_kib --all --content "$big_dir")
big_largest=$(largest_tree_kib)
big_heap=$(heap_kb --all --content "$big_dir")
# A dry run plans every runtime and writes nothing: it holds no tree's bytes past its plan.
big_dry=$(peak_kib --all --dry-run --content "$big_dir")
rm -rf "${root[tmpfs]}/m" && peak_kib --all >/dev/null
all_fast=$(rerun_kib --all)
all_full=$(MSD_INSTALL_FAST=0 rerun_kib --all)
# The full no-change path, timed (medians like the table's; the fast path is off for these runs).
: > "${root[tmpfs]}/full.ns"
for i in $(seq "$runs"); do
  now_ns t0
  MSD_INSTALL_FAST=0 rerun_kib --all >/dev/null
  now_ns t1
  echo $((t1 - t0)) >> "${root[tmpfs]}/full.ns"
done
full_ms=$(median_ms < "${root[tmpfs]}/full.ns")
echo
echo "| peak heap (heaptrack) | MB | largest runtime tree | ratio |"
echo "|---|--:|--:|--:|"
echo "| msd-install --all | $(heap_mb "$all_heap") | $((largest / 1024)) MiB | $(heap_ratio "$all_heap" "$largest") |"
echo "| msd-install -r claude | $(heap_mb "$one_heap") | $((one_tree / 1024)) MiB | $(heap_ratio "$one_heap" "$one_tree") |"
echo "| msd-install --all, generated x$big_n | $(heap_mb "$big_heap") | $((big_largest / 1024)) MiB | $(heap_ratio "$big_heap" "$big_largest") |"
echo
echo "| peak memory (max RSS) | MiB | largest runtime tree | ratio |"
echo "|---|--:|--:|--:|"
echo "| msd-install --version (the executable's own pages) | $((base / 1024)) | | |"
echo "| msd-install --all | $((all / 1024)) | $((largest / 1024)) MiB | $(ratio "$all" "$largest") |"
echo "| msd-install --all, no-change re-run | $((all_fast / 1024)) | $((largest / 1024)) MiB | $(ratio "$all_fast" "$largest") |"
echo "| msd-install --all, no-change re-run, fast path off | $((all_full / 1024)) | $((largest / 1024)) MiB | $(ratio "$all_full" "$largest") |"
echo "| msd-install -r claude | $((one / 1024)) | $((one_tree / 1024)) MiB | $(ratio "$one" "$one_tree") |"
echo "| msd-install --all, generated x$big_n | $((big / 1024)) | $((big_largest / 1024)) MiB | $(ratio "$big" "$big_largest") |"
echo "| msd-install --all --dry-run, generated x$big_n | $((big_dry / 1024)) | $((big_largest / 1024)) MiB | $(ratio "$big_dry" "$big_largest") |"
echo
echo "no-change re-run of --all on tmpfs with the fast path off (MSD_INSTALL_FAST=0): $full_ms ms (median of $runs)"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
