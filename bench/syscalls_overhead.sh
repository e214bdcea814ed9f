#!/usr/bin/env bash
# Cost of syscall tracing on a getppid loop, in one interleaved A/B run. Every
# round times the same loop (ns/call, printed by getppid_loop itself) under:
#
#   none        no probe
#   pg-work     perfgate's syscalls probe in workload scope, as perfgate runs
#               it: probe_attach_driver forks the loop held on a pipe, tracks
#               it with the WorkloadTracker, resets the probe and releases it
#   pg-system   perfgate's syscalls probe in system scope (same launch)
#   pg-default  perfgate's default probe set in workload scope (runqlat,
#               syscalls, kmem, sched, reclaim, pagefault; same launch)
#   sc          libbpf-tools `syscount -L` (system-wide, its default)
#   sc-pid      `syscount -L -p PID` on the held loop (fairer against pg-work)
#
# The order rotates every round so machine drift and teardown hit all modes
# alike. Prints per-mode medians of ns/call, the ns/call each adds over no
# probe, and perfgate's added ns as a fraction of syscount's. Needs root, and
# BPF run-time statistics off (they add two clock reads per program run).
#
#   bench/syscalls_overhead.sh BUILD_DIR [ROUNDS=9] [ITERATIONS=2000000] [SAMPLE=16]
#
# SAMPLE is perfgate's latency sampling (1 in SAMPLE syscalls; 1 = exact).
set -euo pipefail

build=${1:?usage: $0 BUILD_DIR [ROUNDS] [ITERATIONS] [SAMPLE]}
rounds=${2:-9}
iterations=${3:-2000000}
sample=${4:-16}
source "$(dirname "$0")/common.sh"
loop=$(find_exe "$build" getppid_loop)
driver=$(find_exe "$build" probe_attach_driver)
syscount=$(command -v syscount || command -v syscount.bpf || true)

[[ -x $loop && -x $driver ]] || { echo "build getppid_loop and probe_attach_driver in $build first" >&2; exit 2; }
[[ -n $syscount ]] || { echo "syscount not found: apt-get install libbpf-tools" >&2; exit 2; }
require_rounds "$rounds" 9
require_root
require_bpf_stats_off

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

declare -A samples=()

run_none() { "$loop" "$iterations"; }

run_pg-work() { "$driver" syscalls --scope workload --sample "$sample" -- "$loop" "$iterations" 2>/dev/null; }

run_pg-default() {
  "$driver" runqlat,syscalls,kmem,sched,reclaim,pagefault --scope workload --sample "$sample" -- "$loop" "$iterations" \
    2>/dev/null
}

run_pg-system() { "$driver" syscalls --scope system --sample "$sample" -- "$loop" "$iterations" 2>/dev/null; }

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
  ns=$("$loop" "$iterations")
  stop_syscount
  echo "$ns"
}

# The loop is held on a fifo until syscount, filtering on its pid, is ready.
run_sc-pid() {
  local pid
  rm -f "$tmp/gate"
  mkfifo "$tmp/gate"
  ( read -r _ < "$tmp/gate"; exec "$loop" "$iterations" ) > "$tmp/out" &
  pid=$!
  start_syscount -p "$pid"
  echo go > "$tmp/gate"
  wait "$pid"
  stop_syscount
  cat "$tmp/out"
}

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "getppid loop: $iterations calls/run, $rounds rounds, perfgate latency sampling 1/$sample, kernel $(uname -r)"
modes=(none pg-work pg-default pg-system sc sc-pid)
for ((round = 1; round <= rounds; round++)); do
  # Rotate the order so no mode always runs right after another's teardown.
  line="round $round:"
  for ((k = 0; k < ${#modes[@]}; k++)); do
    mode=${modes[(k + round) % ${#modes[@]}]}
    ns=$("run_$mode")
    samples[$mode]+="$ns "
    line+=" $mode=$ns"
  done
  echo "$line"
done

declare -A med added
for mode in "${modes[@]}"; do
  med[$mode]=$(median ${samples[$mode]})
  added[$mode]=$(awk -v a="${med[$mode]}" -v b="$(median ${samples[none]})" 'BEGIN { print a - b }')
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

printf '\n%-10s %14s %10s %8s %14s %14s\n' mode "median ns/call" "added ns" "x none" "added/sc-add" "added/scpid-add"
for mode in "${modes[@]}"; do
  printf '%-10s %14.1f %10.1f %7.2fx %14s %14s\n' "$mode" "${med[$mode]}" "${added[$mode]}" \
    "$(ratio "${med[$mode]}" "${med[none]}")" "$(ratio "${added[$mode]}" "${added[sc]}")" \
    "$(ratio "${added[$mode]}" "${added[sc-pid]}")"
done
