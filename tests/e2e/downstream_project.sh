#!/usr/bin/env bash
# A downstream project as perfgate's pull-request gate meets it: a small C
# program in a git repository (its build script and a perfgate suite on
# main), a branch `slow` whose hot function does a fifth more work, and a
# branch `comment` that changes only a comment. The program refuses to run
# as root, so a gate that gave it root fails.
#   source tests/e2e/downstream_project.sh; make_downstream_project DIR

source "$(dirname "${BASH_SOURCE[0]}")/../harness/skip.sh" downstream-gate

# A failed gate test: the reason, then the end of every log in $scratch.
fail() {
  echo "FAIL: $1"
  for f in "$scratch"/*.log; do echo "---- $f"; tail -n 30 "$f"; done
  exit 1
}

# How the gate's end-to-end tests start: as root (else exit 77, a skip,
# which fails under CI=true), in a scratch directory removed on exit, in the
# project made at $repo ($scratch/project). Sets scratch and repo.
start_downstream_gate_test() {
  [ "$(id -u)" -eq 0 ] || skip "the gate loads BPF programs as root"
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  chmod 0755 "$scratch"
  repo=$scratch/project
  make_downstream_project "$repo"
  cd "$repo"
}

# Makes the repository in DIR (created); runs in a subshell.
make_downstream_project() (
set -euo pipefail
repo=$1
mkdir -p "$repo/perf"
cd "$repo"
git init -q -b main
git config user.email dev@example.com
git config user.name "A developer"

# The hot function does ROUNDS passes over a buffer; the slow pull request
# does a fifth more. The program refuses to run as root: the gate must not
# give the pull request's code root.
cat >work.c <<'C'
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#define ROUNDS 600 /* passes over the buffer */

static uint8_t buffer[1 << 16];

/* Mixes the buffer ROUNDS times. */
__attribute__((noinline)) static uint64_t mix(void) {
  uint64_t h = 1469598103934665603ull;
  for (int r = 0; r < ROUNDS; r++)
    for (size_t i = 0; i < sizeof buffer; i++) h = (h ^ buffer[i]) * 1099511628211ull + (uint64_t)r;
  return h;
}

int main(void) {
  if (getuid() == 0) {
    fprintf(stderr, "work: refusing to run as root\n");
    return 3;
  }
  for (size_t i = 0; i < sizeof buffer; i++) buffer[i] = (uint8_t)(i * 31);
  printf("%llu\n", (unsigned long long)mix());
  return 0;
}
C
cat >build.sh <<'SH'
#!/bin/sh
set -e
mkdir -p build
id -u > build/built-by-uid
cc -O2 -o build/work work.c
SH
cat >perf/suite.json <<'JSON'
// The downstream project's gate: its hot function's time.
{
  "name": "downstream",
  "scenarios": [
    {
      "name": "mix",
      "workload": { "kind": "command", "argv": ["${BUILD_DIR}/work"] },
      "warmup": 1,
      "repetitions": 12,
      "timeout_s": 60,
      "probes": [{ "name": "sched", "scope": "workload" }],
      "checks": [
        { "metric": "workload.cpu_time", "statistic": "value", "type": "regression", "max_regression_pct": 8 }
      ]
    }
  ]
}
JSON
git add -A
git commit -qm "The project with its perfgate suite"
git checkout -qb slow
sed -i 's/#define ROUNDS 600 /#define ROUNDS 720 /' work.c
git commit -qam "Mix a fifth more rounds"
git checkout -q main
git checkout -qb comment
sed -i 's|/\* Mixes the buffer ROUNDS times. \*/|/* Mixes the buffer ROUNDS times (FNV-1a style). */|' work.c
git commit -qam "Say what the mixing is"
git checkout -q main
)
