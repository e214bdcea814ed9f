#!/usr/bin/env bash
# The pull-request gate for any repository: the merge base and the head of a
# pull request are checked out side by side, each built by the project's own
# build command, and `perfgate ab` runs the project's suite on both,
# interleaved on this host; the results go where the CI system shows them.
# The GitHub action (ci/github/pr-gate/action.yml) and the Jenkins step
# (ci/jenkins/vars/perfgatePrGate.groovy) are thin wrappers over this script,
# which runs the same way anywhere.
#
#   ci/pr-gate.sh --suite FILE --build-cmd CMD [options]
#   ci/pr-gate.sh --merge-shards N --out DIR SHARD_OUT_DIR...
#
#   --repo DIR          the project's git checkout (default: .)
#   --base REF          the pull request's target (default: from $GITHUB_EVENT_PATH)
#   --head REF          the pull request's head (default: from $GITHUB_EVENT_PATH)
#   --suite FILE        the perfgate suite, relative to the repository; read
#                       from the merge base when it has one, so a pull
#                       request cannot loosen its own gate
#   --build-cmd CMD     the build command, run with bash in each checkout
#   --build-dir DIR     where the build puts its output, relative to the
#                       checkout (default: .)
#   --dir-var NAME      the suite variable that names that directory
#                       (default: BUILD_DIR; the suite says ${BUILD_DIR}/prog)
#   --reps N            measured repetitions per side (default: the suite's)
#   --strict            inconclusive checks fail
#   --instrument        count instructions under Valgrind in every scenario
#                       that can (command and gbench workloads), for a suite
#                       that does not say "instrument": true itself
#   --shard K/N         build both sides and run only shard K of N of the
#                       suite (scenarios round-robin in suite order), each
#                       check decided as one of the whole suite's family; a
#                       pool of runners runs the N shards, then one job
#                       joins them with --merge-shards
#   --merge-shards N    no build, no run: join the out dirs of the N shards
#                       (`perfgate merge --shards N`) into --out, with one
#                       comment, JUnit file and report; a shard whose out dir
#                       holds no results.json makes the gate exit 3
#   --user USER         who builds and runs the workloads when this runs as
#                       root (default: nobody); the pull request's code never
#                       runs as root
#   --out DIR           results, reports, pr-comment.md (default: perfgate-out)
#   --perfgate PATH     the perfgate binary (default: perfgate on PATH)
#   --work DIR          where the checkouts go (default: a new temporary dir)
#   --base-label TEXT   what the base side is, in the reports (default:
#                       "merge base SHA"); --head-label likewise ("head SHA")
#   --skip-bad-trailers a Perfgate-Accept trailer that is malformed or names
#                       no check is left out with a line in the summary
#                       instead of exit 2: for the nightly (ci/nightly.sh),
#                       whose range holds main's merged commits; never for a
#                       pull request
#   --head-only         no base: only the head is built and measured alone,
#                       with `perfgate run` against the stored baselines (the
#                       nightly's first night, which has nothing to pair with);
#                       the suite variable is set in the environment
#   --accept TEXT       accept a regression within a bound for this run,
#                       'SCENARIO/CHECK <= +N%: reason' (repeatable): for CI
#                       systems without commits. With commits, write it as a
#                       trailer of any commit between merge base and head:
#                         Perfgate-Accept: SCENARIO/CHECK <= +N%: reason
#                       (the gate collects them, with their commits, into
#                       OUT/accept-trailers.txt)
#
# Quarantines live in the suite or the file beside it (SUITE.quarantine.json
# for SUITE.json), both read from the merge base; PERFGATE_TODAY
# sets the date they are judged on.
#
# Pull requests from forks are untrusted on a self-hosted runner: under
# GitHub Actions this refuses them (exit 2) unless the pull request carries
# the label named by $PERFGATE_APPROVAL_LABEL (default: perfgate-approved),
# which only a maintainer can set.
#
# Exit code: perfgate's (0 pass, 1 a check failed, 2 bad input, 3
# infrastructure); a build that fails is 3.
set -euo pipefail

repo=. base="" head="" suite="" build_cmd="" build_dir=. dir_var=BUILD_DIR reps="" strict=0
user=nobody out=perfgate-out perfgate=perfgate work="" base_label="" head_label="" skip_bad_trailers=0 head_only=0
instrument=0 shard="" merge_shards=""
accepts=() shard_dirs=()
die() {
  echo "pr-gate: $1" >&2
  exit "${2:-2}"
}
while [ $# -gt 0 ]; do
  case $1 in
    --repo) repo=$2; shift 2 ;;
    --base) base=$2; shift 2 ;;
    --head) head=$2; shift 2 ;;
    --suite) suite=$2; shift 2 ;;
    --build-cmd) build_cmd=$2; shift 2 ;;
    --build-dir) build_dir=$2; shift 2 ;;
    --dir-var) dir_var=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --strict) strict=1; shift ;;
    --user) user=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --perfgate) perfgate=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --accept) accepts+=(--accept "$2"); shift 2 ;;
    --base-label) base_label=$2; shift 2 ;;
    --head-label) head_label=$2; shift 2 ;;
    --skip-bad-trailers) skip_bad_trailers=1; shift ;;
    --head-only) head_only=1; shift ;;
    --instrument) instrument=1; shift ;;
    --shard) shard=$2; shift 2 ;;
    --merge-shards) merge_shards=$2; shift 2 ;;
    -*) die "unknown option $1 (see the comment at the top of this script)" ;;
    *) [ -n "$merge_shards" ] || die "unexpected argument $1 (out dirs of shards follow --merge-shards N)"
      shard_dirs+=("$1"); shift ;;
  esac
done

# The comment for the pull request, found again by its marker, from OUT's
# summary.md (PROVENANCE stands in when perfgate wrote none) and OUT's
# accept-not-trailers.txt; the step summary; the exit code. write_comment CODE PROVENANCE
write_comment() {
  local code=$1 provenance=$2
  {
    echo "<!-- perfgate-pr-gate -->"
    if [ -s "$out/accept-not-trailers.txt" ]; then
      echo "> [!WARNING]"
      echo "> These \`Perfgate-Accept\` lines are not trailers (git reads trailers only from a commit message's last paragraph), so they accept nothing:"
      while read -r sha line; do
        printf '> - commit `%s`: `%s`\n' "$sha" "$(printf '%s' "$line" | tr '`' "'")"
      done <"$out/accept-not-trailers.txt"
      echo
    fi
    if [ -f "$out/summary.md" ]; then
      head -c 60000 "$out/summary.md"
    else
      echo "$provenance"
      echo
      echo "perfgate wrote no summary (exit code $code)."
    fi
  } >"$out/pr-comment.md"
  echo "$code" >"$out/exit-code"
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then cat "$out/pr-comment.md" >>"$GITHUB_STEP_SUMMARY"; fi
}

# --merge-shards: the shards' out dirs into one.
if [ -n "$merge_shards" ]; then
  [[ $merge_shards =~ ^[1-9][0-9]*$ ]] || die "--merge-shards: \"$merge_shards\" is not a number of shards"
  [ ${#shard_dirs[@]} -gt 0 ] || die "--merge-shards: name the shards' out dirs"
  out=$(mkdir -p "$out" && cd "$out" && pwd)
  command -v "$perfgate" >/dev/null || die "no perfgate at \"$perfgate\"; install the package first" 3
  files=()
  : >"$out/accept-not-trailers.txt"
  for dir in "${shard_dirs[@]}"; do
    if [ -f "$dir/results.json" ]; then
      files+=("$dir/results.json")
      # Every shard read the same commits: their warnings once.
      [ -s "$out/accept-not-trailers.txt" ] || cp "$dir/accept-not-trailers.txt" "$out/accept-not-trailers.txt" 2>/dev/null || true
    else
      echo "pr-gate: $dir holds no results.json: that shard did not run" >&2
    fi
  done
  code=0
  if [ ${#files[@]} -eq 0 ]; then
    echo "pr-gate: none of the $merge_shards shards produced results" >&2
    code=3
  else
    "$perfgate" merge --shards "$merge_shards" -o "$out/results.json" "${files[@]}" || code=$?
  fi
  write_comment "$code" "The $merge_shards shards of the gate could not be joined (exit code $code)."
  echo "pr-gate: merged ${#files[@]} of $merge_shards shards; perfgate exited $code; results, reports and pr-comment.md in $out"
  exit "$code"
fi
[ ${#shard_dirs[@]} -eq 0 ] || die "unexpected argument ${shard_dirs[0]}"
[ -z "$shard" ] || [[ $shard =~ ^[1-9][0-9]*/[1-9][0-9]*$ ]] || die "--shard: \"$shard\" is not K/N"

[ -n "$suite" ] || die "--suite is required"
[ -n "$build_cmd" ] || die "--build-cmd is required"
[[ $dir_var =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die "--dir-var: \"$dir_var\" is not a variable name"
[ -z "$reps" ] || [[ $reps =~ ^[0-9]+$ ]] || die "--reps: \"$reps\" is not a number"
case $suite$build_dir in /* | *..*) die "--suite and --build-dir are paths inside the repository" ;; esac
repo=$(cd "$repo" && pwd)
out=$(mkdir -p "$out" && cd "$out" && pwd)
command -v "$perfgate" >/dev/null || die "no perfgate at \"$perfgate\"; install the package first" 3

# The pull request from GitHub's event, unless given.
event_field() {
  /usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
for key in sys.argv[2].split("."):
    d = d.get(key) if isinstance(d, dict) else None
print("" if d is None else (json.dumps(d) if isinstance(d, (list, dict)) else d))' "$GITHUB_EVENT_PATH" "$1"
}
if [ -n "${GITHUB_EVENT_PATH:-}" ] && [ -f "${GITHUB_EVENT_PATH}" ]; then
  [ -n "$base" ] || base=$(event_field pull_request.base.sha)
  [ -n "$head" ] || head=$(event_field pull_request.head.sha)
  head_repo=$(event_field pull_request.head.repo.full_name)
  if [ -n "$head_repo" ] && [ "$head_repo" != "${GITHUB_REPOSITORY:-}" ]; then
    label=${PERFGATE_APPROVAL_LABEL:-perfgate-approved}
    if ! event_field pull_request.labels | /usr/bin/python3 -c 'import json, sys
sys.exit(0 if any(l.get("name") == sys.argv[1] for l in json.load(sys.stdin) or []) else 1)' "$label"; then
      die "pull request from the fork $head_repo: its code would build and run on this self-hosted runner; a maintainer approves that by adding the label \"$label\"" 2
    fi
  fi
fi
[ -n "$base" ] || [ $head_only -eq 1 ] || die "--base is required (or \$GITHUB_EVENT_PATH of a pull_request event)"
[ -n "$head" ] || die "--head is required (or \$GITHUB_EVENT_PATH of a pull_request event)"

git -C "$repo" rev-parse --verify -q "$head^{commit}" >/dev/null || die "head \"$head\" is not a commit of $repo"
head_sha=$(git -C "$repo" rev-parse "$head^{commit}")
sides=(head)
if [ $head_only -eq 0 ]; then
  git -C "$repo" rev-parse --verify -q "$base^{commit}" >/dev/null || die "base \"$base\" is not a commit of $repo"
  merge_base=$(git -C "$repo" merge-base "$base" "$head_sha") || die "$base and $head have no merge base"
  sides=(base head)
fi
[ -n "$head_label" ] || head_label="head ${head_sha:0:12}"

if [ -z "$work" ]; then
  work=$(mktemp -d)
  trap 'git -C "$repo" worktree remove --force "$work/base" 2>/dev/null; git -C "$repo" worktree remove --force "$work/head" 2>/dev/null; rm -rf "$work"' EXIT
fi
mkdir -p "$work"
chmod 0755 "$work"

# As root, the pull request's build and workloads run as $user.
as_user=()
run_as=()
if [ "$(id -u)" -eq 0 ]; then
  id "$user" >/dev/null 2>&1 || die "--user: no user \"$user\" on this machine"
  [ "$(id -u "$user")" -ne 0 ] || die "--user: \"$user\" is root; the pull request's code must not run as root"
  as_user=(runuser -u "$user" --)
  run_as=(--run-as "$user")
fi

for side in "${sides[@]}"; do
  sha=${merge_base:-}
  [ "$side" = head ] && sha=$head_sha
  git -C "$repo" worktree add --force --detach "$work/$side" "$sha" >/dev/null 2>&1 ||
    die "could not check out $sha into $work/$side" 3
  [ ${#as_user[@]} -eq 0 ] || chown -R "$user" "$work/$side"
  echo "pr-gate: building the $side ($sha)"
  if ! (cd "$work/$side" && env -u GITHUB_TOKEN -u ACTIONS_RUNTIME_TOKEN HOME="$work/$side" \
    "${as_user[@]}" bash -c "$build_cmd") >"$out/build-$side.log" 2>&1; then
    tail -n 40 "$out/build-$side.log" >&2
    die "the build command failed for the $side ($sha); its log is $out/build-$side.log" 3
  fi
done

suite_file=$work/head/$suite
if [ $head_only -eq 0 ]; then
  suite_file=$work/base/$suite
  [ -f "$suite_file" ] || suite_file=$work/head/$suite
fi
[ -f "$suite_file" ] || die "no suite $suite at the merge base or the head"

# Reports name the suite by its path in the repository (JUnit file=, where
# annotations point), not by the temporary worktree it was read from.
if [ $head_only -eq 1 ]; then
  command=(env "$dir_var=$work/head/$build_dir" "$perfgate")
  args=(run "$suite_file" --out "$out" --suite-path "$suite")
else
  command=("$perfgate")
  [ -n "$base_label" ] || base_label="merge base ${merge_base:0:12}"
  args=(ab "$suite_file" --out "$out" --suite-path "$suite"
    --baseline-set "$dir_var=$work/base/$build_dir" --candidate-set "$dir_var=$work/head/$build_dir"
    --baseline-label "$base_label" --candidate-label "$head_label")
fi
[ -z "$reps" ] || args+=(--reps "$reps")
[ $strict -eq 0 ] || args+=(--strict)
[ $instrument -eq 0 ] || args+=(--instrument)
[ -z "$shard" ] || args+=(--shard "$shard")
args+=("${run_as[@]}")

# Intended regressions: the Perfgate-Accept trailers of the pull request's
# commits, each with the commit that carries it (who accepted, and where).
# A Perfgate-Accept line that git does not read as a trailer (not in the
# message's last paragraph, e.g. `git commit -m A -m "Perfgate-Accept: …"
# -m "Perfgate-Accept: …"`) accepts nothing: each is said, on the console
# and in the comment, rather than skipped in silence.
: >"$out/accept-not-trailers.txt"
if [ $head_only -eq 0 ]; then
  for sha in $(git -C "$repo" rev-list "$merge_base..$head_sha"); do
    trailers=$(git -C "$repo" log -1 --format='%(trailers:key=Perfgate-Accept,unfold)' "$sha")
    while IFS= read -r trailer; do
      value="${trailer#*:}" value="${value# }"
      if [ -n "$value" ]; then printf '%s %s\n' "${sha:0:12}" "$value"; fi
    done <<<"$trailers"
    while IFS= read -r line; do
      line="${line%"${line##*[![:space:]]}"}"
      # (a folded trailer's first line is the start of its unfolded one)
      grep -qiF -- "$line" <<<"$trailers" ||
        printf '%s %s\n' "${sha:0:12}" "$line" >>"$out/accept-not-trailers.txt"
    done < <(git -C "$repo" log -1 --format='%B' "$sha" | grep -i '^perfgate-accept:')
  done
fi >"$out/accept-trailers.txt"
while read -r sha line; do
  echo "pr-gate: warning: commit $sha: \"$line\" is not a trailer (git reads trailers only from the message's last paragraph): it accepts nothing; put every Perfgate-Accept line in the last paragraph" >&2
done <"$out/accept-not-trailers.txt"
if [ -s "$out/accept-trailers.txt" ]; then
  echo "pr-gate: accept trailers: $(wc -l <"$out/accept-trailers.txt") (in $out/accept-trailers.txt)"
  args+=(--accept-trailers "$out/accept-trailers.txt")
  [ $skip_bad_trailers -eq 0 ] || args+=(--skip-bad-trailers)
fi
args+=("${accepts[@]}")
set +e
"${command[@]}" "${args[@]}"
code=$?
set -e

# One comment per pull request, found again by its marker; the step summary.
# The summary says what it compared against (the labels above); the
# provenance stands in for it only when perfgate wrote none.
if [ $head_only -eq 1 ]; then
  provenance="Nothing to pair with: the head \`${head_sha:0:12}\` was built and measured alone, against the stored baselines."
else
  provenance="Compared against the merge base \`${merge_base:0:12}\`, built with the same command and run interleaved with the head \`${head_sha:0:12}\` on this host."
  if [ "$base_label" != "merge base ${merge_base:0:12}" ] || [ "$head_label" != "head ${head_sha:0:12}" ]; then
    provenance="Compared against $base_label, built with the same command and run interleaved with $head_label on this host."
  fi
fi
write_comment "$code" "$provenance"
echo "pr-gate: $provenance"
echo "pr-gate: perfgate exited $code; results, reports and pr-comment.md in $out"
exit "$code"
