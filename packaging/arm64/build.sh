#!/usr/bin/env bash
# Cross-builds perfgate and its workload programs for arm64 in BUILD_DIR
# (default build-arm64), with --deb its Debian package, and with --tests the
# integration test executable the virtual machine's probe tests run
# (tests/vm/probe-tests.sh --arch arm64; no unit tests). The BPF programs
# are compiled against a vmlinux.h of Debian's arm64 kernel, whose BTF is
# read once in a virtual machine (tests/vm/kernel-btf.sh) and cached.
#
#   packaging/arm64/build.sh [--deb] [--tests]
#
# Needs crossbuild-essential-arm64 and the :arm64 libraries
# (ci/install-deps-arm64.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/../.."
deb=false tests=OFF
for arg in "$@"; do
  case "$arg" in
    --deb) deb=true ;;
    --tests) tests=ON ;;
    *) echo "usage: $0 [--deb] [--tests]" >&2; exit 2 ;;
  esac
done
build="${BUILD_DIR:-build-arm64}"
kernel="${PERFGATE_ARM64_KERNEL:-linux-image-cloud-arm64}"
cache="${PERFGATE_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/perfgate-vm}"
btf="$cache/btf-$kernel-arm64"
[ -s "$btf" ] || tests/vm/kernel-btf.sh --arch arm64 "$kernel" "$btf"

launcher=()
if command -v ccache > /dev/null; then
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$build" -G Ninja "${launcher[@]}" -DCMAKE_TOOLCHAIN_FILE="$PWD/packaging/arm64/toolchain.cmake" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DCMAKE_INSTALL_PREFIX=/usr -DCPACK_DEBIAN_PACKAGE_ARCHITECTURE=arm64 \
  -DPERFGATE_BUILD_TESTS="$tests" -DPERFGATE_BUILD_UNIT_TESTS=OFF -DPERFGATE_BUILD_BENCH=OFF \
  -DPERFGATE_VMLINUX_BTF="$btf"
cmake --build "$build" -j"$(nproc)"
if $deb; then
  (cd "$build" && cpack -G DEB)
fi
