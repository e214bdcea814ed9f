#!/usr/bin/env python3
"""Judges the runs of tests/vm/slow-host-test.sh: each NAME.json (the run's
results.json) and NAME.rc (perfgate's exit status) of DIR, against what the
run's name says it must give. Prints each run's verdicts and what the host
canary and the workload saw against the baseline (medians, as ratios; the
canary's range over the repetitions), then whether all were as expected.

    slow-host-judge.py DIR NAME...

Names: baseline (recorded, exit 0), uncapped-slower-30 (exit 1),
capped-PERIOD-same (exit 0, no regression, every inconclusive check
explained by the slower host, and the workload at least 1.3x slower: the cap
bit, beyond the checks' 10 % and the host's noise), capped-PERIOD-slower-150 (exit 1)."""
import json
import os
import statistics
import sys

SHOWN = ["host.canary.cpu", "host.canary.memory", "host.canary.fault", "workload.cpu_time", "workload.wall_time"]


def load(directory, name):
    with open(os.path.join(directory, name + ".json")) as f:
        results = json.load(f)
    with open(os.path.join(directory, name + ".rc")) as f:
        text = f.read().strip()
    return results, int(text) if text else None


def values(scenario, metric):
    return [r["metrics"][metric]["value"] for r in scenario["repetitions"] if metric in r["metrics"]]


def expectation(name):
    """(what it must give, a function of (exit status, checks, ratios) giving the reason it does not or "")."""
    def exit_is(code):
        return lambda rc, checks, ratios: "" if rc == code else f"exit {rc}, not {code}"

    if name == "baseline":
        return "recorded (exit 0)", exit_is(0)
    if name.endswith("-slower-30") or name.endswith("-slower-150"):
        def failed(rc, checks, ratios):
            if rc != 1:
                return f"exit {rc}, not 1"
            if not any(c["verdict"] == "regression" for c in checks):
                return "exit 1 without a regression"
            return ""
        return "a regression (exit 1)", failed
    if name.endswith("-same"):
        def held(rc, checks, ratios):
            if rc != 0:
                return f"exit {rc}, not 0"
            for c in checks:
                if c["verdict"] == "regression":
                    return f"{c['spec']['name']} is a regression"
                if c["verdict"] == "inconclusive" and "canary" not in c.get("message", ""):
                    return f"{c['spec']['name']} is inconclusive, not for the slower host"
            if ratios.get("workload.cpu_time", 0) < 1.3:
                return "the cap did not slow the workload (its CPU time {:.2f}x)".format(
                    ratios.get("workload.cpu_time", 0))
            return ""
        return "no regression (exit 0; inconclusive only for the slower host)", held
    raise SystemExit(f"slow-host-judge: no expectation for a run named {name}")


def main():
    if len(sys.argv) < 3:
        raise SystemExit("usage: slow-host-judge.py DIR NAME...")
    directory, names = sys.argv[1], sys.argv[2:]
    base = load(directory, "baseline")[0]["scenarios"][0]
    base_median = {m: statistics.median(values(base, m)) for m in SHOWN if values(base, m)}
    failures = 0
    for name in names:
        what, judge = expectation(name)
        try:
            results, rc = load(directory, name)
        except (OSError, ValueError) as e:
            print(f"vm-slow-host: {name}: FAILED: no results came back ({e})")
            failures += 1
            continue
        scenario = results["scenarios"][0]
        ratios, seen = {}, []
        for m in SHOWN:
            v = values(scenario, m)
            if not v or not base_median.get(m):
                continue
            ratios[m] = statistics.median(v) / base_median[m]
            seen.append(f"{m} {ratios[m]:.2f}x ({min(v) / base_median[m]:.2f}-{max(v) / base_median[m]:.2f})")
        checks = scenario.get("checks", [])
        reason = judge(rc, checks, ratios)
        print(f"vm-slow-host: {name}: exit {rc}, {'as expected' if not reason else 'FAILED: ' + reason}: {what}")
        print(f"  against the baseline, median (range over {len(scenario['repetitions'])} repetitions): " +
              ", ".join(seen))
        retaken = scenario.get("retaken_repetitions", [])
        if retaken:
            print(f"  {len(retaken)} repetitions measured again: " +
                  "; ".join(sorted({r.get("tainted", "") or "" for r in retaken})))
        for c in checks if name != "baseline" else []:
            print(f"  {c['verdict']}: {c.get('message', '')}")
        failures += bool(reason)
    print(f"vm-slow-host: {len(names) - failures} of {len(names)} runs as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
