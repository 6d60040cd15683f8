#!/usr/bin/env bash
# Install what ptsbench needs and ptsbench itself into .venv/: fio (and, with --test, what the test suite needs).
# Needs no root when fio (and Python's venv module) are already there. As root, or with sudo, on Debian/Ubuntu it
# installs what is missing with apt-get, with gcc and Python's headers for the fast fio log parser; otherwise it says
# what to install. --test also installs the test tools at the versions CI last passed with (constraints.txt).
# Idempotent: re-running it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

want_test=0
[ "${1:-}" = "--test" ] && want_test=1
say() { echo "install.sh: $*" >&2; }
# Run a long step showing its progress: the lines of its output matching PATTERN (a package each), its whole output
# only when it fails.
with_progress() {
  local pattern=$1 log status
  shift
  log=$(mktemp)
  set +o pipefail
  "$@" 2>&1 | tee "$log" | { grep --line-buffered -E "$pattern" || true; } | sed -u 's/^/install.sh:   /' >&2
  status=${PIPESTATUS[0]}
  set -o pipefail
  [ "$status" = 0 ] || tail -20 "$log" >&2
  rm -f "$log"
  return "$status"
}

python=""
for candidate in python3.13 python3.12 python3.11 python3; do
  if "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    python=$candidate; break
  fi
done
if [ -z "$python" ]; then
  say "ptsbench needs Python 3.11 or newer; install it (Debian/Ubuntu: python3 python3-venv) and run this again"
  exit 1
fi

# A program is there: on PATH, in /usr/sbin or /sbin (not on a user's PATH), or a file its path pattern matches.
found() {
  case "$1" in
    /*) compgen -G "$1" >/dev/null ;;
    *) command -v "$1" >/dev/null || [ -x "/usr/sbin/$1" ] || [ -x "/sbin/$1" ] ;;
  esac
}
# Packages ptsbench (or its tests) cannot do without, and packages that only make it faster (the C log parser).
needed() {
  [ -x .venv/bin/pip ] || "$python" -c 'import ensurepip, venv' 2>/dev/null || echo python3-venv
  # scripts/programs.txt: program, package, need (run or test); a package once, however many rows name it
  local program package need _
  local -A named=()
  while read -r program package need _; do
    case "$program" in ''|'#'*) continue ;; esac
    [ "$need" = run ] || [ "$want_test" = 1 ] || continue
    found "$program" || [ -n "${named[$package]:-}" ] || { named[$package]=1; echo "$package"; }
  done <scripts/programs.txt
}
wanted() {
  command -v gcc >/dev/null || command -v cc >/dev/null || echo gcc
  "$python" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(sysconfig.get_path("include") + "/Python.h"))' \
    || echo python3-dev
}

missing=($(needed) $(wanted))
if [ "${#missing[@]}" -gt 0 ]; then
  apt=()
  if command -v apt-get >/dev/null; then
    if [ "$(id -u)" = 0 ]; then
      # one apt-get at a time with ptsbench's other scripts (scripts/apt-install.sh), waiting for any other's locks
      exec 9>/var/lock/ptsbench-apt.lock
      flock -w 900 9 || say "another of ptsbench's scripts held the apt lock for 900 s"
      apt=(apt-get -o DPkg::Lock::Timeout=900)
    elif command -v sudo >/dev/null && { sudo -n true 2>/dev/null || [ -t 0 ]; }; then
      apt=(sudo apt-get)
    fi
  fi
  if [ "${#apt[@]}" -gt 0 ]; then
    say "installing ${missing[*]} with apt-get (each package below as it is set up; a minute or a few)"
    { "${apt[@]}" update -qq \
        && with_progress '^Setting up ' env DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -q "${missing[@]}"; } \
      || say "apt-get could not install all of ${missing[*]}"
  fi
  exec 9>&-  # the apt lock, when it was taken
fi
still=($(needed))
if [ "${#still[@]}" -gt 0 ]; then
  optional=$(wanted | xargs)
  say "missing: ${still[*]}. Install them as root (Debian/Ubuntu: apt-get install ${still[*]}; other systems: their" \
      "packages of the same names) and run this again${optional:+ (also $optional, for the fast fio log parser)}"
  exit 1
fi

if [ ! -x .venv/bin/pip ]; then
  "$python" -m venv .venv
fi
extra=""
constraints=()
if [ "$want_test" = 1 ]; then
  extra="[test]"
  constraints=(-c constraints.txt)
fi
say "installing ptsbench and its Python packages into .venv with pip (each package below; about a minute the" \
    "first time, seconds afterwards)"
with_progress '^(Collecting|Building|Installing collected|Successfully installed)' \
  .venv/bin/pip install --disable-pip-version-check --progress-bar off -e ".${extra}" "${constraints[@]}"
lacking=$(wanted | xargs)
if ! .venv/bin/python -c 'import ptsbench.fio._logparse' 2>/dev/null; then
  say "note: the fast fio log parser (C) was not built (${lacking:-its build failed: see pip install -v .}); fio logs" \
      "are read by the slower numpy parser${lacking:+. Install $lacking as root and run this again for the fast one}"
fi
if ! .venv/bin/python -c 'import sys; from ptsbench.fio.lifetime import launcher; sys.exit(launcher() is None)' \
    2>/dev/null; then  # it needs a C compiler only, not Python's headers
  say "note: the launcher of fio (C) was not built (${lacking:-its build failed: see pip install -v .}); fio is" \
      "started with a fork instead, which costs ptsbench more CPU per fio it starts"
fi
