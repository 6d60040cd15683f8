"""A user's file is data: an existing file ptsbench did not make is changed (written, laid out again by fio,
deleted) only with --destructive.

ptsbench recognises its own files by name (the test file it makes in a folder target) or by a mark it puts on every
file fio made for it (an extended attribute, which stays with the file and is gone when anyone replaces it). On a
file system without extended attributes the mark cannot be kept, and such a file needs --destructive on a later run.
"""

import os
import stat

from ptsbench.errors import UnsafeTargetError
from ptsbench.target.target import TESTFILE_NAME

MARK = "user.ptsbench"  # the extended attribute on files fio made for ptsbench
MARK_VALUE = b"made by ptsbench"


def made_by_ptsbench(path: str) -> bool:
    """Whether ptsbench made the file: the test file of a folder target, or a file carrying ptsbench's mark."""
    if os.path.basename(path) == TESTFILE_NAME:
        return True
    try:
        return os.getxattr(path, MARK) == MARK_VALUE
    except OSError:
        return False


def mark_made(paths: list[str]) -> None:
    """Mark the regular files among `paths` as made by ptsbench (a file system without extended attributes keeps
    no mark: the file is then treated as the user's)."""
    for path in paths:
        try:
            if stat.S_ISREG(os.stat(path).st_mode):
                os.setxattr(path, MARK, MARK_VALUE)
        except OSError:
            continue


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


def check_user_file(path: str, change: str, destructive: bool) -> None:
    """Refuse `change` (what the job does to the existing file `path`) unless --destructive, or ptsbench made it."""
    if destructive or made_by_ptsbench(path):
        return
    try:
        size_bytes = os.stat(path).st_size
    except OSError:
        return
    raise UnsafeTargetError(
        f"refusing to change {path}: it is an existing file ({size_bytes} bytes) that ptsbench did not make, and "
        f"{change}", "pass --destructive to let fio change it (what it holds is lost), or name a file that does not "
        "exist yet (or a folder: ptsbench makes its test file there)")


def check_whole_file(path: str, destructive: bool) -> None:
    """The guard for a file target a PTS run writes whole: an existing non-empty file needs --destructive unless
    ptsbench made it."""
    try:
        found = os.stat(path)
    except OSError:
        return
    if stat.S_ISREG(found.st_mode) and found.st_size > 0:
        check_user_file(path, "the PTS run overwrites all of it (and grows it to the run's size)", destructive)
