#!/usr/bin/env bash
# The main job: builds perfgate and runs the default suite against this
# host's own numbers. The checked-in baseline (baselines/) was recorded on
# another machine, and another machine's times are no baseline for this one
# (perfgate would call every timing check inconclusive), so the first run on
# a host records a baseline of its own first, says so, and then gates
# against it; later runs reuse it (HOST_BASELINES, default
# $BUILD_DIR/this-host-baselines; the canary in every repetition tells a
# host that got slower since). Options after the command go to `perfgate
# run`; with --baseline-dir among them, that directory is used as given.
# Exit code is perfgate's (0 pass, 1 regression, 2 bad input,
# 3 infrastructure). Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/../.."

bash ci/install-deps.sh

# A build dir of its own: the test command's build (build/) has tests and
# benchmarks on, and either command may run first, second or alone.
BUILD_DIR="${BUILD_DIR:-build-main}"
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPERFGATE_BUILD_TESTS=OFF -DPERFGATE_BUILD_BENCH=OFF
cmake --build "$BUILD_DIR" -j"$(nproc)" --target perfgate pg-smoke pg-camera pg-micro

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
suite="${SUITE:-workloads/examples/smoke.json}"
out=(--out "${OUT_DIR:-perfgate-out}") own_baselines=1
for arg in "$@"; do
  case "$arg" in
    --out | --out=*) out=() ;;
    --baseline-dir | --baseline-dir=* | --baseline-from-history | --baseline-from-history=*) own_baselines=0 ;;
  esac
done
[ $own_baselines -eq 1 ] || exec $SUDO "$BUILD_DIR/perfgate" run "$suite" "${out[@]}" "$@"
host_baselines="${HOST_BASELINES:-$BUILD_DIR/this-host-baselines}"
name=$(sed -n 's/^ *"name": *"\([^"]*\)".*/\1/p' "$suite" | sed -n '1p')
if [ -z "$name" ] || [ ! -d "$host_baselines/$name" ]; then
  echo "run-default-suite: the checked-in baseline of $suite (baselines/) was recorded on another machine;" \
    "first a baseline of this host, in $host_baselines" >&2
  $SUDO "$BUILD_DIR/perfgate" baseline record "$suite" --baseline-dir "$host_baselines" --quiet
  echo "run-default-suite: now the suite against this host's baseline, as a pull request's run would be" >&2
else
  echo "run-default-suite: against this host's baseline in $host_baselines (recorded by an earlier run;" \
    "remove the directory to record a new one)" >&2
fi
exec $SUDO "$BUILD_DIR/perfgate" run "$suite" --baseline-dir "$host_baselines" "${out[@]}" "$@"
