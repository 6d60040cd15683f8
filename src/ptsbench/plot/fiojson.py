"""`ptsbench plot` on fio JSON / json+ output: fio-plot's bar charts (IOPS and latency against queue depth and numjobs,
3D bars, heatmaps, latency histograms, percentile bars) from any fio output files, grouped by what differs between
them, several inputs side by side; written as PNG / SVG and one offline HTML page, with the numbers on the terminal.
"""

import datetime
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ptsbench.errors import PtsbenchError
from ptsbench.report.cases.sweep_charts import ChartOptions, Point, distinct, first_runs, job_points
from ptsbench.report.core.layout import HTML_NAME
from ptsbench.report.core.model import Report, Table

if TYPE_CHECKING:
    from ptsbench.fio.jsonfiles import FoundJob


@dataclass(frozen=True)
class JsonPlotOptions:
    out_dir: Path = Path("ptsbench-plots")
    formats: tuple[str, ...] = ("png",)
    charts: ChartOptions = field(default_factory=ChartOptions)
    labels: tuple[str, ...] = ()  # a name per input (folder or file), else its name
    include_hosts: tuple[str, ...] = ()
    exclude_hosts: tuple[str, ...] = ()
    dpi: int = 100
    latency_bound_us: float = 1000.0
    device: str | None = None


@dataclass(frozen=True)
class JsonPlotResult:
    files: tuple[Path, ...]
    table: Table
    notes: tuple[str, ...]


def read_points(inputs: Sequence[str], options: JsonPlotOptions) -> tuple[list[Point], list[str], str, str]:
    """Points of every fio output found (a source per input when several are given, per host in client/server
    output), notes on files left out, and for the caption the fio version(s) and the devices fio saw (its
    disk_util entries: the disks under the files or the devices the jobs used)."""
    from ptsbench.fio.jsonfiles import document_jobs, find_json_files, load_document

    if options.labels and len(options.labels) != len(inputs):
        raise PtsbenchError(f"{len(options.labels)} --label for {len(inputs)} inputs", "give one --label per input")
    points: list[Point] = []
    notes: list[str] = []
    versions: dict[str, None] = {}
    devices: dict[str, None] = {}
    parents = {Path(raw).resolve().parent for raw in inputs if not Path(raw).is_dir()}
    folders = [raw for raw in inputs if Path(raw).is_dir()]
    for position, raw in enumerate(inputs):
        source = _source(raw, options.labels[position] if options.labels else None, len(folders) + len(parents) > 1)
        other = []
        for path in find_json_files([raw]):
            doc = load_document(path)
            if doc is None:
                other.append(path.name)
                continue
            try:
                points += _document_points(document_jobs(doc, path), options, source,
                                           str(path.relative_to(raw)) if Path(raw).is_dir() else path.name)
            except (AttributeError, KeyError, TypeError, ValueError):  # fio's keys, not its shapes: a damaged file
                other.append(path.name)
                continue
            versions[str(doc.get("fio version", ""))] = None
            devices.update(dict.fromkeys(f"/dev/{disk['name']}" for disk in doc.get("disk_util") or []
                                         if isinstance(disk, dict) and disk.get("name")))
        if other:
            shown = ", ".join(sorted(set(other))[:3]) + (", ..." if len(set(other)) > 3 else "")
            notes.append(f"{raw}: {len(other)} JSON file(s) that are not fio output left out ({shown})")
    if not points:
        raise PtsbenchError(f"no fio results in {', '.join(inputs)}" + ("" if not notes else f" ({notes[0]})"),
                            "pass fio's --output-format=json or json+ output files, or folders holding them")
    points = [replace(p, source=p.source or "-") for p in distinct(points)]
    repeated = len(points) - len(first_runs(points))
    if repeated:
        notes.append(f"{repeated} run(s) repeat an earlier one's workload, queue depth and numjobs with nothing to "
                     "tell them apart (the same job in one file): the table lists every run, the charts the first")
    return points, notes, ", ".join(version for version in versions if version), ", ".join(devices)


def _document_points(jobs: Sequence["FoundJob"], options: JsonPlotOptions, source: str, label: str) -> list[Point]:
    """The points of one fio output's jobs, hosts left out as asked."""
    points: list[Point] = []
    for found in jobs:
        host = found.result.hostname
        if host and (options.include_hosts and host not in options.include_hosts or host in options.exclude_hosts):
            continue
        name = " ".join(part for part in (source, f"on {host}" if host else "") if part)
        points += job_points(found, name, label.removesuffix(".json"))
    return points


def _source(raw: str, label: str | None, several: bool) -> str:
    """What an input is compared as: its --label; else, when the inputs come from several folders, the folder (a
    folder named, or the folder of a file named); else nothing (one source)."""
    if label is not None:
        return label
    if not several:
        return ""
    path = Path(raw).resolve()
    return path.name if path.is_dir() else path.parent.name


def make_json_plots(inputs: Sequence[str], options: JsonPlotOptions) -> JsonPlotResult:
    """Draw the charts of fio JSON output into options.out_dir."""
    from ptsbench import __version__
    from ptsbench.report.cases.sweep import chart_sections, points_table
    from ptsbench.report.core import style
    from ptsbench.report.core.draw_mpl import write_figure_files

    for name in options.formats:
        if name not in ("png", "svg", "html"):
            raise PtsbenchError(f"unknown format {name!r}", "use png, svg or html")
    points, notes, versions, devices = read_points(inputs, options)
    wanted = options.charts.percentile
    if not any(wanted in point.percentiles_ns for point in points):  # else its charts would just leave it out
        known = sorted({pct for point in points for pct in point.percentiles_ns}, key=float)
        notes.append(f"fio reported no p{wanted} in these files, so no chart shows it; "
                     f"--lat-percentile takes one fio reported: {', '.join(known) or 'none'}")
    caption = "From fio's JSON output" + (" (json+ latency bins for the histograms)." if any(p.bins for p in points)
                                          else ".")
    sections = chart_sections(points, options.charts, options.latency_bound_us, caption, key="fio")
    provenance = style.provenance_caption(__version__, versions or None, options.device or devices or None,
                                          datetime.datetime.now(datetime.UTC))
    out_dir = options.out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    figures = [figure for section in sections for figure in section.figures()]
    static = [name for name in options.formats if name != "html"]
    if static:
        for figure in figures:
            written += write_figure_files(figure, out_dir, provenance, options.dpi, static)
    if "html" in options.formats:
        from ptsbench.report.core.html import write_html

        title = options.charts.title or "fio results"
        report = Report(title, provenance, (("inputs", " ".join(inputs)),), tuple(sections))
        write_html(report, out_dir / HTML_NAME, static=False)
        written.append(out_dir / HTML_NAME)
    return JsonPlotResult(tuple(written), points_table(points, shared_once=True), tuple(notes))
