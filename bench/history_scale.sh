#!/usr/bin/env bash
# The history at a pool's scale, on SQLite and on PostgreSQL side by side:
# fills each with a year of nightly runs of a pool of runners (bulk SQL) and
# prints the medians of one `history add`, a --baseline-from-history pick,
# one suite's trend and 16 concurrent adds (bench/history_scale.cpp).
#   bench/history_scale.sh BUILD_DIR [--before OLD_BUILD_DIR] [history_scale options...]
# e.g. bench/history_scale.sh build --nights 365 --rounds 5
# --before: a before/after comparison on the same data. OLD_BUILD_DIR's
# driver fills the histories (in its schema) and takes one round; each is then
# copied, and OLD's driver measures the original while BUILD_DIR's migrates
# and measures the copy, one after the other, with the load average printed
# before each.
# PostgreSQL runs in a throw-away cluster (tests/harness/postgres_cluster.sh);
# the histories live in a temporary directory removed at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"

usage="usage: bench/history_scale.sh BUILD_DIR [--before OLD_BUILD_DIR] [history_scale options...]"
build=${1:?$usage}
shift
driver=$(find_exe "$build" history_scale)
[[ -n $driver ]] || { echo "no history_scale under $build (configure with -DPERFGATE_BUILD_BENCH=ON)" >&2; exit 2; }
before=
if [[ ${1:-} == --before ]]; then
  [[ -n ${2:-} ]] || { echo "$usage" >&2; exit 2; }
  before=$(find_exe "$2" history_scale)
  [[ -n $before ]] || { echo "no history_scale under $2 (configure with -DPERFGATE_BUILD_BENCH=ON)" >&2; exit 2; }
  shift 2
fi

work=$(mktemp -d /tmp/perfgate-history-scale.XXXXXX)
cluster="$here/../tests/harness/postgres_cluster.sh"
cleanup() { "$cluster" stop "$work/state" > /dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
"$cluster" start "$work/state"
socket=$(cat "$work/state/socket_dir")
sql() { psql -qAt -h "$socket" -U postgres -d postgres -c "$1"; }
sql "CREATE DATABASE history_scale"
url="postgresql://postgres@/history_scale?host=$socket"
load() { echo "$1: load average $(cut -d' ' -f1-3 /proc/loadavg)"; }

if [[ -z $before ]]; then
  "$driver" --postgres "$url" --fill "$@"
  echo "PostgreSQL: database size $(sql "SELECT pg_size_pretty(pg_database_size('history_scale'))")"
  "$driver" --sqlite "$work/history.sqlite" --fill "$@"
  echo "SQLite: file size $(du -h "$work/history.sqlite" | cut -f1)"
  exit 0
fi

"$before" --postgres "$url" --fill "$@" --rounds 1
"$before" --sqlite "$work/history.sqlite" --fill "$@" --rounds 1
sql "CREATE DATABASE history_after TEMPLATE history_scale"
for f in "$work"/history.sqlite*; do cp "$f" "${f/history.sqlite/after.sqlite}"; done
load "before, PostgreSQL" && "$before" --postgres "$url" "$@"
load "after, PostgreSQL" && "$driver" --postgres "${url/history_scale/history_after}" "$@"
load "before, SQLite" && "$before" --sqlite "$work/history.sqlite" "$@"
load "after, SQLite" && "$driver" --sqlite "$work/after.sqlite" "$@"
load "end"
