"""The destructive-write guard: block devices are written only when asked to, mounted ones not even then."""

import glob
import json
import os
import stat
from collections.abc import Sequence

from ptsbench.device.claim import check_not_claimed
from ptsbench.device.inuse import active_swaps, blkid_values, in_use_reasons, partition_dirs, run_tool
from ptsbench.device.target import (
    Target,
    block_device_of_char,
    char_device_class,
    char_device_disks,
    kernel_filesystem,
    missing_device_error,
    read_sysfs,
    resolve_target,
)
from ptsbench.device.userfile import check_user_file
from ptsbench.errors import UnsafeTargetError

SYSFS_BLOCK = "/sys/block"
MEMORY_DEVICES_MAJOR = 1
SINK_DEVICE_MINORS = (3, 5, 7, 8, 9)  # /dev/null, zero, full, random, urandom (not mem, kmem, port: minors 1, 2, 4)
# character devices fio can write storage through (NVMe and SCSI generic, block SCSI generic, device DAX, flash,
# tape); any other class (tty, mem, misc, ...) is no test target
STORAGE_CHAR_CLASSES = ("nvme-generic", "scsi_generic", "bsg", "dax", "mtd", "scsi_tape")
# --allow-mounted exists on run and sweep only: a PTS run (purge, preconditioning) never writes to a device in use
ANYWAY = "run and sweep write to it anyway, knowingly, with --destructive --allow-mounted; pts never does"



def check_write_allowed(target: Target, destructive: bool, allow_mounted: bool = False) -> None:
    """Raise UnsafeTargetError unless writing to `target` was explicitly allowed; files are always allowed.

    A device another ptsbench run holds is refused whatever the flags; a device in use (device/inuse.py: mounted,
    stacked on, a member of a mounted filesystem, held open exclusively, ...) even with --destructive."""
    if target.kind != "block":
        return
    check_not_claimed(target.path)
    in_use = in_use_reasons(target.path)
    if in_use and not allow_mounted:
        reasons = in_use + block_device_signatures(target.path)
        raise UnsafeTargetError(
            f"refusing to write to {target.path}: " + "; ".join(reasons),
            "it is in use and writing destroys its live data: unmount it or stop what uses it first (" + ANYWAY + ")",
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
    commands (NVMe generic /dev/ngXnY, SCSI generic /dev/sgN), guarded like the block device it stands for.

    A character device whose disk has no node here to judge, or that is no storage (a terminal, memory, a number no
    driver has), is refused even with --destructive: that flag is for overwriting disks."""
    found = os.stat(path)
    if stat.S_ISBLK(found.st_mode):
        check_write_allowed(resolve_target(path), destructive, allow_mounted)
        return
    if not stat.S_ISCHR(found.st_mode) or _is_sink(found):
        return
    block = block_device_of_char(path)
    if block is not None:
        check_write_allowed(resolve_target(block), destructive, allow_mounted)
        return
    disks, kind = char_device_disks(path), char_device_class(path)
    if (disks or kind not in STORAGE_CHAR_CLASSES) and not (destructive and allow_mounted):
        what = (f"it reaches the disk {', '.join(disks)}, which has no device node here to check" if disks else
                f"a character device of the kernel's {kind} class, not storage" if kind else
                "a character device whose number no driver of this kernel has")
        raise UnsafeTargetError(f"refusing to write to {path}: {what}", "name a disk's own device; only if you have "
                                "checked what it reaches yourself: pass --destructive --allow-mounted")
    if not destructive:
        raise UnsafeTargetError(f"refusing to write to {path}: a character device (raw access to a device)",
                                "pass --destructive to write to it (all data on what it reaches is lost)")


def _is_sink(found: os.stat_result) -> bool:
    return os.major(found.st_rdev) == MEMORY_DEVICES_MAJOR and os.minor(found.st_rdev) in SINK_DEVICE_MINORS


def check_opened(opened: Sequence[tuple[str, bool]], unknown: Sequence[str], destructive: bool,
                 allow_mounted: bool = False, changed: Sequence[tuple[str, str]] = (),
                 target: str | None = None) -> None:
    """Judge, before any IO, every (path, written) pair fio will open, the existing files the jobs change (`changed`:
    path, what the job does to it), and the writes ptsbench cannot see (`unknown`: why fio may open more). Raises
    UnsafeTargetError or TargetError for the first path refused. `target`: the path the user named as the target."""
    for path, written in dict.fromkeys(opened):
        check_path_allowed(path, written, destructive, allow_mounted)
    for path, change in changed:
        check_user_file(path, change, destructive, path == target)
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
    if written:
        check_not_claimed(path)
    if found is not None and written and stat.S_ISREG(found.st_mode):
        _check_file_in_use(path, found, destructive, allow_mounted)
    kernel = kernel_filesystem(path)
    if found is None and kernel:
        raise missing_device_error(path, f"check the name (it is on {kernel}: fio would make a file there, not test "
                                   "a device)")
    if kernel:  # a kernel switch (sysfs, procfs) or a file in RAM left by an earlier typo: never a test target
        raise UnsafeTargetError(f"refusing to use {path}: a file of the kernel's {kernel}, not a device",
                                "name a device, or a file on a real file system")


def _check_file_in_use(path: str, found: os.stat_result, destructive: bool, allow_mounted: bool) -> None:
    """A regular file the system uses as a device: an active swap file, or the backing file of a loop device (its
    filesystem may be mounted), guarded as that device."""
    if os.path.realpath(path) in active_swaps() and not (destructive and allow_mounted):
        raise UnsafeTargetError(f"refusing to write to {path}: it is an active swap file",
                                "swapoff it first (" + ANYWAY + ")")
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


def block_device_signatures(dev_path: str) -> list[str]:
    """Human reasons the device holds data (filesystem/partition table/RAID/LVM signatures, partitions); empty when
    it looks clean."""
    reasons = [f"carries a {sig} signature" for sig in signature_types(dev_path)]
    partitions = [os.path.basename(p) for p in partition_dirs(dev_path)]
    if partitions:
        reasons.append("has partitions: " + ", ".join(partitions))
    return reasons


def signature_types(dev_path: str) -> list[str]:
    """Signature names found by wipefs and blkid (e.g. 'ext4', 'gpt', 'linux_raid_member', 'LVM2_member')."""
    found: list[str] = []
    for sig in _wipefs_types(dev_path) + _blkid_types(dev_path):
        if sig not in found:
            found.append(sig)
    return found


def _wipefs_types(dev_path: str) -> list[str]:
    output = run_tool(["wipefs", "-n", "-J", dev_path])
    if not output or not output.strip():
        return []
    try:
        entries = json.loads(output).get("signatures", [])
    except (ValueError, AttributeError):
        return []
    return [str(entry["type"]) for entry in entries if isinstance(entry, dict) and entry.get("type")]


def _blkid_types(dev_path: str) -> list[str]:
    values = blkid_values(dev_path)
    return [values[key] for key in ("TYPE", "PTTYPE") if key in values]
