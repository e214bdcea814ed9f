#!/usr/bin/env bash
# Runs the integration tests (or the ctest selection given) beside a
# constant one-CPU burner, the way a shared CI runner loads the host: a busy
# host may cost the gate repetitions, never its verdicts. Use it before
# calling any change to verdicts or timing done.
#
#   ci/project/under-load.sh [BUILD_DIR] [ctest arguments...]   # default: build, -L integration
#   ROUNDS=20 ci/project/under-load.sh build -R '^EvidenceRun\.'  # each selected test 20 times
#
# The burner is `sha256sum /dev/zero` at nice 0 (BURNER overrides it); the
# host's load average is printed before and after, since other work on the
# machine adds to it. Exits with ctest's status.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR="${1:-build}"
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- -L integration
ROUNDS="${ROUNDS:-1}"
BURNER="${BURNER:-sha256sum /dev/zero}"

[ -d "$BUILD_DIR" ] || { echo "under-load: no build directory $BUILD_DIR (build first: see ci/project/test.sh)" >&2; exit 2; }

# shellcheck disable=SC2086 # the burner is a command line
$BURNER > /dev/null &
burner=$!
trap 'kill "$burner" 2>/dev/null || true' EXIT
echo "under-load: burner \"$BURNER\" (pid $burner); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
status=0
(cd "$BUILD_DIR" && ctest --output-on-failure --no-tests=error --timeout 900 --repeat "until-fail:$ROUNDS" "$@") ||
  status=$?
echo "under-load: load average after: $(cut -d' ' -f1-3 /proc/loadavg); ctest exit $status"
exit "$status"
