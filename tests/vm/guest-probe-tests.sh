# Runs inside tests/vm/run.sh's virtual machine (busybox sh), from the source
# checkout's path: what tests/vm/probe-tests.sh checks on each kernel.
# $1: the build directory. Every step must pass; the first failure ends it.
set -eu
build="$1"
fail() {
  echo "vm-probe-tests: FAILED: $*"
  exit 1
}
step() { echo "vm-probe-tests: $*"; }

step "a disk at /var/tmp (the block and reclaim tests' scratch directory)"
mkdir -p /var/tmp
[ -e /var/run ] || ln -s /run /var/run
mke2fs /dev/vda > /dev/null 2>&1 || fail "mke2fs /dev/vda"
mount -t ext4 /dev/vda /var/tmp || fail "mount /dev/vda on /var/tmp"

step "perfgate doctor"
"$build/perfgate" doctor || fail "perfgate doctor"

step "perfgate probes: fentry and kprobe work, the hooks with function variants chose fentry"
"$build/perfgate" probes > /tmp/probes.txt || fail "perfgate probes"
cat /tmp/probes.txt
grep -q '^  fentry  *yes' /tmp/probes.txt || fail "perfgate probes: fentry is not supported"
grep -q '^  kprobe  *yes' /tmp/probes.txt || fail "perfgate probes: kprobe is not supported"
# One hook of every probe with function variants (docs/kernels.md).
for hook in sys_enter sched_process_fork sched_process_exec mm_vmscan_memcg_reclaim_begin tcp_probe block_rq_issue \
  irq_handler_entry; do
  grep -q "hook $hook  *fentry" /tmp/probes.txt || fail "perfgate probes: $hook is not on fentry"
done

# FunctionAttachTypes/*: every probe with fentry and kprobe variants forced
# to each (syscalls, pagefault, lifecycle, reclaim, tcp, biolat, irq); the
# lifetime tests (*ProbeLifetime): each probe on the attach types it chooses here (fentry
# where it has them), every program unloaded after detach.
step "probe tests with each attach type forced"
PERFGATE_TEST_FUNCTION_ATTACH=1 "$build/tests/perfgate_integration_tests" \
  --gtest_filter="${PERFGATE_VM_GTEST_FILTER:-FunctionAttachTypes/*:AttachTypes/SyscallsProbe.*:*ProbeLifetime.*-*DeliberatelyBroken*}" \
  || fail "probe tests"

if [ "$(uname -m)" = x86_64 ]; then
  step "a probe whose fentry program is broken on purpose fails its test"
  if PERFGATE_TEST_FUNCTION_ATTACH=1 "$build/tests/perfgate_integration_tests" \
    --gtest_filter='FunctionAttachTypes/DeliberatelyBrokenFentry.*' > /tmp/broken.txt 2>&1; then
    cat /tmp/broken.txt
    fail "the broken fentry program passed its test"
  fi
  grep -A4 'Failure' /tmp/broken.txt | head -n 5
  grep -q 'FAILED  \] FunctionAttachTypes/DeliberatelyBrokenFentry.*/fentry' /tmp/broken.txt ||
    fail "the broken fentry program's test did not run"
  # On the count it got wrong, not on a plan that cannot load.
  if ! grep -q 'getppid_calls' /tmp/broken.txt || grep -q 'C++ exception' /tmp/broken.txt; then
    cat /tmp/broken.txt
    fail "the broken fentry program's test failed for another reason than its count"
  fi
fi

step "the smoke suite, its probes on their first choice"
rm -rf /tmp/smoke
"$build/perfgate" run "$PWD/workloads/examples/smoke.json" --reps 3 --out /tmp/smoke || fail "smoke suite"
grep -o '"attach_type": *"[a-z_]*"' /tmp/smoke/results.json | sort | uniq -c
grep -q '"attach_type": *"fentry"' /tmp/smoke/results.json || fail "no hook of the smoke suite on fentry"
step "all passed"
