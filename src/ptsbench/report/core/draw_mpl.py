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

from ptsbench.report.core import style
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


WIDTH_IN, HEIGHT_IN = 9.0, 5.0


def caption_text(figure: Figure, provenance: str, width_chars: int = 170) -> str:
    """The caption under a drawn figure: what it shows, then what made it."""
    import textwrap

    return textwrap.fill(" ".join(part for part in (figure.caption, provenance) if part), width_chars)


def _legend_in(figure: Figure) -> float:
    """Width kept right of the axes for the legend (outside the plot, so it never hides data)."""
    if figure.grid is not None:
        return 1.2 if figure.kind == "heatmap" else 0.9
    longest = max((len(series.name) for series in figure.series), default=0)
    return min(0.55 + longest * style.LEGEND_PT * 0.55 / 72, 3.2)


def draw(figure: Figure, canvas: Any, region: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 1.0),
         caption: str = "") -> Any:
    """Draw the figure on `canvas` (a matplotlib Figure) inside `region` (left, bottom, width, height as figure
    fractions): the plot, its legend on the right, the caption under it. Fixed margins: no layout engine."""
    width_in, height_in = canvas.get_size_inches()
    left, bottom, width, height = region
    caption_in = (caption.count("\n") + 1) * style.CAPTION_PT * 1.3 / 72 + 0.06 if caption else 0.0
    three_d = figure.kind in ("bars3d", "surface")
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
        (_draw_bars3d if figure.kind == "bars3d" else _draw_surface)(axes, figure)
    elif figure.kind == "heatmap":
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


def _log_axis(axes: Any, axis: Any) -> None:
    """A log axis labelled at 1, 2 and 5 of every decade, in plain numbers, without minor ticks (each tick is
    costly to draw and the labelled ones are what a reader uses)."""
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
    if figure.x_ticks:
        axes.set_xticks([position for position, _ in figure.x_ticks], [label for _, label in figure.x_ticks])
        axes.set_xticks([], minor=True)
    elif figure.x_label.startswith("round"):  # whole rounds: no 1.5
        from matplotlib.ticker import MaxNLocator

        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    finish_axes(axes, figure.title, figure.x_label, figure.y_label, legend=bool(figure.series))


def _draw_band(axes: Any, series: Series, high: Any, color: str) -> None:
    """A band from series.low up to high, a step per x; its edges drawn too, so one-point columns stay visible."""
    axes.fill_between(series.x, series.low, high, step="mid", color=color, alpha=0.35 * series.opacity, linewidth=0,
                      label=series.name)
    for edge in (series.low, high):
        axes.step(series.x, edge, where="mid", color=color, linewidth=0.6, alpha=series.opacity)


TABLE_ROW_IN = 0.17


def _data_table_in(figure: Figure) -> float:
    """Height kept under the axes for the data table (the x tick labels sit between them)."""
    if not figure.data_table or figure.grid is not None or not figure.series:
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
    assert figure.grid is not None
    grid = figure.grid
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


def _label_3d(axes: Any, figure: Figure) -> None:
    """A 3D view's category ticks, axis labels and title."""
    assert figure.grid is not None
    grid = figure.grid
    axes.set_xticks(range(len(grid.x_labels)), grid.x_labels, fontsize=8)
    axes.set_yticks(range(len(grid.y_labels)), grid.y_labels, fontsize=8)
    axes.set_xlabel(figure.x_label, fontsize=8)
    axes.set_ylabel(figure.y_label, fontsize=8)
    axes.set_zlabel(figure.z_label, fontsize=8)
    axes.tick_params(axis="z", labelsize=8)
    axes.set_title(figure.title, fontsize=11, y=1.0)


def _draw_bars3d(axes: Any, figure: Figure) -> None:
    from matplotlib.patches import Patch

    assert figure.grid is not None
    bars = figure.grid
    palette = palette_of(figure)
    for column, _label in enumerate(bars.x_labels):
        cells = [(row, value) for row, values in enumerate(bars.z) if (value := values[column]) is not None]
        if not cells:
            continue
        axes.bar3d([column - 0.35] * len(cells), [row - 0.35 for row, _ in cells], 0.0, 0.7, 0.7,
                   [value for _, value in cells], color=palette[column % len(palette)], shade=True)
    _label_3d(axes, figure)
    handles = [Patch(color=palette[column % len(palette)], label=label) for column, label in enumerate(bars.x_labels)]
    axes.legend(handles=handles, fontsize=style.LEGEND_PT, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)


def _draw_surface(axes: Any, figure: Figure) -> None:
    """The grid as a surface over its two categorical axes (NaN where nothing was measured)."""
    import numpy as np

    assert figure.grid is not None
    grid = figure.grid
    z = np.asarray(grid.z, dtype=float)
    x, y = np.meshgrid(np.arange(len(grid.x_labels)), np.arange(len(grid.y_labels)))
    axes.plot_surface(x, y, z, cmap="viridis", edgecolor="#333333", linewidth=0.3)
    _label_3d(axes, figure)


DEFAULT_DPI = 200  # a report's PNG figures: 1800 x 1000 pixels, sharp on a laptop's high-density screen


def write_figure_files(figure: Figure, directory: Path, provenance: str, dpi: int = 100,
                       formats: Sequence[str] = ("png", "svg"),
                       size_in: tuple[float, float] = (WIDTH_IN, HEIGHT_IN)) -> list[Path]:
    """figures/KEY.png and KEY.svg (of `formats`), each written to a temporary name and renamed; provenance also in
    metadata."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as MplFigure

    drawn = MplFigure(figsize=size_in)
    FigureCanvasAgg(drawn)
    draw(figure, drawn, caption=caption_text(figure, provenance, width_chars=int(size_in[0] * 19)))
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
