"""The claim on a run's targets, held from the guard's check to the end of the run.

Each block device the run writes is kept open with O_EXCL: meanwhile the kernel refuses a mount of it and any other
exclusive user (fio opens devices without O_EXCL, so it still works). Each target, device or file, also gets a claim
record: a small JSON file (pid, run directory) under /run/ptsbench/claims (root) or ~/.cache/ptsbench/claims, locked
with flock while the run lasts, so a second ptsbench on the same target is refused naming the first run's directory.
The kernel drops both when the process dies, however it dies; every descriptor is O_CLOEXEC, so fio never inherits
one.
"""

import errno
import fcntl
import hashlib
import json
import os
import stat
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ptsbench.device.inuse import held_here, in_use_reasons, loop_statuses, note_held_here
from ptsbench.device.target import block_device_of_char
from ptsbench.errors import TargetError, UnsafeTargetError

ROOT_CLAIM_DIR = "/run/ptsbench/claims"
LOCK_TRIES = 5  # a guard probing the record takes a shared lock for an instant: try again before calling it held
LOCK_RETRY_S = 0.02
OTHER_RUN_HINT = ("wait until that run ends, or stop it: two runs on one target measure each other and overwrite "
                  "each other's data")

_records_here: dict[str, int] = {}  # claim record key -> this process's locked descriptor of it


def claim_dir() -> Path:
    """Where claim records live: one folder for root (devices are root's), one per user for their files."""
    return Path(ROOT_CLAIM_DIR) if os.geteuid() == 0 else Path.home() / ".cache" / "ptsbench" / "claims"


def claimed_path(path: str) -> str:
    """What a claim on `path` holds: for a generic character device (/dev/ngXnY, /dev/sgN), the block device it
    stands for, so a run through either node and a run on the block device exclude each other."""
    try:
        is_char = stat.S_ISCHR(os.stat(path).st_mode)
    except OSError:
        return path
    return (block_device_of_char(path) or path) if is_char else path


def claim_keys(path: str) -> list[str]:
    """The record names of a target, the same however it is spelled: a block device (or a generic character device
    of one) by its device number; a file by its real path, and by its inode while it exists (a hard link is the same
    file)."""
    path = claimed_path(path)
    try:
        found = os.stat(path)
    except OSError:
        found = None
    if found is not None and stat.S_ISBLK(found.st_mode):
        return [f"block-{os.major(found.st_rdev)}-{os.minor(found.st_rdev)}"]
    real = os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(path))), os.path.basename(path))
    keys = ["file-" + hashlib.sha256(real.encode(errors="surrogateescape")).hexdigest()[:32]]
    if found is not None:
        keys.append(f"inode-{found.st_dev}-{found.st_ino}")
    return keys


def other_run_reason(path: str) -> str | None:
    """'another ptsbench run holds X (pid N, run directory D)' when another process holds a claim on `path`."""
    for key in claim_keys(path):
        if key in _records_here:
            continue
        record_path = claim_dir() / f"{key}.json"
        try:
            fd = os.open(record_path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                continue  # a record left by a run that died: nobody holds it
            except BlockingIOError:
                return _describe(record_path, path)
        finally:
            os.close(fd)
    return None


def check_not_claimed(path: str) -> None:
    """Refuse a target another ptsbench run holds (whatever the flags: two runs on one target are never wanted)."""
    reason = other_run_reason(path)
    if reason:
        raise UnsafeTargetError(f"refusing to use {path}: {reason}", OTHER_RUN_HINT)


def check_distinct(paths: Sequence[str]) -> None:
    """Refuse one target named twice, however spelled: the same block device (another path, a symlink), a partition
    and its disk, the same file (a hard link, another path), a loop device and its backing file or device, two loop
    devices over one file: two runs at once on it would measure each other and write the same bytes."""
    named = []
    for path in paths:
        own, disk = set(claim_keys(path)), set(_disk_keys(path))
        named.append((path, own, disk, set(_backing_keys(own | disk))))
    for index, (path, own, disk, backing) in enumerate(named):
        for earlier, earlier_own, earlier_disk, earlier_backing in named[:index]:
            if (own & earlier_own or own & earlier_disk or disk & earlier_own or backing & earlier_backing
                    or backing & earlier_own or own & earlier_backing):
                raise UnsafeTargetError(f"{earlier} and {path} are the same device or file (or one holds the "
                                        "other)", "name each device once: two runs at once on one device measure "
                                        "each other")


def _backing_keys(keys: set[str]) -> list[str]:
    """The claim keys of what backs the loop devices among `keys` (block keys): its file's inode, or its device."""
    found = []
    for loop in loop_statuses():
        if f"block-{os.major(loop.rdev)}-{os.minor(loop.rdev)}" in keys:
            found.append(f"inode-{loop.backing_dev}-{loop.backing_ino}")
            if loop.backing_rdev:
                found.append(f"block-{os.major(loop.backing_rdev)}-{os.minor(loop.backing_rdev)}")
    return found


def _disk_keys(path: str) -> list[str]:
    """The claim key of the whole disk a partition belongs to ([] for anything else)."""
    try:
        found = os.stat(path)
    except OSError:
        return []
    if not stat.S_ISBLK(found.st_mode):
        return []
    sysdir = os.path.realpath(f"/sys/dev/block/{os.major(found.st_rdev)}:{os.minor(found.st_rdev)}")
    if not os.path.exists(os.path.join(sysdir, "partition")):
        return []
    try:
        with open(os.path.join(os.path.dirname(sysdir), "dev"), encoding="ascii") as handle:
            major, minor = handle.read().strip().split(":")
    except (OSError, ValueError):
        return []
    return [f"block-{major}-{minor}"]


@contextmanager
def claim_targets(paths: Iterable[str], run_dir: Path, allow_in_use: bool = False,
                  reached: Iterable[str] = (), reached_note: str = "") -> Iterator[None]:
    """Hold the claim on every path (block devices and files a run writes) until the block ends. Raises
    UnsafeTargetError, holding nothing, when another ptsbench run holds one, or when a block device is in use
    (unless `allow_in_use`: then it is claimed without the exclusive open). `reached`: devices the run erases
    without testing them (the other namespaces an NVMe sanitize reaches), claimed by record only, with
    `reached_note` saying why, so that no other ptsbench run starts on them meanwhile."""
    record = {"pid": os.getpid(), "run_dir": str(Path(run_dir).absolute()),
              "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    keys: list[str] = []
    exclusive: list[tuple[int, int]] = []  # (descriptor, st_rdev)
    try:
        for path in dict.fromkeys(reached):
            for key in claim_keys(path):
                if key not in _records_here and key not in keys:
                    _take_record(key, path, {**record, "note": reached_note} if reached_note else record)
                    keys.append(key)
        for path in dict.fromkeys(paths):
            for key in claim_keys(path):
                if key not in _records_here and key not in keys:
                    _take_record(key, path, record)
                    keys.append(key)
            opened = _open_exclusive(claimed_path(path), allow_in_use)
            if opened is not None:
                exclusive.append(opened)
                note_held_here(opened[1], True)
        yield
    finally:
        for fd, rdev in exclusive:
            note_held_here(rdev, False)
            os.close(fd)
        for key in keys:
            _release_record(key)


def _take_record(key: str, path: str, record: dict[str, object]) -> None:
    folder = claim_dir()
    record_path = folder / f"{key}.json"
    while True:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(record_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as error:
            raise TargetError(f"cannot claim {path}: cannot write its claim record {record_path}: "
                              f"{error.strerror}", f"make {folder} writable (ptsbench records there which run "
                              "uses a target)") from None
        if not _lock(fd):
            os.close(fd)
            raise UnsafeTargetError(f"refusing to use {path}: {_describe(record_path, path)}", OTHER_RUN_HINT)
        try:
            current = os.stat(record_path).st_ino
        except FileNotFoundError:
            current = None
        if current == os.fstat(fd).st_ino:
            break
        os.close(fd)  # its holder removed it between our open and our lock: take the new one
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps({**record, "target": path}).encode(), 0)
    _records_here[key] = fd


def _lock(fd: int) -> bool:
    for attempt in range(LOCK_TRIES):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if attempt + 1 < LOCK_TRIES:
                time.sleep(LOCK_RETRY_S)
    return False


def _release_record(key: str) -> None:
    fd = _records_here.pop(key)
    (claim_dir() / f"{key}.json").unlink(missing_ok=True)  # removed while still locked: see _take_record
    os.close(fd)


def _describe(record_path: Path, path: str) -> str:
    try:
        record = json.loads(record_path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        record = {}
    if not isinstance(record, dict) or not record.get("run_dir"):
        return f"another ptsbench run holds {path}"
    note = f": {record['note']}" if record.get("note") else ""
    return (f"another ptsbench run holds {path} (pid {record.get('pid')}, run directory {record['run_dir']})"
            f"{note}")


def _open_exclusive(path: str, allow_in_use: bool) -> tuple[int, int] | None:
    """An O_EXCL descriptor of a block device (None for a file, or a device in use that `allow_in_use` lets be)."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISBLK(found.st_mode) or held_here(path):  # held: a fleet run claimed all its devices at once
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as error:
        if error.errno != errno.EBUSY or allow_in_use:
            return None
        reasons = in_use_reasons(path) or ["something holds it open exclusively"]
        raise UnsafeTargetError(f"refusing to write to {path}: it came into use after the guard's check: "
                                + "; ".join(reasons), "stop what uses it, then start the run again") from None
    return fd, found.st_rdev
