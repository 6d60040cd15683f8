"""Case-runner overhead: the same fio job through `ptsbench run` and through plain fio, and ptsbench's start-up time.

For each case (null engine at iodepth 1; 4k random reads with direct IO on a 256 MiB file) the two runs alternate,
the order swapped every pair, and the median of the per-pair IOPS ratios ptsbench/fio is printed next to its goal.
ptsbench's IOPS come from the result.json it stored, fio's from its own JSON output. While ptsbench runs, its own CPU
time (not fio's) is sampled from /proc/PID/stat, to show how much CPU the harness takes while fio works.

Run from the repository root (about 2-3 minutes with the defaults):
  .venv/bin/python bench/bench_run.py
  .venv/bin/python bench/bench_run.py --pairs 15 --runtime 5 --dir /mnt/scratch
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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

IOPS_GOAL = 0.99
STARTUP_GOAL_S = 0.3
FILE_SIZE = "256M"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
SAMPLE_INTERVAL_S = 0.1


@dataclass(frozen=True)
class Run:
    """One finished run: IOPS and the job threads' CPU (usr + sys, % of one CPU) as fio reported them, wall time,
    and (for ptsbench) its own CPU share while fio ran."""

    iops: float
    job_cpu_pct: float
    wall_s: float
    harness_cpu_share: float | None

    @property
    def iops_per_job_cpu(self) -> float:
        """IOs per CPU-second of fio's job threads: the work done per IO, whatever CPU the threads were given."""
        return self.iops / (self.job_cpu_pct / 100)


@dataclass(frozen=True)
class CaseResult:
    name: str
    ptsbench: list[Run]
    fio: list[Run]

    @property
    def ratios(self) -> list[float]:
        return [p.iops / f.iops for p, f in zip(self.ptsbench, self.fio, strict=True)]

    @property
    def cpu_ratios(self) -> list[float]:
        return [p.iops_per_job_cpu / f.iops_per_job_cpu for p, f in zip(self.ptsbench, self.fio, strict=True)]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=9, help="ptsbench/fio pairs per case (>= 5; default 9)")
    parser.add_argument("--runtime", type=float, default=3.0, help="seconds per fio run (default 3)")
    parser.add_argument("--startup-runs", type=int, default=9, help="timed start-ups of each command (default 9)")
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp"),
                        help="folder for the 256 MiB test file, not tmpfs (default /var/tmp)")
    parser.add_argument("--ptsbench", default=str(Path(sys.executable).parent / "ptsbench"),
                        help="ptsbench executable (default: the one next to this Python)")
    parser.add_argument("--fio", default=shutil.which("fio") or "fio", help="fio executable (default: fio on PATH)")
    args = parser.parse_args()
    if args.pairs < 5:
        parser.error("--pairs must be at least 5")
    if args.runtime <= 0 or args.startup_runs < 1:
        parser.error("--runtime must be positive and --startup-runs at least 1")
    return args


def null_job(runtime_s: float) -> str:
    return f"[null-qd1]\nioengine=null\nrw=randread\nbs=4k\niodepth=1\nsize=1G\ntime_based\nruntime={runtime_s:g}\n"


def file_job(path: Path, engine: str, runtime_s: float) -> str:
    return (f"[file-randread-qd1]\nfilename={path}\nioengine={engine}\ndirect=1\nrw=randread\nbs=4k\niodepth=1\n"
            f"size={FILE_SIZE}\ntime_based\nruntime={runtime_s:g}\n")


def check_not_tmpfs(folder: Path) -> None:
    """Exit with one line when `folder` is on tmpfs (no direct IO there, and nothing a disk would see)."""
    best = ("", "")
    with open("/proc/self/mounts") as mounts:
        for line in mounts:
            _device, mount_point, fs_type = line.split()[:3]
            if str(folder.resolve()).startswith(mount_point) and len(mount_point) >= len(best[0]):
                best = (mount_point, fs_type)
    if best[1] in ("tmpfs", "ramfs"):
        sys.exit(f"bench_run: {folder} is on {best[1]}; pass --dir on a disk-backed filesystem")


def direct_engine(fio: str, path: Path) -> str:
    """io_uring if fio can use it with direct IO on `path`, else libaio; exit when neither works."""
    for engine in ("io_uring", "libaio"):
        argv = [fio, "--name=probe", f"--filename={path}", f"--ioengine={engine}", "--direct=1", "--rw=randread",
                "--bs=4k", f"--size={FILE_SIZE}", "--number_ios=16", "--output-format=json"]
        if subprocess.run(argv, capture_output=True).returncode == 0:
            return engine
    sys.exit(f"bench_run: neither io_uring nor libaio works with direct IO on {path}")


def lay_out_file(fio: str, path: Path) -> None:
    """Write the whole test file once, so random reads hit written blocks (unwritten extents skip the disk)."""
    argv = [fio, "--name=layout", f"--filename={path}", "--rw=write", "--bs=1M", f"--size={FILE_SIZE}",
            "--direct=1", "--output-format=json"]
    subprocess.run(argv, check=True, capture_output=True)


def cpu_ticks(pid: int) -> int | None:
    """utime + stime of one process (all its threads, not its children), in clock ticks."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[11]) + int(fields[12])  # fields 14 and 15 of proc(5), counted after the ")"


def has_fio_child(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as handle:
            children = handle.read().split()
    except OSError:
        return False
    for child in children:
        try:
            with open(f"/proc/{child}/comm") as handle:
                if handle.read().strip() == "fio":
                    return True
        except OSError:
            continue
    return False


def watch(process: subprocess.Popen[bytes]) -> tuple[float, float | None]:
    """Wait for `process`; return its wall time and its own CPU share (0-1 of one CPU) while a fio child ran."""
    started = time.perf_counter()
    first: tuple[float, int] | None = None
    last: tuple[float, int] | None = None
    while process.poll() is None:
        now, ticks = time.perf_counter(), cpu_ticks(process.pid)
        if ticks is not None and has_fio_child(process.pid):
            first = first or (now, ticks)
            last = (now, ticks)
        time.sleep(SAMPLE_INTERVAL_S)
    wall_s = time.perf_counter() - started
    if first is None or last is None or last[0] - first[0] < 1.0:
        return wall_s, None
    return wall_s, (last[1] - first[1]) / CLOCK_TICKS / (last[0] - first[0])


def run_ptsbench(ptsbench: str, job: Path, scratch: Path) -> Run:
    out = Path(tempfile.mkdtemp(prefix="ptsbench-run-", dir=scratch))
    with open(scratch / "ptsbench.stderr", "w+") as stderr:  # a file, not a pipe: a full pipe would stall ptsbench
        process = subprocess.Popen([ptsbench, "run", str(job), "--out", str(out), "--format", "json"],
                                   stdout=subprocess.DEVNULL, stderr=stderr)
        wall_s, share = watch(process)
        stderr.seek(0)
        if process.returncode != 0:
            sys.exit(f"bench_run: ptsbench run failed ({process.returncode}): {stderr.read().strip()}")
    results = list(out.glob("cases/*/result.json"))
    if len(results) != 1:
        sys.exit(f"bench_run: expected one result.json in {out}, found {len(results)}")
    record = json.loads(results[0].read_text())
    iops = sum(d["iops"] for job_data in record["jobs"] for d in job_data["directions"])
    job_cpu_pct = sum(job_data["usr_cpu"] + job_data["sys_cpu"] for job_data in record["jobs"])
    shutil.rmtree(out)
    return Run(iops, job_cpu_pct, wall_s, share)


def run_fio(fio: str, job: Path) -> Run:
    with open(job.with_suffix(".json"), "w+") as stdout:  # a file, not a pipe: a full pipe would stall fio
        process = subprocess.Popen([fio, str(job), "--output-format=json"], stdout=stdout, stderr=subprocess.STDOUT)
        wall_s, _share = watch(process)  # sampled the same way as ptsbench, so both pay the same watching cost
        stdout.seek(0)
        text = stdout.read()
    if process.returncode != 0:
        sys.exit(f"bench_run: fio failed ({process.returncode}) on {job}: {text.strip()[-500:]}")
    doc = json.loads(text[text.index("{"):])
    iops = sum(job_data[d]["iops"] for job_data in doc["jobs"] for d in ("read", "write", "trim"))
    job_cpu_pct = sum(job_data["usr_cpu"] + job_data["sys_cpu"] for job_data in doc["jobs"])
    return Run(iops, job_cpu_pct, wall_s, None)


def run_case(name: str, job: Path, args: argparse.Namespace, scratch: Path) -> CaseResult:
    """Alternate ptsbench and fio runs, swapping who goes first every pair."""
    ptsbench_runs: list[Run] = []
    fio_runs: list[Run] = []
    for pair in range(args.pairs):
        steps: list[Callable[[], None]] = [
            lambda: ptsbench_runs.append(run_ptsbench(args.ptsbench, job, scratch)),
            lambda: fio_runs.append(run_fio(args.fio, job)),
        ]
        for step in steps if pair % 2 == 0 else reversed(steps):
            step()
        ratio = ptsbench_runs[-1].iops / fio_runs[-1].iops
        print(f"  {name} pair {pair + 1}: ptsbench {ptsbench_runs[-1].iops:,.0f}  fio {fio_runs[-1].iops:,.0f}"
              f"  ratio {ratio:.4f}", file=sys.stderr, flush=True)
    return CaseResult(name, ptsbench_runs, fio_runs)


def script_interpreter(script: str) -> str:
    """The Python a console script starts with (its #! line), or this Python."""
    with open(script, "rb") as handle:
        first = handle.readline().decode(errors="replace")
    return first.removeprefix("#!").strip() if first.startswith("#!") else sys.executable


def median_wall_s(argv: list[str], runs: int) -> float:
    """Median wall time of `argv` over `runs` runs, after one untimed warm-up run."""
    subprocess.run(argv, check=True, capture_output=True)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def cpu_times() -> tuple[int, int]:
    """(steal, total) clock ticks of all CPUs since boot, from /proc/stat."""
    with open("/proc/stat") as handle:
        ticks = [int(value) for value in handle.readline().split()[1:]]
    return ticks[7], sum(ticks[:8])  # user nice system idle iowait irq softirq steal (guest is inside user)


def print_report(results: list[CaseResult], startup: dict[str, float], args: argparse.Namespace,
                 machine: str) -> None:
    print(f"ptsbench run vs plain fio: {args.pairs} pairs per case, {args.runtime:g} s per run, alternating "
          "(order swapped every pair)")
    print(f"{'IOPS (median)':<28}{'ptsbench':>12}{'fio':>12}{'ratio':>9}  {'goal':<9}{'result':<8}{'min..max':>16}")
    for result in results:
        ratio = statistics.median(result.ratios)
        print(f"{result.name:<28}{statistics.median(r.iops for r in result.ptsbench):>12,.0f}"
              f"{statistics.median(r.iops for r in result.fio):>12,.0f}{ratio:>9.4f}  {'>= ' + str(IOPS_GOAL):<9}"
              f"{verdict(ratio >= IOPS_GOAL):<8}{min(result.ratios):>7.4f}..{max(result.ratios):.4f}")
    print()
    print(f"{'diagnostics (median)':<28}{'IOs per job-CPU-s ratio':>25}{'ptsbench CPU during fio':>25}"
          f"{'wall s ptsbench/fio':>21}")
    for result in results:
        shares = [run.harness_cpu_share for run in result.ptsbench if run.harness_cpu_share is not None]
        cpu = f"{statistics.median(shares) * 100:.1f}% of a CPU" if shares else "n/a"
        walls = (f"{statistics.median(r.wall_s for r in result.ptsbench):.2f}/"
                 f"{statistics.median(r.wall_s for r in result.fio):.2f}")
        print(f"{result.name:<28}{statistics.median(result.cpu_ratios):>25.4f}{cpu:>25}{walls:>21}")
    print("(IOs per job-CPU-s: IOPS / fio's usr+sys CPU of its job threads, ptsbench over fio; below 1 means fio does")
    print(" more work per IO under ptsbench. ptsbench CPU: its own process, sampled from /proc while fio ran.)")
    print()
    print(f"{'start-up (median of ' + str(args.startup_runs) + ')':<28}{'seconds':>12}  {'goal':<9}{'result':<8}")
    for label, seconds in startup.items():
        goal = (f"{'< ' + str(STARTUP_GOAL_S) + ' s':<9}{verdict(seconds < STARTUP_GOAL_S)}"
                if label.startswith("ptsbench") else "baseline")
        print(f"{label:<28}{seconds:>12.3f}  {goal}")
    print()
    print(machine)


def main() -> None:
    args = parse_args()
    check_not_tmpfs(args.dir)
    args.dir.mkdir(parents=True, exist_ok=True)
    interpreter = script_interpreter(args.ptsbench)
    load_start = os.getloadavg()[0]
    steal_start, total_start = cpu_times()
    with tempfile.TemporaryDirectory(prefix="bench-run-", dir=args.dir) as scratch_name:
        scratch = Path(scratch_name)
        data = scratch / "randread.dat"
        lay_out_file(args.fio, data)
        engine = direct_engine(args.fio, data)
        jobs = {"null engine, qd1": null_job(args.runtime),
                f"file {engine} direct, qd1": file_job(data, engine, args.runtime)}
        results: list[CaseResult] = []
        for name, text in jobs.items():
            job = scratch / f"{len(results)}.fio"
            job.write_text(text)
            results.append(run_case(name, job, args, scratch))
    startup = {
        "ptsbench --help": median_wall_s([args.ptsbench, "--help"], args.startup_runs),
        "python -c pass": median_wall_s([interpreter, "-c", "pass"], args.startup_runs),
    }
    steal_end, total_end = cpu_times()
    steal_pct = 100 * (steal_end - steal_start) / max(total_end - total_start, 1)
    load_end = os.getloadavg()[0]
    machine = (f"machine: {os.cpu_count()} CPUs, load average {load_start:.2f} at start and {load_end:.2f} at end, "
               f"CPU steal {steal_pct:.1f}% during the bench")
    if max(load_start, load_end) > (os.cpu_count() or 1) / 2:
        machine += "\nwarning: other processes were busy; the ratios measure them more than ptsbench: rerun when idle"
    print_report(results, startup, args, machine)


if __name__ == "__main__":
    main()
