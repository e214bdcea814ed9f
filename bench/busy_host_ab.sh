#!/usr/bin/env bash
# perfgate ab beside a constant one-CPU burner: RUNS A/A runs of the smoke
# suite (0 may fail) and RUNS A/B runs with the workload's CPU work scaled by
# SLOWDOWN (each should fail), alternating. Regression thresholds are
# THRESHOLD_PCT in a copy of the suite. Prints the failures of each arm, the
# verdicts of workload.cpu_time and the load average seen.
#
#   bench/busy_host_ab.sh BUILD_DIR [RUNS] [SLOWDOWN] [THRESHOLD_PCT]   # 20 1.10 5
#
# Run as root (probes). BURNER overrides the burner (default sha256sum /dev/zero).
set -euo pipefail
BUILD_DIR="$(cd "${1:?usage: busy_host_ab.sh BUILD_DIR [RUNS] [SLOWDOWN] [THRESHOLD_PCT]}" && pwd)"
RUNS="${2:-20}"
SLOWDOWN="${3:-1.10}"
THRESHOLD="${4:-5}"
SOURCE_DIR="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/common.sh
. "$SOURCE_DIR/bench/common.sh"
require_root
require_python3
PERFGATE="$BUILD_DIR/perfgate"
BURNER="${BURNER:-sha256sum /dev/zero}"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/perfgate-busy-ab.XXXXXX")"
SUITE="$WORK/smoke.json"
burner=""
trap '[ -z "$burner" ] || kill "$burner" 2>/dev/null || true; rm -rf "$WORK"' EXIT
python3 - "$SOURCE_DIR/workloads/examples/smoke.json" "$SUITE" "$THRESHOLD" <<'PY'
import json, sys
source, copy, threshold = sys.argv[1], sys.argv[2], float(sys.argv[3])
text = open(source).read()
suite = json.loads("\n".join(l for l in text.splitlines() if not l.lstrip().startswith("//")))
for scenario in suite["scenarios"]:
    for check in scenario["checks"]:
        if check.get("type", "regression") == "regression":
            check["max_regression_pct"] = threshold
json.dump(suite, open(copy, "w"), indent=1)
PY

# shellcheck disable=SC2086 # the burner is a command line
$BURNER > /dev/null &
burner=$!
echo "burner \"$BURNER\"; $RUNS A/A and $RUNS A/B (slowdown $SLOWDOWN) runs; thresholds $THRESHOLD %"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$SECONDS
for i in $(seq 1 "$RUNS"); do
  for arm in aa ab; do
    slowdown=1.0
    [ "$arm" = ab ] && slowdown="$SLOWDOWN"
    set +e
    "$PERFGATE" ab "$SUITE" --baseline-set SMOKE_SLOWDOWN=1.0 --candidate-set SMOKE_SLOWDOWN="$slowdown" \
      --out "$WORK/$arm-$i" --quiet > "$WORK/$arm-$i.log" 2>&1
    echo $? > "$WORK/$arm-$i.exit"
    set -e
    # As it goes, so that a run stopped early still shows its counts.
    echo "run $i $arm: exit $(cat "$WORK/$arm-$i.exit"), load $(cut -d' ' -f1 /proc/loadavg)"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg); $((SECONDS - start)) s"
python3 - "$WORK" "$RUNS" <<'PY'
import collections, json, os, sys
work, runs = sys.argv[1], int(sys.argv[2])
for arm, title in (("aa", "A/A"), ("ab", "A/B")):
    exits = collections.Counter()
    cpu = collections.Counter()
    failed = collections.Counter()  # the checks that failed, by metric
    retaken = 0
    pairs = []  # measured pairs per run, the confirmation's included
    seconds = []
    for i in range(1, runs + 1):
        exits[open(os.path.join(work, f"{arm}-{i}.exit")).read().strip()] += 1
        path = os.path.join(work, f"{arm}-{i}", "results.json")
        if not os.path.exists(path):
            continue
        for scenario in json.load(open(path))["scenarios"]:
            retaken += len(scenario.get("retaken_repetitions", []))
            confirmed = max((c.get("confirmation", {}).get("pairs", 0) for c in scenario["checks"]), default=0)
            pairs.append(len(scenario["repetitions"]) + confirmed)
            seconds.append(scenario.get("duration_s", 0) + max(
                (c.get("confirmation", {}).get("seconds", 0) for c in scenario["checks"]), default=0))
            for check in scenario["checks"]:
                if check["spec"]["metric"] == "workload.cpu_time":
                    cpu[check["verdict"]] += 1
                if check["verdict"] == "regression":
                    failed[check["spec"].get("name") or check["spec"]["metric"]] += 1
    print(f"{title}: exit codes {dict(exits)}; failed (exit 1) {exits['1']} of {runs}; "
          f"workload.cpu_time verdicts {dict(cpu)}; checks failed, by metric {dict(failed)}; "
          f"retaken repetitions {retaken}; pairs per run (confirmation included) median "
          f"{sorted(pairs)[len(pairs) // 2] if pairs else 0}, max {max(pairs, default=0)}; "
          f"seconds per run median {sorted(seconds)[len(seconds) // 2] if seconds else 0:.0f}")
PY
