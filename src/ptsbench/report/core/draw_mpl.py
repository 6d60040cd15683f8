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
from ptsbench.report.core.draw_mpl_grid import compact_number, draw_3d, draw_heatmap, heatmap_scale
from ptsbench.report.core.figure import (
    REGION_ALPHA,
    REGION_COLOR,
    Figure,
    Series,
    bar_offsets,
    color_of,
    palette_of,
    plain_number,
)
from ptsbench.report.core.layout import atomic_file
from ptsbench.report.core.table_layout import wrap_name

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
    axes.set_xlabel(x_label, fontsize=style.AXIS_PT)
    axes.set_ylabel(y_label, fontsize=style.AXIS_PT)
    axes.tick_params(labelsize=style.TICK_PT)
    axes.grid(True, which="major", color=style.GRID, linewidth=0.6)


WIDTH_IN, HEIGHT_IN = 9.0, 5.0
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
        return draw_3d(canvas, figure, inner)
    axes = canvas.add_axes((0.1, 0.1, 0.5, 0.5))
    right = axes.twinx() if figure.has_y2() else None  # the second y axis: the same x, its own scale on the right
    if figure.kind == "heatmap":
        draw_heatmap(axes, figure)
    else:
        _draw_lines(axes, figure, right)
        axes.set_ylim(*figure.y_range)
    finish_axes(axes, figure.x_label, figure.y_label)
    if right is not None:
        right.set_ylim(*figure.y2_range)
        plain_ticks(right)
        right.set_ylabel(figure.y2_label, fontsize=style.AXIS_PT)
        right.tick_params(labelsize=style.TICK_PT)
    if figure.kind == "heatmap":
        axes.grid(False)
    _place(canvas, axes, figure, inner, right)
    return axes


def legend_names(figure: Figure) -> list[str]:
    """The names a 2D figure's legend lists: none for a heatmap, nor for one series the title or caption names."""
    names = [series.name for series in figure.series] if figure.kind != "heatmap" else []
    if len(names) == 1 and not figure.has_y2() and names[0].lower() in f"{figure.title} {figure.caption}".lower():
        return []  # a legend would only narrow the plot
    return names


def _legend(figure: Figure, names: Sequence[str], inner: tuple[float, float, float, float]) -> "fit.Legend":
    """The legend beside the plot in `inner` (inches): it may reach down beside the x tick labels and axis title,
    as nothing else is there."""
    return fit.fit_legend(names, inner[3] - _data_table_in(figure) - 0.1, inner[2] * 0.4, style.LEGEND_PT)


def legend_fits(figure: Figure, width_in: float, height_in: float, caption: str) -> bool:
    """Whether draw() in a region of `width_in` x `height_in` would show every legend name whole (a figure of many
    long names needs a larger region: the PDF gives it the page's width)."""
    names = legend_names(figure)
    if not names:
        return True
    caption_in = fit.lines_in(fit.wrap(caption, width_in - 2 * PAD_IN, style.CAPTION_PT).count("\n") + 1,
                              style.CAPTION_PT) + 0.1 if caption else 0.0
    head_in = 2 * PAD_IN + sum(fit.lines_in(fit.wrap(text, width_in - 2 * PAD_IN, pt).count("\n") + 1, pt) + 0.04
                               for text, pt in ((figure.title, style.TITLE_PT), (figure.subtitle, style.LEGEND_PT + 1))
                               if text)
    return _legend(figure, names, (0.0, 0.0, width_in, height_in - caption_in - head_in)).fits


def _y_labels_in(axes: Any) -> float:
    """Width of the widest y tick label the axes will draw."""
    axis = axes.yaxis
    low, high = sorted(axes.get_ylim())
    locations = [value for value in axis.get_major_locator()() if low <= value <= high]
    formatter = axis.get_major_formatter()
    formatter.set_locs(locations)
    return max((fit.text_in(str(formatter(value, index)), style.TICK_PT) for index, value in enumerate(locations)),
               default=0.0)


def _y_title_in(axes: Any, height_in: float) -> float:
    """The y axis title wrapped to about the axes' height (a long one would reach past them, over the figure's
    title); returns the width its lines take."""
    wrapped = fit.wrap(axes.get_ylabel(), height_in, style.AXIS_PT)
    axes.set_ylabel(wrapped, fontsize=style.AXIS_PT)
    return fit.lines_in(wrapped.count("\n") + 1, style.AXIS_PT)


def _place(canvas: Any, axes: Any, figure: Figure, inner: tuple[float, float, float, float],
           right: Any = None) -> None:
    """Put 2D axes in `inner` (inches) with room for their tick labels, axis titles, second y axis, legend (or
    colour bar) and data table; ticks thinned to the room they get."""
    left_in, bottom_in, width_in, height_in = inner
    canvas_w, canvas_h = canvas.get_size_inches()
    table_in = _data_table_in(figure)
    label_in = fit.lines_in(1, style.AXIS_PT)
    if figure.kind != "heatmap":
        _y_ticks(axes, figure.y_log, figure.y_label, height_in - table_in - 0.7)
    margin_left_in = PAD_IN + _y_title_in(axes, height_in - table_in - 0.7) + 0.08 + _y_labels_in(axes) + 0.1
    right_in = 1.05 if figure.kind == "heatmap" else 0.25  # the colour bar and its labels
    if right is not None:  # the second axis' tick labels and title, then the legend beyond them
        _y_ticks(right, figure.y2_log, figure.y2_label, height_in - table_in - 0.7)
        right_in += 0.1 + _y_labels_in(right) + 0.08 + _y_title_in(right, height_in - table_in - 0.7)
    names = legend_names(figure)
    legend = _legend(figure, names, inner)
    legend_in = legend.width_in + 0.15 if names else 0.0
    axes_w_in = max(width_in - margin_left_in - legend_in - right_in, 0.3)
    # upright tick labels may take up to 0.8 in, or 30 % of a taller figure's height (long names whole in a file)
    ticks = _x_ticks(axes, figure, axes_w_in, max(0.8, 0.3 * (height_in - table_in)))
    if ticks.shared:  # what every category's name shares, said once, wrapped after separators to the axes' width
        chars = max(8, int(axes_w_in * 72 / (style.AXIS_PT * fit.CHAR_EM)))
        x_title = "\n".join(wrap_name(f"{figure.x_label} ({ticks.shared})", chars))
        axes.set_xlabel(x_title, fontsize=style.AXIS_PT)
        label_in = fit.lines_in(x_title.count("\n") + 1, style.AXIS_PT)
    axes_h_in = max(height_in - table_in - ticks.height_in - label_in - 0.2, 0.3)
    axes_bottom_in = bottom_in + table_in + ticks.height_in + label_in + 0.2
    if figure.kind != "heatmap" and axes_h_in < height_in - table_in - 0.7:  # tall x labels left less height than
        # the y ticks were chosen for (their labels then met: '55,000' over '50,000'): chosen again for what is left
        _y_ticks(axes, figure.y_log, figure.y_label, axes_h_in)
        if right is not None:
            _y_ticks(right, figure.y2_log, figure.y2_label, axes_h_in)
    for one in (axes, right) if right is not None else (axes,):
        one.set_position(((left_in + margin_left_in) / canvas_w, axes_bottom_in / canvas_h, axes_w_in / canvas_w,
                          axes_h_in / canvas_h))
    if ticks.shown:
        axes.set_xticks([position for position, _ in ticks.shown], [label for _, label in ticks.shown],
                        rotation=ticks.rotation, fontsize=style.TICK_PT)
        axes.set_xticks([], minor=True)
    if figure.kind == "heatmap":
        heatmap_scale(canvas, axes, figure, ((left_in + margin_left_in + axes_w_in + 0.12) / canvas_w,
                                             axes_bottom_in / canvas_h, 0.14 / canvas_w, axes_h_in / canvas_h))
    if names:
        handles, labels = axes.get_legend_handles_labels()
        if right is not None:
            more = right.get_legend_handles_labels()
            handles, labels = handles + more[0], labels + more[1]
        fitted = dict(zip(names, legend.labels, strict=True))
        # drawn by the axes on top (the second one's, when there is one), so no line or bar crosses it
        (right if right is not None else axes).legend(
            handles, [fitted.get(label, label) for label in labels], title=legend.title or None,
            ncols=legend.columns, fontsize=style.LEGEND_PT, title_fontsize=style.LEGEND_PT, loc="upper left",
            bbox_to_anchor=(1.0 + (0.12 + right_in - 0.25) / axes_w_in, 1.0), frameon=False, borderaxespad=0.0,
            borderpad=0.0, handlelength=1.6, handletextpad=0.5, columnspacing=1.2, alignment="left")
    if table_in:
        _draw_data_table(canvas, figure, ((left_in + margin_left_in) / canvas_w, (bottom_in + 0.05) / canvas_h,
                                          axes_w_in / canvas_w, (table_in - 0.15) / canvas_h))


def _y_ticks(axes: Any, log: bool, label: str, height_in: float) -> None:
    """Y ticks no closer than their labels allow: log axes label 1, 2 and 5 of each decade only where a decade is
    tall enough, and fewer decades where even one label each would touch."""
    from matplotlib.ticker import LogLocator, MaxNLocator

    if log:
        low, high = (value for value in sorted(axes.get_ylim()))
        decades = max(math.log10(max(high, 1e-300) / max(low, 1e-300)), 1.0)
        per_decade_in = height_in / decades
        subs = (1.0, 2.0, 5.0) if per_decade_in > 0.6 else (1.0,)  # 5 to 10: 0.3 of a decade, a label and a gap
        axes.yaxis.set_major_locator(LogLocator(base=10, subs=subs, numticks=max(2, int(height_in / 0.25))))
    else:
        axes.yaxis.set_major_locator(MaxNLocator(nbins=max(2, int(height_in / 0.35)), steps=[1, 2, 2.5, 5, 10],
                                                 integer=label.startswith("round")))


def _x_ticks(axes: Any, figure: Figure, length_in: float, most_in: float) -> "fit.Ticks":
    """The x tick labels that fit `length_in`: the figure's own (categories, or chosen values) or automatic ones."""
    from matplotlib.ticker import LogLocator, MaxNLocator

    if figure.kind == "heatmap":
        assert figure.grid is not None
        ticks = tuple(enumerate(figure.grid.x_labels))
        return fit.fit_ticks([(float(x), label) for x, label in ticks], length_in, max(len(ticks), 1), style.TICK_PT,
                             most_in)
    low, high = sorted(axes.get_xlim())
    if figure.x_ticks:
        span = math.log10(high / low) if figure.x_log and low > 0 else high - low
        shown = [(math.log10(x) if figure.x_log else x, label) for x, label in figure.x_ticks
                 if low <= x <= high and (x > 0 or not figure.x_log)]
        fitted = fit.fit_ticks(shown, length_in, span, style.TICK_PT, most_in)
        return fit.Ticks(tuple((10 ** x if figure.x_log else x, label) for x, label in fitted.shown),
                         fitted.rotation, fitted.height_in, fitted.shared)
    widest_in = fit.text_in(f"{max(abs(low), abs(high)):,.1f}", style.TICK_PT) + 0.25
    if figure.x_log:
        axes.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0,), numticks=max(2, int(length_in / widest_in))))
    else:
        axes.xaxis.set_major_locator(MaxNLocator(nbins=max(2, int(length_in / widest_in)), steps=[1, 2, 2.5, 5, 10],
                                                 integer=figure.x_label.startswith("round")))
    return fit.Ticks((), 0, fit.lines_in(1, style.TICK_PT))


def _log_axis(axes: Any, axis: Any) -> None:
    """A log axis labelled in plain numbers, without minor ticks (each tick is costly to draw and the labelled ones
    are what a reader uses)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

    (axes.set_xscale if axis is axes.xaxis else axes.set_yscale)("log")
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0), numticks=12))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(plain_number))


def _draw_lines(axes: Any, figure: Figure, right: Any = None) -> None:
    """The series on `axes`, those marked y2 on `right` (the second y axis), then regions and log scales."""
    import numpy as np

    palette = palette_of(figure)
    offsets = bar_offsets(figure)
    for position, series in enumerate(figure.series):
        y = np.asarray(series.y, dtype=float)  # None: NaN, a gap
        color = color_of(series, position, palette)
        on = right if series.y2 and right is not None else axes
        log = figure.y2_log if on is right else figure.y_log
        if position in offsets:
            offset, width = offsets[position]
            on.bar([x + offset for x in series.x], y, width, label=series.name, color=color, log=log)
        elif series.mode == "band":
            _draw_band(on, series, y, color)
        else:
            draw_line(on, series.x, y, series.name, color, series.mode, series.dash,
                      series.width or style.LINE_WIDTH, None if series.opacity == 1.0 else series.opacity)
    for region in figure.regions:
        axes.axvspan(region.x_start, region.x_end, color=REGION_COLOR, alpha=REGION_ALPHA, linewidth=0, zorder=0)
        axes.text((region.x_start + region.x_end) / 2, 0.98, region.label, transform=axes.get_xaxis_transform(),
                  ha="center", va="top", fontsize=style.LEGEND_PT, color=REGION_COLOR)
    for owner, axis, log in ((axes, axes.xaxis, figure.x_log), (axes, axes.yaxis, figure.y_log),
                             (right, right.yaxis if right is not None else None, figure.y2_log)):
        if log and owner is not None:
            _log_axis(owner, axis)


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


def _mark_set(cls: Any) -> None:
    """What matplotlib's Artist._update_set_signature_and_docstring keeps of its work here: the mark that a
    subclass's set() is the generated one (so its own subclasses get one too)."""
    cls.set._autogenerated_signature = True


def import_matplotlib() -> None:
    """Import matplotlib (its figure and Agg canvas) the first time, at less cost:
    - without the introspection nobody reads here: as each artist class is defined, matplotlib inspects all its
      methods to give its set() a signature and a docstring listing every property (artist.ArtistInspector, kwdoc:
      about 0.1 s of CPU); set() itself works as before (it reads the aliases, not the signature);
    - without the cyclic garbage collector scanning the import's objects again and again: they live as long as the
      process, so they are frozen (left out of later collections, the one at exit too)."""
    if "matplotlib.figure" in sys.modules:
        return
    collecting = gc.isenabled()
    gc.disable()
    try:
        import matplotlib.artist

        matplotlib.artist.kwdoc = lambda artist: ""
        artist: Any = matplotlib.artist.Artist
        artist._update_set_signature_and_docstring = classmethod(_mark_set)
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
