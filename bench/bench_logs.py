"""fio log reading: ptsbench's reader against numpy.loadtxt on the same 10-million-line latency log, and the whole
`ptsbench plot` of that log (read, reduce, draw a PNG).

The log is written by fio's null engine without log_avg_msec, so every IO is a line (10,000,000 4 KiB random reads
and writes, about 15-30 s). Each reader then runs in a fresh Python process, so its peak memory is its own; the
readers alternate, their order rotating every round:
  ptsbench      ptsbench.fio.logs.read_log(path)
  loadtxt       numpy.loadtxt(path, delimiter=",")                   (the usual call; float64)
  loadtxt-int   numpy.loadtxt(path, delimiter=",", dtype=numpy.int64) (its fastest form)
Time is the wall time of the read alone (and its CPU time); memory is the peak RSS (VmHWM) minus the RSS just before
the read (after the imports). Medians are compared; goals: ptsbench at least 3 x faster with at most half the peak
memory of loadtxt, and `ptsbench plot LOG` under 5 s.

Run from the repository root (about 2-4 minutes):
  .venv/bin/python bench/bench_logs.py
  .venv/bin/python bench/bench_logs.py --rounds 5 --log /tmp/bench_lat.log   # reuse (or keep) the log there
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LINES = 10_000_000
SPEED_GOAL = 3.0
MEMORY_GOAL = 0.5
PLOT_GOAL_S = 5.0
READERS = ("ptsbench", "loadtxt", "loadtxt-int")


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def measure(reader: str, path: str) -> None:
    """Child process: read the log once and print wall s, CPU s, peak memory above the start, and the line count."""
    import numpy as np

    from ptsbench.fio import logs

    before_kib = _status_kib("VmRSS")
    wall, cpu = time.perf_counter(), time.process_time()
    if reader == "ptsbench":
        lines = logs.read_log(path).lines
    elif reader == "loadtxt":
        lines = len(np.loadtxt(path, delimiter=","))
    else:
        lines = len(np.loadtxt(path, delimiter=",", dtype=np.int64))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak_bytes = (_status_kib("VmHWM") - before_kib) * 1024
    print(json.dumps({"wall_s": wall, "cpu_s": cpu, "peak_bytes": peak_bytes, "lines": lines}))


def make_log(path: Path, lines: int) -> None:
    """A per-IO latency log of `lines` IOs (null engine, 4 KiB random reads and writes, one job)."""
    folder, prefix = path.parent, path.name.removesuffix("_lat.log")
    if path.name != f"{prefix}_lat.log":
        raise SystemExit(f"--log must end in _lat.log (fio names it PREFIX_lat.log): {path}")
    folder.mkdir(parents=True, exist_ok=True)
    command = ["fio", "--name=bench", "--ioengine=null", "--rw=randrw", "--bs=4k", f"--size={lines * 4}k",
               f"--write_lat_log={prefix}", "--per_job_logs=0", "--disable_clat=1", "--disable_slat=1",
               "--output-format=json", "--output=fio.json"]
    print(f"writing {lines:,} lines with: {' '.join(command)}", flush=True)
    subprocess.run(command, cwd=folder, check=True, capture_output=True)


def run_reader(reader: str, path: Path) -> dict[str, float]:
    done = subprocess.run([sys.executable, __file__, "--measure", reader, str(path)], capture_output=True,
                          text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def time_plot(path: Path) -> float:
    """Wall time of `ptsbench plot LOG` (a fresh process: start-up, read, reduce, draw the PNG, summary)."""
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "ptsbench", "plot", str(path), "--out", out], check=True,
                       capture_output=True)
        elapsed = time.perf_counter() - start
        if not any(Path(out).glob("*.png")):
            raise SystemExit("ptsbench plot wrote no PNG")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--measure", nargs=2, metavar=("READER", "PATH"), help=argparse.SUPPRESS)
    parser.add_argument("--log", type=Path, help="latency log to use; written there first when missing")
    parser.add_argument("--lines", type=int, default=LINES, help="lines of the log to write (default 10,000,000)")
    parser.add_argument("--rounds", type=int, default=3, help="reads per reader (default 3)")
    args = parser.parse_args()
    if args.measure:
        measure(*args.measure)
        return
    with tempfile.TemporaryDirectory() as scratch:
        path = args.log or Path(scratch) / "bench_lat.log"
        if not path.is_file():
            make_log(path, args.lines)
        size_mb = path.stat().st_size / 1e6
        print(f"log: {path} ({size_mb:,.0f} MB); load average before: {os.getloadavg()[0]:.1f}", flush=True)
        results: dict[str, list[dict[str, float]]] = {reader: [] for reader in READERS}
        for round_number in range(args.rounds):
            order = READERS[round_number % 3:] + READERS[:round_number % 3]
            for reader in order:
                results[reader].append(run_reader(reader, path))
                last = results[reader][-1]
                print(f"  round {round_number + 1} {reader:<12} {last['wall_s']:6.2f} s wall, {last['cpu_s']:6.2f} s "
                      f"CPU, {last['peak_bytes'] / 2**20:6.0f} MiB peak", flush=True)
        plot_s = [time_plot(path) for _ in range(args.rounds)]
        print(f"load average after: {os.getloadavg()[0]:.1f}\n")
    lines = {int(result["lines"]) for runs in results.values() for result in runs}
    if len(lines) != 1:
        raise SystemExit(f"the readers disagree on the line count: {sorted(lines)}")
    median = {reader: {key: statistics.median(r[key] for r in runs) for key in ("wall_s", "cpu_s", "peak_bytes")}
              for reader, runs in results.items()}
    print(f"{lines.pop():,} lines, medians of {args.rounds} reads each:")
    print(f"{'reader':<12} {'wall s':>7} {'CPU s':>7} {'peak MiB':>9}")
    for reader in READERS:
        m = median[reader]
        print(f"{reader:<12} {m['wall_s']:7.2f} {m['cpu_s']:7.2f} {m['peak_bytes'] / 2**20:9.0f}")
    ours = median["ptsbench"]
    for baseline in ("loadtxt", "loadtxt-int"):
        speed = median[baseline]["wall_s"] / ours["wall_s"]
        cpu = median[baseline]["cpu_s"] / ours["cpu_s"]
        memory = ours["peak_bytes"] / median[baseline]["peak_bytes"]
        print(f"ptsbench vs {baseline:<11}: {speed:4.1f} x faster (wall; goal >= {SPEED_GOAL:g}: "
              f"{'met' if speed >= SPEED_GOAL else 'NOT met'}), {cpu:4.1f} x less CPU, {memory:4.2f} x the peak memory "
              f"(goal <= {MEMORY_GOAL:g}: {'met' if memory <= MEMORY_GOAL else 'NOT met'})")
    plot_median = statistics.median(plot_s)
    print(f"ptsbench plot (read, reduce, draw PNG): {plot_median:.2f} s median of "
          f"{', '.join(f'{s:.2f}' for s in plot_s)} (goal < {PLOT_GOAL_S:g} s: "
          f"{'met' if plot_median < PLOT_GOAL_S else 'NOT met'})")


if __name__ == "__main__":
    main()
