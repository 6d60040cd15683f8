"""The drive's own latency monitor: the OCP Datacenter NVMe SSD specification's Latency Monitor log (log page C3h).

The drive counts, per bucket 0-3 and per command type (read, write, trim), the commands whose latency fell between
its thresholds A-D, while its active bucket timer runs. ptsbench reads it with nvme-cli as JSON
(`nvme ocp latency-monitor-log CTRL -o json`: "Active Bucket Counter: Bucket N": {"Read", "Write", "Trim"} and
"Active Threshold A" ... "D" in ms) before and after each case or round, and stores the counters' increase beside
the host's own percentiles. ptsbench does not configure the monitor (OCP feature C5h): it reads what the drive was
set to. When the active bucket timer reaches its threshold the drive moves the counters to its static buckets and
clears them: the counters go back, and that span has no increase (said in its note).
"""

import shlex
from collections.abc import Callable, Mapping
from typing import Any

BUCKETS = ("0", "1", "2", "3")
OPERATIONS = ("read", "write", "trim")
MONITOR_KEYS = ("latency_monitor", "latency_monitor_thresholds_ms", "latency_monitor_note")

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
        return {"latency_monitor": None, "latency_monitor_thresholds_ms": None,
                "latency_monitor_note": f"no OCP C3h latency monitor log: `{shlex.join(argv)}`: {why}"}
    assert isinstance(doc, dict)
    thresholds = [doc.get(f"Active Threshold {letter}") for letter in "ABCD"]
    return {"latency_monitor": counters,
            "latency_monitor_thresholds_ms": thresholds if all(isinstance(t, int) for t in thresholds) else None,
            "latency_monitor_note": None}


def monitor_change(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """The counters' increase over a span: {"latency_monitor": bucket -> operation -> increase or None,
    "latency_monitor_note": why None}."""
    start, end = before.get("latency_monitor"), after.get("latency_monitor")
    if not isinstance(start, Mapping) or not isinstance(end, Mapping):
        note = after.get("latency_monitor_note") or before.get("latency_monitor_note") or \
            "no OCP C3h latency monitor log was read"
        return {"latency_monitor": None, "latency_monitor_note": note}
    increase = {bucket: {operation: end[bucket][operation] - start[bucket][operation] for operation in OPERATIONS}
                for bucket in BUCKETS}
    if any(count < 0 for counts in increase.values() for count in counts.values()):
        return {"latency_monitor": None, "latency_monitor_note": "the latency monitor's counters went back (its "
                "active bucket timer ended and cleared them during the span): no increase"}
    return {"latency_monitor": increase, "latency_monitor_note": None}
