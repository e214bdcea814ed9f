#!/usr/bin/env bash
# Reads perfgate's junit.xml with the real parsers of two JUnit-publishing
# GitHub actions and checks that they count what the file declares.
#
#   tests/ci/junit-consumers/check.sh BUILD_DIR DORNY_SRC MIKEPENZ_SRC
#
# DORNY_SRC and MIKEPENZ_SRC are checkouts of dorny/test-reporter and
# mikepenz/action-junit-report (any ref); each is copied, its npm
# dependencies installed and its TypeScript compiled. The third consumer,
# EnricoMi/publish-unit-test-result-action, reads through junitparser, which
# the ctest `WrittenReports.JunitparserReadsConsistentCounts` runs. Not part
# of ctest: the actions' sources are not packaged.
#
# The junit.xml files: the report tests' fixture (every outcome, hostile
# names), written as is, re-rendered with --strict (inconclusive checks
# become failures), and with one regression accepted and the inconclusive
# check quarantined (passed testcases with properties; gate/triage/). For each: tests, failures+errors and skipped of the
# <testsuites> element must equal what both parsers count, and every
# annotation must point at the suite file. Exit 0 when all hold.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 BUILD_DIR DORNY_SRC MIKEPENZ_SRC" >&2; exit 2; }
build=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

compile() {  # $1 source checkout, $2 name
  cp -a "$1" "$work/$2"
  rm -rf "$work/$2/lib" "$work/$2/node_modules"
  (cd "$work/$2" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null && npx tsc)
}
compile "$2" dorny
compile "$3" mikepenz

PERFGATE_KEEP_REPORTS="$work/fixture" "$build/tests/perfgate_report_tests" \
  --gtest_filter='WrittenReports.CreatesAllFiveFiles:WrittenReports.AcceptedAndQuarantinedChecksArePassedTestcasesSayingWhoAndWhy' \
  >/dev/null
out="$work/fixture/nested/out"
rc=0
"$build/perfgate" report "$out/results.json" --strict --out "$work/strict" >/dev/null 2>&1 || rc=$?
[ "$rc" -ne 0 ] || { echo "perfgate report --strict passed a fixture with regressions" >&2; exit 1; }

suite_file=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["suite_file"])' "$out/results.json")
status=0
[ -f "$out/triaged/junit.xml" ] || { echo "the report tests wrote no triaged junit.xml" >&2; exit 1; }
for junit in "$out/junit.xml" "$work/strict/junit.xml" "$out/triaged/junit.xml"; do
  declared=$(/usr/bin/python3 - "$junit" <<'PY'
import sys
import xml.etree.ElementTree as ElementTree
root = ElementTree.parse(sys.argv[1]).getroot()
count = lambda name: int(root.get(name, 0))
print(f"tests={count('tests')} failed={count('failures') + count('errors')} skipped={count('skipped')}")
PY
)
  read_by=$(node --import "$here/actions-core.mjs" "$here/read.mjs" "$work/dorny/lib" "$work/mikepenz/lib" "$junit" 2>/dev/null)
  echo "${junit#"$work"/}: declares $declared"
  echo "$read_by" | grep -v '^annotation' | sed 's/^/  /'
  for parser in dorny mikepenz; do
    if ! grep -qx "$parser $declared" <<<"$read_by"; then
      echo "  MISMATCH: $parser does not count $declared" >&2
      status=1
    fi
  done
  if grep '^annotation' <<<"$read_by" | grep -qv " $suite_file\$"; then
    echo "  MISMATCH: an annotation does not point at $suite_file" >&2
    status=1
  fi
done
exit $status
