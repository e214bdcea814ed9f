#!/usr/bin/env bash
# perfgate bisect end to end on a repository made here: 24 commits of a small
# C program (a function, and a main that runs it RUNS times); commit 17 makes
# the function 15 % slower (PASSES 200 -> 230), commit 12 does not build (13
# fixes it), every other commit changes only a comment.
#   tests/e2e/bisect_test.sh PERFGATE_BINARY SOURCE_DIR MODE
# MODE culprit: the slow commit is named in at most 7 steps after the
#   endpoints' confirmation, the broken one is reported as skipped, and the
#   reports say so.
# MODE no-repro: between commits that differ only in comments, "could not
#   reproduce" and exit 0.
# MODE bad-input: not a repository, unknown commits, good after bad, a build
#   command that always fails: one line and exit 2 each; --dry-run's plan.
# Exit 77 (skip) without root; under CI=true that fails.
set -euo pipefail
perfgate=$1
source_dir=$(cd "$2" && pwd)
mode=$3
source "$(dirname "$0")/../harness/skip.sh" bisect
[ "$(id -u)" -eq 0 ] || skip "the A/B loads BPF programs as root"

scratch=$(mktemp -d)
trap '[ -n "${KEEP_SCRATCH:-}" ] || rm -rf "$scratch"' EXIT
chmod 0755 "$scratch"
repo=$scratch/project

fail() {
  echo "FAIL: $1"
  for f in "$scratch"/*.log; do [ -f "$f" ] && { echo "---- $f"; tail -n 40 "$f"; }; done
  exit 1
}

make_project() (
  mkdir -p "$repo/perf"
  cd "$repo"
  git init -q -b main
  git config user.email dev@example.com
  git config user.name "A developer"
  cat >prog.c <<'C'
#include <stdint.h>
#include <stdio.h>

#define PASSES 200 /* passes over the buffer per call */
#define RUNS 8     /* calls of work() */

static uint8_t buffer[1 << 14];

/* revision 1 */
__attribute__((noinline)) static uint64_t work(uint64_t h) {
  for (int p = 0; p < PASSES; p++)
    for (size_t i = 0; i < sizeof buffer; i++) h = (h ^ buffer[i]) * 1099511628211ull + (uint64_t)p;
  return h;
}

int main(void) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < sizeof buffer; i++) buffer[i] = (uint8_t)(i * 31);
  for (int n = 0; n < RUNS; n++) h = work(h);
  printf("%llu\n", (unsigned long long)h);
  return 0;
}
C
  cat >build.sh <<'SH'
#!/bin/sh
set -e
mkdir -p build
cc -O2 -o build/prog prog.c
SH
  cat >perf/suite.json <<'JSON'
// The project's gate: the CPU time of its hot loop.
{
  "name": "bisect-demo",
  "scenarios": [
    {
      "name": "work",
      "workload": { "kind": "command", "argv": ["${BUILD_DIR}/prog"] },
      "warmup": 1,
      "repetitions": { "min": 8, "max": 24 },
      "timeout_s": 60,
      "probes": [{ "name": "sched", "scope": "workload" }],
      "checks": [
        { "metric": "workload.cpu_time", "statistic": "value", "type": "regression", "max_regression_pct": 5 }
      ]
    }
  ]
}
JSON
  git add -A
  git commit -qm "Commit 1: the program and its suite"
  for n in $(seq 2 24); do
    sed -i "s|^/\* revision [0-9]* \*/|/* revision $n */|" prog.c
    subject="Commit $n: a comment"
    case $n in
      12) sed -i 's|^static uint8_t buffer\[1 << 14\];|static uint8_t buffer[1 << 14]|' prog.c
          subject="Commit 12: <b>drop</b> a semicolon & \`break\` the build" ;;
      13) sed -i 's|^static uint8_t buffer\[1 << 14\]$|static uint8_t buffer[1 << 14];|' prog.c
          subject="Commit 13: fix the build" ;;
      17) sed -i 's|^#define PASSES 200 |#define PASSES 230 |' prog.c
          subject="Commit 17: | more passes, *15 %* slower" ;;
    esac
    git commit -qam "$subject"
  done
)
make_project
commit() { git -C "$repo" log --format=%H --grep="^Commit $1:" -n 1; }
good=$(commit 1)
bad=$(commit 24)
slow=$(commit 17)
broken=$(commit 12)

bisect() {  # bisect NAME ARGS...: runs perfgate bisect, output in NAME.log
  local name=$1
  shift
  set +e
  "$perfgate" bisect "${suite:-$repo/perf/suite.json}" --repo "${bisect_repo:-$repo}" --build "${build_cmd:-sh build.sh}" --build-dir build \
    --out "$scratch/$name-out" --quiet "$@" >"$scratch/$name.log" 2>&1
  local code=$?
  set -e
  echo "$name: exit $code"
  return $code
}

case $mode in
  culprit)
    code=0; bisect culprit --good "$good" --bad "$bad" --max-steps 7 || code=$?
    [ $code -eq 0 ] || fail "bisect exited $code"
    grep -q "first bad commit: ${slow:0:12}" "$scratch/culprit.log" || fail "the slow commit ${slow:0:12} is not named"
    /usr/bin/python3 - "$scratch/culprit-out/bisect.json" "$slow" "$broken" <<'PY' || fail "bisect.json"
import json, sys
report, slow, broken = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
assert report["outcome"] == "culprit", report["outcome"]
assert report["culprit"]["sha"] == slow, report["culprit"]
assert report["culprit"]["author"] == "A developer <dev@example.com>", report["culprit"]["author"]
assert report["confirmation"]["verdict"] == "bad", report["confirmation"]
assert len(report["steps"]) <= 7, len(report["steps"])
skipped = [s for s in report["steps"] if s["commit"]["sha"] == broken]
assert skipped and skipped[0]["verdict"] == "skipped" and "build failed" in skipped[0]["reason"], skipped
for s in report["steps"]:
    if s["verdict"] != "skipped":
        assert s["checks"] and s["checks"][0]["repetitions"] >= 8, s
print("steps:", " ".join(f'{s["position"]}:{s["verdict"]}' for s in report["steps"]))
PY
    grep -q "$slow" "$scratch/culprit-out/bisect.md" || fail "bisect.md does not name the culprit"
    grep -q 'skipped' "$scratch/culprit-out/bisect.md" || fail "bisect.md does not show the skipped commit"
    # The subjects' markup is escaped, and the HTML parses as XML.
    ! grep -q '<b>drop</b>' "$scratch/culprit-out/bisect.html" || fail "bisect.html does not escape a subject"
    ! grep -q '<b>drop</b>' "$scratch/culprit-out/bisect.md" || fail "bisect.md does not escape a subject"
    /usr/bin/python3 -c 'import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])' \
      "$scratch/culprit-out/bisect.html" || fail "bisect.html is not well-formed"
    # Builds ran as nobody, and are kept by commit.
    [ "$(stat -c %U "$scratch/culprit-out/builds/$slow/build/prog")" = nobody ] || fail "the build ran as root"
    grep -q '^failed' "$scratch/culprit-out/builds/$broken.status" || fail "no failed build status for the broken commit"
    echo "bisect: ${slow:0:12} named, ${broken:0:12} skipped"
    ;;
  no-repro)
    # This suite runs the program through a script beside it: ${suite_dir}
    # must name the suite's directory, not where bisect writes its copy.
    printf 'exec "$1"\n' >"$repo/perf/run.sh"
    sed 's|"argv": \["${BUILD_DIR}/prog"\]|"argv": ["sh", "${suite_dir}/run.sh", "${BUILD_DIR}/prog"]|' \
      "$repo/perf/suite.json" >"$repo/perf/suite-dir.json"
    grep -q 'suite_dir' "$repo/perf/suite-dir.json" || fail "the suite with \${suite_dir} was not written"
    code=0; suite=$repo/perf/suite-dir.json bisect same --good "$good" --bad "$(commit 9)" || code=$?
    [ $code -eq 0 ] || fail "bisect exited $code"
    grep -q "could not reproduce" "$scratch/same.log" || fail "no \"could not reproduce\""
    /usr/bin/python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["outcome"] == "could not reproduce" and not r["steps"], r["outcome"]' \
      "$scratch/same-out/bisect.json" || fail "bisect.json"
    echo "bisect: comment-only range not reproduced"
    ;;
  bad-input)
    expect() {  # expect CODE PATTERN NAME ARGS...: exit CODE and one line matching PATTERN on stderr
      local want=$1 pattern=$2 name=$3
      shift 3
      local code=0
      bisect "$name" "$@" || code=$?
      [ $code -eq "$want" ] || fail "$name: exit $code, not $want"
      grep -q "$pattern" "$scratch/$name.log" || fail "$name: no \"$pattern\""
      [ "$(grep -c 'perfgate: error' "$scratch/$name.log")" -eq 1 ] || fail "$name: not one error line"
    }
    mkdir -p "$scratch/plain"
    bisect_repo=$scratch/plain expect 2 "not a git repository" not-repo --good "$good" --bad "$bad"
    expect 2 "no-such-commit: not a commit" unknown --good no-such-commit --bad "$bad"
    expect 2 "is not an ancestor" swapped --good "$bad" --bad "$good"
    expect 2 "no scenario \"nope\"" no-scenario --good "$good" --bad "$bad" --check nope/workload.cpu_time
    build_cmd="exit 4" expect 2 "failed on both endpoints" never-builds --good "$good" --bad "$bad"
    code=0; bisect plan --good "$good" --bad "$bad" --dry-run || code=$?
    [ $code -eq 0 ] || fail "--dry-run exited $code"
    grep -q "23 commits from ${good:0:12} to ${bad:0:12}: about 5 build-and-compare steps" "$scratch/plan.log" ||
      fail "--dry-run does not print the plan"
    [ ! -e "$scratch/plan-out/builds" ] || fail "--dry-run built something"
    echo "bisect: bad input refused, dry run planned"
    ;;
  *) fail "unknown mode $mode" ;;
esac
