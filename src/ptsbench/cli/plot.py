"""`ptsbench plot LOG|GLOB|DIR ...`: charts and a summary from fio bw, iops, lat, clat, slat and histogram logs."""

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ptsbench.cli import Finite
from ptsbench.cli.settings import settings_option
from ptsbench.errors import PtsbenchError
from ptsbench.report.cases.sweep_charts import CHARTS as CHART_NAMES

if TYPE_CHECKING:
    from ptsbench.plot import PlotOptions
    from ptsbench.plot.fiojson import JsonPlotOptions

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


def json_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """fio-plot's options for charts from fio JSON output."""
    decorators = [
        click.option("--json", "json_mode", is_flag=True, help="Read fio JSON / json+ output files (and folders "
                     "of them) and draw bar charts; implied when every input is a *.json file."),
        click.option("--charts", default=",".join(CHART_NAMES), show_default=True,
                     help="JSON: which charts, comma-separated."),
        click.option("--subtitle", default="", help="JSON: subtitle under every chart title."),
        click.option("--source", "source_line", default="", help="JSON: a source line added to every caption."),
        click.option("--dpi", type=click.IntRange(min=30, max=1200), default=100, show_default=True,
                     help="Resolution of PNG charts."),
        click.option("--line-width", type=click.FloatRange(min=0.1, max=20), help="Logs: line width."),
        click.option("--markers", is_flag=True, help="Logs: a marker at every point."),
        click.option("--min-iops", type=float, help="JSON: lower end of IOPS axes."),
        click.option("--max-iops", type=float, help="JSON: upper end of IOPS axes."),
        click.option("--min-lat", type=float, help="JSON: lower end of latency axes (µs)."),
        click.option("--max-lat", type=float, help="JSON: upper end of latency axes (µs)."),
        click.option("--log-scale", is_flag=True,
                     help="JSON: IOPS, MB/s and latency axes on a log scale (values decades apart stay visible)."),
        click.option("--colors", help="Comma-separated colours (names or #rrggbb) instead of the palette."),
        click.option("--lat-percentile", "--percentile", "percentile", default="99", show_default=True,
                     help="JSON: the latency percentile of the latency charts, heatmaps and headline (as sweep's; "
                          "--percentile is its former name)."),
        click.option("--lat-bound", "--latency-bound", "lat_bound", default="1ms", show_default=True,
                     help="JSON: latency with its unit whose crossing the headline reports, e.g. 'QD at which p99 "
                          "exceeds 1ms' (as sweep's; --latency-bound is its former name)."),
        click.option("--show-data", is_flag=True, help="JSON: the plotted values as a table under every chart."),
        click.option("--include-hosts", help="JSON: only these hosts of client/server output, comma-separated."),
        click.option("--exclude-hosts", help="JSON: every host but these, comma-separated."),
        click.option("--iodepth", "iodepths", help="JSON: only these queue depths, comma-separated."),
        click.option("--numjobs", "numjobs_values", help="JSON: only these numjobs values, comma-separated."),
    ]
    for decorator in reversed(decorators):
        function = decorator(function)
    return settings_option(function)


def _split(text: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (text or "").split(",") if part.strip())


def _whole(text: str | None, option: str) -> tuple[int, ...]:
    parts = _split(text)
    if not all(part.isdigit() for part in parts):
        raise PtsbenchError(f"{option} {text!r}: not whole numbers", f"e.g. {option} 1,8,32")
    return tuple(int(part) for part in parts)


def _json_options(options: Mapping[str, Any]) -> "JsonPlotOptions":
    """fio-plot's options for charts of fio JSON output, checked."""
    from ptsbench.cli.sweep import lat_bound_us
    from ptsbench.plot.fiojson import JsonPlotOptions
    from ptsbench.report.cases.sweep_charts import ChartOptions

    charts = _split(options["charts"])
    unknown = [name for name in charts if name not in CHART_NAMES]
    if unknown:
        raise PtsbenchError(f"--charts {unknown[0]!r} is not a chart", f"use {', '.join(CHART_NAMES)}")
    chart_options = ChartOptions(
        charts=charts, percentile=f"{float(options['percentile']):g}", title=options["title"] or "",
        subtitle=options["subtitle"], source_line=options["source_line"],
        iops_range=(options["min_iops"], options["max_iops"]),
        lat_range_us=(options["min_lat"], options["max_lat"]),
        palette=_split(options["colors"]), data_table=options["show_data"], directions=options["directions"],
        iodepths=_whole(options["iodepths"], "--iodepth"), numjobs=_whole(options["numjobs_values"], "--numjobs"),
        log_scale=options["log_scale"],
    )
    _check_colors(chart_options.palette)
    return JsonPlotOptions(out_dir=options["out_dir"], formats=options["formats"] or ("png",), charts=chart_options,
                           labels=options["labels"], include_hosts=_split(options["include_hosts"]),
                           exclude_hosts=_split(options["exclude_hosts"]), dpi=options["dpi"],
                           latency_bound_us=lat_bound_us(str(options["lat_bound"])), device=options["device"])


def _log_options(options: Mapping[str, Any]) -> "PlotOptions":
    """The options of charts of fio logs, checked."""
    from ptsbench.plot import PlotOptions
    from ptsbench.plot.draw import Look

    colors = _split(options["colors"])
    _check_colors(colors)
    columns = options["columns"]
    return PlotOptions(
        kind=options["kind"], out_dir=options["out_dir"], formats=options["formats"] or ("png",),
        smooth_s=options["smooth_s"], trend=options["trend"], x_axis=options["x_axis"], compare=options["compare"],
        per_job=options["per_job"], interval_ms=options["interval_ms"], job_files=options["job_files"],
        directions=options["directions"], percentiles=_percentiles(options["percentiles"]),
        three_d=options["three_d"], bars=options["bars"], skip_bad_lines=options["skip_bad_lines"],
        title=options["title"], labels=options["labels"], pattern=options["pattern"],
        columns=tuple(part.strip() for part in columns.split(",")) if columns else None, device=options["device"],
        look=Look(options["line_width"], options["markers"], colors, options["dpi"]),
    )


@dataclass(frozen=True)
class PlotRequest:
    """What `plot` is asked, built and checked once from its options: the inputs, and the options of charts of fio
    logs or (every input a *.json file, or --json) of fio-plot's charts of fio JSON output."""

    inputs: tuple[str, ...]
    out_dir: Path  # new, empty or an earlier plot's (outfolder.py)
    logs: "PlotOptions | None"  # charts of fio logs
    json: "JsonPlotOptions | None"  # charts of fio JSON output


def plot_request(options: Mapping[str, Any]) -> PlotRequest:
    """The request of plot's options as click parsed them; the --out folder is judged first, before any input is
    read (a user's files are never written over)."""
    from ptsbench.outfolder import check_own_folder
    from ptsbench.plot.sources import is_json_input

    check_own_folder(options["out_dir"])
    inputs = tuple(options["inputs"])
    if options["json_mode"] or is_json_input(inputs):
        return PlotRequest(inputs, options["out_dir"], None, _json_options(options))
    return PlotRequest(inputs, options["out_dir"], _log_options(options), None)


def _takes_request(function: Callable[..., Any]) -> Callable[..., Any]:
    """plot gets its PlotRequest, built and checked from every option, in their place."""

    @functools.wraps(function)
    def wrapper(**options: Any) -> Any:
        return function(plot_request(options))

    return wrapper


def _plot_json(inputs: tuple[str, ...], options: "JsonPlotOptions") -> None:
    """fio-plot's charts of fio JSON output, their table on stdout and the files written."""
    from ptsbench.plot.fiojson import make_json_plots

    result = make_json_plots(inputs, options)
    for note in result.notes:
        click.echo(f"ptsbench: note: {note}", err=True)
    from dataclasses import replace

    from ptsbench.report.core.terminal import print_model_table, terminal_console

    shown = [index for index, column in enumerate(result.table.columns) if column.name.split(" ")[-2:-1] not in
             (["p50"], ["p90"], ["p95"], ["p99.999"]) and "CPU" not in column.name]  # all of them: --format html
    table = replace(result.table, columns=tuple(result.table.columns[index] for index in shown),
                    rows=tuple(tuple(row[index] for index in shown) for row in result.table.rows),
                    keys=tuple(shown.index(key) for key in result.table.keys if key in shown))
    console = terminal_console()  # too wide for the terminal: printed in parts, numbers whole
    print_model_table(table, console)
    for path in result.files:
        console.print(f"wrote {path}", highlight=False, soft_wrap=True)  # a path is never broken


def _check_colors(colors: tuple[str, ...]) -> None:
    if not colors:
        return
    from matplotlib.colors import is_color_like

    bad = [color for color in colors if not is_color_like(color)]
    if bad:
        raise PtsbenchError(f"--colors {bad[0]!r} is not a colour", "use names (teal) or #rrggbb")


@click.command()
@click.argument("inputs", nargs=-1, required=True, metavar="LOG|GLOB|DIR...")
@click.option("--kind", type=click.Choice(KINDS), help="Only logs of this kind (also names the kind of files "
              "whose name does not say it).")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=Path("ptsbench-plots"),
              show_default=True, help="Folder for the charts and summary.csv: new, empty or an earlier plot's (never "
              "over other files).")
@click.option("--format", "formats", type=click.Choice(("png", "svg", "html")), multiple=True,
              help="Chart format; repeat for several (default png). html is one offline file with plotly.js inside.")
@click.option("--smooth", "smooth_s", type=Finite(), metavar="SECONDS", help="Also draw the mean over this window.")
@click.option("--trend", is_flag=True, help="Also draw the least-squares trend line.")
@click.option("--x", "x_axis", type=click.Choice(("time", "written")), default="time", show_default=True,
              help="x axis: time, or data written so far (SLC cache exhaustion).")
@click.option("--compare", is_flag=True, help="All runs on one chart per kind (their totals unless --dir).")
@click.option("--per-job", is_flag=True, help="Keep per-job logs (_bw.1.log, _bw.2.log) apart instead of merging.")
@click.option("--interval", "interval_ms", type=Finite(), metavar="MS",
              help="Interval for merging jobs, per-IO rates and histogram percentiles (default: the job's "
              "log_avg_msec / log_hist_msec, else read off the logs' time stamps).")
@click.option("--job", "job_files", type=click.Path(path_type=Path), multiple=True, metavar="FILE",
              help="The fio job file or fio JSON output the logs came from, for the interval the job asked for "
              "(default: found beside the logs); repeat for several.")
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
@json_options
@_takes_request
def plot(request: PlotRequest) -> None:
    """Draw fio logs: time series per run (raw, --smooth, --trend), runs compared, per-job logs merged by time,
    histogram percentiles over time, a 3D view across runs, and a summary table (also in summary.csv).

    Given fio JSON or json+ output files (or --json and folders of them; from ptsbench, plain fio or fio's
    client/server mode), draws fio-plot's bar charts instead: IOPS and latency against queue depth and numjobs,
    QD x numjobs 3D bars and heatmaps, latency histograms and percentile bars, several inputs side by side.

    \b
    Examples:
      ptsbench plot results/                          # every fio log in the folder
      ptsbench plot 'run*_bw.*.log' --compare --smooth 5 --format html
      ptsbench plot test_lat.log --kind lat --x written
      ptsbench plot jobs_clat_hist.*.log --percentiles 50,99,99.9
      ptsbench plot 'mix*_iops.log' --3d
      ptsbench plot qd*.json --format png --format html --show-data --max-lat 2000
      ptsbench plot --json ssd-a/ ssd-b/ --label A --label B --settings team-style.toml
      ptsbench plot clients.json --exclude-hosts node3 --dir read
    """
    from ptsbench.outfolder import own_folder

    if request.json is not None:
        with own_folder(request.out_dir):
            _plot_json(request.inputs, request.json)
        return
    from ptsbench.plot import make_plots, summary_notes, summary_rows

    assert request.logs is not None  # a request holds the one or the other
    with own_folder(request.out_dir):
        result = make_plots(request.inputs, request.logs)
    for note in result.notes:
        click.echo(f"ptsbench: note: {note}", err=True)
    from ptsbench.report.core.model import Column, Table
    from ptsbench.report.core.terminal import print_model_table, terminal_console

    headers, rows = summary_rows(result.summaries)
    table = Table("summary", "Summary of the values drawn",
                  tuple(Column(header, "text" if header in ("run", "kind", "dir") else "number")
                        for header in headers), tuple(tuple(row) for row in rows), keys=(0, 1, 2))
    console = terminal_console()  # too wide for the terminal: printed in parts, numbers whole
    print_model_table(table, console)
    for note in (*summary_notes(result.summaries), *result.intervals):
        console.print(f"note: {note}", highlight=False)
    for path in result.files:
        console.print(f"wrote {path}", highlight=False, soft_wrap=True)  # a path is never broken
