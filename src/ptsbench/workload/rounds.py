"""plan and run: `replay --steady`, RWSW's test on a replayed workload. The target is purged (as `ptsbench pts`
purges it) and preconditioned first (workload-independent: sequential 128 KiB writes over all of it, twice), then
the replay runs round after round until the PTS steady-state criterion holds on its IOPS and mean latency
(workload/steady.py), or the last planned round has run. Each is a case of the run, stored when it ends; a killed
run resumes from its stored cases (a case cut short runs again; a preconditioning cut short is purged again
first), and the criterion is judged on every stored round, those of earlier attempts too.

The cases' job files are kept in the run directory (precondition.fio, replay.fio), so a resume plans the same cases
from the run directory alone.
"""

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ptsbench.cases.plan import Case
    from ptsbench.cases.records import CaseRecord
    from ptsbench.report.core.progress import TerminalProgress
    from ptsbench.store import RunStore

PRECONDITION_JOB = "precondition.fio"
REPLAY_JOB = "replay.fio"
PRECONDITION_LOOPS = 2  # RWSW (as PTS): twice the user capacity
ROUND_PREFIX = "replay-r"
PRECONDITION = "precondition"


def plan_rounds(run_dir: Path, max_rounds: int, precondition: bool, log_interval_ms: int) -> "list[Case]":
    """The cases of a replay --steady run from its job files: the preconditioning (when asked), then rounds 1 to
    `max_rounds` of the replay."""
    from dataclasses import replace

    from ptsbench.cases.plan import JobAdditions, case_job
    from ptsbench.fio.jobs import read_job_file
    from ptsbench.sweep import plan_together

    named = ([(PRECONDITION, run_dir / PRECONDITION_JOB)] if precondition else []) + [
        (f"{ROUND_PREFIX}{number}", run_dir / REPLAY_JOB) for number in range(1, max_rounds + 1)]
    texts = {path: read_job_file(path) for path in {path for _name, path in named}}
    adds = JobAdditions(run_dir, log_interval_ms)
    cases = plan_together([case_job(index, name, path, texts[path], None, adds)
                           for index, (name, path) in enumerate(named, start=1)])
    return [replace(case, repetition=int(case.name.removeprefix(ROUND_PREFIX)) if case.name != PRECONDITION else 0)
            for case in cases]


def purge_target(run_dir: Path, target: str, destructive: bool) -> dict[str, Any]:
    """RWSW's purge of `target` before the preconditioning, by `ptsbench pts`'s purge path (device/purge.py): a
    block device by the first method that applies (its own erase; else a discard, which is no PTS purge), a file
    not at all (it cannot be purged). The attempt is added to the run's purge.json before anything else runs; one
    that failed raises (a resume purges again)."""
    from ptsbench.atomic import atomic_write_json
    from ptsbench.device.info import target_facts
    from ptsbench.device.purge import purge
    from ptsbench.device.target import resolve_target
    from ptsbench.errors import PtsbenchError
    from ptsbench.store import utc_now
    from ptsbench.workload.runs import PURGE

    started = utc_now()
    resolved = resolve_target(target)
    outcome = purge(resolved, target_facts(resolved), destructive)
    attempt = outcome.attempt(started, utc_now())
    atomic_write_json(run_dir / PURGE, [*purge_attempts(run_dir), attempt])
    if not outcome.ok:
        raise PtsbenchError(f"purge of {target} failed ({outcome.method}): {outcome.message}",
                            f"fix the cause, then `ptsbench resume {run_dir}` purges again")
    return attempt


def purge_attempts(run_dir: Path) -> list[dict[str, Any]]:
    """The run's purges so far, oldest first."""
    from ptsbench.store import read_json
    from ptsbench.workload.runs import PURGE

    return list(read_json(run_dir / PURGE)) if (run_dir / PURGE).is_file() else []


def judged(store: "RunStore", preconditioned: bool) -> dict[str, Any]:
    """The steady-state determination on the run's stored rounds that ended well, with the bytes fio wrote in the
    preconditioning (when it ran and ended well) and the last purge before it."""
    from ptsbench.cases.records import load_records
    from ptsbench.workload.steady import judge

    records = [record for record in load_records(store) if record.status == "ok"]
    purges = purge_attempts(store.root)
    found = judge([record.jobs for record in records if record.name.startswith(ROUND_PREFIX)], preconditioned,
                  purges[-1] if purges else None)
    fill = [part for record in records if record.name == PRECONDITION for job in record.jobs
            for part in job["directions"] if part["direction"] == "write"]
    if fill:
        found["precondition_written_bytes"] = sum(part["io_bytes"] for part in fill)
    return found


def run_rounds(store: "RunStore", cases: "Sequence[Case]", preconditioned: bool,
               progress: "TerminalProgress | None" = None) -> "list[CaseRecord]":
    """Run the cases not yet finished, in order, each stored before the next starts, until the stored rounds are
    steady, a case fails (a resume runs it again), or none is left; the records of the cases run now."""
    from ptsbench.cases.run import run_case
    from ptsbench.device.case_telemetry import CaseReadings
    from ptsbench.sweep import finished

    readings = CaseReadings()  # one after another: a case's last device reading is the next one's first
    records: list[CaseRecord] = []
    for case in cases:
        if judged(store, preconditioned)["steady"]:
            break
        if finished(store, case):
            continue
        shutil.rmtree(store.root / "cases" / case.dir_name, ignore_errors=True)  # one attempt per folder
        record = run_case(store, case, progress.start(case) if progress else None, readings)
        if progress:
            progress.finish(case, record)
        records.append(record)
        if record.status != "ok":
            break
    return records


def stored_cases(store: "RunStore", cases: "Sequence[Case]") -> list[str]:
    """The planned cases' folder names that hold a result (the run's cases, once it ended)."""
    from ptsbench.cases.records import RESULT

    return [case.dir_name for case in cases if (store.root / "cases" / case.dir_name / RESULT).is_file()]
