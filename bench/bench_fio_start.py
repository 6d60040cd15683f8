"""What starting fio costs, whatever it then does: the CPU of the fio commands ptsbench runs, against `fio --version`
(which parses nothing and exits) measured in the same run.

    .venv/bin/python bench/bench_fio_start.py [--calls 20]

fio calibrates its CPU clock as it sets its clock source (gettime.c calibrate_cpu_clock: 51 spins of 1.28 ms each,
about 65 ms of CPU), and without a clock source named it also tests the CPU clock's monotonicity across CPUs. A job
file's parse (`--parse-only`, the guard's look at what fio opens) sets the clock source too, so it pays the
calibration; a run pays both. The test suite starts fio some 3,000 times: this is the floor under its CPU that no
change to ptsbench moves.
"""

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

JOB = "[null]\nioengine=null\nsize=1m\nrw=randread\nbs=4k\n"


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cpu_per_call_ms(command: list[str], calls: int) -> float:
    """Mean CPU (ms) of one call of `command`, over `calls` calls made one after another."""
    before = children_cpu_s()
    for _ in range(calls):
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (children_cpu_s() - before) / calls * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20, help="calls of each command (default 20)")
    args = parser.parse_args()
    fio = shutil.which("fio")
    if fio is None:
        print("bench_fio_start: fio is not installed", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as folder:
        job = Path(folder) / "null.fio"
        job.write_text(JOB)
        commands = {
            "fio --version (baseline)": [fio, "--version"],
            "parse-only, clock source named (the guard's)": [fio, "--parse-only", "--clocksource=clock_gettime",
                                                             "--debug=parse,file", str(job)],
            "parse-only": [fio, "--parse-only", str(job)],
            "run of a 1 MiB null job (ptsbench's options)": [fio, "--output-format=json+", "--status-interval=1",
                                                             str(job)],
        }
        version = subprocess.run([fio, "--version"], capture_output=True, text=True, check=True).stdout.strip()
        print(f"{version}, {args.calls} calls each: CPU per call, and against the baseline")
        baseline_ms = None
        for name, command in commands.items():
            cpu_ms = cpu_per_call_ms(command, args.calls)
            baseline_ms = baseline_ms or cpu_ms
            print(f"  {name:48} {cpu_ms:7.1f} ms  {cpu_ms / baseline_ms:5.1f} x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
