"""The report of a PTS run on two hosts (real fio servers on 127.0.0.1 and 127.0.0.2): the all-hosts sections stay,
and every test adds each host's numbers - a table per host of every cell, each host's steady state, and the tracked
variable per host in one figure - equal to phase.json and round.json, in the xlsx, PDF and HTML (in a browser)."""

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli
from ptsbench.report.build import load_report
from ptsbench.report.core.figure import Figure
from ptsbench.report.core.model import Table, format_value
from ptsbench.report.core.workbook import sheet_name
from test_hosts import Servers, hosts_arg
from test_hosts import servers as servers  # noqa: PLC0414 - the fixture
from test_report_browser import Browser, assert_clean_report_page, pdf_text, shared_browser
from test_report_pts import sheet_rows

ARGS = ("--profile", "demo", "--spec", "1.1", "--tests", "iops", "--block-sizes", "iops=4k", "--mixes", "iops=0",
        "--size", "16M", "--round-time", "0.1", "--max-rounds", "5")
TRACKED = "rnd 4k 0/100"


@pytest.fixture
def browser(tmp_path_factory: pytest.TempPathFactory) -> Browser:
    return shared_browser(tmp_path_factory.getbasetemp() / "chromium-profile")


def stored(run_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """phase.json and the round records of the IOPS phase."""
    rounds = [json.loads(path.read_text()) for path in sorted(run_dir.glob("pts/iops/rounds/[0-9]*/round.json"))]
    return json.loads((run_dir / "pts/iops/phase.json").read_text()), rounds


def test_two_host_pts_report_shows_each_host(tmp_path: Path, servers: Servers, browser: Browser) -> None:
    hosts = servers(2)
    names = [host.name for host in hosts]
    folder = tmp_path / "data"
    folder.mkdir()
    run_dir = tmp_path / "run"
    done = run_cli("pts", str(folder), "--hosts", hosts_arg(hosts), *ARGS, "--out", str(run_dir), "--images", "png")
    assert done.returncode == 0, done.stderr
    out = run_dir / "report"  # the report the run wrote at its end (HTML, PDF, xlsx, figures as PNG)
    phase, rounds = stored(run_dir)
    assert len(rounds) == 5 and sorted(phase["hosts"]) == sorted(names)

    report = load_report(run_dir)
    section = next(s for s in report.sections if s.key == "test-iops")
    blocks = {block.key: block for block in section.blocks if isinstance(block, Table | Figure)}
    assert "iops" in blocks and "iops-steady-state" in blocks  # the all-hosts sections are still there

    # every cell: each host's window average (phase.json hosts.HOST.window) and the all-hosts one
    table = blocks["iops-hosts-iops"]
    assert isinstance(table, Table)
    assert [c.name for c in table.columns] == ["phase", "cell", *(f"{h} (IOPS)" for h in names), "all hosts (IOPS)"]
    expected = {cell: (*(phase["hosts"][h]["window"][cell]["iops"] for h in names), phase["window"][cell]["iops"])
                for cell in phase["window"]}
    assert {row[1]: row[2:] for row in table.rows} == expected and list(expected) == [TRACKED]
    xlsx = sheet_rows(out.parent / "results.xlsx", "iops-hosts-iops")
    assert {row[1]: row[2:] for row in xlsx[1:]} == {cell: pytest.approx(v, rel=1e-15) for cell, v in expected.items()}

    # each host's steady state, judged on its own rounds
    steady = blocks["iops-hosts-steady"]
    assert isinstance(steady, Table)
    for row in steady.rows:
        determined = phase["hosts"][str(row[2])]["determination"][f"{TRACKED} iops"]
        assert row[:4] == ("IOPS", f"{TRACKED} iops", row[2], "1-5") and row[4] == determined["average"]
        assert row[6] == ("reached" if determined["steady"] else "NOT reached")
    assert sorted(str(row[2]) for row in steady.rows) == sorted(names)

    # the tracked variable per host, overlaid: each host's own value of every round
    figure = blocks["iops-hosts-rnd-4k-0-100-iops"]
    assert isinstance(figure, Figure)
    assert [s.name for s in figure.series] == names
    for series in figure.series:
        assert series.x == (1, 2, 3, 4, 5)
        assert list(series.y) == [r["hosts"][series.name]["cells"][TRACKED]["iops"] for r in rounds]
    data = sheet_rows(out.parent / "results.xlsx", sheet_name(f"data {figure.key}", set()))
    assert [row[1] for row in data[2:]] == pytest.approx([r["hosts"][names[0]]["cells"][TRACKED]["iops"]
                                                          for r in rounds], rel=1e-15)  # xlsx keeps 15-17 digits
    assert (out / "figures" / f"{figure.key}.png").exists()

    shown = [format_value(value, "iops") for values in expected.values() for value in values]
    text = pdf_text(out / "report.pdf")
    assert "Per host: IOPS of every cell" in text and all(value in text for value in shown)
    page = browser.open_page(out / "index.html")
    assert_clean_report_page(page, expected_plots=len(report.figures()))
    assert "Per host: steady state" in page.text and all(value in page.text for value in shown)
