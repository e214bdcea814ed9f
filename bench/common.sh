# Helpers the benchmark scripts share; sourced by them, not run. Each check
# exits 2 with one line on stderr, like the scripts' own argument checks.

# The first executable file NAME under DIR (a build tree): find_exe DIR NAME.
find_exe() { find "$1" -name "$2" -type f -perm -u+x -print -quit; }

# The absolute path of the perfgate binary under the build tree DIR.
perfgate_under() {
  local found
  found=$(find_exe "$1" perfgate)
  [[ -n $found ]] || { echo "no perfgate under $1" >&2; exit 2; }
  realpath "$found"
}

require_root() { [[ $EUID -eq 0 ]] || { echo "needs root to load BPF programs" >&2; exit 2; }; }

# require_rounds ROUNDS MIN: a median needs that many.
require_rounds() { (( $1 >= $2 )) || { echo "need at least $2 rounds" >&2; exit 2; }; }

require_python3() { command -v python3 >/dev/null || { echo "needs python3 to read results.json" >&2; exit 2; }; }

# BPF run-time statistics would add their clock reads to every BPF mode.
require_bpf_stats_off() {
  if [[ $(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0) != 0 ]]; then
    echo "kernel.bpf_stats_enabled is on: it would inflate every BPF mode; turn it off first" >&2
    exit 2
  fi
}
