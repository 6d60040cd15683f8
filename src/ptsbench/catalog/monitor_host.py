"""The drive's OCP C3h latency monitor set beside the host's latencies of the same case or PTS phase.

fio's latency of an IO (lat_ns: submission to completion) includes the drive's, so the host should count at least
as many IOs at or above a latency as the drive's monitor counts commands there. For each bucket (bucket N counts
commands at or above its threshold, A for bucket 0 ... D for bucket 3, up to the next one), the drive's commands at
or above the bucket's threshold are set beside the host's IOs as slow, per direction, counted in fio's json+ latency
bins (fio.json): one line each, whatever they say. Where they differ, a line names it: more on the drive, it saw
latencies the host did not (another user of the drive, or IO fio did not issue, such as a file system's); more on the
host, time spent outside the drive (the host's stack, its queue). A case is compared when one NVMe drive was read
for it; a PTS phase over its rounds whose monitor counted under the same thresholds (each round's fio.json beside).
"""

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ptsbench.device.latency_monitor import BUCKETS

DIRECTIONS = ("read", "write", "trim")


def host_slower_counts(fio_json: Path, thresholds_ns: Sequence[float]) -> dict[str, list[int]] | None:
    """Per direction, the IOs of a case or round with a latency at or above each threshold, counted in fio's bins
    (all jobs); None without the bins."""
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
    """Per bucket, the drive's monitor beside the host over a case (its fio.json in `case_dir`); nothing when not
    exactly one NVMe drive with a monitor increase was read for it."""
    entries = [entry for entry in telemetry if _compared(entry)]
    return beside_host([(case_dir, entries[0])]) if len(entries) == 1 else {}


def phase_beside_host(spans: Sequence[tuple[Path, Mapping[str, Any]]]) -> dict[str, list[str]]:
    """Per bucket, the drive's monitor beside the host over a PTS phase: (round folder, round telemetry) of its
    rounds; those whose monitor counted under other thresholds than the first such round are left out (said)."""
    compared = [(folder, telemetry) for folder, telemetry in spans if _compared(telemetry)]
    if not compared:
        return {}
    thresholds = compared[0][1]["after"]["latency_monitor_thresholds_ms"]
    same = [span for span in compared if span[1]["after"]["latency_monitor_thresholds_ms"] == thresholds]
    said = beside_host(same)
    if said and len(same) < len(compared):
        said[BUCKETS[0]].append(f"{len(compared) - len(same)} round(s) under other thresholds left out")
    return said


def _compared(entry: Mapping[str, Any]) -> bool:
    """A reading span with the monitor's increase and the thresholds it counted under."""
    return isinstance((entry.get("change") or {}).get("latency_monitor"), dict) and bool(
        (entry.get("after") or {}).get("latency_monitor_thresholds_ms"))


def beside_host(spans: Sequence[tuple[Path, Mapping[str, Any]]]) -> dict[str, list[str]]:
    """Per bucket: the drive's commands and the host's IOs at or above its threshold over these spans (folder with
    fio.json, telemetry entry; all under the same thresholds), added up, and where they differ; nothing when a span
    has no fio bins."""
    thresholds_ms = spans[0][1]["after"]["latency_monitor_thresholds_ms"]
    drive = {direction: [0] * len(BUCKETS) for direction in DIRECTIONS}
    host = {direction: [0] * len(BUCKETS) for direction in DIRECTIONS}
    for folder, entry in spans:
        slower = host_slower_counts(folder / "fio.json", [float(ms) * 1e6 for ms in thresholds_ms])
        if slower is None:
            return {}
        change = entry["change"]["latency_monitor"]
        for index in range(len(BUCKETS)):
            for direction in DIRECTIONS:
                drive[direction][index] += sum(int(change[later][direction]) for later in BUCKETS[index:])
                host[direction][index] += slower[direction][index]
    said: dict[str, list[str]] = {}
    for index, bucket in enumerate(BUCKETS):
        at = f"at or above {thresholds_ms[index]} ms"
        lines = said.setdefault(bucket, [])
        lines.append(f"beside the host {at} (bucket {bucket} and up): the drive counted "
                     + ", ".join(f"{direction} {drive[direction][index]:,}" for direction in DIRECTIONS)
                     + "; the host's fio latency histogram "
                     + ", ".join(f"{direction} {host[direction][index]:,}" for direction in DIRECTIONS))
        for direction in DIRECTIONS:
            counted, seen = drive[direction][index], host[direction][index]
            if counted > seen:
                lines.append(f"the drive counted {counted:,} {direction}(s) {at} (bucket {bucket} and up), the host "
                             f"{seen:,}: the drive saw latencies the host did not")
            elif seen > counted:
                lines.append(f"the host saw {seen:,} {direction}(s) {at}, the drive counted {counted:,} (bucket "
                             f"{bucket} and up): latency outside the drive")
    return said
