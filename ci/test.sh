#!/usr/bin/env bash
# Builds perfgate and runs every test (unit and, as root, BPF integration
# tests) on a fresh Debian 12 machine. Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."

bash ci/install-deps.sh

BUILD_DIR="${BUILD_DIR:-build}"
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPERFGATE_WERROR=ON
cmake --build "$BUILD_DIR" -j"$(nproc)"
cd "$BUILD_DIR"
ctest --output-on-failure --timeout 900 "$@"
