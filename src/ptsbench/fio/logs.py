"""Fast readers for fio's bw, iops, lat, clat, slat and histogram logs, and their merge by time.

Lines fio writes (the column count comes from the first line, the meaning of optional columns from the values):
  time_ms, value, [value_max,] ddir, bs_bytes, [offset_bytes,] prio[, issue_time]
  - fio 3.33 writes 5 columns; log_offset=1 adds the offset. Older fio wrote 4 (no priority).
  - newer fio: log_window_value=both adds the window maximum, log_issue_time the issue time, log_prio=1 prints the
    priority in hex (0x0000).
  Histogram logs (write_hist_log): time_ms, ddir, bs_bytes, then one IO count per latency bin.
Without log_avg_msec every IO is a line (bs_bytes > 0); with it each line is a window's mean (or max) and bs_bytes is 0.
Latency values are in ns, bandwidth in KiB/s, IOPS in IO/s.

Speed: a log is read in 1 MiB blocks of whole lines, each parsed by one compiled loop (_logparse.c) that releases the
GIL, so blocks are parsed on other threads while the next is read. Where it was not built (no C compiler at install
time), or with PTSBENCH_LOG_READER=numpy, numpy_parser.py parses the blocks instead, to the same columns. Columns
are kept in the smallest unsigned type that holds them, so a log costs little more memory than its numbers. Lines
that are not well formed make a block fall back to a line-by-line check that names the first bad line (or drops
bad lines with skip_bad_lines).
"""

import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

from ptsbench.errors import PtsbenchError

try:
    from ptsbench.fio._logparse import parse_lines as _compiled_parse_lines
except ImportError:  # installed without a C compiler (or a checkout never built): the numpy parser reads the same
    _compiled_parse_lines = None  # type: ignore[assignment]

Array = npt.NDArray[Any]
BlockParser = Callable[[bytes, int, tuple[int, ...]], list[Array] | None]  # block, count, hex columns -> columns

VALUE_KINDS = ("bw", "iops", "lat", "clat", "slat")
LOG_KINDS = (*VALUE_KINDS, "hist")
DDIR_NAMES = {0: "read", 1: "write", 2: "trim"}
HIST_FIXED_COLUMNS = 3  # time_ms, ddir, bs_bytes before the bins
FIO_IO_U_PLAT_BITS = 6
FIO_IO_U_PLAT_VAL = 1 << FIO_IO_U_PLAT_BITS
HIST_GROUPS = (29, 19)  # FIO_IO_U_PLAT_GROUP_NR: 29 since fio 3.x (1856 bins), 19 before (1216 bins)

READER_ENV = "PTSBENCH_LOG_READER"  # "numpy": use the numpy parser even where the compiled one is built
_BLOCK_BYTES = 1 << 20
_SKIPPED_KEPT = 100  # line numbers of skipped lines kept for messages
_BAD_HINT = "fix or remove the line, or pass --skip-bad-lines to use the readable lines"
_NAME_RE = re.compile(
    r"^(?P<prefix>.*?)_(?P<kind>bw|iops|lat|clat|slat|clat_hist|lat_hist)(?:\.(?P<job>\d+))?\.log"
    r"(?:\.(?P<host>.+))?$"
)
_FIELD_RE = rb"(?:\d{1,19}|0x[0-9a-f]{1,16})"
_ANY_LINE_RE = re.compile(rb"%s(?:, ?%s)*" % (_FIELD_RE, _FIELD_RE))


class LogError(PtsbenchError):
    """A file is not a readable fio log, or a line of it is not."""


def reader_name() -> str:
    """Which parser reads fio logs in this process, for `ptsbench info` and reports."""
    if _compiled_parse_lines is None:
        return "numpy (the compiled C parser was not built)"
    if os.environ.get(READER_ENV) == "numpy":
        return f"numpy ({READER_ENV}=numpy)"
    return "compiled C"


def _block_parser() -> BlockParser:
    if _compiled_parse_lines is not None and os.environ.get(READER_ENV) != "numpy":
        return _parse_block
    return _parse_block_numpy


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
    """One bw/iops/lat/clat/slat log. Arrays use the smallest unsigned type that holds them: cast before arithmetic."""

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
    table = _read_table(path, skip_bad_lines)
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
    table = _read_table(path, skip_bad_lines)
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


# --- the table reader -------------------------------------------------------------------------------------------


@dataclass
class _Table:
    columns: list[Array]
    hex_columns: tuple[int, ...]
    skipped: int = 0
    skipped_kept: tuple[int, ...] = ()


class _Column:
    """A growing column that keeps the smallest unsigned dtype holding its values."""

    def __init__(self, capacity: int) -> None:
        self.array: Array = np.empty(capacity, np.uint8)
        self.size = 0

    def append(self, values: Array) -> None:
        end = self.size + len(values)
        if end > len(self.array):
            self.array.resize(max(end, len(self.array) * 3 // 2 + 1024), refcheck=False)
        if len(values) and values.dtype.itemsize > self.array.dtype.itemsize:
            dtype = np.promote_types(self.array.dtype, np.min_scalar_type(int(values.max())))
            if dtype != self.array.dtype:  # copy only the filled part: it is small when a column first widens
                wider = np.empty(len(self.array), dtype)
                wider[:self.size] = self.array[:self.size]
                self.array = wider
        self.array[self.size:end] = values
        self.size = end

    def finish(self) -> Array:
        self.array.resize(self.size, refcheck=False)
        return self.array


def _read_table(path: Path, skip_bad_lines: bool) -> _Table:
    """All lines of a fio log as integer columns."""
    with _open(path) as handle:
        first = handle.read(_BLOCK_BYTES)
        _check_text(path, first)
        size_bytes = os.fstat(handle.fileno()).st_size
        count, hex_columns = _shape(path, first, skip_bad_lines)
        lines_in_first = max(1, first.count(b"\n"))
        capacity = int(size_bytes / max(1, len(first)) * lines_in_first * 1.02) + 1024
        builders = [_Column(capacity) for _ in range(count)]
        line_regex = _line_regex(count, hex_columns)
        parser = _block_parser()
        done_lines, skipped = 0, 0
        kept: list[int] = []
        for block, unterminated, parsed in _parsed_blocks(_blocks(handle, first), parser, count, hex_columns):
            if parsed is None:
                good, bad_numbers, block_lines = _check_lines(path, block, line_regex, done_lines, unterminated,
                                                              skip_bad_lines)
                skipped += len(bad_numbers)
                kept.extend(bad_numbers[: max(0, _SKIPPED_KEPT - len(kept))])
                parsed = parser(good, count, hex_columns) if good else None
                if parsed is None and good:  # the regex and the fast path disagree: be explicit
                    raise LogError(f"{path}: lines {done_lines + 1} to {done_lines + block_lines}: not readable",
                                   _BAD_HINT)
                done_lines += block_lines
            else:
                done_lines += len(parsed[0])
            for builder, values in zip(builders, parsed or [], strict=False):
                builder.append(values)
    columns = [builder.finish() for builder in builders]
    if not len(columns[0]):
        raise LogError(f"{path}: no readable fio log line in {done_lines} lines", "is it a fio log?")
    return _Table(columns, hex_columns, skipped, tuple(kept))


def _open(path: Path) -> BinaryIO:
    try:
        return open(path, "rb")  # noqa: SIM115 - returned to a with-statement
    except IsADirectoryError as error:
        raise LogError(f"{path}: a directory, not a fio log", "pass the log files, or a folder to plot") from error
    except FileNotFoundError as error:
        raise LogError(f"{path}: no such file", "check the path") from error


def _check_text(path: Path, first: bytes) -> None:
    if not first.strip():
        raise LogError(f"{path}: empty file, no fio log lines",
                       "fio leaves a log empty when the job logged nothing of that kind (e.g. slat with a sync engine)")
    if first[:2] in (b"\x78\x9c", b"\x78\xda", b"\x78\x01", b"\x1f\x8b"):
        raise LogError(f"{path}: a compressed fio log (log_store_compressed)",
                       f"decompress it first: fio --inflate-log={path} > {path.name}.txt")
    if b"\x00" in first:
        line = first.count(b"\n", 0, first.index(b"\x00")) + 1
        raise LogError(f"{path}: line {line}: binary data, not a fio log", "pass a text log written by fio")


def _shape(path: Path, first: bytes, skip_bad_lines: bool) -> tuple[int, tuple[int, ...]]:
    """Column count and hex columns, from the first well-formed line."""
    lines = first.split(b"\n")
    for number, raw in enumerate(lines if len(lines) == 1 else lines[:-1], 1):
        line = raw.rstrip(b"\r")
        if _ANY_LINE_RE.fullmatch(line):
            fields = line.split(b",")
            if len(fields) >= 4:
                return len(fields), tuple(i for i, text in enumerate(fields) if text.strip().startswith(b"0x"))
            if not skip_bad_lines:
                raise LogError(f"{path}: line {number}: not a fio log line ({len(fields)} columns, fio writes "
                               f"4 or more): {_show(line)}", "pass a fio bw, iops, lat, clat, slat or hist log")
        elif not skip_bad_lines:
            raise LogError(f"{path}: line {number}: not a fio log line: {_show(line)}",
                           "fio log lines are integers separated by ', ' (time, value, direction, block size, ...)")
    raise LogError(f"{path}: no fio log line in its first {len(first)} bytes", "is it a fio log?")


def _show(line: bytes, limit: int = 60) -> str:
    text = line.decode("utf-8", "replace")
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _blocks(handle: BinaryIO, first: bytes) -> Iterator[tuple[bytes, bool]]:
    """Blocks of whole lines; True with the last one when the file does not end with a newline."""
    carry = b""
    data = first
    while data:
        cut = data.rfind(b"\n") + 1
        if cut:
            block = b"".join((carry, memoryview(data)[:cut]))
            yield (block.replace(b"\r\n", b"\n") if b"\r" in block else block), False
            carry = data[cut:]
        else:
            carry += data
        data = handle.read(_BLOCK_BYTES)
    if carry.strip():
        yield carry.rstrip(b"\r") + b"\n", True


def _parsed_blocks(blocks: Iterator[tuple[bytes, bool]], parser: BlockParser, count: int,
                   hex_columns: tuple[int, ...]) -> Iterator[tuple[bytes, bool, list[Array] | None]]:
    """Parse blocks on a few threads (the compiled parser releases the GIL), in order, with few in flight."""
    workers = min(4, os.cpu_count() or 1)
    if workers <= 1:
        for block, unterminated in blocks:
            yield block, unterminated, parser(block, count, hex_columns)
        return
    with ThreadPoolExecutor(workers) as pool:
        pending: list[Any] = []
        for block, unterminated in blocks:
            pending.append((block, unterminated, pool.submit(parser, block, count, hex_columns)))
            if len(pending) > 2 * workers:
                block0, unterminated0, future = pending.pop(0)
                yield block0, unterminated0, future.result()
        for block0, unterminated0, future in pending:
            yield block0, unterminated0, future.result()


def _line_regex(count: int, hex_columns: tuple[int, ...]) -> re.Pattern[bytes]:
    fields = [rb"0x[0-9a-f]{1,16}" if i in hex_columns else rb"\d{1,19}" for i in range(count)]
    return re.compile(rb", ?".join(fields))


def _check_lines(path: Path, block: bytes, regex: re.Pattern[bytes], done_lines: int, unterminated: bool,
                 skip_bad_lines: bool) -> tuple[bytes, list[int], int]:
    """Check a block line by line: the block of its good lines, the numbers of bad ones, its line count."""
    lines = block.split(b"\n")[:-1]
    good: list[bytes] = []
    bad: list[int] = []
    for index, line in enumerate(lines):
        if regex.fullmatch(line):
            good.append(line)
            continue
        if not line.strip():  # a blank line holds nothing to misread
            continue
        number = done_lines + index + 1
        if not skip_bad_lines:
            what = "truncated last line" if unterminated and index == len(lines) - 1 else "not a fio log line"
            raise LogError(f"{path}: line {number}: {what}: {_show(line)}", _BAD_HINT)
        bad.append(number)
    return b"".join(line + b"\n" for line in good), bad, len(lines)


# --- the block parser -------------------------------------------------------------------------------------------


def _parse_block(block: bytes, count: int, hex_columns: tuple[int, ...]) -> list[Array] | None:
    """Columns of a block of whole lines (compiled parser), or None when a line is not `count` well-formed integers."""
    most_lines = len(block) // (2 * count)  # the shortest line: one digit per field, its separators and "\n"
    size = count * most_lines
    scratch = getattr(_scratch, "rows", None)
    if scratch is None or len(scratch) < size:  # a new array per block would be new pages (page faults) per block
        scratch = _scratch.rows = np.empty(size, np.uint64)
    out = scratch[:size].reshape(count, most_lines)
    hex_flags = bytes(index in hex_columns for index in range(count))
    lines = _compiled_parse_lines(block, hex_flags, out)
    return _narrowed(list(out[:, :lines])) if lines > 0 else None


def _parse_block_numpy(block: bytes, count: int, hex_columns: tuple[int, ...]) -> list[Array] | None:
    from ptsbench.fio.numpy_parser import parse_block

    return _narrowed(parse_block(block, count, hex_columns))


_scratch = threading.local()  # per parsing thread: the compiled parser's output rows, reused block after block


def _narrowed(columns: list[Array] | None) -> list[Array] | None:
    """Copies of the columns, each in the smallest unsigned type holding its values (on the parsing thread, so that
    the reading thread only copies them into place)."""
    if columns is None:
        return None
    return [column.astype(np.min_scalar_type(int(column.max()))) for column in columns]


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


def weighted_percentiles(percentiles: Sequence[float], values: Array, weights: Array) -> Array:
    """fiologparser_hist's weighted percentile: linear interpolation on the mid-weight CDF (bins with no weight are
    left out, so the CDF strictly increases)."""
    used = weights > 0
    values, weights = values[used], weights[used]
    cdf = 100.0 * (np.cumsum(weights) - weights / 2.0) / weights.sum()
    return np.interp(np.asarray(percentiles, dtype=np.float64), cdf, values)


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
    interval = float(interval_ms or _hist_step_ms(logs))
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


def _hist_step_ms(logs: Sequence[HistLog]) -> float:
    steps = [np.diff(np.unique(log.time_ms.astype(np.int64))) for log in logs]
    joined = np.concatenate(steps) if steps else np.array([])
    return float(np.median(joined)) if len(joined) else 1000.0


def _interval_stats(name: str, end_ms: Array, summed: Array, values_ns: Array,
                    percentiles: Sequence[float]) -> HistPercentiles:
    keep = summed.sum(axis=1) > 0
    end_ms, summed = end_ms[keep], summed[keep]
    table = np.array([weighted_percentiles(percentiles, values_ns, row) for row in summed]).reshape(
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
