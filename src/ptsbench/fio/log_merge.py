"""fio logs merged by time (fio's tools/fiologparser.py), and histogram logs as latency percentiles over time
(fiologparser_hist)."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ptsbench.fio.log_table import LogError
from ptsbench.fio.logs import DDIR_NAMES, FioLog, HistLog

Array = npt.NDArray[Any]


@dataclass(frozen=True, eq=False)
class HistPercentiles:
    """Latency statistics per interval from histogram logs, for one direction (or all)."""

    direction: str  # read, write, trim or all
    end_ms: Array
    samples: Array  # IOs counted in each interval
    min_ns: Array
    mean_ns: Array
    max_ns: Array
    percentiles_ns: Mapping[float, Array]  # percentile -> value per interval


def fio_percentiles(percentiles: Sequence[float], values: Array, counts: Array) -> Array:
    """fio's own rule for percentiles of its latency bins (stat.c, calc_clat_percentiles, as in its JSON output):
    the value of the first bin whose cumulative count reaches p % of all IOs; a bin's value is its middle.
    fio's tools/fiologparser_hist.py instead interpolates linearly on the mid-weight CDF between the used bins, so its
    values fall between fio's bins (up to a bin's width apart, at most 1.6 % of the value above 128 ns)."""
    cumulative = np.cumsum(counts.astype(np.float64))
    targets = np.asarray(percentiles, dtype=np.float64) / 100.0 * cumulative[-1]
    index = np.searchsorted(cumulative, targets, side="left")
    return np.asarray(values, dtype=np.float64)[np.minimum(index, len(values) - 1)]


def hist_percentiles(logs: Sequence[HistLog], percentiles: Sequence[float] = (50.0, 99.0, 99.9),
                     interval_ms: float | None = None, split_directions: bool = True) -> list[HistPercentiles]:
    """Percentiles over time from one or more histogram logs (e.g. the per-job logs of one run).

    Each line counts in the interval whose end is nearest its time stamp (fiologparser_hist --noweight, without its
    fixed 10 ms shift); the interval defaults to the logs' own log_hist_msec (the median step between lines)."""
    if not logs:
        return []
    bins = {log.counts.shape[1] for log in logs}
    if len(bins) != 1 or len({log.coarseness for log in logs}) != 1:
        raise LogError("histogram logs with different bin counts cannot be merged", "plot them one at a time")
    values_ns = logs[0].bin_values_ns
    interval = float(interval_ms or hist_step_ms(logs))
    time_ms = np.concatenate([log.time_ms.astype(np.int64) for log in logs])
    ddir = np.concatenate([log.ddir.astype(np.int64) for log in logs])
    counts = np.concatenate([log.counts.astype(np.int64) for log in logs])
    slot = np.rint(time_ms / interval).astype(np.int64)
    groups: list[tuple[str, Array]] = [("all", np.ones(len(ddir), bool))]
    if split_directions:
        groups = [(DDIR_NAMES.get(d, str(d)), ddir == d) for d in np.unique(ddir).tolist()]
    results = []
    for name, chosen in groups:
        slots, inverse = np.unique(slot[chosen], return_inverse=True)
        summed = np.zeros((len(slots), counts.shape[1]), np.int64)
        np.add.at(summed, inverse, counts[chosen])
        results.append(_interval_stats(name, slots * interval, summed, values_ns, percentiles))
    return results


def hist_step_ms(logs: Sequence[HistLog]) -> float:
    """The median step between the lines of histogram logs: about their log_hist_msec."""
    steps = [np.diff(np.unique(log.time_ms.astype(np.int64))) for log in logs]
    joined = np.concatenate(steps) if steps else np.array([])
    return float(np.median(joined)) if len(joined) else 1000.0


def _interval_stats(name: str, end_ms: Array, summed: Array, values_ns: Array,
                    percentiles: Sequence[float]) -> HistPercentiles:
    keep = summed.sum(axis=1) > 0
    end_ms, summed = end_ms[keep], summed[keep]
    table = np.array([fio_percentiles(percentiles, values_ns, row) for row in summed]).reshape(
        len(summed), len(percentiles))
    nonzero = summed > 0
    first = nonzero.argmax(axis=1)
    last = summed.shape[1] - 1 - nonzero[:, ::-1].argmax(axis=1)
    samples = summed.sum(axis=1)
    return HistPercentiles(name, end_ms, samples, values_ns[first], summed @ values_ns / samples, values_ns[last],
                           {p: table[:, i] for i, p in enumerate(percentiles)})


# --- merging by time --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class MergedSeries:
    """Values per interval of several logs merged by time, for one direction."""

    ddir: int
    start_ms: Array
    end_ms: Array
    value: Array


def merge_by_time(samples: Sequence[tuple[Array, Array]], interval_ms: float, how: str = "sum",
                  finish_ms: float | None = None) -> tuple[Array, Array, Array]:
    """Merge sample series (time_ms, value) by time, as fio's tools/fiologparser.py does, over the longest series.

    Each sample covers the time since the previous sample of its series (the first one since 0); a series' value in an
    interval is the overlap-weighted mean of its samples (over the whole interval: a series that has ended counts 0
    for the rest of it). Series are summed (bw, iops) or averaged (latency: over the series that still ran in the
    interval, each over the part it covered). Intervals run from 0 to `finish_ms`, by default the latest last sample
    (fiologparser.py stops at the earliest one, dropping what the longer jobs did after the shortest one ended); the
    last interval may be partial and is weighted by its true width. Returns (start_ms, end_ms, value)."""
    if how not in ("sum", "mean"):
        raise ValueError(f"how must be 'sum' or 'mean', not {how!r}")
    series = [(np.asarray(t, np.float64), np.asarray(v, np.float64)) for t, v in samples if len(t)]
    if not series:
        empty = np.zeros(0)
        return empty, empty, empty
    finish = max(float(t[-1]) for t, _ in series) if finish_ms is None else float(finish_ms)
    if finish <= 0:
        empty = np.zeros(0)
        return empty, empty, empty
    edges = np.arange(0.0, finish, float(interval_ms))
    end_ms = np.minimum(edges + interval_ms, finish)
    total = np.zeros(len(edges))
    active = np.zeros(len(edges))
    for time_ms, value in series:
        knots = np.concatenate(([0.0], time_ms))
        area = np.concatenate(([0.0], np.cumsum(value * np.diff(knots))))
        gained = np.interp(end_ms, knots, area) - np.interp(edges, knots, area)
        covered = np.minimum(end_ms, knots[-1]) - np.minimum(edges, knots[-1])
        if how == "sum":
            total += gained / (end_ms - edges)
        else:
            ran = covered > 0
            total[ran] += gained[ran] / covered[ran]
            active += ran
    if how == "mean":
        ran = active > 0
        return edges[ran], end_ms[ran], total[ran] / active[ran]
    return edges, end_ms, total


def merge_windowed(logs: Sequence[FioLog], interval_ms: float, how: str = "sum") -> list[MergedSeries]:
    """Merge windowed (log_avg_msec) logs of one run by time, per direction: each job is one series (a file with
    per_job_logs=1, a run of rising time stamps with per_job_logs=0). Summed directions share one time grid up to
    the end of the longest series, so they add up to a total."""
    per_ddir: dict[int, list[tuple[Array, Array]]] = {}
    for log in logs:
        time_ms, value, ddir = log.time_ms.astype(np.int64), log.value, log.ddir
        for part in log.segments():
            for d in np.unique(ddir[part]).tolist():
                chosen = ddir[part] == d
                per_ddir.setdefault(int(d), []).append((time_ms[part][chosen], value[part][chosen]))
    ends = [float(t[-1]) for series in per_ddir.values() for t, _ in series if len(t)]
    finish_ms = max(ends) if how == "sum" and ends else None
    merged = []
    for d in sorted(per_ddir):
        start_ms, end_ms, value = merge_by_time(per_ddir[d], interval_ms, how, finish_ms)
        merged.append(MergedSeries(d, start_ms, end_ms, value))
    return merged


@dataclass(frozen=True, eq=False)
class Events:
    """Per-IO log lines of one or more logs in time order (each line is one IO)."""

    time_ms: Array
    value: Array
    ddir: Array
    bs_bytes: Array


def merge_events(logs: Sequence[FioLog]) -> Events:
    """Per-IO logs (no log_avg_msec) of one run merged exactly: every IO line, sorted by time (stable)."""
    if len(logs) == 1 and len(logs[0].segments()) == 1:
        log = logs[0]
        return Events(log.time_ms, log.value, log.ddir, log.bs_bytes)
    time_ms = np.concatenate([log.time_ms.astype(np.int64) for log in logs])
    order = np.argsort(time_ms, kind="stable")
    return Events(time_ms[order], *(np.concatenate([getattr(log, name) for log in logs])[order]
                                    for name in ("value", "ddir", "bs_bytes")))
