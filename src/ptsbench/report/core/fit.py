"""How much room a static figure's text takes, estimated from its characters (no drawing pass): titles and captions
wrapped to their width, legends in as many columns as their height needs and names shortened to their width, and
tick labels thinned, wrapped or turned so that neighbours never run into each other. draw_mpl.py places the axes
in what is left; tests/report/test_legible.py checks the result against matplotlib's own text extents.

Widths are those of DejaVu Sans (matplotlib's default font), the widest the figures are drawn with: PDF pages use
Helvetica, which is narrower.
"""

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

CHAR_EM = 0.64  # the average width of a character (digits and lower case), in units of the font size
LINE_EM = 1.65  # the height of a line of text at draw_mpl.LINESPACING (1.4 x the 1.17 em of DejaVu Sans)


def text_in(text: str, pt: float) -> float:
    """Width of the longest line of `text` at `pt` points, in inches."""
    return max((len(line) for line in text.split("\n")), default=0) * pt * CHAR_EM / 72


def lines_in(count: int, pt: float) -> float:
    return count * pt * LINE_EM / 72


def wrap(text: str, width_in: float, pt: float) -> str:
    """`text` wrapped at word boundaries (and hyphens) to lines no wider than `width_in`."""
    chars = max(8, int(width_in * 72 / (pt * CHAR_EM)))
    return "\n".join(textwrap.fill(paragraph, chars) for paragraph in text.split("\n"))


def shortened(name: str, chars: int) -> str:
    """A name cut to `chars` characters in its middle (its start and end tell names apart best)."""
    if len(name) <= chars:
        return name
    head = max(1, (chars - 1) // 2)
    return name[:head] + "…" + name[len(name) - max(1, chars - 1 - head):]


def common_part(names: Sequence[str]) -> tuple[str, int, int]:
    """The text all names start and end with, cut at a separator: (shared text, prefix length, suffix length)."""
    if len(names) < 2:
        return "", 0, 0
    separators = " -_/:,"
    prefix = 0
    for chars in zip(*names, strict=False):
        if len(set(chars)) > 1:
            break
        prefix += 1
    prefix = max((i + 1 for i, c in enumerate(names[0][:prefix]) if c in separators), default=0)
    tails = [name[prefix:] for name in names]
    suffix = 0
    for chars in zip(*(tail[::-1] for tail in tails), strict=False):
        if len(set(chars)) > 1:
            break
        suffix += 1
    suffix = max((i + 1 for i, c in enumerate(tails[0][::-1][:suffix]) if c in separators), default=0)
    if any(len(tail) - suffix < 1 for tail in tails):
        suffix = 0
    shared = " … ".join(part.strip(separators) for part in (names[0][:prefix], tails[0][len(tails[0]) - suffix:])
                        if part.strip(separators))
    return shared, prefix, suffix


@dataclass(frozen=True)
class Legend:
    labels: tuple[str, ...]
    columns: int
    title: str
    width_in: float


def fit_legend(names: Sequence[str], height_in: float, max_width_in: float, pt: float) -> Legend:
    """A legend beside the axes, no taller than `height_in` and no wider than `max_width_in`: as many columns as
    its height needs; what all names share said once in its title; names too long for a column shortened."""
    if not names:
        return Legend((), 1, "", 0.0)
    labels = list(names)
    title = ""
    entry_in = pt * 1.75 / 72  # a legend row: the text and matplotlib's spacing between rows
    rows = max(1, int((height_in - (entry_in if len(names) > 1 else 0.0)) / entry_in))
    columns = math.ceil(len(labels) / rows)
    handle_in = pt * 2.9 / 72  # the line sample and the gap to its text
    gap_in = pt * 2.0 / 72  # between columns
    longest_in = max(text_in(label, pt) for label in labels)
    if columns * (handle_in + longest_in) + (columns - 1) * gap_in > max_width_in:
        shared, prefix, suffix = common_part(labels)
        if shared:
            labels = [label[prefix:len(label) - suffix] for label in labels]
            title = shared
            rows = max(1, rows - 1)
            columns = math.ceil(len(labels) / rows)
    column_in = (max_width_in - (columns - 1) * gap_in) / columns - handle_in
    chars = max(4, int(column_in * 72 / (pt * CHAR_EM)))
    labels = [shortened(label, chars) for label in labels]
    title = shortened(title, max(4, int(max_width_in * 72 / (pt * CHAR_EM))))
    width_in = columns * (handle_in + max(text_in(label, pt) for label in labels)) + (columns - 1) * gap_in
    return Legend(tuple(labels), columns, title, max(width_in, text_in(title, pt)))


@dataclass(frozen=True)
class Ticks:
    """Category ticks as drawn: (position, label) of those shown, their rotation and the height they take."""

    shown: tuple[tuple[float, str], ...]
    rotation: int
    height_in: float


def fit_ticks(ticks: Sequence[tuple[float, str]], length_in: float, span: float, pt: float,
              most_in: float) -> Ticks:
    """Tick labels along an x axis `length_in` long showing `span` (the distance of its ends, in data units):
    level when they fit, else wrapped at hyphens and spaces, else turned upright (no taller than `most_in`);
    labels are left out evenly when even upright ones would touch."""
    if not ticks:
        return Ticks((), 0, lines_in(1, pt))
    positions = sorted(position for position, _ in ticks)
    steps = [b - a for a, b in zip(positions, positions[1:], strict=False) if b > a]
    room_in = (min(steps) if steps else span) / max(span, 1e-12) * length_in  # between neighbouring ticks
    widest_in = max(text_in(label, pt) for _, label in ticks) + pt * 0.8 / 72
    if widest_in <= room_in:
        return Ticks(tuple(ticks), 0, lines_in(1, pt))
    chars = max(3, int((room_in - pt * 0.8 / 72) * 72 / (pt * CHAR_EM)))  # the widest line that fits with its gap
    wrapped = [(position, textwrap.fill(label, chars, break_long_words=False)) for position, label in ticks]
    lines = max(label.count("\n") + 1 for _, label in wrapped)
    if lines <= 3 and max(text_in(label, pt) for _, label in wrapped) + pt * 0.8 / 72 <= room_in:
        return Ticks(tuple(wrapped), 0, lines_in(lines, pt))
    tall_chars = max(4, int(most_in * 72 / (pt * CHAR_EM)))
    upright = [(position, shortened(label, tall_chars)) for position, label in ticks]
    step = max(1, math.ceil(lines_in(1, pt) * 1.1 / max(room_in, 1e-9)))
    shown = tuple(upright[::step])
    return Ticks(shown, 90, max(text_in(label, pt) for _, label in shown))
