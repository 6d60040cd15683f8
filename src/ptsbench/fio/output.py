"""fio's JSON (json+) document -> per-job results, the one parser of fio output.

Rows follow fio's own report entries: one per job, or one per group_reporting group. The entries of one job section
that fio reports apart (numjobs > 1 without group_reporting, or several hosts) are merged the way fio's group_reporting
would merge them (stat.c): IOs and bytes summed, rates as total IOs (bytes) over the longest runtime, latency
percentiles recomputed from the json+ bins with fio's own rule, never averaged. Where fio measured no latency
(gtod_reduce, disable_lat, file-op engines) the latency figures are None, never 0.
"""

import bisect
import itertools
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ptsbench.fio.jobs import PERCENTILES, JobSection, block_size_text, rw_text

DIRECTIONS = ("read", "write", "trim")
MIXED = "mixed"  # fio's one entry for all directions with unified_rw_reporting=mixed (or both)
WORKLOAD_DIRECTIONS = {"read": "read", "randread": "read", "write": "write", "randwrite": "write", "trim": "trim",
                       "randtrim": "trim"}
# fio prints a double it could not compute as nan / -nan / inf (e.g. a steady-state slope over one sample)
_NOT_A_NUMBER_RE = re.compile(r"(?<=: )(-?)(nan|inf)\b")


def load_fio_json(text: str) -> dict[str, Any]:
    """A JSON document as fio prints it: fio's bare nan / -nan / inf are read as NaN / Infinity."""
    try:
        return dict(json.loads(text))
    except json.JSONDecodeError:
        fixed = _NOT_A_NUMBER_RE.sub(lambda m: "NaN" if m.group(2) == "nan" else f"{m.group(1)}Infinity", text)
        return dict(json.loads(fixed))


@dataclass(frozen=True)
class LatencySummary:
    """Total latency (fio's lat_ns) of one direction; percentile keys like '99.9'. None where fio measured none.
    `beyond`: per percentile, the IOs slower than it (its evidence beside `n`, the IOs behind it)."""

    n: int
    mean_ns: float | None
    min_ns: float | None
    max_ns: float | None
    percentiles_ns: dict[str, float]
    bins: dict[int, int]
    beyond: dict[str, int] = field(default_factory=dict)


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
class SteadyState:
    """fio's own steady-state detection of a job (ss=, ss_dur, ss_ramp), as fio reported it."""

    criterion: str  # fio's ss setting as it echoes it, e.g. 'iops_slope:0.500000%'
    attained: bool  # fio's verdict: it stopped the job at steady state
    value: str  # what fio measured against the criterion, as it printed it ('-nan%' when it could not compute it)
    duration_s: int  # ss_dur
    max_deviation: float | None
    slope: float | None


@dataclass(frozen=True)
class JobResult:
    """One row of a fio run: a job (its numjobs threads merged) or a group_reporting group, as the table shows it."""

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
    runtime_ms: int = 0  # how long the job really ran: fio's runtime of its directions (of a group: the longest)
    entries: int = 1  # fio report entries behind this row; more than 1: merged with fio's group arithmetic
    group_jobs: int = 1  # threads fio itself merged into its entry (group_reporting)
    steady_state: SteadyState | None = None
    iodepth_level: tuple[tuple[str, float], ...] = ()  # fio's IO depth distribution (bucket, % of IOs)

    def get(self, direction: str) -> DirectionResult | None:
        return next((d for d in self.directions if d.direction == direction), None)

    def total(self) -> DirectionResult | None:
        """The read+write total for mixed workloads, else the direction of the job's workload (its writes when it
        also verified them), else the one direction that did IO (None when none did)."""
        workload = self.get(WORKLOAD_DIRECTIONS.get(self.rw.partition(":")[0], "total"))
        return self.get("total") or self.get(MIXED) or workload or (self.directions[0] if self.directions else None)

    @property
    def merge_note(self) -> str:
        """How the row was formed, when not simply one of fio's entries."""
        if self.entries > 1:
            return (f"{self.entries} fio jobs merged as group_reporting would: IOs over the longest runtime, "
                    "percentiles from the summed bins")
        if self.group_jobs > 1:
            return f"fio's group_reporting entry of {self.group_jobs} jobs"
        return ""


def percentile_key(fio_key: str) -> str:
    """'99.900000' -> '99.9', '99.999990' -> '99.99999' (fio prints six decimals; ':g' would round seven nines
    to '100')."""
    return f"{float(fio_key):.6f}".rstrip("0").rstrip(".")


def percentile_threshold(percentile: str, total: int) -> Any:
    """How many IOs must be at or below a percentile's bucket: fio's `(long double) p / 100.0 * nr` (stat.c), in
    the same 80-bit extended arithmetic (numpy's longdouble on x86-64), so edge cases round as fio rounds them."""
    import numpy as np

    return np.longdouble(float(percentile)) / np.longdouble(100.0) * np.longdouble(total)


def percentiles_from_bins(bins: Mapping[int, int], wanted: Sequence[str] = PERCENTILES) -> dict[str, float]:
    """Percentiles exactly as fio computes them: the first bucket whose cumulative count reaches p% of all IOs."""
    total = sum(bins.values())
    if not total:
        return {}
    result: dict[str, float] = {}
    targets = sorted((percentile_threshold(p, total), p) for p in wanted)
    position = 0
    cumulative = 0
    for value, count in sorted(bins.items()):
        cumulative += count
        while position < len(targets) and cumulative >= targets[position][0]:
            result[targets[position][1]] = float(value)
            position += 1
    return result


MIN_TAIL_IOS = 10  # a percentile with fewer IOs beyond (slower than) it is not measured: the slowest of a handful


def beyond_by_count(percentile: str, total: int) -> int:
    """The IOs ranked past a percentile of `total` IOs, by fio's rule (the first IO whose rank reaches p % of all):
    what lies beyond it when only the count is known. 2,000 IOs: 20 beyond p99, 0 beyond p99.99."""
    rank = min(max(math.ceil(percentile_threshold(percentile, total)), 1), total)
    return total - rank


def beyond_percentiles(bins: Mapping[int, int], percentiles_ns: Mapping[str, float], total: int) -> dict[str, int]:
    """Per percentile, the IOs slower than its value: counted in fio's json+ bins where there are bins (exact, as
    fio bins them), else from the count alone (beyond_by_count)."""
    if not bins:
        return {key: beyond_by_count(key, total) for key in percentiles_ns} if total else {}
    values = sorted(bins)  # the counts above each bin, summed once: a pass over the bins per percentile cost more
    above = list(itertools.accumulate((bins[value] for value in reversed(values)), initial=0))[::-1]
    return {key: above[bisect.bisect_right(values, value_ns)] for key, value_ns in percentiles_ns.items()}


def _latency(stats: Mapping[str, Any]) -> LatencySummary:
    bins = {int(value): int(count) for value, count in (stats.get("bins") or {}).items()}
    n = int(stats.get("N", 0))
    if not n:  # fio measured no latency (gtod_reduce, disable_lat, file-op engines): its zeros mean nothing
        return LatencySummary(0, None, None, None, {}, {})
    percentiles_ns = {percentile_key(k): float(v) for k, v in (stats.get("percentile") or {}).items()}
    return LatencySummary(
        n=n,
        mean_ns=float(stats["mean"]),
        min_ns=float(stats["min"]),
        max_ns=float(stats["max"]),
        percentiles_ns=percentiles_ns,
        bins=bins,
        beyond=beyond_percentiles(bins, percentiles_ns, n),
    )


def merge_latency(parts: Sequence[LatencySummary]) -> LatencySummary:
    """Exact merge: IO-weighted mean, overall min/max, percentiles from the summed bins (of the parts that measured
    latency; None when none did)."""
    if len(parts) == 1:
        return parts[0]
    used = [part for part in parts if part.n and part.mean_ns is not None]
    if not used:
        return LatencySummary(0, None, None, None, {}, {})
    n = sum(part.n for part in used)
    bins: dict[int, int] = {}
    for part in used:
        for value, count in part.bins.items():
            bins[value] = bins.get(value, 0) + count
    asked = sorted({key for part in used for key in part.percentiles_ns} | set(PERCENTILES), key=float)
    percentiles_ns = percentiles_from_bins(bins, asked)
    return LatencySummary(
        n=n,
        mean_ns=sum(part.mean_ns * part.n for part in used if part.mean_ns is not None) / n,
        min_ns=min(part.min_ns for part in used if part.min_ns is not None),
        max_ns=max(part.max_ns for part in used if part.max_ns is not None),
        percentiles_ns=percentiles_ns,
        bins=bins,
        beyond=beyond_percentiles(bins, percentiles_ns, n),
    )


def merge_directions(direction: str, parts: Sequence[DirectionResult]) -> DirectionResult:
    """Parts that ran at the same time, merged with fio's group arithmetic (stat.c, as group_reporting reports
    them): IOs and bytes summed, IOPS = 1000 x IOs / longest runtime (ms), bytes/s = 1000 x bytes // longest
    runtime (fio's integer division); latency merged exactly."""
    if len(parts) == 1:
        return parts[0] if parts[0].direction == direction else DirectionResult(direction, *_fields(parts[0]))
    runtime_ms = max(part.runtime_ms for part in parts)
    io_bytes = sum(part.io_bytes for part in parts)
    total_ios = sum(part.total_ios for part in parts)
    return DirectionResult(
        direction=direction,
        iops=1000.0 * total_ios / runtime_ms if runtime_ms else 0.0,
        bw_bytes=float(1000 * io_bytes // runtime_ms) if runtime_ms else 0.0,
        io_bytes=io_bytes,
        total_ios=total_ios,
        runtime_ms=runtime_ms,
        lat=merge_latency([part.lat for part in parts]),
    )


def _fields(part: DirectionResult) -> tuple[float, float, int, int, int, LatencySummary]:
    return part.iops, part.bw_bytes, part.io_bytes, part.total_ios, part.runtime_ms, part.lat


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


def _number(value: Any) -> float | None:
    """A float fio printed, None for the nan it prints when it could not compute one."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def _steady_state(entries: Sequence[Mapping[str, Any]]) -> SteadyState | None:
    """fio's steady-state verdict: attained when every merged entry attained it; their values side by side."""
    found = [entry["steadystate"] for entry in entries if isinstance(entry.get("steadystate"), Mapping)]
    if not found:
        return None
    first = found[0]
    return SteadyState(
        criterion=str(first.get("ss", "")),
        attained=all(bool(ss.get("attained")) for ss in found),
        value=", ".join(dict.fromkeys(str(ss.get("criterion", "")) for ss in found)),
        duration_s=int(first.get("duration", 0)),
        max_deviation=_number(first.get("max_deviation")) if len(found) == 1 else None,
        slope=_number(first.get("slope")) if len(found) == 1 else None,
    )


def _verifies(options: Mapping[str, Any]) -> bool:
    """Whether fio reads back what the job wrote to verify it (then its reads are not part of its workload)."""
    return str(options.get("verify") or "0") != "0" and str(options.get("do_verify", "1")) != "0"


def _iodepth(entry: Mapping[str, Any], options: Mapping[str, Any], members: Sequence[JobSection] = ()) -> int:
    """The queue depth fio used: its `latency_depth` (fio keeps its default for a value it refuses, such as
    iodepth=-3), except for a group_reporting entry of several jobs or where latency_target or a latency step
    probe varies the depth; then the option."""
    probing = len(members) > 1 or any(key in options for key in ("latency_target", "latency_run"))
    if not probing and isinstance(entry.get("latency_depth"), int) and entry["latency_depth"] > 0:
        return int(entry["latency_depth"])
    return _int_option(options, "iodepth", 1)


def _job_result(entries: Sequence[Mapping[str, Any]], global_options: Mapping[str, str],
                members: Sequence[JobSection] = ()) -> JobResult:
    """One row from the entries of one job (several: its threads reported apart) or of one group_reporting entry
    (members: the job sections fio merged into it, when known)."""
    first = entries[0]
    options = {**global_options, **first.get("job options", {})}
    directions: list[DirectionResult] = []
    for name in (*DIRECTIONS, MIXED):
        parts = [_direction(name, entry[name]) for entry in entries if entry.get(name, {}).get("total_ios")]
        if parts:
            directions.append(merge_directions(name, parts))
    verifies = any(_verifies(section.options) for section in members) or _verifies(options)
    # verify reads come after the writes: not a mix to add up; fio's own mixed entry is the total already
    if len(directions) > 1 and not verifies and not any(d.direction == MIXED for d in directions):
        directions.append(merge_directions("total", directions))
    described = members or [JobSection(str(first.get("jobname", "")), dict(options))]
    return JobResult(
        name=str(first.get("jobname", "")),
        groupid=int(first.get("groupid", 0)),
        rw="+".join(dict.fromkeys(os.path.expandvars(rw_text(section.options)) for section in described)),
        bs="+".join(dict.fromkeys(os.path.expandvars(block_size_text(section.options)) for section in described)),
        iodepth=_iodepth(first, {k: os.path.expandvars(v or "") for k, v in described[0].options.items()}, members),
        numjobs=max(len(members), len(entries)) if members else _int_option(options, "numjobs", len(entries)),
        error=max(int(entry.get("error", 0)) for entry in entries),
        usr_cpu=sum(float(entry.get("usr_cpu", 0.0)) for entry in entries),
        sys_cpu=sum(float(entry.get("sys_cpu", 0.0)) for entry in entries),
        hostname=first.get("hostname"),
        directions=tuple(directions),
        runtime_ms=max((d.runtime_ms for d in directions), default=max(int(e.get("job_runtime", 0)) for e in entries)),
        entries=len(entries),
        group_jobs=max(len(members), 1),
        steady_state=_steady_state(entries),
        iodepth_level=_iodepth_level(entries),
    )


def _iodepth_level(entries: Sequence[Mapping[str, Any]]) -> tuple[tuple[str, float], ...]:
    """fio's iodepth_level ({"1": %, "2": %, "4": %, ... ">=64": %}: the share of IOs submitted while that many were
    in flight, bucket "8" holding depths 8 to 15), averaged over the entries that report it."""
    levels = [entry["iodepth_level"] for entry in entries if isinstance(entry.get("iodepth_level"), dict)]
    if not levels:
        return ()
    return tuple((bucket, sum(float(level.get(bucket, 0.0)) for level in levels) / len(levels))
                 for bucket in levels[0])


def job_entries(doc: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """fio's per-job entries: `jobs` locally, `client_stats` (without the merged 'All clients') in client mode."""
    entries = doc["client_stats"] if "client_stats" in doc else doc.get("jobs", [])
    # fio leaves an unnamed, empty slot at the end for each job with stats=0 (no jobname up to fio 3.3x, an empty one
    # in 3.39); 'All clients' is fio's own merge; anything but a list of maps is no fio output (a damaged file)
    return [entry for entry in (entries if isinstance(entries, list) else [])
            if isinstance(entry, Mapping) and entry.get("jobname") and entry["jobname"] != "All clients"]


def io_span_ms(doc: Mapping[str, Any]) -> list[int] | None:
    """A span within fio's run, in Unix ms: from its JSON's `timestamp_ms` (written after the last job ended) back
    by the longest job's runtime. Two cases whose spans overlap ran at once. None when the document lacks them."""
    end_ms = doc.get("timestamp_ms")
    runtimes = [ms for entry in job_entries(doc) if isinstance(ms := entry.get("job_runtime"), int)]
    if not isinstance(end_ms, int) or not runtimes or len(runtimes) != len(job_entries(doc)):
        return None
    return [end_ms - max(runtimes), end_ms]


def section_threads(section: JobSection) -> int | None:
    """A section's numjobs as fio reads it (${VAR} and $ncpus expanded); None when it is not a plain number."""
    value = os.path.expandvars(section.get("numjobs") or "1").replace("$ncpus", str(os.cpu_count() or 1))
    try:
        return max(int(value), 1)
    except ValueError:
        return None


def entry_layout(sections: Sequence[JobSection]) -> list[list[int]] | None:
    """The job sections behind each of fio's report entries, in fio's order, as fio forms them (stat.c): one entry
    per thread (numjobs clones each their own), except that a group_reporting thread joins the entry before it when
    both are in the same group (groups split at stonewall / new_group). None when a numjobs cannot be read."""
    layout: list[list[int]] = []
    groupid, jobs_in_group, last_groupid = 0, 0, None
    for index, section in enumerate(sections):
        threads = section_threads(section)
        if threads is None:
            return None
        if (section.has("stonewall") or section.has("new_group")) and jobs_in_group:
            groupid, jobs_in_group = groupid + 1, 0
        jobs_in_group += 1
        if str(section.get("stats", "1")) == "0":  # fio leaves jobs with stats=0 out of its report
            continue
        for _ in range(threads):
            if layout and section.has("group_reporting") and last_groupid == groupid:
                layout[-1].append(index)
            else:
                layout.append([index])
            last_groupid = groupid
    return layout


def _echoed_layout(entries: Sequence[Mapping[str, Any]], global_options: Mapping[str, str]) -> list[list[int]]:
    """Without the job sections (or when they do not match): consecutive entries with the same group, name and
    options are threads of one job, up to the numjobs fio echoes."""
    layout: list[list[int]] = []
    previous: tuple[Any, ...] | None = None
    count = 0
    for entry in entries:
        options = {**global_options, **entry.get("job options", {})}
        key = (entry.get("groupid"), entry.get("jobname"), json.dumps(options, sort_keys=True))
        if key == previous and count < _int_option(options, "numjobs", 1):
            count += 1
        else:
            previous, count = key, 1
            layout.append([-len(layout) - 1])
            continue
        layout.append(list(layout[-1]))
    return layout


def _by_host(entries: Iterable[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    hosts: dict[str, list[Mapping[str, Any]]] = {}
    for entry in entries:
        hosts.setdefault(str(entry.get("hostname", "")), []).append(entry)
    return list(hosts.values())


def parse_jobs(doc: Mapping[str, Any], sections: Sequence[JobSection] = ()) -> list[JobResult]:
    """One JobResult per job (its threads merged) or group_reporting entry, per host in client/server mode.

    With the job file's sections, entries are matched to sections the way fio forms them, so two sections with
    the same name stay two rows; without them (or when they do not match fio's entries, e.g. a job file with
    `include`), from what fio echoes of each job's options."""
    global_options = doc.get("global options", {})
    results = []
    for entries in _by_host(job_entries(doc)):
        layout = entry_layout(sections) if sections else None
        known = layout is not None and len(layout) == len(entries)
        if layout is None or not known:
            layout = _echoed_layout(entries, global_options)
        position = 0
        while position < len(entries):
            end = position + 1
            if len(layout[position]) == 1:  # a job's threads reported apart: one row
                while end < len(entries) and layout[end] == layout[position]:
                    end += 1
            members = [sections[i] for i in layout[position]] if known else []
            results.append(_job_result(entries[position:end], global_options, members))
            position = end
    return results
