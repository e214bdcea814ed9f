#!/usr/bin/env bash
# The arm64 job (a job of its own: ci/github/arm64.yml): cross-builds
# perfgate, its workload programs and its .deb for arm64
# (packaging/arm64/build.sh), boots Debian's arm64 kernel in
# qemu-system-aarch64 through tests/vm/run.sh and runs there perfgate
# --version, doctor, probes and the smoke suite, then installs the .deb.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
bash ci/install-deps.sh
bash ci/install-deps-arm64.sh
export BUILD_DIR="${BUILD_DIR:-build-arm64}"
packaging/arm64/build.sh --deb
echo "ci-arm64: built after $((SECONDS - start)) s"
deb=$(ls -t "$BUILD_DIR"/perfgate_*_arm64.deb | head -n 1)
build=$(realpath "$BUILD_DIR")
tests/vm/run.sh --arch arm64 --timeout "${PERFGATE_VM_TIMEOUT:-1500}" \
  --file "$build/perfgate" --file "$build/pg-smoke" --file "$PWD/workloads/examples/smoke.json" \
  --file "$PWD/tests/vm/guest-arm64-smoke.sh" --file "$(realpath "$deb")" \
  "${PERFGATE_ARM64_KERNEL:-linux-image-cloud-arm64}" -- sh "$PWD/tests/vm/guest-arm64-smoke.sh" "$build" "$(realpath "$deb")"
echo "ci-arm64: passed after $((SECONDS - start)) s"
