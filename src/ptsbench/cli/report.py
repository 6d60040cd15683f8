"""`ptsbench report RUN_DIR` and `ptsbench compare RUN_DIR RUN_DIR [...]`: write reports from stored runs."""

from pathlib import Path

import click

from ptsbench.cli import text_path
from ptsbench.cli.case_options import images_option

NO_STATIC_HELP = "Only index.html and the workbook (skip report.pdf)."


def check_static(no_static: bool, images: tuple[str, ...]) -> None:
    """--images with --no-static: the images are part of the static report."""
    if images and no_static:
        raise click.UsageError("--images writes the static report's figures: leave out --no-static (or --images)")


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--no-static", is_flag=True, help=NO_STATIC_HELP)
@images_option("")
@click.option("--dpi", type=click.IntRange(50, 600), default=200, show_default=True,
              help="Resolution of the PNG images (9 x 5 inches: 200 dpi is 1800 x 1000 pixels).")
def report(run_dir: Path, no_static: bool, images: tuple[str, ...], dpi: int) -> None:
    """Write RUN_DIR/report/: index.html (self-contained, opens offline, every chart interactive) and report.pdf
    (every figure and table), and the run's workbook RUN_DIR/results.xlsx; with --images, every figure as an image
    file in figures/ too (an earlier report's images there are removed). Reads the run directory only (no fio, no
    device). A fleet run: every device's report, in RUN_DIR/devices/NAME/report/.

    \b
    Examples:
      ptsbench report ptsbench-results/20261120T101500Z-quick
      ptsbench report ptsbench-results/20261120T101500Z-pts --images png --images svg
      ptsbench report ptsbench-results/20261120T101500Z-pts --no-static
    """
    from ptsbench.pts.fleet import fleet_parts, open_fleet
    from ptsbench.report.build import build_report
    from ptsbench.report.core.layout import HTML_NAME

    check_static(no_static, images)
    fleet = open_fleet(run_dir)
    for _name, part in fleet_parts(fleet) if fleet is not None else []:  # a fleet: every device's own report
        written = build_report(part, static=not no_static, dpi=dpi, images=images)
        click.echo(f"ptsbench: report written to {written / HTML_NAME}", err=True)
    out_dir = build_report(run_dir, static=not no_static, dpi=dpi, images=images)
    click.echo(f"ptsbench: report written to {out_dir / HTML_NAME}", err=True)


@click.command()
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), callback=lambda _c, _p, value: text_path(value),
              help="Report folder (default ./ptsbench-results/compare-<time>).")
@click.option("--label", "labels", multiple=True, help="Name of each run in the report, in order (repeatable).")
@click.option("--no-static", is_flag=True, help=NO_STATIC_HELP)
@images_option("")
@click.option("--outlier-k", type=click.FloatRange(min=0, min_open=True), default=3.0, show_default=True,
              help="Name a run an outlier on a value when it is more than K x the median absolute deviation from "
                   "the median (and more than its own noise).")
def compare(run_dirs: tuple[Path, ...], out: Path | None, labels: tuple[str, ...], no_static: bool,
            images: tuple[str, ...], outlier_k: float) -> None:
    """Put several runs side by side in one report. It opens with one table of every run's tracked values (PTS:
    at steady state), their median, min and max, and the outliers named; then overlaid plots, and tables with each
    run's value and its ratio to the first run ('within noise' where the difference is not larger than the noise).

    \b
    Examples:
      ptsbench compare results/nvme0-pts results/nvme1-pts --out cmp-nvme
      ptsbench compare run-a run-b run-c --label "fw 1.0" --label "fw 1.1" --label "fw 1.2"
      ptsbench compare ptsbench-results/drive-* --outlier-k 2.5
    """
    from ptsbench.report.build import build_compare, load_compare
    from ptsbench.report.core.layout import HTML_NAME
    from ptsbench.store import default_run_dir

    if len(run_dirs) < 2:
        raise click.UsageError("compare needs at least two run directories")
    check_static(no_static, images)
    if labels and len(labels) != len(run_dirs):
        raise click.UsageError(f"{len(labels)} --label for {len(run_dirs)} run directories: give one per run")
    from ptsbench.report.compare import glance_by_value
    from ptsbench.report.core.terminal import print_model_tables

    compared = load_compare(list(run_dirs), list(labels) or None, outlier_k)
    out_dir = build_compare(list(run_dirs), out or default_run_dir("compare"), list(labels) or None,
                            static=not no_static, report=compared, outlier_k=outlier_k, images=images)
    print_model_tables(*glance_by_value(compared))
    click.echo(f"ptsbench: comparison written to {out_dir / HTML_NAME}", err=True)
