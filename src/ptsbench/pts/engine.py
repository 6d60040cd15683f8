"""The PTS engine: for each phase, purge -> preconditioning -> rounds (cells chained, one fio process each, see
pts/handoff.py; on hosts or with startdelay one fio process per round, cells as stonewalled jobs) -> steady-state
check after every round -> stop. Every finished round is stored atomically, with
its steady-state determination and the device and host telemetry around it, before the next one starts; `run` also
resumes: it skips what the store holds and re-runs only an interrupted round (or an interrupted purge +
preconditioning).

The advanced tests run through the same loop. The one step of their own: when a demand-intensity sweep (CBW, DIRTH,
ECW) ends, its operating points are chosen from the sweep's window averages, stored in the manifest, and the plan is
made again with their phases (so resume rebuilds the same plan from the manifest).
"""

import shlex
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass
from itertools import groupby
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ptsbench.atomic import atomic_write_json, atomic_write_text
from ptsbench.catalog.monitor_host import host_beside_monitor
from ptsbench.device.identity import DeviceIdentity, device_identity, vanished
from ptsbench.device.target import Target
from ptsbench.device.telemetry import (
    CpuMeter,
    cpu_snapshot,
    cpu_utilisation,
    empty_telemetry,
    read_telemetry,
    telemetry_change,
)
from ptsbench.errors import FioRunError, PtsbenchError
from ptsbench.fio.chain import job_document_path
from ptsbench.fio.intervals import SecondSamples
from ptsbench.fio.output import DIRECTIONS as FIO_DIRECTIONS
from ptsbench.fio.output import job_entries, parse_jobs
from ptsbench.fio.runner import FioLaunch, FioOutcome, FioStatus, client_pairs, fio_command, run_fio
from ptsbench.hosts.hostlist import Host
from ptsbench.hosts.results import HostStatus
from ptsbench.hosts.ssh import client_folder
from ptsbench.metrics.board import Stream, add_run, publish
from ptsbench.pts.handoff import discard_gates, run_chained_round, stonewall_record
from ptsbench.pts.hostbound import host_bound
from ptsbench.pts.plan import (
    PhasePlan,
    Plan,
    RoundJob,
    precondition_job,
    round_job,
    round_seed,
)
from ptsbench.pts.prep_time import stored_timing
from ptsbench.pts.records import (
    aggregate_cells,
    combined_determination,
    determination,
    host_part,
    host_view,
    operating_points_record,
    phase_result,
    round_cells,
    seq_starts,
    stop_reason,
    wsat_totals,
)
from ptsbench.pts.start import check_stored_plan, check_versions, load_plan, stop_orphan_fio, stored_hosts, write_plan
from ptsbench.pts.store import FAILED_FILE, PRECONDITION_DONE, ROUND_FILE, PtsStore
from ptsbench.pts.write_cache import RunWriteCache
from ptsbench.store import utc_now
from ptsbench.units import format_bytes

if TYPE_CHECKING:
    from ptsbench.device.purge import PurgeOutcome


@dataclass(frozen=True)
class Progress:
    """Where the run is, for live display."""

    phase: PhasePlan
    phase_index: int
    phase_count: int
    round_number: int  # 0 while preconditioning
    eta_to_max_s: float  # planned time left if every remaining phase runs to its maximum round count


class Reporter(Protocol):
    """Receives the engine's progress (the CLI shows it; tests record it)."""

    def event(self, text: str) -> None: ...

    def round_started(self, progress: Progress) -> None: ...

    def fio_status(self, progress: Progress, cell: str | None, status: FioStatus) -> None: ...

    def round_finished(self, progress: Progress, record: Mapping[str, Any]) -> None: ...


class QuietReporter:
    """A reporter that shows nothing."""

    def event(self, text: str) -> None:
        pass

    def round_started(self, progress: Progress) -> None:
        pass

    def fio_status(self, progress: Progress, cell: str | None, status: FioStatus) -> None:
        pass

    def round_finished(self, progress: Progress, record: Mapping[str, Any]) -> None:
        pass


# ---------------------------------------------------------------------------------------------------------------
# running


@dataclass
class _Context:
    pts: PtsStore
    plan: Plan
    target: Target
    facts: dict[str, object]
    destructive: bool
    reporter: Reporter
    base_seed: int
    purge_method: str
    purge_scope: str  # what an NVMe purge may erase besides the target (device/scope.py)
    telemetry: dict[str, Any] | None = None  # the last reading, still valid as the next round's "before"
    hosts: tuple[Host, ...] = ()  # fio servers that run every round together; () = this machine
    device: DeviceIdentity | None = None  # the target device as the run found it (None: a file, or on hosts)
    cache: RunWriteCache | None = None  # the device's write cache: set at the start, read every round, put back


def run(pts: PtsStore, target: Target, *, destructive: bool, reporter: Reporter | None = None) -> None:
    """Run (or resume) every phase of a stored PTS run on `target` (on every host of a run on hosts)."""
    from ptsbench.device.claim import claim_targets
    from ptsbench.device.guard import check_write_allowed
    from ptsbench.device.placement import check_placement_device
    from ptsbench.hosts.preflight import check_remote_path

    manifest = pts.store.manifest
    plan = load_plan(pts.store)
    check_stored_plan(pts, plan)
    hosts = stored_hosts(manifest)
    if hosts:
        check_remote_path(target.path, destructive, hosts, "the PTS run")
    else:
        check_write_allowed(target, destructive)
        if plan.target.fdp_device:  # FDP placement: fio opens the namespace's character device
            check_placement_device(plan.target.fdp_device, target.path, destructive)
    context = _Context(pts, plan, target, dict(manifest.get("target") or {}), destructive,
                       reporter or QuietReporter(), int(manifest["base_seed"]), str(manifest.get("purge_method")),
                       str(manifest.get("purge_scope") or "namespace"),
                       hosts=hosts, device=None if hosts else device_identity(target.path))
    reached, note = ([], "") if hosts else _purge_reach(context)
    claim: AbstractContextManager[None] = (nullcontext() if hosts else
                                           claim_targets([target.path], pts.root, reached=reached, reached_note=note))
    with pts.lock(), claim:  # the claim is held from the guard's check above to the end of the run
        stop_orphan_fio(pts.root)
        add_run(pts.root)  # its stored state served by --metrics
        pts.store.update_manifest(status="running", **({"failure": None} if "failure" in pts.store.manifest else {}))
        try:
            check_versions(pts)
            context.cache = RunWriteCache(pts, target, context.facts, plan.settings.write_cache, bool(hosts),
                                          context.reporter.event)
            context.cache.apply()
            try:
                write_plan(pts.root, plan, stored_timing(pts.store.manifest))
                index = 0
                while index < len(context.plan.phases):  # operating points add phases as the run goes
                    phase = context.plan.phases[index]
                    if pts.phase_result(phase.key) is None:
                        _run_phase(context, index, phase)
                    if phase.phase.role == "sweep":
                        _choose_operating_points(context, phase)
                    index += 1
            finally:
                context.cache.restore()
        except KeyboardInterrupt:
            pts.store.update_manifest(status="interrupted")
            raise
        except BaseException as error:  # why, in the store too (e.g. "IOPS round 3 failed: fio hung: ...")
            pts.store.update_manifest(status="failed", failure=str(error))
            raise
        pts.store.update_manifest(status="done", finished_utc=utc_now())


def _purge_reach(context: _Context) -> tuple[list[str], str]:
    """The other namespaces the run's purges still to come will erase (an NVMe sanitize or all-namespace format:
    claimed for the run, so no other ptsbench run starts on one meanwhile), and why, in words."""
    from ptsbench.device.purge import choose_purge, purge_reach

    if context.target.kind != "block" or all(context.pts.precondition_result(phase.key) is not None
                                              or not phase.phase.purge for phase in context.plan.phases):
        return [], ""  # a file's purge never erases its disk: other runs on files there are no concern of it
    try:
        method = choose_purge(context.target, context.facts, context.purge_method, context.purge_scope)
    except PtsbenchError:  # the purge itself says why, when its phase comes
        return [], ""
    reached = [dev for dev in purge_reach(method, context.target, context.facts) if dev != context.target.path]
    return reached, f"the purge of {context.target.path} ({method.name}) erases it" if reached else ""


def _run_phase(context: _Context, index: int, phase: PhasePlan) -> None:
    pts = context.pts
    finished = pts.finished_rounds(phase.key)
    started = bool(finished) and phase.phase.precondition is None
    if pts.precondition_result(phase.key) is None and not started:
        if phase.phase.purge:
            _purge(context, phase)
            context.telemetry = None
        if phase.phase.precondition is not None:
            _precondition(context, index, phase)
            context.telemetry = None
    moved = pts.set_aside_interrupted(phase.key, len(finished) + 1)
    for path in moved:
        discard_gates(path)
        context.reporter.event(f"{phase.phase.title}: interrupted round kept as {path.name}; running it again")
    while True:
        stop = stop_reason(context.plan, phase, finished)
        if stop is not None:
            break
        finished.append(_run_round(context, index, phase, finished))
    pts.write_phase_result(phase.key, phase_result(context.pts, phase, finished, stop))
    context.reporter.event(f"{phase.phase.title}: {stop}")


def _purge(context: _Context, phase: PhasePlan) -> None:
    from ptsbench.device.purge import purge

    context.reporter.event(f"{phase.phase.title}: purge ({context.purge_method})")
    started = utc_now()
    if context.hosts:
        outcome = remote_purge(len(context.hosts))
    else:
        outcome = purge(context.target, context.facts, context.destructive, context.purge_method,
                        context.purge_scope)
    context.pts.add_purge_attempt(phase.key, outcome.attempt(started, utc_now()))
    context.reporter.event(f"{phase.phase.title}: {outcome.message}")
    if not outcome.ok:
        raise PtsbenchError(f"purge failed ({outcome.method}): {outcome.message}",
                            f"fix the cause and `ptsbench resume {context.pts.root}`, or start again with another "
                            "--purge method (blkdiscard and none are recorded as deviations)")
    if outcome.is_deviation:
        context.pts.add_compliance_reason(f"purge: {outcome.method} ({outcome.message})")


def remote_purge(host_count: int) -> "PurgeOutcome":
    """The purge of a run on hosts: none, recorded as a deviation (purge tools run only on this machine; run on
    a remote path they would purge the controller's device of that name)."""
    from ptsbench.device.purge import PurgeOutcome

    return PurgeOutcome("none (remote hosts)", [], True, f"not purged: the device is on {host_count} remote "
                        "host(s) and ptsbench runs purge tools only on this machine", True)


def _precondition(context: _Context, index: int, phase: PhasePlan) -> None:
    folder = context.pts.precondition_dir(phase.key)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / PRECONDITION_DONE).unlink(missing_ok=True)
    text = precondition_job(context.plan, phase)
    pre = phase.phase.precondition
    what = (f"fio's sprandom, about {format_bytes(phase.precondition_bytes)} of random writes"
            if pre is not None and pre.kind == "sprandom" else f"{format_bytes(phase.precondition_bytes)} of "
            "sequential writes")
    context.reporter.event(f"{phase.phase.title}: preconditioning, {what}")
    progress = _progress(context, index, phase, 0)
    context.reporter.round_started(progress)

    def on_status(status: FioStatus) -> None:
        context.reporter.fio_status(progress, "preconditioning", status)

    # no per-second samples are kept of preconditioning: the metrics exporter shows its time left only
    with publish(Stream(context.pts.root, {"test": phase.key}, SecondSamples(), {}, progress.eta_to_max_s)):
        outcome = _start_fio(context, folder, dict.fromkeys(_host_keys(context), text), on_status)
    if context.hosts:
        _fail_hosts(context, _host_statuses(context, outcome), f"{phase.phase.title} preconditioning", folder, {})
    if not outcome.ok or outcome.doc is None:
        raise FioRunError(f"{phase.phase.title} preconditioning failed: {_why(context, outcome.error_line())}",
                          _vanished_hint(context) or f"see {folder / 'fio.stderr'}")
    results = parse_jobs(outcome.doc)
    writes = [write for job in results if (write := job.get("write")) is not None]
    written = sum(write.io_bytes for write in writes)
    runtime_ms = max((write.runtime_ms for write in writes), default=0)
    record: dict[str, Any] = {
        "planned_bytes": phase.precondition_bytes, "written_bytes": written, "runtime_ms": runtime_ms,
        "bw_bytes": written * 1000 / runtime_ms if runtime_ms else None, "finished_utc": utc_now()}
    if context.hosts:
        record["hosts"] = {host.name: sum(write.io_bytes for job in results if job.hostname == host.name
                                          if (write := job.get("write")) is not None) for host in context.hosts}
    atomic_write_json(folder / PRECONDITION_DONE, record)


def _host_keys(context: _Context) -> list[str]:
    """Whom a job file is for: each host's name, or "" for this machine."""
    return [host.name for host in context.hosts] or [""]


def _start_fio(context: _Context, folder: Path, texts: Mapping[str, str],
               on_status: Callable[[FioStatus], None], expected_s: float | None = None,
               on_document: Callable[[dict[str, Any]], None] | None = None) -> FioOutcome:
    """Write the job file(s) and the command line, then run fio: here, or as one fio client that starts the job
    on every host at once and returns when the last host is done (rounds in lockstep). Hosts with the same job
    share job.fio; otherwise each host has job-HOST.fio."""
    if len(set(texts.values())) == 1:
        paths = dict.fromkeys(texts, folder / "job.fio")
        atomic_write_text(folder / "job.fio", next(iter(texts.values())))
    else:
        paths = {key: folder / f"job-{key}.fio" for key in texts}
        for key, text in texts.items():
            atomic_write_text(paths[key], text)
    if context.hosts:
        job_path, extra, client = client_pairs([(host.fio_arg, paths[host.name]) for host in context.hosts])
    else:
        job_path, extra, client = paths[""], [], None
    atomic_write_text(folder / "command.txt", shlex.join(fio_command(job_path, extra, client)) + "\n")
    finished = None if context.hosts else FinishedCells(folder)  # fio's client streams no status

    def each_document(doc: dict[str, Any]) -> None:
        if finished is not None:
            finished(doc)
        if on_document is not None:
            on_document(doc)

    outcome = run_fio(job_path, json_path=folder / "fio.json", stderr_path=folder / "fio.stderr",
                      on_status=on_status, on_document=each_document,
                      launch=FioLaunch(extra, client, expected_s, client_folder(context.hosts)))
    if finished is not None and outcome.ok:  # fio.json holds them all
        finished.discard()
    return outcome


class FinishedCells:
    """Stores fio's own numbers of each finished cell of a stonewalled round the moment it finishes, from fio's status
    documents, as that job's fio-NN.json (as a chained round keeps them): one write per finished job, never the
    round's earlier ones again, so a crash mid-round loses only the cell under way (resume still re-runs the whole
    round, whose cells run in one fio process; the kept numbers stay in the interrupted round's folder for the
    record). `discard` removes them once fio.json holds the whole round."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.kept = 0  # jobs stored: fio-00.json ... fio-(kept - 1).json

    def __call__(self, doc: Mapping[str, Any]) -> None:
        entries = job_entries(doc)
        started = [i for i, entry in enumerate(entries)
                   if any((entry.get(direction) or {}).get("total_ios") for direction in FIO_DIRECTIONS)]
        if not started:
            return
        running = entries[started[-1]].get("jobname")  # stonewalled: every job before the running one is done
        done = entries[:next(i for i, entry in enumerate(entries) if entry.get("jobname") == running)]
        jobs = [list(threads) for _name, threads in groupby(done, key=lambda entry: entry.get("jobname"))]
        for index in range(self.kept, len(jobs)):  # an entry per thread; a job's threads come together
            atomic_write_json(job_document_path(self.folder, index),
                              {"fio version": doc.get("fio version"), "jobs": jobs[index]})
        self.kept = max(self.kept, len(jobs))

    def discard(self) -> None:
        for index in range(self.kept):
            job_document_path(self.folder, index).unlink(missing_ok=True)


def _host_statuses(context: _Context, outcome: FioOutcome,
                   jobs: Mapping[str, RoundJob] | None = None) -> list[HostStatus]:
    """Each host's status after a fio client run: failed when it dropped off (hosts.host_statuses, with fio's
    words; `jobs`: each host's own round job, as sequential cells split differently per host) or one of its jobs
    ended with an error."""
    from ptsbench.hosts.results import host_statuses

    results = parse_jobs(outcome.doc) if outcome.doc is not None else []
    names = None if jobs is None else {host: [name for name, _cell in job.jobs] for host, job in jobs.items()}
    statuses = host_statuses(context.hosts, results, outcome.stdout_text + "\n" + outcome.stderr_text, names)
    errors = {result.hostname: result.error for result in results if result.error}
    return [HostStatus(s.host, "failed", f"{s.host}: fio job error {errors[s.host]} ({outcome.error_line()})")
            if s.status == "ok" and s.host in errors else s for s in statuses]


def _fail_hosts(context: _Context, statuses: Sequence[HostStatus], what: str, folder: Path,
                kept: Mapping[str, Any]) -> None:
    """FioRunError with fio's words when a host failed; the statuses and what the other hosts measured (`kept`)
    go to failed.json in `folder` first."""
    failed = [status for status in statuses if status.status != "ok"]
    if failed:
        atomic_write_json(folder / FAILED_FILE, {
            "what": what, "finished_utc": utc_now(), "hosts": [asdict(status) for status in statuses],
            "kept": dict(kept)})
        raise FioRunError(f"{what} failed on {len(failed)} of {len(statuses)} host(s): "
                          + "; ".join(status.message for status in failed),
                          f"the other hosts' results are kept in {folder / FAILED_FILE}; once every host is back, "
                          f"`ptsbench resume {context.pts.root}` runs it again")


def _why(context: _Context, fio_said: str) -> str:
    """Why fio failed: the device that disappeared under it, else fio's own words (which blame O_DIRECT or a
    missing file for a vanished device)."""
    gone = vanished(context.device) if context.device is not None else None
    return gone or fio_said


def _vanished_hint(context: _Context) -> str | None:
    if context.device is None or vanished(context.device) is None:
        return None
    return (f"reattach the drive, then `ptsbench resume {context.pts.root}`: it checks the drive is the same one "
            "and runs the round again")


def _progress(context: _Context, index: int, phase: PhasePlan, round_number: int) -> Progress:
    plan = context.plan
    rest = phase.max_rounds - max(round_number, 1) + 1
    eta = rest * (phase.round_s + phase.overhead_s / max(phase.max_rounds, 1))
    eta += sum(later.worst_case_s + later.overhead_s for later in plan.phases[index + 1:]) + plan.pending_s
    return Progress(phase, index, len(plan.phases), round_number, eta)


def _run_round(
    context: _Context, index: int, phase: PhasePlan, finished: list[dict[str, Any]]
) -> dict[str, Any]:
    number = len(finished) + 1
    seed = round_seed(context.base_seed, phase.key, number)
    chained = phase.chained and not context.hosts  # (a run on hosts planned before hand-offs were chained)
    jobs = {key: round_job(context.plan, phase, seed, seq_starts(phase, host_view(finished, key)), chained)
            for key in _host_keys(context)}  # hosts carry on their own sequential streams
    folder = context.pts.round_dir(phase.key, number)
    folder.mkdir(parents=True, exist_ok=True)
    progress = _progress(context, index, phase, number)
    context.reporter.round_started(progress)
    cell_of = dict(next(iter(jobs.values())).jobs)

    def on_status(status: FioStatus) -> None:
        context.reporter.fio_status(progress, cell_of.get(status.running_job or ""), status)

    before = context.telemetry or _telemetry(context)
    host_before = cpu_snapshot()
    samples, meter = SecondSamples(), CpuMeter()  # per-second data for drop detection, host CPU beside it

    def on_document(doc: dict[str, Any]) -> None:
        samples.add(doc, meter.beside())

    started_utc, wall_start, cpu_start = utc_now(), time.monotonic(), time.process_time()
    live = Stream(context.pts.root, {"test": phase.key, "round": str(number)}, samples, cell_of,
                  progress.eta_to_max_s)
    with publish(live):  # for the metrics exporter, which reads the samples as they come
        if chained:
            outcome, handoff = run_chained_round(folder, jobs[""], phase, context.plan.settings.ramp_time_s,
                                                 on_status, on_document)
        else:
            outcome = _start_fio(context, folder, {key: job.text for key, job in jobs.items()}, on_status,
                                 phase.round_s, on_document)
            handoff = stonewall_record(phase, None if phase.scheduler_reason else "a run on hosts")
        samples.write(folder, cell_of)
    wall_s, cpu_s = time.monotonic() - wall_start, time.process_time() - cpu_start
    host_after = cpu_snapshot()
    context.telemetry = after = _telemetry(context)
    what = f"{phase.phase.title} round {number}"
    hint = f"see {folder / 'fio.stderr'}; `ptsbench resume {context.pts.root}` runs the round again"
    results = parse_jobs(outcome.doc) if outcome.doc is not None else []
    if context.hosts:
        statuses = _host_statuses(context, outcome, jobs)
        per_host = {s.host: round_cells(context.plan, phase, jobs[s.host],
                                         [r for r in results if r.hostname == s.host])
                    for s in statuses if s.status == "ok"}
        _fail_hosts(context, statuses, what, folder, per_host)
    if not outcome.ok or outcome.doc is None:
        why = _why(context, "; ".join([outcome.error_line(), *handoff["notes"]]))
        raise FioRunError(f"{what} failed: {why}", _vanished_hint(context) or hint)
    if not context.hosts:
        per_host = {"": round_cells(context.plan, phase, jobs[""], results)}
    change = telemetry_change(before, after)
    # the drive's C3h latency monitor beside the host's own latencies of the round (catalog/monitor_host.py)
    monitor_host = host_beside_monitor(results, change, after, context.plan.settings.ramp_time_s)
    record: dict[str, Any] = {
        "round": number, "phase": phase.key, "seed": seed, "started_utc": started_utc, "finished_utc": utc_now(),
        "wall_s": wall_s, "ptsbench_cpu_s": cpu_s, "fio_version": outcome.doc.get("fio version"), "cells": {},
        "telemetry": {"before": before, "after": after, "change": change, "monitor_host": monitor_host,
                      "cpu": cpu_utilisation(host_before, host_after)},
        "handoff": handoff,
    }
    if context.hosts:
        record["cells"] = aggregate_cells(phase, jobs, results)
        record["hosts"] = {name: host_part(phase, cells, host_view(finished, name), number)
                           for name, cells in per_host.items()}
        record["steady"] = combined_determination(phase.phase, {h: p["steady"] for h, p in record["hosts"].items()})
    else:
        record["cells"] = per_host[""]
        record["steady"] = determination(phase.phase, [*finished, record])
    if phase.phase.stop.kind == "written":
        record["wsat"] = wsat_totals(phase, finished, record["cells"])
    record["host_bound"] = host_bound(record)
    cache = context.cache.check(what) if context.cache is not None else None
    if cache is not None:
        record["write_cache"] = cache
        rounds = context.pts.store.manifest.get("write_cache_rounds") or []
        context.pts.store.update_manifest(write_cache_rounds=[*rounds, {"phase": phase.key, "round": number,
                                                                        **cache}])
    atomic_write_json(folder / ROUND_FILE, record)
    context.reporter.round_finished(progress, record)
    return record


def _telemetry(context: _Context) -> dict[str, Any]:
    """A reading of the target device; none for a run on hosts (local tools would read the controller's disk)."""
    if context.hosts:
        return empty_telemetry(f"not available: the device is on {len(context.hosts)} remote host(s)")
    return read_telemetry(context.target, context.facts)


# ---------------------------------------------------------------------------------------------------------------
# operating points (CBW, DIRTH, ECW): the plan grows


def _choose_operating_points(context: _Context, phase: PhasePlan) -> None:
    """Once a sweep phase is stored: choose and store its operating points, then plan their phases (idempotent:
    a kill between the phase result and the manifest update is mended at the next start)."""
    store = context.pts.store
    chosen = dict(store.manifest.get("operating_points") or {})
    result = context.pts.phase_result(phase.key)
    if phase.phase.test in chosen or result is None:
        return
    record = operating_points_record(phase, result)
    notes = list(store.manifest.get("notes") or [])
    if record["note"]:
        notes.append(record["note"])
    store.update_manifest(operating_points={**chosen, phase.phase.test: record}, notes=notes)
    context.plan = load_plan(store)
    write_plan(context.pts.root, context.plan, stored_timing(store.manifest))
    points = ", ".join(f"{name.capitalize()}IOPS TC{cell['tc']}/QD{cell['qd']}"
                       for name, cell in record["points"].items() if cell)
    context.reporter.event(f"{phase.phase.title}: operating points {points}")
    if record["note"]:
        context.reporter.event(record["note"])
