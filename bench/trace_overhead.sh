#!/usr/bin/env bash
# What the trace paths cost the syscalls probe on a getppid loop, in one
# interleaved run. Every round times the same loop (ns/call, printed by
# getppid_loop itself), the order rotating each round, under:
#
#   none        no probe
#   before      the syscalls probe built from BASE_BUILD (a build of the
#               commit before the trace paths existed): the reference
#   untraced    the syscalls probe of BUILD as every measured repetition runs
#               it (trace paths compiled in, off)
#   timed       BUILD with --trace and a 1 ms threshold: every syscall is
#               timed, none is slow enough to become a record
#   recorded    BUILD with --trace 0: every syscall becomes a ring-buffer record
#
# Prints per-mode medians, the ns/call each adds over no probe, each mode's
# added ns over `before`'s, and the median over rounds of each mode's ns/call
# over `before`'s in the same round (paired: robust to a host whose speed
# drifts between rounds). The untraced/before ratios are what the measured
# repetitions pay for the trace paths. Last, the record rate of `recorded`
# (one record per call, so 1e9 / its median ns per call) and its records
# produced, read and dropped summed over the rounds, from a ring buffer sized
# for 2M records/s that a thread drains while the loop runs. Needs root and
# BPF run-time statistics off.
#
#   bench/trace_overhead.sh BUILD BASE_BUILD [ROUNDS=9] [ITERATIONS=2000000]
set -euo pipefail

build=${1:?usage: $0 BUILD BASE_BUILD [ROUNDS] [ITERATIONS]}
base=${2:?usage: $0 BUILD BASE_BUILD [ROUNDS] [ITERATIONS]}
rounds=${3:-9}
iterations=${4:-2000000}
source "$(dirname "$0")/common.sh"
loop=$(find_exe "$build" getppid_loop)
driver=$(find_exe "$build" probe_attach_driver)
base_driver=$(find_exe "$base" probe_attach_driver)

[[ -x $loop && -x $driver && -x $base_driver ]] || {
  echo "build getppid_loop and probe_attach_driver in $build and $base first" >&2
  exit 2
}
require_rounds "$rounds" 5
require_root
require_bpf_stats_off

declare -A samples=() paired=()
run_none() { "$loop" "$iterations"; }
run_before() { "$base_driver" syscalls --scope workload -- "$loop" "$iterations" 2>/dev/null; }
run_untraced() { "$driver" syscalls --scope workload -- "$loop" "$iterations" 2>/dev/null; }
run_timed() { "$driver" syscalls --scope workload --trace 1000000 -- "$loop" "$iterations" 2>/dev/null; }
trace_log=$(mktemp)
trap 'rm -f "$trace_log"' EXIT
# The driver's closing line: "trace: P records produced, R read, D dropped".
run_recorded() { "$driver" syscalls --scope workload --trace 0 -- "$loop" "$iterations" 2>>"$trace_log"; }

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "getppid loop: $iterations calls/run, $rounds rounds, kernel $(uname -r)"
modes=(none before untraced timed recorded)
for ((round = 1; round <= rounds; round++)); do
  line="round $round:"
  for ((k = 0; k < ${#modes[@]}; k++)); do
    mode=${modes[(k + round) % ${#modes[@]}]}
    ns=$("run_$mode")
    samples[$mode]+="$ns "
    declare "round_$mode=$ns"
    line+=" $mode=$ns"
  done
  for mode in "${modes[@]}"; do
    paired[$mode]+="$(awk -v a="$(eval echo "\$round_$mode")" -v b="$round_before" 'BEGIN { print a / b }') "
  done
  echo "$line"
done

declare -A med added
for mode in "${modes[@]}"; do
  med[$mode]=$(median ${samples[$mode]})
  added[$mode]=$(awk -v a="${med[$mode]}" -v b="$(median ${samples[none]})" 'BEGIN { print a - b }')
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }'; }

printf '\n%-10s %14s %10s %8s %16s %16s\n' mode "median ns/call" "added ns" "x none" "added/before-add" \
  "paired x before"
for mode in "${modes[@]}"; do
  printf '%-10s %14.1f %10.1f %7.3fx %16s %15.3fx\n' "$mode" "${med[$mode]}" "${added[$mode]}" \
    "$(ratio "${med[$mode]}" "${med[none]}")" "$(ratio "${added[$mode]}" "${added[before]}")" \
    "$(median ${paired[$mode]})"
done

awk -v ns="${med[recorded]}" -v rounds="$rounds" '
  /^trace:/ { produced += $2; read += $5; dropped += $7 }
  END {
    printf "\nrecorded: %.0f records/s while the loop runs; over %d rounds %d records produced, %d read, %d dropped\n",
      1e9 / ns, rounds, produced, read, dropped
    if (produced != read + dropped) { print "recorded: produced != read + dropped" > "/dev/stderr"; exit 1 }
  }' "$trace_log"
