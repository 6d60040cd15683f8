"""Charts as data, drawn with matplotlib (PNG, SVG) or plotly (one self-contained HTML file, plotly.js inline)."""

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ptsbench.report.core import style
from ptsbench.report.core.draw_mpl import draw_line, finish_axes
from ptsbench.report.core.draw_plotly import line_trace

Array = npt.NDArray[Any]
FORMATS = ("png", "svg", "html")
WIDTH_IN, HEIGHT_IN, DPI = 12.0, 6.0, 100
PLOT_COLUMNS = 1200  # pixel columns of the plot area at WIDTH_IN x DPI: what min/max reduction keeps


@dataclass(frozen=True, eq=False)
class Line:
    name: str
    x: Array
    y: Array  # NaN leaves a gap
    color: str
    dash: str = "solid"  # solid, dash or dot
    width: float = 1.0
    opacity: float = 1.0
    low: Array | None = None  # a band from low to y (min and max per pixel column) instead of a line
    markers: bool = False  # a marker at every point


@dataclass(frozen=True)
class Look:
    """The user's own chart style (fio-plot's --line-width, --enable-markers, --colors, --dpi)."""

    line_width: float | None = None
    markers: bool = False
    colors: tuple[str, ...] = ()  # in place of the palette, colour by colour in order of first use
    dpi: int = DPI


@dataclass(frozen=True, eq=False)
class Surface:
    """Values over two categorical axes: z[row][column], NaN where nothing was measured."""

    x_labels: tuple[str, ...]
    y_labels: tuple[str, ...]
    z: Array
    bars: bool  # bars instead of a surface


@dataclass(frozen=True, eq=False)
class Chart:
    key: str  # file name without suffix
    title: str
    x_label: str
    y_label: str
    caption: str
    lines: tuple[Line, ...] = ()
    surface: Surface | None = None
    z_label: str = ""
    y_from_zero: bool = True


def styled(chart: Chart, look: Look) -> Chart:
    """The chart drawn in the user's style."""
    from dataclasses import replace

    used = list(dict.fromkeys(line.color for line in chart.lines))
    colors = {color: look.colors[index % len(look.colors)] for index, color in enumerate(used)} if look.colors else {}
    lines = tuple(replace(line, width=look.line_width or line.width, markers=look.markers and line.low is None,
                          color=colors.get(line.color, line.color)) for line in chart.lines)
    return replace(chart, lines=lines)


def write_chart(chart: Chart, directory: Path, file_format: str, look: Look = Look()) -> Path:
    """Draw the chart into DIRECTORY/KEY.FORMAT (written under a temporary name, then renamed)."""
    chart = styled(chart, look)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{chart.key}.{file_format}"
    partial = path.with_name(f".{path.name}.partial")
    try:
        if file_format == "html":
            _write_html(chart, partial)
        else:
            _write_static(chart, partial, file_format, look.dpi)
        os.replace(partial, path)
    finally:  # a failed write (a full disk) leaves no empty or partial chart behind
        partial.unlink(missing_ok=True)
    return path


# --- matplotlib -------------------------------------------------------------------------------------------------

def _write_static(chart: Chart, path: Path, file_format: str, dpi: int = DPI) -> None:
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(WIDTH_IN, HEIGHT_IN), dpi=dpi)
    FigureCanvasAgg(figure)
    if chart.surface is not None:
        axes = figure.add_axes((0.02, 0.1, 0.8, 0.82), projection="3d")
        _surface_mpl(axes, chart)
    else:
        axes = figure.add_axes((0.07, 0.14, 0.72, 0.78))
        _lines_mpl(axes, chart)
    figure.text(0.01, 0.01, chart.caption, fontsize=7, color=style.CAPTION, ha="left", va="bottom", wrap=True)
    with matplotlib.rc_context({"svg.fonttype": "none", "agg.path.chunksize": 20000}):
        metadata = {"Title": chart.title, "Description": chart.caption}
        if file_format == "png":  # light compression: much faster, a little larger
            figure.savefig(path, format="png", metadata=metadata, pil_kwargs={"compress_level": 1})
        else:
            figure.savefig(path, format=file_format, metadata=metadata)


def _lines_mpl(axes: Any, chart: Chart) -> None:
    for line in chart.lines:
        if line.low is None:
            draw_line(axes, line.x, line.y, line.name, line.color, "lines+markers" if line.markers else "lines",
                      dash=line.dash, width=line.width, opacity=line.opacity)
            continue
        axes.fill_between(line.x, line.low, line.y, step="mid", color=line.color, alpha=0.35 * line.opacity,
                          linewidth=0, label=line.name)
        for edge in (line.low, line.y):  # the edges keep one-point columns visible
            axes.step(line.x, edge, where="mid", color=line.color, linewidth=0.6, alpha=line.opacity)
    finish_axes(axes, chart.title, chart.x_label, chart.y_label, legend=bool(chart.lines))
    if chart.y_from_zero:
        axes.set_ylim(bottom=0)
    axes.set_xlim(left=min((float(np.nanmin(line.x)) for line in chart.lines if len(line.x)), default=0.0))


def _surface_mpl(axes: Any, chart: Chart) -> None:
    surface = chart.surface
    assert surface is not None
    rows, columns = surface.z.shape
    if surface.bars:
        for row in range(rows):
            for column in range(columns):
                value = surface.z[row, column]
                if math.isfinite(value):
                    axes.bar3d(column - 0.3, row - 0.3, 0.0, 0.6, 0.6, value, color=style.color(row), shade=True)
    else:
        x, y = np.meshgrid(np.arange(columns), np.arange(rows))
        axes.plot_surface(x, y, surface.z, cmap="viridis", edgecolor="#333333", linewidth=0.3)
    axes.set_xticks(range(columns), surface.x_labels, fontsize=8)
    axes.set_yticks(range(rows), surface.y_labels, fontsize=8)
    axes.set_xlabel(chart.x_label)
    axes.set_ylabel(chart.y_label)
    axes.set_zlabel(chart.z_label)
    axes.set_title(chart.title, fontsize=12)


# --- plotly -----------------------------------------------------------------------------------------------------


def _write_html(chart: Chart, path: Path) -> None:
    import plotly.graph_objects as go

    figure = go.Figure()
    if chart.surface is not None:
        _surface_plotly(figure, chart)
    else:
        for line in chart.lines:
            style_of = {"color": line.color, "width": line.width if line.low is None else 0.6, "dash": line.dash}
            if line.low is not None:
                figure.add_trace(go.Scatter(x=line.x, y=line.low, mode="lines", opacity=line.opacity,
                                            line={**style_of, "shape": "hvh"}, legendgroup=line.name,
                                            showlegend=False, hoverinfo="skip"))
                figure.add_trace(go.Scatter(x=line.x, y=line.y, name=line.name, mode="lines", opacity=line.opacity,
                                            line={**style_of, "shape": "hvh"}, fill="tonexty", legendgroup=line.name))
            else:
                figure.add_trace({**line_trace(line.x, line.y, line.name, line.color,
                                               "lines+markers" if line.markers else "lines", dash=line.dash,
                                               width=line.width), "opacity": line.opacity, "legendgroup": line.name})
        figure.update_xaxes(title_text=chart.x_label, gridcolor="#dddddd")
        figure.update_yaxes(title_text=chart.y_label, gridcolor="#dddddd", rangemode="tozero" if chart.y_from_zero
                            else "normal")
    figure.update_layout(title=chart.title, template="plotly_white", height=650, margin={"b": 120},
                         annotations=[{"text": chart.caption, "xref": "paper", "yref": "paper", "x": 0, "y": -0.2,
                                       "showarrow": False, "xanchor": "left", "font": {"size": 10}}])
    figure.write_html(path, include_plotlyjs=True, full_html=True)


def _surface_plotly(figure: Any, chart: Chart) -> None:
    import plotly.graph_objects as go

    surface = chart.surface
    assert surface is not None
    rows, columns = surface.z.shape
    if surface.bars:
        for row in range(rows):
            for column in range(columns):
                value = float(surface.z[row, column])
                if math.isfinite(value):
                    figure.add_trace(_cuboid(go, column, row, value, style.color(row),
                                             f"{surface.x_labels[column]}, {surface.y_labels[row]}: {value:.4g}"))
    else:
        figure.add_trace(go.Surface(z=surface.z, x=list(range(columns)), y=list(range(rows)),
                                    colorscale="Viridis", showscale=True))
    axis = {"tickmode": "array"}
    figure.update_layout(scene={
        "xaxis": {**axis, "title": chart.x_label, "tickvals": list(range(columns)), "ticktext": surface.x_labels},
        "yaxis": {**axis, "title": chart.y_label, "tickvals": list(range(rows)), "ticktext": surface.y_labels},
        "zaxis": {"title": chart.z_label},
    }, showlegend=False)


def _cuboid(go: Any, column: int, row: int, height: float, color: str, text: str) -> Any:
    x0, x1, y0, y1 = column - 0.3, column + 0.3, row - 0.3, row + 0.3
    x = [x0, x1, x1, x0, x0, x1, x1, x0]
    y = [y0, y0, y1, y1, y0, y0, y1, y1]
    z = [0, 0, 0, 0, height, height, height, height]
    faces = ((0, 1, 2), (0, 2, 3), (4, 5, 6), (4, 6, 7), (0, 1, 5), (0, 5, 4), (1, 2, 6), (1, 6, 5), (2, 3, 7),
             (2, 7, 6), (3, 0, 4), (3, 4, 7))
    i, j, k = (list(index) for index in zip(*faces, strict=True))
    return go.Mesh3d(x=x, y=y, z=z, i=i, j=j, k=k, color=color, flatshading=True, hovertext=text, hoverinfo="text",
                     name=text)
