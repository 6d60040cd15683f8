#!/usr/bin/env bash
# The main job on the embedded default: a SNIA PTS run (IOPS, throughput, latency, write saturation) with the demo
# profile on a scratch file (no device needed), ending with its report. About 3 minutes on an idle 2-vCPU machine
# after the install (estimated from a timed run: bench/README.md, issue 42); longer on a loaded one.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "demo: installs fio and a venv when missing, then a SNIA PTS run with the demo profile on a scratch file:" \
     "about 3 min on an idle 2-vCPU machine (longer when the machine is busy), then the path of its report" >&2
bash scripts/install.sh
out="ptsbench-results/demo-$(date -u +%Y%m%dT%H%M%SZ)"
.venv/bin/ptsbench pts --profile demo --out "$out"
# name only what was written (a report that could not be drawn is a warning of the run, not a file to open)
written=()
for path in "$out/report/index.html" "$out/report/report.pdf" "$out/results.xlsx"; do
    [ -s "$path" ] && written+=("$path")
done
if [ ${#written[@]} -gt 0 ]; then
    echo "report: ${written[*]}"
else
    echo "no report was written; make it with: .venv/bin/ptsbench report $out"
fi
echo "tables again: .venv/bin/ptsbench show $out"
