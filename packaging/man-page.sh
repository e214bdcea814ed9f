#!/usr/bin/env bash
# perfgate(1): help2man over the binary's --help and --version, with every
# command's own --help as the COMMANDS section.
#   packaging/man-page.sh PERFGATE HELP2MAN INCLUDE.h2m OUT.1
set -euo pipefail
perfgate=$1 help2man=$2 include=$3 out=$4
sections=$(mktemp)
trap 'rm -f "$sections"' EXIT
cat "$include" >"$sections"
echo "[COMMANDS]" >>"$sections"
commands() {
  "$perfgate" "$@" --help | awk '/^Subcommands:/ { s = 1; next } /^[A-Za-z]/ { s = 0 } s && $1 ~ /^[a-z]/ { print $1 }'
}
for command in $(commands); do
  subcommands=$(commands "$command")
  # A command with subcommands ("baseline") is documented by theirs alone.
  paths=$command
  [ -z "$subcommands" ] || paths=$(for s in $subcommands; do echo "$command:$s"; done)
  for path in $paths; do
    words=${path//:/ }
    echo ".SS \"perfgate $words\""
    echo ".nf"
    # Roff: a leading dot or quote would be a request; backslashes escaped.
    "$perfgate" $words --help | sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"
    echo ".fi"
  done >>"$sections"
done
"$help2man" --no-info --name="performance-regression gate for CI, on eBPF" --section=1 \
  --include="$sections" --output="$out" "$perfgate"
