#!/usr/bin/env bash
# Probe CPU time as a share of the workload's CPU time, two builds side by
# side: every round runs `perfgate run` of one scenario with each build, the
# order alternating (AB, BA, ...), and the script prints per probe the median
# ns per event and share of workload CPU of each build, and the ratio of the
# medians (BUILD over BASE). The numbers are the ones the report gives: BPF
# run-time statistics, on during the warm-up repetitions (results.json,
# scenarios[].probes[]). Builds from before the statistics' own cost was
# calibrated and taken off (gate/probes/bpf_stats.cpp) include it: about two
# clock reads per program run.
#
#   bench/probe_cpu_ab.sh BUILD_DIR BASE_BUILD_DIR SUITE SCENARIO [ROUNDS=5] [REPS=2]
#
# BASE_BUILD_DIR is a build of the commit to compare with (a git worktree).
# Both builds' workload programs are used from their own build directories.
set -euo pipefail

build=${1:?usage: $0 BUILD_DIR BASE_BUILD_DIR SUITE SCENARIO [ROUNDS] [REPS]}
base=${2:?usage: $0 BUILD_DIR BASE_BUILD_DIR SUITE SCENARIO [ROUNDS] [REPS]}
suite=${3:?usage: $0 BUILD_DIR BASE_BUILD_DIR SUITE SCENARIO [ROUNDS] [REPS]}
scenario=${4:?usage: $0 BUILD_DIR BASE_BUILD_DIR SUITE SCENARIO [ROUNDS] [REPS]}
rounds=${5:-5}
reps=${6:-2}
source "$(dirname "$0")/common.sh"
new_pg=$(find_exe "$build" perfgate)
base_pg=$(find_exe "$base" perfgate)
[[ -x $new_pg && -x $base_pg ]] || { echo "build perfgate in $build and $base first" >&2; exit 2; }
require_rounds "$rounds" 3
require_root
require_python3

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run() {  # run(tag, perfgate, round)
  local out="$dir/$1-$3"
  # No baseline: the verdict is inconclusive, and only results.json matters.
  "$2" run "$suite" --scenario "$scenario" --reps "$reps" --out "$out" \
    --baseline-dir "$dir/baselines-$1" --quiet >/dev/null 2>&1 || true
  [[ -s $out/results.json ]] || { echo "round $3: $2 wrote no results.json" >&2; exit 1; }
}
for ((i = 1; i <= rounds; i++)); do
  if (( i % 2 )); then run new "$new_pg" "$i"; run base "$base_pg" "$i"
  else run base "$base_pg" "$i"; run new "$new_pg" "$i"; fi
  echo "round $i done" >&2
done

python3 - "$dir" "$rounds" "$scenario" <<'EOF'
import json, os, statistics, sys
work, rounds, scenario = sys.argv[1], int(sys.argv[2]), sys.argv[3]
shares = {}  # (tag, probe) -> [(ns per event, share %)]
for tag in ("base", "new"):
    for i in range(1, rounds + 1):
        results = json.load(open(os.path.join(work, f"{tag}-{i}", "results.json")))
        for s in results["scenarios"]:
            if s["name"] != scenario:
                continue
            total = 0.0
            for p in s["probes"]:
                if not p.get("workload_cpu_ns") or not p.get("run_count"):
                    continue
                share = 100.0 * p["run_time_ns"] / p["workload_cpu_ns"]
                total += share
                shares.setdefault((tag, p["name"]), []).append((p["run_time_ns"] / p["run_count"], share))
            shares.setdefault((tag, "(all probes)"), []).append((float("nan"), total))
probes = sorted({probe for _, probe in shares}, key=lambda n: (n == "(all probes)", n))
print(f"{'probe':14} {'base ns/ev':>11} {'new ns/ev':>10} {'base %':>8} {'new %':>8} {'new/base':>9}")
for probe in probes:
    def med(tag, k):
        values = [v[k] for v in shares.get((tag, probe), [])]
        return statistics.median(values) if values else float("nan")
    b, n = med("base", 1), med("new", 1)
    ratio = n / b if b else float("nan")
    per_event = "" if probe == "(all probes)" else f"{med('base', 0):11.0f} {med('new', 0):10.0f}"
    print(f"{probe:14} {per_event:>22} {b:8.3f} {n:8.3f} {ratio:8.2f}x")
print(f"medians of {rounds} interleaved rounds, {scenario}")
EOF
