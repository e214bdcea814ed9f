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
status=0
ctest --output-on-failure --timeout 900 "$@" || status=$?
if [ "$status" -ne 0 ] && [ -f Testing/Temporary/LastTest.log ]; then
  # Repeat the failed tests' output at the end, where CI logs are read
  # (the last 60 lines of each, after ctest's summary).
  echo "==== output of the failed tests ===="
  awk '
    function flush() {
      if (failed) { print "---- " name; n = count < 60 ? count : 60; for (i = count - n + 1; i <= count; i++) print buf[i] }
      count = 0; failed = 0
    }
    /^[0-9]+\/[0-9]+ Testing: / { flush(); name = $3 }
    /^Test Failed\./ { failed = 1 }
    { buf[++count] = $0 }
    END { flush() }
  ' Testing/Temporary/LastTest.log
fi
exit "$status"
