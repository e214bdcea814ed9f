#!/usr/bin/env bash
# The instruction-count pull-request gate on a real project's code, as a
# team would set it up: Debian's bzip2 from its source package in a git
# repository, whose base branch carries a build script and an
# instruction-count suite (perf/counted.json, "instrument": true: no flag
# anywhere). Two pull requests: one executing about 1 % more instructions
# (one more pass in generateMTFValues, bench/debian_bzip2.sh) and one that
# changes only a comment. RUNS times each, alternating, ci/pr-gate.sh builds
# the merge base and the head and gates them; then `perfgate bisect` finds
# the commit of the extra pass among ten commits. Prints each gate's exit,
# the function the why named first and its time, and the tallies.
#
#   bench/debian_source_pr_gate.sh BUILD_DIR [RUNS] [BISECT: 1 or 0]
#
# Needs root (the gate loads BPF programs), valgrind and dpkg-source.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
source "$here/debian_bzip2.sh"
[[ $# -ge 1 ]] || { echo "usage: $0 BUILD_DIR [RUNS] [BISECT]" >&2; exit 2; }
perfgate=$(perfgate_under "$1")
runs=${2:-10}
bisect=${3:-1}
require_rounds "$runs" 1
require_root
require_python3
require_bzip2_tools

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
chmod 0755 "$scratch"
repo=$scratch/bzip2
echo "source package: $(bzip2_source "$repo")"
cd "$repo"
git init -q -b main
git config user.email dev@example.com
git config user.name "A developer"
mkdir -p perf
bzip2_input perf/input.tar
cat >build.sh <<SH
#!/bin/sh
set -e
mkdir -p build
$(bzip2_build_command build/bzip2)
SH
cat >perf/counted.json <<'JSON'
// The instructions bzip2 executes compressing 400 kB, counted under
// Valgrind: exact, so a change of a fraction of a percent fails the gate
// however busy the runner.
{
  "name": "bzip2-counted",
  "instrument": true,
  "scenarios": [
    {
      "name": "compress",
      "workload": {"argv": ["sh", "-c", "\"$0\" -9 -c \"$1\" > /dev/null", "${BUILD_DIR}/bzip2", "${suite_dir}/input.tar"]},
      "warmup": 0,
      "repetitions": 3,
      "timeout_s": 300,
      "probes": [{"name": "syscalls", "scope": "workload"}]
    }
  ]
}
JSON
git add -A
git commit -qm "bzip2 as Debian ships it, with its build script and instruction-count suite"
git checkout -qb extra-pass
bzip2_extra_pass .
git commit -qam "Check the block pointers past the first third"
git checkout -qb comment main
bzip2_comment .
git commit -qam "Say what generateMTFValues does"
git checkout -q main

# The function the why named first: the counted user code, else the first cause.
named_first() {
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["scenarios"][0]
e = s.get("explanation") or {}
user = e.get("user_code") or {}
causes = e.get("causes") or []
print(user.get("function") + (" (counted)" if user.get("counted") else "") if user else
      (causes[0]["metric"] if causes else "-"))
PY
}

declare -A exits=()
named=0 times=()
for ((i = 1; i <= runs; i++)); do
  order=(extra-pass comment)
  ((i % 2 == 0)) && order=(comment extra-pass)
  for head in "${order[@]}"; do
    start=$(date +%s.%N)
    set +e
    bash "$here/../ci/pr-gate.sh" --repo "$repo" --base main --head "$head" --suite perf/counted.json \
      --build-cmd "sh build.sh" --build-dir build --perfgate "$perfgate" --out "$scratch/out" \
      --work "$scratch/work-$head-$i" >"$scratch/gate.log" 2>&1
    code=$?
    set -e
    seconds=$(echo "$(date +%s.%N) - $start" | bc)
    times+=("$seconds")
    exits[$head.$code]=$((${exits[$head.$code]:-0} + 1))
    first=-
    [[ ! -f $scratch/out/results.json ]] || first=$(named_first "$scratch/out/results.json")
    [[ $head != extra-pass || $first != "generateMTFValues (counted)" ]] || named=$((named + 1))
    ((code <= 1)) || cp "$scratch/gate.log" "${TMPDIR:-/tmp}/debian-source-pr-gate-$head-$i.log"
    printf 'run %d %s: exit %d, named first: %s, %.1f s\n' "$i" "$head" "$code" "$first" "$seconds"
    git worktree remove --force "$scratch/work-$head-$i/base" 2>/dev/null || true
    git worktree remove --force "$scratch/work-$head-$i/head" 2>/dev/null || true
    rm -rf "$scratch/out" "$scratch/work-$head-$i"
  done
done
echo "1 % more instructions: failed $(( ${exits[extra-pass.1]:-0} )) of $runs; generateMTFValues named first by count in $named"
echo "comment only: passed $(( ${exits[comment.0]:-0} )) of $runs"
printf '%s\n' "${times[@]}" | sort -g | awk '{ t[NR] = $1 } END { printf "gate time: min %.1f s, median %.1f s, max %.1f s\n", t[1], t[int((NR + 1) / 2)], t[NR] }'

[[ $bisect == 1 ]] || exit 0
# Ten commits after main, the extra pass in the sixth; the rest touch other files.
git checkout -qb history main
for n in 1 2 3 4 5 6 7 8 9 10; do
  if ((n == 6)); then
    bzip2_extra_pass .
    git commit -qam "Commit $n: check the block pointers past the first third"
  else
    echo "note $n" >>NOTES
    git add NOTES
    git commit -qm "Commit $n: a note"
  fi
done
culprit=$(git rev-parse HEAD~4)
start=$SECONDS
set +e
(cd "$repo" && "$perfgate" bisect perf/counted.json --good main --bad history --build "sh build.sh" --build-dir build \
  --out "$scratch/bisect" --quiet) >"$scratch/bisect.log" 2>&1
code=$?
set -e
found=$(/usr/bin/python3 -c 'import json, sys; print((json.load(open(sys.argv[1])).get("culprit") or {}).get("sha", "-"))' \
  "$scratch/bisect/bisect.json" 2>/dev/null || echo -)
echo "bisect over 10 commits: exit $code, first bad ${found:0:12} (planted ${culprit:0:12}), $((SECONDS - start)) s"
[[ $found == "$culprit" ]] || { tail -n 30 "$scratch/bisect.log"; exit 1; }
