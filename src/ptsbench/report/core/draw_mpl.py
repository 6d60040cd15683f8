"""The matplotlib renderer of Figures (figure.py): PNG and SVG files, and the figures of the PDF's pages. Lines are
drawn here for every static chart in the report's figure style (style.py).

Files are written by worker processes too: `python -m ptsbench.report.core.draw_mpl` (DrawWorker; used by
report/build.py and `ptsbench plot`).
"""

import contextlib
import gc
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ptsbench.report.core import fit, style
from ptsbench.report.core.figure import (
    REGION_ALPHA,
    REGION_COLOR,
    Figure,
    Number,
    Series,
    bar_offsets,
    color_of,
    palette_of,
    plain_number,
)
from ptsbench.report.core.layout import atomic_file

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


def finish_axes(axes: Any, x_label: str, y_label: str) -> None:
    """Axis labels with the plotted numbers as ticks and a light grid."""
    plain_ticks(axes)
    axes.set_xlabel(x_label, fontsize=AXIS_PT)
    axes.set_ylabel(y_label, fontsize=AXIS_PT)
    axes.tick_params(labelsize=TICK_PT)
    axes.grid(True, which="major", color=style.GRID, linewidth=0.6)


WIDTH_IN, HEIGHT_IN = 9.0, 5.0
TICK_PT = 8.0  # tick labels
AXIS_PT = 9.0  # axis titles
PAD_IN = 0.08  # between pieces of text, and from the region's edges
LINESPACING = 1.4  # of titles and captions: with the PDF's core fonts matplotlib spaces lines by the height of
#                    'lp' (0.72 of the font size), so 1.1 would draw the lines of a caption into each other


def caption_text(figure: Figure, provenance: str) -> str:
    """The caption under a drawn figure: what it shows, then what made it (draw() wraps it to the width)."""
    return " ".join(part for part in (figure.caption, provenance) if part)


def _head(canvas: Any, figure: Figure, box: tuple[float, float, float, float]) -> float:
    """The title (and subtitle) centred at the top of `box` (left, bottom, width, height in inches), wrapped to its
    width; returns the height they take."""
    left_in, bottom_in, width_in, height_in = box
    canvas_w, canvas_h = canvas.get_size_inches()
    used_in = PAD_IN
    for text, pt, colour in ((figure.title, style.TITLE_PT, style.BLACK),
                             (figure.subtitle, style.LEGEND_PT + 1, style.CAPTION)):
        if not text:
            continue
        wrapped = fit.wrap(text, width_in - 2 * PAD_IN, pt)
        canvas.text((left_in + width_in / 2) / canvas_w, (bottom_in + height_in - used_in) / canvas_h, wrapped,
                    fontsize=pt, color=colour, ha="center", va="top", linespacing=LINESPACING)
        used_in += fit.lines_in(wrapped.count("\n") + 1, pt) + 0.04
    return used_in + PAD_IN


def draw(figure: Figure, canvas: Any, region: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 1.0),
         caption: str = "") -> Any:
    """Draw the figure on `canvas` (a matplotlib Figure) inside `region` (left, bottom, width, height as figure
    fractions): the title on top, the plot, its legend on the right, the caption under it. No layout engine: the
    room each text takes is estimated from its characters (fit.py), so nothing collides or leaves the region."""
    canvas_w, canvas_h = canvas.get_size_inches()
    box = (region[0] * canvas_w, region[1] * canvas_h, region[2] * canvas_w, region[3] * canvas_h)
    left_in, bottom_in, width_in, height_in = box
    if caption:
        caption = fit.wrap(caption, width_in - 2 * PAD_IN, style.CAPTION_PT)
        canvas.text((left_in + PAD_IN) / canvas_w, (bottom_in + 0.04) / canvas_h, caption,
                    fontsize=style.CAPTION_PT, color=style.CAPTION, ha="left", va="bottom", linespacing=LINESPACING)
    caption_in = fit.lines_in(caption.count("\n") + 1, style.CAPTION_PT) + 0.1 if caption else 0.0
    top_in = _head(canvas, figure, box)
    inner = (left_in, bottom_in + caption_in, width_in, height_in - caption_in - top_in)
    if figure.kind in ("bars3d", "surface"):
        return _draw_3d(canvas, figure, inner)
    axes = canvas.add_axes((0.1, 0.1, 0.5, 0.5))
    if figure.kind == "heatmap":
        _draw_heatmap(axes, figure)
    else:
        _draw_lines(axes, figure)
        axes.set_ylim(*figure.y_range)
    finish_axes(axes, figure.x_label, figure.y_label)
    if figure.kind == "heatmap":
        axes.grid(False)
    _place(canvas, axes, figure, inner)
    return axes


def _y_labels_in(axes: Any) -> float:
    """Width of the widest y tick label the axes will draw."""
    axis = axes.yaxis
    low, high = sorted(axes.get_ylim())
    locations = [value for value in axis.get_major_locator()() if low <= value <= high]
    formatter = axis.get_major_formatter()
    formatter.set_locs(locations)
    return max((fit.text_in(str(formatter(value, index)), TICK_PT) for index, value in enumerate(locations)),
               default=0.0)


def _place(canvas: Any, axes: Any, figure: Figure, inner: tuple[float, float, float, float]) -> None:
    """Put 2D axes in `inner` (inches) with room for their tick labels, axis titles, legend (or colour bar) and
    data table; ticks thinned to the room they get."""
    left_in, bottom_in, width_in, height_in = inner
    canvas_w, canvas_h = canvas.get_size_inches()
    table_in = _data_table_in(figure)
    label_in = fit.lines_in(1, AXIS_PT)
    _tick_density(axes, figure, height_in - table_in - 0.7)
    margin_left_in = PAD_IN + label_in + 0.08 + _y_labels_in(axes) + 0.1
    right_in = 1.05 if figure.kind == "heatmap" else 0.25  # the colour bar and its labels
    names = [series.name for series in figure.series] if figure.kind != "heatmap" else []
    # the legend may reach down beside the x tick labels and axis title: nothing else is there
    legend = fit.fit_legend(names, height_in - table_in - 0.1, width_in * 0.4, style.LEGEND_PT)
    legend_in = legend.width_in + 0.15 if names else 0.0
    axes_w_in = max(width_in - margin_left_in - legend_in - right_in, 0.3)
    ticks = _x_ticks(axes, figure, axes_w_in)
    axes_h_in = max(height_in - table_in - ticks.height_in - label_in - 0.2, 0.3)
    axes_bottom_in = bottom_in + table_in + ticks.height_in + label_in + 0.2
    axes.set_position(((left_in + margin_left_in) / canvas_w, axes_bottom_in / canvas_h, axes_w_in / canvas_w,
                       axes_h_in / canvas_h))
    if ticks.shown:
        axes.set_xticks([position for position, _ in ticks.shown], [label for _, label in ticks.shown],
                        rotation=ticks.rotation, fontsize=TICK_PT)
        axes.set_xticks([], minor=True)
    if figure.kind == "heatmap":
        _heatmap_scale(canvas, axes, figure, ((left_in + margin_left_in + axes_w_in + 0.12) / canvas_w,
                                              axes_bottom_in / canvas_h, 0.14 / canvas_w, axes_h_in / canvas_h))
    if names:
        handles, labels = axes.get_legend_handles_labels()
        fitted = dict(zip(names, legend.labels, strict=True))
        axes.legend(handles, [fitted.get(label, label) for label in labels], title=legend.title or None,
                    ncols=legend.columns,
                    fontsize=style.LEGEND_PT, title_fontsize=style.LEGEND_PT, loc="upper left",
                    bbox_to_anchor=(1.0 + 0.12 / axes_w_in, 1.0), frameon=False, borderaxespad=0.0,
                    borderpad=0.0, handlelength=1.6, handletextpad=0.5, columnspacing=1.2, alignment="left")
    if table_in:
        _draw_data_table(canvas, figure, ((left_in + margin_left_in) / canvas_w, (bottom_in + 0.05) / canvas_h,
                                          axes_w_in / canvas_w, (table_in - 0.15) / canvas_h))


def _tick_density(axes: Any, figure: Figure, height_in: float) -> None:
    """Y ticks (and automatic x ticks) no closer than their labels allow: log axes label 1, 2 and 5 of each decade
    only where a decade is tall enough, and fewer decades where even one label each would touch."""
    from matplotlib.ticker import LogLocator, MaxNLocator

    if figure.y_log and figure.kind != "heatmap":
        low, high = (value for value in sorted(axes.get_ylim()))
        decades = max(math.log10(max(high, 1e-300) / max(low, 1e-300)), 1.0)
        per_decade_in = height_in / decades
        subs = (1.0, 2.0, 5.0) if per_decade_in > 0.9 else (1.0,)  # 5 to 10: 0.3 of a decade, a label's height
        axes.yaxis.set_major_locator(LogLocator(base=10, subs=subs, numticks=max(2, int(height_in / 0.25))))
    elif figure.kind != "heatmap":
        axes.yaxis.set_major_locator(MaxNLocator(nbins=max(2, int(height_in / 0.35)), steps=[1, 2, 2.5, 5, 10],
                                                 integer=figure.y_label.startswith("round")))


def _x_ticks(axes: Any, figure: Figure, length_in: float) -> "fit.Ticks":
    """The x tick labels that fit `length_in`: the figure's own (categories, or chosen values) or automatic ones."""
    from matplotlib.ticker import LogLocator, MaxNLocator

    if figure.kind == "heatmap":
        assert figure.grid is not None
        ticks = tuple(enumerate(figure.grid.x_labels))
        return fit.fit_ticks([(float(x), label) for x, label in ticks], length_in, max(len(ticks), 1), TICK_PT, 0.8)
    low, high = sorted(axes.get_xlim())
    if figure.x_ticks:
        span = math.log10(high / low) if figure.x_log and low > 0 else high - low
        shown = [(math.log10(x) if figure.x_log else x, label) for x, label in figure.x_ticks
                 if low <= x <= high and (x > 0 or not figure.x_log)]
        fitted = fit.fit_ticks(shown, length_in, span, TICK_PT, 0.8)
        return fit.Ticks(tuple((10 ** x if figure.x_log else x, label) for x, label in fitted.shown),
                         fitted.rotation, fitted.height_in)
    widest_in = fit.text_in(f"{max(abs(low), abs(high)):,.1f}", TICK_PT) + 0.25
    if figure.x_log:
        axes.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0,), numticks=max(2, int(length_in / widest_in))))
    else:
        axes.xaxis.set_major_locator(MaxNLocator(nbins=max(2, int(length_in / widest_in)), steps=[1, 2, 2.5, 5, 10],
                                                 integer=figure.x_label.startswith("round")))
    return fit.Ticks((), 0, fit.lines_in(1, TICK_PT))


def _log_axis(axes: Any, axis: Any) -> None:
    """A log axis labelled in plain numbers, without minor ticks (each tick is costly to draw and the labelled ones
    are what a reader uses)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

    (axes.set_xscale if axis is axes.xaxis else axes.set_yscale)("log")
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0), numticks=12))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(plain_number))


def _draw_lines(axes: Any, figure: Figure) -> None:
    import numpy as np

    palette = palette_of(figure)
    offsets = bar_offsets(figure)
    for position, series in enumerate(figure.series):
        y = np.asarray(series.y, dtype=float)  # None: NaN, a gap
        color = color_of(series, position, palette)
        if position in offsets:
            offset, width = offsets[position]
            axes.bar([x + offset for x in series.x], y, width, label=series.name, color=color, log=figure.y_log)
        elif series.mode == "band":
            _draw_band(axes, series, y, color)
        else:
            draw_line(axes, series.x, y, series.name, color, series.mode, series.dash,
                      series.width or style.LINE_WIDTH, None if series.opacity == 1.0 else series.opacity)
    for region in figure.regions:
        axes.axvspan(region.x_start, region.x_end, color=REGION_COLOR, alpha=REGION_ALPHA, linewidth=0, zorder=0)
        axes.text((region.x_start + region.x_end) / 2, 0.98, region.label, transform=axes.get_xaxis_transform(),
                  ha="center", va="top", fontsize=style.LEGEND_PT, color=REGION_COLOR)
    for axis, log in ((axes.xaxis, figure.x_log), (axes.yaxis, figure.y_log)):
        if log:
            _log_axis(axes, axis)


def _draw_band(axes: Any, series: Series, high: Any, color: str) -> None:
    """A band from series.low up to high, a step per x; its edges drawn too, so one-point columns stay visible."""
    axes.fill_between(series.x, series.low, high, step="mid", color=color, alpha=0.35 * series.opacity, linewidth=0,
                      label=series.name)
    for edge in (series.low, high):
        axes.step(series.x, edge, where="mid", color=color, linewidth=0.6, alpha=series.opacity)


TABLE_ROW_IN = 0.17


def _data_table_in(figure: Figure) -> float:
    """Height kept under the x axis title for the data table."""
    if not figure.data_table or figure.grid is not None or not figure.series:
        return 0.0
    return 0.15 + TABLE_ROW_IN * (len(figure.series) + 1)


def _draw_data_table(canvas: Any, figure: Figure, region: tuple[float, float, float, float]) -> None:
    """The plotted values under the chart: a row per series, a column per x value (fio-plot's --show-data)."""
    columns = list(dict.fromkeys(x for series in figure.series for x in series.x))
    labels = dict(figure.x_ticks)
    header = [labels.get(x, plain_number(float(x))) for x in columns]
    rows = []
    for series in figure.series:
        values = dict(zip(series.x, series.y, strict=False))
        rows.append([compact_number(values.get(x)) for x in columns])
    axes = canvas.add_axes(region)
    axes.axis("off")
    table = axes.table(cellText=rows, rowLabels=[fit.shortened(series.name, 24) for series in figure.series],
                       colLabels=header, loc="upper center", cellLoc="right", bbox=(0.0, 0.0, 1.0, 1.0))
    table.auto_set_font_size(False)
    table.set_fontsize(style.LEGEND_PT)


def compact_number(value: Number | None) -> str:
    """A value in at most three significant digits and a k, M, G or T: what fits a table cell or a heatmap's cell."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    for divisor, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= divisor * 0.9995:
            return f"{value / divisor:.3g}{suffix}"
    return f"{value:.3g}"


def _draw_heatmap(axes: Any, figure: Figure) -> None:
    """bars3d's grid as coloured cells with their values written in (a 2D view of the 3D bars)."""
    assert figure.grid is not None
    grid = figure.grid
    values = [[math.nan if value is None else float(value) for value in row] for row in grid.z]
    axes.imshow(values, cmap="viridis", aspect="auto", origin="lower")
    finite = [value for row in values for value in row if math.isfinite(value)]
    middle = (min(finite) + max(finite)) / 2 if finite else 0.0
    for row_index, row in enumerate(values):
        for column, value in enumerate(row):
            if math.isfinite(value):
                axes.text(column, row_index, compact_number(value), ha="center", va="center", fontsize=TICK_PT,
                          color="black" if value > middle else "white", clip_on=True)
    axes.set_yticks(range(len(grid.y_labels)), grid.y_labels)


def _heatmap_scale(canvas: Any, axes: Any, figure: Figure, rect: tuple[float, float, float, float]) -> None:
    """The heatmap's colour bar in `rect` (figure fractions), and its rows' labels thinned to the axes' height."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    assert figure.grid is not None
    labels = figure.grid.y_labels
    height_in = rect[3] * canvas.get_size_inches()[1]
    width_in = axes.get_position().width * canvas.get_size_inches()[0]
    cells = axes.texts
    if cells and (max(fit.text_in(cell.get_text(), TICK_PT) for cell in cells) > width_in / len(figure.grid.x_labels)
                  or fit.lines_in(1, TICK_PT) > height_in / len(labels)):
        for cell in cells:  # too small to write the values in: the colours and the tables tell them
            cell.set_visible(False)
    step = max(1, math.ceil(len(labels) * fit.lines_in(1, TICK_PT) * 1.1 / max(height_in, 0.1)))
    axes.set_yticks(range(0, len(labels), step), labels[::step])
    colorbar = canvas.colorbar(axes.images[0], cax=canvas.add_axes(rect))
    colorbar.set_label(figure.z_label, fontsize=AXIS_PT)
    colorbar.ax.tick_params(labelsize=TICK_PT)
    colorbar.ax.yaxis.set_major_locator(MaxNLocator(nbins=max(2, int(height_in / 0.3))))
    colorbar.ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _position: compact_number(value)))


def _draw_3d(canvas: Any, figure: Figure, inner: tuple[float, float, float, float]) -> Any:
    """3D bars or a surface in `inner` (inches), the legend of the bars' colours on the right."""
    import mpl_toolkits.mplot3d  # noqa: F401  (registers the 3d projection)
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    assert figure.grid is not None
    left_in, bottom_in, width_in, height_in = inner
    canvas_w, canvas_h = canvas.get_size_inches()
    grid = figure.grid
    legend = fit.fit_legend(list(grid.x_labels), height_in - 0.1, width_in * 0.3, style.LEGEND_PT) \
        if figure.kind == "bars3d" else fit.fit_legend([], 0.0, 0.0, style.LEGEND_PT)
    legend_in = legend.width_in + 0.2 if legend.labels else 0.0
    axes_w_in = max(width_in - legend_in - 0.1, 0.5)
    axes = canvas.add_axes((left_in / canvas_w, bottom_in / canvas_h, axes_w_in / canvas_w, height_in / canvas_h),
                           projection="3d")
    # a box as deep and wide as its categories ask, on a page's width: tick labels spread out along its edges
    columns, rows = max(len(grid.x_labels), 1), max(len(grid.y_labels), 1)
    axes.set_box_aspect((columns * 2.0, rows * 1.4, 0.45 * max(columns, rows)), zoom=1.0)
    (_draw_bars3d if figure.kind == "bars3d" else _draw_surface)(axes, figure)
    # long names of many columns or rows are the tick labels most likely to touch: the smaller the box, the fewer
    rows_fit = max(1, int(min(axes_w_in, height_in) / 0.16))
    for set_ticks, labels in ((axes.set_xticks, grid.x_labels), (axes.set_yticks, grid.y_labels)):
        step = max(1, math.ceil(len(labels) / rows_fit))
        set_ticks(range(0, len(labels), step), labels[::step], fontsize=TICK_PT)
    axes.set_xlabel(figure.x_label, fontsize=AXIS_PT, labelpad=16 + 4 * max(map(len, grid.x_labels), default=0))
    axes.set_ylabel(figure.y_label, fontsize=AXIS_PT, labelpad=16 + 4 * max(map(len, grid.y_labels), default=0))
    axes.set_zlabel(figure.z_label, fontsize=AXIS_PT, labelpad=8)
    axes.tick_params(axis="z", labelsize=TICK_PT, pad=1)
    axes.zaxis.set_major_locator(MaxNLocator(nbins=min(5, max(columns, rows))))  # as tall as the box is deep
    axes.zaxis.set_major_formatter(FuncFormatter(lambda value, _position: compact_number(value)))
    if legend.labels:
        from matplotlib.patches import Patch

        palette = palette_of(figure)
        handles = [Patch(color=palette[column % len(palette)]) for column in range(len(grid.x_labels))]
        canvas.legend(handles, legend.labels, title=legend.title or None, ncols=legend.columns,
                      fontsize=style.LEGEND_PT, title_fontsize=style.LEGEND_PT, loc="upper right",
                      bbox_to_anchor=((left_in + width_in - 0.05) / canvas_w, (bottom_in + height_in) / canvas_h),
                      frameon=False, borderaxespad=0.0, borderpad=0.0, handlelength=1.2, alignment="left")
    return axes


def _draw_bars3d(axes: Any, figure: Figure) -> None:
    assert figure.grid is not None
    bars = figure.grid
    palette = palette_of(figure)
    for column, _label in enumerate(bars.x_labels):
        cells = [(row, value) for row, values in enumerate(bars.z) if (value := values[column]) is not None]
        if not cells:
            continue
        axes.bar3d([column - 0.35] * len(cells), [row - 0.35 for row, _ in cells], 0.0, 0.7, 0.7,
                   [value for _, value in cells], color=palette[column % len(palette)], shade=True)
    if figure.y_range[1] is not None:
        axes.set_zlim(0, figure.y_range[1])


def _draw_surface(axes: Any, figure: Figure) -> None:
    """The grid as a surface over its two categorical axes (NaN where nothing was measured)."""
    import numpy as np

    assert figure.grid is not None
    grid = figure.grid
    z = np.asarray(grid.z, dtype=float)
    x, y = np.meshgrid(np.arange(len(grid.x_labels)), np.arange(len(grid.y_labels)))
    axes.plot_surface(x, y, z, cmap="viridis", edgecolor="#333333", linewidth=0.3)
    if figure.y_range[1] is not None:
        axes.set_zlim(0, figure.y_range[1])


DEFAULT_DPI = 200  # a report's PNG figures: 1800 x 1000 pixels, sharp on a laptop's high-density screen


def drawn_file(figure: Figure, provenance: str, size_in: tuple[float, float] = (WIDTH_IN, HEIGHT_IN)) -> Any:
    """The figure drawn on a matplotlib Figure of its own (a PNG or SVG file's canvas), captioned."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as MplFigure

    drawn = MplFigure(figsize=size_in)
    FigureCanvasAgg(drawn)
    draw(figure, drawn, caption=caption_text(figure, provenance))
    return drawn


def write_figure_files(figure: Figure, directory: Path, provenance: str, dpi: int = 100,
                       formats: Sequence[str] = ("png", "svg"),
                       size_in: tuple[float, float] = (WIDTH_IN, HEIGHT_IN)) -> list[Path]:
    """figures/KEY.png and KEY.svg (of `formats`), each written to a temporary name and renamed; provenance also in
    metadata."""
    import matplotlib

    drawn = drawn_file(figure, provenance, size_in)
    written = []
    options: tuple[tuple[str, dict[str, Any]], ...] = (
        ("png", {"metadata": {"Title": figure.title, "Description": provenance, "Software": "ptsbench"},
                 "pil_kwargs": {"compress_level": 1}}),
        ("svg", {"metadata": {"Title": figure.title, "Description": provenance, "Creator": "ptsbench"}}),
    )
    # SVG text stays text: smaller, faster, searchable; long paths (`ptsbench plot`'s bands) drawn in chunks
    with matplotlib.rc_context({"svg.fonttype": "none", "agg.path.chunksize": 20000}):
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
                       claims: Path | None = None, dpi: int = DEFAULT_DPI, formats: Sequence[str] = ("png", "svg"),
                       size_in: tuple[float, float] = (WIDTH_IN, HEIGHT_IN)) -> int:
    """The figures' files, skipping those another process has claimed; returns how many this call wrote."""
    written = 0
    for figure in figures:
        if claim(claims, figure.key):
            write_figure_files(figure, directory, provenance, dpi, formats, size_in)
            written += 1
    return written


def import_matplotlib() -> None:
    """Import matplotlib (its figure and Agg canvas) the first time, at less cost:
    - without the docs nobody reads here: as each artist class is defined, matplotlib writes the docstring of its
      set() from all its properties (matplotlib.artist.kwdoc), about a quarter of its import time;
    - without the cyclic garbage collector scanning the import's objects again and again: they live as long as the
      process, so they are frozen (left out of later collections, the one at exit too). Together about 0.15 s of
      CPU in `ptsbench plot`."""
    if "matplotlib.figure" in sys.modules:
        return
    collecting = gc.isenabled()
    gc.disable()
    try:
        import matplotlib.artist

        matplotlib.artist.kwdoc = lambda artist: ""
        import matplotlib.backends.backend_agg
        import matplotlib.figure  # noqa: F401 - for write_figure_files
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


class DrawWorker:
    """A `python -m ptsbench.report.core.draw_mpl` process: it imports matplotlib at once (so the import overlaps
    the caller's own work), then writes each batch of figures pickled on its stdin (write_figure_batch's keyword
    arguments) until its stdin closes. Unlike multiprocessing it never re-runs the caller's script."""

    def __init__(self) -> None:
        import subprocess
        import tempfile

        # a file, not a pipe: however much the worker writes there, neither process ever blocks; closed by stop()
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115
        self.process = subprocess.Popen([sys.executable, "-m", "ptsbench.report.core.draw_mpl"],
                                        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self.stderr)

    def send(self, **batch: Any) -> None:
        """Hand a batch over; a worker that died already is reported by finish()."""
        import pickle

        assert self.process.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            self.process.stdin.write(pickle.dumps(batch))
            self.process.stdin.flush()

    def finish(self) -> str | None:
        """Wait until every batch is written; None, or the last line the failed worker wrote to its stderr."""
        assert self.process.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            self.process.stdin.close()
        if self.process.wait() == 0:
            return None
        self.stderr.seek(0)
        stderr = self.stderr.read()
        return (stderr.decode(errors="replace").strip().splitlines() or [f"exit status {self.process.returncode}"])[-1]

    def stop(self) -> None:
        """End the worker if it still runs (the caller failed or was interrupted): no process is left behind. It is
        interrupted first, so that a file it is writing leaves no temporary behind, and killed if it does not end."""
        import signal
        import subprocess

        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.process.wait()
        if self.process.stdin is not None and not self.process.stdin.closed:
            with contextlib.suppress(BrokenPipeError):
                self.process.stdin.close()
        self.stderr.close()


def main() -> None:
    """`python -m ptsbench.report.core.draw_mpl`: DrawWorker's process."""
    import pickle

    import_matplotlib()
    while True:
        try:
            batch = pickle.load(sys.stdin.buffer)
        except EOFError:
            return
        write_figure_batch(**batch)


if __name__ == "__main__":
    main()
