"""resolve_target: files (existing or not), directories, block devices (loop, root only), and bad paths."""

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import LOOP_SIZE_BYTES, attached_loop
from ptsbench.device.target import TESTFILE_NAME, block_sysfs_dir, resolve_target
from ptsbench.errors import TargetError


def test_missing_file_in_existing_directory(tmp_path: Path) -> None:
    target = resolve_target(str(tmp_path / "new.dat"))
    assert (target.path, target.kind, target.size_bytes) == (str(tmp_path / "new.dat"), "file", None)
    assert not (tmp_path / "new.dat").exists()  # creation is left to fio


def test_missing_file_reports_requested_size(tmp_path: Path) -> None:
    assert resolve_target(str(tmp_path / "new.dat"), 1 << 20).size_bytes == 1 << 20


def test_existing_file_size_and_growth(tmp_path: Path) -> None:
    path = tmp_path / "old.dat"
    path.write_bytes(b"x" * 8192)
    assert resolve_target(str(path)).size_bytes == 8192
    assert resolve_target(str(path), 4096).size_bytes == 8192  # larger than asked: keep its size
    assert resolve_target(str(path), 65536).size_bytes == 65536  # fio will extend it


def test_directory_becomes_testfile(tmp_path: Path) -> None:
    target = resolve_target(str(tmp_path), 4096)
    assert target.path == str(tmp_path / TESTFILE_NAME)
    assert (target.kind, target.size_bytes, target.requested) == ("file", 4096, str(tmp_path))


def test_relative_path_becomes_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    target = resolve_target("rel.dat")
    assert target.path == str(tmp_path / "rel.dat")
    assert target.requested == "rel.dat"


def test_missing_parent_directory(tmp_path: Path) -> None:
    with pytest.raises(TargetError) as caught:
        resolve_target(str(tmp_path / "nope" / "f.dat"))
    assert "does not exist" in caught.value.message
    assert caught.value.hint


def test_character_device_is_rejected() -> None:
    with pytest.raises(TargetError) as caught:
        resolve_target("/dev/null")
    assert "not a file, directory or block device" in caught.value.message


@pytest.mark.root
@pytest.mark.parametrize("name", ["ng0n1", "sg3"])
def test_a_generic_character_device_as_target_says_where_it_works(tmp_path: Path, name: str) -> None:
    """Named like an NVMe / SCSI generic device (a real character node, the lab checks a real /dev/ng0n1)."""
    if os.geteuid() != 0:
        pytest.skip("mknod needs root")
    node = tmp_path / name
    os.mknod(node, 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    with pytest.raises(TargetError) as raised:
        resolve_target(str(node))
    assert "generic character device" in raised.value.message and "name it in the job file" in raised.value.hint
    assert "/dev/nvme0n1" in raised.value.hint


def test_empty_path_is_rejected() -> None:
    with pytest.raises(TargetError):
        resolve_target("  ")


def test_unwritable_directory_for_unprivileged_user() -> None:
    """Root ignores permissions, so this runs the check as user 'nobody' in a child process."""
    if os.geteuid() != 0:
        pytest.skip("needs root to switch to an unprivileged user")
    with tempfile.TemporaryDirectory() as top:
        os.chmod(top, 0o755)
        locked = os.path.join(top, "locked")
        os.mkdir(locked, 0o555)
        code = (
            "from ptsbench.device import resolve_target\n"
            "from ptsbench.errors import TargetError\n"
            "try:\n"
            f"    resolve_target({os.path.join(locked, 'f.dat')!r})\n"
            "except TargetError as error:\n"
            "    print('TargetError', error.message)\n"
        )
        src = str(Path(__file__).resolve().parents[2] / "src")
        python = shutil.which("python3", path="/usr/bin:/bin") or sys.executable  # the venv may be root-only
        try:
            done = subprocess.run([python, "-c", code], user=65534, capture_output=True, text=True,
                                  env={"PYTHONPATH": src, "PATH": os.environ.get("PATH", "")}, check=False)
        except OSError as error:
            pytest.skip(f"cannot run as nobody: {error}")
        if done.returncode != 0:
            pytest.skip(f"child could not run as nobody: {done.stderr.strip()[-200:]}")
        assert done.stdout.startswith("TargetError cannot create a file in this directory")


@pytest.mark.root
def test_loop_block_device(tmp_path: Path) -> None:
    with attached_loop(str(tmp_path)) as device:
        target = resolve_target(device)
        assert (target.path, target.kind, target.size_bytes) == (device, "block", LOOP_SIZE_BYTES)
        assert block_sysfs_dir(device) is not None


def test_block_sysfs_dir_of_a_file_is_none(tmp_path: Path) -> None:
    assert block_sysfs_dir(str(tmp_path)) is None
