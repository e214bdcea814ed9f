#!/usr/bin/env bash
# The nightly job's bisection: for each new change point for the worse that
# `perfgate trend --change-points FILE` found on main, `perfgate bisect`
# between the last commit measured before it and the first measured after,
# on the metrics that moved; the culprit goes to the job summary
# ($GITHUB_STEP_SUMMARY) and to an issue-comment body (OUT/issue-comment.md).
# The GitHub workflow (ci/github/nightly.yml) and the Jenkinsfile
# (ci/jenkins/Jenkinsfile) both call this script.
#
#   ci/nightly-bisect.sh --change-points FILE --suite FILE --build-cmd CMD [options]
#
#   --change-points FILE  what `perfgate trend --change-points` wrote
#   --suite FILE          the suite the nightly runs; change points of other
#                         suites are left alone
#   --build-cmd CMD       the build command, run with bash in each commit's checkout
#   --repo DIR            the project's git checkout (default: .)
#   --build-dir DIR       where the build puts its output, relative to the
#                         checkout (default: .)
#   --dir-var NAME        the suite variable that names it (default: BUILD_DIR)
#   --seen FILE           change points already bisected, one a line; new
#                         ones are added (default: OUT/bisected-change-points)
#   --max-bisections N    bisect at most N ranges this night, the latest first (default: 1)
#   --max-steps N         passed to perfgate bisect (default: its own)
#   --user USER           who builds and runs the workloads (default: perfgate's, nobody as root)
#   --out DIR             bisect-N/ per range, issue-comment.md (default: perfgate-bisect)
#   --perfgate PATH       the perfgate binary (default: perfgate on PATH)
#   --dry-run             print each bisection's plan instead of running it
#
# Exit code: 0 when every bisection ran (culprit, suspects or "could not
# reproduce") or there was nothing new; 2 for bad usage; else the worst exit
# code of perfgate bisect (2 bad input, 3 infrastructure).
set -euo pipefail

change_points="" suite="" build_cmd="" repo=. build_dir=. dir_var=BUILD_DIR seen="" max_bisections=1 max_steps=""
user="" out=perfgate-bisect perfgate=perfgate dry_run=0
die() {
  echo "nightly-bisect: $1" >&2
  exit "${2:-2}"
}
while [ $# -gt 0 ]; do
  case $1 in
    --change-points | --suite | --build-cmd | --repo | --build-dir | --dir-var | --seen | --max-bisections | \
      --max-steps | --user | --out | --perfgate)
      [ $# -ge 2 ] || die "$1 needs a value"
      case $1 in
        --change-points) change_points=$2 ;;
        --suite) suite=$2 ;;
        --build-cmd) build_cmd=$2 ;;
        --repo) repo=$2 ;;
        --build-dir) build_dir=$2 ;;
        --dir-var) dir_var=$2 ;;
        --seen) seen=$2 ;;
        --max-bisections) max_bisections=$2 ;;
        --max-steps) max_steps=$2 ;;
        --user) user=$2 ;;
        --out) out=$2 ;;
        --perfgate) perfgate=$2 ;;
      esac
      shift 2
      ;;
    --dry-run) dry_run=1; shift ;;
    *) die "unknown option $1 (see the comment at the top of this script)" ;;
  esac
done
[ -n "$change_points" ] || die "--change-points is required"
[ -n "$suite" ] || die "--suite is required"
[ -n "$build_cmd" ] || die "--build-cmd is required"
[ -f "$change_points" ] || die "--change-points $change_points: no such file"
[ -f "$suite" ] || die "--suite $suite: no such file"
[[ $max_bisections =~ ^[0-9]+$ ]] || die "--max-bisections: \"$max_bisections\" is not a number"
[ -z "$max_steps" ] || [[ $max_steps =~ ^[1-9][0-9]*$ ]] || die "--max-steps: \"$max_steps\" is not a number"
command -v "$perfgate" >/dev/null || die "no perfgate at \"$perfgate\"" 3
mkdir -p "$out"
[ -n "$seen" ] || seen=$out/bisected-change-points
touch "$seen"

# The ranges to bisect, latest first: one per (before, after) pair of commits,
# with every series for the worse that changed there as a check. A range is
# new when none of its series' change points is in the seen file.
ranges=$out/ranges.tsv
/usr/bin/python3 - "$change_points" "$suite" "$seen" >"$ranges" <<'PY' || die "--change-points $change_points: not a change-point file of perfgate trend"
import json, re, sys
points_file, suite_file, seen_file = sys.argv[1:]
# The suite's name; suites allow // and /* */ comments outside strings.
text = open(suite_file, encoding="utf-8").read()
text = re.sub(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', lambda m: m.group(1) or "", text, flags=re.S)
suite = json.loads(text)["name"]
seen = set(line.strip() for line in open(seen_file, encoding="utf-8") if line.strip())
ranges = {}
for p in json.load(open(points_file, encoding="utf-8")):
    if p["suite"] != suite or not p["for_the_worse"] or not p["commit_before"]:
        continue
    key = f'{p["suite"]}/{p["scenario"]}/{p["metric"]}:{p["statistic"]}@{p["commit_after"]}'
    r = ranges.setdefault((p["commit_before"], p["commit_after"]), {"keys": [], "checks": [], "time": "", "new": True})
    r["keys"].append(key)
    check = f'{p["scenario"]}/{p["metric"]}:{p["statistic"]}'
    if check not in r["checks"]:
        r["checks"].append(check)
    r["time"] = max(r["time"], p.get("timestamp_after", ""))
    r["new"] = r["new"] and key not in seen
for (before, after), r in sorted(ranges.items(), key=lambda item: item[1]["time"], reverse=True):
    if r["new"]:
        print("\t".join([before, after, " ".join(r["keys"]), " ".join(r["checks"])]))
PY

comment=$out/issue-comment.md
{
  echo "<!-- perfgate-nightly-bisect -->"
  echo "## perfgate nightly: bisection of new change points"
  echo
} >"$comment"
worst=0
count=0
while IFS=$'\t' read -r before after keys checks; do
  if [ "$count" -ge "$max_bisections" ]; then
    echo "nightly-bisect: --max-bisections $max_bisections reached; ${before:0:12}..${after:0:12} waits for another night"
    echo "- Not bisected tonight (--max-bisections $max_bisections): \`${before:0:12}\`..\`${after:0:12}\`" >>"$comment"
    continue
  fi
  count=$((count + 1))
  dir=$out/bisect-$count
  args=(bisect "$suite" --repo "$repo" --good "$before" --bad "$after" --build "$build_cmd" --build-dir "$build_dir"
    --dir-var "$dir_var" --out "$dir" --quiet)
  for check in $checks; do args+=(--check "$check"); done
  [ -z "$max_steps" ] || args+=(--max-steps "$max_steps")
  [ -z "$user" ] || args+=(--user "$user")
  [ $dry_run -eq 0 ] || args+=(--dry-run)
  echo "nightly-bisect: perfgate ${args[*]}"
  set +e
  "$perfgate" "${args[@]}" 2>&1 | tee "$out/bisect-$count.log"
  code=${PIPESTATUS[0]}
  set -e
  if [ "$code" -eq 0 ] && [ -f "$dir/bisect.md" ]; then
    sed 's/^## /### /' "$dir/bisect.md" >>"$comment"
  elif [ "$code" -eq 0 ]; then
    echo "### Plan for \`${before:0:12}\`..\`${after:0:12}\`" >>"$comment"
    echo >>"$comment"
    # An indented code block: nothing in a commit subject can end it.
    sed 's/^/    /' "$out/bisect-$count.log" >>"$comment"
  else
    echo "### Bisection of \`${before:0:12}\`..\`${after:0:12}\` failed (exit $code)" >>"$comment"
    echo >>"$comment"
    tail -n 5 "$out/bisect-$count.log" | sed 's/^/    /' >>"$comment"
    [ "$code" -le "$worst" ] || worst=$code
  fi
  echo >>"$comment"
  # Bisected (or refused for good): not again. A dry run and an
  # infrastructure failure leave the change point for the next night.
  if [ $dry_run -eq 0 ] && [ "$code" -ne 3 ]; then
    for key in $keys; do echo "$key" >>"$seen"; done
  fi
done <"$ranges"

if [ $count -eq 0 ]; then
  echo "nightly-bisect: no new change point for the worse in $change_points"
  echo "No new change point for the worse." >>"$comment"
fi
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then cat "$comment" >>"$GITHUB_STEP_SUMMARY"; fi
echo "nightly-bisect: $count bisection(s); comment body in $comment"
exit "$worst"
