"""From fio logs to what a chart shows: per run (one log, or the per-job logs of one run merged by time) a trace
per direction (read, write, trim) and their total, at full resolution, in base units (bytes/s, IO/s, ns).

- Windowed logs (log_avg_msec) are used as fio wrote them; several jobs are merged by time with interval-overlap
  weighting (fio's tools/fiologparser.py): summed for bw and iops, averaged for latency.
- Per-IO logs (no log_avg_msec) keep every IO for latency; bandwidth and IOPS become rates per interval from the
  IOs' block sizes and completion times (fio's per-IO bandwidth value is one IO's size over its latency, not a rate).
"""

import datetime
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ptsbench.errors import PtsbenchError
from ptsbench.fio.log_jobs import AskedInterval
from ptsbench.fio.log_merge import fio_percentiles, hist_percentiles, hist_step_ms, merge_events, merge_windowed
from ptsbench.fio.logs import DDIR_NAMES, FioLog, HistLog
from ptsbench.plot.counting import CountedStats, merged_counts, stats_of_counts, value_counts

Array = npt.NDArray[Any]
SUMMARY_PERCENTILES = (50.0, 90.0, 99.0, 99.9)
RATE_KINDS = ("bw", "iops")


@dataclass(frozen=True, eq=False)
class Trace:
    """One direction of one run: points in time order, values in base units, data written so far at each point."""

    direction: str  # read, write, trim or total
    time: Array  # where each point ends (a window's or interval's end, an IO's completion), in time_unit_s
    value: Array
    written_bytes: Array | None = None
    start_s: Array | None = None  # windowed points: where each window starts; None: at the previous point
    time_unit_s: float = 1.0  # per-IO traces keep fio's integer milliseconds (0.001): 10 M float copies cost more
    # than reading the log, and a chart only needs their min and max per pixel column

    @cached_property
    def time_s(self) -> Array:
        """`time` in seconds (made on first use from milliseconds)."""
        if self.time_unit_s == 1.0:
            return self.time
        return np.multiply(self.time, self.time_unit_s, dtype=np.float64)


@dataclass(frozen=True, eq=False)
class Run:
    """What one run's logs show."""

    label: str
    kind: str  # bw, iops, lat, clat, slat
    paths: tuple[Path, ...]
    traces: tuple[Trace, ...]
    note: str  # how the values were formed, for the caption
    mean_total: float | None = None  # time-weighted mean of the total (bw, iops), for the 3D view
    read_share: float | None = None  # reads' share of the IOs (or of the data, for windowed logs)
    bs_bytes: int | None = None  # the most common block size of a per-IO log
    over: str = ""  # what one value is, for the summary ('IOs', '100 ms intervals', '100 ms window means')
    interval: str = ""  # the interval used and where it came from ('interval 250 ms, from the job's log_avg_msec')

    def trace(self, direction: str) -> Trace | None:
        return next((trace for trace in self.traces if trace.direction == direction), None)


@dataclass(frozen=True, eq=False)
class HistRun:
    """Latency percentiles over time from histogram logs, per direction."""

    label: str
    paths: tuple[Path, ...]
    percentiles: tuple[float, ...]
    lines: tuple[Any, ...]  # HistPercentiles per direction
    totals: tuple[tuple[str, Array, Array], ...]  # (direction, bin values ns, counts over the whole run)
    note: str
    interval: str = ""  # the interval of the percentile lines and where it came from
    fio_ios: Any = None  # direction -> the IOs fio's JSON output counted for the job (Mapping), when found
    fio_ios_source: Path | None = None


@dataclass(frozen=True)
class Summary:
    """Statistics of the values a chart shows, in base units."""

    run: str
    kind: str
    direction: str
    unit: str
    count: int
    min: float
    mean: float
    max: float
    stddev: float
    percentiles: tuple[tuple[float, float], ...]
    over: str = ""  # what the statistics are over: 'IOs', '100 ms intervals; the last 3 ms (partial) left out', ...


BASE_UNITS = {"bw": "B/s", "iops": "IO/s", "lat": "ns", "clat": "ns", "slat": "ns", "hist": "ns"}


# --- value logs -------------------------------------------------------------------------------------------------


def build_run(logs: Sequence[FioLog], label: str, interval_ms: float | None = None,
              need_written: bool = False, asked: AskedInterval | None = None) -> Run:
    """The traces of one run from its logs (one file, or the per-job files of one run). The interval is
    `interval_ms` (--interval) when given, else the one the job asked for (`asked`), else read off the time stamps."""
    kinds = {log.kind for log in logs}
    if len(kinds) != 1:
        raise PtsbenchError(f"{label}: logs of different kinds ({', '.join(sorted(kinds))}) in one run",
                            "plot each kind on its own with --kind")
    windowed = {log.windowed for log in logs}
    if len(windowed) != 1:
        raise PtsbenchError(f"{label}: some logs are per IO and some averaged (log_avg_msec)",
                            "plot them separately")
    kind = kinds.pop()
    paths = tuple(log.path for log in logs)
    logs, origin = _from_start(logs)
    if windowed.pop():
        run = _windowed_run(logs, label, kind, paths, interval_ms, need_written, asked)
    else:
        run = _per_io_run(logs, label, kind, paths, interval_ms, need_written)
    return replace(run, note=f"{run.note}; time since {origin}") if origin else run


EPOCH_MS = 10**11  # time stamps past this (1973) are wall-clock (log_unix_epoch, log_alternate_epoch)


def _from_start(logs: Sequence[FioLog]) -> tuple[list[FioLog], str]:
    """Logs whose time stamps are wall-clock milliseconds, moved to start at 0 (and that start, for the caption)."""
    first = min(int(log.time_ms.min()) for log in logs)
    if first < EPOCH_MS:
        return list(logs), ""
    origin = first - first % 1000
    moved = [replace(log, columns={**log.columns, "time_ms": log.time_ms.astype(np.int64) - origin}) for log in logs]
    stamp = datetime.datetime.fromtimestamp(origin / 1000, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return moved, stamp


MAX_INTERVALS = 5_000_000


def check_intervals(span_ms: float, interval_ms: float) -> None:
    """Refuse interval grids too fine to hold in memory."""
    if span_ms / interval_ms > MAX_INTERVALS:
        raise PtsbenchError(f"{span_ms / interval_ms:,.0f} intervals of {interval_ms:g} ms is too many to draw",
                            f"use a larger --interval (at least {span_ms / MAX_INTERVALS:,.0f} ms)")


def _scale(kind: str) -> float:
    return 1024.0 if kind == "bw" else 1.0  # bw logs are in KiB/s


def interval_of(interval_ms: float | None, asked: AskedInterval | None, guess_ms: float,
                option: str = "log_avg_msec") -> tuple[float, str]:
    """The interval of an averaged or histogram log and where it came from: --interval, else the job's
    log_avg_msec (log_hist_msec), else `guess_ms` read off fio's time stamps (which drift from the job's value)."""
    if interval_ms is not None:
        return interval_ms, f"interval {interval_ms:g} ms, from --interval"
    if asked is not None and asked.interval_ms:
        return float(asked.interval_ms), f"interval {asked.interval_ms} ms, from the job's {asked.option} " \
                                         f"({asked.source})"
    why = "no job given" if asked is None else asked.missing or f"the job in {asked.source} sets none"
    return guess_ms, (f"interval about {round(guess_ms)} ms, inferred from the time stamps: the job's "
                      f"{asked.option if asked else option} was not found ({why})")


def _windowed_run(logs: Sequence[FioLog], label: str, kind: str, paths: tuple[Path, ...],
                  interval_ms: float | None, need_written: bool, asked: AskedInterval | None) -> Run:
    jobs = sum(len(log.segments()) for log in logs)
    step, said = interval_of(interval_ms, asked, _step_ms(logs[0].time_ms.astype(np.int64)[logs[0].segments()[0]]))
    from_job = interval_ms is None and asked is not None and bool(asked.interval_ms)
    as_written = jobs == 1 and interval_ms is None  # fio's windows, which drift from the interval asked
    window = f"about {round(step)} ms" if as_written and not from_job else f"{step:g} ms"
    how = "sum" if kind in RATE_KINDS else "mean"
    scale = _scale(kind)
    traces: list[Trace] = []
    if as_written:  # --interval re-bins it by time
        log = logs[0]
        time_ms = log.time_ms.astype(np.int64)
        value = log.value.astype(np.float64) * scale
        for d in np.unique(log.ddir).tolist():
            chosen = log.ddir == d
            traces.append(_windowed_trace(DDIR_NAMES.get(d, str(d)), time_ms[chosen], value[chosen]))
        if kind in RATE_KINDS and len(traces) > 1:  # one direction: a total would only repeat it
            stamps, inverse = np.unique(time_ms, return_inverse=True)
            traces.append(_windowed_trace("total", stamps, np.bincount(inverse, weights=value)))
        note = f"log_avg_msec samples as fio wrote them ({window} windows)"
    else:
        check_intervals(max(float(log.time_ms.max()) for log in logs), step)
        merged = merge_windowed(logs, step, how)
        for series in merged:
            traces.append(_windowed_trace(DDIR_NAMES.get(series.ddir, str(series.ddir)), series.end_ms,
                                          series.value * scale, series.start_ms))
        if kind in RATE_KINDS and len(merged) > 1:  # the directions share one grid, to the end of the longest log
            total = np.sum([series.value for series in merged], axis=0) * scale
            traces.append(_windowed_trace("total", merged[0].end_ms, total, merged[0].start_ms))
        verb = "summed" if how == "sum" else "averaged"
        what = f"{jobs} jobs merged" if jobs > 1 else "samples re-binned"
        note = f"{what} by time in {step:g} ms intervals (interval-overlap weighted, {verb})"
    if need_written:
        traces = _with_written(traces, kind, label)
    total_trace = next((t for t in traces if t.direction == "total"), None)
    mean_total, read_share = None, None
    if total_trace is not None and len(total_trace.time_s):
        durations = _durations(total_trace)
        mean_total = float(np.dot(total_trace.value, durations) / durations.sum())
        read = next((t for t in traces if t.direction == "read"), None)
        read_amount = float(np.dot(read.value, _durations(read))) if read is not None else 0.0
        read_share = read_amount / float(np.dot(total_trace.value, durations))
    over = f"{window} {'windows' if as_written else 'intervals'}"
    if as_written:  # fio's windows drift from the interval asked: say how long they really were
        lengths_ms = np.concatenate([_durations(t)[:-1] for t in traces if t.direction != "total"]) * 1000
        shortest_ms, longest_ms = (lengths_ms.min(), lengths_ms.max()) if len(lengths_ms) else (step, step)
        if shortest_ms != longest_ms:
            over += f" (as fio wrote them: {shortest_ms:,.0f} to {longest_ms:,.0f} ms, the last left aside)"
        elif shortest_ms != step:  # (a loaded host can stretch every window alike)
            over += f" (as fio wrote them: {shortest_ms:,.0f} ms each, the last left aside)"
    if kind not in RATE_KINDS:
        over += " (their mean latencies)"
    return Run(label, kind, paths, tuple(traces), f"windowed log: {note}", mean_total, read_share, over=over,
               interval=said)


def _windowed_trace(direction: str, end_ms: Array, value: Array, start_ms: Array | None = None) -> Trace:
    start = None if start_ms is None else np.asarray(start_ms, np.float64) / 1000.0
    return Trace(direction, np.asarray(end_ms, np.float64) / 1000.0, np.asarray(value, np.float64), None, start)


def _durations(trace: Trace) -> Array:
    """Seconds each windowed sample stands for."""
    start = trace.start_s
    if start is None:
        start = np.concatenate(([0.0], trace.time_s[:-1]))
    return np.maximum(trace.time_s - start, 0.0)


def _with_written(traces: list[Trace], kind: str, label: str) -> list[Trace]:
    if kind != "bw":
        raise PtsbenchError(f"{label}: averaged {kind} logs do not say how much data was written",
                            "use --x written with a bw log, or with logs written without log_avg_msec")
    write = next((t for t in traces if t.direction == "write"), None)
    if write is None:
        raise PtsbenchError(f"{label}: the log has no writes", "--x written needs a log with writes")
    cumulative = np.cumsum(write.value * _durations(write))
    return [Trace(t.direction, t.time_s, t.value, np.interp(t.time_s, write.time_s, cumulative, left=0.0), t.start_s)
            for t in traces]


def _step_ms(time_ms: Array) -> float:
    steps = np.diff(np.unique(time_ms))
    return float(np.median(steps)) if len(steps) else 1000.0


def default_interval_ms(span_ms: float) -> float:
    """Rate intervals for per-IO logs: 1 s, or a hundredth of a run shorter than 100 s (at least 1 ms)."""
    return 1000.0 if span_ms >= 100_000 else max(1.0, float(round(span_ms / 100.0)))


def _per_io_run(logs: Sequence[FioLog], label: str, kind: str, paths: tuple[Path, ...], interval_ms: float | None,
                need_written: bool) -> Run:
    events = merge_events(logs)
    time_ms = events.time_ms
    last_ms = float(time_ms[-1])
    written = None
    if need_written:
        written = np.cumsum(np.where(events.ddir == 1, events.bs_bytes, 0), dtype=np.int64)
    ios = [int(np.count_nonzero(events.ddir == d)) for d in DDIR_NAMES]  # (bincount would copy ddir as int64)
    present = [d for d in DDIR_NAMES if ios[d]]
    bs_values, bs_counts = np.unique(events.bs_bytes[:1_000_000], return_counts=True)
    bs_mode = int(bs_values[bs_counts.argmax()])
    read_share = float(ios[0]) / len(events.ddir)
    if kind in RATE_KINDS:
        interval = float(interval_ms or default_interval_ms(last_ms))
        said = (f"interval {interval:g} ms, from --interval" if interval_ms is not None else
                f"interval {interval:g} ms, a hundredth of the run (at most 1 s)") + \
            ": the log has a line per IO (no log_avg_msec), counted per interval"
        check_intervals(last_ms, interval)
        span_ms = last_ms + 1  # the last IO completed within its millisecond
        # only whole intervals: a partial last one (often a few ms) would read its IOs as a rate up to several
        # times what fio measured; a log shorter than one interval is one interval of its true width
        slots = max(int(span_ms // interval), 1)
        width_ms = interval if span_ms >= interval else span_ms
        left_out_ms = span_ms - slots * interval if span_ms >= interval else 0.0
        slot = (time_ms // interval).astype(np.int64) if interval != 1 else time_ms.astype(np.int64)
        kept = slot < slots
        end_ms = (np.arange(slots) + 1) * width_ms
        weights = events.bs_bytes if kind == "bw" else None
        write_bytes = np.bincount(slot[kept], weights=np.where(events.ddir == 1, events.bs_bytes, 0)[kept],
                                  minlength=slots)
        written_at = np.cumsum(write_bytes) if need_written else None
        traces = []
        for name, chosen in [*((DDIR_NAMES[d], events.ddir == d) for d in present), ("total", None)]:
            picked = kept if chosen is None else kept & chosen
            picked_weights = None if weights is None else weights[picked]
            amount = np.bincount(slot[picked], weights=picked_weights, minlength=slots)
            traces.append(Trace(name, end_ms / 1000.0, amount / (width_ms / 1000.0), written_at))
        total_amount = float(events.bs_bytes.sum(dtype=np.float64)) if kind == "bw" else float(len(time_ms))
        mean_total = total_amount / (span_ms / 1000.0)
        over = f"{width_ms:g} ms intervals"
        if left_out_ms:
            over += f"; the last {left_out_ms:g} ms (a partial interval) left out"
        note = f"per-IO log: {'data' if kind == 'bw' else 'IOs'} completed per {over}"
        return Run(label, kind, paths, tuple(traces), note, mean_total, read_share, bs_mode, over, said)
    columns = [time_ms, events.value] if written is None else [time_ms, events.value, written]
    split = _by_direction(events.ddir, ios, present, columns)
    traces = [Trace(DDIR_NAMES[d], split[d][0], split[d][1], split[d][2] if written is not None else None,
                    time_unit_s=0.001) for d in present]
    traces.append(Trace("total", time_ms, events.value, written, time_unit_s=0.001))
    return Run(label, kind, paths, tuple(traces), f"per-IO log: every IO's {kind}", None, read_share, bs_mode, "IOs")


_SPLIT_CHUNK = 1 << 20


def _by_direction(ddir: Array, ios: Sequence[int], present: Sequence[int], columns: Sequence[Array]
                  ) -> dict[int, list[Array]]:
    """Each present direction's values of the columns, in order. A chunk at a time: an index of every IO (80 MB
    for 10 M IOs) is fresh memory the kernel must zero, which cost more than the split itself; take() by index is
    several times faster than a boolean mask."""
    split = {d: [np.empty(int(ios[d]), column.dtype) for column in columns] for d in present}
    filled = dict.fromkeys(present, 0)
    for start in range(0, len(ddir), _SPLIT_CHUNK):
        part = slice(start, start + _SPLIT_CHUNK)
        for d in present:
            at = np.flatnonzero(ddir[part] == d)
            end = filled[d] + len(at)
            for column, out in zip(columns, split[d], strict=True):
                np.take(column[part], at, out=out[filled[d]:end])
            filled[d] = end
    return split


# --- histogram logs ---------------------------------------------------------------------------------------------


def build_hist_run(logs: Sequence[HistLog], label: str, percentiles: Sequence[float],
                   interval_ms: float | None = None, asked: AskedInterval | None = None) -> HistRun:
    """Percentiles over time per direction, and each direction's histogram over the whole run; per interval of
    `interval_ms` (--interval), else of the job's log_hist_msec (`asked`), else of the logs' time stamps' step."""
    first = min(int(log.time_ms.min()) for log in logs)
    if first >= EPOCH_MS:  # wall-clock stamps: from the first one on
        origin = first - first % 1000
        logs = [replace(log, time_ms=log.time_ms.astype(np.int64) - origin) for log in logs]
    step, said = interval_of(interval_ms, asked, hist_step_ms(logs), "log_hist_msec")
    lines = hist_percentiles(logs, percentiles, step)
    ddir = np.concatenate([log.ddir.astype(np.int64) for log in logs])
    counts = np.concatenate([log.counts.astype(np.int64) for log in logs])
    values_ns = logs[0].bin_values_ns
    totals = tuple((DDIR_NAMES.get(d, str(d)), values_ns, counts[ddir == d].sum(axis=0))
                   for d in np.unique(ddir).tolist())
    jobs = f"{len(logs)} jobs' " if len(logs) > 1 else ""
    note = (f"{jobs}histogram log lines summed per interval; percentiles by fio's rule (the first bin whose "
            "cumulative count reaches p, as in fio's JSON output)")
    return HistRun(label, tuple(log.path for log in logs), tuple(percentiles), tuple(lines), totals, note, said,
                   asked.fio_ios if asked is not None else None, asked.fio_ios_source if asked is not None else None)


# --- summaries --------------------------------------------------------------------------------------------------


def summarize(run: Run) -> list[Summary]:
    """Min, mean, max, stddev and percentiles of each trace's values, saying what they are over. A total that is
    the one direction's values again is left out; so is a windowed rate's partial last window or interval (fio's
    last sample at exit, or the end of a re-binned log), whose rate over a few ms is noise."""
    rows = []
    directions = [trace for trace in run.traces if trace.direction != "total"]
    counted: dict[str, tuple[Array, Array]] = {}  # per-IO directions' value counts, for their total
    for trace in run.traces:
        if trace.direction == "total" and len(directions) == 1:
            continue
        values = trace.value  # integers (per-IO latency) are summarised as they are: no float copy of millions
        over = run.over
        if run.kind in RATE_KINDS and run.over != "IOs" and len(values) > 2:
            durations = _durations(trace)
            if durations[-1] < 0.9 * float(np.median(durations)):
                values = values[:-1]
                if "left out" not in over:
                    over += f"; the last {durations[-1] * 1000:g} ms (a partial interval) left out"
        if values.dtype.kind == "f":
            values = values[np.isfinite(values)]
        if not len(values):
            continue
        if values.dtype.kind == "u":  # per-IO integers (latency in ns): counted, not sorted, and no float copy
            parts = [counted[d.direction] for d in directions if d.direction in counted]
            if trace.direction == "total" and sum(int(c.sum()) for _, c in parts) == len(values):
                counted[trace.direction] = merged_counts(parts)  # the directions hold every IO of the total
            else:
                counted[trace.direction] = value_counts(values)
            stats = stats_of_counts(*counted[trace.direction], SUMMARY_PERCENTILES)
        else:
            stats = CountedStats(len(values), float(values.min()), float(values.mean()), float(values.max()),
                                 float(values.std()), tuple(np.percentile(values, SUMMARY_PERCENTILES).tolist()))
        rows.append(Summary(run.label, run.kind, trace.direction, BASE_UNITS[run.kind], stats.count, stats.min,
                            stats.mean, stats.max, stats.stddev,
                            tuple(zip(SUMMARY_PERCENTILES, stats.percentiles, strict=True)), over))
    return rows


def _coverage(run: HistRun, direction: str, logged: int) -> str:
    """How many of the IOs fio counted for the job the histogram log holds (fio does not always log the last
    interval: fio 3.33 left out 9,377 of 55,489 IOs), or that fio's count was not found."""
    counted = (run.fio_ios or {}).get(direction) if run.fio_ios is not None else None
    if not counted:
        return "fio's own IO count not found beside the log (its JSON output): coverage unknown"
    where = run.fio_ios_source.name if run.fio_ios_source is not None else "fio's JSON output"
    return f"the log holds {logged:,} of the {counted:,} IOs fio counted ({logged / counted:.1%}, {where})"


def summarize_hist(run: HistRun) -> list[Summary]:
    """The same statistics from each direction's histogram over the whole run (bin values, weighted by counts)."""
    rows = []
    for direction, values_ns, counts in run.totals:
        total = int(counts.sum())
        if not total:
            continue
        used = np.flatnonzero(counts)
        mean = float(np.dot(values_ns, counts) / total)
        stddev = float(np.sqrt(np.dot(counts, (values_ns - mean) ** 2) / total))
        points = fio_percentiles(SUMMARY_PERCENTILES, values_ns, counts)
        rows.append(Summary(run.label, "hist", direction, "ns", total, float(values_ns[used[0]]), mean,
                            float(values_ns[used[-1]]), stddev,
                            tuple(zip(SUMMARY_PERCENTILES, points.tolist(), strict=True)),
                            f"IOs (fio's histogram bins, each at its middle); {_coverage(run, direction, total)}"))
    return rows
