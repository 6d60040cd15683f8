"""Device telemetry (device/telemetry.py): parsing of recorded nvme-cli and smartctl JSON, the commands run through
stand-in tools on PATH (tests/fakebin), a clean "not available" when tools or devices do not provide it, and host CPU
utilisation from real /proc/stat snapshots."""

import json
import os
import stat
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import FAKEBIN, attached_loop
from ptsbench.device.info import target_facts
from ptsbench.device.target import Target, resolve_target
from ptsbench.device.telemetry import (
    NVME_DATA_UNIT_BYTES,
    TELEMETRY_KEYS,
    CpuSnapshot,
    counters_since,
    cpu_snapshot,
    cpu_utilisation,
    parse_nvme_smart_log,
    parse_proc_stat,
    parse_smartctl,
    read_telemetry,
    telemetry_change,
)

DATA = Path(__file__).parents[1] / "data" / "telemetry"
NVME = Target(path="/dev/nvme0n1", kind="block", size_bytes=10**12, requested="/dev/nvme0n1")
NVME_FACTS: dict[str, object] = {"transport": "nvme", "disk": "/dev/nvme0n1", "nvme_controller": "/dev/nvme0"}
SATA = Target(path="/dev/sda", kind="block", size_bytes=500107862016, requested="/dev/sda")
SATA_FACTS: dict[str, object] = {"transport": "sata", "disk": "/dev/sda"}


def recorded(name: str) -> dict:  # type: ignore[type-arg]
    return json.loads((DATA / name).read_text())


def only_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *tools: str) -> None:
    """PATH holds only these stand-ins (the others are 'not installed')."""
    folder = tmp_path / "onlybin"
    folder.mkdir()
    for tool in tools:
        script = folder / tool
        script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "{FAKEBIN / "fake_tool.py"}" {tool} "$@"\n')
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(folder))


# ---------------------------------------------------------------------------------------------------------------
# parsing recorded output


def test_nvme_cli_smart_log_values() -> None:
    values = parse_nvme_smart_log(recorded("nvme-cli-2.x-smart-log.json"))
    assert values["temperature_k"] == 310 and values["temperature_c"] == 37
    assert values["data_units_written"] == 39412876
    assert values["data_written_bytes"] == 39412876 * 512_000 == 20_179_392_512_000
    assert values["media_errors"] == 0 and values["critical_warning"] == 0
    assert values["thm_temp1_trans_count"] == 0 and values["thm_temp2_total_time_s"] == 0


def test_nvme_cli_throttled_round_is_told_apart() -> None:
    before = parse_nvme_smart_log(recorded("nvme-cli-2.x-smart-log.json"))
    after = parse_nvme_smart_log(recorded("nvme-cli-2.x-smart-log-throttled.json"))
    assert after["temperature_c"] == 83 and after["critical_warning"] == 2
    change = telemetry_change(before, after)
    assert change["throttled"] is True
    assert change["thm_temp1_trans_count"] == 14 and change["thm_temp2_trans_count"] == 2
    assert change["thm_temp1_total_time_s"] == 412 and change["thm_temp2_total_time_s"] == 37
    assert change["warning_temp_time_min"] == 3 and change["critical_temp_time_min"] == 0
    assert change["data_written_bytes"] == (40584301 - 39412876) * NVME_DATA_UNIT_BYTES
    assert change["media_errors"] == 0
    assert (change["temperature_start_c"], change["temperature_end_c"]) == (37, 83)
    assert telemetry_change(before, before)["throttled"] is False


def test_nvme_cli_older_and_verbose_shapes() -> None:
    """nvme-cli 1.x printed 128-bit counters as floats; -v prints critical_warning as an object with its value."""
    values = parse_nvme_smart_log({"temperature": 300, "data_units_written": 1234.0, "media_errors": 2.0,
                                   "critical_warning": {"value": 4, "available_spare": 0}})
    assert values["data_written_bytes"] == 1234 * 512_000 and values["media_errors"] == 2
    assert values["critical_warning"] == 4 and values["temperature_c"] == 27
    assert parse_nvme_smart_log({"temperature": 0})["temperature_c"] is None  # 0 K: not reported


def test_smartctl_sata_ssd() -> None:
    values = parse_smartctl(recorded("smartctl-7.3-sata-ssd.json"))
    assert values["temperature_c"] == 33
    assert values["media_errors"] == 3  # attribute 187 Reported_Uncorrect
    assert values["data_written_bytes"] == 27658512345 * 512  # 241 Total_LBAs_Written x logical sector
    assert values["thm_temp1_trans_count"] is None and values["warning_temp_time_min"] is None


def test_smartctl_ata_written_units_by_attribute_name() -> None:
    doc = {"logical_block_size": 4096, "ata_smart_attributes": {"table": [
        {"id": 241, "name": "Host_Writes_32MiB", "raw": {"value": 10, "string": "10"}}]}}
    assert parse_smartctl(doc)["data_written_bytes"] == 10 * 32 * 1024**2
    doc["ata_smart_attributes"]["table"][0]["name"] = "Total_LBAs_Written"
    assert parse_smartctl(doc)["data_written_bytes"] == 10 * 4096


def test_smartctl_sas_hdd() -> None:
    values = parse_smartctl(recorded("smartctl-7.3-sas-hdd.json"))
    assert values["temperature_c"] == 41
    assert values["media_errors"] == 3  # read 1 + write 2 uncorrected
    assert values["data_written_bytes"] == 1_086_347_509_000_000  # "1086347.509" decimal GB written


def test_real_nvme_cli_counters_are_strings() -> None:
    values = parse_nvme_smart_log(recorded("nvme-cli-2.3-smart-log-qemu.json"))
    assert (values["temperature_k"], values["temperature_c"]) == (323, 50)
    assert values["data_units_written"] == 66 and values["data_written_bytes"] == 66 * 512_000
    assert values["media_errors"] == 0 and values["thm_temp1_trans_count"] == 0
    assert values["error_log_entries"] == 0  # QEMU's log counts no error entries


def test_new_error_entries_and_critical_warnings_are_named() -> None:
    """QEMU 10's SMART log as nvme-cli 2.13 printed it, then the same with three new error log entries and the
    spare and read-only bits set (bit 1 set before stays unnamed: not new)."""
    before = parse_nvme_smart_log({**recorded("nvme-cli-2.13-smart-log-qemu-10.json"), "critical_warning": 2})
    assert before["error_log_entries"] == 0
    after = parse_nvme_smart_log({**recorded("nvme-cli-2.13-smart-log-qemu-10.json"), "num_err_log_entries": 3,
                                  "critical_warning": 2 | 1 | 8})
    change = telemetry_change(before, after)
    assert change["error_log_entries"] == 3
    assert change["critical_warning_new"] == ["spare below threshold", "read-only media"]
    unknown = telemetry_change({**before, "critical_warning": None}, after)
    assert unknown["critical_warning_new"] is None
    smartctl = parse_smartctl(recorded("smartctl-7.3-nvme.json"))
    assert smartctl["error_log_entries"] == 0


def test_history_counters_are_read() -> None:
    values = parse_nvme_smart_log(recorded("nvme-cli-2.x-smart-log.json"))
    assert values["power_cycles"] == 211 and values["data_units_read"] == 51837411
    qemu = parse_nvme_smart_log(recorded("nvme-cli-2.3-smart-log-qemu.json"))
    assert qemu["data_units_read"] == 1 and qemu["power_cycles"] == 0  # nvme-cli 2.3 prints them as strings
    assert parse_smartctl(recorded("smartctl-7.3-nvme.json"))["power_cycles"] == 211
    ata = parse_smartctl(recorded("smartctl-7.3-sata-ssd.json"))
    assert isinstance(ata["power_cycles"], int)  # attribute 12 Power_Cycle_Count
    assert telemetry_change(values, {**values, "power_cycles": 212})["power_cycles"] == 1


# ---------------------------------------------------------------------------------------------------------------
# write history at resume: the last stored round's counters against the drive's now

LAST = {"data_units_written": 1000, "data_written_bytes": 1000 * NVME_DATA_UNIT_BYTES, "data_units_read": 50,
        "power_cycles": 7}


def nvme_now(units_written: int, **others: int) -> dict[str, int]:
    return {**LAST, "data_units_written": units_written,
            "data_written_bytes": units_written * NVME_DATA_UNIT_BYTES, **others}


def test_history_unchanged_or_only_own_writes_is_quiet() -> None:
    assert counters_since(LAST, LAST, 0) == counters_since(LAST, nvme_now(1000, data_units_read=90), 0)
    assert counters_since(LAST, LAST, 0).deviations == () and counters_since(LAST, LAST, 0).refusal is None
    # the killed round wrote 10 MB: 20 units more, plus NVMe's rounding up of each reading (two units)
    assert counters_since(LAST, nvme_now(1022), 10 * NVME_DATA_UNIT_BYTES * 2).deviations == ()


def test_history_foreign_writes_are_a_deviation_naming_the_bytes() -> None:
    verdict = counters_since(LAST, nvme_now(1100), 20 * NVME_DATA_UNIT_BYTES)
    assert verdict.refusal is None and len(verdict.deviations) == 1
    assert f"{80 * NVME_DATA_UNIT_BYTES:,} bytes were written to the drive that this run did not write" \
        in verdict.deviations[0]
    assert counters_since(LAST, nvme_now(1003), 0).deviations  # three units: more than the rounding
    assert not counters_since(LAST, nvme_now(1002), 0).deviations


def test_history_power_cycle_is_a_deviation() -> None:
    verdict = counters_since(LAST, nvme_now(1000, power_cycles=8), 0)
    assert verdict.refusal is None
    assert verdict.deviations == ("the drive was power-cycled 1 time(s) since the last stored round "
                                  "(power_cycles 7 -> 8)",)


@pytest.mark.parametrize("now", [nvme_now(999), nvme_now(1000, power_cycles=2), nvme_now(1000, data_units_read=3)])
def test_history_counters_going_back_are_a_refusal(now: dict[str, int]) -> None:
    verdict = counters_since(LAST, now, 10**12)
    assert verdict.refusal is not None and "went back" in verdict.refusal and verdict.deviations == ()


def test_history_without_counters_compares_nothing() -> None:
    unknown = dict.fromkeys(LAST)
    assert counters_since(unknown, LAST, 0) == counters_since(LAST, unknown, 0) == counters_since(unknown, unknown, 0)
    assert counters_since(unknown, unknown, 0).deviations == () and counters_since(unknown, unknown, 0).refusal is None


def test_history_coarse_ata_counters_allow_their_unit() -> None:
    """ATA / SCSI counters without NVMe data units: growth within 1 GiB is rounding, more is a deviation."""
    last = {"data_written_bytes": 10 * 1024**3}
    assert not counters_since(last, {"data_written_bytes": 11 * 1024**3}, 0).deviations
    assert counters_since(last, {"data_written_bytes": 12 * 1024**3}, 0).deviations


def test_smartctl_scsi_temperature_zero_is_unknown() -> None:
    """smartctl prints a temperature of 0 for a SCSI disk without a temperature log page (QEMU's scsi-hd)."""
    values = parse_smartctl(recorded("smartctl-7.3-qemu-scsi.json"))
    assert values["temperature_c"] is None
    assert all(value is None for value in values.values())
    sata = parse_smartctl(recorded("smartctl-7.3-qemu-sata.json"))
    assert sata["temperature_c"] == 31 and sata["data_written_bytes"] is None  # an ATA 0 would stay 0


def test_smartctl_nvme() -> None:
    values = parse_smartctl(recorded("smartctl-7.3-nvme.json"))
    assert values["temperature_c"] == 41 and values["temperature_k"] is None
    assert values["data_written_bytes"] == 39412876 * 512_000
    assert values["warning_temp_time_min"] == 0 and values["media_errors"] == 0
    assert values["thm_temp1_trans_count"] is None  # smartctl does not put them in its JSON


# ---------------------------------------------------------------------------------------------------------------
# reading through the tools (stand-ins on PATH)


def test_read_nvme_through_nvme_cli(fakebin: Callable[[], list[list[str]]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_NVME_SMART_LOG", str(DATA / "nvme-cli-2.x-smart-log-throttled.json"))
    reading = read_telemetry(NVME, NVME_FACTS)
    assert fakebin()[0] == ["nvme", "smart-log", "/dev/nvme0", "-o", "json"]  # then the media logs (test_waf.py)
    assert tuple(reading) == TELEMETRY_KEYS
    assert reading["source"] == "nvme-cli" and reading["note"] is None
    assert reading["command"] == "nvme smart-log /dev/nvme0 -o json"
    assert reading["temperature_c"] == 83 and reading["thm_temp1_trans_count"] == 14


def test_nvme_cli_failure_is_a_clean_not_available(fakebin: Callable[[], list[list[str]]],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKEBIN_FAIL", "nvme:smart-log")
    reading = read_telemetry(NVME, NVME_FACTS)
    assert reading["note"] == "not available: nvme exited with status 5: nvme: injected failure (nvme:smart-log)"
    assert tuple(reading) == TELEMETRY_KEYS
    assert all(reading[key] is None for key in TELEMETRY_KEYS if key not in ("source", "device", "command", "note"))


def test_nvme_without_nvme_cli_uses_smartctl(tmp_path: Path, fakebin: Callable[[], list[list[str]]],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    only_on_path(tmp_path, monkeypatch, "smartctl")
    monkeypatch.setenv("FAKE_SMARTCTL_JSON", str(DATA / "smartctl-7.3-nvme.json"))
    reading = read_telemetry(NVME, NVME_FACTS)
    assert fakebin() == [["smartctl", "-j", "-a", "/dev/nvme0n1"]]
    assert reading["source"] == "smartctl" and reading["temperature_c"] == 41
    assert reading["note"].startswith("nvme-cli not installed: read with smartctl")


def test_nvme_without_any_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    only_on_path(tmp_path, monkeypatch)
    reading = read_telemetry(NVME, NVME_FACTS)
    assert reading["note"] == "not available: nvme-cli not installed (nor smartctl)"
    assert reading["source"] is None and reading["temperature_c"] is None
    assert tuple(reading) == TELEMETRY_KEYS


def test_sata_through_smartctl(fakebin: Callable[[], list[list[str]]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_SMARTCTL_JSON", str(DATA / "smartctl-7.3-sata-ssd.json"))
    reading = read_telemetry(SATA, SATA_FACTS)
    assert fakebin() == [["smartctl", "-j", "-a", "/dev/sda"]]
    assert reading["source"] == "smartctl" and reading["note"] is None
    assert reading["temperature_c"] == 33 and reading["media_errors"] == 3


def test_sata_without_smartctl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    only_on_path(tmp_path, monkeypatch, "nvme")
    assert read_telemetry(SATA, SATA_FACTS)["note"] == "not available: smartctl not installed"


@pytest.mark.parametrize(("sample", "message"), [
    ("smartctl-7.3-usb-unknown-bridge.json", "Unknown USB bridge [0x152d:0x0578 (0x214)]"),
    ("smartctl-7.3-sata-smart-disabled.json", "SMART Disabled. Use option -s with argument 'on' to enable it."),
])
def test_smartctl_without_smart_data(fakebin: Callable[[], list[list[str]]], monkeypatch: pytest.MonkeyPatch,
                                     sample: str, message: str) -> None:
    monkeypatch.setenv("FAKE_SMARTCTL_JSON", str(DATA / sample))
    reading = read_telemetry(SATA, {"transport": "usb", "disk": "/dev/sda"})
    assert reading["note"].startswith("not available: not a SMART device as smartctl sees it (")
    assert message in reading["note"]
    assert reading["temperature_c"] is None and reading["media_errors"] is None


def test_loop_device_is_not_a_smart_device(tmp_path: Path, fakebin: Callable[[], list[list[str]]]) -> None:
    with attached_loop(str(tmp_path)) as device:
        target = resolve_target(device)
        reading = read_telemetry(target, target_facts(target))
    assert reading["note"] == f"not available: not an NVMe or SMART device ({device}, transport loop)"
    assert fakebin() == []  # no tool was asked


def test_file_without_backing_disk_is_not_a_smart_device() -> None:
    target = Target(path="/tmp/x.dat", kind="file", size_bytes=1, requested="/tmp/x.dat")
    reading = read_telemetry(target, {"transport": None, "disk": None})
    assert reading["note"] == "not available: not an NVMe or SMART device (/tmp/x.dat, transport unknown)"


# ---------------------------------------------------------------------------------------------------------------
# host CPU


STAT_BEFORE = "cpu  86703 0 14281 38519 4903 0 1316 622 0 0\ncpu0 41256 0 7025 22102 2287 0 157 312 0 0\nintr 1 2\n"
STAT_AFTER = "cpu  86903 100 14381 38619 5003 50 1366 622 0 0\ncpu0 41356 50 7075 22152 2337 25 182 312 0 0\n"


def test_proc_stat_parsing() -> None:
    ticks = parse_proc_stat(STAT_BEFORE)
    assert ticks == {"user": 86703, "nice": 0, "system": 14281, "idle": 38519, "iowait": 4903, "irq": 0,
                     "softirq": 1316, "steal": 622}
    assert parse_proc_stat("cpu0 1 2 3 4\n") is None
    assert parse_proc_stat("cpu  1 2 3 4\n") == {"user": 1, "nice": 2, "system": 3, "idle": 4, "iowait": 0,
                                                 "irq": 0, "softirq": 0, "steal": 0}


def test_cpu_utilisation_known_answer() -> None:
    before = CpuSnapshot(10.0, parse_proc_stat(STAT_BEFORE) or {})
    after = CpuSnapshot(12.5, parse_proc_stat(STAT_AFTER) or {})
    # deltas: user 200, nice 100, system 100, idle 100, iowait 100, irq 50, softirq 50, steal 0 -> 700 ticks
    use = cpu_utilisation(before, after)
    assert use["interval_s"] == 2.5
    assert use["busy_pct"] == pytest.approx(500 / 7)
    assert use["user_pct"] == pytest.approx(300 / 7)
    assert use["system_pct"] == pytest.approx(200 / 7)
    assert use["iowait_pct"] == pytest.approx(100 / 7) and use["idle_pct"] == pytest.approx(100 / 7)
    assert use["steal_pct"] == 0
    assert cpu_utilisation(None, after)["busy_pct"] is None
    assert cpu_utilisation(before, before)["busy_pct"] is None  # no tick passed


def test_cpu_utilisation_of_a_real_busy_interval() -> None:
    before = cpu_snapshot()
    if before is None:
        pytest.skip("no /proc/stat")
    deadline = time.monotonic() + 0.5
    spins = 0
    while time.monotonic() < deadline:  # keep one CPU busy
        spins += 1
    use = cpu_utilisation(before, cpu_snapshot())
    cpus = os.cpu_count() or 1
    assert use["cpu_count"] == cpus
    assert use["interval_s"] >= 0.5
    assert use["busy_pct"] >= 50 / cpus  # at least most of one CPU of `cpus` was busy
    parts = use["user_pct"] + use["system_pct"] + use["iowait_pct"] + use["steal_pct"] + use["idle_pct"]
    assert parts == pytest.approx(100.0)
