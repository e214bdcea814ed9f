#!/usr/bin/env bash
# How often `perfgate ab` fails an unchanged variant (A/A) and catches a
# planted slowdown (A/B, SMOKE_SLOWDOWN), on this host: RUNS of each,
# alternating A/A and A/B, the second half of them with a noisy neighbour
# (bench/noisy_neighbour.sh: CPU and memory bursts on one core) beside
# perfgate. Prints per arm and neighbour the share of runs that failed
# (exit 1), the pairs a run took on average (confirmation rounds included),
# how many runs measured a confirmation round, and the rounds retaken while
# the host was busy.
#
#   bench/ab_rates.sh BUILD_DIR [RUNS] [SLOWDOWN] [THRESHOLD_PCT] [SUITE]
#
# THRESHOLD_PCT, when given, replaces every regression check's
# max_regression_pct in a copy of the suite (2 asks whether a 5 % slowdown
# is caught at all; the smoke suite's own thresholds are 10-15 %). Extra
# arguments for perfgate ab go in AB_ARGS (e.g. AB_ARGS=--no-confirm);
# AB_ARMS=aa measures A/A only. AB_NEIGHBOUR=all (or none) runs every run
# with (or without) the neighbour instead of the second half. The sides differ in AB_VARIABLE (default
# SMOKE_SLOWDOWN): AB_AA_VALUE (default 1.0) on both sides of A/A, SLOWDOWN
# on the candidate side of A/B; a suite without SMOKE_SLOWDOWN names one it
# expands, with the value it has by default (the presubmit suite:
# AB_ARMS=aa AB_VARIABLE=FIO_RUNTIME AB_AA_VALUE=2; the cold-start suite's
# planted pg-ready delay: AB_VARIABLE=COLDSTART_EXTRA_DELAY_MS AB_AA_VALUE=0
# AB_ARGS="--scenario pg-ready" ... 20 30 "" workloads/cold-start/cold-start.json).
# Run as root (probes).
set -euo pipefail
BUILD_DIR="$(cd "${1:?usage: ab_rates.sh BUILD_DIR [RUNS] [SLOWDOWN] [THRESHOLD_PCT] [SUITE]}" && pwd)"
RUNS="${2:-20}"
SLOWDOWN="${3:-1.05}"
THRESHOLD="${4:-}"
SOURCE_DIR="$(cd "$(dirname "$0")/.." && pwd)"
SUITE="${5:-$SOURCE_DIR/workloads/examples/smoke.json}"
PERFGATE="$BUILD_DIR/perfgate"
read -r -a ab_args <<<"${AB_ARGS:-}"
read -r -a arms <<<"${AB_ARMS:-aa ab}"
variable="${AB_VARIABLE:-SMOKE_SLOWDOWN}"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/perfgate-ab-rates.XXXXXX")"
neighbour=""
cleanup() {
  [ -n "$neighbour" ] && kill "$neighbour" 2>/dev/null && wait "$neighbour" 2>/dev/null
  # AB_KEEP=1 keeps every run's reports (the directory is printed).
  if [ "${AB_KEEP:-0}" = 1 ]; then echo "reports kept in $WORK"; else rm -rf "$WORK"; fi
  rm -rf "${COPY:-}"
}
trap cleanup EXIT

if [ -n "$THRESHOLD" ]; then
  # Same directory as the original, so that ${suite_dir} still resolves.
  COPY="$(dirname "$SUITE")/.ab-rates-$$.json"
  /usr/bin/python3 - "$SUITE" "$COPY" "$THRESHOLD" <<'PY'
import json, sys
source, copy, threshold = sys.argv[1], sys.argv[2], float(sys.argv[3])
text = open(source).read()
suite = json.loads("\n".join(l for l in text.splitlines() if not l.lstrip().startswith("//")))
for scenario in suite["scenarios"]:
    for check in scenario.get("checks", []):
        if check.get("type", "regression") == "regression":
            check["max_regression_pct"] = threshold
json.dump(suite, open(copy, "w"), indent=1)
PY
  SUITE="$COPY"
fi

echo "suite: $SUITE; $RUNS runs of each arm (${arms[*]}); A/B slowdown $SLOWDOWN; thresholds: ${THRESHOLD:-as in the suite}; ab ${AB_ARGS:-}"
for i in $(seq 1 "$RUNS"); do
  noisy=0
  case "${AB_NEIGHBOUR:-half}" in
    all) noisy=1 ;;
    none) ;;
    half) [ "$i" -le $((RUNS / 2)) ] || noisy=1 ;;
    *) echo "AB_NEIGHBOUR: all, none or half, not ${AB_NEIGHBOUR}" >&2; exit 2 ;;
  esac
  if [ "$noisy" = 1 ]; then
    noisy=1
    if [ -z "$neighbour" ]; then
      bash "$SOURCE_DIR/bench/noisy_neighbour.sh" &
      neighbour=$!
    fi
  fi
  for arm in "${arms[@]}"; do
    value="${AB_AA_VALUE:-1.0}"
    [ "$arm" = ab ] && value="$SLOWDOWN"
    out="$WORK/$arm-$i"
    set +e
    "$PERFGATE" ab "$SUITE" --baseline-set "$variable=${AB_AA_VALUE:-1.0}" --candidate-set "$variable=$value" \
      --out "$out" --quiet "${ab_args[@]}" >"$WORK/output" 2>&1
    code=$?
    set -e
    mkdir -p "$out"
    # The console of a run that ended in an error says why.
    if [ "$code" -gt 1 ]; then mv "$WORK/output" "$out/output"; fi
    echo "$code $noisy" >"$out/exit"
  done
  printf '.' >&2
done
echo >&2

/usr/bin/python3 - "$WORK" "$RUNS" <<'PY'
import json, os, sys
work, runs = sys.argv[1], int(sys.argv[2])
for arm, title in (("aa", "A/A"), ("ab", "A/B")):
    for noisy in (0, 1):
        n = failed = errors = confirming = retaken = caught = inconclusive = 0
        pairs = []
        for i in range(1, runs + 1):
            out = os.path.join(work, f"{arm}-{i}")
            if not os.path.exists(os.path.join(out, "exit")):
                continue
            code, was_noisy = (int(x) for x in open(os.path.join(out, "exit")).read().split())
            if was_noisy != noisy:
                continue
            n += 1
            failed += code == 1
            errors += code not in (0, 1)
            if code not in (0, 1) and os.path.exists(os.path.join(out, "output")):
                last = open(os.path.join(out, "output"), errors="replace").read().strip().splitlines()[-1:]
                print(f"  {title} run {i} ended with exit {code}: {last[0] if last else ''}")
            try:
                results = json.load(open(os.path.join(out, "results.json")))
            except (OSError, ValueError):
                continue
            taken = confirmed_here = 0
            caught_here = inconclusive_here = False
            for scenario in results["scenarios"]:
                taken += len(scenario["repetitions"])
                retaken += len(scenario.get("retaken_repetitions", [])) // 2
                extra = max((c.get("confirmation", {}).get("pairs", 0) for c in scenario["checks"]), default=0)
                taken += extra
                confirmed_here += extra > 0
                for c in scenario["checks"]:
                    regression_check = c["spec"].get("type", "regression") == "regression"
                    if c.get("verdict") == "regression" and arm == "ab" and regression_check:
                        caught_here = True
                    if c.get("verdict") == "inconclusive":
                        inconclusive_here = True
                    if arm == "aa" and c.get("verdict") == "regression":
                        print(f"  A/A run {i} failed: {scenario['name']} {c['spec'].get('name') or c['spec'].get('metric')}: {c.get('message', '')}")
            confirming += confirmed_here > 0
            caught += caught_here
            inconclusive += inconclusive_here
            pairs.append(taken)
        if n == 0:
            continue
        where = "with the neighbour" if noisy else "quiet host"
        mean = sum(pairs) / len(pairs) if pairs else 0
        # A/B: "caught" counts runs in which a regression check (not a budget) failed.
        what = f"; caught by a regression check in {caught} ({100 * caught / n:.1f} %)" if arm == "ab" else ""
        print(f"{title}, {where}: {failed} of {n} runs failed ({100 * failed / n:.1f} %){what}, {errors} errors, "
              f"{inconclusive} with an inconclusive check; {mean:.1f} pairs per run; confirmation rounds in "
              f"{confirming} runs; {retaken} rounds retaken")
PY
