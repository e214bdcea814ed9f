#!/usr/bin/env bash
# What the cpu probe (perf_event counters in counting mode, inherited by the
# workload's tree) costs the workload: for each of four workloads, PAIRS short
# runs alone and under the probe, interleaved (probe_ab_driver: the probe
# attached once in workload scope, each run launched by the runner's
# HeldProcess, tracked and counted when probed, the order alternating AB, BA,
# ...). Each workload times itself:
#
#   getppid    getppid_loop: syscalls only, ns/call
#   switches   task_churn switches: two threads ping-pong through pipes, ns
#              per round trip (a counted task's events are switched out and
#              in with it)
#   forks      task_churn forks: fork and reap a child, ns per fork (every
#              child gets a copy of the events, folded back at its exit)
#   smoke      pg-smoke: page faults, syscalls, short sleeps; smoke.loop_time
#
# Prints per workload the median of each arm and the median of the pairs'
# ratios (probed/bare) with its 95 % interval; pairs a few milliseconds apart
# see nearly the same neighbours, so a busy host widens the interval rather
# than biasing it. Needs root.
#
#   bench/cpu_probe_overhead.sh BUILD_DIR [PAIRS=301]
set -euo pipefail

build=${1:?usage: $0 BUILD_DIR [PAIRS]}
pairs=${2:-301}
source "$(dirname "$0")/common.sh"
driver=$(find_exe "$build" probe_ab_driver)
loop=$(find_exe "$build" getppid_loop)
churn=$(find_exe "$build" task_churn)
smoke=$(find_exe "$build" pg-smoke)
[[ -x $driver && -x $loop && -x $churn && -x $smoke ]] ||
  { echo "build probe_ab_driver, getppid_loop, task_churn and pg-smoke in $build first" >&2; exit 2; }
require_rounds "$pairs" 9
require_root

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ab() {  # ab NAME [--metric M] -- CMD...
  local name=$1
  shift
  printf '%-9s ' "$name"
  "$driver" cpu "$pairs" "$@" 2>"$tmp/hooks" || { cat "$tmp/hooks" >&2; exit 3; }
}

echo "cpu probe, workload scope: bare vs probed, $pairs interleaved pairs per workload, kernel $(uname -r)"
ab getppid -- "$loop" 200000
ab switches -- "$churn" switches 3000
ab forks -- "$churn" forks 200
ab smoke --metric smoke.loop_time -- "$smoke" --iterations 300
echo "counters: $(sed -n 's/^hook [^:]*: perf_event (\(.*\))$/\1/p' "$tmp/hooks" | paste -sd' ')"
