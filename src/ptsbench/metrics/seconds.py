"""A running job's last second, worked out from its new samples only (the metrics exporter, at every scrape).

drops/find.py's per_second works out every second of a job from its whole series, a few dozen numpy calls per job
(about 0.2 ms), which a scrape of many jobs cannot pay. LastSecond keeps, per job, a copy of its cumulative columns
(only the samples added since the previous scrape are copied) and the series-wide facts per_second needs, updated
sample by sample: the sorted interval lengths (their median says which intervals are too short to count), the
smallest gap between a document's time and its runtime, the greatest common divisor of each direction's bytes (the
running IO size). Then it works out the one second served, with per_second's arithmetic in the same order, so the
value equals the last one per_second gives for the same samples (tests/test_metrics_seconds.py checks every prefix of
real fio series)."""

import bisect
import functools
import math
from dataclasses import dataclass, field
from typing import Any

from ptsbench.drops.find import BYTES_AFTER_WAIT, DIRECTIONS, SHORT_INTERVAL
from ptsbench.fio.intervals import P99_COLUMN, STATUS_TIME, SecondSamples
from ptsbench.fio.iosize import io_size
from ptsbench.fio.versions import version_tuple


@dataclass(frozen=True)
class Second:
    """One direction's last counted second: IOPS, bytes/s, mean and p99 latency in ns (None where no IO completed
    in it, or no p99 was measured), and when fio wrote its status document (Unix ms)."""

    iops: float
    bw: float
    lat_ns: float | None
    p99_ns: float | None
    time_ms: int | None


WINDOW = 16  # samples kept of each column: the second served is among the newest few (see last)


@dataclass
class LastSecond:
    """One job's newest samples (WINDOW of them) and what per_second needs of its whole series."""

    generation: int = -1
    columns: dict[str, list[Any]] = field(default_factory=dict)  # the newest samples of each column
    dropped: int = 0  # samples before them, no longer kept
    steps_s: list[float] = field(default_factory=list)  # every interval's length, sorted
    gap_min_ms: float = math.inf
    stamped: bool = True  # every sample has its document's time
    common_bytes: dict[str, int] = field(default_factory=dict)  # direction -> gcd of its cumulative bytes

    def read(self, samples: SecondSamples, job: str) -> bool:
        """Copy the job's samples added since the last read; whether there were any."""
        generation, tail = samples.job_tail(job, self._count(), self.generation)
        if generation != self.generation:  # new, or fio reset the job's counters: its series began again
            self.columns, self.dropped, self.steps_s, self.common_bytes = {}, 0, [], {}
            self.gap_min_ms, self.stamped, self.generation = math.inf, True, generation
        new = len(tail.get("runtime_ms", ()))
        if not new:
            return False
        start = self._count()
        for key, values in tail.items():
            self.columns.setdefault(key, []).extend(values)
        for index in range(start, start + new):
            bisect.insort(self.steps_s, self._step_s(index))
            stamp = self._get(STATUS_TIME, index)
            if stamp is None:
                self.stamped = False
            else:
                self.gap_min_ms = min(self.gap_min_ms, float(stamp) - float(self._get("runtime_ms", index)))
        for direction in DIRECTIONS:
            for value in tail.get(f"{direction}_bytes", ()):
                self.common_bytes[direction] = math.gcd(self.common_bytes.get(direction, 0), int(value or 0))
        excess = len(self.columns["runtime_ms"]) - WINDOW
        if excess > 0:  # every column begins with the job's first sample: trimmed alike, they stay aligned
            for values in self.columns.values():
                del values[:excess]
            self.dropped += excess
        return True

    def _count(self) -> int:
        return self.dropped + len(self.columns.get("runtime_ms", ()))

    def _get(self, key: str, index: int) -> Any:
        """A column's value at sample `index` of the whole series; None where it has none (a column that ended
        earlier than the job, a sample no longer kept)."""
        column, kept = self.columns.get(key), index - self.dropped
        return column[kept] if column is not None and 0 <= kept < len(column) else None

    def _step_s(self, index: int) -> float:
        return (self._get("runtime_ms", index) - (self._get("runtime_ms", index - 1) if index else 0.0)) / 1000

    def _counted_ms(self, index: int) -> float:
        runtime_ms = float(self._get("runtime_ms", index))
        return runtime_ms + (float(self._get(STATUS_TIME, index)) - runtime_ms) - self.gap_min_ms

    def _counted_step_s(self, index: int) -> float:
        if not self.stamped:
            return self._step_s(index)
        return (self._counted_ms(index) - (self._counted_ms(index - 1) if index else 0.0)) / 1000

    def _delta(self, key: str, index: int) -> float:
        return float(self._get(key, index)) - (float(self._get(key, index - 1)) if index else 0.0)

    def last(self, fio_version: str | None) -> dict[str, Second]:
        """Each direction's last counted second, as per_second(columns, fio_version, running=True) ends (nothing
        when the newest WINDOW intervals are all too short to count, which a running job never gives)."""
        count = self._count()
        if count < 2:  # the newest interval never counts (it may be cut short)
            return {}
        middle = len(self.steps_s) // 2  # the median as numpy takes it: the middle one, or the mean of the two
        median_s = self.steps_s[middle] if len(self.steps_s) % 2 else (self.steps_s[middle - 1] +
                                                                        self.steps_s[middle]) / 2

        def counts(index: int) -> bool:  # per_second's rule: not shorter than half the usual interval
            return self._step_s(index) >= SHORT_INTERVAL * median_s

        index = count - 2
        while index > self.dropped and not counts(index):
            index -= 1
        if (index == self.dropped and index > 0) or not counts(index):  # (its interval's start is not kept)
            return {}
        counted_step_s = self._counted_step_s(index)
        bytes_step_s = counted_step_s if self.stamped and _reads_bytes_with_counts(fio_version) \
            else self._step_s(index)
        stamp = self._get(STATUS_TIME, index)
        found = {}
        for direction in DIRECTIONS:
            last_ios, last_bytes = self._get(f"{direction}_ios", count - 1), self._get(f"{direction}_bytes", count - 1)
            if not last_ios:  # no IO in this direction so far
                continue
            d_ios, d_bytes, d_lat = (self._delta(f"{direction}_{name}", index) for name in ("ios", "bytes",
                                                                                          "lat_ns_sum"))
            size = io_size([self.common_bytes[direction], last_bytes], [last_ios], running=True)
            iops = _divided(d_bytes / size, bytes_step_s) if size else \
                (_divided(d_ios, counted_step_s) if counted_step_s > 0 else math.nan)
            p99 = self._get(P99_COLUMN.format(direction=direction), index)
            found[direction] = Second(iops, _divided(d_bytes, bytes_step_s), d_lat / d_ios if d_ios > 0 else None,
                                      None if p99 is None or d_ios <= 0 else float(p99),
                                      stamp if isinstance(stamp, int) else None)
        return found


@functools.cache
def _reads_bytes_with_counts(fio_version: str | None) -> bool:
    version = version_tuple(fio_version) if fio_version else None
    return version is not None and version >= BYTES_AFTER_WAIT


def _divided(value: float, by: float) -> float:
    """value / by as numpy's float64 division gives it (inf or NaN where `by` is 0, no exception)."""
    if by:
        return value / by
    return math.nan if value == 0 or math.isnan(value) else math.copysign(math.inf, value) * math.copysign(1.0, by)
