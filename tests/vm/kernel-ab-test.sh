#!/usr/bin/env bash
# The kernel A/B end to end (perfgate ab --baseline-kernel/--candidate-kernel,
# docs/kernel-ab.md), in QEMU guests of Debian's kernels, on the smoke suite:
#   1. Debian 12's cloud kernel against itself (A/A) passes;
#   2. the same kernel plus a planted module (tests/vm/planted: a kprobe on
#      getppid that spins DELAY us in its own function, built here against
#      Debian's headers) fails, the why naming getppid's time and the
#      evidence's kernel stacks naming pg_planted_delay;
#   3. 6.1 against 6.12 (Debian 12's backports kernel) gives a report that
#      names both kernels and what moved (pass or fail: the test asks for a
#      report, not a verdict);
#   4. a module that is not there is bad input (exit 2) before any boot;
#   5. with --vm-disk, fio's fsync job (workloads/fio) A/A on the guest's
#      own ext4 disk passes, its block I/O measured by the biolat probe.
#
#   tests/vm/kernel-ab-test.sh [--arch arm64]
#
# BUILD_DIR (default build) must hold perfgate. PERFGATE_KERNEL_AB_CASES
# (default "aa planted versions bad disk") picks cases. With --arch arm64
# (the arm64 job, ci/project/arm64.sh) the guests are arm64 ones of
# Debian's arm64 cloud kernels, running PERFGATE_GUEST_PERFGATE (the arm64
# build of this commit, its pg-smoke beside it), one boot a side; the
# cases default to "aa versions bad" (the planted module is x86-64's). Exit 0 when every case
# passed, 1 otherwise; 77 (skip) without root, QEMU or the headers to build
# the module, which fails under CI=true.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(realpath "${BUILD_DIR:-build}")
base_kernel=linux-image-cloud-amd64
new_kernel=linux-image-6.12-amd64
suite=workloads/examples/smoke.json
cases="${PERFGATE_KERNEL_AB_CASES:-aa planted versions bad disk}"
qemu=qemu-system-x86_64
# Options every A/B of the run takes, and the boots a side of the A/A.
arch_options=()
aa_boots=2
if [ "${1:-}" = --arch ]; then
  [ "${2:-}" = arm64 ] || { echo "vm-kernel-ab: --arch takes arm64 (x86_64 is the default)" >&2; exit 2; }
  [ -x "${PERFGATE_GUEST_PERFGATE:-}" ] ||
    { echo "vm-kernel-ab: --arch arm64: PERFGATE_GUEST_PERFGATE must name the arm64 perfgate" >&2; exit 2; }
  base_kernel=linux-image-cloud-arm64
  new_kernel=linux-image-6.12-cloud-arm64
  cases="${PERFGATE_KERNEL_AB_CASES:-aa versions bad}"
  qemu=qemu-system-aarch64
  arch_options=(--vm-arch arm64 --vm-perfgate "$(realpath "$PERFGATE_GUEST_PERFGATE")")
  aa_boots=1
fi
# Under TCG the module adds more than it spins (tests/vm/planted/check.sh:
# about 32 us a call at 20): well beyond the smoke suite's 10 % thresholds.
delay_us=20

. tests/harness/skip.sh vm-kernel-ab
[ -x "$build/perfgate" ] || { echo "vm-kernel-ab: $build/perfgate is missing (build it first)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || skip "the guests' perfgate loads probes as root, and the module's headers install as root"
command -v "$qemu" > /dev/null || skip "$qemu is missing (apt-get install qemu-system-x86 or qemu-system-arm)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
check() {
  if [ "$1" = ok ]; then
    echo "vm-kernel-ab: ok: $2"
  else
    echo "vm-kernel-ab: FAILED: $2"
    failures=$((failures + 1))
  fi
}
# ab NAME [OPTION]...: one kernel A/B of the smoke suite (or of $ab_suite); its exit status in $rc.
ab() {
  local name="$1" start=$SECONDS
  shift
  rc=0
  "$build/perfgate" ab "${ab_suite:-$suite}" --quiet --out "$work/$name" "${arch_options[@]}" "$@" > "$work/$name.log" 2>&1 ||
    rc=$?
  sed "s/^/  $name: /" "$work/$name.log" | grep -v ': perfgate: boot [0-9]*: the ' || true
  echo "vm-kernel-ab: $name took $((SECONDS - start)) s, exit $rc"
}
has() { [ -f "$2" ] && grep -q -- "$1" "$2"; }

for c in $cases; do
  case "$c" in
    aa)
      ab aa --baseline-kernel "$base_kernel" --candidate-kernel "$base_kernel" --boots "$aa_boots"
      boots=$(find "$work/aa/boots" -maxdepth 1 -name '[0-9]*-*.log' ! -name '00-*' | wc -l)
      [ "$rc" -eq 0 ] && [ "$boots" -ge $((2 * aa_boots)) ] && has 'ABBA by boot' "$work/aa/summary.md" && r=ok || r=bad
      check "$r" "A/A of $base_kernel passes, in $boots boots (exit $rc)"
      ;;
    planted)
      ko=$(bash tests/vm/build-planted-module.sh "$base_kernel" "$work/module" | tail -n1) ||
        skip "cannot build the planted module against Debian's headers"
      ab planted --baseline-kernel "$base_kernel" --candidate-kernel "$base_kernel" \
        --candidate-module "$ko delay_us=$delay_us"
      [ "$rc" -eq 1 ] && r=ok || r=bad
      check "$r" "the planted module ($delay_us us on getppid) fails the gate (exit $rc)"
      # The why: its first cause is the time in getppid.
      cause=$(/usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
for s in r["scenarios"]:
    for c in (s.get("explanation") or {}).get("causes", []):
        print(c.get("metric", "")); break
' "$work/planted/results.json" 2> /dev/null | head -n1)
      [ "$cause" = syscalls.time.getppid ] && r=ok || r=bad
      check "$r" "the why names getppid's time first (first cause: ${cause:-none})"
      # "Where the time went": the on-CPU stacks that grew, the module's function first.
      has 'pg\\_planted\\_delay (kernel) self +' "$work/planted/summary.md" && r=ok || r=bad
      check "$r" "the evidence's kernel stacks name the module's function pg_planted_delay"
      grep -A3 '^\*\*Why it regressed' "$work/planted/summary.md" | cut -c1-400 || true
      grep -A2 '^\*\*Where the time went' "$work/planted/summary.md" | cut -c1-400 || true
      ;;
    versions)
      ab versions --baseline-kernel "$base_kernel" --candidate-kernel "$new_kernel" --boots 1
      { [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; } && has '6\.1\.' "$work/versions/summary.md" &&
        has '6\.12\.' "$work/versions/summary.md" && [ -f "$work/versions/junit.xml" ] && r=ok || r=bad
      check "$r" "6.1 against 6.12 gives a report naming both kernels (exit $rc)"
      ;;
    bad)
      ab bad --baseline-kernel "$base_kernel" --candidate-kernel "$base_kernel" --candidate-module "$work/none.ko"
      [ "$rc" -eq 2 ] && [ ! -d "$work/bad/boots" ] && has 'none.ko: no such file' "$work/bad.log" && r=ok || r=bad
      check "$r" "a module that is not there is bad input before any boot (exit $rc)"
      ;;
    disk)
      command -v fio > /dev/null || skip "fio is missing (apt-get install fio)"
      FIO_SIZE=16m ab_suite=workloads/fio/fio.json ab disk --scenario seqwrite-fsync \
        --baseline-kernel "$base_kernel" --candidate-kernel "$base_kernel" --boots 1 --vm-disk 256
      [ "$rc" -eq 0 ] && has '"block.vda.io_latency"' "$work/disk/boots/02-candidate/results.json" &&
        has 'fio.seqwrite-fsync.sync.lat' "$work/disk/summary.md" && r=ok || r=bad
      check "$r" "fio's fsync job on each boot's own disk passes A/A, its block I/O on vda measured (exit $rc)"
      ;;
    *) echo "vm-kernel-ab: unknown case $c" >&2; exit 2 ;;
  esac
done
[ "$failures" -eq 0 ]
