"""Is a device still there, and still the same one? A drive can vanish mid-run (hot-unplug, a controller reset the
kernel gives up on, a cable): its node goes, or another device takes its number. After fio fails, this says so in
plain words instead of fio's guess (an open that fails on a missing node reads as "does not support direct=1")."""

import fcntl
import os
import stat
import struct
from dataclasses import dataclass
from typing import Any

from ptsbench.device.target import SYSFS_DEV_BLOCK, read_sysfs

SYSFS_DEV_CHAR = "/sys/dev/char"
LOOP_GET_STATUS64 = 0x4C05
_LOOP_INFO64 = struct.Struct("=5Q4I64s64s32s2Q")  # struct loop_info64 (linux/loop.h)
# the ids that name a drive itself (a loop device's backing file names only what is attached now)
DRIVE_IDS = ("wwid", "nguid", "eui", "uuid", "device/serial", "serial")
_BACKING_NAME = "loop/backing_file"
# what names a device itself, in its sysfs folder (block) and the controller's folder under `device`: the kernel's
# wwid is the NVMe UUID, NGUID or EUI64 where the namespace has one; a loop device is its backing file
_ID_FILES = ("wwid", "nguid", "eui", "uuid", "device/serial", "serial", "loop/backing_file")


@dataclass(frozen=True)
class DeviceIdentity:
    """A device node as it was: its path, kind, device number and the ids its sysfs folder gives."""

    path: str
    kind: str  # "block" | "char"
    rdev: int
    ids: tuple[tuple[str, str], ...]  # (sysfs file, value), e.g. ("wwid", "eui.0011..."), ("device/serial", "S3X")


def device_identity(path: str) -> DeviceIdentity | None:
    """The identity of the device node at `path`; None when it is no device node."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    if stat.S_ISBLK(found.st_mode):
        kind = "block"
    elif stat.S_ISCHR(found.st_mode):
        kind = "char"
    else:
        return None
    return DeviceIdentity(path, kind, found.st_rdev, _ids(kind, found.st_rdev))


def _sysfs_dir(kind: str, rdev: int) -> str:
    root = SYSFS_DEV_BLOCK if kind == "block" else SYSFS_DEV_CHAR
    return os.path.join(root, f"{os.major(rdev)}:{os.minor(rdev)}")


def _ids(kind: str, rdev: int) -> tuple[tuple[str, str], ...]:
    folder = _sysfs_dir(kind, rdev)
    return tuple((name, value) for name in _ID_FILES if (value := read_sysfs(os.path.join(folder, name))))


def vanished(identity: DeviceIdentity) -> str | None:
    """None while `identity.path` is still the same device, else "the device disappeared: PATH (how)"."""
    found, how = _node(identity.path)
    if found is None:
        return f"the device disappeared: {identity.path} ({how})"
    kind = "block" if stat.S_ISBLK(found.st_mode) else "char"
    if kind != identity.kind or found.st_rdev != identity.rdev:
        return (f"the device disappeared: {identity.path} (another device is at that path now: {kind} "
                f"{os.major(found.st_rdev)}:{os.minor(found.st_rdev)}, it was {identity.kind} "
                f"{os.major(identity.rdev)}:{os.minor(identity.rdev)})")
    if not os.path.exists(_sysfs_dir(identity.kind, identity.rdev)):
        return f"the device disappeared: {identity.path} (its node is left, the kernel has no such device)"
    now = dict(_ids(identity.kind, identity.rdev))
    changed = [f"{name} {value} (it was {was})" for name, was in identity.ids if (value := now.get(name)) != was]
    if changed:
        return f"the device disappeared: {identity.path} (another device took its number: {changed[0]})"
    return None


def missing_device(path: str) -> str | None:
    """For a run that started on the block device `path`: None when a block device is there, else "the device
    disappeared: PATH (how)"."""
    found, how = _node(path)
    if found is not None and not stat.S_ISBLK(found.st_mode):
        how = "a character device stands at its path now"
    return None if not how else f"the device disappeared: {path} ({how})"


def _node(path: str) -> tuple[os.stat_result | None, str]:
    """The device node at `path`, or None and what is there instead."""
    try:
        found = os.stat(path)
    except OSError:
        return None, "no device node at that path any more"
    if stat.S_ISBLK(found.st_mode) or stat.S_ISCHR(found.st_mode):
        return found, ""
    if stat.S_ISREG(found.st_mode):
        return None, (f"a regular file of {found.st_size} bytes stands at its path now, made by a program that "
                      "opened the vanished name")
    return None, "something else than a device node stands at its path now"


def devices_with_ids(ids: dict[str, str]) -> list[str]:
    """The block devices (/dev/NAME) whose sysfs ids include every one of `ids` ({"wwid": ..., "device/serial":
    ...}); a drive that came back under another name is found this way."""
    if not ids:
        return []
    try:
        numbers = sorted(os.listdir(SYSFS_DEV_BLOCK))
    except OSError:
        return []
    found = []
    for number in numbers:
        folder = os.path.join(SYSFS_DEV_BLOCK, number)
        if os.path.exists(os.path.join(folder, "partition")):
            continue
        if all(read_sysfs(os.path.join(folder, name)) == value for name, value in ids.items()):
            found.append("/dev/" + os.path.basename(os.path.realpath(folder)))
    return found


def identity_record(path: str) -> dict[str, Any]:
    """What names the block device at `path`, for a resume to compare (JSON-ready): every id its sysfs folder gives
    (serial, WWN / EUI64 / NGUID / UUID, a loop device's backing file name) and, for a loop device, the kernel's
    device and inode of its backing file with the offset and size limit (a renamed or deleted image stays itself).
    A partition is named by its disk's ids and its number and start on that disk."""
    folder = os.path.realpath(_sysfs_dir("block", os.stat(path).st_rdev))
    disk, ids = folder, {}
    if os.path.exists(os.path.join(folder, "partition")):
        disk = os.path.dirname(folder)
        ids = {name: read_sysfs(os.path.join(folder, name)) or "" for name in ("partition", "start")}
    ids = {**{name: value for name in _ID_FILES if (value := read_sysfs(os.path.join(disk, name)))}, **ids}
    record: dict[str, Any] = {"ids": ids}
    backing = loop_backing(path if disk == folder else "/dev/" + os.path.basename(disk))
    if backing is not None:
        record["loop_backing"] = backing
    return record


def loop_backing(path: str) -> dict[str, int] | None:
    """The backing file of the loop device `path` as the kernel holds it (LOOP_GET_STATUS64): its device number,
    inode, offset and size limit; None for any other device, or a loop device with nothing attached."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        raw = fcntl.ioctl(fd, LOOP_GET_STATUS64, bytes(_LOOP_INFO64.size))
    except OSError:  # not a loop device (ENOTTY), or nothing attached (ENXIO)
        return None
    finally:
        os.close(fd)
    device, inode, _rdevice, offset, size_limit = _LOOP_INFO64.unpack(raw)[:5]
    return {"dev": device, "ino": inode, "offset_bytes": offset, "size_limit_bytes": size_limit}


def identity_changes(path: str, recorded: dict[str, Any]) -> list[str]:
    """How the block device at `path` differs from `recorded` (identity_record at the run's start): each changed
    id, and another backing file of a loop device (judged by the kernel's device and inode, not by its name, which
    a rename changes); [] when it is the same device as far as it can tell."""
    now = identity_record(path)
    was, found = recorded.get("loop_backing"), now.get("loop_backing")
    names = [name for name in recorded.get("ids", {}) if not (was is not None and name == _BACKING_NAME)]
    changes = [f"its {name} is {now['ids'].get(name) or 'gone'} (it was {recorded['ids'][name]})"
               for name in names if now["ids"].get(name) != recorded["ids"][name]]
    if was is not None and found != was:
        changes.append(f"another file backs the loop device: {_backing_text(found, now['ids'])} (it was "
                       f"{_backing_text(was, recorded['ids'])})")
    return changes


def _backing_text(backing: dict[str, int] | None, ids: dict[str, str]) -> str:
    if backing is None:
        return "nothing"
    number = f"{os.major(backing['dev'])}:{os.minor(backing['dev'])}"
    where = f"inode {backing['ino']} on device {number}, offset {backing['offset_bytes']}"
    return f"{ids.get(_BACKING_NAME, '?')} ({where})"
