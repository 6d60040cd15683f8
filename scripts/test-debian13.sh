#!/usr/bin/env bash
# ptsbench's second platform: Debian 13's own fio 3.39 and Python 3.13, in a root made by scripts/debian13-root.sh.
# Installs ptsbench there from this checkout (a venv kept in the root: a second run downloads only pip's build tools),
# then runs the differential test (every number equals fio's JSON), the version rules, the device guard and opens
# tests, the chained rounds, sweeps and plots, and the PTS demo (beside the tests) with show. Prints its time at the
# end.
#
#   bash scripts/test-debian13.sh [ROOT]     (ROOT: PTSBENCH_DEBIAN13_ROOT, else /var/cache/ptsbench/debian13)
#
# The root has no C compiler, so ptsbench runs there as installed without one: the numpy log parser, and fio started
# with a fork instead of the compiled launcher.
# The browser (report pages) and SSH tests of test_sweep.py and the guard of users' files (test_guard_files.py) run
# on the first platform only: the root holds no chromium, sshd or nbdkit, and CI time is short.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
root=${1:-${PTSBENCH_DEBIAN13_ROOT:-/var/cache/ptsbench/debian13}}
started=$(date +%s)
# this and the device lab's Debian 13 variant (scripts/device-lab.sh --debian13) take turns: CI runs both in the
# background beside the main suite, and both at once would crowd its 2 CPUs
mkdir -p "$(dirname "$root")"
exec 8>"$root.turn"
flock -n 8 || { echo "debian13: waiting for the device lab's Debian 13 variant to finish with $root"; flock 8; }
bash "$repo/scripts/debian13-root.sh" "$root"
bash "$repo/scripts/in-root.sh" "$root" --bind "$repo" bash -euc '
  repo=$1
  mkdir /tmp/ptsbench
  tar -C "$repo" --exclude=./.venv --exclude=./.git --exclude=./build --exclude="*.egg-info" \
      --exclude=__pycache__ --exclude="*.so" --exclude=./src/ptsbench/fio/_bound_exec -c . | tar -C /tmp/ptsbench -x
  cd /tmp/ptsbench
  [ -x /opt/ptsbench-venv/bin/pip ] || python3 -m venv /opt/ptsbench-venv
  /opt/ptsbench-venv/bin/pip install -q --disable-pip-version-check . pytest openpyxl -c constraints.txt
  echo "debian13: $(fio --version), $(/opt/ptsbench-venv/bin/python --version), ptsbench installed from $repo"
  # the PTS demo (mostly fio run time) beside the tests
  /opt/ptsbench-venv/bin/ptsbench pts --profile demo --out /tmp/demo >/tmp/demo.log 2>&1 &
  demo=$!
  trap '"'"'kill "$demo" 2>/dev/null || true'"'"' EXIT  # a failed test ends the demo too (ptsbench stops its fio)
  /opt/ptsbench-venv/bin/python -m pytest -q -rs --durations=5 -p no:cacheprovider -x tests/cases/test_truth.py \
    tests/fio/test_fio_versions.py tests/device/test_guard.py tests/fio/test_opens.py tests/fio/test_chain.py \
    tests/cases/test_sweep.py tests/plot/test_plot.py \
    --deselect tests/cases/test_sweep.py::test_sweep_killed_mid_way_resumes_the_unfinished_cells_and_every_number_is_fio_s \
    --deselect tests/cases/test_sweep.py::test_a_sweep_on_two_hosts_draws_each_host
  wait "$demo" || { tail -20 /tmp/demo.log; echo "debian13: the PTS demo failed"; exit 1; }
  /opt/ptsbench-venv/bin/ptsbench show /tmp/demo >/tmp/show.txt
  head -3 /tmp/show.txt
' test-debian13 "$repo"
echo "debian13: passed in $(( $(date +%s) - started )) s"
