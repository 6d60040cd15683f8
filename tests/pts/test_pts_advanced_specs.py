"""The advanced test definitions (their rows in pts/specs.py, their phases from pts/advanced_specs.py) equal the
spec: phases, cell counts and order, TC as fio numjobs and QD as fio iodepth, durations, wait states; and their rounds
run as the engine renders them, on real fio."""

import json
import math
import os
import re
from dataclasses import replace
from pathlib import Path

import pytest

from ptsbench.errors import PtsbenchError
from ptsbench.fio.output import parse_jobs
from ptsbench.fio.runner import run_fio
from ptsbench.pts.advanced_specs import jesd219_bssplit, jesd219_zones, operating_point_phases, place_zones, zone_bounds
from ptsbench.pts.cells import Phase, ZonedCellSpec, round_duration_s, start_delay_s
from ptsbench.pts.deviations import advanced_deviations
from ptsbench.pts.params import DEMO_PARAMS, SPEC_PARAMS, AdvancedParams
from ptsbench.pts.plan import Plan, TargetInfo, make_plan, round_job
from ptsbench.pts.settings import make_settings, parse_depths, parse_dirth_workload
from ptsbench.pts.specs import MATRIX_TESTS, TEST_DEFS, TEST_ORDER, build_test

SWEEP = (32, 16, 8, 6, 4, 2, 1)


ADVANCED_ORDER = tuple(test for test in TEST_ORDER if test not in MATRIX_TESTS)


def spec_of(test: str) -> str:
    return "1.1" if test == "ecw" else "2.0"


def build_advanced(test: str, params: AdvancedParams, spec: str = "2.0") -> tuple[Phase, ...]:
    """One advanced test's phases with these parameters, through the plan's one builder."""
    settings = replace(make_settings("enterprise", spec), tests=(test,), advanced={test: params})
    return build_test(test, settings)


def test_every_test_builds_with_unique_keys_and_cell_names() -> None:
    keys = []
    for test in ADVANCED_ORDER:
        for params in (SPEC_PARAMS, DEMO_PARAMS):
            phases = build_advanced(test, params, spec_of(test))
            assert all(phase.test == test for phase in phases)
            # purge before the first phase only; HDD mode never purges
            assert [phase.purge for phase in phases] == [i == 0 and not test.startswith("hdd")
                                                         for i in range(len(phases))]
            for phase in phases:
                assert len({cell.name for cell in phase.cells}) == len(phase.cells)
                assert all(t.cell in {cell.name for cell in phase.cells} for t in phase.tracked)
        keys += [phase.key for phase in build_advanced(test, SPEC_PARAMS, spec_of(test))]
    assert len(keys) == len(set(keys))


def test_cbw_is_pts_20_and_ecw_pts_11() -> None:
    with pytest.raises(PtsbenchError, match="use ecw with --spec 1.1"):
        build_advanced("cbw", SPEC_PARAMS, "1.1")
    with pytest.raises(PtsbenchError, match="use cbw with --spec 2.0"):
        build_advanced("ecw", SPEC_PARAMS, "2.0")
    with pytest.raises(PtsbenchError, match="unknown test"):
        build_advanced("nope", SPEC_PARAMS)
    assert TEST_DEFS["ecw"].specs == ("1.1",) and TEST_DEFS["cbw"].specs == ("2.0",)
    # DIRTH is one of PTS-E 1.1's eight tests as well, the same test under both versions
    assert build_advanced("dirth", SPEC_PARAMS, "1.1") == build_advanced("dirth", SPEC_PARAMS, "2.0")


@pytest.mark.parametrize("test", ["cbw", "dirth", "ecw"])
def test_demand_intensity_round(test: str) -> None:
    wdpc, rounds = build_advanced(test, SPEC_PARAMS, spec_of(test))
    # preconditioning: purge, writes at TC32/QD32 in 30-minute rounds until steady state (at most 25 rounds)
    assert wdpc.key == f"{test}-wdpc" and wdpc.purge and wdpc.precondition is None
    (writes,) = wdpc.cells
    assert (writes.numjobs, writes.iodepth, writes.read_pct, writes.runtime_s) == (32, 32, 0, 1800)
    assert wdpc.tracked[0].cell == writes.name and wdpc.tracked[0].metric == "iops"
    assert (wdpc.stop.kind, wdpc.stop.max_rounds) == ("steady", 25)
    # each round: a 5-minute TC32/QD32 pre-write, then 49 cells, TC outer and QD inner, both 32 down to 1
    assert not rounds.purge and len(rounds.cells) == 50
    prewrite, sweep = rounds.cells[0], rounds.cells[1:]
    assert (prewrite.numjobs, prewrite.iodepth, prewrite.read_pct, prewrite.runtime_s) == (32, 32, 0, 300)
    assert [(c.numjobs, c.iodepth) for c in sweep] == [(tc, qd) for tc in SWEEP for qd in SWEEP]
    assert all(c.name.endswith(f"tc{c.numjobs}/qd{c.iodepth}") for c in sweep)  # TC is numjobs, QD is iodepth
    assert sweep[0].numjobs * sweep[0].iodepth == 1024 and sweep[-1].numjobs * sweep[-1].iodepth == 1
    assert all(c.runtime_s == 60 for c in sweep)
    assert [t.cell for t in rounds.tracked] == [sweep[0].name] and rounds.tracked[0].metric == "iops"
    assert (rounds.stop.kind, rounds.stop.max_rounds) == ("steady", 25)
    assert round_duration_s(rounds.cells) == 300 + 49 * 60


def test_cbw_access_pattern_is_jesd219() -> None:
    _, rounds = build_advanced("cbw", SPEC_PARAMS)
    sweep = rounds.cells[1:]
    assert all(c.read_pct == 40 and c.pattern == "rnd" for c in sweep)
    options = dict(sweep[0].fio_options)
    assert options["random_distribution"] == jesd219_zones() == "zoned:50/5:30/15:20/80"
    split = [part.split("/") for part in options["bssplit"].split(":")]  # type: ignore[union-attr]
    assert options["bssplit"] == jesd219_bssplit()
    assert {int(size): int(pct) for size, pct in split} == {
        512: 4, 1024: 1, 1536: 1, 2048: 1, 2560: 1, 3072: 1, 3584: 1, 4096: 67, 8192: 10, 16384: 7, 32768: 3, 65536: 3}
    assert sum(int(pct) for _, pct in split) == 100
    assert dict(rounds.cells[0].fio_options) == options  # the pre-write has the same sizes and zones


def test_dirth_workload_is_the_operators() -> None:
    _, rounds = build_advanced("dirth", SPEC_PARAMS)
    assert rounds.cells[1].name == "rnd 8k 65/35 tc32/qd32" and rounds.cells[1].bs_bytes == 8192
    assert rounds.cells[0].name == "rnd 8k 0/100 pre-write tc32/qd32"
    chosen = AdvancedParams(dirth_bs_bytes=4096, dirth_read_pct=0)
    _, rounds = build_advanced("dirth", chosen)
    assert rounds.cells[1].name == "rnd 4k 0/100 tc32/qd32" and rounds.cells[1].fio_options == ()
    assert advanced_deviations(["dirth"], chosen) == []  # the operator's choice is not a deviation
    assert parse_dirth_workload("16k:70") == (16384, 70)
    with pytest.raises(PtsbenchError, match="8k:65"):
        parse_dirth_workload("16k")


def test_operating_point_phases() -> None:
    workload = TEST_DEFS["dirth"].workload(SPEC_PARAMS)  # type: ignore[misc]
    phases = operating_point_phases("dirth", "DIRTH", workload, SPEC_PARAMS,
                                    {"max": (16, 32), "mid": (4, 6), "min": (1, 1)})
    assert [p.key for p in phases] == ["dirth-max", "dirth-mid", "dirth-min"]
    for phase, (tc, qd) in zip(phases, [(16, 32), (4, 6), (1, 1)], strict=True):
        prewrite, capture = phase.cells
        assert (prewrite.numjobs, prewrite.iodepth, prewrite.read_pct, prewrite.runtime_s) == (32, 32, 0, 3600)
        assert (capture.numjobs, capture.iodepth, capture.read_pct, capture.runtime_s) == (tc, qd, 65, 600)
        assert not phase.purge and (phase.stop.kind, phase.stop.max_rounds) == ("rounds", 1)
    own = AdvancedParams(point_prewrite_depth="point")
    for phase, depth in zip(operating_point_phases("dirth", "DIRTH", workload, own, {"max": (16, 32), "min": (1, 1)}),
                            [(16, 32), (1, 1)], strict=True):
        assert (phase.cells[0].numjobs, phase.cells[0].iodepth) == depth == (phase.cells[1].numjobs,
                                                                            phase.cells[1].iodepth)


def test_hir_schedule() -> None:
    phases = build_advanced("hir", SPEC_PARAMS)
    steady, waits = phases[0], phases[1:]
    assert steady.key == "hir-ss" and steady.purge
    (writes,) = steady.cells
    assert (writes.name, writes.numjobs, writes.iodepth, writes.runtime_s) == ("rnd 4k 0/100", 4, 32, 1800)
    assert steady.tracked[0].cell == "rnd 4k 0/100" and steady.stop.kind == "steady"
    assert [p.key for p in waits] == ["hir-w5s", "hir-w10s", "hir-w15s", "hir-w25s", "hir-w50s"]
    for phase, wait_s in zip(waits, (5, 10, 15, 25, 50), strict=True):
        assert not phase.purge and (phase.stop.kind, phase.stop.max_rounds) == ("rounds", 1)
        bursts, recovery = phase.cells[:-1], phase.cells[-1]
        assert len(bursts) == 360
        assert all(c.runtime_s == 5 and c.read_pct == 0 and c.bs_bytes == 4096 for c in bursts)
        assert [start_delay_s(c) for c in bursts] == [k * (5 + wait_s) for k in range(360)]
        assert recovery.runtime_s == 1800 and start_delay_s(recovery) == 360 * (5 + wait_s)
        assert round_duration_s(phase.cells) == 360 * (5 + wait_s) + 1800


def test_xsr_groups() -> None:
    phases = build_advanced("xsr", SPEC_PARAMS)
    assert [(p.key, p.purge) for p in phases] == [("xsr-1", True), ("xsr-2", False), ("xsr-3", False)]
    cells = [p.cells[0] for p in phases]
    assert [(c.pattern, c.bs_bytes, c.read_pct) for c in cells] == [("seq", 1024**2, 0), ("rnd", 8192, 0),
                                                                    ("seq", 1024**2, 0)]
    assert all((c.numjobs, c.iodepth, c.runtime_s) == (1, 32, 60) for c in cells)  # one sample per minute
    assert [p.stop.max_rounds for p in phases] == [8 * 60, 6 * 60, 8 * 60]  # 8 h, 6 h, 8 h
    assert all(p.stop.kind == "rounds" and not p.tracked for p in phases)


def test_hdd_zone_tests() -> None:
    (iops,) = build_advanced("hdd-iops", SPEC_PARAMS)
    assert len(iops.cells) == 128 * 9 and not iops.purge and iops.precondition is None
    assert all(isinstance(c, ZonedCellSpec) and c.zones == 128 for c in iops.cells)
    first_zone = iops.cells[:9]  # TKperf's HddIopsTest: mixes outer, block sizes inner
    assert [(c.bs_bytes // 1024, c.read_pct) for c in first_zone] == [
        (64, 100), (16, 100), (4, 100), (64, 50), (16, 50), (4, 50), (64, 0), (16, 0), (4, 0)]
    assert [c.zone for c in iops.cells] == [zone for zone in range(128) for _ in range(9)]  # outer to inner
    assert all((c.numjobs, c.iodepth, c.pattern) == (1, 1, "rnd") for c in iops.cells)
    (tp,) = build_advanced("hdd-tp", SPEC_PARAMS)
    assert len(tp.cells) == 128 * 4
    # TKperf's HddTPTest: per block size every zone in turn, read then write
    assert [(c.zone, c.bs_bytes, c.read_pct, c.pattern) for c in tp.cells[:4]] == [
        (0, 1024**2, 100, "seq"), (0, 1024**2, 0, "seq"), (1, 1024**2, 100, "seq"), (1, 1024**2, 0, "seq")]
    assert [(c.zone, c.bs_bytes) for c in tp.cells[::2]] == [(zone, bs) for bs in (1024**2, 4096)
                                                             for zone in range(128)]
    assert all((c.runtime_s, c.numjobs, c.iodepth) == (60, 1, 1) for c in (*iops.cells, *tp.cells))
    assert (tp.stop.kind, tp.stop.max_rounds) == ("rounds", 1) and not tp.tracked


def test_zone_bounds() -> None:
    bounds = zone_bounds(128 * 2**20 + 12345, 128, 2**20)
    assert bounds[0] == (0, 2**20) and bounds[-1] == (127 * 2**20, 2**20) and len(bounds) == 128
    assert zone_bounds(10 * 2**20, 3, 2**20) == [(0, 3 * 2**20), (3 * 2**20, 3 * 2**20), (6 * 2**20, 3 * 2**20)]
    with pytest.raises(PtsbenchError, match="too small"):
        zone_bounds(2**20, 2, 2**20)


def test_demo_params_are_short_and_flagged() -> None:
    for test in ADVANCED_ORDER:
        phases = build_advanced(test, DEMO_PARAMS, spec_of(test))
        rounds = sum(p.stop.max_rounds * round_duration_s(p.cells) for p in phases)
        assert rounds < 130, (test, rounds)  # worst-case IO time of the demo, before operating points
    reasons = advanced_deviations(["hir", "xsr", "cbw"], DEMO_PARAMS)
    assert any(r.startswith("Host idle recovery: wait states of 0.5 s, 1 s, 1.5 s, 2.5 s, 5 s "
                            "(PTS: 5 s, 10 s, 15 s, 25 s, 50 s)") for r in reasons)
    assert any("access groups of 8 s, 6 s, 8 s (PTS: 8 h, 6 h, 8 h)" in r for r in reasons)
    assert not any("hdd" in r for r in reasons)
    assert advanced_deviations(list(ADVANCED_ORDER), SPEC_PARAMS) == []
    assert advanced_deviations(["xsr"], AdvancedParams(demand_tcs=(4, 1))) == []  # not XSR's parameter


def test_bad_params_are_one_clear_error() -> None:
    with pytest.raises(PtsbenchError, match="TC1/QD1"):
        build_advanced("cbw", AdvancedParams(demand_tcs=(32, 16)))
    with pytest.raises(PtsbenchError, match="positive"):
        build_advanced("hir", AdvancedParams(hir_burst_s=0))
    assert parse_depths("32, 16,1") == (32, 16, 1)
    with pytest.raises(PtsbenchError, match="32,16,8"):
        parse_depths("32,0")


# ---------------------------------------------------------------------------------------------------------------
# real fio: rounds rendered by the engine's round_job


TARGET_BYTES = 64 * 2**20


def _plan(tmp_path: Path, phases: tuple[Phase, ...]) -> Plan:
    target = TargetInfo(str(tmp_path / "target.bin"), "file", TARGET_BYTES, 512, 512, "psync")
    return make_plan(make_settings("demo"), target, phases)


def _run_round(tmp_path: Path, phase: Phase) -> tuple[str, list, int]:  # type: ignore[type-arg]
    """The round's job text, its jobs' results and how long fio ran them by its own clock (s, whole: the jobs'
    `elapsed`, from fio's start, not its process's start-up, which a busy host stretches by seconds)."""
    plan = _plan(tmp_path, (phase,))
    job = round_job(plan, plan.phases[0], seed=1234)
    path = tmp_path / f"{phase.key}.fio"
    path.write_text(job.text)
    outcome = run_fio(path, json_path=tmp_path / f"{phase.key}.json", stderr_path=tmp_path / f"{phase.key}.stderr")
    assert outcome.ok, outcome.stderr_text
    doc = json.loads((tmp_path / f"{phase.key}.json").read_text())
    return job.text, parse_jobs(doc), max(int(entry["elapsed"]) for entry in doc["jobs"])


def test_hir_wait_state_round_on_fio(tmp_path: Path) -> None:
    """fio counts startdelay from its own start: bursts of 0.5 s at 0, 1 and 2 s and 2 s of recovery from 3 s take
    about 5 s (counted after each previous job, the delays would take 0.5 + 1.5 + 2.5 + 5 = 9.5 s)."""
    params = AdvancedParams(hir_wait_states_s=(0.5,), hir_bursts=3, hir_burst_s=0.5, hir_recovery_s=2.0,
                            numjobs=1, iodepth=4)
    phase = build_advanced("hir", params)[1]
    with (tmp_path / "target.bin").open("wb") as target:  # laid out already: fio's clock counts the rounds alone
        target.truncate(TARGET_BYTES)
    text, results, elapsed_s = _run_round(tmp_path, phase)
    assert text.count("startdelay=") == 3
    assert len(results) == 4
    assert all(abs(r.total().runtime_ms - 500) <= 250 for r in results[:3])  # type: ignore[union-attr]
    assert abs(results[3].total().runtime_ms - 2000) <= 250  # type: ignore[union-attr]
    assert round_duration_s(phase.cells) == 5.0
    assert 5 <= elapsed_s < 9.5  # chained delays would need 9.5 s


def test_demand_round_on_fio_keeps_tc_and_qd(tmp_path: Path) -> None:
    params = AdvancedParams(round_time_s=0.3, prewrite_s=0.5, demand_tcs=(2, 1), demand_qds=(4, 1))
    _, rounds = build_advanced("cbw", params)
    text, results, _ = _run_round(tmp_path, rounds)
    sections = re.split(r"\n(?=\[)", text)
    for cell in rounds.cells:
        section = next(s for s in sections if re.sub(r"[^0-9A-Za-z]+", "-", cell.name) in s.splitlines()[0])
        assert f"numjobs={cell.numjobs}\n" in section and f"iodepth={cell.iodepth}\n" in section
        assert f"bssplit={jesd219_bssplit()}\n" in section
        assert ("rwmixread=40\n" in section) == (cell.read_pct == 40)
    assert [(r.numjobs, r.iodepth) for r in results] == [(2, 4), (2, 4), (2, 1), (1, 4), (1, 1)]
    mixed = results[1].total()
    assert mixed is not None and mixed.total_ios > 0
    reads = sum(r.get("read").total_ios for r in results[1:])  # type: ignore[union-attr]
    writes = sum(r.get("write").total_ios for r in results[1:])  # type: ignore[union-attr]
    assert reads > 0 and writes > 0
    if reads + writes >= 400:  # enough IOs for fio's random 40/60 draw to land within +-0.1 (4 sigma)
        assert 0.3 < reads / (reads + writes) < 0.5
    assert math.isclose(results[0].get("write").runtime_ms, 500, abs_tol=150)  # type: ignore[union-attr]
    assert results[0].get("read") is None  # the pre-write only writes


def test_zones_placed_through_the_engines_job(tmp_path: Path) -> None:
    """Zone 3 of 4 of a sequential write touches only its quarter of the target (read back from the file)."""
    params = AdvancedParams(hdd_zones=4, round_time_s=0.3)
    (tp,) = build_advanced("hdd-tp", params)
    plan = _plan(tmp_path, (tp,))
    placed = place_zones((tp,), plan.active_range_bytes, plan.align_bytes)
    quarter = TARGET_BYTES // 4
    options = [dict(cell.fio_options) for cell in placed[0].cells]
    assert [(int(o["offset"]), int(o["size"])) for o in options] == [(zone * quarter, quarter)
                                                                    for _ in range(2) for zone in range(4)
                                                                    for _ in range(2)]
    write = next(cell for cell in placed[0].cells if cell.name == "z003 seq 1m 0/100")
    (tmp_path / "target.bin").write_bytes(b"")
    os.truncate(tmp_path / "target.bin", TARGET_BYTES)
    text, results, _ = _run_round(tmp_path, replace(tp, key="hdd-tp-z3", cells=(write,)))
    assert f"offset={2 * quarter}\n" in text and f"size={quarter}\n" in text
    assert results[0].get("write").io_bytes > 0  # type: ignore[union-attr]
    data = (tmp_path / "target.bin").read_bytes()
    touched = [index for index in range(0, TARGET_BYTES, 2**20) if any(data[index:index + 2**20:4096])]
    assert touched and all(2 * quarter <= index < 3 * quarter for index in touched)
    threads = dict(place_zones((replace(tp, cells=(replace(write, numjobs=2),)),), TARGET_BYTES, 2**20)[0]
                   .cells[0].fio_options)
    assert (threads["size"], threads["offset_increment"]) == (str(quarter // 2), str(quarter // 2))
