#!/usr/bin/env bash
# A device over ssh that is a machine of its own: a QEMU guest
# (tests/vm/run.sh) booting a Debian kernel, with an ssh server on QEMU's
# user-mode network, forwarded from a port of the host's loopback. The
# host runs tests/e2e/target_ssh_test.sh against it: baseline record, an
# A/A run, +30 % in run and ab, no work directory left, and the guest's
# link taken down mid-run (exit 3, nothing written, perfgate there stopped).
#
#   tests/vm/device-ssh-test.sh [--arch arm64] [KERNEL_PACKAGE]
#
# Default kernel: Debian 12's cloud kernel (6.1) of the architecture.
# BUILD_DIR (default build) must hold this host's perfgate. With --arch
# arm64 the device is an arm64 guest (the arm64 job, ci/project/arm64.sh):
# its sshd is Debian's arm64 one (openssh-server:arm64, unpacked; its
# libraries are ci/install-deps-arm64.sh's :arm64 packages), and the
# perfgate it runs is its own, PERFGATE_DEVICE_PERFGATE (the arm64 build of
# this commit, on the guest's PATH), whose --version must be this host's.
# Exit 0 when the test passed, 1 otherwise, 2 on bad input; 77 (skip)
# without root, QEMU or sshd, which fails under CI=true.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/vm/console.sh
. tests/harness/ssh_device.sh
build=$(realpath "${BUILD_DIR:-build}")
arch=x86_64
if [ "${1:-}" = --arch ]; then
  arch="$2"
  shift 2
fi
case "$arch" in
  x86_64 | amd64) arch=x86_64 qemu=qemu-system-x86_64 kernel="${1:-linux-image-cloud-amd64}" ;;
  arm64 | aarch64) arch=arm64 qemu=qemu-system-aarch64 kernel="${1:-linux-image-cloud-arm64}" ;;
  *) echo "vm-device-ssh: unknown architecture $arch (x86_64 or arm64)" >&2; exit 2 ;;
esac

. tests/harness/skip.sh vm-device-ssh
[ -x "$build/perfgate" ] || { echo "vm-device-ssh: $build/perfgate is missing (build it first)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || skip "the guest's perfgate loads probes as root"
command -v "$qemu" > /dev/null || skip "$qemu is missing (apt-get install qemu-system-x86 or qemu-system-arm)"
command -v ssh > /dev/null || skip "ssh is missing (apt-get install openssh-client)"
sshd=/usr/sbin/sshd
device_perfgate=()
if [ "$arch" = arm64 ]; then
  [ -n "${PERFGATE_DEVICE_PERFGATE:-}" ] && [ -x "$PERFGATE_DEVICE_PERFGATE" ] ||
    { echo "vm-device-ssh: PERFGATE_DEVICE_PERFGATE must name the arm64 perfgate" >&2; exit 2; }
  device_perfgate=(--file "$(realpath "$PERFGATE_DEVICE_PERFGATE")")
  # Debian's arm64 sshd, unpacked once into the VM cache.
  cache="${PERFGATE_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/perfgate-vm}"
  sshd="$cache/openssh-server-arm64/usr/sbin/sshd"
  if [ ! -x "$sshd" ]; then
    mkdir -p "$cache/debs"
    (cd "$cache/debs" && apt-get download -q openssh-server:arm64 > /dev/null 2>&1) ||
      skip "apt-get download openssh-server:arm64 failed"
    dpkg-deb -x "$(ls -t "$cache"/debs/openssh-server_*_arm64.deb | sed -n 1p)" "$cache/openssh-server-arm64"
  fi
else
  [ -x "$sshd" ] || skip "/usr/sbin/sshd is missing (apt-get install openssh-server)"
fi

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
        PERFGATE_TARGET_TEST_FOREIGN=$([ "$arch" = arm64 ] && echo 1) \
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
# On its own architecture the guest gets this perfgate (sent by the test,
# as to any device of the host's); on arm64 its own, on its PATH.
guest_perfgate="${device_perfgate[1]:-}"
[ "$arch" = arm64 ] || device_perfgate=(--file "$build/perfgate")
bash tests/vm/run.sh --arch "$arch" --cpus 1 --memory 2048 --timeout "${PERFGATE_VM_TIMEOUT:-1500}" --ssh-port "$port" \
  --module virtio_pci --module virtio_net --console-in "$work/console-in" \
  "${device_perfgate[@]}" --file "$sshd" --file "$work/keys" --file tests/vm/console.sh \
  --file tests/vm/guest-ssh-device.sh "$kernel" -- sh "$PWD/tests/vm/guest-ssh-device.sh" "$work/keys" "$sshd" $guest_perfgate \
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
