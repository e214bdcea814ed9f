#!/usr/bin/env bash
# The nightly alerts end to end, through the CLI and ci/nightly-accepts.sh as
# the nightly job runs them: 30 nights of a suite on the main branch of a
# repository made here, each added to the history, with two steps of the
# measured output size: +20 % on night 11, a merge whose commits carry an
# accept trailer covering it (and two bad trailers), +20 % on night 21
# without one. Night 11 is measured with `perfgate run --baseline-from-history
# --accept-trailers FILE --skip-bad-trailers`, FILE collected by the script
# from the commits after the history's newest run: the good trailer accepts
# the step, the bad ones are skipped with a line each in the console and in
# summary.md (and without the option they are exit 2). `perfgate trend` must
# then record two alert groups, the first `expected`, the second `new`; the
# states move through `alerts set` (bad states and ids: one line, exit 2);
# 8 `alerts set` at once lose no change; once the second step is marked
# expected, the next night's baseline from the history is the new level and
# the night passes. On SQLite, and on PostgreSQL when the test server runs
# (ctest fixture "postgres").
#
# The other nights' results are made from the first night's (their values
# and verdicts set as those nights would have measured them) and reach the
# history through `history copy`, so that the measuring and the process
# starts go where the nightly's own logic is: a real run is a second or more
# under the sanitizers.
#   tests/ci/nightly_alerts_test.sh PERFGATE_BINARY SOURCE_DIR [POSTGRES_STATE_DIR]
set -euo pipefail
perfgate=$1
# The system's Python, not a version manager's shim (seconds a start on a busy host).
python3=/usr/bin/python3
[ -x "$python3" ] || python3=python3
accepts_script=$2/ci/nightly-accepts.sh
postgres_state=${3:-}
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
# No evidence repetition: the failing night's why is not what this tests.
echo 100 > "$work/level"
"$python3" - "$work" <<'PY'
import json, sys
work = sys.argv[1]
line = ('echo "{\\"metric\\": \\"app.output_size\\", \\"value\\": $(( $(cat %s/level) * 100 + $$ %% 50 )), '
        '\\"unit\\": \\"bytes\\", \\"better\\": \\"lower\\"}"' % work)
suite = {"name": "nightly", "evidence": "never", "scenarios": [{
    "name": "parse", "warmup": 0, "repetitions": 6, "timeout_s": 30,
    "workload": {"kind": "command", "shell": True, "argv": [line]},
    "checks": [{"metric": "app.output_size", "statistic": "value", "max_regression_pct": 5}]}]}
json.dump(suite, open(work + "/suite.json", "w"), indent=2)
PY

# The repository: a commit a night; night 11 merges a branch whose commits
# accept the step (and carry a trailer naming a check the suite lost and a
# malformed one); night 5 accepted something long ago, outside any range the
# nights after 10 look at.
repo=$work/repo
git init -q -b main "$repo"
# One git process for all the commits (git fast-import): a commit each is a
# process start each.
"$python3" - > "$work/commits.stream" <<'PY'
def commit(ref, mark, parents, message):
    data = message.encode()
    print(f"commit {ref}\nmark :{mark}\ncommitter A developer <dev@example.com> {1790000000 + mark * 60} +0000")
    print(f"data {len(data)}\n{message}")
    for i, p in enumerate(parents):
        print(f"{'from' if i == 0 else 'merge'} :{p}")
    print()
for n in range(1, 33):
    parents = [n - 1] if n > 1 else []
    message = f"Night {n}\n"
    if n == 5:
        message += "\nPerfgate-Accept: parse/app.output_size.value <= +50%: long ago\n"
    if n == 11:
        commit("refs/heads/stricter-parser", 101, [10], "Parse strictly\n\nPerfgate-Accept: "
               "parse/app.output_size.value <= +30%: the stricter parser costs a fifth, on purpose\n")
        commit("refs/heads/stricter-parser", 102, [101], "Drop the old path\n\n"
               "Perfgate-Accept: parse/old_path.value <= +5%: gone\n"
               "Perfgate-Accept: parse/app.output_size.value <= 15: no percent sign\n")
        parents, message = [10, 102], "Night 11: merge the stricter parser\n"
    commit("refs/heads/main", n, parents, message)
PY
git -C "$repo" fast-import --quiet --export-marks="$work/marks" < "$work/commits.stream"
sha=("")
for n in $(seq 1 32); do sha+=("$(awk -v m=":$n" '$1 == m { print $2 }' "$work/marks")"); done
accepting=$(awk '$1 == ":101" { print $2 }' "$work/marks")

# json FILE PYTHON-EXPRESSION-OF-j...: each expression's value on a line of its own
# (one Python start for several facts: `mapfile -t facts < <(json ...)`).
json() {
  "$python3" -c 'import json, sys
j = json.load(open(sys.argv[1]))
for expression in sys.argv[2:]:
    print(eval(expression))' "$@"
}

# measure DB N EXPECTED-EXIT [ARGS...]: run night N against the history (the
# first night has none), date the run night N of October, add it.
measure() {
  local db=$1 n=$2 expected=$3 out=$work/night-$2-$RANDOM
  shift 3
  local args=(run "$work/suite.json" --out "$out" --quiet "$@")
  [ "$n" -eq 1 ] || args+=(--baseline-from-history "$db" --branch main)
  set +e
  "$perfgate" "${args[@]}" > "$out.log" 2>&1
  local code=$?
  set -e
  [ "$code" -eq "$expected" ] || fail "night $n: exit $code, not $expected: $(cat "$out.log")"
  "$python3" - "$out/results.json" "$n" <<'PY'
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
r = json.load(open(path))
r["environment"]["timestamp"] = "2026-10-%02dT02:00:00Z" % n
json.dump(r, open(path, "w"))
PY
  "$perfgate" history add "$out/results.json" --db "$db" --commit "${sha[$n]}" --branch main > /dev/null
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

# The first night, measured; the others before and after night 11 made from
# it as they would have measured (nights 21 to 30 failed against the old
# level), each in a history of its own: before.sqlite, after.sqlite.
measure "$work/before.sqlite" 1 0 --baseline-dir "$work/baselines" --update-baseline
"$python3" - "$last_out/results.json" "$work" <<'PY'
import copy, json, sys
template, work = json.load(open(sys.argv[1])), sys.argv[2]
scenario = template["scenarios"][0]
for key in ("evidence", "explanation", "baseline_repetitions"):
    scenario.pop(key, None)
check = scenario["checks"][0]
for n in list(range(2, 11)) + list(range(12, 31)):
    level = 100 if n < 11 else 120 if n < 21 else 144
    r = copy.deepcopy(template)
    r["environment"]["timestamp"] = "2026-10-%02dT02:00:00Z" % n
    reps = r["scenarios"][0]["repetitions"]
    for i, rep in enumerate(reps):
        rep["metrics"]["app.output_size"]["value"] = float(level * 100 + (n * 7 + i * 13) % 50)
    regressed = n > 20
    c = {"spec": check["spec"], "statistic": check["statistic"], "unit": check["unit"], "better": check["better"],
         "verdict": "regression" if regressed else "pass", "change_pct": 20.0 if regressed else 0.1,
         "message": "made by the test"}
    r["scenarios"][0]["checks"] = [c]
    r["verdict"], r["exit_code"] = ("regression", 1) if regressed else ("pass", 0)
    json.dump(r, open("%s/made-%d.json" % (work, n), "w"))
PY
add_made() {  # add_made HISTORY NIGHT...: one process for them all
  local history=$1 files=() commits=()
  shift
  for n in "$@"; do
    files+=("$work/made-$n.json")
    commits+=(--commit "${sha[$n]}")
  done
  "$perfgate" history add "${files[@]}" --db "$history" "${commits[@]}" --branch main > /dev/null
}
# shellcheck disable=SC2046
add_made "$work/before.sqlite" $(seq 2 10)
# shellcheck disable=SC2046
add_made "$work/after.sqlite" $(seq 12 30)

# ci/nightly-accepts.sh on its own: a first night, bad usage.
bash "$accepts_script" --perfgate "$perfgate" --db "$work/none.sqlite" --repo "$repo" --out "$work/first.txt" \
  > "$work/first.log" || fail "the script failed on a first night: $(cat "$work/first.log")"
grep -q "first night" "$work/first.log" || fail "the script did not say it is a first night"
[ "$(grep -vc '^#' "$work/first.txt")" -eq 0 ] || fail "a first night collected trailers: $(cat "$work/first.txt")"
set +e
bash "$accepts_script" --repo "$repo" --out "$work/x.txt" > /dev/null 2> "$work/err.txt"
[ $? -eq 2 ] || fail "the script without --db or --since did not exit 2"
PERFGATE_HISTORY='' bash "$accepts_script" --since "${sha[10]}" --head nosuchrev --repo "$repo" --out "$work/x.txt" \
  > /dev/null 2>> "$work/err.txt"
[ $? -eq 2 ] || fail "the script with a head that is no commit did not exit 2"
set -e
[ ! -e "$work/x.txt" ] || fail "the script wrote a file on bad usage"

check_backend() {
  local db=$1 name=$2
  "$perfgate" history copy "$work/before.sqlite" "$db" > /dev/null

  # Night 11, as the nightly job runs it: the trailers of the commits after
  # the history's newest run (night 10) up to night 11's merge.
  bash "$accepts_script" --perfgate "$perfgate" --db "$db" --branch main --repo "$repo" --head "${sha[11]}" \
    --out "$work/accepts-$name.txt" > "$work/accepts.log" || fail "$name: nightly-accepts.sh: $(cat "$work/accepts.log")"
  grep -q "^# Perfgate-Accept trailers of the commits in ${sha[10]:0:12}..${sha[11]:0:12}$" "$work/accepts-$name.txt" ||
    fail "$name: the range is not night 10..11: $(cat "$work/accepts-$name.txt")"
  grep -qx "${accepting:0:12} parse/app.output_size.value <= +30%: the stricter parser costs a fifth, on purpose" \
    "$work/accepts-$name.txt" || fail "$name: the accepting trailer was not collected: $(cat "$work/accepts-$name.txt")"
  [ "$(grep -vc '^#' "$work/accepts-$name.txt")" -eq 3 ] ||
    fail "$name: not the three trailers of the merge: $(cat "$work/accepts-$name.txt")"
  grep -q "3 accept trailers in the 3 commits since ${sha[10]:0:12}" "$work/accepts.log" ||
    fail "$name: the script did not say what it collected: $(cat "$work/accepts.log")"

  echo 120 > "$work/level"
  if [ "$name" = SQLite ]; then
    # The pull-request gate's rule without the nightly's option: a bad trailer is exit 2.
    expect_bad_input "a bad trailer without --skip-bad-trailers" "accepts-$name.txt:3: \"parse/app.output_size.value <= 15" \
      run "$work/suite.json" --out "$work/strict" --quiet --accept-trailers "$work/accepts-$name.txt"
  fi
  measure "$db" 11 0 --accept-trailers "$work/accepts-$name.txt" --skip-bad-trailers
  local facts
  mapfile -t facts < <(json "$last_out/results.json" 'j["scenarios"][0]["checks"][0]["verdict"]' \
    'len(j.get("skipped_trailers", []))')
  [ "${facts[0]}" = accepted ] || fail "$name: night 11 was not accepted: $(cat "$last_out.log")"
  [ "${facts[1]}" -eq 2 ] || fail "$name: results.json: not two skipped_trailers"
  if [ "$name" = SQLite ]; then
    # The Jenkins nightly merges its shards against stored baselines, which
    # decides every check afresh: with --suite and the trailers, night 11 is
    # accepted again (against night 1's baseline); without, it fails.
    local merge=(merge "$last_out/results.json" -o "$work/merged/results.json" --baseline-dir "$work/baselines")
    "$perfgate" "${merge[@]}" --suite "$work/suite.json" --accept-trailers "$work/accepts-$name.txt" \
      --skip-bad-trailers > "$work/merge.log" 2>&1 || fail "merge with the trailers: $(cat "$work/merge.log")"
    grep -q "1 accepted" "$work/merge.log" || fail "merge did not accept night 11: $(cat "$work/merge.log")"
    grep -qF "**Skipped accept trailers**" "$work/merged/summary.md" || fail "merge's summary.md skips no trailer"
    set +e
    "$perfgate" "${merge[@]}" > "$work/merge.log" 2>&1
    [ $? -eq 1 ] || fail "merge without the trailers did not fail night 11: $(cat "$work/merge.log")"
    set -e
  fi
  [ "$(grep -c "^perfgate: skipped accept trailer: .*accepts-$name.txt:[23]: " "$last_out.log")" -eq 2 ] ||
    fail "$name: the console does not name both skipped trailers: $(cat "$last_out.log")"
  grep -qF "**Skipped accept trailers**" "$last_out/summary.md" || fail "$name: summary.md has no skipped trailers"
  for phrase in 'parse/old\_path.value" names no check of suite' "malformed bound"; do
    grep -qF "$phrase" "$last_out/summary.md" ||
      fail "$name: summary.md does not say why each was skipped: $(cat "$last_out/summary.md")"
  done

  "$perfgate" history copy "$work/after.sqlite" "$db" > /dev/null
  "$perfgate" trend --db "$db" --branch main --out "$work/trend-$name" > "$work/trend.log"
  # The groups of the measured size: the runner's own metrics of a shell
  # (its wall and CPU time) may step too on a shared host, in groups of their own.
  "$perfgate" alerts list --db "$db" --json > "$work/all-alerts.json"
  mapfile -t facts < <("$python3" -c 'import json, sys
groups = [g for g in json.load(open(sys.argv[1])) if any(m["metric"] == "app.output_size" for m in g["metrics"])]
print(len(groups))
for g in groups[:2]:
    print(g["id"], g["commit_before"] + ".." + g["commit_after"], g["state"])' "$work/all-alerts.json")
  [ "${facts[0]}" -eq 2 ] || fail "$name: not two alert groups: $(cat "$work/all-alerts.json")"
  local expected_id=${facts[1]%% *} new_id=${facts[2]%% *}
  [ "${facts[1]#* }" = "${sha[10]}..${sha[11]} expected" ] ||
    fail "$name: the accepted step is not expected: $(cat "$work/all-alerts.json")"
  [ "${facts[2]#* }" = "${sha[20]}..${sha[21]} new" ] ||
    fail "$name: the other step is not new: $(cat "$work/all-alerts.json")"
  grep -q "new alert #$new_id" "$work/trend.log" || fail "$name: trend did not say the new alert: $(cat "$work/trend.log")"
  grep -q "#$expected_id expected" "$work/trend-$name/index.html" || fail "$name: the trend page shows no state"

  # The states move; every change is kept with who and when.
  "$perfgate" alerts set "$new_id" --db "$db" --state acknowledged --owner ana --by ana > /dev/null
  "$perfgate" alerts set "$new_id" --db "$db" --bug https://bugs.example.org/42 --by bo > /dev/null
  "$perfgate" alerts show "$new_id" --db "$db" --json > "$work/show.json"
  mapfile -t facts < <(json "$work/show.json" 'j["state"] + " " + j["owner"] + " " + j["bug"]' \
    '" ".join(c["by"] for c in j["changes"])')
  [ "${facts[0]}" = "acknowledged ana https://bugs.example.org/42" ] ||
    fail "$name: set did not change it: $(cat "$work/show.json")"
  [ "${facts[1]}" = "perfgate ana bo" ] || fail "$name: the changes are not all kept: $(cat "$work/show.json")"
  "$perfgate" alerts show "$expected_id" --db "$db" > "$work/show.md"
  grep -qF "**State:** expected" "$work/show.md" || fail "$name: the Markdown body has no state"
  grep -qF "accepted in the range by the run of ${sha[11]:0:12}" "$work/show.md" ||
    fail "$name: the body does not say why expected: $(cat "$work/show.md")"
  [ "$("$perfgate" alerts list --db "$db" --state acknowledged | wc -l)" -eq 1 ] || fail "$name: list --state"

  expect_bad_input "a missing alert" "no alert 999" alerts set 999 --db "$db" --state fixed
  if [ "$name" = SQLite ]; then  # refused before the history is read, whichever it is
    expect_bad_input "a bad state" 'is not an alert state (new, acknowledged, expected, invalid, fixed)' \
      alerts set "$new_id" --db "$db" --state closed
    expect_bad_input "a bad id" "is not an alert id" alerts show 1x --db "$db"
    expect_bad_input "a bad bug link" "is not a bug link" alerts set "$new_id" --db "$db" --bug "javascript:alert(1)"
    expect_bad_input "a bad list state" "is not an alert state" alerts list --db "$db" --state Fixed
  fi

  # Eight jobs at once: none of their changes is lost.
  local pids=()
  for i in $(seq 1 8); do
    "$perfgate" alerts set "$new_id" --db "$db" --state acknowledged --by "job$i" --note "round $i" \
      > "$work/set-$i.log" 2>&1 &
    pids+=($!)
  done
  for i in $(seq 1 8); do wait "${pids[$((i - 1))]}" || fail "$name: set $i failed: $(cat "$work/set-$i.log")"; done
  "$perfgate" alerts show "$new_id" --db "$db" --json > "$work/show.json"
  mapfile -t facts < <(json "$work/show.json" 'len(j["changes"])' '" ".join(sorted(c["by"] for c in j["changes"][3:]))' \
    'j["owner"] + " " + j["bug"]')
  [ "${facts[0]}" -eq 11 ] || fail "$name: changes lost: $(cat "$work/show.json")"
  [ "${facts[1]}" = "job1 job2 job3 job4 job5 job6 job7 job8" ] || fail "$name: a job's change is missing"
  [ "${facts[2]}" = "ana https://bugs.example.org/42" ] || fail "$name: the owner or the bug was lost"

  # Nights 21 to 30 failed against the old level. Night 31 does too (the
  # script finds no trailer after night 30); once the step is expected,
  # the newest of them is a baseline again and the next night passes.
  echo 144 > "$work/level"
  bash "$accepts_script" --perfgate "$perfgate" --db "$db" --branch main --repo "$repo" --head "${sha[31]}" \
    --out "$work/accepts-31.txt" > "$work/accepts.log" || fail "$name: nightly-accepts.sh: $(cat "$work/accepts.log")"
  grep -q "0 accept trailers in the 1 commits since ${sha[30]:0:12}" "$work/accepts.log" ||
    fail "$name: night 31's range is not night 30..31: $(cat "$work/accepts.log")"
  measure "$db" 31 1 --accept-trailers "$work/accepts-31.txt" --skip-bad-trailers
  "$perfgate" alerts set "$new_id" --db "$db" --state expected --by ana --note "the new codec, as planned" > /dev/null
  measure "$db" 32 0
  local source
  source=$(json "$last_out/results.json" 'j["baseline_source"]')
  [[ "$source" == *"${sha[31]:0:12} "*"only regressions were expected"* ]] ||
    fail "$name: the baseline is not the expected night: $source"
  echo "nightly_alerts_test: $name: the nightly's trailers accepted night 11 (2 bad ones skipped), two groups" \
    "(expected, new), states set, 8 concurrent sets kept, expected night used"
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
