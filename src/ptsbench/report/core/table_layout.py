"""The one layout rule of every table, in every renderer (terminal, HTML, PDF): written once here, applied by each.

- Columns that hold one text on every row are said once above the table; columns empty on every row are dropped
  and named once ("no value here: ...").
- The columns that name a row come first, then the value columns, then the other descriptive ones: when room runs
  out, values stay and descriptions move to a later part.
- Names wrap after a separator (/ _ - @ space), never inside a word; numbers never wrap.
- Each column has one number format and one unit (model.format_column).
- A table too wide for its page or terminal is split into parts, each repeating the columns that name the rows:
  nothing is cut.
"""

from collections.abc import Callable, Sequence
from dataclasses import replace

from ptsbench.report.core.model import Table, formatted_rows

SEPARATORS = "/_-@ "
EMPTY_CELLS = (None, "", "-")
Measure = Callable[[str], int]  # how wide a text is drawn: characters on a terminal (len), points on a PDF page


def breaks_after(text: str, index: int) -> bool:
    """Whether a name may wrap after text[index]: after a separator, but not inside a unit or a ratio ('MB/s',
    '65/35'), nor inside a run of separators."""
    char, after = text[index], text[index + 1:index + 2]
    if char not in SEPARATORS or not after or after in SEPARATORS:
        return False
    ratio = index > 0 and text[index - 1].isdigit() and after.isdigit()
    unit = after == "s" and not text[index + 2:index + 3].isalnum()
    return not (char == "/" and (ratio or unit))


def name_parts(text: str) -> list[str]:
    """`text` cut after each separator: the pieces a name may wrap between ('a-b@c' -> 'a-', 'b@', 'c')."""
    parts, start = [], 0
    for index in range(len(text)):
        if breaks_after(text, index):
            parts.append(text[start:index + 1])
            start = index + 1
    return [part for part in [*parts, text[start:]] if part]


def longest_part(text: str, measure: Measure = len) -> int:
    """The narrowest `text` can be drawn without breaking a word."""
    return max((measure(part.rstrip()) for line in text.split("\n") for part in name_parts(line)), default=0)


def wrap_name(text: str, width: int, measure: Measure = len) -> list[str]:
    """`text` in lines of at most `width` (characters, or the unit of `measure`), broken only after separators (a
    word longer than `width` keeps a line of its own, whole)."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for part in name_parts(paragraph):
            if line and measure(line + part.rstrip()) > width:
                lines.append(line.rstrip())
                line = part.lstrip()
            else:
                line += part
        lines.append(line.rstrip())
    return lines or [""]


def arranged(table: Table) -> tuple[Table, tuple[tuple[str, str], ...]]:
    """The table as every renderer shows it, and the facts said once above it: text columns with one value on every
    row (of two or more rows; summing-up rows, `totals`, left blank) as `name: value`; columns empty on every row
    dropped and named once; the columns that name a row first, then value columns, then other text columns."""
    columns = table.columns
    rows = table.rows[:len(table.rows) - table.totals]  # the rows described (a fleet's members, not its median)
    several = len(rows) > 1
    varying = [index for index in table.keys if index < len(columns) and several
               and len({row[index] for row in rows}) > 1]
    first = (varying or [*table.keys, 0])[0]  # the one column always kept: it names the rows
    constant = [index for index, column in enumerate(columns)
                if index != first and several and column.kind == "text"
                and len({row[index] for row in rows}) == 1 and rows[0][index] not in EMPTY_CELLS
                and all(row[index] in ("", rows[0][index]) for row in table.rows[len(rows):])]
    empty = [index for index in range(len(columns))
             if index != first and table.rows and all(row[index] in EMPTY_CELLS for row in table.rows)]
    keys = [index for index in table.keys if index < len(columns) and index not in constant and index not in empty]
    facts = [(columns[index].name, str(rows[0][index])) for index in constant]
    if empty:
        facts.append(("no value here", ", ".join(dict.fromkeys(columns[index].name for index in empty))))
    rest = [index for index in range(len(columns)) if index not in keys and index not in constant
            and index not in empty]
    order = keys + [i for i in rest if columns[i].kind != "text"] + [i for i in rest if columns[i].kind == "text"]
    if order == list(range(len(columns))):
        return table, tuple(facts)
    shown = replace(table, columns=tuple(columns[i] for i in order),
                    rows=tuple(tuple(row[i] for i in order) for row in table.rows),
                    keys=tuple(range(len(keys))), groups=(), compare=None, pair=None, noise=())
    return shown, tuple(facts)


def least_width(cells: Sequence[str], header: str, numeric: bool, measure: Measure = len) -> int:
    """The narrowest a column can be: its longest number, or its longest unbreakable piece of a name."""
    texts = [measure(cell) if numeric else longest_part(cell, measure) for cell in cells]
    return max([*texts, longest_part(header, measure), 1])


def fit_widths(cells: Sequence[Sequence[str]], headers: Sequence[str], numeric: Sequence[bool], capacity: int,
               gap: int, measure: Measure = len, whole: int = 0) -> list[int] | None:
    """Column widths (characters, or the unit of `measure`) that fit `capacity` with `gap` between columns, or None
    when even the narrowest do not; the first `whole` columns keep every cell on one line. Room left goes first to
    whole cells (rows on one line), then to whole headers, narrowest need first."""
    count = len(headers)
    longest = [max([measure(line) for row in cells for line in row[i].split("\n")] + [1]) for i in range(count)]
    natural = [max(longest[i], *(measure(line) for line in headers[i].split("\n"))) for i in range(count)]
    found = [max(least_width([row[i] for row in cells], headers[i], numeric[i], measure),
                 longest[i] if i < whole else 0) for i in range(count)]
    extra = capacity - gap * (count - 1) - sum(found)
    if extra < 0:
        return None
    for goal in (longest, natural):
        for i in sorted(range(count), key=lambda i: goal[i] - found[i]):
            grow = max(0, min(extra, goal[i] - found[i]))
            found[i] += grow
            extra -= grow
    return found


def preferred_widths(cells: Sequence[Sequence[str]], headers: Sequence[str], numeric: Sequence[bool],
                     capacity: int, gap: int, measure: Measure = len, keys: int = 0) -> list[int] | None:
    """fit_widths with the first `keys` columns (the names of the rows) on one line where they fit so, else as
    fit_widths has them."""
    widths = fit_widths(cells, headers, numeric, capacity, gap, measure, keys) if keys else None
    return widths if widths is not None else fit_widths(cells, headers, numeric, capacity, gap, measure)


def column_parts(table: Table, fits: Callable[[list[int], bool], bool]) -> list[list[int]]:
    """The table's columns in parts that each `fits`, every part starting with the key columns: one part when the
    whole table fits (its names wrapped if need be). A table split anyway keeps the names of its rows whole (`fits`'
    second argument: on one line) while its first part still holds two columns beside them: names wrapped over many
    lines to keep more values in the first part are harder to read, and the later parts show the rest anyway. (How
    many values fit depends on the numbers' widths: a rule that weighed values against wrapping laid out the same
    table differently from run to run.) A column too wide even alone with the keys gets a part of its own."""
    keys = [index for index in table.keys if index < len(table.columns)]
    rest = [index for index in range(len(table.columns)) if index not in keys]
    if fits(keys + rest, False) or not rest:
        return [keys + rest]

    def parts(whole: bool) -> list[list[int]]:
        found: list[list[int]] = []
        current: list[int] = []
        for index in rest:
            if current and not fits(keys + current + [index], whole):
                found.append(keys + current)
                current = []
            current.append(index)
        return [*found, keys + current]

    wrapped, whole = parts(False), parts(True)
    return whole if len(whole[0]) - len(keys) >= 2 else wrapped


def table_part(table: Table, columns: Sequence[int], number: int, count: int) -> Table:
    """One part of a split table: the chosen columns, titled with its place among the parts."""
    title = table.title if count == 1 else f"{table.title} (part {number} of {count})"
    return replace(table, title=title, columns=tuple(table.columns[i] for i in columns),
                   rows=tuple(tuple(row[i] for i in columns) for row in table.rows),
                   keys=tuple(range(len([i for i in table.keys if i in columns]))), groups=(), compare=None,
                   pair=None, noise=())


def split_to_fit(table: Table, capacity: int, gap: int, measure: Measure = len) -> list[Table]:
    """The (arranged) table in parts no wider than `capacity` (characters, or the unit of `measure`), each naming its
    rows again."""
    cells = formatted_rows(table)
    numeric = [column.kind != "text" for column in table.columns]

    def fits(chosen: list[int], whole: bool) -> bool:
        return fit_widths([[row[i] for i in chosen] for row in cells], [table.columns[i].name for i in chosen],
                          [numeric[i] for i in chosen], capacity, gap, measure,
                          len(table.keys) if whole else 0) is not None

    parts = column_parts(table, fits)
    return [table_part(table, part, number, len(parts)) for number, part in enumerate(parts, start=1)]
