"""`ptsbench run`: fio job files (or folders of them) against targets, through the case runner."""


from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ptsbench.cli import Seconds
from ptsbench.cli.check import gate_options
from ptsbench.cli.drops import drop_settings
from ptsbench.cli.metrics import metrics_options
from ptsbench.cli.repeat import repeat_rule
from ptsbench.units import fio_size_text

if TYPE_CHECKING:
    pass
from ptsbench.cli.case_options import case_options, check_images, job_value, key_value, one_line
from ptsbench.cli.case_run import hosts_and_targets, run_job_files


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
@case_options
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
    from ptsbench.cases.plan import Overrides, job_files, resolve_targets
    from ptsbench.device.target import check_free_space

    check_images(make_report, images)
    count, rule = repeat_rule(repeat, repeat_ci_pct, repeat_max, repeat_max_s)
    one_line(*jobs, what="JOBS")
    one_line(*targets, what="--target")
    one_line(size, ioengine, what="--size/--ioengine")
    job_value(ioengine, "--ioengine")
    one_line(str(out) if out else None, what="--out")
    size = fio_size_text(size) if size is not None else None
    overrides = Overrides(runtime_s, size, ioengine, tuple(key_value(item) for item in settings))
    paths = job_files(jobs)
    hosts, infos, resolved = hosts_and_targets(hosts_spec, list(targets), dry_run)
    if not hosts:
        resolved = resolve_targets(targets, size)
        check_free_space(resolved)
    name = _run_name(jobs, paths)
    return run_job_files(paths, resolved, overrides, parallel, name, output_format, out, (destructive, allow_mounted),
                    log_interval_ms, dry_run, hosts=hosts, host_infos=infos, fio_lat_log=fio_lat_log,
                    make_report=make_report, images=images,
                    drops=drop_settings(drop_fraction, drop_seconds, min_fraction), repeat=count,
                    keep_files=keep_files, auto=rule)


def _run_name(jobs: Sequence[str], paths: Sequence[Path]) -> str:
    """What the run is called (its folder and its report's title): the job file, the folder, or the first of several
    and how many more."""
    if len(paths) == 1:
        return paths[0].stem
    first = Path(jobs[0]).resolve().name
    return first if len(jobs) == 1 else f"{first}-and-{len(jobs) - 1}-more"
