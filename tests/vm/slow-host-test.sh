#!/usr/bin/env bash
# A slower physical host, simulated: no counter inside a guest shows that its
# host got slower, so a run against a baseline recorded while the host was
# faster looks like a regression unless perfgate's host canary
# (gate/run/canary.h) explains it. Boots a guest (tests/vm/run.sh), which
# records a baseline of tests/vm/slow-host.json at full speed
# (tests/vm/guest-slow-host.sh); then caps the QEMU process at half a CPU
# with a CPU cgroup, and checks what perfgate says:
#
#   the workload +30 %, not capped     must fail (exit 1)
#   the same workload, capped          must not fail: exit 0, every check a
#                                      pass or inconclusive for the slower host
#   the workload +150 %, capped        must still fail (exit 1): more than
#                                      the slower host explains
#
# and prints, for each run, what the canary and the workload's CPU time saw
# against the baseline.
#
#   tests/vm/slow-host-test.sh [KERNEL_PACKAGE]
#
# Default kernel: Debian 12's cloud kernel (6.1), the first of the VM probe
# tests'. BUILD_DIR (default build) must hold perfgate.
# PERFGATE_SLOW_HOST_PERIODS_US: the CFS periods to cap with, one capped
# pair of runs each (default 10000, see cap() for why).
# PERFGATE_SLOW_HOST_CPUS: the guest's CPUs (default 1: TCG runs every
# guest CPU on one host thread in turn, so with two the loop's speed hung on
# what the other guest CPU did; docs/kernels.md, "A slower host").
# PERFGATE_SLOW_HOST_RESULTS: a directory to keep each run's results.json
# and exit status in (NAME.json, NAME.rc).
# Exit 0 when every verdict is as expected, 1 otherwise, 2 on bad input;
# 77 (skip) without root, QEMU, python3 or a cpu cgroup controller, which
# fails under CI=true.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/vm/console.sh
build=$(realpath "${BUILD_DIR:-build}")
kernel="${1:-linux-image-cloud-amd64}"
periods="${PERFGATE_SLOW_HOST_PERIODS_US:-10000}"
export PERFGATE_SLOW_HOST_PERIODS_US="$periods"

. tests/harness/skip.sh vm-slow-host
say() { echo "vm-slow-host: $*" >&2; }

for period in $periods; do
  case "$period" in '' | *[!0-9]*) echo "vm-slow-host: PERFGATE_SLOW_HOST_PERIODS_US: $period is not a number of microseconds" >&2; exit 2 ;; esac
  # The kernel takes periods up to 1 s and quotas (half the period) from 1 ms.
  [ "$period" -ge 2000 ] && [ "$period" -le 1000000 ] ||
    { echo "vm-slow-host: PERFGATE_SLOW_HOST_PERIODS_US: $period is not between 2000 and 1000000" >&2; exit 2; }
done
cpus="${PERFGATE_SLOW_HOST_CPUS:-1}"
case "$cpus" in '' | *[!0-9]* | 0) echo "vm-slow-host: PERFGATE_SLOW_HOST_CPUS: $cpus is not a number of CPUs" >&2; exit 2 ;; esac
[ -x "$build/perfgate" ] || { echo "vm-slow-host: $build/perfgate is missing (build it first)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || skip "capping QEMU takes a cgroup of its own, which takes root"
command -v qemu-system-x86_64 > /dev/null || skip "qemu-system-x86_64 is missing (apt-get install qemu-system-x86)"
command -v python3 > /dev/null || skip "python3 is missing (it reads the runs' results)"

# The cpu controller: cgroup v1's hierarchy where it is mounted (with cpuacct
# or alone), else cgroup v2's, with the controller enabled for its children.
cpu_v1=$(awk '{ split($0, half, " - "); split(half[2], fs, " "); split(half[1], mnt, " ")
  if (fs[1] == "cgroup" && fs[3] ~ /(^|,)cpu(,|$)/) { print mnt[5]; exit } }' /proc/self/mountinfo)
if [ -n "$cpu_v1" ]; then
  version=1 parent="$cpu_v1"
elif [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
  version=2 parent=/sys/fs/cgroup
  grep -qw cpu "$parent/cgroup.subtree_control" || echo +cpu > "$parent/cgroup.subtree_control" ||
    skip "the cpu controller cannot be enabled in $parent"
else
  skip "no cgroup has the cpu controller (neither v1's nor v2's)"
fi

work=$(mktemp -d)
# The guest's cgroups: QEMU runs in $ours-free from its start, and each cap
# moves it into $ours-cap-PERIOD.
ours="perfgate-slow-host-$$"
free="$parent/$ours-free"
vm=
cleanup() {
  local pid
  pid=$(cat "$work/qemu.pid" 2> /dev/null || true)
  if [ -n "$pid" ] && kill -0 "$pid" 2> /dev/null; then
    uncap > /dev/null || true
    kill "$pid" 2> /dev/null || true
  fi
  # run.sh, in the free cgroup too, ends with QEMU.
  [ -z "$vm" ] || wait "$vm" 2> /dev/null || true
  for dir in "$parent/$ours"-*; do [ -d "$dir" ] && rmdir "$dir" 2> /dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
# Stopped (ctest's timeout, ^C), it still takes QEMU out of its cgroup and ends it.
trap 'exit 1' INT TERM HUP

# The cgroup a process or thread lives in (its path in the cpu hierarchy).
home_of() {
  if [ "$version" = 1 ]; then
    awk -F: '$2 ~ /(^|,)cpu(,|$)/ { print $3; exit }' "/proc/$1/cgroup"
  else
    awk -F: '$1 == "0" { print $3; exit }' "/proc/$1/cgroup"
  fi
}

# put VALUE FILE: a cgroup file written, or why not.
put() { echo "$1" > "$2" || { say "cannot write $1 to $2"; return 1; }; }

# mkgroup DIR: a cgroup with the weight of nice -20. Outside the root cgroup
# a task competes by its group's weight, and in it (where the kernel groups
# tasks by session, autogroup) by its session's: either way the host's
# other work, at the default weight, would take QEMU's CPU and change the
# guest's speed between the baseline and the runs by itself (on the shared
# 2-CPU project machine the same repetition took from 0.9 to 2.7 s). With
# this weight the host's speed that changes is the cap's.
mkgroup() {
  mkdir -p "$1" || return 1
  if [ "$version" = 1 ]; then put 88761 "$1/cpu.shares"; else put 8668 "$1/cpu.weight"; fi
}

# cap PERIOD_US QUOTA_US: QEMU, every thread of it, into a cgroup of its own
# allowed QUOTA_US of CPU time in each PERIOD_US.
#
# Which period: a slower physical CPU is slower all the time, at every scale.
# A CFS quota is not: QEMU runs at full speed until the period's quota is
# spent, then stands until the period ends, and a guest that idled (perfgate
# between two repetitions) starts with the whole quota. With the default
# 100 ms period that is a 50 ms burst at full speed, longer than the canary
# (about 1 % of a repetition, half before it and half after), while the
# repetition, seconds long, runs at half speed: the canary does not see the
# host the workload saw. With a 10 ms period the guest stands every 5 ms,
# within every canary. A shorter period is not kept: the kernel notices a
# spent quota at its tick (4 ms at 250 Hz), so with 2 ms QEMU ran in bursts
# of a tick and got well under half a CPU. The figures are in docs/kernels.md.
cap() {
  local period="$1" quota="$2" pid dir tid want
  pid=$(cat "$work/qemu.pid") || return 1
  dir="$parent/$ours-cap-$period"
  mkgroup "$dir" || return 1
  if [ "$version" = 1 ]; then
    put -1 "$dir/cpu.cfs_quota_us" && put "$period" "$dir/cpu.cfs_period_us" && put "$quota" "$dir/cpu.cfs_quota_us"
  else
    put "$quota $period" "$dir/cpu.max"
  fi || return 1
  # cgroup.procs moves every thread of the process; each is checked.
  put "$pid" "$dir/cgroup.procs" || return 1
  want="/$ours-cap-$period"
  for tid in $(ls "/proc/$pid/task"); do
    [ "$(home_of "$pid/task/$tid")" = "$want" ] || { say "QEMU's thread $tid is not in $dir"; return 1; }
  done
  cpu_ticks "$pid" > "$work/cap-start"
  say "QEMU ($pid, $(ls "/proc/$pid/task" | wc -l) threads) capped at $quota us of CPU every $period us (cgroup v$version)"
}

# A process's CPU time (all its threads) and the time since boot, in clock
# ticks; share_since: the share of a CPU it used since cpu_ticks said START.
cpu_ticks() {
  echo "$(awk '{ print $14 + $15 }' "/proc/$1/stat") $(awk -v hz="$(getconf CLK_TCK)" '{ printf "%d", $1 * hz }' /proc/uptime)"
}
share_since() {
  awk -v then="$1" -v now="$(cpu_ticks "$2")" \
    'BEGIN { split(then, a, " "); split(now, b, " "); printf "%.0f", 100 * (b[1] - a[1]) / (b[2] - a[2] + 1e-9) }'
}

# Every thread of QEMU back in the free cgroup; what each cap did.
uncap() {
  local pid dir periods_n throttled_n throttled
  pid=$(cat "$work/qemu.pid") || return 1
  for dir in "$parent/$ours"-cap-*; do
    [ -d "$dir" ] || continue
    # (cgroup files have no size: read them)
    if [ -n "$(cat "$dir/cgroup.procs")" ]; then
      put "$pid" "$free/cgroup.procs" || return 1
    fi
    periods_n=$(awk '$1 == "nr_periods" { print $2 }' "$dir/cpu.stat")
    throttled_n=$(awk '$1 == "nr_throttled" { print $2 }' "$dir/cpu.stat")
    throttled=$(awk '$1 == "throttled_time" { printf "%.1f", $2 / 1e9 } $1 == "throttled_usec" { printf "%.1f", $2 / 1e6 }' "$dir/cpu.stat")
    say "cap lifted ($(basename "$dir")): QEMU throttled in $throttled_n of $periods_n periods, $throttled s in all;" \
      "it used $(share_since "$(cat "$work/cap-start")" "$pid") % of a CPU"
    rmdir "$dir" || return 1
  done
}

# The guest's requests (tests/vm/guest-slow-host.sh), one line of answer each.
answer() {
  local request="$1"
  set -- $request
  case "$1" in
    cap) cap "$2" "$3" >&2 && echo "capped $2" || echo "cap failed" ;;
    uncap) uncap >&2 && echo uncapped || echo "uncap failed" ;;
    *) echo "unknown request: $request" ;;
  esac
}

mkfifo "$work/console-in"
# Held open for reading and writing, so that QEMU's open of it does not wait
# and it never reads an end of file between two answers.
exec 3<> "$work/console-in"
start=$SECONDS
: > "$work/console.log"
mkgroup "$free" || exit 1
# run.sh from the free cgroup, so QEMU starts there.
(
  echo "$BASHPID" > "$free/cgroup.procs"
  exec tests/vm/run.sh --cpus "$cpus" --timeout "${PERFGATE_VM_TIMEOUT:-1200}" --console-in "$work/console-in" --pid-file "$work/qemu.pid" \
    --file "$build/perfgate" --file "$PWD/tests/vm/slow-host.json" \
    --file "$PWD/tests/vm/console.sh" --file "$PWD/tests/vm/guest-slow-host.sh" \
    "$kernel" -- sh "$PWD/tests/vm/guest-slow-host.sh" "$build"
) > "$work/console.log" 2>&1 &
vm=$!
console_serve "$work/console.log" "$work/console-in" "$vm" answer
rc=0
wait "$vm" || rc=$?
# The guest's output without the results it sent.
tr -d '\r' < "$work/console.log" | sed '/^console-begin /,/^console-end /d'
say "the guest ended with exit status $rc after $((SECONDS - start)) s"
[ "$rc" -eq 0 ] || exit 1

mkdir -p "$work/results"
runs=(baseline uncapped-slower-30)
for period in $periods; do runs+=("capped-$period-same" "capped-$period-slower-150"); done
for name in "${runs[@]}"; do
  console_receive "$name" "$work/console.log" "$work/results/$name.json"
  tr -d '\r' < "$work/console.log" | sed -n "s/^vm-slow-host: $name exited \([0-9]*\)\$/\1/p" > "$work/results/$name.rc"
done
[ -z "${PERFGATE_SLOW_HOST_RESULTS:-}" ] || { mkdir -p "$PERFGATE_SLOW_HOST_RESULTS" && cp "$work"/results/* "$PERFGATE_SLOW_HOST_RESULTS"/; }
python3 tests/vm/slow-host-judge.py "$work/results" "${runs[@]}"
