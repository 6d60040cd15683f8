"""A fleet run: the whole PTS on several targets at once (`ptsbench pts DEV1 DEV2 ... --destructive`), each target
independent of the others: its own purge, preconditioning, rounds, steady state and chain of cells, run by the PTS
engine in a thread of its own, in a PTS run directory of its own (a part) inside the fleet's run directory.

Layout:
  manifest.json     kind "pts-fleet", name, devices: [{name, path}] in command-line order, status ("running" |
                    "interrupted" | "done": every part done | "failed": a part failed), failures {name: reason} of
                    the last start, starts
  devices/NAME/     one PTS run directory per target (pts/store.py), whole on its own: its manifest says its status
                    and, when it failed, why ("failure"); `show`, `report` and `resume` take it like any PTS run

A part that fails (its device vanishes, returns I/O errors, is refused by the guard at a resume) is recorded as
failed with its reason while the others go on; a resume of the fleet continues every part not done.
"""

import re
import signal
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ptsbench.device.target import Target
from ptsbench.errors import StoreError
from ptsbench.fio.runner import FioStatus
from ptsbench.pts.engine import Progress, Reporter, run
from ptsbench.pts.store import PtsStore
from ptsbench.store import RunStore, utc_now

FLEET_KIND = "pts-fleet"
DEVICES_DIR = "devices"
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class Member:
    """One target of a fleet run, ready to run: its part's name, store and target."""

    name: str
    pts: PtsStore
    target: Target


def part_names(paths: Sequence[str]) -> list[str]:
    """A folder name per target: its file name (/dev/nvme0n1 -> nvme0n1), made unique with -2, -3..."""
    names: list[str] = []
    for path in paths:
        base = _UNSAFE_NAME.sub("_", Path(path).name).strip("._") or "target"
        name, count = base, 1
        while name in names:
            count += 1
            name = f"{base}-{count}"
        names.append(name)
    return names


def create_fleet(root: Path, name: str, devices: Sequence[tuple[str, str]]) -> RunStore:
    """The fleet's run directory and manifest (`devices`: (part name, target path)); the parts are made next."""
    store = RunStore.create(root, {"kind": FLEET_KIND, "name": name, "status": "created",
                                   "devices": [{"name": part, "path": path} for part, path in devices]})
    (store.root / DEVICES_DIR).mkdir()
    return store


def open_fleet(root: Path) -> RunStore | None:
    """The fleet run at `root`, or None when `root` holds another kind of run."""
    store = RunStore.open(root)
    return store if store.kind == FLEET_KIND else None


def part_dir(root: Path, name: str) -> Path:
    return Path(root) / DEVICES_DIR / name


def fleet_parts(store: RunStore) -> list[tuple[str, Path]]:
    """(name, run directory) of every part, in command-line order; StoreError for a part that is missing."""
    parts = []
    for device in store.manifest.get("devices") or []:
        folder = part_dir(store.root, str(device["name"]))
        if not (folder / "manifest.json").is_file():
            raise StoreError(f"{store.root}: the part of {device.get('path')} ({folder}) is missing",
                             "restore it from a copy; every device of a fleet run has its own part")
        parts.append((str(device["name"]), folder))
    return parts


def part_state(part: RunStore) -> tuple[str, str | None]:
    """A part's status and, when it failed, why."""
    manifest = part.manifest
    return str(manifest.get("status")), manifest.get("failure")


def record_failure(pts: PtsStore, error: BaseException) -> str:
    """Store why a part failed in its own manifest (the engine does for a failure during the run; a refusal before
    it, such as the guard's, is stored here) and return it."""
    reason = str(error)
    manifest = pts.store.manifest
    if manifest.get("status") != "failed" or not manifest.get("failure"):
        pts.store.update_manifest(status="failed", failure=reason, failed_utc=utc_now())
    return str(pts.store.manifest.get("failure") or reason)


@contextmanager
def fleet_lock(store: RunStore) -> Iterator[None]:
    """One process at a time runs a fleet (the lock file of a PTS run directory, in the fleet's folder)."""
    with PtsStore(store).lock():
        yield


def run_fleet(store: RunStore, members: Sequence[Member], destructive: bool,
              reporter_for: Callable[[str], Reporter], failures: dict[str, str] | None = None) -> dict[str, str]:
    """Run (or resume) every member's PTS at once, one thread each; returns {name: reason} of the parts that
    failed (`failures`: those that failed before they could start, e.g. a device that did not come back). Every
    target is claimed here, before any is touched, for the whole run. Ctrl-C stops every fio and re-raises once
    every part has stored what it had."""
    from ptsbench.device.claim import claim_targets
    from ptsbench.fio.runner import stop_all

    failed = dict(failures or {})
    lock = threading.Lock()
    stopped = threading.Event()  # Ctrl-C: a part failing now failed of it (its fio got the terminal's SIGINT too)

    def worker(member: Member) -> None:
        try:
            run(member.pts, member.target, destructive=destructive,
                reporter=_Stoppable(reporter_for(member.name), stopped))
        except KeyboardInterrupt:  # the engine stored the part as interrupted
            return
        except Exception as error:  # this part failed: recorded, and the others go on
            if stopped.is_set():
                member.pts.store.update_manifest(status="interrupted")
                return
            reason = record_failure(member.pts, error)
            with lock:
                failed[member.name] = reason
            reporter_for(member.name).event(f"failed: {reason}")

    with fleet_lock(store), claim_targets([member.target.path for member in members], store.root):
        store.update_manifest(status="running", failures=failed,
                              starts=[*(store.manifest.get("starts") or []), utc_now()])
        threads = [threading.Thread(target=worker, args=(member,), daemon=True) for member in members]
        for thread in threads:
            thread.start()
        try:
            for thread in threads:
                thread.join()
        except KeyboardInterrupt:  # only this thread hears Ctrl-C: stop every fio until every part has stopped
            stopped.set()
            previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # more Ctrl-C (fio's too) while they stop
            try:
                while any(thread.is_alive() for thread in threads):
                    stop_all()  # again for a fio a part started after the first call
                    for thread in threads:
                        thread.join(0.2)
            finally:
                signal.signal(signal.SIGINT, previous)
            for member in members:  # failed in the same moment (its fio heard the terminal's Ctrl-C first), or
                #                     stopped before its engine could say so: interrupted, as a resume sees it
                if member.name in failed and member.name not in (failures or {}):
                    del failed[member.name]
                    member.pts.store.update_manifest(status="interrupted")
                elif member.pts.store.manifest.get("status") == "running":
                    member.pts.store.update_manifest(status="interrupted")
            store.update_manifest(status="interrupted", failures=failed)
            raise
        store.update_manifest(status=fleet_status(store), failures=failed, finished_utc=utc_now())
    return failed


class _Stoppable:
    """A part's reporter that ends the part (KeyboardInterrupt, which the engine stores as interrupted) when it is
    about to start a round or a preconditioning after Ctrl-C: a part between two fio runs starts no new one."""

    def __init__(self, shown: Reporter, stopped: threading.Event) -> None:
        self.shown, self.stopped = shown, stopped

    def event(self, text: str) -> None:
        self.shown.event(text)

    def round_started(self, progress: Progress) -> None:
        if self.stopped.is_set():
            raise KeyboardInterrupt
        self.shown.round_started(progress)

    def fio_status(self, progress: Progress, cell: str | None, status: FioStatus) -> None:
        self.shown.fio_status(progress, cell, status)

    def round_finished(self, progress: Progress, record: Mapping[str, Any]) -> None:
        self.shown.round_finished(progress, record)


def fleet_status(store: RunStore) -> str:
    """done when every part is done, failed when one failed, else interrupted (a part still to run)."""
    states = [part_state(RunStore.open(folder))[0] for _name, folder in fleet_parts(store)]
    if all(state == "done" for state in states):
        return "done"
    return "failed" if "failed" in states else "interrupted"


def fleet_summary(store: RunStore) -> list[dict[str, Any]]:
    """Per part: name, target path, folder, status and failure (for show and the report)."""
    paths = {str(device["name"]): str(device["path"]) for device in store.manifest.get("devices") or []}
    rows = []
    for name, folder in fleet_parts(store):
        status, failure = part_state(RunStore.open(folder))
        rows.append({"name": name, "path": paths.get(name, ""), "folder": str(folder), "status": status,
                     "failure": failure})
    return rows
