"""`ptsbench sweep`: a matrix of fio cells over rw, block size, read mix, iodepth and numjobs, run by the case runner
and resumable with `ptsbench resume`."""

import functools
import sys
from collections.abc import Callable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ptsbench.cli import Finite, Seconds, safety_flag, text_path
from ptsbench.cli.case_options import (
    HOSTS_HELP,
    LATENCY_MONITOR_OPTION,
    LOG_INTERVAL_HELP,
    REPORT_OPTION,
    CaseRequest,
    images_option,
    job_value,
    key_value,
    one_line,
    takes_case_request,
)
from ptsbench.cli.case_run import Reach, hosts_and_targets
from ptsbench.cli.check import gate_options
from ptsbench.cli.drops import drop_options, fail_on_limit, say_case_drops
from ptsbench.cli.metrics import metrics_options
from ptsbench.cli.repeat import repeat_options
from ptsbench.cli.settings import settings_option
from ptsbench.errors import PtsbenchError
from ptsbench.fio.jobs import FIO_MAX_JOBS, IODEPTH_LIMIT, JOBS_LIMIT, MAX_IODEPTH
from ptsbench.fio.opens import MAX_LOG_MSEC
from ptsbench.report.core.terminal import FORMATS
from ptsbench.units import MAX_SECONDS

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ptsbench.cases.plan import Case
    from ptsbench.device.target import Target
    from ptsbench.hosts.hostlist import Host
    from ptsbench.store import RunStore
    from ptsbench.sweep import SweepSpec


def _texts(value: str, option: str) -> tuple[str, ...]:
    """The items of a comma-separated list; an empty one (`4k,,8k`, a trailing comma) is a typo, never dropped."""
    items = tuple(part.strip() for part in value.split(","))
    if not any(items):
        raise PtsbenchError(f"{option} {value!r}: no value", f"give a comma-separated list, e.g. {option} 4k,128k")
    if not all(items):
        raise PtsbenchError(f"{option} {value!r}: item {items.index('') + 1} is empty",
                            f"remove the extra comma, e.g. {option} 4k,128k")
    return items


def _numbers(value: str, option: str, maximum: int, why: str) -> tuple[int, ...]:
    """`1,2,4` or a series `1,2,4,...,256` (continued by the ratio, or else the step, of the two values before the
    dots, up to the last value); every value from 1 to `maximum` (`why`: its reason), checked before a series is filled
    in."""
    items = _texts(value, option)
    numbers: list[int] = []
    for position, item in enumerate(items):
        if item in ("...", ".."):
            if len(numbers) < 2 or position != len(items) - 2:
                raise PtsbenchError(f"{option} {value!r}: '...' needs two values before it and one after it",
                                    f"e.g. {option} 1,2,4,...,256")
            continue
        digits = item.lstrip("0")
        if not (item.isascii() and item.isdigit()) or not digits:
            raise PtsbenchError(f"{option} {value!r}: {item!r} is not a whole number of 1 or more",
                                f"e.g. {option} 1,2,4")
        if len(digits) > len(str(maximum)) or int(digits) > maximum:
            raise PtsbenchError(f"{option} {item[:20]}{'...' if len(item) > 20 else ''} is over {maximum:,}", why)
        numbers.append(int(digits))
    if "..." in items or ".." in items:
        end = numbers.pop()
        first, second = numbers[-2], numbers[-1]
        grow = (lambda n: n * (second // first)) if second % first == 0 and second > first else (
            lambda n: n + (second - first))
        if second <= first:
            raise PtsbenchError(f"{option} {value!r}: a series must grow", f"e.g. {option} 1,2,4,...,256")
        while (following := grow(numbers[-1])) <= end:
            numbers.append(following)
        if numbers[-1] != end:
            numbers.append(end)
    return tuple(numbers)


SPEC_OPTIONS = ("rw", "bs", "iodepth", "numjobs", "rwmixread", "runtime_s", "ramp_time_s", "loops", "size", "direct",
                "ss", "ss_dur_s", "ss_ramp_s", "precondition", "precondition_repeat", "settings")


def _takes_spec(function: Callable[..., Any]) -> Callable[..., Any]:
    """sweep gets its matrix as one checked SweepSpec (`spec`) in place of the options that make it."""

    @functools.wraps(function)
    def wrapper(*, request: CaseRequest, **options: Any) -> Any:
        matrix = {name: options.pop(name) for name in SPEC_OPTIONS}
        return function(request=request, spec=sweep_spec(matrix, request), **options)

    return wrapper


def sweep_spec(options: Mapping[str, Any], request: CaseRequest) -> "SweepSpec":
    """The matrix of sweep's options as click parsed them, checked: rw values fio knows, whole percentages, series
    filled in, a size of something, --loops or --repeat auto (the request's), the spec's own rules."""
    from ptsbench.sweep import RW_CHOICES, SweepSpec, check_spec

    loops, size, rwmixread = options["loops"], options["size"], options["rwmixread"]
    if request.auto is None and request.repeat != 1:
        raise PtsbenchError(f"sweep --repeat {request.repeat}: a sweep repeats its cells with --loops N",
                            "use --loops N, or --repeat auto")
    if request.auto is not None and loops > 1:
        raise PtsbenchError("--repeat auto chooses how often each cell runs: it cannot go with --loops",
                            "give one of them (--repeat-max caps the loops of --repeat auto)")
    rw_values = _texts(options["rw"], "--rw")
    unknown = [value for value in rw_values if value not in RW_CHOICES]
    if unknown:
        raise PtsbenchError(f"--rw {unknown[0]!r} is not a fio rw value", f"use {', '.join(RW_CHOICES)}")
    if rwmixread and not all(v.isdigit() for v in _texts(rwmixread, "--rwmixread")):
        raise PtsbenchError(f"--rwmixread {rwmixread!r}: not whole percentages", "e.g. --rwmixread 70,50")
    if size is not None:
        from ptsbench.units import fio_size_text

        size = fio_size_text(size)
        if size == "0":
            raise PtsbenchError(f"--size {size}: a size of nothing", "give the size fio should use, e.g. --size 4G")
    precondition = options["precondition"]
    if options["precondition_repeat"] and precondition is None:
        raise PtsbenchError("--precondition-repeat needs --precondition FILE", "name the precondition job file")
    spec = SweepSpec(
        rw=rw_values, bs=_texts(options["bs"], "--bs"),
        iodepth=_numbers(options["iodepth"], "--iodepth", MAX_IODEPTH, IODEPTH_LIMIT),
        numjobs=_numbers(options["numjobs"], "--numjobs", FIO_MAX_JOBS, JOBS_LIMIT),
        rwmixread=tuple(int(v) for v in _texts(rwmixread, "--rwmixread")) if rwmixread else (),
        runtime_s=options["runtime_s"], ramp_time_s=options["ramp_time_s"],
        loops=request.repeat if request.auto else loops, size=size, direct=bool(options["direct"]), ss=options["ss"],
        ss_dur_s=options["ss_dur_s"], ss_ramp_s=options["ss_ramp_s"],
        options=tuple(key_value(item) for item in options["settings"]),
        precondition=str(precondition) if precondition else None, precondition_repeat=options["precondition_repeat"],
    )
    check_spec(spec)
    return spec


@click.command()
@gate_options
@metrics_options
@click.argument("targets", nargs=-1, required=True, metavar="TARGET...")
@settings_option
@click.option("--rw", default="randread,randwrite", show_default=True,
              help="fio rw values, comma-separated (read, write, randread, randwrite, rw, randrw, ...).")
@click.option("--bs", default="4k", show_default=True, help="Block sizes, comma-separated.")
@click.option("--iodepth", default="1,2,4,8,16,32,64", show_default=True,
              help="Queue depths, comma-separated; 1,2,...,256 continues the series.")
@click.option("--numjobs", default="1", show_default=True, help="Job counts (threads), comma-separated.")
@click.option("--rwmixread", help="Read shares in percent for mixed rw values (rw, randrw), comma-separated.")
@click.option("--runtime", "runtime_s", type=Seconds(), default=60.0,
              show_default=True, help="Seconds per cell (fio's runtime, time_based).")
@click.option("--ramp-time", "ramp_time_s", type=Finite(0, MAX_SECONDS), help="fio's ramp_time per cell (seconds).")
@click.option("--loops", type=click.IntRange(min=1), default=1, show_default=True,
              help="Run every cell this many times, each stored and drawn on its own.")
@click.option("--size", help="fio size (needed for a file target that does not exist yet), e.g. 4G.")
@click.option("--ioengine", help="fio ioengine (default: io_uring, else libaio, else psync, as the target allows).")
@click.option("--direct", type=click.IntRange(0, 1), default=1, show_default=True, help="fio's direct (0: buffered).")
@click.option("--ss", metavar="CRITERION", help="fio's steady state: end a cell early once reached, e.g. iops:0.3% "
              "or bw_slope:0.1% (fio's ss=).")
@click.option("--ss-dur", "ss_dur_s", type=Seconds(),
              help="Window fio judges steady state over (seconds, fio's ss_dur).")
@click.option("--ss-ramp", "ss_ramp_s", type=Finite(0, MAX_SECONDS),
              help="Seconds before fio starts judging steady state (fio's ss_ramp).")
@click.option("--precondition", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A fio job file run on each target before its cells (its filename becomes the target).")
@click.option("--precondition-repeat", is_flag=True, help="Run the precondition job before every cell.")
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE", help="Any other fio option for every cell.")
@click.option("--out", type=click.Path(path_type=Path), callback=lambda _c, _p, value: text_path(value),
              help="Run directory (default ./ptsbench-results/...).")
@click.option("--format", "output_format", type=click.Choice(FORMATS), default="table",
              help="The cells' results on stdout at the end: table, json or csv.")
@safety_flag("--destructive", help_text="Allow writes to a block device (refused by default).")
@safety_flag("--allow-mounted",
             help_text="With --destructive: allow writes to a device in use (mounted, swap, stacked on, a member of "
             "a mounted filesystem, held open exclusively; see docs/safety.md).")
@click.option("--fio-lat-log", is_flag=True, help="Also have fio write its own latency logs (costs fio a clock "
              "read per IO).")
@click.option("--log-interval", "log_interval_ms", type=click.IntRange(min=1, max=MAX_LOG_MSEC), default=1000,
              show_default=True, help=LOG_INTERVAL_HELP)
@click.option("--dry-run", is_flag=True, help="Print the cell count, the duration and every cell's job file and fio "
              "command; run nothing.")
@click.option("--hosts", "hosts_spec", metavar="HOSTS", help=HOSTS_HELP)
@click.option("--lat-bound", default="1ms", show_default=True, help="The report's headline says at which queue "
              "depth the latency percentile first exceeds this (us, ms or s).")
@click.option("--lat-percentile", default="99", show_default=True, help="The percentile --lat-bound applies to "
              "(also drawn in the latency charts and heatmaps).")
@REPORT_OPTION
@images_option("With --report: ")
@LATENCY_MONITOR_OPTION
@drop_options
@repeat_options[0]
@repeat_options[1]
@repeat_options[2]
@repeat_options[3]
@takes_case_request
@_takes_spec
def sweep(targets: tuple[str, ...], ioengine: str | None, lat_bound: str, lat_percentile: str, request: CaseRequest,
          spec: "SweepSpec") -> Path | None:
    """Sweep targets over a matrix of rw x block size x read mix x numjobs x iodepth; every cell is a fio run
    stored with its job file, command line, json+ and logs. `ptsbench resume RUN_DIR` continues a killed sweep.

    \b
    Examples:
      ptsbench sweep /dev/nvme0n1 --rw randread,randwrite --iodepth 1,2,4,...,256 --numjobs 1,2,4 --destructive
      ptsbench sweep /mnt/test --size 4G --bs 4k,128k --rw randrw --rwmixread 70 --runtime 30 --dry-run
      ptsbench sweep /dev/nvme0n1 /dev/nvme1n1 --rw randwrite --ss iops:0.3% --ss-dur 30 --destructive
      ptsbench resume ptsbench-results/20261124T070000Z-sweep --destructive
    """
    one_line(*targets, what="TARGET")
    one_line(ioengine, what="--ioengine")
    job_value(ioengine, "--ioengine")
    return _start(spec, list(targets), ioengine, _report_settings(lat_bound, lat_percentile), request)


def lat_bound_us(bound: str) -> float:
    """--lat-bound (sweep and plot): a latency with its unit, in µs."""
    from ptsbench.fio.jobs import parse_duration_s

    bound_s = parse_duration_s(bound) if not bound.strip().isdigit() else None
    if bound_s is None or bound_s <= 0:
        raise PtsbenchError(f"--lat-bound {bound!r} is not a duration with a unit", "e.g. --lat-bound 1ms or 500us")
    return bound_s * 1e6


def _report_settings(bound: str, percentile: str) -> dict[str, object]:
    bound_us = lat_bound_us(bound)
    try:
        value = float(percentile)
    except ValueError:
        value = -1.0
    if not 0 < value <= 100:
        raise PtsbenchError(f"--lat-percentile {percentile!r} is not a percentile", "e.g. --lat-percentile 99.9")
    from ptsbench.fio.jobs import PERCENTILES

    if f"{value:g}" not in PERCENTILES:
        raise PtsbenchError(f"--lat-percentile {percentile}: fio is asked for {', '.join(PERCENTILES)} only",
                            "choose one of those")
    return {"latency_bound_us": bound_us, "percentile": f"{value:g}"}


def _start(spec: "SweepSpec", target_paths: list[str], ioengine: str | None, report: dict[str, object],
           request: CaseRequest) -> Path | None:
    from dataclasses import replace

    from ptsbench.cases.plan import resolve_targets
    from ptsbench.device.target import check_free_space
    from ptsbench.fio.runner import probe_engine
    from ptsbench.store import RunStore, default_run_dir
    from ptsbench.sweep import job_texts, plan_cases, plan_entries, write_job_files

    reach = hosts_and_targets(request, target_paths)
    hosts, resolved, dry_run = list(reach.hosts), list(reach.targets), request.dry_run
    if not hosts:
        resolved = resolve_targets(target_paths, spec.size)
        reach = Reach(tuple(resolved))
        empty = next((t for t in resolved if t.kind == "file" and not t.size_bytes and not spec.size), None)
        if empty is not None:
            raise PtsbenchError(f"{empty.path} does not exist yet (or is empty): fio needs a size to make it",
                                "give --size, e.g. --size 4G")
        check_free_space(resolved)
    if ioengine is None:
        if hosts:
            from ptsbench.hosts.preflight import probe_remote_engine

            ioengine = "libaio" if dry_run else probe_remote_engine(hosts, resolved[0])[0]
        else:
            ioengine = probe_engine(resolved[0].path)[0]
    spec = replace(spec, ioengine=ioengine)
    run_dir = request.out or default_run_dir("sweep-" + "-".join(Path(path).name for path in target_paths)[:60])
    fio_lat_log = request.fio_lat_log or bool(hosts)  # fio's client prints no status documents to derive latency from
    entries = plan_entries(spec, len(resolved))
    texts = job_texts(spec)
    cases = plan_cases(entries, texts, resolved, run_dir, request.log_interval_ms, fio_lat_log)
    from ptsbench.cli.case_run import check_writes, dry_run_verdict, say_shortened_times

    say_shortened_times(cases)
    if dry_run:
        _print_dry_run(cases, run_dir, hosts)
        dry_run_verdict(cases, request.permission, hosts)
        return None
    check_writes(cases, request.permission, hosts)
    from ptsbench.cases.schedule import expected_total_s
    from ptsbench.device.info import target_facts
    from ptsbench.device.same_device import start_record

    store = RunStore.create(run_dir.absolute(), {  # absolute job paths: orphan fio processes are found by them
        "kind": "sweep", "name": "sweep", "targets": [asdict(t) if hosts else target_facts(t) for t in resolved],
        "log_interval_ms": request.log_interval_ms, "expected_duration_s": expected_total_s(cases, False),
        "drops": request.drops,
        "sweep": {"spec": asdict(spec), "targets": [asdict(t) for t in resolved],
                  "hosts": [host.label for host in hosts], "fio_lat_log": fio_lat_log, "cases": entries,
                  "report": report, "report_at_end": request.make_report, "report_images": list(request.images)},
        **({"hosts": [asdict(info) for info in reach.host_infos]} if hosts else
           {"device_identities": {t.path: start_record(t.path) for t in resolved if t.kind == "block"}}),
        **(request.auto.as_manifest() if request.auto else {}),
    })
    write_job_files(store.root, texts)
    click.echo(f"ptsbench: run directory {run_dir}", err=True)
    execute(store, cases, hosts, request)
    return store.root


def execute(store: "RunStore", cases: "list[Case]", hosts: "list[Host]", request: CaseRequest) -> None:
    """Run the sweep's unfinished cells with the run directory locked and the targets claimed, print every cell's
    results, and write the report (with --report, and its figures' image files in the --images formats) or say how
    to."""
    from ptsbench.cases.schedule import claim_cases
    from ptsbench.cli.repeat import print_repeat_auto, stored_rule_of
    from ptsbench.cli.run_end import end_report
    from ptsbench.fio.lifetime import stop_orphan_fio
    from ptsbench.pts.store import PtsStore
    from ptsbench.report.core.progress import SweepProgress
    from ptsbench.sweep import finished, run_sweep

    with PtsStore(store).lock(), claim_cases(cases, store.root, request.allow_mounted, hosts):
        stop_orphan_fio(store.root.absolute())
        pending = [case for case in cases if not finished(store, case)]
        store.update_manifest(status="running")
        auto = stored_rule_of(store)
        try:
            with SweepProgress(pending, len(cases) - len(pending)) as progress:  # auto: all, to decide from the done
                records = run_sweep(store, cases if auto else pending, progress, hosts, auto)
        except KeyboardInterrupt:
            store.update_manifest(status="interrupted")
            click.echo(f"ptsbench: finished cells are kept; `ptsbench resume {store.root}` runs the others", err=True)
            raise
        failed = [record.name for record in records if record.status != "ok"]
        store.update_manifest(status="failed" if failed else "done")
    from ptsbench.cases.records import load_records
    from ptsbench.report.cases.tables import result_rows
    from ptsbench.report.core.terminal import print_rows

    stored = load_records(store)
    print_rows(result_rows(stored), request.output_format)
    if request.output_format == "table":
        print_repeat_auto(store)
    from ptsbench.cli.health import say_health

    say_health(stored)  # before the report's line, the run's last
    end_report(store.root, request.make_report, request.images)
    from ptsbench.drops.stored import stored_rule

    broken = say_case_drops(store.root, stored, *stored_rule(store.manifest))
    if failed:
        click.echo(f"ptsbench: error: failed cells: {', '.join(failed)} (see fio.stderr in {store.root}/cases; "
                   f"`ptsbench resume {store.root}` runs them again)", err=True)
        sys.exit(1)
    fail_on_limit(broken)


def resume_sweep(run_dir: Path, destructive: bool, allow_mounted: bool = False) -> None:
    """`ptsbench resume` of a sweep: the stored plan again, only the cells without a finished result."""
    from ptsbench.cli.case_run import check_writes
    from ptsbench.store import RunStore
    from ptsbench.sweep import stored_plan

    store = RunStore.open(run_dir.absolute())
    stored, targets, hosts, cases = stored_plan(store)
    if not hosts:
        check_targets_again(store, targets)
    check_writes(cases, (destructive, allow_mounted), hosts)
    click.echo(f"ptsbench: resuming {run_dir}", err=True)
    execute(store, cases, hosts, CaseRequest(destructive=destructive, allow_mounted=allow_mounted,
                                             make_report=bool(stored.get("report_at_end")),  # as started
                                             images=tuple(str(suffix) for suffix in stored.get("report_images") or ())))


def check_targets_again(store: "RunStore", targets: "Sequence[Target]") -> None:
    """At a resume: no other run holds a target, and each device is the one the run started on, with nothing new on
    it (device/same_device.py; a changed one is refused, a note says what is known)."""
    from ptsbench.device.claim import check_not_claimed
    from ptsbench.device.same_device import check_same_device

    for target in targets:  # first: another run on a target also explains a changed device or signature
        check_not_claimed(target.path)
    recorded = store.manifest.get("device_identities") or {}
    cases_dir = store.root / "cases"
    written = cases_dir.is_dir() and any(entry.is_dir() for entry in cases_dir.iterdir())
    for target in targets:
        if target.kind == "block":
            for note in check_same_device(target.path, recorded.get(target.path), written, store.root):
                click.echo(f"ptsbench: note: {note}", err=True)


def _print_dry_run(cases: "list[Case]", run_dir: Path, hosts: "list[Host]") -> None:
    from ptsbench.cases.schedule import expected_total_s
    from ptsbench.cli.case_run import print_dry_run as print_cases
    from ptsbench.units import format_duration

    total_s = expected_total_s(cases, False)
    expected = format_duration(total_s) if total_s is not None else "unknown"
    click.echo(f"# sweep: {len(cases)} fio runs, {expected} of fio runtime in all (plus fio's start-up, under a "
               "second per run; fio's steady state may end cells sooner)")  # first: what a dry run is asked for
    print_cases(cases, run_dir, total_s, hosts)
