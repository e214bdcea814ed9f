#!/usr/bin/env bash
# Boots a kernel in QEMU with an initramfs made of this host's files and runs
# one command in it as root; prints the command's output and exits with its
# exit status. perfgate's kernel A/B (`perfgate ab --baseline-kernel`,
# gate/target/kernel_vm.h) boots each side with it; tests/vm uses it too.
#
#   boot-vm.sh [options] KERNEL -- CMD [ARG]...
#
# KERNEL is a Debian package name (linux-image-6.1.0-56-cloud-amd64, or a
# meta-package such as linux-image-6.12-amd64), fetched with apt-get
# download and kept in the cache; or the path of a kernel package's .deb
# (one built with `make bindeb-pkg`, say); or the path of a kernel image
# (bzImage, vmlinuz, arm64's Image), whose modules --modules-dir names.
# CMD runs in the guest with the
# host's current directory as its own; every file it needs is copied into the
# initramfs at its host path, with the shared libraries it links:
#
#   --file PATH      copy PATH (a file, or a directory with all it holds);
#                    repeatable. Executables among them bring their libraries.
#   --arch ARCH      x86_64 (default: the host's) or arm64
#   --timeout S      give up after S seconds of guest time (default 600)
#   --memory MB      guest memory (default 2048)
#   --cpus N         guest CPUs (default 2)
#   --accel A        tcg (default) or kvm; PERFGATE_VM_ACCEL sets the default
#   --env NAME       pass the host's NAME into the guest; repeatable (CI and
#                    every PERFGATE_* variable are always passed)
#   --module NAME    load the kernel module NAME of the kernel package, after
#                    the modules it depends on, before CMD; one built into
#                    that kernel is left out. Repeatable.
#   --insmod "FILE [PARAM=VALUE]..."
#                    load the module FILE (a .ko built for that kernel), with
#                    those parameters, after the --module ones, before CMD;
#                    repeatable
#   --modules-dir D  with a kernel image: its modules (D/kernel/...,
#                    D/modules.builtin: lib/modules/VERSION of its build)
#   --append TEXT    more kernel command line (after perfgate's own)
#   --collect G H    after CMD, the guest's directory G comes back into the
#                    host's existing directory H (on a virtio disk of its own
#                    after --disk's; --module virtio_pci --module virtio_blk
#                    where they are modules), even when CMD failed
#   --collect-mb MB  that disk's size (default 512)
#   --disk MB        an empty virtio disk of MB megabytes (/dev/vda; on
#                    kernels where virtio_pci is a module, --module it)
#   --disk-mount D   that disk made an ext4 file system here (mkfs.ext4,
#                    e2fsprogs) and mounted at the guest's D before CMD, with
#                    what the initramfs held under D (--file paths) moved
#                    onto it (virtio_pci, virtio_blk and ext4 loaded where
#                    they are modules); a guest that cannot mount it does
#                    not run CMD
#   --console-in P   what the host writes to P (a FIFO, opened for writing
#                    before run.sh) the guest reads from /dev/console
#                    (tests/vm/console.sh); by default the console reads nothing
#   --pid-file P     QEMU writes its process id to P once it started
#   --ssh-port P     a NIC (QEMU's user-mode network, virtio-net: --module
#                    virtio_pci --module virtio_net where they are modules)
#                    with the host's 127.0.0.1:P forwarded to the guest's
#                    port 22; the guest configures eth0 itself (10.0.2.15/24,
#                    gateway 10.0.2.2). Without it the guest has no network.
#
# Exit status: the command's, or 125 when the VM could not be prepared, or
# 124 when it timed out, or 126 when the guest ended without the command's
# status line (a kernel panic, say).
#
# The cache (kernel packages, extracted kernels) is $PERFGATE_VM_CACHE, by
# default ~/.cache/perfgate-vm.
set -euo pipefail

die() {
  echo "vm: $*" >&2
  exit 125
}

arch=$(uname -m)
timeout_s=600
memory_mb=2048
cpus=2
accel="${PERFGATE_VM_ACCEL:-tcg}"
files=()
env_names=(CI)
modules=()
disk_mb=0
disk_mount=""
insmods=()
modules_dir=""
append=""
collect_guest=""
collect_host=""
collect_mb=512
console_in=/dev/null
pid_file=()
nic_args=(-nic none)
while [ $# -gt 0 ]; do
  case "$1" in
    --file) files+=("$2"); shift 2 ;;
    --arch) arch="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --memory) memory_mb="$2"; shift 2 ;;
    --cpus) cpus="$2"; shift 2 ;;
    --accel) accel="$2"; shift 2 ;;
    --env) env_names+=("$2"); shift 2 ;;
    --module) modules+=("$2"); shift 2 ;;
    --disk) disk_mb="$2"; shift 2 ;;
    --disk-mount) disk_mount="$2"; shift 2 ;;
    --insmod) insmods+=("$2"); shift 2 ;;
    --modules-dir) modules_dir="$2"; shift 2 ;;
    --append) append="$2"; shift 2 ;;
    --collect) collect_guest="$2" collect_host="$3"; shift 3 ;;
    --collect-mb) collect_mb="$2"; shift 2 ;;
    --console-in) console_in="$2"; shift 2 ;;
    --pid-file) pid_file=(-pidfile "$2"); shift 2 ;;
    --ssh-port) nic_args=(-nic "user,model=virtio-net-pci,hostfwd=tcp:127.0.0.1:$2-:22"); shift 2 ;;
    --) die "no kernel package before --" ;;
    -*) die "unknown option $1 (see the comment at the top of $0)" ;;
    *) break ;;
  esac
done
case "$disk_mb" in '' | *[!0-9]*) die "--disk takes a size in megabytes, not $disk_mb" ;; esac
case "$disk_mount" in '' | /*) ;; *) die "--disk-mount: the guest's directory must be an absolute path, not $disk_mount" ;; esac
[ -z "$disk_mount" ] || [ "$disk_mb" -gt 0 ] || die "--disk-mount needs --disk MB"
[ -z "$disk_mount" ] || command -v mkfs.ext4 > /dev/null || die "--disk-mount needs mkfs.ext4 (apt-get install e2fsprogs)"
[ -z "$disk_mount" ] || modules+=(virtio_pci virtio_blk ext4)
case "$collect_mb" in '' | *[!0-9]* | 0) die "--collect-mb takes a size in megabytes, not $collect_mb" ;; esac
[ -z "$collect_host" ] || [ -d "$collect_host" ] || die "--collect: $collect_host is not a directory"
case "$collect_guest" in '' | /*) ;; *) die "--collect: the guest's directory must be an absolute path, not $collect_guest" ;; esac
for f in "${insmods[@]}"; do [ -f "${f%% *}" ] || die "--insmod ${f%% *}: no such file"; done
[ -z "$modules_dir" ] || [ -d "$modules_dir" ] || die "--modules-dir $modules_dir is not a directory"
[ -r "$console_in" ] || die "--console-in $console_in cannot be read"
[ $# -ge 3 ] && [ "$2" = "--" ] || die "usage: $0 [options] KERNEL -- CMD [ARG]..."
package="$1"
shift 2

case "$arch" in
  x86_64 | amd64)
    arch=x86_64 deb_arch=amd64 qemu=qemu-system-x86_64 console=ttyS0
    qemu_machine=(-machine q35)
    lib_dirs=(/lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib64 /usr/lib64)
    strip=strip
    ;;
  arm64 | aarch64)
    arch=arm64 deb_arch=arm64 qemu=qemu-system-aarch64 console=ttyAMA0
    qemu_machine=(-machine virt -cpu max)
    lib_dirs=(/lib/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/aarch64-linux-gnu/lib)
    strip=aarch64-linux-gnu-strip
    ;;
  *) die "unknown architecture $arch (x86_64 or arm64)" ;;
esac
command -v "$qemu" > /dev/null || die "$qemu is missing (apt-get install qemu-system-x86 or qemu-system-arm)"
for tool in dpkg-deb cpio readelf; do command -v "$tool" > /dev/null || die "$tool is missing"; done

cache="${PERFGATE_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/perfgate-vm}"
mkdir -p "$cache/debs"

# The .deb of `$1` for $deb_arch, downloaded once.
fetch_deb() {
  local name="$1" deb
  deb=$(find "$cache/debs" -maxdepth 1 -name "${name}_*_${deb_arch}.deb" -print -quit)
  if [ -z "$deb" ]; then
    local spec="$name"
    [ "$deb_arch" = "$(dpkg --print-architecture)" ] || spec="$name:$deb_arch"
    # apt runs its download as _apt, which must be able to write there.
    (cd "$cache/debs" && apt-get download -q "$spec" > /dev/null 2>&1) ||
      (cd "$cache/debs" && apt-get download -q "$spec" >&2) || die "apt-get download $spec failed"
    deb=$(find "$cache/debs" -maxdepth 1 -name "${name}_*_${deb_arch}.deb" -print -quit)
    [ -n "$deb" ] || die "apt-get download $spec left no .deb in $cache/debs"
  fi
  echo "$deb"
}

# The kernel image, extracted once from its package; a meta-package is
# followed to the linux-image package it depends on. A kernel image given
# as a file is booted as it is.
deb=""
kernel_dir=""
case "$package" in
  */* | *.deb)
    [ -f "$package" ] || die "$package: no such kernel image or package"
    if [ "${package%.deb}" != "$package" ]; then
      deb=$(realpath "$package")
      dpkg-deb -c "$deb" > /dev/null 2>&1 || die "$package: not a Debian package"
    else
      kernel=$(realpath "$package")
    fi
    ;;
  *)
    name="$package"
    for _ in 1 2 3; do
      deb=$(fetch_deb "$name")
      if dpkg-deb -c "$deb" | grep '/boot/vmlinu[xz]-' > /dev/null; then break; fi
      name=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed -n 's/^ *\(linux-image-[^ ]*\).*/\1/p' | sed -n '1p')
      [ -n "$name" ] || die "$package: neither a kernel package nor a meta-package of one"
      deb=""
    done
    [ -n "$deb" ] || die "$package: no kernel image found"
    ;;
esac
if [ -n "$deb" ]; then
  # A package given by path is kept apart from one of the same name fetched.
  kernel_dir="$cache/kernels/$(basename "$deb" .deb)"
  case "$package" in */* | *.deb) kernel_dir="$cache/kernels/$(sha256sum "$deb" | cut -c1-16)-$(basename "$deb" .deb)" ;; esac
  if [ ! -d "$kernel_dir" ]; then
    rm -rf "$kernel_dir.tmp"
    mkdir -p "$kernel_dir.tmp"
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$kernel_dir.tmp" --wildcards './boot/vmlinu*' ||
      die "$package: no kernel image (boot/vmlinu*) in it"
    mv "$kernel_dir.tmp" "$kernel_dir"
  fi
  kernel=$(find "$kernel_dir/boot" -name 'vmlinu[xz]-*' -print -quit)
  [ -n "$kernel" ] || die "no vmlinuz in $kernel_dir/boot"
fi
# The package's modules, extracted once when a command first asks for one
# (in a directory of its own, then renamed: another run may do the same).
if [ -n "$deb" ] && [ ${#modules[@]} -gt 0 ] && [ ! -d "$kernel_dir/lib/modules" ]; then
  modules_tmp=$(mktemp -d "$kernel_dir/modules.XXXXXX")
  dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$modules_tmp" --wildcards './lib/modules/*' ||
    { rm -rf "$modules_tmp"; die "$deb: cannot extract its modules"; }
  mkdir -p "$kernel_dir/lib"
  mv -T "$modules_tmp/lib/modules" "$kernel_dir/lib/modules" 2> /dev/null || [ -d "$kernel_dir/lib/modules" ] ||
    die "cannot keep the modules of $deb in $kernel_dir"
  rm -rf "$modules_tmp"
fi

# busybox for the guest's architecture: the host's for the host's, else the
# static one from the other architecture's package.
if [ "$deb_arch" = "$(dpkg --print-architecture)" ]; then
  busybox=/bin/busybox
  [ -x "$busybox" ] && file_is_static=$(readelf -l "$busybox" | grep -c INTERP || true) &&
    [ "$file_is_static" = 0 ] || die "a static /bin/busybox is needed (apt-get install busybox-static)"
else
  busybox="$cache/busybox-$deb_arch/bin/busybox"
  if [ ! -x "$busybox" ]; then
    dpkg-deb -x "$(fetch_deb busybox-static)" "$cache/busybox-$deb_arch"
  fi
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/perfgate-vm.XXXXXX")
trap 'rm -rf "$work"' EXIT
root="$work/root"
mkdir -p "$root"/{etc,proc,sys,dev,tmp,run,root} "$root"/usr/{bin,sbin,lib}
# The same merged /usr as the host's (Debian 12: /lib is usr/lib), so that
# files keep the paths the dynamic loader and the binaries expect.
for dir in bin sbin lib lib64; do
  if [ -L "/$dir" ]; then
    mkdir -p "$root/$(readlink "/$dir")"
    ln -s "$(readlink "/$dir")" "$root/$dir"
  else
    mkdir -p "$root/$dir"
  fi
done
cp "$busybox" "$root/bin/busybox"

declare -A copied=()
# Copies one host path to the same path in the guest; a symbolic link as the
# file it names, which may sit elsewhere on the host.
copy_path() {
  local path="$1"
  [ -n "${copied[$path]:-}" ] && return 0
  copied[$path]=1
  mkdir -p "$root$(dirname "$path")"
  if [ -d "$path" ]; then
    cp -a "$path/." "$root$path/" 2> /dev/null || { mkdir -p "$root$path" && cp -a "$path/." "$root$path/"; }
  elif is_elf "$path"; then
    # Without debug information: a third of the size, and the initramfs is
    # packed and unpacked on every boot.
    "$strip" --strip-debug -o "$root$path" "$path" 2> /dev/null || cp -L "$path" "$root$path"
  else
    cp -L "$path" "$root$path"
  fi
}

is_elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

# The shared libraries and loader an ELF file needs, found by name in the
# architecture's library directories (ldd cannot read a foreign binary).
copy_libraries() {
  local file="$1" interp lib dir found
  readelf -h "$file" > /dev/null 2>&1 || return 0
  interp=$(readelf -l "$file" 2> /dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
  [ -z "$interp" ] || copy_path "$interp"
  while read -r lib; do
    found=""
    for dir in $(readelf -d "$file" | sed -n 's/.*R\(UN\)\?PATH.*\[\(.*\)\]/\2/p' | tr ':' ' ') "${lib_dirs[@]}"; do
      if [ -e "$dir/$lib" ]; then
        found="$dir/$lib"
        break
      fi
    done
    [ -n "$found" ] || die "$file needs $lib, which is in none of ${lib_dirs[*]}"
    if [ -z "${copied[$found]:-}" ]; then
      copy_path "$found"
      copy_libraries "$(readlink -f "$found")"
    fi
  done < <(readelf -d "$file" 2> /dev/null | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p')
}

for path in "${files[@]}"; do
  [ -e "$path" ] || die "--file $path does not exist"
  path=$(realpath -s "$path")
  copy_path "$path"
  while read -r f; do
    [ -x "$f" ] && copy_libraries "$f"
  done < <(find "$path" -type f)
done

# Kernel modules, each after those it depends on (the depends= of its
# .modinfo section, which readelf reads for any architecture), uncompressed (busybox's insmod passes the file as it
# is), in the order /modules lists them.
declare -A module_done=()
add_module() {
  local name="${1//-/_}" path dep file
  [ -n "${module_done[$name]:-}" ] && return 0
  module_done[$name]=1
  path=$(find "$module_root/kernel" \( -name "$name.ko*" -o -name "${name//_/-}.ko*" \) -print -quit)
  if [ -z "$path" ]; then
    [ -f "$module_root/modules.builtin" ] && grep -q -E "/(${name}|${name//_/-})\.ko\$" "$module_root/modules.builtin" ||
      die "--module $1: neither a module of $package nor built into it"
    return 0
  fi
  file="$root/lib/modules/$name.ko"
  case "$path" in
    *.xz) xz -dc "$path" ;;
    *.zst) zstd -qdc "$path" ;;
    *.gz) gzip -dc "$path" ;;
    *) cat "$path" ;;
  esac > "$file" || die "cannot unpack $path"
  for dep in $(readelf -p .modinfo "$file" | sed -n 's/^ *\[ *[0-9a-f]*\]  *depends=//p' | tr ',' ' '); do
    add_module "$dep"
  done
  echo "$name" >> "$root/modules"
}
touch "$root/modules"
if [ ${#modules[@]} -gt 0 ]; then
  if [ -n "$modules_dir" ]; then
    module_root="$modules_dir"
  elif [ -n "$deb" ]; then
    module_root=$(find "$kernel_dir/lib/modules" -mindepth 1 -maxdepth 1 -type d -print -quit)
  else
    die "--module with a kernel image needs --modules-dir"
  fi
  [ -n "$module_root" ] && [ -d "$module_root/kernel" ] || die "$package has no modules"
  mkdir -p "$root/lib/modules"
  for m in "${modules[@]}"; do add_module "$m"; done
fi
# Modules given as files, loaded after those: a guest that cannot load one
# does not run the command.
touch "$root/insmod"
index=0
for given in "${insmods[@]}"; do
  index=$((index + 1))
  f="${given%% *}"
  params=""
  [ "$f" = "$given" ] || params="${given#* }"
  case "$params" in *[!A-Za-z0-9_.,=\ -]*) die "--insmod $f: parameters are NAME=VALUE words of letters, digits and _.,-" ;; esac
  mkdir -p "$root/lib/modules/given"
  cp "$f" "$root/lib/modules/given/$index-$(basename "$f")"
  echo "/lib/modules/given/$index-$(basename "$f") $params" >> "$root/insmod"
done
# The disk the guest mounts.
[ -z "$disk_mount" ] || printf '%s\n' "$disk_mount" > "$root/disk-mount"
# The disk the guest's --collect directory comes back on.
collect_disk=""
if [ -n "$collect_guest" ]; then
  collect_disk=/dev/vda
  [ "$disk_mb" -eq 0 ] || collect_disk=/dev/vdb
  printf '%s %s\n' "$collect_guest" "$collect_disk" > "$root/collect"
fi

# The users the workloads run as (perfgate's suites use nobody);
# sshd (--ssh-port) takes its unprivileged child's identity from sshd.
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\nsshd:x:100:65534::/run/sshd:/bin/false\n' > "$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"
printf '127.0.0.1 localhost\n::1 localhost\n' > "$root/etc/hosts"

{
  printf 'cd %q 2>/dev/null || cd /\n' "$PWD"
  for name in "${env_names[@]}" $(compgen -e | grep '^PERFGATE_' || true); do
    [ -n "${!name+set}" ] && printf 'export %s=%q\n' "$name" "${!name}"
  done
  printf '%q ' "$@"
  printf '\n'
} > "$root/command"

cat > "$root/init" << 'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME=/root TERM=dumb
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# /tmp stays the initramfs' own (already in memory): files copied there stay visible.
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug
mount -t bpf bpf /sys/fs/bpf
mount -t cgroup2 cgroup2 /sys/fs/cgroup
ip link set lo up 2> /dev/null
echo 1 > /proc/sys/kernel/bpf_stats_enabled 2> /dev/null
for m in $(cat /modules); do insmod "/lib/modules/$m.ko" || echo "perfgate-vm: insmod $m failed"; done
status=""
while read -r f params; do
  insmod "$f" $params || { echo "perfgate-vm: insmod ${f##*/} $params failed"; status=125; }
done < /insmod
if [ -z "$status" ] && [ -f /disk-mount ]; then
  read -r dir < /disk-mount
  # What the initramfs holds there (files copied at their paths) moves onto
  # the disk first, not hidden under it; then anyone may write there, as
  # in /var/tmp (the workloads run as nobody).
  mkdir -p "$dir" /mnt/disk && mount -t ext4 /dev/vda /mnt/disk && cp -a "$dir"/. /mnt/disk/ && umount /mnt/disk &&
    mount -t ext4 /dev/vda "$dir" && chmod 1777 "$dir" ||
    { echo "perfgate-vm: cannot mount /dev/vda at $dir with what the initramfs held there"; status=125; }
fi
if [ -z "$status" ]; then
  echo "perfgate-vm: kernel $(uname -r) $(uname -m), running the command"
  sh /command < /dev/null
  status=$?
fi
if [ -f /collect ]; then
  read -r dir disk < /collect
  [ -d "$dir" ] && tar -C "$dir" -cf "$disk" . || echo "perfgate-vm: cannot write $dir to $disk"
fi
echo "perfgate-vm: exit status $status"
sync
poweroff -f
INIT
chmod +x "$root/init"

(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) > "$work/initramfs.cpio"

# One host thread for every virtual CPU: with a thread each (MTTCG), 6.12
# oopsed on an int3 in x64_sys_call while another CPU attached an fentry
# program there, live code patching that TCG does not make visible to the
# other CPUs in time. One thread sees each patch at once.
accel_args=(-accel tcg,thread=single)
if [ "$accel" = kvm ]; then
  accel_args=(-accel kvm -cpu host)
  [ "$arch" = x86_64 ] || die "--accel kvm needs the host's architecture"
fi

disk_args=()
if [ "$disk_mb" -gt 0 ]; then
  truncate -s "${disk_mb}M" "$work/disk.img"
  [ -z "$disk_mount" ] || mkfs.ext4 -q -F "$work/disk.img" > /dev/null || die "mkfs.ext4 could not make the --disk file system"
  disk_args=(-drive "file=$work/disk.img,if=virtio,format=raw,cache=unsafe")
fi
if [ -n "$collect_disk" ]; then
  truncate -s "${collect_mb}M" "$work/collect.img"
  disk_args+=(-drive "file=$work/collect.img,if=virtio,format=raw,cache=unsafe")
fi

log="$work/console.log"
status=0
timeout --foreground -k 10 "$timeout_s" "$qemu" "${qemu_machine[@]}" "${accel_args[@]}" -smp "$cpus" -m "$memory_mb" \
  -nographic -no-reboot "${nic_args[@]}" "${disk_args[@]}" "${pid_file[@]}" -kernel "$kernel" -initrd "$work/initramfs.cpio" \
  -append "console=$console panic=-1 oops=panic softlockup_panic=1 quiet loglevel=3 mitigations=off rdinit=/init${append:+ $append}" < "$console_in" |
  tee "$log" || status=$?
# timeout's status for the time limit; qemu's own when it failed.
if [ "$status" -eq 124 ]; then
  echo "vm: timed out after $timeout_s s" >&2
  exit 124
fi
line=$(tr -d '\r' < "$log" | sed -n 's/^perfgate-vm: exit status \([0-9]*\)$/\1/p' | tail -n1)
if [ -z "$line" ]; then
  echo "vm: the guest ended without the command's exit status (qemu exited $status)" >&2
  exit 126
fi
if [ -n "$collect_disk" ]; then
  tar -xf "$work/collect.img" -C "$collect_host" --no-same-owner 2> "$work/collect.err" ||
    { cat "$work/collect.err" >&2; die "cannot read the guest's $collect_guest back"; }
fi
exit "$line"
