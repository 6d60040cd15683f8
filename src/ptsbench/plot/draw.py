"""Writing `ptsbench plot`'s charts: report Figures (report/core/figure.py) drawn by the report's two renderers,
matplotlib for PNG / SVG and plotly for one self-contained HTML file (plotly.js inline), in the user's style."""

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ptsbench.report.core.draw_mpl import import_matplotlib
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


MATPLOTLIB_FORMATS = ("png", "svg")


class ChartWriter:
    """Writes charts in the user's style into a folder: PNG / SVG with matplotlib, HTML with plotly. (Handing the
    PNG / SVG to a second process that imports matplotlib while the logs are read was measured slower: see
    bench/README.md.)"""

    def __init__(self, directory: Path, formats: Sequence[str], look: Look = Look()) -> None:
        self.directory, self.formats, self.look = directory, tuple(formats), look

    def write(self, figure: Figure) -> list[Path]:
        """The figure's files, one per format, in the order of the formats."""
        from ptsbench.report.core.draw_mpl import write_figure_files

        figure = styled(figure, self.look)
        self.directory.mkdir(parents=True, exist_ok=True)
        drawn = tuple(name for name in self.formats if name in MATPLOTLIB_FORMATS)
        if drawn:
            import_matplotlib()
            write_figure_files(figure, self.directory, "", self.look.dpi, drawn, (WIDTH_IN, HEIGHT_IN))
        if "html" in self.formats:
            _write_html(figure, self.directory / f"{figure.key}.html")
        return [self.directory / f"{figure.key}.{name}" for name in self.formats]


def _write_html(figure: Figure, path: Path) -> None:
    from ptsbench.report.core.draw_plotly import page_html
    from ptsbench.report.core.layout import atomic_file

    text = page_html(figure, figure.caption)
    with atomic_file(path) as temporary:  # a failed write (a full disk) leaves no partial chart behind
        temporary.write_text(text)
