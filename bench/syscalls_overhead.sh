#!/usr/bin/env bash
# Cost of syscall tracing on a getppid loop, in one interleaved A/B run:
# every round times the loop with no probe, under perfgate's syscalls probe
# (system scope) and under libbpf-tools `syscount -L`, so machine drift hits
# all three alike. Prints per-mode medians of ns/call and their ratio to the
# no-probe median. Needs root.
#
#   bench/syscalls_overhead.sh BUILD_DIR [ROUNDS=9] [ITERATIONS=2000000]
set -euo pipefail

build=${1:?usage: $0 BUILD_DIR [ROUNDS] [ITERATIONS]}
rounds=${2:-9}
iterations=${3:-2000000}
loop=$(find "$build" -name getppid_loop -type f -perm -u+x | head -n1)
driver=$(find "$build" -name probe_attach_driver -type f -perm -u+x | head -n1)
syscount=$(command -v syscount || command -v syscount.bpf || true)

[[ -x $loop && -x $driver ]] || { echo "build getppid_loop and probe_attach_driver in $build first" >&2; exit 2; }
[[ -n $syscount ]] || { echo "syscount not found: apt-get install libbpf-tools" >&2; exit 2; }
(( rounds >= 7 )) || { echo "need at least 7 rounds" >&2; exit 2; }
[[ $EUID -eq 0 ]] || { echo "needs root to load BPF programs" >&2; exit 2; }

declare -A samples=([none]="" [perfgate]="" [syscount]="")

time_loop() { "$loop" "$iterations"; }

run_none() { time_loop; }

# The driver prints "ready" once attached and detaches when its stdin closes.
run_perfgate() {
  local line ns
  coproc PG { exec "$driver" syscalls 2>/dev/null; }
  read -r -t 30 -u "${PG[0]}" line || true
  [[ $line == ready ]] || { echo "probe_attach_driver failed: $line" >&2; exit 3; }
  ns=$(time_loop)
  eval "exec ${PG[1]}>&-"
  wait "$PG_PID"
  echo "$ns"
}

# syscount prints "Tracing syscalls..." once attached (line-buffered through
# stdbuf, since its stdout is a pipe) and exits on SIGINT.
run_syscount() {
  local line ns
  coproc SC { exec stdbuf -oL "$syscount" -L 2>&1; }
  while read -r -t 30 -u "${SC[0]}" line; do [[ $line == Tracing* ]] && break; done
  [[ $line == Tracing* ]] || { echo "syscount did not start: $line" >&2; kill "$SC_PID"; exit 3; }
  ns=$(time_loop)
  kill -INT "$SC_PID"
  wait "$SC_PID" || true
  echo "$ns"
}

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

modes=(none perfgate syscount)
for ((round = 1; round <= rounds; round++)); do
  # Rotate the order so no mode always runs right after another's teardown.
  line="round $round:"
  for ((k = 0; k < ${#modes[@]}; k++)); do
    mode=${modes[(k + round) % ${#modes[@]}]}
    ns=$("run_$mode")
    samples[$mode]+="$ns "
    line+=" $mode=$ns"
  done
  echo "$line"
done

base=$(median ${samples[none]})
printf '\n%-10s %12s %8s\n' mode "median ns/call" ratio
for mode in "${modes[@]}"; do
  m=$(median ${samples[$mode]})
  printf '%-10s %12.1f %7.2fx\n' "$mode" "$m" "$(awk -v a="$m" -v b="$base" 'BEGIN { print a / b }')"
done
