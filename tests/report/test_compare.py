"""`ptsbench compare`: several runs in one report, tables with each run's value and its ratio to the first run,
overlaid figures; for case-runner runs (two real null-engine runs, one capped with rate_iops) and PTS runs."""

import json
import shutil
import statistics
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli
from ptsbench.errors import PtsbenchError
from ptsbench.report.build import build_compare, load_compare, load_report
from ptsbench.report.compare import compare_reports
from test_present import assert_whole, run_in_terminal
from test_report_browser import Browser, assert_clean_report_page, pdf_text, shared_browser
from test_report_pts import TINY_ARGS, sheet_rows, tiny_pts_run

# one worker runs this module's tests, so its module-wide runs (fixtures) are made once, not once per worker
pytestmark = pytest.mark.xdist_group("compare")

ONE_JOB = """\
[global]
ioengine=null
size=1G
time_based
runtime=1

[randread-4k]
rw=randread
bs=4k
"""
JOB_TEXT = ONE_JOB + """
[write-64k]
stonewall
rw=write
bs=64k
"""


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The same job file twice: as fast as the null engine goes, and capped at 20000 IOPS per job."""
    folder = tmp_path_factory.mktemp("compare")
    (folder / "jobs.fio").write_text(JOB_TEXT)
    runs = []
    for name, extra in (("fast", ()), ("capped", ("--set", "rate_iops=20000"))):
        done = run_cli("run", str(folder / "jobs.fio"), "--out", str(folder / name), "--log-interval", "250", *extra)
        assert done.returncode == 0, done.stderr
        runs.append(folder / name)
    return runs[0], runs[1]


@pytest.fixture
def browser(tmp_path_factory: pytest.TempPathFactory) -> Browser:
    return shared_browser(tmp_path_factory.getbasetemp() / "chromium-profile")


def iops_of(run_dir: Path) -> dict[str, float]:
    (result,) = [json.loads(path.read_text()) for path in run_dir.glob("cases/*/result.json")]
    return {job["name"]: job["directions"][0]["iops"] for job in result["jobs"]}


def test_compare_case_runs(two_runs: tuple[Path, Path], tmp_path: Path, browser: Browser) -> None:
    fast, capped = two_runs
    out = build_compare([fast, capped], tmp_path / "cmp", ["fast", "capped"])
    rows = sheet_rows(out / "report.xlsx", "results")
    header = list(rows[0])
    iops_fast, iops_capped = header.index("IOPS [fast]"), header.index("IOPS [capped]")
    ratio = header.index("IOPS capped/fast")
    fast_iops, capped_iops = iops_of(fast), iops_of(capped)
    by_job = {row[1]: row for row in rows[1:]}
    assert set(by_job) == set(fast_iops) == {"randread-4k", "write-64k"}
    for job, row in by_job.items():
        assert row[iops_fast] == pytest.approx(fast_iops[job], rel=1e-15)
        assert row[iops_capped] == pytest.approx(capped_iops[job], rel=1e-15)
        assert row[ratio] == pytest.approx(capped_iops[job] / fast_iops[job], rel=1e-12)
        # fio's rate limit holds the capped run at or under 20000 IOPS (a loaded machine may give it less)
        assert 0 < capped_iops[job] <= 20000 * 1.05 and row[ratio] < 0.5
    report = load_compare([fast, capped], ["fast", "capped"])
    overlay = next(figure for figure in report.figures() if figure.key == "case001-iops")
    names = [series.name for series in overlay.series]
    assert names == ["fast: randread-4k read", "fast: write-64k write", "capped: randread-4k read",
                     "capped: write-64k write"]
    assert [series.dash for series in overlay.series] == ["solid", "solid", "dash", "dash"]
    assert overlay.series[0].color == overlay.series[2].color  # the same job keeps its colour across runs
    page = browser.open_page(out / "index.html")
    assert_clean_report_page(page, expected_plots=len(report.figures()))
    text = pdf_text(out / "report.pdf")
    for job in fast_iops:
        assert f"{fast_iops[job]:,.1f}" in text and f"{capped_iops[job]:,.1f}" in text
        assert f"{capped_iops[job] / fast_iops[job]:.3f}×" in text


def _slower_copy(run_dir: Path, target: Path, factor: float) -> Path:
    """The run with every window value of the IOPS phase scaled, as a slower device would have stored it."""
    shutil.copytree(run_dir, target, ignore=shutil.ignore_patterns("report"))
    path = target / "pts" / "iops" / "phase.json"
    phase: dict[str, Any] = json.loads(path.read_text())
    for values in phase["window"].values():
        values["iops"] *= factor
    path.write_text(json.dumps(phase))
    return target


def test_compare_pts_runs(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    first = tiny_pts_run(tmp_path_factory.getbasetemp())
    second = _slower_copy(first, tmp_path / "slower", 0.5)
    out = build_compare([first, second], tmp_path / "cmp", ["a", "b"], static=False)
    rows = sheet_rows(out / "report.xlsx", "iops")
    assert rows[0] == ("block size", "100/0 (IOPS) [a]", "100/0 (IOPS) [b]", "100/0 (IOPS) b/a", "0/100 (IOPS) [a]",
                       "0/100 (IOPS) [b]", "0/100 (IOPS) b/a")
    window = json.loads((first / "pts" / "iops" / "phase.json").read_text())["window"]
    for row in rows[1:]:
        assert row[1] == pytest.approx(window[f"rnd {row[0]} 100/0"]["iops"], rel=1e-15)
        assert row[2] == pytest.approx(window[f"rnd {row[0]} 100/0"]["iops"] * 0.5, rel=1e-15)
        assert row[3] == pytest.approx(0.5, rel=1e-12) and row[6] == pytest.approx(0.5, rel=1e-12)
    report = compare_reports([load_report(first), load_report(second)], ["a", "b"], [first, second])
    keys = [figure.key for figure in report.figures()]
    assert "iops-3d-run1" in keys and "iops-3d-run2" in keys  # 3D bars cannot overlay: one per run
    convergence = next(figure for figure in report.figures() if figure.key == "iops-convergence-rnd-4k-0-100")
    assert len(convergence.series) == 2 * len(load_report(first).figures()[0].series)


def test_compare_command(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    fast, capped = two_runs
    done = run_cli("compare", str(fast), str(capped), "--out", str(tmp_path / "cmp"), "--no-static")
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "cmp" / "index.html").read_text()
    assert "ptsbench comparison: fast vs capped" in html
    one = run_cli("compare", str(fast))
    assert one.returncode == 2 and "at least two run directories" in one.stderr
    labels = run_cli("compare", str(fast), str(capped), "--label", "x")
    assert labels.returncode == 2 and "1 --label for 2 run directories" in labels.stderr


def test_compare_refuses_runs_of_different_kinds(two_runs: tuple[Path, Path], tmp_path_factory:
                                                 pytest.TempPathFactory, tmp_path: Path) -> None:
    with pytest.raises(PtsbenchError, match="different kinds"):
        build_compare([two_runs[0], tiny_pts_run(tmp_path_factory.getbasetemp())], tmp_path / "cmp")


def test_compared_bars_are_not_captioned_with_line_styles() -> None:
    """Bars have no line style: their caption must not tell readers to look for solid and dashed runs."""
    from ptsbench.report.compare import compare_figure
    from ptsbench.report.core.figure import Figure, Series

    def bars(mb_s: float) -> Figure:
        return Figure(key="glance", title="MB/s per test", x_label="test", y_label="MB/s", caption="Each test's MB/s.",
                      series=(Series(name="read", x=(0,), y=(mb_s,), mode="bars"),))

    def lines(iops: float) -> Figure:
        return Figure(key="iops", title="IOPS over time", x_label="time (s)", y_label="IOPS", caption="IOPS.",
                      series=(Series(name="read", x=(1, 2), y=(iops, iops)),))

    (bar_figure,) = compare_figure([bars(100.0), bars(90.0)], ["a", "b"])
    assert bar_figure.caption == "Each test's MB/s." and len({one.color for one in bar_figure.series}) == 2
    (line_figure,) = compare_figure([lines(5.0), lines(6.0)], ["a", "b"])
    assert line_figure.caption == "IOPS. Runs: a solid, b dash."


def test_a_chart_only_a_later_run_could_draw_is_compared() -> None:
    """The first run's chart over time held too few values to draw (drawn_or_said gave a line instead) and the
    second run's did not: the compare shows the second run's chart, and keeps the first run's line."""
    from ptsbench.report.compare import compare_section
    from ptsbench.report.core.figure import Figure, Series
    from ptsbench.report.core.model import Section, drawn_or_said

    def over_time(seconds: int) -> Figure:
        return Figure(key="iops", title="IOPS over time", x_label="time (s)", y_label="IOPS",
                      series=(Series(name="read", x=tuple(range(seconds)), y=(5.0,) * seconds),))

    sections = [Section("case", "case", blocks=tuple(drawn_or_said([over_time(seconds)], "the table holds them")))
                for seconds in (2, 8)]
    assert not sections[0].figures() and sections[1].figures()  # the premise
    compared = compare_section(sections, ["short", "long"])
    (figure,) = compared.figures()
    assert [one.name for one in figure.series] == ["long: read"] and len(figure.series[0].x) == 8
    assert any(getattr(block, "text", "").startswith("Not charted (IOPS over time)") for block in compared.blocks)


@pytest.mark.root
def test_compare_of_two_devices_says_which_device_each_run_measured(tmp_path: Path, loop_device: str) -> None:
    """A run on a loop device against a run on a file: the comparison opens with what differs between the targets."""
    runs = {"loop": (loop_device, "--destructive"), "file": (str(tmp_path / "f.dat"), "--size", "32M")}
    for label, (target, *extra) in runs.items():
        done = run_cli("quick", target, *extra, "--runtime", "0.2", "--out", str(tmp_path / label))
        assert done.returncode == 0, done.stderr
    done = run_cli("compare", str(tmp_path / "loop"), str(tmp_path / "file"), "--out", str(tmp_path / "cmp"))
    assert done.returncode == 0, done.stderr
    said = next(line for line in done.stdout.splitlines() if line.startswith("What differs: "))
    assert f"path: {loop_device} (loop) vs {tmp_path / 'f.dat'} (file)" in said
    assert "kind: block (loop) vs file (file)" in said
    # the transport each run recorded is the kernel's answer (absent on some kernels and virtual disks): the line
    # names it exactly when the two differ, and a loop device's is never said to be anything but loop
    transports = [json.loads((tmp_path / label / "manifest.json").read_text())["targets"][0]["transport"]
                  for label in runs]
    assert transports[0] in ("loop", None)
    if transports[0] == transports[1]:
        assert "transport:" not in said
    else:
        assert f"transport: {transports[0] or '-'} (loop) vs {transports[1] or '-'} (file)" in said
    assert "vs 32.0 MiB (33,554,432 bytes) (file)" in said  # sizes as people read them, exact beside
    # a title wider than its table stays on one line (rich wrapped it at the table's width)
    assert "read MB/s (Read and write per test: loop vs file)" in done.stdout.splitlines()
    assert "What differs: " in pdf_text(tmp_path / "cmp" / "report.pdf")


# --- the fleet table: every run side by side, outliers named -------------------------------------------------


@pytest.fixture(scope="module")
def five_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Five runs of one job: four capped at 1000 IOPS by fio's rate_iops, one ("slow") at 100 (low rates, which fio
    holds within a few percent on a loaded machine)."""
    folder = tmp_path_factory.mktemp("five")
    (folder / "job.fio").write_text(ONE_JOB)
    runs = []
    for name, rate in (("r1", 1000), ("r2", 1000), ("slow", 100), ("r3", 1000), ("r4", 1000)):
        done = run_cli("run", str(folder / "job.fio"), "--out", str(folder / name), "--set", f"rate_iops={rate}")
        assert done.returncode == 0, done.stderr
        runs.append(folder / name)
    return runs


def test_spread_names_the_run_far_from_the_median() -> None:
    from ptsbench.report.fleet import spread, within_noise

    found = spread("iops", [("a", 100.0, None), ("b", 102.0, None), ("c", 98.0, None), ("d", 60.0, None),
                            ("e", 101.0, None)], k=3)
    assert found.median == 100.0 and found.low == 60.0 and found.high == 102.0
    assert found.mad == pytest.approx(1.4826 * 2.0) and found.outliers == ("d",)
    # its own noise covers the distance: not an outlier; a larger k: not an outlier either
    assert spread("iops", [("a", 100.0, None), ("b", 102.0, None), ("c", 98.0, None), ("d", 60.0, 45.0),
                           ("e", 101.0, None)]).outliers == ()
    assert spread("iops", [("a", 100.0, None), ("b", 102.0, None), ("c", 98.0, None), ("d", 60.0, None),
                           ("e", 101.0, None)], k=30).outliers == ()
    # equal runs (MAD 0): a difference under 1 % of the median is not an outlier; two runs name none
    assert spread("iops", [("a", 100.0, None), ("b", 100.0, None), ("c", 99.5, None)]).outliers == ()
    assert spread("iops", [("a", 100.0, None), ("b", 10.0, None)]).outliers == ()
    assert within_noise(100.0, 104.0, 5.0, 1.0) is True and within_noise(100.0, 106.0, 5.0, 1.0) is False
    assert within_noise(100.0, 101.0, None, None) is None


def test_compare_of_five_runs_names_the_outlier(five_runs: list[Path], tmp_path: Path) -> None:

    labels = [path.name for path in five_runs]
    done = run_cli("compare", *map(str, five_runs), "--out", str(tmp_path / "cmp"), "--no-static")
    assert done.returncode == 0, done.stderr
    stored = {path.name: iops_of(path)["randread-4k"] for path in five_runs}
    # the rule as docs/compare.md states it, from the stored numbers: 3 x MAD (scaled), and over 1 % of the median
    median = statistics.median(stored.values())
    mad = 1.4826 * statistics.median(abs(value - median) for value in stored.values())

    def named_at(k: float) -> list[str]:
        return [name for name in labels if abs(stored[name] - median) > max(k * mad, 0.01 * median)]

    def said(output: str) -> list[str]:
        return [line.split(":")[1].strip() for line in output.splitlines() if line.startswith("Outlier: ")]

    assert "slow" in named_at(3)  # fio held it at 100 IOPS, the others at 1000
    assert said(done.stdout) == named_at(3)
    slow = next(line for line in done.stdout.splitlines() if line.startswith("Outlier: slow:"))
    assert f"randread-4k read {stored['slow']:,.1f} IOPS (median {median:,.1f}: lower, worse)" in slow
    assert "k = 3 x MAD" in done.stdout
    # the report opens with the fleet table: every run's value, then the median, min and max
    report = load_compare(five_runs, labels)
    assert report.sections[0].key == "fleet"
    table = next(t for t in report.sections[0].tables() if t.key == "fleet")
    column = [c.name for c in table.columns].index("randread-4k read (IOPS)")
    assert [row[0] for row in table.rows] == [*labels, "median", "min", "max"]
    assert [row[column] for row in table.rows] == [*(stored[name] for name in labels), median,
                                                   min(stored.values()), max(stored.values())]
    outliers = {row[0]: row[-1] for row in table.rows[:5]}
    assert outliers["slow"] == f"randread-4k read: {stored['slow'] / median:.3f}x median"
    bars = next(figure for figure in report.figures() if figure.key == "fleet-bars-1")
    assert bars.series[0].y == tuple(stored[name] for name in labels) and bars.series[1].y == (median, median)
    # on an 80-column terminal every number and name is whole: the fleet in narrow parts, values beside their noise
    text = run_in_terminal(["compare", *map(str, five_runs), "--out", str(tmp_path / "narrow"), "--no-static"], 80)
    assert_whole(text, [*labels, *(f"{value:,.1f}" for value in stored.values()), f"{median:,.1f}",
                        "randread-4k read (IOPS)"], 80)
    # k is the user's; it must be positive
    loose = run_cli("compare", *map(str, five_runs), "--out", str(tmp_path / "loose"), "--no-static",
                    "--outlier-k", "1000")
    assert loose.returncode == 0 and said(loose.stdout) == named_at(1000) and "k = 1000 x MAD" in loose.stdout
    bad = run_cli("compare", *map(str, five_runs), "--outlier-k", "0")
    assert bad.returncode == 2 and "--outlier-k" in bad.stderr


def test_compare_of_two_pts_runs_within_the_window_excursion(tmp_path_factory: pytest.TempPathFactory,
                                                               tmp_path: Path) -> None:
    """The shared small PTS run and a second one of its IOPS test on a file of its own: where their IOPS differ by
    less than the measurement window's data excursion (rounds of 0.1 s on a 16 MiB file vary a lot, but on a loaded
    machine not always that much), the comparison says so instead of printing a ratio, and prints the ratio where
    they differ by more; a copy of the first run always differs by less (by nothing) and is always within noise."""
    first = tiny_pts_run(tmp_path_factory.getbasetemp())
    second = tmp_path / "second"
    done = run_cli("pts", *TINY_ARGS[:TINY_ARGS.index("--wsat-capacity")], "--mixes", "iops=100,0", "--block-sizes",
                   "iops=4k,64k", "--tests", "iops", "--out", str(second))
    assert done.returncode == 0, done.stderr
    (label, found_a), (_, found_b) = [next(iter(json.loads((run / "pts" / "iops" / "phase.json").read_text())
                                                ["determination"].items())) for run in (first, second)]
    average_a, average_b = found_a["average"], found_b["average"]
    excursion = max(found_a["data_excursion"], found_b["data_excursion"])
    within = abs(average_a - average_b) <= excursion  # the rule, from the stored numbers
    again = tmp_path / "again"
    shutil.copytree(first, again, ignore=shutil.ignore_patterns("report"))
    for other, expect_within in ((second, within), (again, True)):
        done = run_cli("compare", str(first), str(other), "--label", "a", "--label", "b", "--out",
                       str(tmp_path / f"cmp-{other.name}"), "--no-static")
        assert done.returncode == 0, done.stderr
        line = next(line for line in done.stdout.splitlines() if line.startswith("IOPS ") and "rnd 4k 0/100" in line
                    and f"{average_a:,.1f}" in line)
        assert line.endswith("within noise") == expect_within and ("×" in line) != expect_within, line
    if not within:  # the table checks below: a pair within noise
        second, found_b = again, found_a
    # the fleet table's noise of the tracked value is the window's data excursion, as the steady-state check has it
    report = load_compare([first, second], ["a", "b"])
    noise = next(t for t in report.sections[0].tables() if t.key == "fleet-noise")
    column = [c.name for c in noise.columns].index(f"IOPS: {label.removesuffix(' iops')} (IOPS)")
    assert [row[column] for row in noise.rows] == pytest.approx([found_a["data_excursion"],
                                                                 found_b["data_excursion"]], rel=1e-9)
    headline = next(t for t in report.tables() if t.key == "headline")
    assert "within noise" in {cell for row in headline.rows for cell in row}
    # every run's convergence of the tracked value on one plot: each round's value as stored
    convergence = next(f for f in report.figures() if f.key == f"fleet-convergence-{column}")
    for series, run in zip(convergence.series, (first, second), strict=True):
        rounds = [json.loads(path.read_text()) for path in sorted((run / "pts" / "iops").glob("rounds/*/round.json"))]
        assert series.y == tuple(record["cells"]["rnd 4k 0/100"]["iops"] for record in rounds)


# --- --repeat: every repetition stored, the mean and the spread ------------------------------------------------

def test_repeat_stores_every_repetition_and_the_spread(tmp_path: Path) -> None:
    (tmp_path / "job.fio").write_text(ONE_JOB)
    for name, rate in (("fast", 1000), ("slow", 100)):
        done = run_cli("run", str(tmp_path / "job.fio"), "--out", str(tmp_path / name), "--set", f"rate_iops={rate}",
                       "--repeat", "3")
        assert done.returncode == 0, done.stderr
    fast = tmp_path / "fast"
    results = [json.loads(path.read_text()) for path in sorted(fast.glob("cases/*/result.json"))]
    assert [(result["name"], result["repetition"]) for result in results] == [("job-r1", 1), ("job-r2", 2),
                                                                              ("job-r3", 3)]
    iops = [result["jobs"][0]["directions"][0]["iops"] for result in results]
    mean, spread = sum(iops) / 3, max(iops) - min(iops)
    # the terminal shows every repetition, then the mean and the spread
    assert all(f"job-r{n}" in done.stdout for n in (1, 2, 3))
    shown = run_cli("show", str(fast)).stdout
    line = next(line for line in shown.splitlines() if line.startswith("randread-4k read "))
    half = {2: 4.303}[len(iops) - 1] * statistics.stdev(iops) / len(iops) ** 0.5  # Student's t, 95 %
    assert line.split()[2:] == [*(f"{value:,.2f}" for value in (mean, spread, half)), f"{100 * half / mean:,.1f}",
                                *(f"{value:,.2f}" for value in iops), "IOPS"]  # values, then unit
    report = load_report(fast)
    table = next(t for t in report.tables() if t.key == "repetitions")
    ((test, unit, *numbers),) = table.rows
    assert (test, unit) == ("randread-4k read", "IOPS")
    assert numbers == pytest.approx([mean, spread, half, 100 * half / mean, *iops], rel=1e-3)
    grid = next(t for t in report.tables() if t.key == "grid")
    assert grid.rows[0][3] == pytest.approx(mean, rel=1e-12) and grid.noise[0][3] == pytest.approx(spread, rel=1e-12)
    # compared, the noise is the spread of the repetitions: 100 against 1000 IOPS is far beyond it, a ratio
    slow_iops = [json.loads(path.read_text())["jobs"][0]["directions"][0]["iops"]
                 for path in sorted((tmp_path / "slow").glob("cases/*/result.json"))]
    slow_mean, slow_spread = sum(slow_iops) / 3, max(slow_iops) - min(slow_iops)
    compared = load_compare([fast, tmp_path / "slow"], ["fast", "slow"])
    fleet_noise = next(t for t in compared.tables() if t.key == "fleet-noise")
    assert [row[1] for row in fleet_noise.rows] == pytest.approx([spread, slow_spread], rel=1e-12)
    headline = next(t for t in compared.tables() if t.key == "grid")
    ratio = [c.name for c in headline.columns].index("read IOPS slow/fast")
    assert abs(slow_mean - mean) > max(spread, slow_spread)  # the premise: fio held them apart
    assert headline.rows[0][ratio] == pytest.approx(slow_mean / mean, rel=1e-12)
    convergence = next(f for f in compared.figures() if f.key == "fleet-convergence-1")
    assert [series.y for series in convergence.series] == [tuple(iops), tuple(slow_iops)]
    dry = run_cli("quick", "--repeat", "2", "--runtime", "0.2", "--dry-run", "--out", str(tmp_path / "q"))
    cases = [line.split()[3] for line in dry.stdout.splitlines() if line.startswith("# case ")]
    assert dry.returncode == 0 and [name.rsplit("-", 1)[1] for name in cases] == ["r1", "r2"]


def test_a_fleet_of_many_values_shows_the_first_twelve_and_judges_all() -> None:
    """A sweep has a value per cell: the table and charts keep to the first 12, outliers are named on every one."""
    from ptsbench.report.fleet import Member, Tracked, fleet_section, terminal_parts

    def member(label: str, last: float) -> Member:
        values = [Tracked(f"cell {n}", "IOPS", "iops", 100.0 + n) for n in range(1, 15)]
        return Member(label, (("model", "EX"),), (*values, Tracked("cell 15", "IOPS", "iops", last)))

    section = fleet_section([member("a", 500.0), member("b", 500.0), member("c", 5.0)], who="device")
    table = next(t for t in section.tables() if t.key == "fleet")
    assert len(table.compare or ()) == 12 and table.columns[-2].name == "cell 12 (IOPS)"
    texts = [block.text for block in section.blocks if hasattr(block, "text")]
    assert "Outlier: c: cell 15 5.0 IOPS (median 500.0: lower, worse)" in texts  # neutral text, by direction
    assert not any(block.kind == "warning" for block in section.blocks if hasattr(block, "kind"))
    assert all(t.key != "fleet-noise" for t in section.tables())  # no member's noise is known: no empty table
    assert "The table and charts show the first 12 of 15 tracked values; outliers are named on all of them." in texts
    assert len(section.figures()) == 12  # bars only: no member has rounds
    parts = terminal_parts(section)
    assert [len(part.columns) for part in parts] == [1 + 4 + 1, *([3] * 6)]  # facts, then values (no noise known)


def test_an_outlier_is_named_by_direction_not_as_a_fault() -> None:
    """The faster run is an outlier too: said plainly as higher and better, never as a warning; a latency higher
    than the median is worse."""
    from ptsbench.report.fleet import Member, Tracked, fleet_section, outlier_lines

    def member(label: str, iops: float, lat_us: float) -> Member:
        return Member(label, (), (Tracked("rnd 4k iops", "IOPS", "iops", iops), Tracked("rnd 4k mean", "µs", "us",
                                                                                          lat_us)))

    members = [member("a", 100.0, 50.0), member("b", 101.0, 51.0), member("c", 99.0, 49.0),
               member("fast", 400.0, 12.0), member("laggy", 100.0, 400.0)]
    lines = outlier_lines(members)
    assert "Outlier: fast: rnd 4k iops 400.0 IOPS (median 100.0: higher, better); rnd 4k mean 12.00 µs " \
           "(median 50.00: lower, better)" in lines
    assert any(line.startswith("Outlier: laggy: rnd 4k mean 400.00 µs (median 50.00: higher, worse)") for line in lines)
    section = fleet_section(members)
    assert not [block for block in section.blocks if getattr(block, "kind", "") == "warning"]


def test_compare_says_the_tags_the_runs_differ_in(tmp_path: Path) -> None:
    """Runs tagged firmware=1.2 and firmware=1.3 on a file (no firmware of its own): what differs says so, and the
    fleet table's firmware column shows each run's tag, not '-'."""
    (tmp_path / "job.fio").write_text(ONE_JOB)
    runs = []
    for version in ("1.2", "1.3"):
        run_dir = tmp_path / f"fw{version}"
        done = run_cli("run", str(tmp_path / "job.fio"), "--out", str(run_dir), "--tag", f"firmware={version}",
                       "--tag", "nightly")
        assert done.returncode == 0, done.stderr
        runs.append(run_dir)
    done = run_cli("compare", *map(str, runs), "--out", str(tmp_path / "cmp"), "--no-static")
    assert done.returncode == 0, done.stderr
    assert "What differs: firmware (tag): 1.2 (fw1.2) vs 1.3 (fw1.3)" in done.stdout
    report = load_compare(runs)
    table = next(t for t in report.tables() if t.key == "fleet")
    column = [c.name for c in table.columns].index("firmware")
    assert [row[column] for row in table.rows[:2]] == ["1.2 (tag)", "1.3 (tag)"]
