"""fio log analysis figures: what `ptsbench plot` draws from bw, iops, lat, clat, slat and histogram logs.

sources finds the runs, fio.logs reads them, series turns them into traces, reduce keeps every spike at screen
resolution, charts builds the figures and draw renders them (PNG/SVG with matplotlib, HTML with plotly).
"""

import csv
import datetime
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ptsbench.errors import PtsbenchError
from ptsbench.fio.log_jobs import JobOptions
from ptsbench.fio.logs import FioLog, HistLog, read_hist_log, read_log
from ptsbench.plot import charts
from ptsbench.plot.draw import FORMATS, ChartWriter, Look
from ptsbench.plot.series import HistRun, Run, Summary, build_hist_run, build_run, summarize, summarize_hist
from ptsbench.plot.sources import RunFiles, find_runs
from ptsbench.report.core.figure import Figure

DIRECTIONS = ("read", "write", "trim", "total")


@dataclass(frozen=True)
class PlotOptions:
    kind: str | None = None  # bw, iops, lat, clat, slat or hist; None: every fio log found
    out_dir: Path = Path("ptsbench-plots")
    formats: tuple[str, ...] = ("png",)
    smooth_s: float | None = None
    trend: bool = False
    x_axis: str = "time"  # time or written
    compare: bool = False
    per_job: bool = False  # keep per-job logs apart instead of merging them
    interval_ms: float | None = None  # merge / rate / histogram interval; None: the job's, else from the logs
    job_files: tuple[Path, ...] = ()  # fio job files or JSON output the logs came from; none: found beside them
    directions: tuple[str, ...] = ()  # read, write, trim, total; empty: all
    percentiles: tuple[float, ...] = (50.0, 99.0, 99.9)
    three_d: bool = False
    bars: bool = False  # 3D view as bars instead of a surface
    skip_bad_lines: bool = False
    title: str | None = None
    labels: tuple[str, ...] = ()
    pattern: str | None = None  # regular expression the file names must match
    columns: tuple[str, ...] | None = None  # column names when they cannot be told from the values
    device: str | None = None  # for the caption, when the logs do not come from a ptsbench run
    look: Look = Look()  # line width, markers, colours, dpi


@dataclass(frozen=True)
class PlotResult:
    files: tuple[Path, ...]
    summaries: tuple[Summary, ...]
    notes: tuple[str, ...]  # files left out, bad lines skipped
    intervals: tuple[str, ...] = ()  # 'RUN, RUN: interval 250 ms, from the job's log_avg_msec (PATH)'


def make_plots(inputs: Sequence[str], options: PlotOptions) -> PlotResult:
    """Read the logs, draw the charts, write them and a summary.csv into options.out_dir."""
    _check(options, FORMATS)
    writer = ChartWriter(options.out_dir, options.formats, options.look)
    found = find_runs(inputs, options.kind, options.pattern, options.per_job, options.labels)
    notes = list(found.left_out)
    line_options = charts.LineOptions(options.smooth_s, options.trend, options.x_axis == "written",
                                      options.directions)
    written: list[Path] = []
    summaries: list[Summary] = []
    value_runs: list[Run] = []
    hist_runs: list[HistRun] = []
    keep_all = options.compare or options.three_d
    intervals: dict[str, list[str]] = {}  # where each interval came from -> the runs it is of

    def write(chart: Figure) -> list[Path]:
        """The chart's files; none for a chart whose every line holds one or two values (an almost empty plot of a
        log of a second or two), which a note names instead."""
        if chart.says_little():
            most = chart.most_values()
            notes.append(f"{chart.title}: not charted, at most {most} value{'s' if most > 1 else ''} per line, too "
                         "few to show a course (the summary holds them)")
            return []
        return writer.write(chart)

    for run in _read_runs(found.runs, options, notes):
        provenance = provenance_of(run.paths, options.device)
        if run.interval:
            intervals.setdefault(run.interval, []).append(f"{run.label} {run.kind if isinstance(run, Run) else 'hist'}")
        if isinstance(run, Run):
            summaries.extend(_drawn(summarize(run), options.directions))
            if keep_all:
                value_runs.append(run)
            else:
                chart = charts.run_chart(run, line_options, provenance, _safe(f"{run.label}_{run.kind}"))
                written += write(chart)
        else:
            summaries.extend(_drawn(summarize_hist(run), options.directions))
            if keep_all:
                hist_runs.append(run)
            else:
                written += write(charts.hist_chart([run], options.directions, provenance,
                                                          _safe(f"{run.label}_hist"), options.title))
    if keep_all:
        every = [path for run in value_runs for path in run.paths] + [p for run in hist_runs for p in run.paths]
        provenance = provenance_of(tuple(every), options.device)
        if options.three_d:
            if hist_runs or not value_runs:
                raise PtsbenchError("the 3D view needs bw or iops logs", "choose them with --kind bw|iops")
            chart = charts.surface_chart(value_runs, options.bars, provenance, f"3d_{value_runs[0].kind}",
                                         options.title)
            written += write(chart)
        else:
            for kind in dict.fromkeys(run.kind for run in value_runs):
                same = [run for run in value_runs if run.kind == kind]
                written += write(charts.compare_chart(same, line_options, provenance, f"compare_{kind}",
                                                             options.title))
            if hist_runs:
                written += write(charts.hist_chart(hist_runs, options.directions, provenance,
                                                          "compare_hist", options.title))
    written.append(write_summary_csv(summaries, options.out_dir / "summary.csv"))
    return PlotResult(tuple(written), tuple(summaries), tuple(notes),
                      tuple(f"{', '.join(runs)}: {said}" for said, runs in intervals.items()))


def _drawn(rows: Sequence[Summary], directions: Sequence[str]) -> list[Summary]:
    """The summary rows of the directions drawn (--dir; every direction without it)."""
    return [row for row in rows if not directions or row.direction in directions]


def _check(options: PlotOptions, formats: Sequence[str]) -> None:
    for name in options.formats:
        if name not in formats:
            raise PtsbenchError(f"unknown format {name!r}", f"use {', '.join(formats)}")
    for direction in options.directions:
        if direction not in DIRECTIONS:
            raise PtsbenchError(f"unknown direction {direction!r}", f"use {', '.join(DIRECTIONS)}")
    if options.x_axis not in ("time", "written"):
        raise PtsbenchError(f"unknown x axis {options.x_axis!r}", "use time or written")
    if options.smooth_s is not None and options.smooth_s <= 0:
        raise PtsbenchError("--smooth must be a positive number of seconds", "e.g. --smooth 5")
    if options.interval_ms is not None and options.interval_ms <= 0:
        raise PtsbenchError("--interval must be a positive number of milliseconds", "e.g. --interval 1000")


def _read_runs(runs: Sequence[RunFiles], options: PlotOptions, notes: list[str]) -> Iterator[Run | HistRun]:
    """Read each run's logs and turn them into traces (or histogram percentiles), one run at a time; without
    --interval, at the interval their job asked for (looked up only for logs of intervals: a per-IO log has none)."""
    jobs = JobOptions(options.job_files)
    for files in runs:
        kind, paths, label = files.kind, files.paths, files.label
        if kind == "hist":
            hist_logs = [read_hist_log(path, options.skip_bad_lines) for path in paths]
            notes.extend(_skip_notes(hist_logs))
            hist_job = jobs.asked(paths[0], kind)  # --interval wins over its interval; its IO counts still serve
            yield build_hist_run(hist_logs, label, options.percentiles, options.interval_ms, hist_job)
        else:
            logs = [read_log(path, kind, options.columns, options.skip_bad_lines) for path in paths]
            notes.extend(_skip_notes(logs))
            windowed = all(log.windowed for log in logs)
            asked = jobs.asked(paths[0], kind) if options.interval_ms is None and kind and windowed else None
            yield build_run(logs, label, options.interval_ms, options.x_axis == "written", asked)


def _skip_notes(logs: Sequence[FioLog] | Sequence[HistLog]) -> list[str]:
    found = []
    for log in logs:
        if log.skipped_count:
            shown = ", ".join(str(number) for number in log.skipped_lines[:5])
            more = ", ..." if log.skipped_count > 5 else ""
            found.append(f"{log.path}: skipped {log.skipped_count} bad line(s) (line {shown}{more})")
    return found


def _safe(text: str) -> str:
    return "".join(char if char.isalnum() or char in "._-@" else "-" for char in text).strip("-") or "plot"


def provenance_of(paths: Sequence[Path], device: str | None = None) -> str:
    """'ptsbench X, fio Y, device, date': from the ptsbench run the logs belong to, else what is known."""
    from ptsbench import __version__
    from ptsbench.report.core import style

    for folder in list(Path(paths[0]).resolve().parents)[:5]:
        manifest_path = folder / "manifest.json"
        if manifest_path.is_file():
            try:
                manifest = json.loads(manifest_path.read_text())
            except (OSError, ValueError):
                break
            if device:
                manifest = {**manifest, "targets": [{"model": device}]}
            return style.provenance(manifest)
    written = datetime.datetime.fromtimestamp(os.stat(paths[0]).st_mtime, datetime.UTC)
    version, disks = _fio_output_beside(Path(paths[0]))
    return style.provenance_caption(__version__, version, device or disks, written)


def _fio_output_beside(log: Path) -> tuple[str | None, str | None]:
    """The fio version and the disks fio saw (its disk_util), from fio's JSON output in the logs' folder."""
    from ptsbench.errors import PtsbenchError
    from ptsbench.fio.jsonfiles import load_document

    for path in sorted(log.resolve().parent.glob("*.json")):
        try:
            doc = load_document(path)
        except PtsbenchError:
            continue
        if doc and doc.get("fio version"):
            disks = [f"/dev/{disk['name']}" for disk in doc.get("disk_util") or []
                     if isinstance(disk, dict) and disk.get("name")]
            return str(doc["fio version"]), ", ".join(disks) or None
    return None, None


def write_summary_csv(summaries: Sequence[Summary], path: Path) -> Path:
    """One row per run and direction: count and what it counts (IOs, intervals, window means), what its percentiles
    are of (percentiles_of; empty, and the percentile columns too, for window mean latencies), min, mean, max,
    stddev, percentiles, in base units."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    percentiles = [p for p, _ in summaries[0].percentiles] if summaries else []
    try:
        with open(partial, "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["run", "kind", "direction", "unit", "count", "over", "percentiles_of", "min", "mean",
                             "max", "stddev", *(f"p{p:g}" for p in percentiles)])
            for row in summaries:
                shown = [] if _of_interval_means(row) else [repr(value) for _, value in row.percentiles]
                writer.writerow([row.run, row.kind, row.direction, row.unit, row.count, row.over,
                                 _percentiles_of(row), repr(row.min), repr(row.mean), repr(row.max), repr(row.stddev),
                                 *shown, *([""] * (len(percentiles) - len(shown)))])
        os.replace(partial, path)
    finally:  # a failed write (a full disk) leaves no partial file behind
        partial.unlink(missing_ok=True)
    return path


def summary_rows(summaries: Sequence[Summary]) -> tuple[list[str], list[list[str]]]:
    """The summary as table cells for people, a row on one line of 80 columns: named by run, kind (with its unit, on
    one line) and direction, its count saying what it counts (IOs, windows, intervals; summary_notes says how long),
    then min, mean, max, stddev and percentiles. Every row of a kind in one unit (that of the kind's largest mean),
    so a column never switches between µs and ms from row to row."""
    from ptsbench.report.core import style

    percentiles = [p for p, _ in summaries[0].percentiles] if summaries else []
    headers = ["run", "kind", "dir", "count", "min", "mean", "max", "stddev", *(f"p{p:g}" for p in percentiles)]
    largest: dict[str, float] = {}
    for row in summaries:
        family = row.kind if row.kind in ("bw", "iops") else "lat"
        largest[family] = max(largest.get(family, 0.0), abs(row.mean))
    rows = []
    for row in summaries:
        if row.kind == "bw":  # the unit suits the largest mean; the extremes show more or fewer digits
            divisor, unit = style.rate_unit(largest["bw"])
        elif row.kind == "iops":
            divisor, prefix = style.count_unit(largest["iops"])
            unit = f"{prefix}IOPS"
        else:
            divisor, unit = style.ns_unit(largest["lat"])
        numbers = [row.min, row.mean, row.max, row.stddev]
        shown = [] if _of_interval_means(row) else [value for _, value in row.percentiles]
        rows.append([row.run, unit if row.kind == "iops" else f"{row.kind}\N{NO-BREAK SPACE}({unit})", row.direction,
                     f"{row.count:,} {_counted(row)}", *(_number(value / divisor) for value in numbers),
                     *(_number(value / divisor) for value in shown), *([""] * (len(percentiles) - len(shown)))])
    return headers, rows


def _counted(row: Summary) -> str:
    """What a summary row counts, in a word: IOs, or the windows or intervals its values are of."""
    word = "IO" if row.over.startswith("IOs") else "window" if "window" in row.over.split(";")[0] else "interval"
    return word if row.count == 1 else f"{word}s"


def _percentiles_of(row: Summary) -> str:
    """What a summary row's percentile columns are percentiles of: IOs (per-IO logs, histograms), the windows'
    or intervals' rates, or nothing (window mean latencies: a percentile of means is no IO's percentile)."""
    if _of_interval_means(row):
        return ""
    return "IOs" if row.over.startswith("IOs") else "the windows' values"


def _of_interval_means(row: Summary) -> bool:
    """Latency values that are each a window's or interval's mean (log_avg_msec), not one IO's."""
    return row.kind in ("lat", "clat", "slat") and row.over != "IOs"


def summary_notes(summaries: Sequence[Summary]) -> list[str]:
    """What the summary table's reader needs to know to take its numbers as they are: what the windows and intervals
    counted are (their length, those left out), and that averaged latencies have no percentiles."""
    notes = []
    described: dict[str, list[str]] = {}
    for row in summaries:
        if row.over != "IOs":
            names = described.setdefault(row.over, [])
            if f"{row.run} {row.kind}" not in names:
                names.append(f"{row.run} {row.kind}")
    notes += [f"{', '.join(names)}: {over}" for over, names in described.items()]
    if any(_of_interval_means(row) for row in summaries):
        notes.append("latency logs averaged over windows (log_avg_msec): min, mean and max are of the windows' mean "
                     "latencies, not of IOs, and their percentiles are left empty; per-IO percentiles need per-IO "
                     "logs (no log_avg_msec) or histogram logs (write_hist_log)")
    return notes


def _number(value: float) -> str:
    size = abs(value)
    return f"{value:,.0f}" if size >= 100 else f"{value:.1f}" if size >= 10 else f"{value:.2f}"
