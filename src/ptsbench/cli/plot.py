"""`ptsbench plot LOG|GLOB|DIR ...`: charts and a summary from fio bw, iops, lat, clat, slat and histogram logs."""

from pathlib import Path

import click

from ptsbench.errors import PtsbenchError

KINDS = ("bw", "iops", "lat", "clat", "slat", "hist")
DIRECTIONS = ("read", "write", "trim", "total")


def _percentiles(text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(part) for part in text.replace(":", ",").split(",") if part.strip())
    except ValueError:
        values = ()
    if not values or not all(0 < value <= 100 for value in values):
        raise PtsbenchError(f"--percentiles {text!r}: not a list of percentiles", "e.g. --percentiles 50,99,99.9")
    return values


@click.command()
@click.argument("inputs", nargs=-1, required=True, metavar="LOG|GLOB|DIR...")
@click.option("--kind", type=click.Choice(KINDS), help="Only logs of this kind (also names the kind of files "
              "whose name does not say it).")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=Path("ptsbench-plots"),
              show_default=True, help="Folder for the charts and summary.csv.")
@click.option("--format", "formats", type=click.Choice(("png", "svg", "html")), multiple=True,
              help="Chart format; repeat for several (default png). html is one offline file with plotly.js inside.")
@click.option("--smooth", "smooth_s", type=float, metavar="SECONDS", help="Also draw the mean over this window.")
@click.option("--trend", is_flag=True, help="Also draw the least-squares trend line.")
@click.option("--x", "x_axis", type=click.Choice(("time", "written")), default="time", show_default=True,
              help="x axis: time, or data written so far (SLC cache exhaustion).")
@click.option("--compare", is_flag=True, help="All runs on one chart per kind (their totals unless --dir).")
@click.option("--per-job", is_flag=True, help="Keep per-job logs (_bw.1.log, _bw.2.log) apart instead of merging.")
@click.option("--interval", "interval_ms", type=float, metavar="MS",
              help="Interval for merging jobs, per-IO rates and histogram percentiles (default: from the logs).")
@click.option("--dir", "directions", type=click.Choice(DIRECTIONS), multiple=True,
              help="Directions to draw; repeat for several (default: all and their total).")
@click.option("--percentiles", default="50,99,99.9", show_default=True, help="Percentile lines of histogram logs.")
@click.option("--3d", "three_d", is_flag=True, help="3D view of many runs: mean IOPS or MB/s over block size and "
              "read/write mix (fio2gnuplot).")
@click.option("--bars", is_flag=True, help="Draw the 3D view as bars instead of a surface.")
@click.option("--skip-bad-lines", is_flag=True, help="Use the readable lines of damaged logs (and say which).")
@click.option("-t", "--title", help="Chart title.")
@click.option("--label", "labels", multiple=True, help="A run's name in legends and file names; one per run.")
@click.option("-p", "--pattern", help="Regular expression the log file names must match.")
@click.option("--columns", help="Column names of logs whose layout cannot be told from the values, e.g. "
              "time_ms,value,ddir,bs_bytes,offset_bytes,prio.")
@click.option("--device", help="Device name for the caption (ptsbench runs name it themselves).")
def plot(inputs: tuple[str, ...], kind: str | None, out_dir: Path, formats: tuple[str, ...], smooth_s: float | None,
         trend: bool, x_axis: str, compare: bool, per_job: bool, interval_ms: float | None,
         directions: tuple[str, ...], percentiles: str, three_d: bool, bars: bool, skip_bad_lines: bool,
         title: str | None, labels: tuple[str, ...], pattern: str | None, columns: str | None,
         device: str | None) -> None:
    """Draw fio logs: time series per run (raw, --smooth, --trend), runs compared, per-job logs merged by time,
    histogram percentiles over time, a 3D view across runs, and a summary table (also in summary.csv).

    \b
    Examples:
      ptsbench plot results/                          # every fio log in the folder
      ptsbench plot 'run*_bw.*.log' --compare --smooth 5 --format html
      ptsbench plot test_lat.log --kind lat --x written
      ptsbench plot jobs_clat_hist.*.log --percentiles 50,99,99.9
      ptsbench plot 'mix*_iops.log' --3d
    """
    from ptsbench.plot import PlotOptions, make_plots, summary_rows

    options = PlotOptions(
        kind=kind, out_dir=out_dir, formats=formats or ("png",), smooth_s=smooth_s, trend=trend, x_axis=x_axis,
        compare=compare, per_job=per_job, interval_ms=interval_ms, directions=directions,
        percentiles=_percentiles(percentiles), three_d=three_d, bars=bars, skip_bad_lines=skip_bad_lines,
        title=title, labels=labels, pattern=pattern,
        columns=tuple(part.strip() for part in columns.split(",")) if columns else None, device=device,
    )
    result = make_plots(inputs, options)
    for note in result.notes:
        click.echo(f"ptsbench: note: {note}", err=True)
    from rich.console import Console
    from rich.table import Table

    headers, rows = summary_rows(result.summaries)
    table = Table(title="Summary of the values drawn", header_style="bold")
    for index, header in enumerate(headers):
        table.add_column(header, justify="right" if index >= 4 else "left")
    for row in rows:
        table.add_row(*row)
    console = Console()
    if not console.is_terminal:
        console = Console(width=200)  # piped: no need to squeeze the table into 80 columns
    console.print(table)
    for path in result.files:
        console.print(f"wrote {path}", highlight=False)
