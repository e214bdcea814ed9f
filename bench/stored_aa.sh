#!/usr/bin/env bash
# A/A against stored numbers: records a suite's baseline on this host, waits,
# then runs the same suite RUNS times against it (`perfgate run`), nothing
# changed. Prints each run's verdict and the tally: how many runs failed
# (exit 1), how many checks came out regression / inconclusive / pass, and
# how many inconclusive checks named the host's speed (the canary), and how
# many checks the first measurement flagged that fresh repetitions then
# confirmed or not (compare/confirm.h). With
# BURNER=1 a one-CPU busy loop runs beside every run (not beside the
# recording), as a neighbour that arrived after the baseline would.
#
#   bench/stored_aa.sh BUILD_DIR [SUITE] [RUNS] [WAIT_S]
#
# Defaults: the smoke suite, 20 runs, 60 s between the recording and the
# first run. Run as root (probes). Needs python3 for the tally.
set -euo pipefail
BUILD_DIR="$(cd "${1:?usage: stored_aa.sh BUILD_DIR [SUITE] [RUNS] [WAIT_S]}" && pwd)"
SOURCE_DIR="$(cd "$(dirname "$0")/.." && pwd)"
SUITE="${2:-$SOURCE_DIR/workloads/examples/smoke.json}"
RUNS="${3:-20}"
WAIT_S="${4:-60}"
PERFGATE="$BUILD_DIR/perfgate"
[ -f "$SUITE" ] || { echo "stored_aa.sh: $SUITE: no such suite" >&2; exit 2; }
case "$RUNS$WAIT_S" in *[!0-9]*) echo "stored_aa.sh: RUNS and WAIT_S are whole numbers" >&2; exit 2 ;; esac

WORK="$(mktemp -d "${TMPDIR:-/tmp}/perfgate-stored-aa.XXXXXX")"
burner=
cleanup() {
  [ -z "$burner" ] || kill "$burner" 2> /dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

start=$SECONDS
"$PERFGATE" baseline record "$SUITE" --baseline-dir "$WORK/baselines" --quiet > "$WORK/record.log" 2>&1 ||
  { cat "$WORK/record.log" >&2; echo "stored_aa.sh: recording the baseline failed" >&2; exit 3; }
echo "recorded $(basename "$SUITE") in $((SECONDS - start)) s; waiting $WAIT_S s"
sleep "$WAIT_S"
if [ "${BURNER:-0}" = 1 ]; then
  sh -c 'while :; do :; done' &
  burner=$!
  echo "a one-CPU busy loop beside the runs (pid $burner)"
fi
for i in $(seq 1 "$RUNS"); do
  rc=0
  t0=$SECONDS
  "$PERFGATE" run "$SUITE" --baseline-dir "$WORK/baselines" --out "$WORK/run-$i" --quiet > "$WORK/run-$i.log" 2>&1 || rc=$?
  echo "$rc" > "$WORK/run-$i.rc"
  echo "run $i: exit $rc ($((SECONDS - t0)) s): $(tail -n 1 "$WORK/run-$i.log")"
done

python3 - "$WORK" "$RUNS" << 'EOF'
import json, os, sys
work, runs = sys.argv[1], int(sys.argv[2])
failed, verdicts, host, confirmed, refuted = 0, {}, 0, 0, 0
for i in range(1, runs + 1):
    if open(os.path.join(work, f"run-{i}.rc")).read().strip() == "1":
        failed += 1
    path = os.path.join(work, f"run-{i}", "results.json")
    if not os.path.exists(path):
        continue
    for scenario in json.load(open(path))["scenarios"]:
        for check in scenario.get("checks", []):
            v = check.get("verdict", "?")
            verdicts[v] = verdicts.get(v, 0) + 1
            if v == "inconclusive" and "than when the baseline was recorded" in check.get("message", ""):
                host += 1
            if "confirmation" in check:
                if check["confirmation"]["confirmed"]:
                    confirmed += 1
                else:
                    refuted += 1
print(f"{failed} of {runs} runs failed (exit 1); checks: " +
      ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items())) +
      f"; {host} inconclusive for the host's speed; flagged by the first measurement: " +
      f"{confirmed} confirmed, {refuted} not confirmed")
EOF
