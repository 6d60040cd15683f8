"""Results on stdout: a table for people, JSON or CSV for programs (full precision, units in the names)."""

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from ptsbench.report.tables import RESULT_PERCENTILES, TABLE_PERCENTILES, ResultRow, steady_state_text

FORMATS = ("table", "json", "csv")


def _us(value_ns: float | None) -> str:
    """Microseconds with at least three significant digits, so sub-microsecond latencies stay readable."""
    if value_ns is None:
        return "-"
    value_us = value_ns / 1000
    return f"{value_us:,.{3 if value_us < 10 else 2 if value_us < 1000 else 0}f}"


def _done(seconds: float | None) -> str:
    return "-" if seconds is None else f"+{seconds:.3f}"


def _number(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def rows_table(rows: Sequence[ResultRow], title: str | None = None) -> Any:
    """A rich Table of the results (imported lazily: rich is only needed when printing)."""
    from rich.table import Table

    show_hosts = any(row.host for row in rows)
    table = Table(title=title, header_style="bold", show_lines=False)
    columns = ["case", "job", *(["host"] if show_hosts else []), "target", "rw", "bs", "QDxT", "dir", "IOPS", "MB/s",
               "mean µs", *(f"p{p} µs" for p in TABLE_PERCENTILES)]
    show_done = any(row.done_after_first_s is not None for row in rows)
    if show_done:
        columns.append("done +s")  # multi-host: how long after the first host this one finished
    show_steady = any(row.ss_attained is not None for row in rows)
    if show_steady:  # fio's own steady state may end a job early: its real runtime and fio's verdict
        columns += ["run s", "fio steady state"]
    notes: dict[str, int] = {}
    for name in columns:
        numeric = name in ("IOPS", "MB/s", "done +s") or name.endswith("µs")
        table.add_column(name, justify="right" if numeric else "left", no_wrap=numeric)
    failures = []
    for row in rows:
        if row.status != "ok" and row.iops is None:
            # fio's message goes under the table, where it wraps: in a cell it squeezed every other column away
            failures.append(f"{row.case} {row.job}: {row.message or row.status}")
            cells = [row.case, row.job, *([row.host or ""] if show_hosts else []), row.target or "-",
                     row.rw, row.bs, "-", "[red]FAILED[/red]", f"[red]see ({len(failures)})[/red]"]
            table.add_row(*cells, *[""] * (len(columns) - len(cells)))
            continue
        percentiles = [_us(row.lat_percentiles_ns.get(p)) for p in TABLE_PERCENTILES]
        style = "bold" if row.direction == "total" else None
        job = row.job
        if row.note:  # merged rows point to the line under the table that says how
            job += "*" * notes.setdefault(row.note, len(notes) + 1)
        table.add_row(
            row.case, job, *([row.host or ""] if show_hosts else []), row.target or "-", row.rw, row.bs,
            f"{row.iodepth}x{row.numjobs}", row.direction, _number(row.iops, 0), _number(row.mb_s, 2),
            _us(row.lat_mean_ns), *percentiles, *([_done(row.done_after_first_s)] if show_done else []),
            *([_number(row.runtime_s, 3), steady_state_text(row)] if show_steady else []), style=style,
        )
    from rich.markup import escape

    lines = [f"{'*' * mark} {escape(note)}" for note, mark in notes.items()]
    lines += [f"[red]({index}) {escape(text)}[/red]" for index, text in enumerate(failures, 1)]
    if lines:
        table.caption = "\n".join(lines)
        table.caption_justify = "left"
    return table


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


def print_rows(rows: Sequence[ResultRow], output_format: str, title: str | None = None) -> None:
    """Print the results to stdout in the chosen format."""
    if output_format == "json":
        print(rows_json(rows))
    elif output_format == "csv":
        print(rows_csv(rows), end="")
    else:
        from rich.console import Console

        table = rows_table(rows, title)
        if _is_tty():
            Console().print(table)
        else:  # a pipe or file: every row on one line, however wide, so programs can read it
            width = Console(width=100_000).measure(table).maximum
            Console(width=max(width, 80)).print(table)


def _is_tty() -> bool:
    import sys

    return sys.stdout.isatty()
