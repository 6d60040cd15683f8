"""The drive's OCP C3h latency monitor set beside the host's latencies of the same case.

fio's latency of an IO (lat_ns: submission to completion) includes the drive's, so the host should count at least
as many IOs at or above a latency as the drive's monitor counts commands there. For each bucket the drive counted
(bucket N counts commands at or above its threshold, A for bucket 0 ... D for bucket 3, up to the next one), the
drive's commands at or above the bucket's threshold are set against the host's IOs as slow, per direction, counted
in fio's json+ latency bins (fio.json). More on the drive: it saw latencies the host did not (another user of the
drive, or IO fio did not issue, such as a file system's). More on the host: time spent outside the drive (the host's
stack, its queue). Case runs only; a PTS phase's rounds are not compared yet.
"""

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ptsbench.device.latency_monitor import BUCKETS

DIRECTIONS = ("read", "write", "trim")


def host_slower_counts(fio_json: Path, thresholds_ns: Sequence[float]) -> dict[str, list[int]] | None:
    """Per direction, the case's IOs with a latency at or above each threshold, counted in fio's bins (all jobs);
    None without the bins."""
    from ptsbench.fio.output import parse_jobs
    from ptsbench.store import read_json

    if not fio_json.is_file():
        return None
    counts = {direction: [0] * len(thresholds_ns) for direction in DIRECTIONS}
    found = False
    for job in parse_jobs(read_json(fio_json)):
        for result in job.directions:
            if result.direction not in counts or not result.lat.bins:
                continue
            found = True
            for index, threshold in enumerate(thresholds_ns):
                counts[result.direction][index] += sum(n for value, n in result.lat.bins.items() if value >= threshold)
    return counts if found else None


def disagreements(case_dir: Path, telemetry: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Per bucket, what the drive's monitor and the host saw differently over a case, one sentence each (nothing
    when they agree or there is nothing to set side by side)."""
    entries = [entry for entry in telemetry if isinstance((entry.get("change") or {}).get("latency_monitor"), dict)
               and (entry.get("after") or {}).get("latency_monitor_thresholds_ms")]
    if len(entries) != 1:  # one NVMe drive read for the case: its commands are the case's IOs
        return {}
    change = entries[0]["change"]["latency_monitor"]
    thresholds_ms = entries[0]["after"]["latency_monitor_thresholds_ms"]
    host = host_slower_counts(case_dir / "fio.json", [float(ms) * 1e6 for ms in thresholds_ms])
    if host is None:
        return {}
    said: dict[str, list[str]] = {}
    for index, bucket in enumerate(BUCKETS):
        for direction in DIRECTIONS:
            drive = sum(int(change[later][direction]) for later in BUCKETS[index:])
            seen = host[direction][index]
            at = f"at or above {thresholds_ms[index]} ms"
            lines = said.setdefault(bucket, [])
            if drive > seen:
                lines.append(f"the drive counted {drive:,} {direction}(s) {at} (bucket {bucket} and up), the host "
                             f"{seen:,}: the drive saw latencies the host did not")
            elif seen > drive:
                lines.append(f"the host saw {seen:,} {direction}(s) {at}, the drive counted {drive:,} (bucket "
                             f"{bucket} and up): latency outside the drive")
    return said
