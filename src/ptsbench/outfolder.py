"""The --out folder of `plot` and `compare`: ptsbench writes only into a folder of its own, so no file of the user's
is overwritten. A folder is its own when it is new or empty, or when its ledger (LEDGER, rewritten after every plot or
comparison into it) lists every file in it with the SHA-256 of the bytes ptsbench wrote. A file the ledger does not
list, or one changed since, is the user's: the folder is refused, naming it, and nothing is written. A report keeps
the same kind of ledger of the images it wrote in figures/ (report/build.py): only those are replaced or removed."""

import contextlib
import hashlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from ptsbench.atomic import atomic_write_json
from ptsbench.errors import PtsbenchError, StoreError
from ptsbench.store import is_temporary, read_json

LEDGER = ".ptsbench-files.json"
MARK_WITHIN_BYTES = 4096  # an output's mark is in its first line or two (check_own_file): a user's file is not read


def _files(folder: Path) -> Iterator[str]:
    """Every entry under `folder` that is not a folder (files, links, FIFOs...), relative, ptsbench's own temporaries
    and the ledger left out."""
    for root, folders, names in os.walk(folder):
        folders[:] = [name for name in folders if not is_temporary(name)]
        for name in [*names, *(name for name in folders if os.path.islink(os.path.join(root, name)))]:
            relative = os.path.relpath(os.path.join(root, name), folder)
            if relative != LEDGER and not is_temporary(name):
                yield relative


def file_digest(path: Path) -> str | None:
    """SHA-256 of a regular file's bytes; None for anything else (ptsbench writes regular files only)."""
    if path.is_symlink() or not path.is_file():
        return None
    total = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            total.update(block)
    return total.hexdigest()


def ledger_files(folder: Path, ledger: Path | None = None) -> dict[str, str]:
    """What the ledger (`ledger`, by default the folder's LEDGER) says ptsbench wrote in `folder` ({} without one, or
    a damaged one: then every file counts as the user's)."""
    path = ledger or folder / LEDGER
    if not path.is_file() or path.is_symlink():
        return {}
    try:
        ledger = read_json(path)
    except StoreError:
        return {}
    files = ledger.get("files") if isinstance(ledger, dict) else None
    return {str(name): str(digest) for name, digest in files.items()} if isinstance(files, dict) else {}


def check_own_folder(folder: Path) -> None:
    """Refuse `folder` unless it is new, empty or holds only what ptsbench wrote there, unchanged; never a link (it
    would write into the folder the link names, which may be anyone's)."""
    if folder.is_symlink():
        raise StoreError(f"--out {folder} is a link (to {os.readlink(folder)}): ptsbench writes only into a folder "
                         "of its own, never through a link", "name the folder itself, or a new one")
    if folder.exists() and not folder.is_dir():
        raise StoreError(f"--out {folder} is a file", "choose a new folder")
    if not folder.is_dir():
        return
    written = ledger_files(folder)
    for relative in sorted(_files(folder)):
        if written.get(relative) is None or written[relative] != file_digest(folder / relative):
            changed = " (or it changed since)" if relative in written else ""
            raise StoreError(f"--out {folder} is not empty: it holds {relative}, which ptsbench did not write "
                             f"there{changed}", "choose a new or empty folder for --out: ptsbench never writes over "
                             "other files")


def _record(folder: Path) -> None:
    """The ledger of every file now in `folder` (each was there, unchanged, when it was checked, or was written
    since)."""
    if folder.is_dir():
        files = {relative: file_digest(folder / relative) for relative in sorted(_files(folder))}
        atomic_write_json(folder / LEDGER, {"files": {name: digest for name, digest in files.items() if digest}})


def record_files(folder: Path, names: Iterable[str], ledger: Path) -> None:
    """`ledger`: these files of `folder` alone (the ones ptsbench wrote there); removed when there are none."""
    files = {name: digest for name in sorted(names) if (digest := file_digest(folder / name))}
    if files:
        atomic_write_json(ledger, {"files": files})
    else:
        ledger.unlink(missing_ok=True)


@contextlib.contextmanager
def own_folder(folder: Path) -> Iterator[Path]:
    """Check `folder` before writing into it, and record what it holds afterwards (also after a failure: what was
    written is ptsbench's)."""
    check_own_folder(folder)
    try:
        yield folder
    except BaseException:
        with contextlib.suppress(OSError, PtsbenchError):
            _record(folder)
        raise
    _record(folder)


def check_own_file(path: Path, mark: str, option: str) -> None:
    """Refuse an output file (`option` names it) that would replace anything but an earlier output of ptsbench (a
    regular file holding `mark` within its first MARK_WITHIN_BYTES, where ptsbench writes it): a user's file would be
    lost, a device node in /dev would become a file; and one on the kernel's own file systems."""
    import stat

    from ptsbench.device.target import kernel_filesystem

    hint = f"give {option} a new file name, or a file ptsbench wrote there before, on a real file system"
    try:
        found = path.lstat()
    except FileNotFoundError:
        found = None
    if found is not None and not (stat.S_ISREG(found.st_mode) and mark.encode() in _head(path)):
        raise PtsbenchError(f"{option} {path} exists and is not a file ptsbench wrote: it is not overwritten", hint)
    kernel = kernel_filesystem(str(path))
    if kernel:
        raise PtsbenchError(f"{option} {path} is on the kernel's {kernel}", hint)


def _head(path: Path) -> bytes:
    """The first MARK_WITHIN_BYTES of a file: enough to find a mark, whatever the file's size."""
    with open(path, "rb") as handle:
        return handle.read(MARK_WITHIN_BYTES)
