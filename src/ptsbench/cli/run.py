"""`ptsbench run`: fio job files (or folders of them) against targets, through the case runner."""

from collections.abc import Sequence
from pathlib import Path

import click

from ptsbench.cli import Seconds
from ptsbench.cli.case_options import CaseRequest, case_options, job_value, key_value, one_line
from ptsbench.cli.case_run import JobsRequest, Reach, hosts_and_targets, run_job_files
from ptsbench.cli.check import gate_options
from ptsbench.cli.metrics import metrics_options
from ptsbench.units import fio_size_text


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
        ioengine: str | None, settings: tuple[str, ...], request: CaseRequest) -> Path | None:
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

    one_line(*jobs, what="JOBS")
    one_line(*targets, what="--target")
    one_line(size, ioengine, what="--size/--ioengine")
    job_value(ioengine, "--ioengine")
    size = fio_size_text(size) if size is not None else None
    overrides = Overrides(runtime_s, size, ioengine, tuple(key_value(item) for item in settings))
    paths = job_files(jobs)
    reach = hosts_and_targets(request, targets)
    if not reach.hosts:
        reach = Reach(tuple(resolve_targets(targets, size)))
        check_free_space(reach.targets)
    return run_job_files(JobsRequest(tuple(paths), _run_name(jobs, paths), overrides, parallel), request, reach)


def _run_name(jobs: Sequence[str], paths: Sequence[Path]) -> str:
    """What the run is called (its folder and its report's title): the job file, the folder, or the first of several
    and how many more."""
    if len(paths) == 1:
        return paths[0].stem
    first = Path(jobs[0]).resolve().name
    return first if len(jobs) == 1 else f"{first}-and-{len(jobs) - 1}-more"
