"""A line of a chart in the report's figure style (style.py), drawn on matplotlib axes or as a plotly trace: the one
place that draws lines, for the report's figures (figures.py, html.py) and for `ptsbench plot` (plot/draw.py).

Nothing here imports a drawing library: callers pass the axes they draw on, and plotly takes traces as dicts.
"""

from collections.abc import Iterable
from typing import Any

from ptsbench.report import style

_MPL_DASHES = {"solid": "-", "dash": "--", "dot": ":"}
MARKER_SIZE = 3.5


def draw_line(axes: Any, x: Any, y: Any, name: str, color: str, mode: str = "lines", dash: str = "solid",
              width: float = style.LINE_WIDTH, opacity: float | None = None) -> None:
    """One series on matplotlib axes: mode 'lines', 'markers' or 'lines+markers'; NaN in y leaves a gap."""
    axes.plot(x, y, label=name, color=color, marker="o" if "markers" in mode else None, markersize=MARKER_SIZE,
              linestyle=_MPL_DASHES.get(dash, "-") if "lines" in mode else "none", linewidth=width, alpha=opacity)


def finish_axes(axes: Any, title: str, x_label: str, y_label: str, legend: bool) -> None:
    """Title, axis labels, a light grid, and the legend outside on the right, so it never hides data."""
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
