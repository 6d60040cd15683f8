"""The report of PTS 2.0's advanced tests on one real, tiny run (HIR, XSR, CBW, HDD zones on a scratch file, about
25 s, made once per session): every number in the xlsx and the figures against round.json, phase.json and the
manifest, computed here independently of the report; the sections' titles, facts and their own compliance reasons;
the HTML in a real browser; the PDF's text; a comparison of two such runs."""

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import made_once, run_cli
from ptsbench.report.build import build_compare, build_report, load_report
from ptsbench.report.core.model import Report
from test_report_browser import Browser, assert_clean_report_page, pdf_pages, pdf_text, shared_browser
from test_report_pts import HEADER_FACTS, sheet_rows

# one worker runs this module's tests, so its module-wide runs (fixtures) are made once, not once per worker
pytestmark = pytest.mark.xdist_group("report-advanced")

TINY = ["--profile", "demo", "--size", "16M", "--round-time", "0.1", "--max-rounds", "1", "--demand-tcs", "2,1",
        "--demand-qds", "2,1", "--prewrite-time", "0.1", "--point-prewrite-time", "0.1", "--point-capture-time", "0.3",
        "--hir-wait-states", "0.1,0.3", "--hir-bursts", "2", "--hir-burst-time", "0.1", "--hir-recovery-time", "0.2",
        "--xsr-groups", "0.3,0.2,0.3", "--zones", "2"]
TESTS = "hir,xsr,cbw,dirth,hdd-iops"
_RUN: list[tuple[Path, str]] = []


def tiny_advanced_run(base: Path) -> tuple[Path, str]:
    """A real `ptsbench pts` run of the advanced tests with tiny durations, made once per test run (one xdist worker
    makes it, conftest.made_once; also for test_pts_advanced_engine.py): its folder and what it printed. Read it;
    copy it before changing anything."""
    if not _RUN:
        run_dir = made_once(base, "tiny-advanced", _make_tiny_advanced_run)
        _RUN.append((run_dir, (run_dir.parent / "tiny-advanced.stdout").read_text()))
    return _RUN[0]


def _make_tiny_advanced_run(run_dir: Path) -> None:
    done = run_cli("pts", "--out", str(run_dir), "--tests", TESTS, *TINY)
    assert done.returncode == 0, done.stderr[-2000:]
    (run_dir.parent / "tiny-advanced.stdout").write_text(done.stdout)


@pytest.fixture(scope="session")
def advanced_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Report]:
    """The full report (HTML, PDF, xlsx, figures as PNG) of a copy of the tiny run, and the report as data."""
    run_dir = tmp_path_factory.mktemp("advanced-report") / "run"
    shutil.copytree(tiny_advanced_run(tmp_path_factory.getbasetemp())[0], run_dir,
                    ignore=shutil.ignore_patterns("report"))
    return build_report(run_dir, images=("png",)), load_report(run_dir)


def read(path: Path) -> Any:
    return json.loads(path.read_text())


def rounds(run_dir: Path, phase: str) -> list[dict[str, Any]]:
    return [read(path) for path in sorted((run_dir / "pts" / phase / "rounds").glob("[0-9][0-9][0-9]/round.json"))]


def section(report: Report, key: str) -> Any:
    return next(s for s in report.sections if s.key == key)


def figure(report: Report, key: str) -> Any:
    return next(f for f in report.figures() if f.key == key)


def banner(report: Report, key: str) -> str:
    return next(b.text for b in section(report, key).blocks if getattr(b, "kind", "") == "warning"
                and b.text.startswith("NOT PTS-compliant"))


def test_sections_titles_facts_and_their_own_reasons(advanced_report: tuple[Path, Report]) -> None:
    _out, report = advanced_report
    assert [s.key for s in report.sections] == ["glance", "test-hir", "test-xsr", "test-cbw", "test-dirth",
                                                 "test-hdd-iops", "compliance", "environment"]
    titles = {"test-hir": "Host idle recovery", "test-xsr": "Cross stimulus recovery",
              "test-cbw": "Composite block size workload",
              "test-dirth": "Demand intensity / response time histogram", "test-hdd-iops": "HDD IOPS per zone"}
    for key, title in titles.items():
        facts = dict(section(report, key).facts)
        assert all(label in facts for label in HEADER_FACTS), key
        assert section(report, key).title == title and facts["test"].startswith(title + "; ")
        text = banner(report, key)
        assert "purge: none" in text  # run-wide reasons on every test
        assert all(other not in text for other in titles.values() if other != title), (key, text)
    assert "Host idle recovery: 2 bursts per wait state (PTS: 360)" in banner(report, "test-hir")
    assert "Composite block size workload: thread counts 2, 1 (PTS: " in banner(report, "test-cbw")
    loop = dict(section(report, "test-cbw").facts)["test loop"]
    assert "JESD219 block-size mix" in loop and "4k 67 %" in loop and "TC 2,1 x QD 2,1" in loop
    assert "2 x (0.1 s of writes" in dict(section(report, "test-hir").facts)["test loop"]


def test_hir_numbers_equal_the_store(advanced_report: tuple[Path, Report]) -> None:
    out, report = advanced_report
    run_dir = out.parent
    baseline = read(run_dir / "pts" / "hir-ss" / "phase.json")["window"]["rnd 4k 0/100"]["iops"]
    rows = sheet_rows(out.parent / "results.xlsx", "hir")
    assert rows[0][:3] == ("wait state (s)", "bursts", "mean burst IOPS")
    timeline = figure(report, "hir-iops-vs-time")
    offset_s = 0.0
    for row, (key, wait_s) in zip(rows[1:], (("hir-w0.1s", 0.1), ("hir-w0.3s", 0.3)), strict=True):
        (record,) = rounds(run_dir, key)
        bursts = [c["total"] for c in record["cells"].values() if c["role"] == "burst"]
        recovery = next(c["total"] for c in record["cells"].values() if c["role"] == "recovery")
        mean = sum(b["total_ios"] for b in bursts) * 1000 / sum(b["runtime_ms"] for b in bursts)
        assert row == (wait_s, 2, pytest.approx(mean, rel=1e-12), pytest.approx(baseline, rel=1e-15),
                       pytest.approx(mean / baseline, rel=1e-12),
                       pytest.approx(recovery["total_ios"] * 1000 / recovery["runtime_ms"], rel=1e-12))
        points = next(s for s in timeline.series if s.name == f"wait {wait_s:g} s: bursts")
        assert points.y == pytest.approx([b["total_ios"] * 1000 / b["runtime_ms"] for b in bursts], rel=1e-12)
        assert points.x == pytest.approx([(offset_s + k * (0.1 + wait_s)) / 60 for k in range(2)])
        offset_s += 2 * (0.1 + wait_s) + 0.2
    bars = figure(report, "hir-mean-iops")
    assert [s.mode for s in bars.series] == ["bars", "bars", "lines"] and bars.series[2].y == (baseline, baseline)
    assert (out / "figures" / "hir-mean-iops.png").stat().st_size > 5000


def test_xsr_numbers_equal_the_store(advanced_report: tuple[Path, Report]) -> None:
    out, report = advanced_report
    run_dir = out.parent
    groups = [rounds(run_dir, f"xsr-{number}") for number in (1, 2, 3)]
    rows = sheet_rows(out.parent / "results.xlsx", "xsr-groups")
    elapsed_s = 0.0
    ends_min: list[list[float]] = []
    for row, records in zip(rows[1:], groups, strict=True):
        cells = [next(iter(r["cells"].values())) for r in records]
        assert row[2] == len(cells) == 3 or row[2] == len(cells) == 2
        assert row[3] == pytest.approx(sum(c["bw_bytes"] for c in cells) / len(cells) / 1e6, rel=1e-12)
        assert row[6] == pytest.approx(max(c["lat_max_ns"] for c in cells) / 1e3, rel=1e-12)
        ends = []
        for record in records:
            elapsed_s += record["wall_s"]
            ends.append(elapsed_s / 60)
        ends_min.append(ends)
    tp = figure(report, "xsr-tp-vs-time")
    for series, ends, records in zip(tp.series, ends_min, groups, strict=True):
        assert series.x == pytest.approx(ends, rel=1e-12)
        assert series.y == pytest.approx([next(iter(r["cells"].values()))["bw_bytes"] / 1e6 for r in records])
    # recovery: group 3's first sample at or above group 1's average, time from group 3's start to its end
    group1 = [next(iter(r["cells"].values()))["bw_bytes"] for r in groups[0]]
    average = sum(group1) / len(group1)
    group3 = [(next(iter(r["cells"].values()))["bw_bytes"], r["wall_s"]) for r in groups[2]]
    found, time_s = None, 0.0
    for index, (bw, wall_s) in enumerate(group3):
        time_s += wall_s
        if bw >= average:
            found = index
            break
    (row,) = sheet_rows(out.parent / "results.xlsx", "xsr-recovery")[1:]
    assert row[0] == pytest.approx(average / 1e6, rel=1e-12) and row[1] == 3
    if found is None:
        assert row[2:] == (None, None, "not recovered")
    else:
        assert row[2:] == (found + 1, pytest.approx(time_s / 60, rel=1e-12), "recovered")


def test_cbw_numbers_equal_the_store(advanced_report: tuple[Path, Report]) -> None:
    out, report = advanced_report
    run_dir = out.parent
    window = read(run_dir / "pts" / "cbw" / "phase.json")["window"]
    records = rounds(run_dir, "cbw")
    iops = sheet_rows(out.parent / "results.xlsx", "cbw-iops")
    assert iops[0] == ("TC \\ QD", "QD2", "QD1")
    cpu = sheet_rows(out.parent / "results.xlsx", "cbw-cpu")
    for row, cpu_row, tc in zip(iops[1:], cpu[1:], (2, 1), strict=True):
        names = [f"cbw 40/60 tc{tc}/qd{qd}" for qd in (2, 1)]
        assert row == (f"TC{tc}", *(pytest.approx(window[name]["iops"], rel=1e-15) for name in names))
        assert cpu_row[1:] == tuple(pytest.approx(sum(r["cells"][n]["usr_cpu"] + r["cells"][n]["sys_cpu"]
                                                      for r in records) / len(records)) for n in names)
    variation = figure(report, "cbw-demand-variation")
    assert [s.name for s in variation.series] == ["TC2", "TC1"]
    assert variation.series[0].y == (window["cbw 40/60 tc2/qd1"]["iops"], window["cbw 40/60 tc2/qd2"]["iops"])
    intensity = figure(report, "cbw-demand-intensity")
    assert intensity.series[1].y == (window["cbw 40/60 tc1/qd1"]["lat_mean_ns"] / 1000,
                                     window["cbw 40/60 tc1/qd2"]["lat_mean_ns"] / 1000)
    record = read(run_dir / "manifest.json")["operating_points"]["cbw"]
    points = {row[0]: row for row in sheet_rows(out.parent / "results.xlsx", "cbw-points")[1:]}
    response = {row[0]: row for row in sheet_rows(out.parent / "results.xlsx", "cbw-response")[1:]}
    histograms = sheet_rows(out.parent / "results.xlsx", "cbw-histograms")
    for point, chosen in record["points"].items():
        name = f"{point.capitalize()}IOPS"
        if chosen is None:
            continue
        assert points[name][1:] == (f"TC{chosen['tc']}/QD{chosen['qd']}", pytest.approx(chosen["iops"], rel=1e-15),
                                    pytest.approx(chosen["lat_mean_ns"] / 1e3, rel=1e-15))
        (capture,) = rounds(run_dir, f"cbw-{point}")
        cell = next(c for c in capture["cells"].values() if c["role"] == "histogram")
        histogram = cell["histogram"]
        assert response[name][2:] == (
            pytest.approx(cell["iops"], rel=1e-15), histogram["n"], pytest.approx(histogram["mean_ns"] / 1e3),
            *(pytest.approx(histogram["percentiles_ns"][p] / 1e3) for p in ("99", "99.9", "99.99", "99.999")),
            pytest.approx(histogram["max_ns"] / 1e3))
        column = histograms[0].index(f"{name} (IOs)")
        assert sum(row[column] for row in histograms[1:]) == histogram["n"] == sum(histogram["counts"])
        bars = figure(report, f"cbw-histogram-{point}")
        assert sum(bars.series[0].y) == histogram["n"] and bars.series[0].mode == "bars"
        assert f"maximum {histogram['max_ns'] / 1e3:,.2f} µs" in bars.caption


def test_hdd_zones_and_telemetry_equal_the_store(advanced_report: tuple[Path, Report]) -> None:
    out, report = advanced_report
    run_dir = out.parent
    window = read(run_dir / "pts" / "hdd-iops" / "phase.json")["window"]
    rows = sheet_rows(out.parent / "results.xlsx", "hdd-iops-zones")
    assert rows[0][:2] == ("zone", "rnd 64k 100/0 (IOPS)") and [row[0] for row in rows[1:]] == ["1", "2"]
    for row in rows[1:]:
        assert row[1] == pytest.approx(window[f"z{int(row[0]):03d} rnd 64k 100/0"]["iops"], rel=1e-15)
    zones = figure(report, "hdd-iops-vs-zone")
    assert zones.series[0].x == (1.0, 2.0) and zones.series[0].y == (rows[1][1], rows[2][1])
    # telemetry: host CPU busy per phase, as stored with each round; the device says it has none (a file)
    (telemetry,) = [row for row in sheet_rows(out.parent / "results.xlsx", "hdd-iops-telemetry")[1:]]
    (record,) = rounds(run_dir, "hdd-iops")
    assert telemetry[4] == "not available"
    assert telemetry[7] == pytest.approx(record["telemetry"]["cpu"]["busy_pct"], rel=1e-15)
    notes = [b.text for b in section(report, "test-hdd-iops").blocks if getattr(b, "text", "").startswith("Device")]
    assert notes and "not available" in notes[0]


def test_pdf_and_browser(advanced_report: tuple[Path, Report], tmp_path_factory: pytest.TempPathFactory) -> None:
    out, report = advanced_report
    text = pdf_text(out / "report.pdf")
    assert pdf_pages(out / "report.pdf") > 10
    for words in ("Host idle recovery: mean IOPS per wait state", "Cross stimulus recovery: recovery time",
                  "operating points", "response-time histograms", "Telemetry per phase"):
        assert words in text, words
    hir = sheet_rows(out.parent / "results.xlsx", "hir")[1]
    assert f"{hir[2]:,.1f}" in text
    browser: Browser = shared_browser(tmp_path_factory.getbasetemp() / "chromium-profile")
    page = browser.open_page(out / "index.html")
    assert_clean_report_page(page, expected_plots=len(report.figures()))
    assert f"{hir[2]:,.1f}" in page.text and "Cross stimulus recovery" in page.text
    kinds = {f.key: f for f in report.figures()}
    bars = [plot for plot in page.plots if kinds[plot["id"].removeprefix("plot-")].series
            and kinds[plot["id"].removeprefix("plot-")].series[0].mode == "bars"]
    assert len(bars) >= 3 and all(plot["drawn"] > 0 for plot in bars)


def test_compare_two_advanced_runs(advanced_report: tuple[Path, Report], tmp_path: Path) -> None:
    out, _report = advanced_report
    other = tmp_path / "other"
    shutil.copytree(out.parent, other, ignore=shutil.ignore_patterns("report"))
    compared = build_compare([out.parent, other], tmp_path / "cmp", labels=["a", "b"], static=False)
    rows = sheet_rows(compared / "report.xlsx", "hir")
    assert rows[0][:4] == ("wait state (s)", "bursts [a]", "bursts [b]", "bursts b/a")
    assert all(row[3] == pytest.approx(1.0) for row in rows[1:])
