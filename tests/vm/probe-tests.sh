#!/usr/bin/env bash
# The probe tests on Debian's own kernels, where fentry and kprobes work (the
# project's build machines have neither): for each kernel package, boots it
# with tests/vm/run.sh and runs tests/vm/guest-probe-tests.sh there.
#
#   tests/vm/probe-tests.sh [KERNEL_PACKAGE]...
#
# Default kernels: Debian 12's cloud kernel (6.1) and its 6.12 backport.
# BUILD_DIR (default build) must hold perfgate, pg-smoke and the integration
# tests. Exits non-zero when any kernel fails; prints each kernel's seconds.
#
# The guest gets what the probe tests need besides BPF: a disk (biolat's
# direct reads, reclaim's page cache), iproute2's ip and tc and the modules
# of the tcp tests' link (veth, tbf, clsact, cls_bpf), and the modules of the
# disk and its file system where the kernel has them as modules.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(realpath "${BUILD_DIR:-build}")
kernels=("$@")
[ ${#kernels[@]} -gt 0 ] || kernels=(linux-image-cloud-amd64 linux-image-6.12-amd64)
for f in perfgate pg-smoke tests/perfgate_integration_tests; do
  [ -x "$build/$f" ] || { echo "vm-probe-tests: $build/$f is missing (build it first)" >&2; exit 2; }
done
ip=$(command -v ip) && tc=$(command -v tc) ||
  { echo "vm-probe-tests: ip and tc are missing (apt-get install iproute2)" >&2; exit 2; }
modules=()
for m in virtio_pci virtio_blk ext4 crc32c_generic veth sch_tbf sch_ingress cls_bpf; do modules+=(--module "$m"); done

# The kernels boot side by side, up to PERFGATE_VM_JOBS (default: the CPUs;
# QEMU's TCG runs each guest on one host thread), each into a log of its own
# that is printed whole once it ended.
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
# Writes the exit status to $2.
run_kernel() {
  local kernel="$1" start=$SECONDS rc=0
  tests/vm/run.sh --timeout "${PERFGATE_VM_TIMEOUT:-900}" \
    --disk 1024 "${modules[@]}" --file "$ip" --file "$tc" \
    --file "$build/perfgate" --file "$build/pg-smoke" --file "$build/tests/perfgate_integration_tests" \
    --file "$PWD/workloads/examples/smoke.json" --file "$PWD/tests/vm/guest-probe-tests.sh" \
    "$kernel" -- sh "$PWD/tests/vm/guest-probe-tests.sh" "$build" || rc=$?
  echo "vm-probe-tests: $kernel: exit $rc after $((SECONDS - start)) s"
  echo "$rc" > "$2"
}
jobs_max="${PERFGATE_VM_JOBS:-$(nproc)}"
for i in "${!kernels[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
  run_kernel "${kernels[$i]}" "$logs/$i.rc" > "$logs/$i.log" 2>&1 &
done
wait
status=0
for i in "${!kernels[@]}"; do
  cat "$logs/$i.log"
  [ "$(cat "$logs/$i.rc" 2> /dev/null)" = 0 ] || status=1
done
echo "vm-probe-tests: ${#kernels[@]} kernels in $SECONDS s"
exit "$status"
