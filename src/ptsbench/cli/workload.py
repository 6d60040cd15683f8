"""`ptsbench capture`, `characterise` and `replay`: a real workload recorded, reduced to its statistics, replayed."""

import functools
import json
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ptsbench.cli import Seconds, safety_flag, text_path
from ptsbench.report.core.terminal import FORMATS

if TYPE_CHECKING:
    from ptsbench.cases.plan import Case
    from ptsbench.cli.case_options import CaseRequest
    from ptsbench.store import RunStore

OUT_HELP = "Run directory (default ./ptsbench-results/...)."


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("device")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.option("--duration", "duration_s", type=Seconds(), help="Capture this long (or 500ms, 2m, 1h).")
@click.option("--out", type=click.Path(path_type=Path), callback=lambda _c, _p, value: text_path(value),
              help=OUT_HELP)
def capture(device: str, command: tuple[str, ...], duration_s: float | None, out: Path | None) -> None:
    """Record DEVICE's IO (a blktrace binary) for --duration, or while COMMAND runs (after `--`).

    Needs root: the kernel's block tracer records every IO queued, issued and completed. The trace, its facts and
    its characterisation are stored in a new run directory.

    \b
    Examples:
      ptsbench capture /dev/nvme0n1 --duration 60
      ptsbench capture /dev/loop0 -- fio mix.fio
    """
    from ptsbench.store import RunStore, check_new_run_dir, default_run_dir
    from ptsbench.workload.capture import capture as record
    from ptsbench.workload.capture import check_can_capture
    from ptsbench.workload.runs import trace_name

    if command and command[0].startswith("-"):
        raise click.UsageError(f"no such option: {command[0]} (a command to capture goes after --)")
    if bool(command) == (duration_s is not None):
        raise click.UsageError("give either --duration or a command to run (after --), not both nor neither")
    disk = check_can_capture(device)
    if command and shutil.which(command[0]) is None:
        raise click.UsageError(f"{command[0]}: no such program to run (not on PATH, or not executable)")
    run_dir = out or default_run_dir(f"capture-{disk}")
    check_new_run_dir(run_dir)
    store = RunStore.create(run_dir, {"kind": "capture", "name": run_dir.name, "device": device, "status": "running"})
    trace = run_dir / trace_name("blktrace")
    click.echo(f"ptsbench: capturing {device} into {trace}", err=True)
    try:
        facts = record(device, trace, duration_s, command)
    except KeyboardInterrupt:
        store.update_manifest(status="interrupted")
        raise
    except Exception:
        store.update_manifest(status="failed")
        raise
    store.update_manifest(status="done", duration_s=round(facts.duration_s, 3), event_count=facts.event_count,
                          dropped_events=facts.dropped_events, command=list(facts.command),
                          command_exit_code=facts.command_exit_code)
    found = _characterise_into(run_dir, trace)
    store.update_manifest(io_count=found["io_count"])
    if facts.dropped_events:
        click.echo(f"ptsbench: warning: the kernel dropped {facts.dropped_events:,} trace events: the trace misses "
                   "IOs (capture a shorter time, or a quieter moment)", err=True)
    _print(found, "table")
    click.echo(f"ptsbench: run directory {run_dir}", err=True)
    if facts.command_exit_code:
        raise SystemExit(facts.command_exit_code)


def _characterise_into(run_dir: Path, trace: Path) -> dict[str, Any]:
    from ptsbench.workload.characterise import characterise
    from ptsbench.workload.runs import write_characterisation
    from ptsbench.workload.stream import load_stream

    found = characterise(load_stream(trace))
    write_characterisation(run_dir, found)
    return found


def show_capture(store: "RunStore", output_format: str) -> None:
    """`ptsbench show` of a capture: its stored characterisation (json: all of it; csv: its tables)."""
    from ptsbench.errors import StoreError
    from ptsbench.workload.runs import read_characterisation

    found = read_characterisation(store.root)
    if found is None:
        raise StoreError(f"{store.root} holds no trace", "capture again: a capture's trace is its result")
    if output_format == "csv":
        from ptsbench.report.build import load_report
        from ptsbench.report.core.terminal import report_tables_csv

        click.echo(report_tables_csv(load_report(store.root).tables()), nl=False)
        return
    _print(found, output_format)


def _print(found: dict[str, Any], output_format: str) -> None:
    from ptsbench.report.workload import summary_lines

    if output_format == "json":
        click.echo(json.dumps(found, indent=1))
    else:
        for line in summary_lines(found):
            click.echo(line)


@click.command()
@click.argument("trace", type=click.Path(path_type=Path))
@click.option("--format", "output_format", type=click.Choice(("table", "json")), default="table",
              help="A summary for people (table) or the whole characterisation (json).")
@click.option("--pid", type=click.IntRange(min=1),
              help="Only the IOs this process queued (blktrace; the characterisation's `processes` lists them). "
                   "Without the device's view: no outstanding IOs, no idle times.")
def characterise(trace: Path, output_format: str, pid: int | None) -> None:
    """Statistics of a trace (blktrace binary or fio iolog v2/v3) or of a capture's run directory: IO sizes by
    direction, mix over time, outstanding IOs, locality, inter-arrival and idle times, top IO streams.

    A run directory gets its characterisation.json (re)written (not with --pid); a trace file is only read."""
    from ptsbench.store import MANIFEST
    from ptsbench.workload.characterise import characterise as reduce
    from ptsbench.workload.runs import trace_in
    from ptsbench.workload.stream import load_stream, of_process

    if pid is not None:
        found = reduce(of_process(load_stream(trace_in(trace)), pid))
    elif trace.is_dir() and (trace / MANIFEST).is_file():
        found = _characterise_into(trace, trace_in(trace))
    else:
        found = reduce(load_stream(trace_in(trace)))
    _print(found, output_format)


@dataclass(frozen=True)
class ReplayRequest:
    """What `replay` is asked, built and checked once from its options."""

    trace: Path  # a blktrace binary, a fio IO log or a capture's run directory
    target: str  # as typed
    ioengine: str
    rate_percent: int | None  # the captured pace scaled; None: as captured
    no_stall: bool  # as fast as the target goes
    steady: bool  # rounds until the RWSW steady state, at most the cases' repeat
    precondition: bool  # with steady: RWSW's workload-independent preconditioning first
    pid: int | None  # only this process's IOs
    cases: "CaseRequest"  # the results' format, the run directory, the safety flags, the rounds


def replay_request(options: Mapping[str, Any]) -> ReplayRequest:
    """The request of replay's options as click parsed them: the pace given once, TARGET and --ioengine as fio
    reads them in a job file."""
    from ptsbench.cli.case_options import CaseRequest, job_value, one_line

    if options["no_stall"] and options["rate_percent"] is not None:
        raise click.UsageError("--no-stall and --rate-percent exclude each other: as fast as possible, or scaled")
    if options["no_precondition"] and not options["steady"]:
        raise click.UsageError("--no-precondition is for --steady runs (a single replay is never preconditioned)")
    one_line(options["target"], what="TARGET")
    job_value(options["ioengine"], "--ioengine")
    job_value(options["target"], "TARGET")
    cases = CaseRequest(output_format=options["output_format"], out=options["out"],
                        destructive=options["destructive"], allow_mounted=options["allow_mounted"], keep_files=True,
                        repeat=options["max_rounds"] if options["steady"] else 1)
    return ReplayRequest(options["trace"], options["target"], options["ioengine"], options["rate_percent"],
                         options["no_stall"], options["steady"], options["steady"] and not options["no_precondition"],
                         options["pid"], cases)


def _takes_request(function: Callable[..., Any]) -> Callable[..., Any]:
    """replay gets its ReplayRequest, built and checked from every option, in their place."""

    @functools.wraps(function)
    def wrapper(**options: Any) -> Any:
        return function(replay_request(options))

    return wrapper


@click.command()
@click.argument("trace", type=click.Path(path_type=Path))
@click.argument("target")
@click.option("--no-stall", is_flag=True, help="As fast as the target goes (replay_no_stall), not at the captured "
                                               "pace.")
@click.option("--rate-percent", type=click.IntRange(1, 100000),
              help="The captured pace scaled: 200 replays twice as fast, 50 at half speed (replay_time_scale).")
@click.option("--ioengine", default="libaio", show_default=True, help="fio ioengine of the replay.")
@click.option("--format", "output_format", type=click.Choice(FORMATS), default="table",
              help="Results on stdout: table, json or csv.")
@click.option("--out", type=click.Path(path_type=Path), callback=lambda _c, _p, value: text_path(value),
              help=OUT_HELP)
@click.option("--steady", is_flag=True,
              help="RWSW steady state: replay round after round until the PTS criterion holds on IOPS and mean "
                   "latency over the last 5 rounds (or --max-rounds).")
@click.option("--max-rounds", type=click.IntRange(5, 1000), default=25, show_default=True,
              help="With --steady: rounds at most.")
@click.option("--no-precondition", is_flag=True,
              help="With --steady: no purge and no workload-independent preconditioning before the rounds (RWSW "
                   "purges the target, then writes all of it twice, sequential 128 KiB, first).")
@click.option("--pid", type=click.IntRange(min=1),
              help="Replay only the IOs this process queued (a blktrace; `characterise` lists the processes): the "
                   "application's IOs without, say, udev's probes of the device.")
@safety_flag("--destructive", help_text="Allow writes to a block device or an existing file (refused by default).")
@safety_flag("--allow-mounted", help_text="With --destructive: allow writes to a device in use (docs/safety.md).")
@_takes_request
def replay(request: ReplayRequest) -> None:
    """Replay TRACE (blktrace binary, fio iolog v2/v3, or a capture's run directory) onto TARGET with fio.

    Every IO of the trace goes to TARGET (replay_redirect), whatever device or file the trace names; a new file
    is made first, as long as the trace's extent. TARGET is judged like any write (--destructive for a device or an
    existing file). The run is stored like a case, with the trace's characterisation and the comparison of fio's
    IOs with the trace's. --steady first purges TARGET as `ptsbench pts` does and preconditions it (RWSW), then
    replays round after round until steady state; `ptsbench resume RUN_DIR` continues such a run when it was
    stopped.

    \b
    Examples:
      ptsbench replay ptsbench-results/20261206T050000Z-capture-nvme0n1 /mnt/scratch/replay.dat
      ptsbench replay app.blktrace /dev/nvme1n1 --destructive --no-stall
    """
    from dataclasses import replace

    from ptsbench.cases.plan import Overrides
    from ptsbench.cli.case_run import JobsRequest, Reach, run_job_files
    from ptsbench.fio.iolog import fill_job_text, replay_job_text
    from ptsbench.store import MANIFEST, check_new_run_dir, default_run_dir
    from ptsbench.workload.blktrace import write_process_only
    from ptsbench.workload.characterise import characterise as reduce
    from ptsbench.workload.replayed import pace_asked
    from ptsbench.workload.rounds import PRECONDITION_JOB, PRECONDITION_LOOPS, REPLAY_JOB
    from ptsbench.workload.runs import CHARACTERISATION, trace_in, trace_name, write_characterisation
    from ptsbench.workload.stream import load_stream, of_process, trace_format

    target, pid, steady, precondition = request.target, request.pid, request.steady, request.precondition
    source = trace_in(request.trace)
    stream = load_stream(source)  # the trace is hostile input: read whole and judged before fio sees it
    found = reduce(of_process(stream, pid) if pid is not None else stream)
    if not found["io_count"]:
        from ptsbench.errors import PtsbenchError

        raise PtsbenchError(f"{source} holds no IO to replay", "capture while the workload runs, then replay that")
    run_dir = request.cases.out or default_run_dir(f"replay-{Path(target).name}")
    check_new_run_dir(run_dir)
    target_path = os.path.abspath(target)
    new_file_bytes = _check_target_size(target_path, found["locality"]["high_bytes"])
    made_dir = not run_dir.exists()
    run_dir.mkdir(parents=True, exist_ok=True)
    copy = run_dir / trace_name(trace_format(source))
    job, fill = run_dir / REPLAY_JOB, run_dir / PRECONDITION_JOB
    prepared = (job.name, copy.name, CHARACTERISATION, *((fill.name,) if precondition else ()))
    made: list[str] = []  # the new target file, once this command made it
    try:
        if pid is None:
            shutil.copyfile(source, copy)
        else:  # the copy holds that process's IOs alone, and its characterisation is the copy's
            write_process_only(source, pid, copy)
            found = reduce(load_stream(copy))
        write_characterisation(run_dir, found)
        if new_file_bytes:
            _new_file(target_path, new_file_bytes, request.cases.destructive)
            made.append(target_path)
        job.write_text(replay_job_text(copy.absolute(), target_path, request.ioengine, request.rate_percent,
                                       request.no_stall))
        pace = pace_asked(request.no_stall, request.rate_percent)
        workload = {"trace": str(source), "steady": steady, "target": target_path, "pace": pace}
        cases = replace(request.cases, out=run_dir)
        if steady:
            if precondition:
                fill.write_text(fill_job_text(target_path, request.ioengine, PRECONDITION_LOOPS))
            store, planned = _start_steady(run_dir, prepared, {**workload, "precondition": precondition}, cases)
        else:
            run_job_files(JobsRequest((job,), "replay", Overrides(), prepared=prepared), cases, Reach(()),
                          manifest={"workload": workload})
    finally:
        if not (run_dir / MANIFEST).exists():  # refused before the run began: leave nothing behind
            _undo(run_dir, prepared, made_dir, made)
    if steady:
        _run_steady(store, planned, precondition, cases)
    else:
        _compare(run_dir, found, pace)


def _undo(run_dir: Path, prepared: tuple[str, ...], made_dir: bool, made_targets: list[str]) -> None:
    """Remove what a refused replay made: its files in the run directory (the folder too, when it made it), and
    the new target file it made (still empty and marked as ptsbench's)."""
    from ptsbench.device.userfile import made_by_ptsbench

    for name in prepared:
        (run_dir / name).unlink(missing_ok=True)
    if made_dir and run_dir.is_dir() and not any(run_dir.iterdir()):
        run_dir.rmdir()
    for path in made_targets:
        if os.path.isfile(path) and made_by_ptsbench(path):
            os.unlink(path)


def _start_steady(run_dir: Path, prepared: tuple[str, ...], workload: dict[str, Any],
                  request: "CaseRequest") -> "tuple[RunStore, list[Case]]":
    """The new run directory of a replay --steady run (at most request.repeat rounds), its cases planned and
    judged by the guard first."""
    from ptsbench.cases.plan import Overrides, manifest_settings
    from ptsbench.cli.case_run import check_writes
    from ptsbench.device.same_device import start_record
    from ptsbench.store import RunStore
    from ptsbench.workload.rounds import plan_rounds

    cases = plan_rounds(run_dir, request.repeat, workload["precondition"], request.log_interval_ms)
    check_writes(cases, request.permission, ())
    target = workload["target"]
    return RunStore.create(run_dir, {
        "kind": "run", "name": "replay", "job_files": [name for name in prepared if name.endswith(".fio")],
        "targets": [], **manifest_settings(Overrides(), request.log_interval_ms, False), "repeat": request.repeat,
        "cases": [case.dir_name for case in cases], "status": "running", "drops": None, "workload": workload,
        "device_identities": {target: start_record(target)} if _is_block(target) else {},
    }, prepared), cases


def _is_block(path: str) -> bool:
    import stat

    return os.path.exists(path) and stat.S_ISBLK(os.stat(path).st_mode)


def _run_steady(store: "RunStore", cases: "list[Case]", precondition: bool, request: "CaseRequest") -> None:
    """Run (or go on with) a replay --steady run: the cases without a stored result, until the stored rounds are
    steady; then print, store and say its results and the verdict."""
    import sys

    from ptsbench.cases.records import load_records
    from ptsbench.cases.schedule import claim_cases
    from ptsbench.cli.case_run import finish
    from ptsbench.errors import PtsbenchError
    from ptsbench.pts.start import stop_orphan_fio
    from ptsbench.pts.store import PtsStore
    from ptsbench.report.cases.tables import result_rows
    from ptsbench.report.core.progress import TerminalProgress
    from ptsbench.sweep import finished
    from ptsbench.workload.rounds import purge_target, run_rounds, stored_cases
    from ptsbench.workload.runs import read_characterisation

    click.echo(f"ptsbench: run directory {store.root}", err=True)
    with PtsStore(store).lock(), claim_cases(cases, store.root, request.allow_mounted):
        stop_orphan_fio(store.root.absolute())  # a killed run's fio, if any is left
        store.update_manifest(status="running")
        try:
            if precondition and not finished(store, cases[0]):  # purged again whenever preconditioned again
                target = str(store.manifest["workload"]["target"])
                click.echo(f"ptsbench: purging {target} before the preconditioning (RWSW)", err=True)
                click.echo(f"ptsbench: {purge_target(store.root, target, request.destructive)['message']}", err=True)
            with TerminalProgress() as progress:
                records = run_rounds(store, cases, precondition, progress)
        except PtsbenchError:
            store.update_manifest(status="failed")
            raise
        except KeyboardInterrupt:
            store.update_manifest(status="interrupted")
            click.echo(f"ptsbench: finished rounds are kept; `ptsbench resume {store.root}` continues", err=True)
            raise
        failed = [record for record in records if record.status != "ok"]
        store.update_manifest(cases=stored_cases(store, cases), status="failed" if failed else "done")
    finish(store, result_rows(load_records(store)), request)
    found = read_characterisation(store.root)
    if found is not None:
        _compare(store.root, found, store.manifest["workload"].get("pace"))
    _say_steady(store.root, precondition)
    if failed:
        for record in failed:
            click.echo(f"ptsbench: {record.name} {record.status}: {record.message or 'fio did not say why'}", err=True)
        click.echo(f"ptsbench: error: {failed[0].name} failed (see fio.stderr in {store.root}/cases); "
                   f"`ptsbench resume {store.root}` runs it again", err=True)
        sys.exit(1)


def resume_replay(run_dir: Path, destructive: bool) -> None:
    """`ptsbench resume` of a replay --steady run: the stored cases kept, the others run until steady."""
    from ptsbench.cli.case_options import CaseRequest
    from ptsbench.cli.case_run import check_writes
    from ptsbench.device.claim import check_not_claimed
    from ptsbench.device.same_device import check_same_device
    from ptsbench.errors import TargetError
    from ptsbench.store import RunStore
    from ptsbench.workload.rounds import plan_rounds

    store = RunStore.open(run_dir.absolute())
    manifest = store.manifest
    workload = manifest["workload"]
    target, precondition = str(workload["target"]), bool(workload.get("precondition"))
    if not os.path.exists(target):
        raise TargetError(f"{target}, the target this replay ran on, is gone",
                          "put it back, or replay the trace again into a new run directory")
    if _is_block(target):  # the same device as at the start, nothing new on it (device/same_device.py)
        check_not_claimed(target)
        recorded = (manifest.get("device_identities") or {}).get(target)
        for note in check_same_device(target, recorded, True, store.root):
            click.echo(f"ptsbench: note: {note}", err=True)
    request = CaseRequest(destructive=destructive, keep_files=True, repeat=int(manifest["repeat"]),
                          log_interval_ms=int(manifest["log_interval_ms"]))
    cases = plan_rounds(store.root, request.repeat, precondition, request.log_interval_ms)
    check_writes(cases, request.permission, ())
    click.echo(f"ptsbench: resuming {run_dir}", err=True)
    _run_steady(store, cases, precondition, request)


def _say_steady(run_dir: Path, preconditioned: bool) -> None:
    """Store the steady-state determination of the replay's rounds (steady.json) and say it."""
    from ptsbench.atomic import atomic_write_json
    from ptsbench.store import RunStore
    from ptsbench.workload.rounds import judged
    from ptsbench.workload.runs import STEADY

    found = judged(RunStore.open(run_dir), preconditioned)
    atomic_write_json(run_dir / STEADY, found)
    verdict = (f"steady in rounds {found['window'][0]}-{found['window'][-1]}" if found["steady"] else
               f"not steady after {found['rounds']} rounds")
    click.echo(f"ptsbench: RWSW steady state (PTS criterion on IOPS and mean latency): {verdict}; follows the RWSW "
               f"technical position with deviations: {'; '.join(found['deviations'])}", err=True)


def _new_file(target: str, size_bytes: int, destructive: bool) -> None:
    """Make the new file `target` (never over an existing one), sparse, `size_bytes` long, marked as ptsbench's:
    the replay reads where the trace read, which a file grown by the replay's own writes would not hold yet (fio
    lays out no file for a replay: its reads there would come back short). The guard judges the path first (a
    missing /dev name is a typo, never a file)."""
    from ptsbench.device.guard import check_path_allowed
    from ptsbench.device.userfile import mark_made

    check_path_allowed(target, True, destructive)
    with open(target, "xb") as handle:
        handle.truncate(size_bytes)
    mark_made([target])


def _check_target_size(target: str, extent_bytes: int) -> int | None:
    """The size to lay a new file out to (the trace's extent, whole MiB), or None for an existing target large
    enough; a smaller one is refused (fio would stop at its end)."""
    from ptsbench.device.target import resolve_target
    from ptsbench.errors import TargetError

    if os.path.isdir(target):
        raise TargetError(f"{target} is a folder", "replay onto a block device or a file (new or existing)")
    if not os.path.exists(target):
        return -(-extent_bytes // (1 << 20)) * (1 << 20)
    size = resolve_target(target).size_bytes
    if size is not None and size < extent_bytes:
        raise TargetError(f"{target} holds {size:,} bytes; the trace reaches byte {extent_bytes:,}",
                          "replay onto a larger target (or a new file, made as long as the trace's extent)")
    return None


def _compare(run_dir: Path, found: dict[str, Any], pace: dict[str, Any] | None) -> None:
    """Store and print the trace's IOs and bytes per direction beside what fio did in the replay job (the first
    round of a --steady run), judged on what fio counts reliably (workload/replayed.py)."""
    from ptsbench.atomic import atomic_write_json
    from ptsbench.cases.records import load_records
    from ptsbench.store import RunStore
    from ptsbench.workload.replayed import compare, summary_lines
    from ptsbench.workload.runs import REPLAY

    records = load_records(RunStore.open(run_dir))
    jobs = [job for record in records for job in record.jobs if job.get("name") == "replay"]
    if not jobs:
        return
    done = {part["direction"]: part for part in jobs[0]["directions"]}
    comparison = compare(found, done, jobs[0].get("runtime_ms", 0), pace)
    atomic_write_json(run_dir / REPLAY, comparison)
    for line in summary_lines(comparison):
        click.echo(f"ptsbench: {line}", err=True)
