#!/usr/bin/env bash
# The main job on the embedded default: a SNIA PTS run (IOPS, throughput, latency, write saturation) with the demo
# profile on a scratch file (no device needed, about two minutes), ending with its report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
out="ptsbench-results/demo-$(date -u +%Y%m%dT%H%M%SZ)"
.venv/bin/ptsbench pts --profile demo --out "$out"
echo "report: $out/report/index.html (also report.pdf, results.xlsx, figures/); tables again: .venv/bin/ptsbench show $out"
