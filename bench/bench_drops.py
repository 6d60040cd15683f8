"""False drops on a loaded host, and a real throttle on the same host (issue 41).

The host is loaded for the whole measurement (tests/hostload.py): a busy loop per CPU and one more, and an IO
neighbour writing and syncing a 64 MiB file over and over in the work folder. Then:

- --steady runs of one steady job each (`ptsbench run`: fio's null engine held to 1,000 IOPS of 4k random reads,
  --runtime seconds, with --min-fraction 0.8): every finding and --min-fraction breach counted, and how many of them
  were judged the drive's (not "host-limited") and whether the run exited 3.
- --throttled runs (as root, cgroup v1 blkio): reads of a loop device held to 1,000 IOPS by the kernel at queue
  depth 8, lowered to 100 for 5 s after 4,000 reads: the finding, its start against the moment the limit fell
  (in the job's bytes: within a second's reads), its length, and whether it was judged the drive's.
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
from pathlib import Path

from ptsbench.drops.find import DropRule
from ptsbench.drops.stored import below_min_fraction, folder_findings

STEADY_JOB = "[steady]\nioengine=null\nsize=1g\nrw=randread\nbs=4k\nrate_iops=1000\ntime_based\nruntime={runtime}\n"
READER_JOB = "[reader]\nrw=randread\nbs=4k\ndirect=1\nioengine=libaio\niodepth=8\ntime_based\nruntime={runtime}\n"
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


def judged(case_dir: Path) -> tuple[int, int, int]:
    """(findings of IOPS or MB/s, of them the drive's, --min-fraction 0.8 breaches)."""
    findings = [f for f in folder_findings(case_dir, DropRule()) if f.drop.metric != "lat"]
    return len(findings), sum(not f.host_limited for f in findings), len(below_min_fraction(case_dir, 0.8))


def steady(work: Path, runs: int, runtime: int) -> None:
    job = work / "steady.fio"
    job.write_text(STEADY_JOB.format(runtime=runtime))
    totals = [0, 0, 0, 0]
    for number in range(runs):
        out = work / f"steady-{number}"
        done = ptsbench("run", str(job), "--out", str(out), "--min-fraction", "0.8")
        _, stderr = done.communicate()
        found, drives, low = judged(out / "cases" / "001-steady")
        print(f"steady {number + 1}: exit {done.returncode}, {found} finding(s), {drives} the drive's, "
              f"{low} second(s) below 80 %", flush=True)
        for at, value in enumerate((found, drives, low, done.returncode == 3)):
            totals[at] += value
    print(f"steady: {runs} runs: {totals[0]} findings, {totals[1]} judged the drive's, {totals[2]} --min-fraction "
          f"breaches, {totals[3]} exit 3", flush=True)


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

    try:
        job = work / "reader.fio"
        job.write_text(READER_JOB.format(runtime=runtime))
        for number in range(runs):
            limit.write_text(f"{os.major(rdev)}:{os.minor(rdev)} 1000\n")
            out = work / f"throttled-{number}"
            done = ptsbench("run", str(job), "--target", device, "--out", str(out),
                            preexec=lambda: (group / "cgroup.procs").write_text(str(os.getpid())))
            start = reads()
            while reads() - start < 4000:
                time.sleep(0.05)
            at_drop = reads() - start
            if lower:
                limit.write_text(f"{os.major(rdev)}:{os.minor(rdev)} 100\n")
                time.sleep(5)
                limit.write_text(f"{os.major(rdev)}:{os.minor(rdev)} 1000\n")
            done.communicate()
            case_dir = out / "cases" / "001-reader"
            if not lower:
                found, drives, low = judged(case_dir)
                print(f"steady device {number + 1}: exit {done.returncode}, {found} finding(s), {drives} the "
                      f"drive's, {low} second(s) below 80 %", flush=True)
                continue
            findings = [f for f in folder_findings(case_dir, DropRule()) if f.drop.metric != "lat"]
            for finding in findings:
                off_s = (finding.drop.done_bytes / 4096 - at_drop) / 1000
                print(f"throttled {number + 1}: exit {done.returncode}: {finding.line()}; {finding.cause_text}; "
                      f"began {off_s:+.2f} s of reads from the limit's fall, lasted {finding.drop.duration_s:.2f} s, "
                      f"{'host-limited' if finding.host_limited else 'the drive'}", flush=True)
            if not findings:
                print(f"throttled {number + 1}: exit {done.returncode}: NOT FOUND", flush=True)
    finally:
        for _ in range(100):
            with contextlib.suppress(OSError):
                group.rmdir()
                break
            time.sleep(0.2)
        subprocess.run(["losetup", "-d", device], check=False)


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
