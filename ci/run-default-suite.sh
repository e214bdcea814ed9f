#!/usr/bin/env bash
# The main job: builds perfgate and runs the default suite against its
# checked-in baseline. Exit code is perfgate's (0 pass, 1 regression,
# 2 bad input, 3 infrastructure). Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."

bash ci/install-deps.sh

# A build dir of its own: the test command's build (build/) has tests and
# benchmarks on, and either command may run first, second or alone.
BUILD_DIR="${BUILD_DIR:-build-main}"
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPERFGATE_BUILD_TESTS=OFF -DPERFGATE_BUILD_BENCH=OFF
cmake --build "$BUILD_DIR" -j"$(nproc)" --target perfgate pg-smoke pg-camera pg-micro

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
exec $SUDO "$BUILD_DIR/perfgate" run "${SUITE:-workloads/examples/smoke.json}" --out "${OUT_DIR:-perfgate-out}" "$@"
