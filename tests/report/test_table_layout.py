"""The one layout rule of every table (report/core/table_layout.py), checked where users see it: the PDFs of every
kind of report read back with poppler (no word past the margins, no word split across lines), and each command's
first screen on 80- and 120-column terminals (the headline values there, nothing cut)."""

import html
import json
import re
from pathlib import Path

import pytest

from conftest import map_in_threads, run_cli
from ptsbench.report.build import load_compare, load_report
from ptsbench.report.core.model import Column, Report, Table, formatted_rows
from ptsbench.report.core.pdf import MARGIN_IN, _report_text, write_pdf
from ptsbench.report.core.pdf_text import CUT_AFTER, MONO_ADVANCE_EM, width_pt, wrap_words
from ptsbench.report.core.table_layout import arranged, split_to_fit, wrap_name
from test_legible import page_words
from test_present import run_in_terminal
from test_report_pts import tiny_pts_run

# one worker runs this module's tests, so its module-wide runs (fixtures) are made once, not once per worker
pytestmark = pytest.mark.xdist_group("table-layout")

JOBS = """[global]
ioengine=null
size=64m
time_based
runtime=0.3

[randread-4k]
rw=randread
bs=4k
iodepth=4

[randrw-1m]
stonewall
rw=randrw
rwmixread=65
bs=1m
"""


# --- the rule itself ----------------------------------------------------------------------------------------------

def test_names_wrap_only_after_separators() -> None:
    name = "a-randread@dev_loop19/randread read iops"
    for width in range(1, len(name) + 2):
        lines = wrap_name(name, width)
        assert "".join(lines).replace(" ", "") == name.replace(" ", "")
        for line in lines:  # a line longer than the width is one unbreakable piece
            assert len(line) <= width or not re.search(r"[/_@ -]", line[:-1])
        position = 0
        for number, line in enumerate(lines):
            start = name.index(line, position)
            assert number == 0 or name[start - 1] in "/_@- ", (width, lines)  # broken after a separator only
            position = start + len(line)


def test_units_and_ratios_are_never_broken() -> None:
    for width in range(1, 12):
        assert all(line not in ("(MB/", "s)", "65/", "35") for line in wrap_name("read (MB/s) rnd 65/35", width))


def test_arranged_says_constant_and_empty_columns_once_and_puts_values_first() -> None:
    table = Table("t", "T", (Column("job"), Column("host"), Column("note"), Column("IOPS", "iops"),
                             Column("p99 µs", "us"), Column("target")),
                  (("a", "-", "x", 1.0, None, "/dev/a"), ("b", "-", "y", 2.0, None, "/dev/a")))
    shown, facts = arranged(table)
    assert [c.name for c in shown.columns] == ["job", "IOPS", "note"]
    assert facts == (("target", "/dev/a"), ("no value here", "host, p99 µs"))


def test_a_table_too_wide_is_split_with_its_keys_in_every_part() -> None:
    columns = (Column("workload"), *(Column(f"value {n} (IOPS)", "iops") for n in range(12)))
    rows = tuple((f"w{r}", *(1000.0 * n + r for n in range(12))) for r in range(3))
    parts = split_to_fit(Table("t", "Wide", columns, rows), 80, 3)
    assert len(parts) > 1 and all(part.columns[0].name == "workload" for part in parts)
    assert sum(len(part.columns) - 1 for part in parts) == 12  # every value column once, none cut
    assert [part.title for part in parts][-1] == f"Wide (part {len(parts)} of {len(parts)})"


def test_a_long_title_of_a_split_table_keeps_its_part_number_whole_on_80_columns() -> None:
    """rich wraps a title at any space: "(part" ended one line and "1 of 3)" began the next."""
    from rich.console import Console

    from ptsbench.report.core.terminal import model_table

    columns = (Column("workload"), *(Column(f"value {n} (IOPS)", "iops") for n in range(12)))
    rows = tuple((f"w{r}", *(1000.0 * n + r for n in range(12))) for r in range(3))
    title = "Random reads of every block size against the scratch file on the host"  # 69 characters
    for width in (80, 120):
        console = Console(width=width, record=True, color_system=None)
        console.print(model_table(Table("t", title, columns, rows), width))
        lines = console.export_text().splitlines()
        count = sum("(part 1 of " in line for line in lines)
        assert count == 1 and not any(line.rstrip().endswith("(part") for line in lines), lines[:6]
        assert max(len(line.rstrip()) for line in lines) <= width


def test_pdf_text_wider_than_a_line_is_cut_after_a_separator() -> None:
    path = "/tmp/pytest-of-root/pytest-10950/popen-gw2/layout0/parallel/cases/001-jobs@tmp_pytest-of-root/job.fio"
    for mono in (False, True):
        lines = wrap_words(f"fio {path}", 150.0, 9.0, mono=mono)
        assert lines[0] == "fio" and len(lines) > 3 and "".join(lines[1:]) == path, lines
        assert all(width <= 150.0 for width in (
            len(line) * MONO_ADVANCE_EM * 9.0 if mono else width_pt(line, 9.0) for line in lines))
        assert all(line[-1] in CUT_AFTER for line in lines[1:-1]), lines  # cut after a separator, not in a name


# --- PDFs of every kind of report ----------------------------------------------------------------------------------

PIECE = re.compile(r"[^\s/_@\-]+")
PUNCTUATION = "()[]{}:;,.'\"*!?=<>|+"


def pieces(text: str) -> list[str]:
    return [piece.strip(PUNCTUATION) for piece in PIECE.findall(text) if piece.strip(PUNCTUATION)]


FURNITURE = "page (continued) no value here: part of ns µs ms s"  # the PDF's own: page numbers, split tables'
#                                                                    titles, units on the axes' tick labels


def known_pieces(report: Report) -> set[str]:
    """Every piece of every text the report holds (names, titles, formatted cells), and the pages' own words."""
    texts = [FURNITURE, *(text for text in _report_text(report) if text)]
    for table in report.tables():
        texts += [cell for row in formatted_rows(table) for cell in row]
    return {piece for text in texts for piece in pieces(str(text))}


NUMBERISH = re.compile(r"^[-+−]?[\d.,×%]*\d[\d.,×%]*[a-zA-Zµ]{0,4}$")


def pdf_problems(report: Report, path: Path) -> list[str]:
    """Words past the page's margins, words cut short ('jobs@…ad-4k'), and words poppler finds that are no whole
    piece of any text the report holds (a name split inside a word: 'temp' 'erature')."""
    write_pdf(report, path)
    known = known_pieces(report)
    # a 3D chart's axis titles are drawn slanted, which poppler reads as fragments ('bl', 'oc', 'k')
    slanted = " ".join(label for figure in report.figures() if figure.kind in ("bars3d", "surface")
                       for label in (figure.x_label, figure.y_label, figure.z_label))
    margin_pt = MARGIN_IN * 72 - 1
    problems = []
    for number, (width, _height, words) in enumerate(page_words(path), start=1):
        for escaped, (x0, _y0, x1, _y1) in words:
            word = html.unescape(escaped)
            if x0 < margin_pt or x1 > width - margin_pt:
                problems.append(f"page {number}: {word!r} past the margin ({x0:.0f}-{x1:.0f} of {width:.0f})")
            if "…" in word:  # a name shortened: two may then read alike
                problems.append(f"page {number}: {word!r} is cut")
            for piece in pieces(word):
                if piece not in known and "…" not in piece and not NUMBERISH.match(piece) and piece not in slanted:
                    problems.append(f"page {number}: {word!r}: {piece!r} is no whole word of the report")
    return problems


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A real quick run, sweep, job-file run and parallel run on scratch files (short, null engine where it can)."""
    # a long folder, as a device's /dev/disk/by-id/ path: the names of cases and tests made of it and the paths the
    # report shows (fio's command line) are wider than a line
    folder = tmp_path_factory.mktemp("layout-of-a-long-folder-name_" + "with-many-parts_" * 4)
    (folder / "jobs.fio").write_text(JOBS)
    commands = {
        "quick": ["quick", "--runtime", "0.2", "--size", "8M", "--tag", "firmware=1.2"],
        "quick2": ["quick", "--runtime", "0.2", "--size", "8M", "--tag", "firmware=1.3"],
        "sweep": ["sweep", str(folder / "sweep.dat"), "--size", "16M", "--bs", "4k,1m", "--iodepth", "1,4",
                  "--runtime", "0.2"],
        "run": ["run", str(folder / "jobs.fio"), "--target", str(folder / "run.dat"), "--size", "16M"],
        "parallel": ["run", str(folder / "jobs.fio"), "--parallel", "--target", str(folder / "p1.dat"), "--target",
                     str(folder / "p2.dat"), "--size", "16M"],
    }

    def made(name: str) -> Path:
        done = run_cli(*commands[name], "--out", str(folder / name))
        assert done.returncode == 0, done.stderr
        return folder / name

    # three at a time: each mostly waits for its fio's start and end
    return dict(zip(commands, map_in_threads(made, commands, 3), strict=True))


@pytest.mark.parametrize("kind", ["quick", "sweep", "run", "parallel"])
def test_pdf_words_within_the_margins_and_whole(runs: dict[str, Path], kind: str, tmp_path: Path) -> None:
    problems = pdf_problems(load_report(runs[kind]), tmp_path / "report.pdf")
    assert problems == [], "\n".join(problems[:12])


def test_pdf_of_a_compare_within_the_margins_and_whole(runs: dict[str, Path], tmp_path: Path) -> None:
    problems = pdf_problems(load_compare([runs["quick"], runs["quick2"]]), tmp_path / "compare.pdf")
    assert problems == [], "\n".join(problems[:12])


def test_pdf_of_a_pts_run_within_the_margins_and_whole(tmp_path_factory: pytest.TempPathFactory,
                                                         tmp_path: Path) -> None:
    run_dir = tiny_pts_run(tmp_path_factory.getbasetemp())
    problems = pdf_problems(load_report(run_dir), tmp_path / "report.pdf")
    assert problems == [], "\n".join(problems[:12])


def test_fleet_table_says_the_facts_its_runs_share_once(runs: dict[str, Path]) -> None:
    """compare of two real quick runs tagged firmware=1.2 and 1.3: the facts both runs share are said once above the
    fleet table (its median, min and max rows, blank there, do not make them differ); the firmware, which differs,
    stays a column, after the values; the summing-up rows hold numbers only."""
    report = load_compare([runs["quick"], runs["quick2"]])
    table = next(table for table in report.tables() if table.key == "fleet")
    shown, facts = arranged(table)
    said = dict(facts)
    assert said["steady state at round"] == "n/a (fio case run)" and said["repetitions"] == "1"
    names = [column.name for column in shown.columns]
    assert not set(said) & set(names) and names[-1] == "firmware"
    assert [row[-1] for row in shown.rows] == ["1.2 (tag)", "1.3 (tag)", "", "", ""]
    assert all(column.kind != "text" for column in shown.columns[1:-1])  # the values, before the descriptions
    assert [row[0] for row in shown.rows[2:]] == ["median", "min", "max"]


def test_pdf_wide_tables_take_the_text_width_and_no_cell_passes_the_margin(tmp_path: Path) -> None:
    """A table of 24 value columns (split into parts) and one whose name column holds a 200-character word that
    fits nowhere whole: every word poppler finds lies inside the margins, the split table's parts reach across
    the text width, and the long word is all there, wrapped inside itself as the last resort."""
    from ptsbench.report.core.model import Section

    columns = (Column("workload"), *(Column(f"IOPS of device number {n} (IOPS)", "iops") for n in range(24)))
    wide = Table("wide", "Wide", columns, tuple((f"w{r}", *(1234567.0 + n for n in range(24))) for r in range(3)))
    word = "x" * 200
    long = Table("long", "Long", (Column("name"), Column("IOPS", "iops")), ((word, 1.0), ("short", 2.0)))
    report = Report("wide tables", "ptsbench test", (), (Section("s", "Tables", (), (wide, long)),))
    path = tmp_path / "wide.pdf"
    write_pdf(report, path)
    margin_pt = MARGIN_IN * 72
    pages = page_words(path)
    width = pages[0][0]
    words = [(word_text, box) for _width, _height, page in pages for word_text, box in page]
    past = [(text, box) for text, box in words if box[0] < margin_pt - 1 or box[2] > width - margin_pt + 1]
    assert past == []
    rights = [box[2] for text, box in words if text.replace(",", "").replace(".", "").isdigit()]
    assert max(rights) > width - margin_pt - 30  # the parts reach the right margin (up to a column's gap)
    assert "".join(text for text, _box in words if set(text) == {"x"}) == word


def test_pdf_text_widths_are_the_widths_poppler_reads_back(tmp_path: Path) -> None:
    """pdf_text measures texts as matplotlib draws them: Helvetica (core font, unkerned) and the embedded DejaVu Sans
    (kerned), normal and bold; poppler reads each drawn word back as wide as measured."""
    import matplotlib
    from matplotlib.backends.backend_pdf import PdfPages
    from matplotlib.figure import Figure

    from ptsbench.report.core import pdf_text

    words = [(word, bold) for word in ("AVAToWaYo.", "p99.999", "MB/s", "rnd-4k@dev_loop19/randread", "Temperature,",
                                       "1,234,567.89", "µs") for bold in (False, True)]
    for fonts, family, embedded in (({"pdf.use14corefonts": True}, "Helvetica", False),
                                    ({"pdf.fonttype": 42}, "DejaVu Sans", True)):
        path = tmp_path / f"{family}.pdf"
        with matplotlib.rc_context(fonts), PdfPages(path) as document:
            canvas = Figure(figsize=(8, 8))
            for index, (word, bold) in enumerate(words):
                canvas.text(0.05 + 0.5 * bold, 0.95 - 0.06 * (index // 2), word, fontsize=9, family=family,
                            fontweight="bold" if bold else "normal")
            document.savefig(canvas)
        [(_width, _height, found)] = page_words(path)
        assert [html.unescape(text) for text, _box in found] == [word for word, _bold in words]
        for (word, bold), (_text, box) in zip(words, found, strict=True):
            drawn_pt = box[2] - box[0]
            assert pdf_text.width_pt(word, 9, bold, embedded) == pytest.approx(drawn_pt, abs=0.1), (family, word)


# --- terminals: each command's first screen ------------------------------------------------------------------------

@pytest.mark.parametrize("columns", [80, 120])
def test_first_screen_of_show_has_the_headline_values(runs: dict[str, Path], columns: int) -> None:
    for kind in ("quick", "sweep", "run", "parallel"):
        text = run_in_terminal(["show", str(runs[kind])], columns)
        first = "\n".join(text.splitlines()[:60])
        header = next(line for line in first.splitlines() if " IOPS " in f" {line} ")
        assert "MB/s" in header and "mean" in first, (kind, first)
        assert "more column(s)" not in text and "…" not in text
        assert max(len(line.rstrip()) for line in text.splitlines()) <= columns
        if kind == "sweep":  # a sweep's case is its job: one column of the two
            assert not any(line.split()[:2] == ["case", "job"] for line in text.splitlines())
        if kind == "parallel":  # each case's target is in the target column, its base name said once
            assert "case: jobs" in text and "jobs@" not in text


@pytest.mark.parametrize("columns", [80, 120])
def test_catalog_values_first_screen_rounded_in_units(runs: dict[str, Path], tmp_path: Path, columns: int) -> None:
    db = str(tmp_path / "catalog.sqlite")
    assert run_cli("catalog", "update", str(runs["quick"]), str(runs["quick2"]), "--db", db).returncode == 0
    name = "quick/SEQ1M-Q8T1-read read MB/s"
    stored = json.loads(run_cli("catalog", "values", name, "--db", db, "--format", "json").stdout)
    assert len(stored) == 2 and {value["unit"] for value in stored} == {"bytes/s"}  # programs: stored units
    text = run_in_terminal(["catalog", "values", name, "--db", db], columns)
    words = " ".join(text.split())
    assert "2 values in MB/s" in words and "(MB/s)" in text  # the header (may wrap at its space)
    assert "more column" not in text
    for value in stored:  # each value in MB/s, rounded as reports round it, whole on a line
        assert any(f"{value['value'] / 1e6:,.2f}" in line for line in text.splitlines())
    assert "SEQ1M-Q8T1-" in text and "1.2" in text and "1.3" in text
    assert max(len(line.rstrip()) for line in text.splitlines()) <= columns
    one = run_in_terminal(["catalog", "values", name, "--db", db, "--firmware", "1.2"], columns)
    assert "1 value in MB/s" in " ".join(one.split())


@pytest.mark.parametrize("columns", [80, 120])
def test_plot_json_first_screen_has_iops_mb_s_and_latency(runs: dict[str, Path], tmp_path: Path,
                                                           columns: int) -> None:
    """`plot --json` of a real sweep in an 80- and a 120-column terminal: its first part holds IOPS, MB/s and mean
    latency beside the rows' names, and every run's IOPS as fio reported it, whole on a line."""
    text = run_in_terminal(["plot", "--json", str(runs["sweep"]), "--out", str(tmp_path / "charts")], columns)
    lines = text.splitlines()
    first = "\n".join(lines[:next((n for n, line in enumerate(lines) if "(part 2 of" in line), len(lines))])
    rule = next(n for n, line in enumerate(lines) if line.startswith("─"))
    assert {"IOPS", "MB/s", "mean"} <= set(" ".join(lines[1:rule]).split()), first  # the header, over the rule
    for path in sorted((runs["sweep"] / "cases").glob("*/fio.json")):
        job = json.loads(path.read_text())["jobs"][0]
        for direction in ("read", "write"):
            if job[direction]["io_bytes"]:
                assert any(f"{job[direction]['iops']:,.1f}" in line for line in first.splitlines()), (path, first)
    table = [line for line in lines if not line.startswith("wrote ")]  # paths: never broken
    assert "…" not in text and max(len(line.rstrip()) for line in table) <= columns
    # what every run's name shares (cases/ and /fio) is said once in the title; at 80 columns, where the table is
    # split anyway, each run's own part stands whole on its row's line, its values beside it (it wrapped over three
    # lines, inside the case's name); at 120 the whole table may fit in one part, its names wrapped after separators
    assert "(runs: cases/*-nj1/fio)" in " ".join(text.split())
    for case in sorted((runs["sweep"] / "cases").iterdir()) if columns == 80 else ():
        row = next(line for line in first.splitlines() if line.startswith(f"{case.name.removesuffix('-nj1')} "))
        assert len(row.split()) >= 6, row


def test_charts_of_too_few_values_are_said_not_drawn(runs: dict[str, Path]) -> None:
    """A quick run of 0.2 s jobs: fio logged one or two values per job, and a chart of them over time would be
    an almost empty plot; the case says so in a line instead, and no chart over time that says little is left."""
    from ptsbench.report.core.figure import Figure, Series
    from ptsbench.report.core.model import Text, drawn_or_said

    report = load_report(runs["quick"])
    assert [figure.key for figure in report.figures() if figure.says_little()] == []
    case = next(section for section in report.sections if section.key == "case001")
    said = [block.text for block in case.blocks if isinstance(block, Text) and block.text.startswith("Not charted")]
    assert len(said) == 1 and "over time" in said[0] and "too few to show a course" in said[0]
    assert "results table" in said[0]
    assert any(figure.key == "case001-percentiles" for figure in case.figures())  # what has enough values stays
    two = Figure("t2", "IOPS vs time", "time (s)", "IOPS", (Series("a", (1, 2), (5.0, 6.0)),
                                                             Series("b", (1, 2), (5.0, None))))
    three = Figure("t3", "t", "time (s)", "IOPS", (Series("a", (1, 2, 3), (5.0, 6.0, 7.0)),))
    assert two.says_little() and not three.says_little()
    assert drawn_or_said([two, three], "the table holds them") == [
        three, Text("Not charted (IOPS vs time): at most 2 values per line, too few to show a course; the table holds "
                    "them.")]  # a write saturation test of one round says the same of its four charts


def test_parallel_glance_chart_names_every_test_whole(runs: dict[str, Path], tmp_path: Path,
                                                       tmp_path_factory: pytest.TempPathFactory) -> None:
    """The at-a-glance MB/s chart of a real `run --parallel` on two files: its tests ('jobs@p1.dat: randread-4k', ...
    and longer, with the files' folders) were cut to 'jobs@…ad-4k', two alike. As the PDF draws it, what all share is
    said once on the axis ('test (jobs@*)') and each tick holds the rest whole (wrapped after separators); in the
    browser every tick is whole."""
    from ptsbench.report.core import pdf
    from ptsbench.report.core.html import write_html
    from ptsbench.report.core.model import Report as ReportModel
    from test_legible import pdf_canvas
    from test_report_browser import shared_browser

    report = load_report(runs["parallel"])
    figure = next(figure for figure in report.figures() if figure.key == "glance-mbs")
    names = [label for _, label in figure.x_ticks]  # 'jobs@tmp_pytest-of-..._layout0_p1.dat: randread-4k', ...
    assert len(set(names)) == 4 and sum("p1.dat: " in name for name in names) == 2
    for height_in in (pdf.FIGURE_IN, pdf.MIN_FIGURE_IN):
        axes = pdf_canvas(figure, height_in).axes[0]
        pattern = re.fullmatch(r"test ?\((.*)\)", axes.get_xlabel().replace("\n", ""))  # wrapped after separators
        assert pattern is not None and "*" in pattern[1], axes.get_xlabel()
        ticks = ["".join(label.get_text().split()) for label in axes.get_xticklabels()]
        assert [pattern[1].replace("*", tick) for tick in ticks] == ["".join(name.split()) for name in names]
    glance = next(section for section in report.sections if section.key == "glance")
    write_html(ReportModel(report.title, report.provenance, (), (glance,)), tmp_path / "index.html", static=False)
    page = shared_browser(tmp_path_factory.getbasetemp() / "chromium-profile").open_page(
        tmp_path / "index.html", script="JSON.stringify(Array.from(document.querySelectorAll("
        "'#plot-glance-mbs .xtick text')).map(text => text.textContent))")
    assert page.errors == [] and ["".join(tick.split()) for tick in page.script_result] == \
        ["".join(name.split()) for name in names]  # whole, in lines


# --- the HTML page splits a wide table to the window's width ------------------------------------------------------

TABLES_JS = """JSON.stringify(Array.from(document.querySelectorAll('.table-wrap'))
  .filter(wrap => getComputedStyle(wrap).display != 'none').map(wrap => {
    const table = wrap.querySelector('table');
    const page = wrap.parentNode.getBoundingClientRect();
    return {id: table.id, title: table.caption.firstChild.textContent,
            headers: Array.from(table.tHead.rows[0].cells).map(cell => cell.textContent.trim()),
            facts: table.caption.querySelectorAll('.constants').length,
            fits: wrap.getBoundingClientRect().right <= page.right + 0.5 && wrap.scrollWidth <= wrap.clientWidth + 1};
  }))"""


def test_html_splits_a_wide_table_to_the_window_width(runs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory,
                                                     tmp_path: Path) -> None:
    """A real sweep's results table (17 columns) on the page at three window widths: whole where it fits, else in
    parts that each fit without scrolling, each starting with the column naming the rows, every column in one part,
    the facts said once; the narrower the window, the more parts."""
    from ptsbench.report.core.html import write_html
    from ptsbench.report.core.model import Report as ReportModel
    from test_report_browser import shared_browser

    browser = shared_browser(tmp_path_factory.getbasetemp() / "chromium-profile")
    report = load_report(runs["sweep"])
    results = next(section for section in report.sections if section.key == "results")
    write_html(ReportModel(report.title, report.provenance, (), (results,)), tmp_path / "index.html", static=False)
    table = next(block for block in results.blocks if isinstance(block, Table))
    shown, facts = arranged(table)
    names = [column.name for column in shown.columns]
    counts = {}
    for width_px in (2600, 1000, 640):
        page = browser.open_page(tmp_path / "index.html", script=TABLES_JS, width_px=width_px)
        assert page.errors == []
        parts = page.script_result
        assert all(part["fits"] for part in parts), (width_px, parts)
        keys = len(shown.keys)
        assert all(part["headers"][:keys] == names[:keys] for part in parts)  # the row names in every part
        assert sorted(name for part in parts for name in part["headers"][keys:]) == sorted(names[keys:])
        assert [part["facts"] for part in parts] == [len(facts)] + [0] * (len(parts) - 1) and facts
        counts[width_px] = len(parts)
        if len(parts) > 1:
            assert [part["title"] for part in parts][-1].endswith(f"(part {len(parts)} of {len(parts)})")
    assert counts[2600] == 1 < counts[1000] < counts[640], counts


def test_html_without_scripts_cuts_no_table(runs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory,
                                            tmp_path: Path) -> None:
    """The page as written, read with scripts disabled: the sweep's results table comes split to a printed page's
    width (measured in the wider of the fonts a browser may pick), so on a screen and as printed every part fits
    without scrolling, starts with the column naming the rows and holds its own columns, the facts said once;
    Chromium's print of the page, scripts still disabled, holds every header and cell. With scripts the same page
    joins the parts and shows the table whole where the window is wide enough."""
    import base64
    import subprocess

    from ptsbench.report.core.html import write_html
    from ptsbench.report.core.model import Report as ReportModel
    from test_report_browser import shared_browser

    browser = shared_browser(tmp_path_factory.getbasetemp() / "chromium-profile")
    report = load_report(runs["sweep"])
    results = next(section for section in report.sections if section.key == "results")
    write_html(ReportModel(report.title, report.provenance, (), (results,)), tmp_path / "index.html", static=False)
    shown, facts = arranged(next(block for block in results.blocks if isinstance(block, Table)))
    names = [column.name for column in shown.columns]
    keys = len(shown.keys)
    for width_px, media in ((703, "print"), (1400, "")):  # an A4 page's text width at 12 mm margins; a screen
        page = browser.open_page(tmp_path / "index.html", script=TABLES_JS, width_px=width_px, javascript=False,
                                 media=media)
        parts = page.script_result
        assert len(parts) > 1 and all(part["fits"] for part in parts), (width_px, parts)
        assert all(part["headers"][:keys] == names[:keys] for part in parts)
        assert [name for part in parts for name in part["headers"][keys:]] == names[keys:]
        assert [part["facts"] for part in parts] == [len(facts)] + [0] * (len(parts) - 1) and facts
        assert parts[-1]["title"].endswith(f"(part {len(parts)} of {len(parts)})")
    (tmp_path / "whole").mkdir()
    write_html(report, tmp_path / "whole" / "index.html", static=True)  # every chart says where it is instead
    said = browser.open_page(tmp_path / "whole" / "index.html", javascript=False).text
    assert said.count("this chart is drawn by the page's script, which this browser does not run; the figure is "
                      "in report.pdf.") == len(report.figures()) > 0
    joined = browser.open_page(tmp_path / "index.html", script=TABLES_JS, width_px=2600).script_result
    assert [part["headers"] for part in joined] == [names] and joined[0]["title"] == shown.title
    target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    try:
        browser.send("Page.enable", session=session)
        browser.send("Emulation.setScriptExecutionDisabled", {"value": True}, session=session)
        browser.send("Page.navigate", {"url": (tmp_path / "index.html").resolve().as_uri()}, session=session)
        browser.wait_for("Page.loadEventFired", session)
        printed = browser.send("Page.printToPDF", {"paperWidth": 8.27, "paperHeight": 11.69}, session=session)
    finally:
        browser.send("Target.closeTarget", {"targetId": target})
    (tmp_path / "printed.pdf").write_bytes(base64.b64decode(printed["data"]))
    text = " ".join(subprocess.run(["pdftotext", str(tmp_path / "printed.pdf"), "-"], capture_output=True, text=True,
                                   check=True).stdout.split())
    printed_pieces = set(pieces(text))  # names may wrap after a separator, never inside a word
    assert [name for name in names if not set(pieces(name)) <= printed_pieces] == []
    assert [cell for row in formatted_rows(shown) for cell in row if not set(pieces(cell)) <= printed_pieces] == []
    assert [word for width, _height, words in page_words(tmp_path / "printed.pdf") for word, box in words
            if box[2] > width - 12 / 25.4 * 72 + 1] == []  # inside the right margin


# --- charts drawn at load: a print of the page shows them ---------------------------------------------------------

def test_charts_are_drawn_at_load_and_printed(runs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory,
                                              tmp_path: Path) -> None:
    """Nothing scrolls the page or calls its draw-all: every chart is drawn at load (the page says so when the
    last is), and Chromium's own print of the page holds every chart's drawn axis titles."""
    import base64
    import subprocess
    import time

    from ptsbench.report.build import build_report
    from test_report_browser import shared_browser

    browser = shared_browser(tmp_path_factory.getbasetemp() / "chromium-profile")
    out = build_report(runs["quick"], static=True)
    report = load_report(runs["quick"])
    target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    try:
        browser.send("Page.enable", session=session)
        browser.send("Page.navigate", {"url": (out / "index.html").resolve().as_uri()}, session=session)
        browser.wait_for("Page.loadEventFired", session)
        deadline = time.monotonic() + 120  # drawing takes a few seconds on an idle machine
        state = ""
        while state != "all" and time.monotonic() < deadline:
            state = browser.send("Runtime.evaluate", {"expression": "document.documentElement.dataset.plotsDrawn"
                                                      " || ''", "returnByValue": True}, session=session)[
                "result"]["value"]
            time.sleep(0.2)
        assert state == "all"
        drawn_js = ("Array.from(document.querySelectorAll('.plot')).map(plot => plot.querySelectorAll("
                    "'.scatterlayer .trace, .barlayer .trace, .heatmaplayer image').length)")
        traces = browser.send("Runtime.evaluate", {"expression": drawn_js, "returnByValue": True},
                              session=session)["result"]["value"]
        assert len(traces) == len(report.figures()) > 0 and all(traces), traces  # every chart has its traces
        printed = browser.send("Page.printToPDF", {"printBackground": True}, session=session)["data"]
    finally:
        browser.send("Target.closeTarget", {"targetId": target})
    (tmp_path / "printed.pdf").write_bytes(base64.b64decode(printed))
    text = " ".join(subprocess.run(["pdftotext", str(tmp_path / "printed.pdf"), "-"], capture_output=True, text=True,
                                   check=True).stdout.split())
    for figure in report.figures():  # plotly draws the axis titles as text of the chart itself
        assert figure.y_label.split("(")[0].strip() in text, figure.key
    # the page lays its tables out again for the printed page's width: no word runs off the paper, and every
    # column of the results table is there (a table wider than its box would be clipped, not run off)
    past = [word for width, _height, words in page_words(tmp_path / "printed.pdf") for word, box in words
            if box[2] > width]
    assert past == []
    results, _facts = arranged(next(table for table in report.tables() if table.key == "results"))
    assert all(piece in text for column in results.columns for piece in column.name.split())
    assert all(cell in text for row in formatted_rows(results) for cell in row)


def test_host_cpu_busy_is_drawn_on_a_0_to_100_percent_axis(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A busy host (99.95-100 %) was drawn on a 99.95-100 % axis, a flat line looking like wild swings."""
    from ptsbench.report.core.draw_plotly import plotly_spec
    from ptsbench.report.core.style import PALETTE

    report = load_report(tiny_pts_run(tmp_path_factory.getbasetemp()))
    figures = [figure for figure in report.figures() if figure.key.endswith("cpu-per-round")]
    assert figures
    for figure in figures:
        assert figure.y_range == (0, 100)
        assert plotly_spec(figure, tuple(PALETTE))["layout"]["yaxis"]["range"] == [0, 100]


def test_trends_page_draws_mb_s_in_mb_s_with_x_labels(runs: dict[str, Path], tmp_path: Path,
                                                      tmp_path_factory: pytest.TempPathFactory) -> None:
    from test_report_browser import shared_browser

    db = str(tmp_path / "catalog.sqlite")
    assert run_cli("catalog", "update", str(runs["quick"]), str(runs["quick2"]), "--db", db).returncode == 0
    page = tmp_path / "trends.html"
    assert run_cli("catalog", "page", "--db", db, "--out", str(page)).returncode == 0
    name = "quick/SEQ1M-Q8T1-read read MB/s"
    stored = json.loads(run_cli("catalog", "values", name, "--db", db, "--format", "json").stdout)
    script = f"""(() => {{
      const value = document.getElementById('value');
      value.value = {json.dumps(name)}; value.dispatchEvent(new Event('change'));
      return JSON.stringify([...document.querySelectorAll('#chart text')].map(t => t.textContent));
    }})()"""
    result = shared_browser(tmp_path_factory.getbasetemp() / "chromium-profile").open_page(page, script=script)
    texts = result.script_result
    assert "1.2" in texts and "1.3" in texts  # the firmware of each run under its point (the runs' tags)
    assert "MB/s" in texts  # the y axis says its unit
    ticks = [float(text.replace(",", "")) for text in texts if re.fullmatch(r"[\d,.]+", text)][:5]  # then x's
    largest_mb_s = max(value["value"] for value in stored) / 1e6
    assert largest_mb_s * 1.1 <= max(ticks) <= largest_mb_s * 2.75  # MB/s, not bytes/s
    step = ticks[1] - ticks[0]  # round ticks: 1, 2, 2.5 or 5 times a power of ten apart
    assert ticks == pytest.approx([step * index for index in range(5)]) and step == float(f"{step:.2g}")
    assert '<option selected>' in page.read_text()  # a value most runs have (every value here: both runs)


# --- figures shown together agree ----------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["quick", "sweep", "run", "parallel"])
def test_iops_times_block_size_is_the_bandwidth_on_every_row(runs: dict[str, Path], kind: str) -> None:
    """Every table row that shows a block size, IOPS and MB/s: IOPS x block size = MB/s (fio's numbers, stored
    at full precision; the live line's are checked in test_runner)."""
    from ptsbench.units import parse_size_bytes

    checked = 0
    for table in load_report(runs[kind]).tables():
        names = [column.name for column in table.columns]
        if not {"IOPS", "MB/s", "bs"} <= set(names):
            continue
        iops, mb_s, bs = names.index("IOPS"), names.index("MB/s"), names.index("bs")
        for row in table.rows:
            if isinstance(row[iops], int | float) and isinstance(row[mb_s], int | float) and row[mb_s]:
                assert row[iops] * parse_size_bytes(str(row[bs])) / 1e6 == pytest.approx(row[mb_s], rel=1e-5), row
                checked += 1
    assert checked >= 4


def test_plot_json_names_the_job_of_a_run_of_several(runs: dict[str, Path]) -> None:
    """A job file's run holds several jobs: plot --json's table names each row's job (its rows could not be told
    apart), and a sweep, one job per run, has no job column (it would repeat the run's name)."""
    from ptsbench.plot.fiojson import JsonPlotOptions, make_json_plots

    def table_of(run: Path) -> tuple[list[str], list[tuple[object, ...]]]:
        result = make_json_plots([str(run)], JsonPlotOptions(out_dir=run.parent / f"{run.name}-charts"))
        return [column.name for column in result.table.columns], list(result.table.rows)

    names, rows = table_of(runs["parallel"])
    assert names[:2] == ["run", "job"]
    for path in sorted((runs["parallel"] / "cases").glob("*/fio.json")):
        jobs = json.loads(path.read_text())["jobs"]
        shown = {row[1] for row in rows if str(row[0]).startswith(path.parent.name)}
        assert shown == {job["jobname"] for job in jobs} and len(shown) == 2, (shown, rows)
    assert "job" not in table_of(runs["sweep"])[0]
