#!/usr/bin/env bash
# What each program of some probes costs per run on the events of threads
# the probe does not count (in workload scope: nearly every event of the
# machine), next to an empty program ("r0 = 0; exit") on the same hooks: the
# fixed cost of a program run there, which no body can go below.
#
# probe_attach_driver attaches the probes in workload scope around a
# tracked `sleep`, plus the empty programs, with BPF run-time statistics on;
# over WINDOW seconds of whatever else runs on the machine the script reads
# every new program's run_cnt and run_time_ns (bpftool) and prints ns per
# run. These include the statistics' own two clock reads (the empty
# program's figure is mostly those): compare a probe's program with the
# empty one on its hook, not with zero. Run it on a machine with other work
# going on (a build, a benchmark), or the hooks see few events.
#
#   bench/probe_run_cost.sh BUILD_DIR [PROBES=runqlat,offcpu,sched,kmem,syscalls] [WINDOW=5] [TRACEPOINT...]
#
# TRACEPOINTs are the raw tracepoints to put empty programs on (default:
# sched_switch sched_wakeup mm_page_alloc kmem_cache_alloc sys_enter).
set -euo pipefail

build=${1:?usage: $0 BUILD_DIR [PROBES] [WINDOW] [TRACEPOINT...]}
probes=${2:-runqlat,offcpu,sched,kmem,syscalls}
window=${3:-5}
shift $(($# < 3 ? $# : 3))
tracepoints=("$@")
((${#tracepoints[@]})) || tracepoints=(sched_switch sched_wakeup mm_page_alloc kmem_cache_alloc sys_enter)
source "$(dirname "$0")/common.sh"
driver=$(find_exe "$build" probe_attach_driver)
[[ -x $driver ]] || { echo "build probe_attach_driver in $build first" >&2; exit 2; }
command -v bpftool >/dev/null || { echo "needs bpftool" >&2; exit 2; }
require_root
require_python3

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
empties=()
for tracepoint in "${tracepoints[@]}"; do empties+=(--empty "$tracepoint"); done

bpftool prog show --json >"$tmp/before.json"
"$driver" "$probes" --stats --scope workload "${empties[@]}" -- sleep $((window + 4)) >/dev/null 2>"$tmp/driver.err" &
driver_pid=$!
sleep 2
bpftool prog show --json >"$tmp/start.json"
sleep "$window"
bpftool prog show --json >"$tmp/end.json"
wait "$driver_pid" || { cat "$tmp/driver.err" >&2; exit 3; }

python3 - "$tmp" <<'EOF'
import json, os, sys
tmp = sys.argv[1]
def programs(name):
    return {p["id"]: p for p in json.load(open(os.path.join(tmp, name)))}
old = programs("before.json")
start, end = programs("start.json"), programs("end.json")
rows = []
for pid, p in end.items():
    if pid in old or pid not in start:
        continue
    runs = p.get("run_cnt", 0) - start[pid].get("run_cnt", 0)
    if runs <= 0:
        continue
    ns = (p.get("run_time_ns", 0) - start[pid].get("run_time_ns", 0)) / runs
    rows.append((p.get("name", "?"), pid, runs, ns))
print(f"{'program':28} {'runs':>10} {'ns/run':>8}")
for name, _, runs, ns in sorted(rows, key=lambda r: (r[0] != "pg_empty", r[1])):
    print(f"{name:28} {runs:10d} {ns:8.1f}")
print("pg_empty rows follow the TRACEPOINT order; ns/run includes the statistics' two clock reads")
EOF
