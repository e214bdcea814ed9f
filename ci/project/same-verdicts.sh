#!/usr/bin/env bash
# Do two perfgate builds judge the same stored data alike? For each results
# file given, both builds re-render it (`report`), re-evaluate it against the
# stored baselines of its suite (`merge --baseline-dir`) and compare it with
# each stored baseline file of that suite (`compare`). Every output must name
# the same verdict per check and exit alike; byte-for-byte equality of each
# file is reported too (check messages may differ in wording).
#
#   ci/project/same-verdicts.sh OLD_PERFGATE NEW_PERFGATE BASELINE_DIR RESULTS.json...
#
# NEW_COMPARE_ARGS (environment): more arguments for the new build's merge
# and compare, for a flag the old build did not have (--allow-other-host).
#
# Exit 0 when every verdict and exit code agree, 1 otherwise.
set -uo pipefail

if [ $# -lt 4 ]; then
  echo "usage: $0 OLD_PERFGATE NEW_PERFGATE BASELINE_DIR RESULTS.json..." >&2
  exit 2
fi
old=$1 new=$2 baseline_dir=$3
shift 3
PY=/usr/bin/python3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The verdict of every check of a results file, one per line.
verdicts() {
  "$PY" - "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
print("run", d.get("verdict"))
for s in d.get("scenarios", []):
    for c in s.get("checks", []):
        print(s.get("name"), c.get("spec", {}).get("name"), c.get("statistic"), c.get("verdict"))
EOF
}

status=0
same=0
differ=0
n=0
read -r -a new_args <<<"${NEW_COMPARE_ARGS:-}"
for results in "$@"; do
  n=$((n + 1))
  suite=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["suite"])' "$results")
  for side in old new; do
    bin=${!side}
    extra=()
    [ $side = new ] && extra=("${new_args[@]}")
    dir="$scratch/$n/$side"
    "$bin" report "$results" --out "$dir/report" >/dev/null 2>&1
    echo $? >"$dir.report.rc"
    "$bin" merge "$results" -o "$dir/merge/merged.json" --baseline-dir "$baseline_dir" "${extra[@]}" >/dev/null 2>&1
    echo $? >"$dir.merge.rc"
    for b in "$baseline_dir/$suite"/*.json; do
      [ -f "$b" ] || continue
      name=compare-$(basename "$b" .json)
      "$bin" compare "$b" "$results" --out "$dir/$name" "${extra[@]}" >/dev/null 2>&1
      echo $? >"$dir.$name.rc"
    done
  done
  for rc in "$scratch/$n"/old.*.rc; do
    what=${rc#"$scratch/$n/old."}
    what=${what%.rc}
    out_old="$scratch/$n/old/$what/results.json"
    out_new="$scratch/$n/new/$what/results.json"
    [ "$what" = merge ] && out_old="$scratch/$n/old/merge/merged.json" && out_new="$scratch/$n/new/merge/merged.json"
    if [ "$(cat "$rc")" != "$(cat "$scratch/$n/new.$what.rc")" ]; then
      echo "DIFFERENT EXIT: $results $what: $(cat "$rc") vs $(cat "$scratch/$n/new.$what.rc")"
      status=1
      continue
    fi
    if ! diff <(verdicts "$out_old") <(verdicts "$out_new") >"$scratch/diff"; then
      echo "DIFFERENT VERDICTS: $results $what"
      head -20 "$scratch/diff"
      status=1
      continue
    fi
    for f in results.json junit.xml summary.md; do
      a="$(dirname "$out_old")/$f" b="$(dirname "$out_new")/$f"
      [ -f "$a" ] || continue
      if cmp -s "$a" "$b"; then same=$((same + 1)); else differ=$((differ + 1)); fi
    done
    echo "same verdicts: $results $what (exit $(cat "$rc"))"
  done
done
echo "files byte-identical: $same, differing in wording only: $differ"
exit $status
