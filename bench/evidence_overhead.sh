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
# 2. The evidence repetitions themselves: `evidence: always` against
#    `evidence: never`, alternating every round, so every `always` round runs
#    evidence repetitions with the profile probe (4999 Hz) and offcpu with
#    stacks until the side has its target sample count (2,000 when nothing
#    regressed; run/evidence_run.h). Prints the median extra perfgate wall
#    time the evidence costs, the repetitions and samples it took, the
#    median Evidence::slowdown (an evidence repetition's wall time over the
#    measured repetitions' median) and the BPF cost per sample (profile) and
#    per wait (offcpu with stacks) from the evidence notes.
# 3. User stack copies for unwinding without frame pointers: two suites whose
#    own profile probe samples at 4999 Hz, one copying 8 KiB of user stack
#    per sample (the evidence's default) and one copying none, alternating
#    every round. Their measured repetitions run under that probe, so the
#    ratio of the median workload.wall_time is what copying costs the
#    workload; the evidence notes give the BPF ns per sample of each and the
#    time spent unwinding per copy after the run.
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
suite() {  # suite(evidence, [name, probes]) -> file
  cat >"$dir/${2:-$1}.json" <<JSON
{"name": "evidence-bench", "evidence": "$1", "scenarios": [{
  "name": "work", "workload": {"argv": ["$workload", "normal", "$base_ms"]}, "probes": [${3:-}],
  "warmup": 1, "repetitions": $reps, "timeout_s": 60,
  "checks": [{"metric": "workload.wall_time", "max_regression_pct": 50}]}]}
JSON
  echo "$dir/${2:-$1}.json"
}
suite on-failure >/dev/null
suite never >/dev/null
suite always >/dev/null
suite always copy '{"name": "profile", "frequency_hz": 4999, "user_stack_bytes": 8192}' >/dev/null
suite always nocopy '{"name": "profile", "frequency_hz": 4999, "user_stack_bytes": 0}' >/dev/null
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

declare -A total=()
slowdowns=() per_sample=() per_wait=() evidence_reps=() samples=()
echo
echo "evidence repetitions (evidence: always against never), $rounds rounds:"
for ((round = 1; round <= rounds; round++)); do
  order=(always never)
  (( round % 2 == 0 )) && order=(never always)
  line="round $round:"
  for mode in "${order[@]}"; do
    t0=$(now)
    "$perfgate" run "$dir/$mode.json" --baseline-dir "$dir/b" --out "$dir/out-$mode" --quiet >/dev/null || true
    t1=$(now)
    w=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    total[$mode]+="$w "
    line+=" $mode=${w}s"
  done
  read -r slowdown ns wait_ns reps n < <(python3 - "$dir/out-always/results.json" <<'PY'
import json, re, sys
e = [e for e in json.load(open(sys.argv[1]))["scenarios"][0].get("evidence", []) if e["side"] == "candidate"][0]
def find(prefix, pattern):
    note = next((n for n in e["notes"] if n.startswith(prefix)), "")
    m = re.search(pattern, note)
    return m.group(1).replace(",", "") if m else "nan"
print(e["slowdown"], find("profile:", r"([0-9]+) ns each"), find("offcpu with stacks:", r"([0-9]+) ns each"),
      find("evidence:", r"^evidence: ([0-9]+) repetition"), find("evidence:", r"repetitions?, ([0-9,]+) on-CPU"))
PY
)
  slowdowns+=("$slowdown"); per_sample+=("$ns"); per_wait+=("$wait_ns"); evidence_reps+=("$reps"); samples+=("$n")
  echo "$line; evidence: $reps repetitions, $n samples, slowdown ${slowdown}x, ${ns} ns per sample, ${wait_ns} ns per wait"
done
ta=$(median ${total[always]}); tn=$(median ${total[never]})
printf '\nperfgate wall time: always %.3f s, never %.3f s: evidence costs %.3f s (ratio %s)\n' "$ta" "$tn" \
  "$(awk -v a="$ta" -v b="$tn" 'BEGIN { print a - b }')" "$(ratio "$ta" "$tn")"
printf 'evidence: median %s repetitions, %s on-CPU samples; median slowdown %.3fx\n' \
  "$(median "${evidence_reps[@]}")" "$(median "${samples[@]}")" "$(median "${slowdowns[@]}")"
printf 'BPF: profile probe median %s ns per sample, offcpu with stacks %s ns per wait\n' \
  "$(median "${per_sample[@]}")" "$(median "${per_wait[@]}")"

declare -A copy_wall=()
copy_ns=() nocopy_ns=() unwind_us=()
echo
echo "user stack copies (8192 bytes per sample at 4999 Hz against none), $rounds rounds:"
for ((round = 1; round <= rounds; round++)); do
  order=(copy nocopy)
  (( round % 2 == 0 )) && order=(nocopy copy)
  line="round $round:"
  for mode in "${order[@]}"; do
    "$perfgate" run "$dir/$mode.json" --baseline-dir "$dir/b" --out "$dir/out-$mode" --quiet >/dev/null || true
    m=$(measured_median "$dir/out-$mode/results.json")
    copy_wall[$mode]+="$m "
    read -r ns us < <(python3 - "$dir/out-$mode/results.json" <<'PY'
import json, re, sys
e = [e for e in json.load(open(sys.argv[1]))["scenarios"][0].get("evidence", []) if e["side"] == "candidate"][0]
def find(prefix, pattern):
    note = next((n for n in e["notes"] if n.startswith(prefix) and re.search(pattern, n)), "")
    m = re.search(pattern, note)
    return m.group(1).replace(",", "") if m else "nan"
print(find("profile:", r"([0-9]+) ns each"), find("on-cpu: user stacks copied", r"([0-9]+) us per copy"))
PY
)
    if [[ $mode == copy ]]; then copy_ns+=("$ns"); unwind_us+=("$us"); else nocopy_ns+=("$ns"); fi
    line+=" $mode: workload $m s, ${ns} ns per sample"
    [[ $mode == copy ]] && line+=", ${us} us per copy unwound"
  done
  echo "$line"
done
cw=$(median ${copy_wall[copy]}); nw=$(median ${copy_wall[nocopy]})
printf '\nworkload under the profile probe at 4999 Hz: copying %.4f s, not copying %.4f s, ratio %s\n' "$cw" "$nw" \
  "$(ratio "$cw" "$nw")"
printf 'BPF: median %s ns per sample copying, %s ns not copying; unwinding after the run: median %s us per copy\n' \
  "$(median "${copy_ns[@]}")" "$(median "${nocopy_ns[@]}")" "$(median "${unwind_us[@]}")"
