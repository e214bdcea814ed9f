#!/usr/bin/env bash
# What the cpu probe (perf_event counters in counting mode, inherited by the
# workload's tree) costs the workload, in one interleaved run. Every round
# times three workloads, each timing itself, under two modes:
#
#   none   the workload alone
#   cpu    the cpu probe in workload scope, as perfgate runs it:
#          probe_attach_driver forks the workload held on a pipe, tracks it,
#          opens the counters on it (enabled at its exec) and releases it
#
# Workloads: getppid_loop (syscalls only: ns/call), pg-smoke (page faults,
# syscalls and short sleeps: smoke.loop_time) and pg-locks --mode mutex (two
# threads taking turns: context switches; locks.loop_time). A software
# counter costs at its event (a fault, a switch) and a counting event costs at
# every context switch of a counted task, so the last two are where a cost
# would show. The modes' order alternates every round (AB, BA, ...). Prints
# per workload the median of each mode and the ratio cpu/none, with the
# counter set the probe used (hardware where the host has a PMU). Needs root.
#
#   bench/cpu_probe_overhead.sh BUILD_DIR [ROUNDS=15]
set -euo pipefail

build=${1:?usage: $0 BUILD_DIR [ROUNDS]}
rounds=${2:-15}
source "$(dirname "$0")/common.sh"
loop=$(find_exe "$build" getppid_loop)
driver=$(find_exe "$build" probe_attach_driver)
smoke=$(find_exe "$build" pg-smoke)
locks=$(find_exe "$build" pg-locks)
[[ -x $loop && -x $driver && -x $smoke && -x $locks ]] ||
  { echo "build getppid_loop, probe_attach_driver, pg-smoke and pg-locks in $build first" >&2; exit 2; }
require_rounds "$rounds" 5
require_root

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The number a workload printed about itself: getppid_loop's only line, or
# the value of the metric line named $1 of pg-smoke and pg-locks.
loop_value() { [[ $1 == - ]] && cat || sed -n "s/.*\"metric\": \"$1\", \"value\": \([0-9.e+-]*\).*/\1/p"; }

workloads=(getppid smoke locks)
declare -A argv=(
  [getppid]="$loop 2000000"
  [smoke]="$smoke --iterations 3000"
  [locks]="$locks --mode mutex --iterations 2000 --hold-us 0 --gap-us 0"
)
declare -A metric=([getppid]=- [smoke]=smoke.loop_time [locks]=locks.loop_time)
declare -A unit=([getppid]=ns/call [smoke]=s [locks]=s)

run_none() { ${argv[$1]}; }
run_cpu() { "$driver" cpu --scope workload -- ${argv[$1]} 2>"$tmp/driver.err"; }

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -A samples=()
for ((round = 1; round <= rounds; round++)); do
  line="round $round:"
  for w in "${workloads[@]}"; do
    if ((round % 2)); then order=(none cpu); else order=(cpu none); fi
    for mode in "${order[@]}"; do
      value=$("run_$mode" "$w" | loop_value "${metric[$w]}")
      [[ -n $value ]] || { echo "$w under $mode printed no ${metric[$w]}" >&2; cat "$tmp/driver.err" >&2; exit 3; }
      samples[$w.$mode]+="$value "
      line+=" $w.$mode=$value"
    done
  done
  echo "$line"
done

counters=$(sed -n 's/^hook \([^:]*\): perf_event (\([a-z]*\):.*/\2/p' "$tmp/driver.err" | head -n1)
printf '\n%-9s %-8s %14s %14s %9s\n' workload unit "median none" "median cpu" "cpu/none"
for w in "${workloads[@]}"; do
  none=$(median ${samples[$w.none]})
  cpu=$(median ${samples[$w.cpu]})
  printf '%-9s %-8s %14.6g %14.6g %8.3fx\n' "$w" "${unit[$w]}" "$none" "$cpu" \
    "$(awk -v a="$cpu" -v b="$none" 'BEGIN { print (b > 0) ? a / b : 0 }')"
done
echo "medians of $rounds interleaved rounds; the cpu probe counted ${counters:-?} counters; kernel $(uname -r)"
