#!/usr/bin/env bash
# Builds tests/vm/planted (pg_planted_delay.ko, the planted kernel regression
# of perfgate's kernel A/B test) against Debian's headers for a kernel, and
# prints the path of the module:
#
#   build-planted-module.sh [KERNEL_PACKAGE] [OUT_DIR]
#
# KERNEL_PACKAGE is what tests/vm/run.sh boots: a kernel package's name, a
# meta-package such as linux-image-cloud-amd64 (the default), or the path of a
# kernel package's .deb. The kernel's version (6.1.0-57-cloud-amd64, say) is
# read from that package, the same .deb run.sh boots: it is taken from, or
# downloaded into, run.sh's cache ($PERFGATE_VM_CACHE, by default
# ~/.cache/perfgate-vm). linux-headers-VERSION is installed with apt-get when
# it is missing (which needs root), along with the compiler the kernel was
# built with (Debian's headers name it: gcc-12 for Debian 12's kernels).
#
# The module is built in a temporary copy of tests/vm/planted, so the source
# tree gets no build products, and copied to OUT_DIR (by default a new
# temporary directory). The build's own output goes to stderr; stdout has
# only the module's path.
#
# Exit status: 0 built; 77 when it cannot be built here (no headers package
# for that kernel, not root to install one, ...), with a one-line reason on
# stderr; 2 for bad usage; 1 when the build itself fails.
set -euo pipefail

skip() {
  echo "build-planted-module: cannot build: $*" >&2
  exit 77
}
fail() {
  echo "build-planted-module: $*" >&2
  exit 1
}

[ $# -le 2 ] || { echo "usage: $0 [KERNEL_PACKAGE] [OUT_DIR]" >&2; exit 2; }
package="${1:-linux-image-cloud-amd64}"
out_dir="${2:-}"
src="$(cd "$(dirname "$0")" && pwd)/planted"
[ -f "$src/Kbuild" ] || fail "no module source in $src"

for tool in dpkg dpkg-deb apt-get; do command -v "$tool" > /dev/null || skip "$tool is missing (not a Debian system?)"; done
deb_arch=$(dpkg --print-architecture)
cache="${PERFGATE_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/perfgate-vm}"

# The .deb of package $1, from run.sh's cache or downloaded into it as run.sh
# does, so that the version found here is the one run.sh boots.
fetch_deb() {
  local name="$1" deb
  mkdir -p "$cache/debs" 2> /dev/null || skip "cannot create the kernel package cache $cache/debs"
  deb=$(find "$cache/debs" -maxdepth 1 -name "${name}_*_${deb_arch}.deb" -print -quit)
  if [ -z "$deb" ]; then
    # apt runs its download as _apt, which may not be able to write there:
    # then the second try says why.
    (cd "$cache/debs" && apt-get download -q "$name" > /dev/null 2>&1) ||
      (cd "$cache/debs" && apt-get download -q "$name" >&2) || skip "apt-get download $name failed"
    deb=$(find "$cache/debs" -maxdepth 1 -name "${name}_*_${deb_arch}.deb" -print -quit)
    [ -n "$deb" ] || skip "apt-get download $name left no .deb in $cache/debs"
  fi
  echo "$deb"
}

# The kernel release of a kernel package: the name of its /boot/vmlinuz-*.
kernel_release() {
  dpkg-deb -c "$1" | sed -n 's|.*\./boot/vmlinu[xz]-\(.*\)$|\1|p' | sed -n '1p'
}

# The version: a meta-package is followed to the linux-image package it
# depends on, as run.sh does.
version=""
case "$package" in
  *.deb)
    [ -f "$package" ] || fail "$package: no such file"
    version=$(kernel_release "$package")
    [ -n "$version" ] || fail "$package: not a kernel package (no boot/vmlinuz-*)"
    ;;
  */*) skip "$package is a kernel image, not a package: its headers cannot be found from it" ;;
  *)
    name="$package"
    for _ in 1 2 3; do
      deb=$(fetch_deb "$name")
      version=$(kernel_release "$deb")
      [ -z "$version" ] || break
      name=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed -n 's/^ *\(linux-image-[^ ]*\).*/\1/p' | sed -n '1p')
      [ -n "$name" ] || fail "$package: neither a kernel package nor a meta-package of one"
    done
    [ -n "$version" ] || fail "$package: no kernel image found"
    ;;
esac
echo "build-planted-module: kernel $version" >&2

# Debian's headers for it, installed when missing.
headers_package="linux-headers-$version"
headers=""
for dir in "/usr/src/linux-headers-$version" "/lib/modules/$version/build"; do
  if [ -f "$dir/Makefile" ] && [ -f "$dir/.config" ]; then
    headers=$(cd "$dir" && pwd -P)
    break
  fi
done
if [ -z "$headers" ]; then
  apt-cache show "$headers_package" > /dev/null 2>&1 || skip "no package $headers_package in apt's lists"
  [ "$(id -u)" = 0 ] || skip "$headers_package is not installed and installing it needs root"
  apt-get install -y -q "$headers_package" >&2 || skip "apt-get install $headers_package failed"
  headers="/usr/src/linux-headers-$version"
  [ -f "$headers/Makefile" ] || fail "$headers_package installed no $headers/Makefile"
fi

# The compiler: the one the kernel was built with, which Debian's headers
# set as CC (their .kernelvariables: gcc-12 for Debian 12's kernels). The
# headers package depends on it; a header tree from elsewhere may not have
# brought it. A module built with another compiler than the kernel's may
# not load or may not match the kernel's code generation options.
compiler=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\).*/\1/p' "$headers/.config")
needed=()
command -v make > /dev/null || needed+=(make)
[ -z "$compiler" ] || command -v "$compiler" > /dev/null || needed+=("$compiler")
if [ ${#needed[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || skip "${needed[*]} missing and installing needs root"
  apt-get install -y -q "${needed[@]}" >&2 || skip "apt-get install ${needed[*]} failed"
fi

build=$(mktemp -d "${TMPDIR:-/tmp}/pg-planted.XXXXXX")
trap 'rm -rf "$build"' EXIT
cp -R "$src/." "$build/"
make -C "$headers" M="$build" modules >&2 || fail "the module did not build against $headers"
[ -f "$build/pg_planted_delay.ko" ] || fail "the build left no pg_planted_delay.ko"

if [ -z "$out_dir" ]; then
  out_dir=$(mktemp -d "${TMPDIR:-/tmp}/pg-planted-ko.XXXXXX")
fi
mkdir -p "$out_dir"
cp "$build/pg_planted_delay.ko" "$out_dir/"
echo "$(cd "$out_dir" && pwd)/pg_planted_delay.ko"
