"""Configuring the drive's OCP latency monitor (device/latency_monitor.py): feature C5h's data in the OCP layout,
`--latency-monitor` read and refused, and the decision after Set Features: in force only when the C3h log read back
reports the settings sent. The C3h pages are laid out by tests/ocp_pages.py; no drive or QEMU here has the monitor,
so they come from the test (the FTL lab sets it on NVMeVirt for real)."""

from pathlib import Path

import pytest

from conftest import run_cli
from ocp_pages import c3h_page
from ptsbench.device.latency_monitor import (
    BUCKET_TIMER_MAX_MIN,
    FEATURE_BYTES,
    MonitorSetting,
    configure,
    configure_once,
    parse_setting,
    request_setting,
)

SETTING = MonitorSetting((5, 10, 20, 50))


def _c3h(thresholds_ms: tuple[int, int, int, int], timer_min: int, status: int = 1) -> bytes:
    return c3h_page(thresholds_ms=thresholds_ms, timer_threshold_min=timer_min, status=status)


def test_the_feature_data_is_the_ocp_layout() -> None:
    """Bucket timer threshold in 5-minute units, thresholds A-D as (value + 1) x 5 ms (the decoding nvme-cli applies
    to the log's Active Threshold fields), active latency configuration, minimum window, debug log trigger enable,
    discard debug log, feature enable; then reserved zeros to 4 KiB."""
    data = SETTING.feature_data()
    assert len(data) == FEATURE_BYTES and not any(data[13:])
    assert int.from_bytes(data[0:2], "little") * 5 == BUCKET_TIMER_MAX_MIN == 0xFFFF * 5
    assert [(raw + 1) * 5 for raw in data[2:6]] == [5, 10, 20, 50]
    assert int.from_bytes(data[6:8], "little") == 0xFFF and data[8] == 0xA
    assert data[9:12] == b"\0\0\0" and data[12] == 0x7
    assert [(raw + 1) * 5 for raw in MonitorSetting((5, 25, 100, 1280)).feature_data()[2:6]] == [5, 25, 100, 1280]


@pytest.mark.parametrize(("text", "words"), [
    ("5,10,20", "give four thresholds"),
    ("5,10,x,50", "give four thresholds"),
    ("5,12,20,50", "multiple of 5 ms from 5 to 1280"),
    ("0,10,20,50", "multiple of 5 ms from 5 to 1280"),
    ("5,10,20,1285", "multiple of 5 ms from 5 to 1280"),
    ("5,20,20,50", "rise from A to D"),
])
def test_a_bad_setting_says_what_is_wrong(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        parse_setting(text)


def test_keep_and_thresholds_read() -> None:
    assert parse_setting("keep") is None and parse_setting(" KEEP ") is None
    assert parse_setting("5, 10,20 ,50") == SETTING


def test_a_bad_option_is_one_line_before_anything_runs(tmp_path: Path) -> None:
    done = run_cli("quick", str(tmp_path / "x.dat"), "--size", "4M", "--latency-monitor", "5,7,20,50")
    assert done.returncode == 2 and "--latency-monitor" in done.stderr and "multiple of 5" in done.stderr
    assert not (tmp_path / "x.dat").exists() and "Traceback" not in done.stderr


class Drive:
    """A controller as configure() talks to it: C3h documents served in turn, every tool call recorded with the
    feature data it was given."""

    def __init__(self, *logs: bytes | None, set_status: int = 0) -> None:
        self.logs = list(logs)
        self.set_status = set_status
        self.calls: list[list[str]] = []
        self.sent: list[bytes] = []

    def run_raw(self, argv: list[str]) -> tuple[bytes, str | None, int]:
        self.calls.append(argv)
        page = self.logs.pop(0)
        return (page, None, 0) if page is not None else (b"", "NVMe status: Invalid Log Page(0x4109)", 1)

    def run_tool(self, argv: list[str]) -> tuple[int, str]:
        self.calls.append(argv)
        [path] = [arg.removeprefix("--data=") for arg in argv if arg.startswith("--data=")]
        self.sent.append(Path(path).read_bytes())
        return self.set_status, "NVMe status: Invalid Field in Command(0x4002)" if self.set_status else ""


def test_set_and_in_force() -> None:
    drive = Drive(_c3h((30, 100, 155, 235), 10080, status=0), _c3h((5, 10, 20, 50), BUCKET_TIMER_MAX_MIN))
    assert configure("/dev/nvme0", SETTING, drive.run_raw, drive.run_tool) is None
    set_call = drive.calls[1]
    assert set_call[:4] == ["nvme", "set-feature", "/dev/nvme0", "--feature-id=0xc5"]
    assert "--data-len=4096" in set_call and "--value=0" in set_call and "--namespace-id=0" in set_call
    assert drive.sent == [SETTING.feature_data()]


def test_not_in_force_is_said() -> None:
    no_log = Drive(None)
    assert configure("/dev/nvme0", SETTING, no_log.run_raw, no_log.run_tool).startswith(  # type: ignore[union-attr]
        "not configured: no OCP C3h latency monitor log")
    assert len(no_log.calls) == 1  # a drive without the log is not sent the feature
    refused = Drive(_c3h((5, 10, 20, 50), 60), set_status=1)
    note = configure("/dev/nvme0", SETTING, refused.run_raw, refused.run_tool)
    assert note == ("the drive did not take OCP feature C5h (`nvme set-feature /dev/nvme0 --feature-id=0xc5 ...`: "
                    "NVMe status: Invalid Field in Command(0x4002))")
    ignored = Drive(_c3h((5, 10, 20, 50), 60), _c3h((5, 10, 20, 50), 60))  # took it, kept its bucket timer
    note = configure("/dev/nvme0", SETTING, ignored.run_raw, ignored.run_tool)
    assert note is not None and "other settings in force" in note and "bucket timer threshold 60 min" in note
    off = Drive(_c3h((5, 10, 20, 50), 60), _c3h((5, 10, 20, 50), BUCKET_TIMER_MAX_MIN, status=0))
    assert "monitor NOT enabled" in str(configure("/dev/nvme0", SETTING, off.run_raw, off.run_tool))


def test_each_controller_is_configured_once_and_a_failure_said_once(capsys: pytest.CaptureFixture[str]) -> None:
    drive = Drive(_c3h((5, 10, 20, 50), 60), set_status=1)
    request_setting(SETTING)
    try:
        first = configure_once("/dev/nvme0", drive.run_raw, drive.run_tool)
        again = configure_once("/dev/nvme0", drive.run_raw, drive.run_tool)
    finally:
        request_setting(None)
    assert first == again and first is not None and first["thresholds_ms"] == [5, 10, 20, 50]
    assert first["note"].startswith("the drive did not take OCP feature C5h")
    assert len(drive.calls) == 2  # one reading, one Set Features: the second reading asks nothing
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 1 and said[0].startswith("ptsbench: /dev/nvme0: the latency monitor is read as the drive")
    assert configure_once("/dev/nvme0", drive.run_raw, drive.run_tool) is None  # keep: nothing asked, nothing sent


def test_the_request_kept_for_a_resume_is_asked_again() -> None:
    """What a run directory keeps (stored_request) asks for the same setting again (request_stored), keep asks for
    nothing, and a damaged value is refused with what is wrong."""
    from ptsbench.device.latency_monitor import _REQUEST, request_stored, stored_request

    request_setting(SETTING)
    kept = stored_request()
    request_setting(None)
    assert stored_request() is None and kept == {"thresholds_ms": [5, 10, 20, 50]}
    try:
        request_stored(kept)
        assert _REQUEST.setting == SETTING
        request_stored(None)
        assert _REQUEST.setting is None
        with pytest.raises(ValueError, match="rise from A to D"):
            request_stored({"thresholds_ms": [50, 20, 10, 5]})
    finally:
        request_setting(None)
