#!/usr/bin/env bash
# Builds perfgate and runs every test (unit and, as root, BPF integration
# tests) on a fresh Debian 12 machine, twice: built normally and with
# ASan+UBSan; under CI=true also the parsers' fuzz targets for a bounded
# time. Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each phase's wall time, printed as it ends, to keep CI's duration in view.
phase() { echo "ci: $1 done after $SECONDS s"; }

bash ci/install-deps.sh
phase "dependencies"

# The compiler cache (ccache) keyed by paths relative to the checkout, so a
# fresh clone elsewhere on the same machine hits what an earlier run compiled.
# On a machine without a cache (or with CCACHE_DISABLE=1) it costs a few
# seconds and changes nothing else.
launcher=()
if command -v ccache > /dev/null; then
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
export PERFGATE_CMAKE_LAUNCHER="${launcher[*]}"

BUILD_DIR="${BUILD_DIR:-build}"
# The same tests again, built with AddressSanitizer and UndefinedBehaviorSanitizer.
ASAN_BUILD_DIR="${ASAN_BUILD_DIR:-$BUILD_DIR-asan}"

# Repeats the failed tests' output at the end, where CI logs are read (the
# last 60 lines of each, after ctest's summary). $1: the build dir, $2: what it is.
print_failed_tests() {
  [ -f "$1/Testing/Temporary/LastTest.log" ] || return 0
  echo "==== output of the failed tests${2:+ ($2)} ===="
  awk '
    function flush() {
      if (failed) { print "---- " name; n = count < 60 ? count : 60; for (i = count - n + 1; i <= count; i++) print buf[i] }
      count = 0; failed = 0
    }
    /^[0-9]+\/[0-9]+ Testing: / { flush(); name = $3 }
    /^Test Failed\./ { failed = 1 }
    { buf[++count] = $0 }
    END { flush() }
  ' "$1/Testing/Temporary/LastTest.log"
}

# ctest -j: the unit tests run side by side; the integration tests are
# RUN_SERIAL (they load BPF programs and time workloads), so each runs alone.
# Order: the sanitizer build and the fuzz targets first, the normal ctest
# last, so a CI log ends with ctest's own account of what ran.
# Line tables only (-g1): stack traces and symbols stay, and the build takes
# about a third less time than with full debug info.
# Tests and benchmarks on, whatever an earlier configure of the same build
# dir chose (the main job's configures without them). The unit tests are
# built and run in the sanitizer build only: they are pure user-space code,
# which the sanitizers check, and they were two fifths of the normal build's
# compiling. The normal build holds the integration tests (BPF, timing).
cmake -S . -B "$BUILD_DIR" "${launcher[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPERFGATE_WERROR=ON \
  -DPERFGATE_BUILD_TESTS=ON -DPERFGATE_BUILD_UNIT_TESTS=OFF -DPERFGATE_BUILD_BENCH=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
cmake --build "$BUILD_DIR" -j"$(nproc)"
phase "build"

# The same tests built with AddressSanitizer and UndefinedBehaviorSanitizer.
# Any sanitizer report fails the test that triggered it (halt_on_error);
# leaks are reported at perfgate's exit. -Og: optimized enough for the
# sanitizers (their docs advise -O1), and it compiles about 40 % faster than
# -O1 with them (nlohmann::json code most of all).
#
# Under the sanitizers ctest runs every unit test and every integration test
# but those that only repeat, more slowly, code paths the others already run
# there; they run in the normal ctest. Left out (ASAN_SKIP):
# - the probes' tests on the raw_tp and tracepoint attach types: the same
#   user-space code as their tp_btf runs, which stay;
# - repeated-run acceptance and simulation: the verdict simulations (thousands
#   of simulated suites through the statistics code), the 20-run A/A smoke
#   suite, the 10-run evidence acceptance without frame pointers, the why's
#   planted causes;
# - tests whose extra time goes to programs other than perfgate: the
#   browser's rendering of the report, Prometheus' queries of the dashboard,
#   the package's build and install, git's commits of the bisect test
#   repository, the memory antagonists' and cold starts' A/B runs (the
#   cold-start adapter's own tests stay).
ASAN_SKIP='^AttachTypes/.*/(raw_tp|tracepoint)|^VerdictSimulation\.|^GateTest\.SmokeSuiteAaAgainstFreshBaseline|^EvidenceWithoutFramePointers\.SlowerFunctionIsNamedFirst|^WhyTest\.'
ASAN_SKIP+='|^ReportInBrowser\.|^GrafanaDashboardTest\.|^package\.|^e2e\.bisect\.'
ASAN_SKIP+='|^ColdStartTest\.(Antagonist|PlantedDelay)|^AdaptersTest\.CameraWithMemoryAntagonist'
# The triage e2e repeats the PR gate's path (which stays) five times; its
# stage's code runs under the sanitizers in its unit and malformed-input tests.
ASAN_SKIP+='|^e2e\.pr_gate_triage$'
# The instrumented A/B runs spend their time in Valgrind, not in perfgate.
ASAN_SKIP+='|^InstrumentedAb\.'
asan_status=0
cmake -S . -B "$ASAN_BUILD_DIR" "${launcher[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPERFGATE_WERROR=ON -DPERFGATE_SANITIZE=ON \
  -DPERFGATE_BUILD_TESTS=ON -DPERFGATE_BUILD_UNIT_TESTS=ON -DPERFGATE_BUILD_BENCH=OFF \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-Og -g1 -DNDEBUG"
cmake --build "$ASAN_BUILD_DIR" -j"$(nproc)"
phase "ASan+UBSan build"

(cd "$ASAN_BUILD_DIR" &&
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure --no-tests=error --timeout 900 -j"$(nproc)" -E "$ASAN_SKIP" "$@") ||
  asan_status=$?
phase "ASan+UBSan ctest"
if [ "$asan_status" -ne 0 ]; then print_failed_tests "$ASAN_BUILD_DIR" "ASan+UBSan build"; fi

# The parsers' fuzz targets, a bounded time each (ci/fuzz.sh). Not beside
# the tests: other work's CPU time marks their repetitions tainted, which
# turns budgets inconclusive and costs the timing tests their retakes.
fuzz_status=0
if [ "${CI:-}" = true ] || [ "${PERFGATE_FUZZ:-0}" = 1 ]; then
  bash ci/fuzz.sh || fuzz_status=$?
  phase "fuzzing"
fi

# Debian's own kernels (6.1 cloud, 6.12) booted in QEMU: the probes' fentry
# and kprobe variants, which this host cannot load, tested where they work
# (tests/vm/, docs/kernels.md). One boot per kernel.
vm_status=0
BUILD_DIR="$BUILD_DIR" bash tests/vm/probe-tests.sh || vm_status=$?
phase "VM probe tests"

status=0
phase "all but the normal ctest"
# --no-tests=error: a build that found no test fails rather than passing empty.
(cd "$BUILD_DIR" && ctest --output-on-failure --no-tests=error --timeout 900 -j"$(nproc)" "$@") || status=$?
if [ "$status" -ne 0 ]; then print_failed_tests "$BUILD_DIR"; fi
if [ "$asan_status" -ne 0 ]; then
  echo "The ASan+UBSan ctest failed (its failed tests are listed above)."
  [ "$status" -ne 0 ] || status=$asan_status
fi
if [ "$vm_status" -ne 0 ]; then
  echo "The probe tests in a virtual machine failed (see \"vm-probe-tests:\" above)."
  [ "$status" -ne 0 ] || status=1
fi
if [ "$fuzz_status" -ne 0 ]; then
  echo "A fuzz target found a crash, a hang or a leak (see \"fuzz:\" above)."
  [ "$status" -ne 0 ] || status=1
fi
exit "$status"
