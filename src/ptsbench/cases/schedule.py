"""Cases run in turn, or (--parallel) the targets at once and each target's cases in turn; --repeat auto's stop;
the claim on everything the cases write, held while they run; the planned duration."""

import os
import stat
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Protocol

from ptsbench.cases.plan import Case
from ptsbench.cases.records import CaseRecord
from ptsbench.cases.run import run_case
from ptsbench.confidence import AutoRepeat, base_case_name
from ptsbench.device.case_telemetry import CaseReadings
from ptsbench.device.claim import claim_targets
from ptsbench.device.target import (
    Target,
)
from ptsbench.fio.runner import (
    FioStatus,
    stop_all,
)
from ptsbench.hosts.hostlist import Host, write_host_list
from ptsbench.metrics.board import add_run
from ptsbench.store import RunStore


def written_targets(cases: Sequence[Case]) -> list[str]:
    """Every file and device the cases' jobs change (not their logs), once each, in order."""
    return list(dict.fromkeys(path for case in cases if not case.rejected for job in case.opens
                              if job.changes_paths for path in job.paths))


def claim_cases(cases: Sequence[Case], run_dir: Path, allow_mounted: bool,
                hosts: Sequence[Host] = ()) -> AbstractContextManager[None]:
    """The claim (device/claim.py) on everything the cases write, to hold while they run; none for a run on hosts
    (their devices are theirs)."""
    return nullcontext() if hosts else claim_targets(written_targets(cases), run_dir, allow_mounted)



class CaseProgress(Protocol):
    """Where live progress goes (the terminal in the CLI, nothing in tests)."""

    def start(self, case: Case) -> Callable[[FioStatus], None] | None: ...

    def finish(self, case: Case, record: CaseRecord) -> None: ...


def _run_and_report(store: RunStore, case: Case, progress: CaseProgress | None, hosts: Sequence[Host],
                    readings: CaseReadings) -> CaseRecord:
    record = run_case(store, case, progress.start(case) if progress else None, readings, hosts)
    if progress:
        progress.finish(case, record)
    return record


def _repeat(store: RunStore, case: Case, progress: CaseProgress | None, hosts: Sequence[Host],
            readings: CaseReadings, auto: AutoRepeat | None, cases: Sequence[Case]) -> CaseRecord | None:
    """Run and store the case, unless --repeat auto has stopped its repetitions (None)."""
    if auto is None or not case.repetition:
        return _run_and_report(store, case, progress, hosts, readings)
    base = base_case_name(case.name, case.repetition)
    if not auto.wants(base):
        return None
    record = _run_and_report(store, case, progress, hosts, readings)
    last = not any(other.repetition > case.repetition and base_case_name(other.name, other.repetition) == base
                   for other in cases)
    auto.finished(base, record, last)
    return record


def _target_key(target: Target | None, hosts: Sequence[Host]) -> tuple[object, ...]:
    """What a target is, whatever its spelling: a device by its number, a file by its inode, a file not yet made by
    its folder's inode and its name (on hosts: the path, which is theirs)."""
    if target is None:
        return ("job files",)  # the files a job file names are its own: such cases all run in turn
    if hosts:
        return ("path", target.path)
    try:
        found = os.stat(target.path)
    except OSError:
        try:
            folder = os.stat(os.path.dirname(target.path) or ".")
        except OSError:
            return ("path", os.path.realpath(target.path))
        return ("new", folder.st_dev, folder.st_ino, os.path.basename(target.path))
    if stat.S_ISBLK(found.st_mode) or stat.S_ISCHR(found.st_mode):
        return ("device", found.st_rdev)
    return ("file", found.st_dev, found.st_ino)


def target_groups(cases: Sequence[Case], hosts: Sequence[Host] = ()) -> list[list[Case]]:
    """The cases of each target, in case order: --parallel runs the groups at once and each group's cases in turn."""
    groups: dict[tuple[object, ...], list[Case]] = {}
    for case in cases:
        groups.setdefault(_target_key(case.target, hosts), []).append(case)
    return list(groups.values())


def run_cases(
    store: RunStore, cases: Sequence[Case], parallel: bool, progress: CaseProgress | None = None,
    hosts: Sequence[Host] = (), auto: AutoRepeat | None = None,
) -> list[CaseRecord]:
    """Run cases one after another, or (parallel) the targets at once and each target's cases one after another:
    two cases never share a target at once. Every case is stored when it ends. With `auto` (--repeat auto), a
    case's remaining planned repetitions are left out once its rule decided (confidence.py).

    With hosts, every case runs on all of them at once through fio's client (one fio server per host).
    """
    add_run(store.root)  # its stored state served by --metrics
    if hosts:
        write_host_list(store.root, hosts)  # once, before parallel cases would race to write it
    if not parallel:
        readings = CaseReadings()  # one after another: a case's last reading is the next one's first
        done: list[CaseRecord] = []
        for case in cases:
            if (record := _repeat(store, case, progress, hosts, readings, auto, cases)) is None:
                continue
            done.append(record)
        return done
    records: dict[int, CaseRecord] = {}
    errors: list[BaseException] = []
    stopping = threading.Event()  # Ctrl-C: no target starts its next case

    def worker(group: list[Case]) -> None:
        try:
            for case in group:
                if stopping.is_set():
                    return
                record = _repeat(store, case, progress, hosts, CaseReadings(), auto, group)  # read afresh
                if record is not None:
                    records[case.index] = record
        except BaseException as error:  # re-raised in the main thread below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(group,), daemon=True) for group in target_groups(cases, hosts)]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            thread.join()
    except KeyboardInterrupt:  # only this thread hears Ctrl-C: stop every fio, let each case store what it has
        stopping.set()
        while any(thread.is_alive() for thread in threads):
            stop_all()  # again for a fio that started between a worker's check and the first call
            for thread in threads:
                thread.join(0.2)
        raise
    if errors:
        raise errors[0]
    return [records[index] for index in sorted(records)]


def expected_total_s(cases: Sequence[Case], parallel: bool, hosts: Sequence[Host] = ()) -> float | None:
    """Planned duration of all cases (None when a case is size-bound): with parallel, the longest target's."""
    durations = [case.expected_s for case in cases]
    if not durations or any(d is None for d in durations):
        return None
    groups = target_groups(cases, hosts) if parallel else [list(cases)]
    return max(sum(case.expected_s or 0.0 for case in group) for group in groups)
