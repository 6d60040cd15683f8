"""Device and host telemetry per round: temperature, thermal throttling, media errors, data written, host CPU.

Device values come from the tools that expose them, read as JSON:
- NVMe: `nvme smart-log DEV -o json` (nvme-cli 2.x; 1.x prints the 128-bit counters as floats, also accepted).
  `temperature` is in Kelvin; `warning_temp_time` / `critical_comp_time` are minutes above the warning / critical
  composite temperature; `thm_temp{1,2}_trans_count` count transitions into host-controlled thermal management
  (throttling) level 1 / 2 and `thm_temp{1,2}_total_time` are seconds spent there; `data_units_written` counts units
  of 1000 x 512 bytes (rounded up), as does `data_units_read`; `power_cycles` counts power-ons. Without nvme-cli,
  `smartctl -j -a` is used (it has no throttle counters).
- SATA / SAS / USB: `smartctl -j -a DEV` (smartmontools 7.x): `temperature.current` (Celsius); ATA attributes by name:
  Reported_Uncorrect (187) as media errors, Power_Cycle_Count (12) as power cycles, Total_LBAs_Written (241,
  x logical sector size) or the Host_Writes_* variants for data written; SCSI: `scsi_error_counter_log`
  uncorrected errors and write `gigabytes_processed`, and a temperature of 0, which smartctl prints for a SCSI
  device without a temperature log page, is unknown.
  ATA and SCSI define no thermal-throttle counters: those keys stay None.
Celsius is Kelvin - 273, the NVMe convention nvme-cli and smartctl both print.

`read_telemetry` gives every key of TELEMETRY_KEYS (None when unknown), the `source`, the command run and a `note`
("not available: ..." when nothing can be read); on NVMe also the OCP C3h latency monitor's bucket counters
(device/latency_monitor.py: first configured, when `--latency-monitor` asked) and the NVMe error log's entries
(device/error_log.py). `telemetry_change` compares two
readings (before and after a round), with the round's write amplification (device/waf.py) and the error log's new
entries; `counters_since` compares the last stored round's reading with one at resume. Host CPU: `cpu_snapshot`
reads /proc/stat; `cpu_utilisation(before, after)` gives shares of all CPUs' time.
"""

import functools
import json
import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ptsbench.device.error_log import ERROR_LOG_KEYS, new_entries, read_error_log
from ptsbench.device.latency_monitor import MONITOR_KEYS, configure_once, monitor_change, read_latency_monitor
from ptsbench.device.purge import CommandLog, tool_message
from ptsbench.device.target import Target
from ptsbench.device.waf import MEDIA_COUNTER_KEYS, counter_value, read_media_written, write_amplification

NVME_DATA_UNIT_BYTES = 512_000  # NVMe data units: thousands of 512-byte units
KELVIN_OFFSET = 273  # NVMe convention (nvme-cli, smartctl): Celsius = Kelvin - 273
SMART_TRANSPORTS = ("sata", "scsi", "usb")
SMARTCTL_FATAL_BITS = 0b11  # smartctl exit status bits 0-1: bad command line, device could not be opened

COUNTER_KEYS = (
    "warning_temp_time_min",
    "critical_temp_time_min",
    "thm_temp1_trans_count",
    "thm_temp2_trans_count",
    "thm_temp1_total_time_s",
    "thm_temp2_total_time_s",
    "media_errors",
    "error_log_entries",  # the SMART log's count of error information log entries (its lifetime count)
    "data_units_written",
    "data_written_bytes",
    "data_units_read",
    "power_cycles",
    *MEDIA_COUNTER_KEYS,
    "ocp_throttle_events",
)
TELEMETRY_KEYS = ("source", "device", "command", "note", "temperature_c", "temperature_k", "critical_warning",
                  *COUNTER_KEYS, "ocp_throttle_status", "media_source", "media_note", *MONITOR_KEYS, *ERROR_LOG_KEYS)
THROTTLE_KEYS = ("warning_temp_time_min", "critical_temp_time_min", "thm_temp1_trans_count", "thm_temp2_trans_count",
                 "ocp_throttle_events")

# ATA attribute 241 names in smartctl's drive database -> bytes per raw unit (None: the logical sector size)
_ATA_WRITTEN_UNITS: dict[str, int | None] = {
    "Total_LBAs_Written": None,
    "Host_Writes_MiB": 1024**2,
    "Host_Writes_32MiB": 32 * 1024**2,
    "Host_Writes_GiB": 1024**3,
    "Lifetime_Writes_GiB": 1024**3,
}
_ATA_MEDIA_ERRORS = "Reported_Uncorrect"
_ATA_POWER_CYCLES = "Power_Cycle_Count"


def empty_telemetry(note: str | None, source: str | None = None, device: str | None = None) -> dict[str, Any]:
    """A reading with every key present and nothing known."""
    reading: dict[str, Any] = dict.fromkeys(TELEMETRY_KEYS)
    reading.update(source=source, device=device, note=note)
    return reading


def read_telemetry(target: Target, facts: Mapping[str, object], log: CommandLog | None = None) -> dict[str, Any]:
    """One reading of the device under `target` (a file's backing disk counts); never raises for a tool problem."""
    log = log if log is not None else CommandLog()
    disk = facts.get("disk")
    device = disk if isinstance(disk, str) else (target.path if target.kind == "block" else None)
    transport = str(facts.get("transport") or "")
    if device is None or not (transport.startswith("nvme") or transport in SMART_TRANSPORTS):
        return empty_telemetry(f"not available: not an NVMe or SMART device ({device or target.path}, "
                               f"transport {transport or 'unknown'})", device=device)
    if transport.startswith("nvme"):
        controller = facts.get("nvme_controller")
        if shutil.which("nvme"):
            return _read_nvme_cli(controller if isinstance(controller, str) else device, device, log)
        if shutil.which("smartctl"):
            reading = _read_smartctl(device, log)
            reading["note"] = "; ".join(filter(None, ["nvme-cli not installed: read with smartctl, which has no "
                                                      "thermal-throttle counters", reading["note"]]))
            return reading
        return empty_telemetry("not available: nvme-cli not installed (nor smartctl)", device=device)
    if shutil.which("smartctl"):
        return _read_smartctl(device, log)
    return empty_telemetry("not available: smartctl not installed", device=device)


def run_json(argv: list[str], log: CommandLog) -> tuple[Any, str | None, int]:
    """Run a tool and decode its JSON stdout: (document or None, problem or None, exit status)."""
    done = log.run(argv)
    text = done.stdout or ""
    start = text.find("{")
    try:
        doc = json.loads(text[start:]) if start >= 0 else None
    except json.JSONDecodeError:
        doc = None
    if done.returncode == 127:
        return None, f"{argv[0]} not installed", done.returncode
    if doc is None:
        problem = tool_message(done) if done.returncode else f"{argv[0]} printed no JSON"
        return None, problem, done.returncode
    return doc, None, done.returncode


def run_raw(argv: list[str], log: CommandLog) -> tuple[bytes, str | None, int]:
    """Run a tool for its stdout's bytes: (bytes, problem or None, exit status)."""
    done = log.run_bytes(argv)
    if done.returncode == 127:
        return b"", f"{argv[0]} not installed", done.returncode
    if done.returncode:
        text = subprocess.CompletedProcess(argv, done.returncode, "", done.stderr.decode(errors="replace"))
        return done.stdout, tool_message(text), done.returncode
    return done.stdout, None, 0


def _read_nvme_cli(device: str, namespace: str, log: CommandLog) -> dict[str, Any]:
    """The SMART log of the controller `device`, and the media bytes written (OCP C0h or the FDP statistics of
    `namespace`'s endurance group) for write amplification."""
    argv = ["nvme", "smart-log", device, "-o", "json"]
    doc, problem, status = run_json(argv, log)
    if problem is None and status != 0:
        problem = f"nvme exited with status {status}"
    if problem is not None or not isinstance(doc, dict):
        return {**empty_telemetry(f"not available: {problem}", "nvme-cli", device), "command": shlex.join(argv)}
    media = read_media_written(device, namespace, lambda media_argv: run_json(media_argv, log))
    raw_runner = functools.partial(run_raw, log=log)
    setting = configure_once(device, raw_runner, lambda tool_argv: _tool_status(log, tool_argv))
    monitor = read_latency_monitor(device, raw_runner)
    errors = read_error_log(device, lambda errors_argv: run_json(errors_argv, log))
    return {**empty_telemetry(None, "nvme-cli", device), "command": shlex.join(argv), **parse_nvme_smart_log(doc),
            **media, **monitor, "latency_monitor_set": setting, **errors}


def _tool_status(log: CommandLog, argv: list[str]) -> tuple[int, str]:
    """A tool's exit status and, when it failed, its own words."""
    done = log.run(argv)
    return done.returncode, tool_message(done) if done.returncode else ""


def _read_smartctl(device: str, log: CommandLog) -> dict[str, Any]:
    argv = ["smartctl", "-j", "-a", device]
    doc, problem, status = run_json(argv, log)
    base = {**empty_telemetry(None, "smartctl", device), "command": shlex.join(argv)}
    if problem is not None or not isinstance(doc, dict):
        return {**base, "note": f"not available: {problem}"}
    status = int((doc.get("smartctl") or {}).get("exit_status", status))
    values = parse_smartctl(doc)
    if status & SMARTCTL_FATAL_BITS or not any(value is not None for value in values.values()):
        return {**base, "note": f"not available: not a SMART device as smartctl sees it ({_smartctl_message(doc)})"}
    return {**base, **values}


def _smartctl_message(doc: Mapping[str, Any]) -> str:
    messages = (doc.get("smartctl") or {}).get("messages") or []
    texts = [str(message.get("string", "")) for message in messages if isinstance(message, dict)]
    return "; ".join(text for text in texts if text) or "no SMART data"


def _celsius_from_kelvin(kelvin: int | None) -> int | None:
    return kelvin - KELVIN_OFFSET if kelvin else None  # 0 K: the controller does not report it


def parse_nvme_smart_log(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The telemetry values of an `nvme smart-log -o json` document (NVMe SMART / Health log, page 02h)."""
    warning = doc.get("critical_warning")
    kelvin = counter_value(doc.get("temperature"))
    units = counter_value(doc.get("data_units_written"))
    return {
        "temperature_k": kelvin,
        "temperature_c": _celsius_from_kelvin(kelvin),
        "critical_warning": counter_value(warning.get("value") if isinstance(warning, dict) else warning),
        "warning_temp_time_min": counter_value(doc.get("warning_temp_time")),
        "critical_temp_time_min": counter_value(doc.get("critical_comp_time")),
        "thm_temp1_trans_count": counter_value(doc.get("thm_temp1_trans_count")),
        "thm_temp2_trans_count": counter_value(doc.get("thm_temp2_trans_count")),
        "thm_temp1_total_time_s": counter_value(doc.get("thm_temp1_total_time")),
        "thm_temp2_total_time_s": counter_value(doc.get("thm_temp2_total_time")),
        "media_errors": counter_value(doc.get("media_errors")),
        "error_log_entries": counter_value(doc.get("num_err_log_entries")),
        "data_units_written": units,
        "data_written_bytes": units * NVME_DATA_UNIT_BYTES if units is not None else None,
        "data_units_read": counter_value(doc.get("data_units_read")),
        "power_cycles": counter_value(doc.get("power_cycles")),
    }


def parse_smartctl(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The telemetry values of a `smartctl -j -a` document (ATA, SCSI or NVMe device)."""
    values: dict[str, Any] = dict.fromkeys(("temperature_c", "temperature_k", "critical_warning", *COUNTER_KEYS))
    values["temperature_c"] = counter_value((doc.get("temperature") or {}).get("current"))
    if values["temperature_c"] == 0 and (doc.get("device") or {}).get("protocol") == "SCSI":
        values["temperature_c"] = None  # smartctl's "<not available>" of a SCSI device: no temperature log page
    nvme = doc.get("nvme_smart_health_information_log")
    if isinstance(nvme, dict):
        units = counter_value(nvme.get("data_units_written"))
        values.update(
            critical_warning=counter_value(nvme.get("critical_warning")),
            warning_temp_time_min=counter_value(nvme.get("warning_temp_time")),
            critical_temp_time_min=counter_value(nvme.get("critical_comp_time")),
            media_errors=counter_value(nvme.get("media_errors")),
            error_log_entries=counter_value(nvme.get("num_err_log_entries")),
            data_units_written=units,
            data_written_bytes=units * NVME_DATA_UNIT_BYTES if units is not None else None,
            data_units_read=counter_value(nvme.get("data_units_read")),
            power_cycles=counter_value(nvme.get("power_cycles")),
        )
        if values["temperature_c"] is None:
            values["temperature_c"] = counter_value(nvme.get("temperature"))
    table = (doc.get("ata_smart_attributes") or {}).get("table")
    if isinstance(table, list):
        values.update(_ata_values(table, counter_value(doc.get("logical_block_size")) or 512))
    counters = doc.get("scsi_error_counter_log")
    if isinstance(counters, dict):
        values.update(_scsi_values(counters))
    return values


def _ata_values(table: list[Any], sector_bytes: int) -> dict[str, Any]:
    raw = {str(row.get("name")): counter_value((row.get("raw") or {}).get("value"))
           for row in table if isinstance(row, dict)}
    written = None
    for name, unit in _ATA_WRITTEN_UNITS.items():
        count = raw.get(name)
        if count is not None:
            written = count * (unit or sector_bytes)
            break
    return {"media_errors": raw.get(_ATA_MEDIA_ERRORS), "data_written_bytes": written,
            "power_cycles": raw.get(_ATA_POWER_CYCLES)}


def _scsi_values(counters: Mapping[str, Any]) -> dict[str, Any]:
    uncorrected = [counter_value((counters.get(kind) or {}).get("total_uncorrected_errors"))
                   for kind in ("read", "write", "verify")]
    known = [count for count in uncorrected if count is not None]
    written_gb = (counters.get("write") or {}).get("gigabytes_processed")
    try:
        written = round(float(written_gb) * 1e9) if written_gb is not None else None  # decimal GB (10^9 bytes)
    except (TypeError, ValueError):
        written = None
    return {"media_errors": sum(known) if known else None, "data_written_bytes": written}


def telemetry_change(before: Mapping[str, Any], after: Mapping[str, Any], span: str = "round") -> dict[str, Any]:
    """What changed between two readings (before and after a round, or a case: `span`): counter increases (None
    when either side is unknown), start and end temperature, `throttled` (True when a thermal counter rose, False
    when all known thermal counters stayed, None when none is known) and `waf`."""
    change: dict[str, Any] = {"temperature_start_c": before.get("temperature_c"),
                              "temperature_end_c": after.get("temperature_c")}
    for key in COUNTER_KEYS:
        start, end = before.get(key), after.get(key)
        change[key] = end - start if isinstance(start, int) and isinstance(end, int) else None
    thermal = [change[key] for key in THROTTLE_KEYS if change[key] is not None]
    status = after.get("ocp_throttle_status")  # the OCP log: throttling at the span's end
    change["ocp_throttle_status_end"] = status
    known = thermal + ([status] if status is not None else [])
    change["throttled"] = any(value > 0 for value in known) if known else None
    change["critical_warning_new"] = new_warnings(before.get("critical_warning"), after.get("critical_warning"))
    change["waf"] = write_amplification(before, after, span)
    change.update(monitor_change(before, after))  # the drive's OCP C3h latency monitor: its counters' increase
    change["error_log_new"] = new_entries(before, after)  # the NVMe error log's entries new over the span
    return change


# the NVMe SMART / Health log's critical warning bits (NVMe base specification, log page 02h, byte 0)
CRITICAL_WARNING_BITS = ("spare below threshold", "temperature beyond a threshold", "reliability degraded",
                         "read-only media", "volatile memory backup failed", "persistent memory region read-only")


def warning_names(value: int) -> list[str]:
    """The critical warning bits set in `value`, by name (an unnamed bit by its number)."""
    return [CRITICAL_WARNING_BITS[bit] if bit < len(CRITICAL_WARNING_BITS) else f"bit {bit}"
            for bit in range(8) if value >> bit & 1]


def new_warnings(before: Any, after: Any) -> list[str] | None:
    """The critical warnings set after a span that were not set before it, by name; None when either is unknown."""
    if not isinstance(before, int) or not isinstance(after, int):
        return None
    return warning_names(after & ~before)


HISTORY_KEYS = ("data_written_bytes", "data_units_read", "power_cycles")  # lifetime counters that never go back
COARSEST_WRITTEN_UNIT_BYTES = 1024**3  # ATA Host_Writes_GiB; SCSI prints decimal GB to 3 places


@dataclass(frozen=True)
class CounterVerdict:
    """What a drive's counters say happened between the last stored round and a resume."""

    deviations: tuple[str, ...]  # recorded; the run goes on
    refusal: str | None  # the drive is not the run's any more (a counter went back)


def counters_since(last: Mapping[str, Any], now: Mapping[str, Any], own_writes_bytes: int) -> CounterVerdict:
    """Compare a reading at resume (`now`) with the last stored round's (`last`): a counter that went back (another
    drive, or counters reset) is a refusal; a power cycle, or data written that grew by more than
    `own_writes_bytes` (at most what the run wrote since: the round that was killed, a preconditioning) plus the
    counters' rounding (two NVMe data units, else 1 GiB), are deviations. Unknown counters compare as nothing."""
    known: dict[str, tuple[int, int]] = {key: (last[key], now[key]) for key in HISTORY_KEYS
                                         if isinstance(last.get(key), int) and isinstance(now.get(key), int)}
    back = [f"{key} {was:,} -> {is_:,}" for key, (was, is_) in known.items() if is_ < was]
    if back:
        return CounterVerdict((), f"the drive's counters went back since the last stored round ({'; '.join(back)}):"
                                  " another drive, or its counters were reset")
    deviations = []
    if "power_cycles" in known:
        was, is_ = known["power_cycles"]
        if is_ > was:
            deviations.append(f"the drive was power-cycled {is_ - was} time(s) since the last stored round "
                              f"(power_cycles {was:,} -> {is_:,})")
    if "data_written_bytes" in known:
        was, is_ = known["data_written_bytes"]
        rounding = 2 * NVME_DATA_UNIT_BYTES if isinstance(now.get("data_units_written"), int) \
            else COARSEST_WRITTEN_UNIT_BYTES
        extra = is_ - was - own_writes_bytes
        if extra > rounding:
            deviations.append(f"{extra:,} bytes were written to the drive that this run did not write, since the "
                              f"last stored round (its counters grew by {is_ - was:,} bytes, the run wrote at most "
                              f"{own_writes_bytes:,} since)")
    return CounterVerdict(tuple(deviations), None)


# ---------------------------------------------------------------------------------------------------------------
# host CPU

PROC_STAT = "/proc/stat"
CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


@dataclass(frozen=True)
class CpuSnapshot:
    """The all-CPU line of /proc/stat (ticks of USER_HZ; guest time is already inside user and nice)."""

    monotonic_s: float
    ticks: Mapping[str, int]


def parse_proc_stat(text: str) -> dict[str, int] | None:
    """The aggregate 'cpu' line of /proc/stat as {field: ticks}; None when absent. Older kernels lack the last
    fields (counted as 0)."""
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu":
            numbers = [int(value) for value in fields[1:] if value.isdigit()]
            return {name: numbers[index] if index < len(numbers) else 0 for index, name in enumerate(CPU_FIELDS)}
    return None


def cpu_snapshot(path: str = PROC_STAT) -> CpuSnapshot | None:
    """Read /proc/stat now; None when it cannot be read (not Linux)."""
    try:
        with open(path, encoding="ascii") as handle:
            text = handle.read()
    except OSError:
        return None
    ticks = parse_proc_stat(text)
    return CpuSnapshot(time.monotonic(), ticks) if ticks is not None else None


def cpu_utilisation(before: CpuSnapshot | None, after: CpuSnapshot | None) -> dict[str, Any]:
    """Host CPU use between two snapshots, as percentages of all CPUs' time (100 = every CPU busy):
    busy (everything but idle and iowait), user (+nice), system (+irq, softirq), iowait, steal, idle; plus the
    interval and the CPU count. Values are None when a snapshot is missing or no tick passed."""
    result: dict[str, Any] = dict.fromkeys(("busy_pct", "user_pct", "system_pct", "iowait_pct", "steal_pct",
                                            "idle_pct", "interval_s"))
    result["cpu_count"] = os.cpu_count()
    if before is None or after is None:
        return result
    delta = {name: after.ticks[name] - before.ticks[name] for name in CPU_FIELDS}
    total = sum(delta.values())
    result["interval_s"] = after.monotonic_s - before.monotonic_s
    if total <= 0:
        return result

    def pct(*names: str) -> float:
        return 100.0 * sum(delta[name] for name in names) / total

    result.update(
        busy_pct=100.0 - pct("idle", "iowait"),
        user_pct=pct("user", "nice"),
        system_pct=pct("system", "irq", "softirq"),
        iowait_pct=pct("iowait"),
        steal_pct=pct("steal"),
        idle_pct=pct("idle"),
    )
    return result


class CpuMeter:
    """Host CPU use since the previous call (the first call: since the meter was made), for the values beside each
    of fio's status documents."""

    def __init__(self) -> None:
        self.last = cpu_snapshot()

    def beside(self) -> dict[str, float | None]:
        """Host CPU busy % and stolen % (a VM's CPU taken by its hypervisor) since the previous call, as stored
        beside a status document (fio/intervals.py SecondSamples)."""
        now = cpu_snapshot()
        used = cpu_utilisation(self.last, now)
        self.last = now
        return {f"cpu_{name}": None if used[name] is None else round(used[name], 1)
                for name in ("busy_pct", "steal_pct")}
