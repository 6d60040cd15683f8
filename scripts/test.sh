#!/usr/bin/env bash
# The test suite, at two levels:
#
#   bash scripts/test.sh         the host level (the README's test command): everything that runs on this machine
#                                itself: real fio, loop devices, Chromium, PostgreSQL for the catalog. No VM, no
#                                second platform. On every CPU (pytest-xdist): about 16 CPU-minutes, 9.5 minutes on
#                                an idle 2-vCPU machine (10.25 in a fresh clone, pip making the venv; measured:
#                                docs/benchmarks.md).
#   bash scripts/test.sh --all   adds the device labs (QEMU guests with NVMe, SCSI and SATA drives), the second
#                                platform (Debian 13's fio and Python in a 1.2 GB root, scripts/test-debian13.sh)
#                                and the install check (scripts/check-install.sh: wheel, pipx, no C compiler, no
#                                root): what CI (.ci/run) runs. 22-30 minutes in a fresh clone (docs/benchmarks.md).
#
# Both install what is missing first (scripts/install.sh --test), then lint, and the tests, with the type check
# (mypy) beside them. As non-root the tests that need root (loop devices, mounts, labs) skip.
# --all as root keeps the Debian 13 root in PTSBENCH_DEBIAN13_ROOT (default /var/cache/ptsbench/debian13) for the
# next run; PTSBENCH_DEBIAN13=0 leaves the second platform out.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "test.sh: $*" >&2; }
all=0
case "${1:-}" in
  --all) all=1 ;;
  "") ;;
  *) say "unknown option $1 (the only one is --all: add the device labs and the Debian 13 platform)"; exit 2 ;;
esac
debian13_root=${PTSBENCH_DEBIAN13_ROOT:-/var/cache/ptsbench/debian13}
if [ "$all" = 0 ]; then
  say "the host level: installs what is missing (fio, chromium, postgresql, poppler-utils, lvm2, mdadm," \
      "btrfs-progs, nbdkit, openssh-server, the Python test tools) with apt-get and pip, then ruff, mypy and the" \
      "tests on this machine, on every CPU: about 10 min on an idle 2-vCPU machine (plus the first install). No" \
      "VM, no Debian 13, no install check: bash scripts/test.sh --all adds them (about 25 min)"
  markers=(-m "not device_lab and not debian13 and not guest")
else
  say "everything: the host level, the device labs (QEMU guests), the Debian 13 platform and the install check:" \
      "about 25 min on a 2-vCPU machine. As root the Debian 13 root (about 1.2 GB) is made once in $debian13_root and kept" \
      "(PTSBENCH_DEBIAN13_ROOT=DIR puts it elsewhere; rm -rf it to free the space)"
  markers=()
fi
bash scripts/install.sh --test
# the parts that run beside the host level's pytest, each in a process group of its own (its pid, log and name):
# stopped with the script, their output shown when they end
parts=()
stop_parts() {
  local part
  for part in ${parts[@]+"${parts[@]}"}; do
    IFS=: read -r pid log _ <<<"$part"
    kill -- -"$pid" 2>/dev/null || true
    rm -f "$log"
  done
}
trap stop_parts EXIT
beside() {  # NAME COMMAND...: COMMAND started in the background
  local name=$1 log
  shift
  log=$(mktemp /tmp/ptsbench-part.XXXXXX)
  setsid "$@" >"$log" 2>&1 &
  parts+=("$!:$log:$name")
}
if [ "$all" = 1 ] && [ "$(id -u)" = 0 ] && [ "${PTSBENCH_DEBIAN13:-1}" != 0 ]; then
  beside "the second platform (Debian 13)" bash scripts/test-debian13.sh "$debian13_root"
fi
.venv/bin/ruff check src tests bench
# the type check (15-20 CPU-s in a fresh clone, without mypy's cache) beside the tests, not before them
beside "the type check (mypy)" .venv/bin/mypy
if [ "$all" = 1 ]; then
  # the installs as users make them (about 35 CPU-s, pip and the C compiler): beside the tests; not in the host
  # level, where its CPU would lengthen the contributor's run by about 20 s
  beside "the install check (scripts/check-install.sh)" bash scripts/check-install.sh
  # the device labs' tests wait on QEMU guests for minutes: a pytest of their own beside the host level's workers
  beside "the device labs" .venv/bin/pytest -q -rs -p no:cacheprovider -m device_lab tests
  markers=(-m "not device_lab")
fi
# pytest-xdist: one worker per CPU, and four more, as many tests wait on fio's runtime rather than use a CPU (on an
# idle 2-vCPU machine: 4 workers kept the CPUs 80 % busy and the pytest took 595 s, 6 workers 85 % and 572 s); with
# --all two more only: the labs' QEMU guests take the CPUs meanwhile (six workers beside them failed fio timing
# checks in CI, and the labs set the run's length anyway); PTSBENCH_TEST_WORKERS=N sets another number;
# loadgroup: the tests of one xdist_group (one host-wide resource, as the kernel's block tracer) share a worker
# (a test failure is reported after the background parts', so that a failed run still shows how they did)
host_status=0
.venv/bin/pytest -q -rs -n "${PTSBENCH_TEST_WORKERS:-$(( $(nproc) + 4 - 2 * all ))}" --dist loadgroup ${markers[@]+"${markers[@]}"} tests || host_status=$?
[ "$host_status" -le 1 ] || exit "$host_status"  # interrupted (2) or worse: stop now, the trap stops the rest
# each part run beside: all its output when it failed, its last lines when not
failed=0
for part in ${parts[@]+"${parts[@]}"}; do
  IFS=: read -r pid log name <<<"$part"
  if wait "$pid"; then
    tail -3 "$log"
  else
    cat "$log" >&2
    say "$name failed"
    failed=1
  fi
done
if [ "$host_status" != 0 ]; then say "the host level's tests failed (above)"; exit "$host_status"; fi
[ "$failed" = 0 ] || exit 1
# all passed: keep the versions they passed with (install.sh --test installs these; commit the file when it changed)
{ grep '^#' constraints.txt; .venv/bin/pip freeze --exclude-editable --exclude ptsbench; } >constraints.txt.new
mv constraints.txt.new constraints.txt
