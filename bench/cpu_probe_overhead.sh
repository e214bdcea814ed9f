#!/usr/bin/env bash
# What the cpu probe (perf_event counters in counting mode, inherited by the
# workload's tree) costs the workload, in one interleaved run. Every round
# times four workloads, each timing itself, under two modes:
#
#   none   the workload alone
#   cpu    the cpu probe in workload scope, as perfgate runs it:
#          probe_attach_driver forks the workload held on a pipe, tracks it,
#          opens the counters on it (enabled at its exec) and releases it
#
# Workloads: getppid_loop (syscalls only, ns/call); task_churn switches (two
# threads ping-pong through pipes, ns per round trip) and task_churn forks
# (fork and reap a child, ns per fork), where counting costs: a task's events
# are switched out and in with it and copied into every child; pg-smoke
# (page faults, syscalls and short sleeps; smoke.loop_time in s). The modes'
# order alternates every round (AB, BA, ...). Prints per workload the median
# of each mode, their ratio, and the median of the rounds' own cpu/none
# ratios (each pair ran back to back, so machine drift cancels), with the
# counter set the probe used (hardware where the host has a PMU). Needs root.
#
# Each run is short (tens of ms) and the pairs many, so that what else the
# machine runs (other processes, other BPF programs on every syscall) changes
# little within a pair.
#
#   bench/cpu_probe_overhead.sh BUILD_DIR [ROUNDS=41]
set -euo pipefail

build=${1:?usage: $0 BUILD_DIR [ROUNDS]}
rounds=${2:-41}
source "$(dirname "$0")/common.sh"
loop=$(find_exe "$build" getppid_loop)
driver=$(find_exe "$build" probe_attach_driver)
churn=$(find_exe "$build" task_churn)
smoke=$(find_exe "$build" pg-smoke)
[[ -x $loop && -x $driver && -x $churn && -x $smoke ]] ||
  { echo "build getppid_loop, probe_attach_driver, task_churn and pg-smoke in $build first" >&2; exit 2; }
require_rounds "$rounds" 5
require_root

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The number a workload printed about itself: the only line of getppid_loop
# and task_churn (with $1 = -), or the value of pg-smoke's metric line named $1.
loop_value() {
  if [[ $1 == - ]]; then cat; else sed -n "s/.*\"metric\": \"$1\", \"value\": \([0-9.e+-]*\).*/\1/p"; fi
}

workloads=(getppid switches forks smoke)
declare -A argv=(
  [getppid]="$loop 300000"
  [switches]="$churn switches 20000"
  [forks]="$churn forks 500"
  [smoke]="$smoke --iterations 600"
)
declare -A metric=([getppid]=- [switches]=- [forks]=- [smoke]=smoke.loop_time)
declare -A unit=([getppid]=ns/call [switches]=ns/trip [forks]=ns/fork [smoke]=s)

run_none() { ${argv[$1]}; }
run_cpu() { "$driver" cpu --scope workload -- ${argv[$1]} 2>"$tmp/driver.err"; }

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# The first and third quartiles, "Q1-Q3": how far the rounds' ratios spread.
quartiles() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%.3f-%.3f", v[int((NR + 3) / 4)], v[int((3 * NR + 3) / 4)] }'; }

declare -A samples=() ratios=()
for ((round = 1; round <= rounds; round++)); do
  line="round $round:"
  for w in "${workloads[@]}"; do
    if ((round % 2)); then order=(none cpu); else order=(cpu none); fi
    for mode in "${order[@]}"; do
      value=$("run_$mode" "$w" | loop_value "${metric[$w]}")
      [[ -n $value ]] || { echo "$w under $mode printed no ${metric[$w]}" >&2; cat "$tmp/driver.err" >&2; exit 3; }
      samples[$w.$mode]+="$value "
      line+=" $w.$mode=$value"
      [[ $mode == cpu ]] && cpu_value=$value || none_value=$value
    done
    ratios[$w]+="$(awk -v a="$cpu_value" -v b="$none_value" 'BEGIN { print a / b }') "
  done
  echo "$line"
done

counters=$(sed -n 's/^hook \([^:]*\): perf_event (\([a-z]*\):.*/\2/p' "$tmp/driver.err" | head -n1)
printf '\n%-9s %-8s %14s %14s %9s %12s %13s\n' workload unit "median none" "median cpu" "cpu/none" "paired ratio" \
  "its Q1-Q3"
for w in "${workloads[@]}"; do
  none=$(median ${samples[$w.none]})
  cpu=$(median ${samples[$w.cpu]})
  printf '%-9s %-8s %14.6g %14.6g %8.3fx %11.3fx %13s\n' "$w" "${unit[$w]}" "$none" "$cpu" \
    "$(awk -v a="$cpu" -v b="$none" 'BEGIN { print (b > 0) ? a / b : 0 }')" "$(median ${ratios[$w]})" \
    "$(quartiles ${ratios[$w]})"
done
echo "medians of $rounds interleaved rounds; the cpu probe counted ${counters:-?} counters; kernel $(uname -r)"
