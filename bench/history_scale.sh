#!/usr/bin/env bash
# The history at a pool's scale, on SQLite and on PostgreSQL side by side:
# fills each with a year of nightly runs of a pool of runners (bulk SQL) and
# prints the medians of one `history add`, a --baseline-from-history pick,
# one suite's trend and 16 concurrent adds (bench/history_scale.cpp).
#   bench/history_scale.sh BUILD_DIR [history_scale options...]
# e.g. bench/history_scale.sh build --nights 365 --rounds 5
# PostgreSQL runs in a throw-away cluster (tests/harness/postgres_cluster.sh);
# both histories live in a temporary directory removed at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"

build=${1:?usage: bench/history_scale.sh BUILD_DIR [history_scale options...]}
shift
driver=$(find_exe "$build" history_scale)
[[ -n $driver ]] || { echo "no history_scale under $build (configure with -DPERFGATE_BUILD_BENCH=ON)" >&2; exit 2; }

work=$(mktemp -d /tmp/perfgate-history-scale.XXXXXX)
cluster="$here/../tests/harness/postgres_cluster.sh"
cleanup() { "$cluster" stop "$work/state" > /dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
"$cluster" start "$work/state"
socket=$(cat "$work/state/socket_dir")
psql -q -h "$socket" -U postgres -d postgres -c "CREATE DATABASE history_scale"

"$driver" --postgres "postgresql://postgres@/history_scale?host=$socket" --fill "$@"
echo "PostgreSQL: database size $(psql -qAt -h "$socket" -U postgres -d postgres -c "SELECT pg_size_pretty(pg_database_size('history_scale'))")"
"$driver" --sqlite "$work/history.sqlite" --fill "$@"
echo "SQLite: file size $(du -h "$work/history.sqlite" | cut -f1)"
