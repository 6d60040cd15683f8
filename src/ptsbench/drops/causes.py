"""Likely causes of a drop, from what was recorded beside it: host CPU busy % per second (beside every fio status
document), and for a PTS round the device telemetry read before and after it (target/telemetry.py: NVMe thermal
transitions and time in thermal management, time above the warning temperature, media errors, critical warning;
SCSI / ATA drives have no throttle counters; the write amplification of the round, from the OCP C0h log or the FDP
statistics). The telemetry is per round: it says the round held the event, not the second."""

from collections.abc import Mapping
from typing import Any

import numpy as np

from ptsbench.drops.find import Drop, Seconds

CPU_SATURATED_PCT = 90.0  # host CPU busy during the drop, at least
CPU_ABOVE_OUTSIDE_PCT = 10.0  # and this many points more than outside it
NO_CAUSE = "no recorded cause"
# a round whose drive wrote at least this many bytes to its media per host byte, and more than the host counter's
# rounding can explain (a unit at each reading), was moving data: collecting garbage
WAF_CAUSE_MIN = 1.05


def likely_causes(drop: Drop, series: Seconds, telemetry: Mapping[str, Any] | None = None) -> list[str]:
    """What recorded beside the drop may explain it, most direct first; [] when nothing does."""
    causes = []
    cpu = _cpu_cause(drop, series.cpu_busy_pct)
    if cpu:
        causes.append(cpu)
    change = (telemetry or {}).get("change") or {}
    thermal = _thermal_cause(change)
    if thermal:
        causes.append(thermal)
    errors = _error_cause(change, (telemetry or {}).get("after") or {})
    if errors:
        causes.append(errors)
    waf = _waf_cause(change)
    if waf:
        causes.append(waf)
    return causes


def _cpu_cause(drop: Drop, busy_pct: np.ndarray) -> str:
    during = busy_pct[drop.first:drop.stop]
    outside = np.concatenate([busy_pct[:drop.first], busy_pct[drop.stop:]])
    during = during[~np.isnan(during)]
    outside = outside[~np.isnan(outside)]
    if not len(during):
        return ""
    mean_during = float(during.mean())
    mean_outside = float(outside.mean()) if len(outside) else None
    if mean_during < CPU_SATURATED_PCT or (mean_outside is not None
                                           and mean_during - mean_outside < CPU_ABOVE_OUTSIDE_PCT):
        return ""
    before = f", {mean_outside:.0f} % outside it" if mean_outside is not None else ""
    return f"host CPU saturated ({mean_during:.0f} % busy during it{before})"


def _thermal_cause(change: Mapping[str, Any]) -> str:
    parts = []
    for level in (1, 2):
        count = change.get(f"thm_temp{level}_trans_count")
        seconds = change.get(f"thm_temp{level}_total_time_s")
        if count or seconds:
            parts.append(f"thermal management level {level}: {count or 0} transition(s), {seconds or 0} s")
    for key, what in (("warning_temp_time_min", "above the warning temperature"),
                      ("critical_temp_time_min", "above the critical temperature")):
        if change.get(key):
            parts.append(f"{change[key]} min {what}")
    if not parts and not change.get("throttled"):
        return ""
    start, end = change.get("temperature_start_c"), change.get("temperature_end_c")
    temperature = f"; {start} -> {end} C" if start is not None and end is not None else ""
    return f"the drive throttled for heat during the round ({', '.join(parts) or 'its counters rose'}{temperature})"


def _error_cause(change: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    parts = []
    if change.get("media_errors"):
        parts.append(f"{change['media_errors']} new media error(s)")
    if after.get("critical_warning"):
        parts.append(f"critical warning {after['critical_warning']:#x} at the round's end")
    return f"device errors during the round: {', '.join(parts)}" if parts else ""


def _waf_cause(change: Mapping[str, Any]) -> str:
    waf = change.get("waf") or {}
    ratio, host, media = waf.get("ratio"), waf.get("host_written_bytes"), waf.get("media_written_bytes")
    if ratio is None or ratio < WAF_CAUSE_MIN or host is None or media is None:
        return ""
    if media - host <= 2 * int(waf.get("host_unit_bytes") or 0):
        return ""
    return (f"the drive was collecting garbage: it wrote {ratio:.1f} bytes to its media per byte from the host "
            f"during the round (write amplification, {waf.get('source')})")
