# Runs inside tests/vm/run.sh's arm64 virtual machine (busybox sh), from the
# source checkout's path: what ci/project/arm64.sh checks. $1: the arm64 build
# directory, $2: the arm64 .deb (or empty). The first failure ends it.
set -eu
build="$1"
deb="${2:-}"
fail() {
  echo "vm-arm64-smoke: FAILED: $*"
  exit 1
}
step() { echo "vm-arm64-smoke: $*"; }

[ "$(uname -m)" = aarch64 ] || fail "not an arm64 guest: $(uname -m)"
step "perfgate --version"
"$build/perfgate" --version || fail "perfgate --version"
step "perfgate doctor"
"$build/perfgate" doctor || fail "perfgate doctor"
step "perfgate probes"
"$build/perfgate" probes > /tmp/probes.txt || fail "perfgate probes"
cat /tmp/probes.txt
# No fentry on Debian's arm64 6.1 (attach: ENOTSUPP, 524: arm64 got BPF
# trampolines' ftrace direct calls in 6.4); the hooks take tp_btf there.
grep -q 'cannot attach' /tmp/probes.txt && fail "perfgate probes: a probe cannot attach"

step "the smoke suite"
rm -rf /tmp/smoke
"$build/perfgate" run "$PWD/workloads/examples/smoke.json" --reps 3 --out /tmp/smoke || fail "smoke suite"
grep -o '"attach_type": *"[a-z_]*"' /tmp/smoke/results.json | sort | uniq -c

if [ -n "$deb" ]; then
  step "the arm64 package installs"
  # busybox's dpkg: it knows no other package, so their dependencies are
  # taken as present (the initramfs holds perfgate's libraries).
  mkdir -p /var/lib/dpkg/info /usr/share/doc
  touch /var/lib/dpkg/status
  dpkg -i -F depends "$deb" || fail "dpkg -i $deb"
  /usr/bin/perfgate --version || fail "the installed perfgate does not run"
  ls /usr/lib/perfgate* /usr/libexec/perfgate* 2> /dev/null | head -n 3 || true
fi
step "all passed"
