#!/usr/bin/env bash
# tests/vm's own tests, on one kernel package (default: Debian 12's cloud
# kernel): run.sh hands back the guest command's output and exit status and
# ends a guest that hangs; the console carries questions, answers and files
# (tests/vm/console.sh); and the probe tests in the virtual machine fail on
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

# The console both ways (tests/vm/console.sh): two questions answered in
# order while the guest waits, and a file with bytes no text line carries.
. tests/vm/console.sh
console_dir=$(mktemp -d)
trap 'rm -rf "$console_dir"' EXIT
mkfifo "$console_dir/in"
exec 3<> "$console_dir/in"
: > "$console_dir/log"
echo_back() { echo "heard $1"; }
rc=0
tests/vm/run.sh --console-in "$console_dir/in" --file "$PWD/tests/vm/console.sh" "$kernel" -- sh -c \
  ". '$PWD/tests/vm/console.sh'; a=\$(console_ask one); b=\$(console_ask two 2); echo \"answers: \$a, \$b\"; \
  printf 'x\\000y\\377\\n' > /tmp/bytes; console_send bytes /tmp/bytes" > "$console_dir/log" 2>&1 &
console_serve "$console_dir/log" "$console_dir/in" $! echo_back
wait $! || rc=$?
console_receive bytes "$console_dir/log" "$console_dir/bytes"
[ "$rc" -eq 0 ] && grep -q '^answers: heard one, heard two 2' <<< "$(tr -d '\r' < "$console_dir/log")" &&
  [ "$(od -An -tx1 "$console_dir/bytes" | tr -d ' ')" = 780079ff0a ] && r=ok || r=bad
check "$r" "the guest's questions are answered in order and a file comes out whole (exit $rc)"
exec 3>&-

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
