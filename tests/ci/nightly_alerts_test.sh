#!/usr/bin/env bash
# The nightly alerts end to end, through the CLI as a nightly job runs it:
# 30 synthetic nights of a suite measured with `perfgate run
# --baseline-from-history`, each added to the history, with two steps of the
# measured output size: +20 % on night 11 from a merge whose accept trailer
# covers it (passed to the run with --accept-trailers), +20 % on night 21
# without one. `perfgate trend` must then record two alert groups, the first
# `expected`, the second `new`; the states move through `alerts set` (bad
# states and ids: one line, exit 2); 8 `alerts set` at once lose no change;
# once the second step is marked expected, the next night's baseline from
# the history is the new level and the night passes. On SQLite, and on
# PostgreSQL when the test server runs (ctest fixture "postgres").
#   tests/ci/nightly_alerts_test.sh PERFGATE_BINARY [POSTGRES_STATE_DIR]
set -euo pipefail
perfgate=$1
postgres_state=${2:-}
work=$(mktemp -d /tmp/perfgate-alerts-test.XXXXXX)
databases=()
cleanup() {
  for db in "${databases[@]}"; do
    psql -q -h "$(cat "$postgres_state/socket_dir")" -U postgres -d postgres \
      -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" > /dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "nightly_alerts_test: $*" >&2
  exit 1
}

# The workload prints its output size: the level in the file, in hundreds of
# bytes, plus up to 0.5 % that depends on its process id (a size, which a
# busy host cannot inflate: the nights are decided whatever else runs).
echo 100 > "$work/level"
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
line = ('echo "{\\"metric\\": \\"app.output_size\\", \\"value\\": $(( $(cat %s/level) * 100 + $$ %% 50 )), '
        '\\"unit\\": \\"bytes\\", \\"better\\": \\"lower\\"}"' % work)
suite = {"name": "nightly", "scenarios": [{
    "name": "parse", "warmup": 0, "repetitions": 6, "timeout_s": 30,
    "workload": {"kind": "command", "shell": True, "argv": [line]},
    "checks": [{"metric": "app.output_size", "statistic": "value", "max_regression_pct": 5}]}]}
json.dump(suite, open(work + "/suite.json", "w"), indent=2)
PY
# What the nightly collects from the commits merged since the last night.
echo "m11 parse/app.output_size.value <= +30%: the stricter parser costs a fifth, on purpose" > "$work/trailers.txt"

json() {  # json FILE PYTHON-EXPRESSION-OF-j
  python3 -c "import json, sys; j = json.load(open(sys.argv[1])); print($2)" "$1"
}

# night DB N [EXPECTED-EXIT]: measure, date the run night N of October, add it.
night() {
  local db=$1 n=$2 expected=${3:-0} out=$work/night-$2-$RANDOM
  local args=(run "$work/suite.json" --out "$out" --quiet)
  [ "$n" -eq 1 ] || args+=(--baseline-from-history "$db" --branch main)  # the first night has none
  [ "$n" -ne 11 ] || args+=(--accept-trailers "$work/trailers.txt")
  set +e
  "$perfgate" "${args[@]}" > "$out.log" 2>&1
  local code=$?
  set -e
  [ "$code" -eq "$expected" ] || fail "night $n: exit $code, not $expected: $(cat "$out.log")"
  python3 - "$out/results.json" "$n" <<'PY'
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
r = json.load(open(path))
r["environment"]["timestamp"] = "2026-10-%02dT02:00:00Z" % n
json.dump(r, open(path, "w"))
PY
  "$perfgate" history add "$out/results.json" --db "$db" --commit "m$n" --branch main > /dev/null
  last_out=$out
}

# expect_bad_input WHAT PHRASE COMMAND...: exit 2 and one line naming it.
expect_bad_input() {
  local what=$1 phrase=$2
  shift 2
  set +e
  "$perfgate" "$@" > "$work/out.txt" 2> "$work/err.txt"
  local code=$?
  set -e
  [ "$code" -eq 2 ] || fail "$what: exit $code, not 2"
  [ "$(wc -l < "$work/err.txt")" -eq 1 ] || fail "$what: not one line: $(cat "$work/err.txt")"
  grep -qF -- "$phrase" "$work/err.txt" || fail "$what: no \"$phrase\" in: $(cat "$work/err.txt")"
}

check_backend() {
  local db=$1 name=$2
  echo 100 > "$work/level"
  for n in $(seq 1 30); do
    [ "$n" -ne 11 ] || echo 120 > "$work/level"
    [ "$n" -ne 21 ] || echo 144 > "$work/level"
    if [ "$n" -le 20 ]; then night "$db" "$n" 0; else night "$db" "$n" 1; fi
    if [ "$n" -eq 11 ]; then
      [ "$(json "$last_out/results.json" 'j["scenarios"][0]["checks"][0]["verdict"]')" = accepted ] ||
        fail "$name: night 11 was not accepted"
    fi
  done
  "$perfgate" trend --db "$db" --branch main --out "$work/trend-$name" > "$work/trend.log"
  # The groups of the measured size: the runner's own metrics of a shell
  # (its wall and CPU time) may step too on a shared host, in groups of their own.
  "$perfgate" alerts list --db "$db" --json > "$work/all-alerts.json"
  python3 -c 'import json, sys
groups = [g for g in json.load(open(sys.argv[1])) if any(m["metric"] == "app.output_size" for m in g["metrics"])]
json.dump(groups, open(sys.argv[2], "w"))' "$work/all-alerts.json" "$work/alerts.json"
  [ "$(json "$work/alerts.json" 'len(j)')" -eq 2 ] || fail "$name: not two alert groups: $(cat "$work/alerts.json")"
  [ "$(json "$work/alerts.json" 'j[0]["commit_before"] + ".." + j[0]["commit_after"] + " " + j[0]["state"]')" = \
    "m10..m11 expected" ] || fail "$name: the accepted step is not expected: $(cat "$work/alerts.json")"
  [ "$(json "$work/alerts.json" 'j[1]["commit_before"] + ".." + j[1]["commit_after"] + " " + j[1]["state"]')" = \
    "m20..m21 new" ] || fail "$name: the other step is not new: $(cat "$work/alerts.json")"
  local expected_id new_id
  expected_id=$(json "$work/alerts.json" 'j[0]["id"]')
  new_id=$(json "$work/alerts.json" 'j[1]["id"]')
  grep -q "new alert #$new_id" "$work/trend.log" || fail "$name: trend did not say the new alert: $(cat "$work/trend.log")"
  grep -q "#$expected_id expected" "$work/trend-$name/index.html" || fail "$name: the trend page shows no state"

  # The states move; every change is kept with who and when.
  "$perfgate" alerts set "$new_id" --db "$db" --state acknowledged --owner ana --by ana > /dev/null
  "$perfgate" alerts set "$new_id" --db "$db" --bug https://bugs.example.org/42 --by bo > /dev/null
  "$perfgate" alerts show "$new_id" --db "$db" --json > "$work/show.json"
  [ "$(json "$work/show.json" 'j["state"] + " " + j["owner"] + " " + j["bug"]')" = \
    "acknowledged ana https://bugs.example.org/42" ] || fail "$name: set did not change it: $(cat "$work/show.json")"
  [ "$(json "$work/show.json" '" ".join(c["by"] for c in j["changes"])')" = "perfgate ana bo" ] ||
    fail "$name: the changes are not all kept: $(cat "$work/show.json")"
  "$perfgate" alerts show "$expected_id" --db "$db" > "$work/show.md"
  grep -qF "**State:** expected" "$work/show.md" || fail "$name: the Markdown body has no state"
  grep -qF "accepted in the range by the run of m11" "$work/show.md" || fail "$name: the body does not say why expected"
  [ "$("$perfgate" alerts list --db "$db" --state acknowledged | wc -l)" -eq 1 ] || fail "$name: list --state"

  expect_bad_input "a bad state" 'is not an alert state (new, acknowledged, expected, invalid, fixed)' \
    alerts set "$new_id" --db "$db" --state closed
  expect_bad_input "a missing alert" "no alert 999" alerts set 999 --db "$db" --state fixed
  expect_bad_input "a bad id" "is not an alert id" alerts show 1x --db "$db"
  expect_bad_input "a bad bug link" "is not a bug link" alerts set "$new_id" --db "$db" --bug "javascript:alert(1)"
  expect_bad_input "a bad list state" "is not an alert state" alerts list --db "$db" --state Fixed

  # Eight jobs at once: none of their changes is lost.
  local pids=()
  for i in $(seq 1 8); do
    "$perfgate" alerts set "$new_id" --db "$db" --state acknowledged --by "job$i" --note "round $i" \
      > "$work/set-$i.log" 2>&1 &
    pids+=($!)
  done
  for i in $(seq 1 8); do wait "${pids[$((i - 1))]}" || fail "$name: set $i failed: $(cat "$work/set-$i.log")"; done
  "$perfgate" alerts show "$new_id" --db "$db" --json > "$work/show.json"
  [ "$(json "$work/show.json" 'len(j["changes"])')" -eq 11 ] || fail "$name: changes lost: $(cat "$work/show.json")"
  [ "$(json "$work/show.json" '" ".join(sorted(c["by"] for c in j["changes"][3:]))')" = \
    "job1 job2 job3 job4 job5 job6 job7 job8" ] || fail "$name: a job's change is missing"
  [ "$(json "$work/show.json" 'j["owner"] + " " + j["bug"]')" = "ana https://bugs.example.org/42" ] ||
    fail "$name: the owner or the bug was lost"

  # Nights 21 to 30 failed against the old level. Once the step is expected,
  # the newest of them is a baseline again and the next night passes.
  night "$db" 31 1
  "$perfgate" alerts set "$new_id" --db "$db" --state expected --by ana --note "the new codec, as planned" > /dev/null
  night "$db" 32 0
  json "$last_out/results.json" 'j["baseline_source"]' | grep -q "m31 .*only regressions were expected" ||
    fail "$name: the baseline is not the expected night: $(json "$last_out/results.json" 'j["baseline_source"]')"
  echo "nightly_alerts_test: $name: two groups (expected, new), states set, 8 concurrent sets kept, expected night used"
}

[ -n "${ALERTS_TEST_SKIP_SQLITE:-}" ] || check_backend "$work/history.sqlite" SQLite
if [ -n "$postgres_state" ] && [ -f "$postgres_state/socket_dir" ]; then
  socket=$(cat "$postgres_state/socket_dir")
  database=perfgate_alerts_$$
  psql -q -h "$socket" -U postgres -d postgres -c "CREATE DATABASE $database" > /dev/null
  databases+=("$database")
  check_backend "postgresql://postgres@/$database?host=$socket" PostgreSQL
elif [ "${CI:-}" = true ]; then
  fail "the test PostgreSQL server is not running (ctest starts it: fixture postgres)"
else
  echo "nightly_alerts_test: PostgreSQL skipped: the test server is not running"
fi
