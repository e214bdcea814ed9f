# Runs inside tests/vm/run.sh's virtual machine (busybox sh), from the source
# checkout's path: the guest's half of tests/vm/device-ssh-test.sh. Brings up
# eth0 on QEMU's user-mode network and an ssh server with the host's test
# keys and configuration ($1: their directory, sent with --file; $2: the
# sshd, by default /usr/sbin/sshd; $3, on a device of another architecture
# than the host's: its own perfgate, put on its PATH), asks the host to run
# the device test against it, and exits with what the host says.
set -eu
here=$(dirname "$0")
. "$here/console.sh"
keys="$1"
sshd="${2:-/usr/sbin/sshd}"
if [ -n "${3:-}" ]; then
  mkdir -p /usr/local/bin
  ln -sf "$3" /usr/local/bin/perfgate
fi
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
ip route add default via 10.0.2.2
# sshd's unprivileged child chroots into /run/sshd.
mkdir -p /run/sshd
chmod 755 /run/sshd
"$sshd" -f "$keys/sshd_config" -E /tmp/sshd.log || {
  cat /tmp/sshd.log
  exit 1
}
echo "vm-device-ssh: sshd listens; the host runs its test"
answer=$(console_ask device)
echo "vm-device-ssh: the host's test: $answer"
[ "$answer" = passed ]
