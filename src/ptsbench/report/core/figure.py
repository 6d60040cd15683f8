"""What a figure shows, as data: one description that both renderers draw - draw_mpl.py with matplotlib (PNG, SVG,
PDF pages) and draw_plotly.py with plotly (the HTML pages) - so every format shows the same numbers and a new chart is
written once.

A Figure names its title, axis labels with units, series, log axes and caption and nothing about drawing. Builders
below turn stored numbers into Figures; they never compute a result a table does not also show. The helpers at the
end (colours, bar offsets, log ticks) are the reading of a Figure both renderers share.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union

from ptsbench.report.core import style

REGION_COLOR = "#d62728"  # a marked region: shaded in this colour, lightly
REGION_ALPHA = 0.13

if TYPE_CHECKING:
    import numpy.typing as npt

Number = float | int
# a series' positions and values: tuples in reports; numpy arrays from `ptsbench plot` (reduced to screen columns)
Positions = Union[tuple[Number, ...], "npt.NDArray[Any]"]
Values = Union[tuple[Number | None, ...], "npt.NDArray[Any]"]
KINDS = ("lines", "bars3d", "heatmap", "surface")  # what a Figure draws: its series over x, or its grid


@dataclass(frozen=True)
class Series:
    """One line, set of markers, group of bars or band; a None (or NaN) in y is a gap."""

    name: str
    x: Positions
    y: Values
    mode: str = "lines+markers"  # "lines", "markers", "lines+markers", "bars" (grouped with the figure's others) or
    #                              "band" (filled from `low` up to y, a step per x: the min and max per pixel column)
    dash: str = "solid"  # "solid", "dash" or "dot"
    color: int | str | None = None  # palette index, or a colour itself; None takes the series' position
    hover: tuple[str, ...] = ()  # per-point label shown on hover instead of x (e.g. the percentile)
    width: float | None = None  # line width in points; None: the figure style's
    opacity: float = 1.0
    low: Positions | None = None  # a band's lower edge
    y2: bool = False  # drawn against the figure's second y axis (on the right; y2_label, y2_log, y2_range)


@dataclass(frozen=True)
class Region:
    """A stretch of x marked on the chart (shaded over the full height), e.g. a drop found in the series."""

    x_start: Number
    x_end: Number
    label: str


@dataclass(frozen=True)
class Grid:
    """Values over two categorical axes: z[row][column] over column labels (x) and row labels (y); None leaves a cell
    empty. Drawn as 3D bars, a heatmap or a surface (the Figure's kind)."""

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
    grid: Grid | None = None  # kinds bars3d, heatmap and surface draw this instead of series
    z_label: str = ""
    caption: str = ""  # what it shows; the report adds the provenance
    data_sheet: bool = False  # also give its series a sheet (with a native chart) in the workbook
    meta: Mapping[str, str] = field(default_factory=dict)
    kind: str = "lines"  # one of KINDS; a heatmap writes the values in its cells
    subtitle: str = ""
    y_range: tuple[Number | None, Number | None] = (None, None)  # axis limits; None: automatic
    data_table: bool = False  # static drawings: the plotted values as a table under the chart (fio-plot's
    #                           --show-data); the HTML report shows the same numbers in its tables
    palette: tuple[str, ...] = ()  # colours to use instead of the report's palette
    regions: tuple[Region, ...] = ()  # shaded stretches of x (lines figures)
    y2_label: str = ""  # the second y axis (on the right) of the series marked y2: a quantity of another unit,
    #                     such as latency beside IOPS bars
    y2_log: bool = False
    y2_range: tuple[Number | None, Number | None] = (None, None)

    def has_y2(self) -> bool:
        """Whether a second y axis is drawn: some series is measured against it."""
        return self.grid is None and any(series.y2 for series in self.series)

    def says_little(self) -> bool:
        """A chart of lines over a continuous x whose every series has at most two points (a job of a second or
        two, logged once a second): an almost empty plot that shows no course; say its values or why it is not
        drawn instead."""
        return self.kind == "lines" and not self.x_ticks and bool(self.series) and self.most_values() <= 2

    def most_values(self) -> int:
        """The most values any series holds (None and NaN are gaps, not values)."""
        return max((sum(1 for value in series.y if value is not None and value == value) for series in self.series),
                   default=0)

    def point_count(self) -> int:
        if self.grid is not None:
            return sum(1 for row in self.grid.z for value in row if value is not None)
        return sum(1 for series in self.series for value in series.y if value is not None)


# --- builders -------------------------------------------------------------------------------------------------


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


# --- read by both renderers -----------------------------------------------------------------------------------


def palette_of(figure: Figure | None = None) -> tuple[str, ...]:
    return figure.palette if figure is not None and figure.palette else tuple(style.PALETTE)


def color_of(series: Series, position: int, palette: Sequence[str]) -> str:
    if isinstance(series.color, str):
        return series.color
    return palette[(series.color if series.color is not None else position) % len(palette)]


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


BAR_GROUP_WIDTH = 0.8  # bar series share this much of the distance 1 between categories


def bar_offsets(figure: Figure) -> dict[int, tuple[float, float]]:
    """Series position -> (x offset, width) of each bar series: the bars of one x side by side, centred on x."""
    bars = [position for position, series in enumerate(figure.series) if series.mode == "bars"]
    width = BAR_GROUP_WIDTH / max(len(bars), 1)
    return {position: ((index - (len(bars) - 1) / 2) * width, width) for index, position in enumerate(bars)}
