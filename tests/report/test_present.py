"""One look tells the answer: the headline numbers on the first screen of every report (PTS, quick, compare) in a
real browser at 1400 px, terminal tables that fit 80-120 columns without cutting a number or a name (and piped
output never cut), and the demo-sized PDF read back with poppler (pages, smallest font, first page's title)."""

import csv
import fcntl
import json
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import termios
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli
from ptsbench.report.build import build_compare, build_report, load_compare, load_report
from test_report_browser import Browser, pdf_pages, shared_browser
from test_report_pts import tiny_pts_run

# one worker runs this module's tests, so its module-wide runs (fixtures) are made once, not once per worker
pytestmark = pytest.mark.xdist_group("present")

FIRST_SCREEN_PX = 900  # the first screen of a 1400 x 900 browser window
# The text of every table cell and heading the first screen shows (fully inside it), and the page's widest overflow.
FIRST_SCREEN_JS = f"""
JSON.stringify((() => {{
  const bottom = Math.min(window.innerHeight, {FIRST_SCREEN_PX});
  const seen = Array.from(document.querySelectorAll('td, th, h1, h2, p, .banner')).filter(element => {{
    const box = element.getBoundingClientRect();
    return box.height > 0 && box.top >= 0 && box.bottom <= bottom && box.right <= window.innerWidth;
  }}).map(element => element.innerText.trim());
  const scrolled = Array.from(document.querySelectorAll('.table-wrap')).filter(
    wrap => wrap.scrollWidth > wrap.clientWidth + 1).map(wrap => wrap.querySelector('table').id);
  // a cell whose text has no space, hyphen or '/' (a path wraps after one) to wrap at, drawn on more than one line,
  // was broken mid-word
  const broken = Array.from(document.querySelectorAll('table.data td')).filter(cell => {{
    const text = cell.innerText.trim();
    const range = document.createRange();
    range.selectNodeContents(cell);
    const tops = new Set(Array.from(range.getClientRects()).map(box => Math.round(box.top)));
    return text && !/[\\s\\/-]/.test(text) && tops.size > 1;
  }}).map(cell => cell.innerText.trim());
  const title = document.querySelector('h1');
  const line = parseFloat(getComputedStyle(title).lineHeight) || 30;
  return {{seen: seen, scrolled: scrolled, broken: broken,
           titleLines: Math.round(title.getBoundingClientRect().height / line)}};
}})())
"""
QUICK_NULL_JOB = """[global]
ioengine=null
size=64m
time_based
runtime=0.3

[randread-4k]
rw=randread
bs=4k

[randwrite-4k]
stonewall
rw=randwrite
bs=4k
"""


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real `ptsbench quick` on a small scratch file (the eight CrystalDiskMark tests, 0.3 s each)."""
    run_dir = tmp_path_factory.mktemp("quick") / "run"
    done = run_cli("quick", "--runtime", "0.3", "--size", "8M", "--out", str(run_dir))
    assert done.returncode == 0, done.stderr
    return run_dir


@pytest.fixture(scope="module")
def qd_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One job file run at queue depth 16 and at 32 (the null engine: fast): two runs differing in one setting."""
    folder = tmp_path_factory.mktemp("qd")
    (folder / "jobs.fio").write_text(QUICK_NULL_JOB)
    runs = []
    for depth in ("16", "32"):
        done = run_cli("run", str(folder / "jobs.fio"), "--set", f"iodepth={depth}", "--out",
                       str(folder / f"qd{depth}"))
        assert done.returncode == 0, done.stderr
        runs.append(folder / f"qd{depth}")
    return runs[0], runs[1]


@pytest.fixture
def browser(tmp_path_factory: pytest.TempPathFactory) -> Browser:
    return shared_browser(tmp_path_factory.getbasetemp() / "chromium-profile")


def stored_directions(run_dir: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """(job, direction) -> fio's numbers as stored."""
    return {(job["name"], direction["direction"]): direction
            for path in sorted(run_dir.glob("cases/*/result.json"))
            for job in json.loads(path.read_text())["jobs"] for direction in job["directions"]}


def first_screen(browser: Browser, page: Path, shot: Path) -> dict[str, Any]:
    result = browser.open_page(page, script=FIRST_SCREEN_JS)
    shot.write_bytes(result.screenshot_png)
    assert result.errors == [], result.errors
    seen: dict[str, Any] = result.script_result
    assert seen["scrolled"] == [], f"tables wider than the page at 1400 px: {seen['scrolled']}"
    assert seen["titleLines"] == 1, "the title wraps"
    assert seen["broken"] == [], f"table cells broken mid-word: {seen['broken'][:5]}"
    return seen


def test_first_screen_of_a_pts_report(tmp_path_factory: pytest.TempPathFactory, browser: Browser) -> None:
    run_dir = tmp_path_factory.mktemp("pts-first") / "run"
    shutil.copytree(tiny_pts_run(tmp_path_factory.getbasetemp()), run_dir, ignore=shutil.ignore_patterns("report"))
    out = build_report(run_dir, static=False)
    seen = first_screen(browser, out / "index.html", out / "first-screen.png")
    cells = set(seen["seen"])
    assert "At a glance" in cells
    phases = [json.loads(path.read_text()) for path in sorted(run_dir.glob("pts/*/phase.json"))]
    tracked = 0
    for phase in phases:
        for label, determined in (phase.get("determination") or {}).items():
            value = phase["window"][determined["cell"]]
            assert f"{value['iops']:,.1f}" in cells, (label, value["iops"])  # IOPS and MB/s of every tracked cell
            assert f"{value['bw_bytes'] / 1e6:,.2f}" in cells, (label, value["bw_bytes"])
            assert ("reached" if determined["steady"] else "NOT reached") in cells
            tracked += 1
    assert tracked >= 3
    banner = next(text for text in seen["seen"] if "PTS-compliant" in text)  # the verdict in one line
    assert "\n" not in banner and len(banner) < 160


def test_first_screen_of_a_quick_report(quick_run: Path, browser: Browser) -> None:
    out = build_report(quick_run, static=False)
    seen = first_screen(browser, out / "index.html", out / "first-screen.png")
    cells = seen["seen"]
    stored = stored_directions(quick_run)
    for test in ("SEQ1M-Q8T1", "SEQ1M-Q1T1", "RND4K-Q32T1", "RND4K-Q1T1"):
        read, write = stored[(f"{test}-read", "read")], stored[(f"{test}-write", "write")]
        row = cells[cells.index(test):cells.index(test) + 5]  # the grid: test, read and write MB/s, IOPS
        assert row[1:] == [f"{read['bw_bytes'] / 1e6:,.2f}", f"{write['bw_bytes'] / 1e6:,.2f}",
                           f"{read['iops']:,.0f}", f"{write['iops']:,.0f}"], row
    assert "glance-mbs" in [figure.key for figure in load_report(quick_run).figures()]  # and as a chart


def test_first_screen_of_a_compare_report(qd_runs: tuple[Path, Path], tmp_path: Path, browser: Browser) -> None:
    qd16, qd32 = qd_runs
    out = build_compare([qd16, qd32], tmp_path / "cmp", ["qd16", "qd32"], static=False)
    seen = first_screen(browser, out / "index.html", out / "first-screen.png")
    cells = seen["seen"]
    assert "What differs: QD: 16 (qd16) vs 32 (qd32)" in cells  # the one setting they differ in
    # the fleet table: a row per run with every test's IOPS (random jobs), the median under them
    assert "randread-4k read (IOPS)" in cells and "randwrite-4k write (IOPS)" in cells and "median" in cells
    for label, run in (("qd16", qd16), ("qd32", qd32)):
        stored = stored_directions(run)
        row = cells[cells.index(label):]
        expected = [f"{stored[(job, direction)]['iops']:,.1f}"
                    for job, direction in (("randread-4k", "read"), ("randwrite-4k", "write"))]
        assert row[1:3] == expected, (expected, row[:9])  # values right after the run, the descriptions after them
    # the detailed table pairs the rows by workload too (no row of one run alone), QD compared side by side
    compared = next(t for t in load_compare([qd16, qd32], ["qd16", "qd32"]).tables() if t.key == "results")
    assert len(compared.rows) == len(next(t for t in load_report(qd16).tables() if t.key == "results").rows)
    qd = dict(compared.groups)["QD"]
    assert {(row[qd[0]], row[qd[1]]) for row in compared.rows} == {(16, 32)}


def test_compare_prints_the_side_by_side_table(qd_runs: tuple[Path, Path], tmp_path: Path) -> None:
    qd16, qd32 = qd_runs
    done = run_cli("compare", str(qd16), str(qd32), "--out", str(tmp_path / "cmp"), "--no-static")
    assert done.returncode == 0, done.stderr
    first, second = stored_directions(qd16), stored_directions(qd32)
    a, b = first[("randread-4k", "read")], second[("randread-4k", "read")]
    line = next(line for line in done.stdout.splitlines() if line.startswith("randread-4k") and "×" in line
                and f"{a['iops']:,.0f}" in line)
    assert f"{b['iops']:,.0f}" in line and f"{b['iops'] / a['iops']:.3f}×" in line
    assert "What differs: QD" in done.stdout


# --- terminal widths --------------------------------------------------------------------------------------------

def run_in_terminal(args: list[str], columns: int) -> str:
    """`python -m ptsbench ARGS` on a pseudo-terminal `columns` wide (as a user's terminal), its output."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 60, columns, 0, 0))
    env = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES")}
    process = subprocess.Popen([sys.executable, "-m", "ptsbench", *args], stdin=subprocess.DEVNULL, stdout=slave,
                               stderr=subprocess.DEVNULL, env={**env, "TERM": "xterm", "NO_COLOR": "1"})
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 1 << 16)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    assert process.wait(timeout=120) == 0
    os.close(master)
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(chunks).decode()).replace("\r\n", "\n")


def assert_whole(text: str, needles: list[str], columns: int | None) -> None:
    """Every number and name appears whole on one line, nothing is marked cut, no line is wider than the terminal."""
    lines = text.splitlines()
    assert "…" not in text
    for needle in needles:
        assert any(needle in line for line in lines), (columns, needle)
    if columns is not None:
        assert max(len(line.rstrip()) for line in lines) <= columns


@pytest.mark.parametrize("columns", [80, 100, 120, None])
def test_quick_table_fits_the_terminal(quick_run: Path, columns: int | None) -> None:
    stored = stored_directions(quick_run)
    needles = [name for name, _ in stored]
    needles += [f"{d['iops']:,.0f}" for d in stored.values()] + [f"{d['bw_bytes'] / 1e6:,.2f}" for d in stored.values()]
    needles += [str(quick_run / "scratch.dat"), "SEQ1M-Q8T1", "RND4K-Q1T1"]
    if columns is None:  # piped: every column, at the tables' own width
        done = run_cli("show", str(quick_run))
        assert done.returncode == 0
        text = done.stdout
        needles += ["p90 µs", "p95 µs", "p99.9 µs"]
    else:
        text = run_in_terminal(["show", str(quick_run)], columns)
    assert_whole(text, needles, columns)
    grid = text[text.index("Read and write per test"):]
    assert grid.splitlines()[1].split()[:5] == ["test", "read", "MB/s", "write", "MB/s"]
    header = next(line for line in text.splitlines() if line.startswith("job "))
    assert header.split().count("rw") == 1 and "dir" not in header.split() and "case" not in header.split()


@pytest.mark.parametrize("columns", [80, 100, 120, None])
def test_pts_show_fits_the_terminal(tmp_path_factory: pytest.TempPathFactory, columns: int | None) -> None:
    run_dir = tiny_pts_run(tmp_path_factory.getbasetemp())
    iops = json.loads((run_dir / "pts" / "iops" / "phase.json").read_text())
    needles = [f"{cell['iops']:,.1f}" for cell in iops["window"].values()]
    needles += [f"{determined['average']:,.1f}" for determined in iops["determination"].values()]
    # the least-squares line as its slope and intercept, each whole (written as 'y = a x + b' it wrapped over four
    # lines at 80 columns; the equation is in the measurement window figure's caption)
    needles += [f"{determined[key]:,.3f}" for determined in iops["determination"].values()
                for key in ("slope", "intercept")]
    needles += ["Throughput", "Write saturation", "rnd 4k 0/100"]
    if columns is None:
        done = run_cli("show", str(run_dir))
        assert done.returncode == 0
        text = done.stdout
        needles += [str(run_dir), "slope per round"]  # piped: the full path and every column
    else:
        text = run_in_terminal(["show", str(run_dir)], columns)
    assert_whole(text, needles, columns)
    assert "y = " not in text
    lines = text.splitlines()
    assert lines[next(i for i, line in enumerate(lines) if "status done" in line) + 1].startswith("target ")
    answer = next(i for i, line in enumerate(lines) if line.startswith("Tracked values at steady state"))
    assert answer < next(i for i, line in enumerate(lines) if line.startswith("IOPS: block size"))  # answer first


def test_show_of_short_cells_imports_no_numpy(tmp_path_factory: pytest.TempPathFactory) -> None:
    # no stored series is long enough to hold a drop (2 x 3 s): none is searched, and numpy is not imported for it
    run_dir = tiny_pts_run(tmp_path_factory.getbasetemp())
    code = ("import sys\nfrom ptsbench.cli import main\nsys.argv = ['ptsbench', 'show', sys.argv[1]]\ntry:\n"
            "    main()\nexcept SystemExit:\n    pass\nprint('numpy' in sys.modules, file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code, str(run_dir)], capture_output=True, text=True, timeout=120)
    assert done.stderr.splitlines()[-1] == "False", done.stderr
    assert "Drops: none found in the per-second data of" in done.stdout


def test_show_json_and_csv_of_a_pts_run(tmp_path_factory: pytest.TempPathFactory) -> None:
    run_dir = tiny_pts_run(tmp_path_factory.getbasetemp())
    iops = json.loads((run_dir / "pts" / "iops" / "phase.json").read_text())
    tables = json.loads(run_cli("show", str(run_dir), "--format", "json").stdout)
    headline = next(table for table in tables if table["key"] == "headline")
    first = next(row for row in headline["rows"] if row[0] == "IOPS")
    assert first[2] == pytest.approx(iops["window"][first[1]]["iops"], rel=1e-12)
    csv_text = run_cli("show", str(run_dir), "--format", "csv").stdout
    assert csv_text.startswith("table,row,column,value\n") and f"headline,IOPS / {first[1]},IOPS," in csv_text


def test_bare_ptsbench_prints_its_help() -> None:
    done = run_cli()
    assert done.returncode == 0 and done.stdout.startswith("Usage: ") and "error" not in done.stderr
    assert "Commands:" in done.stdout
    wrong = run_cli("run", "--runtim", "1")
    assert wrong.returncode == 2 and "?:" not in wrong.stderr and ".:" not in wrong.stderr
    assert wrong.stderr.count("\n") == 1


# --- the PDF ----------------------------------------------------------------------------------------------------

BOX_PER_PT = 0.925  # poppler's word box of Helvetica is 0.925 x its font size (9 pt: 8.32 pt high)


def pdf_font_sizes(path: Path) -> list[float]:
    """The font size of every word of three or more characters poppler finds on the pages (pdftotext -bbox; shorter
    pieces are what it makes of slanted 3D axis titles)."""
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext is not installed (apt-get install poppler-utils)")
    html = subprocess.run(["pdftotext", "-bbox", str(path), "-"], capture_output=True, text=True, check=True).stdout
    pattern = r'<word xMin="[\d.]+" yMin="([\d.]+)" xMax="[\d.]+" yMax="([\d.]+)">([^<]*)</word>'
    return [(float(y_max) - float(y_min)) / BOX_PER_PT for y_min, y_max, word in re.findall(pattern, html)
            if len(word) >= 3]


def test_pdf_of_a_pts_run_reads_back(tmp_path_factory: pytest.TempPathFactory) -> None:
    run_dir = tmp_path_factory.mktemp("pts-pdf") / "run"
    shutil.copytree(tiny_pts_run(tmp_path_factory.getbasetemp()), run_dir, ignore=shutil.ignore_patterns("report"))
    out = build_report(run_dir)
    pdf_path = out / "report.pdf"
    pages = pdf_pages(pdf_path)
    assert pages <= 26  # the same four tests as the demo (3D charts take a page's width: at half it their labels
    #                     run into each other)
    sizes = pdf_font_sizes(pdf_path)
    assert min(sizes) >= 7.9  # figure captions and legends, page headers and footers: 8 pt
    assert sorted(sizes)[len(sizes) // 2] >= 8.9  # most text (tables, facts, body): 9 pt
    first = subprocess.run(["pdftotext", "-f", "1", "-l", "1", "-layout", str(pdf_path), "-"], capture_output=True,
                           text=True, check=True).stdout
    report = load_report(run_dir)
    assert first.lstrip().startswith(report.title)  # the title first, on one line that fits the page
    assert "At a glance" in first and "Tracked values at steady state" in first


# --- the dry run ------------------------------------------------------------------------------------------------

def test_dry_run_starts_with_what_matters(tmp_path: Path) -> None:
    done = run_cli("pts", str(tmp_path / "t.dat"), "--size", "1G", "--dry-run")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1] == "# Tests: IOPS, Throughput, Latency, Write saturation"
    assert re.fullmatch(r"# Worst case: \d+ h \d+ min in all \(.*, about 17 s of purges and preconditioning; "
                        r"start-ups counted as on an idle machine, .*\)", lines[2]), lines[2]
    assert lines[3] == "# Purges: none (the purge method at run time is none)"  # a file cannot be purged
    # IOPS, Throughput (two phases: 128 KiB and 1 MiB), Latency: each preconditions with 2 x 1 GiB; WSAT does not
    assert lines[4] == ("# Preconditioning: 8.0 GiB of sequential writes, about 17 s at 500 MB/s, assumed "
                        "(--measure-rate measures it with a few seconds of reads of the device)"), lines[4]
    assert lines[5].startswith("# Purge at run time: none") and lines[6].startswith("# Write cache: set to disabled")
    assert lines[7].startswith("# Can be PTS-compliant: no, 1 deviation (the purge")  # a file cannot be purged
    assert "[global]" not in done.stdout and len(lines) < 22  # job files only with --verbose
    assert "[global]" in run_cli("pts", str(tmp_path / "t.dat"), "--size", "1G", "--dry-run", "--verbose").stdout
    short = run_cli("pts", "--profile", "demo", "--tests", "iops,hir,xsr,cbw", "--max-rounds", "3", "--dry-run",
                    "--out", str(tmp_path / "run")).stdout
    assert "# Steady state cannot be judged: at most 3 round(s)" in short
    deviations = [line for line in short.splitlines() if line.startswith("#   - ")]
    assert deviations and not [line for line in deviations if re.search(r"\b[a-z]+_[a-z_]+\b", line)]  # no fields
    assert "#   - Cross stimulus recovery: access groups of 8 s, 6 s, 8 s (PTS: 8 h, 6 h, 8 h)" in deviations


def test_plot_summary_fits_80_columns(tmp_path: Path) -> None:
    """`ptsbench plot` at 80 columns: every row of the summary on one line (none wrapped), its kind with the unit, its
    count with what it counts, min, mean and max beside them; the empty percentile columns named once; what the
    windows are in a note; the note on averaged latency. (Latency logs only: the windows' IOPS have percentiles, four
    more columns. The job ran for 1 s: fio reads runtime=0.5 as 0, and then logged only its exit's window, or on a
    busy host an IOPS window too, whose percentiles split the table.)"""
    (tmp_path / "jobs.fio").write_text("[global]\nioengine=null\nrw=randrw\nbs=4k\ntime_based\nruntime=1\n"
                                       "size=64m\n[win]\nlog_avg_msec=100\nwrite_lat_log=win\n")
    subprocess.run(["fio", "jobs.fio", "--output=/dev/null"], cwd=tmp_path, check=True, capture_output=True,
                   timeout=60)
    text = run_in_terminal(["plot", str(tmp_path), "--out", str(tmp_path / "charts")], 80)
    lines = text.splitlines()
    table = lines[:next(number for number, line in enumerate(lines) if line.startswith("note: "))]
    assert_whole("\n".join(table), ["Summary of the values drawn"], 80)
    assert "part 1 of" not in text  # the whole table in 80 columns
    header = next(line for line in table if line.startswith("kind "))  # one run: said once above
    assert header.split()[:6] == ["kind", "dir", "count", "min", "mean", "max"] and "run: win" in text
    with open(tmp_path / "charts" / "summary.csv") as handle:
        stored = list(csv.DictReader(handle))
    rows = table[table.index(header) + 2:]
    assert len(rows) == len(stored) > 0  # a line a row: none wrapped onto a second line
    # one unit for every row, the one that shows the largest mean with one to three integer digits (ns on an idle
    # host; a loaded one can take the null engine's latencies to µs)
    largest_ns = max(abs(float(row["mean"])) for row in stored)
    unit, divisor = next((unit, divisor) for unit, divisor in (("ms", 1e6), ("µs", 1e3), ("ns", 1.0))
                         if largest_ns >= divisor or unit == "ns")
    for line, row in zip(rows, stored, strict=True):
        count = f"{int(row['count']):,} window{'s' if row['count'] != '1' else ''}"
        cells = re.split(r"\s{2,}", line.strip())
        assert cells[:3] == [f"{row['kind']}\N{NO-BREAK SPACE}({unit})", row["direction"], count], line
        assert len(cells) == 7  # min, mean, max, stddev: every value there
        assert float(cells[4].replace(",", "")) == pytest.approx(float(row["mean"]) / divisor, rel=0.01, abs=0.01)
    assert re.search(r"no value here: p50, p90, p99, p99\.9", " ".join(text.split()))  # window means: none
    said = " ".join(text.split())  # what a window is (the note may say how long fio's were, and wraps at 80)
    for kind in ("clat", "lat"):  # one note for both, or one each when fio's windows differed between the logs
        window = rf"note: (win \w+, )*win {kind}(, win \w+)*: 100 ms windows (\(as fio wrote them: [^)]*\) )?" \
                 r"\(their mean latencies\)"
        assert re.search(window, said), said
    assert f"wrote {tmp_path / 'charts' / 'summary.csv'}" in text
    assert "percentiles are left empty" in " ".join(text.split())
    piped = run_cli("plot", str(tmp_path), "--out", str(tmp_path / "charts2"))
    header = next(line for line in piped.stdout.splitlines() if line.lstrip().startswith("kind "))
    assert "stddev" in header.split() and "…" not in piped.stdout and "part 1" not in piped.stdout  # piped: whole


def test_a_pts_run_ends_with_the_answer(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Piped (a log, a pager), a run's output opens with the at-a-glance values, before the tests' tables, as `show`
    has it; on a screen, what stays visible when a run ends is the answer after the deviations and rounds, then
    the verdict."""
    import io

    from rich.console import Console

    from ptsbench.report.pts.terminal import render_pts
    from ptsbench.store import RunStore

    base = tmp_path_factory.getbasetemp()
    run_dir = tiny_pts_run(base)
    lines = (run_dir.parent / "tiny-pts.log").read_text().splitlines()
    answer = max(i for i, line in enumerate(lines) if line.startswith("Tracked values at steady state"))
    first_test = next(i for i, line in enumerate(lines) if "─ IOPS ─" in line)  # the first test's rule
    compliance = max(i for i, line in enumerate(lines) if "─ Compliance and rounds ─" in line)
    assert answer < first_test < compliance
    report = next(i for i, line in enumerate(lines) if line.startswith("ptsbench: report "))
    assert compliance < report and len(lines) - report <= 3, lines[report:]
    screen = io.StringIO()
    render_pts(RunStore.open(run_dir), Console(file=screen, width=120, force_terminal=True), answer_last=True)
    shown = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in screen.getvalue().splitlines()]
    answer = max(i for i, line in enumerate(shown) if line.startswith("Tracked values at steady state"))
    compliance = max(i for i, line in enumerate(shown) if "─ Compliance and rounds ─" in line)
    verdict = next(i for i in range(answer, len(shown)) if "PTS-compliant" in shown[i])
    assert compliance < answer < verdict
