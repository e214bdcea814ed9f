#!/usr/bin/env bash
# The host canary's own figures (run/canary.h), on real suites: records a
# baseline of each SUITE once, then runs it RUNS times against that baseline
# (A/A), and prints
#   - its cost: the canary's time (host.canary.elapsed) as a share of each
#     repetition's wall time, median and worst, per scenario;
#   - its spread on this host: the robust CV (1.4826 MAD / median) of each
#     canary over every repetition of the runs, and of the runs' medians;
#   - each run's medians against the recording's, the wall time's and each
#     canary's: which canary moves with the workload;
#   - what compare made of it: each A/A run's host speed against the baseline
#     (the canary that decided, its change and interval), how many runs found
#     the host slower or faster, and the runs' exit codes.
# The constants of compare/host_speed.h and run/canary.h are set from these
# (docs/verdicts.md, "A slower host").
#
#   bench/canary.sh BUILD_DIR [RUNS] [SUITE]...
#
# Default suites: the smoke, micro and locks suites. Run as root (probes).
set -euo pipefail
source "$(dirname "$0")/common.sh"
BUILD_DIR="$(cd "${1:?usage: canary.sh BUILD_DIR [RUNS] [SUITE]...}" && pwd)"
RUNS="${2:-5}"
shift $(( $# >= 2 ? 2 : $# ))
SOURCE_DIR="$(cd "$(dirname "$0")/.." && pwd)"
SUITES=("$@")
[ ${#SUITES[@]} -gt 0 ] ||
  SUITES=("$SOURCE_DIR/workloads/examples/smoke.json" "$SOURCE_DIR/workloads/micro/micro.json"
          "$SOURCE_DIR/workloads/locks/locks.json")
require_root
require_python3
require_rounds "$RUNS" 1
PERFGATE="$BUILD_DIR/perfgate"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/perfgate-canary.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

for suite in "${SUITES[@]}"; do
  name=$(basename "$suite" .json)
  "$PERFGATE" baseline record "$suite" --quiet --baseline-dir "$WORK/$name/baselines" --out "$WORK/$name/record" \
    > /dev/null 2>&1 || { echo "$name: recording the baseline failed" >&2; exit 3; }
  for ((i = 1; i <= RUNS; i++)); do
    code=0
    "$PERFGATE" run "$suite" --quiet --baseline-dir "$WORK/$name/baselines" --out "$WORK/$name/run-$i" \
      > /dev/null 2>&1 || code=$?
    echo "$code" > "$WORK/$name/run-$i/exit-code"
  done
  python3 - "$WORK/$name" "$name" "$RUNS" <<'PY'
import json, statistics, sys
from pathlib import Path
work, name, runs = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
parts = ["host.canary.cpu", "host.canary.memory", "host.canary.fault", "host.canary.io"]

def medians(scenario):
    """The median of each part and of the wall time over a scenario's repetitions."""
    out = {}
    for p in parts + ["workload.wall_time"]:
        v = [r["metrics"][p]["value"] for r in scenario["repetitions"] if p in r["metrics"]]
        if v: out[p] = statistics.median(v)
    return out

recorded = {s["name"]: medians(s) for s in json.loads((work / "record" / "results.json").read_text())["scenarios"]}
tracking = []

def robust_cv(values):
    if len(values) < 2: return float("nan")
    med = statistics.median(values)
    mad = statistics.median(abs(v - med) for v in values)
    return 100 * 1.4826 * mad / med if med > 0 else float("nan")

cost, values, run_medians, speeds, codes = {}, {p: [] for p in parts}, {p: [] for p in parts}, [], []
for i in range(1, runs + 1):
    run = work / f"run-{i}"
    codes.append(int((run / "exit-code").read_text()))
    results = json.loads((run / "results.json").read_text())
    for s in results["scenarios"]:
        per_run = {p: [] for p in parts}
        for rep in s["repetitions"]:
            m = rep["metrics"]
            wall, spent = m.get("workload.wall_time", {}).get("value"), m.get("host.canary.elapsed", {}).get("value")
            if wall and spent is not None: cost.setdefault(s["name"], []).append(100 * spent / wall)
            for p in parts:
                if p in m: values[p].append(m[p]["value"]); per_run[p].append(m[p]["value"])
        for p in parts:
            if per_run[p]: run_medians[p].append(statistics.median(per_run[p]))
        if "host_speed" in s: speeds.append((s["name"], s["host_speed"]))
        then, now = recorded.get(s["name"], {}), medians(s)
        tracking.append((i, s["name"], {p: 100 * (now[p] / then[p] - 1) for p in now if then.get(p)}))

print(f"== {name}: {runs} A/A runs against a baseline recorded just before")
for scenario, shares in cost.items():
    print(f"cost  {scenario}: canary {statistics.median(shares):.2f} % of a repetition (median), "
          f"{max(shares):.2f} % at most, {len(shares)} repetitions")
for p in parts:
    if values[p]:
        print(f"spread {p}: robust CV {robust_cv(values[p]):.1f} % over {len(values[p])} repetitions, "
              f"{robust_cv(run_medians[p]):.1f} % over the runs' medians")
moved = [h for _, h in speeds if h["direction"] != "steady"]
changes = [h["change_pct"] for _, h in speeds]
if changes:
    print(f"host speed: {len(moved)} of {len(speeds)} scenario runs found the host slower or faster; "
          f"canary change {min(changes):+.1f} … {max(changes):+.1f} %")
for scenario, h in speeds:
    if h["direction"] != "steady":
        print(f"  {scenario}: {h['direction']}, {h['canary']} {h['change_pct']:+.1f} % "
              f"[{h['low_pct']:+.1f}, {h['high_pct']:+.1f}]")
# Each run's medians against the recording's: does a canary move with the workload?
for i, scenario, change in tracking:
    print(f"run {i} {scenario}: wall {change.get('workload.wall_time', float('nan')):+.1f} %, " +
          ", ".join(f"{p.split('.')[-1]} {change[p]:+.1f} %" for p in parts if p in change))
print("exit codes: " + " ".join(str(c) for c in codes))
PY
done
