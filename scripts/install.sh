#!/usr/bin/env bash
# Install what ptsbench needs on Debian/Ubuntu: fio (and, with --test, what the test suite needs) and a venv.
# Idempotent: re-running it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

want_test=0
[ "${1:-}" = "--test" ] && want_test=1

python=python3
for candidate in python3.13 python3.12 python3.11 python3; do
  if "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    python=$candidate; break
  fi
done

packages=()
command -v fio >/dev/null || packages+=(fio)
# the fio log parser is compiled C: a compiler and Python's headers
command -v gcc >/dev/null || packages+=(gcc)
"$python" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(sysconfig.get_path("include") + "/Python.h"))' \
  || packages+=(python3-dev)
if [ "$want_test" = 1 ]; then
  command -v chromium >/dev/null || packages+=(chromium)
  command -v pdftotext >/dev/null || packages+=(poppler-utils)
  command -v mkfs.ext4 >/dev/null || packages+=(e2fsprogs)
  command -v losetup >/dev/null || packages+=(mount)
fi
if [ "${#packages[@]}" -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  echo "installing ${packages[*]} with apt-get" >&2
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${packages[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv 2>/dev/null || {
    echo "python venv module missing: installing python3-venv" >&2
    apt-get install -y -qq python3-venv >/dev/null && "$python" -m venv .venv; }
fi
extra=""
[ "$want_test" = 1 ] && extra="[test]"
.venv/bin/pip install -q --disable-pip-version-check -e ".${extra}"
