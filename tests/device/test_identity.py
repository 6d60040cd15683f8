"""A device that vanishes: a node made with mknod for a real loop device stands for a drive's /dev node, and is
removed, replaced by a regular file or by another device, as a hot-unplug leaves it. The runs on such a node: fio
never makes a file at its path, the error names the device, and resume says what to do, then carries on."""

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import attached_loop, run_cli
from ptsbench.device.identity import device_identity, devices_with_ids, missing_device, vanished

SMALL = ["--profile", "demo", "--spec", "1.1", "--tests", "iops", "--round-time", "1", "--max-rounds", "3",
         "--block-sizes", "iops=4k", "--mixes", "iops=0,65,100", "--purge", "none", "--destructive"]


def node_of(device: str, path: Path) -> Path:
    """A block device node at `path` for the same device as `device` (as /dev holds it)."""
    os.mknod(path, stat.S_IFBLK | 0o600, os.stat(device).st_rdev)
    return path


@pytest.fixture
def two_loops(tmp_path: Path):  # type: ignore[no-untyped-def]
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    with attached_loop(str(first)) as one, attached_loop(str(second)) as other:
        yield one, other


def test_a_device_that_goes_is_named_with_how(tmp_path: Path, two_loops: tuple[str, str]) -> None:
    one, other = two_loops
    node = node_of(one, tmp_path / "drive")
    identity = device_identity(str(node))
    assert identity is not None and identity.kind == "block" and identity.rdev == os.stat(one).st_rdev
    assert ("loop/backing_file", str(tmp_path / "a" / "loop.img")) in identity.ids
    assert vanished(identity) is None and missing_device(str(node)) is None
    node.unlink()
    assert vanished(identity) == f"the device disappeared: {node} (no device node at that path any more)"
    assert missing_device(str(node)) == vanished(identity)
    node.write_bytes(b"x" * 10)  # what fio's default allow_file_create=1 leaves at a vanished /dev name
    said = vanished(identity)
    assert said is not None and said.startswith(f"the device disappeared: {node} (a regular file of 10 bytes")
    assert missing_device(str(node)) == said
    node.unlink()
    node_of(other, node)  # the name now belongs to another device
    said = vanished(identity)
    assert said is not None and "another device is at that path now" in said, said
    assert device_identity(str(tmp_path / "a" / "loop.img")) is None  # a regular file is no device


def test_a_drive_back_under_another_name_is_found_by_its_ids(two_loops: tuple[str, str], tmp_path: Path) -> None:
    one, _ = two_loops
    assert devices_with_ids({"loop/backing_file": str(tmp_path / "a" / "loop.img")}) == [one]
    assert devices_with_ids({"loop/backing_file": str(tmp_path / "nowhere.img")}) == []
    assert devices_with_ids({}) == []


def _wait_for(ready, what: str, process: subprocess.Popen[bytes]) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + 120
    while not ready():
        assert process.poll() is None, f"the run ended before {what}"
        assert time.monotonic() < deadline, f"{what} never came"
        time.sleep(0.02)


def test_a_pts_run_whose_device_vanishes_fails_naming_it_and_resumes_when_it_is_back(
        tmp_path: Path, loop_device: str) -> None:
    node = node_of(loop_device, tmp_path / "drive")
    run_dir = tmp_path / "run"
    process = subprocess.Popen([sys.executable, "-m", "ptsbench", "pts", str(node), "--out", str(run_dir), *SMALL],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    rounds = run_dir / "pts" / "iops" / "rounds"
    _wait_for(lambda: (rounds / "001" / "round.json").exists(), "round 1", process)
    node.unlink()  # a hot-unplug: the kernel removes the node while the next round runs
    _, stderr = process.communicate(timeout=300)
    assert process.returncode != 0 and "Traceback" not in stderr.decode()
    failure = stderr.decode().strip().splitlines()[-1]
    assert f"round 2 failed: the device disappeared: {node} (no device node at that path any more)" in failure
    assert failure.endswith(f"reattach the drive, then `ptsbench resume {run_dir}`: it checks the drive is the "
                            "same one and runs the round again"), failure
    assert not os.path.lexists(node), "fio made a file at the vanished device's path"
    job = next(run_dir.rglob("job*.fio")).read_text()
    assert "allow_file_create=0" in job
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "failed" and "the device disappeared" in manifest["failure"]

    gone = run_cli("resume", str(run_dir))
    assert gone.returncode != 0 and gone.stderr.strip().splitlines()[-1] == (
        f"ptsbench: error: the device disappeared: {node} (no device node at that path any more): reattach the "
        "drive (or let the kernel find it again: echo 1 > /sys/bus/pci/rescan) and resume; resume checks it is the "
        "same drive"), gone.stderr
    node.write_bytes(b"")
    gone = run_cli("resume", str(run_dir))
    assert gone.returncode != 0 and "a regular file of 0 bytes stands at its path" in gone.stderr
    assert f"remove it (rm {node})" in gone.stderr, gone.stderr
    node.unlink()
    node_of(loop_device, node)
    back = run_cli("resume", str(run_dir), "--destructive")
    assert back.returncode == 0, back.stderr
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "done"


def _opened_by_fio(path: Path) -> bool:
    """A fio process has `path` open (not ptsbench's own checks of the device before fio starts)."""
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        try:
            if (fd_dir.parent / "comm").read_text().startswith("fio") and any(
                    os.readlink(fd) == str(path) for fd in fd_dir.iterdir()):
                return True
        except OSError:
            continue
    return False


@pytest.mark.parametrize("named_in", ["job file", "--target"])
def test_a_case_whose_device_vanishes_fails_naming_it_and_leaves_no_file(
        tmp_path: Path, loop_device: str, named_in: str) -> None:
    node = node_of(loop_device, tmp_path / "drive")
    file_line = f"filename={node}\n" if named_in == "job file" else ""
    job = tmp_path / "two.fio"
    job.write_text(f"[global]\n{file_line}rw=randwrite\nbs=4k\nsize=16M\ndirect=1\n"
                   "[first]\ntime_based=1\nruntime=4\n[second]\nstonewall\nruntime=1\n")
    target = [] if named_in == "job file" else ["--target", str(node)]
    out = tmp_path / "out"
    process = subprocess.Popen([sys.executable, "-m", "ptsbench", "run", str(job), *target, "--destructive",
                                "--format", "json", "--out", str(out)], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    _wait_for(lambda: _opened_by_fio(node), "fio opening the device", process)
    node.unlink()  # the second job opens it again after the first
    stdout, _ = process.communicate(timeout=120)
    rows = json.loads(stdout)
    assert rows[0]["status"] == "failed", rows
    assert rows[0]["message"] == f"{job}: the device disappeared: {node} (no device node at that path any more)"
    assert not os.path.lexists(node), "fio made a file at the vanished device's path"
    written = next((out / "cases").glob("*/job.fio")).read_text()
    assert written.count("allow_file_create=0") == 2, written


def test_a_job_that_opens_a_device_and_makes_a_new_file_is_refused(tmp_path: Path, loop_device: str) -> None:
    job = tmp_path / "mixed.fio"
    job.write_text(f"[mixed]\nfilename={loop_device}:{tmp_path / 'new.dat'}\nrw=write\nsize=1M\n")
    done = run_cli("run", str(job), "--destructive", "--out", str(tmp_path / "out"))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"ptsbench: error: {job}: job mixed opens the device {loop_device} and makes the new file "
        f"{tmp_path / 'new.dat'}: put the new file in a job of its own (ptsbench sets allow_file_create=0 on jobs "
        "that open a device)")
    assert not (tmp_path / "new.dat").exists() and not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", [["pts", "--destructive"], ["run", "JOB", "--destructive"], ["quick"]])
def test_a_device_of_capacity_zero_has_its_own_message(tmp_path: Path, command: list[str]) -> None:
    """What an NVMe namespace with extended LBA looks like to the kernel: a block device of 0 bytes."""
    image = tmp_path / "empty.img"
    image.write_bytes(b"")
    device = subprocess.run(["losetup", "--find", "--show", str(image)], capture_output=True, text=True,
                            check=False).stdout.strip()
    if not device:
        pytest.skip("needs root and losetup")
    job = tmp_path / "job.fio"
    job.write_text("[w]\nrw=write\nbs=4k\n")
    try:
        argv = [str(job) if word == "JOB" else word for word in command]
        done = run_cli(argv[0], *argv[1:], *(["--target"] if argv[0] == "run" else []), device,
                       "--out", str(tmp_path / "out"))
    finally:
        subprocess.run(["losetup", "-d", device], capture_output=True, check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(
        f"ptsbench: error: {device} has a capacity of 0 bytes: the kernel cannot read or write it"), done.stderr
    assert not (tmp_path / "out").exists()
