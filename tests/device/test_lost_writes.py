"""Writes that never reached the device fail their case (device/writeback.py): a job without direct=1 writes into
the page cache, fio counts every write done, and the kernel's write-back to a failing device is lost. A device that
fails writes on demand is the device lab's (QEMU's blkdebug under an NVMe namespace:
tests/device_lab/device_lab_guest.py, check lost-writes-nvme). Here: a loop device over a sparse file on a tmpfs too
small for what is written (the loop driver's writes to it fail, so the kernel's write-back to the loop device fails),
and a healthy loop device."""

import contextlib
import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import attached_loop, run_cli

pytestmark = pytest.mark.root


def result(run_dir: Path) -> dict[str, object]:
    (path,) = run_dir.glob("cases/*/result.json")
    return dict(json.loads(path.read_text()))


def test_a_buffered_job_on_a_healthy_device_is_ok(tmp_path: Path, loop_device: str) -> None:
    """The sync after fio fails nothing that reached its device (a loop device over a file)."""
    job = tmp_path / "buffered.fio"
    job.write_text("[buffered]\nrw=randwrite\nbs=4k\nsize=4m\n")
    done = run_cli("run", str(job), "--target", loop_device, "--destructive", "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    assert result(tmp_path / "run")["status"] == "ok"


@contextlib.contextmanager
def loop_over_small_tmpfs(folder: Path, size: str = "4m") -> Iterator[str]:
    """A 64 MiB loop device whose backing file lives on a tmpfs of `size`: what does not fit cannot be stored."""
    folder.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], check=True)
    try:
        with attached_loop(str(folder)) as device:
            yield device
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_buffered_job_whose_writes_were_lost_is_failed_with_the_kernel_s_words(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (tmpfs, loop devices)")
    with loop_over_small_tmpfs(tmp_path / "small") as device:
        job = tmp_path / "buffered.fio"
        job.write_text("[buffered]\nrw=write\nbs=64k\nsize=32m\n")
        done = run_cli("run", str(job), "--target", device, "--destructive", "--out", str(tmp_path / "run"))
    assert done.returncode != 0
    found = result(tmp_path / "run")
    assert found["status"] == "failed"
    message = str(found["message"])
    assert f"writes to {device} never reached the device: syncing it after fio gave EIO" in message, message
    assert "direct=1" in message
    kernel = message.partition("the kernel: ")[2]
    assert os.path.basename(device) in kernel, message  # the kernel's own lines about that device
    assert "never reached the device" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr



def test_a_file_whose_filesystem_lost_its_writes_is_failed(tmp_path: Path) -> None:
    """A file on ext4 on a loop device, laid out and synced; then the loop device's backing store has no room left
    (the blocks of its backing file punched out, then the tmpfs under it filled), so the buffered writes into the
    file land in the page cache and their write-back fails."""
    if os.geteuid() != 0:
        pytest.skip("needs root (tmpfs, loop devices, mount)")
    small = tmp_path / "small"
    with loop_over_small_tmpfs(small, size="32m") as device:
        mount = tmp_path / "mnt"
        mount.mkdir()
        # no lazy init: ext4's background zeroing of inode tables would write to the backing store at any time
        subprocess.run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", device],
                       check=True, capture_output=True)
        # errors=continue: ext4 must not turn read-only at the first failed write-back (on a busy host it may come
        # before fio's writes), so that fio's writes land in the page cache and are lost there
        subprocess.run(["mount", "-o", "errors=continue", device, str(mount)], check=True)
        try:
            data = mount / "data.bin"
            data.write_bytes(b"\1" * (8 << 20))
            os.sync()
            subprocess.run(["fallocate", "--punch-hole", "--offset", "0", "--length", str(64 << 20),
                            str(small / "loop.img")], check=True)
            filler = small / "filler"
            # the rest of the tmpfs; full already (ENOSPC at open) when ext4 wrote to it since the punch
            with contextlib.suppress(OSError), filler.open("wb") as handle:
                while True:
                    handle.write(b"\0" * (1 << 20))
                    handle.flush()
            job = tmp_path / "file.fio"
            job.write_text(f"[file]\nfilename={data}\nrw=write\nbs=64k\nsize=8m\n")
            done = run_cli("run", str(job), "--destructive", "--out", str(tmp_path / "run"))
        finally:
            subprocess.run(["umount", "-l", str(mount)], capture_output=True)
    assert done.returncode != 0
    found = result(tmp_path / "run")
    assert found["status"] == "failed"
    message = str(found["message"])
    # the filesystem passes on the loop device's error: no space (ENOSPC), or EIO
    assert re.search(f"writes to {re.escape(str(data))} never reached the device: syncing it after fio gave "
                     r"(ENOSPC|EIO) \(", message), message
    assert os.path.basename(device) in message.partition("the kernel: ")[2], message
