"""The end of every run once its results are stored: the report (--report), or the workbook and the command that
writes the report."""

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from ptsbench.store import RunStore


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
