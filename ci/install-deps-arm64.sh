#!/usr/bin/env bash
# What the arm64 job (ci/project/arm64.sh) needs besides ci/install-deps.sh: Debian's
# arm64 cross toolchain, the :arm64 libraries perfgate and its tests link
# (GoogleTest; libpq5 only: libpq-dev is not multi-arch, the host's headers
# serve, see packaging/arm64/toolchain.cmake), the libraries of iproute2's
# arm64 ip and tc (the tcp probe tests' in the virtual machine; the package
# itself is not installed but unpacked by tests/vm/probe-tests.sh), the
# libraries of Debian's arm64 sshd (the arm64 guest as a device over ssh,
# tests/vm/device-ssh-test.sh --arch arm64, which unpacks openssh-server:arm64),
# and QEMU for arm64. Adds the arm64 architecture to dpkg; idempotent.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  $SUDO dpkg --add-architecture arm64
fi
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends crossbuild-essential-arm64 qemu-system-arm \
  libbpf-dev:arm64 libelf-dev:arm64 libdw-dev:arm64 zlib1g-dev:arm64 libsqlite3-dev:arm64 \
  libprotobuf-dev:arm64 libbenchmark-dev:arm64 libpq5:arm64 libgtest-dev:arm64 \
  libmnl0:arm64 libbsd0:arm64 libcap2:arm64 libxtables12:arm64 \
  libcrypt1:arm64 libwrap0:arm64 libaudit1:arm64 libpam0g:arm64 libsystemd0:arm64 libselinux1:arm64 \
  libgssapi-krb5-2:arm64 libkrb5-3:arm64 libcom-err2:arm64 libssl3:arm64 zlib1g:arm64
