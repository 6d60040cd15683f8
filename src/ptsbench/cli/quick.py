"""`ptsbench quick`: the CrystalDiskMark-style preset (quick.py) on one target or a scratch file, through the case
runner."""


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
    from ptsbench.confidence import RepeatRule
from ptsbench.cli.case_options import case_options, check_images, one_line
from ptsbench.cli.case_run import hosts_and_targets, run_job_files

QUICK_SIZE = "1G"


@click.command()
@gate_options
@metrics_options
@click.argument("target", required=False)
@click.option("--runtime", "runtime_s", type=Seconds(), default=5.0, show_default=True,
              help="Seconds per test, or 500ms, 2m, 1h.")
@click.option("--size", help="Test file size (or range on a device)  [default: 1G; needed to make a new file].")
@case_options
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
    from ptsbench.cases.plan import Overrides, resolve_targets
    from ptsbench.device.target import check_free_space
    from ptsbench.fio.runner import probe_engine
    from ptsbench.quick import quick_job_text

    hosts, infos, resolved = hosts_and_targets(hosts_spec, [target_path], dry_run)
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
        return run_job_files([job_path], resolved, Overrides(), False, "quick", output_format, run_dir, permission,
                        log_interval_ms, dry_run, hosts=hosts, host_infos=infos, fio_lat_log=fio_lat_log,
                        prepared=(job_path.name,), make_report=make_report, images=images, drops=drops,
                        repeat=repeat, keep_files=keep_files, auto=auto)
    finally:
        if dry_run:  # the temporary job file of a dry run
            job_path.unlink(missing_ok=True)


def _temporary_job(text: str) -> str:
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".fio", prefix="ptsbench-quick-", delete=False) as handle:
        handle.write(text)
    return handle.name
