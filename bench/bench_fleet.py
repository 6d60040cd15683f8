"""A fleet's wall time against its devices run one after another (issue 26): four loop devices, the demo profile.

1. Each device alone, one after another: `ptsbench pts DEV --destructive` per device; the sum of their wall times is
   what a fleet saves, the longest is what it cannot go below.
2. The fleet: `ptsbench pts DEV1 DEV2 DEV3 DEV4 --destructive`, all at once. Goal: its wall time close to the
   slowest single device's, not the sum.
3. Hand-off gaps: every round's gaps between cells (round.json handoff.gaps_ms), alone and in the fleet: the median
   and the largest. Goal: the fleet's as the single runs'. Also how many rounds were flagged possibly host-bound.

A loop device over a cached file is as fast as the CPU lets it be: each device alone keeps about one core busy, so
on a host with fewer cores than devices the fleet measures the CPUs. `--iops-limit N` caps every loop device at N
reads and N writes per second with the kernel's block throttle (a cgroup v1 blkio group the bench moves itself
into), so each device is limited by itself, as a drive is, and the host's CPUs are not the bottleneck.

Needs root (losetup). Run from the repository root (a few minutes with the defaults):
  .venv/bin/python bench/bench_fleet.py
  .venv/bin/python bench/bench_fleet.py --devices 4 --size-mib 64 --tests iops,tp
  .venv/bin/python bench/bench_fleet.py --iops-limit 2000
"""

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path


@contextlib.contextmanager
def loop_devices(folder: Path, count: int, size_bytes: int) -> Iterator[list[str]]:
    """`count` loop devices over sparse files in `folder`, detached at the end."""
    devices: list[str] = []
    try:
        for index in range(count):
            image = folder / f"bench-fleet-{index}.img"
            with open(image, "wb") as handle:
                handle.truncate(size_bytes)
            devices.append(subprocess.run(["losetup", "--find", "--show", str(image)], capture_output=True,
                                          text=True, check=True).stdout.strip())
        yield devices
    finally:
        for device in devices:
            subprocess.run(["losetup", "-d", device], check=False)


BLKIO = Path("/sys/fs/cgroup/blkio")


@contextlib.contextmanager
def throttled(devices: Sequence[str], iops: int | None) -> Iterator[None]:
    """This process (and every child it starts) in a blkio group capping each device at `iops` reads and writes per
    second; nothing without a limit."""
    if iops is None:
        yield
        return
    if not (BLKIO / "blkio.throttle.read_iops_device").exists():
        raise SystemExit("--iops-limit needs the cgroup v1 blkio controller at /sys/fs/cgroup/blkio")
    group = BLKIO / "ptsbench-bench-fleet"
    group.mkdir(exist_ok=True)
    try:
        for device in devices:
            rdev = Path(device).stat().st_rdev
            for name in ("blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device"):
                (group / name).write_text(f"{os.major(rdev)}:{os.minor(rdev)} {iops}\n")
        (group / "cgroup.procs").write_text(f"{os.getpid()}\n")
        yield
    finally:
        (BLKIO / "cgroup.procs").write_text(f"{os.getpid()}\n")
        for _ in range(100):  # a child that has just exited can hold the group for a moment
            with contextlib.suppress(OSError):
                group.rmdir()
                break
            time.sleep(0.1)


def timed_pts(run_dir: Path, devices: Sequence[str], options: Sequence[str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system, of ptsbench and every fio it started) of one `ptsbench pts` over
    `devices`, in seconds (SystemExit when it fails)."""
    started = time.monotonic()
    with tempfile.TemporaryFile() as stderr:
        child = subprocess.Popen([sys.executable, "-m", "ptsbench", "pts", *devices, "--destructive", "--out",
                                  str(run_dir), *options], stdout=subprocess.DEVNULL, stderr=stderr)
        _pid, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            stderr.seek(0)
            raise SystemExit(f"ptsbench pts failed: {stderr.read().decode().strip().splitlines()[-1]}")
    return time.monotonic() - started, usage.ru_utime + usage.ru_stime


def rounds_of(run_dirs: Sequence[Path]) -> list[dict[str, object]]:
    return [json.loads(path.read_text()) for run_dir in run_dirs for path in sorted(run_dir.rglob("round.json"))]


def gap_text(rounds: Sequence[dict[str, object]]) -> str:
    gaps = [gap for record in rounds for gap in (record.get("handoff") or {}).get("gaps_ms") or []  # type: ignore[union-attr]
            if gap is not None]
    if not gaps:
        return "no hand-offs measured"
    return f"median {statistics.median(gaps):.1f} ms, largest {max(gaps):.1f} ms over {len(gaps)} hand-offs"


def flagged_text(rounds: Sequence[dict[str, object]]) -> str:
    flagged = sum(bool((record.get("host_bound") or {}).get("possibly")) for record in rounds)  # type: ignore[union-attr]
    return f"{flagged} of {len(rounds)} rounds possibly host-bound"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--size-mib", type=int, default=64)
    parser.add_argument("--tests", default="iops")
    parser.add_argument("--dir", type=Path, default=None, help="folder for the loop images and run directories")
    parser.add_argument("--iops-limit", type=int, default=None,
                        help="cap each loop device at this many reads and writes per second (kernel block throttle)")
    args = parser.parse_args()
    options = ["--profile", "demo", "--tests", args.tests]
    print(f"load average at the start: {' '.join(f'{load:.2f}' for load in os.getloadavg())}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-fleet-", dir=args.dir) as temp:
        folder = Path(temp)
        with (loop_devices(folder, args.devices, args.size_mib * 1024 * 1024) as devices,
              throttled(devices, args.iops_limit)):
            alone_dirs = [folder / f"alone-{index}" for index in range(len(devices))]
            alone_runs = [timed_pts(run_dir, [device], options)
                          for run_dir, device in zip(alone_dirs, devices, strict=True)]
            fleet_dir = folder / "fleet"
            fleet, fleet_cpu_s = timed_pts(fleet_dir, devices, options)
            alone_rounds, fleet_rounds = rounds_of(alone_dirs), rounds_of([fleet_dir])
    alone = [wall_s for wall_s, _cpu_s in alone_runs]
    total, slowest = sum(alone), max(alone)
    alone_cpu_s = sum(cpu_s for _wall_s, cpu_s in alone_runs)
    limit = f", each capped at {args.iops_limit} IOPS" if args.iops_limit else ""
    print(f"{len(alone)} loop devices of {args.size_mib} MiB{limit}, "
          f"`ptsbench pts --profile demo --tests {args.tests}`")
    print(f"one after another: {total:.1f} s in all ({', '.join(f'{s:.1f}' for s in alone)} s each)")
    print(f"fleet, all at once: {fleet:.1f} s = {fleet / total:.2f} x the sum, {fleet / slowest:.2f} x the slowest "
          "single device")
    print(f"CPU time (user + system, fio included): {alone_cpu_s:.1f} s one after another "
          f"({', '.join(f'{cpu_s:.1f}' for _wall_s, cpu_s in alone_runs)} s each), {fleet_cpu_s:.1f} s the fleet "
          f"= {fleet_cpu_s / alone_cpu_s:.2f} x")
    print(f"load average at the end: {' '.join(f'{load:.2f}' for load in os.getloadavg())}")
    print(f"hand-off gaps alone: {gap_text(alone_rounds)}")
    print(f"hand-off gaps in the fleet: {gap_text(fleet_rounds)}")
    print(f"alone: {flagged_text(alone_rounds)}; fleet: {flagged_text(fleet_rounds)}")


if __name__ == "__main__":
    main()
