"""`resume` continues only on the device the run started on (pts/start.py check_same_device): real loop devices, a
PTS run killed during preconditioning, then another image attached to the same loop device, a filesystem made on
it, and a run from before identities were recorded."""

import hashlib
import json
import os
import subprocess
import time
from pathlib import Path

from conftest import LOOP_SIZE_BYTES, attached_loop, kill_when, run_cli, start_pts
from ptsbench.device.inuse import _processes_holding

ARGS = ["--destructive", "--profile", "demo", "--spec", "1.1", "--round-time", "0.2", "--max-rounds", "1",
        "--tests", "iops", "--block-sizes", "iops=4k", "--mixes", "iops=0"]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def reattach(device: str, image: Path) -> None:
    """Attach `image` to the loop device `device` in place of what backs it now (same device, same path)."""
    subprocess.run(["losetup", "-d", device], check=True)
    subprocess.run(["losetup", device, str(image)], check=True)


def killed_while_preconditioning(run_dir: Path, device: str) -> None:
    """kill -9 of the run mid-preconditioning, then wait until no process has `device` open: its fio ends on its
    parent-death signal a moment later (on a busy host, after the test had detached the device and failed to attach
    another image there: "Device or resource busy")."""
    precondition = run_dir / "pts" / "iops" / "precondition"
    kill_when(start_pts(run_dir, device, *ARGS), lambda: (precondition / "job.fio").exists())
    rdev = os.stat(device).st_rdev
    deadline = time.monotonic() + 60
    while holding := _processes_holding(rdev):  # the guard's own look through /proc
        assert time.monotonic() < deadline, f"{device} still open after the kill: {holding}"
        time.sleep(0.05)


def refused(run_dir: Path) -> str:
    """The one error line of a refused `resume --destructive`."""
    done = run_cli("resume", str(run_dir), "--destructive")
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    return done.stderr.strip().splitlines()[-1]


def test_resume_refuses_another_image_and_a_new_filesystem_then_resumes_the_same_device(tmp_path: Path) -> None:
    run_dir, other = tmp_path / "run", tmp_path / "other.img"
    other.write_bytes(b"")
    subprocess.run(["truncate", "-s", str(LOOP_SIZE_BYTES), str(other)], check=True)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(other)], check=True, capture_output=True)
    with attached_loop(str(tmp_path)) as device:
        image = tmp_path / "loop.img"
        killed_while_preconditioning(run_dir, device)
        recorded = json.loads((run_dir / "manifest.json").read_text())["device_identity"]
        assert recorded["ids"]["loop/backing_file"] == str(image) and recorded["signatures"] == []

        reattach(device, other)  # another user's filesystem image on the same loop device
        before = digest(other)
        said = refused(run_dir)
        assert (f"{device} is not the device this run started on: another file backs the loop device: {other} "
                "(inode") in said, said
        assert digest(other) == before

        reattach(device, image)  # the run's own image again, then someone makes a filesystem on it
        subprocess.run(["mkfs.ext4", "-q", "-F", device], check=True, capture_output=True)
        before = digest(image)
        said = refused(run_dir)
        assert f"{device} now carries a ext4 signature made after this run began writing to it" in said, said
        assert digest(image) == before

        subprocess.run(["wipefs", "-a", "-q", device], check=True)
        done = run_cli("resume", str(run_dir), "--destructive")
        assert done.returncode == 0, done.stderr
        assert "resume checked" not in done.stderr and "could not fully check" not in done.stderr  # a loop
        # device's backing file names it: nothing of its identity left unchecked
        assert json.loads((run_dir / "manifest.json").read_text())["status"] == "done"


def test_a_run_without_a_recorded_identity_resumes_and_says_what_was_checked(tmp_path: Path) -> None:
    """A run directory from before device identities were recorded stays resumable, with today's checks."""
    run_dir = tmp_path / "run"
    with attached_loop(str(tmp_path)) as device:
        killed_while_preconditioning(run_dir, device)
        manifest_path = run_dir / "manifest.json"
        manifest = json.loads(manifest_path.read_text())
        del manifest["device_identity"]
        manifest_path.write_text(json.dumps(manifest))
        done = run_cli("resume", str(run_dir), "--destructive")
        assert done.returncode == 0, done.stderr
        said = " ".join(done.stderr.split())
        assert (f"ptsbench: note: {run_dir} was started by a ptsbench that recorded no device identity: resume "
                f"could not fully check that {device} is the device the run started on") in said, said
        assert json.loads(manifest_path.read_text())["status"] == "done"


def test_a_sweep_resumes_only_on_its_own_device(tmp_path: Path) -> None:
    run_dir, other = tmp_path / "sweep", tmp_path / "other.img"
    subprocess.run(["truncate", "-s", str(LOOP_SIZE_BYTES), str(other)], check=True)
    with attached_loop(str(tmp_path)) as device:
        done = run_cli("sweep", device, "--rw", "randwrite", "--iodepth", "1,2", "--runtime", "0.2", "--destructive",
                       "--out", str(run_dir))
        assert done.returncode == 0, done.stderr
        reattach(device, other)
        before = digest(other)
        said = refused(run_dir)
        assert f"{device} is not the device this run started on: another file backs the loop device: {other}" in said
        assert digest(other) == before
        reattach(device, tmp_path / "loop.img")
        done = run_cli("resume", str(run_dir), "--destructive")
        assert done.returncode == 0 and "resume checked" not in done.stderr, done.stderr  # identity fully checked


def test_a_partition_is_named_by_its_disk_and_where_it_lies(tmp_path: Path) -> None:
    """A run on a partition: its disk's ids (here the loop device's backing file) and its number and start; another
    image with the same partition table is another device."""
    from ptsbench.device.identity import identity_changes, identity_record

    layout = "label: dos\nstart=2048, size=8192, type=83\n"
    other = tmp_path / "other.img"
    with attached_loop(str(tmp_path)) as device:
        for image in (tmp_path / "loop.img", other):
            subprocess.run(["truncate", "-s", str(LOOP_SIZE_BYTES), str(image)], check=True)
            subprocess.run(["sfdisk", "-q", str(image)], input=layout, text=True, check=True)
        subprocess.run(["partx", "-a", device], capture_output=True, check=False)  # may be done already
        partition = device + "p1"
        recorded = identity_record(partition)
        assert recorded["ids"] == {"loop/backing_file": str(tmp_path / "loop.img"), "partition": "1", "start": "2048"}
        assert identity_changes(partition, recorded) == []
        subprocess.run(["partx", "-d", device], capture_output=True, check=False)
        reattach(device, other)
        subprocess.run(["partx", "-a", device], capture_output=True, check=False)
        changes = identity_changes(partition, recorded)
        assert len(changes) == 1 and changes[0].startswith(f"another file backs the loop device: {other}"), changes
