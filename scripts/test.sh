#!/usr/bin/env bash
# The whole test suite: installs fio, chromium and the Python test tools, then lint, types, installs from a wheel and
# without a C compiler (scripts/check-install.sh), and the tests. As root, the second platform (Debian 13's fio and
# Python, scripts/test-debian13.sh) runs beside them; PTSBENCH_DEBIAN13=0 leaves it out.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh --test
debian13=""
debian13_log=""
if [ "$(id -u)" = 0 ] && [ "${PTSBENCH_DEBIAN13:-1}" != 0 ]; then
  debian13_log=$(mktemp /tmp/ptsbench-debian13.XXXXXX)
  setsid bash scripts/test-debian13.sh >"$debian13_log" 2>&1 &  # a process group of its own, ended with this script
  debian13=$!
  trap 'kill -- -"$debian13" 2>/dev/null || true; rm -f "$debian13_log"' EXIT
fi
.venv/bin/ruff check src tests bench
.venv/bin/mypy
bash scripts/check-install.sh
.venv/bin/pytest -q -rs tests
if [ -n "$debian13" ]; then
  if ! wait "$debian13"; then
    cat "$debian13_log" >&2
    echo "test.sh: the second platform (Debian 13) failed" >&2
    exit 1
  fi
  tail -3 "$debian13_log"
fi
# all passed: keep the versions they passed with (install.sh --test installs these; commit the file when it changed)
{ grep '^#' constraints.txt; .venv/bin/pip freeze --exclude-editable --exclude ptsbench; } >constraints.txt.new
mv constraints.txt.new constraints.txt
