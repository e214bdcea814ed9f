#!/usr/bin/env bash
# What a scenario's probes cost per run on the scenario's own events, next to
# an empty program ("r0 = 0; exit") on the same hooks: how far each probe's
# body is above the least any program there costs. probe_run_cost.sh asks the
# same on other threads' events of a busy machine, where the hooks fire in
# tight succession and stay in cache; a workload's own events are often
# sparse (a cold start switches a few thousand times a second), and there a
# run costs several times more.
#
# `perfgate run` runs the scenario with BPF run-time statistics on for the
# whole run (not only in its warm-ups), while probe_attach_driver holds empty
# programs on the TRACEPOINTs. bpftool reads every program's run_cnt and
# run_time_ns a few times a second; the last reading before the programs go
# is kept. Every ns/run includes the statistics' own two clock reads, as the
# empty program's shows: compare a probe's programs with the empty one on
# their hook. The empty programs are attached first, so on each event they
# run first.
#
#   bench/probe_floor.sh BUILD_DIR SUITE SCENARIO [REPS=5] TRACEPOINT...
#
# e.g. bench/probe_floor.sh build workloads/camera-startup/camera.json
#      cold-start 5 sched_switch sched_wakeup mm_page_alloc
set -euo pipefail

build=${1:?usage: $0 BUILD_DIR SUITE SCENARIO [REPS] TRACEPOINT...}
suite=${2:?usage: $0 BUILD_DIR SUITE SCENARIO [REPS] TRACEPOINT...}
scenario=${3:?usage: $0 BUILD_DIR SUITE SCENARIO [REPS] TRACEPOINT...}
reps=${4:-5}
shift $(($# < 4 ? $# : 4))
tracepoints=("$@")
((${#tracepoints[@]})) || { echo "name at least one TRACEPOINT for the empty programs" >&2; exit 2; }
source "$(dirname "$0")/common.sh"
perfgate=$(find_exe "$build" perfgate)
driver=$(find_exe "$build" probe_attach_driver)
[[ -x $perfgate && -x $driver ]] || { echo "build perfgate and probe_attach_driver in $build first" >&2; exit 2; }
command -v bpftool >/dev/null || { echo "needs bpftool" >&2; exit 2; }
require_root
require_python3
require_bpf_stats_off

tmp=$(mktemp -d)
holder=
reader=
cleanup() {
  [[ -n $reader ]] && kill "$reader" 2>/dev/null
  [[ -n $holder ]] && kill "$holder" 2>/dev/null
  sysctl -qw kernel.bpf_stats_enabled=0
  rm -rf "$tmp"
}
trap cleanup EXIT
empties=()
for tracepoint in "${tracepoints[@]}"; do empties+=(--empty "$tracepoint"); done

bpftool prog show --json >"$tmp/before.json"
# The driver holds the empty programs until its stdin closes.
mkfifo "$tmp/hold"
"$driver" none --scope system "${empties[@]}" <"$tmp/hold" >"$tmp/driver.out" 2>"$tmp/driver.err" &
holder=$!
exec 3>"$tmp/hold"
for _ in $(seq 50); do grep -q ready "$tmp/driver.out" 2>/dev/null && break; sleep 0.1; done
grep -q ready "$tmp/driver.out" || { cat "$tmp/driver.err" >&2; exit 3; }
sysctl -qw kernel.bpf_stats_enabled=1
(
  i=0
  while :; do
    bpftool prog show --json >"$tmp/reading.tmp" 2>/dev/null && mv "$tmp/reading.tmp" "$tmp/reading.$((i++ % 2))"
    sleep 0.2
  done
) &
reader=$!
status=0
"$perfgate" run "$suite" --scenario "$scenario" --reps "$reps" --out "$tmp/out" --baseline-dir "$tmp/baselines" \
  --quiet >/dev/null 2>&1 || status=$?
kill "$reader"
reader=
exec 3>&-
wait "$holder" || true
holder=
(( status <= 1 )) || { echo "perfgate run exited $status" >&2; exit 3; }

python3 - "$tmp" "$scenario" <<'EOF'
import glob, json, os, sys
tmp, scenario = sys.argv[1], sys.argv[2]
old = {p["id"] for p in json.load(open(os.path.join(tmp, "before.json")))}
last = {}
for name in glob.glob(os.path.join(tmp, "reading.*")):
    try:
        programs = json.load(open(name))
    except ValueError:
        continue
    for p in programs:
        if p["id"] in old or p.get("run_cnt", 0) == 0:
            continue
        if p["id"] not in last or p["run_cnt"] > last[p["id"]]["run_cnt"]:
            last[p["id"]] = p
cpu = 0.0
results = json.load(open(os.path.join(tmp, "out", "results.json")))
for s in results["scenarios"]:
    if s["name"] == scenario:
        cpu = sum(r["metrics"]["workload.cpu_time"]["value"] for r in s["repetitions"]
                  if "workload.cpu_time" in r.get("metrics", {}))
print(f"{'program':28} {'runs':>10} {'ns/run':>8} {'ms':>8}")
rows = sorted(last.values(), key=lambda p: (p.get("name") != "pg_empty", p["id"]))
for p in rows:
    runs, ns = p["run_cnt"], p["run_time_ns"]
    print(f"{p.get('name', '?'):28} {runs:10d} {ns / runs:8.1f} {ns / 1e6:8.2f}")
print(f"pg_empty rows follow the TRACEPOINT order; ns/run includes the statistics' two clock reads;")
print(f"runs are of the whole run (set-up and warm-ups too); the measured repetitions used "
      f"{cpu * 1e3:.1f} ms of CPU")
EOF
