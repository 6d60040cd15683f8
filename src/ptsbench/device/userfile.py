"""A user's file is data: an existing file ptsbench did not make is changed (written, laid out again by fio,
deleted) only with --destructive.

ptsbench recognises its own files by name (the test file it makes in a folder target) or by a mark it puts on every
file fio made for it (an extended attribute, which stays with the file and is gone when anyone replaces it). On a
file system without extended attributes the mark cannot be kept, and such a file needs --destructive on a later run.
"""

import os
import stat
from typing import Any

from ptsbench.device.target import TESTFILE_NAME
from ptsbench.errors import TargetError, UnsafeTargetError

MARK = "user.ptsbench"  # the extended attribute on files fio made for ptsbench
MARK_VALUE = b"made by ptsbench"
RUN_MARK = "user.ptsbench.run"  # on a PTS run's target file fio made: the token of the run it was made for


def made_by_ptsbench(path: str) -> bool:
    """Whether ptsbench made the file: the test file of a folder target, or a file carrying ptsbench's mark."""
    if os.path.basename(path) == TESTFILE_NAME:
        return True
    try:
        return os.getxattr(path, MARK) == MARK_VALUE
    except OSError:
        return False


def mark_made(paths: list[str], run_token: str | None = None) -> None:
    """Mark the regular files among `paths` as made by ptsbench, for the run of `run_token` (file_identity's; a
    file system without extended attributes keeps no mark: the file is then treated as the user's)."""
    for path in paths:
        try:
            if stat.S_ISREG(os.stat(path).st_mode):
                os.setxattr(path, MARK, MARK_VALUE)
                if run_token is not None:
                    os.setxattr(path, RUN_MARK, run_token.encode())
        except OSError:
            continue


def file_identity(path: str) -> dict[str, Any]:
    """What a run records of its target file when it starts, for resume (check_same_file): the file's device and
    inode when it exists, whether its path is a link, and the token of the mark the file fio makes will carry (a
    run directory may move, its token stays)."""
    import secrets

    try:
        found = os.stat(path)
    except OSError:
        return {"exists": False, "link": os.path.islink(path), "token": secrets.token_hex(16)}
    return {"exists": True, "device": found.st_dev, "inode": found.st_ino, "link": os.path.islink(path)}


def check_same_file(path: str, recorded: object, run_dir: str) -> list[str]:
    """TargetError when the file at `path` is not the one the run in `run_dir` started on (file_identity recorded
    `recorded`): a link where there was none, another inode than the user's file the run began on, or, for a file
    fio made for the run, one without the run's mark (someone moved or copied another file there, or linked one).
    A note when the run recorded nothing (a ptsbench before this check). A missing file is left to the caller."""
    if not isinstance(recorded, dict):
        return [f"{run_dir} was started by a ptsbench that recorded no file identity: resume could not check that "
                f"{path} is the file the run started on"]
    if not os.path.lexists(path):
        return []
    hint = ("put the run's own file back at that path, or start a new run (the file there now is not touched)")
    if os.path.islink(path) and not recorded.get("link"):
        raise TargetError(f"{path} is now a link (to {os.readlink(path)}): this run started on a file there, not a "
                          "link", hint)
    try:
        found = os.stat(path)
    except OSError as error:
        raise TargetError(f"{path}: {error.strerror}", hint) from None
    if not stat.S_ISREG(found.st_mode):
        raise TargetError(f"{path} is no longer a regular file: this run started on a file there", hint)
    if recorded.get("exists"):
        if (found.st_dev, found.st_ino) != (recorded.get("device"), recorded.get("inode")):
            raise TargetError(f"{path} is not the file this run started on (another inode): another file replaced "
                              "it", hint)
        return []
    try:
        made_for = os.getxattr(path, RUN_MARK).decode(errors="replace")
    except OSError:
        made_for = ""
    if made_for != recorded.get("token"):
        why = "it was made for another run" if made_for else "it lacks the mark ptsbench puts on the file fio makes"
        raise TargetError(f"{path} is not the file this run made ({why}): another file replaced it", hint + "; if "
                          "it is the file this run's fio began to lay out before the run was stopped, remove it")
    return []


def missing(paths: list[str]) -> list[str]:
    """The paths that do not exist yet: the files fio is about to make."""
    return [path for path in dict.fromkeys(paths) if not os.path.lexists(path)]


def remove_made(paths: list[str]) -> list[tuple[str, int]]:
    """Remove the regular files among `paths` that carry ptsbench's mark (fio made them for this run; anything
    replaced since is the user's and stays); returns each removed path with its size in bytes."""
    removed = []
    for path in paths:
        try:
            found = os.stat(path)
            if stat.S_ISREG(found.st_mode) and made_by_ptsbench(path):
                os.unlink(path)
                removed.append((path, found.st_size))
        except OSError:
            continue
    return removed


def check_user_file(path: str, change: str, destructive: bool, is_target: bool = False) -> None:
    """Refuse `change` (what the job does to the existing file `path`) unless --destructive, or ptsbench made it.
    `is_target`: `path` is a target the user named, where a folder would do too (not a file a job file or a replay
    names, nor a log)."""
    if destructive or made_by_ptsbench(path):
        return
    try:
        size_bytes = os.stat(path).st_size
    except OSError:
        return
    raise UnsafeTargetError(
        f"refusing to change {path}: it is an existing file ({size_bytes} bytes) that ptsbench did not make, and "
        f"{change}", "pass --destructive to let fio change it (what it holds is lost), or name a file that does not "
        "exist yet" + (" (or a folder: ptsbench makes its test file there)" if is_target else ""))


def check_whole_file(path: str, destructive: bool) -> None:
    """The guard for a file target a PTS run writes whole: an existing non-empty file needs --destructive unless
    ptsbench made it."""
    try:
        found = os.stat(path)
    except OSError:
        return
    if stat.S_ISREG(found.st_mode) and found.st_size > 0:
        check_user_file(path, "the PTS run overwrites all of it (and grows it to the run's size)", destructive, True)
