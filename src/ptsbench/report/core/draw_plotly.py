"""The plotly renderer of Figures (figure.py): a Figure as plotly's {data, layout, config}, drawn by plotly.js in
the HTML pages. Nothing here imports plotly: the spec is plain data.
"""

import math
from collections.abc import Iterable, Sequence
from typing import Any

from ptsbench.report.core import style
from ptsbench.report.core.figure import (
    BAR_GROUP_WIDTH,
    REGION_ALPHA,
    REGION_COLOR,
    Figure,
    Grid,
    Series,
    color_of,
    log_ticks,
)
from ptsbench.report.core.table_layout import wrap_name

TICK_LINE_CHARS = 28  # a tick label's line, wrapped after separators
_FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif"


def _axis(title: str, log: bool, ticks: Sequence[tuple[float, str]] = ()) -> dict[str, Any]:
    # automargin with a set standoff: the margin grows to hold the tick labels and the title beside them (the
    # title was written over wide tick labels such as 1,800,000)
    axis: dict[str, Any] = {"title": {"text": title, "standoff": 8}, "automargin": True,
                            "type": "log" if log else "linear", "showgrid": True,
                            "gridcolor": "#e3e3e3", "zeroline": False, "linecolor": "#888", "ticks": "outside",
                            "exponentformat": "none", "separatethousands": True}
    if ticks:  # long names (tests named after a device's by-id path) in lines: turned whole, their margin took
        # more than the figure's height and plotly drew nothing
        axis.update(tickmode="array", tickvals=[position for position, _ in ticks],
                    ticktext=["<br>".join(wrap_name(label, TICK_LINE_CHARS)) for _, label in ticks])
    return axis


def _y_axis(title: str, log: bool, y_range: tuple[float | None, float | None], ys: Sequence[Any]) -> dict[str, Any]:
    """A y axis of the series' values `ys`: log ticks in plain numbers, the figure's range (a None end: the data's)."""
    axis = _axis(title, log, log_ticks(ys) if log else ())
    if y_range == (0, None) and not log:
        axis["rangemode"] = "tozero"  # from zero up to the data, with plotly's own headroom
    elif y_range != (None, None):
        low, high = y_range
        known = [y for y in ys if y is not None]
        ends = [min(known, default=0) if low is None else low, max(known, default=1) if high is None else high]
        if not log:
            axis["range"] = ends
        elif all(end > 0 for end in ends):
            axis["range"] = [math.log10(end) for end in ends]
    return axis


def _list(values: Iterable[Any]) -> list[Any]:
    """Values as a JSON-ready list (a numpy array's as Python floats, at C speed)."""
    return values.tolist() if hasattr(values, "tolist") else list(values)


def line_trace(x: Iterable[Any], y: Iterable[Any], name: str, color: str, mode: str = "lines", dash: str = "solid",
               width: float = style.LINE_WIDTH_HTML) -> dict[str, Any]:
    """One series as a plotly scatter trace; None in y leaves a gap."""
    return {
        "type": "scatter", "mode": mode, "name": name, "x": _list(x), "y": _list(y),
        "line": {"color": color, "dash": dash if dash in style.DASHES else "solid", "width": width},
        "marker": {"color": color, "size": 5}, "connectgaps": False,
    }


def _bar_trace(series: Series, position: int, palette: Sequence[str]) -> dict[str, Any]:
    return {"type": "bar", "name": series.name, "x": _list(series.x), "y": _list(series.y),
            "marker": {"color": color_of(series, position, palette)},
            "hovertemplate": "%{x:,.6g}: %{y:,.6g}<extra>%{fullData.name}</extra>"}


def _band_traces(series: Series, color: str) -> list[dict[str, Any]]:
    """A band: its lower edge, then its upper edge filled down to it, both a step per x."""
    assert series.low is not None
    line = {"color": color, "width": 0.6, "dash": series.dash, "shape": "hvh"}
    return [{"type": "scatter", "mode": "lines", "x": _list(series.x), "y": _list(series.low), "line": line,
             "opacity": series.opacity, "legendgroup": series.name, "showlegend": False, "hoverinfo": "skip"},
            {"type": "scatter", "mode": "lines", "name": series.name, "x": _list(series.x), "y": _list(series.y),
             "line": line, "opacity": series.opacity, "fill": "tonexty", "legendgroup": series.name}]


def _series_traces(series: Series, position: int, palette: Sequence[str]) -> list[dict[str, Any]]:
    traces = _traces_of(series, position, palette)
    if series.y2:
        for trace in traces:
            trace["yaxis"] = "y2"
    return traces


def _traces_of(series: Series, position: int, palette: Sequence[str]) -> list[dict[str, Any]]:
    if series.mode == "bars":
        return [_bar_trace(series, position, palette)]
    color = color_of(series, position, palette)
    if series.mode == "band":
        return _band_traces(series, color)
    trace = line_trace(series.x, series.y, series.name, color, series.mode, series.dash,
                       series.width or style.LINE_WIDTH_HTML)
    if series.opacity != 1.0:
        trace["opacity"] = series.opacity
    if series.hover:
        trace.update(text=list(series.hover), hovertemplate="%{text}: %{y:,.6g}<extra>%{fullData.name}</extra>")
    else:
        trace["hovertemplate"] = "%{x:,.6g}: %{y:,.6g}<extra>%{fullData.name}</extra>"
    return [trace]


_CUBE_TRIANGLES = ((0, 1, 2), (0, 2, 3), (4, 5, 6), (4, 6, 7), (0, 1, 5), (0, 5, 4),
                   (3, 2, 6), (3, 6, 7), (0, 3, 7), (0, 7, 4), (1, 2, 6), (1, 6, 5))


def _bars_traces(bars: Grid, palette: Sequence[str], z_label: str) -> list[dict[str, Any]]:
    """One mesh3d trace per column label: a cuboid per bar (plotly has no 3D bar type)."""
    traces = []
    for column, label in enumerate(bars.x_labels):
        x: list[float] = []
        y: list[float] = []
        z: list[float] = []
        text: list[str] = []
        triangles: list[tuple[int, int, int]] = []
        for row, values in enumerate(bars.z):
            value = values[column]
            if value is None:
                continue
            base = len(x)
            for dx, dy, top in ((0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1),
                                (0, 1, 1)):
                x.append(column - 0.35 + 0.7 * dx)
                y.append(row - 0.35 + 0.7 * dy)
                z.append(float(value) * top)
                text.append(f"{bars.y_labels[row]}: {value:,.6g} {z_label}")
            triangles.extend((base + a, base + b, base + c) for a, b, c in _CUBE_TRIANGLES)
        if not triangles:
            continue
        traces.append({
            "type": "mesh3d", "name": label, "showlegend": True, "x": x, "y": y, "z": z,
            "i": [t[0] for t in triangles], "j": [t[1] for t in triangles], "k": [t[2] for t in triangles],
            "color": palette[column % len(palette)], "flatshading": True, "text": text,
            "hovertemplate": f"{label}<br>%{{text}}<extra></extra>",
        })
    return traces


def plotly_spec(figure: Figure, palette: Sequence[str]) -> dict[str, Any]:
    """A Figure as plotly's {data, layout, config}."""
    palette = figure.palette or palette
    title = f"{figure.title}<br><sub>{figure.subtitle}</sub>" if figure.subtitle else figure.title
    layout: dict[str, Any] = {
        "title": {"text": title, "font": {"size": 15}}, "font": {"family": _FONT, "size": 12},
        "paper_bgcolor": "white", "plot_bgcolor": "white", "hovermode": "closest", "colorway": list(palette),
        "margin": {"l": 70, "r": 20, "t": 50, "b": 55}, "legend": {"font": {"size": 11}},
    }
    grid = figure.grid
    data: list[dict[str, Any]]
    if grid is not None and figure.kind == "heatmap":
        data = [{"type": "heatmap", "x": list(grid.x_labels), "y": list(grid.y_labels), "z": [list(r) for r in grid.z],
                 "colorscale": "Viridis", "colorbar": {"title": {"text": figure.z_label}},
                 "texttemplate": "%{z:,.4~g}", "hovertemplate": "%{x} x %{y}: %{z:,.6g}<extra></extra>"}]
        layout["xaxis"] = {**_axis(figure.x_label, False), "type": "category"}
        layout["yaxis"] = {**_axis(figure.y_label, False), "type": "category"}
    elif grid is not None:
        if figure.kind == "surface":
            data = [{"type": "surface", "z": [list(row) for row in grid.z], "x": list(range(len(grid.x_labels))),
                     "y": list(range(len(grid.y_labels))), "colorscale": "Viridis",
                     "colorbar": {"title": {"text": figure.z_label}}}]
            layout["showlegend"] = False
        else:
            data = _bars_traces(grid, palette, figure.z_label)
        layout["scene"] = {
            "xaxis": {"title": {"text": figure.x_label}, "tickvals": list(range(len(grid.x_labels))),
                      "ticktext": list(grid.x_labels)},
            "yaxis": {"title": {"text": figure.y_label}, "tickvals": list(range(len(grid.y_labels))),
                      "ticktext": list(grid.y_labels)},
            "zaxis": {"title": {"text": figure.z_label},
                      **({"range": [0, figure.y_range[1]]} if figure.y_range[1] is not None else {})},
            "camera": {"eye": {"x": 1.7, "y": -1.7, "z": 1.0}},
        }
        layout["margin"] = {"l": 0, "r": 0, "t": 50, "b": 0}
    else:
        data = [trace for position, series in enumerate(figure.series)
                for trace in _series_traces(series, position, palette)]
        layout["showlegend"] = bool(figure.series)  # plotly hides a lone trace's name; the PNG and PDF show it
        xs = [x for series in figure.series for x in series.x]
        layout["xaxis"] = _axis(figure.x_label, figure.x_log, figure.x_ticks or (log_ticks(xs) if figure.x_log else ()))
        if figure.x_label.startswith("round") and not figure.x_ticks and xs:  # whole rounds: no 1.5
            layout["xaxis"].update(tickmode="linear", tick0=0, dtick=max(1, math.ceil((max(xs) - min(xs)) / 10)))
        layout["yaxis"] = _y_axis(figure.y_label, figure.y_log, figure.y_range,
                                  [y for series in figure.series if not series.y2 for y in series.y])
        if figure.has_y2():
            layout["yaxis2"] = {**_y_axis(figure.y2_label, figure.y2_log, figure.y2_range,
                                          [y for series in figure.series if series.y2 for y in series.y]),
                                "overlaying": "y", "side": "right", "showgrid": False}
            if not figure.y2_log:  # its own round numbers (plotly would otherwise put them at the left axis' lines)
                layout["yaxis2"]["tickmode"] = "auto"
            # the legend above the chart, under the title: on the right it would lie on the second axis' labels
            layout["legend"].update(orientation="h", x=0.0, xanchor="left", y=1.02, yanchor="bottom")
            layout["margin"].update(t=90, r=100)  # automargin leaves the rotated title a few pixels short
        if figure.regions:
            layout["shapes"] = [{"type": "rect", "xref": "x", "yref": "paper", "x0": region.x_start,
                                 "x1": region.x_end, "y0": 0, "y1": 1, "fillcolor": REGION_COLOR,
                                 "opacity": REGION_ALPHA, "line": {"width": 0}, "layer": "below"}
                                for region in figure.regions]
            layout["annotations"] = [{"x": (region.x_start + region.x_end) / 2, "y": 1, "xref": "x", "yref": "paper",
                                      "text": region.label, "showarrow": False, "yanchor": "top",
                                      "font": {"size": 10, "color": REGION_COLOR}} for region in figure.regions]
        if any(series.mode == "bars" for series in figure.series):
            layout.update(barmode="group", bargap=1 - BAR_GROUP_WIDTH, bargroupgap=0.0)
        latency = [(name, log) for name, label, log in (("yaxis", figure.y_label, figure.y_log),
                                                        ("yaxis2", figure.y2_label, figure.y2_log))
                   if "latency" in label and name in layout]
        if latency:  # rare long waits next to typical ones: a log axis on one click
            name, log = latency[0]
            # with a second axis the legend is above the chart on the left: the buttons go right, above its axis
            layout["updatemenus"] = [{
                "type": "buttons", "direction": "right", **({"x": 1.0, "xanchor": "right", "y": 1.02,
                                                              "yanchor": "bottom"} if name == "yaxis2" else
                                                             {"x": 0.0, "xanchor": "left", "y": 1.12}),
                "showactive": True,
                "active": 1 if log else 0, "pad": {"r": 4, "t": 0},
                "buttons": [{"label": "linear", "method": "relayout", "args": [{f"{name}.type": "linear"}]},
                            {"label": "log", "method": "relayout", "args": [{f"{name}.type": "log"}]}]}]
    config = {"responsive": True, "displaylogo": False,
              "toImageButtonOptions": {"format": "svg", "filename": figure.key}}
    return {"data": data, "layout": layout, "config": config, "gl": figure.kind in ("bars3d", "surface")}


def clean(obj: Any) -> Any:
    """NaN and infinity are not JSON: plotly draws None as a gap."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {key: clean(value) for key, value in obj.items()}
    if isinstance(obj, list):
        return [clean(value) for value in obj]
    return obj


def page_html(figure: Figure, caption: str, palette: Sequence[str] = style.PALETTE) -> str:
    """One figure as a page of its own (`ptsbench plot --format html`): plotly.js inside, so it works offline, and
    the caption under the chart."""
    import plotly.io

    spec = clean(plotly_spec(figure, palette))
    title = {**spec["layout"]["title"], "x": 0.5, "xanchor": "center"}  # clear of the linear / log buttons
    margin = {**spec["layout"]["margin"], "t": 80, "b": 120}
    layout = {**spec["layout"], "title": title, "height": 650, "margin": margin,
              "annotations": [{"text": caption, "xref": "paper", "yref": "paper", "x": 0, "y": -0.2,
                               "showarrow": False, "xanchor": "left", "font": {"size": 10}}]}
    return str(plotly.io.to_html({"data": spec["data"], "layout": layout}, config=spec["config"],
                                 include_plotlyjs=True, full_html=True))
