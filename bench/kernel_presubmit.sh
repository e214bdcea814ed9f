#!/usr/bin/env bash
# A kernel team's presubmit, end to end, on Debian's own kernel source
# (docs/kernel-ab.md): the base kernel built from linux-source-6.1, a patch
# applied and built again, and `perfgate ab --baseline-kernel base.deb
# --candidate-kernel patched.deb` gating it on the smoke suite in QEMU.
# Prints each step's time and the gate's exit status.
#
#   bench/kernel_presubmit.sh BUILD_DIR WORK_DIR [PATCH]
#
# BUILD_DIR holds perfgate (and pg-smoke, pg-boot-vm); WORK_DIR keeps the
# source tree and the packages between runs (an incremental build of the
# patched tree then takes minutes). PATCH (default: the planted one below,
# 20 us more in every getppid, as a careless debugging line would add) is
# applied with `patch -p1` in the tree for the candidate.
#
# The configuration is x86-64's defconfig with the virtual machine's
# drivers built in (kvm_guest.config) and what perfgate's probes need (BPF,
# BTF, kprobes, uprobes, tracepoints, perf events): a kernel of minutes,
# not Debian's hours of modules. Needs root (apt-get) and about 3 GB.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 BUILD_DIR WORK_DIR [PATCH]" >&2; exit 2; }
build=$(realpath "$1")
mkdir -p "$2"
work=$(realpath "$2")
patch_file="${3:-}"
cd "$(dirname "$0")/.."
repo=$PWD
jobs=$(nproc)

# step NAME COMMAND...: runs the command, prints its time, returns its status.
step() {
  local name="$1" start=$SECONDS rc=0
  shift
  "$@" || rc=$?
  echo "kernel-presubmit: $name: $((SECONDS - start)) s"
  return "$rc"
}

install_deps() {
  apt-get install -y -q linux-source-6.1 build-essential bc bison flex libssl-dev libelf-dev dwarves rsync kmod cpio \
    > "$work/apt.log" 2>&1 || { tail -n 20 "$work/apt.log"; exit 1; }
}

unpack() {
  [ -d "$work/base/kernel" ] && return 0
  rm -rf "$work/base"
  mkdir -p "$work/base"
  tar -xf /usr/src/linux-source-6.1.tar.xz -C "$work/base" --strip-components=1
}

# The base tree's configuration, once: configuring again would touch every
# option's timestamp and rebuild the whole tree.
configure() {
  local tree="$1"
  [ -f "$tree/.config" ] && return 0
  (
    cd "$tree"
    make -s defconfig
    make -s kvm_guest.config
    # What perfgate's probes attach to and read.
    scripts/config -e BPF_SYSCALL -e BPF_JIT -e BPF_EVENTS -e DEBUG_INFO -e DEBUG_INFO_DWARF5 -e DEBUG_INFO_BTF \
      -e KPROBES -e KPROBE_EVENTS -e UPROBES -e UPROBE_EVENTS -e FTRACE -e FUNCTION_TRACER -e DYNAMIC_FTRACE \
      -e FTRACE_SYSCALLS -e PERF_EVENTS -e CGROUPS -e CGROUP_BPF -e MEMCG -e DEBUG_FS -e KALLSYMS_ALL \
      -e IKHEADERS -d DEBUG_INFO_REDUCED -d DEBUG_INFO_SPLIT -d RANDOMIZE_BASE \
      --set-str LOCALVERSION "-base" -d LOCALVERSION_AUTO
    make -s olddefconfig
  )
}

# The candidate's: the base's, but its release says what it is (only what
# includes the release string is built again).
configure_candidate() {
  (cd "$1" && scripts/config --set-str LOCALVERSION "-patched" && make -s olddefconfig)
}

# The tree's kernel package, built; its path in $deb.
package() {
  local tree="$1"
  rm -f "$work"/linux-image-*"$2"*.deb
  make -C "$tree" -s -j"$jobs" bindeb-pkg KDEB_PKGVERSION=1 > "$work/$2.log" 2>&1 ||
    { tail -n 30 "$work/$2.log"; exit 1; }
  deb=$(find "$work" -maxdepth 1 -name "linux-image-*$2*.deb" ! -name '*-dbg_*' -print -quit)
  [ -n "$deb" ] || { echo "no kernel package in $work" >&2; exit 1; }
}

planted_patch() {
  cat << 'PATCH'
--- a/kernel/sys.c
+++ b/kernel/sys.c
@@ -972,6 +972,7 @@ SYSCALL_DEFINE0(getppid)
 {
 	int pid;
 
+	udelay(20);
 	rcu_read_lock();
 	pid = task_tgid_vnr(rcu_dereference(current->real_parent));
 	rcu_read_unlock();
PATCH
}

step "install the build's packages" install_deps
step "unpack linux-source-6.1" unpack
step "configure the base" configure "$work/base" base
step "build the base kernel package" package "$work/base" base
base_deb=$deb
# The candidate: the same tree, patched and built again (make rebuilds what
# the patch touched).
rm -rf "$work/patched"
# A copy, not hard links: the compiler writes an object file in place.
step "copy the tree for the candidate" cp -a "$work/base" "$work/patched"
if [ -n "$patch_file" ]; then
  (cd "$work/patched" && patch -p1 < "$patch_file")
else
  grep -q 'linux/delay.h' "$work/patched/kernel/sys.c" || sed -i '0,/^#include/s//#include <linux\/delay.h>\n#include/' "$work/patched/kernel/sys.c"
  (cd "$work/patched" && planted_patch | patch -p1 --fuzz=3)
fi
step "configure the candidate" configure_candidate "$work/patched"
step "build the patched kernel package" package "$work/patched" patched
patched_deb=$deb

ls -la "$base_deb" "$patched_deb"
rc=0
step "perfgate ab (the gate)" "$build/perfgate" ab "$repo/workloads/examples/smoke.json" --quiet --out "$work/gate" \
  --baseline-kernel "$base_deb" --candidate-kernel "$patched_deb" || rc=$?
echo "kernel-presubmit: the gate exited $rc; reports in $work/gate"
