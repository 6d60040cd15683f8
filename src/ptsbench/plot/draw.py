"""Writing `ptsbench plot`'s charts: report Figures (report/core/figure.py) drawn by the report's two renderers,
matplotlib for PNG / SVG and plotly for one self-contained HTML file (plotly.js inline), in the user's style."""

import gc
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from ptsbench.report.core.figure import Figure

FORMATS = ("png", "svg", "html")
WIDTH_IN, HEIGHT_IN, DPI = 12.0, 6.0, 100
PLOT_COLUMNS = 1200  # pixel columns kept by the min/max reduction: more than the plot area has at WIDTH_IN x DPI


@dataclass(frozen=True)
class Look:
    """The user's own chart style (fio-plot's --line-width, --enable-markers, --colors, --dpi)."""

    line_width: float | None = None
    markers: bool = False
    colors: tuple[str, ...] = ()  # in place of the palette, colour by colour in order of first use
    dpi: int = DPI


def styled(figure: Figure, look: Look) -> Figure:
    """The figure drawn in the user's style."""
    used = list(dict.fromkeys(series.color for series in figure.series))
    colors = {color: look.colors[index % len(look.colors)] for index, color in enumerate(used)} if look.colors else {}
    series = tuple(replace(one, width=look.line_width or one.width, color=colors.get(one.color, one.color),
                           mode="lines+markers" if look.markers and one.mode == "lines" else one.mode)
                   for one in figure.series)
    return replace(figure, series=series)


def write_chart(figure: Figure, directory: Path, file_format: str, look: Look = Look()) -> Path:
    """Draw the figure into DIRECTORY/KEY.FORMAT (written under a temporary name, then renamed)."""
    figure = styled(figure, look)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{figure.key}.{file_format}"
    if file_format == "html":
        from ptsbench.report.core.draw_plotly import page_html
        from ptsbench.report.core.layout import atomic_file

        text = page_html(figure, figure.caption)
        with atomic_file(path) as temporary:  # a failed write (a full disk) leaves no partial chart behind
            temporary.write_text(text)
    else:
        from ptsbench.report.core.draw_mpl import write_figure_files

        import_matplotlib()
        write_figure_files(figure, directory, "", look.dpi, (file_format,), (WIDTH_IN, HEIGHT_IN))
    return path


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
        import matplotlib.figure  # noqa: F401 - for report/core/draw_mpl.py
    finally:
        gc.freeze()
        if collecting:
            gc.enable()
