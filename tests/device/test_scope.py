"""What an NVMe purge reaches (device/scope.py): the namespaces of an NVM subsystem from a copy of the kernel's sysfs
layout (no NVMe drive here; the device lab runs it on the real driver), and the judgement of each other namespace
on real loop devices: in use never erased, holding data only with --purge-scope subsystem, blank allowed."""

import os
import subprocess
from pathlib import Path

import pytest

from conftest import attached_loop, run_cli
from ptsbench.device.scope import controller_namespaces, describe_reach, scope_problem, subsystem_namespaces


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if text == "dir":
            path.mkdir(exist_ok=True)
        else:
            path.write_text(text + "\n")


def test_the_namespaces_of_a_subsystem_through_all_its_controllers(tmp_path: Path) -> None:
    """Native multipath: the heads (nvme1n1, nvme1n2, nvme1n10) are under the subsystem, the controllers hold hidden
    path devices (nvme1c1n1); a second controller of the subsystem holds a namespace of its own without multipath;
    another subsystem's namespace is not reached."""
    nqn = "nqn.2019-08.org.qemu:LABNVMENS"
    _tree(tmp_path, {
        "class/nvme/nvme1/subsysnqn": nqn, "class/nvme/nvme1/nvme1c1n1": "dir", "class/nvme/nvme1/nvme1c1n2": "dir",
        "class/nvme/nvme2/subsysnqn": nqn, "class/nvme/nvme2/nvme2n7": "dir",
        "class/nvme/nvme0/subsysnqn": "nqn.other", "class/nvme/nvme0/nvme0n1": "dir",
        "class/nvme-subsystem/nvme-subsys1/subsysnqn": nqn, "class/nvme-subsystem/nvme-subsys1/nvme1": "dir",
        "class/nvme-subsystem/nvme-subsys1/nvme2": "dir", "class/nvme-subsystem/nvme-subsys1/nvme1n1": "dir",
        "class/nvme-subsystem/nvme-subsys1/nvme1n2": "dir", "class/nvme-subsystem/nvme-subsys1/nvme1n10": "dir",
        "class/nvme-subsystem/nvme-subsys0/subsysnqn": "nqn.other",
        "class/nvme-subsystem/nvme-subsys0/nvme0n1": "dir",
    })
    found = subsystem_namespaces("/dev/nvme1", str(tmp_path))
    assert found == ["/dev/nvme1n1", "/dev/nvme1n2", "/dev/nvme1n10", "/dev/nvme2n7"]
    assert subsystem_namespaces("/dev/nvme0", str(tmp_path)) == ["/dev/nvme0n1"]
    assert subsystem_namespaces("/dev/nvme9", str(tmp_path)) == []
    assert controller_namespaces("/dev/nvme1", str(tmp_path)) == ["/dev/nvme1n1", "/dev/nvme1n2"]  # the write cache
    assert controller_namespaces("/dev/nvme2", str(tmp_path)) == ["/dev/nvme2n7"]
    assert describe_reach("format", found[:2], "/dev/nvme1") == \
        "format erases all 2 namespaces of nvme1: nvme1n1, nvme1n2"


@pytest.mark.root
def test_another_namespace_is_judged_by_the_guard(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    with attached_loop(str(first)) as named, attached_loop(str(second)) as other:
        reach = [named, other]
        assert scope_problem(named, reach, "sanitize", "/dev/nvme1", "namespace") is None  # blank: allowed
        assert scope_problem(named, [named], "format", "/dev/nvme1", "namespace") is None
        subprocess.run(["mkfs.ext4", "-q", "-F", other], check=True, capture_output=True)
        said = scope_problem(named, reach, "sanitize", "/dev/nvme1", "namespace")
        assert said == (f"sanitize erases all 2 namespaces of nvme1: {os.path.basename(named)}, "
                        f"{os.path.basename(other)}, and {other}: carries a ext4 signature (--purge-scope subsystem "
                        "allows erasing it)"), said
        assert scope_problem(named, reach, "sanitize", "/dev/nvme1", "subsystem") is None
        subprocess.run(["mount", other, str(mnt)], check=True, capture_output=True)
        try:
            said = scope_problem(named, reach, "format", "/dev/nvme1", "subsystem")
            assert said is not None and said.endswith(f"and {other}: {other} is mounted on {mnt}"), said
        finally:
            subprocess.run(["umount", str(mnt)], check=True, capture_output=True)


@pytest.mark.root
def test_a_namespace_another_run_measures_is_never_erased(tmp_path: Path) -> None:
    """Issue 39: a fleet on two namespaces of one controller planned a sanitize per member, each erasing the other
    mid-run (this process's own claim hid the sibling from the in-use check). A sibling is refused, whatever
    --purge-scope says: named as a target of the fleet being planned, held by this process while the fleet runs,
    or held by another ptsbench run (named with its pid and run directory)."""
    import sys

    from ptsbench.device.claim import claim_targets

    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    with attached_loop(str(first)) as named, attached_loop(str(second)) as other:
        reach = [named, other]
        expected = f"and {other}: it is another target of this fleet, measured at the same time"
        for scope in ("namespace", "subsystem"):
            said = scope_problem(named, reach, "sanitize", "/dev/nvme1", scope, fleet=[named, other])
            assert said is not None and said.endswith(expected), said
        assert scope_problem(named, reach, "sanitize", "/dev/nvme1", "subsystem") is None  # not a fleet: blank
        with claim_targets([named, other], tmp_path / "fleet"):  # as run_fleet holds its members
            said = scope_problem(named, reach, "sanitize", "/dev/nvme1", "subsystem")
            assert said is not None and said.endswith(expected), said
        assert scope_problem(named, reach, "sanitize", "/dev/nvme1", "subsystem") is None  # let go
        holder = subprocess.Popen(
            [sys.executable, "-c", "import sys\nfrom pathlib import Path\nfrom ptsbench.device.claim import "
             "claim_targets\nwith claim_targets([sys.argv[1]], Path(sys.argv[2])):\n print('held', flush=True)\n "
             "sys.stdin.readline()\n", other, str(tmp_path / "other-run")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout is not None and holder.stdout.readline() == "held\n"
            said = scope_problem(named, reach, "format", "/dev/nvme1", "subsystem")
            assert said is not None and said.endswith(
                f"and {other}: another ptsbench run holds {other} (pid {holder.pid}, run directory "
                f"{tmp_path / 'other-run'})"), said
        finally:
            holder.communicate("\n", timeout=60)


@pytest.mark.root
def test_namespaces_a_purge_reaches_are_claimed_for_the_run(tmp_path: Path) -> None:
    """A run whose purge erases other namespaces (an NVMe sanitize) claims them by record for the run: a ptsbench
    started on one meanwhile is refused, told why; the namespace is not opened exclusively (nothing tests it)."""
    import sys

    from ptsbench.device.claim import claim_targets, other_run_reason
    from ptsbench.device.inuse import held_here

    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    with attached_loop(str(first)) as named, attached_loop(str(second)) as other:
        note = f"the purge of {named} (nvme-sanitize) erases it"
        with claim_targets([named], tmp_path / "run", reached=[other], reached_note=note):
            assert held_here(named) and not held_here(other)
            asked = subprocess.run(
                [sys.executable, "-c", "import sys\nfrom ptsbench.device.claim import check_not_claimed\n"
                 "check_not_claimed(sys.argv[1])\n", other], capture_output=True, text=True)
            assert asked.returncode != 0
            assert (f"refusing to use {other}: another ptsbench run holds {other} (pid {os.getpid()}, run "
                    f"directory {tmp_path / 'run'}): {note}") in asked.stderr, asked.stderr
        assert other_run_reason(other) is None


def test_pts_runs_on_two_files_of_one_disk_run_at_once(tmp_path: Path) -> None:
    """A file's purge never erases its disk, so a PTS run on a file claims no more than the file: a second run on
    another file of the same filesystem starts while the first runs (seen: it was refused, 'the purge of ...
    (none) erases /dev/vda')."""
    import sys
    import time

    args = ["pts", "--profile", "demo", "--spec", "1.1", "--tests", "iops", "--size", "16M", "--block-sizes",
            "iops=4k", "--mixes", "iops=0", "--max-rounds", "2"]
    first_dir = tmp_path / "first"
    first = subprocess.Popen([sys.executable, "-m", "ptsbench", *args, str(tmp_path / "a.dat"), "--round-time",
                              "30", "--out", str(first_dir)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True)
    try:
        deadline = time.monotonic() + 600  # a bound on a broken run only
        while not list(first_dir.glob("pts/iops/rounds")) and first.poll() is None:
            assert time.monotonic() < deadline, "the first run never reached its rounds"
            time.sleep(0.2)
        assert first.poll() is None, first.stderr.read() if first.stderr else ""
        second = run_cli(*args, str(tmp_path / "b.dat"), "--round-time",
                         "0.2", "--out", str(tmp_path / "second"), timeout=600)
        assert second.returncode == 0, second.stderr[-1500:]
        assert first.poll() is None  # the two ran at once
    finally:
        first.terminate()
        first.wait(timeout=120)
