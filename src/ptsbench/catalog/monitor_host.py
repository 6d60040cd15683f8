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
is already parsed then. `check --profile` shows each bucket's counts side by side whatever they say
(`beside_lines`): a case's from its fio.json, a PTS phase's from its rounds' stored counts added up
(`phase_beside_host`).
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


def drive_slower_counts(increase: Mapping[str, Mapping[str, int]]) -> dict[str, list[int]]:
    """Per direction, the drive's counted commands (the monitor's increase) at or above each bucket's threshold:
    the bucket's and the later ones'."""
    return {direction: [sum(int(increase[later][direction]) for later in BUCKETS[index:])
                        for index in range(len(BUCKETS))] for direction in DIRECTIONS}


def beside_lines(thresholds_ms: Sequence[float], drive: Mapping[str, Sequence[int]],
                 host: Mapping[str, Sequence[int]], over: str = "") -> dict[str, str]:
    """Per bucket, one line setting the drive's commands (drive_slower_counts) and the host's IOs (slower_counts)
    at or above its threshold side by side, whatever they say; `over` is added at its end (what was added up)."""
    return {bucket: f"beside the host at or above {thresholds_ms[index]:g} ms (bucket {bucket} and up): the drive "
            "counted " + ", ".join(f"{direction} {int(drive[direction][index]):,}" for direction in DIRECTIONS)
            + "; the host's fio latency histogram "
            + ", ".join(f"{direction} {int(host[direction][index]):,}" for direction in DIRECTIONS) + over
            for index, bucket in enumerate(BUCKETS)}


def compare(increase: Mapping[str, Mapping[str, int]], thresholds_ms: Sequence[float],
            host: Mapping[str, Sequence[int]], ramp_time_s: float = 0.0) -> dict[str, list[str]]:
    """Per bucket, where the drive's counted commands (its increase) and the host's IOs at or above the bucket's
    threshold differ, one sentence each per direction (an empty list where they agree)."""
    said: dict[str, list[str]] = {}
    ramp = f" (fio's latencies leave out the {ramp_time_s:g} s ramp time's IOs)" if ramp_time_s else ""
    counted = drive_slower_counts(increase)
    for index, bucket in enumerate(BUCKETS):
        lines = said.setdefault(bucket, [])
        for direction in DIRECTIONS:
            drive = counted[direction][index]
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


def _case_sides(case_dir: Path, telemetry: Sequence[Mapping[str, Any]]
                ) -> tuple[Mapping[str, Any], Sequence[float], dict[str, list[int]]] | None:
    """A case's (the drive's increase, the thresholds it counted under, the host's counts from fio.json); None
    when not exactly one NVMe drive with a monitor increase was read for it, or fio.json has no bins."""
    entries = [entry for entry in telemetry if isinstance((entry.get("change") or {}).get("latency_monitor"), dict)
               and (entry.get("after") or {}).get("latency_monitor_thresholds_ms")]
    if len(entries) != 1:  # one NVMe drive read for the case: its commands are the case's IOs
        return None
    thresholds_ms = entries[0]["after"]["latency_monitor_thresholds_ms"]
    host = host_slower_counts(case_dir / "fio.json", [float(ms) * 1e6 for ms in thresholds_ms])
    return None if host is None else (entries[0]["change"]["latency_monitor"], thresholds_ms, host)


def disagreements(case_dir: Path, telemetry: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Per bucket, what the drive's monitor and the host saw differently over a case, one sentence each (nothing
    when they agree or there is nothing to set side by side)."""
    sides = _case_sides(case_dir, telemetry)
    return {} if sides is None else compare(*sides)


def case_beside_host(case_dir: Path, telemetry: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Per bucket, the drive's monitor beside the host over a case: a line whatever they say (beside_lines), then
    where they differ (compare); nothing when there is nothing to set side by side."""
    sides = _case_sides(case_dir, telemetry)
    if sides is None:
        return {}
    increase, thresholds_ms, host = sides
    side = beside_lines(thresholds_ms, drive_slower_counts(increase), host)
    return {bucket: [side[bucket], *lines] for bucket, lines in compare(increase, thresholds_ms, host).items()}


def phase_beside_host(records: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Per bucket, a line setting the drive's monitor beside the host over a PTS phase: its stored rounds' counts
    (round.json telemetry change.latency_monitor and monitor_host) added up, those of the rounds counted under the
    first compared round's thresholds; rounds under other thresholds are left out and said. Nothing when no round
    stored both sides. Where they differ is each round's own (round_disagreements)."""
    telemetries = [record.get("telemetry") or {} for record in records]
    sides = [((telemetry.get("change") or {}).get("latency_monitor"), telemetry.get("monitor_host"))
             for telemetry in telemetries]
    compared = [(increase, host) for increase, host in sides
                if isinstance(increase, Mapping) and isinstance(host, Mapping)]
    if not compared:
        return {}
    thresholds_ms = compared[0][1]["thresholds_ms"]
    same = [(increase, host) for increase, host in compared if host["thresholds_ms"] == thresholds_ms]
    drive_sum = {direction: [0] * len(BUCKETS) for direction in DIRECTIONS}
    host_sum = {direction: [0] * len(BUCKETS) for direction in DIRECTIONS}
    for increase, host in same:
        counted = drive_slower_counts(increase)
        for direction in DIRECTIONS:
            for index in range(len(BUCKETS)):
                drive_sum[direction][index] += counted[direction][index]
                host_sum[direction][index] += int(host[direction][index])
    side = beside_lines(thresholds_ms, drive_sum, host_sum, f" ({len(same)} round(s) added up)")
    said = {bucket: [line] for bucket, line in side.items()}
    if len(same) < len(compared):
        said[BUCKETS[0]].append(f"{len(compared) - len(same)} round(s) under other thresholds left out")
    return said


def round_disagreements(record: Mapping[str, Any]) -> dict[str, list[str]]:
    """Per bucket, what the drive's monitor and the host saw differently over a stored PTS round ({} when the
    round stored no host counts: no monitor increase, or a round stored before ptsbench compared them)."""
    telemetry = record.get("telemetry") or {}
    host, increase = telemetry.get("monitor_host"), (telemetry.get("change") or {}).get("latency_monitor")
    if not isinstance(host, Mapping) or not isinstance(increase, Mapping):
        return {}
    return compare(increase, host["thresholds_ms"], host, float(host.get("ramp_time_s") or 0.0))
