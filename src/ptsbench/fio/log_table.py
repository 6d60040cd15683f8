"""A fio log's text to integer columns, fast.

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
from collections.abc import Callable, Iterator
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

READER_ENV = "PTSBENCH_LOG_READER"  # "numpy": use the numpy parser even where the compiled one is built
_BLOCK_BYTES = 1 << 20
_SKIPPED_KEPT = 100  # line numbers of skipped lines kept for messages
_BAD_HINT = "fix or remove the line, or pass --skip-bad-lines to use the readable lines"
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


def read_table(path: Path, skip_bad_lines: bool) -> _Table:
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
