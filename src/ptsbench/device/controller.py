"""Controller-wide state with one owner: the volatile write cache of an NVMe subsystem (feature 6 belongs to the
controller, so it holds for every namespace it serves) or of a SCSI / ATA disk.

Every run (and every member of a fleet) that sets the write cache holds the controller's record: a JSON state file
under /run/ptsbench/controllers (root; ~/.cache/ptsbench/controllers for other users), read and changed only under
`flock` of a lock file beside it. The first holder reads the cache and saves it as the original, then sets it; a
later run wanting the same setting joins (the record lists every holder: a reference count); one wanting the
opposite is refused, naming the run that holds it. The last one out puts back the original. A holder is a process
id with its start time (from /proc), so a holder killed with SIGKILL is seen as gone by the next one that looks; its
record stays, with the original, so a resume (or the next run on the controller) still puts back what was there
before the first run.
"""

import fcntl
import hashlib
import json
import os
import re
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ptsbench.atomic import atomic_write_json
from ptsbench.device.cache import SCSI_TRANSPORTS, read_write_cache, set_write_cache
from ptsbench.device.target import Target
from ptsbench.errors import TargetError, UnsafeTargetError

ROOT_CONTROLLER_DIR = "/run/ptsbench/controllers"
SYSFS = "/sys"
_thread_lock = threading.Lock()  # fleet members are threads of one process: flock is per open file, this is too


@dataclass(frozen=True)
class Controller:
    """What owns a write cache: `key` names its record, `name` is for people (nvme1, /dev/sdb)."""

    key: str
    name: str


@dataclass
class CacheHold:
    """A run's share of a controller's write cache, from `hold_write_cache` to `release_write_cache`."""

    controller: Controller
    holder: dict[str, Any]
    wanted: bool
    original: bool | None  # what the last one out puts back: the cache before the first holder
    before: bool | None  # the cache as this run found it
    after: bool | None  # the cache once this run had joined
    done: bool  # the cache reads as wanted
    message: str
    others: list[dict[str, Any]] = field(default_factory=list)  # the holders this run joined


def controller_dir() -> Path:
    return Path(ROOT_CONTROLLER_DIR) if os.geteuid() == 0 else Path.home() / ".cache" / "ptsbench" / "controllers"


def controller_of(target: Target, facts: dict[str, object], sysfs: str = SYSFS) -> Controller | None:
    """The owner of the target's write cache: an NVMe namespace's subsystem (all its controllers), a SCSI or SATA
    disk itself; None for files and for devices whose write cache ptsbench does not set."""
    if target.kind != "block":
        return None
    transport = str(facts.get("transport") or "")
    controller = facts.get("nvme_controller")
    if transport.startswith("nvme") and isinstance(controller, str):
        name = os.path.basename(controller)
        subsystem = nvme_subsystem(name, sysfs)
        return Controller(f"nvme-{subsystem or name}", name if subsystem is None else f"{name} ({subsystem})")
    disk = facts.get("disk")
    if (transport == "sata" or transport in SCSI_TRANSPORTS) and isinstance(disk, str):
        try:
            found = os.stat(disk)
        except OSError:
            return None
        if stat.S_ISBLK(found.st_mode):
            return Controller(f"disk-{os.major(found.st_rdev)}-{os.minor(found.st_rdev)}", disk)
    return None


def nvme_subsystem(controller: str, sysfs: str = SYSFS) -> str | None:
    """The kernel's NVM subsystem (nvme-subsysN) a controller (nvmeN) belongs to, None when sysfs does not say."""
    folder = os.path.join(sysfs, "class", "nvme-subsystem")
    try:
        subsystems = sorted(os.listdir(folder))
    except OSError:
        return None
    for subsystem in subsystems:
        if os.path.exists(os.path.join(folder, subsystem, controller)):
            return subsystem
    return None


def hold_write_cache(target: Target, facts: dict[str, object], controller: Controller, wanted: bool,
                     run_dir: Path) -> CacheHold:
    """Join the controller's write cache as `wanted` (setting it when this run is the first holder). Raises
    UnsafeTargetError, holding nothing, when another live run holds it the other way."""
    holder = {"pid": os.getpid(), "start_ticks": _start_ticks(os.getpid()), "run_dir": str(Path(run_dir).absolute()),
              "target": target.path}
    with _locked(controller) as (state_path, state):
        holders = [each for each in state.get("holders", []) if _alive(each)]
        _refuse_opposite(target, controller, state, holders, wanted)
        before = read_write_cache(target, facts)
        original = state.get("original", before)
        if holders and before is wanted:
            done, message = True, (f"write cache of {controller.name} already {_word(wanted)}: shared with "
                                   f"{len(holders)} other run(s) on it ({', '.join(h['target'] for h in holders)})")
        else:
            done, message = set_write_cache(target, facts, wanted)
        after = read_write_cache(target, facts) if done else before
        others = [dict(each) for each in holders]
        atomic_write_json(state_path, {"controller": controller.name, "original": original, "setting": wanted,
                                       "holders": [*holders, holder]})
    return CacheHold(controller, holder, wanted, original, before, after, after is wanted, message, others)


def check_write_cache_free(target: Target, facts: dict[str, object], wanted: bool) -> None:
    """Refuse (UnsafeTargetError) a run wanting the write cache `wanted` on a controller another live run holds the
    other way: the check before a run directory is made, and the dry run's (reads the record, changes nothing)."""
    controller = controller_of(target, facts)
    if controller is None:
        return
    try:
        state = json.loads((controller_dir() / f"{_file_key(controller)}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if isinstance(state, dict):
        holders = [each for each in state.get("holders", []) if isinstance(each, dict) and _alive(each)]
        _refuse_opposite(target, controller, state, holders, wanted)


def _refuse_opposite(target: Target, controller: Controller, state: dict[str, Any], holders: list[dict[str, Any]],
                     wanted: bool) -> None:
    if holders and state.get("setting") is not wanted:
        other = holders[0]
        raise UnsafeTargetError(
            f"refusing to run on {target.path}: the write cache of {controller.name}, a controller feature shared "
            f"by its namespaces, is held {_word(state.get('setting'))} by another ptsbench run on "
            f"{other.get('target')} (pid {other.get('pid')}, run directory {other.get('run_dir')}); this run wants "
            f"it {_word(wanted)}", "wait until that run ends, or run both with the same write-cache setting")


def release_write_cache(hold: CacheHold, target: Target, facts: dict[str, object]) -> tuple[str, bool, str]:
    """Leave the controller's write cache: ("restored" | "left" | "kept", done, message). The last holder out puts
    back the original ("restored"; "kept" when it already reads so); an earlier one leaves it to the others
    ("left")."""
    with _locked(hold.controller) as (state_path, state):
        holders = [each for each in state.get("holders", []) if _alive(each) and each != hold.holder]
        if holders:
            atomic_write_json(state_path, {**state, "holders": holders})
            names = ", ".join(f"{each.get('target')} (pid {each.get('pid')})" for each in holders)
            return "left", True, (f"write cache of {hold.controller.name} left {_word(hold.wanted)}: still held by "
                                  f"{len(holders)} other run(s): {names}; the last one puts it back")
        original = state.get("original", hold.original)
        if not isinstance(original, bool):
            state_path.unlink(missing_ok=True)
            return "kept", True, f"write cache of {hold.controller.name}: nothing to put back (it read unknown)"
        now = read_write_cache(target, facts)
        if now is original:
            state_path.unlink(missing_ok=True)
            return "kept", True, f"write cache of {hold.controller.name} reads {_word(original)}, as before the run"
        done, message = set_write_cache(target, facts, original)
        if done:
            state_path.unlink(missing_ok=True)
        else:  # kept, with its original and no holder: the next run on the controller (or a resume) puts it back
            atomic_write_json(state_path, {**state, "holders": []})
        return "restored", done, message


@contextmanager
def _locked(controller: Controller) -> Iterator[tuple[Path, dict[str, Any]]]:
    folder = controller_dir()
    key = _file_key(controller)
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        found = os.lstat(folder)
        if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.geteuid():
            raise OSError(0, "not a folder of this user")
        fd = os.open(folder / f"{key}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError as error:
        raise TargetError(f"cannot record who holds the write cache of {controller.name}: {folder}: "
                          f"{error.strerror}", f"make {folder} a folder only this user can write") from None
    state_path = folder / f"{key}.json"
    with _thread_lock:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # held for the commands too: seconds at most
            try:
                state = json.loads(state_path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                state = {}
            yield state_path, state if isinstance(state, dict) else {}
        finally:
            os.close(fd)


def _file_key(controller: Controller) -> str:
    key = re.sub(r"[^A-Za-z0-9._-]", "_", controller.key)
    return key if len(key) <= 100 else key[:60] + "-" + hashlib.sha256(key.encode()).hexdigest()[:16]


def _start_ticks(pid: int) -> int | None:
    """The process's start time (clock ticks since boot, /proc/PID/stat field 22): a PID reused later differs. None
    for a process that is gone, or dead and not yet reaped by its parent (a zombie holds nothing)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            fields = handle.read().rpartition(")")[2].split()
        return None if fields[0] in ("Z", "X") else int(fields[19])
    except (OSError, ValueError, IndexError):
        return None


def _alive(holder: dict[str, Any]) -> bool:
    pid = holder.get("pid")
    return isinstance(pid, int) and _start_ticks(pid) is not None and _start_ticks(pid) == holder.get("start_ticks")


def _word(state: object) -> str:
    return "on" if state is True else "off" if state is False else "unknown"
