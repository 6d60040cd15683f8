"""The destructive-write guard: block devices are written only when asked to, mounted ones not even then."""

import glob
import json
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Sequence

from ptsbench.errors import TargetError, UnsafeTargetError
from ptsbench.target.target import (
    Target,
    block_sysfs_dir,
    kernel_filesystem,
    read_mounts,
    read_sysfs,
    resolve_target,
    unescape_proc,
)

SWAPS = "/proc/swaps"
SYSFS_DEV_CHAR = "/sys/dev/char"
SYSFS_BLOCK = "/sys/block"
TOOL_TIMEOUT_S = 10
MEMORY_DEVICES_MAJOR = 1
SINK_DEVICE_MINORS = (3, 5, 7, 8, 9)  # /dev/null, zero, full, random, urandom (not mem, kmem, port: minors 1, 2, 4)
_NVME_GENERIC = re.compile(r"ng(\d+)n(\d+)")


def check_write_allowed(target: Target, destructive: bool, allow_mounted: bool = False) -> None:
    """Raise UnsafeTargetError unless writing to `target` was explicitly allowed; files are always allowed.

    A device in use (mounted, held by md/dm/LVM, active swap) is refused even with --destructive."""
    if target.kind != "block":
        return
    in_use = in_use_reasons(target.path)
    if in_use and not allow_mounted:
        reasons = in_use + block_device_signatures(target.path)
        raise UnsafeTargetError(
            f"refusing to write to {target.path}: " + "; ".join(reasons),
            "it is in use and writing destroys its live data: unmount it or stop what uses it first (or, "
            "knowingly, pass --destructive --allow-mounted)",
        )
    if destructive:
        return
    reasons = in_use + block_device_signatures(target.path)
    if not reasons:
        reasons = ["it is a block device: the test overwrites its contents"]
    raise UnsafeTargetError(
        f"refusing to write to {target.path}: " + "; ".join(reasons),
        "pass --destructive to overwrite it (all data on it is lost)",
    )


def check_device_write_allowed(path: str, destructive: bool, allow_mounted: bool = False) -> None:
    """The guard for a device a job file names: a block device, or a character device that reaches a disk as raw
    commands (NVMe generic /dev/ngXnY, SCSI generic /dev/sgN), guarded like the block device it stands for."""
    found = os.stat(path)
    if stat.S_ISBLK(found.st_mode):
        check_write_allowed(resolve_target(path), destructive, allow_mounted)
        return
    if not stat.S_ISCHR(found.st_mode) or _is_sink(found):
        return
    block = block_device_of_char(path)
    if block is not None:
        check_write_allowed(resolve_target(block), destructive, allow_mounted)
    elif not destructive:
        raise UnsafeTargetError(f"refusing to write to {path}: a character device (raw access to a device)",
                                "pass --destructive to write to it (all data on what it reaches is lost)")


def _is_sink(found: os.stat_result) -> bool:
    return os.major(found.st_rdev) == MEMORY_DEVICES_MAJOR and os.minor(found.st_rdev) in SINK_DEVICE_MINORS


def check_opened(opened: Sequence[tuple[str, bool]], unknown: Sequence[str], destructive: bool,
                 allow_mounted: bool = False) -> None:
    """Judge, before any IO, every (path, written) pair fio will open, and the writes ptsbench cannot see (`unknown`:
    why fio may open more). Raises UnsafeTargetError or TargetError for the first path refused."""
    for path, written in dict.fromkeys(opened):
        check_path_allowed(path, written, destructive, allow_mounted)
    if unknown and not (destructive and allow_mounted):
        raise UnsafeTargetError(f"refusing to run: {unknown[0]}, so ptsbench cannot check which devices it "
                                "writes", "only if you have checked them yourself: pass --destructive --allow-mounted")


def check_path_allowed(path: str, written: bool, destructive: bool, allow_mounted: bool = False) -> None:
    """One path fio opens: a device written is judged by the guard; a path on a kernel file system (devtmpfs,
    sysfs, procfs) that is no device is refused, read or written (a missing /dev name is a typo); a regular file the
    system uses as a device (swap file, loop backing file) is guarded as that device."""
    try:
        found = os.stat(path)
    except OSError:
        found = None
    if found is not None and (stat.S_ISBLK(found.st_mode) or stat.S_ISCHR(found.st_mode)):
        if written:
            check_device_write_allowed(path, destructive, allow_mounted)
        return
    if found is not None and written and stat.S_ISREG(found.st_mode):
        _check_file_in_use(path, found, destructive, allow_mounted)
    kernel = kernel_filesystem(path)
    if found is None and kernel:
        raise TargetError(f"no such device: {path}",
                          f"check the name (it is on {kernel}: fio would make a file there, not test a device)")
    if kernel:  # a kernel switch (sysfs, procfs) or a file in RAM left by an earlier typo: never a test target
        raise UnsafeTargetError(f"refusing to use {path}: a file of the kernel's {kernel}, not a device",
                                "name a device, or a file on a real file system")


def _check_file_in_use(path: str, found: os.stat_result, destructive: bool, allow_mounted: bool) -> None:
    """A regular file the system uses as a device: an active swap file, or the backing file of a loop device (its
    filesystem may be mounted), guarded as that device."""
    if os.path.realpath(path) in _active_swaps() and not (destructive and allow_mounted):
        raise UnsafeTargetError(f"refusing to write to {path}: it is an active swap file",
                                "swapoff it first (or, knowingly, pass --destructive --allow-mounted)")
    for loop in loops_backed_by(found):
        check_write_allowed(resolve_target(loop), destructive, allow_mounted)


def loops_backed_by(found: os.stat_result) -> list[str]:
    """Loop devices (/dev/loopN) whose backing file is the file `found` stands for (same device and inode)."""
    loops = []
    for backing in sorted(glob.glob(os.path.join(SYSFS_BLOCK, "loop*", "loop", "backing_file"))):
        name = read_sysfs(backing)
        try:
            same = name is not None and os.stat(name).st_ino == found.st_ino and os.stat(name).st_dev == found.st_dev
        except OSError:
            continue
        if same:
            loops.append("/dev/" + backing.split(os.sep)[-3])
    return loops


def block_device_of_char(path: str) -> str | None:
    """The block device a generic character device stands for: /dev/ngXnY -> /dev/nvmeXnY, /dev/sgN -> /dev/sdX."""
    real = os.path.realpath(path)
    nvme = _NVME_GENERIC.fullmatch(os.path.basename(real))
    candidates = [f"/dev/nvme{nvme[1]}n{nvme[2]}"] if nvme else []
    rdev = os.stat(real).st_rdev
    scsi_block = os.path.join(SYSFS_DEV_CHAR, f"{os.major(rdev)}:{os.minor(rdev)}", "device", "block")
    if os.path.isdir(scsi_block):
        candidates += [f"/dev/{name}" for name in sorted(os.listdir(scsi_block))]
    return next((c for c in candidates if os.path.exists(c) and stat.S_ISBLK(os.stat(c).st_mode)), None)


def block_device_signatures(dev_path: str) -> list[str]:
    """Human reasons the device holds data (filesystem/partition table/RAID/LVM signatures, partitions); empty when
    it looks clean."""
    reasons = [f"carries a {sig} signature" for sig in signature_types(dev_path)]
    partitions = [os.path.basename(p) for p in partition_dirs(dev_path)]
    if partitions:
        reasons.append("has partitions: " + ", ".join(partitions))
    return reasons


def in_use_reasons(dev_path: str) -> list[str]:
    """Human reasons the system uses the device or one of its partitions now: mounted, held (md/dm/LVM), swap."""
    reasons = mounted_reasons(dev_path)
    for name, holders in _holders(dev_path).items():
        reasons.append(f"{name} is held by {', '.join(holders)} (md/dm/LVM)")
    names = [os.path.basename(dev_path)] + [os.path.basename(p) for p in partition_dirs(dev_path)]
    swaps = _active_swaps()
    reasons += [f"/dev/{name} is an active swap device" for name in names if f"/dev/{name}" in swaps]
    return reasons


def mounted_reasons(dev_path: str) -> list[str]:
    """'X is mounted on M' for the device and each of its partitions found in /proc/self/mountinfo."""
    devices = {}  # "maj:min" -> /dev/name
    for sysdir in [block_sysfs_dir(dev_path), *partition_dirs(dev_path)]:
        devnum = read_sysfs(os.path.join(sysdir, "dev")) if sysdir else None
        if sysdir and devnum:
            devices[devnum] = "/dev/" + os.path.basename(sysdir)
    sources = set(devices.values()) | {dev_path}
    reasons = []
    for mount in read_mounts():
        name = devices.get(mount.devnum) or (mount.source if _realpath(mount.source) in sources else None)
        if name:
            reasons.append(f"{name} is mounted on {mount.mount_point}")
    return reasons


def partition_dirs(dev_path: str) -> list[str]:
    """Sysfs directories of the device's partitions (children holding a `partition` file)."""
    sysdir = block_sysfs_dir(dev_path)
    if sysdir is None:
        return []
    try:
        children = sorted(os.listdir(sysdir))
    except OSError:
        return []
    return [
        os.path.join(sysdir, child)
        for child in children
        if os.path.isfile(os.path.join(sysdir, child, "partition"))
    ]


def signature_types(dev_path: str) -> list[str]:
    """Signature names found by wipefs and blkid (e.g. 'ext4', 'gpt', 'linux_raid_member', 'LVM2_member')."""
    found: list[str] = []
    for sig in _wipefs_types(dev_path) + _blkid_types(dev_path):
        if sig not in found:
            found.append(sig)
    return found


def _wipefs_types(dev_path: str) -> list[str]:
    output = _run_tool(["wipefs", "-n", "-J", dev_path])
    if not output or not output.strip():
        return []
    try:
        entries = json.loads(output).get("signatures", [])
    except (ValueError, AttributeError):
        return []
    return [str(entry["type"]) for entry in entries if isinstance(entry, dict) and entry.get("type")]


def _blkid_types(dev_path: str) -> list[str]:
    output = _run_tool(["blkid", "-p", "-o", "export", dev_path])
    types = []
    for line in (output or "").splitlines():
        key, _, value = line.partition("=")
        if key in ("TYPE", "PTTYPE") and value:
            types.append(value)
    return types


def _run_tool(argv: list[str]) -> str | None:
    """stdout of a probing tool, None when it is missing, fails to start or times out."""
    if shutil.which(argv[0]) is None:
        return None
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout


def _holders(dev_path: str) -> dict[str, list[str]]:
    """Device or partition name -> names of its holders (dm-0, md127, ...), only non-empty ones."""
    result = {}
    sysdir = block_sysfs_dir(dev_path)
    for directory in ([sysdir] if sysdir else []) + partition_dirs(dev_path):
        try:
            holders = sorted(os.listdir(os.path.join(directory, "holders")))
        except OSError:
            continue
        if holders:
            result[os.path.basename(directory)] = holders
    return result


def _active_swaps() -> set[str]:
    try:
        with open(SWAPS, encoding="utf-8", errors="replace") as handle:
            lines = handle.readlines()[1:]
    except OSError:
        return set()
    return {_realpath(unescape_proc(line.split()[0])) for line in lines if line.split()}


def _realpath(path: str) -> str:
    return os.path.realpath(path) if path.startswith("/") else path
