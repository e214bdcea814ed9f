#!/usr/bin/env bash
# ci/nightly-bisect.sh as the nightly job drives it: a history of ten nightly
# runs on main (every other commit of a repository made here) whose wall time
# rises by 30 % from the sixth run on, `perfgate trend --change-points`, then
# the script with --dry-run: it must bisect exactly the range between the
# last run before the change and the first after, on the metric that moved,
# and write the issue-comment body and the job summary; a change point in
# the seen file is not bisected again; bad arguments are exit 2.
#   tests/ci/nightly_bisect_test.sh PERFGATE_BINARY SOURCE_DIR
set -euo pipefail
perfgate=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
source_dir=$(cd "$2" && pwd)
script=$source_dir/ci/nightly-bisect.sh
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

fail() {
  echo "FAIL: $1"
  for f in "$scratch"/*.log; do [ -f "$f" ] && { echo "---- $f"; tail -n 30 "$f"; }; done
  exit 1
}

repo=$scratch/project
mkdir -p "$repo/perf"
git -C "$repo" init -q -b main
git -C "$repo" config user.email dev@example.com
git -C "$repo" config user.name "A developer"
cat >"$repo/perf/suite.json" <<'JSON'
// The nightly suite (its name is what the history records).
{
  "name": "nightly-demo",
  "scenarios": [
    {
      "name": "loop",
      "workload": { "kind": "command", "argv": ["${BUILD_DIR}/prog"] },
      "checks": [{ "metric": "workload.wall_time", "type": "regression", "max_regression_pct": 5 }]
    }
  ]
}
JSON
for n in $(seq 1 20); do
  echo "change $n" >"$repo/notes.txt"
  git -C "$repo" add -A
  git -C "$repo" commit -qm "Commit $n"
done
commit() { git -C "$repo" log --format=%H --grep="^Commit $1\$" -n 1; }

# Ten nightly runs at commits 2, 4, ..., 20; from commit 12 on the wall time is 1.3 s instead of 1.0 s.
db=$scratch/history.sqlite
for run in $(seq 1 10); do
  sha=$(commit $((2 * run)))
  /usr/bin/python3 - "$scratch/results-$run.json" "$run" <<'PY'
import json, sys
path, run = sys.argv[1], int(sys.argv[2])
base = 1.3 if run >= 6 else 1.0
reps = [{"exit_status": 0, "index": i, "metrics": {"workload.wall_time": {
    "better": "lower", "kind": "scalar", "unit": "s", "value": base + 0.002 * ((run + i) % 3)}}} for i in range(3)]
json.dump({"environment": {"cpu_count": 2, "cpu_model": "test cpu", "git_commit": "", "hostname": "ci",
                           "kernel": "6.1.0", "perfgate_version": "0.1.0",
                           "timestamp": f"2026-11-{run:02d}T02:17:00Z"},
           "exit_code": 0, "partial": False, "schema_version": 1, "strict": False, "suite": "nightly-demo",
           "suite_file": "perf/suite.json", "verdict": "pass",
           "scenarios": [{"checks": [], "duration_s": 5.0, "name": "loop", "probes": [], "repetitions": reps}]},
          open(path, "w"))
PY
  "$perfgate" history add "$scratch/results-$run.json" --db "$db" --commit "$sha" --branch main >>"$scratch/history.log" 2>&1 ||
    fail "history add of run $run"
done
"$perfgate" trend --db "$db" --branch main --out "$scratch/trend" --change-points "$scratch/change-points.json" \
  >"$scratch/trend.log" 2>&1 || fail "perfgate trend"
before=$(commit 10)
after=$(commit 12)
grep -q "\"commit_after\": \"$after\"" "$scratch/change-points.json" || fail "trend did not find the change at commit 12"

nightly() {  # nightly NAME ARGS...: the script's output in NAME.log
  local name=$1
  shift
  set +e
  (cd "$repo" && GITHUB_STEP_SUMMARY=$scratch/$name-summary.md bash "$script" --perfgate "$perfgate" "$@") \
    >"$scratch/$name.log" 2>&1
  local code=$?
  set -e
  echo "$name: exit $code"
  return $code
}

code=0
nightly plan --change-points "$scratch/change-points.json" --suite perf/suite.json --build-cmd "sh build.sh" \
  --build-dir build --out "$scratch/out" --dry-run || code=$?
[ $code -eq 0 ] || fail "the dry run exited $code"
grep -q -- "--good $before --bad $after " "$scratch/plan.log" || fail "bisect was not called with the change's range"
grep -q -- "--check loop/workload.wall_time:value" "$scratch/plan.log" || fail "bisect was not told the metric"
grep -q "2 commits from ${before:0:12} to ${after:0:12}" "$scratch/plan.log" || fail "no plan of the range"
grep -q "perfgate-nightly-bisect" "$scratch/out/issue-comment.md" || fail "no issue-comment body"
grep -q "Commit 11" "$scratch/out/issue-comment.md" || fail "the comment does not show the plan"
grep -q "perfgate-nightly-bisect" "$scratch/plan-summary.md" || fail "no job summary"
[ "$(grep -c -- '--good' "$scratch/plan.log")" -eq 1 ] || fail "more than one bisection"
[ ! -s "$scratch/out/bisected-change-points" ] || fail "a dry run marked the change point as bisected"

# Bisected on an earlier night: not again.
echo "nightly-demo/loop/workload.wall_time:value@$after" >"$scratch/seen"
code=0
nightly seen --change-points "$scratch/change-points.json" --suite perf/suite.json --build-cmd "sh build.sh" \
  --seen "$scratch/seen" --out "$scratch/out-seen" --dry-run || code=$?
[ $code -eq 0 ] || fail "exit $code with nothing new"
grep -q "no new change point" "$scratch/seen.log" || fail "the seen change point was bisected again"
! grep -q -- "--good" "$scratch/seen.log" || fail "bisect ran for a seen change point"

# Bad usage: one line, exit 2.
for args in "--suite perf/suite.json --build-cmd true" \
  "--change-points $scratch/change-points.json --build-cmd true" \
  "--change-points $scratch/change-points.json --suite perf/suite.json --build-cmd true --max-bisections x" \
  "--change-points $scratch/change-points.json --suite perf/suite.json --build-cmd true --bogus" \
  "--change-points $scratch/suite-missing.json --suite perf/suite.json --build-cmd true"; do
  code=0
  # shellcheck disable=SC2086
  nightly usage $args --out "$scratch/out-usage" || code=$?
  [ $code -eq 2 ] || fail "\"$args\" exited $code, not 2"
  [ "$(wc -l <"$scratch/usage.log")" -eq 1 ] || fail "\"$args\": not one line"
done
echo "nightly bisect: the change's range bisected, seen change points skipped, bad usage refused"
