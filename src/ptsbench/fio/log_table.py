"""A fio log's text to integer columns, fast.

Speed: a log is read in 1 MiB blocks of whole lines into a few buffers used in turn (no new memory and no copies
per block), each parsed by one compiled loop (_logparse.c) that releases the GIL, so blocks are parsed on other
threads while the next is read; the reading thread only copies each block's numbers into place, casting them down.
Where it was not built (no C compiler at install time), or with PTSBENCH_LOG_READER=numpy, numpy_parser.py parses
the blocks instead, to the same columns. Columns are kept in the smallest unsigned type that holds them (a column of
one value as that value), so a log costs little more memory than its numbers. Lines that are not well formed make a
block fall back to a line-by-line check that names the first bad line (or drops bad lines with skip_bad_lines).
"""

import os
import re
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from io import BufferedReader
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ptsbench.errors import PtsbenchError
from ptsbench.fio.log_reader import compiled_parse_lines, use_compiled

Array = npt.NDArray[Any]
Text = bytes | memoryview
Parsed = list[tuple[Array, int, int]]  # per column: its values, the largest and the smallest of them

_BLOCK_BYTES = 1 << 20
_SKIPPED_KEPT = 100  # line numbers of skipped lines kept for messages
_BAD_HINT = "fix or remove the line, or pass --skip-bad-lines to use the readable lines"
_FIELD_RE = rb"(?:\d{1,19}|0x[0-9a-f]{1,16})"
_ANY_LINE_RE = re.compile(rb"%s(?:, ?%s)*" % (_FIELD_RE, _FIELD_RE))


class _Slot:
    """Where one block is read to and parsed into: its text and the compiled parser's output rows. Slots are used
    in turn, so their memory is paged in once rather than every block."""

    def __init__(self) -> None:
        self.text = bytearray(_BLOCK_BYTES)
        self.rows: Array = np.empty(0, np.uint64)


BlockParser = Callable[[Text, int, tuple[int, ...], _Slot], list[Array] | None]  # -> columns, or None


class LogError(PtsbenchError):
    """A file is not a readable fio log, or a line of it is not."""


def _block_parser() -> BlockParser:
    if use_compiled():
        return _parse_block
    return _parse_block_numpy


@dataclass
class _Table:
    columns: list[Array]
    hex_columns: tuple[int, ...]
    skipped: int = 0
    skipped_kept: tuple[int, ...] = ()


class _Column:
    """A growing column that keeps the smallest unsigned dtype holding its values. While they are all one value (a
    log's block size and priority often are) it keeps only that value: the column's memory is never written."""

    def __init__(self, capacity: int) -> None:
        self.array: Array = np.empty(capacity, np.uint8)
        self.size = 0
        self.constant: int | None = None  # every value so far, while they are all the same

    def append(self, values: Array, largest: int, smallest: int) -> None:
        """Copy `values` (of any unsigned type, from `smallest` to `largest`) to the end, widening the column if
        needed."""
        if smallest == largest and (self.size == 0 or self.constant == largest):
            self.constant = largest
            self.size += len(values)
            return
        if self.constant is not None:  # no longer one value: write it out
            self.array = np.empty(max(len(self.array), self.size), np.min_scalar_type(self.constant))
            self.array[:self.size] = self.constant
            self.constant = None
        end = self.size + len(values)
        if end > len(self.array):
            self.array.resize(max(end, len(self.array) * 3 // 2 + 1024), refcheck=False)
        dtype = np.promote_types(self.array.dtype, np.min_scalar_type(largest))
        if dtype != self.array.dtype:  # copy only the filled part: it is small when a column first widens
            wider = np.empty(len(self.array), dtype)
            wider[:self.size] = self.array[:self.size]
            self.array = wider
        self.array[self.size:end] = values  # cast down: every value fits
        self.size = end

    def finish(self) -> Array:
        if self.constant is not None:  # read-only, and no memory per line
            return np.broadcast_to(np.min_scalar_type(self.constant).type(self.constant), (self.size,))
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
        for slot, block, unterminated, parsed in _parsed_blocks(handle, first, parser, count, hex_columns):
            if parsed is None:
                good, bad_numbers, block_lines = _check_lines(path, bytes(block), line_regex, done_lines,
                                                              unterminated, skip_bad_lines)
                skipped += len(bad_numbers)
                kept.extend(bad_numbers[: max(0, _SKIPPED_KEPT - len(kept))])
                parsed = _measured(parser, good, count, hex_columns, slot) if good else None
                if parsed is None and good:  # the regex and the fast path disagree: be explicit
                    raise LogError(f"{path}: lines {done_lines + 1} to {done_lines + block_lines}: not readable",
                                   _BAD_HINT)
                done_lines += block_lines
            else:
                done_lines += len(parsed[0][0])
            for builder, (values, largest, smallest) in zip(builders, parsed or [], strict=False):
                builder.append(values, largest, smallest)
    columns = [builder.finish() for builder in builders]
    if not len(columns[0]):
        raise LogError(f"{path}: no readable fio log line in {done_lines} lines", "is it a fio log?")
    return _Table(columns, hex_columns, skipped, tuple(kept))


def _open(path: Path) -> BufferedReader:
    from ptsbench.textfile import open_regular

    if os.path.isdir(path):
        raise LogError(f"{path}: a directory, not a fio log", "pass the log files, or a folder to plot")
    if not os.path.lexists(path):
        raise LogError(f"{path}: no such file", "check the path")
    return open_regular(path, "fio log", "pass fio's log files, or a folder to plot", LogError)


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


def _blocks(handle: BufferedReader, first: bytes, slots: list[_Slot]) -> Iterator[tuple[_Slot, Text, bool]]:
    """Blocks of whole lines, read into the slots in turn (a slot is read into again len(slots) blocks later);
    True with the last one when the file does not end with a newline."""
    carry = first  # read already; then the part line at the end of each block
    turn = 0
    while True:
        slot = slots[turn % len(slots)]
        kept = len(carry)
        if len(slot.text) < kept + _BLOCK_BYTES:  # the first block, or a line longer than a block
            slot.text = bytearray(kept + _BLOCK_BYTES)
        view = memoryview(slot.text)
        view[:kept] = carry
        end = kept + handle.readinto(view[kept:kept + _BLOCK_BYTES])
        cut = slot.text.rfind(b"\n", 0, end) + 1
        if end == kept and not cut:  # the end of the file, and no newline in what is left
            if carry.strip():
                yield slot, carry.rstrip(b"\r") + b"\n", True
            return
        carry = bytes(view[cut:end])
        if cut:  # else no whole line yet: read more into the same slot
            crlf = slot.text.find(b"\r", 0, cut) >= 0
            yield slot, bytes(view[:cut]).replace(b"\r\n", b"\n") if crlf else view[:cut], False
            turn += 1


def _parsed_blocks(handle: BufferedReader, first: bytes, parser: BlockParser, count: int, hex_columns: tuple[int, ...]
                   ) -> Iterator[tuple[_Slot, Text, bool, Parsed | None]]:
    """Parse blocks on a few threads (the compiled parser releases the GIL), in order, with few in flight. Each is
    yielded with its slot, which stays untouched until the caller asks for the next block."""
    workers = min(4, os.cpu_count() or 1)
    in_flight = 2 * workers
    slots = [_Slot() for _ in range(in_flight + 2)]  # in flight, the one yielded and the one being read
    with ThreadPoolExecutor(workers) as pool:
        pending: deque[tuple[_Slot, Text, bool, Any]] = deque()
        for slot, block, unterminated in _blocks(handle, first, slots):
            pending.append((slot, block, unterminated,
                            pool.submit(_measured, parser, block, count, hex_columns, slot)))
            if len(pending) > in_flight:
                slot, block, unterminated, future = pending.popleft()
                yield slot, block, unterminated, future.result()
        for slot, block, unterminated, future in pending:
            yield slot, block, unterminated, future.result()


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


def _measured(parser: BlockParser, block: Text, count: int, hex_columns: tuple[int, ...], slot: _Slot
              ) -> Parsed | None:
    """The block's columns, each with its largest and smallest value (found on the parsing thread, so that the
    reading thread only copies the values into place)."""
    columns = parser(block, count, hex_columns, slot)
    return None if columns is None else [(column, int(column.max()), int(column.min())) for column in columns]


def _parse_block(block: Text, count: int, hex_columns: tuple[int, ...], slot: _Slot) -> list[Array] | None:
    """Columns of a block of whole lines (compiled parser, into the slot's rows), or None when a line is not `count`
    well-formed integers."""
    most_lines = len(block) // (2 * count)  # the shortest line: one digit per field, its separators and "\n"
    size = count * most_lines
    if len(slot.rows) < size:
        slot.rows = np.empty(size, np.uint64)
    out = slot.rows[:size].reshape(count, most_lines)
    hex_flags = bytes(index in hex_columns for index in range(count))
    assert compiled_parse_lines is not None  # _block_parser chose this parser
    lines = compiled_parse_lines(block, hex_flags, out)
    return list(out[:, :lines]) if lines > 0 else None


def _parse_block_numpy(block: Text, count: int, hex_columns: tuple[int, ...], slot: _Slot) -> list[Array] | None:
    from ptsbench.fio.numpy_parser import parse_block

    return parse_block(block, count, hex_columns)
