"""The advanced tests end to end on real fio: a demo-profile run of HIR, XSR, CBW, DIRTH and HDD IOPS on a scratch
file (durations shortened), the operating points stored and used, resume after kill -9 in an operating point and
after a kill between the sweep's result and the points' choice, and telemetry per round (a clean "not available"
on a file; a stand-in nvme-cli whose device starts throttling)."""

import json
import math
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import kill_when, run_cli, start_pts
from ptsbench.device.target import Target
from ptsbench.device.telemetry import TELEMETRY_KEYS
from ptsbench.device.userfile import mark_made
from ptsbench.pts.advanced import LATENCY_LIMIT_NS
from ptsbench.pts.engine import QuietReporter, run
from ptsbench.pts.settings import make_settings
from ptsbench.pts.start import RunStart, create_run, target_info
from ptsbench.report.core.model import Table
from ptsbench.report.pts.terminal import pts_sections, terminal_blocks
from test_pts_engine import Recorder, rounds_of
from test_pts_resume import resume_and_check, stored
from test_report_advanced import TINY, tiny_advanced_run

# one worker runs this module's tests, so its module-wide runs (fixtures) are made once, not once per worker
pytestmark = pytest.mark.xdist_group("pts-advanced-engine")

MIB = 1024**2
DATA = Path(__file__).parents[1] / "data" / "telemetry"
DEMAND = TINY[:TINY.index("--hir-wait-states")]  # the shared run's arguments for the demand tests (CBW, DIRTH)


def read(path: Path) -> Any:
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One shortened demo run of five advanced tests (about 30 s), shared with the report's tests."""
    return tiny_advanced_run(tmp_path_factory.getbasetemp())


def test_demo_run_stores_every_phase(demo_run: tuple[Path, str]) -> None:
    run_dir, _ = demo_run
    manifest, plan = read(run_dir / "manifest.json"), read(run_dir / "plan.json")
    assert manifest["status"] == "done" and not (run_dir / "scratch.dat").exists()
    points = {test: [p for p, cell in record["points"].items() if cell] for test, record in
              manifest["operating_points"].items()}
    assert [p["key"] for p in plan["phases"]] == [
        "hir-ss", "hir-w0.1s", "hir-w0.3s", "xsr-1", "xsr-2", "xsr-3",
        "cbw-wdpc", "cbw", *(f"cbw-{p}" for p in points["cbw"]),
        "dirth-wdpc", "dirth", *(f"dirth-{p}" for p in points["dirth"]), "hdd-iops"]
    assert plan["pending_points"] == []
    for phase in plan["phases"]:
        result = read(run_dir / "pts" / phase["key"] / "phase.json")
        records = rounds_of(run_dir, phase["key"])
        assert result["rounds"] == len(records) == phase["max_rounds"] if phase["stop"]["kind"] == "rounds" \
            else 1 <= len(records) <= phase["max_rounds"]
        for record in records:
            assert list(record["cells"]) == [cell["name"] for cell in phase["cells"]]
            assert all(cell["error"] == 0 and cell["total"]["total_ios"] > 0 for cell in record["cells"].values())
    reasons = "\n".join(manifest["compliance"]["reasons"])
    assert "Host idle recovery: 2 bursts per wait state (PTS: 360)" in reasons and "purge: none" in reasons


def test_hir_wait_states_follow_their_schedule(demo_run: tuple[Path, str]) -> None:
    run_dir, _ = demo_run
    for key, wait_s in (("hir-w0.1s", 0.1), ("hir-w0.3s", 0.3)):
        (record,) = rounds_of(run_dir, key)
        roles = [cell["role"] for cell in record["cells"].values()]
        assert roles == ["burst", "burst", "recovery"]
        delays = re.findall(r"startdelay=(\d+)ms", (run_dir / "pts" / key / "rounds" / "001" / "job.fio").read_text())
        assert [int(d) for d in delays] == [round(1000 * (0.1 + wait_s)), round(2000 * (0.1 + wait_s))]
        assert all(cell["write"]["io_bytes"] > 0 and cell["read"] is None for cell in record["cells"].values())
    baseline = read(run_dir / "pts" / "hir-ss" / "phase.json")["window"]["rnd 4k 0/100"]["iops"]
    table = shown_tables(run_dir)["hir"]
    assert [row[0] for row in table.rows] == [0.1, 0.3]
    assert all(row[3] == baseline for row in table.rows)


def shown_tables(run_dir: Path) -> dict[str, Table]:
    """The tables `show` prints (the report's), by key."""
    from ptsbench.store import RunStore

    return {block.key: block for section in pts_sections(RunStore.open(run_dir)) for block in terminal_blocks(section)
            if isinstance(block, Table)}


def test_xsr_groups_and_recovery(demo_run: tuple[Path, str]) -> None:
    run_dir, _ = demo_run
    groups_s = [float(value) for value in TINY[TINY.index("--xsr-groups") + 1].split(",")]
    round_s = float(TINY[TINY.index("--round-time") + 1])
    counts = [len(rounds_of(run_dir, f"xsr-{n}")) for n in (1, 2, 3)]
    assert counts[:2] == [math.ceil(group_s / round_s - 1e-9) for group_s in groups_s[:2]]
    assert 1 <= counts[2] <= math.ceil(groups_s[2] / round_s - 1e-9)  # group 3 may stop once recovered
    first, second = rounds_of(run_dir, "xsr-1")[:2]
    cell = "seq 1m 0/100"
    assert second["cells"][cell]["seq_start_bytes"] == first["cells"][cell]["seq_end_bytes"]  # one stream
    assert all(r["cells"]["rnd 8k 0/100"]["bs_bytes"] == 8192 for r in rounds_of(run_dir, "xsr-2"))
    group1 = [r["cells"][cell]["bw_bytes"] for r in rounds_of(run_dir, "xsr-1")]
    group3 = [r["cells"][cell]["bw_bytes"] for r in rounds_of(run_dir, "xsr-3")]
    baseline = sum(group1) / len(group1)
    recovered = next((index for index, bw in enumerate(group3) if bw >= baseline), None)
    table = shown_tables(run_dir)["xsr-recovery"]
    ends = [sum(r["wall_s"] for r in rounds_of(run_dir, "xsr-3")[:n + 1]) for n in range(len(group3))]
    expected = (None, None, "not recovered") if recovered is None else (
        recovered + 1, pytest.approx(ends[recovered] / 60), "recovered")
    assert table.rows == ((pytest.approx(baseline / 1e6), len(group3), *expected),)


@pytest.mark.parametrize("test", ["cbw", "dirth"])
def test_operating_points_are_chosen_stored_and_used(demo_run: tuple[Path, str], test: str) -> None:
    run_dir, _ = demo_run
    record = read(run_dir / "manifest.json")["operating_points"][test]
    window = read(run_dir / "pts" / test / "phase.json")["window"]
    plan = read(run_dir / "plan.json")
    sweep = [c for c in next(p for p in plan["phases"] if p["key"] == test)["cells"] if c["role"] == ""]
    assert [(c["numjobs"], c["iodepth"]) for c in sweep] == [(2, 2), (2, 1), (1, 2), (1, 1)]
    under = [c for c in sweep if window[c["name"]]["lat_mean_ns"] < LATENCY_LIMIT_NS]
    best = max(under, key=lambda c: window[c["name"]]["iops"]) if under else None
    points = record["points"]
    assert (points["min"]["tc"], points["min"]["qd"]) == (1, 1)
    if best is None:
        assert points["max"] is None and record["note"]
    else:
        assert points["max"]["name"] == best["name"] and points["max"]["iops"] == window[best["name"]]["iops"]
    assert record["window_rounds"] == read(run_dir / "pts" / test / "phase.json")["window_rounds"]
    for name, chosen in points.items():
        if chosen is None:
            assert not (run_dir / "pts" / f"{test}-{name}").exists()
            continue
        (done,) = rounds_of(run_dir, f"{test}-{name}")
        prewrite, capture = done["cells"].values()
        assert (prewrite["role"], prewrite["read_pct"], prewrite["numjobs"]) == ("pre-write", 0, 2)
        assert (capture["role"], capture["numjobs"], capture["iodepth"]) == ("histogram", chosen["tc"], chosen["qd"])
        job = (run_dir / "pts" / f"{test}-{name}" / "rounds" / "001" / "job.fio").read_text()
        assert f"numjobs={chosen['tc']}\niodepth={chosen['qd']}\n" in job
        histogram = capture["histogram"]
        assert sum(histogram["counts"]) == histogram["n"] == capture["total"]["lat_n"] > 0
        assert histogram["max_ns"] == capture["total"]["lat_max_ns"]
    if test == "dirth":  # the default DIRTH workload: random 8 KiB 65/35
        assert sweep[0]["name"] == "rnd 8k 65/35 tc2/qd2" and sweep[0]["read_pct"] == 65


def test_hdd_zones_run_in_their_zone(demo_run: tuple[Path, str]) -> None:
    run_dir, _ = demo_run
    plan = read(run_dir / "plan.json")
    (record,) = rounds_of(run_dir, "hdd-iops")
    phase = next(p for p in plan["phases"] if p["key"] == "hdd-iops")
    zone_bytes = plan["active_range_bytes"] // 2 // plan["align_bytes"] * plan["align_bytes"]
    for cell in phase["cells"]:
        options = dict(cell["fio_options"])
        assert (int(options["offset"]), int(options["size"])) == (cell["zone"] * zone_bytes, zone_bytes)
        assert record["cells"][cell["name"]]["zone"] == cell["zone"]
    assert len(phase["cells"]) == 2 * 9 and {c["zone"] for c in phase["cells"]} == {0, 1}


def test_show_prints_every_advanced_table_and_telemetry(demo_run: tuple[Path, str]) -> None:
    run_dir, run_output = demo_run
    shown = run_cli("show", str(run_dir), env={"COLUMNS": "200"})
    assert shown.returncode == 0, shown.stderr
    titles = [table.title for table in shown_tables(run_dir).values()]
    for title in ("Host idle recovery: mean IOPS", "Cross stimulus recovery: access groups",
                  "Cross stimulus recovery: recovery time", "demand variation", "demand intensity",
                  "operating points (from the sweep)", "response time at the operating points",
                  "response-time histograms", "HDD IOPS per zone (2 zones)", "Telemetry per phase"):
        assert any(title in found for found in titles), title
    for title in titles:  # the run's end and `show` print every one of the report's tables
        assert title in " ".join(shown.stdout.split()) and title in " ".join(run_output.split()), title
    shown_text = " ".join(shown.stdout.split())
    assert shown_text.count("Write amplification: not available - not an NVMe or SMART device") \
        == shown_text.count("Telemetry per phase")  # said once per test, no number
    for phase in read(run_dir / "plan.json")["phases"]:
        for record in rounds_of(run_dir, phase["key"]):
            telemetry = record["telemetry"]
            for reading in (telemetry["before"], telemetry["after"]):
                assert set(reading) == set(TELEMETRY_KEYS)
                assert reading["source"] is not None or reading["note"].startswith("not available: ")
            assert telemetry["cpu"]["interval_s"] > 0 and telemetry["cpu"]["cpu_count"] >= 1


# ---------------------------------------------------------------------------------------------------------------
# resume


def test_kill_in_an_operating_point_then_between_sweep_and_points(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    point = run_dir / "pts" / "cbw-max" / "rounds" / "001"
    args = [*DEMAND, "--tests", "cbw", "--point-prewrite-time", "0.5"]
    kill_when(start_pts(run_dir, *args), (point / "job.fio").exists, delay_s=0.2)
    interrupted = not (point / "round.json").exists()
    chosen = read(run_dir / "manifest.json")["operating_points"]
    assert "cbw-max" in [p["key"] for p in read(run_dir / "plan.json")["phases"]]
    resume_and_check(run_dir, stored(run_dir))
    assert read(run_dir / "manifest.json")["operating_points"] == chosen
    assert (point.parent / "001.interrupted-1").is_dir() == interrupted
    # a kill after the sweep's phase.json but before the points were stored: resume chooses the same points
    manifest = read(run_dir / "manifest.json")
    del manifest["operating_points"]
    manifest["status"] = "running"  # as a kill left it (a finished run missing a phase is a damaged store)
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    with open(manifest["target_info"]["path"], "wb") as scratch:  # a finished run removed its scratch file
        scratch.truncate(manifest["target_info"]["size_bytes"])
    mark_made([manifest["target_info"]["path"]], manifest["file_identity"]["token"])  # as the run's fio made it
    for name in ("max", "mid", "min"):
        shutil.rmtree(run_dir / "pts" / f"cbw-{name}", ignore_errors=True)
    before = stored(run_dir)
    resume_and_check(run_dir, before)
    assert read(run_dir / "manifest.json")["operating_points"] == chosen
    assert all((run_dir / "pts" / f"cbw-{p}" / "phase.json").exists() for p, c in chosen["cbw"]["points"].items()
               if c)


# ---------------------------------------------------------------------------------------------------------------
# telemetry through the engine


def _api_run(tmp_path: Path, facts: dict[str, object], reporter: Any = None) -> Path:
    """Two 0.1 s rounds of HIR's steady-state phase on a file (null engine), with these target facts."""
    settings = make_settings("demo", "2.0", ("hir",), {"hir": {"round_time_s": 0.1, "max_rounds": 2,
                                                                "hir_wait_states_s": (0.1,), "hir_bursts": 1,
                                                                "hir_burst_s": 0.1, "hir_recovery_s": 0.1}})
    path = str(tmp_path / "target.dat")
    target = Target(path, "file", 16 * MIB, path)
    store, _ = create_run(tmp_path / "run", settings, target_info(target, facts, "null", 16 * MIB), facts,
                          RunStart(ioengine_note="null"))
    run(store, target, destructive=False, reporter=reporter or QuietReporter())
    return store.root


def test_telemetry_on_a_file_is_a_clean_not_available(tmp_path: Path) -> None:
    root = _api_run(tmp_path, {})
    for key in ("hir-ss", "hir-w0.1s"):
        for record in rounds_of(root, key):
            telemetry = record["telemetry"]
            note = f"not available: not an NVMe or SMART device ({tmp_path / 'target.dat'}, transport unknown)"
            assert telemetry["before"]["note"] == telemetry["after"]["note"] == note
            assert all(telemetry["after"][k] is None for k in TELEMETRY_KEYS if k not in ("note",))
            assert telemetry["change"]["throttled"] is None and telemetry["change"]["media_errors"] is None
            assert telemetry["change"]["waf"]["ratio"] is None and telemetry["change"]["waf"]["note"] == note
            assert telemetry["cpu"]["busy_pct"] is not None  # the host CPU is known even when the device says nothing


class SwapAfterFirstRound(Recorder):
    """After round 1 the stand-in device reports the throttled smart log."""

    def __init__(self, smart_log: Path) -> None:
        super().__init__()
        self.smart_log = smart_log

    def round_finished(self, progress: Any, record: Any) -> None:
        super().round_finished(progress, record)
        self.smart_log.write_text((DATA / "nvme-cli-2.x-smart-log-throttled.json").read_text())


def test_telemetry_per_round_tells_throttling_apart(tmp_path: Path, fakebin: Callable[[], list[list[str]]],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    smart_log = tmp_path / "smart-log.json"
    smart_log.write_text((DATA / "nvme-cli-2.x-smart-log.json").read_text())
    monkeypatch.setenv("FAKE_NVME_SMART_LOG", str(smart_log))
    facts: dict[str, object] = {"transport": "nvme", "disk": "/dev/nvme0n1", "nvme_controller": "/dev/nvme0"}
    root = _api_run(tmp_path, facts, SwapAfterFirstRound(smart_log))
    first, second = rounds_of(root, "hir-ss")
    assert first["telemetry"]["change"]["throttled"] is False
    assert (first["telemetry"]["before"]["temperature_c"], first["telemetry"]["after"]["temperature_c"]) == (37, 37)
    assert second["telemetry"]["before"] == first["telemetry"]["after"]  # read once between two rounds
    change = second["telemetry"]["change"]
    assert change["throttled"] is True and change["thm_temp1_trans_count"] == 14
    # the log's critical warning went from 0 to 2 (bit 1) during round 2: named; none new in round 1
    assert change["critical_warning_new"] == ["temperature beyond a threshold"]
    assert first["telemetry"]["change"]["critical_warning_new"] == []
    assert (change["temperature_start_c"], change["temperature_end_c"]) == (37, 83)
    assert second["telemetry"]["after"]["command"] == "nvme smart-log /dev/nvme0 -o json"
    reads = [argv for argv in fakebin() if argv[:2] == ["nvme", "smart-log"]]
    assert len(reads) == 4  # before round 1, after rounds 1 and 2, after the wait state's round (no purge between)
    from ptsbench.store import RunStore

    tables = [block for section in pts_sections(RunStore.open(root)) for block in terminal_blocks(section)
              if isinstance(block, Table) and block.title.startswith("Telemetry")]
    assert tables[0].rows[0][:5] == ("Host idle recovery: steady state (baseline)", 2, 37, 83, "rounds 2")
    # the throttled round is marked where the phase's window is judged: its source, and no steady state claimed
    from ptsbench.catalog.gates import run_facts
    from ptsbench.report.pts.views import load_context

    view = next(view for view in load_context(RunStore.open(root))[1] if view.key == "hir-ss")
    window = view.result["window_rounds"]
    assert 2 in window, "the premise: the phase's window holds the throttled round"
    assert view.throttled_window_rounds() == [2]
    assert view.source().endswith("; THERMAL THROTTLING in window round(s) 2")
    marked = [(what, steady) for what, steady in run_facts(RunStore.open(root)).steady if what.startswith(
        "Host idle recovery: steady state")]
    assert marked and all(what.endswith("(THERMAL THROTTLING in window round(s) 2)") and not steady
                          for what, steady in marked)
    profile = tmp_path / "profile.toml"
    profile.write_text("no_critical_warning = true\nsteady_state = true\nno_new_errors = true\n")
    from ptsbench.catalog.qualify import judge_profile, load_profile

    verdicts = {(v.subject, v.gate): v for v in judge_profile(load_profile(profile), RunStore.open(root))}
    warned = verdicts[("Host idle recovery: steady state (baseline)", "no new critical warning")]
    assert warned.value == "set: temperature beyond a threshold" and not warned.passed and warned.measured
    errors = verdicts[("Host idle recovery: steady state (baseline)", "no new error log entries")]
    assert (errors.value, errors.passed) == ("0 new", True)  # the log counts no entries before or after
    assert any(key[0].endswith("(THERMAL THROTTLING in window round(s) 2)") and not verdict.passed
               for key, verdict in verdicts.items())
