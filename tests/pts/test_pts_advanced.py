"""Analysis of the advanced PTS tests (pts/advanced.py) on hand-made measurements whose answers are worked out here,
and the response-time histogram against a real fio run's own percentiles."""

import json
from pathlib import Path

import pytest

from ptsbench.errors import PtsbenchError
from ptsbench.fio.jobs import PERCENTILE_OPTIONS, render_job_file
from ptsbench.fio.output import LatencySummary, parse_jobs
from ptsbench.fio.runner import run_fio
from ptsbench.pts.advanced import (
    HISTOGRAM_EDGES_NS,
    Burst,
    DemandCell,
    HirWaitState,
    demand_cells,
    demand_intensity,
    demand_variation,
    hir_summary,
    hir_timeline,
    mean_iops,
    response_histogram,
    select_operating_points,
    xsr_recovery,
)
from ptsbench.pts.advanced_specs import hir_burst_starts_s, hir_recovery_start_s
from ptsbench.pts.params import DEMAND_QDS, DEMAND_TCS, DEMO_PARAMS

MS = 1_000_000


def cell(tc: int, qd: int, iops: float, lat_ms: float) -> DemandCell:
    return DemandCell(f"rnd 8k 65/35 tc{tc}/qd{qd}", tc, qd, iops, lat_ms * MS)


# ---------------------------------------------------------------------------------------------------------------
# operating points


def test_operating_points_hand_made() -> None:
    cells = [
        cell(32, 32, 250_000, 5.0),  # exactly 5 ms: not under the limit
        cell(32, 16, 190_000, 2.69),
        cell(16, 32, 190_000, 2.69),  # same IOPS and TOIO as 32/16: the lower TC wins MaxIOPS
        cell(8, 8, 120_000, 0.53),
        cell(6, 8, 80_000, 0.60),  # as near the middle (100k) as 8/8, with less outstanding IO: MidIOPS
        cell(4, 4, 60_000, 0.27),
        cell(1, 1, 10_000, 0.10),
    ]
    points = select_operating_points(cells)
    assert (points.max.tc, points.max.qd) == (16, 32)  # type: ignore[union-attr]
    assert points.middle_iops == (190_000 + 10_000) / 2 == 100_000
    assert (points.mid.tc, points.mid.qd) == (6, 8)  # type: ignore[union-attr]
    assert (points.min.tc, points.min.qd) == (1, 1)
    assert points.depths() == {"max": (16, 32), "mid": (6, 8), "min": (1, 1)}


def test_operating_points_on_a_full_sweep_model() -> None:
    """A device with 100 us base latency and 200k IOPS capacity: lat = 100 us + TOIO x 5 us, IOPS = TOIO / lat.
    Under 5 ms means TOIO x 5 us < 4.9 ms, TOIO < 980: TOIO 1024 (32x32) is out, 512 (32x16 and 16x32, equal
    IOPS) is MaxIOPS -> TC16/QD32. MinIOPS = 1e9 / 105000 = 9523.8. The middle, 101002.5 IOPS, is reached at
    TOIO = 101002.5e5 / (1e9 - 5000 x 101002.5) = 20.4; of the TOIOs in the sweep, 24 (109090.9 IOPS, 8088 away)
    is nearer than 16 (88888.9, 12113 away); 24 is 6x4 or 4x6 -> the lower TC: TC4/QD6."""
    cells = []
    for tc in DEMAND_TCS:
        for qd in DEMAND_QDS:
            lat_ns = 100_000 + tc * qd * 5_000
            cells.append(DemandCell(f"c{tc}/{qd}", tc, qd, tc * qd * 1e9 / lat_ns, lat_ns))
    assert len(cells) == 49
    points = select_operating_points(cells)
    assert points.depths() == {"max": (16, 32), "mid": (4, 6), "min": (1, 1)}
    assert points.max.iops == pytest.approx(512e9 / 2_660_000)  # type: ignore[union-attr]
    assert points.middle_iops == pytest.approx((512e9 / 2_660_000 + 1e9 / 105_000) / 2)


def test_operating_points_when_nothing_is_under_the_limit() -> None:
    points = select_operating_points([cell(2, 2, 900, 6.0), cell(1, 1, 150, 6.5)])
    assert points.max is None and points.mid is None and points.middle_iops is None
    assert points.min.iops == 150 and points.depths() == {"min": (1, 1)}
    # with a 7 ms limit both count; the middle, 525, is 375 from each: the tie goes to the lower TOIO
    assert select_operating_points([cell(2, 2, 900, 6.0), cell(1, 1, 150, 6.5)], limit_ns=7 * MS).depths() == {
        "max": (2, 2), "mid": (1, 1), "min": (1, 1)}


def test_operating_points_need_tc1_qd1() -> None:
    with pytest.raises(PtsbenchError, match="TC1/QD1"):
        select_operating_points([cell(2, 2, 900, 1.0)])


def test_demand_cells_from_stored_records() -> None:
    specs = [
        {"name": "cbw 0/100 pre-write tc2/qd4", "numjobs": 2, "iodepth": 4},
        {"name": "cbw 40/60 tc2/qd4", "numjobs": 2, "iodepth": 4},
        {"name": "cbw 40/60 tc1/qd4", "numjobs": 1, "iodepth": 4},
        {"name": "cbw 40/60 tc1/qd1", "numjobs": 1, "iodepth": 1},
    ]
    values = {spec["name"]: {"iops": 1000.0 * (index + 1), "lat_mean_ns": 10_000.0 * (index + 1)}
              for index, spec in enumerate(specs)}
    del values["cbw 40/60 tc1/qd4"]  # not measured (yet)
    found = demand_cells(specs, values, names=[s["name"] for s in specs[1:]])
    assert [(c.tc, c.qd, c.iops, c.lat_mean_ns) for c in found] == [(2, 4, 2000.0, 20_000.0), (1, 1, 4000.0, 40_000.0)]
    assert found[0].toio == 8


def test_demand_series() -> None:
    cells = [cell(1, 1, 10, 1), cell(2, 4, 80, 4), cell(2, 1, 20, 1), cell(1, 4, 40, 4), cell(2, 2, 40, 2)]
    assert demand_variation(cells) == {2: [(1, 20), (2, 40), (4, 80)], 1: [(1, 10), (4, 40)]}
    assert list(demand_variation(cells)) == [2, 1]
    assert demand_intensity(cells) == {2: [(20, 1 * MS), (40, 2 * MS), (80, 4 * MS)], 1: [(10, 1 * MS), (40, 4 * MS)]}


# ---------------------------------------------------------------------------------------------------------------
# XSR


def test_xsr_recovery_time() -> None:
    group1 = [100e6, 110e6, 90e6, 100e6]  # average 100 MB/s
    group3 = [20e6, 40e6, 60e6, 99.9e6, 100e6, 120e6]
    recovery = xsr_recovery(group1, group3)
    assert recovery.baseline_bw_bytes == 100e6
    assert recovery.recovered_sample == 4
    assert recovery.recovery_s == 300 and recovery.recovery_min == 5  # the end of the fifth minute


def test_xsr_recovery_edge_cases() -> None:
    assert xsr_recovery([50.0], [50.0]).recovery_s == 60  # back at once: the first minute
    never = xsr_recovery([100.0, 100.0], [10.0, 99.0])
    assert never.recovered_sample is None and never.recovery_s is None and never.recovery_min is None
    measured = xsr_recovery([100.0], [10.0, 200.0], group3_ends_s=[60.4, 121.0])
    assert measured.recovery_s == 121.0
    with pytest.raises(PtsbenchError):
        xsr_recovery([], [1.0])
    with pytest.raises(PtsbenchError):
        xsr_recovery([1.0], [1.0, 2.0], group3_ends_s=[60.0])


# ---------------------------------------------------------------------------------------------------------------
# HIR


def test_hir_mean_is_io_weighted() -> None:
    bursts = [Burst(1000, 1000), Burst(1000, 3000)]  # 1000 and 333.3 IOPS
    assert mean_iops(bursts) == 500  # 2000 IOs in 4 s, not (1000 + 333.3) / 2
    assert bursts[1].iops == pytest.approx(1000 / 3)
    assert mean_iops([]) == 0


def test_hir_summary_against_baseline() -> None:
    rows = hir_summary(20_000, {10.0: [Burst(150_000, 5000), Burst(140_000, 5000)],
                                5.0: [Burst(110_000, 5000), Burst(100_000, 5000)]})
    assert [row.wait_s for row in rows] == [5.0, 10.0]
    assert [row.mean_iops for row in rows] == [21_000, 29_000]
    assert [row.ratio for row in rows] == [1.05, 1.45]
    assert rows[0].bursts == 2 and rows[0].baseline_iops == 20_000


def test_hir_timeline_follows_the_schedule() -> None:
    states = [HirWaitState(5.0, (Burst(100, 5000),) * 3, Burst(1800, 1_800_000), 1800.0),
              HirWaitState(10.0, (Burst(200, 5000),) * 3, None, 1800.0)]
    timeline = hir_timeline(states, burst_s=5.0)
    assert [point[0] for point in timeline] == [0, 10, 20, 30, 1830, 1845, 1860]
    assert timeline[0][1:] == (20.0, 5.0, "burst") and timeline[3][1:] == (1.0, 5.0, "recovery")
    # the same start times as the fio startdelays of the test definition
    params = DEMO_PARAMS
    state = HirWaitState(0.5, (Burst(1, 500),) * params.hir_bursts, Burst(1, 2000), params.hir_recovery_s)
    times = [point[0] for point in hir_timeline([state], params.hir_burst_s)]
    assert times == [*hir_burst_starts_s(params, 0.5), hir_recovery_start_s(params, 0.5)]


# ---------------------------------------------------------------------------------------------------------------
# response-time histograms


def test_histogram_buckets_and_percentiles() -> None:
    bins = {500: 10, 1000: 5, 1500: 5, 2_000_000: 1, 20_000_000_000: 1}
    lat = LatencySummary(n=22, mean_ns=909_568_409.1, min_ns=480, max_ns=20_000_123_456, percentiles_ns={},
                         bins=bins)
    histogram = response_histogram(lat, wanted=("50", "90", "99"))
    by_edge = dict(zip(histogram.edges_ns, histogram.counts, strict=True))
    assert by_edge[0] == 10 and by_edge[1000] == 10 and by_edge[2_000_000] == 1 and by_edge[10**10] == 1
    assert sum(histogram.counts) == histogram.n == 22
    # fio's rule: the first bin whose cumulative count reaches p% of 22 IOs: 11th, 19.8th and 21.78th IO
    assert histogram.percentiles_ns == {"50": 1000.0, "90": 1500.0, "99": 20_000_000_000.0}
    assert histogram.max_ns == 20_000_123_456 and histogram.mean_ns == 909_568_409.1
    assert histogram.edges_ns == HISTOGRAM_EDGES_NS
    with pytest.raises(PtsbenchError):
        response_histogram(lat, edges_ns=(1, 2))


def test_histogram_of_a_real_fio_run(tmp_path: Path) -> None:
    """On a real fio json+ document: every IO lands in a bucket and the percentiles are fio's own."""
    options = {"filename": str(tmp_path / "data.bin"), "size": "8m", "rw": "randrw", "bs": "4k",
               "ioengine": "psync", "time_based": None, "runtime": "300ms", **PERCENTILE_OPTIONS}
    job = tmp_path / "job.fio"
    job.write_text(render_job_file(options, [("h", {})]))
    outcome = run_fio(job, json_path=tmp_path / "fio.json", stderr_path=tmp_path / "fio.stderr")
    assert outcome.ok, outcome.stderr_text
    total = parse_jobs(json.loads((tmp_path / "fio.json").read_text()))[0].total()
    assert total is not None and total.lat.n > 100
    histogram = response_histogram(total.lat, wanted=("99", "99.9"))
    assert sum(histogram.counts) == total.lat.n
    write = parse_jobs(json.loads((tmp_path / "fio.json").read_text()))[0].get("write")
    assert write is not None
    single = response_histogram(write.lat, wanted=("99", "99.9"))
    assert single.percentiles_ns == {p: write.lat.percentiles_ns[p] for p in ("99", "99.9")}  # fio's numbers
