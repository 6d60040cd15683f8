"""Characterising a blktrace binary of about 10 M events against blkparse's own text output of it (the baseline),
in the same run.

The trace is real: a capture (`ptsbench capture`, as root) of fio's random 4k/16k reads and writes on a loop device,
repeated end to end (each copy's times moved after the one before) until it holds --events records; or a trace
given with --trace. Measured, each --rounds times, wall time start to exit:
  blkparse   `blkparse -i - < TRACE > /dev/null` (blktrace's parser writing its text for every event)
  ptsbench   `ptsbench characterise TRACE --format json > /dev/null` (the whole command: Python start, the read,
             every statistic, the JSON)
Printed: the medians of wall time and of CPU time (user + system: on a shared machine the wall time also counts
the other programs' turns) and blkparse / ptsbench (how many times faster).

Run from the repository root, as root (about 2 minutes):
  .venv/bin/python bench/bench_workload.py
  .venv/bin/python bench/bench_workload.py --events 2000000 --rounds 5
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def capture_base(folder: Path) -> Path:
    """A real trace: fio's random reads (4k) and writes (16k) on a new loop device, captured by ptsbench."""
    image = folder / "loop.img"
    with open(image, "wb") as handle:
        handle.truncate(256 << 20)
    device = subprocess.run(["losetup", "--find", "--show", str(image)], capture_output=True, text=True,
                            check=True).stdout.strip()
    try:
        run_dir = folder / "capture"
        fio = ["fio", "--name=bench", f"--filename={device}", "--rw=randrw", "--bs=4k,16k", "--direct=1",
               "--ioengine=libaio", "--iodepth=8", "--size=256M", "--io_size=800M", "--output=/dev/null"]
        subprocess.run([sys.executable, "-m", "ptsbench", "capture", device, "--out", str(run_dir), "--", *fio],
                       check=True, stdout=subprocess.DEVNULL)
    finally:
        subprocess.run(["losetup", "-d", device], check=False)
    return run_dir / "trace.blktrace"


def tile(base: Path, events: int, out: Path) -> int:
    """`base` repeated until `out` holds at least `events` records, each copy's times after the previous copy's."""
    from ptsbench.workload.blktrace import _field, _record_offsets

    data = np.fromfile(base, dtype=np.uint8)
    offsets = _record_offsets(data, "<", base)
    times = _field(data, offsets, 8, "u8", "<")
    span_ns = int(times.max() - times.min()) + 1_000_000
    copies = -(-events // len(offsets))
    with open(out, "wb") as handle:
        for copy in range(copies):
            moved = data.copy()
            _shift(moved, offsets + 8, copy * span_ns)
            handle.write(moved.tobytes())
    return copies * len(offsets)


def _shift(data: np.ndarray, positions: np.ndarray, delta_ns: int) -> None:
    """Add delta_ns to the little-endian u64 at each position (aligned or not)."""
    for start in np.unique(positions % 8):
        chosen = positions[positions % 8 == start]
        words = np.frombuffer(data, dtype="<u8", offset=int(start), count=(len(data) - int(start)) // 8)
        words.setflags(write=True)
        words[(chosen - start) // 8] += np.uint64(delta_ns)


def timed(argv: list[str], stdin: Path | None = None) -> tuple[float, float]:
    """Wall seconds of one command, start to exit, and the CPU seconds (user + system) it used: on a shared machine
    the wall time counts the other programs' turns too."""
    started = time.monotonic()
    with open(stdin or os.devnull, "rb") as source:
        process = subprocess.Popen(argv, stdin=source, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _pid, status, usage = os.wait4(process.pid, 0)
    wall_s = time.monotonic() - started
    errors = process.stderr.read().decode() if process.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {errors[-500:]}")
    return wall_s, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--trace", type=Path, help="a blktrace binary to tile instead of a new capture")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-workload-") as folder:
        base = args.trace or capture_base(Path(folder))
        trace = Path(folder) / "bench.blktrace"
        count = tile(base, args.events, trace)
        print(f"trace: {count:,} events, {trace.stat().st_size / 2**20:.0f} MiB (from {base.name})", flush=True)
        blkparse, ours = [], []
        for _round in range(args.rounds):
            blkparse.append(timed(["blkparse", "-i", "-"], stdin=trace))
            ours.append(timed([sys.executable, "-m", "ptsbench", "characterise", str(trace), "--format", "json"]))
            print(f"  blkparse {blkparse[-1][0]:.2f} s ({blkparse[-1][1]:.2f} s CPU)   ptsbench characterise "
                  f"{ours[-1][0]:.2f} s ({ours[-1][1]:.2f} s CPU)", flush=True)
        for index, what in ((0, "wall"), (1, "CPU")):
            theirs = statistics.median(value[index] for value in blkparse)
            mine = statistics.median(value[index] for value in ours)
            print(f"median {what}: blkparse {theirs:.2f} s, ptsbench {mine:.2f} s, blkparse / ptsbench = "
                  f"{theirs / mine:.1f}")

if __name__ == "__main__":
    main()
