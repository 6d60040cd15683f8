"""The report of PTS runs: a real small run (all four tests, real fio on a file), and stored runs made here in the
engine's format (25 rounds of the full enterprise matrix, steady or not, a run in progress, a test type the report
does not know yet). Values in the xlsx, PDF and HTML are checked against phase.json and round.json."""

import json
import math
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import made_once, run_cli
from ptsbench.atomic import atomic_write_json
from ptsbench.errors import PtsbenchError
from ptsbench.pts.plan import TargetInfo
from ptsbench.pts.records import determination, stop_reason
from ptsbench.pts.settings import make_settings
from ptsbench.pts.start import RunStart, create_run
from ptsbench.report.build import build_report, load_report, write_report
from ptsbench.report.core import pdf
from ptsbench.report.core.model import Text
from test_report_browser import Browser, assert_clean_report_page, pdf_pages, pdf_text, shared_browser

# one worker runs this module's tests, so its module-wide runs (fixtures) are made once, not once per worker
pytestmark = pytest.mark.xdist_group("report-pts")

HEADER_FACTS = ("test", "specification", "test date (UTC)", "platform", "test software", "device",
                "serial / firmware", "capacity", "interface / media", "purge", "write cache", "data pattern",
                "active range", "preconditioning", "TC / QD", "round time", "test loop", "rounds", "steady state")
TINY_ARGS = ("--profile", "demo", "--spec", "1.1", "--size", "16M", "--round-time", "0.1", "--max-rounds", "5",
             "--wsat-capacity", "1", "--mixes", "iops=100,0", "--block-sizes", "iops=4k,64k", "--block-sizes",
             "tp=1m", "--mixes", "lat=100,0", "--block-sizes", "lat=4k")
_TINY: list[Path] = []


def tiny_pts_run(base: Path) -> Path:
    """A real `ptsbench pts` run (demo profile, four tests, 5 rounds of small cells), made once per test run (one
    xdist worker makes it, conftest.made_once); its output in tiny-pts.log beside it. While it runs, its report is
    rewritten every half second, as a live report is (live_rewrites(), test_live_report_during_a_real_run)."""
    if not _TINY:
        _TINY.append(made_once(base, "tiny-pts", _make_tiny_pts_run))
    return _TINY[0]


def _make_tiny_pts_run(run_dir: Path) -> None:
    live = []  # (what the live report saw, error or "") for every rewrite during the real run
    with open(run_dir.parent / "tiny-pts.log", "w") as log:  # a file, not a pipe: a full pipe would stall the run
        process = subprocess.Popen([sys.executable, "-m", "ptsbench", "pts", *TINY_ARGS, "--out", str(run_dir)],
                                   stdout=log, stderr=subprocess.STDOUT)
        while process.poll() is None:
            time.sleep(0.5)
            if not (run_dir / "plan.json").exists():
                continue
            rounds = len(list(run_dir.glob("pts/*/rounds/*/round.json")))
            try:
                write_report(run_dir, in_progress=f"{rounds} rounds stored")
                live.append((f"{rounds} rounds", ""))
            except PtsbenchError as error:
                live.append((f"{rounds} rounds", str(error)))
    assert process.returncode == 0, (run_dir.parent / "tiny-pts.log").read_text()[-2000:]
    (run_dir.parent / "tiny-pts.live.json").write_text(json.dumps(live))


def live_rewrites(run_dir: Path) -> list[tuple[str, str]]:
    """What each live rewrite of the tiny run's report saw, and its error or ""."""
    return [tuple(pair) for pair in json.loads((run_dir.parent / "tiny-pts.live.json").read_text())]


@pytest.fixture(scope="module")
def pts_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The full report (HTML, PDF, xlsx, figures as PNG and SVG) of a copy of the real run."""
    run_dir = tmp_path_factory.mktemp("pts-report") / "run"
    shutil.copytree(tiny_pts_run(tmp_path_factory.getbasetemp()), run_dir, ignore=shutil.ignore_patterns("report"))
    return build_report(run_dir, images=("png", "svg"))


@pytest.fixture
def browser(tmp_path_factory: pytest.TempPathFactory) -> Browser:
    return shared_browser(tmp_path_factory.getbasetemp() / "chromium-profile")


# --- stored runs in the engine's format ----------------------------------------------------------------------

DEVICE = {"path": "/dev/nvme9n1", "kind": "block", "size_bytes": 960_197_124_096, "vendor": "Example",
          "model": "EX-960", "serial": "SN0001", "firmware": "1.0", "transport": "nvme", "rotational": False,
          "logical_sector_bytes": 512, "physical_sector_bytes": 4096, "write_cache": "write through"}


def _direction(iops: float, bs_bytes: int, lat_mean_ns: float) -> dict[str, Any]:
    runtime_ms = 60_000
    ios = int(iops * runtime_ms / 1000)
    return {"iops": iops, "bw_bytes": iops * bs_bytes, "io_bytes": ios * bs_bytes, "total_ios": ios,
            "runtime_ms": runtime_ms, "lat_n": ios, "lat_mean_ns": lat_mean_ns, "lat_min_ns": lat_mean_ns / 4,
            "lat_max_ns": lat_mean_ns * 40,
            "lat_percentiles_ns": {"50": lat_mean_ns, "99": 3 * lat_mean_ns, "99.9": 8 * lat_mean_ns,
                                   "99.99": 20 * lat_mean_ns, "99.999": 30 * lat_mean_ns}}


def _cell(spec: Any, iops: float) -> dict[str, Any]:
    """A cell record shaped like engine.cell_record's: read, write and total, tracked metrics at top level."""
    lat_ns = spec.numjobs * spec.iodepth / iops * 1e9
    read = _direction(iops * spec.read_pct / 100, spec.bs_bytes, lat_ns) if spec.read_pct else None
    write = _direction(iops * (100 - spec.read_pct) / 100, spec.bs_bytes, lat_ns) if spec.read_pct < 100 else None
    total = _direction(iops, spec.bs_bytes, lat_ns)
    return {"name": spec.name, "pattern": spec.pattern, "read_pct": spec.read_pct, "bs_bytes": spec.bs_bytes,
            "numjobs": spec.numjobs, "iodepth": spec.iodepth, "runtime_s": spec.runtime_s, "jobs": [spec.name],
            "error": 0, "usr_cpu": 1.0, "sys_cpu": 5.0, "read": read, "write": write, "total": total,
            **{metric: total[metric] for metric in ("iops", "bw_bytes", "lat_mean_ns", "lat_max_ns")}}


def _base_iops(spec: Any) -> float:
    """A plausible device: IOPS fall with block size and with the write share."""
    return 900_000 * (4096 / spec.bs_bytes) ** 0.75 * (0.35 + 0.65 * spec.read_pct / 100)


def _window(rounds: list[dict[str, Any]], window_rounds: list[int]) -> dict[str, Any]:
    chosen = [r for r in rounds if r["round"] in window_rounds]
    values = {}
    for name in chosen[0]["cells"]:
        cells = [r["cells"][name] for r in chosen]
        entry = {m: sum(c[m] for c in cells) / len(cells) for m in ("iops", "bw_bytes", "lat_mean_ns")}
        for direction in ("read", "write"):
            for metric in ("iops", "bw_bytes", "lat_mean_ns"):
                found = [c[direction][metric] for c in cells if c[direction]]
                entry[f"{direction}_{metric}"] = sum(found) / len(found) if found else None
        entry["lat_max_ns"] = max(c["lat_max_ns"] for c in cells)
        entry["lat_percentiles_ns"] = cells[-1]["total"]["lat_percentiles_ns"]
        values[name] = entry
    return values


def stored_pts_run(root: Path, rounds: int = 25, shape: Callable[[int], float] = lambda r: 1 + 0.15 * (-1) ** r,
                   unfinished: str | None = None) -> Path:
    """A PTS run directory of the enterprise profile (all four tests, the full matrix) in the engine's format.
    `shape(round)` scales every cell: the default swings 30 % and never reaches steady state. `unfinished`: the
    phase left running (its rounds so far, no phase.json; later phases not started)."""
    settings = make_settings("enterprise", "2.0")
    info = TargetInfo(DEVICE["path"], "block", DEVICE["size_bytes"], 512, 4096, "io_uring")
    pts, plan = create_run(root, settings, info, DEVICE, RunStart(ioengine_note="io_uring", purge_method="nvme-format"))
    for phase in plan.phases:
        pts.add_purge_attempt(phase.key, {
            "method": "nvme-format", "commands": ["nvme format /dev/nvme9n1 --ses=1"], "ok": True,
            "message": "formatted with secure erase", "is_deviation": False, "started_utc": "2026-01-02T03:04:05Z",
            "finished_utc": "2026-01-02T03:04:35Z"})
        if phase.precondition_bytes:
            pts.precondition_dir(phase.key).mkdir(parents=True)
            atomic_write_json(pts.precondition_dir(phase.key) / "result.json", {
                "planned_bytes": phase.precondition_bytes, "written_bytes": phase.precondition_bytes,
                "runtime_ms": 1_000_000, "bw_bytes": 1.9e9, "finished_utc": "2026-01-02T04:00:00Z"})
        count = rounds if phase.key != unfinished else 3
        records: list[dict[str, Any]] = []
        stop: str | None = None
        for number in range(1, count + 1):
            cells = {spec.name: _cell(spec, _base_iops(spec) * shape(number)) for spec in phase.cells}
            record: dict[str, Any] = {"round": number, "phase": phase.key, "seed": number,
                                      "started_utc": f"2026-01-02T05:{number:02d}:00Z",
                                      "finished_utc": f"2026-01-02T05:{number:02d}:59Z", "wall_s": 60.0,
                                      "ptsbench_cpu_s": 0.1, "fio_version": "fio-3.33", "cells": cells}
            if phase.phase.stop.kind == "written":
                written = sum((c["write"] or {}).get("io_bytes", 0) for c in cells.values())
                before = records[-1]["wsat"] if records else {"written_bytes": 0, "io_time_s": 0.0}
                record["wsat"] = {"written_bytes": before["written_bytes"] + written,
                                  "io_time_s": before["io_time_s"] + 60.0}
                record["telemetry"] = _drive_counters(before["written_bytes"], record["wsat"]["written_bytes"],
                                                      number)
            record["steady"] = determination(phase.phase, [*records, record])
            records.append(record)
            folder = pts.round_dir(phase.key, number)
            folder.mkdir(parents=True)
            atomic_write_json(folder / "round.json", record)
            stop = stop_reason(plan, phase, records)
            if stop and phase.key != unfinished:
                break
        if phase.key == unfinished:
            pts.store.update_manifest(status="running")
            return root
        last = records[-1]
        window_rounds = last["steady"]["window_rounds"] or [r["round"] for r in records[-5:]]
        pts.write_phase_result(phase.key, {
            "phase": phase.key, "test": phase.phase.test, "title": phase.phase.title,
            "stop_reason": stop or f"stopped after {len(records)} rounds", "rounds": len(records),
            "steady": last["steady"]["steady"], "window_rounds": window_rounds,
            "determination": last["steady"]["variables"], "window": _window(records, window_rounds),
            **({"wsat": last["wsat"]} if "wsat" in last else {})})
    pts.store.update_manifest(status="done")
    return root


def _drive_counters(start_bytes: int, end_bytes: int, number: int) -> dict[str, Any]:
    """Telemetry of a write round on an OCP drive whose write amplification grows by 0.1 a round (media bytes
    written = host bytes x (1 + number / 10)); host counters in 512,000-byte units, rounded up as a drive does."""
    from ptsbench.device.telemetry import empty_telemetry, telemetry_change

    def reading(host_bytes: int, media_bytes: int) -> dict[str, Any]:
        return {**empty_telemetry(None, "nvme-cli", "/dev/nvme0n1"), "data_units_written": -(-host_bytes // 512_000),
                "media_written_bytes": media_bytes, "media_source": "OCP C0h"}

    before = reading(start_bytes, start_bytes * 2)
    after = reading(end_bytes, before["media_written_bytes"] + (end_bytes - start_bytes) * (10 + number) // 10)
    return {"before": before, "after": after, "change": telemetry_change(before, after), "cpu": {}}


def sheet_rows(path: Path, name: str) -> list[tuple[Any, ...]]:
    import openpyxl

    workbook = openpyxl.load_workbook(path, read_only=True)
    rows = [tuple(row) for row in workbook[name].iter_rows(values_only=True)]
    workbook.close()
    return rows


def phase_json(run_dir: Path, key: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run_dir / "pts" / key / "phase.json").read_text())
    return data


# --- a real run ------------------------------------------------------------------------------------------------


def test_real_pts_run_report(pts_report: Path) -> None:
    out, run_dir = pts_report, pts_report.parent
    report = load_report(run_dir)
    sections = {section.key: section for section in report.sections}
    assert list(sections) == ["glance", "test-iops", "test-tp", "test-lat", "test-wsat", "compliance", "environment"]
    reader = next(table for table in sections["environment"].tables() if table.key == "log-reader")
    assert reader.rows == (("fio log reader", "compiled C"),)  # the test install builds the C parser
    for key in ("test-iops", "test-tp", "test-lat", "test-wsat"):
        labels = [label for label, _ in sections[key].facts]
        assert all(label in labels for label in HEADER_FACTS), key
    # IOPS: the xlsx table holds the measurement-window averages of phase.json, block size rows x mix columns
    window = phase_json(run_dir, "iops")["window"]
    rows = sheet_rows(out.parent / "results.xlsx", "iops")
    assert rows[0] == ("block size", "100/0 (IOPS)", "0/100 (IOPS)")
    assert {row[0]: row[1:] for row in rows[1:]} == {
        bs: pytest.approx((window[f"rnd {bs} 100/0"]["iops"], window[f"rnd {bs} 0/100"]["iops"]), rel=1e-15)
        for bs in ("4k", "64k")}
    # native Excel charts: one per charted table and per figure with a data sheet; IOPS vs block size on a log axis
    with zipfile.ZipFile(out.parent / "results.xlsx") as workbook:
        charts = [workbook.read(name).decode() for name in workbook.namelist() if name.startswith("xl/charts/chart")]
    expected = sum(1 for table in report.tables() if table.chart and table.rows)
    expected += sum(1 for figure in report.figures() if figure.data_sheet and figure.series)
    assert len(charts) == expected >= 10
    iops_chart = next(chart for chart in charts if "<c:f>iops!$B$1</c:f>" in chart)
    assert '<c:logBase val="10"/>' in iops_chart
    # the steady-state determination, as stored
    determination_rows = sheet_rows(out.parent / "results.xlsx", "iops-steady-state")
    stored = phase_json(run_dir, "iops")["determination"]["rnd 4k 0/100 iops"]
    (row,) = determination_rows[1:]
    assert row[1] == "rnd 4k 0/100 iops" and row[3] == pytest.approx(stored["average"], rel=1e-15)
    assert row[4] == pytest.approx(stored["data_excursion"], rel=1e-15)
    assert row[8:10] == (pytest.approx(stored["slope"], rel=1e-15), pytest.approx(stored["intercept"], rel=1e-15))
    assert row[10] == ("reached" if stored["steady"] else "NOT reached")
    # throughput in MB/s and latency in µs, from the same window values
    tp = phase_json(run_dir, "tp-1m")["window"]
    assert sheet_rows(out.parent / "results.xlsx", "tp")[1] == (
        "1m", pytest.approx(tp["seq 1m 100/0"]["bw_bytes"] / 1e6), pytest.approx(tp["seq 1m 0/100"]["bw_bytes"] / 1e6))
    lat = phase_json(run_dir, "lat")["window"]
    assert sheet_rows(out.parent / "results.xlsx", "lat-mean")[1][2] == pytest.approx(
        lat["rnd 4k 0/100"]["lat_mean_ns"] / 1e3)
    assert sheet_rows(out.parent / "results.xlsx", "lat-p99999")[1][2] == pytest.approx(
        lat["rnd 4k 0/100"]["lat_percentiles_ns"]["99.999"] / 1e3)
    # each latency table says how its window value is made: a mean of round means, a maximum, a merged percentile
    window_rounds = phase_json(run_dir, "lat")["window_rounds"]
    span = f"rounds {window_rounds[0]}-{window_rounds[-1]}"
    lat_texts = [block.text for section in report.sections if section.key == "test-lat" for block in section.blocks
                 if isinstance(block, Text)]
    for how in ("average over", "maximum over", "over all IOs of"):
        assert any(f"Latency: {how} {span};" in text for text in lat_texts), how
    captions = {figure.key: figure.caption for figure in report.figures()}
    assert "longest total latency of any IO" in captions["lat-max-3d"]
    assert "json+ bins" in captions["lat-p99999-3d"] and "json+" not in captions["lat-mean-3d"]
    # PDF: pages and the table values
    text = pdf_text(out / "report.pdf")
    assert pdf_pages(out / "report.pdf") == len(pdf.layout(report))
    for name in ("rnd 4k 100/0", "rnd 64k 0/100"):
        assert f"{window[name]['iops']:,.1f}" in text
    assert "NOT PTS-compliant" in text and "Steady-state determination" in text and "Write saturation" in text
    # the summary's text (every deviation, note and stop reason) is printed whole, not shortened in the middle
    summary_text = [cell for table in sections["compliance"].tables() for row in table.rows for cell in row
                    if isinstance(cell, str)]
    assert any(len(cell) > 44 for cell in summary_text)
    assert [cell for cell in summary_text if cell not in text] == []
    for figure in report.figures():
        assert (out / "figures" / f"{figure.key}.png").exists() and (out / "figures" / f"{figure.key}.svg").exists()


def test_real_pts_report_in_a_browser(pts_report: Path, browser: Browser) -> None:
    out, run_dir = pts_report, pts_report.parent
    report = load_report(run_dir)
    page = browser.open_page(out / "index.html")
    assert_clean_report_page(page, expected_plots=len(report.figures()))
    assert sum(plot["gl"] for plot in page.plots) == 4  # IOPS and the three latency 3D bar charts
    assert "NOT PTS-compliant" in page.text
    window = phase_json(run_dir, "iops")["window"]
    assert f"{window['rnd 4k 0/100']['iops']:,.1f}" in page.text


def test_live_report_during_a_real_run(pts_report: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Rewritten every half second while the real run went on: never an error, and it saw the run grow."""
    live = live_rewrites(tiny_pts_run(tmp_path_factory.getbasetemp()))
    assert [error for _seen, error in live if error] == []
    seen = [int(what.split()[0]) for what, _error in live]
    assert len(seen) >= 5 and seen == sorted(seen) and seen[0] < seen[-1]
    assert not list(pts_report.parent.rglob(".*.tmp"))


# --- stored runs -----------------------------------------------------------------------------------------------


def test_full_run_of_25_rounds_not_steady(tmp_path: Path) -> None:
    """The benchmark's shape: four tests, 25 rounds each, the full enterprise matrix; steady state never reached."""
    run_dir = stored_pts_run(tmp_path / "run")
    out = build_report(run_dir, static=False)  # the PDF and figures are checked on the real run
    assert (out / "index.html").stat().st_size < 10_000_000
    report = load_report(run_dir)
    iops = next(section for section in report.sections if section.key == "test-iops")
    warnings = [block.text for block in iops.blocks if getattr(block, "kind", "") == "warning"]
    assert any("IOPS: steady state not reached" in text for text in warnings)
    convergence = next(figure for figure in iops.figures() if figure.key == "iops-convergence-rnd-4k-0-100")
    assert [len(series.x) for series in convergence.series] == [25] * 8
    rows = sheet_rows(out.parent / "results.xlsx", "iops")
    assert [row[0] for row in rows[1:]] == ["1m", "128k", "64k", "32k", "16k", "8k", "4k", "512"]
    window = phase_json(run_dir, "iops")["window"]
    assert rows[7][7] == pytest.approx(window["rnd 4k 0/100"]["iops"], rel=1e-15)
    wsat = sheet_rows(out.parent / "results.xlsx", "wsat")
    last_round = json.loads((run_dir / "pts" / "wsat" / "rounds" / "025" / "round.json").read_text())
    assert len(wsat) == 26 and wsat[25][4] == pytest.approx(last_round["cells"]["rnd 4k 0/100"]["iops"], rel=1e-15)
    waf = last_round["telemetry"]["change"]["waf"]
    assert wsat[0][7] == "write amplification (media / host bytes)" and wsat[25][7] == pytest.approx(waf["ratio"])
    assert waf["source"] == "OCP C0h" and waf["ratio"] == pytest.approx(3.5, rel=1e-3)  # to within one host unit
    figures = {figure.key for figure in next(s for s in report.sections if s.key == "test-wsat").figures()}
    assert {"wsat-waf-per-round", "wsat-waf-over-written"} <= figures
    html = (out / "index.html").read_text()
    assert "steady state not reached" in html and f"{window['rnd 4k 0/100']['iops']:,.1f}" in html


def test_steady_state_reached_window_plot_and_table(tmp_path: Path) -> None:
    run_dir = stored_pts_run(tmp_path / "run", shape=lambda r: 1 + 0.6 * math.exp(-r))
    report = load_report(run_dir)
    stored = phase_json(run_dir, "iops")
    assert stored["steady"] is True
    iops = next(section for section in report.sections if section.key == "test-iops")
    assert not any("steady state not reached" in getattr(block, "text", "") for block in iops.blocks)
    facts = dict(iops.facts)
    window = stored["window_rounds"]
    assert facts["steady state"] == f"IOPS: reached in rounds {window[0]}-{window[-1]}"
    for label, variable in stored["determination"].items():
        figure = next(f for f in iops.figures() if f.key == f"iops-window-{label.replace(' ', '-').replace('/', '-')}")
        tracked, average, high, low, fitted = figure.series
        assert tracked.x == tuple(variable["rounds"]) and tracked.y == tuple(variable["values"])
        assert average.y == (variable["average"],) * 2
        assert high.y[0] == pytest.approx(1.1 * variable["average"])
        assert low.y[0] == pytest.approx(0.9 * variable["average"])
        assert fitted.y == pytest.approx(tuple(variable["slope"] * r + variable["intercept"] for r in fitted.x))


def test_live_report_of_a_run_in_progress(tmp_path: Path) -> None:
    run_dir = stored_pts_run(tmp_path / "run", unfinished="lat")
    out = write_report(run_dir, in_progress="Latency round 4 of at most 25")
    html = (out / "index.html").read_text()
    assert "In progress: Latency round 4 of at most 25" in html
    assert "NOT FINISHED: latest round 3 shown" in html
    assert not (out / "report.pdf").exists() and not (out / "figures").exists()
    report = load_report(run_dir)
    assert [section.key for section in report.sections] == ["glance", "test-iops", "test-tp", "test-lat",
                                                            "compliance", "environment"]  # no write saturation yet


def test_a_test_type_the_report_does_not_know_gets_the_common_sections(tmp_path: Path) -> None:
    """Tests added later get header facts, steady state and a table of every cell."""
    run_dir = stored_pts_run(tmp_path / "run", rounds=6)
    plan = json.loads((run_dir / "plan.json").read_text())
    for phase in plan["phases"]:
        if phase["key"] == "lat":  # the latency test's histogram capture stays a latency phase
            phase["test"], phase["title"] = "future", "Composite block size workload"
    (run_dir / "plan.json").write_text(json.dumps(plan))
    report = load_report(run_dir)
    section = next(section for section in report.sections if section.key == "test-future")
    assert section.title == "Composite block size workload"
    assert all(label in dict(section.facts) for label in HEADER_FACTS)
    tables = {table.key: table for table in section.tables()}
    assert set(tables) == {"future-steady-state", "lat-cells"}
    window = phase_json(run_dir, "lat")["window"]
    rows = {row[0]: row for row in tables["lat-cells"].rows}
    assert rows["rnd 8k 65/35"][2] == window["rnd 8k 65/35"]["iops"]
    out = build_report(run_dir, static=False)
    assert "Composite block size workload" in (out / "index.html").read_text()


def test_data_pattern_is_read_from_per_host_job_files(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Hosts with their own sequential offsets get job-HOST.fio instead of job.fio; the header fact still reads."""
    run_dir = tmp_path_factory.mktemp("per-host-jobs") / "run"
    shutil.copytree(tiny_pts_run(tmp_path_factory.getbasetemp()), run_dir, ignore=shutil.ignore_patterns("report"))
    first_round = run_dir / "pts" / "tp-1m" / "rounds" / "001"
    (first_round / "job.fio").rename(first_round / "job-127.0.0.2.fio")
    sections = {section.key: dict(section.facts) for section in load_report(run_dir).sections}
    assert sections["test-tp"]["data pattern"].startswith("random data")


def test_a_round_edited_by_hand_is_one_line_error(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(tiny_pts_run(tmp_path_factory.getbasetemp()), run_dir, ignore=shutil.ignore_patterns("report"))
    damaged = run_dir / "pts" / "iops" / "rounds" / "002" / "round.json"
    damaged.write_text("{}")
    for command in ("report", "show"):
        done = run_cli(command, str(run_dir))
        assert done.returncode == 2 and "Traceback" not in done.stderr, (command, done.stderr)
        assert f"ptsbench: error: {damaged} is damaged: not round 2" in done.stderr
