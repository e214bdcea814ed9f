#!/usr/bin/env bash
# The pull-request gate spread over a pool of runners, as separate processes
# on this host: a suite of four scenarios on the downstream project
# (tests/e2e/downstream_project.sh), of which a pull request slows one. The
# unsharded gate and the gate as two shards (ci/pr-gate.sh --shard K/2, each
# building and running both sides) joined by ci/pr-gate.sh --merge-shards 2
# must agree: exit 1, the slowed scenario's check the only regression, every
# scenario reported once. A shard that crashes (its perfgate killed by a
# signal) or is missing makes the merged gate exit 3, naming the shard.
#   tests/e2e/pr_gate_sharded_test.sh PERFGATE_BINARY SOURCE_DIR
# Exit 77 (skip) without root; under CI=true that fails.
set -euo pipefail
perfgate=$1
source_dir=$(cd "$2" && pwd)
source "$source_dir/tests/e2e/downstream_project.sh"
start_downstream_gate_test

# A steady second program beside the project's, and the four-scenario suite,
# on a base of their own; the pull request slows `work` only.
git checkout -qb sharded-base main
cat >steady.c <<'C'
#include <stdint.h>
#include <stdio.h>
int main(void) {
  uint64_t h = 1;
  for (long i = 0; i < 20000000; i++) h = h * 6364136223846793005ull + 1442695040888963407ull;
  printf("%llu\n", (unsigned long long)h);
  return 0;
}
C
echo 'cc -O2 -o build/steady steady.c' >>build.sh
/usr/bin/python3 - <<'PY'
import json
check = {"metric": "workload.cpu_time", "statistic": "value", "type": "regression", "max_regression_pct": 8}
def scenario(name, program):
    return {"name": name, "workload": {"kind": "command", "argv": ["${BUILD_DIR}/" + program]}, "warmup": 1,
            "repetitions": 12, "timeout_s": 60, "checks": [check]}
suite = {"name": "downstream-sharded",
         "scenarios": [scenario("mix", "work")] + [scenario(f"steady-{i}", "steady") for i in (1, 2, 3)]}
json.dump(suite, open("perf/sharded.json", "w"), indent=2)
PY
git add -A
git commit -qm "A steady program, and a suite of four scenarios"
git checkout -qb sharded-slow
sed -i 's/#define ROUNDS 600 /#define ROUNDS 720 /' work.c
git commit -qam "Mix a fifth more rounds"

gate() {  # gate NAME [pr-gate options]: exit status of ci/pr-gate.sh
  local name=$1
  shift
  set +e
  bash "$source_dir/ci/pr-gate.sh" --repo "$repo" --base sharded-base --head sharded-slow --suite perf/sharded.json \
    --build-cmd "sh build.sh" --build-dir build --perfgate "$perfgate" --out "$scratch/$name" \
    --work "$scratch/$name-work" "$@" >"$scratch/$name.log" 2>&1
  local code=$?
  set -e
  echo "$name: exit $code"
  return $code
}

# The scenarios and the regressed checks of a results.json, one line.
verdicts() {
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
names = sorted(s["name"] for s in r["scenarios"])
regressed = sorted(s["name"] + "/" + c["spec"]["name"] for s in r["scenarios"] for c in s["checks"]
                   if c["verdict"] == "regression")
print("scenarios:", " ".join(names), "| regressed:", " ".join(regressed) or "none")
PY
}

code=0; gate whole || code=$?
[ $code -eq 1 ] || fail "the unsharded gate exited $code, not 1"
code=0; gate shard-1 --shard 1/2 || code=$?
[ $code -le 1 ] || fail "shard 1/2 exited $code"
code=0; gate shard-2 --shard 2/2 || code=$?
[ $code -le 1 ] || fail "shard 2/2 exited $code"
grep -q '"shard": "1/2"' "$scratch/shard-1/results.json" || fail "shard 1's results do not say which shard they are"
code=0
bash "$source_dir/ci/pr-gate.sh" --merge-shards 2 --perfgate "$perfgate" --out "$scratch/merged" \
  "$scratch/shard-1" "$scratch/shard-2" >"$scratch/merge.log" 2>&1 || code=$?
[ $code -eq 1 ] || fail "the merged gate exited $code, not 1"
whole=$(verdicts "$scratch/whole/results.json")
merged=$(verdicts "$scratch/merged/results.json")
echo "unsharded: $whole"
echo "merged:    $merged"
[ "$whole" = "scenarios: mix steady-1 steady-2 steady-3 | regressed: mix/workload.cpu_time.value" ] ||
  fail "the unsharded gate did not fail the slowed scenario alone"
[ "$merged" = "$whole" ] || fail "the sharded gate's verdicts differ from the unsharded gate's"
grep -q '<!-- perfgate-pr-gate -->' "$scratch/merged/pr-comment.md" || fail "the merged gate wrote no PR comment"
/usr/bin/python3 - "$scratch/merged/junit.xml" <<'PY' || fail "the merged JUnit does not hold every scenario once"
import sys, xml.etree.ElementTree as ET
cases = [c.get("classname") + "/" + c.get("name") for c in ET.parse(sys.argv[1]).getroot().iter("testcase")]
assert len(cases) == len(set(cases)) == 4, cases
PY

# A shard whose perfgate crashes leaves no results: the merge exits 3 and names it.
cat >"$scratch/crashing-perfgate" <<'SH'
#!/bin/sh
kill -SEGV $$
SH
chmod +x "$scratch/crashing-perfgate"
code=0; gate crashed --shard 2/2 --perfgate "$scratch/crashing-perfgate" || code=$?
[ $code -ne 0 ] || fail "the crashed shard exited 0"
code=0
bash "$source_dir/ci/pr-gate.sh" --merge-shards 2 --perfgate "$perfgate" --out "$scratch/merged-crash" \
  "$scratch/shard-1" "$scratch/crashed" >"$scratch/merge-crash.log" 2>&1 || code=$?
[ $code -eq 3 ] || fail "the gate with a crashed shard exited $code, not 3"
grep -q 'shard 2/2' "$scratch/merge-crash.log" || fail "the merge does not name the missing shard"
grep -q '<!-- perfgate-pr-gate -->' "$scratch/merged-crash/pr-comment.md" || fail "no comment for the failed merge"
echo "sharded pr gate: the same verdicts as unsharded ($merged); a crashed shard fails the gate (exit 3)"
