#!/usr/bin/env bash
# tests/vm's own tests, on one kernel package (default: Debian 12's cloud
# kernel): run.sh hands back the guest command's output and exit status and
# ends a guest that hangs; and the probe tests in the virtual machine fail on
# a probe whose fentry program is broken (tests/integration/broken_fentry_test.cpp).
# BUILD_DIR (default build) must hold the integration tests.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(realpath "${BUILD_DIR:-build}")
kernel="${1:-linux-image-cloud-amd64}"
failures=0
check() {
  if [ "$1" = ok ]; then
    echo "vm-harness-test: ok: $2"
  else
    echo "vm-harness-test: FAILED: $2"
    failures=$((failures + 1))
  fi
}

rc=0
out=$(tests/vm/run.sh "$kernel" -- sh -c 'echo "guest says $((6 * 7))"; exit 7') || rc=$?
[ "$rc" -eq 7 ] && grep -q '^guest says 42' <<< "$(tr -d '\r' <<< "$out")" && r=ok || r=bad
check "$r" "the command's output and exit status come back (exit $rc)"

rc=0
tests/vm/run.sh --timeout 30 "$kernel" -- sleep 1000 > /dev/null || rc=$?
[ "$rc" -eq 124 ] && r=ok || r=bad
check "$r" "a guest that does not end is stopped at --timeout (exit $rc)"

rc=0
out=$(PERFGATE_TEST_FUNCTION_ATTACH=1 tests/vm/run.sh --file "$build/tests/perfgate_integration_tests" "$kernel" -- \
  "$build/tests/perfgate_integration_tests" --gtest_filter='FunctionAttachTypes/DeliberatelyBrokenFentry.*') || rc=$?
out=$(tr -d '\r' <<< "$out")
# It must fail on the count it got wrong, not on anything else (a plan that
# cannot load, an exception).
grep -q 'FAILED  \] FunctionAttachTypes/DeliberatelyBrokenFentry.CountsEveryGetppidOfTheChild/fentry' <<< "$out" &&
  grep -q 'getppid_calls' <<< "$out" && ! grep -q 'C++ exception' <<< "$out" &&
  [ "$rc" -eq 1 ] && r=ok || r=bad
check "$r" "the probe test of a broken fentry program fails on its count in the VM (exit $rc)"
grep -A3 'getppid_calls' <<< "$out" | head -n 6 || true

[ "$failures" -eq 0 ]
