#!/usr/bin/env bash
# The instrumented mode's slowdown on CPU-bound code: the evidence tests' C
# program (tests/integration/fixtures/nofp_workload.c, built -O2, about
# 30 ms a process) run plain and under Cachegrind with the cache simulation
# off, as perfgate --instrument runs it, alternating, ROUNDS times each.
# Prints the median wall time of each and their ratio.
#
#   bench/instrumented_slowdown.sh [ROUNDS] [PASSES]   # default 10 rounds, 1 pass (PASSES lengthens the run)
set -euo pipefail
ROUNDS="${1:-10}"
PASSES="${2:-1}"
SOURCE_DIR="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/common.sh
. "$SOURCE_DIR/bench/common.sh"
require_rounds "$ROUNDS" 3
VALGRIND="$(command -v valgrind.bin || command -v valgrind)" || { echo "needs valgrind" >&2; exit 2; }
WORK="$(mktemp -d "${TMPDIR:-/tmp}/perfgate-instr-slowdown.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
"${CC:-cc}" -O2 -g -o "$WORK/program" "$SOURCE_DIR/tests/integration/fixtures/nofp_workload.c"

now() { date +%s.%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
: > "$WORK/plain"
: > "$WORK/instrumented"
for _ in $(seq 1 "$ROUNDS"); do
  t0=$(now)
  "$WORK/program" "$PASSES" > /dev/null
  t1=$(now)
  "$VALGRIND" --quiet --tool=cachegrind --cache-sim=no --cachegrind-out-file="$WORK/cg.%p" "$WORK/program" "$PASSES" \
    > /dev/null 2>&1
  t2=$(now)
  echo "$t1 - $t0" | bc -l >> "$WORK/plain"
  echo "$t2 - $t1" | bc -l >> "$WORK/instrumented"
done
plain=$(median < "$WORK/plain")
instrumented=$(median < "$WORK/instrumented")
awk -v p="$plain" -v i="$instrumented" -v n="$ROUNDS" 'BEGIN {
  printf "median wall time over %d rounds: plain %.3f s, instrumented %.3f s: %.1fx\n", n, p, i, i / p }'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
