#!/usr/bin/env bash
# A suite run on a device over ssh (--target ssh://USER@HOST:PORT): this
# host's own sshd on a private port, with keys of the test's own given to ssh
# by its configuration file (--ssh-config), stands in for the device. The
# suite's directory holds the workload's script, which goes along with it.
#   baseline record --target   exit 0; the baseline is written here
#   run --target, A/A          exit 0
#   run --target, +30 %        exit 1: its system calls a regression, its
#                              time a regression or inconclusive (a host
#                              slower or busier than while recording)
#   ab --target, +30 %         exit 1
#   a bad target               exit 2 before anything connects
#   a refused connection       exit 3, no out dir
#   no work directory left on the device
#   the connection cut mid-run exit 3, no out dir, the baseline untouched,
#                              perfgate on the device stopped
#   and no key's path in anything perfgate wrote or said.
#   tests/e2e/target_ssh_test.sh PERFGATE_BINARY
# With PERFGATE_TARGET_TEST_PORT, the device is another machine whose sshd
# listens there on the loopback (tests/vm/device-ssh-test.sh: a QEMU guest,
# with the keys and ssh_config of PERFGATE_TARGET_TEST_KEYS): the cut takes
# its link down, and ab is left out; with PERFGATE_TARGET_TEST_FOREIGN=1
# the device is of another architecture and runs its own perfgate, which is
# never sent. PERFGATE_TARGET_TEST_LOOP: the loop's iterations (default 150000).
# Exit 77 (skip) without root or sshd; under CI=true that fails.
set -euo pipefail
perfgate=$(realpath "$1")

source "$(dirname "$0")/../harness/skip.sh" target-ssh
fail() {
  echo "target-ssh: FAILED: $*" >&2
  exit 1
}
[ "$(id -u)" -eq 0 ] || skip "the device's perfgate and a private sshd need root"
command -v ssh > /dev/null || skip "ssh is missing (apt-get install openssh-client)"
source "$(dirname "$0")/../harness/ssh_device.sh"

work=$(mktemp -d)
sshd_pid=
cleanup() {
  [ -z "$sshd_pid" ] || kill "$sshd_pid" 2> /dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

if [ -n "${PERFGATE_TARGET_TEST_PORT:-}" ]; then
  # A device of the caller's (tests/vm/device-ssh-test.sh: a QEMU guest),
  # its sshd already up with the keys of PERFGATE_TARGET_TEST_KEYS.
  port=$PERFGATE_TARGET_TEST_PORT
  cp "$PERFGATE_TARGET_TEST_KEYS"/* .
else
  # The device: sshd on a free port of the loopback, root by key only.
  [ -x /usr/sbin/sshd ] || skip "/usr/sbin/sshd is missing (apt-get install openssh-server)"
  port=$(ssh_device_free_port)
  ssh_device_keys "$work" "$port" 127.0.0.1
  mkdir -p /run/sshd
  /usr/sbin/sshd -D -f sshd_config -E "$work/sshd.log" &
  sshd_pid=$!
fi
# on_device COMMAND: a command on the device, as the test's own.
on_device() { ssh -F ssh_config -o BatchMode=yes -p "$port" root@127.0.0.1 "$@"; }
for _ in $(seq 100); do
  on_device true 2> /dev/null && break
  sleep 0.2
done
on_device true || fail "the device's sshd did not come up"
target="ssh://root@127.0.0.1:$port"
loop=${PERFGATE_TARGET_TEST_LOOP:-150000}
slower=$((loop * 13 / 10))

# The suite: a shell loop whose script lives beside the suite file, and
# which reads that script every 50 iterations: its system calls grow with
# the loop, counted exactly under the syscalls probe on the device.
mkdir suite
cat > suite/loop.sh << 'SH'
i=0
while [ $i -lt "$1" ]; do
  i=$((i + 1))
  [ $((i % 50)) -ne 0 ] || : < "$0"
done
SH
write_suite() {
  cat > suite/device.json << JSON
{
  "name": "device",
  "scenarios": [
    {"name": "loop", "workload": {"kind": "command", "argv": ["/bin/sh", "\${suite_dir}/loop.sh", "\${LOOP_COUNT:-$1}"]},
     "warmup": 1, "repetitions": {"min": 7, "max": 20},
     "probes": [{"name": "syscalls", "scope": "workload"}],
     "checks": [{"metric": "workload.cpu_time", "type": "regression", "max_regression_pct": 10},
                {"metric": "syscalls.count", "statistic": "count", "type": "regression", "max_regression_pct": 10}]}
  ]
}
JSON
}
write_suite "$loop"

# gate NAME EXPECTED_EXIT COMMAND...: perfgate COMMAND... on the device.
gate() {
  local name=$1 expected=$2
  shift 2
  local rc=0
  "$perfgate" "$@" --target "$target" --ssh-config ssh_config --out "$work/out-$name" > "$name.log" 2>&1 || rc=$?
  cat "$name.log"
  [ "$rc" = "$expected" ] || fail "$name: exit $rc, not $expected"
  echo "target-ssh: $name: exit $rc, as expected"
}

gate record 0 baseline record suite/device.json --baseline-dir baselines
[ -f baselines/device/loop.json ] || fail "record: no baseline written here"
grep -q "measured on $target" out-record/results.json || fail "record: the results do not say the device measured them"

gate aa 0 run suite/device.json --baseline-dir baselines
if [ -n "${PERFGATE_TARGET_TEST_FOREIGN:-}" ]; then
  # A device of another architecture runs its own perfgate of this version.
  ! grep -q "sending this perfgate" record.log aa.log || fail "this perfgate was sent to a device of another architecture"
else
  grep -q "sending this perfgate" record.log || fail "record: this perfgate was not sent"
  ! grep -q "sending this perfgate" aa.log || fail "aa: this perfgate was sent again, not taken from the device's cache"
fi
write_suite "$slower"
gate slower-30 1 run suite/device.json --baseline-dir baselines
# The count fails whatever the host did; the loop's time fails too unless
# the host's speed or load made it inconclusive, which the message says,
# but it never passes.
grep -q "^perfgate: regression: loop/syscalls.count" slower-30.log || fail "slower-30: the system calls are not a regression"
grep -q "^perfgate: \(regression\|inconclusive\): loop/workload.cpu_time" slower-30.log ||
  fail "slower-30: the loop's CPU time passed"
write_suite "$loop"
# (not on a guest, whose every run is minutes of CI's VM phase: the same flow)
[ -n "$sshd_pid" ] && gate ab-30 1 ab suite/device.json --baseline-set LOOP_COUNT="$loop" --candidate-set LOOP_COUNT="$slower"

# Bad input is said before anything connects.
rc=0
"$perfgate" run suite/device.json --target ftp://127.0.0.1 --baseline-dir baselines --out out-bad 2> bad.log || rc=$?
[ "$rc" = 2 ] && grep -q -- "--target ftp://127.0.0.1" bad.log || fail "a bad target: exit $rc, $(cat bad.log)"
rc=0
"$perfgate" run suite/device.json --target ssh://root@127.0.0.1:1 --ssh-config ssh_config --baseline-dir baselines \
  --out out-refused 2> refused.log || rc=$?
[ "$rc" = 3 ] && [ ! -e out-refused ] || fail "a refused connection: exit $rc, $(cat refused.log)"

# Normal runs leave nothing on the device.
leftover=$(on_device 'ls -d /tmp/perfgate-target.* 2> /dev/null | wc -l')
[ "$leftover" = 0 ] || fail "$leftover work directories left on the device"

# The connection cut while the device measures: exit 3, nothing written here.
# (from /proc: a small device's busybox may have no pgrep; a device's own
# perfgate runs by its name, one sent by its path)
device_perfgate() {
  on_device 'for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f"; echo; done 2> /dev/null |
    grep -Eq "^([^ ]*/)?perfgate[-0-9a-f]* run /tmp/perfgate-target[.]"'
}
write_suite $((loop * 20))
before=$(sha256sum baselines/device/loop.json)
"$perfgate" run suite/device.json --target "$target" --ssh-config ssh_config --baseline-dir "$work/baselines" \
  --out "$work/out-cut" > cut.log 2>&1 &
run_pid=$!
for _ in $(seq 300); do
  grep -q "repetition 1:" cut.log 2> /dev/null && break
  sleep 0.2
done
device_perfgate || fail "cut: the device's perfgate never started: $(cat cut.log)"
if [ -n "$sshd_pid" ]; then
  pkill -P "$sshd_pid" # the sessions, not the listener
else
  # The guest's link down for 25 s: neither side hears the other.
  on_device 'sh -c "sleep 1; ip link set eth0 down; sleep 25; ip link set eth0 up" < /dev/null > /dev/null 2>&1 &'
fi
rc=0
wait "$run_pid" || rc=$?
cat cut.log
[ "$rc" = 3 ] || fail "cut: exit $rc, not 3"
[ ! -e out-cut ] || fail "cut: the out dir was written"
[ "$(sha256sum baselines/device/loop.json)" = "$before" ] || fail "cut: the baseline changed"
for _ in $(seq 60); do
  device_perfgate 2> /dev/null || break
  sleep 1
done
! device_perfgate || fail "cut: the device's perfgate still runs"
echo "target-ssh: cut: exit 3, nothing written, the device's perfgate stopped"

# Keys stay with ssh.
! grep -rl "client_key" out-* baselines ./*.log || fail "a key's path is in what perfgate wrote or said"
echo "target-ssh: all as expected"
