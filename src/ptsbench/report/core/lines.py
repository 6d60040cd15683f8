"""A line of a chart in the report's figure style (style.py), drawn on matplotlib axes or as a plotly trace: the one
place that draws lines, for the report's figures (figures.py, html.py) and for `ptsbench plot` (plot/draw.py).

Nothing here imports a drawing library: callers pass the axes they draw on, and plotly takes traces as dicts.
"""

from collections.abc import Iterable
from typing import Any

from ptsbench.report.core import style

_MPL_DASHES = {"solid": "-", "dash": "--", "dot": ":"}
MARKER_SIZE = 3.5


def draw_line(axes: Any, x: Any, y: Any, name: str, color: str, mode: str = "lines", dash: str = "solid",
              width: float = style.LINE_WIDTH, opacity: float | None = None) -> None:
    """One series on matplotlib axes: mode 'lines', 'markers' or 'lines+markers'; NaN in y leaves a gap."""
    axes.plot(x, y, label=name, color=color, marker="o" if "markers" in mode else None, markersize=MARKER_SIZE,
              linestyle=_MPL_DASHES.get(dash, "-") if "lines" in mode else "none", linewidth=width, alpha=opacity)


def plain_ticks(axes: Any) -> None:
    """Linear axes labelled with the values themselves (1,500,000), as many decimals as the tick step needs:
    matplotlib's default writes a factor or an offset apart ('1e6', '+1.5e6'), which a reader easily misses."""
    import math

    from matplotlib.ticker import Formatter, ScalarFormatter

    class PlainTicks(Formatter):
        ticks: list[float] = []

        def set_locs(self, locs: Any) -> None:
            self.ticks = sorted(float(loc) for loc in locs)

        def __call__(self, x: float, pos: int | None = None) -> str:
            locs = self.ticks
            steps = [b - a for a, b in zip(locs, locs[1:], strict=False) if b > a]
            step = min(steps) if steps else abs(x) or 1.0
            digits = max(0, -math.floor(math.log10(step) + 1e-9))
            return f"{0.0 if abs(x) < step / 1e6 else x:,.{digits}f}"

    for axis in (axes.xaxis, axes.yaxis):
        if axis.get_scale() == "linear" and type(axis.get_major_formatter()) is ScalarFormatter:
            axis.set_major_formatter(PlainTicks())


def finish_axes(axes: Any, title: str, x_label: str, y_label: str, legend: bool) -> None:
    """Title, axis labels with the plotted numbers as ticks, a light grid, and the legend outside on the right, so
    it never hides data."""
    plain_ticks(axes)
    axes.set_title(title, fontsize=style.TITLE_PT, y=1.01)  # a fixed place: finding one costs a layout pass per save
    axes.set_xlabel(x_label)
    axes.set_ylabel(y_label)
    axes.grid(True, which="major", color=style.GRID, linewidth=0.6)
    if legend:
        axes.legend(fontsize=style.LEGEND_PT, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False,
                    borderaxespad=0.0)


def line_trace(x: Iterable[Any], y: Iterable[Any], name: str, color: str, mode: str = "lines", dash: str = "solid",
               width: float = style.LINE_WIDTH_HTML) -> dict[str, Any]:
    """One series as a plotly scatter trace; None in y leaves a gap."""
    return {
        "type": "scatter", "mode": mode, "name": name, "x": list(x), "y": list(y),
        "line": {"color": color, "dash": dash if dash in style.DASHES else "solid", "width": width},
        "marker": {"color": color, "size": 5}, "connectgaps": False,
    }
