#!/usr/bin/env bash
# A device over ssh that is a machine of its own: a QEMU guest
# (tests/vm/run.sh) booting a Debian kernel, with an ssh server on QEMU's
# user-mode network, forwarded from a port of the host's loopback. The
# host runs tests/e2e/target_ssh_test.sh against it: baseline record, an
# A/A run, +30 % in run and ab, no work directory left, and the guest's
# link taken down mid-run (exit 3, nothing written, perfgate there stopped).
#
#   tests/vm/device-ssh-test.sh [KERNEL_PACKAGE]
#
# Default kernel: Debian 12's cloud kernel (6.1). BUILD_DIR (default build)
# must hold perfgate. Exit 0 when the test passed, 1 otherwise, 2 on bad
# input; 77 (skip) without root, QEMU or sshd, which fails under CI=true.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/vm/console.sh
. tests/harness/ssh_device.sh
build=$(realpath "${BUILD_DIR:-build}")
kernel="${1:-linux-image-cloud-amd64}"

skip() {
  echo "vm-device-ssh: skipped: $*"
  [ "${CI:-}" = true ] && exit 1
  exit 77
}
[ -x "$build/perfgate" ] || { echo "vm-device-ssh: $build/perfgate is missing (build it first)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || skip "the guest's perfgate loads probes as root"
command -v qemu-system-x86_64 > /dev/null || skip "qemu-system-x86_64 is missing (apt-get install qemu-system-x86)"
[ -x /usr/sbin/sshd ] || skip "/usr/sbin/sshd is missing (apt-get install openssh-server)"
command -v ssh > /dev/null || skip "ssh is missing (apt-get install openssh-client)"

work=$(mktemp -d)
vm=
cleanup() {
  [ -z "$vm" ] || kill "$vm" 2> /dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
mkdir "$work/keys"
ssh_device_keys "$work/keys" 22 0.0.0.0
port=$(ssh_device_free_port)

# The guest's one request: run the device test against it.
answer() {
  case "$1" in
    device)
      if PERFGATE_TARGET_TEST_PORT=$port PERFGATE_TARGET_TEST_KEYS=$work/keys \
        PERFGATE_TARGET_TEST_LOOP=${PERFGATE_DEVICE_TEST_LOOP:-20000} \
        bash tests/e2e/target_ssh_test.sh "$build/perfgate" > "$work/test.log" 2>&1; then
        echo passed
      else
        echo failed
      fi
      ;;
    *) echo "unknown request: $1" ;;
  esac
}

mkfifo "$work/console-in"
exec 3<> "$work/console-in"
start=$SECONDS
: > "$work/console.log"
bash tests/vm/run.sh --cpus 1 --memory 2048 --timeout 1500 --ssh-port "$port" \
  --module virtio_pci --module virtio_net --console-in "$work/console-in" \
  --file "$build/perfgate" --file /usr/sbin/sshd --file "$work/keys" --file tests/vm/console.sh \
  --file tests/vm/guest-ssh-device.sh "$kernel" -- sh "$PWD/tests/vm/guest-ssh-device.sh" "$work/keys" \
  > "$work/console.log" 2>&1 &
vm=$!
console_serve "$work/console.log" "$work/console-in" "$vm" answer
rc=0
wait "$vm" || rc=$?
vm=
grep -v '^console-' "$work/console.log" | tr -d '\r' | grep -v '^$' | sed 's/^/guest: /' || true
[ -f "$work/test.log" ] && sed 's/^/host: /' "$work/test.log"
echo "vm-device-ssh: the guest ended with exit status $rc after $((SECONDS - start)) s"
exit "$([ "$rc" = 0 ] && echo 0 || echo 1)"
