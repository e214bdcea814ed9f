#!/usr/bin/env bash
# How much CPU time a busy host adds to a workload's own: a fixed amount of
# work (bench/contention_loop.c), run alone and beside a constant one-CPU
# burner in alternation, ROUNDS times each, once CPU-bound and once reading
# a buffer larger than the caches. Prints the median CPU time of each side,
# their ratio and the slowest run beside the burner over the median alone.
# The worst of these bounds compare's allowance (compare/load_allowance.h
# kContentionCpuTimePct).
#
#   bench/contention_inflation.sh [ROUNDS]   # default 10
set -euo pipefail
ROUNDS="${1:-10}"
SOURCE_DIR="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/common.sh
. "$SOURCE_DIR/bench/common.sh"
require_rounds "$ROUNDS" 3
BURNER="${BURNER:-sha256sum /dev/zero}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/perfgate-contention.XXXXXX")"
burner=""
trap '[ -z "$burner" ] || kill "$burner" 2>/dev/null || true; rm -rf "$WORK"' EXIT
"${CC:-cc}" -O2 -o "$WORK/loop" "$SOURCE_DIR/bench/contention_loop.c"

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); burner \"$BURNER\""
for shape in "cpu 300000000 0" "memory 4000000 64"; do
  read -r name rounds mib <<< "$shape"
  : > "$WORK/alone"
  : > "$WORK/busy"
  for _ in $(seq 1 "$ROUNDS"); do
    "$WORK/loop" "$rounds" "$mib" >> "$WORK/alone"
    # shellcheck disable=SC2086 # the burner is a command line
    $BURNER > /dev/null &
    burner=$!
    sleep 0.2
    "$WORK/loop" "$rounds" "$mib" >> "$WORK/busy"
    kill "$burner"
    wait "$burner" 2>/dev/null || true
    burner=""
  done
  alone=$(median < "$WORK/alone")
  busy=$(median < "$WORK/busy")
  worst=$(sort -g "$WORK/busy" | tail -n1)
  awk -v n="$name" -v a="$alone" -v b="$busy" -v w="$worst" 'BEGIN {
    printf "%-6s CPU time alone %.4f s, beside the burner %.4f s: median ratio %.3f, worst run %+.1f %% over the median alone\n",
           n, a, b, b / a, 100 * (w / a - 1) }'
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
