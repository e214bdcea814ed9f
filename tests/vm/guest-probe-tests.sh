# Runs inside tests/vm/run.sh's virtual machine (busybox sh), from the source
# checkout's path: what tests/vm/probe-tests.sh checks on each kernel.
# $1: the build directory; $2 (arm64): iproute2's unpacked arm64 package,
# whose ip and tc go to /usr/sbin. Every step must pass; the first failure
# ends it.
set -eu
build="$1"
iproute2="${2:-}"
fail() {
  echo "vm-probe-tests: FAILED: $*"
  exit 1
}
step() { echo "vm-probe-tests: $*"; }

# /var/tmp is where the tests and perfgate's own workloads (fio, micro, the
# canary's reads) put their scratch files by default, so it must be a disk.
# Mounted there, the disk would hide what the initramfs holds under it (a
# checkout under /var/tmp, copied at its host path): that goes to the disk
# first.
step "a disk at /var/tmp (the block and reclaim tests' scratch directory)"
mkdir -p /var/tmp /mnt/scratch
[ -e /var/run ] || ln -s /run /var/run
mke2fs /dev/vda > /dev/null 2>&1 || fail "mke2fs /dev/vda"
mount -t ext4 /dev/vda /mnt/scratch || fail "mount /dev/vda"
cp -a /var/tmp/. /mnt/scratch/ || fail "copy what the initramfs holds under /var/tmp to the disk"
umount /mnt/scratch || fail "umount /dev/vda"
mount -t ext4 /dev/vda /var/tmp || fail "mount /dev/vda on /var/tmp"
[ -x "$build/perfgate" ] || fail "$build/perfgate is not there after the disk was mounted on /var/tmp"

if [ -n "$iproute2" ]; then
  cp "$iproute2/bin/ip" "$iproute2/sbin/tc" /usr/sbin/ || fail "ip and tc from $iproute2"
fi

# The attach types of kernel functions this kernel must have: fentry and
# kprobes, except on arm64 before 6.4, which has no ftrace direct calls for
# BPF trampolines (Debian's arm64 6.1: attaching fentry fails with
# ENOTSUPP). There the forced-fentry cases are not instantiated, the hooks
# choose tp_btf, and `perfgate probes` must say fentry does not work.
function_attach=1 first_choice=fentry
if [ "$(uname -m)" = aarch64 ]; then
  major=$(uname -r | cut -d. -f1) minor=$(uname -r | cut -d. -f2)
  if [ "$major" -lt 6 ] || { [ "$major" -eq 6 ] && [ "$minor" -lt 4 ]; }; then
    function_attach=kprobe first_choice=tp_btf
  fi
fi
step "function attach types tested: $function_attach; hooks with function variants on $first_choice"

step "perfgate doctor"
"$build/perfgate" doctor || fail "perfgate doctor"

step "perfgate probes: kprobe works, fentry where expected, the hooks with function variants chose $first_choice"
"$build/perfgate" probes > /tmp/probes.txt || fail "perfgate probes"
cat /tmp/probes.txt
if [ "$first_choice" = fentry ]; then
  grep -q '^  fentry  *yes' /tmp/probes.txt || fail "perfgate probes: fentry is not supported"
else
  grep -q '^  fentry  *no' /tmp/probes.txt || fail "perfgate probes: fentry works on a kernel expected without it"
fi
grep -q '^  kprobe  *yes' /tmp/probes.txt || fail "perfgate probes: kprobe is not supported"
# One hook of every probe with function variants (docs/kernels.md).
for hook in sys_enter sched_process_fork sched_process_exec mm_vmscan_memcg_reclaim_begin tcp_probe block_rq_issue \
  irq_handler_entry; do
  grep -q "hook $hook  *$first_choice" /tmp/probes.txt || fail "perfgate probes: $hook is not on $first_choice"
done

# FunctionAttachTypes/*: every probe with fentry and kprobe variants forced
# to each (syscalls, pagefault, lifecycle, reclaim, tcp, biolat, irq); the
# lifetime tests (*ProbeLifetime): each probe on the attach types it chooses here (fentry
# where it has them), every program unloaded after detach.
# The tcp probe's tracepoint programs too, since their records differ from
# one kernel to the next (the build machine's kernel tests only its own),
# where tcp_probe's record has the socket's address: Debian's 6.1 has none,
# so that variant cannot tell whose an RTT sample is, and does not load there.
tcp_tracepoint=
if grep -q skaddr /sys/kernel/tracing/events/tcp/tcp_probe/format 2>/dev/null; then
  tcp_tracepoint=":AttachTypes/TcpProbe.*/tracepoint"
fi
step "probe tests with each attach type forced"
PERFGATE_TEST_FUNCTION_ATTACH=$function_attach "$build/tests/perfgate_integration_tests" \
  --gtest_filter="${PERFGATE_VM_GTEST_FILTER:-FunctionAttachTypes/*:AttachTypes/SyscallsProbe.*:*ProbeLifetime.*$tcp_tracepoint-*DeliberatelyBroken*}" \
  || fail "probe tests"

if [ "$first_choice" = fentry ]; then
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
grep -q "\"attach_type\": *\"$first_choice\"" /tmp/smoke/results.json || fail "no hook of the smoke suite on $first_choice"
step "all passed"
