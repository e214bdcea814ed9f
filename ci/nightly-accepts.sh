#!/usr/bin/env bash
# The nightly's accept trailers: the Perfgate-Accept trailers of the commits
# merged since the previous night, in the file `perfgate run|merge
# --accept-trailers` reads, for a nightly that runs `perfgate run` or `merge`
# itself (the paired nightly, ci/nightly.sh, gets them from ci/pr-gate.sh,
# whose base is the previous night) (one "COMMIT TRAILER-VALUE" a line, as
# ci/pr-gate.sh writes it). The previous night is the commit of the newest run
# the history stored (or --since); the commits are those in (previous, head].
# A night's intended regression is then recorded as accepted in the history,
# and the alert of its step becomes `expected` by itself.
#
# The nightly passes the file with --skip-bad-trailers: each of these
# trailers already passed the pull-request gate (or was refused there, exit 2,
# and merged anyway), so one that is malformed or names a check this suite
# does not have is left out with a line in the console and summary.md, rather
# than failing this night and every later one (docs/ci.md, "The nightly's accept
# trailers").
#
#   ci/nightly-accepts.sh --out FILE [--db HISTORY | --since COMMIT] [options]
#
# Options:
#   --out FILE       where the trailers go (written whole, also when there are
#                    none: then it holds only comments)
#   --db HISTORY     history database, a file or a postgresql:// URL (default:
#                    $PERFGATE_HISTORY); a file that does not exist yet is a
#                    first night: nothing to collect
#   --since COMMIT   the previous night's commit, instead of reading the history
#   --branch NAME    the branch the nightly measures (default: main)
#   --suite NAME     only runs of this suite (its "name") are nights (default: any)
#   --head REV       the commit measured tonight (default: HEAD)
#   --repo DIR       the git checkout (default: .)
#   --perfgate PATH  perfgate binary (default: perfgate on PATH)
# Exit codes: 0 written; 2 bad usage or a head that is not a commit; 3 the
# history could not be read (no file written).
set -euo pipefail

die() {
  echo "nightly-accepts: $1" >&2
  exit "${2:-2}"
}

out=""
db=${PERFGATE_HISTORY:-}
since=""
branch=main
suite=""
head=HEAD
repo=.
perfgate=perfgate
while [ $# -gt 0 ]; do
  case "$1" in
    --out | --db | --since | --branch | --suite | --head | --repo | --perfgate)
      [ $# -ge 2 ] || die "$1 needs a value"
      case "$1" in
        --out) out=$2 ;;
        --db) db=$2 ;;
        --since) since=$2 ;;
        --branch) branch=$2 ;;
        --suite) suite=$2 ;;
        --head) head=$2 ;;
        --repo) repo=$2 ;;
        --perfgate) perfgate=$2 ;;
      esac
      shift 2
      ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    *) die "unknown argument \"$1\" (see --help)" ;;
  esac
done
[ -n "$out" ] || die "--out FILE is required"
[ -n "$since" ] || [ -n "$db" ] || die "say where the previous night is: --db HISTORY (or PERFGATE_HISTORY) or --since COMMIT"
head_sha=$(git -C "$repo" rev-parse --verify -q "$head^{commit}") || die "--head $head is not a commit of $repo"

# The previous night: the commit of the history's newest run.
if [ -z "$since" ]; then
  if [[ "$db" != postgres://* && "$db" != postgresql://* && ! -e "$db" ]]; then
    echo "nightly-accepts: $db does not exist yet: a first night, no trailers to collect"
  else
    last_args=(history last-commit --db "$db" --branch "$branch")
    [ -z "$suite" ] || last_args+=(--suite "$suite")
    since=$("$perfgate" "${last_args[@]}") || die "perfgate could not read the history $db" 3
    [ -n "$since" ] || echo "nightly-accepts: no run on $branch in $db yet: a first night, no trailers to collect"
  fi
fi

tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT
if [ -z "$since" ]; then
  echo "# No previous night: no accept trailers." >"$tmp"
elif ! since_sha=$(git -C "$repo" rev-parse --verify -q "$since^{commit}"); then
  # A shallow clone, or main rewritten: say so; the night is still measured.
  echo "nightly-accepts: warning: the previous night's commit $since is not in $repo (a shallow clone? fetch the" \
    "whole history); no trailers collected" >&2
  echo "# The previous night's commit $since is not in this checkout: no accept trailers." >"$tmp"
else
  echo "# Perfgate-Accept trailers of the commits in ${since_sha:0:12}..${head_sha:0:12}" >"$tmp"
  # One record per commit (separated by \036): its hash, then one trailer value a line.
  git -C "$repo" log --format='%x1e%H%n%(trailers:key=Perfgate-Accept,valueonly,unfold)' "$since_sha..$head_sha" |
    awk 'BEGIN { RS = "\036" }
         NF { n = split($0, line, "\n"); for (i = 2; i <= n; i++) if (line[i] ~ /[^ \t]/) print substr(line[1], 1, 12) " " line[i] }' \
      >>"$tmp"
  commits=$(git -C "$repo" rev-list --count "$since_sha..$head_sha")
  echo "nightly-accepts: $(grep -vc '^#' "$tmp" || true) accept trailers in the $commits commits since" \
    "${since_sha:0:12} (in $out)"
fi
mv "$tmp" "$out"
trap - EXIT
