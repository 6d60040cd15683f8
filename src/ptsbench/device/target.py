"""Resolve what the user typed into a Target fio can use: a file (maybe not created yet) or a block device."""

import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass

from ptsbench.errors import TargetError

TESTFILE_NAME = "ptsbench-testfile.dat"
SYSFS_DEV_BLOCK = "/sys/dev/block"
SYSFS_DEV_CHAR = "/sys/dev/char"
_NVME_GENERIC = re.compile(r"ng(\d+)n(\d+)")
_NVME_DISK = re.compile(r"nvme(?P<subsystem>\d+)(?P<path>c\d+)?n(?P<head>\d+)")
MOUNTINFO = "/proc/self/mountinfo"
# file systems of the kernel itself: a file made or written there is no test file (devtmpfs is RAM, sysfs and procfs
# files are kernel switches); /dev/shm is ordinary shared memory
KERNEL_FILESYSTEMS = ("devtmpfs", "sysfs", "proc", "debugfs", "tracefs", "configfs", "securityfs", "efivarfs",
                      "cgroup", "cgroup2", "bpf", "pstore", "devpts", "fusectl", "binfmt_misc", "mqueue")


@dataclass(frozen=True)
class Target:
    """A resolved test target."""

    path: str  # absolute path fio should use as filename
    kind: str  # "file" | "block" (a directory target resolves to a file inside it)
    size_bytes: int | None  # current size (None for a file that does not exist yet)
    requested: str  # what the user typed

    @property
    def names_missing_file(self) -> bool:
        """The user named a file that does not exist (not a folder to make a test file in): a typo, unless a size
        says to create it."""
        return self.kind == "file" and not os.path.exists(os.path.abspath(os.path.expanduser(self.requested)))


@dataclass(frozen=True)
class Mount:
    """One line of /proc/self/mountinfo."""

    devnum: str  # "major:minor"
    source: str  # e.g. /dev/vda1, tmpfs, overlay
    mount_point: str
    fstype: str


def resolve_target(path: str, create_size_bytes: int | None = None) -> Target:
    """Resolve a file, directory or block device path; raise TargetError when fio could not use it."""
    if not path or not path.strip():
        raise TargetError("no target given", "pass a file, a directory or a block device path")
    full = os.path.abspath(os.path.expanduser(path))
    try:
        st = os.stat(full)
    except (FileNotFoundError, NotADirectoryError):
        kernel = kernel_filesystem(full)
        if kernel:
            raise missing_device_error(full, f"check the name (it is on {kernel}, where a new file would not be a "
                                       "test file; `lsblk` lists the devices)") from None
        return _new_file(full, path, create_size_bytes)
    except PermissionError:
        raise TargetError(f"permission denied: {full}", "run as a user allowed to access it") from None
    except OSError as error:
        raise TargetError(f"cannot use target {full}: {error.strerror}", "check the path") from None
    kernel = kernel_filesystem(full) if stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode) else None
    if kernel:  # a kernel switch or folder (sysfs, procfs, /dev): refused before anything is made next to it
        raise TargetError(f"refusing to use {full}: a file of the kernel's {kernel}, not a device",
                          "name a device, or a file or folder on a real file system")
    if stat.S_ISDIR(st.st_mode):
        _require_access(full, os.W_OK | os.X_OK, "directory is not writable")
        return resolve_target_file(os.path.join(full, TESTFILE_NAME), path, create_size_bytes)
    if stat.S_ISREG(st.st_mode):
        return resolve_target_file(full, path, create_size_bytes)
    if stat.S_ISBLK(st.st_mode):
        real = os.path.realpath(full)
        _require_access(real, os.R_OK, "block device is not readable")
        return Target(path=real, kind="block", size_bytes=block_size_bytes(real), requested=path)
    if stat.S_ISCHR(st.st_mode) and re.fullmatch(r"ng\d+n\d+|sg\d+", os.path.basename(os.path.realpath(full))):
        raise TargetError(f"{full} is a generic character device (raw commands to a disk), not a target",
                          "name it in the job file (filename= with ioengine=io_uring_cmd or sg), where the guard "
                          "judges it as the disk it reaches, or pass the disk's block device like /dev/nvme0n1")
    raise TargetError(
        f"not a file, directory or block device: {full}",
        "pass a regular file, a directory (a test file is made in it) or a block device like /dev/nvme0n1",
    )


_MULTIPATH_PATH = re.compile(r"nvme(\d+)c\d+n(\d+)")  # a path of an NVMe multipath head: nvme<subsys>c<ctrl>n<ns>


def missing_device_error(path: str, hint: str) -> TargetError:
    """The error for a device name on the kernel's file systems that names no device: a hidden path of an NVMe
    multipath namespace (/dev/nvme1c1n1, which the kernel gives no node: all I/O goes through its head, whose
    name it then says), else "no such device" with `hint`."""
    found = _MULTIPATH_PATH.fullmatch(os.path.basename(path))
    if found and os.path.dirname(path) == "/dev":
        head = f"/dev/nvme{found[1]}n{found[2]}"
        return TargetError(f"refusing {path}: it names a path of the NVMe multipath namespace {head}, which the "
                           "kernel hides (I/O goes through the namespace's head)", f"name {head} instead")
    return TargetError(f"no such device: {path}", hint)


def check_has_capacity(target: Target) -> None:
    """TargetError for a block device of capacity 0 (fio cannot test it, and --size does not apply to devices)."""
    if target.kind == "block" and target.size_bytes == 0:
        raise TargetError(f"{target.path} has a capacity of 0 bytes: the kernel cannot read or write it (for example "
                          "an NVMe namespace formatted with its metadata inside each block, extended LBA, which the "
                          "kernel does not support, or a drive without a medium)",
                          "check the device (`nvme id-ns` shows its LBA format) or choose another one")


def resolve_target_file(full: str, requested: str, create_size_bytes: int | None) -> Target:
    """A regular file target, existing or not (creation is left to fio)."""
    try:
        st = os.stat(full)
    except FileNotFoundError:
        return _new_file(full, requested, create_size_bytes)
    if not stat.S_ISREG(st.st_mode):
        raise TargetError(f"not a regular file: {full}", "remove it or choose another target path")
    _require_access(full, os.R_OK | os.W_OK, "file is not readable and writable")
    size_bytes = st.st_size
    if create_size_bytes is not None and size_bytes < create_size_bytes:
        size_bytes = create_size_bytes
    return Target(path=full, kind="file", size_bytes=size_bytes, requested=requested)


def kernel_filesystem(path: str, mounts: Sequence[Mount] | None = None) -> str | None:
    """The kernel file system (devtmpfs, sysfs, procfs, ...) `path` is or would be made on, else None: found from
    its nearest existing folder's mount (in `mounts`, read afresh when not given); anything under /dev but /dev/shm
    counts as devtmpfs."""
    existing = os.path.abspath(path)
    while not os.path.exists(existing) and existing != os.path.dirname(existing):
        existing = os.path.dirname(existing)
    real = os.path.realpath(existing)
    if (real == "/dev" or real.startswith("/dev/")) and not (real == "/dev/shm" or real.startswith("/dev/shm/")):
        return "devtmpfs (/dev)"
    best: Mount | None = None
    for mount in read_mounts() if mounts is None else mounts:
        inside = real == mount.mount_point or real.startswith(mount.mount_point.rstrip("/") + "/")
        if inside and (best is None or len(mount.mount_point) >= len(best.mount_point)):
            best = mount
    return f"{best.fstype} ({best.mount_point})" if best and best.fstype in KERNEL_FILESYSTEMS else None


def _new_file(full: str, requested: str, create_size_bytes: int | None) -> Target:
    """A file that does not exist yet: its parent directory must exist and be writable."""
    parent = os.path.dirname(full)
    if not os.path.isdir(parent):
        raise TargetError(
            f"target directory does not exist: {parent}", "create it first or choose an existing directory"
        )
    _require_access(parent, os.W_OK | os.X_OK, "cannot create a file in this directory")
    return Target(path=full, kind="file", size_bytes=create_size_bytes, requested=requested)


def _require_access(path: str, mode: int, problem: str) -> None:
    if not os.access(path, mode):
        raise TargetError(f"{problem}: {path}", "fix its permissions or run as a user allowed to write it")


def block_sysfs_dir(dev_path: str) -> str | None:
    """The /sys/dev/block/MAJ:MIN directory (resolved) of a block device node, None when not found."""
    try:
        st = os.stat(dev_path)
    except OSError:
        return None
    if not stat.S_ISBLK(st.st_mode):
        return None
    return devnum_sysfs_dir(os.major(st.st_rdev), os.minor(st.st_rdev))


def zoned_model(dev_path: str) -> str | None:
    """The kernel's zoned model of a block device (a partition: of its disk): host-managed or host-aware; None for
    a conventional device or anything else."""
    sysdir = block_sysfs_dir(dev_path)
    if sysdir is None:
        return None
    if os.path.isfile(os.path.join(sysdir, "partition")):
        sysdir = os.path.dirname(sysdir)
    model = read_sysfs(os.path.join(sysdir, "queue", "zoned"))
    return model if model in ("host-managed", "host-aware") else None


def devnum_sysfs_dir(major: int, minor: int) -> str | None:
    """Resolved sysfs directory of block device MAJ:MIN (e.g. /sys/devices/.../nvme0n1), None if absent."""
    link = os.path.join(SYSFS_DEV_BLOCK, f"{major}:{minor}")
    return os.path.realpath(link) if os.path.exists(link) else None


def read_sysfs(path: str) -> str | None:
    """One stripped sysfs attribute, None when missing, unreadable or empty."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            value = handle.read().strip()
    except OSError:
        return None
    return value or None


def block_size_bytes(dev_path: str) -> int | None:
    """Capacity of a block device: sysfs `size` (always 512-byte units), else seek to the end."""
    sysdir = block_sysfs_dir(dev_path)
    sectors = read_sysfs(os.path.join(sysdir, "size")) if sysdir else None
    if sectors is not None and sectors.isdigit():
        return int(sectors) * 512
    try:
        fd = os.open(dev_path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.lseek(fd, 0, os.SEEK_END)
    finally:
        os.close(fd)


def read_mounts() -> list[Mount]:
    """Every mount of this process's namespace, from /proc/self/mountinfo (empty when unreadable)."""
    try:
        with open(MOUNTINFO, encoding="utf-8", errors="replace") as handle:
            lines = handle.readlines()
    except OSError:
        return []
    mounts = []
    for line in lines:
        fields, _, tail = line.partition(" - ")
        parts, after = fields.split(), tail.split()
        if len(parts) >= 5 and len(after) >= 2:
            mounts.append(Mount(parts[2], unescape_proc(after[1]), unescape_proc(parts[4]), after[0]))
    return mounts


def unescape_proc(text: str) -> str:
    """Undo the octal escapes (\\040 for space) the kernel uses in mountinfo and swaps."""
    return text.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")


def block_device_of_char(path: str) -> str | None:
    """The block device a generic character device stands for: /dev/ngXnY -> its namespace's block device,
    /dev/sgN -> /dev/sdX. Found from the device number, never from the node's name: a node made by hand can carry
    any name. None when it reaches no disk, or none with a node in /dev (char_device_disks says which)."""
    return next((node for name in char_device_disks(path) if (node := _block_node(name))), None)


def char_device_disks(path: str) -> list[str]:
    """The kernel's names of the disks the character device `path` reaches as raw commands (its namespace's for an
    NVMe generic device, its SCSI device's for /dev/sgN or a bsg node), from its device number and sysfs."""
    sysfs = _char_sysfs(path)
    names = _nvme_block_names(sysfs)
    scsi_block = os.path.join(sysfs, "device", "block")
    if os.path.isdir(scsi_block):
        names += sorted(os.listdir(scsi_block))
    return names


def char_device_class(path: str) -> str | None:
    """The kernel's class of the character device `path` (nvme-generic, scsi_generic, tty, mem, misc, ...) from its
    device number; None for a number no driver has."""
    subsystem = os.path.join(_char_sysfs(path), "subsystem")
    return os.path.basename(os.path.realpath(subsystem)) if os.path.exists(subsystem) else None


def _char_sysfs(path: str) -> str:
    rdev = os.stat(os.path.realpath(path)).st_rdev
    return os.path.realpath(os.path.join(SYSFS_DEV_CHAR, f"{os.major(rdev)}:{os.minor(rdev)}"))


def _nvme_block_names(sysfs: str) -> list[str]:
    """The namespace block device of the NVMe generic device at `sysfs` (.../nvme/nvmeX/ngXnY, X the controller's
    instance, Y the namespace head's): the kernel names it nvmeXnY, nvmeSnY (S the subsystem's instance) or, on a
    path of a multipath subsystem, shows it as the hidden nvmeScXnY whose head disk is nvmeSnY."""
    generic = _NVME_GENERIC.fullmatch(os.path.basename(sysfs))
    controller = os.path.dirname(sysfs)
    if generic is None or not os.path.isdir(controller):
        return []
    names = []
    for entry in sorted(os.listdir(controller)):
        disk = _NVME_DISK.fullmatch(entry)
        if disk is not None and disk["head"] == generic[2]:
            names.append(f"nvme{disk['subsystem']}n{disk['head']}" if disk["path"] else entry)
    return names


def _block_node(name: str) -> str | None:
    """The node in /dev of the block device the kernel calls `name`: /dev/NAME, or udev's /dev/block/MAJ:MIN, when
    its device number is the one sysfs gives."""
    devnum = read_sysfs(os.path.join("/sys/class/block", name, "dev"))
    for node in (f"/dev/{name}", f"/dev/block/{devnum}"):
        try:
            found = os.stat(node)
        except (OSError, ValueError):
            continue
        if stat.S_ISBLK(found.st_mode) and f"{os.major(found.st_rdev)}:{os.minor(found.st_rdev)}" == devnum:
            return node if node == f"/dev/{name}" else os.path.realpath(node)
    return None


def check_free_space(targets: Sequence[Target]) -> None:
    """Refuse, before any IO, new test files (or growth of existing ones) that do not fit in the free space of
    their filesystem: fio would fill the disk while laying them out, then fail."""
    from ptsbench.units import format_bytes

    needed: dict[int, tuple[int, str]] = {}  # filesystem (st_dev) -> bytes to add, a folder on it
    for target in targets:
        if target.kind != "file" or not target.size_bytes:
            continue
        folder = os.path.dirname(target.path)
        try:
            current = os.stat(target.path).st_size if os.path.exists(target.path) else 0
            device = os.stat(folder).st_dev
        except OSError:
            continue
        grow = max(target.size_bytes - current, 0)
        total, _ = needed.get(device, (0, folder))
        needed[device] = (total + grow, folder)
    for grow, folder in needed.values():
        stats = os.statvfs(folder)
        free = stats.f_bavail * stats.f_frsize
        if grow > free:
            raise TargetError(f"the test file(s) in {folder} need {format_bytes(grow)} ({grow} bytes) but only "
                              f"{format_bytes(free)} ({free} bytes) are free there",
                              "pass a smaller --size, free space, or choose a target on another filesystem")
