"""The drive's own latency monitor: the OCP Datacenter NVMe SSD specification's Latency Monitor log (log page C3h).

The drive counts, per bucket 0-3 and per command type (read, write, trim), the commands whose latency fell between
its thresholds A-D, while its active bucket timer runs. ptsbench reads it with nvme-cli as JSON
(`nvme ocp latency-monitor-log CTRL -o json`: "Active Bucket Counter: Bucket N": {"Read", "Write", "Trim"} and
"Active Threshold A" ... "D" in ms) before and after each case or round, and stores the counters' increase beside
the host's own percentiles. ptsbench does not configure the monitor (OCP feature C5h, Latency Monitor): it reads
what the drive was set to, and the log says it, as the settings in force that the feature loads ("Feature Status",
"Active Bucket Timer Threshold" in minutes, "Active Threshold A" ... "D" in ms, "Active Latency Configuration",
"Active Latency Minimum Window" in ms). Each span's increase is stored with that configuration; a monitor not
enabled (feature status bit 0 clear: it counts nothing) or set anew during the span gives no increase, and a note
says why. When the active bucket timer reaches its threshold the drive moves the counters to its static buckets and
clears them: the counters go back, and that span has no increase (said in its note).
"""

import shlex
from collections.abc import Callable, Mapping
from typing import Any

BUCKETS = ("0", "1", "2", "3")
OPERATIONS = ("read", "write", "trim")
MONITOR_KEYS = ("latency_monitor", "latency_monitor_thresholds_ms", "latency_monitor_config", "latency_monitor_note")
CONFIG_FIELDS = {"feature_status": "Feature Status", "bucket_timer_threshold_min": "Active Bucket Timer Threshold",
                 "latency_config": "Active Latency Configuration", "minimum_window_ms": "Active Latency Minimum Window"}

JsonRunner = Callable[[list[str]], tuple[Any, str | None, int]]


def parse_latency_monitor(doc: Mapping[str, Any]) -> dict[str, dict[str, int]] | None:
    """Bucket -> operation -> active bucket counter, from nvme-cli's JSON; None when the document has none."""
    buckets: dict[str, dict[str, int]] = {}
    for bucket in BUCKETS:
        found = doc.get(f"Active Bucket Counter: Bucket {bucket}")
        if not isinstance(found, Mapping):
            return None
        counts = {operation: found.get(operation.capitalize()) for operation in OPERATIONS}
        if not all(isinstance(count, int) and count >= 0 for count in counts.values()):
            return None
        buckets[bucket] = {operation: int(count) for operation, count in counts.items() if count is not None}
    return buckets


def read_latency_monitor(controller: str, run_json: JsonRunner) -> dict[str, Any]:
    """MONITOR_KEYS of one reading: the counters and thresholds, or a note saying why there are none."""
    argv = ["nvme", "ocp", "latency-monitor-log", controller, "-o", "json"]
    doc, problem, status = run_json(argv)
    counters = parse_latency_monitor(doc) if isinstance(doc, dict) and not status else None
    if counters is None:
        why = problem or (f"exit status {status}" if status else "no active bucket counters in its output")
        return {"latency_monitor": None, "latency_monitor_thresholds_ms": None, "latency_monitor_config": None,
                "latency_monitor_note": f"no OCP C3h latency monitor log: `{shlex.join(argv)}`: {why}"}
    assert isinstance(doc, dict)
    thresholds = [doc.get(f"Active Threshold {letter}") for letter in "ABCD"]
    known = [t for t in thresholds if isinstance(t, int)]
    return {"latency_monitor": counters, "latency_monitor_thresholds_ms": known if len(known) == 4 else None,
            "latency_monitor_config": monitor_config(doc, known if len(known) == 4 else None),
            "latency_monitor_note": None}


def monitor_config(doc: Mapping[str, Any], thresholds_ms: list[int] | None) -> dict[str, Any]:
    """The monitor's settings in force (what feature C5h set), as the C3h log reports them; a field the document
    lacks is None. `enabled`: feature status bit 0 (the Latency Monitor Feature Enable the drive accepted)."""
    config: dict[str, Any] = {key: doc.get(name) if isinstance(doc.get(name), int) else None
                              for key, name in CONFIG_FIELDS.items()}
    config["thresholds_ms"] = thresholds_ms
    status = config["feature_status"]
    config["enabled"] = bool(status & 1) if isinstance(status, int) else None
    return config


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
