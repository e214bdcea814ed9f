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
# The source package comes through apt with a deb-src entry of its own, in a
# cache directory (PERFGATE_SRC_CACHE, default ~/.cache/perfgate-src): the
# host's apt sources are not changed. The program is compiled with the
# library's sources linked in (Debian's own build links libbz2.so), so that
# the counted profile sees the library's functions.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
[[ $# -ge 1 ]] || { echo "usage: $0 BUILD_DIR [RUNS] [REPETITIONS]" >&2; exit 2; }
perfgate=$(find_exe "$1" perfgate)
[[ -n $perfgate ]] || { echo "no perfgate under $1" >&2; exit 2; }
perfgate=$(realpath "$perfgate")
runs=${2:-10}
reps=${3:-3}
require_rounds "$runs" 1
require_root
require_python3
command -v valgrind >/dev/null || { echo "needs valgrind (ci/install-deps.sh installs it)" >&2; exit 2; }
command -v dpkg-source >/dev/null || { echo "needs dpkg-source (Debian's dpkg-dev)" >&2; exit 2; }

cache=${PERFGATE_SRC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/perfgate-src}
mkdir -p "$cache/lists/partial" "$cache/pkg"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main" \
  >"$cache/sources.list"
apt_src=(-o "Dir::Etc::SourceList=$cache/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$cache/lists" -o APT::Sandbox::User=root)
if ! ls "$cache"/pkg/bzip2_*.dsc >/dev/null 2>&1; then
  apt-get "${apt_src[@]}" -q update >/dev/null
  (cd "$cache/pkg" && apt-get "${apt_src[@]}" -q source --download-only bzip2 >/dev/null 2>&1)
fi
dsc=$(ls "$cache"/pkg/bzip2_*.dsc | head -n1)
echo "source package: $(basename "$dsc")"

scratch=$(mktemp -d)
neighbour=
trap '[[ -z $neighbour ]] || kill "$neighbour" 2>/dev/null; rm -rf "$scratch"' EXIT
chmod 0755 "$scratch"
dpkg-source -x "$dsc" "$scratch/released" >/dev/null 2>&1
cp -r "$scratch/released" "$scratch/slower"
cp -r "$scratch/released" "$scratch/comment"
# The changed function: one more loop, right after the MTF frequencies are cleared.
sed -i 's|^   for (i = 0; i <= EOB; i++) s->mtfFreq\[i\] = 0;$|&\n   /* Checks the block pointers past the first third. */\n   for (i = s->nblock / 3; i < s->nblock; i++) if (ptr[i] >= (UInt32)s->nblock) AssertH(0, 1009);|' \
  "$scratch/slower/compress.c"
sed -i 's|^void generateMTFValues ( EState\* s )$|/* Move-to-front coding of the sorted block. */\n&|' "$scratch/comment/compress.c"
for variant in slower comment; do
  if cmp -s "$scratch/released/compress.c" "$scratch/$variant/compress.c"; then
    echo "the $variant change did not apply to $(basename "$dsc")'s compress.c" >&2
    exit 2
  fi
done
for variant in released slower comment; do
  (cd "$scratch/$variant" && "${CC:-cc}" -O2 -g -D_FILE_OFFSET_BITS=64 -o "$scratch/bzip2-$variant" \
    bzip2.c blocksort.c huffman.c crctable.c randtable.c compress.c decompress.c bzlib.c)
done
head -c 400000 < <(gzip -dc "$(ls "$cache"/pkg/bzip2_*.orig.tar.gz | head -n1)") >"$scratch/input.tar"

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
