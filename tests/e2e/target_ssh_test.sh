#!/usr/bin/env bash
# A suite run on a device over ssh (--target ssh://USER@HOST:PORT): this
# host's own sshd on a private port, with keys of the test's own given to ssh
# by its configuration file (--ssh-config), stands in for the device. The
# suite's directory holds the workload's script, which goes along with it.
#   baseline record --target   exit 0; the baseline is written here
#   run --target, A/A          exit 0
#   run --target, +30 %        exit 1 (a regression)
#   ab --target, +30 %         exit 1
#   a bad target or suite      exit 2 before anything connects
#   the connection cut mid-run exit 3, no out dir, the baselines untouched
#   and no key's path in anything perfgate wrote or said.
#   tests/e2e/target_ssh_test.sh PERFGATE_BINARY
# Exit 77 (skip) without root or sshd; under CI=true that fails.
set -euo pipefail
perfgate=$(realpath "$1")

skip() {
  echo "target-ssh: skipped: $*"
  [ "${CI:-}" = true ] && exit 1
  exit 77
}
fail() {
  echo "target-ssh: FAILED: $*" >&2
  exit 1
}
[ "$(id -u)" -eq 0 ] || skip "the device's perfgate and a private sshd need root"
[ -x /usr/sbin/sshd ] || skip "/usr/sbin/sshd is missing (apt-get install openssh-server)"
command -v ssh > /dev/null || skip "ssh is missing (apt-get install openssh-client)"

work=$(mktemp -d)
sshd_pid=
cleanup() {
  [ -z "$sshd_pid" ] || kill "$sshd_pid" 2> /dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

# The device: sshd on a free port of the loopback, root by key only.
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ssh-keygen -q -t ed25519 -N '' -f host_key
ssh-keygen -q -t ed25519 -N '' -f client_key
cp client_key.pub authorized_keys
cat > sshd_config << CONF
Port $port
ListenAddress 127.0.0.1
HostKey $work/host_key
AuthorizedKeysFile $work/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile $work/sshd.pid
CONF
cat > ssh_config << CONF
Host *
  IdentityFile $work/client_key
  IdentitiesOnly yes
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
CONF
mkdir -p /run/sshd
/usr/sbin/sshd -D -f sshd_config -E "$work/sshd.log" &
sshd_pid=$!
for _ in $(seq 50); do
  ssh -F ssh_config -o BatchMode=yes -p "$port" root@127.0.0.1 true 2> /dev/null && break
  sleep 0.2
done
ssh -F ssh_config -o BatchMode=yes -p "$port" root@127.0.0.1 true || fail "the test's sshd did not come up"
target="ssh://root@127.0.0.1:$port"

# The suite: a shell loop whose script lives beside the suite file.
mkdir suite
cat > suite/loop.sh << 'SH'
i=0
while [ $i -lt "$1" ]; do i=$((i + 1)); done
SH
write_suite() {
  cat > suite/device.json << JSON
{
  "name": "device",
  "scenarios": [
    {"name": "loop", "workload": {"kind": "command", "argv": ["/bin/sh", "\${suite_dir}/loop.sh", "\${LOOP_COUNT:-$1}"]},
     "warmup": 1, "repetitions": {"min": 7, "max": 20},
     "checks": [{"metric": "workload.cpu_time", "type": "regression", "max_regression_pct": 10}]}
  ]
}
JSON
}
write_suite 150000

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
write_suite 195000
gate slower-30 1 run suite/device.json --baseline-dir baselines
grep -q "regression: loop/workload.cpu_time" slower-30.log || fail "slower-30: the loop's CPU time is not the regression"
write_suite 150000
gate ab-30 1 ab suite/device.json --baseline-set LOOP_COUNT=150000 --candidate-set LOOP_COUNT=195000

# Bad input is said before anything connects.
rc=0
"$perfgate" run suite/device.json --target ftp://127.0.0.1 --baseline-dir baselines --out out-bad 2> bad.log || rc=$?
[ "$rc" = 2 ] && grep -q -- "--target ftp://127.0.0.1" bad.log || fail "a bad target: exit $rc, $(cat bad.log)"
rc=0
"$perfgate" run suite/device.json --target ssh://root@127.0.0.1:1 --ssh-config ssh_config --baseline-dir baselines \
  --out out-refused 2> refused.log || rc=$?
[ "$rc" = 3 ] && [ ! -e out-refused ] || fail "a refused connection: exit $rc, $(cat refused.log)"

# Normal runs leave nothing on the device.
leftover=$(find /tmp -maxdepth 1 -name 'perfgate-target.*' | wc -l)
[ "$leftover" = 0 ] || fail "$leftover work directories left on the device"

# The connection cut while the device measures: exit 3, nothing written here.
write_suite 3000000
before=$(sha256sum baselines/device/loop.json)
"$perfgate" run suite/device.json --target "$target" --ssh-config ssh_config --baseline-dir "$work/baselines" \
  --out "$work/out-cut" > cut.log 2>&1 &
run_pid=$!
for _ in $(seq 100); do
  pgrep -f "^/tmp/perfgate-target[.][^ ]*/perfgate run" > /dev/null && grep -q "repetition 1" cut.log 2> /dev/null && break
  sleep 0.2
done
pgrep -f "^/tmp/perfgate-target[.][^ ]*/perfgate run" > /dev/null || fail "cut: the device's perfgate never started: $(cat cut.log)"
pkill -P "$sshd_pid" # the sessions, not the listener
rc=0
wait "$run_pid" || rc=$?
cat cut.log
[ "$rc" = 3 ] || fail "cut: exit $rc, not 3"
[ ! -e out-cut ] || fail "cut: the out dir was written"
[ "$(sha256sum baselines/device/loop.json)" = "$before" ] || fail "cut: the baseline changed"
for _ in $(seq 50); do
  pgrep -f "^/tmp/perfgate-target[.][^ ]*/perfgate run" > /dev/null || break
  sleep 0.2
done
! pgrep -f "^/tmp/perfgate-target[.][^ ]*/perfgate run" > /dev/null || fail "cut: the device's perfgate still runs"
echo "target-ssh: cut: exit 3, nothing written, the device's perfgate stopped"

# Keys stay with ssh.
! grep -rl "client_key" out-* baselines ./*.log || fail "a key's path is in what perfgate wrote or said"
echo "target-ssh: all as expected"
