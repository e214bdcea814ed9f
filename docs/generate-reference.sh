#!/usr/bin/env bash
# docs/reference.md from the perfgate binary: every command's --help, the
# exit codes (the footer of `perfgate --help`) and the metrics (the probe
# catalog of `perfgate probes`). One function per source, so that a section
# can change its source alone.
#   docs/generate-reference.sh PERFGATE OUT.md           write the page
#   docs/generate-reference.sh --check PERFGATE PAGE.md  exit 1 when PAGE.md differs
# Nothing in the page depends on the machine: no attach type, hook or
# privilege this host happens to have.
set -euo pipefail

check=false
if [ "${1:-}" = --check ]; then
  check=true
  shift
fi
if [ $# -ne 2 ]; then
  echo "usage: $0 [--check] PERFGATE OUT.md" >&2
  exit 2
fi
perfgate=$1 out=$2

# The command paths, "run", "baseline record", ...: the subcommands CLI11
# lists under "Subcommands:" in each --help, recursively.
subcommands() {
  "$perfgate" "$@" --help | awk '/^Subcommands:/ { s = 1; next } /^[A-Za-z]/ { s = 0 } s && $1 ~ /^[a-z]/ { print $1 }'
}
command_paths() {
  local command sub
  for command in $(subcommands); do
    local subs
    subs=$(subcommands "$command")
    if [ -z "$subs" ]; then
      echo "$command"
    else
      for sub in $subs; do echo "$command $sub"; done
    fi
  done
}

# A heading's GitHub anchor: lower case, spaces to '-', other punctuation dropped.
anchor() { echo "$1" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9_-'; }

# The top-level help without its footer (the exit codes have a section of their own).
top_help() { "$perfgate" --help | sed '/^Exit codes:/,$d' | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'; }

section_commands() {
  echo "## Commands"
  echo
  echo "Every command's \`--help\`, as the binary prints it."
  echo
  local path
  echo "- [\`perfgate\`](#perfgate)"
  while read -r path; do
    echo "- [\`perfgate $path\`](#$(anchor "perfgate-$path"))"
  done < <(command_paths)
  echo
  echo "### perfgate"
  echo
  echo '```text'
  top_help
  echo '```'
  while read -r path; do
    echo
    echo "### perfgate $path"
    echo
    echo '```text'
    # shellcheck disable=SC2086 # the path's words are separate arguments
    "$perfgate" $path --help
    echo '```'
  done < <(command_paths)
}

section_exit_codes() {
  echo "## Exit codes"
  echo
  echo "| code | meaning |"
  echo "| --- | --- |"
  "$perfgate" --help | awk '
    /^Exit codes:/ { s = 1; next }
    s && /^  [0-9] / { code = $1; sub(/^  [0-9]  */, ""); print "| " code " | " $0 " |"; n++ }
    END { if (!n) { print "no \"Exit codes:\" in perfgate --help" > "/dev/stderr"; exit 1 } }'
}

# From the probe catalog: the lines perfgate probes prints whatever the
# host (a probe, its metrics, its parameters), never the attach types it
# found or the hooks it chose here.
# Every metric as its emitter declares it (perfgate metrics): kind, unit,
# better direction, and how the why prices it.
section_declarations() {
  echo "## Metric declarations"
  echo
  echo "Every metric perfgate emits, as the runner, the workload kinds and the probes declare it"
  echo "(\`perfgate metrics\`). *The why* says how [the why](verdicts.md#why-it-regressed) prices a"
  echo "kernel-side metric that grew; outcomes are what it explains, host metrics are noise beside it."
  echo "Names with \`<placeholders>\` stand for a family (one metric per syscall, job, benchmark, ...)."
  echo
  "$perfgate" metrics --markdown | sed 's/^### /### /'
}

section_metrics() {
  echo "## Metrics"
  echo
  echo "The metrics of each probe in the catalog (\`perfgate probes\`), with the probe's parameters."
  echo "Every repetition also records \`workload.wall_time\`, \`workload.cpu_time\`, \`workload.max_rss\`,"
  echo "\`workload.page_faults\` and \`workload.context_switches\`; the workload kinds add their own"
  echo "([user guide](user-guide.md#workloads))."
  echo
  echo "| probe | what it measures | metrics | parameters | attach types |"
  echo "| --- | --- | --- | --- | --- |"
  "$perfgate" probes | awk '
    # Prose into a table cell: no cell break anywhere; outside `code` spans
    # no HTML tag and no emphasis either.
    function cell(s,    parts, n, k, out, t) {
      n = split(s, parts, "`")
      out = ""
      for (k = 1; k <= n; k++) {
        t = parts[k]
        gsub(/\|/, "\\|", t)
        if (k % 2 == 1) { gsub(/</, "\\&lt;", t); gsub(/>/, "\\&gt;", t); gsub(/[_*]/, "\\\\&", t) }
        out = out (k > 1 ? "`" : "") t
      }
      return out
    }
    function flush() {
      if (name != "") { print "| `" name "` | " cell(desc) " | " metrics " | " params " | " cell(attach) " |"; probes++ }
      name = ""; desc = ""; metrics = ""; params = ""; attach = ""
    }
    /^probes:/ { s = 1; next }
    !s { next }
    /^  [^ ]/ {
      flush()
      line = substr($0, 3)
      i = index(line, " — ")
      name = substr(line, 1, i - 1); desc = substr(line, i + length(" — "))
      next
    }
    /^    metrics: / {
      n = split(substr($0, length("    metrics: ") + 1), m, ", ")
      for (k = 1; k <= n; k++) metrics = metrics (k > 1 ? ", " : "") "`" m[k] "`"
      next
    }
    /^    attach: / {
      attach = substr($0, length("    attach: ") + 1)
      next
    }
    /^    parameter / {
      line = substr($0, length("    parameter ") + 1)
      i = index(line, " ")
      params = params (params == "" ? "" : "<br>") "`" substr(line, 1, i - 1) "` " cell(substr(line, i + 1))
      next
    }
    END {
      flush()
      if (!probes) { print "no probe catalog in perfgate probes" > "/dev/stderr"; exit 1 }
    }'
}

generate() {
  echo "# perfgate reference"
  echo
  echo "<!-- Generated from the perfgate binary by docs/generate-reference.sh; do not edit by hand."
  echo "     Regenerate: cmake --build BUILD --target update-reference -->"
  echo
  echo "The commands, exit codes and metrics of \`perfgate\`, as the binary itself states them."
  echo "The [user guide](user-guide.md) explains them."
  echo
  section_commands
  echo
  section_exit_codes
  echo
  section_metrics
  section_declarations
}

if ! $check; then
  tmp="$out.tmp.$$"
  trap 'rm -f "$tmp"' EXIT
  generate >"$tmp"
  mv "$tmp" "$out"
  exit 0
fi

fresh=$(mktemp)
trap 'rm -f "$fresh"' EXIT
generate >"$fresh"
if ! diff -u --label "$out (committed)" --label "$out (from $perfgate)" "$out" "$fresh"; then
  echo "$out is out of date with the perfgate binary: regenerate it with" \
    "\`cmake --build BUILD --target update-reference\` and commit the result." >&2
  exit 1
fi
echo "$out matches the perfgate binary"
