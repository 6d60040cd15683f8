"""Write amplification (device/waf.py): the OCP C0h and FDP statistics logs parsed from nvme-cli's JSON shapes, the
exact arithmetic of a round's ratio (512,000-byte host units, 128-bit media counts), the cases without a ratio, and
the logs read through the nvme stand-in on PATH in the order telemetry reads them."""

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ptsbench.device.target import Target
from ptsbench.device.telemetry import TELEMETRY_KEYS, read_telemetry, telemetry_change
from ptsbench.device.waf import (
    FDP_HOST_COUNTER,
    FDP_SOURCE,
    HOST_UNIT_BYTES,
    NOT_REPORTED,
    OCP_SOURCE,
    SMART_HOST_COUNTER,
    combined_ratio,
    parse_fdp_stats,
    parse_ocp_smart_add_log,
    write_amplification,
)
from ptsbench.pts.live import telemetry_line
from ptsbench.report.common import waf_text

DATA = Path(__file__).parents[1] / "data" / "telemetry"
NVME = Target(path="/dev/nvme0n1", kind="block", size_bytes=10**12, requested="/dev/nvme0n1")
NVME_FACTS: dict[str, object] = {"transport": "nvme", "disk": "/dev/nvme0n1", "nvme_controller": "/dev/nvme0"}
OCP_ARGV = ["nvme", "ocp", "smart-add-log", "/dev/nvme0", "-o", "json"]
# the C3h page's bytes (latency_monitor.py)
LATENCY_ARGV = ["nvme", "get-log", "/dev/nvme0", "--log-id=0xc3", "--log-len=512", "--raw-binary"]
ERROR_ARGV = ["nvme", "error-log", "/dev/nvme0", "-o", "json"]  # the NVMe error log (error_log.py)
FDP_ARGV = ["nvme", "fdp", "stats", "/dev/nvme0n1", "--endgrp-id=1", "-o", "json"]


def recorded(name: str) -> dict:  # type: ignore[type-arg]
    return json.loads((DATA / name).read_text())


def test_ocp_physical_media_units_written_is_128_bits_of_bytes() -> None:
    assert parse_ocp_smart_add_log(recorded("nvme-cli-2.x-ocp-smart-add-log.json")) == 2**64 + 1_126_400_000
    # the later --output-format-version=2 key, a lower-case 2.x key, and a release printing one number
    assert parse_ocp_smart_add_log({"physical_media_units_written": {"hi": 0, "lo": 7}}) == 7
    assert parse_ocp_smart_add_log({"physical media units written": {"hi": 2, "lo": 0}}) == 2 << 64
    assert parse_ocp_smart_add_log({"Physical media units written": "123456789012345678901234"}) \
        == 123456789012345678901234
    assert parse_ocp_smart_add_log({"Physical media units read": {"hi": 0, "lo": 7}}) is None
    assert parse_ocp_smart_add_log({"Physical media units written": {"lo": 7}}) is None  # half a counter
    ocp = recorded("nvme-cli-2.x-ocp-smart-add-log.json")
    assert parse_ocp_smart_add_log({**ocp, "Log page GUID": "0x0xAFD514C97C6F4F9CA4F2BFEA2810AFC5"}) is not None
    assert parse_ocp_smart_add_log({**ocp, "Log page GUID": "0x1234"}) is None  # a vendor's own C0h log


def test_fdp_stats_counters() -> None:
    assert parse_fdp_stats(recorded("nvme-cli-2.x-fdp-stats.json")) == {
        "fdp_host_written_bytes": 2_048_000_000, "media_written_bytes": 2_252_800_000, "media_erased_bytes": 0}


def test_qemu_10_logs_as_nvme_cli_2_13_printed_them(fakebin: Callable[[], list[list[str]]],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Real output captured by the device lab's Debian 13 variant (QEMU 10.0.13, nvme-cli 2.13) after dd wrote 8 MiB
    to each fresh drive: the OCP counter is in bytes, the FDP statistics are JSON numbers; read as telemetry reads
    them, the arithmetic gives the host counter's rounding (17 units of 512,000 bytes for 8 MiB)."""
    eight_mib = 8 * 2**20
    assert parse_ocp_smart_add_log(recorded("nvme-cli-2.13-ocp-smart-add-log-qemu-10.json")) == eight_mib
    assert parse_fdp_stats(recorded("nvme-cli-2.13-fdp-stats-qemu-10.json")) == {
        "fdp_host_written_bytes": eight_mib, "media_written_bytes": eight_mib, "media_erased_bytes": 0}
    monkeypatch.setenv("FAKE_NVME_SMART_LOG", str(DATA / "nvme-cli-2.13-smart-log-qemu-10.json"))
    monkeypatch.setenv("FAKE_NVME_OCP_LOG", str(DATA / "nvme-cli-2.13-ocp-smart-add-log-qemu-10.json"))
    found = read_telemetry(NVME, NVME_FACTS)
    assert fakebin() == [["nvme", "smart-log", "/dev/nvme0", "-o", "json"], OCP_ARGV, LATENCY_ARGV, ERROR_ARGV]
    assert (found["data_units_written"], found["media_written_bytes"], found["media_source"]) == (
        17, eight_mib, OCP_SOURCE)
    waf = write_amplification(reading(0, 0), found)
    assert waf["host_written_bytes"] == 17 * HOST_UNIT_BYTES and waf["ratio"] == eight_mib / (17 * HOST_UNIT_BYTES)


def reading(units: int | None, media: int | None, source: str | None = OCP_SOURCE) -> dict[str, object]:
    return {"data_units_written": units, "media_written_bytes": media, "media_source": source, "media_note": None}


def test_ratio_is_media_over_host_units_exactly() -> None:
    waf = write_amplification(reading(1_000, 2**64), reading(3_000, 2**64 + 1_126_400_000))
    assert waf["host_written_bytes"] == 2_000 * HOST_UNIT_BYTES == 1_024_000_000
    assert waf["media_written_bytes"] == 1_126_400_000
    assert waf["ratio"] == pytest.approx(1.1, rel=1e-15) and waf["source"] == OCP_SOURCE and waf["note"] is None
    assert waf["host_unit_bytes"] == 512_000


def test_fdp_statistics_take_their_own_exact_host_bytes() -> None:
    """With FDP statistics the host bytes are the log's byte count (hbmw), named, not the SMART log's 512,000-byte
    units: an 8 MiB write (17 units, rounded up) on a drive with no flash is 1.0 exactly, not 0.964."""
    eight_mib = 8 * 2**20
    before = {**reading(100, 10**12, FDP_SOURCE), "fdp_host_written_bytes": 5 * 10**11}
    after = {**reading(117, 10**12 + eight_mib, FDP_SOURCE), "fdp_host_written_bytes": 5 * 10**11 + eight_mib}
    waf = write_amplification(before, after)
    assert (waf["ratio"], waf["host_written_bytes"], waf["host_counter"]) == (1.0, eight_mib, FDP_HOST_COUNTER)
    assert "FDP statistics host bytes with metadata written (HBMW), exact" in waf_text([waf])
    unitised = write_amplification({**before, "fdp_host_written_bytes": None},
                                   {**after, "fdp_host_written_bytes": None})
    assert unitised["host_counter"] == SMART_HOST_COUNTER and unitised["host_written_bytes"] == 17 * HOST_UNIT_BYTES
    assert round(unitised["ratio"], 3) == 0.964
    idle = write_amplification(before, {**before, "data_units_written": 101})
    assert idle["ratio"] is None and idle["note"] == "the round wrote no host bytes as the drive counts: no ratio"


def test_fdp_statistics_of_qemu_10_give_one(fakebin: Callable[[], list[list[str]]],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """QEMU 10's logs as nvme-cli 2.13 printed them after an 8 MiB write (no flash: media bytes are host bytes),
    read with no OCP log: the FDP log's host bytes give 1.0, where the SMART log's 17 units gave 0.964."""
    monkeypatch.setenv("FAKE_NVME_SMART_LOG", str(DATA / "nvme-cli-2.13-smart-log-qemu-10.json"))
    monkeypatch.setenv("FAKE_NVME_FDP_STATS", str(DATA / "nvme-cli-2.13-fdp-stats-qemu-10.json"))
    monkeypatch.setenv("FAKEBIN_FAIL", "nvme:ocp")
    found = read_telemetry(NVME, NVME_FACTS)
    assert fakebin()[1:] == [OCP_ARGV, FDP_ARGV, LATENCY_ARGV, ERROR_ARGV] and found["data_units_written"] == 17
    start = {"data_units_written": 0, "media_written_bytes": 0, "fdp_host_written_bytes": 0, "media_source": FDP_SOURCE}
    waf = write_amplification(start, found)
    assert (waf["ratio"], waf["host_counter"], waf["source"]) == (1.0, FDP_HOST_COUNTER, FDP_SOURCE)


def test_round_under_one_host_unit_has_no_ratio() -> None:
    waf = write_amplification(reading(5, 100), reading(5, 300_100))
    assert waf["ratio"] is None and waf["media_written_bytes"] == 300_000 and waf["host_written_bytes"] == 0
    assert waf["note"] == "the round wrote less than one host data unit (512,000 bytes) as the drive counts: no ratio"
    line = telemetry_line({"telemetry": {"change": {"waf": waf}}})
    assert "write amplification: none (the round wrote less than one host data unit" in line


def test_no_media_counter_says_so_and_gives_no_number() -> None:
    waf = write_amplification(reading(1, None, None), reading(9, None, None))
    assert waf["ratio"] is None and waf["source"] is None and waf["note"] == NOT_REPORTED  # no note either
    assert telemetry_line({"telemetry": {"change": {"waf": waf}}}) == ""
    assert waf_text([waf, waf]) == f"Write amplification: not available - {NOT_REPORTED}."


def test_counter_back_or_source_changed_has_no_ratio() -> None:
    assert write_amplification(reading(1, 500), reading(9, 400))["ratio"] is None  # counter went back (wrap)
    changed = write_amplification(reading(1, 500), reading(9, 900, FDP_SOURCE))
    assert changed["ratio"] is None and changed["source"] is None


def test_combined_ratio_weights_rounds_by_host_bytes() -> None:
    small = write_amplification(reading(0, 0), reading(1, 3 * HOST_UNIT_BYTES))  # 3.0 over one unit
    large = write_amplification(reading(0, 0), reading(9, 9 * HOST_UNIT_BYTES))  # 1.0 over nine
    short = write_amplification(reading(0, 0), reading(0, 10))
    assert combined_ratio([small, large, short]) == (1.2, OCP_SOURCE)
    assert combined_ratio([short]) == (None, None)
    text = waf_text([small, large, short])
    assert text.startswith(f"Write amplification: media bytes written ({OCP_SOURCE}) over host bytes written")
    assert "1 round(s) without a ratio" in text


def test_read_through_nvme_cli_ocp_first(fakebin: Callable[[], list[list[str]]],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_NVME_SMART_LOG", str(DATA / "nvme-cli-2.x-smart-log.json"))
    monkeypatch.setenv("FAKE_NVME_OCP_LOG", str(DATA / "nvme-cli-2.x-ocp-smart-add-log.json"))
    monkeypatch.setenv("FAKE_NVME_FDP_STATS", str(DATA / "nvme-cli-2.x-fdp-stats.json"))
    found = read_telemetry(NVME, NVME_FACTS)
    assert fakebin() == [["nvme", "smart-log", "/dev/nvme0", "-o", "json"], OCP_ARGV, LATENCY_ARGV, ERROR_ARGV]
    assert tuple(found) == TELEMETRY_KEYS
    assert found["media_source"] == OCP_SOURCE and found["media_written_bytes"] == 2**64 + 1_126_400_000


def test_read_through_nvme_cli_fdp_when_no_ocp_log(fakebin: Callable[[], list[list[str]]],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_NVME_SMART_LOG", str(DATA / "nvme-cli-2.x-smart-log.json"))
    monkeypatch.setenv("FAKE_NVME_FDP_STATS", str(DATA / "nvme-cli-2.x-fdp-stats.json"))
    monkeypatch.setenv("FAKEBIN_FAIL", "nvme:ocp")
    found = read_telemetry(NVME, NVME_FACTS)
    assert fakebin()[1:] == [OCP_ARGV, FDP_ARGV, LATENCY_ARGV, ERROR_ARGV]
    assert found["media_source"] == FDP_SOURCE and found["media_written_bytes"] == 2_252_800_000
    assert found["fdp_host_written_bytes"] == 2_048_000_000 and found["media_erased_bytes"] == 0


def test_drive_with_neither_log_names_both_commands(fakebin: Callable[[], list[list[str]]],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_NVME_SMART_LOG", str(DATA / "nvme-cli-2.x-smart-log.json"))
    monkeypatch.setenv("FAKEBIN_FAIL", "nvme:ocp")
    before = read_telemetry(NVME, NVME_FACTS)
    after = read_telemetry(NVME, NVME_FACTS)
    assert after["media_written_bytes"] is None and after["media_source"] is None
    assert after["media_note"] == (f"{NOT_REPORTED}; `nvme ocp smart-add-log /dev/nvme0 -o json`: nvme exited with "
                                   "status 5: nvme: injected failure (nvme:ocp); `nvme fdp stats /dev/nvme0n1 "
                                   "--endgrp-id=1 -o json`: nvme printed no JSON")
    change = telemetry_change(before, after)
    assert change["waf"]["ratio"] is None and change["waf"]["note"] == after["media_note"]
    assert after["temperature_c"] == 37  # the SMART log is read all the same


def test_report_blocks_show_the_phase_ratio_and_figures() -> None:
    from types import SimpleNamespace

    from ptsbench.report.core.figure import Figure
    from ptsbench.report.core.model import Table
    from ptsbench.report.pts.advanced import telemetry_blocks

    readings = [reading(units, units * HOST_UNIT_BYTES * 3 // 2) for units in (0, 10, 30, 30)]
    rounds = [{"round": number, "telemetry": {"before": before, "after": after, "cpu": {},
                                             "change": telemetry_change(before, after)}}
              for number, (before, after) in enumerate(zip(readings, readings[1:], strict=False), start=1)]
    blocks = telemetry_blocks("iops", [SimpleNamespace(plan={"title": "IOPS"}, rounds=rounds)])
    table = next(block for block in blocks if isinstance(block, Table))
    assert table.rows[0][-1] == 1.5  # (10 + 20) units' media bytes over their host bytes; round 3 wrote none
    figures = {block.title: block for block in blocks if isinstance(block, Figure)}
    per_round = figures["Write amplification per round"].series[0]
    assert per_round.y == (1.5, 1.5, None) and per_round.name == f"write amplification ({OCP_SOURCE})"
    assert figures["Write amplification over host data written"].series[0].x == (0.00512, 0.01536, 0.01536)
    assert "1 round(s) without a ratio" in " ".join(str(getattr(block, "text", "")) for block in blocks)
