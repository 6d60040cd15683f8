"""`ptsbench run` and `ptsbench quick`: parse options, call the case runner, print the table."""

import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ptsbench.cli import Seconds, safety_flag, text_path
from ptsbench.cli.check import gate_options
from ptsbench.cli.drops import drop_options, drop_settings, fail_on_limit, say_case_drops
from ptsbench.cli.metrics import metrics_options
from ptsbench.cli.repeat import auto_repeat, print_repeat_auto, repeat_options, repeat_rule
from ptsbench.fio.opens import MAX_LOG_MSEC
from ptsbench.report.core.terminal import FORMATS
from ptsbench.units import fio_size_text

if TYPE_CHECKING:
    from ptsbench.case_records import CaseRecord
    from ptsbench.cases import Case, Overrides
    from ptsbench.confidence import RepeatRule
    from ptsbench.hosts.hostlist import Host
    from ptsbench.hosts.preflight import HostInfo
    from ptsbench.report.cases.tables import ResultRow
    from ptsbench.store import RunStore
    from ptsbench.target.target import Target

QUICK_SIZE = "1G"
LOG_INTERVAL_HELP = "Interval of fio's bw/iops/lat logs in milliseconds."
HOSTS_HELP = ("Run on these hosts at once: ssh://[USER@]HOST[:PORT],... (ptsbench starts fio's server there through "
              "SSH) or a file with one per line; tcp://HOST[:PORT] reaches a `ptsbench server --tcp` without "
              "authentication. Target paths are paths on the hosts.")


REPORT_OPTION = click.option(
    "--report", "make_report", is_flag=True,
    help="Also write the report (HTML, PDF, xlsx) at the end; without it, `ptsbench report RUN_DIR` "
         "writes it whenever wanted.")
IMAGES_HELP = ("also write every figure as an image file, figures/KEY.FORMAT, for slides and papers; repeat for both "
               "formats (default: none: index.html, report.pdf and the workbook show every figure).")


def images_option(when: str) -> Callable[[Any], Any]:
    """--images FORMAT (repeatable), the one name for it wherever a report is written; `when` opens its help."""
    from ptsbench.report.core.layout import IMAGE_FORMATS

    return click.option("--images", type=click.Choice(IMAGE_FORMATS), multiple=True, help=f"{when}{IMAGES_HELP}")


def check_images(make_report: bool, images: Sequence[str]) -> None:
    """--images only with --report: the images are the report's."""
    if images and not make_report:
        raise click.UsageError("--images is part of the report: add --report (or later: ptsbench report RUN_DIR "
                               "--images FORMAT)")


def _common_options(function: click.decorators.FC) -> click.decorators.FC:
    decorators = [
        click.option("--format", "output_format", type=click.Choice(FORMATS), default="table",
                     help="Results on stdout: table, json or csv."),
        click.option("--out", type=click.Path(path_type=Path), callback=lambda _c, _p, value: text_path(value),
                     help="Run directory (default ./ptsbench-results/...)."),
        safety_flag("--destructive", help_text="Allow writes to a block device (refused by default)."),
        safety_flag("--allow-mounted", help_text="With --destructive: allow writes to a device in use (mounted, "
                    "swap, stacked on, a member of a mounted filesystem, held open exclusively; see docs/safety.md)."),
        click.option("--fio-lat-log", is_flag=True,
                     help="Also have fio write its own latency logs (costs fio a clock read per IO; without it, "
                          "latency over time is derived per second from fio's status)."),
        click.option("--log-interval", "log_interval_ms", type=click.IntRange(min=1, max=MAX_LOG_MSEC),
                     default=1000, show_default=True, help=LOG_INTERVAL_HELP),
        click.option("--dry-run", is_flag=True, help="Print each case's job file and fio command; run nothing."),
        click.option("--hosts", "hosts_spec", metavar="HOSTS", help=HOSTS_HELP),
        *repeat_options,
        REPORT_OPTION,
        images_option("With --report: "),
        click.option("--keep-files", is_flag=True,
                     help="Keep the data files fio made outside the run directory for this run (without it they "
                          "are removed at the end, and the run says which)."),
        drop_options,
    ]
    for decorator in reversed(decorators):
        function = decorator(function)
    return function


@click.command()
@gate_options
@metrics_options
@click.argument("jobs", nargs=-1, required=True)
@click.option("--target", "targets", multiple=True, help="File, folder or block device (repeatable).")
@click.option("--parallel", is_flag=True,
              help="Run the targets at once, each target's cases one after another (in name order); with one "
                   "target (or none) every case runs in turn. Jobs meant to run at once on one target go in one "
                   "job file.")
@click.option("--runtime", "runtime_s", type=Seconds(),
              help="Seconds per job, or 500ms, 2m, 1h (sets runtime and time_based).")
@click.option("--size", help="fio size for every job, e.g. 1G.")
@click.option("--ioengine", help="fio ioengine for every job.")
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE", help="Any fio option (repeatable).")
@_common_options
def run(jobs: tuple[str, ...], targets: tuple[str, ...], parallel: bool, runtime_s: float | None, size: str | None,
        ioengine: str | None, settings: tuple[str, ...], output_format: str, out: Path | None, destructive: bool,
        allow_mounted: bool, fio_lat_log: bool, log_interval_ms: int, dry_run: bool, hosts_spec: str | None,
        repeat: int | str, repeat_ci_pct: float, repeat_max: int, repeat_max_s: float, make_report: bool,
        images: tuple[str, ...], keep_files: bool, drop_fraction: float, drop_seconds: int,
        min_fraction: float | None) -> Path | None:
    """Run fio job files, or folders of them (every *.fio / *.ini, in name order).

    \b
    Examples:
      ptsbench run randread.fio
      ptsbench run jobs/ --target /dev/nvme0n1 --target /dev/nvme1n1 --parallel --destructive
      ptsbench run mix.fio --target /mnt/test --runtime 30 --size 4G --set iodepth=32 --format json
      ptsbench run jobs/ --dry-run
      ptsbench run randread.fio --target /dev/nvme0n1 --hosts ssh://root@node1,ssh://root@node2 --destructive
    """
    from ptsbench.cases import Overrides, job_files, resolve_targets
    from ptsbench.target.target import check_free_space

    check_images(make_report, images)
    count, rule = repeat_rule(repeat, repeat_ci_pct, repeat_max, repeat_max_s)
    one_line(*jobs, what="JOBS")
    one_line(*targets, what="--target")
    one_line(size, ioengine, what="--size/--ioengine")
    job_value(ioengine, "--ioengine")
    one_line(str(out) if out else None, what="--out")
    size = fio_size_text(size) if size is not None else None
    overrides = Overrides(runtime_s, size, ioengine, tuple(_key_value(item) for item in settings))
    paths = job_files(jobs)
    hosts, infos, resolved = _hosts_and_targets(hosts_spec, list(targets), dry_run)
    if not hosts:
        resolved = resolve_targets(targets, size)
        check_free_space(resolved)
    name = _run_name(jobs, paths)
    return _execute(paths, resolved, overrides, parallel, name, output_format, out, (destructive, allow_mounted),
                    log_interval_ms, dry_run, hosts=hosts, host_infos=infos, fio_lat_log=fio_lat_log,
                    make_report=make_report, images=images,
                    drops=drop_settings(drop_fraction, drop_seconds, min_fraction), repeat=count,
                    keep_files=keep_files, auto=rule)


def _hosts_and_targets(hosts_spec: str | None, targets: list[str], dry_run: bool,
                       ) -> "tuple[list[Host], list[HostInfo], list[Target]]":
    """With --hosts: the hosts, and (unless a dry run) the pre-flight facts and targets as every host resolves them."""
    if hosts_spec is None:
        return [], [], []
    from ptsbench.hosts.hostlist import parse_hosts
    from ptsbench.hosts.preflight import preflight, unchecked_targets

    hosts = parse_hosts(hosts_spec)
    if dry_run:
        return hosts, [], unchecked_targets(targets)
    click.echo(f"ptsbench: pre-flight on {len(hosts)} host(s)", err=True)
    checked = preflight(hosts, targets)
    return hosts, list(checked.hosts), list(checked.targets)


@click.command()
@gate_options
@metrics_options
@click.argument("target", required=False)
@click.option("--runtime", "runtime_s", type=Seconds(), default=5.0, show_default=True,
              help="Seconds per test, or 500ms, 2m, 1h.")
@click.option("--size", help="Test file size (or range on a device)  [default: 1G; needed to make a new file].")
@_common_options
def quick(target: str | None, runtime_s: float, size: str | None, output_format: str, out: Path | None,
          destructive: bool, allow_mounted: bool, fio_lat_log: bool, log_interval_ms: int, dry_run: bool,
          hosts_spec: str | None, repeat: int | str, repeat_ci_pct: float, repeat_max: int, repeat_max_s: float,
          make_report: bool, images: tuple[str, ...], keep_files: bool, drop_fraction: float, drop_seconds: int,
          min_fraction: float | None) -> Path | None:
    """CrystalDiskMark-style preset: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1, read and write.

    Without TARGET, a scratch file in the run directory is used and removed afterwards.

    \b
    Examples:
      ptsbench quick
      ptsbench quick /mnt/data --runtime 10
      ptsbench quick /mnt/data --repeat 3
      ptsbench quick /mnt/data --repeat auto --repeat-ci 2
      ptsbench quick /dev/sdb --destructive --format csv
      ptsbench quick /mnt/data --hosts hosts.txt
    """
    if hosts_spec and target is None:
        raise click.UsageError("quick --hosts needs TARGET: a folder, file or device path that exists on every host")
    check_images(make_report, images)
    count, rule = repeat_rule(repeat, repeat_ci_pct, repeat_max, repeat_max_s)
    one_line(target, what="TARGET")
    one_line(size, what="--size")
    one_line(str(out) if out else None, what="--out")
    size = fio_size_text(size) if size is not None else None
    from ptsbench.store import MANIFEST, check_new_run_dir, default_run_dir

    run_dir = out or default_run_dir("quick")
    if not dry_run:
        check_new_run_dir(run_dir)
    made_dir = not run_dir.exists()
    scratch = target is None
    target_path = str(run_dir / "scratch.dat") if scratch else str(target)
    try:
        return _quick(target, target_path, scratch, runtime_s, size, output_format, run_dir,
                      (destructive, allow_mounted), log_interval_ms, fio_lat_log, dry_run, hosts_spec, make_report,
                      drop_settings(drop_fraction, drop_seconds, min_fraction), count, keep_files, images, rule)
    finally:
        if scratch:
            Path(target_path).unlink(missing_ok=True)
        if not (run_dir / MANIFEST).exists():  # refused before the run began: leave nothing behind, so the same
            if not dry_run:  # --out works once the user fixed the cause (the folder was new or empty: ours)
                (run_dir / "quick.fio").unlink(missing_ok=True)
            if made_dir and run_dir.is_dir() and not any(run_dir.iterdir()):
                run_dir.rmdir()


def _quick(target: str | None, target_path: str, scratch: bool, runtime_s: float, size: str | None,
           output_format: str, run_dir: Path, permission: tuple[bool, bool], log_interval_ms: int,
           fio_lat_log: bool, dry_run: bool, hosts_spec: str | None, make_report: bool,
           drops: dict[str, float | None], repeat: int = 1, keep_files: bool = False,
           images: Sequence[str] = (), auto: "RepeatRule | None" = None) -> Path | None:
    """quick's run after its run directory is chosen: the job file, then the case runner."""
    from ptsbench.atomic import atomic_write_text
    from ptsbench.cases import Overrides, resolve_targets
    from ptsbench.fio.runner import probe_engine
    from ptsbench.quick import quick_job_text
    from ptsbench.target.target import check_free_space

    hosts, infos, resolved = _hosts_and_targets(hosts_spec, [target_path], dry_run)
    if not hosts:
        if scratch:  # the scratch file's folder must exist for it to resolve
            run_dir.mkdir(parents=True, exist_ok=True)
        resolved = resolve_targets([target_path], size or QUICK_SIZE)
        if not scratch and size is None and resolved[0].names_missing_file:
            from ptsbench.errors import TargetError

            raise TargetError(f"{target}: no such file", "give --size to create it (or check the path for a typo)")
        check_free_space(resolved)
        engine, _note = probe_engine(resolved[0].path)
    else:
        from ptsbench.hosts.preflight import probe_remote_engine

        engine, _note = ("libaio", "") if dry_run else probe_remote_engine(hosts, resolved[0])
    job_path = run_dir / "quick.fio"
    if not dry_run:
        run_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(job_path, quick_job_text(runtime_s, size or QUICK_SIZE, engine))
    else:
        job_path = Path(_temporary_job(quick_job_text(runtime_s, size or QUICK_SIZE, engine)))
    try:
        return _execute([job_path], resolved, Overrides(), False, "quick", output_format, run_dir, permission,
                        log_interval_ms, dry_run, hosts=hosts, host_infos=infos, fio_lat_log=fio_lat_log,
                        prepared=(job_path.name,), make_report=make_report, images=images, drops=drops,
                        repeat=repeat, keep_files=keep_files, auto=auto,
                        manifest={"scratch_file": target_path} if scratch else None)
    finally:
        if dry_run:  # the temporary job file of a dry run
            job_path.unlink(missing_ok=True)


def _temporary_job(text: str) -> str:
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".fio", prefix="ptsbench-quick-", delete=False) as handle:
        handle.write(text)
    return handle.name


def one_line(*values: str | None, what: str) -> None:
    """Refuse a value holding a line break or NUL: in a job file it would start a line of its own (an option the
    guard never saw) and in a path it names something else than the user sees."""
    for value in values:
        if value is not None and any(char in value for char in "\n\r\0"):
            raise click.BadParameter(f"{value!r} holds a line break or NUL character; give it on one line",
                                     param_hint=what)
        if value is not None:  # job files, command lines and the store are UTF-8 text: bytes that are not cannot
            text_path(Path(value), what)  # be written into them


def job_value(value: str | None, what: str) -> None:
    """Refuse a value fio would read otherwise than typed in a job file line: a tab or other control character,
    or ';' and '#', where fio cuts the line (--ioengine 'null;x' would run null)."""
    if value is None:
        return
    odd = next((char for char in value if char in ";#" or ord(char) < 32 or ord(char) == 127), None)
    if odd is not None:
        raise click.BadParameter(f"{value!r} holds {odd!r}, which fio reads as job file syntax (';' and '#' start a "
                                 "comment) or not at all; give the value without it", param_hint=what)


def _key_value(item: str) -> tuple[str, str]:
    from ptsbench.fio.opens import misread_value

    one_line(item, what="--set")
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--set")
    # a fio option name: not a [section] header, an include (fio reads any line starting "include" as one) or comment
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key.strip()) or key.strip().startswith("include"):
        raise click.BadParameter(f"{key.strip()!r} is not a fio option name", param_hint="--set")
    job_value(value.strip(), "--set")
    misread = misread_value(key.strip(), value.strip())
    if misread:
        raise click.BadParameter(f"{item!r}: {misread}", param_hint="--set")
    return key.strip(), value.strip()


def _run_name(jobs: Sequence[str], paths: Sequence[Path]) -> str:
    """What the run is called (its folder and its report's title): the job file, the folder, or the first of several
    and how many more."""
    if len(paths) == 1:
        return paths[0].stem
    first = Path(jobs[0]).resolve().name
    return first if len(jobs) == 1 else f"{first}-and-{len(jobs) - 1}-more"


def _execute(paths: list[Path], resolved: "list[Target]", overrides: "Overrides", parallel: bool, name: str,
             output_format: str, out: Path | None, permission: tuple[bool, bool], log_interval_ms: int,
             dry_run: bool, hosts: "Sequence[Host]" = (), host_infos: "Sequence[HostInfo]" = (),
             fio_lat_log: bool = False, prepared: Sequence[str] = (), make_report: bool = False,
             drops: dict[str, float | None] | None = None, repeat: int = 1, keep_files: bool = False,
             images: Sequence[str] = (), stop_when: "Callable[[list[CaseRecord]], bool] | None" = None,
             manifest: "dict[str, Any] | None" = None, auto: "RepeatRule | None" = None) -> Path | None:
    """Run the planned cases into their run directory and return it (None for a dry run). `stop_when`: asked after
    each case (cases in turn), True ends the run there (the manifest then names the cases that ran); `manifest`:
    more fields for it; `auto`: --repeat auto's rule."""
    from ptsbench.cases import (
        claim_cases,
        expected_total_s,
        job_texts,
        manifest_settings,
        plan_cases,
        run_cases,
        target_groups,
    )
    from ptsbench.pts.store import PtsStore
    from ptsbench.store import RunStore, default_run_dir

    run_dir = out or default_run_dir(name)
    texts = job_texts(paths)
    # fio's client prints no status documents to derive latency from: there fio writes its own latency log
    cases = plan_cases(paths, resolved, overrides, run_dir, log_interval_ms, fio_lat_log=fio_lat_log or bool(hosts),
                       repeat=repeat, texts=texts)
    total_s = expected_total_s(cases, parallel, hosts)
    if parallel and not hosts:  # the groups run at once: none may reach another's bytes under another name
        from ptsbench.target.claim import check_distinct

        check_distinct([group[0].target.path for group in target_groups(cases) if group[0].target is not None])
    if parallel and len(target_groups(cases, hosts)) < 2:  # the user may expect the cases to run at once
        click.echo("ptsbench: note: --parallel runs targets at once; these cases share one target and run one "
                   "after another", err=True)
    if dry_run:
        _print_dry_run(cases, run_dir, total_s, hosts)
        dry_run_verdict(cases, permission, hosts)
        return None
    check_writes(cases, permission, hosts)
    from ptsbench.report.core.progress import TerminalProgress
    from ptsbench.target.info import target_facts
    from ptsbench.target.same_device import start_record

    made = [] if hosts else files_fio_makes(cases, run_dir) + folder_test_files(resolved)
    with claim_cases(cases, run_dir, permission[1], hosts), made_files(made, keep_files):  # to the last case's end
        store = RunStore.create(run_dir, {
            "kind": "run", "name": name, "job_files": [str(p) for p in paths],
            "targets": [asdict(t) if hosts else target_facts(t) for t in resolved],
            **manifest_settings(overrides, log_interval_ms, parallel), "repeat": repeat, "expected_duration_s": total_s,
            **(auto.as_manifest() if auto else {}),
            **({"hosts": [asdict(info) for info in host_infos]} if hosts else
               {"device_identities": {t.path: start_record(t.path) for t in resolved if t.kind == "block"}}),
            "cases": [case.dir_name for case in cases], "status": "running", "drops": drops,
            # what `ptsbench resume` plans again from (a run that stops itself early, replay --steady, has none)
            **({} if stop_when else {"resume_plan": resume_plan(
                texts, resolved, overrides, fio_lat_log, hosts, made, keep_files, make_report, images)}),
            **(manifest or {}),
        }, prepared)
        click.echo(f"ptsbench: run directory {run_dir}", err=True)
        with PtsStore(store).lock():
            try:
                with TerminalProgress() as progress:
                    records = run_cases(store, cases, parallel, progress, hosts, stop_when, auto_repeat(store, auto))
                if len(records) < len(cases):  # stopped early, or repetitions the rule left out: the run's cases ran
                    ran = {record.index for record in records}
                    store.update_manifest(cases=[case.dir_name for case in cases if case.index in ran])
            except KeyboardInterrupt:
                store.update_manifest(status="interrupted")
                _finish_interrupted(store, output_format)
                raise
            store.update_manifest(status="done")
    after_run(store, records, output_format, name == "quick", make_report, images)
    return run_dir


def resume_plan(texts: dict[str, str], targets: "Sequence[Target]", overrides: "Overrides", fio_lat_log: bool,
                hosts: "Sequence[Host]", made: Sequence[str], keep_files: bool, make_report: bool,
                images: Sequence[str]) -> dict[str, Any]:
    """What a run stores in its manifest (`resume_plan`) to be planned again by a resume."""
    return {"job_texts": texts, "targets": [asdict(target) for target in targets], "overrides": asdict(overrides),
            "fio_lat_log": fio_lat_log, "hosts": [host.label for host in hosts], "made_files": list(made),
            "keep_files": keep_files, "report_at_end": make_report, "report_images": list(images)}


def after_run(store: "RunStore", records: "list[CaseRecord]", output_format: str, grid: bool, make_report: bool,
              images: Sequence[str]) -> None:
    """The end of a run or quick (or its resume): the results, the report, drops and failures (exit 1)."""
    from ptsbench.drops.stored import stored_rule
    from ptsbench.report.cases.tables import result_rows

    run_dir = store.root
    _finish(store, result_rows(records), output_format, grid=grid, make_report=make_report, images=images)
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
    from ptsbench.target.userfile import missing

    inside = str(run_dir.absolute()) + os.sep
    paths = [os.path.abspath(path) for case in cases if case.target is None for job in case.opens
             if not job.options.get("filename") for path in job.paths]
    return [path for path in missing(paths) if not path.startswith(inside)]


def folder_test_files(resolved: "Sequence[Target]") -> list[str]:
    """The test files fio is about to make in folder targets (DIR/ptsbench-testfile.dat), removed at the end as
    CrystalDiskMark removes its own; one an earlier run left there is used and stays, which the run says."""
    from ptsbench.target.target import TESTFILE_NAME
    from ptsbench.target.userfile import missing

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
        from ptsbench.target.userfile import made_by_ptsbench, remove_made
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
        from ptsbench.case_checks import check_client_files
        from ptsbench.hosts.preflight import check_remote_writes

        check_remote_writes(cases, permission[0], hosts, permission[1])
        check_client_files(cases, [host.name for host in hosts], *permission)
    else:
        from ptsbench.case_checks import check_cases

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


def _finish(store: "RunStore", rows: "list[ResultRow]", output_format: str, grid: bool = False,
            make_report: bool = False, images: Sequence[str] = ()) -> None:
    from ptsbench.report.core.terminal import print_rows

    print_rows(rows, output_format, grid=grid)
    if output_format == "table":
        print_repeat_auto(store)
    from ptsbench.case_records import load_records
    from ptsbench.cli.health import say_health

    say_health(load_records(store))  # before the report's line, the run's last
    end_report(store.root, make_report, images)


def _finish_interrupted(store: "RunStore", output_format: str) -> None:
    """Ctrl-C: print and save what finished (fio's numbers up to the interrupt); the report is left for later."""
    from ptsbench.case_records import load_records
    from ptsbench.report.build import write_report
    from ptsbench.report.cases.tables import result_rows
    from ptsbench.report.core.terminal import print_rows

    print_rows(result_rows(load_records(store)), output_format)
    write_report(store.root, workbook_only=True)
    click.echo(f"ptsbench: results until the interrupt are kept in {store.root}; `ptsbench resume {store.root}` "
               f"runs the cases not finished, `ptsbench report {store.root}` writes a report of these", err=True)


def end_report(run_dir: Path, make_report: bool, images: Sequence[str] = ()) -> None:
    """The end of a case run or sweep, once its results are stored and printed: the report with --report (with its
    figures' image files in the `images` formats; it writes results.xlsx too), else the run's workbook results.xlsx
    and the command that writes the report (the results are all in the run directory; the report is minutes of CPU
    on a big sweep and seconds on any run, which nobody waiting for a number should pay)."""
    import shlex

    from ptsbench.report.build import write_report

    if make_report:
        write_final_report(run_dir, images=images)
    else:
        write_report(run_dir, workbook_only=True)
        click.echo(f"ptsbench: report: ptsbench report {shlex.quote(str(run_dir))}", err=True)


def report_images(store: "RunStore") -> list[str]:
    """The image formats a PTS run's report at its end writes (`pts --images`, kept in its manifest for resume)."""
    return [str(suffix) for suffix in store.manifest.get("report_images") or ()]


def write_final_report(run_dir: Path, after_failure: bool = False, images: Sequence[str] = ()) -> None:
    """The report at the end of every run, written once its results are stored (the figures' image files in the
    `images` formats, none by default). A report that cannot be written (a full disk) is the command's error: one
    line saying how to write it later, and a non-zero exit. After a run that failed anyway (`after_failure`) it is
    a warning, and the run's own error follows."""
    from ptsbench.errors import PtsbenchError
    from ptsbench.report.build import write_report
    from ptsbench.report.core.layout import HTML_NAME

    try:
        click.echo(f"ptsbench: report {write_report(run_dir, images=images) / HTML_NAME}", err=True)
    except PtsbenchError as error:
        if not after_failure:
            raise
        click.echo(f"ptsbench: warning: report not written: {error}", err=True)


def _print_dry_run(cases: "list[Case]", run_dir: Path, total_s: float | None, hosts: "Sequence[Host]" = ()) -> None:
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
