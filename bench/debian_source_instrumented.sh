#!/usr/bin/env bash
# The instrumented mode (perfgate ab --instrument) on a real project's code:
# Debian's bzip2, from its source package, compressing 400 kB of its own
# source tarball. Three builds of the program: as released; with one more
# pass in generateMTFValues (a range check of two thirds of the block's
# pointers: about 1 % more instructions in all, every one of them in that
# function); and with only a comment changed. RUNS `perfgate ab` of each
# changed build against the released one, alternating, each beside
# bench/noisy_neighbour.sh. Prints the exits, the instr.total change and the
# function the why named first, and the rates.
#
#   bench/debian_source_instrumented.sh BUILD_DIR [RUNS] [REPETITIONS]
#
# The source package, the changes and the build: bench/debian_bzip2.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
source "$here/debian_bzip2.sh"
[[ $# -ge 1 ]] || { echo "usage: $0 BUILD_DIR [RUNS] [REPETITIONS]" >&2; exit 2; }
perfgate=$(perfgate_under "$1")
runs=${2:-10}
reps=${3:-3}
require_rounds "$runs" 1
require_root
require_python3
require_bzip2_tools

scratch=$(mktemp -d)
neighbour=
trap '[[ -z $neighbour ]] || kill "$neighbour" 2>/dev/null; rm -rf "$scratch"' EXIT
chmod 0755 "$scratch"
echo "source package: $(bzip2_source "$scratch/released")"
cp -r "$scratch/released" "$scratch/slower"
cp -r "$scratch/released" "$scratch/comment"
bzip2_extra_pass "$scratch/slower"
bzip2_comment "$scratch/comment"
for variant in released slower comment; do
  (cd "$scratch/$variant" && eval "$(bzip2_build_command "$scratch/bzip2-$variant")")
done
bzip2_input "$scratch/input.tar"

cat >"$scratch/suite.json" <<JSON
{"name": "bzip2", "scenarios": [{
  "name": "compress",
  "workload": {"argv": ["sh", "-c", "$scratch/bzip2-\${BUILD} -9 -c $scratch/input.tar > /dev/null"]},
  "warmup": 0, "repetitions": $reps, "timeout_s": 300,
  "probes": [{"name": "syscalls", "scope": "workload"}],
  "checks": []}]}
JSON

# instr.total's change and verdict, and the why's user-code function.
summarize() {
  python3 - "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["scenarios"][0]
check = next((c for c in s.get("checks", []) if c.get("spec", {}).get("metric") == "instr.total"), {})
user = (s.get("explanation") or {}).get("user_code") or {}
print(f"instr.total {check.get('change_pct', float('nan')):+.3f} % ({check.get('verdict', '?')}),"
      f" named first: {user.get('function', '-')}{' (counted)' if user.get('counted') else ''}")
PY
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
bash "$here/noisy_neighbour.sh" &
neighbour=$!
declare -A exits=()
named=0
for ((i = 1; i <= runs; i++)); do
  order=(slower comment)
  ((i % 2 == 0)) && order=(comment slower)
  for head in "${order[@]}"; do
    start=$SECONDS
    set +e
    "$perfgate" ab "$scratch/suite.json" --baseline-set BUILD=released --candidate-set "BUILD=$head" \
      --instrument --out "$scratch/out-$head-$i" --quiet >"$scratch/ab.log" 2>&1
    code=$?
    set -e
    exits[$head.$code]=$((${exits[$head.$code]:-0} + 1))
    line="exit $code"
    if [[ -f $scratch/out-$head-$i/results.json ]]; then
      line+=", $(summarize "$scratch/out-$head-$i/results.json")"
      [[ $head != slower ]] || ! grep -q "named first: generateMTFValues (counted)" <<<"$line" || named=$((named + 1))
    fi
    ((code <= 1)) || cp "$scratch/ab.log" "${TMPDIR:-/tmp}/debian-source-instrumented-$head-$i.log"
    echo "run $i $head: $line, $((SECONDS - start)) s"
    rm -rf "$scratch/out-$head-$i"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "1 % head: failed $(( ${exits[slower.1]:-0} )) of $runs; generateMTFValues named first by count in $named"
echo "comment-only head: passed $(( ${exits[comment.0]:-0} )) of $runs"
