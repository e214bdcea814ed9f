# Debian's bzip2 as a real project's code for the instrumented benchmarks;
# sourced by them, not run. Needs dpkg-source (dpkg-dev) and network access
# to Debian's archive on the first use.

# What the benchmarks on it need besides perfgate.
require_bzip2_tools() {
  command -v valgrind >/dev/null || { echo "needs valgrind (ci/install-deps.sh installs it)" >&2; exit 2; }
  command -v dpkg-source >/dev/null || { echo "needs dpkg-source (Debian's dpkg-dev)" >&2; exit 2; }
}

# Unpacks Debian 12's bzip2 source package into DIR (a new directory). The
# package comes through apt with a deb-src entry of its own, in a cache
# directory (PERFGATE_SRC_CACHE, default ~/.cache/perfgate-src): the host's
# apt sources are not changed. Prints the package's file name.
bzip2_source() {
  local dir=$1 cache dsc
  cache=${PERFGATE_SRC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/perfgate-src}
  mkdir -p "$cache/lists/partial" "$cache/pkg"
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main" \
    >"$cache/sources.list"
  local apt_src=(-o "Dir::Etc::SourceList=$cache/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$cache/lists" -o APT::Sandbox::User=root)
  if ! ls "$cache"/pkg/bzip2_*.dsc >/dev/null 2>&1; then
    apt-get "${apt_src[@]}" -q update >/dev/null
    (cd "$cache/pkg" && apt-get "${apt_src[@]}" -q source --download-only bzip2 >/dev/null 2>&1)
  fi
  dsc=$(ls "$cache"/pkg/bzip2_*.dsc | sed -n '1p')
  dpkg-source -x "$dsc" "$dir" >/dev/null 2>&1
  basename "$dsc"
}

# 400 kB of bzip2's own source tarball, uncompressed, into FILE: the input
# the benchmarks compress.
bzip2_input() {
  local cache=${PERFGATE_SRC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/perfgate-src}
  head -c 400000 < <(gzip -dc "$(ls "$cache"/pkg/bzip2_*.orig.tar.gz | sed -n '1p')") >"$1"
}

# The changes of the source tree in DIR: one more pass in generateMTFValues
# (a range check of two thirds of the block's pointers: about 1 % more
# instructions in all, every one of them in that function), or a comment.
# Exit 2 when the change did not apply.
bzip2_extra_pass() {
  local before
  before=$(md5sum <"$1/compress.c")
  sed -i 's|^   for (i = 0; i <= EOB; i++) s->mtfFreq\[i\] = 0;$|&\n   /* Checks the block pointers past the first third. */\n   for (i = s->nblock / 3; i < s->nblock; i++) if (ptr[i] >= (UInt32)s->nblock) AssertH(0, 1009);|' \
    "$1/compress.c"
  [[ $(md5sum <"$1/compress.c") != "$before" ]] || { echo "the extra pass did not apply to $1/compress.c" >&2; exit 2; }
}
bzip2_comment() {
  local before
  before=$(md5sum <"$1/compress.c")
  sed -i 's|^void generateMTFValues ( EState\* s )$|/* Move-to-front coding of the sorted block. */\n&|' "$1/compress.c"
  [[ $(md5sum <"$1/compress.c") != "$before" ]] || { echo "the comment did not apply to $1/compress.c" >&2; exit 2; }
}

# The build: the program with the library's sources linked in (Debian's own
# build links libbz2.so), so that the counted profile sees the library's
# functions. Run in the source tree; writes OUT.
bzip2_build_command() {
  echo "\${CC:-cc} -O2 -g -D_FILE_OFFSET_BITS=64 -o $1 bzip2.c blocksort.c huffman.c crctable.c randtable.c compress.c decompress.c bzlib.c"
}
