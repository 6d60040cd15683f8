"""The report of a case-runner run (`ptsbench run`), from a real fio run with the null engine: files, xlsx read back
against the store, PDF pages and text, figures from the interval logs and json+ bins, the live (atomic) rewrite,
the command line, and an older run's store."""

import html
import json
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli
from ptsbench.errors import PtsbenchError
from ptsbench.fio.output import MIN_TAIL_IOS
from ptsbench.report.build import build_report, load_report, write_report
from ptsbench.report.cases.report import RESULT_COLUMNS
from ptsbench.report.cases.tables import RESULT_PERCENTILES
from ptsbench.report.core import pdf
from ptsbench.report.core.figure import percentile_points
from test_hosts import NULL_JOB, Servers, hosts_arg
from test_report_browser import Browser, assert_clean_report_page, pdf_pages, pdf_text, shared_browser

# one worker runs this module's tests, so its module-wide runs (fixtures) are made once, not once per worker
pytestmark = pytest.mark.xdist_group("report")

# held to 100 IOPS a thread (an IO every 10 ms, which fio sleeps through): an unlimited null job spins a CPU; 3 s
# each (was 2), a status document more per job for the latency derived from them (3 values make a chart)
JOB_TEXT = """\
[global]
ioengine=null
size=1G
time_based
runtime=3
rate_iops=100

[randrw-4k]
rw=randrw
rwmixread=70
bs=4k
iodepth=4
numjobs=2

[seqread-128k]
stonewall
rw=read
bs=128k
"""


@pytest.fixture(scope="module")
def case_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real `ptsbench run`: one case, a mixed job with two threads and a sequential job, 500 ms logs."""
    folder = tmp_path_factory.mktemp("case-run")
    (folder / "mixed.fio").write_text(JOB_TEXT)
    run_dir = folder / "run"
    done = run_cli("run", str(folder / "mixed.fio"), "--out", str(run_dir), "--log-interval", "500")
    assert done.returncode == 0, done.stderr
    return run_dir


@pytest.fixture
def browser(tmp_path_factory: pytest.TempPathFactory) -> Browser:
    return shared_browser(tmp_path_factory.getbasetemp() / "chromium-profile")


@pytest.fixture(scope="module")
def case_report(case_run: Path) -> Path:
    return build_report(case_run, images=("png", "svg"))


def stored_jobs(run_dir: Path) -> list[dict[str, Any]]:
    return [job for path in sorted(run_dir.glob("cases/*/result.json")) for job in json.loads(path.read_text())["jobs"]]


def sheet_rows(path: Path, name: str) -> list[tuple[Any, ...]]:
    import openpyxl

    workbook = openpyxl.load_workbook(path, read_only=True)
    rows = [tuple(row) for row in workbook[name].iter_rows(values_only=True)]
    workbook.close()
    return rows


def test_report_has_every_file_and_figure(case_run: Path, case_report: Path) -> None:
    from PIL import Image

    assert case_report == case_run / "report"
    report = load_report(case_run)
    keys = [figure.key for figure in report.figures()]
    assert keys == ["glance-mbs", "case001-iops", "case001-mbs", "case001-lat", "case001-percentiles"]
    for key in keys:
        png, svg = case_report / "figures" / f"{key}.png", case_report / "figures" / f"{key}.svg"
        assert Image.open(png).info["Description"] == report.provenance  # provenance in the PNG metadata
        assert "<svg" in svg.read_text() and report.provenance in svg.read_text()
    assert "ptsbench" in report.provenance and "fio 3" in report.provenance
    # without --fio-lat-log, latency over time is derived from fio's status output, and its caption says so
    captions = {figure.key: figure.caption for figure in report.figures()}
    assert "status" in captions["case001-lat"] and "lat logs" not in captions["case001-lat"]
    assert "IO-weighted" in captions["case001-lat"] and "not IO-weighted" not in captions["case001-lat"]
    assert "From fio's iops logs" in captions["case001-iops"]
    assert not list(case_report.rglob(".*.tmp"))


def svg_texts(path: Path) -> list[str]:
    import re

    return [html.unescape(text) for text in re.findall(r"<text[^>]*>([^<]*)</text>", path.read_text())]


def test_figure_ticks_are_the_plotted_numbers(case_run: Path, case_report: Path) -> None:
    """Linear axes are labelled with the values themselves (1,500,000), never scaled by an offset or a factor
    written apart ('1e6', '+1.5e6') that a reader misses."""
    report = load_report(case_run)
    figure = next(figure for figure in report.figures() if figure.key == "case001-iops")
    top = max(value for series in figure.series for value in series.y if value is not None)
    texts = svg_texts(case_report / "figures" / "case001-iops.svg")
    assert not [text for text in texts if "e+" in text or re.fullmatch(r"[+−-]?[0-9.]+e[+−-]?[0-9]+", text)]
    ticks = [float(text.replace(",", "")) for text in texts if re.fullmatch(r"[0-9][0-9,]*(\.[0-9]+)?", text)]
    assert max(ticks) >= top / 2 and all("," in text for text in texts if re.fullmatch(r"[0-9]{4,}", text))


# the terminal table's columns -> the workbook's (the terminal writes QD and threads as one text, "4x2")
TERMINAL_TO_WORKBOOK = {"case": ("case",), "job": ("job",), "host": ("host",), "target": ("target",), "rw": ("rw",),
                        "bs": ("bs",), "QDxT": ("QD", "threads"), "IOPS": ("IOPS",), "MB/s": ("MB/s",),
                        "mean µs": ("lat mean (µs)",), "done +s": ("done after first host (s)",),
                        "run s": ("runtime (s)",), "IOs": ("latency IOs",), "fio steady state": ("fio steady state",),
                        **{f"p{p} µs": (f"lat p{p} (µs)",) for p in RESULT_PERCENTILES}}


def test_xlsx_results_equal_the_store(case_run: Path, case_report: Path) -> None:
    """The run's one workbook, results.xlsx (the report rewrites it and links to it, writing no other): every
    stored number at full precision in its own numeric cell, every percentile, QD and threads as numbers."""
    assert not (case_report / "report.xlsx").exists() and 'href="../results.xlsx"' in (
        case_report / "index.html").read_text()
    rows = sheet_rows(case_run / "results.xlsx", "results")
    names = list(rows[0])
    assert names == [column.name for column in RESULT_COLUMNS]
    by_key = {(row[names.index("job")], row[names.index("dir")]): dict(zip(names, row, strict=True))
              for row in rows[1:]}
    checked = 0
    for job in stored_jobs(case_run):
        for direction in job["directions"]:
            row = by_key[(job["name"], direction["direction"])]
            assert row["host"] == "-" and row["IOPS"] == pytest.approx(direction["iops"], rel=1e-15)
            assert row["MB/s"] == pytest.approx(direction["bw_bytes"] / 1e6, rel=1e-15)
            assert row["lat mean (µs)"] == pytest.approx(direction["lat"]["mean_ns"] / 1000, rel=1e-15)
            for percentile in RESULT_PERCENTILES:  # those with fewer than 10 IOs slower than them: not measured
                if (direction["lat"].get("beyond") or {}).get(percentile, MIN_TAIL_IOS) < MIN_TAIL_IOS:
                    assert row[f"lat p{percentile} (µs)"] is None
                else:
                    assert row[f"lat p{percentile} (µs)"] == pytest.approx(
                        direction["lat"]["percentiles_ns"][percentile] / 1000, rel=1e-15)
            assert row["latency IOs"] == direction["lat"]["n"]
            assert (row["QD"], row["threads"]) == ((4, 2) if job["name"] == "randrw-4k" else (1, 1))
            checked += 1
    assert checked == len(rows) - 1 == 4  # randrw: read, write, total; seqread: read
    for row in rows[1:]:
        for column, value in zip(RESULT_COLUMNS, row, strict=True):
            assert isinstance(value, str) if column.kind == "text" else isinstance(value, int | float | None), \
                (column.name, value)


def test_xlsx_results_sheet_is_the_terminal_table_with_fitting_columns_and_charts(case_run: Path,
                                                                                  case_report: Path) -> None:
    """Every column the terminal shows is in the results sheet (its rows' QDxT as QD and threads), the workbook
    opens on that sheet, each column is at least as wide as its longest header or text, and the native charts
    draw the IOPS column over the job names and each interval log's x / y columns."""
    import openpyxl
    from openpyxl.utils import get_column_letter

    shown = run_cli("show", str(case_run))
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    ruler = next(index for index, line in enumerate(lines) if line.startswith("───"))
    terminal = re.split(r"\s{2,}", lines[ruler - 1].strip()) + [line.split(":")[0] for line in lines[1:ruler - 1]]
    workbook = openpyxl.load_workbook(case_run / "results.xlsx")
    sheet = workbook["results"]
    assert workbook.active is not None and workbook.active.title == "results"
    rows = [list(row) for row in sheet.iter_rows(values_only=True)]
    names = rows[0]
    assert "QDxT" in terminal and all(name in names for column in terminal for name in TERMINAL_TO_WORKBOOK[column])
    quoted = [re.findall(r" (\d+x\d+) ", line) for line in lines[ruler + 1:ruler + 5]]
    assert quoted == [[f"{row[names.index('QD')]}x{row[names.index('threads')]}"] for row in rows[1:]]
    widths = {}
    for dimension in sheet.column_dimensions.values():  # openpyxl gives a run of equal widths once, at its start
        for index in range(dimension.min, dimension.max + 1):
            widths[index] = dimension.width
    for index, column in enumerate(zip(*rows, strict=True), start=1):
        texts = [value for value in column if isinstance(value, str)]
        longest = max(len(text) for text in texts) if texts else 0
        assert widths.get(index, 0) >= min(longest, 100), (names[index - 1], widths.get(index), longest)
    assert widths[names.index("target") + 1] < widths[names.index("how formed") + 1] <= 101
    (chart,) = sheet._charts
    iops, job = (get_column_letter(names.index(name) + 1) for name in ("IOPS", "job"))
    (series,) = chart.series
    assert series.val.numRef.f == f"results!${iops}$2:${iops}$5"
    assert series.cat.strRef.f == f"results!${job}$2:${job}$5"
    data = workbook["data case001-iops"]
    refs = [(line.xVal.numRef.f, line.yVal.numRef.f) for chart in data._charts for line in chart.series]
    assert [ref[0].split("!")[1][:3] for ref in refs] == ["$A$", "$C$", "$E$"][:len(refs)] and len(refs) >= 2
    assert all(ref[1].startswith("'data case001-iops'!") for ref in refs)


def test_xlsx_data_sheet_columns_fit_each_series_text(tmp_path: Path) -> None:
    """A figure's data sheet: each series' x and y columns as wide as their longest text as Excel shows it (its
    name and the axis label in the x column, the numbers in each), two columns per series."""
    import openpyxl

    from ptsbench.report.core.figure import Figure, Series
    from ptsbench.report.core.model import Report, Section, format_value
    from ptsbench.report.core.workbook import write_workbook

    series = (Series("a", (0.0, 1.5, 3.0), (1234567.0, 2.0, 3.0)),
              Series("a much longer series name", (10000.5, 2.0), (1.0, 7.25)))
    figure = Figure("case001-iops", "IOPS over time", "time (s)", "IOPS", series, data_sheet=True)
    write_workbook(Report("t", "p", (), (Section("case001", "Case 1", (), (figure,)),)), tmp_path / "w.xlsx")
    sheet = openpyxl.load_workbook(tmp_path / "w.xlsx")["data case001-iops"]
    widths = {index: int(dimension.width) for dimension in sheet.column_dimensions.values()
              for index in range(dimension.min, dimension.max + 1)}
    expected = {}
    for position, one in enumerate(series):
        shown_x = [one.name, figure.x_label, *(format_value(x, "number") for x in one.x)]
        shown_y = [figure.y_label, *(format_value(y, "number") for y in one.y)]
        expected[2 * position + 1] = max(map(len, shown_x)) + 2
        expected[2 * position + 2] = max(map(len, shown_y)) + 2
    assert widths == expected and len(set(expected.values())) == 4  # every column its own width


def test_xlsx_chart_of_a_figure_with_a_second_axis_draws_its_series_there(tmp_path: Path) -> None:
    """The workbook's native chart of a two-axis figure: the y2 series on a secondary axis titled with its unit,
    the data sheet's header naming each series' own axis."""
    import re
    import zipfile

    import openpyxl

    from ptsbench.report.core.figure import Figure, Series
    from ptsbench.report.core.model import Report, Section
    from ptsbench.report.core.workbook import write_workbook

    series = (Series("IOPS", (0, 1, 2), (9000.0, 21000.0, 35000.0), mode="bars"),
              Series("mean total latency", (0, 1, 2), (110.0, None, 450.0), y2=True))
    figure = Figure("qd-iops-latency", "IOPS and latency", "queue depth", "IOPS", series, data_sheet=True,
                    y2_label="total latency (µs)")
    write_workbook(Report("t", "p", (), (Section("charts", "Charts", (), (figure,)),)), tmp_path / "w.xlsx")
    sheet = openpyxl.load_workbook(tmp_path / "w.xlsx")["data qd-iops-latency"]
    assert [cell.value for cell in sheet[2]][:4] == ["queue depth", "IOPS", "queue depth", "total latency (µs)"]
    assert sheet["D4"].value is None  # no latency at the second depth: a blank, not a number
    with zipfile.ZipFile(tmp_path / "w.xlsx") as workbook:
        chart = workbook.read("xl/charts/chart1.xml").decode()
    plots = re.findall(r"<c:scatterChart>.*?</c:scatterChart>", chart, re.S)
    assert len(plots) == 2 and "mean total latency" in plots[1] and "mean total latency" not in plots[0]
    assert chart.count("<c:valAx>") == 4 and "total latency (µs)" in chart  # x and y of each plot


def test_xlsx_interval_data_is_fio_log_data(case_run: Path, case_report: Path) -> None:
    """A one-thread job's series is its log as fio wrote it; a two-thread job's is both threads merged by time."""
    rows = sheet_rows(case_run / "results.xlsx", "data case001-iops")
    names = list(rows[0])
    column = names.index("seqread-128k read")
    logged = [line.split(",") for line in next(case_run.glob("cases/*/logs/seqread-128k_iops.*.log")).read_text()
              .splitlines()]
    series = [(row[column], row[column + 1]) for row in rows[2:] if row[column] is not None]
    assert series == [(int(t) / 1000, float(v)) for t, v, *_ in logged]
    merged = names.index("randrw-4k read")
    threads = sorted(case_run.glob("cases/*/logs/randrw-4k_iops.*.log"))
    assert len(threads) == 2
    last_s = [max(int(line.split(",")[0]) / 1000 for line in thread.read_text().splitlines()) for thread in threads]
    merged_values = [row[merged + 1] for row in rows[2:] if row[merged] is not None]
    assert len(merged_values) >= 3 and all(value > 0 for value in merged_values)
    # merged to the end of the thread that logged last (fiologparser.py would stop at the first one's end)
    assert max(row[merged] for row in rows[2:] if row[merged] is not None) == pytest.approx(max(last_s))


def test_percentile_curve_agrees_with_fio_percentiles(case_run: Path) -> None:
    """The curve drawn from the json+ bins passes through every percentile fio reported for the job."""
    from ptsbench.fio.output import parse_jobs

    doc = json.loads(next(case_run.glob("cases/*/fio.json")).read_text())
    for job in parse_jobs(doc):
        for direction in job.directions:
            percentiles, values_ns = percentile_points(direction.lat.bins)
            assert percentiles[-1] == pytest.approx(100.0) and values_ns[-1] == max(direction.lat.bins)
            for name, fio_value_ns in direction.lat.percentiles_ns.items():
                first = next(index for index, p in enumerate(percentiles) if p >= float(name) - 1e-9)
                assert values_ns[first] == fio_value_ns, (job.name, direction.direction, name)


def test_pdf_pages_and_text(case_run: Path, case_report: Path) -> None:
    report = load_report(case_run)
    pdf_path = case_report / "report.pdf"
    assert pdf_pages(pdf_path) == len(pdf.layout(report))
    text = pdf_text(pdf_path)
    for job in stored_jobs(case_run):
        for direction in job["directions"]:
            assert f"{direction['iops']:,.1f}" in text
            assert f"{direction['bw_bytes'] / 1e6:,.2f}" in text
    for needle in ("Results", "Case 1: mixed", "Environment", "IOPS over time", "total latency percentiles",
                   report.provenance[:40]):
        assert needle in text


def test_html_in_a_real_browser(case_run: Path, case_report: Path, browser: Browser) -> None:
    report = load_report(case_run)
    page = browser.open_page(case_report / "index.html")
    assert_clean_report_page(page, expected_plots=len(report.figures()))
    assert page.title == report.title
    html = (case_report / "index.html").read_text()
    assert html.count("<script>") == 2 and "Plotly" in html and 'src="http' not in html
    for job in stored_jobs(case_run):
        assert f"{job['directions'][0]['iops']:,.1f}" in page.text


def test_live_rewrite_is_atomic_and_marked_in_progress(case_run: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(case_run, run_dir, ignore=shutil.ignore_patterns("report"))
    seen: list[str] = []
    stop = threading.Event()

    def reader() -> None:
        index = run_dir / "report" / "index.html"
        while not stop.is_set():
            if index.exists():
                seen.append(index.read_text())

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for number in range(1, 4):
            out = write_report(run_dir, in_progress=f"case {number} of 3")
    finally:
        stop.set()
        thread.join()
    assert out == run_dir / "report"
    assert seen and all(text.rstrip().endswith("</html>") for text in seen)
    html = (out / "index.html").read_text()
    assert "In progress: case 3 of 3" in html and 'http-equiv="refresh"' in html
    assert (run_dir / "results.xlsx").exists() and not (out / "report.pdf").exists()  # live: no PDF, no figures
    final = write_report(run_dir)
    assert "In progress" not in (final / "index.html").read_text() and (final / "report.pdf").exists()


def test_write_report_turns_a_damaged_store_into_one_error(case_run: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(case_run, run_dir, ignore=shutil.ignore_patterns("report"))
    next(run_dir.glob("cases/*/result.json")).write_text("{ not json")
    with pytest.raises(PtsbenchError, match="result.json is damaged"):
        write_report(run_dir, in_progress="case 1")


def test_report_of_an_older_run_without_newer_manifest_fields(case_run: Path, tmp_path: Path) -> None:
    """A run written before host facts, targets and log intervals were recorded (same schema version)."""
    run_dir = tmp_path / "old"
    shutil.copytree(case_run, run_dir, ignore=shutil.ignore_patterns("report"))
    manifest = json.loads((run_dir / "manifest.json").read_text())
    for key in ("host", "targets", "log_interval_ms", "command_line", "expected_duration_s", "overrides"):
        manifest.pop(key, None)
    manifest["ptsbench_version"] = "0.0.1"
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    out = build_report(run_dir, static=False)
    html = (out / "index.html").read_text()
    assert "ptsbench 0.0.1" in html and "Results" in html
    manifest["schema_version"] = 99
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    done = run_cli("report", str(run_dir))
    assert done.returncode == 2 and "store schema 99" in done.stderr and "Traceback" not in done.stderr


def test_report_command(case_run: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(case_run, run_dir, ignore=shutil.ignore_patterns("report"))
    done = run_cli("report", str(run_dir), "--no-static")
    assert done.returncode == 0, done.stderr
    assert str(run_dir / "report" / "index.html") in done.stderr
    assert not (run_dir / "report" / "report.pdf").exists()
    missing = run_cli("report", str(tmp_path / "nothing"))
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "no such run directory" in missing.stderr


def workbook_values(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every sheet's cell values, as a workbook read back gives them."""
    import openpyxl

    workbook = openpyxl.load_workbook(path, read_only=True)
    values = {name: [tuple(row) for row in workbook[name].iter_rows(values_only=True)] for name in workbook.sheetnames}
    workbook.close()
    return values


def test_images_are_written_only_on_request_and_change_nothing_else(case_run: Path, tmp_path: Path) -> None:
    """A default report writes no image files; --images svg writes one SVG per figure (no PNG), with the run's
    provenance in its metadata; the PDF and the workbook are the same either way. A later report without
    --images removes the images the earlier one wrote (they would show older data beside the new)."""
    import xml.etree.ElementTree as ElementTree

    plain, imaged = tmp_path / "plain", tmp_path / "imaged"
    for run_dir in (plain, imaged):
        shutil.copytree(case_run, run_dir, ignore=shutil.ignore_patterns("report"))
    assert (done := run_cli("report", str(plain))).returncode == 0, done.stderr
    assert (done := run_cli("report", str(imaged), "--images", "svg")).returncode == 0, done.stderr
    report = load_report(imaged)
    assert sorted(path.name for path in (plain / "report").iterdir()) == ["index.html", "report.pdf"]
    figures = imaged / "report" / "figures"
    assert sorted(path.name for path in figures.iterdir()) == sorted(f"{f.key}.svg" for f in report.figures())
    dublin_core = "{http://purl.org/dc/elements/1.1/}"
    for figure in report.figures():
        root = ElementTree.parse(figures / f"{figure.key}.svg").getroot()
        assert root.findtext(f".//{dublin_core}description") == report.provenance
        assert root.findtext(f".//{dublin_core}title") == figure.title
    # the page links the images only where they are
    assert 'href="figures/"' in (imaged / "report" / "index.html").read_text()
    assert "figures/" not in (plain / "report" / "index.html").read_text()
    # the PDF's pages and text, and every cell of the workbook, do not depend on the images
    pdfs = [run_dir / "report" / "report.pdf" for run_dir in (plain, imaged)]
    assert pdf_pages(pdfs[0]) == pdf_pages(pdfs[1]) == len(pdf.layout(report))
    assert pdf_text(pdfs[0]) == pdf_text(pdfs[1])
    assert workbook_values(plain / "results.xlsx") == workbook_values(imaged / "results.xlsx")
    assert (done := run_cli("report", str(imaged))).returncode == 0, done.stderr
    assert not figures.exists() and "figures/" not in (imaged / "report" / "index.html").read_text()
    refused = run_cli("report", str(imaged), "--no-static", "--images", "png")
    assert refused.returncode == 2 and "--images" in refused.stderr and "Traceback" not in refused.stderr


def test_report_of_a_run_with_a_failed_case(tmp_path: Path) -> None:
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "a.fio").write_text("[ok]\nioengine=null\nsize=1G\ntime_based\nruntime=1\nrw=read\n")
    (tmp_path / "jobs" / "b.fio").write_text("[bad]\nioengine=null\nsize=1G\nrw=read\nbogus_option=1\n")
    done = run_cli("run", str(tmp_path / "jobs"), "--out", str(tmp_path / "run"))
    assert done.returncode == 1
    report = load_report(tmp_path / "run")
    assert report.warnings and "case b failed" in report.warnings[0] and "bogus_option" in report.warnings[0]
    (ok_row, failed_row) = next(t for t in report.tables() if t.key == "results").rows
    status, iops = ([column.name for column in RESULT_COLUMNS].index(name) for name in ("status", "IOPS"))
    assert ok_row[status] == "ok" and isinstance(ok_row[iops], float)
    # the terminal table keeps every column readable: fio's message does not squeeze the numbers away
    assert f"{ok_row[iops]:,.0f}" in done.stdout and "p99.9 µs" in done.stdout and "…" not in done.stdout
    assert "bogus_option" in done.stdout
    assert failed_row[status].startswith("failed:") and failed_row[status + 1:iops + 11] == (None,) * 13  # QD..done +s
    glance = next(t for t in report.tables() if t.key == "grid").rows
    assert [row[0] for row in glance] == ["a: ok", "b (failed)"] and glance[1][1:] == (None,) * 6
    case_b = next(section for section in report.sections if section.key == "case002")
    assert case_b.figures() == [] and any("Case failed" in getattr(block, "text", "") for block in case_b.blocks)
    out = build_report(tmp_path / "run", static=False)
    assert "bogus_option" in (out / "index.html").read_text()


def test_markup_in_names_stays_text(tmp_path: Path) -> None:
    """Job names, messages and labels go into the page as text: no element, request or script comes from them."""
    from html.parser import HTMLParser

    from ptsbench.report.core.figure import Figure, Series
    from ptsbench.report.core.html import write_html
    from ptsbench.report.core.model import Column, Report, Section, Table, Text

    hostile = "</script><img src='http://192.0.2.1/x.png'><!--"
    figure = Figure("f", f"title {hostile}", "x (s)", "y", (Series(hostile, (1.0, 2.0), (3.0, 4.0)),),
                    caption=hostile)
    table = Table("t", hostile, (Column("name"), Column("IOPS", "iops")), ((hostile, 1.5),))
    report = Report(hostile, "provenance", (("fact", hostile),),
                    (Section("s", hostile, (("fact", hostile),), (Text(hostile, "warning"), table, figure)),))
    write_html(report, tmp_path / "index.html", static=False)

    class Elements(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.tags: list[str] = []
            self.text: list[str] = []
            self.scripts: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.tags.append(tag)

        def handle_data(self, data: str) -> None:
            (self.scripts if self.lasttag == "script" else self.text).append(data)

    page = Elements()
    page.feed((tmp_path / "index.html").read_text())
    assert "img" not in page.tags and page.tags.count("script") == 3  # plotly.js, the figure's data, the drawing
    assert "".join(page.text).count(hostile) >= 5
    (spec,) = [json.loads(script) for script in page.scripts if script.startswith('{"data"')]
    assert spec["data"][0]["name"] == hostile


@pytest.fixture
def fio_servers() -> Iterator[Servers]:
    """Real fio servers on 127.0.0.x (test_hosts.Servers), killed at teardown."""
    pool = Servers()
    try:
        yield pool
    finally:
        pool.stop_all()


def test_report_of_a_run_on_two_hosts(fio_servers: Servers, tmp_path: Path) -> None:
    """fio client/server: a row, a series and a percentile curve per host (logs carry the host in their name)."""
    hosts = fio_servers(2)
    (tmp_path / "null.fio").write_text(NULL_JOB.format(runtime=1.5))
    done = run_cli("run", str(tmp_path / "null.fio"), "--hosts", hosts_arg(hosts), "--out", str(tmp_path / "run"),
                   "--log-interval", "250")
    assert done.returncode == 0, done.stderr
    report = load_report(tmp_path / "run")
    rows = next(t for t in report.tables() if t.key == "results").rows
    assert {(row[1], row[2]) for row in rows if row[6] == "read"} == {
        (job, host) for job in ("rr", "mix") for host in ("127.0.0.1", "127.0.0.2", "all hosts")}
    figures = {figure.key: figure for figure in report.figures()}
    for key in ("case001-iops", "case001-percentiles"):
        names = {series.name for series in figures[key].series}
        assert {"rr 127.0.0.1 read", "rr 127.0.0.2 read", "mix 127.0.0.2 write"} <= names, key


def test_a_lone_series_keeps_its_name_in_the_html_legend() -> None:
    """A case whose other jobs logged nothing draws one line; plotly would hide its legend (the PDF shows it)."""
    from ptsbench.report.core.draw_plotly import plotly_spec
    from ptsbench.report.core.figure import Figure, Series

    one = Figure(key="iops", title="IOPS over time", x_label="time (s)", y_label="IOPS",
                 series=(Series(name="RND4K-Q1T1-write write", x=(1.0,), y=(16425.0,)),))
    spec = plotly_spec(one, ("#1f77b4",))
    assert spec["layout"]["showlegend"] is True and spec["data"][0]["name"] == "RND4K-Q1T1-write write"
