#!/usr/bin/env bash
# Builds the parsers' libFuzzer targets (clang, ASan + UBSan) in a build dir
# of their own and runs each for a bounded time, starting from the seed
# corpus checked in under tests/fuzz/corpus/<target>/ (left unchanged: new
# inputs go to a scratch copy). Fails when any target finds a crash, a hang
# or a leak; the input that did it is kept under $FUZZ_BUILD_DIR/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/../.."

FUZZ_BUILD_DIR="${FUZZ_BUILD_DIR:-build-fuzz}"
FUZZ_SECONDS="${FUZZ_SECONDS:-20}"
TARGETS=(suite baseline results fio gbench unixbench command_lines)

read -r -a launcher <<< "${PERFGATE_CMAKE_LAUNCHER:-}"
CC=clang CXX=clang++ cmake -S . -B "$FUZZ_BUILD_DIR" "${launcher[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPERFGATE_FUZZ=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DPERFGATE_BUILD_TESTS=OFF -DPERFGATE_BUILD_BENCH=OFF
cmake --build "$FUZZ_BUILD_DIR" -j"$(nproc)" --target perfgate_fuzzers

work="$FUZZ_BUILD_DIR/fuzz-run"
rm -rf "$work"
mkdir -p "$FUZZ_BUILD_DIR/artifacts"
# One target per CPU at a time: each libFuzzer process is single-threaded, so
# every target still gets its FUZZ_SECONDS on a CPU of its own, and 7 targets
# on 2 CPUs take 4 rounds rather than 7.
FUZZ_JOBS="${FUZZ_JOBS:-$(nproc)}"

# Runs target $1, its log in $work/$1.log and its exit status in $work/$1.status.
fuzz_one() {
  local t="$1" rc=0
  mkdir -p "$work/$t"
  # -timeout: one input taking 10 s is a hang. -rss_limit_mb: a runaway allocation is a finding.
  "$FUZZ_BUILD_DIR/tests/fuzz/fuzz_$t" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$FUZZ_BUILD_DIR/artifacts/$t-" \
    "$work/$t" "tests/fuzz/corpus/$t" > "$work/$t.log" 2>&1 || rc=$?
  echo "$rc" > "$work/$t.status"
}

running=0
for t in "${TARGETS[@]}"; do
  if [ "$running" -ge "$FUZZ_JOBS" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  echo "fuzz: $t for ${FUZZ_SECONDS} s"
  fuzz_one "$t" &
  running=$((running + 1))
done
wait || true

failed=()
for t in "${TARGETS[@]}"; do
  log="$work/$t.log"
  if [ "$(cat "$work/$t.status" 2> /dev/null)" = 0 ]; then
    # The last status line: executions, coverage, corpus size.
    grep -E '^#[0-9]+' "$log" | tail -n 1 | sed "s/^/fuzz: $t: /"
    grep -E '^stat::number_of_executed_units' "$log" | sed "s/^/fuzz: $t: /" || true
  else
    echo "fuzz: $t FAILED; the end of its log:"
    tail -n 60 "$log"
    failed+=("$t")
  fi
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz: findings in ${failed[*]}; inputs in $FUZZ_BUILD_DIR/artifacts/"
  exit 1
fi
echo "fuzz: all ${#TARGETS[@]} targets ran ${FUZZ_SECONDS} s without a finding"
