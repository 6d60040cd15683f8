"""The run directory: the single source of truth that reports, show, compare and resume read.

Layout (schema version 1):
  manifest.json                 kind, versions, command line, host and target facts, settings; a case-runner run
                                also names its planned cases (`cases`, folder names) and its `status` ("running" |
                                "interrupted" | "done"): a finished run missing a case's result.json is damaged
  cases/NNN-NAME/               one per case-runner case, written when the case ends
    job.fio  command.txt        the exact job file and fio command line
    fio.json  fio.stderr        fio's final json+ document as it printed it, and its stderr
    logs/                       fio's per-interval bw / iops logs (JOB_bw.N.log, JOB_iops.N.log), and JOB_lat.log:
                                mean total latency per second derived exactly from fio's status documents (fio's
                                own JOB_lat.N.log instead with --fio-lat-log or --hosts)
    result.json                 parsed results and status ("ok" | "failed" | "hung" | "interrupted"); written
                                last, so its presence means "case finished"
  results.xlsx                  the run's one workbook (written at the end of every run; the report rewrites it)
  report/                       index.html, report.pdf and figures/ (ptsbench report; made at the end of every
                                run, rewritten after every round during a PTS run)
PTS runs keep their rounds under pts/ (see ptsbench/pts/store.py); sweeps keep their cells as cases and the
cells' job files under sweep/ (see ptsbench/sweep.py).
Every file is written atomically (temporary file, fsync, rename), so a kill at any moment leaves either the old or
the new file, never half of one.
"""

import datetime
import json
import os
import re
import sys
from collections.abc import Collection
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from ptsbench import __version__
from ptsbench.atomic import atomic_write_json, write_hint
from ptsbench.errors import StoreError

SCHEMA_VERSION = 1
MANIFEST = "manifest.json"
RESUMABLE_KINDS = ("pts", "sweep", "pts-fleet")  # what `ptsbench resume` continues (and replay --steady runs)
# the user's labels (--tag) for the runs this command creates: set once by the command line, stored in the manifest
RUN_TAGS: ContextVar[tuple[str, ...]] = ContextVar("RUN_TAGS", default=())


STORED_MAX_BYTES = 1 << 30  # a stored document larger than this was not written by ptsbench (and would fill memory)


def read_text(path: Path) -> str:
    """A stored text file, with one clear error line when it is missing, unreadable, not text, anything but a
    regular file (a FIFO put there would block the read forever) or over STORED_MAX_BYTES."""
    from ptsbench.textfile import open_regular

    if not os.path.lexists(path):
        raise StoreError(f"{path} is missing", "is this a ptsbench run directory?")
    try:
        with open_regular(path, "stored file", "restore it or rerun", StoreError) as handle:
            data = handle.read(STORED_MAX_BYTES + 1)
    except OSError as error:
        raise StoreError(f"cannot read {path}: {error.strerror}", "check the run directory") from error
    if len(data) > STORED_MAX_BYTES:
        raise StoreError(f"stored file {path} is larger than {STORED_MAX_BYTES >> 30} GiB: not one ptsbench wrote",
                         "restore it or rerun")
    try:
        return data.decode()
    except UnicodeDecodeError as error:
        raise StoreError(f"{path} is damaged: not UTF-8 text (byte {error.start})", "restore it or rerun") from error


def read_json(path: Path) -> Any:
    """Load a stored JSON file, with one clear error line when it is missing or damaged."""
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as error:
        raise StoreError(f"{path} is damaged: {error.msg} at line {error.lineno}", "restore it or rerun") from error


def read_fio_json(path: Path) -> dict[str, Any]:
    """fio's stored document (fio.json of a case or round); StoreError when it is damaged."""
    from ptsbench.fio.output import load_fio_json

    try:
        return load_fio_json(read_text(path))
    except (ValueError, TypeError) as error:  # not JSON, or not a document
        raise StoreError(f"{path} is damaged: not fio's JSON document ({error})", "restore it or rerun") from error


_TEMPORARY = re.compile(r"^\..*?(?:\.(\d+)[.-][^.]*)?\.tmp$|^\.claims-(\d+)-")


def remove_stale_temporaries(folder: Path) -> list[Path]:
    """Remove the temporary files (and figure claim folders) a killed writer left in `folder`: those whose
    process is gone. A live writer's temporaries are left alone."""
    removed: list[Path] = []
    try:
        entries = list(Path(folder).iterdir())
    except OSError:
        return removed
    for entry in entries:
        match = _TEMPORARY.match(entry.name)
        if not match:
            continue
        pid = match.group(1) or match.group(2)
        if pid and _alive(int(pid)):
            continue
        if entry.is_dir():
            import shutil  # here: `show` reads stores, and shutil brings lzma and bz2

            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        removed.append(entry)
    return removed


def is_temporary(name: str) -> bool:
    """Whether `name` is a temporary file or figure claim folder of a ptsbench writer (it carries the writer's pid)."""
    match = _TEMPORARY.match(name)
    return bool(match and (match.group(1) or match.group(2)))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def check_new_run_dir(root: Path, prepared: Collection[str] = ()) -> None:
    """A run is written into a folder of its own: a new or empty one (besides `prepared` files), never over a
    finished run or files of the user's."""
    if Path(root).is_file():
        raise StoreError(f"--out {root} is a file", "choose a new folder for the run")
    try:
        entries = sorted(entry.name for entry in Path(root).iterdir() if entry.name not in prepared)
    except (FileNotFoundError, NotADirectoryError):  # new (mkdir says what is wrong with its parents)
        return
    except OSError as error:
        raise StoreError(f"cannot read {root}: {error.strerror}", write_hint(error)) from None
    if MANIFEST in entries:
        manifest = RunStore(root).manifest
        resumable = manifest.get("kind") in RESUMABLE_KINDS or is_steady_replay(manifest)
        raise StoreError(f"{root} already holds a run",
                         "choose another --out" + (f" (`ptsbench resume {root}` continues the run there)"
                                                   if resumable else ""))
    if entries:
        shown = ", ".join(entries[:3]) + (f" and {len(entries) - 3} more" if len(entries) > 3 else "")
        raise StoreError(f"{root} is not empty (it holds {shown})",
                         "choose a new or empty folder for --out: a run never writes over other files")


def is_steady_replay(manifest: dict[str, Any]) -> bool:
    """A run of `replay --steady` (resumable, unlike other case runs)."""
    workload = manifest.get("workload")
    return manifest.get("kind") == "run" and isinstance(workload, dict) and workload.get("steady") is True


def check_manifest_fields(path: Path, manifest: dict[str, Any]) -> None:
    """StoreError when a field every reader relies on has the wrong type: kind, name and status are words,
    created_utc a UTC time (a hand edit or another program's file is named, never shown as if it were a run)."""
    for key in ("kind", "name", "status"):
        if key in manifest and not isinstance(manifest[key], str):
            raise StoreError(f"{path} is damaged: {key} is {manifest[key]!r}, not a word", "restore it from a copy")
    created = manifest.get("created_utc")
    try:
        datetime.datetime.fromisoformat(str(created))
    except ValueError:
        raise StoreError(f"{path} is damaged: created_utc {created!r} is not a UTC time",
                         "restore it from a copy") from None


def utc_now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def utc_now_ms() -> str:
    """UTC now to the millisecond: fine enough to order cases that start or end within one second."""
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def default_run_dir(name: str, base: Path = Path("ptsbench-results")) -> Path:
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
    return base / f"{stamp}-{name}"


class RunStore:
    """One run directory."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @classmethod
    def create(cls, root: Path, manifest: dict[str, Any], prepared: Collection[str] = ()) -> "RunStore":
        """Make the run directory and write its manifest (versions, command line and host facts are added here).
        `prepared` names files the caller already put there (quick's job file)."""
        from ptsbench.device.info import host_facts
        from ptsbench.device.latency_monitor import stored_request
        from ptsbench.fio.runner import fio_version

        full = {
            "schema_version": SCHEMA_VERSION,
            "ptsbench_version": __version__,
            "fio_version": fio_version(),
            "created_utc": utc_now(),
            "command_line": sys.argv,
            "host": host_facts(),
            "latency_monitor_request": stored_request(),  # --latency-monitor, for a resume to set it again
            **({"tags": list(RUN_TAGS.get())} if RUN_TAGS.get() else {}),
            **manifest,
        }
        root = Path(root)
        check_new_run_dir(root, prepared)
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StoreError(f"cannot create run directory {root}: {error.strerror}", write_hint(error)) from error
        store = cls(root)
        atomic_write_json(root / MANIFEST, full)
        return store

    @classmethod
    def open(cls, root: Path) -> "RunStore":
        root = Path(root)
        if not root.is_dir():
            raise StoreError(f"{root}: no such run directory", "pass a folder made by ptsbench run, quick or pts")
        store = cls(root)
        manifest = store.manifest
        version = manifest.get("schema_version")
        if version != SCHEMA_VERSION:
            raise StoreError(f"{root}: store schema {version} is not {SCHEMA_VERSION}", "use a matching ptsbench")
        check_manifest_fields(root / MANIFEST, manifest)
        return store

    @property
    def manifest(self) -> dict[str, Any]:
        manifest = read_json(self.root / MANIFEST)
        if not isinstance(manifest, dict):
            raise StoreError(f"{self.root / MANIFEST} is damaged: not a JSON object", "restore it from a copy")
        return manifest

    def update_manifest(self, **fields: object) -> None:
        atomic_write_json(self.root / MANIFEST, {**self.manifest, **fields})

    @property
    def kind(self) -> str:
        return str(self.manifest.get("kind", "run"))
