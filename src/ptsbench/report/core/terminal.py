"""Results on stdout: a table for people, JSON or CSV for programs (full precision, units in the names)."""

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from ptsbench.fio.output import MIN_TAIL_IOS
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
_DROP_ORDER = ("p90 µs", "p95 µs", "QDxT", "bs", "run s", "p99.9 µs", "IOs", "done +s", "p99 µs")
# a percentile cell with too few IOs slower than it (tables.py measured_percentile_ns), and the line that says so
NOT_MEASURED = "n/m"
NOT_MEASURED_NOTE = (f"{NOT_MEASURED}: not measured, fewer than {MIN_TAIL_IOS} IOs were slower than that percentile "
                     "(it would be the slowest of a handful); IOs: the IOs behind the latency figures")


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
        cells = _us_column([row.measured_percentile_ns(p) for row in ok])
        columns[f"p{p} µs"] = [NOT_MEASURED if row.thin(p) else cell for row, cell in zip(ok, cells, strict=True)]
    columns["IOs"] = [_number(row.lat_n, 0) if row.lat_n else "-" for row in ok]
    if any(row.done_after_first_s is not None for row in ok):
        columns["done +s"] = [_done(row.done_after_first_s) for row in ok]  # multi-host: finish after the first host
    if any(row.ss_attained is not None for row in ok):  # fio's own steady state may end a job early: its real
        columns["run s"] = [_number(row.runtime_s, 3) for row in ok]  # runtime and fio's verdict
        columns["fio steady state"] = [steady_state_text(row) for row in ok]
    if any(row.waf is not None for row in ok):  # a case on an NVMe drive with a media counter (case_telemetry.py)
        columns["WAF"] = ["-" if row.waf is None else f"{row.waf:.2f} ({row.waf_source})" for row in ok]
    if columns["case"] == columns["job"]:  # a sweep names each case after its one job
        del columns["case"]
    else:  # a case run on several targets names each case after its target too: the target column says it
        suffixes = ["@" + target.strip("/").replace("/", "_") for target in columns["target"]]
        if all(case.endswith(suffix) for case, suffix in zip(columns["case"], suffixes, strict=True)):
            columns["case"] = [case.removesuffix(suffix) for case, suffix in zip(columns["case"], suffixes,
                                                                                 strict=True)]
    said: list[tuple[str, str]] = []
    for name in ("case", "target", "host", "bs", "QDxT", "rw"):
        if name not in columns:
            continue
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
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    from ptsbench.report.common import case_waf_lines
    from ptsbench.report.core.table_layout import fit_widths, wrap_name

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

    def numeric(name: str) -> bool:
        return name in ("IOPS", "MB/s", "IOs", "done +s", "run s") or name.endswith("µs")

    def plain(cell: str) -> str:
        return Text.from_markup(cell).plain

    def sizes() -> list[int] | None:
        """Widths that fit `width` with names wrapped at separators (table_layout's rule), or None."""
        assert width is not None
        return fit_widths([[plain(columns[name][index]) for name in shown] for index in range(len(rows))], shown,
                          [numeric(name) for name in shown], width, 3)

    def build(widths: list[int] | None) -> Any:
        table = Table(title=escape(heading) if heading else None, title_justify="left", header_style="bold",
                      box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
        for position, name in enumerate(shown):
            header = "\n".join(wrap_name(name, widths[position])) if widths else name
            table.add_column(header, justify="right" if numeric(name) else "left",
                             no_wrap=numeric(name) or bool(widths), width=widths[position] if widths else None)

        def cell(name: str, index: int, position: int) -> str:
            text = columns[name][index]
            if not widths or numeric(name):
                return text
            return escape("\n".join(wrap_name(plain(text), widths[position])))  # a name wraps whole at separators

        for index, row in enumerate(rows):
            table.add_row(*(cell(name, index, position) for position, name in enumerate(shown)),
                          style="bold" if row.direction == "total" else None)
        lines = [f"{'*' * mark} {escape(note)}" for note, mark in notes.items()]
        if any(NOT_MEASURED in columns[name] for name in shown if name.endswith("µs")):
            lines.append(escape(NOT_MEASURED_NOTE))
        lines += [escape(line) for line in case_waf_lines(rows)]
        lines += [f"[red]({number}) {escape(text)}[/red]" for number, text in enumerate(failures, 1)]
        if lines:
            table.caption = "\n".join(lines)
            table.caption_justify = "left"
        return table

    table = build(None)
    if width is None:
        return titled(table)
    for name in _DROP_ORDER:  # the least needed columns go first, so that names stay on one line
        if natural_width(table) <= width:
            break
        if name in shown:
            shown.remove(name)
            table = build(None)
    if natural_width(table) > width:
        table = build(sizes())
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
    return Group(Heading(heading), table)


class Heading:
    """A table's title, wrapped at the console's width as rich wraps text, but never inside the "(part N of M)" of a
    split table: rich breaks lines at any space, a no-break space too."""

    MARKER = " (part "

    def __init__(self, text: Any) -> None:
        self.text = text

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.text import Text

        width = options.max_width
        for line in self.text.split("\n"):
            cut = line.plain.rfind(self.MARKER)
            if cut < 0 or line.cell_len <= width:
                yield line
                continue
            head, marker = line[:cut], line[cut + 1:]
            wrapped = list(head.wrap(console, width))
            if wrapped[-1].cell_len + 1 + marker.cell_len <= width:
                wrapped[-1] = Text.assemble(wrapped[-1], " ", marker)
            else:
                wrapped.append(marker)
            yield from wrapped

    def __rich_measure__(self, console: Any, options: Any) -> Any:
        from rich.measure import Measurement

        return Measurement.get(console, options, self.text)


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


def model_table(table: Any, width: int | None = None) -> Any:
    """A report table (model.Table) for the terminal, laid out by table_layout's rule: constant and empty columns
    said once above it, the columns naming a row first, then values; names wrapped at separators, numbers never.
    A table wider than `width` is printed in parts, each naming its rows again (nothing cut)."""
    from rich.console import Group

    from ptsbench.report.core.table_layout import arranged, split_to_fit

    shown_table, facts = arranged(table)
    parts = [shown_table] if width is None else split_to_fit(shown_table, width, 3)
    rendered = [_rich_table(part, width, facts if number == 0 else ()) for number, part in enumerate(parts)]
    return rendered[0] if len(rendered) == 1 else Group(*rendered)


def _rich_table(table: Any, width: int | None, facts: Sequence[tuple[str, str]]) -> Any:
    """One (part of a) table as rich draws it, each name pre-wrapped at separators to its column's width."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    from ptsbench.report.core.model import formatted_rows
    from ptsbench.report.core.table_layout import preferred_widths, wrap_name

    cells = formatted_rows(table)
    headers = [column.name for column in table.columns]
    numeric = [column.kind != "text" for column in table.columns]
    sizes = preferred_widths(cells, headers, numeric, width, 3, keys=len(table.keys)) if width is not None else None
    if sizes is None:  # piped, or not even one column beside the keys fits: at its own width
        sizes = [max([len(header), *(len(row[i]) for row in cells)]) for i, header in enumerate(headers)]
    heading = "\n".join([table.title, *(f"{name}: {value}" for name, value in facts)])
    rich_table = Table(title=escape(heading), title_justify="left", header_style="bold", box=box.SIMPLE_HEAD,
                       pad_edge=False, show_edge=False)
    for header, size, flag in zip(headers, sizes, numeric, strict=True):
        rich_table.add_column(escape("\n".join(wrap_name(header, size))), justify="right" if flag else "left",
                              width=size, no_wrap=True)
    for row in cells:
        rich_table.add_row(*(escape(text if flag else "\n".join(wrap_name(text, size)))
                             for text, size, flag in zip(row, sizes, numeric, strict=True)))
    return titled(rich_table)


def print_model_table(table: Any, console: Any) -> None:
    """A report table (model.Table) on `console`: fitted to a terminal (split into parts when too wide); piped, at
    its own width (nothing cut or wrapped)."""
    from rich.console import Console

    if console.is_terminal:
        console.print(model_table(table, console.width))
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
