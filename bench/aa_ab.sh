#!/usr/bin/env bash
# A/A and A/B on a real suite, interleaved: records a baseline once, then runs
# PAIRS times an A/A run (same workload) and an A/B run (the workload slowed
# by SLOWDOWN through SMOKE_SLOWDOWN), alternating so that machine drift hits
# both alike. Prints, per check, how often it came out regression /
# inconclusive / pass in each arm, and the share of runs that failed (exit 1).
#
#   bench/aa_ab.sh BUILD_DIR [PAIRS] [SLOWDOWN] [THRESHOLD_PCT] [SUITE]
#
# THRESHOLD_PCT, when given, replaces every regression check's
# max_regression_pct (in a copy of the suite), e.g. 2 to ask whether a 5 %
# slowdown is caught at all; by default the suite's own thresholds decide.
# REPS=MIN:MAX in the environment gives every scenario adaptive repetitions
# (in the copy); the tally then says how many each arm used on average.
# Run as root (probes). Needs python3 for the tally.
set -euo pipefail
BUILD_DIR="$(cd "${1:?usage: aa_ab.sh BUILD_DIR [PAIRS] [SLOWDOWN] [THRESHOLD_PCT] [SUITE]}" && pwd)"
PAIRS="${2:-10}"
SLOWDOWN="${3:-1.05}"
THRESHOLD="${4:-}"
SOURCE_DIR="$(cd "$(dirname "$0")/.." && pwd)"
SUITE="${5:-$SOURCE_DIR/workloads/examples/smoke.json}"
PERFGATE="$BUILD_DIR/perfgate"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/perfgate-aa-ab.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

if [ -n "$THRESHOLD" ] || [ -n "${REPS:-}" ]; then
  # Same directory as the original, so that ${suite_dir} still resolves.
  COPY="$(dirname "$SUITE")/.aa-ab-$$.json"
  trap 'rm -rf "$WORK" "$COPY"' EXIT
  python3 - "$SUITE" "$COPY" "$THRESHOLD" "${REPS:-}" <<'EOF'
import json, re, sys
source, copy, threshold, reps = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
text = open(source).read()
# Suites allow // comments; drop whole-line ones before parsing.
suite = json.loads("\n".join(l for l in text.splitlines() if not l.lstrip().startswith("//")))
for scenario in suite["scenarios"]:
    if reps:
        low, high = (int(n) for n in reps.split(":"))
        scenario["repetitions"] = {"min": low, "max": high}
    for check in scenario.get("checks", []):
        if threshold and check.get("type", "regression") == "regression":
            check["max_regression_pct"] = float(threshold)
json.dump(suite, open(copy, "w"), indent=1)
EOF
  SUITE="$COPY"
fi

echo "suite: $SUITE; $PAIRS pairs; A/B slowdown $SLOWDOWN; thresholds: ${THRESHOLD:-as in the suite}; repetitions: ${REPS:-as in the suite}"
"$PERFGATE" baseline record "$SUITE" --baseline-dir "$WORK/baselines" --out "$WORK/record" --quiet >/dev/null

for i in $(seq 1 "$PAIRS"); do
  for arm in aa ab; do
    slowdown=1.0
    [ "$arm" = ab ] && slowdown="$SLOWDOWN"
    set +e
    SMOKE_SLOWDOWN="$slowdown" "$PERFGATE" run "$SUITE" --baseline-dir "$WORK/baselines" \
      --out "$WORK/$arm-$i" --quiet >/dev/null 2>&1
    echo $? > "$WORK/$arm-$i/exit"
    set -e
  done
  printf '.' >&2
done
echo >&2

python3 - "$WORK" "$PAIRS" <<'EOF'
import collections, json, os, sys
work, pairs = sys.argv[1], int(sys.argv[2])
for arm, title in (("aa", "A/A"), ("ab", "A/B")):
    verdicts = collections.defaultdict(collections.Counter)
    failed = 0
    used, planned = [], []
    for i in range(1, pairs + 1):
        out = os.path.join(work, f"{arm}-{i}")
        failed += open(os.path.join(out, "exit")).read().strip() == "1"
        results = json.load(open(os.path.join(out, "results.json")))
        for scenario in results["scenarios"]:
            used.append(len(scenario["repetitions"]))
            if "adaptive" in scenario:
                planned.append(scenario["adaptive"]["max"])
            for check in scenario["checks"]:
                spec = check["spec"]
                if spec.get("type", "regression") != "regression":
                    continue
                verdicts[spec["name"]][check["verdict"]] += 1
    print(f"{title}: {failed} of {pairs} runs failed (exit 1)")
    if planned:
        mean = sum(used) / len(used)
        print(f"  repetitions per scenario: {mean:.2f} on average, {100 * mean / (sum(planned) / len(planned)):.0f} % of max")
    for name, counts in sorted(verdicts.items()):
        total = sum(counts.values())
        parts = ", ".join(f"{v} {100 * counts[v] / total:.0f} %" for v in ("regression", "inconclusive", "pass", "improvement") if counts[v])
        print(f"  {name:40s} {parts}")
EOF
