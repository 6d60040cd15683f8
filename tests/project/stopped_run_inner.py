"""What tests/project/test_stopped_run.py starts in a pytest of its own and then stops (no test_ prefix: a run of the
suite does not collect it): a test that brings up what a test run may leave behind, says so, and waits to be stopped."""

import os
import subprocess
import time
from pathlib import Path

import pytest

from conftest import attached_loop, start_cli
from test_stopped_run import processes_of


@pytest.mark.root
def test_holds_a_server_a_mount_a_loop_device_and_fio(postgres_url: str, tmp_path: Path) -> None:
    """PostgreSQL (postgres_url), a tmpfs mounted in the test's folder, a loop device over a file there and
    `ptsbench run` with its fio on a file in the tmpfs; then PTSBENCH_STOP_READY's file is written, and the test
    waits to be stopped. Its own clean-up is what a Ctrl-C runs; a SIGTERM or a kill leaves it to tests/runwatch.py."""
    mount = tmp_path / "mnt"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)], check=True)
    try:
        with attached_loop(str(tmp_path)) as device:
            job = tmp_path / "long.fio"
            job.write_text("[w]\nrw=randwrite\nbs=4k\nsize=4m\ntime_based\nruntime=600\nrate_iops=200\n")
            start_cli("run", str(job), "--target", str(mount / "f.dat"), "--out", str(tmp_path / "run"))
            deadline = time.monotonic() + 120
            while not any(" fio " in f" {process} " or "/fio " in process
                          for process in processes_of(os.environ["PTSBENCH_TEST_RUN"], str(tmp_path))):
                assert time.monotonic() < deadline, "fio never started"
                time.sleep(0.1)
            Path(os.environ["PTSBENCH_STOP_READY"]).write_text(device)
            time.sleep(900)  # stopped long before
    finally:
        subprocess.run(["umount", str(mount)], check=False)


@pytest.mark.device_lab
def test_waits_in_a_device_lab(tmp_path: Path) -> None:
    """The device lab's QEMU guest (conftest.py starts it at collection for this test's marker) is up; then the
    test says so and waits to be stopped."""
    deadline = time.monotonic() + 900  # the lab may install QEMU and the guest kernel first
    while not any("qemu-system" in process for process in processes_of(os.environ["PTSBENCH_TEST_RUN"])):
        assert time.monotonic() < deadline, "the device lab's QEMU never started"
        time.sleep(0.5)
    Path(os.environ["PTSBENCH_STOP_READY"]).write_text("qemu")
    time.sleep(1800)  # stopped long before
