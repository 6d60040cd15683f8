"""Whether the kernel uses a block device now (the guard's "in use"), each reason naming the holder.

A device is in use when it or one of its partitions is mounted or active swap; when something stacks on it (sysfs
holders: dm, md, LVM, bcache; a loop device backed by it or by a file on it); when it is a loop device that shares its
backing file with another loop device, or writes through to a device in use; when it is a member of a multi-device
filesystem or pool that is mounted or imported (btrfs, an ext3/ext4 external journal, ZFS); and when anything else
holds it open exclusively (an O_EXCL open fails with EBUSY). This process's own claims (device/claim.py) do not count.
"""

import errno
import fcntl
import glob
import os
import shutil
import stat
import struct
import subprocess
from dataclasses import dataclass

from ptsbench.device.target import block_sysfs_dir, read_mounts, read_sysfs, unescape_proc

SWAPS = "/proc/swaps"
SYSFS_BLOCK = "/sys/block"
SYSFS_BTRFS = "/sys/fs/btrfs"
ZFS_POOLS = "/proc/spl/kstat/zfs"
JBD2_JOURNALS = "/proc/fs/jbd2"
LOOP_GET_STATUS64 = 0x4C05
# struct loop_info64: device, inode, rdevice, offset, sizelimit (u64); number, encrypt type, key size, flags (u32);
# file name, crypt name, key (64, 64, 32 bytes); init (2 x u64)
LOOP_INFO64 = struct.Struct("=5Q4I64s64s32s2Q")
EXT_FILESYSTEMS = ("ext3", "ext4", "ext4dev")
TOOL_TIMEOUT_S = 10

_held_here: set[int] = set()  # st_rdev of the block devices this process holds open with O_EXCL (its claims)


def note_held_here(rdev: int, held: bool) -> None:
    """Record that this process took (held=True) or gave back its exclusive claim on device `rdev`: the exclusive
    probe must not call the device in use because of our own claim."""
    if held:
        _held_here.add(rdev)
    else:
        _held_here.discard(rdev)


def held_here(dev_path: str) -> bool:
    """Whether this process holds the block device open exclusively (its claim)."""
    try:
        found = os.stat(dev_path)
    except OSError:
        return False
    return stat.S_ISBLK(found.st_mode) and found.st_rdev in _held_here


@dataclass(frozen=True)
class _Node:
    """The device or one of its partitions."""

    name: str  # /dev/loop3p1
    rdev: int
    sysdir: str


@dataclass(frozen=True)
class LoopStatus:
    """A bound loop device: what backs it (the backing file's st_dev, st_ino and, for a device, st_rdev) and which
    bytes of it."""

    name: str  # /dev/loop5
    rdev: int
    backing_dev: int
    backing_ino: int
    backing_rdev: int  # 0 for a regular file
    offset_bytes: int
    size_limit_bytes: int  # 0: to the end of the backing file
    backing_file: str  # as sysfs names it

    def overlaps(self, other: "LoopStatus") -> bool:
        """Whether the two loop devices map some of the same bytes of their (same) backing file."""
        end = self.offset_bytes + self.size_limit_bytes if self.size_limit_bytes else None
        other_end = other.offset_bytes + other.size_limit_bytes if other.size_limit_bytes else None
        return (end is None or other.offset_bytes < end) and (other_end is None or self.offset_bytes < other_end)


def in_use_reasons(dev_path: str) -> list[str]:
    """Human reasons the system uses the block device (or one of its partitions) now; empty when nothing does."""
    return _reasons(dev_path, frozenset())


def _reasons(dev_path: str, seen: frozenset[int]) -> list[str]:
    nodes = _nodes(dev_path)
    if not nodes:
        return []
    seen = seen | {node.rdev for node in nodes}
    reasons = mounted_reasons(dev_path)
    swaps = active_swaps()
    reasons += [f"{node.name} is an active swap device" for node in nodes if node.name in swaps]
    loops = loop_statuses()
    disk = _disk_of(nodes[0])  # a partition's bytes are its disk's too: what stacks on the whole disk sees them
    for node in nodes + ([disk] if disk and disk.rdev not in seen else []):
        for holder in _holders(node):
            reasons.append(f"{node.name} is held by {holder}" + _use_of(holder, seen))
        for loop in loops:
            if loop.rdev in seen:
                continue
            if loop.backing_rdev == node.rdev:
                reasons.append(f"{node.name} is the backing device of {loop.name}" + _use_of(loop.name, seen))
            elif loop.backing_dev == node.rdev:
                reasons.append(f"{node.name} holds {loop.backing_file}, the backing file of {loop.name}"
                               + _use_of(loop.name, seen))
    for node in nodes:
        reasons += _member_reasons(node)
    reasons += _loop_reasons(nodes[0], loops, seen)
    if not reasons:
        reasons = _exclusive_reasons(nodes)
    return reasons


def _use_of(dev_path: str, seen: frozenset[int]) -> str:
    """', which is mounted on /mnt' and the like: what uses a device stacked on ours (empty when nothing does)."""
    reasons = _reasons(dev_path, seen)
    return f", which is in use ({'; '.join(reasons)})" if reasons else ""


def _nodes(dev_path: str) -> list[_Node]:
    """The device and its partitions, as /dev names with their device numbers."""
    sysdir = block_sysfs_dir(dev_path)
    if sysdir is None:
        return []
    nodes = [_Node(os.path.realpath(dev_path), os.stat(dev_path).st_rdev, sysdir)]
    return nodes + [node for node in map(_node_of, partition_dirs(dev_path)) if node is not None]


def _node_of(sysdir: str) -> _Node | None:
    """The /dev name and device number of a block device's sysfs directory."""
    number = read_sysfs(os.path.join(sysdir, "dev"))
    if not number or ":" not in number:
        return None
    major, minor = number.split(":")
    return _Node("/dev/" + os.path.basename(sysdir), os.makedev(int(major), int(minor)), sysdir)


def _disk_of(node: _Node) -> _Node | None:
    """The whole disk a partition is part of (None for a whole device)."""
    if not os.path.isfile(os.path.join(node.sysdir, "partition")):
        return None
    return _node_of(os.path.dirname(node.sysdir))


def partition_dirs(dev_path: str) -> list[str]:
    """Sysfs directories of the device's partitions (children holding a `partition` file)."""
    sysdir = block_sysfs_dir(dev_path)
    if sysdir is None:
        return []
    try:
        children = sorted(os.listdir(sysdir))
    except OSError:
        return []
    return [os.path.join(sysdir, child) for child in children
            if os.path.isfile(os.path.join(sysdir, child, "partition"))]


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


def active_swaps() -> set[str]:
    """Real paths of the active swap devices and files (/proc/swaps)."""
    try:
        with open(SWAPS, encoding="utf-8", errors="replace") as handle:
            lines = handle.readlines()[1:]
    except OSError:
        return set()
    return {_realpath(unescape_proc(line.split()[0])) for line in lines if line.split()}


def _holders(node: _Node) -> list[str]:
    """/dev names of what the kernel stacks on the node (dm-0, md127, bcache0, ...)."""
    try:
        return ["/dev/" + name for name in sorted(os.listdir(os.path.join(node.sysdir, "holders")))]
    except OSError:
        return []


def loop_statuses() -> list[LoopStatus]:
    """Every bound loop device, from the kernel (LOOP_GET_STATUS64): backing file identity and mapped range."""
    statuses = []
    for backing in sorted(glob.glob(os.path.join(SYSFS_BLOCK, "loop*", "loop", "backing_file"))):
        name = "/dev/" + backing.split(os.sep)[-3]
        try:
            fd = os.open(name, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            info = LOOP_INFO64.unpack(fcntl.ioctl(fd, LOOP_GET_STATUS64, bytes(LOOP_INFO64.size)))
            rdev = os.fstat(fd).st_rdev
        except OSError:
            continue
        finally:
            os.close(fd)
        statuses.append(LoopStatus(name, rdev, info[0], info[1], info[2], info[3], info[4],
                                   read_sysfs(backing) or info[9].rstrip(b"\0").decode(errors="replace")))
    return statuses


def _loop_reasons(node: _Node, loops: list[LoopStatus], seen: frozenset[int]) -> list[str]:
    """For a loop device: other loop devices over the same bytes of its backing file, and the use of the device it
    writes through to."""
    own = next((loop for loop in loops if loop.rdev == node.rdev), None)
    if own is None:
        return []
    reasons = []
    for other in loops:
        same = (other.backing_dev, other.backing_ino) == (own.backing_dev, own.backing_ino)
        if other.rdev not in seen and same and own.overlaps(other):
            reasons.append(f"{node.name} shares its backing file {own.backing_file} with {other.name}"
                           + _use_of(other.name, seen))
    if own.backing_rdev:
        lower = _device_node(own.backing_rdev)
        if lower is not None and own.backing_rdev not in seen:
            reasons += [f"{node.name} writes through to {lower}: {reason}" for reason in _reasons(lower, seen)]
    return reasons


def _device_node(rdev: int) -> str | None:
    """/dev/NAME of block device `rdev`, None when sysfs does not know it."""
    link = os.path.join("/sys/dev/block", f"{os.major(rdev)}:{os.minor(rdev)}")
    if not os.path.exists(link):
        return None
    path = "/dev/" + os.path.basename(os.path.realpath(link))
    return path if os.path.exists(path) else None


def _member_reasons(node: _Node) -> list[str]:
    """The node as a member of a multi-device filesystem or pool that is mounted or imported (judged with its
    siblings, from blkid's signature and the kernel's own lists)."""
    values = blkid_values(node.name)
    kind, uuid = values.get("TYPE"), values.get("UUID")
    if kind == "btrfs" and uuid:
        return _btrfs_reasons(node, uuid)
    if kind == "jbd" and uuid:
        return _journal_reasons(node, uuid)
    if kind == "zfs_member" and values.get("LABEL"):
        pool = values["LABEL"]
        return [f"{node.name} is a member of the imported ZFS pool {pool}"] if os.path.isdir(
            os.path.join(ZFS_POOLS, pool)) else []
    return []


def _btrfs_reasons(node: _Node, fsid: str) -> list[str]:
    """A btrfs member the kernel lists among the devices of a mounted btrfs filesystem (/sys/fs/btrfs/FSID)."""
    members = {os.path.realpath(link): "/dev/" + os.path.basename(link)
               for link in glob.glob(os.path.join(SYSFS_BTRFS, fsid, "devices", "*"))}
    if node.sysdir not in members:
        return []
    names = set(members.values())
    where = [mount.mount_point for mount in read_mounts()
             if mount.fstype == "btrfs" and _realpath(mount.source) in names]
    others = sorted(names - {node.name})
    return [f"{node.name} is a member of the btrfs filesystem {fsid}"
            + (f" (with {', '.join(others)})" if others else "")
            + (f", mounted on {', '.join(where)}" if where else ", which is mounted")]


def _journal_reasons(node: _Node, journal_uuid: str) -> list[str]:
    """An ext3/ext4 external journal whose filesystem is mounted: the kernel runs a jbd2 journal named after the
    device (/proc/fs/jbd2/NAME), and blkid names the journal's UUID as the filesystem's EXT_JOURNAL."""
    if not os.path.isdir(os.path.join(JBD2_JOURNALS, os.path.basename(node.name))):
        return []  # no journal runs on it: not in use (a copy of a journal device has the same UUID)
    reasons = []
    for mount in read_mounts():
        ext = mount.fstype in EXT_FILESYSTEMS and mount.source.startswith("/dev/")
        if ext and blkid_values(mount.source).get("EXT_JOURNAL") == journal_uuid:
            reasons.append(f"{node.name} is the external journal of {mount.source}, mounted on {mount.mount_point}")
    return reasons


def blkid_values(dev_path: str) -> dict[str, str]:
    """What blkid reads from the device's own bytes (`blkid -p`): TYPE, UUID, LABEL, PTTYPE, EXT_JOURNAL, ..."""
    values = {}
    for line in (run_tool(["blkid", "-p", "-o", "export", dev_path]) or "").splitlines():
        key, _, value = line.partition("=")
        if key and value:
            values[key] = value
    return values


def run_tool(argv: list[str]) -> str | None:
    """stdout of a probing tool, None when it is missing, fails to start or times out."""
    if shutil.which(argv[0]) is None:
        return None
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout


def _exclusive_reasons(nodes: list[_Node]) -> list[str]:
    """The exclusive-open probe: a device someone holds with O_EXCL (a filesystem's log or journal, a pool, a
    program) cannot be opened so; the holder is named when a process has it open."""
    whole = nodes[0]
    if whole.rdev in _held_here or not _held_exclusively(whole.name):
        return []
    busy = [node for node in nodes[1:] if _held_exclusively(node.name)] or [whole]
    reasons = []
    for node in busy:
        holders = _processes_holding(node.rdev)
        if holders:
            reasons.append(f"{node.name} is held open exclusively by another program ({', '.join(holders)})")
        else:
            reasons.append(f"{node.name} is held open exclusively by the kernel (no process has it open: the log or "
                           "journal of a mounted filesystem, a member of an active pool or array, or a driver)")
    return reasons


def _held_exclusively(dev_path: str) -> bool:
    try:
        fd = os.open(dev_path, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as error:
        return error.errno == errno.EBUSY
    os.close(fd)
    return False


def _processes_holding(rdev: int) -> list[str]:
    """'pid 123 (name)' of every process with the block device `rdev` open (from /proc/PID/fd)."""
    found = []
    for fd_dir in glob.glob("/proc/[0-9]*/fd"):
        pid = fd_dir.split(os.sep)[2]
        if int(pid) == os.getpid():
            continue
        try:
            names = os.listdir(fd_dir)
        except OSError:
            continue
        for name in names:
            try:
                opened = os.stat(os.path.join(fd_dir, name))
            except OSError:
                continue
            if stat.S_ISBLK(opened.st_mode) and opened.st_rdev == rdev:
                found.append(f"pid {pid} ({read_sysfs(f'/proc/{pid}/comm') or '?'})")
                break
    return found


def _realpath(path: str) -> str:
    return os.path.realpath(path) if path.startswith("/") else path
