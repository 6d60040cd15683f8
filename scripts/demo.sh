#!/usr/bin/env bash
# The main job on the embedded default: no device needed (a scratch file), a short profile, ends with a report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
out="ptsbench-results/demo-$(date -u +%Y%m%dT%H%M%SZ)"
.venv/bin/ptsbench quick --runtime 5 --size 256M --out "$out"
echo "run directory: $out (see: .venv/bin/ptsbench show $out)"
