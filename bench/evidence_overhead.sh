#!/usr/bin/env bash
# What evidence costs, in one interleaved run of the evidence tests' workload
# (pg-evidence-workload: CPU work in known functions).
#
# 1. Green runs: `perfgate run` of one passing scenario against a stored
#    baseline, with `evidence: on-failure` (the default) and `evidence: never`,
#    the order alternating every round (AB, BA, ...). Nothing fails, so
#    on-failure must attach nothing and cost nothing: the ratio of the median
#    perfgate wall times, and of the median workload.wall_time of the
#    measured repetitions, should be 1 within noise.
# 2. The evidence repetition itself: `evidence: always`, so every round runs
#    one with the profile probe (default 99 Hz) and offcpu with stacks.
#    Prints the median Evidence::slowdown (its wall time over the measured
#    repetitions' median) and the profile probe's BPF cost per sample from
#    the evidence notes.
#
#   bench/evidence_overhead.sh BUILD_DIR [ROUNDS=7] [REPS=5] [BASE_MS=200]
set -euo pipefail

build=${1:?usage: $0 BUILD_DIR [ROUNDS] [REPS] [BASE_MS]}
rounds=${2:-7}
reps=${3:-5}
base_ms=${4:-200}
source "$(dirname "$0")/common.sh"
perfgate=$(find_exe "$build" perfgate)
workload=$(find_exe "$build" pg-evidence-workload)
[[ -x $perfgate && -x $workload ]] || { echo "build perfgate and pg-evidence-workload in $build first" >&2; exit 2; }
require_rounds "$rounds" 3
require_root
require_python3

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
suite() {  # suite(evidence) -> file
  cat >"$dir/$1.json" <<JSON
{"name": "evidence-bench", "evidence": "$1", "scenarios": [{
  "name": "work", "workload": {"argv": ["$workload", "normal", "$base_ms"]},
  "warmup": 1, "repetitions": $reps, "timeout_s": 60,
  "checks": [{"metric": "workload.wall_time", "max_regression_pct": 50}]}]}
JSON
  echo "$dir/$1.json"
}
suite on-failure >/dev/null
suite never >/dev/null
suite always >/dev/null
"$perfgate" baseline record "$dir/never.json" --baseline-dir "$dir/b" --out "$dir/rec" --quiet >/dev/null

now() { date +%s.%N; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
measured_median() {  # median workload.wall_time of results.json's measured repetitions
  python3 - "$1" <<'PY'
import json, statistics, sys
s = json.load(open(sys.argv[1]))["scenarios"][0]
print(statistics.median(r["metrics"]["workload.wall_time"]["value"] for r in s["repetitions"]))
PY
}

declare -A wall=() workload_wall=()
echo "green runs: $reps repetitions of ${base_ms} ms CPU work, $rounds rounds, kernel $(uname -r)"
for ((round = 1; round <= rounds; round++)); do
  order=(on-failure never)
  (( round % 2 == 0 )) && order=(never on-failure)
  line="round $round:"
  for mode in "${order[@]}"; do
    t0=$(now)
    code=0
    "$perfgate" run "$dir/$mode.json" --baseline-dir "$dir/b" --out "$dir/out-$mode" --quiet >/dev/null || code=$?
    t1=$(now)
    (( code == 0 )) || { echo "green run with evidence: $mode exited $code" >&2; exit 1; }
    if python3 -c 'import json,sys; sys.exit("evidence" in json.load(open(sys.argv[1]))["scenarios"][0])' \
        "$dir/out-$mode/results.json"; then :; else echo "a green run has evidence" >&2; exit 1; fi
    w=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    m=$(measured_median "$dir/out-$mode/results.json")
    wall[$mode]+="$w "
    workload_wall[$mode]+="$m "
    line+=" $mode=${w}s (workload $m s)"
  done
  echo "$line"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
wo=$(median ${wall[on-failure]}); wn=$(median ${wall[never]})
mo=$(median ${workload_wall[on-failure]}); mn=$(median ${workload_wall[never]})
printf '\ngreen run, perfgate wall time:   on-failure %.3f s, never %.3f s, ratio %s\n' "$wo" "$wn" "$(ratio "$wo" "$wn")"
printf 'green run, measured repetitions: on-failure %.4f s, never %.4f s, ratio %s\n' "$mo" "$mn" "$(ratio "$mo" "$mn")"

slowdowns=() per_sample=()
echo
echo "evidence repetition (evidence: always), $rounds rounds:"
for ((round = 1; round <= rounds; round++)); do
  "$perfgate" run "$dir/always.json" --baseline-dir "$dir/b" --out "$dir/out-always" --quiet >/dev/null || true
  read -r slowdown ns note < <(python3 - "$dir/out-always/results.json" <<'PY'
import json, re, sys
e = [e for e in json.load(open(sys.argv[1]))["scenarios"][0].get("evidence", []) if e["side"] == "candidate"][0]
note = next((n for n in e["notes"] if n.startswith("profile:")), "")
m = re.search(r"([0-9]+) ns each", note)
print(e["slowdown"], m.group(1) if m else "nan", note.replace(" ", "_"))
PY
)
  slowdowns+=("$slowdown")
  per_sample+=("$ns")
  echo "round $round: slowdown ${slowdown}x, ${note//_/ }"
done
printf '\nevidence repetition: median slowdown %.3fx, profile probe median %s ns per sample in BPF\n' \
  "$(median "${slowdowns[@]}")" "$(median "${per_sample[@]}")"
