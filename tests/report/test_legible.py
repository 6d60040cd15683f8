"""Every figure and page reads cleanly: no two pieces of text drawn over each other, no text off the canvas.

Figures: every figure kind (figure.py) drawn by draw_mpl.py as a PNG is drawn and as the PDF places it (half a page
wide), with realistic and awkward data (long workload names, 16 series, 1 and 1,440 rounds, values spanning 6
decades); matplotlib reports the extent of every text it drew. Pages: poppler's word boxes (pdftotext -bbox-layout)
of the PDF of a real PTS run, a compare of two PTS runs and a compare of two case runs."""

import itertools
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conftest import map_in_threads, run_cli
from ptsbench.report.build import load_compare, load_report
from ptsbench.report.core import fit, pdf
from ptsbench.report.core.draw_mpl import drawn_file, legend_names
from ptsbench.report.core.figure import Figure, Grid, Series, log_ticks, measurement_window_figure, percentile_figure
from ptsbench.report.core.pdf import write_pdf
from ptsbench.report.glance import grid_figure
from test_compare import _slower_copy
from test_report_pts import tiny_pts_run

Box = tuple[float, float, float, float]  # x0, y0, x1, y1
SLACK_PX = 1.0  # boxes that merely touch (a pixel of rounding) do not collide


def drawn_texts(canvas: Any) -> list[tuple[str, Box]]:
    """(text, window extent) of every text matplotlib draws on `canvas` (a draw with Text.draw watched: tick labels
    outside the view and empty labels are not drawn, and 3D tick labels are placed only while drawing)."""
    from matplotlib.text import Text

    seen: list[tuple[str, Box]] = []
    original = Text.draw

    def watched(self: Any, renderer: Any) -> None:
        original(self, renderer)
        if self.get_visible() and self.get_text().strip() and (self.axes is None or self.axes.get_visible()):
            box = self.get_window_extent(renderer)
            seen.append((self.get_text(), (box.x0, box.y0, box.x1, box.y1)))

    Text.draw = watched  # type: ignore[method-assign]
    try:
        canvas.canvas.draw()
    finally:
        Text.draw = original  # type: ignore[method-assign]
    return seen


def overlap(a: Box, b: Box) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) > SLACK_PX and min(a[3], b[3]) - max(a[1], b[1]) > SLACK_PX


def collisions(texts: list[tuple[str, Box]], width: float, height: float) -> list[str]:
    """What collides: text leaving the canvas, then pairs of texts drawn over each other."""
    problems = [f"off the canvas: {text!r}" for text, (x0, y0, x1, y1) in texts
                if x0 < -SLACK_PX or y0 < -SLACK_PX or x1 > width + SLACK_PX or y1 > height + SLACK_PX]
    problems += [f"{a!r} over {b!r}" for (a, box_a), (b, box_b) in itertools.combinations(texts, 2)
                 if overlap(box_a, box_b)]
    return problems


# --- the figures ------------------------------------------------------------------------------------------------

LONG = "randrw-70-30-4k-qd32-numjobs4-direct-libaio-on-nvme0n1"
SIZES = ("512", "4k", "8k", "16k", "32k", "64k", "128k", "1m")
MIXES = ("0/100", "5/95", "35/65", "50/50", "65/35", "95/5", "100/0")


def spanning(count: int, low: float = 1.0, decades: int = 6) -> tuple[float, ...]:
    """`count` values from `low` up over `decades` decades."""
    return tuple(low * 10 ** (decades * index / max(count - 1, 1)) for index in range(count))


def figures() -> Iterator[Figure]:
    rounds = tuple(range(1, 1441))
    yield Figure("lines-16-long", f"{LONG}: IOPS over 1,440 rounds, 16 workloads", "round", "IOPS",
                 tuple(Series(f"{LONG}-{n}", rounds, spanning(1440, 1.0 + n)) for n in range(16)), y_log=True,
                 caption="Sixteen workloads with long names over 1,440 rounds; values span six decades. " * 3)
    yield Figure("lines-1-round", "one round", "round", "IOPS", (Series("rnd 4k", (1,), (12345.0,)),),
                 x_ticks=((1, "1"),), caption="A single round.")
    yield measurement_window_figure("window-1", "IOPS: measurement window", "IOPS", [7], [1.0e6], 1.0e6, 0.0, 1.0e6,
                                    "One round in the window.")
    yield measurement_window_figure("window-25", f"IOPS: measurement window of {LONG}", "IOPS", range(21, 26),
                                    spanning(5, 1e3), 3e5, 1e4, 1e3, "The window's tracked values. " * 6)
    curves = [(f"{LONG} {n}", {int(v): 1000 - 50 * n for v in spanning(300, 1e3)}) for n in range(16)]
    yield percentile_figure("percentiles-16", f"{LONG}: latency percentiles", curves, "Sixteen curves. " * 8)
    names = [f"{rw}-{bs}-q{qd}t1" for rw in ("seqread", "seqwrite", "randread", "randwrite") for bs, qd in
             (("128k", 8), ("4k", 32), ("4k", 1), ("1m", 1))]
    ticks = tuple((float(index), name) for index, name in enumerate(names))
    yield Figure("bars-16", "MB/s per test, read and write", "test", "MB/s",
                 tuple(Series(f"run {n}: {LONG}", tuple(range(16)), spanning(16, 0.01 * (n + 1)), mode="bars")
                       for n in range(16)), y_log=True, x_ticks=ticks, caption="Grouped bars. " * 10)
    edges = [int(v) for v in spanning(60, 10, 6)]
    labels = [f"{edge:,}" for edge in edges]
    yield Figure("histogram", "Latency: response-time histogram, 4k random read at QD 32", "total latency (µs)",
                 "IOs", (Series("rnd 4k", tuple(float(i) for i in range(60)), spanning(60, 1.0), mode="bars"),),
                 y_log=True, x_ticks=tuple((float(i), label) for i, label in enumerate(labels)),
                 caption="IOs per bucket, from the first bucket with IOs to the last.")
    yield Figure("data-table", "IOPS vs block size", "block size", "IOPS",
                 tuple(Series(mix, tuple(range(8)), spanning(8, 10.0 ** n)) for n, mix in enumerate(MIXES)),
                 y_log=True, x_ticks=tuple(enumerate(SIZES)), data_table=True, caption="With its data.")
    yield Figure("band", "fio log: IOPS per pixel column", "time (s)", "IOPS",
                 (Series("min to max", tuple(range(1440)), spanning(1440, 10), mode="band", low=spanning(1440, 1)),
                  Series(LONG, tuple(range(1440)), spanning(1440, 5), mode="lines")), y_log=True,
                 subtitle=f"{LONG} on /dev/nvme0n1, 1,440 s",
                 x_ticks=tuple((t, str(t)) for t, _ in log_ticks([1, 1e3])))
    depths = ("1", "2", "4", "8", "16", "32", "64", "128", "256")
    yield Figure("bars-and-line-y2", f"{LONG}: IOPS and total latency", "queue depth", "IOPS",
                 (Series("IOPS", tuple(range(9)), spanning(9, 1.5e4, 2), mode="bars"),
                  Series(f"mean total latency of {LONG}", tuple(range(9)), (*spanning(4, 10.0, 1), None,
                                                                             *spanning(4, 200.0, 3)), y2=True),
                  Series("p99.99 total latency", tuple(range(9)), spanning(9, 20.0, 4), dash="dash", y2=True)),
                 x_ticks=tuple(enumerate(depths)), y2_label="total latency (µs)", y2_range=(0, None),
                 caption="IOPS bars on the left axis, latency lines on the right one. " * 3)
    grid = Grid(MIXES, SIZES, tuple(tuple(spanning(len(MIXES), 10.0 ** (row % 6))) for row in range(len(SIZES))))
    for kind in ("bars3d", "surface", "heatmap"):
        yield Figure(f"{kind}-pts", f"IOPS: {LONG} steady state average per mix and block size", "read/write mix",
                     "block size", grid=grid, kind=kind, z_label="IOPS",
                     caption="The steady state average of every cell, per read/write mix and block size. " * 2)
    depths, jobs = ("1", "2", "4", "8", "16", "32", "64", "128", "256"), ("1", "2", "4", "8")
    sweep = Grid(depths, jobs, tuple(spanning(len(depths), 10.0 ** row) for row in range(len(jobs))))
    yield Figure("bars3d-sweep", f"{LONG}: IOPS over queue depth x numjobs", "queue depth", "numjobs", grid=sweep,
                 kind="bars3d", z_label="IOPS")
    yield Figure("bars3d-2x2", "IOPS: steady state average", "read/write mix", "block size", kind="bars3d",
                 grid=Grid(("100/0", "0/100"), ("4k", "64k"), ((36512.0, 31023.0), (4511.0, 3020.0))), z_label="IOPS")
    quick = [(f"{name}{suffix}", read, read * 0.9, None, None, None, None)
             for suffix in ("", " @ host-with-a-long-name")
             for name, read in (("SEQ1M-Q8T1", 3100.0), ("SEQ128K-Q32T1", 2900.0), ("RND4K-Q32T16", 1200.0),
                                ("RND4K-Q1T1", 48.0))]
    yield grid_figure(quick)  # the at-a-glance MB/s bars of a case run: 4k random beside 1M sequential
    # upright x labels (long, nothing shared) over a narrow linear y; and long names that all share a long part,
    # said once in the x axis' title
    hosts = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel")
    for key, runs in (("bars-upright-linear", [f"{host}-randwrite-4k-qd32-numjobs4-direct-libaio-{n}"
                                               for n, host in enumerate(hosts)]),
                      ("bars-shared-title", [f"{LONG}/cases/00{n}-randwrite-4k-qd32/fio" for n in range(8)])):
        yield Figure(key, "IOPS per run", "run", "IOPS",
                     (Series("write", tuple(range(8)), tuple(48_000.0 + 1_200 * n for n in range(8)), mode="bars"),),
                     x_ticks=tuple(enumerate(runs)), y_range=(46_000, 58_000))
    small = Grid(("1",), ("1",), ((5.0,),))
    yield Figure("bars3d-one", "CPU %", "queue depth", "thread count", grid=small, kind="bars3d", z_label="CPU %")


def pdf_canvas(figure: Figure, height_in: float) -> Any:
    """The figure drawn as the PDF draws it on an A4 landscape canvas: half the page wide and `height_in` high, or
    across the page (3D figures)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as MplFigure

    canvas = MplFigure(figsize=(pdf.PAGE_W_IN, pdf.PAGE_H_IN))
    FigureCanvasAgg(canvas)
    if pdf.full_width(figure):
        placed = pdf.Placed(figure, 1.0, pdf.FIGURE_3D_IN)
    else:
        placed = pdf.Placed(figure, 1.0, height_in, width_in=(pdf.PAGE_W_IN - 2 * pdf.MARGIN_IN
                                                              - pdf.FIGURE_GAP_IN) / 2)
    pdf._draw_figure(canvas, placed)
    return canvas


# as files (PNG, SVG) and on PDF pages, where a figure beside a taller one may be drawn smaller; data tables are
# drawn only by `ptsbench plot --show-data`, into files
DRAWN = [(figure, where) for figure in figures() for where in ("png", "pdf", "pdf-small")
         if where == "png" or not figure.data_table]


@pytest.mark.parametrize(("figure", "where"), DRAWN, ids=lambda value: getattr(value, "key", value))
def test_no_text_collides_in_a_figure(figure: Figure, where: str) -> None:
    if where == "png":
        canvas = drawn_file(figure, "ptsbench 1.0, fio 3.33, 2026-11-27 03:00 UTC, run " + LONG)
    else:
        canvas = pdf_canvas(figure, pdf.FIGURE_IN if where == "pdf" else pdf.MIN_FIGURE_IN)
    width, height = canvas.canvas.get_width_height()
    problems = collisions(drawn_texts(canvas), width, height)
    assert problems == [], "\n".join(problems[:12])


def test_a_small_chart_of_one_named_series_keeps_its_room_and_labels_its_log_axis() -> None:
    """A chart at the PDF's smallest size, of one series its title names, on a log axis of about one decade (a PTS
    latency's confidence levels): no legend narrowing the plot, and at least three labelled y ticks (5,000 to
    50,000), not the one '10,000' a decade-only axis has there. A second series brings the legend back."""
    one = Series("rnd 4k 0/100, TC1/QD1", (1.0, 2.0, 3.0, 4.0), (3916.0, 15794.0, 46399.0, 46399.0))
    figure = Figure("confidence", "Latency: confidence levels of rnd 4k 0/100, TC1/QD1", "IOs completed (%)",
                    "total latency (µs)", (one,), y_log=True)
    texts = [text for text, _box in drawn_texts(pdf_canvas(figure, pdf.MIN_FIGURE_IN))]
    assert texts.count("rnd 4k 0/100, TC1/QD1") == 0  # the title holds it, not a legend
    assert len([text for text in texts if text.replace(",", "").isdigit() and int(text.replace(",", "")) > 100]) >= 3
    two = replace(figure, series=(one, replace(one, name="rnd 4k 0/100, TC1/QD32")))
    texts = [text for text, _box in drawn_texts(pdf_canvas(two, pdf.MIN_FIGURE_IN))]
    assert "rnd 4k 0/100, TC1/QD32" in texts


def test_a_legend_too_long_to_keep_whole_still_tells_every_name_apart() -> None:
    """The last resort, a legend of 40 long names in a small box: names are shortened in their middle, but never
    into two that read alike (names differing only in their middle keep enough of it)."""
    names = [f"first: SEQ1M-Q8T1-{kind}-{n:02d}-job read" for n in range(20) for kind in ("read", "write")]
    legend = fit.fit_legend(names, 1.0, 1.5, 8.0)
    assert not legend.fits and len(set(legend.labels)) == len(names)
    assert fit.distinct_shortened(["a-long-name-1-of-x", "a-long-name-2-of-x"], 6) == ["a-lon…1-of-x", "a-lon…2-of-x"]


def test_long_category_names_of_a_file_stay_whole_upright() -> None:
    """`plot --json`'s 'IOPS per run' of a parallel run: eight runs named by their files and workloads (about 50
    characters, nothing shared by all) were cut to '001-j… read', two alike, and every other one left out. In a
    figure file, upright labels may take 30 % of its height: each is drawn whole, wrapped after separators, and
    nothing collides."""
    names = [f"00{case}-jobs@tmp_h43_pp_p{case}.dat/fio {workload}, {direction}" for case in (1, 2)
             for workload, direction in (("randread 4k", "read"), ("randrw 1m 65/35", "read"),
                                         ("randrw 1m 65/35", "write"), ("randrw 1m 65/35", "total"))]
    figure = Figure("runs-iops", "IOPS per run", "run", "IOPS",
                    (Series("IOPS", tuple(range(8)), spanning(8, 10.0, 5), mode="bars"),),
                    x_ticks=tuple((float(index), name) for index, name in enumerate(names)))
    canvas = drawn_file(figure, "ptsbench 1.0, fio 3.33")
    ticks = ["".join(label.get_text().split()) for label in canvas.axes[0].get_xticklabels()]
    assert ticks == ["".join(name.split()) for name in names]
    width, height = canvas.canvas.get_width_height()
    assert collisions(drawn_texts(canvas), width, height) == []


def test_the_check_sees_a_collision() -> None:
    """Two labels drawn on one spot, and one past the edge, are found."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as MplFigure

    canvas = MplFigure(figsize=(4, 3))
    FigureCanvasAgg(canvas)
    canvas.text(0.5, 0.5, "10 20 50")
    canvas.text(0.52, 0.5, "100 200")
    canvas.text(0.95, 0.1, "off the edge")
    width, height = canvas.canvas.get_width_height()
    assert collisions(drawn_texts(canvas), width, height) == ["off the canvas: 'off the edge'",
                                                              "'10 20 50' over '100 200'"]


# --- the pages --------------------------------------------------------------------------------------------------

WORD = re.compile(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>')
PAGE = re.compile(r'<page width="([\d.]+)" height="([\d.]+)">(.*?)</page>', re.S)


def page_words(path: Path) -> list[tuple[float, float, list[tuple[str, Box]]]]:
    """(width, height, words with their boxes) of every page, as poppler reads them."""
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext is not installed (apt-get install poppler-utils)")
    html = subprocess.run(["pdftotext", "-bbox-layout", str(path), "-"], capture_output=True, text=True,
                          check=True).stdout
    return [(float(width), float(height),
             [(word, (float(x0), float(y0), float(x1), float(y1))) for x0, y0, x1, y1, word in WORD.findall(body)])
            for width, height, body in PAGE.findall(html)]


def pdf_collisions(path: Path) -> list[str]:
    """Words poppler finds drawn over each other, or past the page, on every page of the PDF at `path`."""
    problems = []
    for number, (width, height, words) in enumerate(page_words(path), start=1):
        problems += [f"page {number}: {problem}" for problem in collisions(words, width, height)]
    return problems


@pytest.fixture(scope="module")
def two_quick_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two real `ptsbench quick` runs on small scratch files (the eight CrystalDiskMark tests, 0.2 s each)."""

    def made(run_dir: Path) -> Path:
        done = run_cli("quick", "--runtime", "0.2", "--size", "8M", "--out", str(run_dir))
        assert done.returncode == 0, done.stderr
        return run_dir

    folders = [tmp_path_factory.mktemp("quick") / name for name in ("first", "second")]
    return map_in_threads(made, folders, 2)  # at once: each mostly waits for its fio


def test_no_words_collide_on_the_pages_of_a_pts_report(tmp_path_factory: pytest.TempPathFactory,
                                                        tmp_path: Path) -> None:
    run_dir = tiny_pts_run(tmp_path_factory.getbasetemp())
    write_pdf(load_report(run_dir), tmp_path / "report.pdf")
    problems = pdf_collisions(tmp_path / "report.pdf")
    assert problems == [], "\n".join(problems[:12])


def test_no_words_collide_on_the_pages_of_a_compare_of_two_pts_runs(tmp_path_factory: pytest.TempPathFactory,
                                                                     tmp_path: Path) -> None:
    run_dir = tiny_pts_run(tmp_path_factory.getbasetemp())
    slower = _slower_copy(run_dir, tmp_path / "slower", 0.5)
    report = load_compare([run_dir, slower], ["before the firmware update", "after the firmware update"])
    grids = [figure for figure in report.figures() if figure.key.startswith("iops-3d-run")]
    assert len(grids) == 2 and grids[0].y_range == grids[1].y_range != (None, None)  # one z scale for both
    write_pdf(report, tmp_path / "compare.pdf")
    problems = pdf_collisions(tmp_path / "compare.pdf")
    assert problems == [], "\n".join(problems[:12])


def test_no_words_collide_on_the_pages_of_a_compare_of_two_quick_runs(two_quick_runs: list[Path],
                                                                       tmp_path: Path) -> None:
    write_pdf(load_compare(two_quick_runs), tmp_path / "compare.pdf")
    problems = pdf_collisions(tmp_path / "compare.pdf")
    assert problems == [], "\n".join(problems[:12])
    cut = [word for _width, _height, words in page_words(tmp_path / "compare.pdf") for word, _box in words
           if "…" in word]
    assert cut == []  # no name shortened anywhere ('fir…read' was two series at once)


def test_every_legend_name_of_a_compare_is_drawn_whole(two_quick_runs: list[Path]) -> None:
    """The compare of two real quick runs overlays 16 series in its latency percentile chart ('first: SEQ1M-Q8T1-read
    read', ...): half a page held them only cut to 'fir…read', sixteen times two alike. Drawn as the PDF places
    each figure (across the page when half of it cannot hold the legend), every legend name is there whole (wrapped
    after separators at most)."""
    report = load_compare(two_quick_runs)
    most = 0
    for figure in report.figures():
        names = legend_names(figure)
        if len(names) < 2:
            continue
        canvas = pdf_canvas(figure, pdf.FIGURE_IN)
        shown = {"".join(text.split()) for text, _box in drawn_texts(canvas)}
        missing = [name for name in names if "".join(name.split()) not in shown]
        assert missing == [], (figure.key, missing)
        most = max(most, len(names))
    assert most == 16
