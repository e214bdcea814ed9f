#!/usr/bin/env bash
# The instrumented mode's repeatability and cost on shipped suites: records
# each SUITE once with --instrument and REPS repetitions and once without,
# and prints per scenario the spread of instr.total ((max - min) / median
# over the repetitions), the median wall time of a repetition in each mode
# and their ratio (the slowdown), and what the instrumented run took in all.
#
#   bench/instrumented_aa.sh BUILD_DIR [REPS] [SUITE...]   # default 10, the smoke, locks and micro suites
#
# Run as root (probes). Needs python3 to read results.json.
set -euo pipefail
BUILD_DIR="$(cd "${1:?usage: instrumented_aa.sh BUILD_DIR [REPS] [SUITE...]}" && pwd)"
REPS="${2:-10}"
shift $(( $# >= 2 ? 2 : 1 ))
SOURCE_DIR="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/common.sh
. "$SOURCE_DIR/bench/common.sh"
require_root
require_python3
require_rounds "$REPS" 2
if [ $# -eq 0 ]; then
  set -- "$SOURCE_DIR/workloads/examples/smoke.json" "$SOURCE_DIR/workloads/locks/locks.json" \
    "$SOURCE_DIR/workloads/micro/micro.json"
fi
PERFGATE="$BUILD_DIR/perfgate"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/perfgate-instr-aa.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
n=0
for suite in "$@"; do
  n=$((n + 1))
  for mode in plain instrumented; do
    flag=()
    [ "$mode" = instrumented ] && flag=(--instrument)
    start=$SECONDS
    "$PERFGATE" baseline record "$suite" "${flag[@]}" --reps "$REPS" --baseline-dir "$WORK/b-$n-$mode" \
      --out "$WORK/o-$n-$mode" --quiet > "$WORK/o-$n-$mode.log" 2>&1 || {
      echo "$suite ($mode): perfgate failed:" >&2
      tail -n 5 "$WORK/o-$n-$mode.log" >&2
      exit 1
    }
    echo $((SECONDS - start)) > "$WORK/o-$n-$mode.seconds"
  done
  python3 - "$WORK/o-$n-plain" "$WORK/o-$n-instrumented" "$suite" <<'PY'
import json, os, statistics, sys
plain, instr, suite = sys.argv[1], sys.argv[2], sys.argv[3]
def scenarios(out):
    return {s["name"]: s for s in json.load(open(os.path.join(out, "results.json")))["scenarios"]}
def walls(s):
    return [r["metrics"]["workload.wall_time"]["value"] for r in s["repetitions"]]
p, i = scenarios(plain), scenarios(instr)
seconds = open(instr + ".seconds").read().strip()
print(f"{os.path.basename(suite)} (instrumented record took {seconds} s):")
for name, s in i.items():
    counts = [r["metrics"]["instr.total"]["count"] for r in s["repetitions"] if "instr.total" in r["metrics"]]
    if not counts:
        print(f"  {name}: not instrumented ({s.get('workload_kind', '?')})")
        continue
    med = statistics.median(counts)
    spread = 100 * (max(counts) - min(counts)) / med
    wi, wp = statistics.median(walls(s)), statistics.median(walls(p[name]))
    print(f"  {name}: instr.total median {med:.0f} over {len(counts)} repetitions, spread {spread:.4f} %; "
          f"wall time per repetition {wp:.3f} s plain, {wi:.3f} s instrumented: {wi / wp:.1f}x")
PY
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
