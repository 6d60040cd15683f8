"""fio's JSON (json+) document -> per-job results, the one parser of fio output.

Entries of one job (numjobs > 1 without group_reporting, or several hosts) are merged exactly: counts and rates are
summed, latency percentiles are recomputed from the json+ bins the way fio computes them, never averaged.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ptsbench.fio.jobs import PERCENTILES, block_size_text, rw_text

DIRECTIONS = ("read", "write", "trim")
WORKLOAD_DIRECTIONS = {"read": "read", "randread": "read", "write": "write", "randwrite": "write", "trim": "trim",
                       "randtrim": "trim"}


@dataclass(frozen=True)
class LatencySummary:
    """Total latency (fio's lat_ns) of one direction; percentile keys like '99.9'."""

    n: int
    mean_ns: float
    min_ns: float
    max_ns: float
    percentiles_ns: dict[str, float]
    bins: dict[int, int]


@dataclass(frozen=True)
class DirectionResult:
    direction: str
    iops: float
    bw_bytes: float
    io_bytes: int
    total_ios: int
    runtime_ms: int
    lat: LatencySummary


@dataclass(frozen=True)
class JobResult:
    """One job (or reporting group) of a fio run, as the results table shows it."""

    name: str
    groupid: int
    rw: str
    bs: str
    iodepth: int
    numjobs: int
    error: int
    usr_cpu: float
    sys_cpu: float
    hostname: str | None
    directions: tuple[DirectionResult, ...]

    def get(self, direction: str) -> DirectionResult | None:
        return next((d for d in self.directions if d.direction == direction), None)

    def total(self) -> DirectionResult | None:
        """The read+write total for mixed workloads, else the direction of the job's workload (its writes when it
        also verified them), else the one direction that did IO (None when none did)."""
        workload = self.get(WORKLOAD_DIRECTIONS.get(self.rw.partition(":")[0], "total"))
        return self.get("total") or workload or (self.directions[0] if self.directions else None)


def percentile_key(fio_key: str) -> str:
    """'99.900000' -> '99.9'."""
    return f"{float(fio_key):g}"


def percentiles_from_bins(bins: Mapping[int, int], wanted: Sequence[str] = PERCENTILES) -> dict[str, float]:
    """Percentiles exactly as fio computes them: the first bucket whose cumulative count reaches p% of all IOs."""
    total = sum(bins.values())
    if not total:
        return {}
    result: dict[str, float] = {}
    targets = sorted((float(p), p) for p in wanted)
    position = 0
    cumulative = 0
    for value, count in sorted(bins.items()):
        cumulative += count
        while position < len(targets) and cumulative >= targets[position][0] / 100.0 * total:
            result[targets[position][1]] = float(value)
            position += 1
    return result


def _latency(stats: Mapping[str, Any]) -> LatencySummary:
    bins = {int(value): int(count) for value, count in (stats.get("bins") or {}).items()}
    return LatencySummary(
        n=int(stats.get("N", 0)),
        mean_ns=float(stats.get("mean", 0.0)),
        min_ns=float(stats.get("min", 0.0)),
        max_ns=float(stats.get("max", 0.0)),
        percentiles_ns={percentile_key(k): float(v) for k, v in (stats.get("percentile") or {}).items()},
        bins=bins,
    )


def merge_latency(parts: Sequence[LatencySummary]) -> LatencySummary:
    """Exact merge: IO-weighted mean, overall min/max, percentiles from the summed bins."""
    if len(parts) == 1:
        return parts[0]
    used = [part for part in parts if part.n]
    n = sum(part.n for part in used)
    bins: dict[int, int] = {}
    for part in used:
        for value, count in part.bins.items():
            bins[value] = bins.get(value, 0) + count
    return LatencySummary(
        n=n,
        mean_ns=sum(part.mean_ns * part.n for part in used) / n if n else 0.0,
        min_ns=min((part.min_ns for part in used), default=0.0),
        max_ns=max((part.max_ns for part in used), default=0.0),
        percentiles_ns=percentiles_from_bins(bins),
        bins=bins,
    )


def merge_directions(direction: str, parts: Sequence[DirectionResult]) -> DirectionResult:
    """Sum rates and counts of parts that ran at the same time; merge their latency exactly."""
    return DirectionResult(
        direction=direction,
        iops=sum(part.iops for part in parts),
        bw_bytes=sum(part.bw_bytes for part in parts),
        io_bytes=sum(part.io_bytes for part in parts),
        total_ios=sum(part.total_ios for part in parts),
        runtime_ms=max(part.runtime_ms for part in parts),
        lat=merge_latency([part.lat for part in parts]),
    )


def _direction(name: str, stats: Mapping[str, Any]) -> DirectionResult:
    return DirectionResult(
        direction=name,
        iops=float(stats.get("iops", 0.0)),
        bw_bytes=float(stats.get("bw_bytes", 0.0)),
        io_bytes=int(stats.get("io_bytes", 0)),
        total_ios=int(stats.get("total_ios", 0)),
        runtime_ms=int(stats.get("runtime", 0)),
        lat=_latency(stats.get("lat_ns") or {}),
    )


def _int_option(options: Mapping[str, Any], key: str, fallback: int) -> int:
    """An integer option as fio echoes it; `fallback` when it is not a plain number."""
    try:
        return int(options.get(key, fallback))
    except ValueError:
        return fallback


def _verifies(options: Mapping[str, Any]) -> bool:
    """Whether fio reads back what the job wrote to verify it (then its reads are not part of its workload)."""
    return str(options.get("verify") or "0") != "0" and str(options.get("do_verify", "1")) != "0"


def _job_result(entries: Sequence[Mapping[str, Any]], global_options: Mapping[str, str]) -> JobResult:
    first = entries[0]
    options = {**global_options, **first.get("job options", {})}
    directions: list[DirectionResult] = []
    for name in DIRECTIONS:
        parts = [_direction(name, entry[name]) for entry in entries if entry.get(name, {}).get("total_ios")]
        if parts:
            directions.append(merge_directions(name, parts))
    if len(directions) > 1 and not _verifies(options):  # verify reads come after the writes: not a mix to add up
        directions.append(merge_directions("total", directions))
    return JobResult(
        name=str(first.get("jobname", "")),
        groupid=int(first.get("groupid", 0)),
        rw=rw_text(options),
        bs=block_size_text(options),
        iodepth=_int_option(options, "iodepth", 1),
        numjobs=_int_option(options, "numjobs", len(entries)),
        error=max(int(entry.get("error", 0)) for entry in entries),
        usr_cpu=sum(float(entry.get("usr_cpu", 0.0)) for entry in entries),
        sys_cpu=sum(float(entry.get("sys_cpu", 0.0)) for entry in entries),
        hostname=first.get("hostname"),
        directions=tuple(directions),
    )


def job_entries(doc: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """fio's per-job entries: `jobs` locally, `client_stats` (without the merged 'All clients') in client mode."""
    if "client_stats" in doc:
        return [entry for entry in doc["client_stats"] if entry.get("jobname") != "All clients"]
    return list(doc.get("jobs", []))


def group_entries(entries: Iterable[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    """Entries of the same job (same group, name and host) together, in fio's order."""
    groups: dict[tuple[int, str, str], list[Mapping[str, Any]]] = {}
    for entry in entries:
        key = (int(entry.get("groupid", 0)), str(entry.get("jobname", "")), str(entry.get("hostname", "")))
        groups.setdefault(key, []).append(entry)
    return list(groups.values())


def parse_jobs(doc: Mapping[str, Any]) -> list[JobResult]:
    """One JobResult per job of the document (per host in client/server mode)."""
    global_options = doc.get("global options", {})
    return [_job_result(entries, global_options) for entries in group_entries(job_entries(doc))]
