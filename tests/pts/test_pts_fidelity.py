"""PTS fidelity (issue 15): `pts --dry-run` states every choice and lists every deviation for each profile and spec
version; a real tiny PTS 2.0 run has the latency histogram with its confidence levels and the 2D plots in HTML, PDF
and xlsx, the user's device description on the first page and the spec version each test ran; a resume with
another ptsbench or fio version is a deviation that `show` and the report carry."""

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli
from ptsbench.fio.output import parse_jobs
from ptsbench.report.build import load_report
from ptsbench.report.core.model import Text
from test_report_browser import Browser, assert_clean_report_page, pdf_text, shared_browser
from test_report_pts import sheet_rows

# one worker runs this module's tests, so its module-wide runs (fixtures) are made once, not once per worker
pytestmark = pytest.mark.xdist_group("pts-fidelity")

SIZE = "10737430000"  # 10 GiB and 11,760 bytes: not a whole number of MiB

# (profile, spec, extra arguments) -> (lines the dry run must print, lines it must not)
DRY_RUNS: list[tuple[str, str, tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = [
    ("enterprise", "2.0", ("--tests", "iops,lat,hir,cbw"), (
        "WIPC 20.0 GiB of 128k seq writes (one stream, TC1/QD32; about",  # 10: WIPC as one stream
        "Latency: response-time histogram: no WIPC; 1 cell/round x 1200s (TC1/QD1)",  # 2: 20 minutes at TC1/QD1
        # 1: 30-minute rounds
        "Host idle recovery: steady state (baseline): no purge (method none), no WIPC; 1 cell/round x 1800s",
        "Composite block size workload: preconditioning: no purge (method none), no WIPC; 1 cell/round x 1800s",
        "pre-write at the sweep's top TC/QD (--point-prewrite-depth top)",  # 4: the recorded reading
        "Note: active range 10,737,418,240 bytes: 100 % of 10,737,430,000 is 10,737,430,000, rounded down to "
        "whole 1.0 MiB units of the block sizes (the last 11,760 bytes left out)",  # 6: both numbers
     ), ("Not PTS-compliant",)),
    ("enterprise", "1.1", ("--tests", "iops,lat,hir,ecw"), (
        "1 cell/round x 1800s", "one stream, TC1/QD32"), ("response-time histogram", "Not PTS-compliant")),
    ("client", "2.0", ("--tests", "iops,lat,tp,hir"), (
        "Note: active range: 75 % in 2048 segments of 3,145,728 bytes, one every 5,242,880 bytes from LBA 0",  # 3
        "preconditioning writes all 10,737,418,240 bytes they spread over",
        "Host idle recovery: the same amount as one contiguous range from LBA 0",
        "WIPC 20.0 GiB of 128k seq writes (one stream, TC1/QD32; about",
        # a 10 GiB target is too small for 75 % in whole 1 MiB units: the rounding is a deviation, with both numbers
        "active range: the 2048 segments hold 60.0 % of the LBAs they spread over, not 75 %",
     ), ()),
    ("demo", "2.0", ("--tests", "lat,hir,dirth"), (
        "Latency: response-time histogram captured for 1 s (PTS 2.0: 20 min after steady state)",
        "Host idle recovery: steady-state rounds of 0.5 s (PTS: 30 min)",
        "Demand intensity / response time histogram: steady-state rounds of 0.5 s (PTS: 30 min)",
     ), ()),
    ("demo", "1.1", ("--tests", "lat,hir"), ("Host idle recovery: steady-state rounds of 0.5 s (PTS: 30 min)",),
     ("response-time histogram",)),
    ("enterprise", "2.0", ("--tests", "lat,dirth", "--lat-histogram-time", "0", "--ss-round-time", "dirth=1m",
                           "--point-prewrite-depth", "point", "--device-info", "form_factor=U.2"), (
        "Latency: no response-time histogram (PTS 2.0: 20 min after steady state)",
        "Demand intensity / response time histogram: steady-state rounds of 1 min (PTS: 30 min)",
        "pre-write at the point's own TC/QD (--point-prewrite-depth point)",
        "Device description: form factor U.2",
     ), ("point_prewrite_depth",)),  # a reading stated in the plan, not a deviation
]


@pytest.mark.parametrize(("profile", "spec", "args", "present", "absent"), DRY_RUNS)
def test_dry_run_states_choices_and_lists_deviations(tmp_path: Path, profile: str, spec: str, args: tuple[str, ...],
                                                     present: tuple[str, ...], absent: tuple[str, ...]) -> None:
    done = run_cli("pts", str(tmp_path / "t.dat"), "--size", SIZE, "--profile", profile, "--spec", spec, *args,
                   "--dry-run")
    assert done.returncode == 0, done.stderr
    for line in present:
        assert line in done.stdout, line
    for line in absent:
        assert line not in done.stdout, line


def test_client_profile_under_pts_e_1_1_is_refused_in_one_line(tmp_path: Path) -> None:
    done = run_cli("pts", str(tmp_path / "t.dat"), "--size", "10G", "--profile", "client", "--spec", "1.1",
                   "--dry-run")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.startswith("ptsbench: error: PTS-E 1.1 is the enterprise specification: it has no client")


@pytest.mark.parametrize(("args", "message"), [
    (("--device-info", "form_factor"), "'form_factor' is not KEY=VALUE"),
    (("--device-info", "@/nonexistent/info.txt"), "cannot read --device-info file"),
    (("--spec", "1.1", "--lat-histogram-time", "5m"), "no response-time histogram"),
    (("--tests", "iops", "--lat-histogram-time", "5m"), "applies to the latency test, which is not selected"),
    (("--tests", "cbw", "--point-prewrite-depth", "middle"), "not an operating-point pre-write depth"),
])
def test_bad_fidelity_options_are_one_line(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    done = run_cli("pts", str(tmp_path / "t.dat"), "--size", "1G", *args, "--dry-run")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.startswith("ptsbench: error: ") and message in done.stderr


# --- a real tiny PTS 2.0 run -------------------------------------------------------------------------------------

TINY = ("--profile", "demo", "--size", "16M", "--tests", "tp,lat", "--round-time", "0.1", "--max-rounds", "5",
        "--block-sizes", "tp=1m,128k", "--block-sizes", "lat=8k,4k", "--mixes", "lat=100,0",
        "--lat-histogram-time", "1")


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("fidelity")
    info = base / "device.txt"
    info.write_text("# what the label says\nform_factor = U.2\nmedia=TLC NAND\n\ninterface=PCIe 4.0 x4\n")
    run_dir = base / "run"
    done = run_cli("pts", *TINY, "--device-info", f"@{info}", "--device-info", "media=QLC NAND", "--out",
                   str(run_dir))
    assert done.returncode == 0, done.stderr
    return run_dir


@pytest.fixture
def browser(tmp_path_factory: pytest.TempPathFactory) -> Browser:
    return shared_browser(tmp_path_factory.getbasetemp() / "chromium-profile")


def _capture_cell(run_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The latency histogram's round record cell and its fio document."""
    folder = run_dir / "pts" / "lat-histogram" / "rounds" / "001"
    cell = json.loads((folder / "round.json").read_text())["cells"]["rnd 4k 0/100"]
    return cell, json.loads((folder / "fio.json").read_text())


def _percentile_ns(bins: dict[int, int], percent: float) -> float:
    """The smallest bin value by which `percent` % of the IOs completed."""
    total, seen = sum(bins.values()), 0
    for value in sorted(bins):
        seen += bins[value]
        if seen >= percent / 100 * total:
            return float(value)
    raise AssertionError("no IOs")


def test_latency_histogram_and_2d_plots_in_every_format(tiny_run: Path, browser: Browser) -> None:
    out = tiny_run / "report"  # written by the run itself
    report = load_report(tiny_run)
    keys = {figure.key for figure in report.figures()}
    assert {"tp-2d", "lat-mean-2d", "lat-max-2d", "lat-histogram", "lat-confidence-plot"} <= keys
    # the confidence levels, exactly from the capture's json+ bins (total latency of every IO)
    cell, doc = _capture_cell(tiny_run)
    (job,) = parse_jobs(doc)
    total = job.total()
    assert total is not None and sum(total.lat.bins.values()) == total.lat.n == cell["histogram"]["n"] > 0
    rows = sheet_rows(out.parent / "results.xlsx", "lat-confidence")
    assert [row[0] for row in rows[1:]] == ["99 %", "99.9 %", "99.99 %", "99.999 %"]
    for (level, value), percent in zip((row[:2] for row in rows[1:]), (99, 99.9, 99.99, 99.999), strict=True):
        assert value == pytest.approx(_percentile_ns(total.lat.bins, percent) / 1e3, rel=1e-12), level
    histogram_rows = sheet_rows(out.parent / "results.xlsx", "lat-histogram")
    assert sum(int(row[1]) for row in histogram_rows[1:]) == total.lat.n  # every IO in one bucket
    # the 2D plots' data sheets hold the tables' numbers: throughput per block size, latency per cell
    tp = {row[0]: row[1:] for row in sheet_rows(out.parent / "results.xlsx", "tp")[1:]}
    tp_plot = sheet_rows(out.parent / "results.xlsx", "data tp-2d")
    assert sorted((row[0], row[1]) for row in tp_plot[2:] if row[0] is not None) == [
        (128.0, pytest.approx(tp["128k"][0])), (1024.0, pytest.approx(tp["1m"][0]))]
    window = json.loads((tiny_run / "pts" / "lat" / "phase.json").read_text())["window"]
    mean_plot = sheet_rows(out.parent / "results.xlsx", "data lat-mean-2d")
    assert mean_plot[0][0] == "100/0" and mean_plot[0][2] == "0/100"
    assert [row[3] for row in mean_plot[2:]] == [pytest.approx(window[f"rnd {bs} 0/100"]["lat_mean_ns"] / 1e3)
                                                  for bs in ("8k", "4k")]
    max_plot = sheet_rows(out.parent / "results.xlsx", "data lat-max-2d")
    assert [row[1] for row in max_plot[2:]] == [pytest.approx(window[f"rnd {bs} 100/0"]["lat_max_ns"] / 1e3)
                                                 for bs in ("8k", "4k")]
    # PDF: the histogram, the confidence levels, the 2D plots, the device description on the first page
    text = pdf_text(out / "report.pdf")
    first_page = text.split("\f")[0]
    for label, value in (("form factor", "U.2"), ("media", "QLC NAND"), ("interface", "PCIe 4.0 x4")):
        assert any(label in line and value in line for line in first_page.splitlines()), label
    for title in ("Latency: response time at each confidence level", "Latency: confidence levels",
                  "Latency: response-time histogram", "Throughput vs block size",
                  "Mean total latency vs block size", "Maximum total latency vs block size"):
        assert title in text, title
    assert f"{rows[4][1]:,.2f}" in text or f"{rows[4][1]:,.0f}" in text  # five nines, as the table shows it
    # HTML in a real browser: every figure drawn, the same titles
    page = browser.open_page(out / "index.html")
    assert_clean_report_page(page, expected_plots=len(report.figures()))
    for title in ("Latency: confidence levels", "Throughput vs block size", "Maximum total latency vs block size"):
        assert title in page.text, title
    # each test cites the version it ran; the device description is in every test's header facts
    facts = {section.key: dict(section.facts) for section in report.sections}
    assert facts["test-lat"]["test"] == "Latency; PTS 2.0.2 section 9 (Latency)"
    assert facts["test-tp"]["device description"] == "form factor U.2, media QLC NAND, interface PCIe 4.0 x4"
    first = dict(report.facts)  # the first page: each of the user's words as a fact of its own
    assert (first["form factor"], first["media"], first["interface"]) == ("U.2", "QLC NAND", "PCIe 4.0 x4")


def test_resume_with_another_version_is_a_deviation_in_show_and_report(tiny_run: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(tiny_run, run_dir, ignore=shutil.ignore_patterns("report"))
    manifest_path = run_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    assert not any("another version" in reason for reason in manifest["compliance"]["reasons"])
    manifest.update(ptsbench_version="0.0.1", fio_version="fio-3.1")  # as if started by older programs
    manifest_path.write_text(json.dumps(manifest))
    done = run_cli("resume", str(run_dir))
    assert done.returncode == 0, done.stderr
    reasons = json.loads(manifest_path.read_text())["compliance"]["reasons"]
    (reason,) = [reason for reason in reasons if "another version" in reason]
    assert "ptsbench 0.0.1 -> " in reason and "fio fio-3.1 -> fio-3." in reason
    shown = run_cli("show", str(run_dir))
    assert shown.returncode == 0 and "resumed with another version (ptsbench 0.0.1 ->" in shown.stdout
    summary = next(section for section in load_report(run_dir).sections if section.key == "compliance")
    deviations = next(table for table in summary.tables() if table.key == "deviations")
    assert (reason,) in deviations.rows


def test_pts_e_1_1_run_cites_pts_e_1_1(tmp_path: Path) -> None:
    """Under --spec 1.1 no test cites PTS 2.0.2 (a stored run: the report reads the spec version it ran)."""
    run_dir = tmp_path / "run"
    done = run_cli("pts", "--profile", "demo", "--spec", "1.1", "--size", "16M", "--tests", "wsat", "--round-time",
                   "0.2", "--wsat-time", "0.4", "--out", str(run_dir))
    assert done.returncode == 0, done.stderr
    report = load_report(run_dir)
    (wsat,) = [section for section in report.sections if section.key == "test-wsat"]
    assert dict(wsat.facts)["test"] == "Write saturation; PTS-E 1.1 Write Saturation test"
    texts = [block.text for section in report.sections for block in section.blocks if isinstance(block, Text)]
    assert "2.0.2" not in json.dumps([section.facts for section in report.sections]) + json.dumps(texts)
    assert any(text.startswith("Steady state (PTS-E 1.1):") for text in texts)
