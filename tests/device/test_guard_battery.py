"""The destructive-write guard battery: nine kinds of device holding data, each reached every way a job can name it,
with and without --destructive and --allow-mounted (root, loop devices).

A case is one ptsbench command run in this process exactly as the CLI runs it. Refused cases run for real (no
--dry-run): the device's backing file is checksummed after each and must be byte-identical. Cases the guard must
accept run as --dry-run (its last line is the guard's verdict, from the same check as a real run), and two of them
also for real, which proves both that an accepted write reaches the device (its checksum changes) and that --target
keeps a job's own device out of the run (its checksum does not). So the battery fails on a false accept and on a
false refusal alike.
"""

import contextlib
import glob
import hashlib
import io
import multiprocessing
import os
import shutil
import socket
import stat
import struct
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ptsbench.cli import main
from ptsbench.hosts.hostlist import Host
from ptsbench.hosts.server import Listen, kill_tree, server_argv, wait_listening

pytestmark = [pytest.mark.root, pytest.mark.slow]

DEVICE_BYTES = 16 * 1024 * 1024
# fio writes 64 KiB at 8 MiB: past the active swap area (the first 4 MiB, where the kernel may swap out pages)
JOB_HEAD = "[global]\nioengine=psync\noffset=8m\nsize=64k\nbs=4k\nrw=randwrite\n"
SWAP_AREA_KIB = 4096
# the flag sets that decide: a device in use is refused with --destructive alone, allowed with --allow-mounted too
IDLE_FLAGS = ([], ["--destructive"])
IN_USE_FLAGS = ([], ["--destructive"], ["--destructive", "--allow-mounted"])
KINDS = ("blank", "ext4", "mounted-ext4", "gpt", "mounted-partition", "swap", "active-swap", "lvm-pv", "md-member")


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=60, check=False)


def _need(*tools: str) -> None:
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if os.geteuid() != 0 or missing:
        pytest.skip(f"needs root and {', '.join(missing) or 'losetup'} (scripts/install.sh --test installs them)")


@dataclass
class Device:
    kind: str
    path: str
    image: Path
    in_use: bool  # mounted, active swap or held by md: refused even with --destructive
    digest: str = ""
    how: str = ""  # how the signature was made when the kernel could not do it the usual way
    mounts: list[str] = field(default_factory=list)

    def checksum(self) -> str:
        """sha256 of the backing file, after flushing what was written through the device nodes' page cache (a buffered
        write would reach the file only later); of an active swap device, of all but the swap area the kernel
        itself writes."""
        for node in [self.path, *glob.glob(self.path + "p*")]:
            descriptor = os.open(node, os.O_RDONLY)
            try:
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
        with open(self.image, "rb") as handle:
            if self.kind == "active-swap":
                handle.seek(SWAP_AREA_KIB * 1024)
            return hashlib.file_digest(handle, "sha256").hexdigest()


def _attach(image: Path) -> str:
    done = _run("losetup", "--find", "--show", "--partscan", str(image))
    if done.returncode != 0:
        pytest.skip(f"losetup failed: {done.stderr.strip()}")
    return done.stdout.strip()


def _wait_for(path: str) -> None:
    for _ in range(50):
        if os.path.exists(path):
            return
        time.sleep(0.1)
    raise AssertionError(f"{path} did not appear")


def write_md_superblock(image: Path) -> None:
    """A RAID-1 member's md v1.2 superblock (4 KiB in), in the kernel's on-disk layout with its checksum; used when
    the kernel has no md driver, so `mdadm --create` cannot run. `mdadm --examine` then reads it as a real member."""
    max_dev = 2
    block = bytearray(256 + 2 * max_dev)
    sectors = DEVICE_BYTES // 512
    data_offset = 2048
    now = int(time.time())
    struct.pack_into("<IIII", block, 0, 0xA92B4EFC, 1, 0, 0)  # magic, major version 1, feature map
    block[16:32] = uuid.uuid4().bytes  # array uuid
    block[32:64] = b"ptsbench:guard".ljust(32, b"\0")
    struct.pack_into("<QIIQII", block, 64, now, 1, 0, sectors - data_offset, 0, 2)  # ctime, raid1, size, 2 disks
    struct.pack_into("<QQQ", block, 128, data_offset, sectors - data_offset, 8)  # data offset/size, super offset
    block[168:184] = uuid.uuid4().bytes  # device uuid
    struct.pack_into("<QQQ", block, 192, now, 1, 0xFFFFFFFFFFFFFFFF)  # utime, events, resync done
    struct.pack_into("<I", block, 220, max_dev)
    struct.pack_into("<HH", block, 256, 0, 1)  # roles: this device is disk 0, the other disk 1
    total = sum(struct.unpack_from(f"<{len(block) // 4}I", block))
    struct.pack_into("<I", block, 216, ((total & 0xFFFFFFFF) + (total >> 32)) & 0xFFFFFFFF)
    with open(image, "r+b") as handle:
        handle.seek(4096)
        handle.write(block)


def _make(kind: str, folder: Path, cleanup: list[Callable[[], None]]) -> Device:
    image = folder / f"{kind}.img"
    with open(image, "wb") as handle:
        handle.truncate(DEVICE_BYTES)
    how = ""
    if kind == "md-member" and not os.path.exists("/proc/mdstat"):
        write_md_superblock(image)
        how = "no md driver in this kernel: superblock written to the image, checked with mdadm --examine"
        assert "raid1" in _run("mdadm", "--examine", str(image)).stdout
    path = _attach(image)
    cleanup.append(lambda: (_run("partx", "-d", path), _run("losetup", "-d", path)))
    device = Device(kind, path, image, kind.startswith(("mounted", "active")), how=how)
    if kind in ("ext4", "mounted-ext4"):
        assert _run("mkfs.ext4", "-q", "-F", path).returncode == 0
    if kind in ("gpt", "mounted-partition"):
        assert _run("sh", "-c", f"echo 'label: gpt\n,8M' | sfdisk -q {path}").returncode == 0
        _run("partx", "-u", path)
        _wait_for(path + "p1")
        if kind == "mounted-partition":
            assert _run("mkfs.ext4", "-q", "-F", path + "p1").returncode == 0
    if kind.startswith("mounted"):
        mount_point = folder / f"mnt-{kind}"
        mount_point.mkdir()
        source = path + "p1" if kind == "mounted-partition" else path
        assert _run("mount", "-o", "ro,noload", source, str(mount_point)).returncode == 0  # ro: nothing changes it
        cleanup.append(lambda: _run("umount", str(mount_point)))
    if kind in ("swap", "active-swap"):
        assert _run("mkswap", path, str(SWAP_AREA_KIB)).returncode == 0
    if kind == "active-swap":
        assert _run("swapon", path).returncode == 0
        cleanup.append(lambda: _run("swapoff", path))
    if kind == "lvm-pv":  # no device-mapper in this kernel may stop a volume group: the PV label is the signature
        assert _run("pvcreate", "-ff", "-y", path).returncode == 0
    if kind == "md-member" and not how:
        second = folder / "md-second.img"
        with open(second, "wb") as handle:
            handle.truncate(DEVICE_BYTES)
        other = _attach(second)
        cleanup.append(lambda: _run("losetup", "-d", other))
        created = _run("mdadm", "--create", "/dev/md/ptsbench-guard", "--run", "--level=1", "--raid-devices=2",
                       "--metadata=1.2", path, other)
        if created.returncode != 0:
            pytest.fail(f"mdadm --create failed although /proc/mdstat exists: {created.stderr.strip()}")
        cleanup.insert(0, lambda: _run("mdadm", "--stop", "/dev/md/ptsbench-guard"))
        device.in_use = True  # held by the running array
    device.digest = device.checksum()
    return device


@pytest.fixture(scope="module")
def devices(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Device]]:
    _need("losetup", "mkfs.ext4", "sfdisk", "partx", "mkswap", "swapon", "pvcreate", "mdadm", "mount")
    folder = tmp_path_factory.mktemp("battery")
    cleanup: list[Callable[[], None]] = []
    try:
        yield {kind: _make(kind, folder, cleanup) for kind in KINDS}
    finally:
        for step in reversed(cleanup):
            step()


@pytest.fixture(scope="module")
def loopback_server() -> Iterator[str]:
    """A real fio server on 127.0.0.1, as `ptsbench server` starts it."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    listen = Listen(bind="127.0.0.1", port=port)
    process = subprocess.Popen(server_argv(listen), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               stdin=subprocess.DEVNULL)
    try:
        assert wait_listening(listen), "fio server did not start"
        yield Host("127.0.0.1", port).label
    finally:
        kill_tree(process.pid)
        process.wait()


def ptsbench(*argv: str) -> tuple[int, str, str]:
    """One ptsbench command in this process, as the console script runs it: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    saved = sys.argv
    sys.argv = ["ptsbench", *argv]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main()
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    finally:
        sys.argv = saved
    return code, out.getvalue(), err.getvalue()


@dataclass(frozen=True)
class Case:
    device: str
    route: str
    flags: tuple[str, ...]
    argv: tuple[str, ...]
    allowed: bool


def _job(folder: Path, name: str, body: str, section: str = "w") -> str:
    path = folder / f"{name}.fio"
    path.write_text(f"{JOB_HEAD}[{section}]\n{body}")
    return str(path)


def routes(device: Device, folder: Path, server: str) -> dict[str, tuple[list[str], bool | None]]:
    """Every way to reach the device: route -> (argv, verdict when it does not follow the flags: None)."""
    folder.mkdir(exist_ok=True)
    dev = device.path
    scratch = str(folder / "scratch.dat")
    # a job that opens a device may not make a new file (allow_file_create=0 holds for all its files): the file
    # listed beside the device exists, as large as the job's offset and size
    listed = folder / "listed.dat"
    with listed.open("wb") as handle:
        handle.truncate(9 * 1024**2)
    (folder / "inc.fio").write_text(f"filename={dev}\n")
    named = _job(folder, "filename", f"filename={dev}\n")
    return {
        "--target": (["run", _job(folder, "plain", ""), "--target", dev], None),
        "filename=": (["run", named], None),
        "include": (["run", _job(folder, "include", "include inc.fio\n")], None),
        "':' list": (["run", _job(folder, "list", f"filename={listed}:{dev}\n")], None),
        "directory=": (["run", _job(folder, "directory", f"directory={os.path.dirname(dev)}\n"
                                                         f"filename={os.path.basename(dev)}\n")], None),
        "filename_format=": (["run", _job(folder, "format", f"filename_format={os.path.dirname(dev)}/$jobname\n",
                                          section=os.path.basename(dev))], None),
        "--set filename=": (["run", _job(folder, "listed", f"filename={listed}\n"), "--set", f"filename={dev}"],
                            None),
        "--set newline": (["run", _job(folder, "scratch", f"filename={scratch}\n"), "--set",
                           f"iodepth=1\nfilename={dev}"], False),
        # the job names the device, --target a file: the target replaces the job's filename
        "--target over filename=": (["run", named, "--target", scratch, "--size", "64k"], True),
        "pts": (["pts", dev, "--profile", "demo", "--tests", "iops"], None),
        "--hosts": (["run", named, "--hosts", server], None),
    }


def allowed(device: Device, flags: tuple[str, ...]) -> bool:
    return "--destructive" in flags and (not device.in_use or "--allow-mounted" in flags)


def all_cases(devices: dict[str, Device], folder: Path, server: str) -> list[Case]:
    cases = []
    for kind, device in devices.items():
        for route, (argv, fixed) in routes(device, folder / kind, server).items():
            flag_sets: tuple[list[str], ...] = IN_USE_FLAGS if device.in_use else IDLE_FLAGS
            if fixed is not None:  # the flags do not matter
                flag_sets = ([],)
            elif route == "pts":  # pts has no --allow-mounted: a device in use is never a PTS target
                flag_sets = IDLE_FLAGS
            elif kind == "blank" and route == "--target":
                flag_sets = ([], ["--allow-mounted"], ["--destructive"], ["--destructive", "--allow-mounted"])
            for flags in flag_sets:
                verdict = fixed if fixed is not None else allowed(device, tuple(flags))
                if route == "pts" and flags:
                    verdict = not device.in_use
                cases.append(Case(kind, route, tuple(flags), tuple(argv + flags), verdict))
    return cases


def judge(device: Device, cases: list[Case], folder: Path) -> tuple[list[str], list[str]]:
    """Run one device's cases one after another: their false accepts and false refusals. A refused case is judged by
    the device's checksum right after it: only this device's cases name it, so they may run beside another
    device's (each device has its own folder, its own --out)."""
    false_accepts, false_refusals = [], []
    out = folder / f"out-{device.kind}"
    for case in cases:
        argv = case.argv + (("--dry-run",) if case.allowed else ()) + ("--out", str(out))
        code, said, err = ptsbench(*argv)
        shutil.rmtree(out, ignore_errors=True)
        label = f"{case.device} via {case.route} {' '.join(case.flags) or '(no flags)'}"
        if case.allowed and (code != 0 or "# guard: the real run would start" not in said):
            false_refusals.append(f"{label}: {err.strip()[-300:]}")
        if case.allowed and device.path in said.rpartition("# guard:")[2] and case.route.startswith("--target over"):
            false_accepts.append(f"{label}: the run would still write the job's device: {said[-300:]}")
        if not case.allowed:
            refused = code != 0 and err.count("ptsbench: error:") == 1 and "Traceback" not in err
            if not refused or device.checksum() != device.digest:
                false_accepts.append(f"{label}: exit {code}, device changed: {device.checksum() != device.digest}"
                                     f" {err.strip()[-300:]}")
    return false_accepts, false_refusals


def test_guard_battery(devices: dict[str, Device], loopback_server: str, tmp_path: Path) -> None:
    cases = all_cases(devices, tmp_path, loopback_server)
    # two devices at a time, each in a child forked from this process (ptsbench imported once, as the battery runs
    # every case in-process): the cases mostly wait for fio's parser, and CI has two CPUs
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        judged = [pool.submit(judge, device, [case for case in cases if case.device == kind], tmp_path)
                  for kind, device in devices.items()]
        false_accepts = [wrong for done in judged for wrong in done.result()[0]]
        false_refusals = [wrong for done in judged for wrong in done.result()[1]]
    print(f"guard battery: {len(cases)} cases on {len(devices)} devices, "
          f"{sum(not case.allowed for case in cases)} refused, {sum(case.allowed for case in cases)} accepted; "
          + "; ".join(f"{device.kind}: {device.how}" for device in devices.values() if device.how))
    assert not false_accepts, f"{len(false_accepts)} false accepts:\n" + "\n".join(false_accepts)
    assert not false_refusals, f"{len(false_refusals)} false refusals:\n" + "\n".join(false_refusals)
    assert len(cases) >= 180
    for device in devices.values():
        assert device.checksum() == device.digest, f"{device.kind} changed"


def test_accepted_runs_write_only_what_was_allowed(devices: dict[str, Device], tmp_path: Path) -> None:
    """Two real runs: an allowed write reaches the device (so the battery's checksums would see a false accept),
    and --target keeps the job's own device out of the run."""
    ext4 = devices["ext4"]
    named = _job(tmp_path, "named", f"filename={ext4.path}\n")
    code, _out, err = ptsbench("run", named, "--target", str(tmp_path / "scratch.dat"), "--size", "64k",
                               "--out", str(tmp_path / "r1"))
    assert code == 0, err
    assert ext4.checksum() == ext4.digest
    blank = devices["blank"]
    code, _out, err = ptsbench("run", _job(tmp_path, "blank", f"filename={blank.path}\n"), "--destructive",
                               "--out", str(tmp_path / "r2"))
    assert code == 0, err
    assert blank.checksum() != blank.digest  # fio wrote it: the checksum sees a write
    blank.digest = blank.checksum()


# Tricks tried against the guard (each was, or could have been, a way past it): name -> (argv, expected verdict).
# {dev} is the ext4 device, {img} its backing file, {d} a scratch folder; a refused one must leave {dev} unchanged.
ATTACKS: dict[str, tuple[list[str], bool]] = {
    "env var in filename": (["run", "{d}/env.fio"], False),
    "env var in rw": (["run", "{d}/env-rw.fio"], False),
    "relative path from /dev": (["run", "{d}/relative.fio"], False),
    "path climbing with ..": (["run", "{d}/dotdot.fio"], False),
    "symlink to the device": (["run", "{d}/symlink.fio"], False),
    "/dev/block/MAJ:MIN link": (["run", "{d}/block-link.fio"], False),
    "/proc/self/root path": (["run", "{d}/proc-root.fio"], False),
    "own device node (mknod)": (["run", "{d}/mknod.fio"], False),
    "blanks around = and value": (["run", "{d}/spaces.fio"], False),
    "include of an include": (["run", "{d}/nested.fio"], False),
    "include without a blank (fio reads 'includeX' as include)": (["run", "{d}/include-x.fio"], False),
    "section named after the device": (["run", "{d}/section.fio"], False),
    "[global-x] is global to fio": (["run", "{d}/globalish.fio"], False),
    "readwrite alias": (["run", "{d}/alias.fio"], False),
    "rw=write:4k": (["run", "{d}/offset-mod.fio"], False),
    "rw=trim": (["run", "{d}/trim.fio"], False),
    "trailing ';' cut by fio": (["run", "{d}/semicolon.fio"], False),
    "write_iolog onto the device (rw=read)": (["run", "{d}/iolog.fio"], False),
    "replayed IO log redirected to the device": (["run", "{d}/replay.fio"], False),
    "exec_prerun": (["run", "{d}/exec.fio"], False),
    "ioengine=libblkio": (["run", "{d}/libblkio.fio"], False),
    "numjobs clone in the second directory": (["run", "{d}/clones.fio"], False),
    "--set filename list": (["run", "{d}/scratch.fio", "--set", "filename={d}/a:{dev}"], False),
    "--set with --target": (["run", "{d}/scratch.fio", "--target", "{d}/t.dat", "--size", "64k", "--set",
                             "filename={dev}"], False),
    "--ioengine with a newline": (["run", "{d}/scratch.fio", "--ioengine", "psync\nfilename={dev}"], False),
    "--size with a newline": (["run", "{d}/scratch.fio", "--size", "64k\nfilename={dev}"], False),
    "--out with a newline": (["run", "{d}/scratch.fio", "--out", "{d}/o\nx"], False),
    "--target with ';' (fio would cut the name)": (["run", "{d}/plain.fio", "--target", "{d}/t;x", "--size", "64k"],
                                                   False),
    "pts target with '#'": (["pts", "{d}/t#x", "--size", "1M", "--profile", "demo"], False),
    "--target with a newline": (["run", "{d}/scratch.fio", "--target", "{d}/t\n.dat", "--size", "64k"], False),
    "--set include=": (["run", "{d}/scratch.fio", "--set", "include={d}/inc2.fio"], False),
    "--set a [section]": (["run", "{d}/scratch.fio", "--set", "[evil]=x"], False),
    # a fio server names files under `directory` ADDRESS.NAME: here a link to the device
    "--hosts: the server's name for a file under directory=": (["run", "{d}/server-name.fio", "--hosts", "{server}"],
                                                               False),
    "job option after --": (["run", "{d}/scratch.fio", "--", "--filename={dev}"], False),
    "--target DEV/../DEV": (["run", "{d}/plain.fio", "--target", "{dev}/../{name}"], False),
    "backing file of the device's loop": (["run", "{d}/plain.fio", "--target", "{img}"], False),
    "active swap file": (["run", "{d}/plain.fio", "--target", "{d}/swapfile"], False),
    "/dev/mem": (["run", "{d}/mem.fio"], False),
    "missing device in a read job": (["run", "{d}/typo-read.fio"], False),
    "regular file in /dev (an earlier typo's)": (["run", "{d}/dev-file.fio"], False),
    "sysfs file written": (["run", "{d}/sysfs.fio"], False),
    "run --target typo": (["run", "{d}/plain.fio", "--target", "/dev/nvme9n1"], False),
    "quick typo": (["quick", "/dev/nvme9n1", "--dry-run"], False),
    "pts --dry-run typo": (["pts", "/dev/nvme9n1", "--dry-run"], False),
    "info typo": (["info", "/dev/nvme9n1"], False),
    "new file target without a size": (["run", "{d}/nosize.fio", "--target", "{d}/typo.dat"], False),
    # legitimate: fio never opens the device
    "'#' cuts the device off the line": (["run", "{d}/hash.fio"], True),
    "[global] filename replaced by --target": (["run", "{d}/global.fio", "--target", "{d}/t.dat", "--size", "64k"],
                                               True),
}


DEV_FILE = f"/dev/ptsbench-guard-test-{os.getpid()}"


def _attack_files(folder: Path, dev: str) -> None:
    name = os.path.basename(dev)
    jobs = {
        "env": "filename=${GUARD_DEV}\n", "env-rw": f"rw=${{GUARD_RW}}\nfilename={dev}\n",
        "relative": f"filename={name}\n", "dotdot": "filename=" + "../" * 12 + dev.lstrip("/") + "\n",
        "symlink": f"filename={folder}/link\n", "block-link": f"filename=/dev/block/{_devnum(dev)}\n",
        "proc-root": f"filename=/proc/self/root{dev}\n", "mknod": f"filename={folder}/node\n",
        "spaces": f"filename  =   {dev}   \n", "nested": "include inc1.fio\n", "include-x": "includeXinc2.fio\n",
        "alias": f"readwrite=randwrite\nfilename={dev}\n", "offset-mod": f"rw=write:4k\nfilename={dev}\n",
        "trim": f"rw=trim\nfilename={dev}\n", "semicolon": f"filename={dev};\n",
        "iolog": f"rw=read\nfilename={folder}/a\nwrite_iolog={dev}\n",
        "replay": f"read_iolog={folder}/log\nreplay_redirect={dev}\n",
        "exec": f"filename={folder}/a\nexec_prerun=dd if=/dev/zero of={dev} count=1\n",
        "libblkio": "ioengine=libblkio\nlibblkio_driver=io_uring\n",
        "clones": f"directory={folder}:{os.path.dirname(dev)}\nfilename_format={name}\nnumjobs=2\n",
        "scratch": f"filename={folder}/a\n", "plain": "", "mem": "filename=/dev/mem\n",
        "typo-read": "rw=read\nfilename=/dev/nvme9n1\n", "sysfs": "filename=/sys/kernel/mm/ksm/run\n",
        "dev-file": f"rw=read\nfilename={DEV_FILE}\n",
        "nosize": "", "hash": f"filename={folder}/safe#{dev}\n",
        "server-name": f"directory={folder}/srv\nfilename=disk\n",
    }
    for job, body in jobs.items():
        (folder / f"{job}.fio").write_text(JOB_HEAD + "[w]\n" + body)
    (folder / "nosize.fio").write_text("[w]\nioengine=psync\nrw=write\n")
    (folder / "section.fio").write_text(f"{JOB_HEAD}[{dev}]\n")
    (folder / "globalish.fio").write_text(f"{JOB_HEAD}[global-x]\nfilename={dev}\n[w]\n")
    (folder / "global.fio").write_text(f"{JOB_HEAD}filename={dev}\n[w]\n")
    (folder / "inc1.fio").write_text("include inc2.fio\n")
    (folder / "inc2.fio").write_text(f"filename={dev}\n")
    (folder / "log").write_text(f"fio version 2 iolog\n{folder}/a add\n{folder}/a open\n{folder}/a write 0 4096\n")
    (folder / "link").symlink_to(dev)
    (folder / "srv").mkdir()
    (folder / "srv" / "127.0.0.1.disk").symlink_to(dev)
    os.mknod(folder / "node", 0o600 | stat.S_IFBLK, os.stat(dev).st_rdev)


def _devnum(dev: str) -> str:
    rdev = os.stat(dev).st_rdev
    return f"{os.major(rdev)}\\:{os.minor(rdev)}"  # fio splits names at an unescaped ':'


def test_attacks_on_the_guard(devices: dict[str, Device], loopback_server: str, tmp_path: Path,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    ext4 = devices["ext4"]
    _attack_files(tmp_path, ext4.path)
    swapfile = tmp_path / "swapfile"
    with open(swapfile, "wb") as handle:
        handle.write(b"\0" * (1024 * 1024))
    swapfile.chmod(0o600)
    swapped = _run("mkswap", str(swapfile)).returncode == 0 and _run("swapon", str(swapfile)).returncode == 0
    Path(DEV_FILE).write_bytes(b"\0" * 65536)
    monkeypatch.setenv("GUARD_DEV", ext4.path)
    monkeypatch.setenv("GUARD_RW", "randwrite")
    monkeypatch.chdir("/dev")  # a relative name is looked up where fio runs
    wrong = []
    try:
        for name, (argv, accepted) in ATTACKS.items():
            if name == "active swap file" and not swapped:
                wrong.append("active swap file: could not make one (swapon failed)")
                continue
            values = {"d": str(tmp_path), "dev": ext4.path, "img": str(ext4.image), "name": os.path.basename(ext4.path),
                      "server": loopback_server}
            args = [part.format(**values) for part in argv]
            out_dir = ["--out", str(tmp_path / "out")] if "--out" not in args and args[0] != "info" else []
            code, out, err = ptsbench(*args, *(["--dry-run"] if accepted else []), *out_dir)
            shutil.rmtree(tmp_path / "out", ignore_errors=True)
            if accepted and (code != 0 or ext4.path in out.rpartition("# guard:")[2]):
                wrong.append(f"{name}: should run without touching {ext4.path}: exit {code} {err.strip()[-200:]}")
            if not accepted and (code == 0 or "Traceback" in err or ext4.checksum() != ext4.digest):
                wrong.append(f"{name}: not refused (exit {code}) {err.strip()[-200:]}")
    finally:
        Path(DEV_FILE).unlink(missing_ok=True)
        if swapped:
            _run("swapoff", str(swapfile))
    print(f"guard attacks: {len(ATTACKS)} tricks, {sum(not accepted for _argv, accepted in ATTACKS.values())} refused")
    assert not wrong, "\n".join(wrong)
    assert ext4.checksum() == ext4.digest
