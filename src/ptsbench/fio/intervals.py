"""Per-interval mean total latency, derived exactly from fio's cumulative status documents, and every document's
cumulative numbers kept per job (SecondSamples: the per-second data drop detection reads).

fio's own `write_lat_log` reads the clock and updates a running mean for every IO, which costs up to 20 % of the IOPS
of a fast device (bench/README.md). fio's status documents already carry, per job and direction, the number of IOs
(lat_ns.N) and their mean latency so far; between two documents the interval's mean is
(mean2 * N2 - mean1 * N1) / (N2 - N1): exact, at no cost to fio. The lines are written in fio's own log format
(time_ms, value, direction, block size 0, priority 0) to PREFIX_lat.log, with time_ms the moment on the job's own
clock at which fio read those counts: the document's runtime plus how late fio read its counts (see SecondSamples),
known once every document is in (the lines are written at close()).
"""

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ptsbench.atomic import atomic_write_json
from ptsbench.fio.output import DIRECTIONS, job_entries, percentiles_from_bins
from ptsbench.fio.waits import FioWaits

DIRECTION_CODES = {"read": 0, "write": 1, "trim": 2}


def _totals(doc: Mapping[str, Any]) -> dict[str, tuple[int, dict[str, tuple[int, float, int]]]]:
    """Job name -> (its runtime in ms, direction -> (IOs, sum of their latencies in ns, bytes)), threads added up."""
    totals: dict[str, tuple[int, dict[str, tuple[int, float, int]]]] = {}
    for entry in job_entries(doc):
        runtime_ms, directions = totals.get(entry.get("jobname", ""), (0, {}))
        for direction in DIRECTIONS:
            stats = entry.get(direction) or {}
            lat = stats.get("lat_ns") or {}
            count, total_ns, done_bytes = directions.get(direction, (0, 0.0, 0))
            ios = int(lat.get("N", 0))
            directions[direction] = (count + ios, total_ns + float(lat.get("mean", 0.0)) * ios,
                                     done_bytes + int(stats.get("io_bytes", 0)))
        totals[entry.get("jobname", "")] = (max(runtime_ms, _runtime_ms(entry)), directions)
    return totals


def _runtime_ms(entry: Mapping[str, Any]) -> int:
    """A thread's job_runtime; 0 where it exceeds fio's own time since it began (`elapsed`, whole seconds rounded
    up): fio (3.33 to 3.42 at least) reports a thread that has not started as running since its clock's zero, the
    host's uptime (issue 44: one round's seconds began at 190 s and kept none of the round's own)."""
    runtime_ms = int(entry.get("job_runtime", 0))
    elapsed_s = entry.get("elapsed")
    return 0 if isinstance(elapsed_s, int) and runtime_ms > 1000 * elapsed_s else runtime_ms


class LatencyIntervals:
    """Feed it every status document; at close() it writes one line per job, direction and interval with IO."""

    def __init__(self, prefixes: Mapping[str, Path]) -> None:
        self.prefixes = prefixes  # job name -> log path prefix (as write_*_log would take it)
        self.previous: dict[str, tuple[int, dict[str, tuple[int, float, int]]]] = {}
        # job name -> (runtime ms, document time in Unix ms or None, mean latency ns, direction code) per line
        self.lines: dict[str, list[tuple[int, int | None, int, int]]] = {}

    def add(self, doc: Mapping[str, Any]) -> None:
        stamp = doc.get("timestamp_ms")
        for name, (runtime_ms, directions) in _totals(doc).items():
            if name not in self.prefixes:
                continue
            _, before = self.previous.get(name, (0, {}))
            for direction, (count, total_ns, _bytes) in directions.items():
                old_count, old_total_ns, _old_bytes = before.get(direction, (0, 0.0, 0))
                if count > old_count:
                    mean_ns = (total_ns - old_total_ns) / (count - old_count)
                    self.lines.setdefault(name, []).append(
                        (runtime_ms, stamp if isinstance(stamp, int) else None, round(mean_ns),
                         DIRECTION_CODES[direction]))
            self.previous[name] = (runtime_ms, directions)

    def close(self) -> None:
        for name, lines in self.lines.items():
            times_ms = [runtime_ms for runtime_ms, _, _, _ in lines]
            stamps = [stamp for _, stamp, _, _ in lines if stamp is not None]
            if len(stamps) == len(lines):  # the job's start on the documents' clock: their smallest gap
                start_ms = min(stamp - runtime_ms for stamp, runtime_ms in zip(stamps, times_ms, strict=True))
                times_ms = [stamp - start_ms for stamp in stamps]
            with open(f"{self.prefixes[name]}_lat.log", "w") as handle:
                for time_ms, (_, _, mean_ns, code) in zip(times_ms, lines, strict=True):
                    handle.write(f"{time_ms}, {mean_ns}, {code}, 0, 0\n")


SAMPLES_FILE = "seconds.json"
SAMPLE_COLUMNS = ("ios", "lat_ns_sum", "bytes")  # the order of _totals' values
STATUS_TIME = "status_unix_ms"  # the document's timestamp_ms, per sample
FIO_WAIT = "fio_wait_pct"  # the largest share of the interval one of fio's processes waited for a CPU (waits.py)
P99_COLUMN = "{direction}_lat_p99_ns"  # the interval's p99 total latency, where the documents carry latency bins


def _lat_bins(doc: Mapping[str, Any]) -> dict[str, dict[str, dict[str, int]]]:
    """Job name -> direction -> its cumulative total-latency bins (json+, lat_percentiles=1), threads added up; only
    the directions whose documents carry them (documents read without bins have none)."""
    found: dict[str, dict[str, dict[str, int]]] = {}
    for entry in job_entries(doc):
        for direction in DIRECTIONS:
            bins = ((entry.get(direction) or {}).get("lat_ns") or {}).get("bins")
            if bins:
                summed = found.setdefault(entry.get("jobname", ""), {}).setdefault(direction, {})
                for value, count in bins.items():
                    summed[value] = summed.get(value, 0) + int(count)
    return found


def interval_p99_ns(before: Mapping[str, int], after: Mapping[str, int]) -> float | None:
    """The p99 of the IOs completed between two cumulative histograms (fio's rule on the bins' difference); None
    when none completed."""
    added = {int(value): count - before.get(value, 0) for value, count in after.items()
             if count != before.get(value, 0)}
    return percentiles_from_bins(added, ("99",)).get("99")


class SecondSamples:
    """Every status document's cumulative numbers per job (threads added up): its runtime in ms and, per direction,
    IOs, bytes and the sum of their total latencies, beside what the caller measured at the same moment (`beside`,
    e.g. host CPU busy %). Per-second rates are differences of neighbours. A job whose counters go back (fio resets
    them after ramp_time), or whose runtime goes back before it did any IO (fio counts a startdelay, then begins the
    job's clock again), starts its series again; a thread not started yet counts as not running (_runtime_ms). Safe
    to feed from several threads (the fio processes of a chain).

    fio does not read these numbers at one moment: fio 3.19 to 3.41 take a document's bytes and runtime together,
    then (after waiting for its workers) the IO counts and latencies, up to hundreds of ms later on a busy host
    (issue 41); fio 3.42 takes the runtime first and the bytes after that wait, with the counts. So per-second rates
    pair the numbers read together, by the fio version stored beside them (find.py per_second), over the runtime
    or the document's own time (STATUS_TIME).

    Beside each document it keeps what fio's processes waited for a CPU since the previous one (FIO_WAIT). Where the
    documents carry their latency bins (json+ read whole), each interval's p99 total latency too (P99_COLUMN), from
    the difference of the cumulative bins; None where no IO completed in the interval.

    Stored as SAMPLES_FILE: {"jobs": {name: {"runtime_ms": [...], "status_unix_ms": [...], "read_ios": [...],
    "read_bytes": [...], "read_lat_ns_sum": [...], ..., BESIDE: [...]}}, "labels": {name: what it measured},
    "fio_version": "fio-3.33"}, directions with no IO left out."""

    def __init__(self) -> None:
        self.jobs: dict[str, dict[str, list[Any]]] = {}  # beside values: None where unknown
        self.lock = threading.Lock()
        self.waits = FioWaits()
        self.fio_version: str | None = None  # which order fio reads a document's numbers in (find.py per_second)
        self.generations: dict[str, int] = {}  # job name -> how many times its series began again
        self.bins: dict[str, dict[str, dict[str, int]]] = {}  # job name -> each direction's bins at its last sample

    def add(self, doc: Mapping[str, Any], beside: Mapping[str, float | None] | None = None) -> None:
        with self.lock:
            if self.fio_version is None and isinstance(doc.get("fio version"), str):
                self.fio_version = doc["fio version"]
            beside = {**(beside or {}), FIO_WAIT: self.waits.share_pct()}
            lat_bins = _lat_bins(doc)
            for name, (runtime_ms, directions) in _totals(doc).items():
                columns = self.jobs.setdefault(name, {})
                times = columns.get("runtime_ms", [])
                stored_ios = sum(columns[f"{d}_ios"][-1] for d in DIRECTIONS) if times else 0
                if times and runtime_ms < times[-1]:
                    # the job's clock began again: a startdelay was counted first, and a document can catch the job's
                    # first IOs while its runtime still holds the delay (CI: 2 IOs at 2,096 ms, then 1,000 ms)
                    self._start_again(name)
                    times = []
                if runtime_ms <= 0 or times and runtime_ms <= times[-1]:
                    continue  # not started yet, or no time passed
                ios = sum(count for count, _, _ in directions.values())
                if times and ios < stored_ios:
                    self._start_again(name)  # counters reset (after ramp_time)
                columns.setdefault("runtime_ms", []).append(runtime_ms)
                # when fio wrote the document (Unix ms): its latency counts were read just before, its bytes and
                # runtime earlier (find.py per_second measures the gap)
                columns.setdefault(STATUS_TIME, []).append(doc.get("timestamp_ms"))
                for direction, values in directions.items():
                    for column, number in zip(SAMPLE_COLUMNS, values, strict=True):
                        columns.setdefault(f"{direction}_{column}", []).append(number)
                for key, value in (beside or {}).items():
                    columns.setdefault(key, []).append(value)
                if name in lat_bins:
                    self._add_p99(name, columns, lat_bins[name])

    def _start_again(self, name: str) -> None:
        """The job's series begins again (a reader sees a new generation)."""
        self.jobs[name].clear()
        self.bins.pop(name, None)
        self.generations[name] = self.generations.get(name, 0) + 1

    def _add_p99(self, name: str, columns: dict[str, list[Any]], bins: Mapping[str, dict[str, int]]) -> None:
        before = self.bins.get(name, {})
        for direction, after in bins.items():
            column = columns.setdefault(P99_COLUMN.format(direction=direction), [])
            column.extend([None] * (len(columns["runtime_ms"]) - 1 - len(column)))  # samples read without bins
            column.append(interval_p99_ns(before.get(direction, {}), after))
        self.bins[name] = dict(bins)  # a new dict per document: kept as it is

    def as_dict(self) -> dict[str, Any]:
        with self.lock:
            # copies: the run goes on adding to the columns while another thread (the metrics exporter) reads them
            return {"jobs": {name: _with_io({key: list(values) for key, values in columns.items()})
                             for name, columns in self.jobs.items() if columns},
                    "fio_version": self.fio_version}

    def counts(self) -> dict[str, int]:
        """How many samples each job has so far (a reader copies only the jobs that grew: job_columns)."""
        with self.lock:
            return {name: len(columns.get("runtime_ms", ())) for name, columns in self.jobs.items() if columns}

    def job_columns(self, name: str) -> dict[str, list[Any]]:
        """A copy of one job's columns, as as_dict gives them."""
        with self.lock:
            return _with_io({key: list(values) for key, values in self.jobs.get(name, {}).items()})

    def job_tail(self, name: str, start: int, generation: int) -> tuple[int, dict[str, list[Any]]]:
        """A copy of one job's columns from sample `start` on, while its series is still `generation` (else the
        whole new series), with the generation it is: a reader copies only what was added since its last read."""
        with self.lock:
            now = self.generations.get(name, 0)
            start = start if now == generation else 0
            return now, {key: values[start:] for key, values in self.jobs.get(name, {}).items()}

    def write(self, folder: Path, labels: Mapping[str, str] | None = None) -> None:
        """Store the samples in `folder` (nothing when no job ran a moment); `labels` names what each job measured
        (a PTS round: job name -> cell name)."""
        data = self.as_dict()
        if labels:
            data["labels"] = dict(labels)
        if data["jobs"]:
            atomic_write_json(folder / SAMPLES_FILE, data)


def _with_io(columns: Mapping[str, list[Any]]) -> dict[str, list[Any]]:
    """A job's columns without the directions it did no IO in."""
    idle = {direction for direction in DIRECTIONS if not (columns.get(f"{direction}_ios") or [0])[-1]}
    return {key: values for key, values in columns.items() if key.partition("_")[0] not in idle}
