"""Planned cases run for run, quick and replay (and the parts sweep shares): hosts and targets resolved, the
guard before any IO, the dry run, the run directory, the data files fio made, the results printed at the end."""

import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ptsbench.cli.case_options import CaseRequest
from ptsbench.cli.drops import fail_on_limit, say_case_drops
from ptsbench.cli.repeat import auto_repeat, print_repeat_auto
from ptsbench.cli.run_end import end_report

if TYPE_CHECKING:
    from ptsbench.cases.plan import Case, Overrides
    from ptsbench.cases.records import CaseRecord
    from ptsbench.device.target import Target
    from ptsbench.hosts.hostlist import Host
    from ptsbench.hosts.preflight import HostInfo
    from ptsbench.report.cases.tables import ResultRow
    from ptsbench.store import RunStore


@dataclass(frozen=True)
class Reach:
    """Where cases run: their targets (as this machine resolves them, or every host) and the hosts (none: here)."""

    targets: "tuple[Target, ...]"
    hosts: "tuple[Host, ...]" = ()
    host_infos: "tuple[HostInfo, ...]" = ()  # each host's pre-flight facts (none in a dry run)


@dataclass(frozen=True)
class JobsRequest:
    """Job files to run as cases: run's files with its options; quick's and replay's one job file."""

    paths: tuple[Path, ...]
    name: str  # the run's name: its folder's and its report's
    overrides: "Overrides"  # what every job is changed in
    parallel: bool = False  # the targets at once
    prepared: tuple[str, ...] = ()  # files the command wrote into the run directory before it (quick.fio, a trace)


def hosts_and_targets(request: CaseRequest, targets: Sequence[str]) -> Reach:
    """With --hosts: the hosts, and (unless a dry run) the pre-flight facts and targets as every host resolves them;
    without, nothing yet (the command resolves its targets here)."""
    if request.hosts_spec is None:
        return Reach(())
    from ptsbench.hosts.hostlist import parse_hosts
    from ptsbench.hosts.preflight import preflight, unchecked_targets

    hosts = tuple(parse_hosts(request.hosts_spec))
    if request.dry_run:
        return Reach(tuple(unchecked_targets(list(targets))), hosts)
    click.echo(f"ptsbench: pre-flight on {len(hosts)} host(s)", err=True)
    checked = preflight(list(hosts), list(targets))
    return Reach(tuple(checked.targets), hosts, tuple(checked.hosts))


def run_job_files(jobs: JobsRequest, request: CaseRequest, reach: Reach,
                  manifest: "dict[str, Any] | None" = None) -> Path | None:
    """Run the planned cases into their run directory and return it (None for a dry run). `manifest`: more fields
    for it."""
    from ptsbench.cases.plan import job_texts, manifest_settings, plan_cases
    from ptsbench.cases.schedule import claim_cases, expected_total_s, run_cases, target_groups
    from ptsbench.pts.store import PtsStore
    from ptsbench.store import RunStore, default_run_dir

    hosts, parallel = list(reach.hosts), jobs.parallel
    run_dir = request.out or default_run_dir(jobs.name)
    texts = job_texts(jobs.paths)
    # fio's client prints no status documents to derive latency from: there fio writes its own latency log
    cases = plan_cases(jobs.paths, reach.targets, jobs.overrides, run_dir, request.log_interval_ms,
                       fio_lat_log=request.fio_lat_log or bool(hosts), repeat=request.repeat, texts=texts)
    say_shortened_times(cases)
    total_s = expected_total_s(cases, parallel, hosts)
    if parallel and not hosts:  # the groups run at once: none may reach another's bytes under another name
        from ptsbench.device.claim import check_distinct

        check_distinct([group[0].target.path for group in target_groups(cases) if group[0].target is not None])
    if parallel and len(target_groups(cases, hosts)) < 2:  # the user may expect the cases to run at once
        click.echo("ptsbench: note: --parallel runs targets at once; these cases share one target and run one "
                   "after another", err=True)
    if request.dry_run:
        print_dry_run(cases, run_dir, total_s, hosts)
        dry_run_verdict(cases, request.permission, hosts)
        return None
    check_writes(cases, request.permission, hosts)
    from ptsbench.device.info import target_facts
    from ptsbench.device.same_device import start_record
    from ptsbench.report.core.progress import TerminalProgress

    made = [] if hosts else files_fio_makes(cases, run_dir) + folder_test_files(reach.targets)
    with claim_cases(cases, run_dir, request.allow_mounted, hosts), made_files(made, request.keep_files):
        store = RunStore.create(run_dir, {  # the claim and the made files: to the last case's end
            "kind": "run", "name": jobs.name, "job_files": [str(p) for p in jobs.paths],
            "targets": [asdict(t) if hosts else target_facts(t) for t in reach.targets],
            **manifest_settings(jobs.overrides, request.log_interval_ms, parallel), "repeat": request.repeat,
            "expected_duration_s": total_s, **(request.auto.as_manifest() if request.auto else {}),
            **({"hosts": [asdict(info) for info in reach.host_infos]} if hosts else
               {"device_identities": {t.path: start_record(t.path) for t in reach.targets if t.kind == "block"}}),
            "cases": [case.dir_name for case in cases], "status": "running", "drops": request.drops,
            # what `ptsbench resume` plans again from
            "resume_plan": resume_plan(texts, reach.targets, jobs.overrides, request, list(hosts), made),
            **(manifest or {}),
        }, jobs.prepared)
        click.echo(f"ptsbench: run directory {run_dir}", err=True)
        with PtsStore(store).lock():
            try:
                with TerminalProgress() as progress:
                    records = run_cases(store, cases, parallel, progress, hosts, auto_repeat(store, request.auto))
                if len(records) < len(cases):  # repetitions the rule left out: the run's cases ran
                    ran = {record.index for record in records}
                    store.update_manifest(cases=[case.dir_name for case in cases if case.index in ran])
            except KeyboardInterrupt:
                store.update_manifest(status="interrupted")
                finish_interrupted(store, request.output_format)
                raise
            store.update_manifest(status="done")
    after_run(store, records, request, grid=jobs.name == "quick")
    return run_dir


def say_shortened_times(cases: "Sequence[Case]") -> None:
    """A note for each time option fio reads as other than its job file says (runtime=1.5 runs for 1 s): once for
    all the jobs it concerns (a sweep's cells share their options)."""
    jobs_of: dict[str, list[str]] = {}
    for case in cases:
        for job, said in case.shortened_times():
            jobs_of.setdefault(said, []).append(job)
    for said, named in jobs_of.items():
        more = f" and {len(named) - 1} more job(s)" if len(named) > 1 else ""
        click.echo(f"ptsbench: note: {named[0]}{more}: {said}", err=True)


def resume_plan(texts: dict[str, str], targets: "Sequence[Target]", overrides: "Overrides", request: CaseRequest,
                hosts: "Sequence[Host]", made: Sequence[str]) -> dict[str, Any]:
    """What a run stores in its manifest (`resume_plan`) to be planned again by a resume (cli/resume_run.py)."""
    return {"job_texts": texts, "targets": [asdict(target) for target in targets], "overrides": asdict(overrides),
            "fio_lat_log": request.fio_lat_log, "hosts": [host.label for host in hosts], "made_files": list(made),
            "keep_files": request.keep_files, "report_at_end": request.make_report,
            "report_images": list(request.images)}


def after_run(store: "RunStore", records: "list[CaseRecord]", request: CaseRequest, grid: bool) -> None:
    """The end of a run or quick (or its resume): the results, the report, drops and failures (exit 1)."""
    from ptsbench.drops.stored import stored_rule
    from ptsbench.report.cases.tables import result_rows

    run_dir = store.root
    finish(store, result_rows(records), request, grid=grid)
    broken = say_case_drops(store.root, records, *stored_rule(store.manifest))
    if any(record.status != "ok" for record in records):
        failed = [record for record in records if record.status != "ok"]
        for record in failed:  # why, in ptsbench's words or fio's (its whole output: fio.stderr)
            click.echo(f"ptsbench: {record.name} {record.status}: {record.message or 'fio did not say why'}", err=True)
        click.echo(f"ptsbench: error: failed cases: {', '.join(record.name for record in failed)} (see the table and "
                   f"fio.stderr in {run_dir})", err=True)
        sys.exit(1)
    fail_on_limit(broken)


def files_fio_makes(cases: "list[Case]", run_dir: Path) -> list[str]:
    """The data files fio names itself (JOB.N.0, in the current folder or the job's `directory`) for jobs that name
    no file and have no --target, which do not exist yet and lie outside the run directory. A file the user named
    (a --target, a job's `filename`) stays, to be used again."""
    from ptsbench.device.userfile import missing

    inside = str(run_dir.absolute()) + os.sep
    paths = [os.path.abspath(path) for case in cases if case.target is None for job in case.opens
             if not job.options.get("filename") for path in job.paths]
    return [path for path in missing(paths) if not path.startswith(inside)]


def folder_test_files(resolved: "Sequence[Target]") -> list[str]:
    """The test files fio is about to make in folder targets (DIR/ptsbench-testfile.dat), removed at the end as
    CrystalDiskMark removes its own; one an earlier run left there is used and stays, which the run says."""
    from ptsbench.device.target import TESTFILE_NAME
    from ptsbench.device.userfile import missing

    named = [target.path for target in resolved if os.path.basename(target.path) == TESTFILE_NAME]
    new = missing(named)
    for path in named:
        if path not in new:
            click.echo(f"ptsbench: note: {path} was left by an earlier run; it is used and stays (remove it when "
                       "done)", err=True)
    return new


@contextmanager
def made_files(paths: list[str], keep: bool) -> Iterator[None]:
    """At the end of the run, however it ends, say where fio made data files and remove them unless `keep`."""
    try:
        yield
    finally:
        from ptsbench.device.userfile import made_by_ptsbench, remove_made
        from ptsbench.units import format_bytes

        ours = [path for path in paths if os.path.isfile(path) and made_by_ptsbench(path)]
        if ours:
            shown = ", ".join(ours[:3]) + (f" and {len(ours) - 3} more" if len(ours) > 3 else "")
            if keep:
                click.echo(f"ptsbench: fio made {len(ours)} data file(s) for this run, kept (--keep-files): {shown}",
                           err=True)
            else:
                size_bytes = sum(size for _path, size in remove_made(ours))
                click.echo(f"ptsbench: fio made {len(ours)} data file(s) for this run ({format_bytes(size_bytes)}): "
                           f"{shown}; removed (--keep-files keeps them)", err=True)


def check_writes(cases: "list[Case]", permission: tuple[bool, bool], hosts: "Sequence[Host]") -> None:
    """The destructive-write guard on every file the cases' jobs open, before any IO."""
    if hosts:
        from ptsbench.cases.checks import check_client_files
        from ptsbench.hosts.preflight import check_remote_writes

        check_remote_writes(cases, permission[0], hosts, permission[1])
        check_client_files(cases, [host.name for host in hosts], *permission)
    else:
        from ptsbench.cases.checks import check_cases

        check_cases(cases, *permission)


def dry_run_verdict(cases: "list[Case]", permission: tuple[bool, bool], hosts: "Sequence[Host]") -> None:
    """Say whether fio's parser takes every job and whether the guard would let the real run start; raise (a
    non-zero exit) when not."""
    from ptsbench.errors import JobFileError, PtsbenchError

    rejected = [case for case in cases if case.rejected]
    for case in rejected:
        click.echo(f"# fio rejects case {case.index}: {case.rejected}")
    try:
        check_writes(cases, permission, hosts)
    except PtsbenchError as error:
        click.echo(f"# guard: the real run would be refused: {error}")
        raise
    unjudged = {path for case in cases for job in case.opens if job.unknown for path in job.paths}
    written = sorted({path for case in cases for path, write in case.opened() if write} - unjudged)
    click.echo("# guard: the real run would start" + (f"; it writes {', '.join(written)}" if written else ""))
    for reason in dict.fromkeys(reason for case in cases for reason in case.unknown_writes()):
        click.echo(f"# guard: {reason} (allowed by --destructive --allow-mounted)")
    if rejected:
        raise JobFileError(rejected[0].rejected, "fix the job file")


def finish(store: "RunStore", rows: "list[ResultRow]", request: CaseRequest, grid: bool = False) -> None:
    """The results on stdout, the drive-health lines, then the report (or the command that writes it)."""
    from ptsbench.report.core.terminal import print_rows

    print_rows(rows, request.output_format, grid=grid)
    if request.output_format == "table":
        print_repeat_auto(store)
    from ptsbench.cases.records import load_records
    from ptsbench.cli.health import say_health

    say_health(load_records(store))  # before the report's line, the run's last
    end_report(store.root, request.make_report, request.images)


def finish_interrupted(store: "RunStore", output_format: str) -> None:
    """Ctrl-C: print and save what finished (fio's numbers up to the interrupt); the report is left for later."""
    from ptsbench.cases.records import load_records
    from ptsbench.report.build import write_report
    from ptsbench.report.cases.tables import result_rows
    from ptsbench.report.core.terminal import print_rows

    print_rows(result_rows(load_records(store)), output_format)
    write_report(store.root, workbook_only=True)
    click.echo(f"ptsbench: results until the interrupt are kept in {store.root}; `ptsbench resume {store.root}` "
               f"runs the cases not finished, `ptsbench report {store.root}` writes a report of these", err=True)


def print_dry_run(cases: "list[Case]", run_dir: Path, total_s: float | None, hosts: "Sequence[Host]" = ()) -> None:
    from ptsbench.fio.runner import fio_command, shell_line
    from ptsbench.units import format_duration

    expected = format_duration(total_s) if total_s is not None else "unknown (a job is size-based, not time-based)"
    click.echo(f"# {len(cases)} case(s), expected duration {expected}")  # first, as `pts --dry-run` does
    client = str(run_dir / "hosts.list") if hosts else None
    if hosts:
        click.echo(f"# hosts ({client}): {', '.join(host.label for host in hosts)}")
        click.echo("# pre-flight and, for quick, the ioengine probe run on the hosts when the run starts")
    for case in cases:
        job_path = run_dir / "cases" / case.dir_name / "job.fio"
        click.echo(f"# case {case.index}: {case.name} ({case.source})")
        click.echo(f"# fio command: {shell_line(fio_command(job_path, client=client))}")
        click.echo(f"# job file {job_path}:")
        click.echo(case.job_text)
