"""In use is the kernel's view, and a run's claim holds for the whole run (root, real loop devices, mkfs and mount).

The battery: five devices in use that are not mounted themselves (an ext4 external journal, the second member of a
btrfs RAID1, a loop device under a mounted loop device, a second loop device over a mounted image, a device another
process holds with O_EXCL), each reached by `run`, `sweep` and `pts`, for real and as --dry-run, with and without
--destructive: every one refused naming its holder, its image byte-identical afterwards; `--destructive
--allow-mounted` lets run and sweep through. The claim: a second ptsbench on a device or a file a run holds is
refused naming the first run's directory and writes nothing, a mount of the device fails meanwhile, and fio does not
inherit the claim.
"""

import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import attached_loop
from ptsbench.device.claim import claim_dir, other_run_reason
from test_guard_battery import JOB_HEAD, Device, _attach, _need, _run, ptsbench

pytestmark = [pytest.mark.root]

IMAGE_BYTES = 16 * 1024 * 1024
BTRFS_IMAGE_BYTES = 130 * 1024 * 1024  # mkfs.btrfs wants 128 MiB per device at least
CLAIM_WAIT_S = 120.0  # a generous bound for a run to reach its claim on a loaded machine
# a long, gentle write of one 64 KiB region (4 KiB at 50 IOPS): the first run, stopped by the test
HOLDING_JOB = "[w]\nioengine=psync\nrw=randwrite\nbs=4k\noffset={offset}\nsize=64k\ntime_based\nruntime=600\n" \
              "rate_iops=50\n"


@dataclass
class InUse:
    device: Device
    says: tuple[str, ...]  # what the refusal must name


def _image(folder: Path, name: str, size_bytes: int = IMAGE_BYTES) -> Path:
    image = folder / f"{name}.img"
    with open(image, "wb") as handle:
        handle.truncate(size_bytes)
    return image


def _loop(image: Path, cleanup: list[Callable[[], object]]) -> str:
    path = _attach(image)
    cleanup.append(lambda: _run("losetup", "-d", path))
    return path


def _mount(source: str, mount_point: Path, options: str, cleanup: list[Callable[[], object]]) -> None:
    mount_point.mkdir()
    done = _run("mount", "-o", options, source, str(mount_point))
    assert done.returncode == 0, done.stderr
    cleanup.append(lambda: _run("umount", str(mount_point)))


def _journal(folder: Path, cleanup: list[Callable[[], object]]) -> InUse:
    """mke2fs -O journal_dev J; mkfs.ext4 -J device=J F; mount F (read-only: the journal is claimed all the same)."""
    journal = _loop(_image(folder, "journal"), cleanup)
    filesystem = _loop(_image(folder, "journalled"), cleanup)
    assert _run("mke2fs", "-q", "-F", "-b", "4096", "-O", "journal_dev", journal).returncode == 0
    assert _run("mkfs.ext4", "-q", "-F", "-b", "4096", "-J", f"device={journal}", filesystem).returncode == 0
    mount_point = folder / "mnt-journalled"
    _mount(filesystem, mount_point, "ro", cleanup)
    return InUse(Device("ext4-journal", journal, folder / "journal.img", True),
                 (f"{journal} is the external journal of {filesystem}, mounted on {mount_point}",))


def _btrfs(folder: Path, cleanup: list[Callable[[], object]]) -> InUse:
    first = _loop(_image(folder, "btrfs-1", BTRFS_IMAGE_BYTES), cleanup)
    second = _loop(_image(folder, "btrfs-2", BTRFS_IMAGE_BYTES), cleanup)
    done = _run("mkfs.btrfs", "-q", "-f", "-d", "raid1", "-m", "raid1", first, second)
    assert done.returncode == 0, done.stderr
    mount_point = folder / "mnt-btrfs"
    _mount(first, mount_point, "ro", cleanup)
    return InUse(Device("btrfs-member", second, folder / "btrfs-2.img", True),
                 (f"{second} is a member of the btrfs filesystem", f"(with {first}), mounted on {mount_point}"))


def _under_loop(folder: Path, cleanup: list[Callable[[], object]]) -> InUse:
    """losetup of a loop device, whose filesystem is mounted: the lower device is not mounted itself."""
    lower = _loop(_image(folder, "lower"), cleanup)
    upper = _attach_device(lower, cleanup)
    assert _run("mkfs.ext4", "-q", "-F", upper).returncode == 0
    mount_point = folder / "mnt-upper"
    _mount(upper, mount_point, "ro,noload", cleanup)
    return InUse(Device("under-loop", lower, folder / "lower.img", True),
                 (f"{lower} is the backing device of {upper}", f"{upper} is mounted on {mount_point}"))


def _attach_device(device: str, cleanup: list[Callable[[], object]]) -> str:
    done = _run("losetup", "--find", "--show", device)
    assert done.returncode == 0, done.stderr
    path = done.stdout.strip()
    cleanup.insert(0, lambda: _run("losetup", "-d", path))  # before the device under it
    return path


def _second_loop(folder: Path, cleanup: list[Callable[[], object]]) -> InUse:
    image = _image(folder, "shared")
    first = _loop(image, cleanup)
    assert _run("mkfs.ext4", "-q", "-F", first).returncode == 0
    mount_point = folder / "mnt-shared"
    _mount(first, mount_point, "ro,noload", cleanup)
    second = _loop(image, cleanup)
    return InUse(Device("second-loop", second, image, True),
                 (f"{second} shares its backing file {image} with {first}", f"{first} is mounted on {mount_point}"))


def _exclusive_holder(folder: Path, cleanup: list[Callable[[], object]]) -> InUse:
    """A child process that holds the device with O_EXCL, as a program of the user's might."""
    device = _loop(_image(folder, "held"), cleanup)
    child = subprocess.Popen([sys.executable, "-c", "import os, sys, time\n"
                              "os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL)\nprint('held', flush=True)\n"
                              "time.sleep(3600)\n", device], stdout=subprocess.PIPE, text=True)
    cleanup.insert(0, lambda: (child.kill(), child.wait()))
    assert child.stdout is not None and child.stdout.readline() == "held\n"
    return InUse(Device("exclusive-holder", device, folder / "held.img", True),
                 (f"{device} is held open exclusively by another program (pid {child.pid} (python",))


@pytest.fixture(scope="module")
def in_use(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[InUse]]:
    _need("losetup", "mke2fs", "mkfs.ext4", "mkfs.btrfs", "mount")
    folder = tmp_path_factory.mktemp("inuse")
    cleanup: list[Callable[[], object]] = []
    try:
        made = [make(folder, cleanup) for make in (_journal, _btrfs, _under_loop, _second_loop, _exclusive_holder)]
        for item in made:
            item.device.digest = item.device.checksum()
        yield made
    finally:
        for step in reversed(cleanup):
            step()


def _routes(device: str, job: str) -> dict[str, list[str]]:
    return {
        "run": ["run", job, "--target", device],
        "sweep": ["sweep", device, "--rw", "randwrite", "--iodepth", "1", "--runtime", "1"],
        "pts": ["pts", device, "--profile", "demo", "--tests", "iops"],
    }


def test_devices_in_use_are_refused_naming_the_holder(in_use: list[InUse], tmp_path: Path) -> None:
    job = tmp_path / "w.fio"
    job.write_text(JOB_HEAD + "[w]\n")
    wrong, cases = [], 0
    for item in in_use:
        device = item.device
        for route, argv in _routes(device.path, str(job)).items():
            for flags in ([], ["--destructive"]):
                for dry_run in ([], ["--dry-run"]):
                    cases += 1
                    code, out, err = ptsbench(*argv, *flags, *dry_run, "--out", str(tmp_path / "out"))
                    label = f"{device.kind} via {route} {' '.join(flags + dry_run) or '(no flags)'}"
                    refused = code != 0 and err.count("ptsbench: error:") == 1 and "Traceback" not in err
                    missing = [words for words in item.says if words not in err]
                    if not refused or missing or (dry_run and "# guard: the real run would be refused" not in out):
                        wrong.append(f"{label}: exit {code}, not named: {missing}: {err.strip()[-400:]}")
                    if refused and "pts never does" not in err:  # the hint must not offer pts an option it lacks
                        wrong.append(f"{label}: the hint does not say which commands take --allow-mounted: {err}")
                    if device.checksum() != device.digest:
                        wrong.append(f"{label}: the device changed")
                    if (tmp_path / "out").exists():
                        wrong.append(f"{label}: a run directory was made")
        for route in ("run", "sweep"):  # knowingly: the guard lets it through (a dry run: nothing is written)
            argv = _routes(device.path, str(job))[route]
            code, out, err = ptsbench(*argv, "--destructive", "--allow-mounted", "--dry-run")
            if code != 0 or "# guard: the real run would start" not in out:
                wrong.append(f"{device.kind} via {route} --destructive --allow-mounted: refused: {err[-300:]}")
    assert not wrong, f"{len(wrong)} of {cases} cases wrong:\n" + "\n".join(wrong)
    assert cases == 60
    for item in in_use:
        assert item.device.checksum() == item.device.digest, item.device.kind


def _digest_outside(image: Path, device: str, skip: tuple[int, int]) -> str:
    """md5 of the image without the byte range `skip` (start, length) the first run writes, after flushing what
    was written through the device node's page cache."""
    descriptor = os.open(device, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    return _file_digest_outside(image, skip)


def _file_digest_outside(path: Path, skip: tuple[int, int]) -> str:
    data = path.read_bytes()
    return hashlib.md5(data[:skip[0]] + data[skip[0] + skip[1]:]).hexdigest()


def _start_holding_run(job: Path, target: str, run_dir: Path) -> "subprocess.Popen[str]":
    """The first ptsbench: a long, gentle write to one region of `target`; returns once its claim is taken."""
    first = subprocess.Popen([sys.executable, "-m", "ptsbench", "run", str(job), "--target", target, "--destructive",
                              "--out", str(run_dir)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + CLAIM_WAIT_S
    while other_run_reason(target) is None:
        if first.poll() is not None or time.monotonic() > deadline:
            first.kill()
            out, err = first.communicate()
            pytest.fail(f"the first run never held its claim: exit {first.returncode} {err[-500:]}")
        time.sleep(0.1)
    return first


def _stop(first: "subprocess.Popen[str]") -> None:
    first.send_signal(signal.SIGINT)  # as Ctrl-C: it stores what it has and exits
    first.communicate(timeout=120)


def _fio_fds(pid: int) -> list[str]:
    """What the fio processes under `pid` have open (readlink of /proc/PID/fd/*), once one runs."""
    deadline = time.monotonic() + CLAIM_WAIT_S
    while time.monotonic() < deadline:
        parents, names = {}, {}
        for stat_path in Path("/proc").glob("[0-9]*/stat"):
            try:
                parents[int(stat_path.parent.name)] = int(stat_path.read_text().rpartition(")")[2].split()[1])
                names[int(stat_path.parent.name)] = (stat_path.parent / "comm").read_text().strip()
            except (OSError, ValueError, IndexError):
                continue
        below = {pid}
        for _ in range(5):  # fio's own workers are its children
            below |= {child for child, parent in parents.items() if parent in below}
        for process in below:
            if names.get(process) == "fio":
                try:
                    return [os.readlink(fd) for fd in Path(f"/proc/{process}/fd").iterdir()]
                except OSError:
                    continue
        time.sleep(0.1)
    raise AssertionError("no fio ran under the first ptsbench")


def _refused_by_claim(argv: list[str], run_dir: Path) -> str | None:
    """None when the command is refused naming the first run's directory, else what went wrong."""
    code, _out, err = ptsbench(*argv)
    if code != 0 and "another ptsbench run holds" in err and f"run directory {run_dir}" in err \
            and "Traceback" not in err:
        return None
    return f"{' '.join(argv)}: exit {code}: {err.strip()[-400:]}"


def test_a_second_ptsbench_and_a_mount_on_a_claimed_device_are_refused(tmp_path: Path) -> None:
    _need("losetup", "mkfs.ext4", "mount")
    with attached_loop(str(tmp_path)) as device:
        image = tmp_path / "loop.img"
        sweep_dir = tmp_path / "earlier-sweep"  # a stored sweep on the device, for `resume`
        code, _out, err = ptsbench("sweep", device, "--rw", "randwrite", "--iodepth", "1", "--runtime", "0.2",
                                   "--destructive", "--out", str(sweep_dir))
        assert code == 0, err
        assert _run("mkfs.ext4", "-q", "-F", device).returncode == 0
        offset = 60 * 1024 * 1024  # past everything a fresh 64 MiB ext4 uses: it still mounts afterwards
        job = tmp_path / "hold.fio"
        job.write_text(HOLDING_JOB.format(offset=offset))
        other = tmp_path / "other.fio"
        other.write_text(JOB_HEAD + "[w]\n")
        first_dir = tmp_path / "first"
        first = _start_holding_run(job, device, first_dir)
        try:
            before = _digest_outside(image, device, (offset, 65536))
            fio_fds = _fio_fds(first.pid)
            attempts = [
                ["run", str(other), "--target", device, "--destructive", "--out", str(tmp_path / "r")],
                ["run", str(other), "--target", device, "--destructive", "--allow-mounted", "--out",
                 str(tmp_path / "r")],
                ["run", str(other), "--target", device, "--destructive", "--dry-run"],
                ["sweep", device, "--rw", "randwrite", "--iodepth", "1", "--runtime", "1", "--destructive",
                 "--allow-mounted", "--out", str(tmp_path / "s")],
                ["pts", device, "--profile", "demo", "--tests", "iops", "--destructive", "--out", str(tmp_path / "p")],
                ["pts", device, "--profile", "demo", "--tests", "iops", "--destructive", "--dry-run"],
                ["resume", str(sweep_dir), "--destructive"],
            ]
            wrong = [problem for argv in attempts if (problem := _refused_by_claim(argv, first_dir))]
            mount_point = tmp_path / "mnt"
            mount_point.mkdir()
            mounted = _run("mount", "-o", "ro,noload", device, str(mount_point))
            if mounted.returncode == 0:
                _run("umount", str(mount_point))
            after = _digest_outside(image, device, (offset, 65536))
        finally:
            _stop(first)
        assert not wrong, "\n".join(wrong)
        assert mounted.returncode != 0, "the device was mounted while a run held it"
        assert before == after, "the second ptsbench wrote to the device"
        assert not any((tmp_path / name).exists() for name in "rsp"), "a refused run made its run directory"
        assert fio_fds and not any(str(claim_dir()) in path for path in fio_fds), fio_fds
        assert other_run_reason(device) is None  # given back at the end
        remounted = _run("mount", "-o", "ro,noload", device, str(mount_point))  # refused only while held
        assert remounted.returncode == 0, remounted.stderr
        _run("umount", str(mount_point))


def test_a_second_ptsbench_on_a_claimed_file_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "data.bin"
    data.write_bytes(bytes(range(256)) * 4096)  # 1 MiB the user cares about
    alias = tmp_path / "alias.bin"
    alias.symlink_to(data)
    job = tmp_path / "hold.fio"
    job.write_text(HOLDING_JOB.format(offset=0))
    other = tmp_path / "other.fio"
    other.write_text("[w]\nioengine=psync\nrw=randwrite\nbs=4k\noffset=512k\nsize=64k\n")
    first_dir = tmp_path / "first"
    first = _start_holding_run(job, str(data), first_dir)
    try:
        before = _file_digest_outside(data, (0, 65536))
        attempts = [
            ["run", str(other), "--target", str(data), "--destructive", "--out", str(tmp_path / "r")],
            ["run", str(other), "--target", str(alias), "--destructive", "--allow-mounted", "--out",
             str(tmp_path / "r")],
            ["sweep", str(data), "--rw", "randwrite", "--iodepth", "1", "--runtime", "1", "--destructive",
             "--out", str(tmp_path / "s")],
            ["pts", str(alias), "--profile", "demo", "--tests", "iops", "--destructive", "--out", str(tmp_path / "p")],
            ["pts", str(data), "--profile", "demo", "--tests", "iops", "--destructive", "--dry-run"],
        ]
        wrong = [problem for argv in attempts if (problem := _refused_by_claim(argv, first_dir))]
        after = _file_digest_outside(data, (0, 65536))
    finally:
        _stop(first)
    assert not wrong, "\n".join(wrong)
    assert before == after and data.stat().st_size == 1024 * 1024, "the second ptsbench wrote to the file"
    assert not any((tmp_path / name).exists() for name in "rsp"), "a refused run made its run directory"
    assert other_run_reason(str(data)) is None
