"""Drops and steps in one job's per-second IOPS, MB/s and latency: pure numbers in, findings out.

The rule, as docs/drops.md states it:
1. Per-second values are differences of fio's cumulative status numbers (fio/intervals.py SecondSamples); the
   job's last interval (cut short by its end, or holding its wind-down) and any interval shorter than half the
   usual one are left out.
2. The series is cut into segments of steady level by binary segmentation on the mean (least squares): a segment is
   split where the split lowers the squared error most, when that gain exceeds PENALTY x noise^2 x ln(n) and both
   parts last at least `min_seconds`. The noise is estimated robustly from neighbouring seconds (the median absolute
   difference), so a split needs a change the second-to-second scatter cannot explain.
3. The reference is the best level the series held for `min_seconds` or more (the highest segment of IOPS or MB/s,
   the lowest of latency). Segments worse than `fraction` of it (IOPS or MB/s below fraction x reference; latency
   above reference / fraction) are findings; neighbouring ones are one finding. A finding that lasts to the end of
   the series is a step (the level never came back). A latency rise of less than `lat_floor_ns` over the
   reference is none (50 µs by default): smaller rises are as often the host's scheduling as the storage.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

METRICS = ("iops", "bw", "lat")  # per second: IOs/s, bytes/s, mean total latency in ns
DIRECTIONS = ("read", "write", "trim")
PENALTY = 2.0
SHORT_INTERVAL = 0.5  # of the median interval: shorter intervals (the job's last, cut short) are left out


@dataclass(frozen=True)
class DropRule:
    """What counts as a drop: worse than `fraction` of the reference level for at least `min_seconds` (a latency
    rise: also by `lat_floor_ns` at least)."""

    fraction: float = 0.8
    min_seconds: int = 3
    lat_floor_ns: float = 50_000.0


@dataclass(frozen=True)
class Seconds:
    """One job's per-second values of one direction: interval end times (the job's own clock, s), the metrics, the
    bytes of this direction and the bytes written by the job before each interval, and what was measured beside
    (host CPU busy %, None where unknown)."""

    end_s: np.ndarray
    values: Mapping[str, np.ndarray]  # metric -> per interval (latency NaN where no IO completed)
    done_before_bytes: np.ndarray
    written_before_bytes: np.ndarray
    cpu_busy_pct: np.ndarray

    @property
    def start_s(self) -> np.ndarray:
        return self.end_s - np.diff(self.end_s, prepend=0.0)


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


def per_second(columns: Mapping[str, Sequence[float | None]]) -> dict[str, Seconds]:
    """A job's stored cumulative columns (SecondSamples) as per-second values per direction."""
    runtime_s = np.asarray(columns.get("runtime_ms") or [], dtype=float) / 1000
    if len(runtime_s) == 0:
        return {}
    step_s = np.diff(runtime_s, prepend=0.0)
    keep = step_s >= SHORT_INTERVAL * float(np.median(step_s))
    keep[-1] = False
    written = np.asarray(columns.get("write_bytes") or np.zeros(len(runtime_s)), dtype=float)
    cpu = np.asarray([math.nan if v is None else v for v in columns.get("cpu_busy_pct") or [None] * len(runtime_s)],
                     dtype=float)
    found = {}
    for direction in DIRECTIONS:
        if f"{direction}_ios" not in columns:
            continue
        ios, done, lat_sum = (np.asarray(columns[f"{direction}_{name}"], dtype=float)
                              for name in ("ios", "bytes", "lat_ns_sum"))
        d_ios = np.diff(ios, prepend=0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            lat = np.where(d_ios > 0, np.diff(lat_sum, prepend=0.0) / d_ios, np.nan)
        values = {"iops": d_ios / step_s, "bw": np.diff(done, prepend=0.0) / step_s, "lat": lat}
        found[direction] = Seconds(runtime_s[keep], {k: v[keep] for k, v in values.items()},
                                   (done - np.diff(done, prepend=0.0))[keep],
                                   (written - np.diff(written, prepend=0.0))[keep], cpu[keep])
    return found


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
        drops.append(Drop(
            metric, direction, float(series.start_s[first]), float(series.end_s[after - 1]), reference,
            float(during.mean()), float(during.min() if higher_is_better else during.max()),
            int(series.done_before_bytes[first]), int(series.written_before_bytes[first]), stop == len(values),
            first, after))
        position = last + 1
    return drops


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
