#!/usr/bin/env bash
# The probe tests on Debian's own kernels, where fentry and kprobes work (the
# project's build machines have neither): for each kernel package, boots it
# with tests/vm/run.sh and runs tests/vm/guest-probe-tests.sh there.
#
#   tests/vm/probe-tests.sh [--arch arm64] [KERNEL_PACKAGE]...
#
# Default kernels: Debian 12's cloud kernel (6.1) and its 6.12 backport, of
# the host's architecture or, with --arch arm64, of arm64 (its cloud
# kernels; perfgate cross-built by packaging/arm64/build.sh --tests).
# BUILD_DIR (default build, build-arm64 for arm64) must hold perfgate,
# pg-smoke and the integration tests. Exits non-zero when any kernel fails;
# prints each kernel's seconds.
#
# The guest gets what the probe tests need besides BPF: a disk (biolat's
# direct reads, reclaim's page cache), iproute2's ip and tc and the modules
# of the tcp tests' link (veth, tbf, clsact, cls_bpf), and the modules of the
# disk and its file system where the kernel has them as modules.
set -euo pipefail
cd "$(dirname "$0")/../.."
arch=host
if [ "${1:-}" = --arch ]; then
  arch="$2"
  shift 2
fi
kernels=("$@")
case "$arch" in
  host)
    build=$(realpath "${BUILD_DIR:-build}")
    [ ${#kernels[@]} -gt 0 ] || kernels=(linux-image-cloud-amd64 linux-image-6.12-amd64)
    ip=$(command -v ip) && tc=$(command -v tc) ||
      { echo "vm-probe-tests: ip and tc are missing (apt-get install iproute2)" >&2; exit 2; }
    arch_args=() guest_args=() timeout_s=900
    ;;
  arm64)
    build=$(realpath "${BUILD_DIR:-build-arm64}")
    [ ${#kernels[@]} -gt 0 ] || kernels=(linux-image-cloud-arm64 linux-image-6.12-cloud-arm64)
    # iproute2's arm64 ip and tc, unpacked from its package (it cannot be
    # installed beside the host's); their libraries are the host's :arm64
    # ones (ci/install-deps-arm64.sh). The guest copies them to /usr/sbin,
    # where the tcp tests look first.
    cache="${PERFGATE_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/perfgate-vm}"
    iproute2="$cache/iproute2-arm64"
    if [ ! -x "$iproute2/sbin/tc" ]; then
      mkdir -p "$cache/debs"
      deb=$(find "$cache/debs" -maxdepth 1 -name 'iproute2_*_arm64.deb' -print -quit)
      if [ -z "$deb" ]; then
        (cd "$cache/debs" && apt-get download -q iproute2:arm64 > /dev/null 2>&1) ||
          { echo "vm-probe-tests: apt-get download iproute2:arm64 failed" >&2; exit 2; }
        deb=$(find "$cache/debs" -maxdepth 1 -name 'iproute2_*_arm64.deb' -print -quit)
      fi
      rm -rf "$iproute2.tmp"
      dpkg-deb -x "$deb" "$iproute2.tmp" && mv -T "$iproute2.tmp" "$iproute2"
    fi
    ip="$iproute2/bin/ip" tc="$iproute2/sbin/tc"
    # TCG emulates arm64 more slowly: the 6.1 kernel's run took 19 minutes
    # on a loaded 2-CPU host.
    arch_args=(--arch arm64) timeout_s=2400
    guest_args=("$iproute2")
    ;;
  *) echo "vm-probe-tests: unknown architecture $arch (arm64, or none for the host's)" >&2; exit 2 ;;
esac
for f in perfgate pg-smoke tests/perfgate_integration_tests; do
  [ -x "$build/$f" ] || { echo "vm-probe-tests: $build/$f is missing (build it first)" >&2; exit 2; }
done
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
  tests/vm/run.sh ${arch_args[@]+"${arch_args[@]}"} --timeout "${PERFGATE_VM_TIMEOUT:-$timeout_s}" \
    --disk 1024 "${modules[@]}" --file "$ip" --file "$tc" \
    --file "$build/perfgate" --file "$build/pg-smoke" --file "$build/tests/perfgate_integration_tests" \
    --file "$PWD/workloads/examples/smoke.json" --file "$PWD/tests/vm/guest-probe-tests.sh" \
    "$kernel" -- sh "$PWD/tests/vm/guest-probe-tests.sh" "$build" ${guest_args[@]+"${guest_args[@]}"} || rc=$?
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
