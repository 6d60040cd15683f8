"""The watcher of a test run: started by conftest.py before pytest moves itself into a cgroup of its own, it waits
for pytest's end, however it ends (a normal exit, Ctrl-C, SIGTERM to its process group, kill -9), then removes what
the run left: every process still in the run's cgroup (QEMU guests, PostgreSQL, fio, sshd: whatever their session,
user or root), the mounts under the run's temporary folder, the loop devices over files there (and the md arrays and
device-mapper devices over them), the throttling cgroups the tests made, and the run's cgroup itself.

    python runwatch.py PYTEST_PID CGROUP_DIR BASETEMP

It runs in a session of its own (a signal to pytest's group does not reach it) and outside the run's cgroup."""

import contextlib
import os
import select
import subprocess
import sys
import time
from pathlib import Path

SETTLE_S = 20  # a killed process leaves its cgroup a moment after it dies; a busy host makes that longer


def run(*argv: str) -> int:
    """A clean-up command's status; a program this machine lacks (mdadm in the Debian 13 root) is a failure too."""
    try:
        return subprocess.run(argv, capture_output=True).returncode
    except OSError:
        return 127


def wait_for_end(pid: int) -> None:
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    select.select([pidfd], [], [])


def kill_cgroup(cgroup: Path) -> None:
    """SIGKILL every process in the cgroup (and its child cgroups) and wait until it is empty."""
    if not cgroup.is_dir():
        return
    with contextlib.suppress(OSError):
        (cgroup / "cgroup.kill").write_text("1")
    deadline = time.monotonic() + SETTLE_S
    while "populated 1" in (cgroup / "cgroup.events").read_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    for child in sorted(cgroup.rglob("*/"), key=lambda path: -len(path.parts)):  # child cgroups first
        if (child / "cgroup.procs").exists():
            with contextlib.suppress(OSError):
                child.rmdir()
    with contextlib.suppress(OSError):
        cgroup.rmdir()


def inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def unmount_under(folder: str) -> None:
    """Unmount every mount at or under `folder`, deepest first (lazily when busy)."""
    points = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].encode().decode("unicode_escape")
        if inside(point, folder):
            points.append(point)
    for point in sorted(points, key=len, reverse=True):
        if run("umount", point) != 0:
            run("umount", "-l", point)


def detach_loops_under(folder: str) -> None:
    """Detach the loop devices over files under `folder`, after stopping what is stacked on them."""
    for loop in Path("/sys/block").glob("loop*"):
        backing = loop / "loop" / "backing_file"
        try:
            if not inside(backing.read_text().strip().removesuffix(" (deleted)"), folder):
                continue
        except OSError:
            continue
        for holder in (loop / "holders").iterdir() if (loop / "holders").is_dir() else ():
            if holder.name.startswith("dm-"):
                name = (holder / "dm" / "name").read_text().strip()
                run("dmsetup", "remove", "--force", name)
            elif holder.name.startswith("md"):
                run("mdadm", "--stop", f"/dev/{holder.name}")
        run("partx", "-d", f"/dev/{loop.name}")
        run("losetup", "-d", f"/dev/{loop.name}")


def remove_test_cgroups(pid: int) -> None:
    """The block-throttling cgroups tests make (tests/drops/test_drops.py: ptsbench-*-PYTEST_PID), now empty."""
    for folder in (*Path("/sys/fs/cgroup").glob(f"*/ptsbench-*-{pid}"), *Path("/sys/fs/cgroup").glob(
            f"ptsbench-*-{pid}")):
        with contextlib.suppress(OSError):
            folder.rmdir()


def main() -> None:
    pid, cgroup, basetemp = int(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    wait_for_end(pid)
    kill_cgroup(cgroup)
    if basetemp:
        unmount_under(basetemp)
        detach_loops_under(basetemp)
    remove_test_cgroups(pid)


if __name__ == "__main__":
    main()
