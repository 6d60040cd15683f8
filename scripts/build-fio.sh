#!/bin/bash
# A fio release with what the distribution's fio lacks (fio 3.41's sprandom preconditioning, `ptsbench pts
# --precondition sprandom`), built once and kept: for the device lab's FTL variant and the tests.
#   bash scripts/build-fio.sh            a kept fio 3.41 or later, else the newest release Debian's unstable carries
#   bash scripts/build-fio.sh fio-X.Y    that release
# prints the path of the fio. Kept in ${PTSBENCH_FIO_CACHE:-/var/cache/ptsbench/fio}/fio-X.Y/fio.
# The source is fio's release tarball as Debian keeps it (fio_X.Y.orig.tar.*, from the suites unstable, testing and
# stable of ${PTSBENCH_DEBIAN_MIRROR:-http://deb.debian.org/debian}): its SHA-256 is checked against the suite's
# Sources index, the index's against the suite's InRelease, and InRelease's signature against Debian's archive keyring
# (gpgv). PTSBENCH_FIO_SOURCE=GIT_URL builds the tag from a git repository instead (fio's own, where it is reachable).
# Built with libaio-dev (or fio would lack the libaio engine ptsbench uses) and zlib1g-dev, installed with apt-get
# when missing (root). A minute or a few the first time; one build at a time (a lock).
# Exit 77: it cannot be built on this machine (the message says why).
set -euo pipefail
MIN_VERSION=3.41  # the first release with sprandom
SUITES=(sid forky trixie)
tag=${1:-}
case "$tag" in ""|fio-[0-9]*.[0-9]*) ;; *) echo "build-fio: not a fio release tag: $tag (e.g. fio-3.41)" >&2; exit 2 ;; esac
cannot() { echo "build-fio: cannot build ${tag:-fio}: $*" >&2; exit 77; }
failed() { echo "build-fio: ${tag:-fio} not built: $*" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
cache=${PTSBENCH_FIO_CACHE:-/var/cache/ptsbench/fio}
mirror=${PTSBENCH_DEBIAN_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
mkdir -p "$cache"
exec 6>"$cache/build.lock"
flock 6
has_sprandom() { [ "$(printf '%s\n' "$MIN_VERSION" "$1" | sort -V | head -1)" = "$MIN_VERSION" ]; }  # VERSION
if [ -z "$tag" ]; then  # the newest kept fio with sprandom, if any
  kept=""
  for path in $(find "$cache" -mindepth 2 -maxdepth 2 -path "$cache/fio-*/fio" -perm -u+x 2>/dev/null | sort -V); do
    version=${path%/fio}
    if has_sprandom "${version##*/fio-}"; then kept=$path; fi
  done
  if [ -n "$kept" ]; then echo "$kept"; exit 0; fi
fi
build=$(mktemp -d /tmp/ptsbench-fio.XXXXXX)
trap 'rm -rf "$build"' EXIT

sources() {  # SUITE: the fio paragraph of SUITE's Sources index, each file checked against the signed InRelease
  local suite=$1 dir=$build/debian-$1 sum
  mkdir -p "$dir"
  curl -fsS -m 120 -o "$dir/InRelease" "$mirror/dists/$suite/InRelease" \
    || failed "could not download $mirror/dists/$suite/InRelease"
  gpgv --keyring "$keyring" --output "$dir/Release" "$dir/InRelease" 2>"$dir/gpgv.log" \
    || failed "the signature of $mirror/dists/$suite/InRelease does not hold ($(tail -1 "$dir/gpgv.log"))"
  sum=$(awk '/^SHA256:/ { s = 1; next } /^[^ ]/ { s = 0 } s && $3 == "main/source/Sources.xz" { print $1 }' \
        "$dir/Release")
  [ -n "$sum" ] || failed "$suite's InRelease lists no main/source/Sources.xz"
  curl -fsS -m 600 -o "$dir/Sources.xz" "$mirror/dists/$suite/main/source/Sources.xz" \
    || failed "could not download $suite's Sources index from $mirror"
  echo "$sum  $dir/Sources.xz" | sha256sum -c --quiet - >/dev/null 2>&1 \
    || failed "$suite's Sources index does not match its checksum in the signed InRelease"
  xz -dc "$dir/Sources.xz" | awk '/^Package: / { p = ($2 == "fio") } p'
}

fetch_debian() {  # into $build/fio: tag's release tarball (any release of MIN_VERSION or later when tag is empty)
  local suite paragraph version name sum unread=0
  for pair in curl:curl gpgv:gpgv xz:xz-utils; do
    command -v "${pair%%:*}" >/dev/null || cannot "${pair#*:} missing (apt-get install it)"
  done
  [ -f "$keyring" ] || cannot "$keyring missing (apt-get install debian-archive-keyring)"
  for suite in "${SUITES[@]}"; do
    paragraph=$(sources "$suite") || { unread=1; continue; }  # its reason said above
    version=$(awk '/^Version: / { v = $2; sub(/^[0-9]+:/, "", v); sub(/-[^-]*$/, "", v); print v; exit }' \
              <<<"$paragraph")
    [ -n "$version" ] || continue
    if [ -z "$tag" ]; then
      has_sprandom "$version" || continue
      tag=fio-$version
    fi
    [ "$tag" = "fio-$version" ] || continue
    read -r sum name < <(awk '/^Checksums-Sha256:/ { s = 1; next } /^[^ ]/ { s = 0 }
                              s && $3 ~ /^fio_[0-9.]+\.orig\.tar\.(gz|xz|bz2)$/ { print $1, $3; exit }' <<<"$paragraph") || true
    [ -n "${name:-}" ] || failed "Debian's $suite lists no release tarball of fio $version"
    echo "build-fio: building $tag from Debian's copy of its release tarball ($name, $suite)" >&2
    curl -fsS -m 600 -o "$build/$name" "$mirror/pool/main/f/fio/$name" \
      || failed "could not download $mirror/pool/main/f/fio/$name"
    echo "$sum  $build/$name" | sha256sum -c --quiet - >/dev/null 2>&1 \
      || failed "$name does not match its checksum in $suite's signed Sources index"
    mkdir "$build/fio" && tar -xf "$build/$name" -C "$build/fio" --strip-components=1
    return 0
  done
  [ "$unread" = 0 ] || failed "a Debian index could not be read (above)"
  [ -n "$tag" ] || cannot "Debian's unstable, testing and stable carry no fio $MIN_VERSION or later"
  cannot "Debian's unstable, testing and stable do not carry $tag (PTSBENCH_FIO_SOURCE=GIT_URL builds it from git)"
}

if [ -n "$tag" ] && [ -x "$cache/$tag/fio" ]; then echo "$cache/$tag/fio"; exit 0; fi
missing=()
for pair in gcc:gcc make:make; do command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}"); done
[ -z "${PTSBENCH_FIO_SOURCE:-}" ] || command -v git >/dev/null || missing+=(git)
[ -f /usr/include/libaio.h ] || missing+=(libaio-dev)
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
if [ "${#missing[@]}" -gt 0 ]; then
  [ "$(id -u)" = 0 ] || cannot "${missing[*]} missing (apt-get install them as root)"
  echo "build-fio: installing ${missing[*]} with apt-get (to build fio)" >&2
  bash "$here/apt-install.sh" "${missing[@]}" || cannot "apt-get could not install ${missing[*]}"
fi
if [ -n "${PTSBENCH_FIO_SOURCE:-}" ]; then
  [ -n "$tag" ] || failed "PTSBENCH_FIO_SOURCE needs a tag to build (bash scripts/build-fio.sh fio-X.Y)"
  echo "build-fio: building $tag from $PTSBENCH_FIO_SOURCE" >&2
  git clone -q --depth 1 --branch "$tag" "$PTSBENCH_FIO_SOURCE" "$build/fio" >"$build/clone.log" 2>&1 \
    || failed "git clone of $tag from $PTSBENCH_FIO_SOURCE: $(tail -1 "$build/clone.log")"
else
  fetch_debian
  if [ -x "$cache/$tag/fio" ]; then echo "$cache/$tag/fio"; exit 0; fi
fi
fio=$cache/$tag/fio
if ! { cd "$build/fio" && ./configure --disable-native && make -j"$(nproc)"; } >"$build/build.log" 2>&1; then
  echo "build-fio: $tag did not build:" >&2; tail -30 "$build/build.log" >&2; exit 1
fi
"$build/fio/fio" --enghelp=libaio >/dev/null 2>&1 || cannot "it built without libaio"
mkdir -p "$(dirname "$fio")"
cp "$build/fio/fio" "$fio.new" && mv "$fio.new" "$fio"
echo "$fio"
