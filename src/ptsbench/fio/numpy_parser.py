"""The fio log line parser in numpy, for installs without a C compiler: it accepts and refuses exactly the lines the
compiled `_logparse.parse_lines` does and gives the same numbers (in the smallest unsigned type of each pass rather
than uint64; the reader narrows both alike).

A block is parsed in whole-array passes: the separators give every field's end and length, and each field's digits
are gathered as one little-endian 4- or 8-byte word (the bytes before its end) and turned into a number with SWAR
arithmetic (multiply, shift and mask: 8 digits in 3 steps); longer fields add the next 8 digits to the left.
"""

from typing import Any

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[Any]

_PAD = b"0" * 8  # before the text, so an 8-byte window never starts before the buffer
_MAX_DECIMAL_DIGITS = 19  # any 19-digit number is below 2**64
_MAX_HEX_DIGITS = 16
_NEWLINE, _COMMA, _SPACE, _ZERO, _NINE = 10, 44, 32, 48, 57


def _masks(width: int) -> Array:
    """Per field length L (0..19): keep the low nibble of the last min(L, width) bytes of a little-endian word."""
    masks = np.zeros(_MAX_DECIMAL_DIGITS + 1, np.uint64)
    for length in range(_MAX_DECIMAL_DIGITS + 1):
        keep = 0
        for byte in range(width - min(length, width), width):
            keep |= 0x0F << (8 * byte)
        masks[length] = keep
    return masks


_MASK64 = _masks(8)
_MASK32 = _masks(4).astype(np.uint32)
_HEX = np.full(256, 255, np.uint8)
_HEX[np.frombuffer(b"0123456789abcdef", np.uint8)] = np.arange(16)  # fio prints 0x%04x: lower case


def parse_block(text: bytes | memoryview, count: int, hex_columns: tuple[int, ...]) -> list[Array] | None:
    """The columns (unsigned integers) of whole lines of `count` integers, or None when a line is not well formed."""
    return _parse(_PAD + text, count, hex_columns)


def _parse(block: bytes, count: int, hex_columns: tuple[int, ...]) -> list[Array] | None:
    data = np.frombuffer(block, np.uint8)
    newline = data == _NEWLINE
    comma = data == _COMMA
    space = data == _SPACE
    ends = np.flatnonzero(newline | comma)  # each field ends at a separator
    lines = int(np.count_nonzero(newline))
    if not lines or len(ends) != lines * count or ends[-1] != len(data) - 1:
        return None
    spaces = int(np.count_nonzero(space))
    if int(np.count_nonzero(data < _ZERO)) != len(ends) + spaces:
        return None  # a character below '0' other than ',', ' ' and newline
    if np.count_nonzero(space[1:] > comma[:-1]):
        return None  # a space that does not follow a comma
    high = int(np.count_nonzero(data > _NINE))
    if high and not hex_columns:
        return None
    digits = np.empty_like(ends)  # characters between one separator and the next, then less the leading space
    digits[0] = ends[0] - (len(_PAD) - 1)  # as if a separator stood just before the text
    np.subtract(ends[1:], ends[:-1], out=digits[1:])
    digits -= 1
    grid = digits.reshape(lines, count)
    if spaces == len(ends) - lines:  # fio's ", " everywhere: one space before every field but a line's first
        grid[:, 1:] -= 1
    elif spaces:
        digits -= data[ends - digits] == _SPACE
    by_column = ends.reshape(lines, count).T  # row i: where column i's fields end (a strided view)
    if not (data[by_column[-1]] == _NEWLINE).all():
        return None  # a line with another column count
    if int(digits.min()) < 1:
        return None  # an empty field
    if count > 8 and not hex_columns:  # histogram logs: all fields at once
        values = _decimal(block, data, ends, digits)
        return None if values is None else list(values.reshape(lines, count).T)
    columns: list[Array] = []
    for index in range(count):
        column_ends, column_digits = by_column[index], grid[:, index]
        if index in hex_columns:
            parsed = _hexadecimal(data, column_ends, column_digits)
            if parsed is None:
                return None
            values, letters = parsed
            high -= letters
        else:
            decimal = _decimal(block, data, column_ends, column_digits)
            if decimal is None:
                return None
            values = decimal
        columns.append(values)
    return None if high else columns


def _gather(block: bytes, width: int, ends: Array) -> Array:
    """The `width` bytes before each of `ends`, as little-endian integers. Windows are gathered as opaque V4/V8
    items (byte-aligned, so numpy copies them fast) and only then seen as integers."""
    windows = np.ndarray(shape=(len(block) - width + 1,), dtype=f"V{width}", buffer=block, strides=(1,))
    return windows[ends - width].view(f"<u{width}")


def _decimal(block: bytes, data: Array, ends: Array, digits: Array) -> Array | None:
    """Decimal fields of `digits` digits ending just before `ends`, as unsigned integers."""
    width = int(digits.max())
    if width == 1:
        return data[ends - 1] - _ZERO
    if width <= 4:
        return _swar(_gather(block, 4, ends) & _MASK32[digits])
    if width > _MAX_DECIMAL_DIGITS:
        return None
    values = _swar(_gather(block, 8, ends) & _MASK64[digits])
    for shift in (8, 16):  # more than 8 digits: the next 8 to the left
        longer = np.flatnonzero(digits > shift)
        if not len(longer):
            break
        upper = _swar(_gather(block, 8, ends[longer] - shift) & _MASK64[digits[longer] - shift])
        values[longer] += upper * np.uint64(10**shift)
    return values


# Digit nibbles (most significant in the lowest byte) to their value: each step adds neighbouring groups together
# (high group x 10**k + low group), shifts the sum down and masks to the next group size; per word size in bytes.
_SWAR_STEPS = {
    size: tuple((kind(multiply), kind(shift), None if mask is None else kind(mask)) for multiply, shift, mask in steps)
    for size, kind, steps in (
        (4, np.uint32, ((10 * 256 + 1, 8, 0x00FF00FF), (100 * 65536 + 1, 16, None))),
        (8, np.uint64, ((10 * 256 + 1, 8, 0x00FF00FF00FF00FF), (100 * 65536 + 1, 16, 0x0000FFFF0000FFFF),
                        (10000 * 2**32 + 1, 32, None))),
    )
}


def _swar(words: Array) -> Array:
    """Four or eight digit nibbles per word (uint32 or uint64) to their value, in place."""
    for multiplier, shift, mask in _SWAR_STEPS[words.dtype.itemsize]:
        words *= multiplier
        words >>= shift
        if mask is not None:
            words &= mask
    return words


def _hexadecimal(data: Array, ends: Array, digits: Array) -> tuple[Array, int] | None:
    """Fields like 0x00ff: their values and how many characters above '9' they hold (the x and the letters)."""
    starts = ends - digits
    nibbles_count = digits - 2
    if int(nibbles_count.min()) < 1 or int(nibbles_count.max()) > _MAX_HEX_DIGITS:
        return None
    if not ((data[starts] == _ZERO) & (data[starts + 1] == ord("x"))).all():
        return None
    values = np.zeros(len(ends), np.uint64)
    letters = len(ends)  # the x of each field
    for position in range(int(nibbles_count.max())):
        rows = np.flatnonzero(nibbles_count > position)
        chars = data[ends[rows] - 1 - position]
        nibbles = _HEX[chars]
        if int(nibbles.max()) > 15:
            return None
        values[rows] |= nibbles.astype(np.uint64) << np.uint64(4 * position)
        letters += int(np.count_nonzero(chars > _NINE))
    return values, letters
