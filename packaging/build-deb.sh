#!/usr/bin/env bash
# Builds the Debian package of perfgate: a release build without tests or
# benchmarks in build-deb/ (BUILD_DIR), then CPack. Prints the package's path.
# Installs what the build needs first.
set -euo pipefail
cd "$(dirname "$0")/.."

bash ci/install-deps.sh >&2
BUILD_DIR="${BUILD_DIR:-build-deb}"
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
  -DPERFGATE_BUILD_TESTS=OFF -DPERFGATE_BUILD_BENCH=OFF >&2
cmake --build "$BUILD_DIR" -j"$(nproc)" >&2
(cd "$BUILD_DIR" && cpack -G DEB >&2)
ls -t "$BUILD_DIR"/perfgate_*.deb | sed -n '1p'
