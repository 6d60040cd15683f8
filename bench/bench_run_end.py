"""How long `ptsbench run` takes against plain fio for one case: the whole command's wall time over fio's own.

Each round runs, in rotating order: `ptsbench run JOB` (stores the results, prints the table, returns), the same
with `--report` (the whole report at the end, what every run did before), and plain `fio JOB --output-format=json+`
(the baseline). JOB is one null-engine case of --runtime seconds (default 5). Printed: the medians over the rounds,
each one's ratio to fio's wall time and its seconds over fio's (ptsbench's start-up, the guard's fio --parse-only,
storing and printing; with --report the report too), and for ptsbench the seconds from fio's end (when the case's
fio.json was stored, as fio exited) to the command's return. Goal: `run` returns within 1 s of fio's end.

Run from the repository root (about 1.5 minutes with the defaults):
  .venv/bin/python bench/bench_run_end.py
  .venv/bin/python bench/bench_run_end.py --rounds 7 --runtime 10
"""

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

JOB = "[null]\nioengine=null\nsize=1g\nrw=randread\ntime_based\nruntime={runtime}\n"
GOAL_S = 1.0


def wall_s(argv: list[str]) -> tuple[float, float]:
    """The command's wall time, and for ptsbench the seconds from fio's end to its return (else 0)."""
    started = time.monotonic()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ended_unix, wall = time.time(), time.monotonic() - started
    stored = list(Path(argv[argv.index("--out") + 1]).glob("cases/*/fio.json")) if "--out" in argv else []
    return wall, ended_unix - stored[0].stat().st_mtime if stored else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="rounds of the three (default 5)")
    parser.add_argument("--runtime", type=float, default=5.0, help="seconds of the null case (default 5)")
    parser.add_argument("--ptsbench", default=str(Path(sys.executable).parent / "ptsbench"),
                        help="ptsbench executable (default: the one next to this Python)")
    parser.add_argument("--fio", default=shutil.which("fio") or "fio", help="fio executable (default: fio on PATH)")
    args = parser.parse_args()
    import compileall

    import ptsbench as package

    # as an install leaves it: PYTHONDONTWRITEBYTECODE (set on some machines) would recompile every module per run
    compileall.compile_dir(Path(package.__file__).parent, quiet=1)
    walls: dict[str, list[float]] = {"fio": [], "run": [], "run --report": []}
    after: dict[str, list[float]] = {name: [] for name in walls}
    with tempfile.TemporaryDirectory(prefix="bench-run-end-") as folder:
        work = Path(folder)
        job = work / "null.fio"
        job.write_text(JOB.format(runtime=f"{args.runtime:g}"))
        for number in range(args.rounds):
            ways = {
                "fio": [args.fio, str(job), "--output-format=json+", f"--output={work / f'fio-{number}.json'}"],
                "run": [args.ptsbench, "run", str(job), "--out", str(work / f"run-{number}")],
                "run --report": [args.ptsbench, "run", str(job), "--out", str(work / f"report-{number}"), "--report"],
            }
            names = list(ways)
            for name in names[number % 3:] + names[:number % 3]:  # the order rotates from round to round
                wall, after_fio_s = wall_s(ways[name])
                walls[name].append(wall)
                after[name].append(after_fio_s)
    fio_s = statistics.median(walls["fio"])
    print(f"one null-engine case of {args.runtime:g} s, {args.rounds} rounds, medians of wall time:")
    for name, values in walls.items():
        median_s = statistics.median(values)
        print(f"  {name:13s} {median_s:6.2f} s  {median_s / fio_s:5.3f} x fio  {median_s - fio_s:+6.2f} s over fio, "
              f"{statistics.median(after[name]):5.2f} s after fio's end   (rounds: "
              f"{', '.join(f'{value:.2f}' for value in values)})")
    after_s = statistics.median(after["run"])
    print(f"goal: `run` returns within {GOAL_S:g} s of fio's end: {'met' if after_s <= GOAL_S else 'NOT met'} "
          f"({after_s:.2f} s)")


if __name__ == "__main__":
    main()
