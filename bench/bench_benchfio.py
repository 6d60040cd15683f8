"""`ptsbench sweep` against bench-fio (fio-plot's sweep runner, from PyPI) on the same matrix, side by side.

bench-fio is installed into the bench's own venv (`--venv`, default .venv-bench-fio/ at the repository root; made on
the first run with `pip install fio-plot==FIO_PLOT_VERSION`): it is no dependency of ptsbench. Both run 8 cells of
--runtime seconds (randread and randwrite x iodepth 1, 2 x numjobs 1, 2), null engine, on the same 256 MiB file,
time based, one fio process per cell each; each keeps its own defaults otherwise (bench-fio: json output plus
bw/iops/lat logs; ptsbench: json+ output, job file, command line and bw/iops/lat logs per cell, no report). A round
runs the two one after the other, the order alternating; the wall time is the whole command's, start to exit, and
the CPU time is the whole command's too (user + system of it and every process it waited for, fio's included: from
wait4), which the machine's load distorts far less. Printed: the medians and minimums of both, sweep / bench-fio, and
the sweep's CPU per cell over bench-fio's. Goal (issue 46): the sweep at most 1.05 x bench-fio's CPU. Most of either
is fio's null-engine job threads, which take what CPU they get in their second; so each command's CPU is also split
into those threads' (fio's own usr_cpu and sys_cpu of each job, times its job_runtime, from the JSON each wrote) and
the rest, the harness: start-ups, fio's main processes, Python. Each round also times, alone, the two fio starts the
sweep makes besides its cells and bench-fio does not: the guard's `fio --parse-only` of the round's 8 job files (as
fio/opens.py starts it) and `fio --version`, to show how much of the sweep's excess they are.

Run from the repository root (about 1 minute a round with the defaults):
  .venv/bin/python bench/bench_benchfio.py
  .venv/bin/python bench/bench_benchfio.py --rounds 5
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIO_PLOT_VERSION = "1.1.21"  # the bench-fio measured against; the same numbers tomorrow
GOAL = 1.05  # of bench-fio's CPU time (issue 46; 1.15 of its wall time before)
CELLS = 8


def bench_fio(venv: Path) -> Path:
    """bench-fio in `venv`, installed there first when missing."""
    program = venv / "bin" / "bench-fio"
    if not program.exists():
        print(f"installing fio-plot {FIO_PLOT_VERSION} (bench-fio) into {venv}", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check",
                        f"fio-plot=={FIO_PLOT_VERSION}"], check=True)
    return program


def timed(argv: list[str], errors: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one command, start to exit (its output thrown away; a failure ends the bench)."""
    started = time.monotonic()
    with errors.open("w") as stderr:
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=stderr)
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {errors.read_text().strip()[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime


def job_threads_cpu_s(folder: Path, pattern: str) -> float:
    """CPU seconds of fio's job threads, as fio reports them in the JSON files under `folder` (usr_cpu and sys_cpu
    are per cent of job_runtime, which a group of threads sums)."""
    total = 0.0
    for path in folder.glob(pattern):
        for job in json.loads(path.read_text()).get("jobs", []):
            total += (job.get("usr_cpu", 0) + job.get("sys_cpu", 0)) / 100 * job.get("job_runtime", 0) / 1000
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the two (default 3)")
    parser.add_argument("--runtime", type=int, default=1, help="seconds per cell (default 1)")
    parser.add_argument("--venv", type=Path, default=Path(".venv-bench-fio"), help="bench-fio's venv")
    parser.add_argument("--ptsbench", default=str(Path(sys.executable).parent / "ptsbench"),
                        help="ptsbench executable (default: the one next to this Python)")
    args = parser.parse_args()
    if args.rounds < 1 or args.runtime < 1:
        parser.error("--rounds and --runtime must be at least 1")
    program = bench_fio(args.venv.resolve())
    walls: dict[str, list[float]] = {"bench-fio": [], "sweep": []}
    cpus: dict[str, list[float]] = {"bench-fio": [], "sweep": []}
    harness: dict[str, list[float]] = {"bench-fio": [], "sweep": []}
    extra: dict[str, list[float]] = {"guard parse": [], "fio --version": []}  # fio starts only the sweep makes
    with tempfile.TemporaryDirectory(prefix="bench-benchfio-") as folder:
        work = Path(folder)
        target = work / f"bench-benchfio-{os.getpid()}.dat"
        with target.open("wb") as file:
            file.truncate(256 << 20)
        for number in range(args.rounds):
            commands = {
                "bench-fio": [str(program), "--target", str(target), "--type", "file", "--size", "256M",
                              "--engine", "null", "--mode", "randread", "randwrite", "--iodepth", "1", "2",
                              "--numjobs", "1", "2", "--runtime", str(args.runtime), "--time-based", "--quiet",
                              "--destructive", "--output", str(work / f"bench-fio-{number}")],
                "sweep": [args.ptsbench, "sweep", str(target), "--ioengine", "null", "--size", "256M",
                          "--rw", "randread,randwrite", "--iodepth", "1,2", "--numjobs", "1,2",
                          "--runtime", str(args.runtime), "--out", str(work / f"sweep-{number}")],
            }
            for name in (list(commands) if number % 2 == 0 else list(commands)[::-1]):
                wall, cpu = timed(commands[name], work / "stderr.txt")
                walls[name].append(wall)
                cpus[name].append(cpu)
            stored = len(list((work / f"sweep-{number}" / "cases").glob("*/fio.json")))
            measured = len(list((work / f"bench-fio-{number}").rglob("*.json")))
            for name, folder, pattern in (("sweep", work / f"sweep-{number}" / "cases", "*/fio.json"),
                                          ("bench-fio", work / f"bench-fio-{number}", "**/*.json")):
                harness[name].append(cpus[name][-1] - job_threads_cpu_s(folder, pattern))
            if stored != CELLS or measured != CELLS:
                raise SystemExit(f"expected {CELLS} cells each, got {stored} (sweep) and {measured} (bench-fio)")
            jobs = sorted(str(path) for path in (work / f"sweep-{number}" / "cases").glob("*/job.fio"))
            extra["guard parse"].append(timed(["fio", "--parse-only", "--clocksource=clock_gettime",
                                               "--debug=parse,file", *jobs], work / "stderr.txt")[1])
            extra["fio --version"].append(timed(["fio", "--version"], work / "stderr.txt")[1])
            shutil.rmtree(work / f"bench-fio-{number}")
            shutil.rmtree(work / f"sweep-{number}")
        Path(f"/tmp/{target.name}-tmpjobfile.fio").unlink(missing_ok=True)  # where bench-fio writes its job file
    print(f"{CELLS} cells of {args.runtime} s (null engine, 256 MiB file), {args.rounds} round(s), order alternating")
    for label, pick in (("median", statistics.median), ("minimum", min)):
        wall = {name: pick(values) for name, values in walls.items()}
        cpu = {name: pick(values) for name, values in cpus.items()}
        ratio = cpu["sweep"] / cpu["bench-fio"]
        print(f"{label:8s} CPU bench-fio {cpu['bench-fio']:5.2f} s   sweep {cpu['sweep']:5.2f} s   sweep / bench-fio "
              f"{ratio:.3f} (goal <= {GOAL}: {'met' if ratio <= GOAL else 'NOT met'}; "
              f"{(cpu['sweep'] - cpu['bench-fio']) / CELLS * 1000:+.0f} ms per cell)   "
              f"wall {wall['bench-fio']:6.2f} s and {wall['sweep']:6.2f} s: {wall['sweep'] / wall['bench-fio']:.3f}")
    ours, theirs = statistics.median(harness["sweep"]), statistics.median(harness["bench-fio"])
    print(f"harness CPU (all but fio's job threads), median: bench-fio {theirs:.2f} s, sweep {ours:.2f} s: "
          f"{(ours - theirs) / CELLS * 1000:+.0f} ms per cell")
    starts = {name: statistics.median(values) for name, values in extra.items()}
    print(f"of the sweep's harness, fio starts bench-fio does not make (each alone, median): "
          f"{', '.join(f'{name} {value:.3f} s' for name, value in starts.items())}; the harness without them "
          f"{(ours - sum(starts.values()) - theirs) / CELLS * 1000:+.0f} ms per cell over bench-fio's")
    for name in walls:
        print(f"rounds, {name}: CPU {', '.join(f'{value:.2f}' for value in cpus[name])} s; "
              f"wall {', '.join(f'{value:.2f}' for value in walls[name])} s")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
