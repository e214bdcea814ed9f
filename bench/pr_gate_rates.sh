#!/usr/bin/env bash
# How often the pull-request gate is wrong, on the downstream project of the
# end-to-end test (tests/e2e/downstream_project.sh): RUNS gates of the
# comment-only pull request (A/A: each failure is a false alarm) and RUNS of
# the pull request whose hot function does a fifth more work (each pass or
# inconclusive is a missed regression), alternating, on this host. Prints
# the counts and rates, and the median time of one gate.
#   bench/pr_gate_rates.sh BUILD_DIR [RUNS]    (RUNS >= 40 for the numbers of docs/benchmarks.md)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
source "$here/../tests/e2e/downstream_project.sh"
[[ $# -ge 1 ]] || { echo "usage: $0 BUILD_DIR [RUNS]" >&2; exit 2; }
perfgate=$(find_exe "$1" perfgate)
[[ -z $perfgate ]] || perfgate=$(realpath "$perfgate")
[[ -n $perfgate ]] || { echo "no perfgate under $1" >&2; exit 2; }
runs=${2:-40}
require_rounds "$runs" 1
require_root

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
chmod 0755 "$scratch"
make_downstream_project "$scratch/project"

declare -A exits=()
times=()
for ((i = 1; i <= runs; i++)); do
  order=(comment slow)
  ((i % 2 == 0)) && order=(slow comment)
  for head in "${order[@]}"; do
    start=$(date +%s%N)
    set +e
    (cd "$scratch/project" && bash "$here/../ci/pr-gate.sh" --base main --head "$head" --suite perf/suite.json \
      --build-cmd "sh build.sh" --build-dir build --perfgate "$perfgate" --out "$scratch/out" \
      --work "$scratch/work-$head-$i") >"$scratch/gate.log" 2>&1
    code=$?
    set -e
    times+=("$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')")
    git -C "$scratch/project" worktree prune
    rm -rf "$scratch/work-$head-$i"
    exits[$head.$code]=$((${exits[$head.$code]:-0} + 1))
    # A gate that neither passed nor failed is kept for a look.
    ((code <= 1)) || cp "$scratch/gate.log" "${TMPDIR:-/tmp}/pr-gate-rates-$head-$i.log"
    echo "run $i $head: exit $code"
  done
done

count() { echo "${exits[$1]:-0}"; }
pct() { awk -v n="$1" -v d="$runs" 'BEGIN { printf "%.1f", 100 * n / d }'; }
false_fail=$(( $(count comment.1) ))
detected=$(( $(count slow.1) ))
echo "A/A (comment-only) gates: $runs; failed (false alarm): $false_fail ($(pct "$false_fail") %);" \
  "inconclusive or passed: $(count comment.0); other exits: $((runs - false_fail - $(count comment.0)))"
echo "20 % slower gates: $runs; failed (detected): $detected ($(pct "$detected") %);" \
  "missed: $(count slow.0); other exits: $((runs - detected - $(count slow.0)))"
median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}')
echo "median time of one gate (two builds, perfgate ab): ${median} s"
