"""`ptsbench show RUN_DIR` start to end against Python's own start-up and `fio --version`, interleaved: median wall
and CPU time (the process and its children) of N runs each, and show's CPU over fio --version's. Goal (issue 46):
show at most 0.25 CPU-s (0.45 CPU-s, 22 x fio --version, when the issue was filed). ptsbench's modules are compiled
to bytecode first, as an install leaves them (PYTHONDONTWRITEBYTECODE, set on some machines, would otherwise have
every run compile them again). On a loaded machine the CPU time is what show's wall time would be on an idle one (it
runs on one thread and waits for nothing but its reads).

    .venv/bin/python bench/bench_show.py RUN_DIR            # e.g. the run scripts/demo.sh made
    .venv/bin/python bench/bench_show.py RUN_DIR --runs 21
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

GOAL_S = 0.25


def timed(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of `argv` (its output thrown away); the CPU from wait4, in microseconds (the
    clock ticks of os.times are 10 ms, as long as all of fio --version)."""
    started = time.monotonic()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - started
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{' '.join(argv)} failed")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", type=Path, help="a stored run (PTS: every table of its report)")
    parser.add_argument("--runs", type=int, default=11, help="runs of each (default 11)")
    args = parser.parse_args()
    import compileall

    import ptsbench as package

    compileall.compile_dir(Path(package.__file__).parent, quiet=1)
    ptsbench = str(Path(sys.executable).parent / "ptsbench")
    ways = {"python -c pass": [sys.executable, "-c", "pass"], "fio --version": ["fio", "--version"],
            "ptsbench --help": [ptsbench, "--help"],
            "ptsbench show": [ptsbench, "show", str(args.run_dir)]}
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
    for _ in range(args.runs):
        for name, argv in ways.items():
            times[name].append(timed(argv))
    print(f"{args.runs} runs each, interleaved; medians (load average {os.getloadavg()[0]:.1f} at the end):")
    for name, values in times.items():
        print(f"  {name:16s} wall {statistics.median(v[0] for v in values):.3f} s  "
              f"CPU {statistics.median(v[1] for v in values):.3f} s")
    show_s = statistics.median(v[0] for v in times["ptsbench show"])
    show_cpu_s = statistics.median(v[1] for v in times["ptsbench show"])
    fio_cpu_s = statistics.median(v[1] for v in times["fio --version"])
    print(f"goal: show at most {GOAL_S} CPU-s (the wall time on an idle machine): "
          f"{'met' if show_cpu_s <= GOAL_S else 'NOT met'} ({show_cpu_s:.3f} CPU-s, "
          f"{show_cpu_s / max(fio_cpu_s, 0.001):.0f} x fio --version; wall {show_s:.3f} s at this load)")


if __name__ == "__main__":
    main()
