"""Plots: what each figure shows (as data), and its static drawing with matplotlib (PNG, SVG, PDF pages).

A Figure names its title, axis labels with units, series, log axes and caption and nothing about drawing; html.py
draws the same Figure with plotly and this module with matplotlib, so every format shows the same numbers.
Builders below turn stored numbers into Figures; they never compute a result a table does not also show.
"""

import contextlib
import math
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ptsbench.report.core import style
from ptsbench.report.core.lines import draw_line, finish_axes

Number = float | int


@dataclass(frozen=True)
class Series:
    """One line or set of markers; a None in y is a gap."""

    name: str
    x: tuple[Number, ...]
    y: tuple[Number | None, ...]
    mode: str = "lines+markers"  # "lines", "markers", "lines+markers" or "bars" (grouped with the figure's others)
    dash: str = "solid"  # "solid", "dash" or "dot"
    color: int | None = None  # palette index; None takes the series' position
    hover: tuple[str, ...] = ()  # per-point label shown on hover instead of x (e.g. the percentile)


@dataclass(frozen=True)
class Bars3D:
    """A grid of bars: z[row][column] over column labels (x) and row labels (y); None leaves a cell empty."""

    x_labels: tuple[str, ...]
    y_labels: tuple[str, ...]
    z: tuple[tuple[Number | None, ...], ...]


@dataclass(frozen=True)
class Figure:
    """A figure as data. `key` names its files (figures/KEY.png, .svg) and its element in the HTML report."""

    key: str
    title: str
    x_label: str
    y_label: str
    series: tuple[Series, ...] = ()
    x_log: bool = False
    y_log: bool = False
    x_ticks: tuple[tuple[Number, str], ...] = ()  # (position, label); empty: automatic
    bars3d: Bars3D | None = None
    z_label: str = ""
    caption: str = ""  # what it shows; the report adds the provenance
    data_sheet: bool = False  # also give its series a sheet (with a native chart) in the workbook
    meta: Mapping[str, str] = field(default_factory=dict)
    heatmap: bool = False  # draw bars3d's grid as a heatmap (values written in the cells) instead of 3D bars
    subtitle: str = ""
    y_range: tuple[Number | None, Number | None] = (None, None)  # axis limits; None: automatic
    data_table: bool = False  # static drawings: the plotted values as a table under the chart (fio-plot's
    #                           --show-data); the HTML report shows the same numbers in its tables
    palette: tuple[str, ...] = ()  # colours to use instead of the report's palette

    def point_count(self) -> int:
        if self.bars3d is not None:
            return sum(1 for row in self.bars3d.z for value in row if value is not None)
        return sum(1 for series in self.series for value in series.y if value is not None)


@contextlib.contextmanager
def atomic_file(path: Path) -> Iterator[Path]:
    """A temporary path next to `path`, renamed over it when the block succeeds and removed when it fails: readers
    see the old or the new file, never part of one, and two writers never share a temporary file."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    try:
        yield temporary
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


# --- builders --------------------------------------------------------------------------------------------------


def nines(percentile: float, total: int) -> float:
    """Position of a percentile on a 'nines' axis: 90 -> 1, 99 -> 2, 99.9 -> 3 (100 is capped at 1/total)."""
    remaining = max(1.0 - percentile / 100.0, 0.5 / max(total, 1))
    return -math.log10(remaining)


def nines_ticks(max_position: float) -> tuple[tuple[float, str], ...]:
    labels = ["0", "90", "99", "99.9", "99.99", "99.999", "99.9999", "99.99999"]
    count = min(len(labels), max(2, math.ceil(max_position) + 1))
    return tuple((float(position), labels[position]) for position in range(count))


def percentile_points(bins: Mapping[int, int]) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """(percentile, latency_ns) at every json+ bin: the share of IOs at or below each bin's value, as fio counts."""
    total = sum(bins.values())
    percentiles: list[float] = []
    values_ns: list[float] = []
    cumulative = 0
    for value_ns, count in sorted(bins.items()):
        cumulative += count
        percentiles.append(100.0 * cumulative / total)
        values_ns.append(float(value_ns))
    return tuple(percentiles), tuple(values_ns)


def percentile_figure(key: str, title: str, curves: Sequence[tuple[str, Mapping[int, int]]], caption: str) -> Figure:
    """Latency percentile curves (one per name, from json+ bins) on a nines axis, latency on a log axis."""
    series = []
    top = 1.0
    for name, bins in curves:
        if not bins:
            continue
        total = sum(bins.values())
        percentiles, values_ns = percentile_points(bins)
        x = tuple(nines(p, total) for p in percentiles)
        top = max(top, max(x))
        series.append(Series(name, x, tuple(v / 1000 for v in values_ns), mode="lines",
                             hover=tuple(f"p{p:.6g}" for p in percentiles)))
    return Figure(key, title, "percentile (%)", "total latency (µs)", tuple(series), y_log=True,
                  x_ticks=nines_ticks(top), caption=caption)


def measurement_window_figure(key: str, title: str, y_label: str, rounds: Sequence[int], values: Sequence[float],
                              average: float, slope: float, intercept: float, caption: str) -> Figure:
    """Tracked variable in the window with its average, the 110 % / 90 % band and the least-squares line."""
    x = tuple(rounds)
    ends = (x[0], x[-1])
    series = (
        Series("tracked value", x, tuple(values), mode="lines+markers", color=0),
        Series("average", ends, (average, average), mode="lines", color=1),
        Series("110 % of average", ends, (1.1 * average, 1.1 * average), mode="lines", dash="dash", color=2),
        Series("90 % of average", ends, (0.9 * average, 0.9 * average), mode="lines", dash="dash", color=2),
        Series("least-squares fit", ends, tuple(slope * r + intercept for r in ends), mode="lines", dash="dot",
               color=3),
    )
    return Figure(key, title, "round", y_label, series, x_ticks=tuple((r, str(r)) for r in x), caption=caption,
                  data_sheet=True)


# --- drawing with matplotlib -------------------------------------------------------------------------------------

WIDTH_IN, HEIGHT_IN = 9.0, 5.0


def _palette(figure: Figure | None = None) -> tuple[str, ...]:
    return figure.palette if figure is not None and figure.palette else tuple(style.PALETTE)


def color_of(series: Series, position: int, palette: Sequence[str]) -> str:
    return palette[(series.color if series.color is not None else position) % len(palette)]


def caption_text(figure: Figure, provenance: str, width_chars: int = 170) -> str:
    """The caption under a drawn figure: what it shows, then what made it."""
    import textwrap

    return textwrap.fill(" ".join(part for part in (figure.caption, provenance) if part), width_chars)


def _legend_in(figure: Figure) -> float:
    """Width kept right of the axes for the legend (outside the plot, so it never hides data)."""
    if figure.bars3d is not None:
        return 1.2 if figure.heatmap else 0.9
    longest = max((len(series.name) for series in figure.series), default=0)
    return min(0.55 + longest * style.LEGEND_PT * 0.55 / 72, 3.2)


def draw(figure: Figure, canvas: Any, region: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 1.0),
         caption: str = "") -> Any:
    """Draw the figure on `canvas` (a matplotlib Figure) inside `region` (left, bottom, width, height as figure
    fractions): the plot, its legend on the right, the caption under it. Fixed margins: no layout engine."""
    width_in, height_in = canvas.get_size_inches()
    left, bottom, width, height = region
    caption_in = (caption.count("\n") + 1) * style.CAPTION_PT * 1.3 / 72 + 0.06 if caption else 0.0
    three_d = figure.bars3d is not None and not figure.heatmap
    margin_left_in, margin_bottom_in, margin_top_in = (0.1, 0.05, 0.3) if three_d else (1.05, 0.5, 0.35)
    if figure.subtitle:
        margin_top_in += 0.18
    table_in = _data_table_in(figure)
    axes_left = left + margin_left_in / width_in
    axes_bottom = bottom + (margin_bottom_in + caption_in + table_in) / height_in
    axes_width = width - (margin_left_in + _legend_in(figure) + 0.1) / width_in
    axes_height = height - (margin_bottom_in + caption_in + table_in + margin_top_in) / height_in
    rect = (axes_left, axes_bottom, axes_width, axes_height)
    if three_d:
        import mpl_toolkits.mplot3d  # noqa: F401  (registers the 3d projection)

        axes = canvas.add_axes(rect, projection="3d")
        _draw_bars3d(axes, figure)
    elif figure.heatmap:
        axes = canvas.add_axes(rect)
        _draw_heatmap(axes, figure)
    else:
        axes = canvas.add_axes(rect)
        _draw_lines(axes, figure)
        axes.set_ylim(*figure.y_range)
    if figure.subtitle:
        axes.text(0.5, 1.01 + 0.3 / (axes_height * height_in), figure.subtitle, transform=axes.transAxes,
                  ha="center", va="bottom", fontsize=style.LEGEND_PT + 1, color=style.CAPTION)
    if table_in:
        _draw_data_table(canvas, figure, (axes_left, bottom + (caption_in + 0.1) / height_in, axes_width,
                                          (table_in - 0.45) / height_in))
    if caption:
        canvas.text(left + 0.08 / width_in, bottom + 0.04 / height_in, caption, fontsize=style.CAPTION_PT,
                    color=style.CAPTION, ha="left", va="bottom")
    return axes


def log_ticks(values: Sequence[Number | None]) -> tuple[tuple[float, str], ...]:
    """Ticks at 1, 2 and 5 of every decade the positive values span, labelled as plain numbers."""
    positive = [float(v) for v in values if v is not None and v > 0 and math.isfinite(v)]
    if not positive:
        return ()
    low, high = math.floor(math.log10(min(positive))), math.ceil(math.log10(max(positive)))
    ticks = [m * 10.0**e for e in range(low, high + 1) for m in (1, 2, 5)]
    chosen = [t for t in ticks if min(positive) / 1.5 <= t <= max(positive) * 1.5]
    return tuple((t, plain_number(t)) for t in chosen)


def plain_number(value: float, _position: int | None = None) -> str:
    """Tick labels on log axes as plain numbers (1,000 and 0.01, not 10^3 and 10^-2)."""
    return f"{value:,.0f}" if abs(value) >= 1 else f"{value:.6g}"


def _log_axis(axes: Any, axis: Any) -> None:
    """A log axis labelled at 1, 2 and 5 of every decade, in plain numbers, without minor ticks (each tick is
    costly to draw and the labelled ones are what a reader uses)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

    (axes.set_xscale if axis is axes.xaxis else axes.set_yscale)("log")
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0), numticks=12))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(plain_number))


BAR_GROUP_WIDTH = 0.8  # bar series share this much of the distance 1 between categories


def bar_offsets(figure: Figure) -> dict[int, tuple[float, float]]:
    """Series position -> (x offset, width) of each bar series: the bars of one x side by side, centred on x."""
    bars = [position for position, series in enumerate(figure.series) if series.mode == "bars"]
    width = BAR_GROUP_WIDTH / max(len(bars), 1)
    return {position: ((index - (len(bars) - 1) / 2) * width, width) for index, position in enumerate(bars)}


def _draw_lines(axes: Any, figure: Figure) -> None:
    palette = _palette(figure)
    offsets = bar_offsets(figure)
    for position, series in enumerate(figure.series):
        y = [math.nan if value is None else value for value in series.y]
        if position in offsets:
            offset, width = offsets[position]
            axes.bar([x + offset for x in series.x], y, width, label=series.name,
                     color=color_of(series, position, palette), log=figure.y_log)
            continue
        draw_line(axes, series.x, y, series.name, color_of(series, position, palette), series.mode, series.dash)
    for axis, log in ((axes.xaxis, figure.x_log), (axes.yaxis, figure.y_log)):
        if log:
            _log_axis(axes, axis)
    if figure.x_ticks:
        axes.set_xticks([position for position, _ in figure.x_ticks], [label for _, label in figure.x_ticks])
        axes.set_xticks([], minor=True)
    elif figure.x_label.startswith("round"):  # whole rounds: no 1.5
        from matplotlib.ticker import MaxNLocator

        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    finish_axes(axes, figure.title, figure.x_label, figure.y_label, legend=bool(figure.series))


TABLE_ROW_IN = 0.17


def _data_table_in(figure: Figure) -> float:
    """Height kept under the axes for the data table (the x tick labels sit between them)."""
    if not figure.data_table or figure.bars3d is not None or not figure.series:
        return 0.0
    return 0.45 + TABLE_ROW_IN * (len(figure.series) + 1)


def _draw_data_table(canvas: Any, figure: Figure, region: tuple[float, float, float, float]) -> None:
    """The plotted values under the chart: a row per series, a column per x value (fio-plot's --show-data)."""
    columns = list(dict.fromkeys(x for series in figure.series for x in series.x))
    labels = dict(figure.x_ticks)
    header = [labels.get(x, plain_number(float(x))) for x in columns]
    rows = []
    for series in figure.series:
        values = dict(zip(series.x, series.y, strict=False))
        rows.append([_table_number(values.get(x)) for x in columns])
    axes = canvas.add_axes(region)
    axes.axis("off")
    table = axes.table(cellText=rows, rowLabels=[series.name for series in figure.series], colLabels=header,
                       loc="upper center", cellLoc="right", bbox=(0.0, 0.0, 1.0, 1.0))
    table.auto_set_font_size(False)
    table.set_fontsize(style.LEGEND_PT)


def _table_number(value: Number | None) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.3g}"


def _draw_heatmap(axes: Any, figure: Figure) -> None:
    """bars3d's grid as coloured cells with their values written in (a 2D view of the 3D bars)."""
    assert figure.bars3d is not None
    grid = figure.bars3d
    values = [[math.nan if value is None else float(value) for value in row] for row in grid.z]
    image = axes.imshow(values, cmap="viridis", aspect="auto", origin="lower")
    finite = [value for row in values for value in row if math.isfinite(value)]
    middle = (min(finite) + max(finite)) / 2 if finite else 0.0
    for row_index, row in enumerate(values):
        for column, value in enumerate(row):
            if math.isfinite(value):
                axes.text(column, row_index, _table_number(value), ha="center", va="center", fontsize=7,
                          color="black" if value > middle else "white")
    axes.set_xticks(range(len(grid.x_labels)), grid.x_labels)
    axes.set_yticks(range(len(grid.y_labels)), grid.y_labels)
    from matplotlib.ticker import FuncFormatter

    colorbar = axes.figure.colorbar(image, ax=axes, fraction=0.05, pad=0.02)
    colorbar.set_label(figure.z_label, fontsize=8)
    colorbar.ax.yaxis.set_major_formatter(FuncFormatter(plain_number))
    axes.set_title(figure.title, fontsize=style.TITLE_PT, y=1.01)
    axes.set_xlabel(figure.x_label)
    axes.set_ylabel(figure.y_label)


def _draw_bars3d(axes: Any, figure: Figure) -> None:
    from matplotlib.patches import Patch

    assert figure.bars3d is not None
    bars = figure.bars3d
    palette = _palette(figure)
    for column, _label in enumerate(bars.x_labels):
        cells = [(row, value) for row, values in enumerate(bars.z) if (value := values[column]) is not None]
        if not cells:
            continue
        axes.bar3d([column - 0.35] * len(cells), [row - 0.35 for row, _ in cells], 0.0, 0.7, 0.7,
                   [value for _, value in cells], color=palette[column % len(palette)], shade=True)
    axes.set_xticks(range(len(bars.x_labels)), bars.x_labels, fontsize=8)
    axes.set_yticks(range(len(bars.y_labels)), bars.y_labels, fontsize=8)
    axes.set_xlabel(figure.x_label, fontsize=8)
    axes.set_ylabel(figure.y_label, fontsize=8)
    axes.set_zlabel(figure.z_label, fontsize=8)
    axes.tick_params(axis="z", labelsize=8)
    axes.set_title(figure.title, fontsize=11, y=1.0)
    handles = [Patch(color=palette[column % len(palette)], label=label) for column, label in enumerate(bars.x_labels)]
    axes.legend(handles=handles, fontsize=style.LEGEND_PT, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)


DEFAULT_DPI = 200  # a report's PNG figures: 1800 x 1000 pixels, sharp on a laptop's high-density screen


def write_figure_files(figure: Figure, directory: Path, provenance: str, dpi: int = 100,
                       formats: Sequence[str] = ("png", "svg")) -> list[Path]:
    """figures/KEY.png and KEY.svg, each written to a temporary name and renamed; provenance also in metadata."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as MplFigure

    drawn = MplFigure(figsize=(WIDTH_IN, HEIGHT_IN))
    FigureCanvasAgg(drawn)
    draw(figure, drawn, caption=caption_text(figure, provenance, width_chars=int(WIDTH_IN * 19)))
    written = []
    options: tuple[tuple[str, dict[str, Any]], ...] = (
        ("png", {"metadata": {"Title": figure.title, "Description": provenance, "Software": "ptsbench"},
                 "pil_kwargs": {"compress_level": 1}}),
        ("svg", {"metadata": {"Title": figure.title, "Description": provenance, "Creator": "ptsbench"}}),
    )
    with matplotlib.rc_context({"svg.fonttype": "none"}):  # SVG text stays text: smaller, faster, searchable
        for suffix, kwargs in options:
            if suffix not in formats:
                continue
            path = directory / f"{figure.key}.{suffix}"
            with atomic_file(path) as temporary:
                drawn.savefig(temporary, format=suffix, dpi=dpi, **kwargs)
            written.append(path)
    return written


def claim(claims: Path | None, key: str) -> bool:
    """True for the first process that asks for a figure (its claim file is created exclusively); always True
    without a claims folder."""
    if claims is None:
        return True
    try:
        os.close(os.open(claims / key, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def write_figure_batch(figures: Sequence[Figure], directory: Path, provenance: str,
                       claims: Path | None = None, dpi: int = DEFAULT_DPI) -> int:
    """The figures' files, skipping those another process has claimed; returns how many this call wrote."""
    written = 0
    for figure in figures:
        if claim(claims, figure.key):
            write_figure_files(figure, directory, provenance, dpi)
            written += 1
    return written


def main() -> None:
    """`python -m ptsbench.report.core.figures`: a worker that writes the figures pickled on stdin (see build.py)."""
    import pickle
    import sys

    figures, directory, provenance, claims, dpi = pickle.load(sys.stdin.buffer)
    write_figure_batch(figures, Path(directory), provenance, Path(claims), dpi)


if __name__ == "__main__":
    main()
