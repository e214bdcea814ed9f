#!/usr/bin/env bash
# Builds perfgate and runs every test (unit and, as root, BPF integration
# tests) on a fresh Debian 12 machine, twice: built normally and with
# ASan+UBSan; under CI=true also the parsers' fuzz targets for a bounded
# time. Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/../.."

# Each phase's end, printed as it ends to keep CI's duration in view: the
# seconds since the start and how busy the phase kept the CPUs (/proc/stat:
# the time they were neither idle nor waiting for I/O, of all their time).
cpu_times() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9; exit}' /proc/stat; }
read -r busy_before total_before < <(cpu_times)
phase() {
  local busy total
  read -r busy total < <(cpu_times)
  echo "ci: $1 done after $SECONDS s (CPUs $((100 * (busy - busy_before) / (total - total_before + 1))) % busy)"
  busy_before=$busy total_before=$total
}

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

# Ninja for a build dir configured here first (one configured earlier keeps its generator).
generator() { [ -f "$1/CMakeCache.txt" ] || echo "-GNinja"; }

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

# The ten longest tests of a build's ctest, to see where a slow run's time
# went (ctest's own record: seconds averaged over that build dir's runs).
longest_tests() {
  local cost="$1/Testing/Temporary/CTestCostData.txt"
  [ -f "$cost" ] || return 0
  echo "ci: the longest tests of the $2:"
  # sed, not head: head leaves early, and under pipefail sort's SIGPIPE
  # would become the script's exit status (141).
  # A line is "NAME RUNS SECONDS"; a name may hold spaces.
  sed -E '/^---/,$d; s/^(.*) [0-9]+ ([0-9.]+)$/\2 \1/' "$cost" | sort -rn | sed -n '1,10p' |
    while read -r seconds name; do printf '  %7.1f s  %s\n' "$seconds" "$name"; done
}

# Each test runs once, in one of two builds: the normal build (the code that
# ships) runs the tests labelled normal_build, the ASan+UBSan build all the
# others; tests/CMakeLists.txt says which and why, beside each group of tests
# ("Which build runs a test").
# ctest -j: the unit and integration tests run side by side, two at a time,
# but for the integration tests tests/CMakeLists.txt keeps alone (those that
# measure the probes' cost or rest on a small timing change), beside unit
# tests only (those that count what is loaded on the machine: the ctest
# resource "bpf") or apart from each other (a shared cache file, port or
# target binary).
# Order: the normal build's tests, the sanitizer build, the kernels in a VM
# with the fuzz targets beside them, then the VM tests of ctest (label vm)
# alone, the sanitizer build's ctest last, so a
# CI log ends with the account of what most of the tests did.
# Line tables only (-g1): stack traces and symbols stay, and the build takes
# about a third less time than with full debug info.
# Tests and benchmarks on, whatever an earlier configure of the same build
# dir chose (the main job's configures without them). The unit tests are
# built in the sanitizer build only.
cmake -S . -B "$BUILD_DIR" $(generator "$BUILD_DIR") "${launcher[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPERFGATE_WERROR=ON \
  -DPERFGATE_BUILD_TESTS=ON -DPERFGATE_BUILD_UNIT_TESTS=OFF -DPERFGATE_BUILD_BENCH=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
cmake --build "$BUILD_DIR" -j"$(nproc)"
phase "build"

# --no-tests=error: a build that found no test fails rather than passing empty.
status=0
(cd "$BUILD_DIR" && ctest --output-on-failure --no-tests=error --timeout 900 -j"$(nproc)" -L normal_build "$@") ||
  status=$?
phase "normal build's ctest"
longest_tests "$BUILD_DIR" "normal build"
if [ "$status" -ne 0 ]; then print_failed_tests "$BUILD_DIR" "normal build"; fi

# The sanitizer build (what it runs is below). Not beside the ctests: other
# work's CPU time marks their repetitions tainted, which turns budgets
# inconclusive and costs the timing tests their retakes. -Og: optimized
# enough for the sanitizers (their docs advise -O1), and it compiles about
# 40 % faster than -O1 with them (nlohmann::json code most of all).
asan_build_status=0
{
  cmake -S . -B "$ASAN_BUILD_DIR" $(generator "$ASAN_BUILD_DIR") "${launcher[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPERFGATE_WERROR=ON \
    -DPERFGATE_SANITIZE=ON -DPERFGATE_BUILD_TESTS=ON -DPERFGATE_BUILD_UNIT_TESTS=ON -DPERFGATE_BUILD_BENCH=OFF \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-Og -g1 -DNDEBUG" &&
    cmake --build "$ASAN_BUILD_DIR" -j"$(nproc)"
} > "$BUILD_DIR/asan-build.log" 2>&1 || asan_build_status=$?
if [ "$asan_build_status" -ne 0 ]; then
  tail -n 60 "$BUILD_DIR/asan-build.log"
  echo "The ASan+UBSan build failed (the end of its log is above)."
fi
phase "ASan+UBSan build"

# Debian's own kernels (6.1 cloud, 6.12) booted in QEMU, side by side: the
# probes' fentry and kprobe variants, which this host cannot load, tested
# where they work (tests/vm/, docs/kernels.md). Under CI, the parsers' fuzz
# targets (ci/project/fuzz.sh: their clang build, then a bounded time each) run
# beside them one at a time: the guests leave about a third of the CPUs'
# time idle (240 of 352 CPU-seconds), and with a fuzz target beside them
# they took 218 s instead of 176 s while fuzzing's 98 s disappeared.
fuzz_pid=
if [ "${CI:-}" = true ] || [ "${PERFGATE_FUZZ:-0}" = 1 ]; then
  FUZZ_JOBS="${FUZZ_JOBS:-1}" bash ci/project/fuzz.sh > "$BUILD_DIR/fuzz.log" 2>&1 &
  fuzz_pid=$!
fi
vm_status=0
BUILD_DIR="$BUILD_DIR" bash tests/vm/probe-tests.sh || vm_status=$?
phase "VM probe tests"
fuzz_status=0
if [ -n "$fuzz_pid" ]; then
  wait "$fuzz_pid" || fuzz_status=$?
  cat "$BUILD_DIR/fuzz.log"
  phase "fuzzing"
fi
# The VM tests of ctest (label vm), one after the other: a slower host
# simulated by capping a guest's QEMU (tests/vm/slow-host-test.sh), a
# guest as a device over ssh (tests/vm/device-ssh-test.sh), and the kernel
# A/B of two kernels booted in turn (tests/vm/kernel-ab-test.sh). Alone, after the
# guests and the fuzz targets: each times a guest against a baseline it
# recorded minutes before, and work beside it would change the host's speed
# in between.
slow_host_status=0
(cd "$BUILD_DIR" && ctest --output-on-failure --no-tests=error -L '^vm$' --timeout 1800) || slow_host_status=$?
phase "VM ctest"
[ "$asan_build_status" -eq 0 ] || exit "$asan_build_status"

# The sanitizer build's ctest. Any sanitizer report fails the test that
# triggered it (halt_on_error); leaks are reported at perfgate's exit.
asan_status=0
(cd "$ASAN_BUILD_DIR" &&
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure --no-tests=error --timeout 900 -j"$(nproc)" -LE normal_build "$@") ||
  asan_status=$?
phase "ASan+UBSan ctest"
longest_tests "$ASAN_BUILD_DIR" "ASan+UBSan build"
if [ "$asan_status" -ne 0 ]; then print_failed_tests "$ASAN_BUILD_DIR" "ASan+UBSan build"; fi

# The failed tests' names once more at the very end, where a CI log's tail is
# read: the normal build's output is far above the sanitizer build's ctest.
failed_names() {
  local log="$1/Testing/Temporary/LastTestsFailed.log"
  [ -f "$log" ] && cut -d: -f2- "$log" | sed 's/^/  /'
}
if [ "$status" -ne 0 ]; then
  echo "The normal build's ctest failed (their output is above, after its summary):"
  failed_names "$BUILD_DIR" || true
fi
if [ "$asan_status" -ne 0 ]; then
  echo "The ASan+UBSan build's ctest failed:"
  failed_names "$ASAN_BUILD_DIR" || true
fi
[ "$status" -ne 0 ] || status=$asan_status
if [ "$vm_status" -ne 0 ]; then
  echo "The probe tests in a virtual machine failed (see \"vm-probe-tests:\" above)."
  [ "$status" -ne 0 ] || status=1
fi
if [ "$slow_host_status" -ne 0 ]; then
  echo "The VM tests of ctest failed (see \"vm-slow-host:\", \"vm-device-ssh:\" and \"vm-kernel-ab:\" above)."
  [ "$status" -ne 0 ] || status=1
fi
if [ "$fuzz_status" -ne 0 ]; then
  echo "A fuzz target found a crash, a hang or a leak (see \"fuzz:\" above)."
  [ "$status" -ne 0 ] || status=1
fi
exit "$status"
