"""Results on stdout: a table for people, JSON or CSV for programs (full precision, units in the names)."""

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from ptsbench.report.cases.tables import RESULT_PERCENTILES, TABLE_PERCENTILES, ResultRow, steady_state_text

FORMATS = ("table", "json", "csv")


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
    if any(row.waf is not None for row in ok):  # a case on an NVMe drive with a media counter (case_telemetry.py)
        columns["WAF"] = ["-" if row.waf is None else f"{row.waf:.2f} ({row.waf_source})" for row in ok]
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

    from ptsbench.report.common import case_waf_lines

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
        lines += [escape(line) for line in case_waf_lines(rows)]
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
    """Print the results to stdout in the chosen format; `grid`: the read/write grid first (quick); with --repeat,
    each test's mean, spread and repetitions after them."""
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
        from ptsbench.report.glance import repetitions_table

        repetitions = repetitions_table(rows)
        if repetitions is not None:
            print_model_tables([repetitions])


def model_table(table: Any, width: int | None = None, elsewhere: str = "in the report") -> Any:
    """A report table (model.Table) for the terminal: its constant text columns said once above it, each column in
    one number format. When `width` is too narrow, headers wrap at spaces, then text cells do (rows whole where the
    room allows), and only then are value columns left out from the right (named under it; a last text column, a
    verdict, stays). Numbers are never split."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    from ptsbench.report.core.model import condensed, formatted_rows

    shown_table, constants = condensed(table)
    cells = formatted_rows(shown_table)
    heading = "\n".join([shown_table.title, *(f"{name}: {value}" for name, value in constants)])
    columns = shown_table.columns
    shown = list(range(len(columns)))

    def least(index: int, wrap_text: bool) -> int:
        """The narrowest a column can be: its longest number or cell (with `wrap_text`: word); headers wrap."""
        texts = [row[index] for row in cells]
        if wrap_text and columns[index].kind == "text":
            texts = [word for text in texts for word in text.split()]
        return max([len(text) for text in texts] + [len(word) for word in columns[index].name.split()] + [1])

    def longest_cell(index: int) -> int:
        return max([len(row[index]) for row in cells] + [1])

    def natural(index: int) -> int:
        return max(longest_cell(index), len(columns[index].name))

    def widths(wrap_text: bool = False) -> list[int] | None:
        """Column widths that fit `width`, or None when they cannot. The room left is given first to cells, so rows
        stay on one line, then to headers (each time to the columns that need the least)."""
        if width is None:
            return [natural(index) for index in shown]
        found = [least(index, wrap_text) for index in shown]
        extra = width - 3 * (len(shown) - 1) - sum(found)  # between two columns: a space, the (blank) rule, a space
        if extra < 0:
            return None
        for goal in (longest_cell, natural):
            for position in sorted(range(len(shown)), key=lambda p: goal(shown[p]) - found[p]):
                grow = max(0, min(extra, goal(shown[position]) - found[position]))
                found[position] += grow
                extra -= grow
        return found

    def build(sizes: list[int]) -> Any:
        rich_table = Table(title=escape(heading), title_justify="left", header_style="bold", box=box.SIMPLE_HEAD,
                           pad_edge=False, show_edge=False)
        for index, size in zip(shown, sizes, strict=True):
            numeric = columns[index].kind != "text"
            rich_table.add_column(escape(columns[index].name), justify="right" if numeric else "left", width=size,
                                  overflow="fold")
        for row in cells:
            rich_table.add_row(*(escape(row[index]) for index in shown))
        left_out = [columns[index].name for index in range(len(columns)) if index not in shown]
        if left_out:
            rich_table.caption = f"{len(left_out)} more column(s) {elsewhere}: " + ", ".join(left_out)
            rich_table.caption_justify = "left"
        return rich_table

    keep_last = len(columns) > 2 and columns[-1].kind == "text"
    minimum = max(len(shown_table.keys), 2) + keep_last
    sizes = widths()
    if sizes is None:  # numbers matter more than names on one line: text wraps at spaces before a column goes
        sizes = widths(wrap_text=True)
    while sizes is None and len(shown) > minimum:
        shown.pop(-2 if keep_last else -1)
        sizes = widths(wrap_text=True)
    rich_table = build(sizes or [natural(index) for index in shown])  # still too wide: rich folds it
    return titled(rich_table)


def print_model_table(table: Any, console: Any, elsewhere: str = "in the report") -> None:
    """A report table (model.Table) on `console`: fitted to a terminal (the columns left out named as found
    `elsewhere`); piped, at its own width (nothing cut or wrapped)."""
    from rich.console import Console

    if console.is_terminal:
        console.print(model_table(table, console.width, elsewhere))
        return
    rendered = model_table(table)
    Console(file=console.file, width=natural_width(rendered)).print(rendered)


def print_model_tables(tables: Sequence[Any], texts: Sequence[str] = ()) -> None:
    """Lines of text, then report tables, on stdout."""
    console = terminal_console()
    for text in texts:
        console.print(text, highlight=False)
    for table in tables:
        print_model_table(table, console)


def terminal_console() -> Any:
    """A rich Console on stdout; piped, lines are never wrapped at a width no terminal gave."""
    from rich.console import Console

    console = Console()
    return console if console.is_terminal else Console(soft_wrap=True)
