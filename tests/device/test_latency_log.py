"""The OCP C3h latency monitor page decoded from its bytes (device/latency_log.py): the settings in force by the OCP
specification's offsets, and each bucket's counters in the order its version, its reserved words or the drive's
DSSD specification version (C0h) say. A page NVMeVirt wrote in the FTL lab (tests/data/telemetry/README.md) against
what nvme-cli 2.3 printed of it; the other pages are laid out by tests/ocp_pages.py."""

import json
from pathlib import Path

import pytest

from ocp_pages import c0h_page, c3h_page
from ptsbench.device.latency_log import decode, dssd_major_version, page_problem
from ptsbench.device.latency_monitor import read_latency_monitor, request_setting

DATA = Path(__file__).resolve().parents[1] / "data" / "telemetry"
LAB_PAGE = (DATA / "nvmevirt-ftl-ci-c3h.bin").read_bytes()
LAB_C0H = (DATA / "nvmevirt-ftl-ci-c0h.bin").read_bytes()
COUNTS = {"0": (3, 0, 0), "2": (0, 40, 0), "3": (1, 2, 5)}
AS_STORED = {bucket: dict(zip(("read", "write", "trim"), COUNTS.get(bucket, (0, 0, 0)), strict=True))
             for bucket in "0123"}


def _never() -> int | None:
    raise AssertionError("the page decides: the C0h log is not to be read")


def test_the_lab_drive_s_page_reads_as_nvme_cli_2_3_printed_it() -> None:
    """NVMeVirt's page (version 1, writes only: nothing in the words one order keeps reserved) with the DSSD
    version 1.0 its C0h log names: the counters nvme-cli 2.3 printed, and the settings ptsbench set."""
    printed = json.loads((DATA / "nvme-cli-2.3-ocp-latency-monitor-log-nvmevirt.json").read_text())
    assert page_problem(LAB_PAGE) is None
    assert dssd_major_version(LAB_C0H) == 1
    found = decode(LAB_PAGE, lambda: dssd_major_version(LAB_C0H))
    assert found.counters == {bucket: {operation: printed[f"Active Bucket Counter: Bucket {bucket}"][operation.title()]
                                       for operation in ("read", "write", "trim")} for bucket in "0123"}
    assert sum(counts["write"] for counts in found.counters.values()) == 1271 + 2050 + 6998 + 290
    assert found.order == "1.0" and "DSSD specification 1.x (C0h log)" in found.order_note
    assert (found.version, found.feature_status, found.thresholds_ms) == (1, 1, [5, 25, 100, 500])
    assert found.bucket_timer_threshold_min == printed["Active Bucket Timer Threshold"] == 0xFFFF * 5
    assert found.latency_config == 0xFFF and found.minimum_window_ms == printed["Active Lantency Minimum Window"]
    # read as OCP 2.0 (nvme-cli 2.5 and later read every page so): the writes become trims
    assert decode(LAB_PAGE, lambda: 2).counters["2"] == {"read": 0, "write": 0, "trim": 6998}
    # a drive that names no DSSD version: the order cannot be told, and no counter is made up
    unknown = decode(LAB_PAGE, lambda: None)
    assert unknown.counters is None and unknown.order is None and "names no DSSD specification version" in \
        unknown.order_note and unknown.thresholds_ms == [5, 25, 100, 500]


@pytest.mark.parametrize(("order", "version", "dssd", "why"), [
    ("2.0", 4, _never, "log page version 4"),  # OCP 2.5 and later
    ("2.0", 1, _never, "a count in word 3 of a bucket, which OCP 1.0 keeps reserved"),  # a read in 2.0's order
    ("1.0", 1, _never, "a count in word 0 of a bucket, which OCP 2.0 keeps reserved"),  # a read in 1.0's order
])
def test_the_page_itself_decides_the_order_where_it_can(order: str, version: int, dssd: object, why: str) -> None:
    found = decode(c3h_page(COUNTS, order=order, version=version), dssd)  # type: ignore[arg-type]
    assert found.counters == AS_STORED and found.order == order and why in found.order_note


@pytest.mark.parametrize(("order", "major"), [("1.0", 1), ("2.0", 2)])
def test_a_version_1_page_without_reads_follows_the_drive_s_dssd_version(order: str, major: int) -> None:
    writes = {"1": (0, 7, 0), "3": (0, 0, 2)}
    found = decode(c3h_page(writes, order=order, version=1), lambda: dssd_major_version(c0h_page(major)))
    assert found.counters is not None and found.counters["1"] == {"read": 0, "write": 7, "trim": 0}
    assert found.counters["3"] == {"read": 0, "write": 0, "trim": 2} and found.order == order


def test_all_zero_counters_need_no_order_and_a_foreign_page_is_not_read() -> None:
    found = decode(c3h_page({}, version=1), _never)
    assert found.counters == {bucket: {"read": 0, "write": 0, "trim": 0} for bucket in "0123"}
    assert page_problem(LAB_PAGE[:256]) == "256 bytes, not the page's 512"
    assert "not the Latency Monitor log's 85d45e58d4e643709c6c84d08cc07a92" in str(page_problem(bytes(512)))
    assert dssd_major_version(c3h_page()) is None and dssd_major_version(c0h_page(0)) is None


def test_a_reading_asks_for_the_c0h_log_only_when_the_page_leaves_the_order_open() -> None:
    """What ptsbench runs: the C3h page's bytes, and the C0h page's only for a version 1 page whose counts lie in the
    words the orders read differently; a reading that cannot tell the order keeps the settings, says why."""
    calls: list[list[str]] = []

    def drive(c3h: bytes, c0h: bytes | None):  # type: ignore[no-untyped-def]
        def run_raw(argv: list[str]) -> tuple[bytes, str | None, int]:
            calls.append(argv)
            page = c3h if "--log-id=0xc3" in argv else c0h
            return (page, None, 0) if page is not None else (b"", "nvme exited with status 1: Invalid Log Page", 1)
        return run_raw

    reading = read_latency_monitor("/dev/nvme0", drive(c3h_page(COUNTS, version=4), None))
    assert reading["latency_monitor"] == AS_STORED and reading["latency_monitor_note"] is None
    assert reading["latency_monitor_order"] == ("OCP 2.0 (reserved, trim, write, read): log page version 4")
    assert calls == [["nvme", "get-log", "/dev/nvme0", "--log-id=0xc3", "--log-len=512", "--raw-binary"]]
    request_setting(None)  # a new command: what a C0h log named is read again
    try:
        reading = read_latency_monitor("/dev/nvme0", drive(LAB_PAGE, LAB_C0H))
        assert reading["latency_monitor"]["2"]["write"] == 6998 and calls[-1][3] == "--log-id=0xc0"
        again = read_latency_monitor("/dev/nvme0", drive(LAB_PAGE, LAB_C0H))  # the next round's reading
        assert again["latency_monitor"] == reading["latency_monitor"] and calls[-1][3] == "--log-id=0xc3"
        assert sum("--log-id=0xc0" in argv for argv in calls) == 1  # once per controller in the process
        reading = read_latency_monitor("/dev/nvme1", drive(LAB_PAGE, None))
    finally:
        request_setting(None)
    assert reading["latency_monitor"] is None and reading["latency_monitor_thresholds_ms"] == [5, 25, 100, 500]
    assert reading["latency_monitor_note"].startswith("the OCP C3h latency monitor's counters cannot be read: log "
                                                      "page version 1 is that of OCP 1.0 and 2.0")
