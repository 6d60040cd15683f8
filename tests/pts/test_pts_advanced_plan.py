"""The advanced tests inside the PTS engine's settings and plan (no fio): selection and order, parameters per test
from the profile and the command line, deviations, the plan's round times, zones, sector fitting, pending and
stored operating points, and the operating-point choice the engine stores."""

import pytest

from ptsbench.errors import PtsbenchError
from ptsbench.pts.advanced_specs import jesd219_bssplit
from ptsbench.pts.describe import describe
from ptsbench.pts.params import DEMO_PARAMS, SPEC_PARAMS, AdvancedParams, Settings
from ptsbench.pts.plan import Plan, TargetInfo, make_plan
from ptsbench.pts.records import operating_points_record
from ptsbench.pts.settings import make_settings, parse_overrides, parse_tests

GIB = 1024**3


def device(logical: int = 512, physical: int = 512, size: int = 100 * GIB) -> TargetInfo:
    return TargetInfo("/dev/nvme9n1", "block", size, logical, physical, "io_uring")


def settings_for(tests: str, profile: str = "enterprise", spec: str = "2.0", **raw: list[str]) -> Settings:
    chosen = parse_tests(tests)
    return make_settings(profile, spec, chosen, parse_overrides(raw, chosen))


def plan_for(tests: str, profile: str = "enterprise", spec: str = "2.0", target: TargetInfo | None = None,
             **raw: list[str]) -> Plan:
    return make_plan(settings_for(tests, profile, spec, **raw), target or device())


def test_tests_run_in_one_order_and_each_has_its_parameters() -> None:
    settings = settings_for("dirth,hir,iops,hdd-tp,xsr")
    assert settings.tests == ("iops", "hir", "xsr", "dirth", "hdd-tp")
    assert set(settings.params) == {"iops"} and set(settings.advanced) == {"hir", "xsr", "dirth", "hdd-tp"}
    assert all(params == SPEC_PARAMS for params in settings.advanced.values())
    keys = [phase.key for phase in make_plan(settings, device()).phases]
    assert keys == ["iops", "hir-ss", "hir-w5s", "hir-w10s", "hir-w15s", "hir-w25s", "hir-w50s", "xsr-1", "xsr-2",
                    "xsr-3", "dirth-wdpc", "dirth", "hdd-tp"]


def test_profiles_set_the_advanced_parameters() -> None:
    assert settings_for("hir,cbw", "demo").advanced["cbw"] == DEMO_PARAMS
    client = settings_for("hir", "client").advanced["hir"]
    assert (client.numjobs, client.iodepth) == (2, 16)  # HIR at the profile's TC/QD
    assert plan_for("hir,xsr,cbw,dirth,hdd-iops", "client").deviations == ()
    assert plan_for("hir,xsr,ecw,dirth,hdd-tp", "enterprise", "1.1").deviations == ()
    with pytest.raises(PtsbenchError, match="use ecw with --spec 1.1"):
        settings_for("cbw", spec="1.1")
    with pytest.raises(PtsbenchError, match="use cbw with --spec 2.0"):
        settings_for("ecw")


def test_command_line_overrides_per_test() -> None:
    settings = settings_for("hir,xsr,dirth,hdd-iops", ss_round_s=["hir=10"], numjobs=["2"], iodepth=["xsr=4"],
                            dirth_workload=["4k:70"], hdd_zones=["16"], xsr_group_s=["1h,30m,1h"],
                            point_prewrite_depth=["point"])
    hir, xsr, dirth, hdd = (settings.advanced[t] for t in ("hir", "xsr", "dirth", "hdd-iops"))
    assert hir.ss_round_s == 10 and dirth.ss_round_s == 1800  # hir=VALUE: only HIR
    assert dirth.point_prewrite_depth == "point"
    assert hir.numjobs == 2 and xsr.xsr_depth == (2, 4) and hdd.hdd_depth == (2, 1)  # TC/QD pairs of XSR and HDD
    assert dirth.numjobs == 4  # DIRTH sweeps TC and QD: --numjobs is not its parameter
    assert (dirth.dirth_bs_bytes, dirth.dirth_read_pct) == (4096, 70) and hdd.hdd_zones == 16
    assert xsr.xsr_group_s == (3600.0, 1800.0, 3600.0)
    plan = make_plan(settings, device())
    reasons = "\n".join(plan.deviations)
    assert "Host idle recovery: steady-state rounds of 10 s (PTS: 30 min)" in reasons
    assert "point_prewrite_depth" not in reasons  # a recorded reading, stated in the plan
    assert "Cross stimulus recovery: TC/QD 2/4 (PTS: 1/32)" in reasons
    assert "dirth_bs_bytes" not in reasons and "hdd" not in reasons  # the operator's choices
    assert Settings.from_dict(settings.to_dict()) == settings  # what resume reads back


@pytest.mark.parametrize(("raw", "message"), [
    ({"block_sizes": ["4k"]}, "--block-sizes applies to none of the selected tests (hir,xsr,dirth)"),
    ({"numjobs": ["cbw=2"]}, "--numjobs does not apply to cbw"),
    ({"hir_bursts": ["0"]}, "not a positive whole number"),
    ({"xsr_group_s": ["1h,1h"]}, "XSR has three access groups"),
    ({"dirth_workload": ["8k"]}, "BLOCK_SIZE:READ_PERCENT"),
])
def test_bad_overrides_are_one_clear_error(raw: dict[str, list[str]], message: str) -> None:
    with pytest.raises(PtsbenchError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_overrides(raw, ("hir", "xsr", "dirth"))


def test_round_time_follows_the_hir_schedule_and_describe_says_what_runs() -> None:
    plan = plan_for("hir,xsr,cbw")
    wait = plan.phase("hir-w50s")
    assert wait.round_s == 360 * (5 + 50) + 1800 and wait.worst_case_s == wait.round_s
    sweep = plan.phase("cbw")
    assert sweep.round_s == 300 + 49 * 60
    assert plan.pending_points == ("cbw",)
    assert plan.pending_s == 3 * (3600 + 600)
    assert plan.worst_case_s == sum(p.worst_case_s for p in plan.phases) + 3 * 4200
    lines = describe(plan)
    line = next(text for text in lines if text.startswith("  Host idle recovery: wait state 50 s:"))
    assert "purge" not in line and "361 cells/round, 6 h per round (TC4/QD32), 1 round(s)" in line
    assert any(text.startswith("  Cross stimulus recovery: group 1, seq 1m 0/100: purge, no WIPC; 1 cell/round x "
                               "60s (TC1/QD32), 480 round(s)") for text in lines)
    points = lines.index(next(t for t in lines if "then MaxIOPS, MidIOPS and MinIOPS" in t))
    assert lines[points - 1].startswith("  Composite block size workload: no WIPC; 50 cells/round")


def test_zones_are_placed_when_planning() -> None:
    plan = plan_for("hdd-iops", hdd_zones=["4"])
    zone_bytes = plan.active_range_bytes // 4 // plan.align_bytes * plan.align_bytes
    cells = plan.phase("hdd-iops").cells
    assert [dict(c.fio_options)["offset"] for c in cells[::9]] == [str(z * zone_bytes) for z in range(4)]
    assert all(dict(c.fio_options)["size"] == str(zone_bytes) for c in cells)


def test_composite_sizes_under_the_sector_run_at_the_sector_size() -> None:
    plan = plan_for("cbw", target=device(logical=4096, physical=4096))
    bssplit = dict(plan.phase("cbw").cells[1].fio_options)["bssplit"]
    assert bssplit == "4096/77:8192/10:16384/7:32768/3:65536/3"  # 512 B .. 3.5 KiB (10 %) folded into 4 KiB
    assert all(dict(c.fio_options)["bssplit"] == bssplit for p in plan.phases for c in p.cells)
    assert any(reason.startswith("Composite block size workload: IOs under the 4096-byte logical sector run as "
                                 "4096-byte IOs") for reason in plan.deviations)
    on_512e = plan_for("cbw", target=device(logical=512, physical=4096))
    assert dict(on_512e.phase("cbw").cells[1].fio_options)["bssplit"] == jesd219_bssplit()
    assert any("read-modify-write" in note for note in on_512e.notes) and on_512e.deviations == ()


def test_stored_operating_points_join_the_plan_after_their_sweep() -> None:
    settings = settings_for("cbw,dirth")
    plan = make_plan(settings, device(), operating_points={"cbw": {"max": (16, 32), "mid": (4, 6), "min": (1, 1)},
                                                           "dirth": {"min": (1, 1)}})
    assert [p.key for p in plan.phases] == ["cbw-wdpc", "cbw", "cbw-max", "cbw-mid", "cbw-min", "dirth-wdpc",
                                            "dirth", "dirth-min"]
    capture = plan.phase("cbw-mid").cells[1]
    assert (capture.role, capture.numjobs, capture.iodepth, capture.read_pct) == ("histogram", 4, 6, 40)
    assert dict(plan.phase("cbw-mid").phase.meta) == {"point": "mid", "tc": 4, "qd": 6}
    assert plan.pending_points == () and plan.pending_s == 0


def _window(lat_ms: float, min_lat_ms: float = 0.1) -> dict[str, dict[str, float]]:
    """Hand-made sweep averages: IOPS = 1000 x TOIO, latency `lat_ms` everywhere but TC1/QD1 (`min_lat_ms`)."""
    return {f"cbw 40/60 tc{tc}/qd{qd}": {"iops": 1000.0 * tc * qd,
                                          "lat_mean_ns": (min_lat_ms if tc * qd == 1 else lat_ms) * 1e6}
            for tc in (4, 2, 1) for qd in (16, 4, 1)}


@pytest.mark.parametrize("logical", [512, 4096])  # on 4 KiB sectors the cells ran with a fitted bssplit
def test_operating_points_chosen_from_the_sweep_window(logical: int) -> None:
    plan = make_plan(settings_for("cbw", "demo"), device(logical=logical, physical=logical))
    sweep = plan.phase("cbw")
    record = operating_points_record(sweep, {"window": _window(1.0), "window_rounds": [3, 4, 5, 6, 7]})
    points = record["points"]
    assert (points["max"]["tc"], points["max"]["qd"], points["max"]["iops"]) == (4, 16, 64000.0)
    # middle (64000 + 1000) / 2 = 32500: TOIO 32 (2x16) is 500 away, nearer than 16 (4x4, 16500 away)
    assert (points["mid"]["tc"], points["mid"]["qd"]) == (2, 16) and record["middle_iops"] == 32500
    assert (points["min"]["tc"], points["min"]["qd"]) == (1, 1) and record["note"] is None
    assert record["window_rounds"] == [3, 4, 5, 6, 7]
    slow = operating_points_record(sweep, {"window": _window(5.0, 5.0), "window_rounds": [1]})  # 5 ms: not under
    assert slow["points"]["max"] is None and slow["points"]["mid"] is None
    assert slow["note"].endswith("only MinIOPS (TC1/QD1) runs")
    from ptsbench.pts.start import stored_operating_points

    stored = stored_operating_points({"operating_points": {"cbw": slow}})
    assert stored == {"cbw": {"min": (1, 1)}}
    assert [p.key for p in make_plan(plan.settings, device(), operating_points=stored).phases][-1] == "cbw-min"


def test_advanced_params_default_to_the_spec_for_old_stores() -> None:
    settings = make_settings("enterprise", "2.0", ("iops",))
    data = settings.to_dict()
    del data["advanced"]  # a run directory made before the advanced tests
    assert Settings.from_dict(data) == settings
    assert AdvancedParams() == SPEC_PARAMS


def test_repeated_wait_states_and_depths_run_once() -> None:
    """A wait state or a TC/QD given twice is one phase / one sweep cell (two would share a folder or a name)."""
    plan = plan_for("hir,cbw", hir_wait_states_s=["5,5,10"], demand_tcs=["1,4,4"], demand_qds=["2,1,2"])
    keys = [phase.key for phase in plan.phases]
    assert keys == ["hir-ss", "hir-w5s", "hir-w10s", "cbw-wdpc", "cbw"]
    sweep = [(cell.numjobs, cell.iodepth) for cell in plan.phase("cbw").cells if cell.role != "pre-write"]
    assert sweep == [(4, 2), (4, 1), (1, 2), (1, 1)]
