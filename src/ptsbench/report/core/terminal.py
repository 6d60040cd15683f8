"""Results on stdout: a table for people, JSON or CSV for programs (full precision, units in the names)."""

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ptsbench.report.cases.tables import RESULT_PERCENTILES, TABLE_PERCENTILES, ResultRow, steady_state_text

FORMATS = ("table", "json", "csv")


@dataclass(frozen=True)
class TextTable:
    """A table of text for the terminal: a title, column headers, rows of text cells, and notes under it."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = field(default_factory=tuple)


def _number(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _done(seconds: float | None) -> str:
    return "-" if seconds is None else f"+{seconds:.3f}"


def _us_column(values_ns: Sequence[float | None]) -> list[str]:
    """Microseconds, one number of decimals for the whole column (enough for its smallest value)."""
    from ptsbench.report.core.model import format_column

    return format_column([None if value is None else value / 1000 for value in values_ns], "us")


def _workload(row: ResultRow) -> str:
    """rw and the direction once: 'randread', or 'randrw read' for one direction of a mixed job."""
    single = {"read": ("read", "randread"), "write": ("write", "randwrite"), "trim": ("trim", "randtrim")}
    return row.rw if row.rw in single.get(row.direction, ()) or row.direction == "-" else f"{row.rw} {row.direction}"


# columns in the order shown; DROP_ORDER says which go first when the terminal is too narrow for all
_DROP_ORDER = ("p90 µs", "p95 µs", "QDxT", "bs", "run s", "p99.9 µs", "done +s", "p99 µs")


def _columns(rows: Sequence[ResultRow]) -> tuple[dict[str, list[str]], list[tuple[str, str]]]:
    """Every column as text (name -> cells), and the columns that hold one value on every row, said once above."""
    ok = list(rows)
    columns: dict[str, list[str]] = {
        "case": [row.case for row in ok], "job": [row.job for row in ok], "host": [row.host or "" for row in ok],
        "target": [row.target or "-" for row in ok], "rw": [_workload(row) for row in ok],
        "bs": [row.bs for row in ok], "QDxT": [f"{row.iodepth}x{row.numjobs}" if row.iodepth else "-" for row in ok],
        "IOPS": [_number(row.iops, 0) for row in ok], "MB/s": [_number(row.mb_s, 2) for row in ok],
        "mean µs": _us_column([row.lat_mean_ns for row in ok]),
    }
    for p in TABLE_PERCENTILES:
        columns[f"p{p} µs"] = _us_column([row.lat_percentiles_ns.get(p) for row in ok])
    if any(row.done_after_first_s is not None for row in ok):
        columns["done +s"] = [_done(row.done_after_first_s) for row in ok]  # multi-host: finish after the first host
    if any(row.ss_attained is not None for row in ok):  # fio's own steady state may end a job early: its real
        columns["run s"] = [_number(row.runtime_s, 3) for row in ok]  # runtime and fio's verdict
        columns["fio steady state"] = [steady_state_text(row) for row in ok]
    said: list[tuple[str, str]] = []
    for name in ("case", "target", "host", "bs", "QDxT", "rw"):
        values = set(columns[name])
        if len(ok) > 1 and len(values) == 1 or values == {""}:
            if values != {""}:
                said.append((name, columns[name][0]))
            del columns[name]
    return columns, said


def rows_table(rows: Sequence[ResultRow], title: str | None = None, width: int | None = None) -> Any:
    """A rich Table of the results that fits `width` columns (None: every column) by leaving out the least
    needed columns, never by cutting a number or a name (imported lazily: rich is only needed when printing)."""
    from rich import box
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    columns, said = _columns(rows)
    notes: dict[str, int] = {}
    for index, row in enumerate(rows):
        if row.note:  # merged rows point to the line under the table that says how
            columns["job"][index] += "*" * notes.setdefault(row.note, len(notes) + 1)
    failures = []
    for index, row in enumerate(rows):
        if row.status != "ok" and row.iops is None:
            # fio's message goes under the table, where it wraps: in a cell it squeezed every other column away
            failures.append(f"{row.case} {row.job}: {row.message or row.status}")
            columns["IOPS"][index] = f"[red]{row.status.upper()}[/red]"  # FAILED, HUNG, INTERRUPTED
            columns["MB/s"][index] = f"[red]see ({len(failures)})[/red]"
        elif row.status != "ok":  # numbers fio measured until it was interrupted
            columns["job"][index] += f" [red]({row.status})[/red]"
    shown = list(columns)

    heading = "\n".join([*([title] if title else []), *(f"{name}: {value}" for name, value in said)]) or None

    def build() -> Any:
        table = Table(title=escape(heading) if heading else None, title_justify="left", header_style="bold",
                      box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
        for name in shown:
            numeric = name in ("IOPS", "MB/s", "done +s", "run s") or name.endswith("µs")
            table.add_column(name, justify="right" if numeric else "left", no_wrap=numeric,
                             overflow="fold")
        for index, row in enumerate(rows):
            table.add_row(*(columns[name][index] for name in shown), style="bold" if row.direction == "total" else None)
        lines = [f"{'*' * mark} {escape(note)}" for note, mark in notes.items()]
        lines += [f"[red]({number}) {escape(text)}[/red]" for number, text in enumerate(failures, 1)]
        if lines:
            table.caption = "\n".join(lines)
            table.caption_justify = "left"
        return table

    table = build()
    if width is not None:
        console = Console(width=10_000)
        for name in _DROP_ORDER:
            if console.measure(table).maximum <= width:
                break
            if name in shown:
                shown.remove(name)
                table = build()
    return titled(table)


def titled(table: Any) -> Any:
    """The table with its title on a line of its own above it: rich wraps a title at the table's width, which broke
    'read MB/s (Read and write per test: q1 vs q2)' over two lines above a narrow table."""
    from rich.console import Group
    from rich.text import Text

    if not table.title:
        return table
    heading = table.title if isinstance(table.title, Text) else Text.from_markup(str(table.title), style="italic")
    table.title = None
    return Group(heading, table)


def natural_width(renderable: Any) -> int:
    """The width a rich renderable takes when nothing has to wrap."""
    from rich.console import Console

    return int(Console(width=10_000).measure(renderable).maximum)


def grid_table(rows: Sequence[ResultRow], title: str | None = None, width: int | None = None) -> Any:
    """The CrystalDiskMark-style grid: a row per test, read and write side by side (report/glance.py's numbers);
    without the latency columns when `width` is too narrow for them."""
    from rich import box
    from rich.table import Table

    from ptsbench.report.core.model import format_column
    from ptsbench.report.glance import GRID_COLUMNS, grid_rows

    grid = grid_rows(rows)
    cells = [format_column([row[index] for row in grid], column.kind) for index, column in enumerate(GRID_COLUMNS)]

    def build(count: int) -> Any:
        table = Table(title=title, title_justify="left", header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False,
                      show_edge=False)
        for column in GRID_COLUMNS[:count]:
            numeric = column.kind != "text"
            table.add_column(column.name, justify="right" if numeric else "left", no_wrap=numeric, overflow="fold")
        for position in range(len(grid)):
            table.add_row(*(column[position] for column in cells[:count]))
        return table

    table = build(len(GRID_COLUMNS))
    if width is not None and natural_width(table) > width:
        table = build(len(GRID_COLUMNS) - 2)  # MB/s and IOPS stay; the latencies are in the results table
    return titled(table)


def _flat(row: ResultRow) -> dict[str, Any]:
    data = asdict(row)
    percentiles = data.pop("lat_percentiles_ns")
    data["mb_s"] = row.mb_s
    for key in RESULT_PERCENTILES:
        data[f"lat_p{key}_ns"] = percentiles.get(key)
    return data


def rows_json(rows: Sequence[ResultRow]) -> str:
    return json.dumps([_flat(row) for row in rows], indent=1)


def rows_csv(rows: Sequence[ResultRow]) -> str:
    flat = [_flat(row) for row in rows]
    buffer = io.StringIO()
    if flat:
        writer = csv.DictWriter(buffer, fieldnames=list(flat[0]))
        writer.writeheader()
        writer.writerows(flat)
    return buffer.getvalue()


def report_tables_json(tables: Sequence[Any]) -> str:
    """A report's tables (model.Table) for programs: key, title, column names and units, rows of stored numbers."""
    return json.dumps([{"key": table.key, "title": table.title,
                        "columns": [{"name": column.name, "kind": column.kind} for column in table.columns],
                        "rows": [list(row) for row in table.rows]} for table in tables], indent=1) + "\n"


def report_tables_csv(tables: Sequence[Any]) -> str:
    """A report's tables as one long CSV: table, row (its key columns), column, value (full precision)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["table", "row", "column", "value"])
    for table in tables:
        for row in table.rows:
            label = " / ".join(str(row[index]) for index in table.keys if index < len(row))
            for index, column in enumerate(table.columns):
                if index not in table.keys and index < len(row):
                    writer.writerow([table.key, label, column.name, "" if row[index] is None else row[index]])
    return buffer.getvalue()


def print_rows(rows: Sequence[ResultRow], output_format: str, title: str | None = None, grid: bool = False) -> None:
    """Print the results to stdout in the chosen format; `grid`: the read/write grid first (quick)."""
    if output_format == "json":
        print(rows_json(rows))
    elif output_format == "csv":
        print(rows_csv(rows), end="")
    else:
        from rich.console import Console

        console = terminal_console()
        width = console.width if console.is_terminal else None
        tables = [*([grid_table(rows, "Read and write per test", width)] if grid else []),
                  rows_table(rows, title, width)]
        if not console.is_terminal:  # piped: as wide as the tables are, nothing cut or wrapped
            console = Console(width=max(natural_width(table) for table in tables), force_terminal=False)
        for table in tables:
            console.print(table)


def model_table(table: Any, width: int | None = None) -> Any:
    """A report table (model.Table) for the terminal: its constant text columns said once above it, each column in
    one number format, and, when `width` is too narrow, its last value columns left out (said under it)."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    from ptsbench.report.core.model import condensed, formatted_rows

    shown_table, constants = condensed(table)
    cells = formatted_rows(shown_table)
    heading = "\n".join([shown_table.title, *(f"{name}: {value}" for name, value in constants)])
    count = len(shown_table.columns)

    def build(count: int) -> Any:
        rich_table = Table(title=escape(heading), title_justify="left", header_style="bold", box=box.SIMPLE_HEAD,
                           pad_edge=False, show_edge=False)
        for column in shown_table.columns[:count]:
            numeric = column.kind != "text"
            rich_table.add_column(escape(column.name), justify="right" if numeric else "left", no_wrap=numeric,
                                  overflow="fold")
        for row in cells:
            rich_table.add_row(*(escape(text) for text in row[:count]))
        left_out = len(shown_table.columns) - count
        if left_out:
            rich_table.caption = f"{left_out} more column(s) in the report: " + ", ".join(
                column.name for column in shown_table.columns[count:])
            rich_table.caption_justify = "left"
        return rich_table

    rich_table = build(count)
    minimum = max(len(shown_table.keys), 2)
    while width is not None and count > minimum and natural_width(rich_table) > width:
        count -= 1
        rich_table = build(count)
    return titled(rich_table)


def print_model_tables(tables: Sequence[Any], texts: Sequence[str] = ()) -> None:
    """Lines of text, then report tables, on stdout: fitted to a terminal, at their own width when piped."""
    from rich.console import Console

    console = terminal_console()
    width = console.width if console.is_terminal else None
    rendered = [model_table(table, width) for table in tables]
    for text in texts:
        console.print(text, highlight=False)
    for table in rendered:
        (console if console.is_terminal else Console(width=natural_width(table))).print(table)


def terminal_console() -> Any:
    """A rich Console on stdout; piped, lines are never wrapped at a width no terminal gave."""
    from rich.console import Console

    console = Console()
    return console if console.is_terminal else Console(soft_wrap=True)


# --- tables of text cells (PTS show) ----------------------------------------------------------------------

def _numeric(text: str) -> bool:
    """A cell written as a number (or '-' for none), so its column is right-aligned and never wrapped."""
    cleaned = text.replace(",", "").replace(".", "").replace("-", "").replace("+", "").replace("%", "").strip()
    return cleaned.isdigit() or cleaned == ""


def _column_range(table: Any, index: int) -> tuple[int, int]:
    """(longest word, longest cell) of a column, header included: its narrowest and its natural width."""
    texts = [table.columns[index], *(row[index] for row in table.rows if index < len(row))]
    return max(len(word) for text in texts for word in text.split() or [""]), max(len(text) for text in texts)


def _widths(table: Any, shown: Sequence[int], width: int | None) -> list[int] | None:
    """Column widths that fit `width` with no word split (None: natural widths), or None when they cannot."""
    ranges = [_column_range(table, index) for index in shown]
    if width is None:
        return [natural for _least, natural in ranges]
    room = width - 3 * (len(shown) - 1)  # between two columns: a space, the (blank) rule, a space
    widths = [least for least, _natural in ranges]
    if sum(widths) > room:
        return None
    extra = room - sum(widths)
    for position in sorted(range(len(shown)), key=lambda p: ranges[p][1] - ranges[p][0]):
        grow = min(extra, ranges[position][1] - widths[position])
        widths[position] += grow
        extra -= grow
    return widths


def _text_rich_table(table: Any, shown: Sequence[int], widths: Sequence[int]) -> Any:
    from rich import box
    from rich.table import Table as RichTable

    rich_table = RichTable(title=table.title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
                           show_edge=False)
    for index, width in zip(shown, widths, strict=True):
        numeric = index > 0 and all(_numeric(row[index]) for row in table.rows if index < len(row))
        rich_table.add_column(table.columns[index], justify="right" if numeric else "left", width=width,
                              no_wrap=numeric, overflow="fold")
    for row in table.rows:
        rich_table.add_row(*(row[index] if index < len(row) else "" for index in shown))
    left_out = [table.columns[index] for index in range(len(table.columns)) if index not in shown]
    if left_out:
        rich_table.caption = (f"left out to fit the terminal: {', '.join(left_out)} (a wider terminal, the "
                              "report or `show --format csv` have them)")
        rich_table.caption_justify = "left"
    return rich_table


def print_text_tables(tables: Sequence[TextTable], console: Any) -> None:
    """Tables of text cells (TextTable: report/pts/terminal.py's), each as wide as its cells. Piped: never
    cut. On a terminal too narrow for a table, its text wraps at
    spaces, and its middle columns are left out (and named) when even that does not fit: numbers and names are
    never split or cut."""
    from rich.console import Console

    for table in tables:
        shown = list(range(len(table.columns)))
        width = console.width if console.is_terminal else None
        widths = _widths(table, shown, width)
        while widths is None and len(shown) > 3:
            shown.pop(-2)  # the first columns name the row, the last is the verdict
            widths = _widths(table, shown, width)
        if widths is None:  # not even three columns fit: wrap as rich does
            shown = list(range(len(table.columns)))
            widths = _widths(table, shown, None) or []
        rich_table = titled(_text_rich_table(table, shown, widths))
        if console.is_terminal:
            console.print(rich_table)
        else:  # piped: the table's own width, whatever the default width of a console without a terminal
            natural = int(Console(width=10_000).measure(rich_table).maximum)
            Console(file=console.file, width=max(natural, console.width)).print(rich_table)
        for note in table.notes:
            console.print(f"  {note}", highlight=False, style="dim")
