"""The drive's OCP C3h latency monitor set beside the host's latencies of the same case or PTS round.

fio's latency of an IO (lat_ns: submission to completion) includes the drive's, so the host should count at least
as many IOs at or above a latency as the drive's monitor counts commands there. For each bucket (bucket N counts
commands at or above its threshold, A for bucket 0 ... D for bucket 3, up to the next one), the drive's commands at
or above the bucket's threshold are set against the host's IOs as slow, per direction, counted in fio's json+
latency bins (all jobs). More on the drive: it saw latencies the host did not (another user of the drive, or IO fio
did not issue, such as a file system's; in a run with a ramp time, fio's latencies leave its IOs out). More on the
host: time spent outside the drive (the host's stack, its queue).

A case is compared from its fio.json (at `check` time and in its report section); a PTS round stores the host's
counts beside the drive's (`host_beside_monitor`, round.json telemetry.monitor_host) when it ends, as fio's document
is already parsed then.
"""

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ptsbench.device.latency_monitor import BUCKETS

DIRECTIONS = ("read", "write", "trim")


def slower_counts(jobs: Iterable[Any], thresholds_ns: Sequence[float]) -> dict[str, list[int]] | None:
    """Per direction, the IOs of fio's parsed jobs (fio/output.py JobResult) with a latency at or above each
    threshold, counted in fio's bins; None when no job has bins."""
    counts = {direction: [0] * len(thresholds_ns) for direction in DIRECTIONS}
    found = False
    for job in jobs:
        for result in job.directions:
            if result.direction not in counts or not result.lat.bins:
                continue
            found = True
            for index, threshold in enumerate(thresholds_ns):
                counts[result.direction][index] += sum(n for value, n in result.lat.bins.items() if value >= threshold)
    return counts if found else None


def host_slower_counts(fio_json: Path, thresholds_ns: Sequence[float]) -> dict[str, list[int]] | None:
    """slower_counts of a stored fio.json (a case's); None without the file or its bins."""
    from ptsbench.fio.output import parse_jobs
    from ptsbench.store import read_json

    if not fio_json.is_file():
        return None
    return slower_counts(parse_jobs(read_json(fio_json)), thresholds_ns)


def host_beside_monitor(jobs: Iterable[Any], change: Mapping[str, Any], after: Mapping[str, Any],
                        ramp_time_s: float = 0.0) -> dict[str, Any] | None:
    """What a PTS round stores beside the drive's counters: {thresholds_ms, read, write, trim: the round's IOs at
    or above each threshold, ramp_time_s}; None when the drive gave no increase or no thresholds to compare at."""
    thresholds_ms = after.get("latency_monitor_thresholds_ms")
    if not isinstance(change.get("latency_monitor"), Mapping) or not thresholds_ms:
        return None
    counts = slower_counts(jobs, [float(ms) * 1e6 for ms in thresholds_ms])
    if counts is None:
        return None
    return {"thresholds_ms": list(thresholds_ms), **counts, "ramp_time_s": ramp_time_s}


def compare(increase: Mapping[str, Mapping[str, int]], thresholds_ms: Sequence[float],
            host: Mapping[str, Sequence[int]], ramp_time_s: float = 0.0) -> dict[str, list[str]]:
    """Per bucket, where the drive's counted commands (its increase) and the host's IOs at or above the bucket's
    threshold differ, one sentence each per direction (an empty list where they agree)."""
    said: dict[str, list[str]] = {}
    ramp = f" (fio's latencies leave out the {ramp_time_s:g} s ramp time's IOs)" if ramp_time_s else ""
    for index, bucket in enumerate(BUCKETS):
        lines = said.setdefault(bucket, [])
        for direction in DIRECTIONS:
            drive = sum(int(increase[later][direction]) for later in BUCKETS[index:])
            seen = int(host[direction][index])
            at = f"at or above {thresholds_ms[index]:g} ms"
            if drive > seen:
                lines.append(f"the drive counted {drive:,} {direction}(s) {at} (bucket {bucket} and up), the host "
                             f"{seen:,}: the drive saw latencies the host did not{ramp}")
            elif seen > drive:
                lines.append(f"the host saw {seen:,} {direction}(s) {at}, the drive counted {drive:,} (bucket "
                             f"{bucket} and up): latency outside the drive")
    return said


def most_specific(said: Mapping[str, list[str]]) -> list[str]:
    """Of a round's disagreements (bucket -> sentences), per direction the one at the highest bucket: the longest
    latency at which drive and host differ (the lower buckets repeat its counts)."""
    chosen: dict[str, str] = {}
    for bucket in sorted(said, reverse=True):
        for line in said[bucket]:
            direction = next(word for word in DIRECTIONS if f" {word}(s) " in line)
            chosen.setdefault(direction, line)
    return list(chosen.values())


def disagreements(case_dir: Path, telemetry: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Per bucket, what the drive's monitor and the host saw differently over a case, one sentence each (nothing
    when they agree or there is nothing to set side by side)."""
    entries = [entry for entry in telemetry if isinstance((entry.get("change") or {}).get("latency_monitor"), dict)
               and (entry.get("after") or {}).get("latency_monitor_thresholds_ms")]
    if len(entries) != 1:  # one NVMe drive read for the case: its commands are the case's IOs
        return {}
    thresholds_ms = entries[0]["after"]["latency_monitor_thresholds_ms"]
    host = host_slower_counts(case_dir / "fio.json", [float(ms) * 1e6 for ms in thresholds_ms])
    if host is None:
        return {}
    return compare(entries[0]["change"]["latency_monitor"], thresholds_ms, host)


def round_disagreements(record: Mapping[str, Any]) -> dict[str, list[str]]:
    """Per bucket, what the drive's monitor and the host saw differently over a stored PTS round ({} when the
    round stored no host counts: no monitor increase, or a round stored before ptsbench compared them)."""
    telemetry = record.get("telemetry") or {}
    host, increase = telemetry.get("monitor_host"), (telemetry.get("change") or {}).get("latency_monitor")
    if not isinstance(host, Mapping) or not isinstance(increase, Mapping):
        return {}
    return compare(increase, host["thresholds_ms"], host, float(host.get("ramp_time_s") or 0.0))
