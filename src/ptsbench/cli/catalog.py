"""`ptsbench catalog`: index run directories into a database, query it, and write its trends page."""

import csv
import io
import json
from pathlib import Path
from typing import Any

import click

DB_OPTION = click.option("--db", default="ptsbench-catalog.sqlite", show_default=True, metavar="PATH|URL",
                         help="The catalog: a SQLite file, or a database URL (postgresql+psycopg://USER@HOST/DB).")


def _filter_options(function: Any) -> Any:
    decorators = [
        click.option("--model", help="Device model (exact)."),
        click.option("--firmware", help="Device firmware (exact)."),
        click.option("--serial", help="Device serial number (exact)."),
        click.option("--kind", type=click.Choice(["pts", "run", "sweep"]), help="Kind of run."),
        click.option("--test", help="A PTS test (iops, tp, lat, ...) or a case's folder name the run holds."),
        click.option("--tag", help="A label the run was given with --tag."),
        click.option("--since", metavar="DATE", help="Created on or after this UTC date (2026-11-01 or ISO time)."),
        click.option("--until", metavar="DATE", help="Created before this UTC date."),
        click.option("--format", "output_format", type=click.Choice(["table", "json", "csv"]), default="table",
                     help="table, json or csv."),
        DB_OPTION,
    ]
    for decorator in reversed(decorators):
        function = decorator(function)
    return function


@click.group()
def catalog() -> None:
    """A catalog of every run: index run directories (the truth stays in them), query by model, firmware, serial,
    test, date or tag, and write a trends page.

    \b
    Examples:
      ptsbench catalog update ptsbench-results/ /lab/results/
      ptsbench catalog update ptsbench-results/ --rebuild
      ptsbench catalog runs --model 'EX-960' --format csv
      ptsbench catalog values 'IOPS: rnd 4k 0/100 iops' --model EX-960 --format json
      ptsbench catalog page --out trends.html
      ptsbench catalog update ptsbench-results/ --db postgresql+psycopg://lab@dbhost/ptsbench
    """


@catalog.command()
@click.argument("folders", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--rebuild", is_flag=True, help="Empty the index and read every run directory again.")
@DB_OPTION
def update(folders: tuple[Path, ...], rebuild: bool, db: str) -> None:
    """Index every run directory under FOLDERS (re-reading runs whose manifest changed)."""
    from ptsbench.catalog.index import Catalog, run_directories

    for folder in folders:  # a missing folder is an error before the index is touched
        next(iter(run_directories(folder)), None)
    opened = Catalog.open(db)
    try:
        changed, unchanged, removed = opened.update(list(folders), rebuild)
    finally:
        opened.close()
    click.echo(f"ptsbench: catalog {db}: {changed} runs indexed, {unchanged} unchanged, {removed} removed", err=True)


def _filters(options: dict[str, Any]) -> dict[str, Any]:
    from ptsbench.catalog.index import FILTERS

    found = {name: options.get(name) for name in FILTERS}
    for name in ("since", "until"):
        if (text := found[name]) is not None:
            found[name] = _utc_date(str(text), f"--{name}")
    return found


def _utc_date(text: str, option: str) -> str:
    """A date or ISO time as the catalog stores creation times (UTC, 2026-11-01T00:00:00Z); one that does not
    parse is an error, never a filter that silently matches nothing."""
    import datetime

    from ptsbench.catalog.index import CatalogError

    try:
        when = datetime.datetime.fromisoformat(text.strip())
    except ValueError:
        raise CatalogError(f"{option} {text!r} is not a date", f"give a UTC date or ISO time, e.g. {option} "
                           "2026-11-01 or 2026-11-01T08:30:00Z") from None
    if when.tzinfo is not None:
        when = when.astimezone(datetime.UTC).replace(tzinfo=None)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _print(rows: list[dict[str, Any]], columns: tuple[str, ...], output_format: str, title: str) -> None:
    if output_format == "json":
        click.echo(json.dumps(rows, indent=1))
        return
    if output_format == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow([_cell(row.get(column)) for column in columns])
        click.echo(buffer.getvalue(), nl=False)
        return
    from ptsbench.report.core.model import Column, Table
    from ptsbench.report.core.terminal import print_model_tables

    table = Table("catalog", title, tuple(Column(column) for column in columns),
                  tuple(tuple(_cell(row.get(column)) for column in columns) for row in rows))
    print_model_tables([table])


def _cell(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(str(item) for item in value)
    return "" if value is None else str(value)


RUN_TABLE = ("created_utc", "kind", "name", "model", "firmware", "serial", "tests", "compliant", "tags", "path")


@catalog.command()
@_filter_options
def runs(output_format: str, db: str, **options: Any) -> None:
    """List the indexed runs matching the filters, oldest first."""
    from ptsbench.catalog.index import RUN_COLUMNS, Catalog

    filters = _filters(options)  # first: a bad date opens no database
    opened = Catalog.open(db)
    try:
        found = opened.runs(filters)
    finally:
        opened.close()
    _print(found, RUN_COLUMNS if output_format != "table" else RUN_TABLE, output_format,
           f"{len(found)} {'run' if len(found) == 1 else 'runs'}")


@catalog.command()
@click.argument("name", required=False)
@_filter_options
def values(name: str | None, output_format: str, db: str, **options: Any) -> None:
    """Headline values of the matching runs: all, or those whose name ends with NAME ('iops', 'IOPS: rnd 4k 0/100
    iops'). Values in stored units: IOPS, bytes/s, ns."""
    from ptsbench.catalog.index import Catalog
    from ptsbench.catalog.values import STORED_UNITS

    filters = _filters(options)  # first: a bad date opens no database
    opened = Catalog.open(db)
    try:
        found = opened.runs(filters)
        by_path = {run["path"]: run for run in found}
        rows = [{"created_utc": by_path[value["path"]]["created_utc"], "model": by_path[value["path"]]["model"],
                 "firmware": by_path[value["path"]]["firmware"], **value,
                 "unit": STORED_UNITS.get(str(value["quantity"]), "")}
                for value in opened.values(by_path, name)]
    finally:
        opened.close()
    # a name such as 'read MB/s' names the metric; the value is in the stored unit, said beside it
    # a percentile's evidence: the IOs behind it and beyond it (too few beyond: not measured, see docs/gates.md)
    columns = ("created_utc", "model", "firmware", "path", "name", "quantity", "value", "unit", "noise", "samples",
               "beyond")
    if output_format != "table":
        _print(rows, columns, output_format, f"{len(rows)} values")
        return
    _print_values(rows)


SHOWN_UNITS = {"iops": ("IOPS", 1.0, "iops"), "mbs": ("MB/s", 1e6, "mbs"), "lat": ("µs", 1e3, "us")}


def _print_values(rows: list[dict[str, Any]]) -> None:
    """The values for people: a table per quantity, each in one unit (IOPS, MB/s, µs) and rounded as reports round
    them; the value and its noise first, then where it comes from. JSON and CSV keep the stored units."""
    from ptsbench.report.core.model import Column, Table
    from ptsbench.report.core.terminal import print_model_tables

    if not rows:
        click.echo("0 values")
        return
    tables = []
    for quantity, (unit, divisor, kind) in SHOWN_UNITS.items():
        chosen = [row for row in rows if row.get("quantity") == quantity]
        if not chosen:
            continue
        title = f"{len(chosen)} {'value' if len(chosen) == 1 else 'values'} in {unit}"
        table_rows = tuple((row["name"], float(row["value"]) / divisor,
                            None if row.get("noise") is None else float(row["noise"]) / divisor,
                            row.get("samples"), row.get("beyond"), _cell(row.get("created_utc")),
                            _cell(row.get("model")), _cell(row.get("firmware")), _cell(row.get("path")))
                           for row in chosen)
        tables.append(Table(f"values-{quantity}", title, (Column("name"), Column(f"value ({unit})", kind),
                                                          Column(f"noise ({unit})", kind), Column("samples", "int"),
                                                          Column("beyond", "int"), Column("created_utc"),
                                                          Column("model"), Column("firmware"), Column("path")),
                            table_rows))
    print_model_tables(tables)


@catalog.command()
@click.option("--out", type=click.Path(path_type=Path), default=Path("ptsbench-trends.html"), show_default=True,
              help="The HTML file to write.")
@DB_OPTION
def page(out: Path, db: str) -> None:
    """Write the trends page: a sortable, filterable table of every run linking to its report, and charts of any
    headline value by firmware or date, one line per model or drive. Self-contained: no server needed."""
    from ptsbench.catalog.index import Catalog
    from ptsbench.catalog.trends import write_trends_page

    opened = Catalog.open(db)
    try:
        found = opened.runs({})
        rows = opened.values([run["path"] for run in found])
    finally:
        opened.close()
    write_trends_page(out, found, rows)
    click.echo(f"ptsbench: trends page {out}", err=True)
