"""Large inputs (issue 40, "too slow"): a 10,000-cell sweep's --dry-run, `plot --json` of a 2,000-job fio JSON file and
a job file with a 5 MB line, each timed with this tree's ptsbench and with the ptsbench of an earlier commit (the
baseline, exported from git into a temporary folder and run from there), one after the other in the same run.

Printed per input: wall time and CPU time (user + system, of ptsbench and every process it started, from wait4) of
the baseline and of this tree, and baseline / this tree. CPU time is the figure to compare on a loaded machine: wall
time there mostly measures the other processes. Each command must end as it ends with this tree (the sweep and the
plot exit 0, the job file is refused with exit code 2), else the bench stops.

Run from the repository root (a few minutes; the fio JSON is made first, 2,000 null-engine jobs of 50 ms):
  .venv/bin/python bench/bench_inputs.py
  .venv/bin/python bench/bench_inputs.py --only line --only plot --skip-baseline plot
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BASELINE = "b22fc53"  # the last commit before the fixes for issue 40's slow inputs
SIZES_K = ",".join(f"{size}k" for size in range(4, 104, 4))  # 25 block sizes
SWEEP = ("--rw", "read,write,randread,randwrite", "--bs", SIZES_K, "--iodepth", "1,2,4,8,16,32,64,128,256,512",
         "--numjobs", "1,2,3,4,5,6,7,8,9,10", "--runtime", "1", "--size", "16M", "--dry-run")  # 10,000 cells
JOBS = 2000


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", default=DEFAULT_BASELINE, help=f"git commit to compare with ({DEFAULT_BASELINE})")
    parser.add_argument("--skip-baseline", action="append", default=[], choices=("sweep", "plot", "line"),
                        help="time only this tree for this input (the baseline's took minutes)")
    parser.add_argument("--only", action="append", default=[], choices=("sweep", "plot", "line"),
                        help="time only this input (repeatable; default: all three)")
    parser.add_argument("--json", type=Path, help="a fio JSON file to plot (default: 2,000 null-engine jobs made now)")
    return parser.parse_args()


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system of the process and its children) and exit code of `argv`."""
    start = time.monotonic()
    process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return time.monotonic() - start, usage.ru_utime + usage.ru_stime, process.returncode


def fio_json(folder: Path) -> Path:
    """A fio JSON output file of JOBS null-engine jobs (queue depths 1-64, four block sizes), made by fio."""
    lines = ["[global]", "ioengine=null", "size=1m", "rw=randread", "time_based", "runtime=50ms", "thread"]
    for index in range(JOBS):
        lines += [f"[j{index}]", f"iodepth={1 + index % 64}", f"bs={4 * (1 + index // 500)}k"]
    job = folder / "jobs.fio"
    job.write_text("\n".join(lines) + "\n")
    out = folder / "jobs.json"
    subprocess.run(["fio", str(job), "--output-format=json", f"--output={out}"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out


def export(revision: str, folder: Path) -> Path:
    """The baseline's src/ tree, from git."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "src"], check=True, capture_output=True)
    folder.mkdir()
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder / "src"


def main() -> None:
    args = parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-inputs-") as temporary:
        folder = Path(temporary)
        work = folder / "work"
        work.mkdir()
        trees = {"baseline": export(args.baseline, folder / "baseline"), "this tree": ROOT / "src"}
        wanted = args.only or ["sweep", "plot", "line"]
        plotted = args.json.resolve() if args.json else fio_json(folder) if "plot" in wanted else Path()
        line_job = folder / "line.fio"
        line_job.write_text("[a]\nioengine=null\nsize=1m\ndescription=" + "x" * 5_000_000 + "\n")
        inputs = {
            "sweep": (["sweep", str(work / "t.dat"), *SWEEP], 0),
            "plot": (["plot", "--json", str(plotted), "--out", "{out}"], 0),
            "line": (["run", str(line_job), "--out", "{out}"], 2),
        }
        print(f"{'input':<8} {'tree':<10} {'wall s':>8} {'CPU s':>8}")
        for name, (arguments, expected) in inputs.items():
            if name not in wanted:
                continue
            found: dict[str, float] = {}
            for label, source in trees.items():
                if label == "baseline" and name in args.skip_baseline:
                    continue
                env = {**os.environ, "PYTHONPATH": str(source), "HOME": str(folder), "OPENBLAS_NUM_THREADS": "1"}
                out = folder / f"out-{name}-{label.replace(' ', '-')}"
                argv = [sys.executable, "-m", "ptsbench", *(a.replace("{out}", str(out)) for a in arguments)]
                wall_s, cpu_s, code = timed(argv, work, env)
                if code != expected:
                    raise SystemExit(f"{label}: {' '.join(argv[:6])} ... exited {code}, not {expected}")
                found[label] = cpu_s
                print(f"{name:<8} {label:<10} {wall_s:8.1f} {cpu_s:8.1f}", flush=True)
            if len(found) == 2:
                print(f"{name:<8} CPU baseline / this tree: {found['baseline'] / found['this tree']:.1f}", flush=True)


if __name__ == "__main__":
    main()
