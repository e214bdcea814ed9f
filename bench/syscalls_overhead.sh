#!/usr/bin/env bash
# Cost of syscall tracing on a getppid loop, in one interleaved A/B run. Every
# round times the same loop (ns/call, printed by getppid_loop itself) under:
#
#   none          no probe
#   empty-enter   an empty BPF program ("r0 = 0; exit") at raw_syscalls
#                 sys_enter: the least an exact syscall count can cost
#   empty-pair    empty programs at sys_enter and sys_exit: the least a
#                 syscall latency can cost
#   pg-work       perfgate's syscalls probe in workload scope, as perfgate runs
#                 it: probe_attach_driver forks the loop held on a pipe, tracks
#                 it with the WorkloadTracker, resets the probe and releases it
#   pg-count      the same with the probe's latency off (sys_enter only)
#   pg-system     perfgate's syscalls probe in system scope (same launch)
#   pg-default    perfgate's default probe set in workload scope (runqlat,
#                 syscalls, kmem, sched, reclaim, pagefault; same launch)
#   pg-default-count  the default set with the syscalls probe's latency off
#   sc            libbpf-tools `syscount -L` (system-wide, its default)
#   sc-pid        `syscount -L -p PID` on the held loop (fairer against pg-work)
#   base-work, base-default   with BASE_BUILD=DIR: pg-work and pg-default with
#                 that build's probes (e.g. the merge base), in the same rounds
#
# The order is shuffled every round so machine drift and teardown hit all
# modes alike. Prints per-mode medians (and minima, the runs least disturbed
# by other load) of ns/call, the ns/call each adds over no probe, and
# perfgate's added ns as a fraction of syscount's. Needs root, and
# BPF run-time statistics off (they add two clock reads per program run).
#
#   [BASE_BUILD=DIR] [MODES="pg-default empty-pair ..."] bench/syscalls_overhead.sh BUILD_DIR [ROUNDS=9] [ITERATIONS=2000000] [SAMPLE=16] [CLOCK=cpu]
#
# SAMPLE is perfgate's latency sampling (1 in SAMPLE syscalls; 1 = exact).
# CLOCK is what the loop times: `cpu`, its thread's CPU time (the default:
# on a machine that other jobs share, the wall clock also counts the time the
# loop waits for a CPU, and two runs of the same build differed by a third),
# or `wall`.
set -euo pipefail

build=${1:?usage: $0 BUILD_DIR [ROUNDS] [ITERATIONS] [SAMPLE] [CLOCK]}
rounds=${2:-9}
iterations=${3:-2000000}
sample=${4:-16}
clock=${5:-cpu}
[[ $clock == cpu || $clock == wall ]] || { echo "CLOCK is cpu or wall, not $clock" >&2; exit 2; }
source "$(dirname "$0")/common.sh"
loop=$(find_exe "$build" getppid_loop)
driver=$(find_exe "$build" probe_attach_driver)
syscount=$(command -v syscount || command -v syscount.bpf || true)

[[ -x $loop && -x $driver ]] || { echo "build getppid_loop and probe_attach_driver in $build first" >&2; exit 2; }
[[ -n $syscount ]] || { echo "syscount not found: apt-get install libbpf-tools" >&2; exit 2; }
base_driver=
if [[ -n ${BASE_BUILD:-} ]]; then
  base_driver=$(find_exe "$BASE_BUILD" probe_attach_driver)
  [[ -x $base_driver ]] || { echo "build probe_attach_driver in $BASE_BUILD first" >&2; exit 2; }
fi
require_rounds "$rounds" 9
require_root
require_bpf_stats_off

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

declare -A samples=()

default_set=runqlat,syscalls,kmem,sched,reclaim,pagefault

run_none() { "$loop" "$iterations" "$clock"; }

run_empty-enter() { "$driver" none --scope system --empty sys_enter -- "$loop" "$iterations" "$clock" 2>/dev/null; }

run_empty-pair() {
  "$driver" none --scope system --empty sys_enter --empty sys_exit -- "$loop" "$iterations" "$clock" 2>/dev/null
}

run_pg-work() { "$driver" syscalls --scope workload --sample "$sample" -- "$loop" "$iterations" "$clock" 2>/dev/null; }

run_pg-count() { "$driver" syscalls --scope workload --no-latency -- "$loop" "$iterations" "$clock" 2>/dev/null; }

run_pg-default() {
  "$driver" "$default_set" --scope workload --sample "$sample" -- "$loop" "$iterations" "$clock" 2>/dev/null
}

run_pg-default-count() {
  "$driver" "$default_set" --scope workload --no-latency -- "$loop" "$iterations" "$clock" 2>/dev/null
}

run_pg-system() { "$driver" syscalls --scope system --sample "$sample" -- "$loop" "$iterations" "$clock" 2>/dev/null; }

run_base-work() {
  "$base_driver" syscalls --scope workload --sample "$sample" -- "$loop" "$iterations" "$clock" 2>/dev/null
}

run_base-default() {
  "$base_driver" "$default_set" --scope workload --sample "$sample" -- "$loop" "$iterations" "$clock" 2>/dev/null
}

# Starts syscount with the given extra arguments and waits until it prints
# "Tracing syscalls..." (line-buffered through stdbuf: its stdout is a pipe).
start_syscount() {
  local line
  coproc SC { exec stdbuf -oL "$syscount" -L "$@" 2>&1; }
  while read -r -t 30 -u "${SC[0]}" line; do [[ $line == Tracing* ]] && break; done
  [[ $line == Tracing* ]] || { echo "syscount did not start: $line" >&2; kill "$SC_PID"; exit 3; }
}

stop_syscount() {
  kill -INT "$SC_PID"
  wait "$SC_PID" || true
}

run_sc() {
  local ns
  start_syscount
  ns=$("$loop" "$iterations" "$clock")
  stop_syscount
  echo "$ns"
}

# The loop is held on a fifo until syscount, filtering on its pid, is ready.
run_sc-pid() {
  local pid
  rm -f "$tmp/gate"
  mkfifo "$tmp/gate"
  ( read -r _ < "$tmp/gate"; exec "$loop" "$iterations" "$clock" ) > "$tmp/out" &
  pid=$!
  start_syscount -p "$pid"
  echo go > "$tmp/gate"
  wait "$pid"
  stop_syscount
  cat "$tmp/out"
}

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "getppid loop: $iterations calls/run, $rounds rounds, $clock time, perfgate latency sampling 1/$sample," \
  "kernel $(uname -r)"
modes=(none empty-enter empty-pair pg-work pg-count pg-default pg-default-count pg-system sc sc-pid)
[[ -n $base_driver ]] && modes+=(base-work base-default)
# MODES="none sc pg-default ..." runs only those (none and sc are always kept:
# every ratio is against them).
if [[ -n ${MODES:-} ]]; then
  read -r -a modes <<<"none sc $MODES"
  mapfile -t modes < <(printf '%s\n' "${modes[@]}" | awk '!seen[$0]++')
  for mode in "${modes[@]}"; do
    declare -F "run_$mode" >/dev/null || { echo "unknown mode in MODES: $mode" >&2; exit 2; }
  done
fi
for ((round = 1; round <= rounds; round++)); do
  # A new order every round: rotating one order would put each mode after
  # the same other mode's teardown in every round (the mode rotated in right
  # after syscount's teardown ran up to 70 % slower in one such run).
  line="round $round:"
  mapfile -t order < <(printf '%s\n' "${modes[@]}" | shuf)
  for mode in "${order[@]}"; do
    ns=$("run_$mode")
    samples[$mode]+="$ns "
    line+=" $mode=$ns"
  done
  echo "$line"
done

declare -A med added low
for mode in "${modes[@]}"; do
  med[$mode]=$(median ${samples[$mode]})
  low[$mode]=$(printf '%s\n' ${samples[$mode]} | sort -g | head -n1)
  added[$mode]=$(awk -v a="${med[$mode]}" -v b="$(median ${samples[none]})" 'BEGIN { print a - b }')
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

printf '\n%-16s %14s %10s %8s %14s %14s %10s %10s %14s\n' mode "median ns/call" "added ns" "x none" "added/sc-add" \
  "added/scpid-add" "min ns" "min x none" "min added/sc"
for mode in "${modes[@]}"; do
  printf '%-16s %14.1f %10.1f %7.2fx %14s %14s %10.1f %9sx %14s\n' "$mode" "${med[$mode]}" "${added[$mode]}" \
    "$(ratio "${med[$mode]}" "${med[none]}")" "$(ratio "${added[$mode]}" "${added[sc]}")" \
    "$(ratio "${added[$mode]}" "${added[sc-pid]:-0}")" "${low[$mode]}" "$(ratio "${low[$mode]}" "${low[none]}")" \
    "$(ratio "$(awk -v a="${low[$mode]}" -v b="${low[none]}" 'BEGIN { print a - b }')" \
      "$(awk -v a="${low[sc]}" -v b="${low[none]}" 'BEGIN { print a - b }')")"
done
