#!/usr/bin/env bash
# Whether the cost of a page fault moves on this host while its CPU does
# not, and which canary follows a workload of faults: runs
# bench/fault_tracking.c for SECONDS and prints the range of each part's
# medians (the canary's loop, thirty 256 KiB map-touch-unmap rounds, a
# 512 KiB fault probe) and the correlation of the loop's and of the probe's
# with the rounds' (docs/verdicts.md, "Why the faults").
#
#   bench/fault_tracking.sh [SECONDS]
set -euo pipefail
source "$(dirname "$0")/common.sh"
SECONDS_TO_RUN="${1:-150}"
require_python3
SOURCE_DIR="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/perfgate-faults.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
"${CC:-cc}" -O2 -o "$WORK/tracking" "$SOURCE_DIR/bench/fault_tracking.c"
"$WORK/tracking" "$SECONDS_TO_RUN" > "$WORK/medians"
python3 - "$WORK/medians" <<'PY'
import statistics, sys
rows = [list(map(float, line.split())) for line in open(sys.argv[1]) if line.strip()]
loop, rounds, probe = ([r[i] for r in rows] for i in range(3))
def corr(a, b):
    ma, mb = statistics.mean(a), statistics.mean(b)
    num = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    den = (sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b)) ** 0.5
    return num / den if den else float("nan")
print(f"{len(rows)} medians of 20 rounds each")
for name, v in (("loop", loop), ("30 x 256 KiB faults", rounds), ("512 KiB probe", probe)):
    print(f"{name}: {min(v):.3f} … {max(v):.3f} ms (median {statistics.median(v):.3f})")
print(f"correlation with the faulting rounds: the loop {corr(loop, rounds):.2f}, the probe {corr(probe, rounds):.2f}")
PY
