#!/usr/bin/env bash
# The whole test suite: installs fio, chromium and the Python test tools, then lint, types, installs from a wheel and
# without a C compiler (scripts/check-install.sh), and the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh --test
.venv/bin/ruff check src tests bench
.venv/bin/mypy
bash scripts/check-install.sh
.venv/bin/pytest -q -rs tests
# all passed: keep the versions they passed with (install.sh --test installs these; commit the file when it changed)
{ grep '^#' constraints.txt; .venv/bin/pip freeze --exclude-editable --exclude ptsbench; } >constraints.txt.new
mv constraints.txt.new constraints.txt
