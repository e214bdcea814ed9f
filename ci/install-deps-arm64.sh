#!/usr/bin/env bash
# What the arm64 job (ci/arm64.sh) needs besides ci/install-deps.sh: Debian's
# arm64 cross toolchain, the :arm64 libraries perfgate links, and QEMU for
# arm64. Adds the arm64 architecture to dpkg; idempotent.
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
  libprotobuf-dev:arm64 libbenchmark-dev:arm64
