"""Drops and steps in one job's per-second IOPS, MB/s and latency: pure numbers in, findings out.

The rule, as docs/drops.md states it:
1. Per-second values are differences of fio's cumulative status numbers (fio/intervals.py SecondSamples), each
   from numbers fio read at one moment: MB/s from a document's bytes over its runtime; IOPS from the same bytes
   divided by the IO size when the direction has one size, else from the IO counts over the document's own time;
   mean latency from the latency sum over the IO count (read together). The job's last interval (cut short by its
   end, or holding its wind-down) and any interval shorter than half the usual one are left out.
2. The series is cut into segments of steady level by binary segmentation on the mean (least squares): a segment is
   split where the split lowers the squared error most, when that gain exceeds PENALTY x noise^2 x ln(n) and both
   parts last at least `min_seconds`. The noise is estimated robustly from neighbouring seconds (the median absolute
   difference), so a split needs a change the second-to-second scatter cannot explain.
3. The reference is the best level the series held for `min_seconds` or more (the highest segment of IOPS or MB/s,
   the lowest of latency). Segments worse than `fraction` of it (IOPS or MB/s below fraction x reference; latency
   above reference / fraction) are findings; neighbouring ones are one finding. A finding that lasts to the end of
   the series is a step (the level never came back). A latency rise of less than `lat_floor_ns` over the
   reference is none (50 µs by default): smaller rises are as often the host's scheduling as the storage.
4. A finding of IOPS or MB/s begins and ends inside a second, not on its boundary: each edge is placed within the
   seconds beside it by the share of each second spent at the finding's level (a second at 70 % between a level of
   100 % before and 10 % during spent a third of its time at 10 %: at its end, for the start edge). Without a level
   beside it (the series' first or last second) the edge stays at the boundary; latency findings keep whole seconds
   (a second's mean latency is weighted by its IOs, not its time).
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ptsbench.drops.rule import DropRule
from ptsbench.fio.iosize import io_size
from ptsbench.fio.versions import version_tuple

METRICS = ("iops", "bw", "lat")  # per second: IOs/s, bytes/s, mean total latency in ns
DIRECTIONS = ("read", "write", "trim")
PENALTY = 2.0
SHORT_INTERVAL = 0.5  # of the median interval: shorter intervals (the job's last, cut short) are left out


# the host's state per second: CPU busy and stolen (% of all CPUs), the largest share of the second one of fio's
# processes waited for a CPU (fio/waits.py), how late fio read the second's IO counts after its bytes (ms)
HOST_SIGNS = ("cpu_busy_pct", "cpu_steal_pct", "fio_wait_pct", "status_lag_ms")
IOPS_FROM_BYTES = "bytes / IO size"  # IOPS over the same span as MB/s
IOPS_FROM_COUNTS = "IO counts"  # IOPS over the span of the IO counts (a direction of several IO sizes)


@dataclass(frozen=True)
class Seconds:
    """One job's per-second values of one direction: interval end times (the job's own clock, s), the metrics, the
    bytes of this direction and the bytes written by the job before each interval, and the host's state in each
    second (HOST_SIGNS, NaN where unknown)."""

    # when the second's bytes were read, on the job's clock: the document's runtime (fio 3.19 to 3.41), or its IO
    # counts' moment (fio 3.42 and newer: see BYTES_AFTER_WAIT); a short interval left out before it does not count
    start_s: np.ndarray
    end_s: np.ndarray
    values: Mapping[str, np.ndarray]  # metric -> per interval (latency NaN where no IO completed)
    done_before_bytes: np.ndarray
    written_before_bytes: np.ndarray
    host: Mapping[str, np.ndarray]  # HOST_SIGNS -> per interval
    iops_from: str = IOPS_FROM_BYTES
    io_size_bytes: int | None = None  # the direction's one IO size, when it has one
    sample: np.ndarray | None = None  # each second's document: its index in the stored columns


@dataclass(frozen=True)
class Drop:
    """A stretch of a series worse than the rule allows: when (job time, s), how long, how deep, what was done by
    then. Levels are in the metric's unit (IOPS, bytes/s, ns)."""

    metric: str
    direction: str
    start_s: float
    end_s: float
    reference: float  # the best level held for min_seconds
    level: float  # the mean during the drop
    worst: float  # its worst second
    done_bytes: int  # bytes of this direction done when it began
    written_bytes: int  # bytes the job had written when it began
    to_end: bool  # lasted to the end of the series: a step
    first: int  # index of its first second in the series
    stop: int  # index after its last second

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s

    @property
    def fraction(self) -> float:
        """The level during the drop as a share of the reference, oriented so that lower is worse (latency: the
        reference over the level)."""
        if self.metric == "lat":
            return self.reference / self.level if self.level else 1.0
        return self.level / self.reference if self.reference else 1.0


BYTES_AFTER_WAIT = (3, 42)  # from this fio on, a document's bytes are read after its wait for the workers, with
# the IO counts (fio commit 00084f95, stat.c __show_running_run_stats); before it, with the runtime


def per_second(columns: Mapping[str, Sequence[float | None]], fio_version: str | None = None,
               running: bool = False) -> dict[str, Seconds]:
    """A job's stored cumulative columns (SecondSamples) as per-second values per direction; `fio_version` (as
    stored beside them) says whether the bytes were read with the runtime or with the IO counts; `running`: the job
    goes on (the metrics exporter reads its samples as they come), see io_size."""
    runtime_ms = np.asarray(columns.get("runtime_ms") or [], dtype=float)
    if len(runtime_ms) == 0:
        return {}
    runtime_s = runtime_ms / 1000
    # spans from the whole milliseconds (exact), divided once: a difference of two quotients rounds twice, so the same
    # second, its IOPS from bytes over this span or from counts over the counts' span, came out an ulp apart
    step_s = np.diff(runtime_ms, prepend=0.0) / 1000
    keep = step_s >= SHORT_INTERVAL * float(np.median(step_s))
    keep[-1] = False
    counted_ms = _counted_ms(columns, runtime_ms)
    counted_step_s = np.diff(np.nan_to_num(counted_ms, nan=0.0), prepend=0.0) / 1000
    counted_step_s = np.where(np.isnan(counted_ms), step_s, counted_step_s)  # old samples: the runtime's span
    version = version_tuple(fio_version) if fio_version else None
    with_counts = version is not None and version >= BYTES_AFTER_WAIT and not np.isnan(counted_ms).any()
    bytes_step_s = counted_step_s if with_counts else step_s
    bytes_end_s = counted_ms / 1000 if with_counts else runtime_s  # the moment a second's bytes were read
    written = np.asarray(columns.get("write_bytes") or np.zeros(len(runtime_s)), dtype=float)
    host = {key: _known(columns.get(key), len(runtime_s)) for key in HOST_SIGNS if key != "status_lag_ms"}
    host["status_lag_ms"] = counted_ms - runtime_ms
    found = {}
    for direction in DIRECTIONS:
        if f"{direction}_ios" not in columns:
            continue
        ios, done, lat_sum = (np.asarray(columns[f"{direction}_{name}"], dtype=float)
                              for name in ("ios", "bytes", "lat_ns_sum"))
        d_ios, d_bytes = np.diff(ios, prepend=0.0), np.diff(done, prepend=0.0)
        size = io_size(columns[f"{direction}_bytes"], columns[f"{direction}_ios"], running)
        with np.errstate(divide="ignore", invalid="ignore"):
            lat = np.where(d_ios > 0, np.diff(lat_sum, prepend=0.0) / d_ios, np.nan)
            iops = d_bytes / size / bytes_step_s if size else np.where(counted_step_s > 0, d_ios / counted_step_s,
                                                                       np.nan)
            values = {"iops": iops, "bw": d_bytes / bytes_step_s, "lat": lat}
        found[direction] = Seconds(
            (bytes_end_s - bytes_step_s)[keep], bytes_end_s[keep], {k: v[keep] for k, v in values.items()},
            (done - d_bytes)[keep], (written - np.diff(written, prepend=0.0))[keep],
            {key: values[keep] for key, values in host.items()}, IOPS_FROM_BYTES if size else IOPS_FROM_COUNTS, size,
            np.flatnonzero(keep))
    return found


def _known(values: Sequence[float | None] | None, length: int) -> np.ndarray:
    return np.asarray([math.nan if v is None else v for v in values or [None] * length], dtype=float)


def _counted_ms(columns: Mapping[str, Sequence[float | None]], runtime_ms: np.ndarray) -> np.ndarray:
    """The job time (ms) at which fio read each sample's IO counts and latencies: the document's time less the
    job's start on that clock (the smallest gap of all samples, a document read without delay); NaN where not
    stored (runs made before)."""
    stamps = columns.get("status_unix_ms")
    if not stamps or len(stamps) != len(runtime_ms) or any(stamp is None for stamp in stamps):
        return np.full(len(runtime_ms), np.nan)
    gap_ms = np.asarray(stamps, dtype=float) - runtime_ms
    return runtime_ms + gap_ms - float(gap_ms.min())


def noise(values: np.ndarray) -> float:
    """The second-to-second scatter (a standard deviation), robust to steps and single outliers, at least 1 % of
    the level."""
    if len(values) < 3:
        return max(abs(float(np.median(values))) * 0.01, 1e-12) if len(values) else 1e-12
    scatter = 1.4826 * float(np.median(np.abs(np.diff(values)))) / math.sqrt(2)
    return max(scatter, abs(float(np.median(values))) * 0.01, 1e-12)


def _best_split(values: np.ndarray, min_len: int, penalty: float) -> int | None:
    length = len(values)
    if length < 2 * min_len:
        return None
    sums = np.cumsum(values)
    total = sums[-1]
    at = np.arange(min_len, length - min_len + 1)
    left = sums[at - 1]
    gain = left**2 / at + (total - left) ** 2 / (length - at) - total**2 / length
    best = int(np.argmax(gain))
    return int(at[best]) if gain[best] > penalty else None


def segments(values: np.ndarray, min_len: int) -> list[tuple[int, int]]:
    """[start, stop) index pairs of the series' segments of steady level (binary segmentation, see above)."""
    penalty = PENALTY * noise(values) ** 2 * math.log(max(len(values), 2))
    todo, done = [(0, len(values))], []
    while todo:
        start, stop = todo.pop()
        split = _best_split(values[start:stop], max(min_len, 1), penalty)
        if split is None:
            done.append((start, stop))
        else:
            todo += [(start, start + split), (start + split, stop)]
    return sorted(done)


def find_drops(series: Seconds, direction: str, rule: DropRule) -> list[Drop]:
    """Every drop and step of IOPS, MB/s and latency in one direction's series (overlapping IOPS and MB/s findings
    are one event: the MB/s one is kept)."""
    found: list[Drop] = []
    for metric in ("bw", "iops", "lat"):
        for drop in _metric_drops(series, direction, metric, rule):
            if metric == "iops" and any(o.metric == "bw" and o.first < drop.stop and drop.first < o.stop
                                        for o in found):
                continue
            found.append(drop)
    return found


def _metric_drops(series: Seconds, direction: str, metric: str, rule: DropRule) -> list[Drop]:
    raw = series.values[metric]
    known = ~np.isnan(raw)
    if known.sum() < max(rule.min_seconds, 1) * 2:
        return []
    index = np.flatnonzero(known)
    values = raw[known]
    parts = segments(values, rule.min_seconds)
    levels = [float(values[start:stop].mean()) for start, stop in parts]
    higher_is_better = metric != "lat"
    reference = max(levels) if higher_is_better else min(levels)
    if reference <= 0:
        return []
    worse = [level < rule.fraction * reference if higher_is_better
             else level * rule.fraction > reference and level - reference >= rule.lat_floor_ns for level in levels]
    drops = []
    position = 0
    while position < len(parts):
        if not worse[position]:
            position += 1
            continue
        last = position
        while last + 1 < len(parts) and worse[last + 1]:
            last += 1
        start, stop = parts[position][0], parts[last][1]
        first, after = int(index[start]), int(index[stop - 1]) + 1
        during = values[start:stop]
        start_s, end_s = float(series.start_s[first]), float(series.end_s[after - 1])
        # the levels beside it and during it, as their medians (a second half at each level does not move them)
        high_before, high_after = (float(np.median(values[slice(*parts[at])])) if 0 <= at < len(parts) else None
                                   for at in (position - 1, last + 1))
        if metric != "lat":  # edges inside the seconds beside them (rule 4)
            low = float(np.median(during))
            if high_before is not None:  # the end of its first second less the time spent low
                start_s = float(series.end_s[first]) - _low_time_s(series, metric, index[start - 1: start + 1], 1,
                                                                   high_before, low)
            if high_after is not None:  # the start of its last second plus the time spent low
                end_s = float(series.start_s[after - 1]) + _low_time_s(series, metric, index[stop - 1: stop + 1], 0,
                                                                       high_after, low)
        before = int(index[start - 1]) if position > 0 else first
        done_bytes, written_bytes = _done_at(series, metric, (before, first), start_s, high_before,
                                             direction == "write")
        drops.append(Drop(
            metric, direction, start_s, end_s, reference, float(during.mean()),
            float(during.min() if higher_is_better else during.max()), done_bytes, written_bytes,
            stop == len(values), first, after))
        position = last + 1
    return drops


def _low_share(series: Seconds, metric: str, second: int, high: float, low: float) -> float:
    """The share of one second spent at the level `low` rather than `high` (0 to 1), from its value; 0 where the
    levels do not differ."""
    if high <= low:
        return 0.0
    return min(1.0, max(0.0, (high - float(series.values[metric][second])) / (high - low)))


def _length_s(series: Seconds, second: int) -> float:
    return float(series.end_s[second] - series.start_s[second])


def _low_time_s(series: Seconds, metric: str, pair: np.ndarray, inner: int, high: float, low: float) -> float:
    """How long a drop's edge second (`pair[inner]`, its first or last) and its neighbour outside it (the other of
    `pair`, in time order), when the two touch, spent at the drop's level `low` rather than `high`."""
    seconds = [int(pair[inner])]
    if abs(series.end_s[pair[0]] - series.start_s[pair[1]]) < 1e-3:
        seconds.append(int(pair[1 - inner]))
    return sum(_low_share(series, metric, second, high, low) * _length_s(series, second) for second in seconds)


def _done_at(series: Seconds, metric: str, pair: tuple[int, int], start_s: float, high: float | None,
             writes: bool) -> tuple[int, int]:
    """The bytes of the direction done, and the bytes the job had written, when a drop began at `start_s` (`pair`:
    the second before the drop's first, and its first): those before the second holding that moment, and the part
    of that second's bytes done at the level `high` before the drop (for the written bytes: where the direction is
    written; else those written before that second)."""
    second = pair[0] if start_s < series.start_s[pair[1]] else pair[1]
    done, written = int(series.done_before_bytes[second]), int(series.written_before_bytes[second])
    high_s, value = start_s - float(series.start_s[second]), float(series.values[metric][second])
    if high is None or high_s <= 0 or value <= 0:
        return done, written
    second_bytes = float(series.values["bw"][second]) * _length_s(series, second)
    part = round(min(second_bytes, second_bytes * high * high_s / (value * _length_s(series, second))))
    return done + part, written + part if writes else written


def seconds_against_median(series: Seconds, metric: str = "iops") -> list[tuple[float, float]]:
    """Every second as a share of the series' median, and when it ended (s); [] without a median above 0."""
    values = series.values[metric]
    median = float(np.median(values)) if len(values) else 0.0
    if median <= 0:
        return []
    return [(float(value) / median, float(end_s)) for value, end_s in zip(values, series.end_s, strict=True)]


def lowest_second(series: Seconds, metric: str = "iops") -> tuple[float, float] | None:
    """The worst second as a share of the series' median (IOPS, MB/s: lowest / median), and when it ended (s);
    None without a second with IO."""
    values = series.values[metric]
    if not len(values):
        return None
    median = float(np.median(values))
    if median <= 0:
        return None
    worst = int(np.argmin(values))
    return float(values[worst]) / median, float(series.end_s[worst])
