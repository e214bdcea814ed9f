#!/usr/bin/env bash
# The Debian package, as a user gets it: built with CPack from BUILD_DIR,
# installed with dpkg, then perfgate --version, perfgate(1), bash completion,
# doctor, probes and the shipped smoke suite (a baseline recorded here, then
# a run against it) from the installed files only — another working
# directory, no build or source tree on PATH — and removed again; then
# `cmake --install` under another prefix and with DESTDIR.
#   tests/package/install_test.sh BUILD_DIR
# Exit 77 (skip) without root or dpkg, or when a perfgate package is
# installed already (it is not ours to remove); under CI=true those fail.
set -euo pipefail
build_dir=$(cd "$1" && pwd)

source "$(dirname "$0")/../harness/skip.sh" package-install
[ "$(id -u)" -eq 0 ] || skip "installing a package needs root"
command -v dpkg >/dev/null || skip "no dpkg on this machine"
if dpkg-query -W -f='${Status}' perfgate 2>/dev/null | grep -q "install ok installed"; then
  skip "a perfgate package is installed already"
fi

scratch=$(mktemp -d)
cleanup() {
  dpkg -r perfgate >/dev/null 2>&1 || true
  rm -rf "$scratch"
}
trap cleanup EXIT

(cd "$build_dir" && cpack -G DEB -B "$scratch/package" >"$scratch/cpack.log" 2>&1) || {
  cat "$scratch/cpack.log"
  exit 1
}
deb=$(ls "$scratch"/package/perfgate_*.deb)
echo "package: $(basename "$deb")"
dpkg-deb --field "$deb" Depends | grep -q libbpf || { echo "Depends names no libbpf: $(dpkg-deb --field "$deb" Depends)"; exit 1; }
dpkg -i "$deb"

# From here on only what the package installed: a clean environment in an
# empty directory.
mkdir "$scratch/work" "$scratch/baselines"
cd "$scratch/work"
run() { env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$scratch" "$@"; }

[ "$(run sh -c 'command -v perfgate')" = /usr/bin/perfgate ]
run perfgate --version | grep -E '^perfgate [0-9.]+ \(commit ([0-9a-f]+|unknown), libbpf v[0-9.]+\)$'
run man -w perfgate | grep -q '/usr/share/man/man1/perfgate.1'
run bash -c 'source /usr/share/bash-completion/completions/perfgate && COMP_WORDS=(perfgate baseline re) && COMP_CWORD=2 && _perfgate && [ "${COMPREPLY[*]}" = record ]'
run perfgate doctor
run perfgate probes >"$scratch/probes.txt"
grep -q '^ *runqlat ' "$scratch/probes.txt" || { cat "$scratch/probes.txt"; exit 1; }

suite=/usr/share/perfgate/suites/examples/smoke.json
[ -x /usr/libexec/perfgate/pg-smoke ]
run perfgate baseline record "$suite" --baseline-dir "$scratch/baselines" --out "$scratch/record" --reps 3 --quiet
set +e
run perfgate run "$suite" --baseline-dir "$scratch/baselines" --out "$scratch/out" --reps 3 --quiet
status=$?
set -e
# A verdict (pass, or a check that failed or was inconclusive on a busy
# host), never bad input or an infrastructure failure.
[ "$status" -le 1 ] || { echo "perfgate run exited $status"; exit 1; }
[ -f "$scratch/out/junit.xml" ] && [ -f "$scratch/out/report/index.html" ]
# The camera adapter finds its simulator where the package put it.
set +e
run perfgate baseline record /usr/share/perfgate/suites/camera-startup/camera.json --baseline-dir "$scratch/baselines" \
  --out "$scratch/camera" --reps 2 --quiet
status=$?
set -e
[ "$status" -eq 0 ] || { echo "the installed camera suite exited $status"; exit 1; }
# Grafana's dashboard provider names the directory the dashboard was installed in.
provider_path() { sed -n 's/^ *path: //p' "$1/perfgate/grafana/provisioning/dashboards/perfgate.yaml"; }
[ "$(provider_path /usr/share)" = /usr/share/perfgate/grafana/dashboards ] || {
  echo "the packaged Grafana provider names $(provider_path /usr/share)"; exit 1; }
[ -f /usr/share/perfgate/grafana/dashboards/perfgate.json ]

dpkg -r perfgate
[ ! -e /usr/bin/perfgate ] && [ ! -e /usr/libexec/perfgate ] && [ ! -e /usr/share/perfgate ]
# Installed under another prefix (cmake --install --prefix), and staged with
# DESTDIR: the provider names that prefix's directory, never the configured
# prefix or the staging directory.
cmake --install "$build_dir" --prefix "$scratch/prefix" >"$scratch/install.log"
[ "$(provider_path "$scratch/prefix/share")" = "$scratch/prefix/share/perfgate/grafana/dashboards" ] || {
  echo "with --prefix the Grafana provider names $(provider_path "$scratch/prefix/share")"; exit 1; }
DESTDIR="$scratch/stage" cmake --install "$build_dir" --prefix /opt/perfgate >"$scratch/install.log"
[ "$(provider_path "$scratch/stage/opt/perfgate/share")" = /opt/perfgate/share/perfgate/grafana/dashboards ] || {
  echo "with DESTDIR the Grafana provider names $(provider_path "$scratch/stage/opt/perfgate/share")"; exit 1; }
echo "package installed, used and removed; installed under other prefixes"
