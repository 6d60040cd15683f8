"""Terminal texts of a PTS run: compliance banner and the live steady-state status line."""

from ptsbench.pts.live import hir_line, steady_line, telemetry_line
from ptsbench.pts.steady import steady_state
from ptsbench.report.core.model import Column, Table
from ptsbench.report.pts.terminal import thinned, verdict_line


def test_compliance_verdict_counts_the_deviations() -> None:
    assert verdict_line({"compliance": {"compliant": True, "reasons": []}})[0] == "PTS-compliant"
    line, _style = verdict_line({"compliance": {"compliant": False, "reasons": ["purge: none", "round time 1 s"]}})
    assert line.startswith("NOT PTS-compliant (2 deviations, listed under 'Compliance and rounds'")


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


def test_long_round_tables_show_evenly_spaced_rounds() -> None:
    """A 24-hour write saturation run has 1,440 rounds: the terminal shows 25 of them, first and last included;
    a long table that is not by round (the deviations) stays whole."""
    rounds = Table("wsat", "every round", (Column("round"), Column("IOPS", "iops")),
                   tuple((str(n), float(n)) for n in range(1, 1441)))
    shown, note = thinned(rounds)
    picked = [int(str(row[0])) for row in shown.rows]
    assert len(picked) == 25 and picked[0] == 1 and picked[-1] == 1440 and note and note.startswith("25 of 1440 rows")
    assert {b - a for a, b in zip(picked, picked[1:], strict=False)} <= {59, 60}
    assert thinned(Table("short", "t", rounds.columns, rounds.rows[:25])) == (Table("short", "t", rounds.columns,
                                                                                   rounds.rows[:25]), None)
    deviations = Table("deviations", "why", (Column("deviation"),), tuple((f"reason {n}",) for n in range(40)))
    assert thinned(deviations) == (deviations, None)


def test_live_lines_of_hir_and_telemetry() -> None:
    def cell(role: str, ios: int, runtime_ms: int) -> dict[str, object]:
        return {"role": role, "iops": ios * 1000 / runtime_ms, "total": {"total_ios": ios, "runtime_ms": runtime_ms}}

    record = {"cells": {"b1": cell("burst", 1000, 500), "b2": cell("burst", 3000, 500), "r": cell("recovery", 100, 50)},
              "telemetry": {"change": {"temperature_end_c": 71, "throttled": True}}}
    assert hir_line(record) == "2 bursts 4,000 IOPS, recovery 2,000 IOPS"  # 4000 IOs in 1 s
    assert telemetry_line(record) == "device 71 C, THERMAL THROTTLING during the round"
    assert telemetry_line({"telemetry": {"change": {"temperature_end_c": None, "throttled": None}}}) == ""
    warned = {"telemetry": {"change": {"temperature_end_c": 71, "throttled": False, "critical_warning_new": [
        "spare below threshold", "read-only media"]}}}
    assert telemetry_line(warned) == "device 71 C, NEW CRITICAL WARNING: spare below threshold, read-only media"


def test_a_narrow_terminal_splits_a_wide_table_into_parts_that_name_their_rows() -> None:
    from rich.console import Console

    from ptsbench.report.core.terminal import model_table

    table = Table("steady", "Steady state", (Column("tracked variable"), *(Column(f"value {n} (IOPS)", "iops")
                                                                          for n in range(8)), Column("steady state")),
                  (("rnd 4k 0/100 iops", *(123456.7 + n for n in range(8)), "NOT reached"),))

    def shown(width: int) -> str:
        console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
        console.print(model_table(table, width))
        return console.export_text()

    wide = shown(200)
    assert all(f"{123456.7 + n:,.1f}" in wide for n in range(8)) and "part 1" not in wide
    narrow = shown(60)
    assert max(len(line.rstrip()) for line in narrow.splitlines()) <= 60
    assert all(f"{123456.7 + n:,.1f}" in narrow for n in range(8)) and "NOT reached" in narrow  # nothing cut
    assert "more column" not in narrow and "Steady state (part 1 of" in narrow
    parts = narrow.count("Steady state (part ")
    assert parts > 1 and narrow.count("rnd 4k 0/") >= parts  # the row named in each part
