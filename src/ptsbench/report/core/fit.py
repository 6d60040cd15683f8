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
from dataclasses import dataclass, replace

from ptsbench.report.core.table_layout import wrap_name

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
    separators = " -_/:,@"
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


def unshared(names: Sequence[str]) -> tuple[list[str], str]:
    """Each name without what all of them start and end with (cut at separators), and a shell pattern that says it
    once ('cases/*/fio'); the names as they are and '' when they share nothing."""
    shared, prefix, suffix = common_part(names)
    if not shared:
        return list(names), ""
    first = names[0]
    return [name[prefix:len(name) - suffix] for name in names], f"{first[:prefix]}*{first[len(first) - suffix:]}"


@dataclass(frozen=True)
class Legend:
    """A legend as drawn: its labels (wrapped at separators: a label may hold line breaks), in `columns` columns,
    under `title` (what all names share); `fits`: every label is whole in the room it was given (else the longest
    ones are shortened in their middle, each still told apart from the others)."""

    labels: tuple[str, ...]
    columns: int
    title: str
    width_in: float
    fits: bool = True


ENTRY_EM = 1.75  # a legend row of one line: the text and matplotlib's spacing between rows, in font sizes
MORE_LINE_EM = 1.45  # each further line of a wrapped label (matplotlib's line spacing of 1.2 of DejaVu's 1.17 em)
HANDLE_EM = 2.9  # the line sample and the gap to its text
COLUMN_GAP_EM = 2.0  # between columns


def _entries_in(lines: Sequence[int], columns: int, pt: float) -> float:
    """Height of legend entries of `lines` lines each, in `columns` columns as matplotlib fills them (the first
    columns one entry longer when they do not divide evenly)."""
    per, more = divmod(len(lines), columns)
    tallest, start = 0.0, 0
    for column in range(columns):
        end = start + per + (column < more)
        tallest = max(tallest, sum(ENTRY_EM + (count - 1) * MORE_LINE_EM for count in lines[start:end]))
        start = end
    return tallest * pt / 72


def _arranged(labels: Sequence[str], height_in: float, max_width_in: float, pt: float) -> Legend | None:
    """Whole labels (wrapped after separators) in as few columns as fit `height_in` x `max_width_in`, or None."""
    handle_in, gap_in = pt * HANDLE_EM / 72, pt * COLUMN_GAP_EM / 72
    for columns in range(1, min(len(labels), 8) + 1):
        column_in = (max_width_in - (columns - 1) * gap_in) / columns - handle_in
        chars = int(column_in * 72 / (pt * CHAR_EM))
        if chars < 3:
            break
        wrapped = ["\n".join(wrap_name(label, chars)) for label in labels]
        if any(text_in(label, pt) > column_in for label in wrapped):
            break  # a word longer than a column: more columns are narrower still
        if _entries_in([label.count("\n") + 1 for label in wrapped], columns, pt) > height_in:
            continue
        width_in = columns * (handle_in + max(text_in(label, pt) for label in wrapped)) + (columns - 1) * gap_in
        return Legend(tuple(wrapped), columns, "", width_in)
    return None


def distinct_shortened(names: Sequence[str], chars: int) -> list[str]:
    """Names cut in their middle to about `chars` characters; names that would then read alike are all kept longer
    by the same amount until they differ, so what tells them apart is what shows (two names that read alike once
    cut would tell nothing apart)."""
    widths = [chars] * len(names)
    while True:
        shown = [shortened(name, width) for name, width in zip(names, widths, strict=True)]
        alike = {index for index, text in enumerate(shown)
                 if any(other == text and names[position] != names[index] for position, other in enumerate(shown))}
        alike = {index for index in alike if widths[index] < len(names[index])}
        if not alike:
            return shown
        for index in alike:
            widths[index] += 1


def fit_legend(names: Sequence[str], height_in: float, max_width_in: float, pt: float) -> Legend:
    """A legend beside the axes, no taller than `height_in` and no wider than `max_width_in`: names whole, wrapped
    after separators, in as few columns as fit; what all names share said once in its title when they do not fit
    otherwise. Only when even that does not fit are the longest names shortened in their middle (`fits` False), each
    still told apart from the others."""
    if not names:
        return Legend((), 1, "", 0.0)
    arranged = _arranged(names, height_in, max_width_in, pt)
    if arranged is not None:
        return arranged
    shared, prefix, suffix = common_part(names)
    labels = [name[prefix:len(name) - suffix] for name in names] if shared else list(names)
    title = "\n".join(wrap_name(shared, int(max_width_in * 72 / (pt * CHAR_EM)))) if shared else ""
    room_in = height_in - (_entries_in([title.count("\n") + 1], 1, pt) if shared else 0.0)
    arranged = _arranged(labels, room_in, max_width_in, pt)
    if arranged is not None and text_in(title, pt) <= max_width_in:
        return replace(arranged, title=title, width_in=max(arranged.width_in, text_in(title, pt)))
    rows = max(1, int(room_in / (pt * ENTRY_EM / 72)))
    columns = math.ceil(len(labels) / rows)
    column_in = (max_width_in - (columns - 1) * pt * COLUMN_GAP_EM / 72) / columns - pt * HANDLE_EM / 72
    labels = distinct_shortened(labels, max(4, int(column_in * 72 / (pt * CHAR_EM))))
    width_in = columns * (pt * HANDLE_EM / 72 + max(text_in(label, pt) for label in labels)) \
        + (columns - 1) * pt * COLUMN_GAP_EM / 72
    return Legend(tuple(labels), columns, title, max(width_in, text_in(title, pt)), fits=False)


@dataclass(frozen=True)
class Ticks:
    """Category ticks as drawn: (position, label) of those shown, their rotation and the height they take; `shared`:
    the pattern of what every label started or ended with, left out of them (the axis title says it once)."""

    shown: tuple[tuple[float, str], ...]
    rotation: int
    height_in: float
    shared: str = ""


def fit_ticks(ticks: Sequence[tuple[float, str]], length_in: float, span: float, pt: float,
              most_in: float) -> Ticks:
    """Tick labels along an x axis `length_in` long showing `span` (the distance of its ends, in data units):
    level when they fit, else wrapped after separators, else without what they all share, else turned upright
    (no taller than `most_in`, wrapped after separators into as many lines as the room between ticks holds);
    labels are left out evenly, and as a last resort shortened (each still told apart), when even that does not
    fit. Never broken inside a word."""
    if not ticks:
        return Ticks((), 0, lines_in(1, pt))
    positions = sorted(position for position, _ in ticks)
    steps = [b - a for a, b in zip(positions, positions[1:], strict=False) if b > a]
    room_in = (min(steps) if steps else span) / max(span, 1e-12) * length_in  # between neighbouring ticks
    gap_in = pt * 0.8 / 72
    chars = max(3, int((room_in - gap_in) * 72 / (pt * CHAR_EM)))  # the widest line that fits with its gap
    names, pattern = unshared([label for _, label in ticks])
    tries = [(list(ticks), "")]
    if pattern:
        tries.append(([(position, name) for (position, _), name in zip(ticks, names, strict=True)], pattern))
    for labels, said in tries:
        if max(text_in(label, pt) for _, label in labels) + gap_in <= room_in:
            return Ticks(tuple(labels), 0, lines_in(1, pt), said)
        wrapped = [(position, "\n".join(wrap_name(label, chars))) for position, label in labels]
        lines = max(label.count("\n") + 1 for _, label in wrapped)
        if lines <= 3 and max(text_in(label, pt) for _, label in wrapped) + gap_in <= room_in:
            return Ticks(tuple(wrapped), 0, lines_in(lines, pt), said)
    labels, said = tries[-1]
    tall_chars = max(4, int(most_in * 72 / (pt * CHAR_EM)))
    across = int(room_in / (lines_in(1, pt) * 1.1))  # lines side by side an upright label may take
    upright = [(position, "\n".join(wrap_name(label, tall_chars))) for position, label in labels]
    if max(label.count("\n") + 1 for _, label in upright) <= across and \
            max(text_in(label, pt) for _, label in upright) <= most_in:
        return Ticks(tuple(upright), 90, max(text_in(label, pt) for _, label in upright), said)
    step = max(1, math.ceil(lines_in(1, pt) * 1.1 / max(room_in, 1e-9)))
    while True:  # fewer shown, until those shown are told apart within the height
        kept = labels[::step]
        names = distinct_shortened([label for _, label in kept], tall_chars)
        if max(len(name) for name in names) <= tall_chars or len(kept) == 1:
            break
        step += 1
    shown = tuple((position, name) for (position, _), name in zip(kept, names, strict=True))
    return Ticks(shown, 90, max(text_in(label, pt) for _, label in shown), said)
