"""The drive's own latency monitor: the OCP Datacenter NVMe SSD specification's Latency Monitor log (log page C3h).

The drive counts, per bucket 0-3 and per command type (read, write, trim), the commands whose latency fell between
its thresholds A-D, while its active bucket timer runs. ptsbench reads the log's bytes with nvme-cli
(`nvme get-log CTRL --log-id=0xc3 --log-len=512 --raw-binary`, the same in nvme-cli 2.3 and 2.13) and decodes them
by the specification's offsets (device/latency_log.py: nvme-cli's labelled output names the counters by its own
version, not the drive's) before and after each case or round, and stores the counters' increase beside the host's
own percentiles. Asked to (`--latency-monitor A,B,C,D`, `request_setting`; a run directory keeps the request for
its resume, `stored_request` / `request_stored`), ptsbench configures the monitor (OCP feature C5h, Latency
Monitor) before its first reading of each controller in the process: enabled, those thresholds, the longest bucket
timer (so no counters move to the static buckets during a run); it sends the feature's data with nvme-cli's generic
`nvme set-feature` (nvme-cli 2.3 has no `ocp set-latency-monitor-feature`) and reads the log again to see the
settings in force. Otherwise it reads what the drive was set to, and the log says it, as the settings in force that
the feature loads (feature status, active bucket timer threshold, thresholds A-D, active latency configuration,
minimum window). Each span's increase is stored with that configuration; a monitor not enabled (feature status bit
0 clear: it counts nothing) or set anew during the span gives no increase, and a note says why. When the active
bucket timer reaches its threshold the drive moves the counters to its static buckets and clears them: the counters
go back, and that span has no increase (said in its note).
"""

import shlex
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ptsbench.device.latency_log import (
    C0H_LOG_ID,
    LOG_ID,
    ORDER_NAMES,
    PAGE_BYTES,
    decode,
    dssd_major_version,
    page_problem,
)

BUCKETS = ("0", "1", "2", "3")
OPERATIONS = ("read", "write", "trim")
MONITOR_KEYS = ("latency_monitor", "latency_monitor_thresholds_ms", "latency_monitor_config", "latency_monitor_note",
                "latency_monitor_order", "latency_monitor_set")

RawRunner = Callable[[list[str]], tuple[bytes, str | None, int]]  # argv -> (stdout's bytes, problem, exit status)
ToolRunner = Callable[[list[str]], tuple[int, str]]  # argv -> (exit status, the tool's words on a failure)

FEATURE_ID = "0xc5"  # OCP Datacenter NVMe SSD: Latency Monitor feature
FEATURE_BYTES = 4096  # its data: 13 bytes of fields, the rest reserved
THRESHOLD_STEP_MS = 5  # thresholds are (value + 1) x 5 ms, one byte: 5 ... 1,280 ms
BUCKET_TIMER_MAX_MIN = 0xFFFF * 5  # the bucket timer threshold in 5-minute units, at its longest (about 227 days)
ENABLE = 0x7  # Latency Monitor Feature Enable as nvme-cli's `ocp set-latency-monitor-feature` sends it by default
LATENCY_CONFIG = 0xFFF  # Active Latency Configuration: nvme-cli's default
MINIMUM_WINDOW_100MS = 0xA  # Active Latency Minimum Window: nvme-cli's default (1 s)


@dataclass(frozen=True)
class MonitorSetting:
    """What ptsbench sets the monitor to: thresholds A-D in ms, the bucket timer threshold at its longest."""

    thresholds_ms: tuple[int, int, int, int]
    bucket_timer_threshold_min: int = BUCKET_TIMER_MAX_MIN

    def feature_data(self) -> bytes:
        """Feature C5h's data as Set Features takes it (the OCP specification's layout, as nvme-cli writes it):
        bucket timer threshold (5-minute units, 16 bits), thresholds A-D ((value + 1) x 5 ms), active latency
        configuration (16 bits), minimum window (100 ms units), debug log trigger enable (16 bits), discard debug
        log, feature enable; little-endian, then reserved zeros."""
        fields = (self.bucket_timer_threshold_min // 5).to_bytes(2, "little") + bytes(
            ms // THRESHOLD_STEP_MS - 1 for ms in self.thresholds_ms) + LATENCY_CONFIG.to_bytes(2, "little") + bytes(
            [MINIMUM_WINDOW_100MS, 0, 0, 0, ENABLE])
        return fields.ljust(FEATURE_BYTES, b"\0")

    def stored(self) -> dict[str, Any]:
        """As a reading stores what was asked (latency_monitor_set)."""
        return {"thresholds_ms": list(self.thresholds_ms),
                "bucket_timer_threshold_min": self.bucket_timer_threshold_min, "enable": ENABLE}


def parse_setting(text: str) -> MonitorSetting | None:
    """`--latency-monitor`: "keep" (None: read the monitor as the drive has it) or thresholds A-D in ms, "5,10,20,50":
    rising multiples of 5 from 5 to 1,280. Raises ValueError saying what is wrong."""
    if text.strip().lower() == "keep":
        return None
    parts = [part.strip() for part in text.split(",")]
    if len(parts) != 4 or not all(part.isdigit() for part in parts):
        raise ValueError(f"{text!r}: give four thresholds A-D in ms, e.g. 5,10,20,50, or keep")
    values = tuple(int(part) for part in parts)
    if any(ms % THRESHOLD_STEP_MS or not THRESHOLD_STEP_MS <= ms <= 256 * THRESHOLD_STEP_MS for ms in values):
        raise ValueError(f"{text!r}: each threshold is a multiple of 5 ms from 5 to 1280 (the drive keeps "
                         "(value + 1) x 5 ms in a byte)")
    if any(later <= earlier for earlier, later in zip(values, values[1:], strict=False)):
        raise ValueError(f"{text!r}: the thresholds rise from A to D (the buckets lie between them)")
    return MonitorSetting((values[0], values[1], values[2], values[3]))


@dataclass
class _Request:
    """The setting asked for in this process and, per controller, what configuring it gave (None: set and in force;
    else why not), so each controller is configured once, before its first reading, and a failure said once; and the
    DSSD major version each controller's C0h log named (read once: a C3h reading may need it every round)."""

    setting: MonitorSetting | None = None
    done: dict[str, str | None] = field(default_factory=dict)
    dssd_major: dict[str, int | None] = field(default_factory=dict)


_REQUEST = _Request()


def request_setting(setting: MonitorSetting | None) -> None:
    """Configure every NVMe controller read from now on in this process to `setting` (None: leave them as set)."""
    _REQUEST.setting = setting
    _REQUEST.done.clear()
    _REQUEST.dssd_major.clear()


def stored_request() -> dict[str, Any] | None:
    """What this process was asked to set, as a run directory's manifest keeps it for `ptsbench resume` (None:
    keep, nothing asked)."""
    setting = _REQUEST.setting
    return None if setting is None else {"thresholds_ms": list(setting.thresholds_ms)}


def request_stored(stored: object) -> None:
    """Ask again for what a run directory's manifest kept (stored_request): a resumed run sets the monitor as the run
    asked, before its first reading (a run stored before ptsbench kept it, or with keep: nothing is asked)."""
    thresholds = stored.get("thresholds_ms") if isinstance(stored, Mapping) else None
    request_setting(parse_setting(",".join(str(ms) for ms in thresholds)) if isinstance(thresholds, list) else None)


def configure_once(controller: str, run_raw: RawRunner, run_tool: ToolRunner) -> dict[str, Any] | None:
    """The requested setting, sent to `controller` before its first reading in this process: what was asked and
    `note`, why it is not in force (None: it is); None when nothing was requested. A note is printed once."""
    setting = _REQUEST.setting
    if setting is None:
        return None
    if controller not in _REQUEST.done:
        note = configure(controller, setting, run_raw, run_tool)
        _REQUEST.done[controller] = note
        if note:
            print(f"ptsbench: {controller}: the latency monitor is read as the drive has it: {note}", file=sys.stderr)
    return {**setting.stored(), "note": _REQUEST.done[controller]}


def configure(controller: str, setting: MonitorSetting, run_raw: RawRunner, run_tool: ToolRunner) -> str | None:
    """Set feature C5h and read the C3h log back: None when the settings in force are the ones sent, else why not
    (a drive without the log is not sent the feature)."""
    found = read_latency_monitor(controller, run_raw)
    if found["latency_monitor_config"] is None:
        return f"not configured: {found['latency_monitor_note']}"
    with tempfile.NamedTemporaryFile(prefix="ptsbench-c5h-", suffix=".bin") as data:
        data.write(setting.feature_data())
        data.flush()
        argv = ["nvme", "set-feature", controller, f"--feature-id={FEATURE_ID}", "--namespace-id=0", "--value=0",
                f"--data-len={FEATURE_BYTES}", f"--data={data.name}"]
        status, said = run_tool(argv)
    if status:
        return f"the drive did not take OCP feature C5h (`{shlex.join(argv[:4])} ...`: {said})"
    config = read_latency_monitor(controller, run_raw)["latency_monitor_config"] or {}
    in_force = {"enabled": config.get("enabled"), "thresholds_ms": config.get("thresholds_ms"),
                "bucket_timer_threshold_min": config.get("bucket_timer_threshold_min")}
    wanted = {"enabled": True, "thresholds_ms": list(setting.thresholds_ms),
              "bucket_timer_threshold_min": setting.bucket_timer_threshold_min}
    if in_force != wanted:
        return (f"the drive took OCP feature C5h, but its log reports other settings in force: "
                f"{config_text(config or None)}")
    return None


def read_latency_monitor(controller: str, run_raw: RawRunner) -> dict[str, Any]:
    """MONITOR_KEYS of one reading (but latency_monitor_set): the counters, thresholds and settings in force decoded
    from the C3h page's bytes, or a note saying why there are none."""
    argv = log_argv(controller, LOG_ID)
    page, problem, status = run_raw(argv)
    why = problem or (f"exit status {status}" if status else page_problem(page))
    if why:
        return {"latency_monitor": None, "latency_monitor_thresholds_ms": None, "latency_monitor_config": None,
                "latency_monitor_order": None,
                "latency_monitor_note": f"no OCP C3h latency monitor log: `{shlex.join(argv)}`: {why}"}
    found = decode(page, lambda: _dssd_major(controller, run_raw))
    config = {"feature_status": found.feature_status, "bucket_timer_threshold_min": found.bucket_timer_threshold_min,
              "latency_config": found.latency_config, "minimum_window_ms": found.minimum_window_ms,
              "thresholds_ms": found.thresholds_ms, "enabled": bool(found.feature_status & 1)}
    return {"latency_monitor": found.counters, "latency_monitor_thresholds_ms": found.thresholds_ms,
            "latency_monitor_config": config,
            "latency_monitor_order": f"{ORDER_NAMES[found.order]}: {found.order_note}" if found.order else None,
            "latency_monitor_note": None if found.order else f"the OCP C3h latency monitor's counters cannot be read: "
            f"{found.order_note}"}


def log_argv(controller: str, log_id: int) -> list[str]:
    """nvme-cli's generic read of a log page's bytes (the same options in nvme-cli 2.3 and 2.13)."""
    return ["nvme", "get-log", controller, f"--log-id={log_id:#x}", f"--log-len={PAGE_BYTES}", "--raw-binary"]


def _dssd_major(controller: str, run_raw: RawRunner) -> int | None:
    """The DSSD specification's major version the drive's OCP C0h log names (None: no log, or none named), read once
    per controller in the process (a failed read is tried again at the next reading)."""
    if controller not in _REQUEST.dssd_major:
        page, problem, status = run_raw(log_argv(controller, C0H_LOG_ID))
        if problem or status:
            return None
        _REQUEST.dssd_major[controller] = dssd_major_version(page)
    return _REQUEST.dssd_major[controller]


def config_text(config: Mapping[str, Any] | None) -> str:
    """'monitor enabled (feature status 0x7), thresholds A-D 5, 10, 20, 50 ms, bucket timer threshold 10,080 min,
    active latency configuration 0xfff, minimum window 1,000 ms' (the fields known)."""
    if not config:
        return "configuration not reported"
    enabled = {True: "monitor enabled", False: "monitor NOT enabled", None: "monitor state unknown"}[config["enabled"]]
    parts = [enabled + (f" (feature status {config['feature_status']:#x})" if config["feature_status"] is not None
                        else "")]
    if config.get("thresholds_ms"):
        parts.append(f"thresholds A-D {', '.join(str(ms) for ms in config['thresholds_ms'])} ms")
    for key, words, shown in (("bucket_timer_threshold_min", "bucket timer threshold", "{:,} min"),
                              ("latency_config", "active latency configuration", "{:#x}"),
                              ("minimum_window_ms", "minimum window", "{:,} ms")):
        if config.get(key) is not None:
            parts.append(f"{words} {shown.format(config[key])}")
    return ", ".join(parts)


def monitor_change(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """The counters' increase over a span: {"latency_monitor": bucket -> operation -> increase or None,
    "latency_monitor_note": why None}."""
    start, end = before.get("latency_monitor"), after.get("latency_monitor")
    if not isinstance(start, Mapping) or not isinstance(end, Mapping):
        note = after.get("latency_monitor_note") or before.get("latency_monitor_note") or \
            "no OCP C3h latency monitor log was read"
        return {"latency_monitor": None, "latency_monitor_config": None, "latency_monitor_note": note}
    config, was = after.get("latency_monitor_config"), before.get("latency_monitor_config")
    if isinstance(config, Mapping) and config.get("enabled") is False:
        return {"latency_monitor": None, "latency_monitor_config": config, "latency_monitor_note": "the drive's "
                f"latency monitor is not enabled ({config_text(config)}; OCP feature C5h): its counters count nothing"}
    if isinstance(config, Mapping) and isinstance(was, Mapping) and dict(config) != dict(was):
        return {"latency_monitor": None, "latency_monitor_config": config, "latency_monitor_note": "the latency "
                f"monitor was set anew during the span (OCP feature C5h; before: {config_text(was)}; after: "
                f"{config_text(config)}): no increase"}
    increase = {bucket: {operation: end[bucket][operation] - start[bucket][operation] for operation in OPERATIONS}
                for bucket in BUCKETS}
    if any(count < 0 for counts in increase.values() for count in counts.values()):
        return {"latency_monitor": None, "latency_monitor_config": config, "latency_monitor_note": "the latency "
                "monitor's counters went back (its active bucket timer ended and cleared them during the span): no "
                "increase"}
    return {"latency_monitor": increase, "latency_monitor_config": config, "latency_monitor_note": None}
