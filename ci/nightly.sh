#!/usr/bin/env bash
# The nightly, paired: tonight's head and the commit the history measured
# last (the previous night) are each built by the project's own build command
# in a worktree of their own and run interleaved on this host with `perfgate
# ab`, exactly as a pull request is gated against its merge base
# (ci/pr-gate.sh, which this script calls). The night's verdict is then a
# paired one, and a host slower tonight is slower for both sides alike. The
# results' candidate side is tonight's absolute numbers, for the history and
# its trends; each check's change is tonight against the previous night.
#
# The first night (no run of the branch in the history yet), a previous
# night's commit missing from the checkout (a shallow clone) or no longer an
# ancestor of the head (a rewritten branch) fall back to a plain run of the
# head against the stored baselines, and say so.
#
# The GitHub workflow (ci/github/nightly.yml) and the Jenkinsfile
# (ci/jenkins/Jenkinsfile) are thin wrappers over this script, which runs
# the same way anywhere.
#
#   ci/nightly.sh --suite FILE --build-cmd CMD --db HISTORY [options]
#
#   --db HISTORY          the history (a file or a postgresql:// URL; default
#                         $PERFGATE_HISTORY); a file that does not exist yet is
#                         a first night. Only read here: `perfgate history add`
#                         stores the night afterwards
#   --branch NAME         the branch the nightly measures (default: main)
#   --history-suite NAME  only runs of this suite (its "name") are nights
#                         (default: any run of the branch)
#   --reference COMMIT    pair with this commit instead of the history's newest
#   --head REV            tonight's commit (default: HEAD)
#   --repo DIR            the project's git checkout (default: .)
#   --suite FILE          the perfgate suite, relative to the repository
#   --build-cmd CMD       the build command, run with bash in each checkout
#   --build-dir DIR       where the build puts its output (default: .)
#   --dir-var NAME        the suite variable naming it (default: BUILD_DIR)
#   --reps N, --strict, --instrument, --user USER, --perfgate PATH, --work DIR
#                         as for ci/pr-gate.sh (a suite that says
#                         "instrument": true is instrumented without the flag)
#   --out DIR             results, reports, summary (default: perfgate-out)
#
# Besides what ci/pr-gate.sh writes there (results.json, junit.xml,
# summary.md, report/, accept-trailers.txt, exit-code), OUT/nightly.env says
# how the night was measured, for the steps after it:
#   mode=paired|plain  reference=SHA (empty when plain)  head=SHA  reason=TEXT
# `perfgate history add OUT/results.json --reference "$reference" ...` keeps
# both the absolute values and the paired change.
#
# Exit code: perfgate's (0 pass, 1 a check failed, 2 bad input, 3
# infrastructure: a build that failed, a history that could not be read).
set -euo pipefail

db=${PERFGATE_HISTORY:-} branch=main history_suite="" reference="" head=HEAD repo=. out=perfgate-out perfgate=perfgate
suite="" build_cmd="" pass=()
die() {
  echo "nightly: $1" >&2
  exit "${2:-2}"
}
while [ $# -gt 0 ]; do
  case $1 in
    --db | --branch | --history-suite | --reference | --head | --repo | --out | --perfgate | --suite | --build-cmd | \
      --build-dir | --dir-var | --reps | --user | --work)
      [ $# -ge 2 ] || die "$1 needs a value"
      case $1 in
        --db) db=$2 ;;
        --branch) branch=$2 ;;
        --history-suite) history_suite=$2 ;;
        --reference) reference=$2 ;;
        --head) head=$2 ;;
        --repo) repo=$2 ;;
        --out) out=$2 ;;
        --perfgate) perfgate=$2 ;;
        --suite) suite=$2; pass+=(--suite "$2") ;;
        --build-cmd) build_cmd=$2; pass+=(--build-cmd "$2") ;;
        *) pass+=("$1" "$2") ;;
      esac
      shift 2
      ;;
    --strict | --instrument) pass+=("$1"); shift ;;
    *) die "unknown option $1 (see the comment at the top of this script)" ;;
  esac
done
[ -n "$suite" ] || die "--suite is required"
[ -n "$build_cmd" ] || die "--build-cmd is required"
[ -n "$reference" ] || [ -n "$db" ] || die "say where the previous night is: --db HISTORY (or PERFGATE_HISTORY) or --reference COMMIT"
command -v "$perfgate" >/dev/null || die "no perfgate at \"$perfgate\"" 3
head_sha=$(git -C "$repo" rev-parse --verify -q "$head^{commit}") || die "--head $head is not a commit of $repo"
mkdir -p "$out"

# The previous night: the commit of the history's newest run on the branch.
reason=""
if [ -z "$reference" ]; then
  if [[ "$db" != postgres://* && "$db" != postgresql://* && ! -e "$db" ]]; then
    reason="the first night: $db does not exist yet"
  else
    last=(history last-commit --db "$db" --branch "$branch")
    [ -z "$history_suite" ] || last+=(--suite "$history_suite")
    reference=$("$perfgate" "${last[@]}") || die "perfgate could not read the history $db" 3
    [ -n "$reference" ] || reason="the first night: no run on $branch in $db yet"
  fi
fi
if [ -n "$reference" ]; then
  if ! reference_sha=$(git -C "$repo" rev-parse --verify -q "$reference^{commit}"); then
    reason="the previous night's commit $reference is not in $repo (a shallow clone? fetch the whole history)"
  elif ! git -C "$repo" merge-base --is-ancestor "$reference_sha" "$head_sha"; then
    reason="the previous night's commit ${reference_sha:0:12} is not an ancestor of ${head_sha:0:12} (was $branch rewritten?)"
  else
    reference=$reference_sha
  fi
fi

gate=(bash "$(dirname "${BASH_SOURCE[0]}")/pr-gate.sh" --repo "$repo" --head "$head_sha" --out "$out"
  --perfgate "$perfgate" "${pass[@]}")
if [ -z "$reason" ]; then
  mode=paired
  same=""
  [ "$reference" != "$head_sha" ] || same=" (nothing was merged since: an A/A night)"
  echo "nightly: paired: tonight's ${head_sha:0:12} against the previous night's ${reference:0:12}$same, each built" \
    "with the same command and run interleaved on this host"
  # The commits merged since the previous night and their Perfgate-Accept
  # trailers: those are what pr-gate.sh collects between its base and head.
  # A bad trailer on the branch was judged by its pull request's gate already.
  gate+=(--base "$reference" --skip-bad-trailers
    --base-label "the previous night ${reference:0:12}" --head-label "tonight ${head_sha:0:12}")
else
  mode=plain
  echo "nightly: not paired, a plain run of ${head_sha:0:12}: $reason"
  reference=""
  gate+=(--head-only)
fi
printf 'mode=%s\nreference=%s\nhead=%s\nreason=%s\n' "$mode" "$reference" "$head_sha" "$reason" >"$out/nightly.env"

set +e
env -u GITHUB_EVENT_PATH "${gate[@]}"
code=$?
set -e
if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ "$mode" = plain ]; then
  echo "perfgate nightly: not paired: $reason." >>"$GITHUB_STEP_SUMMARY"
fi
echo "nightly: $mode night; perfgate exited $code; how it was measured is in $out/nightly.env"
exit "$code"
