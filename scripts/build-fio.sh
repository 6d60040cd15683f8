#!/bin/bash
# A fio release built from its tag once and kept: for what the distribution's fio lacks (fio 3.41's sprandom
# preconditioning, `ptsbench pts --precondition sprandom`), in the device lab's FTL variant and in the tests.
#   bash scripts/build-fio.sh [TAG]     prints the path of TAG's fio (default fio-3.42), building it when missing
# Kept in ${PTSBENCH_FIO_CACHE:-/var/cache/ptsbench/fio}/TAG/fio; the source is ${PTSBENCH_FIO_SOURCE:-fio's
# GitHub repository}; built with libaio-dev (or fio would lack the libaio engine ptsbench uses) and zlib1g-dev,
# installed with apt-get when missing (root). A few minutes the first time; one build at a time (a lock).
# Exit 77: it cannot be built on this machine (the message says why).
set -euo pipefail
tag=${1:-fio-3.42}
case "$tag" in fio-[0-9]*.[0-9]*) ;; *) echo "build-fio: not a fio release tag: $tag (e.g. fio-3.42)" >&2; exit 2 ;; esac
cannot() { echo "build-fio: cannot build $tag: $*" >&2; exit 77; }
cache=${PTSBENCH_FIO_CACHE:-/var/cache/ptsbench/fio}
fio=$cache/$tag/fio
mkdir -p "$cache"
exec 6>"$cache/build.lock"
flock 6
if [ ! -x "$fio" ]; then
  missing=()
  for pair in git:git gcc:gcc make:make; do command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}"); done
  [ -f /usr/include/libaio.h ] || missing+=(libaio-dev)
  [ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
  if [ "${#missing[@]}" -gt 0 ]; then
    [ "$(id -u)" = 0 ] || cannot "${missing[*]} missing (apt-get install them as root)"
    echo "build-fio: installing ${missing[*]} with apt-get (to build $tag)" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null; } || cannot "apt-get could not install ${missing[*]}"
  fi
  source=${PTSBENCH_FIO_SOURCE:-https://github.com/axboe/fio.git}
  echo "build-fio: building $tag from $source into $(dirname "$fio")" >&2
  build=$(mktemp -d /tmp/ptsbench-fio.XXXXXX)
  trap 'rm -rf "$build"' EXIT
  if ! { git clone -q --depth 1 --branch "$tag" "$source" "$build/fio" && cd "$build/fio" \
         && ./configure --disable-native && make -j"$(nproc)"; } >"$build/build.log" 2>&1; then
    echo "build-fio: $tag did not build:" >&2; tail -30 "$build/build.log" >&2; exit 1
  fi
  "$build/fio/fio" --enghelp=libaio >/dev/null 2>&1 || cannot "it built without libaio"
  mkdir -p "$(dirname "$fio")"
  cp "$build/fio/fio" "$fio.new" && mv "$fio.new" "$fio"
fi
echo "$fio"
