#!/usr/bin/env bash
# A Debian 13 (trixie) root made with debootstrap from Debian's own packages: fio 3.39, Python 3.13 with venv, and
# the tools ptsbench's tests use inside it (losetup, mkfs.ext4, dmsetup, sfdisk). CI runs ptsbench's second platform
# in it (scripts/in-root.sh); the device lab's Debian 13 variant boots it.
#
#   bash scripts/debian13-root.sh DIR [PACKAGE...]
#
# PACKAGE: more Debian packages the root must hold (installed into an existing root with apt-get when missing).
# Cached: a complete root has DIR/.ptsbench-root holding its package list; when it lists every wanted package, the
# root is reused as it is. Safe to interrupt: the root is built in DIR.partial (removed and redone on the next call)
# and renamed to DIR only when complete (callers at once take turns: DIR.lock); every mount it needs lives in a private mount namespace, so none outlives it.
# Needs root, debootstrap (bash scripts/install.sh --test installs it) and Debian's mirror (DEBIAN_MIRROR to change).
set -euo pipefail
say() { echo "debian13-root: $*" >&2; }

[ $# -ge 1 ] && [ -n "$1" ] || { say "usage: $0 DIR [PACKAGE...]"; exit 2; }
root=$(realpath -m "$1")
shift
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
packages=(fio python3 python3-venv ca-certificates mount e2fsprogs dmsetup fdisk "$@")
marker=$root/.ptsbench-root

[ "$(id -u)" = 0 ] || { say "needs root (debootstrap and chroot); run it as root"; exit 1; }
command -v debootstrap >/dev/null || { say "needs debootstrap: apt-get install debootstrap (or bash scripts/install.sh --test)"; exit 1; }

here=$(cd "$(dirname "$0")" && pwd)
root_apt() {  # apt-get inside the complete root, with its mounts in a namespace of their own
  bash "$here/in-root.sh" "$root" env DEBIAN_FRONTEND=noninteractive apt-get "$@"
}

# one caller at a time (CI and the device lab may share a root): the others wait, then reuse what it made
mkdir -p "$(dirname "$root")"
exec 9>"$root.lock"
flock 9

missing_from_marker() {  # the wanted packages the marker does not list
  local name
  for name in "${packages[@]}"; do grep -qxF "$name" "$marker" || echo "$name"; done
}

if [ -f "$marker" ]; then
  missing=($(missing_from_marker))
  if [ "${#missing[@]}" -eq 0 ]; then
    exit 0  # complete, with every package: reuse it
  fi
  say "adding ${missing[*]} to $root"
  root_apt update -qq
  root_apt install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  printf '%s\n' "${missing[@]}" >>"$marker"
  exit 0
fi
if [ -e "$root" ]; then
  say "$root exists but is not a complete root made by this script (no $marker): remove it or name another directory"
  exit 1
fi

partial=$root.partial
if [ -e "$partial" ]; then
  say "removing the unfinished root $partial of an interrupted run"
  rm -rf --one-file-system "$partial"
fi
say "making a Debian 13 root in $root (debootstrap trixie from $mirror: a few minutes; about 1.2 GB once the" \
    "device lab and the venvs are in it, kept for the next run; PTSBENCH_DEBIAN13_ROOT=DIR puts it elsewhere, rm -rf" \
    "$root frees the space)"
include=$(IFS=,; echo "${packages[*]}")
# debootstrap mounts /proc and /sys inside the new root: in a private mount namespace they end with it
if ! unshare --mount --propagation private debootstrap --variant=minbase --include="$include" \
       trixie "$partial" "$mirror" >"$partial.log" 2>&1; then
  say "debootstrap failed (its log: $partial.log; last lines below)"
  tail -5 "$partial.log" >&2
  exit 1
fi
rm -f "$partial.log"
rm -rf --one-file-system "$partial"/var/cache/apt/archives/*.deb
printf '%s\n' "${packages[@]}" >"$partial/.ptsbench-root"
mv "$partial" "$root"
say "ready: $root ($(chroot "$root" fio --version), $(chroot "$root" python3 --version))"
