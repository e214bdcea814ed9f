#!/usr/bin/env bash
# End to end, a team living with the pull-request gate on the downstream
# project (tests/e2e/downstream_project.sh): an intended +10 % carrying the
# trailer `Perfgate-Accept: ... <= +15%: reason` passes as accepted, and
# every report (console, PR comment, HTML, JUnit, results.json) says which
# commit accepted it and why; the same trailer on a +30 % change fails naming
# the excess; a trailer naming no check of the suite is one line and exit 2;
# an accept line git does not read as a trailer is said, and accepts nothing;
# a check the merge base quarantines (perf/suite.quarantine.json, the file
# beside the suite) passes as quarantined until its
# date and fails again the day after (PERFGATE_TODAY sets the clock).
#   tests/e2e/triage_test.sh PERFGATE_BINARY SOURCE_DIR
# Exit 77 (skip) without root; under CI=true that fails.
set -euo pipefail
perfgate=$1
source_dir=$(cd "$2" && pwd)
source "$source_dir/tests/e2e/downstream_project.sh"
start_downstream_gate_test
check=mix/workload.cpu_time.value

# A tighter threshold than the project's 8 %, so that +10 % is a regression
# the gate must be told to accept, not one it might call noise.
git checkout -q main
sed -i 's/"max_regression_pct": 8/"max_regression_pct": 3/' perf/suite.json
git commit -qam "Gate the hot function at 3 %"
rounds() {  # rounds BRANCH N MESSAGE
  git checkout -q -b "$1" main
  sed -i "s/#define ROUNDS 600 /#define ROUNDS $2 /" work.c
  git commit -qam "$3"
  git checkout -q main
}
rounds intended 660 "Check the buffer's integrity on every pass

Perfgate-Accept: $check <= +15%: the integrity check costs a tenth, on purpose"
rounds beyond 780 "Check the buffer's integrity twice

Perfgate-Accept: $check <= +15%: the integrity check costs a tenth, on purpose"
git checkout -q -b missing main
sed -i 's|/\* Mixes the buffer ROUNDS times. \*/|/* Mixes the buffer, ROUNDS passes. */|' work.c
git commit -qm "Say it differently

Perfgate-Accept: mix/workload.wall_time <= +5%: a check the suite does not have" -a
git checkout -q main
# `git commit -m … -m …` makes each -m a paragraph: an accept line followed
# by another paragraph is not a trailer, accepts nothing, and is said.
git checkout -q -b split main
sed -i "s/#define ROUNDS 600 /#define ROUNDS 780 /" work.c
git commit -qam "Check the buffer's integrity twice" -m "Perfgate-Accept: $check <= +50%: not in the last paragraph" \
  -m "Reviewed-by: Alice <alice@example.org>"
git checkout -q main
# The quarantine is in the merge base, in the file beside the suite (the
# suite's own "quarantine" list works alike: tests/unit/triage_test.cpp), as
# a team would merge it.
git checkout -q -b quarantined main
cat > perf/suite.quarantine.json <<'JSON'
{"quarantine": [{"check": "mix/workload.cpu_time.value", "owner": "alice",
                 "reason": "noisy on the shared runners", "until": "2026-12-31"}]}
JSON
git add perf/suite.quarantine.json
git commit -qm "Quarantine the hot function's check until the runners are fixed"
git checkout -q -b noisy quarantined
sed -i 's/#define ROUNDS 600 /#define ROUNDS 720 /' work.c
git commit -qam "Mix a fifth more rounds"
git checkout -q main

gate() {  # gate NAME BASE HEAD [TODAY]
  local name=$1 base=$2 head=$3 today=${4:-2026-11-27}
  set +e
  (cd "$repo" && PERFGATE_TODAY=$today bash "$source_dir/ci/pr-gate.sh" --suite perf/suite.json \
    --build-cmd "sh build.sh" --build-dir build --base "$base" --head "$head" --perfgate "$perfgate" \
    --out "$scratch/$name-out" --work "$scratch/$name-work") >"$scratch/$name.log" 2>&1
  local code=$?
  set -e
  echo "$name: exit $code"
  return $code
}

# The JUnit testcase of the check: passed (no failure/error/skipped child)
# with the given properties, or failed.
junit_case() {  # junit_case FILE passed|failed [NAME=VALUE-SUBSTRING]...
  /usr/bin/python3 - "$@" <<'PY'
import sys, xml.etree.ElementTree as ET
path, want, *props = sys.argv[1:]
case = next(c for c in ET.parse(path).getroot().iter("testcase") if c.get("name") == "workload.cpu_time.value")
failed = any(case.find(t) is not None for t in ("failure", "error", "skipped"))
if failed != (want == "failed"):
    sys.exit(f"testcase is {'failed' if failed else 'passed'}, not {want}")
have = {p.get("name"): p.get("value") for p in case.iter("property")}
for prop in props:
    name, value = prop.split("=", 1)
    if value not in have.get(name, ""):
        sys.exit(f"property {name} is {have.get(name)!r}, not containing {value!r}")
PY
}

intended_sha=$(git rev-parse --short=12 intended)
code=0; gate intended main intended || code=$?
[ $code -eq 0 ] || fail "the intended +10 % with <= +15% exited $code, not 0"
out=$scratch/intended-out
grep -q "accepted: $check: accepted in $intended_sha (the integrity check costs a tenth, on purpose)" \
  "$scratch/intended.log" || fail "the console does not say who accepted it and why"
grep -q "accepted in $intended_sha" "$out/pr-comment.md" || fail "the PR comment does not name the accepting commit"
grep -q "the integrity check costs a tenth" "$out/pr-comment.md" || fail "the PR comment does not give the reason"
grep -q "1 accepted" "$out/pr-comment.md" || fail "the PR comment's counts miss the accepted check"
grep -q "accepted in $intended_sha" "$out/report/index.html" || fail "the HTML report does not name the accepting commit"
junit_case "$out/junit.xml" passed triage=accepted "accepted_by=$intended_sha" \
  "accepted_reason=the integrity check costs a tenth" accepted_bound_pct=15 || fail "JUnit: accepted check"
/usr/bin/python3 - "$out/results.json" "$intended_sha" <<'PY' || fail "results.json does not record the acceptance"
import json, sys
check = json.load(open(sys.argv[1]))["scenarios"][0]["checks"][0]
assert check["verdict"] == "accepted", check["verdict"]
# What the gate measured without the acceptance: the +10 % is a regression
# at 3 %, or inconclusive when the host's noise widened its interval (once:
# +7.5 %, [+1.0 %, +10.1 %]); never a pass.
assert check["triage"]["by"] == sys.argv[2] and check["triage"]["measured"] in ("regression", "inconclusive"), check["triage"]
PY
# Re-rendered from results.json, the acceptance is still there.
"$perfgate" report "$out/results.json" --out "$scratch/rerendered" >/dev/null ||
  fail "perfgate report of the accepted run did not pass"
grep -q "accepted in $intended_sha" "$scratch/rerendered/summary.md" || fail "the acceptance did not round-trip"

code=0; gate beyond main beyond || code=$?
[ $code -eq 1 ] || fail "+30 % with <= +15% exited $code, not 1"
# (Markdown writes "<=" as "&lt;=".)
grep -qE "exceeds the accepted (<|&lt;)= \+15\.0% by [0-9.]+ points" "$scratch/beyond-out/pr-comment.md" ||
  fail "the PR comment does not say by how much the change exceeded what was accepted"
junit_case "$scratch/beyond-out/junit.xml" failed triage=exceeded || fail "JUnit: exceeded acceptance"

code=0; gate missing main missing || code=$?
[ $code -eq 2 ] || fail "a trailer naming no check exited $code, not 2"
grep -q 'accept-trailers.txt:1: "mix/workload.wall_time" names no check of suite' "$scratch/missing.log" ||
  fail "the error does not name the trailer and the missing check"
[ "$(grep -c 'perfgate: error' "$scratch/missing.log" || true)" -le 1 ] || fail "more than one error line"

split_sha=$(git rev-parse --short=12 split)
code=0; gate split main split || code=$?
[ $code -eq 1 ] || fail "+30 % with an accept line that is not a trailer exited $code, not 1"
grep -q "pr-gate: warning: commit $split_sha: \"Perfgate-Accept: $check <= +50%: not in the last paragraph\" is not a trailer" \
  "$scratch/split.log" || fail "the console does not say the accept line is not a trailer"
grep -q "not trailers" "$scratch/split-out/pr-comment.md" && grep -q "$split_sha" "$scratch/split-out/pr-comment.md" ||
  fail "the PR comment does not say the accept line is not a trailer"

code=0; gate quarantined quarantined noisy 2026-12-31 || code=$?
[ $code -eq 0 ] || fail "the quarantined failing check exited $code on its last day, not 0"
grep -q "quarantined until 2026-12-31 by alice (noisy on the shared runners): would have failed: +" \
  "$scratch/quarantined-out/pr-comment.md" || fail "the PR comment does not say what the quarantined check would have done"
junit_case "$scratch/quarantined-out/junit.xml" passed triage=quarantined quarantine_owner=alice \
  quarantine_until=2026-12-31 || fail "JUnit: quarantined check"
# The suite names its build through ${BUILD_DIR}, which the list needs set like any run.
BUILD_DIR=build "$perfgate" quarantine list "$scratch/quarantined-work/base/perf/suite.json" --today 2026-12-31 |
  grep -q "$check.*until 2026-12-31.*owner alice" || fail "perfgate quarantine list does not show the entry"

code=0; gate expired quarantined noisy 2027-01-01 || code=$?
[ $code -eq 1 ] || fail "the day after its expiry the check exited $code, not 1"
grep -q "expired on 2026-12-31: live again" "$scratch/expired-out/pr-comment.md" ||
  fail "the PR comment does not say the quarantine expired"
echo "triage: accepted within the bound, exceeded named, missing check refused, quarantine held and expired"
