"""Charts from runs: a run's directions over time (or over data written), several runs compared, histogram
percentiles over time, and the 3D view of many runs over block size and read/write mix."""

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ptsbench.errors import PtsbenchError
from ptsbench.plot.draw import PLOT_COLUMNS
from ptsbench.plot.reduce import linear_trend, minmax_per_column, window_mean
from ptsbench.plot.series import HistRun, Run, Trace
from ptsbench.report.core import style
from ptsbench.report.core.figure import Figure, Grid, Series
from ptsbench.units import format_bs

DIRECTION_COLORS = {"read": style.PALETTE[0], "write": style.PALETTE[1], "trim": style.PALETTE[2],
                    "total": style.BLACK}
DIRECTION_DASHES = {"total": "solid", "read": "dash", "write": "dot", "trim": "dash"}
PERCENTILE_DASHES = style.DASHES
QUANTITIES = {"bw": "Bandwidth", "iops": "IOPS", "lat": "Total latency", "clat": "Completion latency",
              "slat": "Submission latency", "hist": "Completion latency"}


@dataclass(frozen=True)
class LineOptions:
    smooth_s: float | None = None  # also draw the mean over this many seconds
    trend: bool = False  # also draw the least-squares line
    x_written: bool = False  # x axis: data written instead of time
    directions: tuple[str, ...] = ()  # empty: every direction the run has, and the total


def value_axis(kind: str, largest: float) -> tuple[float, str]:
    """(divisor, axis label) for a kind's values in base units (bytes/s, IO/s, ns)."""
    if kind == "bw":
        divisor, unit = style.rate_unit(largest)
    elif kind == "iops":
        divisor, prefix = style.count_unit(largest)
        unit = {"k": "thousands", "M": "millions"}.get(prefix, "")
    else:
        divisor, unit = style.ns_unit(largest)
    return divisor, style.axis_label(QUANTITIES[kind], unit)


def _x_axis(traces: Sequence[Trace], written: bool) -> tuple[float, str]:
    if not written:
        return 1.0, style.axis_label("Time", "s")
    largest = max((float(t.written_bytes[-1]) for t in traces if t.written_bytes is not None and len(t.value)),
                  default=0.0)
    divisor, unit = style.bytes_unit(largest)
    return divisor, style.axis_label("Data written", unit)


def _largest(traces: Sequence[Trace]) -> float:
    return max((float(np.nanmax(t.value)) for t in traces if len(t.value)), default=1.0)


def _chosen(run: Run, directions: tuple[str, ...], default: tuple[str, ...] = ()) -> list[Trace]:
    wanted = directions or default
    traces = [t for t in run.traces if not wanted or t.direction in wanted]
    if not traces:
        why = "averaged latency logs have no read+write total (no IO counts to weight them); " \
            if "total" in wanted and run.kind not in ("bw", "iops") else ""
        raise PtsbenchError(f"{run.label}: no {'/'.join(wanted)} values in its logs",
                            f"{why}choose from {', '.join(t.direction for t in run.traces)} with --dir")
    return traces


def _caption(note: str, provenance: str, names: Sequence[str]) -> str:
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return f"{note}. {provenance}. Logs: {shown}."


def _trace_lines(trace: Trace, name: str, color: str, dash: str, options: LineOptions, x_divisor: float,
                 y_divisor: float, unit: str) -> list[Series]:
    """The raw values (min and max per pixel column), and the smoothed and trend lines when asked."""
    if not len(trace.value):
        return []
    # the points as they are (per-IO times in ms), scaled only once reduced to pixel columns
    raw_x, x_scale = trace.time, trace.time_unit_s
    if options.x_written:
        if trace.written_bytes is None:
            raise PtsbenchError(f"{name}: the data written is not known", "use --x time")
        raw_x, x_scale = trace.written_bytes, 1.0
    opacity = 0.45 if options.smooth_s else 1.0
    reduced = minmax_per_column(raw_x, trace.value, PLOT_COLUMNS)
    if reduced is None:
        lines = [Series(name, np.asarray(raw_x, np.float64) * (x_scale / x_divisor),
                        np.asarray(trace.value, np.float64) / y_divisor, "lines", dash, color, width=1.0,
                        opacity=opacity)]
    else:
        middle, low, high = reduced
        lines = [Series(f"{name} (min-max per pixel)", middle * (x_scale / x_divisor), high / y_divisor, "band", dash,
                        color, opacity=opacity, low=low / y_divisor)]
    if not options.smooth_s and not options.trend:
        return lines
    x = raw_x if options.x_written else trace.time_s
    if options.smooth_s:
        at = np.linspace(float(trace.time_s[0]), float(trace.time_s[-1]), PLOT_COLUMNS)
        smooth = window_mean(trace.time_s, trace.value, at, options.smooth_s)
        smooth_x = np.interp(at, trace.time_s, x) if options.x_written else at
        lines.append(Series(f"{name}, mean over {options.smooth_s:g} s", smooth_x / x_divisor, smooth / y_divisor,
                            "lines", dash, color, width=2.2))
    if options.trend:
        slope, intercept = linear_trend(x, trace.value)
        ends = np.array([float(x[0]), float(x[-1])])
        per = "GB written" if options.x_written else "s"
        rate = slope / y_divisor * (1e9 if options.x_written else 1.0)
        lines.append(Series(f"{name} trend ({rate:+.3g} {unit} per {per})", ends / x_divisor,
                            (slope * ends + intercept) / y_divisor, "lines", "dot", color, width=1.8))
    return lines


def _unit_of(label: str) -> str:
    match = re.search(r"\(([^)]*)\)$", label)
    return match.group(1) if match else ""


def run_chart(run: Run, options: LineOptions, provenance: str, key: str) -> Figure:
    """One run: the total (drawn first, behind) and each direction."""
    traces = sorted(_chosen(run, options.directions), key=lambda trace: trace.direction != "total")
    y_divisor, y_label = value_axis(run.kind, _largest(traces))
    x_divisor, x_label = _x_axis(traces, options.x_written)
    lines = [line for trace in traces
             for line in _trace_lines(trace, trace.direction, DIRECTION_COLORS.get(trace.direction, style.GREY),
                                      "solid", options, x_divisor, y_divisor, _unit_of(y_label))]
    return Figure(key, f"{run.label}: {QUANTITIES[run.kind].lower()}", x_label, y_label, tuple(lines),
                  caption=_caption(run.note, provenance, [p.name for p in run.paths]), y_range=(0, None))


def compare_chart(runs: Sequence[Run], options: LineOptions, provenance: str, key: str, title: str | None) -> Figure:
    """Several runs of one kind on one chart (by default their totals)."""
    kind = runs[0].kind
    picked = [(index, run, trace) for index, run in enumerate(runs)
              for trace in _chosen(run, options.directions, default=("total",) if run.trace("total") else ())]
    traces = [trace for _, _, trace in picked]
    y_divisor, y_label = value_axis(kind, _largest(traces))
    x_divisor, x_label = _x_axis(traces, options.x_written)
    lines = [line for index, run, trace in picked
             for line in _trace_lines(trace, f"{run.label} {trace.direction}", style.color(index),
                                      DIRECTION_DASHES.get(trace.direction, "solid"), options, x_divisor, y_divisor,
                                      _unit_of(y_label))]
    notes = "; ".join(dict.fromkeys(run.note for run in runs))
    return Figure(key, title or f"{QUANTITIES[kind]}: {len(runs)} runs compared", x_label, y_label, tuple(lines),
                  caption=_caption(notes, provenance, [p.name for run in runs for p in run.paths]), y_range=(0, None))


def hist_chart(runs: Sequence[HistRun], directions: tuple[str, ...], provenance: str, key: str,
               title: str | None = None) -> Figure:
    """Latency percentiles over time from histogram logs: a colour per direction (per run when comparing),
    a dash per percentile."""
    series = [(index, run, line) for index, run in enumerate(runs) for line in run.lines
              if not directions or line.direction in directions]
    if not series:
        raise PtsbenchError("no histogram values to draw", "check --dir")
    largest = max(float(np.nanmax(values)) for _, _, line in series for values in line.percentiles_ns.values())
    y_divisor, y_label = value_axis("hist", largest)
    lines = []
    for index, run, line in series:
        color = style.color(index) if len(runs) > 1 else DIRECTION_COLORS.get(line.direction, style.GREY)
        prefix = f"{run.label} " if len(runs) > 1 else ""
        for position, (percentile, values) in enumerate(line.percentiles_ns.items()):
            lines.append(Series(f"{prefix}{line.direction} p{percentile:g}", line.end_ms / 1000.0,
                                values / y_divisor, "lines", PERCENTILE_DASHES[position % len(PERCENTILE_DASHES)],
                                color, width=1.4))
    default_title = (f"{runs[0].label}: latency percentiles" if len(runs) == 1
                     else f"Latency percentiles: {len(runs)} runs compared")
    return Figure(key, title or default_title, style.axis_label("Time", "s"), y_label, tuple(lines),
                  caption=_caption(runs[0].note, provenance, [p.name for run in runs for p in run.paths]),
                  y_log=True)  # p50 and p99.99 are decades apart: on a linear axis p50 lies flat on zero


_SIZE_TOKEN = re.compile(r"(?<![0-9a-z])(\d+)([kmg])(?:i?b)?(?![0-9a-z])", re.IGNORECASE)


def block_size_of(run: Run) -> int:
    """The run's block size: the most common one in a per-IO log, else a size like 4k or 128KiB in its file name."""
    if run.bs_bytes:
        return run.bs_bytes
    match = _SIZE_TOKEN.search(run.paths[0].name)
    if match is None:
        raise PtsbenchError(f"{run.label}: no block size in the log or its name",
                            "use logs written without log_avg_msec, or name files like run_4k_bw.log")
    return int(match.group(1)) * 1024 ** " kmg".index(match.group(2).lower())


def surface_chart(runs: Sequence[Run], bars: bool, provenance: str, key: str, title: str | None) -> Figure:
    """fio2gnuplot's 3D view: each run's mean total IOPS or bandwidth over its block size and read share."""
    kinds = {run.kind for run in runs}
    if len(kinds) != 1 or not kinds <= {"bw", "iops"}:
        raise PtsbenchError("the 3D view needs bw or iops logs, all of one kind", "choose them with --kind bw|iops")
    points: dict[tuple[int, int], list[float]] = {}
    for run in runs:
        if run.mean_total is None or run.read_share is None:
            raise PtsbenchError(f"{run.label}: no total to show", "its logs hold no IOs")
        mix = 5 * round(run.read_share * 20)  # mixes are set in whole percent, mostly multiples of 5
        points.setdefault((block_size_of(run), mix), []).append(run.mean_total)
    sizes = sorted({size for size, _ in points})
    mixes = sorted({mix for _, mix in points})
    grid = np.full((len(mixes), len(sizes)), np.nan)
    for (size, mix), values in points.items():
        grid[mixes.index(mix), sizes.index(size)] = float(np.mean(values))
    kind = kinds.pop()
    divisor, z_label = value_axis(kind, float(np.nanmax(grid)))
    holes = bool(np.isnan(grid).any()) or len(sizes) < 2 or len(mixes) < 2
    note = (f"mean total {QUANTITIES[kind]} of {len(runs)} runs over block size and read share of the IOs (to the "
            "nearest 5 %)"
            + ("; bars: the grid has holes or a single row" if holes and not bars else ""))
    cells = tuple(tuple(None if np.isnan(value) else float(value) for value in row) for row in grid / divisor)
    return Figure(key, title or f"{QUANTITIES[kind]} by block size and read/write mix", "block size",
                  "read/write mix", grid=Grid(tuple(format_bs(size) for size in sizes),
                                              tuple(f"{mix}% read" for mix in mixes), cells),
                  kind="bars3d" if bars or holes else "surface", z_label=z_label,
                  caption=_caption(note, provenance, [p.name for run in runs for p in run.paths]))
