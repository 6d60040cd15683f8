"""Files written atomically (a temporary file, fsync, rename, fsync of the folder): a kill at any moment leaves
either the old or the new file, never half of one. Used by the store, the reports and fio's runner alike."""

import json
import os
from pathlib import Path

from ptsbench.errors import StoreError


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` to `path` so that readers see the old or the new content, never a mix."""
    atomic_write_bytes(path, text.encode())


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` so that readers see the old or the new content, never a mix."""
    path = Path(path)
    temporary = path.with_name(f".{path.name}.tmp")
    import tempfile  # here: `show` and every reader of a store import this module and never write

    try:
        # a name of its own, with this process's id (the next report removes it if this process was killed):
        # two writers of one file never share a temporary
        descriptor, name = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
        temporary = Path(name)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise StoreError(f"cannot write {path}: {error.strerror}", write_hint(error)) from error


def write_hint(error: OSError) -> str:
    if error.errno == 28:
        return "the disk is full: free space or pass --out on another filesystem; finished results are kept"
    if error.errno == 13:
        return "choose a writable folder with --out"
    return "check the output folder"


def atomic_write_json(path: Path, obj: object) -> None:
    atomic_write_text(path, json.dumps(obj, indent=1, sort_keys=False) + "\n")
