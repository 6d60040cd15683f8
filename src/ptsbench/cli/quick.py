"""`ptsbench quick`: the CrystalDiskMark-style preset (quick.py) on one target or a scratch file, through the case
runner."""

from pathlib import Path

import click

from ptsbench.cli import Seconds
from ptsbench.cli.case_options import CaseRequest, case_options, one_line
from ptsbench.cli.case_run import JobsRequest, Reach, hosts_and_targets, run_job_files
from ptsbench.cli.check import gate_options
from ptsbench.cli.metrics import metrics_options
from ptsbench.units import fio_size_text

QUICK_SIZE = "1G"


@click.command()
@gate_options
@metrics_options
@click.argument("target", required=False)
@click.option("--runtime", "runtime_s", type=Seconds(), default=5.0, show_default=True,
              help="Seconds per test, or 500ms, 2m, 1h.")
@click.option("--size", help="Test file size (or range on a device)  [default: 1G; needed to make a new file].")
@case_options
def quick(target: str | None, runtime_s: float, size: str | None, request: CaseRequest) -> Path | None:
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
    if request.hosts_spec and target is None:
        raise click.UsageError("quick --hosts needs TARGET: a folder, file or device path that exists on every host")
    one_line(target, what="TARGET")
    one_line(size, what="--size")
    size = fio_size_text(size) if size is not None else None
    from ptsbench.store import MANIFEST, check_new_run_dir, default_run_dir

    run_dir = request.out or default_run_dir("quick")
    if not request.dry_run:
        check_new_run_dir(run_dir)
    made_dir = not run_dir.exists()
    scratch = None if target is not None else str(run_dir / "scratch.dat")
    try:
        return _quick(target or scratch or "", scratch is not None, runtime_s, size, run_dir, request)
    finally:
        if scratch is not None:
            Path(scratch).unlink(missing_ok=True)
        if not (run_dir / MANIFEST).exists():  # refused before the run began: leave nothing behind, so the same
            if not request.dry_run:  # --out works once the user fixed the cause (the folder was new or empty: ours)
                (run_dir / "quick.fio").unlink(missing_ok=True)
            if made_dir and run_dir.is_dir() and not any(run_dir.iterdir()):
                run_dir.rmdir()


def _quick(target_path: str, scratch: bool, runtime_s: float, size: str | None, run_dir: Path,
           request: CaseRequest) -> Path | None:
    """quick's run after its run directory is chosen: the job file, then the case runner."""
    from dataclasses import replace

    from ptsbench.atomic import atomic_write_text
    from ptsbench.cases.plan import Overrides, resolve_targets
    from ptsbench.device.target import check_free_space
    from ptsbench.fio.runner import probe_engine
    from ptsbench.quick import quick_job_text

    reach = hosts_and_targets(request, [target_path])
    if not reach.hosts:
        if scratch:  # the scratch file's folder must exist for it to resolve
            run_dir.mkdir(parents=True, exist_ok=True)
        reach = Reach(tuple(resolve_targets([target_path], size or QUICK_SIZE)))
        if not scratch and size is None and reach.targets[0].names_missing_file:
            from ptsbench.errors import TargetError

            raise TargetError(f"{target_path}: no such file", "give --size to create it (or check the path for a "
                              "typo)")
        check_free_space(reach.targets)
        engine, _note = probe_engine(reach.targets[0].path)
    else:
        from ptsbench.hosts.preflight import probe_remote_engine

        engine, _note = ("libaio", "") if request.dry_run else probe_remote_engine(list(reach.hosts), reach.targets[0])
    job_path = run_dir / "quick.fio"
    if not request.dry_run:
        run_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(job_path, quick_job_text(runtime_s, size or QUICK_SIZE, engine))
    else:
        job_path = Path(_temporary_job(quick_job_text(runtime_s, size or QUICK_SIZE, engine)))
    try:
        return run_job_files(JobsRequest((job_path,), "quick", Overrides(), prepared=(job_path.name,)),
                             replace(request, out=run_dir), reach,
                             manifest={"scratch_file": target_path} if scratch else None)
    finally:
        if request.dry_run:  # the temporary job file of a dry run
            job_path.unlink(missing_ok=True)


def _temporary_job(text: str) -> str:
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".fio", prefix="ptsbench-quick-", delete=False) as handle:
        handle.write(text)
    return handle.name
