#!/usr/bin/env bash
# Nights on a slow host, from real runs: NIGHTS runs of the smoke suite
# (workloads/examples/smoke.json), each added to a fresh history and followed
# by the trend that records the alerts, as the nightly does. Nights FIRST_CAP
# .. FIRST_CAP+4 run beside a CPU-burning loop pinned to the same CPU as
# perfgate and its workload (taskset), the others alone on that CPU; from
# night STEP on the smoke loop is 10 % slower (SMOKE_SLOWDOWN=1.10). Prints
# each night's host factor and the alert groups the history ends with; the
# nightly's rule (docs/ci.md, "Nights on a slow host") should leave exactly
# one, at the step. Root (the suite loads BPF).
#
#   bench/nightly_slow_host.sh BUILD_DIR [NIGHTS [FIRST_CAP [STEP [CPU]]]]
#   (defaults: 30 nights, capped from night 8, the step at night 20, CPU 1;
#   KEEP=1 keeps the history, the runs and the trend, and says where)
set -euo pipefail
build=$(cd "${1:?usage: bench/nightly_slow_host.sh BUILD_DIR [NIGHTS [FIRST_CAP [STEP [CPU]]]]}" && pwd)
nights=${2:-30} first_cap=${3:-8} step=${4:-20} cpu=${5:-1}
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
perfgate=$build/perfgate
[ -x "$perfgate" ] || { echo "no perfgate in $build" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "run as root: the suite loads BPF programs" >&2; exit 2; }
work=$(mktemp -d /tmp/perfgate-slow-host.XXXXXX)
burner=""
cleanup() {
  [ -z "$burner" ] || kill "$burner" 2>/dev/null || true
  if [ "${KEEP:-0}" = 1 ]; then echo "kept in $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
db=$work/history.sqlite

for ((night = 0; night < nights; night++)); do
  capped=0
  if [ "$night" -ge "$first_cap" ] && [ "$night" -lt $((first_cap + 5)) ]; then capped=1; fi
  slowdown=1.0
  [ "$night" -lt "$step" ] || slowdown=1.10
  if [ $capped -eq 1 ]; then
    taskset -c "$cpu" sh -c 'while :; do :; done' &
    burner=$!
  fi
  SMOKE_SLOWDOWN=$slowdown taskset -c "$cpu" "$perfgate" run "$source_dir/workloads/examples/smoke.json" \
    --out "$work/night-$night" --quiet >"$work/night-$night.log" 2>&1 || true
  if [ -n "$burner" ]; then
    kill "$burner" 2>/dev/null || true
    wait "$burner" 2>/dev/null || true
    burner=""
  fi
  "$perfgate" history add "$work/night-$night/results.json" --db "$db" --commit "night-$night" --branch main \
    >/dev/null
  "$perfgate" trend --db "$db" --branch main --out "$work/trend" >"$work/trend-$night.log" 2>&1
  /usr/bin/python3 - "$work/night-$night/results.json" "$night" "$capped" "$slowdown" <<'PY'
import json, statistics, sys
results, night, capped, slowdown = sys.argv[1:]
reps = json.load(open(results))["scenarios"][0]["repetitions"]
def values(name):
    return [r["metrics"][name]["value"] for r in reps if name in r["metrics"]]
wall = statistics.median(values("workload.wall_time"))
loop = statistics.median(values("smoke.loop_time"))
cpu = values("host.canary.cpu")
memory = values("host.canary.memory")
print(f"night {night:>2}{' capped' if capped == '1' else '       '} slowdown {slowdown}: wall {wall * 1e3:6.1f} ms, "
      f"loop {loop * 1e3:6.1f} ms, canary cpu mean {statistics.mean(cpu) * 1e3:5.2f} ms "
      f"(median {statistics.median(cpu) * 1e3:5.2f}), memory mean {statistics.mean(memory):5.2f} s/GiB")
PY
done

echo "alert groups:"
"$perfgate" alerts list --db "$db" || true
for id in $("$perfgate" alerts list --db "$db" | sed -n 's/^#\([0-9]*\).*/\1/p'); do
  "$perfgate" alerts show "$id" --db "$db" | grep -E '^\| ' || true
done
