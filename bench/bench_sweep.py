"""Sweep overhead: the same cells through `ptsbench sweep`, through the case runner (`ptsbench run` on the sweep's own
cell job files) and through plain fio, one fio process per cell each.

A round runs the three one after another (their order rotating from round to round): the sweep (null engine,
--rw randread,randwrite --iodepth 1,2,4 --numjobs 1,2 by default: 12 cells), then `ptsbench run` on the 12 job files
the sweep wrote into RUN_DIR/sweep/, then plain `fio --output-format=json+` on each of those files. The ptsbench
times run from the start of the command to the moment the last cell's result.json exists (the report written after
that is left out: `ptsbench report` makes it again at any time). Printed: the median wall time of each, the fixed
cost per cell over plain fio, and the ratios sweep / fio and sweep / run.

Run from the repository root (about 2 minutes with the defaults):
  .venv/bin/python bench/bench_sweep.py
  .venv/bin/python bench/bench_sweep.py --rounds 5 --runtime 2
"""

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MATRIX = ("--rw", "randread,randwrite", "--iodepth", "1,2,4", "--numjobs", "1,2")
POLL_S = 0.01


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the three (default 3)")
    parser.add_argument("--runtime", type=float, default=1.0, help="seconds per cell (default 1)")
    parser.add_argument("--ptsbench", default=str(Path(sys.executable).parent / "ptsbench"),
                        help="ptsbench executable (default: the one next to this Python)")
    parser.add_argument("--fio", default=shutil.which("fio") or "fio", help="fio executable (default: fio on PATH)")
    args = parser.parse_args()
    if args.rounds < 1 or args.runtime <= 0:
        parser.error("--rounds must be at least 1 and --runtime positive")
    return args


def until_results(argv: list[str], cases: Path, count: int) -> float:
    """Wall time from starting `argv` until `count` result.json files exist under `cases` (then let it finish)."""
    start = time.monotonic()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while len(list(cases.glob("*/result.json"))) < count:
        if process.poll() is not None and len(list(cases.glob("*/result.json"))) < count:
            raise SystemExit(f"{' '.join(argv)} ended after {len(list(cases.glob('*/result.json')))} of {count} cells")
        time.sleep(POLL_S)
    wall_s = time.monotonic() - start
    if process.wait() != 0:
        raise SystemExit(f"{' '.join(argv)} failed")
    return wall_s


def main() -> None:
    args = parse_args()
    walls: dict[str, list[float]] = {"sweep": [], "run": [], "fio": []}
    cells = 0
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as folder:
        work = Path(folder)
        target = work / "null.dat"
        for number in range(args.rounds):
            sweep_dir = work / f"sweep-{number}"
            run_dir = work / f"run-{number}"

            def sweep(sweep_dir: Path = sweep_dir) -> None:
                argv = [args.ptsbench, "sweep", str(target), "--ioengine", "null", "--size", "256M", "--runtime",
                        f"{args.runtime:g}", *MATRIX, "--out", str(sweep_dir)]
                walls["sweep"].append(until_results(argv, sweep_dir / "cases", 12))

            def run(sweep_dir: Path = sweep_dir, run_dir: Path = run_dir) -> None:
                jobs = sorted((work / "sweep-0" / "sweep").glob("*.fio"))
                argv = [args.ptsbench, "run", *map(str, jobs), "--target", str(target), "--out", str(run_dir)]
                walls["run"].append(until_results(argv, run_dir / "cases", len(jobs)))

            def fio(number: int = number) -> None:
                jobs = sorted((work / "sweep-0" / "sweep").glob("*.fio"))
                start = time.monotonic()
                for index, job in enumerate(jobs):
                    output = work / f"fio-{number}-{index}.json"
                    subprocess.run([args.fio, "--output-format=json+", f"--output={output}", f"--filename={target}",
                                    str(job)], check=True, capture_output=True)
                walls["fio"].append(time.monotonic() - start)

            steps = [sweep, run, fio]  # the first round's sweep writes the job files the others run
            for step in steps[number % 3:] + steps[:number % 3]:
                step()
            cells = len(list((work / "sweep-0" / "sweep").glob("*.fio")))
    print(f"{cells} cells of {args.runtime:g} s (null engine), {args.rounds} round(s)")
    for label, pick in (("median", statistics.median), ("minimum", min)):  # the minimum: least disturbed by others
        wall = {name: pick(values) for name, values in walls.items()}
        print(f"{label} wall time:")
        for name in ("fio", "run", "sweep"):
            extra_ms = (wall[name] - wall["fio"]) / cells * 1000
            print(f"  {name:6s} {wall[name]:7.2f} s  ({wall[name] / (cells * args.runtime):.3f} x the planned cell "
                  f"time; {extra_ms:+.0f} ms per cell over plain fio)")
        print(f"  sweep / plain fio: {wall['sweep'] / wall['fio']:.3f}; sweep / case runner (ptsbench run): "
              f"{wall['sweep'] / wall['run']:.3f} (goal: <= 1, within noise)")
    for name, values in walls.items():
        print(f"rounds, {name}: {', '.join(f'{value:.2f}' for value in values)} s")

if __name__ == "__main__":
    main()
