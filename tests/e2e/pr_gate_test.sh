#!/usr/bin/env bash
# End to end, as a downstream project uses the pull-request gate: a small C
# project in a git repository made here (tests/e2e/downstream_project.sh:
# its build script and a perfgate suite), one pull request that slows its hot
# function by about 20 % and one that changes only a comment. ci/pr-gate.sh, driven with the environment
# GitHub gives it (an event file, a step summary), must fail the first (exit
# 1, the PR comment and JUnit name the check) and pass the second; a fork's
# pull request without the approval label is refused; the build and the
# workload run without root.
#   tests/e2e/pr_gate_test.sh PERFGATE_BINARY SOURCE_DIR
# Exit 77 (skip) without root; under CI=true that fails.
set -euo pipefail
perfgate=$1
source_dir=$(cd "$2" && pwd)
source "$source_dir/tests/e2e/downstream_project.sh"
start_downstream_gate_test

gate() {  # gate NAME HEAD [EVENT_HEAD_REPO [LABEL]]
  local name=$1 head=$2 head_repo=${3:-me/project} label=${4:-}
  local event=$scratch/$name-event.json
  /usr/bin/python3 - "$event" "$(git rev-parse main)" "$(git rev-parse "$head")" "$head_repo" "$label" <<'PY'
import json, sys
path, base, head, head_repo, label = sys.argv[1:]
json.dump({"pull_request": {"number": 7, "base": {"sha": base}, "head": {"sha": head, "repo": {"full_name": head_repo}},
                            "labels": [{"name": label}] if label else []}}, open(path, "w"))
PY
  set +e
  (cd "$repo" && GITHUB_EVENT_PATH=$event GITHUB_REPOSITORY=me/project GITHUB_STEP_SUMMARY=$scratch/$name-summary.md \
    bash "$source_dir/ci/pr-gate.sh" --suite perf/suite.json --build-cmd "sh build.sh" --build-dir build \
    --perfgate "$perfgate" --out "$scratch/$name-out" --work "$scratch/$name-work") >"$scratch/$name.log" 2>&1
  local code=$?
  set -e
  echo "$name: exit $code"
  return $code
}

# A fork's pull request without the approval label never builds.
code=0; gate fork comment someone/fork || code=$?
[ $code -eq 2 ] || fail "the unapproved fork's pull request exited $code, not 2"
grep -q 'perfgate-approved' "$scratch/fork.log" || fail "the refusal does not name the label"
[ ! -e "$scratch/fork-work/head" ] || fail "the unapproved fork's code was checked out"

code=0; gate slow slow || code=$?
[ $code -eq 1 ] || fail "the slower pull request exited $code, not 1"
# Markdown escapes the underscore.
grep -qE 'workload\.cpu(\\)?_time' "$scratch/slow-out/pr-comment.md" || fail "the PR comment does not name the check"
grep -q "Compared against: merge base $(git rev-parse --short=12 main)" "$scratch/slow-out/pr-comment.md" ||
  fail "the PR comment does not say it compared with the merge base"
[ "$(grep -o 'Compared against' "$scratch/slow-out/pr-comment.md" | wc -l)" -eq 1 ] ||
  fail "the PR comment says what it compared against more than once"
grep -q '<!-- perfgate-pr-gate -->' "$scratch/slow-summary.md" || fail "no job summary"
/usr/bin/python3 - "$scratch/slow-out/junit.xml" <<'PY' || fail "JUnit does not fail the check"
import sys, xml.etree.ElementTree as ET
cases = ET.parse(sys.argv[1]).getroot().iter("testcase")
failed = [c.get("name") for c in cases if c.find("failure") is not None]
sys.exit(0 if any("workload.cpu_time" in n for n in failed) else 1)
PY
# Annotations point at the suite in the repository, not at the gate's
# worktree; every testcase takes its scenario's measured time.
/usr/bin/python3 - "$scratch/slow-out/junit.xml" "$repo" <<'PY' || fail "JUnit file= or time is not usable"
import os, sys, xml.etree.ElementTree as ET
junit, repo = sys.argv[1:]
cases = list(ET.parse(junit).getroot().iter("testcase"))
files = {c.get("file") for c in cases}
assert files == {"perf/suite.json"}, files
assert all(os.path.isfile(os.path.join(repo, f)) for f in files), files
assert all(float(c.get("time")) > 0 for c in cases), [c.get("time") for c in cases]
PY
[ "$(cat "$scratch/slow-work/base/build/built-by-uid")" != 0 ] || fail "the build ran as root"

code=0; gate comment comment || code=$?
[ $code -eq 0 ] || fail "the comment-only pull request exited $code, not 0"

# An approved fork's pull request runs.
code=0; gate approved comment someone/fork perfgate-approved || code=$?
[ $code -eq 0 ] || fail "the approved fork's comment-only pull request exited $code, not 0"
echo "pr gate: slower pull request failed, comment-only passed, unapproved fork refused"
