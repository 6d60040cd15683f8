"""A stopped test run leaves nothing: a pytest of the suite (tests/project/stopped_run_inner.py: PostgreSQL, a tmpfs, a
loop device, ptsbench with its fio) stopped with Ctrl-C (SIGINT to its process group), SIGTERM to its group, or kill -9
of pytest alone; within 30 s no process of that run (by the mark in its environment, or its temporary folder on its
command line), mount, loop device or cgroup of it remains (conftest.py's cgroup and tests/runwatch.py)."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import cgroup2_mount

ROOT = Path(__file__).resolve().parents[2]
INNER = Path(__file__).with_name("stopped_run_inner.py")
GONE_WITHIN_S = 30  # the bound; cleaning up takes a second or two on an idle machine

pytestmark = [pytest.mark.root]


def processes_of(mark: str, folder: str | None = None) -> list[str]:
    """The processes of a test run: its mark in their environment, or its folder (if given) on their command
    line (a process started with a clean environment, as in a chroot)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            environ = Path(f"/proc/{pid}/environ").read_bytes()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            if f"PTSBENCH_TEST_RUN={mark}\0".encode() in environ + b"\0" or (folder and folder.encode() in cmdline):
                command = cmdline.replace(b"\0", b" ").decode(errors="replace")[:200]
                found.append(f"{pid} {command}")
    return found


def leftovers(facts: dict[str, str]) -> list[str]:
    """What of the run is still there: processes, mounts and loop devices under its folder, its cgroup."""
    folder = facts["basetemp"]
    left = [f"process {process}" for process in processes_of(facts["mark"], folder)]
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        if line.split()[4].startswith(folder):
            left.append(f"mount {line.split()[4]}")
    for loop in Path("/sys/block").glob("loop*"):
        with contextlib.suppress(OSError):
            if (loop / "loop" / "backing_file").read_text().startswith(folder):
                left.append(f"loop device /dev/{loop.name}")
    if Path(facts["cgroup"]).exists():
        left.append(f"cgroup {facts['cgroup']}")
    return left


@pytest.mark.parametrize(("how", "workers"), [("ctrl-c", ()), ("sigterm-to-group", ()), ("kill-9", ()),
                                               ("ctrl-c", ("-n", "2")), ("kill-9", ("-n", "2"))],
                         ids=["ctrl-c", "sigterm-to-group", "kill-9", "ctrl-c-xdist", "kill-9-xdist"])
def test_a_stopped_test_run_leaves_nothing(tmp_path: Path, how: str, workers: tuple[str, ...]) -> None:
    """kill -9 of pytest alone: with -n, of the xdist controller, whose workers and their children are then left"""
    up = stop_inner_run(tmp_path, "test_holds_a_server_a_mount_a_loop_device_and_fio", how, workers=workers)
    assert any("postgres" in item for item in up) and any("fio" in item for item in up), up
    assert any(item.startswith("mount") for item in up) and any(item.startswith("loop") for item in up), up


@pytest.mark.guest
def test_a_test_run_stopped_while_a_device_lab_runs_leaves_no_guest(tmp_path: Path) -> None:
    """The device lab runs in a session of its own (a signal to pytest's group does not reach it): SIGTERM to the
    group once left its QEMU guest running. Its disk images stay, if at all, in the run's temporary folder (which pytest
    removes with old runs' folders), never in /tmp beside it (its QEMU monitor is an abstract socket: a socket file in
    this deep folder passed the 108-byte limit of its path, and the guest never started)."""
    before = set(Path("/tmp").glob("ptsbench-lab*"))
    up = stop_inner_run(tmp_path, "test_waits_in_a_device_lab", "sigterm-to-group", ready_within_s=900)
    assert any("qemu-system" in item for item in up), up
    assert set(Path("/tmp").glob("ptsbench-lab*")) <= before
    assert list((tmp_path / "inner").glob("lab-debian12-*/console.txt"))  # the lab's folder was the run's


def stop_inner_run(tmp_path: Path, test: str, how: str, ready_within_s: float = 300,
                   workers: tuple[str, ...] = ()) -> list[str]:
    """Run tests/project/stopped_run_inner.py::TEST in a pytest of its own (with pytest-xdist's `workers` options, as
    scripts/test.sh runs it), stop it `how` once TEST says all is up, and assert that nothing of it is left
    GONE_WITHIN_S later; returns what was up before the stop."""
    if os.geteuid() != 0 or cgroup2_mount() is None:
        pytest.skip("needs root and cgroup v2 (the run's cgroup)")
    facts_path, ready = tmp_path / "facts.json", tmp_path / "ready"
    env = {key: value for key, value in os.environ.items()  # a run of its own, not an xdist worker of this one
           if not key.startswith("PYTEST_XDIST_")}
    env.update(PTSBENCH_TEST_RUN_FACTS=str(facts_path), PTSBENCH_STOP_READY=str(ready))
    with open(tmp_path / "inner.log", "wb") as log:
        inner = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp",
                                  str(tmp_path / "inner"), *workers, f"{INNER}::{test}"], cwd=ROOT, env=env, stdout=log,
                                 stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + ready_within_s
        while not ready.exists():
            assert inner.poll() is None, (tmp_path / "inner.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "the inner run never brought everything up"
            time.sleep(0.1)
        facts = json.loads(facts_path.read_text())
        up = leftovers(facts)
        if how == "ctrl-c":
            os.killpg(inner.pid, signal.SIGINT)
        elif how == "sigterm-to-group":
            os.killpg(inner.pid, signal.SIGTERM)
        else:
            os.kill(inner.pid, signal.SIGKILL)
        inner.wait(timeout=120)
    finally:
        if inner.poll() is None:
            os.killpg(inner.pid, signal.SIGKILL)
            inner.wait()
    deadline = time.monotonic() + GONE_WITHIN_S
    while (left := leftovers(facts)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, f"{how} left: {left}; runwatch.log: {_read(Path(facts['basetemp']) / 'runwatch.log')}"
    return up


def _read(path: Path) -> str:
    return path.read_text()[-2000:] if path.exists() else "(none)"
