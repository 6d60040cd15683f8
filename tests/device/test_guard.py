"""Destructive-write guard on real loop devices (root only; skipped cleanly otherwise)."""

import errno
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import LOOP_SIZE_BYTES, run_cli
from ptsbench.device import target as target_module
from ptsbench.device.claim import claim_keys, claim_targets
from ptsbench.device.guard import block_device_signatures, check_device_write_allowed, check_write_allowed
from ptsbench.device.inuse import in_use_reasons, mounted_reasons
from ptsbench.device.target import Target, block_device_of_char, resolve_target
from ptsbench.errors import TargetError, UnsafeTargetError


def _mkfs_ext4(device: str) -> None:
    if shutil.which("mkfs.ext4") is None:
        pytest.skip("mkfs.ext4 not installed")
    subprocess.run(["mkfs.ext4", "-q", "-F", device], check=True, capture_output=True)


def test_files_are_always_allowed(tmp_path: object) -> None:
    target = resolve_target(os.path.join(str(tmp_path), "f.dat"), 4096)
    check_write_allowed(target, destructive=False)


@pytest.mark.root
def test_clean_loop_needs_destructive(loop_device: str) -> None:
    target = resolve_target(loop_device)
    assert block_device_signatures(loop_device) == []
    with pytest.raises(UnsafeTargetError) as caught:
        check_write_allowed(target, destructive=False)
    assert "--destructive" in caught.value.hint
    check_write_allowed(target, destructive=True)


@pytest.mark.root
def test_ext4_loop_refused_without_destructive(loop_device: str) -> None:
    _mkfs_ext4(loop_device)
    reasons = block_device_signatures(loop_device)
    assert any("ext4" in reason for reason in reasons)
    with pytest.raises(UnsafeTargetError) as caught:
        check_write_allowed(resolve_target(loop_device), destructive=False)
    assert "ext4" in caught.value.message
    check_write_allowed(resolve_target(loop_device), destructive=True)


def _write_mbr(device: str, first_lba: int = 2048, sectors: int = 16384) -> None:
    """Write a one-partition DOS (MBR) table: a real on-disk signature, no partitioning tool needed."""
    entry = bytes([0, 0, 0, 0, 0x83, 0, 0, 0]) + first_lba.to_bytes(4, "little")
    entry += sectors.to_bytes(4, "little")
    sector = bytearray(512)
    sector[446:462] = entry
    sector[510:512] = b"\x55\xaa"
    with open(device, "r+b") as handle:
        handle.write(sector)
        os.fsync(handle.fileno())


@pytest.mark.root
def test_partition_table_and_partitions_reported(loop_device: str) -> None:
    _write_mbr(loop_device)
    subprocess.run(["partx", "-a", loop_device], capture_output=True, check=False)  # may be done already
    reasons = block_device_signatures(loop_device)
    assert any("dos" in reason for reason in reasons)
    if os.path.exists(loop_device + "p1"):
        assert f"has partitions: {os.path.basename(loop_device)}p1" in reasons
    with pytest.raises(UnsafeTargetError) as caught:
        check_write_allowed(resolve_target(loop_device), destructive=False)
    assert "dos" in caught.value.message


@pytest.mark.root
def test_mounted_loop_refused_even_with_destructive(loop_device: str) -> None:
    _mkfs_ext4(loop_device)
    with tempfile.TemporaryDirectory() as mount_point:
        mount = ["mount", loop_device, mount_point]
        done = subprocess.run(mount, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            pytest.skip(f"mount failed: {done.stderr.strip()}")
        try:
            target = resolve_target(loop_device)
            assert mounted_reasons(loop_device) == [f"{loop_device} is mounted on {mount_point}"]
            for destructive in (False, True):
                with pytest.raises(UnsafeTargetError) as caught:
                    check_write_allowed(target, destructive=destructive)
                assert "mounted" in caught.value.message
            check_write_allowed(target, destructive=True, allow_mounted=True)
        finally:
            subprocess.run(["umount", mount_point], capture_output=True, check=False)
    assert mounted_reasons(loop_device) == []


@pytest.mark.root
def test_holder_reported(loop_device: str) -> None:
    if shutil.which("dmsetup") is None:
        pytest.skip("dmsetup not installed")
    name = f"ptsbench-test-{os.getpid()}"
    table = f"0 {LOOP_SIZE_BYTES // 512} linear {loop_device} 0"
    done = subprocess.run(["dmsetup", "create", name, "--table", table], capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        pytest.skip(f"dmsetup failed: {done.stderr.strip()}")
    try:
        reasons = in_use_reasons(loop_device)
        assert any("held by dm-" in reason for reason in reasons)
        with pytest.raises(UnsafeTargetError, match="held by"):
            check_write_allowed(resolve_target(loop_device), destructive=True)
    finally:
        subprocess.run(["dmsetup", "remove", name], capture_output=True, check=False)


def test_unknown_block_kind_target_is_checked_by_path() -> None:
    # A Target built by hand for a path that is no block device: no signatures, still needs --destructive.
    target = Target(path="/nonexistent/dev", kind="block", size_bytes=None, requested="/nonexistent/dev")
    assert block_device_signatures(target.path) == []
    with pytest.raises(UnsafeTargetError):
        check_write_allowed(target, destructive=False)


@pytest.mark.root
def test_job_files_cannot_slip_a_device_past_the_guard(tmp_path: Path, loop_device: str) -> None:
    from ptsbench.cases.checks import check_cases
    from ptsbench.cases.plan import Overrides, plan_cases

    folder, name = os.path.split(loop_device)
    texts = [
        f"[w]\nrw=write:4k\nsize=1m\nfilename={loop_device}\n",  # rw with an offset modifier still writes
        f"[w]\nrw=randwrite\nsize=1m\ndirectory={folder}\nfilename={name}\n",  # fio joins directory and filename
        # a directory list: fio's second clone makes its file name in the second folder
        f"[w]\nrw=randwrite\nsize=1m\ndirectory=/tmp:{folder}\nfilename_format={name}\nnumjobs=2\n",
        f"[{name}]\nrw=randwrite\nsize=1m\nfilename_format={folder}/$jobname\n",  # fio names the file itself
    ]
    for number, text in enumerate(texts):
        job = tmp_path / f"{number}.fio"
        job.write_text(text)
        cases = plan_cases([job], [], Overrides(), tmp_path / "run", 1000)
        with pytest.raises(UnsafeTargetError, match="--destructive"):
            check_cases(cases, destructive=False)


@pytest.mark.root
def test_active_swap_is_in_use_even_with_destructive(loop_device: str) -> None:
    if shutil.which("mkswap") is None or shutil.which("swapon") is None:
        pytest.skip("mkswap/swapon not installed")
    subprocess.run(["mkswap", "-q", loop_device], check=True, capture_output=True)
    done = subprocess.run(["swapon", loop_device], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"swapon failed: {done.stderr.strip()}")
    try:
        with pytest.raises(UnsafeTargetError, match="active swap") as caught:
            check_write_allowed(resolve_target(loop_device), destructive=True)
        assert "--allow-mounted" in caught.value.hint
        check_write_allowed(resolve_target(loop_device), destructive=True, allow_mounted=True)
    finally:
        subprocess.run(["swapoff", loop_device], capture_output=True, check=False)


@pytest.mark.root
def test_character_devices_in_job_files_need_destructive(tmp_path: Path) -> None:
    """A generic character device (/dev/ngXnY, /dev/sgN) writes to a disk with raw commands; one whose disk ptsbench
    cannot find is refused without --destructive. Memory sinks (/dev/null) store nothing and are allowed."""
    node = tmp_path / "ng9n1"  # an NVMe generic name with no /dev/nvme9n1 behind it
    os.mknod(node, 0o600 | stat.S_IFCHR, os.makedev(4, 64))  # a tty's numbers: nothing is written in this test
    assert block_device_of_char(str(node)) is None
    job = tmp_path / "raw.fio"
    job.write_text(f"[raw]\nrw=randwrite\nbs=4k\nsize=1m\nfilename={node}\n")
    refused = run_cli("run", str(job), "--out", str(tmp_path / "run"))
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert f"refusing to write to {node}: a character device" in refused.stderr
    assert not (tmp_path / "run" / "cases").exists()  # refused before any IO
    check_device_write_allowed("/dev/null", destructive=False)


@pytest.mark.root
def test_character_devices_that_are_no_storage_are_refused_even_with_destructive(tmp_path: Path) -> None:
    """--destructive is for overwriting disks: a character node (named like an NVMe generic device) carrying a
    terminal's number, or one no driver has, is refused with it too, before any IO; only --destructive
    --allow-mounted (the user checked it) lets it through."""
    tty = tmp_path / "ng0n1"
    os.mknod(tty, 0o600 | stat.S_IFCHR, os.makedev(4, 64))  # the first serial port's numbers: nothing is written
    nobody = tmp_path / "ng1n1"
    os.mknod(nobody, 0o600 | stat.S_IFCHR, os.makedev(60, 0))  # major 60: local/experimental, no driver
    for node, what in ((tty, "a character device of the kernel's tty class, not storage"),
                       (nobody, "a character device whose number no driver of this kernel has")):
        with pytest.raises(UnsafeTargetError, match=f"refusing to write to {node}: {what}") as caught:
            check_device_write_allowed(str(node), destructive=True)
        assert "--destructive --allow-mounted" in caught.value.hint
        check_device_write_allowed(str(node), destructive=True, allow_mounted=True)
    job = tmp_path / "raw.fio"
    job.write_text(f"[raw]\nrw=write\nbs=4k\nsize=64k\nfilename={nobody}\n")
    refused = run_cli("run", str(job), "--destructive", "--out", str(tmp_path / "run"))
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert f"refusing to write to {nobody}: a character device whose number" in refused.stderr
    assert not (tmp_path / "run" / "cases").exists()


@pytest.mark.root
def test_a_generic_device_whose_disk_has_no_node_here_is_refused(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """An NVMe generic device whose namespace's block device has no node in /dev (a container given only
    /dev/ngXnY) cannot be checked for mounts: refused with --destructive, not written as an unknown device. No NVMe
    exists here: a sysfs folder made in the test gives a character node the kernel's layout of one."""
    node = tmp_path / "ng97n1"
    os.mknod(node, 0o600 | stat.S_IFCHR, os.makedev(60, 1))
    controller = tmp_path / "devices" / "nvme" / "nvme97"
    for name in ("ng97n1", "nvme97n1", "nvme97n2"):
        (controller / name).mkdir(parents=True)
    sysfs = tmp_path / "sys-dev-char"
    sysfs.mkdir()
    (sysfs / "60:1").symlink_to(controller / "ng97n1")
    monkeypatch.setattr(target_module, "SYSFS_DEV_CHAR", str(sysfs))
    assert block_device_of_char(str(node)) is None and not os.path.exists("/dev/nvme97n1")
    with pytest.raises(UnsafeTargetError, match=f"refusing to write to {node}: it reaches the disk nvme97n1, which "
                       "has no device node here to check"):
        check_device_write_allowed(str(node), destructive=True)


@pytest.mark.root
def test_scsi_generic_device_is_guarded_as_its_disk(tmp_path: Path, loop_device: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """/dev/sgN reaches the disk sysfs names under /sys/dev/char/MAJ:MIN/device/block/. No SCSI device exists here,
    so a sysfs folder made in the test points a character node at a real loop device carrying ext4."""
    _mkfs_ext4(loop_device)
    node = tmp_path / "sg7"
    os.mknod(node, 0o600 | stat.S_IFCHR, os.makedev(4, 65))
    sysfs = tmp_path / "sys-dev-char"
    (sysfs / "4:65" / "device" / "block" / os.path.basename(loop_device)).mkdir(parents=True)
    monkeypatch.setattr(target_module, "SYSFS_DEV_CHAR", str(sysfs))
    assert block_device_of_char(str(node)) == loop_device
    with pytest.raises(UnsafeTargetError, match=f"refusing to write to {loop_device}: carries a ext4 signature"):
        check_device_write_allowed(str(node), destructive=False)
    check_device_write_allowed(str(node), destructive=True)
    # the claim of a run through the character node holds the disk itself: same record, and O_EXCL on the disk
    assert claim_keys(str(node)) == claim_keys(loop_device)
    with claim_targets([str(node)], tmp_path / "run"):
        with pytest.raises(OSError) as held:
            os.close(os.open(loop_device, os.O_RDONLY | os.O_EXCL))
        assert held.value.errno == errno.EBUSY
    os.close(os.open(loop_device, os.O_RDONLY | os.O_EXCL))  # released with the claim


def test_a_typo_is_an_error_not_a_new_file(tmp_path: Path) -> None:
    """A missing /dev name is refused everywhere; a missing file is made only when a size says so (a folder target
    makes its test file inside, as asked)."""
    job = tmp_path / "w.fio"
    job.write_text("[w]\nioengine=psync\nrw=write\n")
    refused = [
        (["quick", str(tmp_path / "typo.dat"), "--dry-run"], "give --size"),
        (["run", str(job), "--target", str(tmp_path / "typo.dat"), "--dry-run"], "give --size"),
        (["pts", str(tmp_path / "typo.dat"), "--profile", "demo", "--dry-run"], "give --size"),
        (["info", "/dev/nvme9n1"], "no such device"),
        (["quick", "/dev/nvme9n1", "--size", "1M", "--dry-run"], "no such device"),
        (["run", str(job), "--target", "/dev/nvme9n1", "--size", "1M", "--dry-run"], "no such device"),
    ]
    for argv, words in refused:
        done = run_cli(*argv, "--out", str(tmp_path / "out")) if argv[0] != "info" else run_cli(*argv)
        assert done.returncode != 0 and done.stderr.count("ptsbench: error:") == 1 and words in done.stderr, argv
        assert "Traceback" not in done.stderr and not os.path.exists("/dev/nvme9n1")
    head = "it names a path of the NVMe multipath namespace /dev/nvme9n3, which the kernel hides"
    path_job = tmp_path / "path.fio"
    path_job.write_text("[w]\nioengine=psync\nrw=randwrite\nsize=1M\nfilename=/dev/nvme9c2n3\n")
    for argv in (["pts", "/dev/nvme9c2n3", "--destructive", "--dry-run"], ["pts", "/dev/nvme9c2n3", "--destructive"],
                 ["info", "/dev/nvme9c2n3"], ["run", str(path_job), "--destructive"],
                 ["quick", "/dev/nvme9c2n3", "--destructive", "--dry-run"]):
        # a hidden path of a multipath head (issue 39): named with its head, never "no such device"
        done = run_cli(*argv, "--out", str(tmp_path / "out")) if argv[0] != "info" else run_cli(*argv)
        assert done.returncode != 0 and "Traceback" not in done.stderr, (argv, done.stderr)
        assert head in done.stderr + done.stdout and "no such device" not in done.stderr, (argv, done.stderr)
        assert done.stderr.count("ptsbench: error:") == 1 and not os.path.exists("/dev/nvme9c2n3"), argv
    for argv in (["quick", str(tmp_path), "--dry-run"], ["quick", str(tmp_path / "new.dat"), "--size", "1M",
                                                          "--dry-run"]):
        done = run_cli(*argv, "--out", str(tmp_path / "out"))
        assert done.returncode == 0 and "# guard: the real run would start" in done.stdout, done.stderr


def test_hosts_that_are_this_machine_are_judged_locally_others_by_path() -> None:
    from ptsbench.hosts.hostlist import Host, is_this_machine
    from ptsbench.hosts.preflight import check_remote_path

    assert is_this_machine(Host("127.0.0.1")) and is_this_machine(Host("localhost"))
    remote = [Host("192.0.2.1")]  # TEST-NET-1: never an address of this machine
    assert not is_this_machine(remote[0])
    with pytest.raises(UnsafeTargetError, match="--destructive"):
        check_remote_path("/dev/sdz", False, remote, "the test")
    check_remote_path("/dev/sdz", True, remote, "the test")  # remote devices: the user checked them
    with pytest.raises(UnsafeTargetError, match="kernel"):
        check_remote_path("/sys/power/state", True, remote, "the test")
    with pytest.raises(TargetError, match="no such device"):  # this machine: the local guard, a typo is an error
        check_remote_path("/dev/nvme9n1", True, [Host("127.0.0.1")], "the test")
