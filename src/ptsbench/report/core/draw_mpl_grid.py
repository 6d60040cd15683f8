"""The matplotlib renderer's figures of a Grid (figure.py): heatmaps (their values written in, a colour bar), 3D bars
and surfaces. draw_mpl.py lays out the region and calls these for the grid kinds.
"""

import math
from typing import Any

from ptsbench.report.core import fit, style
from ptsbench.report.core.figure import Figure, Number, palette_of


def compact_number(value: Number | None) -> str:
    """A value in at most three significant digits and a k, M, G or T: what fits a table cell or a heatmap's cell."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    for divisor, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= divisor * 0.9995:
            return f"{value / divisor:.3g}{suffix}"
    return f"{value:.3g}"


def draw_heatmap(axes: Any, figure: Figure) -> None:
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
                axes.text(column, row_index, compact_number(value), ha="center", va="center", fontsize=style.TICK_PT,
                          color="black" if value > middle else "white", clip_on=True)
    axes.set_yticks(range(len(grid.y_labels)), grid.y_labels)


def heatmap_scale(canvas: Any, axes: Any, figure: Figure, rect: tuple[float, float, float, float]) -> None:
    """The heatmap's colour bar in `rect` (figure fractions), and its rows' labels thinned to the axes' height."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    assert figure.grid is not None
    labels = figure.grid.y_labels
    height_in = rect[3] * canvas.get_size_inches()[1]
    width_in = axes.get_position().width * canvas.get_size_inches()[0]
    cells = axes.texts
    widest_in = max((fit.text_in(cell.get_text(), style.TICK_PT) for cell in cells), default=0.0)
    if cells and (widest_in > width_in / len(figure.grid.x_labels)
                  or fit.lines_in(1, style.TICK_PT) > height_in / len(labels)):
        for cell in cells:  # too small to write the values in: the colours and the tables tell them
            cell.set_visible(False)
    step = max(1, math.ceil(len(labels) * fit.lines_in(1, style.TICK_PT) * 1.1 / max(height_in, 0.1)))
    axes.set_yticks(range(0, len(labels), step), labels[::step])
    colorbar = canvas.colorbar(axes.images[0], cax=canvas.add_axes(rect))
    colorbar.set_label(figure.z_label, fontsize=style.AXIS_PT)
    colorbar.ax.tick_params(labelsize=style.TICK_PT)
    colorbar.ax.yaxis.set_major_locator(MaxNLocator(nbins=max(2, int(height_in / 0.3))))
    colorbar.ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _position: compact_number(value)))


def draw_3d(canvas: Any, figure: Figure, inner: tuple[float, float, float, float]) -> Any:
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
        set_ticks(range(0, len(labels), step), labels[::step], fontsize=style.TICK_PT)
    axes.set_xlabel(figure.x_label, fontsize=style.AXIS_PT, labelpad=16 + 4 * max(map(len, grid.x_labels), default=0))
    axes.set_ylabel(figure.y_label, fontsize=style.AXIS_PT, labelpad=16 + 4 * max(map(len, grid.y_labels), default=0))
    axes.set_zlabel(figure.z_label, fontsize=style.AXIS_PT, labelpad=8)
    axes.tick_params(axis="z", labelsize=style.TICK_PT, pad=1)
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
