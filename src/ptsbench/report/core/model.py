"""The report as data - Report -> Sections -> Text / Table / Figure blocks - and the one rule that writes numbers
for people. html.py, pdf.py, workbook.py and draw_mpl.py only draw this data, so every format shows the same numbers,
and a new kind of section (a new PTS test) appears in every format at once.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from ptsbench.report.core.figure import Figure

Value = str | float | int | None


@dataclass(frozen=True)
class Column:
    """A table column: its header (with unit) and how its numbers are written (see format_value)."""

    name: str
    kind: str = "text"  # text, int, iops, mbs, us, number, ratio


@dataclass(frozen=True)
class Chart:
    """A native xlsx chart of a table: one column as categories (the first by default), the chosen numeric columns
    as series."""

    title: str
    x_label: str
    y_label: str
    y_log: bool = False
    columns: tuple[int, ...] = ()  # empty: every numeric column
    category: int = 0


@dataclass(frozen=True)
class Table:
    key: str  # stable across runs (compare matches tables by it); the xlsx sheet name is derived from it
    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Value, ...], ...]
    chart: Chart | None = None
    keys: tuple[int, ...] = (0,)  # columns that identify a row (compare matches rows by them)
    compare: tuple[int, ...] | None = None  # columns a comparison shows per run (default: all but the keys)
    pair: tuple[int, ...] | None = None  # keys that name the workload: runs differing in the other keys (queue
    #                                      depth, case, target) are paired by these, and the others compared
    groups: tuple[tuple[str, tuple[int, ...]], ...] = ()  # (name, columns): parts a page may show as tables of
    #                                                       their own, each with the key columns (a comparison:
    #                                                       one per compared value, each run's value and ratio)
    noise: tuple[tuple[Value, ...], ...] = ()  # per row, each cell's noise (max - min of the samples it averages;
    #                                          None: unknown): a comparison marks differences within it
    facts: tuple[tuple[str, str], ...] = ()  # said once above the rows (table_layout.arranged: its constant and
    #                                          empty columns), drawn under the title
    totals: int = 0  # the last rows sum the others up (a fleet's median, min and max): their descriptive cells say
    #                  nothing, so which columns are constant or empty is judged on the rows before them

    def label_count(self) -> int:
        """Leading text columns that identify a row."""
        count = 0
        for column in self.columns:
            if column.kind != "text":
                break
            count += 1
        return count


def split_groups(table: Table) -> list[Table]:
    """A table with several column groups as one narrow table per group (the key columns, then the group's);
    rows without a value in a group are left out of its table."""
    if len(table.groups) < 2:
        return [table]
    keys = range(len(table.keys))
    parts = []
    for number, (name, columns) in enumerate(table.groups, start=1):
        chosen = [*keys, *columns]
        rows = tuple(tuple(row[i] for i in chosen) for row in table.rows
                     if any(row[i] is not None and row[i] != "-" for i in columns))
        shown = tuple(table.columns[i] if i in keys else
                      replace(table.columns[i], name=table.columns[i].name.removeprefix(f"{name} ")) for i in chosen)
        parts.append(Table(f"{table.key}-{number}", f"{name} ({table.title})", shown, rows, keys=tuple(keys)))
    return parts


@dataclass(frozen=True)
class Text:
    text: str
    kind: str = "p"  # "p", "warning" (a visible banner) or "code"


Block = Text | Table | Figure


def drawn_or_said(figures: Sequence[Figure], where: str) -> list[Block]:
    """The figures that show something; those whose every line holds one or two values (Figure.says_little) are
    named in one line saying why they are not drawn and `where` their numbers are, instead of almost empty plots."""
    shown: list[Block] = [figure for figure in figures if not figure.says_little()]
    sparse = [figure for figure in figures if figure.says_little()]
    if sparse:
        most = max(figure.most_values() for figure in sparse)
        titles = ", ".join(figure.title for figure in sparse)
        shown.append(Text(f"Not charted ({titles}): at most {most} value{'s' if most > 1 else ''} per line, too few to "
                          f"show a course; {where}."))
    return shown


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    facts: tuple[tuple[str, str], ...] = ()  # shown at the top of the section, and on every PDF page of it
    blocks: tuple[Block, ...] = ()

    def tables(self) -> list[Table]:
        return [block for block in self.blocks if isinstance(block, Table)]

    def figures(self) -> list[Figure]:
        return [block for block in self.blocks if isinstance(block, Figure)]


@dataclass(frozen=True)
class Report:
    title: str
    provenance: str  # ptsbench and fio version, device, date: in every figure's caption and metadata
    facts: tuple[tuple[str, str], ...]
    sections: tuple[Section, ...]
    in_progress: str | None = None
    warnings: tuple[str, ...] = ()
    meta: Mapping[str, str] = field(default_factory=dict)

    def tables(self) -> list[Table]:
        return [table for section in self.sections for table in section.tables()]

    def figures(self) -> list[Figure]:
        return [figure for section in self.sections for figure in section.figures()]


# --- numbers for people (the one formatting rule of every report format) -------------------------------------

NUMBER_FORMATS: dict[str, tuple[str, str]] = {  # kind -> (Python format, xlsx num_format)
    "int": ("{:,.0f}", "#,##0"),
    "iops": ("{:,.1f}", "#,##0.0"),
    "mbs": ("{:,.2f}", "#,##0.00"),
    "number": ("{:,.3f}", "#,##0.000"),
    "pct": ("{:,.1f}", "#,##0.0"),
    "ratio": ("{:.3f}×", '0.000"×"'),
    "us": ("", "[<10]0.000;[<1000]0.00;#,##0"),
}


ADAPTIVE_KINDS = ("us",)  # columns whose decimals follow their smallest value (one format per column)


def column_decimals(values: Sequence[Value]) -> int:
    """Decimals of a whole column of µs: 3 under 1, 2 when its smallest number is under 10, 1 under 100, else none, so
    every number of the column is written alike and none loses its significant digits."""
    numbers = [abs(float(v)) for v in values if isinstance(v, int | float) and math.isfinite(v) and v]
    smallest = min(numbers, default=100.0)
    return 3 if smallest < 1 else 2 if smallest < 10 else 1 if smallest < 100 else 0


def format_column(values: Sequence[Value], kind: str) -> list[str]:
    """A column's cells as text, in one number format (see format_value for single cells)."""
    if kind not in ADAPTIVE_KINDS:
        return [format_value(value, kind) for value in values]
    decimals = column_decimals(values)
    return [format_value(value, kind) if not isinstance(value, int | float) or isinstance(value, bool)
            or not math.isfinite(value) else f"{value:,.{decimals}f}" for value in values]


def formatted_rows(table: "Table") -> list[list[str]]:
    """Every cell of the table as text, each column in its one format."""
    columns = [format_column([row[index] if index < len(row) else None for row in table.rows], column.kind)
               for index, column in enumerate(table.columns)]
    return [[column[position] for column in columns] for position in range(len(table.rows))]


def format_value(value: Value, kind: str) -> str:
    """A cell as text: '-' for no value; µs with 3 decimals under 10, 2 under 1000, none above (as the terminal)."""
    if value is None:
        return "-"
    if kind == "text" or isinstance(value, str):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "-"
    if kind == "us":
        return f"{value:,.{3 if abs(value) < 10 else 2 if abs(value) < 1000 else 0}f}"
    return NUMBER_FORMATS.get(kind, NUMBER_FORMATS["number"])[0].format(value)

