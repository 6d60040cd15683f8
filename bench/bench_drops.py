"""False drops on a loaded host, and a real throttle on the same host (issue 41).

The host is loaded for the whole measurement (tests/hostload.py): a busy loop per CPU and one more, and an IO
neighbour writing and syncing a 64 MiB file over and over in the work folder. Then:

- --steady runs of one steady job each (`ptsbench run`: fio's null engine held to 1,000 IOPS of 4k random reads,
  --runtime seconds, with --min-fraction 0.8): every finding and --min-fraction breach counted, and how many of them
  were judged the drive's (not "host-limited") and whether the run exited 3.
- --throttled runs (as root, cgroup v1 blkio): reads of a loop device held to 1,000 IOPS by the kernel at queue
  depth 8, lowered to 100 for 5 s after 4,000 reads, the job logging every IO (fio's per-IO latency log): the
  finding, its start and end against the moments the limit fell and rose on fio's own clock (each known to within
  the IOs around it: the cgroup's read counts just before and after each change, found in the per-IO log's
  completion times), its length against the throttle's, the same for the finding's whole seconds (its edges on
  the seconds' boundaries, as before issue 41 placed them), and whether it was judged the drive's.
- --steady-device runs: the same reads of the loop device, its limit never lowered (steady IO through the kernel,
  where the null engine has none), counted as the steady runs are.

Run from the repository root, as root for the throttled runs (about 6 minutes with the defaults):
  .venv/bin/python bench/bench_drops.py
  .venv/bin/python bench/bench_drops.py --steady 20 --throttled 5 --runtime 20
"""

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from ptsbench.drops.find import Drop, DropRule
from ptsbench.drops.stored import JobSeconds, below_min_fraction, folder_findings, stored_seconds

STEADY_JOB = "[steady]\nioengine=null\nsize=1g\nrw=randread\nbs=4k\nrate_iops=1000\ntime_based\nruntime={runtime}\n"
READER_JOB = "[reader]\nrw=randread\nbs=4k\ndirect=1\nioengine=libaio\niodepth=8\ntime_based\nruntime={runtime}\n"
PER_IO_LOG = "write_lat_log={prefix}\nlog_avg_msec=0\n"
DEPTH = 8
BLKIO = Path("/sys/fs/cgroup/blkio")


@contextlib.contextmanager
def loaded(folder: Path):  # type: ignore[no-untyped-def]
    """The load of tests/hostload.py: busy loops and an IO neighbour that end with this process."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from hostload import loaded_host

    with loaded_host(folder):
        yield


def ptsbench(*args: str, preexec=None) -> subprocess.Popen[str]:  # type: ignore[no-untyped-def]
    return subprocess.Popen([sys.executable, "-m", "ptsbench", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=preexec)


def judged(case_dir: Path) -> tuple[int, int, int, int]:
    """(findings of IOPS or MB/s, of them the drive's, jobs with a second below 0.8 x the median, of them with
    such a second the host does not explain: --min-fraction 0.8 breaches)."""
    findings = [f for f in folder_findings(case_dir, DropRule()) if f.drop.metric != "lat"]
    lows = below_min_fraction(case_dir, 0.8)
    return len(findings), sum(not f.host_limited for f in findings), len(lows), sum(not low.host for low in lows)


def steady(work: Path, runs: int, runtime: int) -> None:
    job = work / "steady.fio"
    job.write_text(STEADY_JOB.format(runtime=runtime))
    totals = [0, 0, 0, 0, 0]
    for number in range(runs):
        out = work / f"steady-{number}"
        done = ptsbench("run", str(job), "--out", str(out), "--min-fraction", "0.8")
        done.communicate()
        counts = judged(out / "cases" / "001-steady")
        print(f"steady {number + 1}: exit {done.returncode}, {judged_text(counts)}", flush=True)
        for at, value in enumerate((*counts, done.returncode == 3)):
            totals[at] += value
    print(f"steady: {runs} runs: {judged_text(totals[:4])}, {totals[4]} exit 3", flush=True)


def judged_text(counts: Sequence[int]) -> str:
    return (f"{counts[0]} finding(s), {counts[1]} judged the drive's; {counts[2]} job(s) with a second below 80 %, "
            f"{counts[3]} not host-limited (--min-fraction 0.8 breaches)")


def throttled(work: Path, runs: int, runtime: int, lower: bool = True) -> None:
    image = work / "loop.img"
    with image.open("wb") as handle:
        handle.truncate(256 << 20)
    device = subprocess.run(["losetup", "--find", "--show", str(image)], check=True, capture_output=True,
                            text=True).stdout.strip()
    group = BLKIO / f"bench-drops-{os.getpid()}"
    group.mkdir()
    rdev = os.stat(device).st_rdev
    limit = group / "blkio.throttle.read_iops_device"

    def reads() -> int:
        text = (group / "blkio.throttle.io_serviced").read_text()
        return sum(int(line.split()[2]) for line in text.splitlines()
                   if line.startswith(f"{os.major(rdev)}:{os.minor(rdev)} Read"))

    def change(iops: int) -> tuple[int, int]:
        before = reads()
        limit.write_text(f"{os.major(rdev)}:{os.minor(rdev)} {iops}\n")
        return before, reads()

    steady_totals = [0, 0, 0, 0, 0]
    try:
        for number in range(runs):
            change(1000)
            name = f"{'throttled' if lower else 'steady-device'}-{number}"
            out, logs = work / name, work / f"{name}-logs"
            logs.mkdir()
            job = work / f"{name}.fio"
            job.write_text(READER_JOB.format(runtime=runtime) + ("" if not lower else
                                                                PER_IO_LOG.format(prefix=logs / "reader")))
            start = reads()  # the cgroup's count goes on from run to run
            done = ptsbench("run", str(job), "--target", device, "--out", str(out), "--min-fraction", "0.8",
                            preexec=lambda: (group / "cgroup.procs").write_text(str(os.getpid())))
            while reads() - start < 4000:
                time.sleep(0.05)
            if lower:
                fell = tuple(count - start for count in change(100))
                time.sleep(5)
                rose = tuple(count - start for count in change(1000))
            done.communicate()
            (case_dir,) = (out / "cases").iterdir()
            if not lower:
                counts = judged(case_dir)
                steady_totals = [total + value for total, value in
                                 zip(steady_totals, (*counts, done.returncode == 3), strict=True)]
                print(f"steady device {number + 1}: exit {done.returncode}, {judged_text(counts)}", flush=True)
                continue
            (log,) = logs.glob("reader_lat.*.log")
            completed_ms = [int(line.split(",")[0]) for line in log.read_text().splitlines()]
            findings = [f for f in folder_findings(case_dir, DropRule()) if f.drop.metric != "lat"]
            if not findings:
                print(f"throttled {number + 1}: exit {done.returncode}: NOT FOUND", flush=True)
            for finding in findings:
                print(f"throttled {number + 1}: exit {done.returncode}: {finding.line()}; {finding.cause_text}; "
                      f"{'host-limited' if finding.host_limited else 'the drive'}\n  "
                      f"{span_text(finding.drop, stored_seconds(case_dir), completed_ms, fell, rose)}", flush=True)
        if not lower:
            print(f"steady device: {runs} runs: {judged_text(steady_totals[:4])}, {steady_totals[4]} exit 3",
                  flush=True)
    finally:
        for _ in range(100):
            with contextlib.suppress(OSError):
                group.rmdir()
                break
            time.sleep(0.2)
        subprocess.run(["losetup", "-d", device], check=False)


def moment_ms(completed_ms: list[int], before: int, after: int) -> tuple[int, int]:
    """When the limit changed on fio's clock (ms), from the reads counted just before and after the change: at most
    DEPTH IOs are in flight, so `before` - DEPTH had completed by then, and the IO after `after` had not."""
    return completed_ms[max(before - DEPTH, 1) - 1], completed_ms[min(after + 1, len(completed_ms)) - 1]


def off_s(moment_s: float, bounds_ms: tuple[int, int]) -> float:
    """How far a moment (s) lies from the bounds (ms) of another, in seconds: 0 inside them, signed outside."""
    low_s, high_s = bounds_ms[0] / 1000, bounds_ms[1] / 1000
    return moment_s - high_s if moment_s > high_s else moment_s - low_s if moment_s < low_s else 0.0


def span_text(drop: Drop, jobs: list[JobSeconds], completed_ms: list[int], fell: tuple[int, int],
              rose: tuple[int, int]) -> str:
    """The finding's start, end and length against the throttle's, and the same for its whole seconds."""
    fell_ms, rose_ms = moment_ms(completed_ms, *fell), moment_ms(completed_ms, *rose)
    series = jobs[0].directions[drop.direction]
    whole = (float(series.start_s[drop.first]), float(series.end_s[drop.stop - 1]))
    length_ms = (rose_ms[0] - fell_ms[1], rose_ms[1] - fell_ms[0])
    parts = [f"throttle fell at {fell_ms[0] / 1000:.2f}-{fell_ms[1] / 1000:.2f} s, rose at "
             f"{rose_ms[0] / 1000:.2f}-{rose_ms[1] / 1000:.2f} s (fio's clock)"]
    for name, (start_s, end_s) in (("finding", (drop.start_s, drop.end_s)), ("whole seconds", whole)):
        parts.append(f"{name} {start_s:.2f}-{end_s:.2f} s: start {off_s(start_s, fell_ms):+.2f} s, end "
                     f"{off_s(end_s, rose_ms):+.2f} s, length {off_s(end_s - start_s, length_ms):+.2f} s off")
    return "; ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steady", type=int, default=10, help="steady runs (default 10)")
    parser.add_argument("--throttled", type=int, default=3, help="throttled runs, as root (default 3)")
    parser.add_argument("--steady-device", type=int, default=0,
                        help="steady runs on the throttled loop device, its limit never lowered (default 0)")
    parser.add_argument("--runtime", type=int, default=15, help="seconds per run (default 15)")
    parser.add_argument("--keep", type=Path, help="keep the runs in this new folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-drops-") as folder:
        work = Path(folder) if args.keep is None else args.keep
        work.mkdir(exist_ok=True)
        with loaded(work):
            steady(work, args.steady, args.runtime)
            if os.geteuid() == 0 and BLKIO.is_dir():
                if args.steady_device:
                    throttled(work, args.steady_device, args.runtime, lower=False)
                if args.throttled:
                    throttled(work, args.throttled, args.runtime)


if __name__ == "__main__":
    main()
