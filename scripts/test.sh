#!/usr/bin/env bash
# The whole test suite: installs fio, chromium and the Python test tools, then lint, types and tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh --test
.venv/bin/ruff check src tests bench
.venv/bin/mypy
.venv/bin/pytest -q -rs tests
