#!/usr/bin/env bash
# The arm64 job (a job of its own: ci/project/github/arm64.yml): cross-builds
# perfgate, its workload programs, its .deb and the integration tests for
# arm64 (packaging/arm64/build.sh --deb --tests); boots Debian's arm64
# kernels in qemu-system-aarch64 through tests/vm/run.sh: on each, the probe
# tests and the smoke suite (tests/vm/probe-tests.sh --arch arm64: 6.1
# without fentry, kprobes forced; 6.12 with both), then on 6.1 perfgate
# --version, doctor, probes, the smoke suite and the .deb installed
# (tests/vm/guest-arm64-smoke.sh); the arm64 guest as a device over ssh
# driven by this host's perfgate (tests/vm/device-ssh-test.sh --arch arm64);
# and the kernel A/B in arm64 guests (tests/vm/kernel-ab-test.sh --arch arm64).
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
bash ci/install-deps.sh
bash ci/install-deps-arm64.sh
export BUILD_DIR="${BUILD_DIR:-build-arm64}"
packaging/arm64/build.sh --deb --tests
echo "ci-arm64: built after $((SECONDS - start)) s"
# PERFGATE_ARM64_KERNELS: the kernels of the probe tests (default: 6.1 and 6.12 cloud).
# shellcheck disable=SC2086
tests/vm/probe-tests.sh --arch arm64 ${PERFGATE_ARM64_KERNELS:-}
echo "ci-arm64: probe tests passed after $((SECONDS - start)) s"
deb=$(ls -t "$BUILD_DIR"/perfgate_*_arm64.deb | sed -n '1p')
build=$(realpath "$BUILD_DIR")
tests/vm/run.sh --arch arm64 --timeout "${PERFGATE_VM_TIMEOUT:-1500}" \
  --file "$build/perfgate" --file "$build/pg-smoke" --file "$PWD/workloads/examples/smoke.json" \
  --file "$PWD/tests/vm/guest-arm64-smoke.sh" --file "$(realpath "$deb")" \
  "${PERFGATE_ARM64_KERNEL:-linux-image-cloud-arm64}" -- sh "$PWD/tests/vm/guest-arm64-smoke.sh" "$build" "$(realpath "$deb")"
echo "ci-arm64: the arm64 guest's checks passed after $((SECONDS - start)) s"
# The arm64 guest as a device over ssh (docs/devices.md): this host's
# perfgate of the same commit drives it with --target ssh://, the guest's
# own arm64 perfgate measures (tests/vm/device-ssh-test.sh --arch arm64).
host_build="${HOST_BUILD_DIR:-build-host}"
launcher=()
if command -v ccache > /dev/null; then
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$host_build" -G Ninja "${launcher[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DPERFGATE_BUILD_TESTS=OFF -DPERFGATE_BUILD_BENCH=OFF
cmake --build "$host_build" -j"$(nproc)" --target perfgate
BUILD_DIR="$host_build" PERFGATE_DEVICE_PERFGATE="$build/perfgate" PERFGATE_DEVICE_TEST_LOOP="${PERFGATE_DEVICE_TEST_LOOP:-10000}" \
  bash tests/vm/device-ssh-test.sh --arch arm64 "${PERFGATE_ARM64_KERNEL:-linux-image-cloud-arm64}"
echo "ci-arm64: the arm64 device over ssh passed after $((SECONDS - start)) s"
# The kernel A/B in arm64 guests (docs/kernel-ab.md): A/A of the 6.1 cloud
# kernel, 6.1 against 6.12, bad input; this host's perfgate boots them, the
# guests run the arm64 one.
BUILD_DIR="$host_build" PERFGATE_GUEST_PERFGATE="$build/perfgate" bash tests/vm/kernel-ab-test.sh --arch arm64
echo "ci-arm64: passed after $((SECONDS - start)) s"
