"""Writing `ptsbench plot`'s charts: report Figures (report/core/figure.py) drawn by the report's two renderers,
matplotlib for PNG / SVG and plotly for one self-contained HTML file (plotly.js inline), in the user's style."""

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ptsbench.errors import PtsbenchError
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
WORKER_ENV = "PTSBENCH_DRAW_WORKER"  # 0: draw PNG / SVG in this process; 1: always in a worker; unset: auto


def use_worker(formats: Sequence[str]) -> bool:
    """Whether a drawing worker draws the PNG / SVG files: it pays off only when a CPU is free to import matplotlib
    meanwhile. It costs about 0.13 s more CPU in all (a second interpreter, numpy imported twice), so on a machine
    whose CPUs are all busy (1-minute load average within half a CPU of their number) the plot is slower with it."""
    setting = os.environ.get(WORKER_ENV, "auto")
    if not any(name in MATPLOTLIB_FORMATS for name in formats) or setting == "0":
        return False
    cpus = os.cpu_count() or 1
    return setting == "1" or (cpus > 1 and os.getloadavg()[0] < cpus - 0.5)


class ChartWriter:
    """Writes charts in the user's style into a folder: HTML here (plotly), PNG / SVG by a DrawWorker
    (report/core/draw_mpl.py) started at once when use_worker() says so, so that matplotlib's import (about 0.15 s of
    CPU) runs on another CPU while this process reads the logs; else here. Use it as a context manager: leaving it
    normally waits for every file (a failed worker is a PtsbenchError with its last line), leaving it by an error
    stops the worker."""

    def __init__(self, directory: Path, formats: Sequence[str], look: Look = Look(), worker: bool = True) -> None:
        from ptsbench.report.core.draw_mpl import DrawWorker

        self.directory, self.formats, self.look = directory, tuple(formats), look
        self.worker = DrawWorker() if worker and use_worker(formats) else None

    def write(self, figure: Figure) -> list[Path]:
        """The figure's files, one per format, in the order of the formats."""
        from ptsbench.report.core.draw_mpl import write_figure_files

        figure = styled(figure, self.look)
        self.directory.mkdir(parents=True, exist_ok=True)
        drawn = tuple(name for name in self.formats if name in MATPLOTLIB_FORMATS)
        if drawn and self.worker is not None:
            self.worker.send(figures=[figure], directory=self.directory, provenance="", dpi=self.look.dpi,
                             formats=drawn, size_in=(WIDTH_IN, HEIGHT_IN))
        elif drawn:
            import_matplotlib()
            write_figure_files(figure, self.directory, "", self.look.dpi, drawn, (WIDTH_IN, HEIGHT_IN))
        if "html" in self.formats:
            _write_html(figure, self.directory / f"{figure.key}.html")
        return [self.directory / f"{figure.key}.{name}" for name in self.formats]

    def __enter__(self) -> "ChartWriter":
        return self

    def __exit__(self, error_type: type[BaseException] | None, *_: object) -> None:
        if self.worker is None:
            return
        try:
            if error_type is None and (failure := self.worker.finish()) is not None:
                raise PtsbenchError(f"drawing the charts failed: {failure}",
                                    f"retry with {WORKER_ENV}=0 to draw them in the ptsbench process itself")
        finally:
            self.worker.stop()


def _write_html(figure: Figure, path: Path) -> None:
    from ptsbench.report.core.draw_plotly import page_html
    from ptsbench.report.core.layout import atomic_file

    text = page_html(figure, figure.caption)
    with atomic_file(path) as temporary:  # a failed write (a full disk) leaves no partial chart behind
        temporary.write_text(text)
