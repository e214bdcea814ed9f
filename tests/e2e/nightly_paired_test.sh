#!/usr/bin/env bash
# The paired nightly end to end, as the workflows drive it: ci/nightly.sh and
# `perfgate history add` on the downstream project of
# tests/e2e/downstream_project.sh. The first night has no history: a plain
# run of main, which says so. Then main gets the pull request that makes its
# hot function about 20 % slower: the second night builds the first night's
# commit and tonight's head the same way and runs them interleaved, fails the
# check (exit 1) against the previous night, and the history keeps both the
# absolute values (with the host canary) and the paired change against that
# commit. Bad usage is one line and exit 2.
#   tests/e2e/nightly_paired_test.sh PERFGATE_BINARY SOURCE_DIR
# Exit 77 (skip) without root; under CI=true that fails.
set -euo pipefail
perfgate=$1
source_dir=$(cd "$2" && pwd)
source "$source_dir/tests/e2e/downstream_project.sh"
start_downstream_gate_test
db=$scratch/history.sqlite

night() {  # night NAME: measures main, adds the night to the history; its exit code
  local name=$1
  set +e
  GITHUB_STEP_SUMMARY=$scratch/$name-summary.md bash "$source_dir/ci/nightly.sh" --db "$db" --branch main \
    --suite perf/suite.json --build-cmd "sh build.sh" --build-dir build --perfgate "$perfgate" \
    --out "$scratch/$name-out" --work "$scratch/$name-work" >"$scratch/$name.log" 2>&1
  local code=$?
  set -e
  local reference
  reference=$(sed -n 's/^reference=//p' "$scratch/$name-out/nightly.env")
  "$perfgate" history add "$scratch/$name-out/results.json" --db "$db" --commit "$(git rev-parse main)" \
    --branch main ${reference:+--reference "$reference"} >>"$scratch/$name.log" 2>&1 ||
    fail "night $name was not added to the history"
  echo "$name: exit $code"
  return $code
}

query() { /usr/bin/python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$db" "$1"; }

first=$(git rev-parse main)
code=0; night first || code=$?
[ $code -eq 0 ] || fail "the first night exited $code, not 0"
grep -q '^mode=plain$' "$scratch/first-out/nightly.env" || fail "the first night was not a plain run"
grep -q 'the first night' "$scratch/first.log" || fail "the first night does not say why it is not paired"
grep -q 'not paired' "$scratch/first-summary.md" || fail "the first night's job summary does not say it is not paired"
[ ! -e "$scratch/first-work/base" ] || fail "the first night built a base"

git merge -q --ff-only slow
code=0; night second || code=$?
[ $code -eq 1 ] || fail "the second night, 20 % slower than the first, exited $code, not 1"
grep -q "^mode=paired$" "$scratch/second-out/nightly.env" || fail "the second night was not paired"
grep -q "^reference=$first$" "$scratch/second-out/nightly.env" || fail "the second night was not paired with the first"
grep -q "Compared against: the previous night ${first:0:12}" "$scratch/second-out/summary.md" ||
  fail "the second night's summary does not say it compared with the previous night"
grep -q "interleaved with tonight $(git rev-parse --short=12 main)" "$scratch/second-out/pr-comment.md" ||
  grep -q "tonight $(git rev-parse --short=12 main)" "$scratch/second-out/summary.md" ||
  fail "the second night's summary does not name tonight's commit"

# The history: both nights' absolute values with their canaries, the paired change against the first night.
[ "$(query "SELECT count(*) FROM runs")" = 2 ] || fail "the history does not hold two nights"
[ "$(query "SELECT reference_commit FROM runs WHERE commit_sha = '$(git rev-parse main)'")" = "$first" ] ||
  fail "the second night does not keep the commit it was paired with"
[ "$(query "SELECT reference_commit FROM runs WHERE commit_sha = '$first'")" = "" ] ||
  fail "the first night keeps a reference it did not have"
[ "$(query "SELECT count(DISTINCT v.run_id) FROM metric_values v JOIN series s ON s.id = v.series_id
            WHERE s.metric = 'host.canary.cpu'")" = 2 ] || fail "the history does not keep each night's host canary"
change=$(query "SELECT change_pct FROM check_results c JOIN runs r ON r.id = c.run_id
                WHERE r.commit_sha = '$(git rev-parse main)' AND c.metric = 'workload.cpu_time'")
low=$(query "SELECT change_low_pct FROM check_results c JOIN runs r ON r.id = c.run_id
             WHERE r.commit_sha = '$(git rev-parse main)' AND c.metric = 'workload.cpu_time'")
/usr/bin/python3 -c 'import sys; sys.exit(0 if 10 < float(sys.argv[1]) < 35 and float(sys.argv[2]) > 5 else 1)' \
  "$change" "$low" || fail "the paired change $change % (interval from $low %) is not the planted 20 %"
echo "second night: paired change of workload.cpu_time ${change} % (interval from ${low} %)"

# Bad usage: one line, exit 2.
code=0; bash "$source_dir/ci/nightly.sh" --db "$db" --build-cmd "sh build.sh" >"$scratch/usage.log" 2>&1 || code=$?
[ $code -eq 2 ] && grep -q 'suite is required' "$scratch/usage.log" || fail "a missing --suite exited $code, not 2"
code=0; bash "$source_dir/ci/nightly.sh" --suite perf/suite.json --build-cmd true --reference nope \
  --perfgate "$perfgate" --head nope >"$scratch/usage.log" 2>&1 || code=$?
[ $code -eq 2 ] && grep -q 'not a commit' "$scratch/usage.log" || fail "a head that is no commit exited $code, not 2"
echo "nightly_paired_test: passed"
