"""The PTS engine: for each phase, purge -> preconditioning -> rounds (one fio process per round, cells as
stonewalled jobs) -> steady-state check after every round -> stop. Every finished round is stored atomically, with
its steady-state determination and the device and host telemetry around it, before the next one starts; `run` also
resumes: it skips what the store holds and re-runs only an interrupted round (or an interrupted purge +
preconditioning).

The advanced tests run through the same loop. The one step of their own: when a demand-intensity sweep (CBW, DIRTH,
ECW) ends, its operating points are chosen from the sweep's window averages, stored in the manifest, and the plan is
made again with their phases (so resume rebuilds the same plan from the manifest).
"""

import json
import random
import shlex
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ptsbench.errors import FioRunError, PtsbenchError, StoreError
from ptsbench.fio.output import DIRECTIONS as FIO_DIRECTIONS
from ptsbench.fio.output import (
    DirectionResult,
    JobResult,
    job_entries,
    merge_directions,
    merge_latency,
    parse_jobs,
)
from ptsbench.fio.runner import FioOutcome, FioStatus, client_pairs, fio_command, run_fio
from ptsbench.hosts.hostlist import Host
from ptsbench.hosts.results import HostStatus
from ptsbench.pts.advanced import demand_cells, response_histogram, select_operating_points
from ptsbench.pts.advanced_specs import ADVANCED_DEFS, ZonedCellSpec, sweep_cells
from ptsbench.pts.plan import (
    CELL_HANDOFF_S,
    PROCESS_START_S,
    PhasePlan,
    Plan,
    RoundJob,
    SeqStart,
    TargetInfo,
    describe,
    make_plan,
    next_seq_offset,
    precondition_job,
    round_job,
    round_seed,
)
from ptsbench.pts.specs import CellSpec, Phase, Settings
from ptsbench.pts.steady import steady_state
from ptsbench.pts.store import FAILED_FILE, PARTIAL_FILE, PRECONDITION_DONE, ROUND_FILE, PtsStore, host_round
from ptsbench.store import RunStore, atomic_write_json, atomic_write_text, utc_now
from ptsbench.target.target import Target
from ptsbench.target.telemetry import (
    cpu_snapshot,
    cpu_utilisation,
    empty_telemetry,
    read_telemetry,
    telemetry_change,
)
from ptsbench.units import format_bytes

if TYPE_CHECKING:
    from ptsbench.target.purge import PurgeOutcome

DIRECTIONS = ("read", "write", "total")


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
# creating a run


def target_info(target: Target, facts: Mapping[str, object], ioengine: str, size_bytes: int) -> TargetInfo:
    """The planning view of a target."""

    def as_int(key: str) -> int | None:
        value = facts.get(key)
        return value if isinstance(value, int) else None

    return TargetInfo(target.path, target.kind, size_bytes, as_int("logical_sector_bytes"),
                      as_int("physical_sector_bytes"), ioengine)


def create_run(
    root: Path,
    settings: Settings,
    info: TargetInfo,
    facts: Mapping[str, object],
    *,
    ioengine_note: str,
    purge_method: str = "auto",
    scratch: bool = False,
    name: str = "pts",
    hosts: Sequence[Mapping[str, Any]] = (),
    device_info: Mapping[str, str] | None = None,
) -> tuple[PtsStore, Plan]:
    """Plan the run and create its run directory (manifest, plan.json, plan.txt); nothing runs yet. `hosts`: the
    pre-flight facts of every host (hosts.HostInfo as a dict) for a run on fio servers; `device_info`: the user's
    description of the device (form factor, media, interface...), for the report's first page."""
    plan = make_plan(settings, info)
    manifest = {
        "kind": "pts",
        "name": name,
        "settings": settings.to_dict(),
        "target_info": info.__dict__,
        "target": dict(facts),
        "ioengine_note": ioengine_note,
        "purge_method": purge_method,
        "base_seed": random.SystemRandom().randrange(1, 2**31),
        "scratch": scratch,
        "compliance": {"compliant": not plan.deviations, "reasons": list(plan.deviations)},
        "notes": list(plan.notes),
        "write_cache": [],
        "device_info": dict(device_info or {}),
        "status": "created",
        **({"hosts": [dict(host) for host in hosts]} if hosts else {}),
    }
    store = RunStore.create(root, manifest)
    write_plan(root, plan)
    return PtsStore(store), plan


def write_plan(root: Path, plan: Plan) -> None:
    """plan.json and plan.txt (written again when operating points join the plan)."""
    atomic_write_json(root / "plan.json", plan_record(plan))
    atomic_write_text(root / "plan.txt", "\n".join(describe(plan)) + "\n")


def plan_record(plan: Plan) -> dict[str, Any]:
    """The plan as stored in plan.json."""
    return {
        "active_range_bytes": plan.active_range_bytes,
        "align_bytes": plan.align_bytes,
        "segments": asdict(plan.segments) if plan.segments else None,
        "precondition_range_bytes": plan.precondition_range_bytes,
        "worst_case_s": plan.worst_case_s,
        "pending_points": list(plan.pending_points),
        "deviations": list(plan.deviations),
        "notes": list(plan.notes),
        "phases": [
            {
                "key": p.key,
                "test": p.phase.test,
                "title": p.phase.title,
                "role": p.phase.role,
                "meta": dict(p.phase.meta),
                "purge": p.phase.purge,
                "precondition": p.phase.precondition.__dict__ if p.phase.precondition else None,
                "precondition_bytes": p.precondition_bytes,
                "cells": [_cell_spec_record(cell) for cell in p.cells],
                "skipped": list(p.skipped),
                "tracked": [{"cell": t.cell, "metric": t.metric} for t in p.phase.tracked],
                "stop": p.phase.stop.__dict__,
                "max_rounds": p.max_rounds,
                "round_s": p.round_s,
                "worst_case_s": p.worst_case_s,
            }
            for p in plan.phases
        ],
    }


def _cell_spec_record(cell: CellSpec) -> dict[str, Any]:
    return {
        "name": cell.name,
        "role": cell.role,
        "pattern": cell.pattern,
        "read_pct": cell.read_pct,
        "bs_bytes": cell.bs_bytes,
        "numjobs": cell.numjobs,
        "iodepth": cell.iodepth,
        "runtime_s": cell.runtime_s,
        "fio_options": [list(option) for option in cell.fio_options],
        **_zone_record(cell),
    }


def _zone_record(cell: CellSpec) -> dict[str, Any]:
    """zone (0 = lowest LBAs) and zones of an HDD zone cell; nothing for other cells."""
    return {"zone": cell.zone, "zones": cell.zones} if isinstance(cell, ZonedCellSpec) else {}


def load_plan(store: RunStore) -> Plan:
    """Rebuild the plan of a stored run (planning is pure, so it is the same plan)."""
    manifest = store.manifest
    if manifest.get("kind") != "pts":
        raise StoreError(f"{store.root} is not a PTS run (kind {manifest.get('kind')!r})", "pass a `ptsbench pts` run")
    return make_plan(Settings.from_dict(manifest["settings"]), TargetInfo(**manifest["target_info"]),
                     operating_points=stored_operating_points(manifest))


def stored_operating_points(manifest: Mapping[str, Any]) -> dict[str, dict[str, tuple[int, int]]]:
    """{test: {'max': (TC, QD), ...}} of the operating points chosen so far (a point not chosen is left out)."""
    return {test: {point: (int(cell["tc"]), int(cell["qd"])) for point, cell in record["points"].items() if cell}
            for test, record in (manifest.get("operating_points") or {}).items()}


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
    telemetry: dict[str, Any] | None = None  # the last reading, still valid as the next round's "before"
    hosts: tuple[Host, ...] = ()  # fio servers that run every round together; () = this machine


def stored_hosts(manifest: Mapping[str, Any]) -> tuple[Host, ...]:
    """The fio servers of a run on hosts, in --hosts order (() for a local run)."""
    return tuple(Host(str(host["host"]), int(host["port"])) for host in manifest.get("hosts") or ())


def run(pts: PtsStore, target: Target, *, destructive: bool, reporter: Reporter | None = None) -> None:
    """Run (or resume) every phase of a stored PTS run on `target` (on every host of a run on hosts)."""
    from ptsbench.hosts.preflight import check_remote_path
    from ptsbench.target.guard import check_write_allowed

    manifest = pts.store.manifest
    plan = load_plan(pts.store)
    check_stored_plan(pts, plan)
    hosts = stored_hosts(manifest)
    if hosts:
        check_remote_path(target.path, destructive, hosts, "the PTS run")
    else:
        check_write_allowed(target, destructive)
    context = _Context(pts, plan, target, dict(manifest.get("target") or {}), destructive,
                       reporter or QuietReporter(), int(manifest["base_seed"]), str(manifest.get("purge_method")),
                       hosts=hosts)
    with pts.lock():
        stop_orphan_fio(pts.root)
        pts.store.update_manifest(status="running", **({"failure": None} if "failure" in pts.store.manifest else {}))
        try:
            _check_versions(pts)
            _apply_write_cache(context)
            try:
                write_plan(pts.root, plan)
                index = 0
                while index < len(context.plan.phases):  # operating points add phases as the run goes
                    phase = context.plan.phases[index]
                    if pts.phase_result(phase.key) is None:
                        _run_phase(context, index, phase)
                    if phase.phase.role == "sweep":
                        _choose_operating_points(context, phase)
                    index += 1
            finally:
                _restore_write_cache(context)
        except KeyboardInterrupt:
            pts.store.update_manifest(status="interrupted")
            raise
        except BaseException as error:  # why, in the store too (e.g. "IOPS round 3 failed: fio hung: ...")
            pts.store.update_manifest(status="failed", failure=str(error))
            raise
        pts.store.update_manifest(status="done", finished_utc=utc_now())


def _check_versions(pts: PtsStore) -> None:
    """A deviation when this start runs another ptsbench or fio than the one the run started with: rounds before
    and after would come from different programs. Every start is recorded under "starts"."""
    from ptsbench import __version__
    from ptsbench.fio.runner import fio_version

    manifest = pts.store.manifest
    now = {"utc": utc_now(), "ptsbench_version": __version__, "fio_version": fio_version()}
    pts.store.update_manifest(starts=[*(manifest.get("starts") or []), now])
    changed = [f"{name} {manifest.get(f'{name}_version')} -> {now[f'{name}_version']}" for name in ("ptsbench", "fio")
               if manifest.get(f"{name}_version") != now[f"{name}_version"]]
    if changed:
        pts.add_compliance_reason(f"resumed with another version ({', '.join(changed)}) at {now['utc']}: rounds "
                                  "before and after ran different programs")


def check_stored_plan(pts: PtsStore, plan: Plan) -> None:
    """StoreError when a phase that has begun (its folder exists) is planned differently now than in plan.json,
    or the active range differs: the stored rounds ran another plan (made by another ptsbench version), and going on
    would mix the two in one phase."""
    from ptsbench.store import read_json

    path = pts.root / "plan.json"
    if not path.exists():
        return
    stored, now = read_json(path), json.loads(json.dumps(plan_record(plan)))  # as JSON has it: lists, not tuples
    before = {phase["key"]: phase for phase in stored.get("phases", [])}
    begun = [phase for phase in now["phases"] if phase["key"] in before and pts.phase_dir(phase["key"]).exists()]
    changed = [phase["title"] for phase in begun if not _same_plan(before[phase["key"]], phase)]
    if stored.get("active_range_bytes") != now["active_range_bytes"] and begun:
        changed.insert(0, "the active range")
    if changed:
        raise StoreError(f"{pts.root}: {', '.join(changed)} was planned differently when the run started",
                         "finish it with the ptsbench version that started it "
                         f"({pts.store.manifest.get('ptsbench_version')}), or start a new run")


def _same_plan(stored: Any, now: Any) -> bool:
    """Two plan.json records plan the same: equal on every key both have (a key only one version of ptsbench
    writes is not a difference), estimates left out."""
    if isinstance(stored, dict) and isinstance(now, dict):
        return all(_same_plan(stored[key], now[key]) for key in stored.keys() & now.keys() if key != "worst_case_s")
    if isinstance(stored, list) and isinstance(now, list):
        return len(stored) == len(now) and all(map(_same_plan, stored, now))
    return bool(stored == now)


def _apply_write_cache(context: _Context) -> None:
    """Set the device's volatile write cache as the profile requires (at every start: a power cycle resets it)."""
    from ptsbench.target.cache import read_write_cache, set_write_cache

    wanted = context.plan.settings.write_cache == "enabled"
    if context.hosts:  # the local tools would read (and set) the controller's device of the same name
        before, after, done, message = None, None, False, "not read or set on the remote hosts"
    else:
        before = read_write_cache(context.target, context.facts)
        done, message = set_write_cache(context.target, context.facts, wanted)
        after = read_write_cache(context.target, context.facts) if done else before
    record = {"utc": utc_now(), "wanted": context.plan.settings.write_cache, "before": before, "after": after,
              "set": done, "message": message}
    store = context.pts.store
    store.update_manifest(write_cache=[*store.manifest.get("write_cache", []), record])
    context.reporter.event(f"write cache: {message}")
    if after is not wanted:
        context.pts.add_compliance_reason(f"write cache not {context.plan.settings.write_cache}: {message}")


def _restore_write_cache(context: _Context) -> None:
    """Put the write cache back as it was before the run first changed it (also after a failure or Ctrl-C)."""
    from ptsbench.target.cache import set_write_cache

    records = context.pts.store.manifest.get("write_cache") or []
    original = records[0].get("before") if records else None
    if context.hosts or not isinstance(original, bool) or not any(record.get("set") for record in records):
        return
    done, message = set_write_cache(context.target, context.facts, original)
    context.pts.store.update_manifest(write_cache_restored={"utc": utc_now(), "to": original, "done": done,
                                                            "message": message})
    context.reporter.event(f"write cache restored: {message}" if done else f"write cache NOT restored: {message}")


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
        context.reporter.event(f"{phase.phase.title}: interrupted round kept as {path.name}; running it again")
    while True:
        stop = stop_reason(context.plan, phase, finished)
        if stop is not None:
            break
        finished.append(_run_round(context, index, phase, finished))
    pts.write_phase_result(phase.key, phase_result(context, phase, finished, stop))
    context.reporter.event(f"{phase.phase.title}: {stop}")


def _purge(context: _Context, phase: PhasePlan) -> None:
    from ptsbench.target.purge import purge

    context.reporter.event(f"{phase.phase.title}: purge ({context.purge_method})")
    started = utc_now()
    if context.hosts:
        outcome = remote_purge(len(context.hosts))
    else:
        outcome = purge(context.target, context.facts, context.destructive, context.purge_method)
    attempt = {"method": outcome.method, "commands": [shlex.join(c) for c in outcome.commands], "ok": outcome.ok,
               "message": outcome.message, "is_deviation": outcome.is_deviation, "started_utc": started,
               "finished_utc": utc_now()}
    context.pts.add_purge_attempt(phase.key, attempt)
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
    from ptsbench.target.purge import PurgeOutcome

    return PurgeOutcome("none (remote hosts)", [], True, f"not purged: the device is on {host_count} remote "
                        "host(s) and ptsbench runs purge tools only on this machine", True)


def _precondition(context: _Context, index: int, phase: PhasePlan) -> None:
    folder = context.pts.precondition_dir(phase.key)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / PRECONDITION_DONE).unlink(missing_ok=True)
    text = precondition_job(context.plan, phase)
    context.reporter.event(f"{phase.phase.title}: preconditioning, {format_bytes(phase.precondition_bytes)} of "
                           "sequential writes")
    progress = _progress(context, index, phase, 0)
    context.reporter.round_started(progress)

    def on_status(status: FioStatus) -> None:
        context.reporter.fio_status(progress, "preconditioning", status)

    outcome = _start_fio(context, folder, dict.fromkeys(_host_keys(context), text), on_status)
    if context.hosts:
        _fail_hosts(context, _host_statuses(context, outcome), f"{phase.phase.title} preconditioning", folder, {})
    if not outcome.ok or outcome.doc is None:
        raise FioRunError(f"{phase.phase.title} preconditioning failed: {outcome.error_line()}",
                          f"see {folder / 'fio.stderr'}")
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
               on_status: Callable[[FioStatus], None], expected_s: float | None = None) -> FioOutcome:
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
    finished = None if context.hosts else FinishedCells(folder / PARTIAL_FILE)  # fio's client streams no status
    return run_fio(job_path, json_path=folder / "fio.json", stderr_path=folder / "fio.stderr", on_status=on_status,
                   on_document=finished, extra_args=extra, client=client, expected_s=expected_s)


class FinishedCells:
    """Keeps fio's own numbers of every finished cell of a round as soon as it finishes, from fio's status
    documents: a crash mid-round then loses only the cell under way (resume still re-runs the whole round, whose
    cells run in one fio process; the kept numbers stay in the interrupted round's folder for the record)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.kept = 0

    def __call__(self, doc: Mapping[str, Any]) -> None:
        entries = job_entries(doc)
        started = [i for i, entry in enumerate(entries)
                   if any((entry.get(direction) or {}).get("total_ios") for direction in FIO_DIRECTIONS)]
        if not started:
            return
        running = entries[started[-1]].get("jobname")  # stonewalled: every job before the running one is done
        done = entries[:next(i for i, entry in enumerate(entries) if entry.get("jobname") == running)]
        if len(done) > self.kept:
            self.kept = len(done)
            atomic_write_json(self.path, {"fio version": doc.get("fio version"), "jobs": done})


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


def _progress(context: _Context, index: int, phase: PhasePlan, round_number: int) -> Progress:
    plan = context.plan
    rest = phase.max_rounds - max(round_number, 1) + 1
    eta = rest * (phase.round_s + PROCESS_START_S + CELL_HANDOFF_S * (len(phase.cells) - 1))
    eta += sum(later.worst_case_s + later.overhead_s for later in plan.phases[index + 1:]) + plan.pending_s
    return Progress(phase, index, len(plan.phases), round_number, eta)


def _seq_starts(phase: PhasePlan, finished: Sequence[Mapping[str, Any]]) -> dict[str, SeqStart]:
    """Where each sequential cell continues, from the last finished round (0 after preconditioning)."""
    if not finished:
        return {}
    previous = finished[-1]["cells"]
    starts = {}
    for cell in phase.cells:
        if cell.pattern == "seq" and cell.name in previous:
            record = previous[cell.name]
            runtime_s = record["total"]["runtime_ms"] / 1000 if record["total"] else 0
            rate = record["total"]["io_bytes"] / runtime_s / cell.numjobs if runtime_s else None
            starts[cell.name] = SeqStart(record["seq_end_bytes"], rate)
    return starts


def _run_round(
    context: _Context, index: int, phase: PhasePlan, finished: list[dict[str, Any]]
) -> dict[str, Any]:
    number = len(finished) + 1
    seed = round_seed(context.base_seed, phase.key, number)
    jobs = {key: round_job(context.plan, phase, seed, _seq_starts(phase, _view(finished, key)))
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
    started_utc, wall_start, cpu_start = utc_now(), time.monotonic(), time.process_time()
    outcome = _start_fio(context, folder, {key: job.text for key, job in jobs.items()}, on_status, phase.round_s)
    wall_s, cpu_s = time.monotonic() - wall_start, time.process_time() - cpu_start
    host_after = cpu_snapshot()
    context.telemetry = after = _telemetry(context)
    what = f"{phase.phase.title} round {number}"
    hint = f"see {folder / 'fio.stderr'}; `ptsbench resume {context.pts.root}` runs the round again"
    results = parse_jobs(outcome.doc) if outcome.doc is not None else []
    if context.hosts:
        statuses = _host_statuses(context, outcome, jobs)
        per_host = {s.host: _round_cells(context.plan, phase, jobs[s.host],
                                         [r for r in results if r.hostname == s.host])
                    for s in statuses if s.status == "ok"}
        _fail_hosts(context, statuses, what, folder, per_host)
    if not outcome.ok or outcome.doc is None:
        raise FioRunError(f"{what} failed: {outcome.error_line()}", hint)
    if not context.hosts:
        per_host = {"": _round_cells(context.plan, phase, jobs[""], results)}
    record: dict[str, Any] = {
        "round": number, "phase": phase.key, "seed": seed, "started_utc": started_utc, "finished_utc": utc_now(),
        "wall_s": wall_s, "ptsbench_cpu_s": cpu_s, "fio_version": outcome.doc.get("fio version"), "cells": {},
        "telemetry": {"before": before, "after": after, "change": telemetry_change(before, after),
                      "cpu": cpu_utilisation(host_before, host_after)},
    }
    if context.hosts:
        record["cells"] = aggregate_cells(phase, jobs, results)
        record["hosts"] = {name: _host_part(phase, cells, _view(finished, name), number)
                           for name, cells in per_host.items()}
        record["steady"] = combined_determination(phase.phase, {h: p["steady"] for h, p in record["hosts"].items()})
    else:
        record["cells"] = per_host[""]
        record["steady"] = determination(phase.phase, [*finished, record])
    if phase.phase.stop.kind == "written":
        record["wsat"] = _wsat_totals(phase, finished, record["cells"])
    atomic_write_json(folder / ROUND_FILE, record)
    context.reporter.round_finished(progress, record)
    return record


def _telemetry(context: _Context) -> dict[str, Any]:
    """A reading of the target device; none for a run on hosts (local tools would read the controller's disk)."""
    if context.hosts:
        return empty_telemetry(f"not available: the device is on {len(context.hosts)} remote host(s)")
    return read_telemetry(context.target, context.facts)


def _view(rounds: Sequence[Mapping[str, Any]], host: str) -> list[dict[str, Any]]:
    """Rounds as one host saw them (host ""): the rounds themselves."""
    return [host_round(record, host) if host else dict(record) for record in rounds]


def _round_cells(plan: Plan, phase: PhasePlan, job: RoundJob, results: Sequence[JobResult]) -> dict[str, Any]:
    """Every cell's record from one host's (or this machine's) job results of a round."""
    by_name = {result.name: result for result in results}
    cells = {}
    for cell in phase.cells:
        parts = [by_name[name] for name, cell_name in job.jobs if cell_name == cell.name and name in by_name]
        cells[cell.name] = cell_record(cell, [name for name, c in job.jobs if c == cell.name], parts)
        if cell.pattern == "seq":
            start = job.seq_starts.get(cell.name, 0)
            cells[cell.name]["seq_start_bytes"] = start
            moved = cells[cell.name]["total"]["io_bytes"] if cells[cell.name]["total"] else 0
            cells[cell.name]["seq_end_bytes"] = next_seq_offset(plan, phase.phase, cell, start, moved)
    return cells


def _host_part(phase: PhasePlan, cells: dict[str, Any], finished: Sequence[Mapping[str, Any]],
               number: int) -> dict[str, Any]:
    """One host's part of a round record: its cells, its own steady-state determination and WSAT totals."""
    part: dict[str, Any] = {"cells": cells,
                            "steady": determination(phase.phase, [*finished, {"round": number, "cells": cells}])}
    if phase.phase.stop.kind == "written":
        part["wsat"] = _wsat_totals(phase, finished, cells)
    return part


def aggregate_cells(phase: PhasePlan, jobs: Mapping[str, RoundJob], results: Sequence[JobResult]) -> dict[str, Any]:
    """The all-hosts cells of a round: per direction, each host's cell (its parts in sequence) merged with fio's
    group arithmetic (IOs and bytes summed over the longest runtime), latency merged exactly from the bins."""
    cells = {}
    for cell in phase.cells:
        names: dict[str, None] = {}
        per_host = []
        for host, job in jobs.items():
            mine = [name for name, cell_name in job.jobs if cell_name == cell.name]
            names.update(dict.fromkeys(mine))
            per_host.append([r for r in results if r.hostname == host and r.name in mine])
        directions = {}
        for direction in DIRECTIONS:
            found = [d for parts in per_host if (d := _direction(parts, direction)) is not None]
            directions[direction] = merge_directions(direction, found) if found else None
        cells[cell.name] = _cell_values(cell, list(names), directions, [p for parts in per_host for p in parts])
    return cells


def combined_determination(phase: Phase, per_host: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The steady state of a run on hosts: steady when every host is; its variables are every host's, labelled
    'HOST CELL METRIC' and carrying the host (the window is the same on every host: the rounds ran together)."""
    first = next(iter(per_host.values()))
    combined: dict[str, Any] = {
        "window_rounds": first["window_rounds"],
        "variables": {f"{host} {label}": None if value is None else {**value, "host": host}
                      for host, found in per_host.items() for label, value in found["variables"].items()},
        "steady": None if first["steady"] is None else all(found["steady"] for found in per_host.values()),
    }
    if "rounds_needed" in first:
        combined["rounds_needed"] = first["rounds_needed"]
    return combined


def _wsat_totals(phase: PhasePlan, finished: Sequence[Mapping[str, Any]], cells: Mapping[str, Any]) -> dict[str, Any]:
    """Running totals of write saturation: bytes written and IO time so far, this round included."""
    previous = finished[-1]["wsat"] if finished else {"written_bytes": 0, "io_time_s": 0.0}
    written = sum((cell["write"] or {}).get("io_bytes", 0) for cell in cells.values())
    io_time_s = sum((cell["total"] or {}).get("runtime_ms", 0) for cell in cells.values()) / 1000
    return {"written_bytes": previous["written_bytes"] + written, "io_time_s": previous["io_time_s"] + io_time_s}


# ---------------------------------------------------------------------------------------------------------------
# results of one round


def _in_sequence(direction: str, parts: Sequence[DirectionResult]) -> DirectionResult:
    """Parts of one cell that ran one after another (sequential parts a and b): rates over the summed runtime."""
    if len(parts) == 1:
        return parts[0]
    runtime_ms = sum(part.runtime_ms for part in parts)
    io_bytes = sum(part.io_bytes for part in parts)
    total_ios = sum(part.total_ios for part in parts)
    return DirectionResult(
        direction=direction,
        iops=total_ios * 1000 / runtime_ms if runtime_ms else 0.0,
        bw_bytes=io_bytes * 1000 / runtime_ms if runtime_ms else 0.0,
        io_bytes=io_bytes,
        total_ios=total_ios,
        runtime_ms=runtime_ms,
        lat=merge_latency([part.lat for part in parts]),
    )


def _direction(parts: Sequence[JobResult], name: str) -> DirectionResult | None:
    found = [part.total() if name == "total" else part.get(name) for part in parts]
    present = [d for d in found if d is not None]
    return _in_sequence(name, present) if present else None


def direction_record(result: DirectionResult | None) -> dict[str, Any] | None:
    """One direction as stored: counts, rates, runtime and total latency (mean, min, max, percentiles)."""
    if result is None:
        return None
    return {
        "iops": result.iops,
        "bw_bytes": result.bw_bytes,
        "io_bytes": result.io_bytes,
        "total_ios": result.total_ios,
        "runtime_ms": result.runtime_ms,
        "lat_n": result.lat.n,
        "lat_mean_ns": result.lat.mean_ns,
        "lat_min_ns": result.lat.min_ns,
        "lat_max_ns": result.lat.max_ns,
        "lat_percentiles_ns": result.lat.percentiles_ns,
    }


def cell_record(cell: CellSpec, job_names: Sequence[str], parts: Sequence[JobResult]) -> dict[str, Any]:
    """One cell's results: read, write and total (read + write summed), and the tracked metrics at top level; a
    histogram cell adds its response-time histogram."""
    if not parts:
        raise FioRunError(f"fio reported nothing for cell {cell.name}", "see the round's fio.json")
    return _cell_values(cell, job_names, {name: _direction(parts, name) for name in DIRECTIONS}, parts)


def _cell_values(cell: CellSpec, job_names: Sequence[str], directions: Mapping[str, DirectionResult | None],
                 parts: Sequence[JobResult]) -> dict[str, Any]:
    record: dict[str, Any] = {
        "name": cell.name, "role": cell.role, **_zone_record(cell), "pattern": cell.pattern,
        "read_pct": cell.read_pct, "bs_bytes": cell.bs_bytes, "numjobs": cell.numjobs, "iodepth": cell.iodepth,
        "runtime_s": cell.runtime_s, "jobs": list(job_names), "error": max(part.error for part in parts),
        "usr_cpu": sum(part.usr_cpu for part in parts) / len(parts),
        "sys_cpu": sum(part.sys_cpu for part in parts) / len(parts),
    }
    for name, result in directions.items():
        record[name] = direction_record(result)
    total = record["total"] or {}
    for metric in ("iops", "bw_bytes", "lat_mean_ns", "lat_max_ns"):
        record[metric] = total.get(metric, 0.0)
    if cell.role == "histogram":
        found = directions["total"]
        record["histogram"] = asdict(response_histogram(found.lat)) if found is not None else None
    return record


# ---------------------------------------------------------------------------------------------------------------
# steady state and stopping


def determination(phase: Phase, rounds: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The steady-state determination after the last of `rounds`, for every tracked variable of the phase."""
    window = phase.stop.window
    if not phase.tracked or phase.stop.kind != "steady":
        return {"window_rounds": [], "variables": {}, "steady": None}
    if len(rounds) < window:
        return {"window_rounds": [], "variables": {t.label: None for t in phase.tracked}, "steady": False,
                "rounds_needed": window - len(rounds)}
    last = rounds[-window:]
    numbers = [int(r["round"]) for r in last]
    variables = {
        t.label: {"cell": t.cell, "metric": t.metric,
                  **steady_state([float(r["cells"][t.cell][t.metric]) for r in last], numbers).to_dict()}
        for t in phase.tracked
    }
    return {"window_rounds": numbers, "variables": variables,
            "steady": all(v["steady"] for v in variables.values())}


def stop_reason(plan: Plan, phase: PhasePlan, rounds: Sequence[Mapping[str, Any]]) -> str | None:
    """Why the phase stops after these rounds, or None to run another round."""
    if not rounds:
        return None
    stop = phase.phase.stop
    last = rounds[-1]
    if stop.kind == "steady" and last["steady"]["steady"]:
        window = last["steady"]["window_rounds"]
        return f"steady state reached in rounds {window[0]}-{window[-1]}"
    if stop.kind == "written":
        totals = _wsat_progress(last)
        if totals["written_bytes"] >= stop.capacity_multiple * plan.target.size_bytes:
            return f"{stop.capacity_multiple:g} x capacity written"
        if totals["io_time_s"] >= stop.max_time_s:
            return f"time limit of {stop.max_time_s:g} s reached"
    if stop.kind == "rounds" and len(rounds) >= phase.max_rounds:
        return f"all {len(rounds)} round(s) run"
    if len(rounds) >= phase.max_rounds:
        steady = stop.kind == "steady" and phase.phase.tracked
        return f"maximum of {phase.max_rounds} rounds reached" + ("; steady state NOT reached" if steady else "")
    return None


def _wsat_progress(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """Write saturation totals to stop on: the round's, or on hosts each host against its own capacity (the
    least written) and the longest IO time."""
    if "hosts" not in record:
        return dict(record["wsat"])
    totals = [part["wsat"] for part in record["hosts"].values()]
    return {"written_bytes": min(t["written_bytes"] for t in totals), "io_time_s": max(t["io_time_s"] for t in totals)}


def phase_result(
    context: _Context, phase: PhasePlan, rounds: Sequence[Mapping[str, Any]], stop: str | None
) -> dict[str, Any]:
    """The phase summary: stop reason, steady state, and each cell's values over the measurement window (on
    hosts: all hosts together, and under "hosts" each host's own)."""
    result = _phase_summary(context.pts, phase, rounds, stop)
    if "hosts" in rounds[-1]:
        keys = ("steady", "determination", "window", "wsat")
        result["hosts"] = {host: {key: value for key, value in
                                  _phase_summary(context.pts, phase, _view(rounds, host), stop, host).items()
                                  if key in keys}
                           for host in rounds[-1]["hosts"]}
    return result


def _phase_summary(pts: PtsStore, phase: PhasePlan, rounds: Sequence[Mapping[str, Any]], stop: str | None,
                   host: str | None = None) -> dict[str, Any]:
    last = rounds[-1]
    every = phase.phase.stop.kind == "rounds"  # a fixed schedule (HIR, XSR, HDD, operating points): all its rounds
    window_numbers = last["steady"]["window_rounds"] or [
        int(r["round"]) for r in (rounds if every else rounds[-phase.phase.stop.window:])]
    window = [r for r in rounds if int(r["round"]) in window_numbers]
    result: dict[str, Any] = {
        "phase": phase.key, "test": phase.phase.test, "title": phase.phase.title, "stop_reason": stop,
        "rounds": len(rounds), "steady": last["steady"]["steady"], "window_rounds": window_numbers,
        "determination": last["steady"]["variables"],
        "window": window_values(pts, phase, window, host),
    }
    if "wsat" in last:
        result["wsat"] = last["wsat"]
    return result


def window_values(pts: PtsStore, phase: PhasePlan, window: Sequence[Mapping[str, Any]],
                  host: str | None = None) -> dict[str, Any]:
    """Per cell over the window rounds: the average of each round's value (as PTS reports), and the total latency
    of all their IOs merged exactly from fio's json+ bins (max and percentiles over the whole window). On hosts,
    `host` None: every host's IOs, else that host's (its rounds as _view gives them)."""
    merged = _window_latency(pts, phase, window, host)
    values: dict[str, Any] = {}
    for cell in phase.cells:
        records = [r["cells"][cell.name] for r in window]
        cell_values: dict[str, Any] = {m: _average(records, "", m) for m in ("iops", "bw_bytes", "lat_mean_ns")}
        for direction in ("read", "write"):
            for metric in ("iops", "bw_bytes", "lat_mean_ns"):
                cell_values[f"{direction}_{metric}"] = _average(records, direction, metric)
        latency = merged.get(cell.name)
        cell_values["lat_max_ns"] = max(float(rec["lat_max_ns"]) for rec in records)
        cell_values["lat_percentiles_ns"] = latency.percentiles_ns if latency else {}
        values[cell.name] = cell_values
    return values


def _average(records: Sequence[Mapping[str, Any]], direction: str, metric: str) -> float | None:
    """The average of a metric over rounds (direction "" = the cell's top-level value); None when absent."""
    sources = [rec[direction] if direction else rec for rec in records]
    found = [float(source[metric]) for source in sources if source]
    return sum(found) / len(found) if found else None


def _window_latency(pts: PtsStore, phase: PhasePlan, window: Sequence[Mapping[str, Any]],
                    host: str | None) -> dict[str, Any]:
    from ptsbench.store import read_json

    per_cell: dict[str, list[Any]] = {}
    for record in window:
        path = pts.round_dir(phase.key, int(record["round"])) / "fio.json"
        if not path.exists():
            return {}
        results: dict[str, list[JobResult]] = {}
        for result in parse_jobs(read_json(path)):
            if host is None or result.hostname == host:
                results.setdefault(result.name, []).append(result)
        for cell_name, cell in record["cells"].items():
            for job in cell["jobs"]:
                totals = [total.lat for result in results.get(job, []) if (total := result.total()) is not None]
                if totals:
                    per_cell.setdefault(cell_name, []).extend(totals)
    return {name: merge_latency(parts) for name, parts in per_cell.items()}


# ---------------------------------------------------------------------------------------------------------------
# operating points (CBW, DIRTH, ECW)


def operating_points_record(phase: PhasePlan, result: Mapping[str, Any]) -> dict[str, Any]:
    """MaxIOPS, MidIOPS and MinIOPS of a finished sweep phase, chosen from its window averages (advanced.py's
    rules), as stored in the manifest."""
    specs = [_cell_spec_record(cell) for cell in sweep_cells(phase.cells)]  # the cells as they ran
    points = select_operating_points(demand_cells(specs, result["window"]))
    chosen = {"max": points.max, "mid": points.mid, "min": points.min}
    note = None
    if points.max is None:
        note = (f"{ADVANCED_DEFS[phase.phase.test].title}: no TC x QD cell has a mean response time under "
                f"{points.limit_ns / 1e6:g} ms, so MaxIOPS and MidIOPS do not exist; only MinIOPS (TC1/QD1) runs")
    return {
        "phase": phase.key, "window_rounds": list(result["window_rounds"]), "limit_ns": points.limit_ns,
        "middle_iops": points.middle_iops, "note": note,
        "points": {name: None if cell is None else {"name": cell.name, "tc": cell.tc, "qd": cell.qd,
                                                    "iops": cell.iops, "lat_mean_ns": cell.lat_mean_ns}
                   for name, cell in chosen.items()},
    }


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
    write_plan(context.pts.root, context.plan)
    points = ", ".join(f"{name.capitalize()}IOPS TC{cell['tc']}/QD{cell['qd']}"
                       for name, cell in record["points"].items() if cell)
    context.reporter.event(f"{phase.phase.title}: operating points {points}")
    if record["note"]:
        context.reporter.event(record["note"])


# ---------------------------------------------------------------------------------------------------------------
# resuming and cleaning up


def resume_target(pts: PtsStore) -> Target:
    """The stored run's target, checked to be the same device (size, model, serial) as when the run started."""
    from ptsbench.errors import TargetError
    from ptsbench.target.info import target_facts
    from ptsbench.target.target import resolve_target

    manifest = pts.store.manifest
    if manifest.get("kind") != "pts":
        raise StoreError(f"{pts.root} is not a PTS run or sweep",
                         "`ptsbench resume` continues runs made by `ptsbench pts` or `ptsbench sweep`")
    info = TargetInfo(**manifest["target_info"])
    if manifest.get("hosts"):
        return _remote_target(info, stored_hosts(manifest))
    if info.kind == "file" and manifest.get("status") != "done":
        _check_file_kept(pts, info, bool(manifest.get("scratch")))
    target = resolve_target(info.path, info.size_bytes if info.kind == "file" else None)
    if target.kind != info.kind or (info.kind == "block" and target.size_bytes != info.size_bytes):
        raise TargetError(f"{info.path} is not the target this run started on (kind or size changed)",
                          "resume on the same device, or start a new run")
    stored, now = manifest.get("target") or {}, target_facts(target)
    for key in ("model", "serial"):
        if info.kind == "block" and stored.get(key) and stored.get(key) != now.get(key):
            raise TargetError(f"{info.path} is now {key} {now.get(key)}, the run started on {stored.get(key)}",
                              "resume on the same device")
    return target


def _check_file_kept(pts: PtsStore, info: TargetInfo, scratch: bool) -> None:
    """TargetError when a file target lost what the stored rounds left on it: gone, or shorter than the run's size
    (fio would lay out a fresh file and the next rounds would run on it unpreconditioned). A scratch file fio has
    not written yet may be missing."""
    from ptsbench.errors import TargetError

    path = Path(info.path)
    written = any(p.name in (ROUND_FILE, PRECONDITION_DONE) for p in (pts.root / "pts").rglob("*.json"))
    if not path.exists():
        if scratch and not written:
            return
        raise TargetError(f"target file {info.path} is gone", "restore it, or start a new run")
    size_bytes = path.stat().st_size
    if written and size_bytes < info.size_bytes:
        raise TargetError(f"{info.path} is {size_bytes:,} bytes, the run started on {info.size_bytes:,}: what the "
                          "stored rounds wrote is gone", "restore the file, or start a new run")


def _remote_target(info: TargetInfo, hosts: Sequence[Host]) -> Target:
    """The target of a run on hosts, after the pre-flight again: every host back, same fio, path usable."""
    from ptsbench.errors import TargetError
    from ptsbench.hosts.preflight import preflight

    checked = preflight(hosts, [info.path], size_bytes=info.size_bytes).targets[0]
    if checked.path != info.path or checked.kind != info.kind:
        raise TargetError(f"{info.path} is now a {checked.kind} at {checked.path} on the hosts, the run started on "
                          f"a {info.kind}", "resume on the same device or file")
    return Target(path=info.path, kind=info.kind, size_bytes=info.size_bytes, requested=info.path)


def stop_orphan_fio(root: Path, term_timeout_s: float = 5.0, kill_timeout_s: float = 10.0) -> None:
    """Stop the fio processes a killed ptsbench left running on this run's job files, and wait until they are gone;
    refuse to start a second fio on the same target while one runs. Called with the run directory locked, so they
    belong to no live ptsbench. (fio's main process ends at its next status write, but its job processes go on
    for seconds, to the end of the cell, or hang on a lock the dead main process held.) SIGTERM first, so fio ends
    cleanly; SIGKILL for any still there after `term_timeout_s`: their round is run again anyway."""
    import signal

    from ptsbench.fio.runner import fio_pids, kill_fio_processes

    for signal_number, timeout_s in ((signal.SIGTERM, term_timeout_s), (signal.SIGKILL, kill_timeout_s)):
        kill_fio_processes(root, signal_number)
        deadline = time.monotonic() + timeout_s
        while fio_pids(root) and time.monotonic() < deadline:
            time.sleep(0.05)
    if pids := fio_pids(root):
        raise PtsbenchError(f"fio from an earlier attempt of this run is still running (pid {pids[0]})",
                            f"wait for it to end or stop it (kill -9 {pids[0]}), then resume")


def finish_scratch(pts: PtsStore) -> None:
    """Remove the scratch file of a finished run (kept while the run can still be resumed)."""
    manifest = pts.store.manifest
    if manifest.get("scratch") and manifest.get("status") == "done":
        Path(manifest["target_info"]["path"]).unlink(missing_ok=True)
