"""Terminal texts of a PTS run: compliance banner and the live steady-state status line."""

from ptsbench.pts.live import hir_line, steady_line, telemetry_line
from ptsbench.pts.steady import steady_state
from ptsbench.report.pts.terminal import compliance_lines


def test_compliance_banner_lists_every_reason() -> None:
    assert compliance_lines({"compliance": {"compliant": True, "reasons": []}}) == ["PTS-compliant"]
    lines = compliance_lines({"compliance": {"compliant": False, "reasons": ["purge: none", "round time 1 s"]}})
    assert lines == ["NOT PTS-compliant:", "  - purge: none", "  - round time 1 s"]


def test_live_status_before_and_in_the_window() -> None:
    early = {"steady": {"window_rounds": [], "variables": {"rnd 4k 0/100 iops": None}, "steady": False,
                        "rounds_needed": 2}}
    assert steady_line(early) == "steady state: 2 more round(s) before the first 5-round window"
    window = steady_state([100, 110, 100, 90, 100], [3, 4, 5, 6, 7]).to_dict()
    record = {"steady": {"window_rounds": [3, 4, 5, 6, 7], "steady": True,
                         "variables": {"rnd 4k 0/100 iops": window}}}
    assert steady_line(record) == ("window 3-7: STEADY; rnd 4k 0/100 iops: data 20.0% (<=20%), "
                                   "slope 8.0% (<=10%) ok")


def test_live_status_of_write_saturation() -> None:
    record = {"steady": {"window_rounds": [], "variables": {}, "steady": None},
              "wsat": {"written_bytes": 123_400_000, "io_time_s": 61.5}}
    assert steady_line(record) == "written 123.4 MB in 61.5 s of IO"


def test_long_write_saturation_tables_show_evenly_spaced_rounds() -> None:
    from ptsbench.report.pts.terminal import _spread

    assert _spread(4, 25) == [0, 1, 2, 3]
    picked = _spread(1440, 25)
    assert len(picked) == 25 and picked[0] == 0 and picked[-1] == 1439
    assert {b - a for a, b in zip(picked, picked[1:], strict=False)} <= {59, 60}


def test_live_lines_of_hir_and_telemetry() -> None:
    def cell(role: str, ios: int, runtime_ms: int) -> dict[str, object]:
        return {"role": role, "iops": ios * 1000 / runtime_ms, "total": {"total_ios": ios, "runtime_ms": runtime_ms}}

    record = {"cells": {"b1": cell("burst", 1000, 500), "b2": cell("burst", 3000, 500), "r": cell("recovery", 100, 50)},
              "telemetry": {"change": {"temperature_end_c": 71, "throttled": True}}}
    assert hir_line(record) == "2 bursts 4,000 IOPS, recovery 2,000 IOPS"  # 4000 IOs in 1 s
    assert telemetry_line(record) == "device 71 C, THERMAL THROTTLING during the round"
    assert telemetry_line({"telemetry": {"change": {"temperature_end_c": None, "throttled": None}}}) == ""
