#!/usr/bin/env bash
# perfgate for the pull-request gate: the given package, else a build of
# perfgate at the action's own ref (kept in ~/.cache/perfgate/<commit>, so a
# runner builds each ref once).
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
if [ -n "${PERFGATE_PACKAGE:-}" ]; then
  $SUDO apt-get install -y -q "$(realpath "$PERFGATE_PACKAGE")"
  exit 0
fi
source_dir=$(cd "$ACTION_DIR/../../.." && pwd)
commit=$(git -C "$source_dir" rev-parse HEAD 2>/dev/null || echo unknown)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/perfgate/$commit
mkdir -p "$cache"
if [ ! -f "$cache/done" ]; then
  bash "$source_dir/ci/install-deps.sh"
  BUILD_DIR="$cache/build" bash "$source_dir/packaging/build-deb.sh" >"$cache.deb-path"
  touch "$cache/done"
fi
$SUDO apt-get install -y -q "$(cat "$cache.deb-path")"
perfgate --version
