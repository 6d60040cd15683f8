"""Likely causes of a drop, from what was recorded beside it: the host's state in the same seconds (CPU busy and
stolen %, how long fio's job threads waited for a CPU: drops/find.py HOST_SIGNS), and for a PTS round the device
telemetry read before and after it (device/telemetry.py: NVMe thermal transitions and time in thermal management,
time above the warning temperature, media errors, critical warning; SCSI / ATA drives have no throttle counters;
the round's write amplification, from the OCP C0h log or the FDP statistics). The telemetry is per round: it says
the round held the event, not the second.

A finding with no device cause, in seconds the host was busy, is "host-limited, not the drive": on a host whose CPU
is saturated (or stolen, or kept from fio's jobs), a second with fewer IOs says nothing of the drive. It stays a
finding but does not fail --min-fraction unless the run asked for strict judgement (DropRule.strict)."""

from collections.abc import Mapping
from typing import Any

import numpy as np

from ptsbench.drops.find import Drop, Seconds

HOST_CPU_BUSY_PCT = 90.0  # host CPU busy in those seconds, on average: saturated
HOST_STEAL_PCT = 5.0  # or this much of it stolen by the hypervisor
FIO_WAIT_PCT = 10.0  # or one of fio's job threads waited this share of those seconds for a CPU
NO_CAUSE = "no recorded cause"
HOST_LIMITED = "host-limited, not the drive"
# a round whose drive wrote at least this many bytes to its media per host byte, and more than the host counter's
# rounding can explain (a unit at each reading), was moving data: collecting garbage
WAF_CAUSE_MIN = 1.05


def likely_causes(drop: Drop, series: Seconds, telemetry: Mapping[str, Any] | None = None) -> list[str]:
    """What recorded on the device beside the drop may explain it, most direct first; [] when nothing does."""
    del drop, series  # the device's counters are read per round, not per second
    return likely_causes_of_round(telemetry)


def likely_causes_of_round(telemetry: Mapping[str, Any] | None) -> list[str]:
    """What the device's counters read around a round say (thermal throttling, errors, garbage collection); [] for
    nothing, or none."""
    change = (telemetry or {}).get("change") or {}
    causes = [_thermal_cause(change), _error_cause(change, (telemetry or {}).get("after") or {}), _waf_cause(change)]
    return [cause for cause in causes if cause]


def host_busy(series: Seconds, first: int, stop: int) -> str:
    """How the host was busy in the seconds [first, stop) of a series, in words; '' when it was not (or nothing
    was recorded): CPU saturated, stolen time, or fio's job threads kept waiting for a CPU."""

    def mean(sign: str) -> float | None:
        values = series.host[sign][first:stop]
        values = values[~np.isnan(values)]
        return float(values.mean()) if len(values) else None

    busy, steal, wait = mean("cpu_busy_pct"), mean("cpu_steal_pct"), mean("fio_wait_pct")
    signs = []
    if busy is not None and busy >= HOST_CPU_BUSY_PCT:
        signs.append(f"host CPU {busy:.0f} % busy")
    if steal is not None and steal >= HOST_STEAL_PCT:
        signs.append(f"{steal:.0f} % stolen by the hypervisor")
    if wait is not None and wait >= FIO_WAIT_PCT:
        signs.append(f"fio's job waited {wait:.0f} % of the time for a CPU")
    lag = series.host["status_lag_ms"][first:stop]
    if signs and len(lag) and not np.all(np.isnan(lag)):
        signs.append(f"fio's status up to {np.nanmax(lag):.0f} ms late")
    return ", ".join(signs)


def host_limited(drop: Drop, series: Seconds, causes: list[str]) -> str:
    """'' when the drop may be the drive's; else the host's state that explains it (no device cause, and the host
    busy in its seconds)."""
    return "" if causes else host_busy(series, drop.first, drop.stop)


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
