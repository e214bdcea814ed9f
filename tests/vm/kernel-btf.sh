#!/usr/bin/env bash
# Writes the BTF of a Debian kernel package (its /sys/kernel/btf/vmlinux, read
# in a virtual machine booted with tests/vm/run.sh) to OUT: what a build for
# another architecture generates its vmlinux.h from (PERFGATE_VMLINUX_BTF).
#
#   tests/vm/kernel-btf.sh [--arch ARCH] KERNEL_PACKAGE OUT
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
arch_args=()
if [ "${1:-}" = --arch ]; then
  arch_args=(--arch "$2")
  shift 2
fi
[ $# -eq 2 ] || { echo "usage: $0 [--arch ARCH] KERNEL_PACKAGE OUT" >&2; exit 2; }
console=$(mktemp)
trap 'rm -f "$console"' EXIT
. "$here/console.sh"
"$here/run.sh" "${arch_args[@]}" --timeout 600 --file "$here/console.sh" "$1" -- \
  sh -c ". '$here/console.sh' && console_send btf /sys/kernel/btf/vmlinux" > "$console"
console_receive btf "$console" "$2.tmp"
[ -s "$2.tmp" ] || { echo "kernel-btf: no BTF came back from $1" >&2; exit 1; }
mv "$2.tmp" "$2"
echo "kernel-btf: $2 ($(stat -c %s "$2") bytes) from $1"
