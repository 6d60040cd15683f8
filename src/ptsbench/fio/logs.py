"""Readers for fio's bw, iops, lat, clat, slat and histogram logs: file names, columns and their layout, histogram
bins. log_table.py turns a log's text into integer columns; log_merge.py merges logs by time and turns histogram
logs into percentiles.

Lines fio writes (the column count comes from the first line, the meaning of optional columns from the values):
  time_ms, value, [value_max,] ddir, bs_bytes, [offset_bytes,] prio[, issue_time]
  - fio 3.33 writes 5 columns; log_offset=1 adds the offset. Older fio wrote 4 (no priority).
  - newer fio: log_window_value=both adds the window maximum, log_issue_time the issue time, log_prio=1 prints the
    priority in hex (0x0000).
  Histogram logs (write_hist_log): time_ms, ddir, bs_bytes, then one IO count per latency bin.
Without log_avg_msec every IO is a line (bs_bytes > 0); with it each line is a window's mean (or max) and bs_bytes is 0.
Latency values are in ns, bandwidth in KiB/s, IOPS in IO/s.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ptsbench.fio.log_table import LogError, read_table

Array = npt.NDArray[Any]

VALUE_KINDS = ("bw", "iops", "lat", "clat", "slat")
LOG_KINDS = (*VALUE_KINDS, "hist")
DDIR_NAMES = {0: "read", 1: "write", 2: "trim"}
HIST_FIXED_COLUMNS = 3  # time_ms, ddir, bs_bytes before the bins
FIO_IO_U_PLAT_BITS = 6
FIO_IO_U_PLAT_VAL = 1 << FIO_IO_U_PLAT_BITS
HIST_GROUPS = (29, 19)  # FIO_IO_U_PLAT_GROUP_NR: 29 since fio 3.x (1856 bins), 19 before (1216 bins)

_NAME_RE = re.compile(
    r"^(?P<prefix>.*?)_(?P<kind>bw|iops|lat|clat|slat|clat_hist|lat_hist)(?:\.(?P<job>\d+))?\.log"
    r"(?:\.(?P<host>.+))?$"
)


# --- names ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LogName:
    """What a fio log's file name says: P_KIND[.JOB].log[.HOST] (job with per_job_logs=1, host in client mode)."""

    prefix: str
    kind: str  # bw, iops, lat, clat, slat or hist
    job: int | None
    host: str | None

    @property
    def run_key(self) -> tuple[str, str, str | None]:
        """Logs sharing this key are the per-job logs of one run."""
        return self.prefix, self.kind, self.host


def parse_log_name(path: Path | str) -> LogName | None:
    """The parts of a fio log file name, or None when the name is not one fio gives."""
    path = Path(path)
    match = _NAME_RE.match(path.name)
    if match is None:
        return None
    kind = "hist" if match["kind"].endswith("_hist") else match["kind"]
    job = int(match["job"]) if match["job"] is not None else None
    return LogName(str(path.parent / match["prefix"]), kind, job, match["host"])


# --- logs as data -----------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class FioLog:
    """One bw/iops/lat/clat/slat log. Arrays use the smallest unsigned type that holds them: cast before arithmetic.
    Treat them as read-only: a column of one value (often block size, priority) is a read-only view of that value."""

    path: Path
    kind: str
    layout: tuple[str, ...]  # column names, e.g. ("time_ms", "value", "ddir", "bs_bytes", "prio")
    columns: Mapping[str, Array]
    skipped_lines: tuple[int, ...] = ()  # numbers of lines dropped by skip_bad_lines (the first 100)
    skipped_count: int = 0

    @property
    def time_ms(self) -> Array:
        return self.columns["time_ms"]

    @property
    def value(self) -> Array:
        return self.columns["value"]

    @property
    def ddir(self) -> Array:
        return self.columns["ddir"]

    @property
    def bs_bytes(self) -> Array:
        return self.columns["bs_bytes"]

    @property
    def lines(self) -> int:
        return len(self.time_ms)

    @property
    def windowed(self) -> bool:
        """True for log_avg_msec logs (one mean or max per window, block size 0), False for one line per IO."""
        return not bool(self.bs_bytes.any())

    def segments(self) -> list[slice]:
        """Runs of non-decreasing time: with per_job_logs=0 each job's samples follow the previous job's."""
        time_ms = self.time_ms
        starts = np.flatnonzero(time_ms[1:] < time_ms[:-1]) + 1
        edges = [0, *starts.tolist(), len(time_ms)]
        return [slice(a, b) for a, b in zip(edges[:-1], edges[1:], strict=True)]


@dataclass(frozen=True, eq=False)
class HistLog:
    """One write_hist_log log: per line the IO count of every latency bin since the previous line."""

    path: Path
    time_ms: Array
    ddir: Array
    bs_bytes: Array
    counts: Array  # lines x bins
    coarseness: int  # log_hist_coarseness: each bin merges 2**coarseness of fio's bins
    skipped_lines: tuple[int, ...] = ()
    skipped_count: int = 0

    @property
    def lines(self) -> int:
        return len(self.time_ms)

    @property
    def bin_values_ns(self) -> Array:
        return hist_bin_values_ns(self.counts.shape[1], self.coarseness)


# --- reading ----------------------------------------------------------------------------------------------------


def read_log(path: Path | str, kind: str | None = None, layout: Sequence[str] | None = None,
             skip_bad_lines: bool = False) -> FioLog:
    """Read a bw/iops/lat/clat/slat log. `kind` defaults to what the file name says; `layout` names the columns
    when their meaning cannot be told from the values (see the module doc)."""
    path = Path(path)
    kind = kind or _kind_from_name(path)
    if kind == "hist":
        raise LogError(f"{path}: a histogram log, not a value log", "read it with read_hist_log (--kind hist)")
    table = read_table(path, skip_bad_lines)
    columns = table.columns
    if layout is None:
        names = _detect_layout(path, columns, table.hex_columns)
    else:
        names = tuple(layout)
        _check_layout(path, names, len(columns))
    return FioLog(path, kind, names, dict(zip(names, columns, strict=True)), table.skipped_kept, table.skipped)


def read_hist_log(path: Path | str, skip_bad_lines: bool = False) -> HistLog:
    """Read a histogram log (write_hist_log)."""
    path = Path(path)
    table = read_table(path, skip_bad_lines)
    bins = len(table.columns) - HIST_FIXED_COLUMNS
    coarseness = _hist_coarseness(path, bins)
    counts = np.column_stack(table.columns[HIST_FIXED_COLUMNS:])
    time_ms, ddir, bs_bytes = table.columns[:HIST_FIXED_COLUMNS]
    return HistLog(path, time_ms, ddir, bs_bytes, counts, coarseness, table.skipped_kept, table.skipped)


def read_any(path: Path | str, kind: str | None = None, skip_bad_lines: bool = False) -> FioLog | HistLog:
    """Read a value log or a histogram log, as its name (or `kind`) says."""
    kind = kind or _kind_from_name(Path(path))
    if kind == "hist":
        return read_hist_log(path, skip_bad_lines)
    return read_log(path, kind, skip_bad_lines=skip_bad_lines)


def _kind_from_name(path: Path) -> str:
    name = parse_log_name(path)
    if name is None:
        raise LogError(f"{path}: the file name does not say which fio log it is",
                       f"name the kind with --kind ({'|'.join(LOG_KINDS)})")
    return name.kind


def _check_layout(path: Path, names: tuple[str, ...], count: int) -> None:
    known = {"time_ms", "value", "value_max", "ddir", "bs_bytes", "offset_bytes", "prio", "issue_time"}
    if len(names) != count or not {"time_ms", "value", "ddir", "bs_bytes"} <= set(names) or set(names) - known:
        raise LogError(f"{path}: column names {','.join(names)} do not fit its {count} columns",
                       f"name {count} columns from {','.join(sorted(known))}; time_ms, value, ddir and bs_bytes "
                       "are required")


def _layouts(count: int) -> list[tuple[str, ...]]:
    """The layouts fio writes with `count` columns, the most common first."""
    if count == 4:
        return [("time_ms", "value", "ddir", "bs_bytes")]
    options = [(0, 0, 0), (0, 1, 0), (1, 0, 0), (0, 0, 1), (1, 1, 0), (0, 1, 1), (1, 0, 1), (1, 1, 1)]
    found = []
    for has_max, has_offset, has_issue in options:
        if 5 + has_max + has_offset + has_issue == count:
            found.append(("time_ms", "value", *(("value_max",) if has_max else ()), "ddir", "bs_bytes",
                          *(("offset_bytes",) if has_offset else ()), "prio",
                          *(("issue_time",) if has_issue else ())))
    return found


def _detect_layout(path: Path, columns: list[Array], hex_columns: tuple[int, ...]) -> tuple[str, ...]:
    count = len(columns)
    if count > 8:
        raise LogError(f"{path}: {count} columns, more than a value log has", "a histogram log? use --kind hist")
    for names in _layouts(count):
        named = dict(zip(names, columns, strict=True))
        prio_at = names.index("prio") if "prio" in names else -1
        checks = [
            int(named["ddir"].max()) <= 2,
            bool(named["bs_bytes"].all()) or not bool(named["bs_bytes"].any()),
            prio_at < 0 or prio_at in hex_columns or int(named["prio"].max()) <= 0xFFFF,
            all(index == prio_at for index in hex_columns),
        ]
        if "value_max" in named:
            checks.append(bool((named["value_max"] >= named["value"]).all()))
        if all(checks):
            return names
    raise LogError(f"{path}: cannot tell what its {count} columns are", "name them with --columns, e.g. "
                   "--columns time_ms,value,ddir,bs_bytes,offset_bytes,prio")


def _hist_coarseness(path: Path, bins: int) -> int:
    for groups in HIST_GROUPS:
        total = groups * FIO_IO_U_PLAT_VAL
        for coarseness in range(7):
            if total >> coarseness == bins and total % (1 << coarseness) == 0:
                return coarseness
    raise LogError(f"{path}: {bins} histogram bins is not a count fio writes",
                   "fio writes 1856 bins (1216 before fio 3), halved per log_hist_coarseness step; is it a hist log?")



# --- histogram bins and percentiles -----------------------------------------------------------------------------


def plat_idx_to_val(index: Array | int) -> Array:
    """fio's plat_idx_to_val (stat.c): the latency in ns that bin `index` stands for, as an integer like fio's."""
    index = np.asarray(index, dtype=np.int64)
    error_bits = np.maximum((index >> FIO_IO_U_PLAT_BITS) - 1, 1)
    base = np.left_shift(np.int64(1), error_bits + FIO_IO_U_PLAT_BITS)
    k = index % FIO_IO_U_PLAT_VAL
    grouped = base + ((2 * k + 1) << (error_bits - 1))  # base + (k + 0.5) * 2**error_bits, exact for error_bits >= 1
    return np.where(index < 2 * FIO_IO_U_PLAT_VAL, index, grouped)


def _bin_edges(index: Array) -> tuple[Array, Array]:
    """Lower and upper latency edge (ns) of fio's bins."""
    error_bits = np.maximum((index >> FIO_IO_U_PLAT_BITS) - 1, 0)
    base = np.left_shift(np.int64(1), error_bits + FIO_IO_U_PLAT_BITS)
    k = index % FIO_IO_U_PLAT_VAL
    small = index < 2 * FIO_IO_U_PLAT_VAL
    lower = np.where(small, index, base + (k << error_bits))
    upper = np.where(small, index + 1, base + ((k + 1) << error_bits))
    return lower, upper


def hist_bin_values_ns(bins: int, coarseness: int = 0) -> Array:
    """The latency each column of a histogram log stands for: fio's own value per bin without coarseness, the middle
    of the merged range with log_hist_coarseness."""
    if coarseness == 0:
        return plat_idx_to_val(np.arange(bins)).astype(np.float64)
    stride = 1 << coarseness
    first = np.arange(bins, dtype=np.int64) * stride
    lower, _ = _bin_edges(first)
    _, upper = _bin_edges(first + stride - 1)
    return (lower + upper) / 2.0

